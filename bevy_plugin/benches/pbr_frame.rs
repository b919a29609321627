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
//!   the same run: what a frame costs before penumbra adds anything;
//! * `lamp_camera_moves/10000`: `camera_moves` with a shadow-casting `PointLight` (1024²
//!   cube faces, Bevy's Gaussian filter) 4 m above the middle of the probes, reaching 20 m:
//!   its map does not change, but every probe it reaches is answered again each frame with
//!   the sun's.
//!
//! After each group the bench prints the process's CPU time (all threads) and wall time per
//! frame over every frame it ran (and what share of the two cores that CPU time is), then the
//! last frame's wall time and the plugin's own split of it (`PenumbraDiagnostics`: the
//! exposure system, rendering vs queries).

use std::time::Duration;

use bevy_light::PointLight;
use bevy_penumbra::prelude::*;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use bevy_transform::components::Transform;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[path = "../../benches/support/cpu.rs"]
mod cpu;
#[path = "support/flight.rs"]
mod flight;
#[path = "../../benches/support/level.rs"]
mod level;

use flight::{MoveCamera, app};

fn bench(c: &mut Criterion) {
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
    let mut group = c.benchmark_group("pbr_frame");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    for (probes, penumbra, lamp) in [
        (100usize, true, false),
        (10_000, true, false),
        (100, false, false),
        (10_000, true, true),
    ] {
        let mut app = app(probes, penumbra);
        if lamp {
            app.world_mut().spawn((
                PointLight {
                    shadow_maps_enabled: true,
                    range: 20.0,
                    ..Default::default()
                },
                Transform::from_xyz(0.0, 4.0, 0.0),
            ));
            app.update();
        }
        let frames_of = if lamp {
            &[("lamp_camera_moves", true)][..]
        } else {
            &[("camera_moves", true), ("camera_still", false)][..]
        };
        for &(name, moving) in frames_of {
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
