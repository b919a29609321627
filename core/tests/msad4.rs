//! `msad4` (SPEC §4, R113–R118) and the template matching built on it.
//!
//! Oracles are naive byte loops written from the rules, never the crate's own kernels.

use penumbra_core::msad4::{
    Channels, CpuExtension, Image, Masking, Match, MatchError, MatchOptions, Pruning, SadMap,
    decode_png, encode_heatmap_png, find_matches, load_png, load_png_template, msad4,
    msad4_buffer_search, sad_bytes, sad_map, sad_map_into, sad_map_masked, sad_map_masked_using,
    sad_map_using, write_heatmap_png,
};
use penumbra_testkit::Rng;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Oracles

/// R113–R115 straight from the text, with R116's saturation.
fn naive_msad4(reference: u32, source: [u32; 2], accum: [u32; 4]) -> [u32; 4] {
    let src: Vec<u8> = source.iter().flat_map(|w| w.to_le_bytes()).collect();
    let refb = reference.to_le_bytes();
    let mut out = [0u32; 4];
    for k in 0..4 {
        let mut sum = accum[k] as u64;
        for i in 0..4 {
            if refb[i] != 0 {
                sum += (refb[i] as i64 - src[k + i] as i64).unsigned_abs();
            }
        }
        out[k] = sum.min(u32::MAX as u64) as u32;
    }
    out
}

/// The masked SAD at one position: template bytes 0 do not count (R115 in 2D).
fn naive_sad(image: &Image, template: &Image, x: u32, y: u32) -> u32 {
    let bpp = image.channels().bytes_per_pixel();
    let mut sum = 0u32;
    for ty in 0..template.height() {
        for tx in 0..template.width() {
            let t = template.pixel(tx, ty).unwrap();
            let p = image.pixel(x + tx, y + ty).unwrap();
            for c in 0..bpp {
                if t[c] != 0 {
                    sum += t[c].abs_diff(p[c]) as u32;
                }
            }
        }
    }
    sum
}

/// The alpha-masked SAD at one position: pixels with alpha 0 do not count, every byte of the
/// others does (0 included).
fn naive_alpha_sad(image: &Image, template: &Image, x: u32, y: u32) -> u32 {
    let mut sum = 0u32;
    for ty in 0..template.height() {
        for tx in 0..template.width() {
            let t = template.pixel(tx, ty).unwrap();
            let p = image.pixel(x + tx, y + ty).unwrap();
            if t[3] != 0 {
                sum += (0..4).map(|c| t[c].abs_diff(p[c]) as u32).sum::<u32>();
            }
        }
    }
    sum
}

fn naive_alpha_map(image: &Image, template: &Image) -> Vec<u32> {
    let (nx, ny) = (
        image.width() - template.width() + 1,
        image.height() - template.height() + 1,
    );
    (0..ny)
        .flat_map(|y| (0..nx).map(move |x| (x, y)))
        .map(|(x, y)| naive_alpha_sad(image, template, x, y))
        .collect()
}

fn naive_map(image: &Image, template: &Image) -> Vec<u32> {
    let (nx, ny) = (
        image.width() - template.width() + 1,
        image.height() - template.height() + 1,
    );
    let mut out = Vec::new();
    for y in 0..ny {
        for x in 0..nx {
            out.push(naive_sad(image, template, x, y));
        }
    }
    out
}

/// Greedy NMS over every position sorted by (sad, y, x), written independently of the crate.
fn naive_matches(image: &Image, template: &Image, opts: &MatchOptions) -> Vec<Match> {
    let nx = image.width() - template.width() + 1;
    let map = naive_map(image, template);
    let mut all: Vec<(u32, u32, u32)> = map
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, i as u32 / nx, i as u32 % nx))
        .filter(|&(s, _, _)| opts.max_sad.is_none_or(|m| s as u64 <= m))
        .collect();
    all.sort();
    let (rx, ry) = opts
        .nms_radius
        .unwrap_or((template.width() / 2, template.height() / 2));
    let mut out: Vec<Match> = Vec::new();
    for (sad, y, x) in all {
        if out.len() == opts.top_k {
            break;
        }
        if out
            .iter()
            .all(|m| m.x.abs_diff(x) > rx || m.y.abs_diff(y) > ry)
        {
            out.push(Match {
                x,
                y,
                sad: sad as u64,
            });
        }
    }
    out
}

fn random_image(rng: &mut Rng, w: u32, h: u32, channels: Channels) -> Image {
    let n = (w * h) as usize * channels.bytes_per_pixel();
    Image::new(w, h, channels, rng.bytes_at(0, n)).unwrap()
}

/// A template with some bytes (`zero_per_256` of 256) set to 0 = "don't care".
fn random_template(rng: &mut Rng, w: u32, h: u32, channels: Channels, zero_per_256: u64) -> Image {
    let n = (w * h) as usize * channels.bytes_per_pixel();
    let data = (0..n)
        .map(|_| {
            if rng.below_mod(256) < zero_per_256 {
                0
            } else {
                rng.byte_at(0).max(1)
            }
        })
        .collect();
    Image::new(w, h, channels, data).unwrap()
}

/// `find_matches` with `Pruning::Always` and `Pruning::Auto` equals `Pruning::Never` (the
/// exhaustive answer, returned) for these options.
fn pruned_equals_exhaustive(
    image: &Image,
    tpl: &Image,
    base: &MatchOptions,
    label: &str,
) -> Vec<Match> {
    let with = |pruning| {
        let opts = MatchOptions {
            pruning,
            ..base.clone()
        };
        find_matches(image, tpl, &opts).unwrap()
    };
    let exhaustive = with(Pruning::Never);
    for pruning in [Pruning::Always, Pruning::Auto] {
        assert_eq!(
            with(pruning),
            exhaustive,
            "{label} k={} {pruning:?}",
            base.top_k
        );
    }
    exhaustive
}

/// The template with the pixels outside its inscribed ellipse transparent (a sprite).
fn sprite(template: &Image) -> Image {
    let (w, h) = (template.width() as usize, template.height() as usize);
    let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
    let data = template
        .data()
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let (dx, dy) = ((x - cx) / (w as f64 / 2.0), (y - cy) / (h as f64 / 2.0));
            if dx * dx + dy * dy <= 1.0 { b } else { 0 }
        })
        .collect();
    Image::r8(w as u32, h as u32, data).unwrap()
}

/// Copies the template's cared bytes into `image` at `(x, y)`; transparent bytes keep the noise.
fn plant(image: &mut Image, template: &Image, x: u32, y: u32) {
    let bpp = image.channels().bytes_per_pixel();
    let (w, tw) = (image.width() as usize, template.width() as usize);
    let mut data = image.data().to_vec();
    for ty in 0..template.height() as usize {
        for tx in 0..tw {
            for c in 0..bpp {
                let t = template.data()[(ty * tw + tx) * bpp + c];
                if t != 0 {
                    data[((y as usize + ty) * w + x as usize + tx) * bpp + c] = t;
                }
            }
        }
    }
    *image = Image::new(image.width(), image.height(), image.channels(), data).unwrap();
}

// ---------------------------------------------------------------------------------------------
// msad4 itself

#[test]
fn seed_example_gives_153_6_92_113() {
    // SPEC §4.2, from the HLSL msad4 docs.
    let r = msad4(0xA100_B2C3, [0xD7B0_C372, 0x4F57_C2A3], [1, 2, 3, 4]);
    assert_eq!(r, [153, 6, 92, 113]);
}

#[test]
fn zero_reference_returns_accum_unchanged() {
    // SPEC §4.2: every reference byte 0 ⇒ everything masked (R115).
    let accum = [7, 70, 700, 7000];
    assert_eq!(msad4(0, [0xFFFF_FFFF, 0x1234_5678], accum), accum);
}

#[test]
fn ones_against_zero_source_give_four_each() {
    // SPEC §4.2: a 0 *source* byte is compared normally (R115).
    assert_eq!(msad4(0x0101_0101, [0, 0], [0; 4]), [4, 4, 4, 4]);
}

#[test]
fn accumulation_saturates_at_u32_max() {
    // SPEC §4.2 / R116 [CHOICE]: saturate, where wrapping would give 0xEF.
    let r = msad4(0x0000_00FF, [0, 0], [0xFFFF_FFF0, 0, 0, 0]);
    assert_eq!(r, [0xFFFF_FFFF, 255, 255, 255]);
}

#[test]
fn alignments_take_bytes_from_source_y_little_endian() {
    // R114: S_k = (source.x >> 8k) | (source.y << (32 − 8k)); with one reference byte the
    // result reads byte k of the 8-byte window.
    let source = [0x0403_0201, 0x0807_0605];
    let r = msad4(0x0000_00FF, source, [0; 4]);
    assert_eq!(r, [255 - 1, 255 - 2, 255 - 3, 255 - 4]);
    let r = msad4(0xFF00_0000, source, [0; 4]);
    assert_eq!(r, [255 - 4, 255 - 5, 255 - 6, 255 - 7]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn msad4_equals_naive_byte_loop(reference: u32, sx: u32, sy: u32, accum: [u32; 4]) {
        prop_assert_eq!(msad4(reference, [sx, sy], accum), naive_msad4(reference, [sx, sy], accum));
    }

    #[test]
    fn msad4_small_accum_never_exceeds_65535(reference: u32, sx: u32, sy: u32, a in 0u32..1000) {
        // R116: with accumulators this small the result stays in HLSL's defined range.
        let r = msad4(reference, [sx, sy], [a; 4]);
        prop_assert!(r.iter().all(|&v| v <= 65535));
        prop_assert_eq!(r, naive_msad4(reference, [sx, sy], [a; 4]));
    }
}

// ---------------------------------------------------------------------------------------------
// R117 buffer search and its byte form

/// R117 literally: the HLSL docs' loop.
fn literal_buffer_search(pattern: &[u32], source: &[u32]) -> Vec<[u32; 4]> {
    (0..source.len() - pattern.len())
        .map(|x| {
            let mut accum = [0; 4];
            for i in 0..pattern.len() {
                accum = msad4(pattern[i], [source[x + i], source[x + i + 1]], accum);
            }
            accum
        })
        .collect()
}

fn naive_byte_sads(pattern: &[u8], source: &[u8]) -> Vec<u32> {
    (0..=source.len() - pattern.len())
        .map(|o| {
            pattern
                .iter()
                .zip(&source[o..])
                .filter(|(p, _)| **p != 0)
                .map(|(p, s)| p.abs_diff(*s) as u32)
                .sum()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn buffer_search_is_r117_literally(
        pattern in prop::collection::vec(any::<u32>(), 1..20),
        extra in prop::collection::vec(any::<u32>(), 1..60),
    ) {
        let mut source = extra.clone();
        source.extend_from_slice(&pattern);
        let got = msad4_buffer_search(&pattern, &source).unwrap();
        prop_assert_eq!(&got, &literal_buffer_search(&pattern, &source));
        // R117: accum[k] of thread x is the SAD at byte offset 4x + k.
        let pb: Vec<u8> = pattern.iter().flat_map(|w| w.to_le_bytes()).collect();
        let sb: Vec<u8> = source.iter().flat_map(|w| w.to_le_bytes()).collect();
        let direct = naive_byte_sads(&pb, &sb);
        for (x, acc) in got.iter().enumerate() {
            for k in 0..4 {
                prop_assert_eq!(acc[k], direct[4 * x + k]);
            }
        }
    }

    #[test]
    fn sad_bytes_equals_naive_byte_loop(
        pattern in prop::collection::vec(any::<u8>(), 1..40),
        extra in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut source = extra.clone();
        source.extend_from_slice(&pattern);
        prop_assert_eq!(sad_bytes(&pattern, &source).unwrap(), naive_byte_sads(&pattern, &source));
    }
}

#[test]
fn buffer_search_finds_planted_pattern_with_dont_care_bytes() {
    // R117: the best match is the minimum over all (x, k); 0 pattern bytes are "don't care".
    let mut rng = Rng::xorshift64(0x5EED_0001);
    let mut bytes = rng.bytes_at(0, 4 * 200);
    let pattern_bytes: Vec<u8> = (0..4 * 16)
        .map(|i| if i % 5 == 0 { 0 } else { (i * 3 + 1) as u8 })
        .collect();
    let at = 4 * 77 + 3;
    for (i, &b) in pattern_bytes.iter().enumerate() {
        if b != 0 {
            bytes[at + i] = b;
        }
    }
    let pattern: Vec<u32> = pattern_bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let source: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let scores = msad4_buffer_search(&pattern, &source).unwrap();
    let (x, k, best) = scores
        .iter()
        .enumerate()
        .flat_map(|(x, a)| (0..4).map(move |k| (x, k, a[k])))
        .min_by_key(|&(x, k, v)| (v, x, k))
        .unwrap();
    assert_eq!((x, k, best), (77, 3, 0));
    // R118: a 16-word pattern keeps every score within 65535.
    assert!(scores.iter().flatten().all(|&v| v <= 65535));
}

#[test]
fn buffer_search_rejects_empty_pattern_and_short_source() {
    assert!(matches!(
        msad4_buffer_search(&[], &[1, 2]),
        Err(MatchError::ZeroSize { .. })
    ));
    // R117: REF_SIZE + 1 source words are needed for one thread.
    assert_eq!(
        msad4_buffer_search(&[1, 2], &[1, 2]),
        Err(MatchError::SourceTooShort {
            pattern: 2,
            needed: 3,
            actual: 2
        })
    );
    assert!(matches!(
        sad_bytes(&[1, 2, 3], &[1, 2]),
        Err(MatchError::SourceTooShort { .. })
    ));
    assert!(matches!(
        sad_bytes(&[], &[1, 2]),
        Err(MatchError::ZeroSize { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Images and SAD maps

#[test]
fn image_constructors_check_size_and_length() {
    assert!(Image::r8(3, 2, vec![0; 6]).is_ok());
    assert!(Image::rgba8(3, 2, vec![0; 24]).is_ok());
    assert_eq!(
        Image::rgba8(3, 2, vec![0; 6]),
        Err(MatchError::DataLength {
            width: 3,
            height: 2,
            channels: Channels::Rgba8,
            expected: 24,
            actual: 6
        })
    );
    assert!(matches!(
        Image::r8(0, 2, vec![]),
        Err(MatchError::ZeroSize { .. })
    ));
    assert!(matches!(
        Image::r8(u32::MAX, u32::MAX, vec![]),
        Err(MatchError::DataLength { .. })
    ));
}

#[test]
fn sad_map_rejects_bad_pairs_with_named_errors() {
    let image = Image::r8(4, 4, vec![1; 16]).unwrap();
    let big = Image::r8(5, 2, vec![1; 10]).unwrap();
    let rgba = Image::rgba8(2, 2, vec![1; 16]).unwrap();
    let err = sad_map(&image, &big, 1).unwrap_err();
    assert_eq!(
        err,
        MatchError::TemplateLargerThanImage {
            template: (5, 2),
            image: (4, 4)
        }
    );
    assert_eq!(err.to_string(), "template 5×2 is larger than the image 4×4");
    assert_eq!(
        sad_map(&image, &rgba, 1).unwrap_err(),
        MatchError::ChannelMismatch {
            image: Channels::R8,
            template: Channels::Rgba8
        }
    );
    assert!(matches!(
        find_matches(&image, &big, &MatchOptions::default()),
        Err(MatchError::TemplateLargerThanImage { .. })
    ));
}

#[test]
fn unsupported_backend_is_an_error_not_ub() {
    let image = Image::r8(8, 8, vec![1; 64]).unwrap();
    let tpl = Image::r8(2, 2, vec![1; 4]).unwrap();
    for ext in CpuExtension::ALL {
        let r = sad_map_using(&image, &tpl, 1, ext);
        if ext.is_supported() {
            assert_eq!(r.unwrap().data(), &[0u32; 49][..]);
        } else {
            assert_eq!(r.unwrap_err(), MatchError::UnsupportedCpuExtension(ext));
        }
    }
}

#[test]
fn image_zero_bytes_are_compared_template_zero_bytes_are_not() {
    // R115 in 2D: masking depends only on the template (the reference).
    let image = Image::r8(3, 1, vec![0, 0, 9]).unwrap();
    let tpl = Image::r8(2, 1, vec![5, 0]).unwrap();
    assert_eq!(sad_map(&image, &tpl, 1).unwrap().data(), &[5, 5]);
}

#[test]
fn every_backend_equals_scalar_bit_for_bit() {
    // Random sizes, odd widths, templates as wide/tall as the image (border positions only),
    // masked and unmasked, R8 and RGBA8, one and several threads.
    let mut rng = Rng::xorshift64(0xB00C_0DE5);
    let backends = CpuExtension::supported();
    // One reused map per backend, carried across cases of every size (`sad_map_into`).
    let mut reused = vec![SadMap::default(); backends.len()];
    for case in 0..160u64 {
        let channels = if case % 3 == 0 {
            Channels::Rgba8
        } else {
            Channels::R8
        };
        let w = 1 + rng.below_mod(if case % 5 == 0 { 300 } else { 90 }) as u32;
        let h = 1 + rng.below_mod(24) as u32;
        let tw = match case % 4 {
            0 => w,
            1 => 1 + rng.below_mod(w.min(9) as u64) as u32,
            _ => 1 + rng.below_mod(w.min(70) as u64) as u32,
        };
        let th = if case % 7 == 0 {
            h
        } else {
            1 + rng.below_mod(h as u64) as u32
        };
        let zeros = [0, 0, 40, 128, 250][case as usize % 5];
        let image = random_image(&mut rng, w, h, channels);
        let tpl = random_template(&mut rng, tw, th, channels, zeros);
        let reference = sad_map_using(&image, &tpl, 1, CpuExtension::None).unwrap();
        assert_eq!(
            reference.data(),
            &naive_map(&image, &tpl)[..],
            "scalar vs naive, case {case}: {w}x{h} {channels}, template {tw}x{th}"
        );
        for (&ext, reused) in backends.iter().zip(&mut reused) {
            for threads in [1, 3] {
                let got = sad_map_using(&image, &tpl, threads, ext).unwrap();
                assert_eq!(
                    got, reference,
                    "{ext} x{threads}, case {case}: {w}x{h} {channels}, template {tw}x{th}"
                );
            }
            sad_map_into(&image, &tpl, 2, ext, reused).unwrap();
            assert_eq!(*reused, reference, "{ext} reused, case {case}");
            // A refused pair leaves the map as it was.
            let too_big = random_template(&mut rng, w + 1, h, channels, 0);
            assert!(sad_map_into(&image, &too_big, 1, ext, reused).is_err());
            assert_eq!(*reused, reference);
        }
    }
}

#[test]
fn every_backend_equals_scalar_on_a_large_masked_template() {
    // Enough words to need several u16 batches in every kernel (R115 masking in pairs too).
    let mut rng = Rng::xorshift64(0x1A2B_3C4D);
    let image = random_image(&mut rng, 301, 90, Channels::R8);
    let tpl = random_template(&mut rng, 67, 61, Channels::R8, 30);
    let reference = sad_map_using(&image, &tpl, 1, CpuExtension::None).unwrap();
    assert_eq!(reference.get(5, 7), Some(naive_sad(&image, &tpl, 5, 7)));
    assert_eq!(
        reference.get(234, 29),
        Some(naive_sad(&image, &tpl, 234, 29))
    );
    for ext in CpuExtension::supported() {
        assert_eq!(
            sad_map_using(&image, &tpl, 2, ext).unwrap(),
            reference,
            "{ext}"
        );
    }
}

#[test]
fn saturated_bytes_do_not_overflow_the_kernels() {
    // Worst case per byte (255 against 0) over a template of 64×64 = 4096 bytes.
    let image = Image::r8(200, 70, vec![0; 200 * 70]).unwrap();
    let tpl = Image::r8(64, 64, vec![255; 64 * 64]).unwrap();
    for ext in CpuExtension::supported() {
        let map = sad_map_using(&image, &tpl, 1, ext).unwrap();
        assert!(map.data().iter().all(|&v| v == 255 * 4096), "{ext}");
    }
    let rgba = Image::rgba8(80, 40, vec![255; 80 * 40 * 4]).unwrap();
    let mut t = vec![0u8; 33 * 33 * 4];
    t.iter_mut().step_by(2).for_each(|b| *b = 1);
    let t = Image::rgba8(33, 33, t).unwrap();
    for ext in CpuExtension::supported() {
        let map = sad_map_using(&rgba, &t, 1, ext).unwrap();
        assert!(map.data().iter().all(|&v| v == 254 * 33 * 33 * 2), "{ext}");
    }
}

// ---------------------------------------------------------------------------------------------
// Best-k search

#[test]
fn planted_sprite_with_transparent_pixels_is_found_at_its_exact_position() {
    // A 24×20 "sprite": an ellipse of opaque pixels, transparent (0) around it. Planted in
    // noise, only its opaque pixels overwrite the noise, so the transparent ones must not count.
    for channels in [Channels::R8, Channels::Rgba8] {
        let mut rng = Rng::xorshift64(0x5917E);
        let (tw, th) = (24u32, 20u32);
        let bpp = channels.bytes_per_pixel();
        let mut t = vec![0u8; (tw * th) as usize * bpp];
        for y in 0..th {
            for x in 0..tw {
                let (dx, dy) = (x as f64 - 11.5, y as f64 - 9.5);
                if (dx / 12.0).powi(2) + (dy / 10.0).powi(2) <= 1.0 {
                    for c in 0..bpp {
                        t[((y * tw + x) as usize) * bpp + c] = rng.byte_at(0).max(1);
                    }
                }
            }
        }
        let tpl = Image::new(tw, th, channels, t).unwrap();
        let mut image = random_image(&mut rng, 301, 203, channels);
        plant(&mut image, &tpl, 187, 131);
        for ext in CpuExtension::supported() {
            let opts = MatchOptions {
                backend: Some(ext),
                masking: Masking::Msad4,
                ..MatchOptions::default()
            };
            let found = find_matches(&image, &tpl, &opts).unwrap();
            assert_eq!(
                found,
                vec![Match {
                    x: 187,
                    y: 131,
                    sad: 0
                }],
                "{channels} {ext}"
            );
        }
    }
}

#[test]
fn find_matches_equals_naive_greedy_nms() {
    let mut rng = Rng::xorshift64(0xC0FFEE);
    for case in 0..60u64 {
        let channels = if case % 4 == 0 {
            Channels::Rgba8
        } else {
            Channels::R8
        };
        let (w, h) = (8 + rng.below_mod(70) as u32, 4 + rng.below_mod(40) as u32);
        let (tw, th) = (
            1 + rng.below_mod(w.min(12) as u64) as u32,
            1 + rng.below_mod(h.min(12) as u64) as u32,
        );
        // Few grey levels so that many SADs tie and the (y, x) order matters.
        let levels = if case % 2 == 0 { 4 } else { 256 };
        let n = (w * h) as usize * channels.bytes_per_pixel();
        let data = (0..n).map(|_| (rng.below_mod(levels) * 255 / (levels - 1).max(1)) as u8);
        let image = Image::new(w, h, channels, data.collect()).unwrap();
        let tpl = random_template(&mut rng, tw, th, channels, [0, 60][case as usize % 2]);
        let opts = MatchOptions {
            top_k: 1 + rng.below_mod(6) as usize,
            max_sad: (case % 3 == 0).then(|| rng.below_mod(255 * (tw * th) as u64)),
            nms_radius: match case % 5 {
                0 => Some((0, 0)),
                1 => Some((rng.below_mod(5) as u32, rng.below_mod(5) as u32)),
                _ => None,
            },
            threads: 1 + (case % 3) as usize,
            masking: Masking::Msad4,
            ..MatchOptions::default()
        };
        let want = naive_matches(&image, &tpl, &opts);
        for pruning in [Pruning::Never, Pruning::Always, Pruning::Auto] {
            let got = find_matches(
                &image,
                &tpl,
                &MatchOptions {
                    pruning,
                    ..opts.clone()
                },
            );
            assert_eq!(got.unwrap(), want, "case {case} {pruning:?} {opts:?}");
        }
    }
}

#[test]
fn pruned_search_equals_exhaustive_on_large_templates() {
    // Large enough for Auto to prune; planted copies (some with transparent pixels), plus noise.
    let mut rng = Rng::xorshift64(0x00AB_5E17);
    for case in 0..8u64 {
        let channels = if case % 4 == 3 {
            Channels::Rgba8
        } else {
            Channels::R8
        };
        let (tw, th) = (32 + rng.below_mod(20) as u32, 32 + rng.below_mod(20) as u32);
        let mut image = random_image(&mut rng, 420, 300, channels);
        let tpl = random_template(
            &mut rng,
            tw,
            th,
            channels,
            [0, 20, 90, 0][case as usize % 4],
        );
        plant(
            &mut image,
            &tpl,
            17 + rng.below_mod(200) as u32,
            rng.below_mod(200) as u32,
        );
        if case % 2 == 1 {
            plant(&mut image, &tpl, 300, 240);
        }
        for top_k in [1, 3] {
            let base = MatchOptions {
                top_k,
                threads: 2,
                max_sad: (case == 5).then_some(50_000),
                masking: Masking::Msad4,
                ..MatchOptions::default()
            };
            let exhaustive = pruned_equals_exhaustive(&image, &tpl, &base, &format!("case {case}"));
            assert_eq!(exhaustive[0].sad, 0);
        }
    }
}

/// Near copies (every cared byte moved by up to ±`noise`), as a sprite looks under lighting or
/// compression: the best SAD is far from 0, the bounds of many windows reach below it, and
/// the pruned search (its second, upper-bound round, or the fall back to scoring everything)
/// must still give exactly the exhaustive answer.
#[test]
fn pruned_search_equals_exhaustive_on_near_copies() {
    let mut rng = Rng::xorshift64(0x0E4C_0B1E);
    for case in 0..8u64 {
        let size = [48, 64, 40, 33][case as usize % 4];
        let mut image = random_image(&mut rng, 640, 560, Channels::R8);
        let mut tpl = random_template(&mut rng, size, size, Channels::R8, 0);
        if case % 2 == 1 {
            tpl = sprite(&tpl);
        }
        let noise = [8u8, 3, 40, 16, 16, 14, 18, 20][case as usize];
        let near: Vec<u8> = tpl
            .data()
            .iter()
            .map(|&t| {
                if t == 0 {
                    0
                } else {
                    let d = rng.below_mod(2 * u64::from(noise) + 1) as i32 - i32::from(noise);
                    (i32::from(t) + d).clamp(1, 255) as u8
                }
            })
            .collect();
        let near = Image::r8(size, size, near).unwrap();
        plant(
            &mut image,
            &near,
            30 + rng.below_mod(500) as u32,
            rng.below_mod(400) as u32,
        );
        plant(&mut image, &near, 5, 550 - size);
        for top_k in [1, 2, 4] {
            let base = MatchOptions {
                top_k,
                masking: Masking::Msad4,
                ..MatchOptions::default()
            };
            let label = format!("case {case} noise {noise}");
            let exhaustive = pruned_equals_exhaustive(&image, &tpl, &base, &label);
            assert!(exhaustive[0].sad > 0);
        }
    }
}

#[test]
fn flat_images_tie_everywhere_and_resolve_by_row_then_column() {
    let image = Image::r8(40, 30, vec![7; 1200]).unwrap();
    let tpl = Image::r8(33, 3, vec![9; 99]).unwrap();
    let opts = MatchOptions {
        top_k: 3,
        nms_radius: Some((0, 0)),
        pruning: Pruning::Always,
        masking: Masking::Msad4,
        ..MatchOptions::default()
    };
    let found = find_matches(&image, &tpl, &opts).unwrap();
    let xy: Vec<(u32, u32)> = found.iter().map(|m| (m.x, m.y)).collect();
    assert_eq!(xy, vec![(0, 0), (1, 0), (2, 0)]);
    assert!(found.iter().all(|m| m.sad == 2 * 99));
}

#[test]
fn top_zero_and_tight_max_sad_return_nothing() {
    let mut rng = Rng::xorshift64(77);
    let image = random_image(&mut rng, 50, 50, Channels::R8);
    let tpl = random_template(&mut rng, 5, 5, Channels::R8, 0);
    let none = MatchOptions {
        top_k: 0,
        masking: Masking::Msad4,
        ..MatchOptions::default()
    };
    assert!(find_matches(&image, &tpl, &none).unwrap().is_empty());
    let strict = MatchOptions {
        max_sad: Some(0),
        masking: Masking::Msad4,
        ..MatchOptions::default()
    };
    assert!(find_matches(&image, &tpl, &strict).unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// PNG in and out

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("penumbra-msad4-{}-{name}", std::process::id()))
}

#[test]
fn png_round_trip_keeps_r8_and_rgba8_bytes() {
    let mut rng = Rng::xorshift64(0x9E9);
    let gray = random_image(&mut rng, 37, 21, Channels::R8);
    let rgba = random_image(&mut rng, 13, 9, Channels::Rgba8);
    let gpath = temp_path("gray.png");
    let cpath = temp_path("rgba.png");
    image::save_buffer(&gpath, gray.data(), 37, 21, image::ExtendedColorType::L8).unwrap();
    image::save_buffer(&cpath, rgba.data(), 13, 9, image::ExtendedColorType::Rgba8).unwrap();
    assert_eq!(load_png(&gpath, Channels::R8).unwrap(), gray);
    assert_eq!(load_png(&cpath, Channels::Rgba8).unwrap(), rgba);
    // Grey to RGBA: the grey value in R, G and B, opaque alpha.
    let as_rgba = load_png(&gpath, Channels::Rgba8).unwrap();
    assert_eq!(
        as_rgba.pixel(3, 4).unwrap()[..3],
        [gray.pixel(3, 4).unwrap()[0]; 3]
    );
    assert_eq!(as_rgba.pixel(3, 4).unwrap()[3], 255);
    let bytes = std::fs::read(&cpath).unwrap();
    assert_eq!(decode_png(&bytes, Channels::Rgba8).unwrap(), rgba);
    std::fs::remove_file(gpath).ok();
    std::fs::remove_file(cpath).ok();
}

#[test]
fn template_loader_clears_fully_transparent_pixels() {
    let px = [10u8, 20, 30, 0, 40, 50, 60, 255, 70, 80, 90, 1];
    let path = temp_path("sprite.png");
    image::save_buffer(&path, &px, 3, 1, image::ExtendedColorType::Rgba8).unwrap();
    let t = load_png_template(&path, Channels::Rgba8).unwrap();
    assert_eq!(t.data(), &[0, 0, 0, 0, 40, 50, 60, 255, 70, 80, 90, 1]);
    let g = load_png_template(&path, Channels::R8).unwrap();
    assert_eq!(g.data()[0], 0);
    assert!(g.data()[1] != 0 && g.data()[2] != 0);
    std::fs::remove_file(path).ok();
}

#[test]
fn heatmap_png_marks_the_best_match_white() {
    let mut rng = Rng::xorshift64(0x4EA7);
    let mut image = random_image(&mut rng, 64, 48, Channels::R8);
    let tpl = random_template(&mut rng, 8, 8, Channels::R8, 0);
    plant(&mut image, &tpl, 20, 30);
    let map = sad_map(&image, &tpl, 1).unwrap();
    let png = encode_heatmap_png(&map).unwrap();
    let decoded = image::load_from_memory(&png).unwrap().to_rgb8();
    assert_eq!(decoded.dimensions(), (map.width(), map.height()));
    assert_eq!(decoded.get_pixel(20, 30).0, [255, 255, 255]);
    let path = temp_path("heat.png");
    write_heatmap_png(&map, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), png);
    std::fs::remove_file(path).ok();
}

#[test]
fn broken_png_and_missing_file_give_typed_errors() {
    let path = temp_path("broken.png");
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend_from_slice(b"definitely not chunks");
    std::fs::write(&path, &bytes).unwrap();
    let err = load_png(&path, Channels::R8).unwrap_err();
    assert!(
        matches!(&err, MatchError::Decode { path: p, .. } if *p == path),
        "{err:?}"
    );
    assert!(err.to_string().contains("not a PNG image"));
    std::fs::remove_file(&path).ok();
    let missing = temp_path("missing.png");
    let err = load_png(&missing, Channels::R8).unwrap_err();
    assert!(
        matches!(&err, MatchError::Io { path: p, .. } if *p == missing),
        "{err:?}"
    );
    assert!(matches!(
        decode_png(b"GIF89a", Channels::Rgba8),
        Err(MatchError::Decode { .. })
    ));
    assert!(matches!(
        write_heatmap_png(
            &sad_map(
                &Image::r8(2, 2, vec![1; 4]).unwrap(),
                &Image::r8(1, 1, vec![1]).unwrap(),
                1
            )
            .unwrap(),
            temp_path("no/such/dir/heat.png")
        ),
        Err(MatchError::Io { .. })
    ));
}

#[test]
fn pruned_search_is_exact_with_wide_block_sums_and_sparse_masks() {
    // RGBA8 72×68: block sums exceed u16, so the bound runs in u32 lanes; a mask with holes
    // everywhere leaves no whole block, so the bound is 0 and only the exact scores decide.
    let mut rng = Rng::xorshift64(0x0DDB_10C5);
    let mut image = random_image(&mut rng, 260, 150, Channels::Rgba8);
    let tpl = random_template(&mut rng, 72, 68, Channels::Rgba8, 0);
    plant(&mut image, &tpl, 101, 63);
    let holes = random_template(&mut rng, 40, 40, Channels::R8, 128);
    let mut gray = random_image(&mut rng, 200, 120, Channels::R8);
    plant(&mut gray, &holes, 7, 79);
    for (img, t) in [(&image, &tpl), (&gray, &holes)] {
        for top_k in [1, 4] {
            let base = MatchOptions {
                top_k,
                masking: Masking::Msad4,
                ..MatchOptions::default()
            };
            let never = find_matches(
                img,
                t,
                &MatchOptions {
                    pruning: Pruning::Never,
                    ..base.clone()
                },
            )
            .unwrap();
            let always = find_matches(
                img,
                t,
                &MatchOptions {
                    pruning: Pruning::Always,
                    ..base.clone()
                },
            )
            .unwrap();
            assert_eq!(always, never, "{} k={top_k}", img.channels());
            assert_eq!(never[0].sad, 0);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Alpha masking (issue 17): transparent pixels are "don't care", opaque 0 bytes count.

#[test]
fn alpha_masking_equals_the_naive_loop_on_every_backend() {
    let mut rng = Rng::xorshift64(0xA1FA_0017);
    for case in 0..60u64 {
        let w = 1 + rng.below_mod(120) as u32;
        let h = 1 + rng.below_mod(20) as u32;
        let tw = 1 + rng.below_mod(w.min(40) as u64) as u32;
        let th = 1 + rng.below_mod(h as u64) as u32;
        let image = random_image(&mut rng, w, h, Channels::Rgba8);
        // Bytes 0 often (black, transparent), alpha 0 on some pixels with colour left in them.
        let mut tpl = random_template(
            &mut rng,
            tw,
            th,
            Channels::Rgba8,
            [0, 60, 128][case as usize % 3],
        );
        let mut data = tpl.data().to_vec();
        for p in data.chunks_exact_mut(4) {
            match rng.below_mod(4) {
                0 => p[3] = 0,
                1 => p[..3].fill(0),
                _ => {}
            }
        }
        tpl = Image::rgba8(tw, th, data).unwrap();
        let want = naive_alpha_map(&image, &tpl);
        for &ext in &CpuExtension::supported() {
            for threads in [1, 2] {
                for masking in [Masking::Alpha, Masking::Auto] {
                    let got = sad_map_masked_using(&image, &tpl, masking, threads, ext).unwrap();
                    assert_eq!(
                        got.data(),
                        &want[..],
                        "{ext} x{threads} {masking:?}, case {case}"
                    );
                }
            }
        }
        // msad4's own rule stays available by name and is sad_map's.
        let raw = sad_map_masked(&image, &tpl, Masking::Msad4, 1).unwrap();
        assert_eq!(raw, sad_map(&image, &tpl, 1).unwrap());
        assert_eq!(raw.data(), &naive_map(&image, &tpl)[..]);
        // find_matches under alpha masking is the naive walk over the alpha map.
        let opts = MatchOptions {
            top_k: 3,
            nms_radius: Some((1, 1)),
            ..MatchOptions::default()
        };
        let found = find_matches(&image, &tpl, &opts).unwrap();
        // The pruned search (msad4's bounds, alpha-masked exact scores) gives the same.
        for pruning in [Pruning::Always, Pruning::Never] {
            let o = MatchOptions {
                pruning,
                ..opts.clone()
            };
            assert_eq!(
                find_matches(&image, &tpl, &o).unwrap(),
                found,
                "{pruning:?}, case {case}"
            );
        }
        let nx = image.width() - tw + 1;
        let mut all: Vec<(u32, u32, u32)> = want
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, i as u32 / nx, i as u32 % nx))
            .collect();
        all.sort();
        assert_eq!(found[0].sad, u64::from(all[0].0), "case {case}");
        assert_eq!(
            (found[0].x, found[0].y),
            (all[0].2, all[0].1),
            "case {case}"
        );
    }
}

/// A sprite with an opaque black outline and a look-alike with a white one: under msad4's rule
/// the outline does not count and the look-alike scores 0 and can rank first; alpha masking
/// ranks the true sprite first.
#[test]
fn alpha_masking_ranks_the_black_outlined_sprite_over_a_white_outlined_look_alike() {
    let (sw, sh) = (6u32, 6u32);
    // The sprite: a transparent corner, a black outline, a red inside.
    let sprite_px = |x: u32, y: u32, outline: [u8; 3]| -> [u8; 4] {
        if x == 0 && y == 0 {
            [0, 0, 0, 0]
        } else if x == 0 || y == 0 || x == sw - 1 || y == sh - 1 {
            [outline[0], outline[1], outline[2], 255]
        } else {
            [200, 30, 40, 255]
        }
    };
    let mut tpl = Vec::new();
    for y in 0..sh {
        for x in 0..sw {
            tpl.extend(sprite_px(x, y, [0, 0, 0]));
        }
    }
    let tpl = Image::rgba8(sw, sh, tpl).unwrap();
    // A grey screen with the look-alike (white outline) at (2, 3) and the true sprite at
    // (20, 10).
    let (w, h) = (32u32, 20u32);
    let mut img = vec![90u8; (w * h * 4) as usize];
    let mut put = |ox: u32, oy: u32, outline: [u8; 3]| {
        for y in 0..sh {
            for x in 0..sw {
                let p = sprite_px(x, y, outline);
                let at = (((oy + y) * w + ox + x) * 4) as usize;
                if p[3] != 0 {
                    img[at..at + 4].copy_from_slice(&p);
                }
            }
        }
    };
    put(2, 3, [255, 255, 255]);
    put(20, 10, [0, 0, 0]);
    let image = Image::rgba8(w, h, img).unwrap();
    let top = |masking| {
        let opts = MatchOptions {
            top_k: 2,
            masking,
            ..MatchOptions::default()
        };
        find_matches(&image, &tpl, &opts).unwrap()
    };
    // msad4's rule: both score 0 and the tie goes to the smaller (y, x): the look-alike.
    let raw = top(Masking::Msad4);
    assert_eq!((raw[0].x, raw[0].y, raw[0].sad), (2, 3, 0));
    assert_eq!((raw[1].x, raw[1].y, raw[1].sad), (20, 10, 0));
    // Alpha masking (the default for RGBA8): the true sprite first with SAD 0, the look-alike
    // far behind (its 19 outline pixels × 3 channels × 255), behind even plain background.
    let alpha = top(Masking::Auto);
    assert_eq!((alpha[0].x, alpha[0].y, alpha[0].sad), (20, 10, 0));
    assert!(alpha[1].sad > 0 && (alpha[1].x, alpha[1].y) != (2, 3));
    let map = sad_map_masked(&image, &tpl, Masking::Alpha, 1).unwrap();
    assert_eq!(map.get(2, 3), Some(19 * 3 * 255));
}

#[test]
fn alpha_masking_needs_an_rgba_template() {
    let image = Image::r8(4, 4, vec![7; 16]).unwrap();
    let tpl = Image::r8(2, 2, vec![0, 1, 2, 3]).unwrap();
    let err = sad_map_masked(&image, &tpl, Masking::Alpha, 1).unwrap_err();
    assert_eq!(err, MatchError::AlphaNeedsRgba(Channels::R8));
    assert!(err.to_string().contains("RGBA8"), "{err}");
    // Auto on R8 is msad4's rule.
    assert_eq!(
        sad_map_masked(&image, &tpl, Masking::Auto, 1).unwrap(),
        sad_map(&image, &tpl, 1).unwrap()
    );
    for m in [Masking::Auto, Masking::Alpha, Masking::Msad4] {
        assert_eq!(Masking::from_name(m.name()), Some(m));
    }
    assert_eq!(Masking::from_name("Alpha"), None);
}

/// Alpha masking through the pruned search: a sprite with a black outline in a large RGBA
/// image, pruned and exhaustive top-k equal, every backend.
#[test]
fn alpha_masked_pruned_search_equals_exhaustive() {
    let mut rng = Rng::xorshift64(0x5A17_0017);
    let (w, h, t) = (300u32, 260u32, 24u32);
    let mut image = random_image(&mut rng, w, h, Channels::Rgba8);
    let mut tpl = Vec::new();
    for i in 0..t * t {
        let (x, y) = (i % t, i / t);
        let d = (x as i32 - 12).pow(2) + (y as i32 - 12).pow(2);
        let px = if d > 144 {
            [0, 0, 0, 0]
        } else if d > 100 {
            [0, 0, 0, 255]
        } else {
            let b = rng.bytes_at(0, 3);
            [b[0], b[1], b[2], 255]
        };
        tpl.extend(px);
    }
    // Planted with its black outline (every opaque pixel copied whole).
    let mut data = image.data().to_vec();
    for i in 0..(t * t) as usize {
        let p = &tpl[i * 4..i * 4 + 4];
        if p[3] != 0 {
            let at = ((90 + i / t as usize) * w as usize + 140 + i % t as usize) * 4;
            data[at..at + 4].copy_from_slice(p);
        }
    }
    image = Image::rgba8(w, h, data).unwrap();
    let tpl = Image::rgba8(t, t, tpl).unwrap();
    for &ext in &CpuExtension::supported() {
        let base = MatchOptions {
            top_k: 5,
            backend: Some(ext),
            masking: Masking::Alpha,
            ..MatchOptions::default()
        };
        let never = find_matches(
            &image,
            &tpl,
            &MatchOptions {
                pruning: Pruning::Never,
                ..base.clone()
            },
        )
        .unwrap();
        let always = find_matches(
            &image,
            &tpl,
            &MatchOptions {
                pruning: Pruning::Always,
                ..base.clone()
            },
        )
        .unwrap();
        assert_eq!(always, never, "{ext}");
        assert_eq!(
            (never[0].x, never[0].y, never[0].sad),
            (140, 90, 0),
            "{ext}"
        );
    }
}
