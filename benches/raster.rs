//! The depth rasterizer on a shadow-map-like scene: the 100,000 triangles of
//! `benches/support/level.rs` (a tessellated ground and 4,000 cuboids) seen by a directional
//! light's orthographic view, into a 2048² D32_FLOAT map, with 1 and 2 threads. Each iteration
//! clears the map and draws the scene; `clear` alone is measured too (a lazy clear: it records
//! the value, and each tile is filled when first drawn). Before the criterion runs, it prints
//! the scene's counts and the CPU time per frame over 20 frames (all threads; Linux only), a
//! figure that a busy machine inflates less than wall time.
//!
//! ```sh
//! cargo bench --bench raster -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/level.rs"]
mod level;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::Mat4;
use penumbra_core::Format;
use penumbra_core::raster::{DepthTarget, Instance, Mesh, RasterState, rasterize};

/// Edge of the depth map.
const SIZE: u32 = 2048;

/// The shared level (ground and 4,000 cuboids, one mesh each) and the sun's view-projection.
fn scene() -> (Vec<Mesh>, Vec<Mat4>, Mat4) {
    let (ground, transforms) = level::level();
    let cube = level::cube();
    let mut meshes = vec![ground];
    meshes.extend(transforms.iter().map(|_| cube.clone()));
    let mut all = vec![Mat4::IDENTITY];
    all.extend(transforms);
    (meshes, all, level::sun_view_proj())
}

fn bench_raster(c: &mut Criterion) {
    let (meshes, transforms, view_proj) = scene();
    let instances: Vec<Instance> = meshes
        .iter()
        .zip(&transforms)
        .map(|(m, &t)| Instance::new(m, t))
        .collect();
    let triangles: u64 = meshes.iter().map(|m| m.triangle_count() as u64).sum();
    assert_eq!(triangles, 100_000);
    let state = RasterState::default();
    let mut target = DepthTarget::new(SIZE, SIZE, Format::D32Float).expect("valid target");
    let stats = rasterize(&mut target, view_proj, &instances, &state, 1);
    eprintln!("raster scene: {stats:?}");
    // CPU time per frame (all threads), which a busy machine does not inflate the way it
    // inflates wall time.
    for threads in [1usize, 2] {
        let frames = 20;
        let (cpu0, wall0) = (cpu::process_cpu_seconds(), Instant::now());
        for _ in 0..frames {
            target.clear(1.0);
            black_box(rasterize(
                &mut target,
                view_proj,
                &instances,
                &state,
                threads,
            ));
        }
        let wall = wall0.elapsed().as_secs_f64() * 1e3 / f64::from(frames);
        match (cpu0, cpu::process_cpu_seconds()) {
            (Some(a), Some(b)) => eprintln!(
                "raster {threads}t: {:.1} ms CPU per frame (all threads), {wall:.1} ms wall",
                (b - a) * 1e3 / f64::from(frames)
            ),
            _ => eprintln!("raster {threads}t: {wall:.1} ms wall per frame"),
        }
    }

    let mut group = c.benchmark_group("raster");
    group.sample_size(10);
    group.throughput(Throughput::Elements(triangles));
    for threads in [1usize, 2] {
        group.bench_with_input(
            BenchmarkId::new("100k_tris_2048_d32", format!("{threads}t")),
            &threads,
            |b, &threads| {
                b.iter(|| {
                    target.clear(1.0);
                    black_box(rasterize(
                        &mut target,
                        black_box(view_proj),
                        &instances,
                        &state,
                        threads,
                    ))
                });
            },
        );
    }
    group.throughput(Throughput::Elements(u64::from(SIZE * SIZE)));
    group.bench_function("clear_2048_d32", |b| {
        b.iter(|| target.clear(black_box(1.0)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_raster
}
criterion_main!(benches);
