//! What one frame of a flying camera draws of the sun's four 2048² cascades, for 100 and for
//! 10,000 probes: the `pbr_frame` bench's scene (the 100k-triangle level as `Mesh3d` entities,
//! Bevy's `CascadeShadowConfigBuilder` with four cascades, probes on a 30 m grid), flown for a
//! few frames, then the sun's map as `penumbra_core::picture::drawn_picture` shows it: the rows
//! of texels the probes' Castaño filters read in amber, the tiles they lie in outlined, the
//! rest of each cascade dimmed.
//!
//! ```sh
//! cargo run --release --example cascade_tiles [-- PROBES...]   # default: 100 10000
//! ```
//!
//! Writes `penumbra-out/cascade-tiles-<probes>.png` (the four cascades side by side, 8192 × 2048)
//! and a quarter-size `cascade-tiles-<probes>-small.png` (a drawn texel in a 4 × 4 block keeps
//! the block amber, so thin rows still show), and prints what each cascade drew.

use std::path::Path;

use bevy_penumbra::pbr::PbrShadows;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use image::{Rgb, RgbImage};
use penumbra_core::picture::{DRAWN_TILE_OUTLINE, drawn_picture};
use penumbra_core::shadow::LightKind;

#[path = "../benches/support/flight.rs"]
mod flight;
#[path = "../../benches/support/level.rs"]
mod level;

/// Frames flown before the picture: the last one's cascades are new, so the map holds what
/// that frame's probes drew.
const FRAMES: u32 = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let probes: Vec<usize> = match std::env::args().skip(1).map(|a| a.parse()).collect() {
        Ok(list) if !Vec::is_empty(&list) => list,
        Ok(_) => vec![100, 10_000],
        Err(e) => return Err(format!("probe counts are whole numbers: {e}").into()),
    };
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
    let out = Path::new("penumbra-out");
    std::fs::create_dir_all(out)?;
    for n in probes {
        let mut app = flight::app(n, true);
        app.world_mut().resource_mut::<flight::MoveCamera>().0 = true;
        for _ in 0..FRAMES {
            app.update();
        }
        let shadows = app.world().resource::<PbrShadows>();
        let lighting = shadows.lighting();
        let Some(map) = lighting.lights().find_map(|(id, light)| {
            matches!(light.kind, LightKind::Cascaded { .. })
                .then(|| lighting.rendered_map(id))
                .flatten()
        }) else {
            return Err("the sun's cascades were not drawn".into());
        };
        let drawn = map.drawn_tiles();
        println!("{n} probes, the last frame's cascades:");
        let (res, across) = (drawn.resolution(), drawn.tiles_across());
        for slice in 0..drawn.slices() {
            let (mut tiles, mut rows) = (0, 0);
            for ty in 0..across {
                for tx in 0..across {
                    let r = drawn.rows(slice, tx, ty).count_ones();
                    tiles += u32::from(r != 0);
                    rows += r;
                }
            }
            println!(
                "  cascade {slice}: {tiles:4} of {} tiles, {rows:6} tile rows, {:5.2} % of its texels",
                across * across,
                100.0 * drawn.slice_texels(slice) as f64 / f64::from(res).powi(2),
            );
        }
        let picture = drawn_picture(map);
        let path = out.join(format!("cascade-tiles-{n}.png"));
        picture.save(&path)?;
        let small = out.join(format!("cascade-tiles-{n}-small.png"));
        quarter(&picture).save(&small)?;
        println!("  wrote {} and {}", path.display(), small.display());
    }
    Ok(())
}

/// `img` at a quarter of its size, each 4 × 4 block one pixel: its brightest drawn (amber)
/// pixel if it has one, else the outline if it crosses one, else the block's mean.
fn quarter(img: &RgbImage) -> RgbImage {
    let amber = |p: &Rgb<u8>| p.0[0] > p.0[2];
    RgbImage::from_fn(img.width() / 4, img.height() / 4, |x, y| {
        let block: Vec<Rgb<u8>> = (0..16)
            .map(|k| *img.get_pixel(4 * x + k % 4, 4 * y + k / 4))
            .collect();
        if let Some(p) = block.iter().filter(|p| amber(p)).max_by_key(|p| p.0[0]) {
            return *p;
        }
        if block.contains(&DRAWN_TILE_OUTLINE) {
            return DRAWN_TILE_OUTLINE;
        }
        let mean = |c: usize| (block.iter().map(|p| u32::from(p.0[c])).sum::<u32>() / 16) as u8;
        Rgb([mean(0), mean(1), mean(2)])
    })
}
