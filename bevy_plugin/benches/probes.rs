//! 10,000 light probes × 4 shadow-casting lights (3×3 PCF) updated every frame, on a 2-thread
//! `ComputeTaskPool`.
//!
//! ```sh
//! cargo bench -p bevy_penumbra --bench probes
//! ```
//!
//! * `frame_all_probes_moved` — one `App::update` in which every probe moved: transform
//!   propagation, change detection (no map re-renders: lights and occluders are static) and
//!   the exposure system.
//! * `exposure_system_all_probes_moved` — the exposure system alone, timed by
//!   `PenumbraDiagnostics::update_exposure` in the same frames.
//! * `frame_nothing_moved` — a frame where nothing moved: the cost of change detection.
//! * `lit_fractions_one_thread_cpu_time` — the batched comparison path alone
//!   (`ShadowMap::lit_fractions`, one call per light with every probe's point): the same 40,000 lit
//!   fractions on one thread, no ECS, timed in the thread's CPU time (wall time where
//!   `/proc/thread-self/schedstat` is missing); then the same light by light.

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bevy_penumbra::penumbra_core::shadow::LightKind;
use bevy_penumbra::prelude::*;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use bevy_transform::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;
use penumbra_testkit::Rng;

const PROBES: usize = 10_000;
/// Probes fill a 40 m × 40 m yard, which every light reaches.
const YARD: f32 = 20.0;

/// Whether the probes move this frame.
#[derive(Resource)]
struct Jitter {
    on: bool,
    sign: f32,
}

/// Nudges every probe by a millimetre, alternating direction, so all of them recompute.
fn jitter(mut jitter: ResMut<Jitter>, mut probes: Query<&mut Transform, With<LightProbe>>) {
    if !jitter.on {
        return;
    }
    jitter.sign = -jitter.sign;
    let step = Vec3::new(0.001 * jitter.sign, 0.0, 0.0);
    for mut transform in &mut probes {
        transform.translation += step;
    }
}

fn level() -> App {
    // The pool the benchmark figures are for: two threads, as on the project's machines.
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
    let mut app = App::new();
    app.add_plugins((TransformPlugin, PenumbraPlugin::default()))
        .insert_resource(Jitter {
            on: true,
            sign: 1.0,
        })
        .add_systems(Update, jitter);
    let world = app.world_mut();
    let mut rng = Rng::xorshift64(0x9e37_79b9_7f4a_7c15);
    world.spawn((
        Occluder::cuboid(Vec3::new(60.0, 1.0, 60.0)),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    for _ in 0..150 {
        let size = Vec3::new(
            rng.f32_in(0.5, 3.0),
            rng.f32_in(1.0, 5.0),
            rng.f32_in(0.5, 3.0),
        );
        let at = Vec3::new(
            rng.f32_in(-YARD, YARD),
            0.5 * size.y,
            rng.f32_in(-YARD, YARD),
        );
        world.spawn((Occluder::cuboid(size), Transform::from_translation(at)));
    }
    world.spawn((
        ShadowLight::directional(1.0).with_kernel(PcfKernel::PCF_3X3),
        Transform::default().looking_to(Vec3::new(-0.6, -1.0, 0.4), Vec3::Y),
    ));
    for at in [Vec3::new(-10.0, 30.0, -5.0), Vec3::new(12.0, 28.0, 8.0)] {
        world.spawn((
            ShadowLight::spot(0.95, 80.0, 900.0).with_kernel(PcfKernel::PCF_3X3),
            Transform::from_translation(at).looking_at(Vec3::ZERO, Vec3::Z),
        ));
    }
    world.spawn((
        ShadowLight::point(60.0, 150.0).with_kernel(PcfKernel::PCF_3X3),
        Transform::from_xyz(0.0, 10.0, 0.0),
    ));
    for _ in 0..PROBES {
        let at = Vec3::new(
            rng.f32_in(-YARD, YARD),
            rng.f32_in(0.2, 2.0),
            rng.f32_in(-YARD, YARD),
        );
        world.spawn((LightProbe::point(), Transform::from_translation(at)));
    }
    app.update();
    let maps = app.world().resource::<ShadowMaps>();
    assert_eq!(maps.len(), 4, "{:?}", maps.errors().collect::<Vec<_>>());
    app
}

/// CPU time of the calling thread (Linux `/proc/thread-self/schedstat`), so that time slices
/// other processes take on a shared machine do not count.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn probes(c: &mut Criterion) {
    let mut app = level();
    app.update();
    let d = app.world().resource::<PenumbraDiagnostics>();
    assert_eq!(d.probes_updated as usize, PROBES);
    assert_eq!(d.shadow_maps_rendered, 0);
    // Every probe sees every light: 40,000 lit fractions a frame.
    let mut reached = 0;
    let mut probes = app.world_mut().query::<&Exposure>();
    for exposure in probes.iter(app.world()) {
        reached += exposure.lights().len();
    }
    assert_eq!(reached, 4 * PROBES);

    let mut group = c.benchmark_group("probes_10k_x4_lights_pcf3x3");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("frame_all_probes_moved", |b| b.iter(|| app.update()));
    group.bench_function("exposure_system_all_probes_moved", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                app.update();
                total += app
                    .world()
                    .resource::<PenumbraDiagnostics>()
                    .update_exposure;
            }
            total
        });
    });
    let points: Vec<Vec3> = {
        let mut q = app
            .world_mut()
            .query_filtered::<&GlobalTransform, With<LightProbe>>();
        q.iter(app.world())
            .map(GlobalTransform::translation)
            .collect()
    };
    group.bench_function("lit_fractions_one_thread_cpu_time", |b| {
        let maps = app.world().resource::<ShadowMaps>();
        let mut out = vec![0.0f32; points.len()];
        b.iter_custom(|iters| {
            let (wall, cpu) = (std::time::Instant::now(), thread_cpu_time());
            for _ in 0..iters {
                for light in maps.iter() {
                    light.map().lit_fractions(&points, None, &mut out);
                }
                std::hint::black_box(&out);
            }
            match (cpu, thread_cpu_time()) {
                (Some(start), Some(end)) => end.saturating_sub(start),
                _ => wall.elapsed(),
            }
        });
    });
    // The same, light by light: 10,000 lit fractions each.
    let names: Vec<String> = app
        .world()
        .resource::<ShadowMaps>()
        .iter()
        .enumerate()
        .map(|(i, light)| {
            let kind = match light.light().kind {
                LightKind::Directional { .. } | LightKind::Cascaded { .. } => "directional",
                LightKind::Spot { .. } => "spot",
                LightKind::Point { .. } => "point_cube",
            };
            format!("{i}_{kind}")
        })
        .collect();
    for (index, name) in names.iter().enumerate() {
        group.bench_function(format!("lit_fractions_one_thread_cpu_time/{name}"), |b| {
            let maps = app.world().resource::<ShadowMaps>();
            let light = maps.iter().nth(index).unwrap();
            let mut out = vec![0.0f32; points.len()];
            b.iter_custom(|iters| {
                let (wall, cpu) = (std::time::Instant::now(), thread_cpu_time());
                for _ in 0..iters {
                    light.map().lit_fractions(&points, None, &mut out);
                    std::hint::black_box(&out);
                }
                match (cpu, thread_cpu_time()) {
                    (Some(start), Some(end)) => end.saturating_sub(start),
                    _ => wall.elapsed(),
                }
            });
        });
    }
    app.world_mut().resource_mut::<Jitter>().on = false;
    app.update();
    group.bench_function("frame_nothing_moved", |b| b.iter(|| app.update()));
    group.finish();
}

criterion_group!(benches, probes);
criterion_main!(benches);
