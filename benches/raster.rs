//! The depth rasterizer on a shadow-map-like scene: 100,000 triangles (a tessellated ground and
//! 4,000 cuboids) seen by a directional light's orthographic view, into a 2048² D32_FLOAT map,
//! with 1 and 2 threads. Each iteration clears the map and draws the scene; `clear` alone is
//! measured too. Before the criterion runs, it prints the scene's counts and the CPU time per
//! frame over 20 frames (all threads; Linux only), a figure that a busy machine inflates less
//! than wall time.
//!
//! ```sh
//! cargo bench --bench raster -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::camera::lh;
use glam::{Mat4, Vec3};
use penumbra_core::Format;
use penumbra_core::raster::{DepthTarget, Instance, Mesh, RasterState, rasterize};

/// Ground quads along x and z: 200 × 130 quads = 52,000 triangles.
const GROUND: (u32, u32) = (200, 130);
/// Cuboids: 4,000 × 12 = 48,000 triangles.
const CUBOIDS: u32 = 4000;
/// Edge of the depth map.
const SIZE: u32 = 2048;

/// A small deterministic generator (64-bit LCG), so the scene is the same in every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The ground (a 200 × 130 m height field, one vertex per metre) and 4,000 cuboids of 0.5 to
/// 3.5 m standing on it, and the light's view-projection.
fn scene() -> (Vec<Mesh>, Vec<Mat4>, Mat4) {
    let (nx, nz) = GROUND;
    let height = |x: f32, z: f32| 0.6 * (x * 0.11).sin() * (z * 0.07).cos();
    let mut positions = Vec::new();
    for j in 0..=nz {
        for i in 0..=nx {
            let (x, z) = (i as f32 - nx as f32 / 2.0, j as f32 - nz as f32 / 2.0);
            positions.push(Vec3::new(x, height(x, z), z));
        }
    }
    let mut indices = Vec::new();
    for j in 0..nz {
        for i in 0..nx {
            let a = j * (nx + 1) + i;
            let (b, c, d) = (a + 1, a + nx + 2, a + nx + 1);
            indices.extend_from_slice(&[a, d, c, a, c, b]);
        }
    }
    let mut meshes = vec![Mesh::new(positions, indices).expect("valid ground")];
    let mut transforms = vec![Mat4::IDENTITY];
    let cube = Mesh::cuboid(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5));
    let mut rng = Lcg(0x5eed);
    for _ in 0..CUBOIDS {
        let x = (rng.next() - 0.5) * (nx as f32 - 4.0);
        let z = (rng.next() - 0.5) * (nz as f32 - 4.0);
        let size = Vec3::new(
            0.5 + 3.0 * rng.next(),
            0.5 + 3.0 * rng.next(),
            0.5 + 3.0 * rng.next(),
        );
        transforms.push(
            Mat4::from_translation(Vec3::new(x, height(x, z) - 0.1, z))
                * Mat4::from_rotation_y(rng.next() * std::f32::consts::TAU)
                * Mat4::from_scale(size),
        );
        meshes.push(cube.clone());
    }
    // A sun 50° above the horizon; the orthographic box covers the whole ground.
    let dir = Vec3::new(-0.45, -0.77, 0.45).normalize();
    let view = lh::view::look_at_mat4(-dir * 200.0, Vec3::ZERO, Vec3::Y);
    let proj = lh::proj::directx::orthographic(-120.0, 120.0, -120.0, 120.0, 50.0, 350.0);
    (meshes, transforms, proj * view)
}

/// User + system CPU time of this process so far (Linux `/proc/self/stat`, clock ticks of
/// 1/100 s), or `None` elsewhere.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
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
        let (cpu0, wall0) = (process_cpu_seconds(), Instant::now());
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
        match (cpu0, process_cpu_seconds()) {
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
