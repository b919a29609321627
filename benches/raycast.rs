//! Exact ray casts (`Lighting::raycast`, `raycast_many`) on the benches' 100,000-triangle level
//! (`benches/support/level.rs`: the ground as one mesh and 4,000 instances of one cube mesh),
//! the way a game's `scene:raycast` would ask: rays from 2 to 12 m above the ground, pointing
//! down at up to about 40° off vertical, cut off at 40 m (the same rays as the raycast row of
//! `cargo run --release -p penumbra_xcheck --example peers`, which puts parry3d beside it).
//!
//! ```sh
//! cargo bench --bench raycast
//! ```
//!
//! * `raycast/1t`: 65,536 rays through `raycast_many` on 1 thread (criterion's throughput is
//!   rays per second).
//! * `raycast/2t`: the same on 2 threads.
//! * `raycast/one_by_one`: the same rays, one `raycast` call each.
//!
//! Before the criterion runs, it prints the CPU time per ray over 1M rays on 1 thread (a figure
//! a busy machine inflates less than wall time), the hit count and the first-cast cost of the
//! index (built on first need).

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/level.rs"]
mod level;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Mat4, Vec3};
use penumbra_core::shadow::{Lighting, Occluder, OccluderId};
use penumbra_testkit::Rng;

/// Rays per criterion iteration.
const BATCH: usize = 1 << 16;
/// Rays of the CPU-time figure.
const RAYS: usize = 1 << 20;
/// The cut-off of every ray (world units).
const MAX_DISTANCE: f32 = 40.0;

/// `count` rays from 2 to 12 m above the ground, over all of it but a 2 m border, pointing
/// down with a horizontal part of up to 0.8 per unit down (the raycast row of the peers
/// example casts the same ones).
fn rays(count: usize) -> Vec<(Vec3, Vec3)> {
    let mut rng = Rng::lcg64(0x7a15);
    let (nx, nz) = (level::GROUND.0 as f32 - 4.0, level::GROUND.1 as f32 - 4.0);
    (0..count)
        .map(|_| {
            let x = (rng.f32_unit() - 0.5) * nx;
            let z = (rng.f32_unit() - 0.5) * nz;
            let y = level::height(x, z) + 2.0 + 10.0 * rng.f32_unit();
            let d = Vec3::new(
                (rng.f32_unit() - 0.5) * 1.6,
                -1.0,
                (rng.f32_unit() - 0.5) * 1.6,
            );
            (Vec3::new(x, y, z), d)
        })
        .collect()
}

fn lighting() -> Lighting {
    let mut lighting = Lighting::new();
    lighting.set_threads(1);
    let (ground, transforms) = level::level();
    lighting.add_occluder(Occluder::mesh(Arc::new(ground), Mat4::IDENTITY));
    let cube = Arc::new(level::cube());
    for t in transforms {
        lighting.add_occluder(Occluder::mesh(Arc::clone(&cube), t));
    }
    assert_eq!(lighting.triangle_count(), 100_000);
    lighting
}

fn bench_raycast(c: &mut Criterion) {
    let lighting = lighting();
    let all = |_: OccluderId| true;
    let t = Instant::now();
    let first = lighting.raycast(Vec3::new(0.0, 20.0, 0.0), Vec3::NEG_Y, MAX_DISTANCE, &all);
    eprintln!(
        "raycast: first cast (builds the index and the meshes' ray data) {:.1} ms, hit {:?}",
        t.elapsed().as_secs_f64() * 1e3,
        first.map(|h| h.occluder)
    );
    let many = rays(RAYS);
    let (cpu0, wall0) = (cpu::process_cpu_seconds(), Instant::now());
    let hits = lighting.raycast_many(&many, MAX_DISTANCE, &all, 1);
    let wall = wall0.elapsed().as_secs_f64();
    let hit = hits.iter().filter(|h| h.is_some()).count();
    let ground = hits
        .iter()
        .filter(|h| h.is_some_and(|h| h.occluder == OccluderId(0)))
        .count();
    let cpu = match (cpu0, cpu::process_cpu_seconds()) {
        (Some(a), Some(b)) => format!(
            "{:.2} M rays/s by CPU time",
            RAYS as f64 / (b - a).max(1e-9) / 1e6
        ),
        _ => String::from("no CPU time on this system"),
    };
    eprintln!(
        "raycast 1t: {RAYS} rays, {hit} hits ({ground} on the ground): {:.2} M rays/s wall, {cpu}",
        RAYS as f64 / wall / 1e6
    );

    let batch = rays(BATCH);
    let mut group = c.benchmark_group("raycast");
    group.sample_size(20);
    group.throughput(Throughput::Elements(BATCH as u64));
    for threads in [1usize, 2] {
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{threads}t")),
            &threads,
            |b, &threads| {
                b.iter(|| {
                    black_box(lighting.raycast_many(black_box(&batch), MAX_DISTANCE, &all, threads))
                });
            },
        );
    }
    group.bench_function("one_by_one", |b| {
        b.iter(|| {
            for &(o, d) in &batch {
                black_box(lighting.raycast(black_box(o), d, MAX_DISTANCE, &all));
            }
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_raycast
}
criterion_main!(benches);
