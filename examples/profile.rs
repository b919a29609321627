//! Runs penumbra's main kinds of work while a Tracy profiler watches: shadow maps drawn tile by
//! tile and whole, an occluder moving (tiles forgotten and drawn again), batched PCF, bevy_pbr's
//! Gaussian filter over a sun's cascades, single samples, msad4 template matching and a Lua
//! script with its own zone and plot, one frame mark per stage. Built only with the `tracy` feature:
//!
//! ```sh
//! cargo run --release --features tracy --example profile    # then connect Tracy 0.14.1
//! ```
//!
//! It waits up to 60 s for a profiler on 127.0.0.1:8086, and stays alive 1.5 s after its last
//! event so the profiler can fetch names. CI uses it with a minimal capture to check that the
//! zones, plots and frame marks arrive.

use std::time::{Duration, Instant};

use glam::{Mat4, Vec3};
use penumbra::level::sample_level;
use penumbra::msad4::{Image, MatchOptions, find_matches};
use penumbra::shadow::pbr::{PbrCascade, PbrDirectional, PbrFilter, PbrReceiver};
use penumbra::shadow::{Occluder, PcfKernel, ShadowMap};
use penumbra_lua::{Runtime, RuntimeOptions};
use penumbra_testkit::Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = tracy_client::Client::start();
    eprintln!("waiting for a Tracy profiler on 127.0.0.1:8086 ...");
    let deadline = Instant::now() + Duration::from_secs(60);
    // SAFETY: a plain query of the running client's connection state.
    while unsafe { tracy_client::sys::___tracy_connected() } == 0 {
        if Instant::now() > deadline {
            return Err("no profiler connected within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("profiler connected");
    let level = sample_level();
    let points: Vec<Vec3> = (0..4096)
        .map(|i| {
            Vec3::new(
                (i % 64) as f32 * 0.6 - 19.0,
                0.0,
                (i / 64) as f32 * 0.6 - 19.0,
            )
        })
        .collect();
    let mut noise = Rng::xorshift32(0x1234_5678);
    let mut bytes =
        |n: usize| -> Vec<u8> { (0..n).map(|_| (noise.next_u32() >> 24) as u8 | 1).collect() };
    let image = Image::r8(256, 256, bytes(256 * 256))?;
    let template = Image::r8(16, 16, bytes(16 * 16))?;
    let dir = std::env::temp_dir().join(format!("penumbra-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let lua = Runtime::new(RuntimeOptions::new(&dir))?;
    for frame in 0..3 {
        // The level through the engine's Lighting: maps render on the first query.
        let (mut lighting, ids, _) = level.lighting();
        let maps: Vec<_> = ids
            .iter()
            .map(|&id| lighting.map(id))
            .collect::<Result<_, _>>()?;
        client.frame_mark();
        let mut lit = vec![0.0; points.len()];
        for map in &maps {
            map.lit_fractions_with(&points, Some(Vec3::Y), &PcfKernel::PCF_3X3, &mut lit);
        }
        let map_count = maps.len();
        drop(maps);
        lighting.exposures(&points, Some(Vec3::Y), &mut lit, &mut Default::default())?;
        // An occluder moves: the maps forget the tiles it covers and the next query draws
        // them again; and one map rendered whole, as a tool baking it would.
        let first = lighting.occluders().next().map(|(id, o)| (id, o.clone()));
        if let Some((first, occluder)) = first {
            let moved = Occluder {
                transform: Mat4::from_translation(Vec3::X * 0.5) * occluder.transform,
                ..occluder
            };
            lighting.set_occluder(first, moved);
            lighting.exposures(&points, Some(Vec3::Y), &mut lit, &mut Default::default())?;
        }
        if let Some((_, light)) = lighting.lights().next() {
            ShadowMap::render(light.clone(), lighting.scene())?;
        }
        // bevy_pbr's Gaussian filter over a sun's two cascades, as the Bevy plugin asks it:
        // each part's taps recorded and their tiles marked, the tiles drawn, the taps looked up.
        let sun = sun_straight_down();
        let id = lighting.add_light(sun.light(1.0));
        let receivers: Vec<PbrReceiver> = points
            .iter()
            .map(|&point| PbrReceiver {
                point,
                normal: Vec3::Y,
                view_z: -point.length(),
            })
            .collect();
        sun.shadow_factors(lighting.map(id)?, &receivers, PbrFilter::Gaussian, &mut lit);
        client.plot(
            tracy_client::plot_name!("penumbra lookups per frame"),
            (points.len() * map_count * 4) as f64,
        );
        client.frame_mark();
        let found = find_matches(&image, &template, &MatchOptions::default())?;
        client.frame_mark();
        lua.run_str(
            "penumbra.zone('level script', function() penumbra.plot('script value', 42) end)",
            "profile.luau",
        )?;
        client.frame_mark();
        eprintln!(
            "frame {frame}: {} maps, {} lit fractions, {} matches",
            map_count,
            lit.len() * map_count,
            found.len()
        );
    }
    std::thread::sleep(Duration::from_millis(1500));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// A sun straight overhead with Bevy's cascade matrices (orthographic, reverse Z) of 12 m and
/// 24 m half-width round the origin, 1024² each, the nearer up to 10 m of view depth.
fn sun_straight_down() -> PbrDirectional {
    let view =
        glam::camera::rh::view::look_to_mat4(Vec3::new(0.0, 50.0, 0.0), Vec3::NEG_Y, Vec3::Z);
    let resolution = 1024;
    let cascade = |half: f32, far_bound: f32| PbrCascade {
        clip_from_world: glam::camera::rh::proj::directx::orthographic(
            -half, half, -half, half, 100.0, 0.0,
        ) * view,
        texel_size: 2.0 * half / resolution as f32,
        far_bound,
    };
    PbrDirectional {
        direction_to_light: Vec3::Y,
        depth_bias: 0.02,
        normal_bias: 1.8,
        overlap_proportion: 0.2,
        cascades: vec![cascade(12.0, 10.0), cascade(24.0, 40.0)],
        resolution,
    }
}
