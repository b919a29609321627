//! Renders the sample level's shadow maps and a top-down map of how lit the floor is.
//!
//! ```sh
//! cargo run --release --example shadows     # writes penumbra-out/shadows/*.png
//! ```

use std::path::PathBuf;
use std::time::Instant;

use glam::Vec3;
use image::Rgb;
use penumbra::level::sample_level;
use penumbra::picture::{TopDown, depth_image, save};
use penumbra::shadow::Aabb;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from("penumbra-out/shadows");
    let level = sample_level();
    let (lighting, lights, _) = level.lighting();
    let t = Instant::now();
    for ((name, _), &id) in level.lights.iter().zip(&lights) {
        let map = lighting.map(id)?;
        save(
            &depth_image(map.texture(), 0),
            &out.join(format!("{name}-shadow-map.png")),
        )?;
    }
    println!(
        "rendered {} shadow maps of {} triangles in {:.1} ms",
        lights.len(),
        level.scene.triangle_count(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let view = TopDown::fit(
        &Aabb {
            min: Vec3::new(-20.0, 0.0, -20.0),
            max: Vec3::new(20.0, 0.0, 20.0),
        },
        800,
    );
    let t = Instant::now();
    let peak = 1.0;
    let mut img = view.field(0.0, |p| {
        let exposure = lighting
            .exposure(p, Some(Vec3::Y))
            .map_or(0.0, |e| e.total());
        (exposure / peak).sqrt()
    });
    println!(
        "{}×{} floor points lit in {:.1} ms",
        view.width,
        view.height,
        t.elapsed().as_secs_f64() * 1e3
    );
    view.outline_occluders(&mut img, &level.scene, 0.0, Rgb([80, 200, 255]));
    save(&img, &out.join("lit-floor.png"))?;
    println!("wrote {}", out.display());
    Ok(())
}
