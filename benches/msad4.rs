//! msad4 / template matching benchmarks (single thread).
//!
//! * `msad4_kernel/<backend>/<t>x<t>`: the full SAD map of a t×t template in a 2048² noise image
//!   per backend, into a reused map (`sad_map_into`, the steady state of repeated matching);
//!   throughput in absolute differences (criterion's "elements/s" = AD/s).
//!   `msad4_kernel/<backend>-fresh-map/<t>x<t>`: the same through `sad_map_using`, which
//!   allocates a new 16 MB map every call (first-touch page faults included), best backend.
//! * `msad4_best1/<plain|masked>/<t>x<t>`: `find_matches` top 1 in a 4096² noise image with
//!   the template planted, plain or with transparent corners (an ellipse sprite).
//!
//! * `msad4_sprite/<msad4|alpha>/<t>x<t>`: `find_matches` top 1 of an RGBA sprite with a
//!   transparent surround and an opaque black outline in a 1920×1080 RGBA screenshot, with
//!   msad4's masking (the outline does not count) and alpha masking (it does: a second SAD pass
//!   over the outline, and no pruning), side by side.
//!
//! `cargo bench --bench msad4` (add `-- msad4_kernel`, `-- msad4_best1` or `-- msad4_sprite` to
//! pick a group).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use penumbra::msad4::{
    CpuExtension, Image, Masking, MatchOptions, SadMap, find_matches, sad_map_into, sad_map_using,
};
use penumbra_testkit::Rng;

/// A t×t template of non-zero bytes; `masked` clears the pixels outside the inscribed ellipse.
fn template(noise: &mut Rng, t: u32, masked: bool) -> Vec<u8> {
    let c = (f64::from(t) - 1.0) / 2.0;
    let r = f64::from(t) / 2.0;
    (0..t * t)
        .map(|i| {
            let (x, y) = (f64::from(i % t), f64::from(i / t));
            let inside = ((x - c) / r).powi(2) + ((y - c) / r).powi(2) <= 1.0;
            let v = noise.byte_at(24).max(1);
            if masked && !inside { 0 } else { v }
        })
        .collect()
}

fn kernels(c: &mut Criterion) {
    let mut g = c.benchmark_group("msad4_kernel");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let size = 2048;
    let mut noise = Rng::xorshift64(0x2545_F491_4F6C_DD1D);
    let image = Image::r8(size, size, noise.bytes_at(24, (size * size) as usize)).unwrap();
    for t in [8u32, 16, 32] {
        let tpl = Image::r8(t, t, template(&mut noise, t, false)).unwrap();
        let ads = u64::from((size - t + 1).pow(2)) * u64::from(t * t);
        g.throughput(Throughput::Elements(ads));
        for ext in CpuExtension::supported() {
            let mut map = SadMap::default();
            g.bench_with_input(
                BenchmarkId::new(ext.name(), format!("{t}x{t}")),
                &ext,
                |b, &ext| b.iter(|| sad_map_into(&image, &tpl, 1, ext, &mut map).unwrap()),
            );
        }
        let best = CpuExtension::default();
        g.bench_with_input(
            BenchmarkId::new(format!("{}-fresh-map", best.name()), format!("{t}x{t}")),
            &best,
            |b, &ext| b.iter(|| sad_map_using(&image, &tpl, 1, ext).unwrap()),
        );
    }
    g.finish();
}

fn best_match(c: &mut Criterion) {
    let mut g = c.benchmark_group("msad4_best1");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let size = 4096u32;
    let mut noise = Rng::xorshift64(0x9E37_79B9_7F4A_7C15);
    let base = noise.bytes_at(24, (size * size) as usize);
    for masked in [false, true] {
        for t in [8u32, 16, 24, 32, 48, 64] {
            let tpl_bytes = template(&mut noise, t, masked);
            let (px, py) = (1234u32, 2345u32);
            let mut pixels = base.clone();
            for (i, &v) in tpl_bytes.iter().enumerate() {
                if v != 0 {
                    let (x, y) = (px + i as u32 % t, py + i as u32 / t);
                    pixels[(y * size + x) as usize] = v;
                }
            }
            let image = Image::r8(size, size, pixels).unwrap();
            let tpl = Image::r8(t, t, tpl_bytes).unwrap();
            let opts = MatchOptions::default();
            let found = find_matches(&image, &tpl, &opts).unwrap();
            assert_eq!((found[0].x, found[0].y, found[0].sad), (px, py, 0));
            let kind = if masked { "masked" } else { "plain" };
            g.bench_function(BenchmarkId::new(kind, format!("{t}x{t}")), |b| {
                b.iter(|| find_matches(&image, &tpl, &opts).unwrap())
            });
        }
    }
    g.finish();
}

/// An RGBA sprite (transparent outside a disc, a black ring, noise inside) planted in a noise
/// screenshot, found with either masking.
fn sprite_masking(c: &mut Criterion) {
    let mut g = c.benchmark_group("msad4_sprite");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let (w, h) = (1920u32, 1080u32);
    let mut noise = Rng::xorshift64(0x5EED_0017_ABCD_1234);
    let mut pixels: Vec<u8> = (0..w * h * 4).map(|_| noise.byte_at(24)).collect();
    for t in [16u32, 32, 64] {
        let c0 = (f64::from(t) - 1.0) / 2.0;
        let r = f64::from(t) / 2.0;
        let mut tpl = Vec::with_capacity((t * t * 4) as usize);
        for i in 0..t * t {
            let (x, y) = (f64::from(i % t), f64::from(i / t));
            let d = (((x - c0) / r).powi(2) + ((y - c0) / r).powi(2)).sqrt();
            let px = if d > 1.0 {
                [0, 0, 0, 0]
            } else if d > 0.8 {
                [0, 0, 0, 255]
            } else {
                [noise.byte_at(24), noise.byte_at(24), noise.byte_at(24), 255]
            };
            tpl.extend(px);
        }
        let (px, py) = (1000u32, 500u32);
        for i in 0..t * t {
            let at = (((py + i / t) * w + px + i % t) * 4) as usize;
            let src = &tpl[(i * 4) as usize..(i * 4 + 4) as usize];
            if src[3] != 0 {
                pixels[at..at + 4].copy_from_slice(src);
            }
        }
        let image = Image::rgba8(w, h, pixels.clone()).unwrap();
        let tpl = Image::rgba8(t, t, tpl).unwrap();
        for masking in [Masking::Msad4, Masking::Alpha] {
            let opts = MatchOptions {
                masking,
                ..MatchOptions::default()
            };
            let found = find_matches(&image, &tpl, &opts).unwrap();
            assert_eq!((found[0].x, found[0].y, found[0].sad), (px, py, 0));
            g.bench_function(BenchmarkId::new(masking.name(), format!("{t}x{t}")), |b| {
                b.iter(|| find_matches(&image, &tpl, &opts).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, kernels, best_match, sprite_masking);
criterion_main!(benches);
