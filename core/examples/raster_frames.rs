//! Draws the benches' 100,000-triangle level into a 2048² D32 sun map, frame after frame, and
//! prints the time per frame: a steady load for profilers (`perf record`, `valgrind --tool=
//! callgrind`) and a quick figure without criterion. The third argument picks the kernel's
//! instruction set (`none`, `sse4.1`, `avx2`, `avx512bw`; the best this CPU has by default, and
//! never one it lacks).
//!
//! ```sh
//! cargo run --release -p penumbra_core --example raster_frames -- [frames] [threads] [level]
//! ```

#[path = "../../benches/support/level.rs"]
mod level;

use std::time::Instant;

use penumbra_core::Format;
use penumbra_core::cpu::CpuExtension;
use penumbra_core::raster::{DepthTarget, Instance, RasterState, rasterize_using};

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let level = match args.next() {
        Some(name) => match CpuExtension::supported()
            .into_iter()
            .find(|e| e.name() == name)
        {
            Some(level) => level,
            None => {
                let names: Vec<_> = CpuExtension::supported().iter().map(|e| e.name()).collect();
                eprintln!("no level {name:?} on this CPU; it has {}", names.join(", "));
                std::process::exit(2);
            }
        },
        None => CpuExtension::default(),
    };
    let (ground, transforms) = level::level();
    let cube = level::cube();
    let mut instances = vec![Instance::new(&ground, glam::Mat4::IDENTITY)];
    instances.extend(transforms.iter().map(|&t| Instance::new(&cube, t)));
    let vp = level::sun_view_proj();
    let state = RasterState::default();
    let mut target = DepthTarget::new(2048, 2048, Format::D32Float).expect("valid target");
    let mut stats = Default::default();
    let mut times = Vec::new();
    for _ in 0..frames.max(1) {
        let start = Instant::now();
        target.clear(1.0);
        stats = rasterize_using(&mut target, vp, &instances, &state, threads, level);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!("{stats:?}");
    println!(
        "{:.2} ms per frame, median ({:.2} fastest; {threads} thread(s), {level}, {} frames)",
        times[times.len() / 2],
        times[0],
        times.len()
    );
}
