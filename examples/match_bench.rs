//! Times penumbra's template matching for `benches/peers/opencv_match.py` and for quick checks.
//!
//! ```text
//! cargo run --release --example match_bench -- IMAGE.png TEMPLATE.png [--reps N] [--threads N]
//!     [--backend none|sse4.1|avx2|avx512bw]
//!     prints one JSON line: best match, best time in seconds (PNG loading excluded)
//! cargo run --release --example match_bench -- kernels [SIZE] [TEMPLATE]
//!     prints the full-SAD-map throughput of every supported backend (G absolute differences/s)
//! ```

use std::time::Instant;

use penumbra::msad4::{
    Channels, CpuExtension, Image, MatchOptions, SadMap, find_matches, load_png, load_png_template,
    sad_map_into, sad_map_using,
};
use penumbra_testkit::Rng;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: usize| -> Result<usize, String> {
        match args.iter().position(|a| a == name) {
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{name} needs a number")),
            None => Ok(default),
        }
    };
    match args.first().map(String::as_str) {
        Some("kernels") => {
            let size = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(2048);
            let t = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(16);
            kernels(size, t);
            Ok(())
        }
        Some(image) if args.len() >= 2 => {
            let reps = flag("--reps", 5)?;
            let threads = flag("--threads", 1)?;
            let backend = match args.iter().position(|a| a == "--backend") {
                Some(i) => {
                    let name = args.get(i + 1).map(String::as_str).unwrap_or("");
                    let ext = CpuExtension::ALL.into_iter().find(|e| e.name() == name);
                    Some(ext.ok_or(format!("unknown backend {name:?}"))?)
                }
                None => None,
            };
            let image = load_png(image, Channels::R8).map_err(|e| e.to_string())?;
            let template = load_png_template(&args[1], Channels::R8).map_err(|e| e.to_string())?;
            let opts = MatchOptions {
                threads,
                backend,
                ..MatchOptions::default()
            };
            let mut best = f64::INFINITY;
            let mut found = Vec::new();
            for _ in 0..reps.max(1) {
                let start = Instant::now();
                found = find_matches(&image, &template, &opts).map_err(|e| e.to_string())?;
                best = best.min(start.elapsed().as_secs_f64());
            }
            let m = found.first().ok_or("no match")?;
            println!(
                "{{\"x\": {}, \"y\": {}, \"sad\": {}, \"seconds\": {best:.6}, \"backend\": \"{}\"}}",
                m.x,
                m.y,
                m.sad,
                backend.unwrap_or_default()
            );
            Ok(())
        }
        _ => Err("usage: match_bench IMAGE TEMPLATE [--reps N] | match_bench kernels".into()),
    }
}

/// Full SAD maps of a `t×t` template in a `size²` noise image, per backend, single thread.
fn kernels(size: u32, t: u32) {
    let mut rng = Rng::xorshift64(0x2545_F491_4F6C_DD1D);
    let mut byte = || rng.byte_at(24);
    let image = Image::r8(size, size, (0..size * size).map(|_| byte()).collect()).unwrap();
    let template = Image::r8(t, t, (0..t * t).map(|_| byte().max(1)).collect()).unwrap();
    let ads = f64::from((size - t + 1).pow(2)) * f64::from(t * t);
    let mut scalar = None;
    for ext in CpuExtension::supported() {
        // Into one reused map (the steady state of repeated matching), and into a fresh map
        // per call (its allocation and first-touch page faults included).
        let (mut best, mut fresh) = (f64::INFINITY, f64::INFINITY);
        let mut map = SadMap::default();
        for _ in 0..5 {
            let start = Instant::now();
            sad_map_into(&image, &template, 1, ext, &mut map).unwrap();
            best = best.min(start.elapsed().as_secs_f64());
            let start = Instant::now();
            std::hint::black_box(sad_map_using(&image, &template, 1, ext).unwrap());
            fresh = fresh.min(start.elapsed().as_secs_f64());
        }
        let rate = ads / best / 1e9;
        let base = *scalar.get_or_insert(best);
        println!(
            "{:<9} {t:>2}x{t:<2} {best:>8.4} s {rate:>7.1} G AD/s  ({:.2}x scalar)  fresh map: {:.1} G AD/s",
            ext.name(),
            base / best,
            ads / fresh / 1e9
        );
    }
}
