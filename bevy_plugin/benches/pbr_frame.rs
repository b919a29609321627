//! The frame cost of the `pbr` feature in the `pbr_stealth` example's setup, on the benches'
//! 100k-triangle level (`benches/support/level.rs`) built from `Mesh3d` entities: a sun with
//! four 2048² cascades (Bevy's `CascadeShadowConfigBuilder` with 4 cascades), a camera, and 100 or 10,000
//! `LightProbe`s whose `Exposure` includes the sun's Gaussian (Castaño 13-tap) shadow factor.
//!
//! ```sh
//! cargo bench -p bevy_penumbra --features pbr --bench pbr_frame
//! ```
//!
//! * `camera_moves/<probes>`: one `App::update` in which the camera moved 0.1 m (back and forth
//!   over 10 m), so Bevy's cascades changed and the tiles the probes read are drawn again in
//!   the new maps, then every probe is answered;
//! * `camera_still/<probes>`: one `App::update` with nothing moved: no map renders, every probe
//!   is answered again (the game lights' shares are recomputed each frame);
//! * `bevy_alone/camera_moves`, `bevy_alone/camera_still`: the same app and level without
//!   `PenumbraPlugin` (Bevy's own frame: transforms of 4,001 entities, cascades, assets), in
//!   the same run: what a frame costs before penumbra adds anything.
//!
//! After each group the bench prints the process's CPU time (all threads) and wall time per
//! frame over every frame it ran (and what share of the two cores that CPU time is), then the
//! last frame's wall time and the plugin's own split of it (`PenumbraDiagnostics`: the
//! exposure system, rendering vs queries).

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_asset::{AssetApp, AssetPlugin, Assets, RenderAssetUsages};
use bevy_camera::{Camera3d, PerspectiveProjection, Projection};
use bevy_ecs::prelude::*;
use bevy_light::{CascadeShadowConfigBuilder, DirectionalLight};
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology};
use bevy_penumbra::pbr::add_cascade_systems;
use bevy_penumbra::prelude::*;
use bevy_shape::Cuboid;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use bevy_transform::prelude::*;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use penumbra_testkit::Rng;

#[path = "../../benches/support/cpu.rs"]
mod cpu;
#[path = "../../benches/support/level.rs"]
mod level;

use level::{CUBOIDS, GROUND, height};

#[derive(Resource)]
struct MoveCamera(bool);

/// Moves the camera 0.1 m sideways a frame, back and forth over 10 m (x from −5 to 5 m and
/// back), so every frame's cascades change while the probes stay in view: a camera that only
/// went one way would leave the probes behind after a few thousand iterations and the frames
/// criterion times would stop asking for tiles.
fn fly(
    moving: Res<MoveCamera>,
    mut frame: Local<u32>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    if moving.0 {
        *frame = (*frame + 1) % 200;
        let x = (*frame as f32 - 100.0).abs() * 0.1 - 5.0;
        for mut t in &mut camera {
            t.translation.x = x;
        }
    }
}

/// The bench's app with `probes` probes, and penumbra or not.
fn app(probes: usize, penumbra: bool) -> App {
    let mut app = App::new();
    app.add_plugins((AssetPlugin::default(), TransformPlugin));
    if penumbra {
        app.add_plugins(PenumbraPlugin::default());
    }
    app.init_asset::<Mesh>()
        .insert_resource(MoveCamera(false))
        .add_systems(Update, fly);
    add_cascade_systems(&mut app);
    let world = app.world_mut();
    let (nx, nz) = GROUND;
    let mut positions = Vec::new();
    for j in 0..=nz {
        for i in 0..=nx {
            let (x, z) = (i as f32 - nx as f32 / 2.0, j as f32 - nz as f32 / 2.0);
            positions.push([x, height(x, z), z]);
        }
    }
    let mut indices = Vec::new();
    for j in 0..nz {
        for i in 0..nx {
            let a = j * (nx + 1) + i;
            let (b, c, d) = (a + 1, a + nx + 2, a + nx + 1);
            // Counter-clockwise seen from above: the faces Bevy keeps.
            indices.extend_from_slice(&[a, d, c, a, c, b]);
        }
    }
    let ground = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices));
    let mut assets = world.resource_mut::<Assets<Mesh>>();
    let ground = assets.add(ground);
    let cube = assets.add(Mesh::from(Cuboid::new(1.0, 1.0, 1.0)));
    world.spawn((Mesh3d(ground), Transform::IDENTITY));
    let mut rng = Rng::lcg64(0x5eed);
    for _ in 0..CUBOIDS {
        let x = (rng.f32_unit() - 0.5) * (nx as f32 - 4.0);
        let z = (rng.f32_unit() - 0.5) * (nz as f32 - 4.0);
        let size = Vec3::new(
            0.5 + 3.0 * rng.f32_unit(),
            0.5 + 3.0 * rng.f32_unit(),
            0.5 + 3.0 * rng.f32_unit(),
        );
        world.spawn((
            Mesh3d(cube.clone()),
            Transform::from_xyz(x, height(x, z) - 0.1 + size.y * 0.5, z)
                .with_rotation(Quat::from_rotation_y(
                    rng.f32_unit() * std::f32::consts::TAU,
                ))
                .with_scale(size),
        ));
    }
    world.spawn((
        DirectionalLight {
            shadow_maps_enabled: true,
            ..Default::default()
        },
        Transform::IDENTITY.looking_to(Vec3::new(-0.45, -0.77, 0.45), Vec3::Y),
        CascadeShadowConfigBuilder {
            num_cascades: 4,
            maximum_distance: 100.0,
            ..Default::default()
        }
        .build(),
    ));
    world.spawn((
        Camera3d::default(),
        Projection::Perspective(PerspectiveProjection {
            aspect_ratio: 16.0 / 9.0,
            ..Default::default()
        }),
        Transform::from_xyz(0.0, 8.0, 20.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    // Probes on a square grid around the camera's target, 30 m across.
    let side = (probes as f32).sqrt().ceil() as usize;
    for k in 0..probes {
        let (i, j) = ((k % side) as f32, (k / side) as f32);
        let x = -15.0 + 30.0 * i / side as f32;
        let z = -15.0 + 30.0 * j / side as f32;
        world.spawn((
            LightProbe::point().with_normal(Vec3::Y),
            Transform::from_xyz(x, height(x, z) + 0.05, z),
        ));
    }
    app.update();
    app
}

fn bench(c: &mut Criterion) {
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
    let mut group = c.benchmark_group("pbr_frame");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    for (probes, penumbra) in [(100usize, true), (10_000, true), (100, false)] {
        let mut app = app(probes, penumbra);
        for (name, moving) in [("camera_moves", true), ("camera_still", false)] {
            let id = if penumbra {
                BenchmarkId::new(name, probes)
            } else {
                BenchmarkId::new("bevy_alone", name)
            };
            app.world_mut().resource_mut::<MoveCamera>().0 = moving;
            let mut frames = 0u64;
            let mut last = Duration::ZERO;
            // The tiles' drawing and layout time (all threads), summed over every frame.
            let (mut render, mut layout) = (Duration::ZERO, Duration::ZERO);
            let (cpu0, wall0) = (cpu::process_cpu_seconds(), std::time::Instant::now());
            group.bench_function(id, |b| {
                b.iter(|| {
                    frames += 1;
                    let start = std::time::Instant::now();
                    app.update();
                    last = start.elapsed();
                    if let Some(d) = app.world().get_resource::<PenumbraDiagnostics>() {
                        render += d.tile_render;
                        layout += d.tile_layout;
                    }
                })
            });
            if frames == 0 || !penumbra {
                // Filtered out on the command line, or no plugin: nothing of its own to report.
                continue;
            }
            // Every frame the bench ran (warm-up included): the process's CPU time (all
            // threads) is steadier than wall time on a shared machine. Its clock ticks are
            // 10 ms, so it is given only over a second or more of frames (not for the single
            // frame of `cargo test --benches`).
            let elapsed = wall0.elapsed();
            let wall = elapsed.as_secs_f64() * 1e3 / frames as f64;
            if let (Some(a), Some(b), true) = (
                cpu0,
                cpu::process_cpu_seconds(),
                elapsed >= Duration::from_secs(1),
            ) {
                let cpu_ms = (b - a) * 1e3 / frames as f64;
                let per_frame = |d: Duration| d.as_secs_f64() * 1e3 / frames as f64;
                println!(
                    "pbr_frame {name}/{probes}: {frames} frames, {cpu_ms:.3} ms CPU (all threads) \
                     and {wall:.3} ms wall per frame ({:.0} % of the two cores); of the CPU, \
                     {:.3} ms drawing tiles and {:.3} ms laying them out",
                    100.0 * cpu_ms / (2.0 * wall),
                    per_frame(render),
                    per_frame(layout),
                );
            }
            let d = app.world().resource::<PenumbraDiagnostics>();
            println!(
                "pbr_frame {name}/{probes}: last frame: {:.2} ms wall, of which the game \
                 lights' exposure system {:.2} ms; sync {:.2} ms, render {} maps {:.2} ms, \
                 {} tiles drawn ({:.2} ms rasterizing, {:.2} ms layout, all threads; \
                 {:.2} ms wall; {} triangle pieces skipped by the coarse depth test), \
                 queries {:.2} ms besides",
                last.as_secs_f64() * 1e3,
                d.update_pbr_exposure.as_secs_f64() * 1e3,
                d.sync_occluders.as_secs_f64() * 1e3,
                d.pbr_maps_rendered,
                d.render_pbr_maps.as_secs_f64() * 1e3,
                d.tiles_rendered,
                d.tile_render.as_secs_f64() * 1e3,
                d.tile_layout.as_secs_f64() * 1e3,
                d.tile_wall.as_secs_f64() * 1e3,
                d.pieces_rejected,
                d.query_time().as_secs_f64() * 1e3,
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
