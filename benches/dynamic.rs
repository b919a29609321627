//! Dynamic scenes (issue 16): what a frame costs when something moves, on the benches'
//! 100,000-triangle level (`benches/support/level.rs`), with the maps a `Lighting` keeps —
//! drawn tile by tile as queries need them, and redrawn only where something moved.
//!
//! ```sh
//! cargo bench --bench dynamic
//! ```
//!
//! * `door/100`: a door (a box, 12 triangles) swings 2° a frame among the level's 4,000
//!   crates, under a 2048² sun and eight 1024² spot lights; 100 probes within 12 m of it ask
//!   their exposure. One frame = the door's move (each map forgets the tiles the door's old
//!   and new bounds cover) + the 100 exposures (which draw again the forgotten tiles they
//!   read). Lighting on 1 thread.
//! * `door_still/100`: the same frame with the door at rest: queries only.
//! * `sun_full_map`: the sun's 2048² map rendered whole (`ShadowMap::render`, 1 thread), what
//!   every frame cost before maps were tiled; the peers example
//!   (`cargo run --release -p penumbra_xcheck --example peers`) puts lavapipe beside it.
//!
//! Before the criterion runs, each scenario prints its CPU time per frame over 200 frames
//! (all threads; a busy machine inflates it less than wall time) and the tiles drawn and
//! forgotten per frame.

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/level.rs"]
mod level;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use penumbra_core::shadow::{
    ExposureScratch, Light, Lighting, Normals, Occluder, OccluderId, PcfKernel, ShadowMap,
};
use penumbra_testkit::Rng;

/// Where the door hangs (its hinge), between crates.
const HINGE: Vec3 = Vec3::new(10.0, 0.0, 5.0);

struct Scene {
    lighting: Lighting,
    door: OccluderId,
    door_mesh: Arc<penumbra_core::raster::Mesh>,
    probes: Vec<Vec3>,
    normals: Vec<Vec3>,
    angle: f32,
}

impl Scene {
    fn new() -> Scene {
        let mut lighting = Lighting::new();
        lighting.set_threads(1);
        let (ground, transforms) = level::level();
        lighting.add_occluder(Occluder::mesh(Arc::new(ground), Mat4::IDENTITY));
        let cube = Arc::new(level::cube());
        for t in transforms {
            lighting.add_occluder(Occluder::mesh(Arc::clone(&cube), t));
        }
        // A door of 1 × 2.2 × 0.1 m, turning round its hinge edge.
        let door_mesh = Arc::new(penumbra_core::raster::Mesh::cuboid(
            Vec3::new(0.0, 0.0, -0.05),
            Vec3::new(1.0, 2.2, 0.05),
        ));
        let door = lighting.add_occluder(Occluder::mesh(Arc::clone(&door_mesh), Mat4::IDENTITY));
        lighting.add_light(
            Light::directional(level::sun(), 1.0)
                .with_resolution(2048)
                .with_kernel(PcfKernel::PCF_3X3),
        );
        for k in 0..8 {
            let a = k as f32 * std::f32::consts::TAU / 8.0;
            let at = HINGE + Vec3::new(9.0 * a.cos(), 8.0, 9.0 * a.sin());
            lighting.add_light(
                Light::spot(at, (HINGE - at).normalize(), 0.6, 25.0, 40.0).with_resolution(1024),
            );
        }
        let mut rng = Rng::lcg64(0xd00e);
        let probes = (0..100)
            .map(|_| {
                let (x, z) = (
                    HINGE.x + 24.0 * (rng.f32_unit() - 0.5),
                    HINGE.z + 24.0 * (rng.f32_unit() - 0.5),
                );
                Vec3::new(x, level::height(x, z) + 0.05, z)
            })
            .collect();
        let mut scene = Scene {
            lighting,
            door,
            door_mesh,
            probes,
            normals: vec![Vec3::Y; 100],
            angle: 0.0,
        };
        scene.swing();
        scene
    }

    /// Turns the door 2° further (back and forth over 90°).
    fn swing(&mut self) {
        self.angle = (self.angle + 2.0) % 180.0;
        let open = if self.angle < 90.0 {
            self.angle
        } else {
            180.0 - self.angle
        };
        let base = HINGE + Vec3::Y * level::height(HINGE.x, HINGE.z);
        let t = Mat4::from_rotation_translation(Quat::from_rotation_y(open.to_radians()), base);
        self.lighting
            .set_occluder(self.door, Occluder::mesh(Arc::clone(&self.door_mesh), t));
    }

    fn frame(&mut self, moving: bool, out: &mut [f32], scratch: &mut ExposureScratch) {
        if moving {
            self.swing();
        }
        self.lighting
            .exposures(&self.probes, Normals::Each(&self.normals), out, scratch)
            .expect("the level renders");
    }
}

fn bench(c: &mut Criterion) {
    let mut scene = Scene::new();
    let mut out = vec![0.0; scene.probes.len()];
    let mut scratch = ExposureScratch::default();
    // The first frames draw the tiles the probes need.
    for _ in 0..5 {
        scene.frame(true, &mut out, &mut scratch);
    }
    for (name, moving) in [("door", true), ("door_still", false)] {
        let frames = 200;
        let before = scene.lighting.tile_stats();
        let (cpu0, wall0) = (cpu::process_cpu_seconds(), Instant::now());
        for _ in 0..frames {
            scene.frame(moving, &mut out, &mut scratch);
        }
        let wall = wall0.elapsed().as_secs_f64() * 1e3 / f64::from(frames);
        let after = scene.lighting.tile_stats();
        let per = |a: u64, b: u64| (a - b) as f64 / f64::from(frames);
        let cpu_time = match (cpu0, cpu::process_cpu_seconds()) {
            (Some(a), Some(b)) => format!("{:.3} ms CPU, ", (b - a) * 1e3 / f64::from(frames)),
            _ => String::new(),
        };
        let ms = |a: Duration, b: Duration| (a - b).as_secs_f64() * 1e3 / f64::from(frames);
        eprintln!(
            "{name}/100: {cpu_time}{wall:.3} ms wall per frame; {:.1} tiles drawn ({:.3} ms \
             rasterizing, {:.3} ms layout), {:.1} forgotten per frame",
            per(after.tiles_rendered, before.tiles_rendered),
            ms(after.render, before.render),
            ms(after.layout, before.layout),
            per(after.tiles_invalidated, before.tiles_invalidated),
        );
    }

    let mut group = c.benchmark_group("dynamic");
    group.sample_size(20);
    for (name, moving) in [("door/100", true), ("door_still/100", false)] {
        group.bench_function(name, |b| {
            b.iter(|| scene.frame(moving, &mut out, &mut scratch));
        });
    }
    black_box(&out);
    // The sun's map rendered whole, as every frame paid before.
    let sun = scene
        .lighting
        .lights()
        .next()
        .map(|(_, l)| l.clone())
        .expect("a sun");
    let whole = penumbra_core::shadow::Scene {
        occluders: scene.lighting.scene().occluders.clone(),
        threads: 1,
    };
    group.sample_size(10);
    group.bench_function("sun_full_map", |b| {
        b.iter(|| black_box(ShadowMap::render(sun.clone(), &whole).expect("renders")));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
