use super::bound::{Bound, Layer};
use super::select::greedy;
use super::*;
use crate::msad4::Channels;
use crate::msad4::scalar::Lane;

use penumbra_testkit::Rng;

/// The suppression walk as it was first written: each key against every accepted match.
fn greedy_quadratic(keys: &[Key], k: usize, (rx, ry): (u32, u32)) -> Vec<Match> {
    let mut found: Vec<Match> = Vec::new();
    for &(sad, y, x) in keys {
        if found.len() == k {
            break;
        }
        if found
            .iter()
            .all(|m| m.x.abs_diff(x) > rx || m.y.abs_diff(y) > ry)
        {
            found.push(Match {
                x,
                y,
                sad: u64::from(sad),
            });
        }
    }
    found
}

#[test]
fn grid_suppression_equals_the_pairwise_walk() {
    let mut rng = Rng::xorshift64(0x9e37_79b9_7f4a_7c15);
    for round in 0..300 {
        let n = (rng.next_u64() % 400) as usize;
        let span = 1 + (rng.next_u64() % 64) as u32;
        let mut keys: Vec<Key> = (0..n)
            .map(|_| {
                let sad = (rng.next_u64() % 50) as u32;
                let y = (rng.next_u64() % u64::from(span)) as u32;
                let x = (rng.next_u64() % u64::from(span)) as u32;
                (sad, y, x)
            })
            .collect();
        // Edge coordinates: the grid must not wrap or overflow at u32::MAX.
        if round % 7 == 0 {
            keys.push((0, u32::MAX, u32::MAX));
            keys.push((1, u32::MAX - 1, 0));
        }
        keys.sort_unstable();
        keys.dedup_by_key(|k| (k.1, k.2));
        let radius = (
            (rng.next_u64() % 6) as u32,
            [0, 1, 3, 9, u32::MAX][(rng.next_u64() % 5) as usize],
        );
        let k = 1 + (rng.next_u64() % 40) as usize;
        assert_eq!(
            greedy(&keys, k, radius),
            greedy_quadratic(&keys, k, radius),
            "round {round}, radius {radius:?}, k {k}"
        );
    }
}

fn masked_sad(image: &Image, template: &Image, x: usize, y: usize) -> u32 {
    let bpp = image.channels().bytes_per_pixel();
    let (w, tw) = (
        image.width() as usize * bpp,
        template.width() as usize * bpp,
    );
    let mut sum = 0;
    for (r, row) in template.data().chunks_exact(tw).enumerate() {
        for (c, &t) in row.iter().enumerate() {
            let p = image.data()[(y + r) * w + x * bpp + c];
            if t != 0 {
                sum += u32::from(t.abs_diff(p));
            }
        }
    }
    sum
}

/// Every layer's blocks are fully cared, no two blocks overlap, and the bound (with and
/// without the early stop) never exceeds the masked SAD at any position.
#[test]
fn layered_bound_is_a_lower_bound_of_the_masked_sad() {
    let mut rng = Rng::xorshift64(0x5EED_B0D5);
    for (case, (tw, th, channels)) in [
        (48, 48, Channels::R8),
        (33, 20, Channels::R8),
        (16, 16, Channels::Rgba8),
        (64, 40, Channels::R8),
    ]
    .into_iter()
    .enumerate()
    {
        let bpp = channels.bytes_per_pixel();
        let (w, h) = (97usize, 71usize);
        let data: Vec<u8> = (0..w * h * bpp).map(|_| rng.next_u64() as u8).collect();
        let image = Image::new(w as u32, h as u32, channels, data).unwrap();
        // A sprite: an ellipse of random bytes, transparent (0) outside.
        let (cx, cy) = ((tw as f64 - 1.0) / 2.0, (th as f64 - 1.0) / 2.0);
        let tpl: Vec<u8> = (0..tw * th * bpp)
            .map(|i| {
                let (x, y) = (((i / bpp) % tw) as f64, ((i / bpp) / tw) as f64);
                let (dx, dy) = ((x - cx) / (tw as f64 / 2.0), (y - cy) / (th as f64 / 2.0));
                if dx * dx + dy * dy <= 1.0 {
                    (rng.next_u64() % 255 + 1) as u8
                } else {
                    0
                }
            })
            .collect();
        let template = Image::new(tw as u32, th as u32, channels, tpl).unwrap();
        let bound = Bound::new(&image, &template);
        assert_eq!(
            bound.layers.len(),
            2,
            "case {case}: a sprite gets a ring layer"
        );
        let mut owner = vec![usize::MAX; tw * th];
        for (i, &(l, dy, dx, t)) in bound.blocks.iter().enumerate() {
            let Layer { bw, bh } = bound.layers[l];
            let mut sum = 0;
            for r in dy..dy + bh {
                for c in dx..dx + bw {
                    assert_eq!(owner[r * tw + c], usize::MAX, "case {case}: overlap");
                    owner[r * tw + c] = i;
                    for k in 0..bpp {
                        let b = template.data()[(r * tw + c) * bpp + k];
                        assert_ne!(b, 0, "case {case}: a block holds a don't-care byte");
                        sum += u32::from(b);
                    }
                }
            }
            assert_eq!(sum, t, "case {case}: block sum");
        }
        let (nx, ny) = (w - tw + 1, h - th + 1);
        let sads: Vec<u32> = (0..ny * nx)
            .map(|i| masked_sad(&image, &template, i % nx, i / nx))
            .collect();
        let first = bound.first_layer_len();
        let mut limit = sads.clone();
        limit.sort_unstable();
        let limit = limit[limit.len() / 50];
        for backend in CpuExtension::ALL.into_iter().filter(|b| b.is_supported()) {
            for early in [None, Some((first, limit))] {
                let mut got = vec![u32::MAX; nx * ny];
                bound.rows::<u32>(&image, nx, backend, 0..ny, early, |y, row| {
                    got[y * nx..(y + 1) * nx].copy_from_slice(row);
                });
                for (i, (&lb, &sad)) in got.iter().zip(&sads).enumerate() {
                    assert!(
                        lb <= sad,
                        "case {case} {backend:?} {early:?} at {i}: {lb} > {sad}"
                    );
                }
                if bound.fits_u16(&image) {
                    let mut got16 = vec![0u32; nx * ny];
                    let early16 = early.map(|(f, l)| (f, u16::from_u32(l)));
                    bound.rows::<u16>(&image, nx, backend, 0..ny, early16, |y, row| {
                        for (g, &v) in got16[y * nx..(y + 1) * nx].iter_mut().zip(row) {
                            *g = u32::from(v);
                        }
                    });
                    let want: Vec<u32> = got.iter().map(|&v| v.min(65535)).collect();
                    assert_eq!(got16, want, "case {case} {backend:?}: u16 = saturated u32");
                }
            }
        }
    }
}
