//! `msad4` and the template search of `core/src/msad4`.
//!
//! Checks, for arbitrary words, images and templates:
//! * `msad4` equals a naive byte-by-byte model of R113–R116;
//! * `msad4_buffer_search` equals the literal R117 loop of `msad4` calls, and `sad_bytes` a
//!   naive 1D masked SAD;
//! * `sad_map_using` gives the naive masked SAD map on every backend this CPU has, with 1–3
//!   threads;
//! * `find_matches` gives the same list with `Pruning::Never`, `Always` and `Auto`, on every
//!   backend, and that list is the one the documented definition gives (sort by (sad, y, x),
//!   drop those above `max_sad`, greedy suppression).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use penumbra_core::msad4::{
    Channels, CpuExtension, Image, Masking, Match, MatchOptions, Pruning, find_matches, msad4,
    msad4_buffer_search, sad_bytes, sad_map_using,
};

#[derive(Arbitrary, Debug)]
struct Input {
    words: Vec<(u32, [u32; 2], [u32; 4])>,
    buffer: Option<(Vec<u32>, Vec<u32>)>,
    bytes: Option<(Vec<u8>, Vec<u8>)>,
    rgba: bool,
    image: ImageIn,
    template: ImageIn,
    threads: u8,
    matches: Option<MatchIn>,
}

#[derive(Arbitrary, Debug)]
struct ImageIn {
    width: u8,
    height: u8,
    data: Vec<u8>,
    /// Every byte below this threshold becomes 0 ("don't care" in a template).
    zero_below: u8,
    /// Give a wrong data length (must be refused).
    wrong_length: bool,
}

impl ImageIn {
    fn build(&self, channels: Channels, max: u8) -> Option<Image> {
        let (w, h) = (u32::from(self.width % max), u32::from(self.height % max));
        let len = w as usize * h as usize * channels.bytes_per_pixel();
        let mut data: Vec<u8> = if self.data.is_empty() {
            vec![0; len]
        } else {
            self.data.iter().cycle().take(len).copied().collect()
        };
        for b in &mut data {
            if *b < self.zero_below {
                *b = 0;
            }
        }
        if self.wrong_length {
            data.push(1);
        }
        match Image::new(w, h, channels, data) {
            Ok(img) => {
                assert!(w > 0 && h > 0 && !self.wrong_length);
                Some(img)
            }
            Err(e) => {
                assert!(w == 0 || h == 0 || self.wrong_length, "refused: {e}");
                None
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
struct MatchIn {
    top_k: u8,
    max_sad: Option<u32>,
    radius: Option<(u8, u8)>,
    threads: u8,
}

fn naive_msad4(reference: u32, source: [u32; 2], accum: [u32; 4]) -> [u32; 4] {
    let r = reference.to_le_bytes();
    let mut s = [0u8; 8];
    s[..4].copy_from_slice(&source[0].to_le_bytes());
    s[4..].copy_from_slice(&source[1].to_le_bytes());
    std::array::from_fn(|k| {
        let mut sum = u64::from(accum[k]);
        for i in 0..4 {
            if r[i] != 0 {
                sum += u64::from(r[i].abs_diff(s[k + i]));
            }
        }
        sum.min(u64::from(u32::MAX)) as u32
    })
}

fn naive_map(image: &Image, template: &Image) -> (u32, u32, Vec<u64>) {
    let bpp = image.channels().bytes_per_pixel();
    let (iw, ih) = (image.width(), image.height());
    let (tw, th) = (template.width(), template.height());
    let (nx, ny) = (iw - tw + 1, ih - th + 1);
    let mut out = Vec::with_capacity((nx * ny) as usize);
    for y in 0..ny {
        for x in 0..nx {
            let mut sum = 0u64;
            for ty in 0..th {
                for tx in 0..tw {
                    let t = template.pixel(tx, ty).expect("inside");
                    let p = image.pixel(x + tx, y + ty).expect("inside");
                    for c in 0..bpp {
                        if t[c] != 0 {
                            sum += u64::from(t[c].abs_diff(p[c]));
                        }
                    }
                }
            }
            out.push(sum);
        }
    }
    (nx, ny, out)
}

fn naive_matches(
    map: &(u32, u32, Vec<u64>),
    top_k: usize,
    max_sad: Option<u64>,
    radius: (u32, u32),
) -> Vec<Match> {
    let (nx, _, sads) = map;
    let limit = max_sad.map_or(u64::from(u32::MAX), |m| m.min(u64::from(u32::MAX)));
    let mut all: Vec<(u64, u32, u32)> = sads
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, i as u32 / nx, i as u32 % nx))
        .filter(|&(s, _, _)| s <= limit)
        .collect();
    all.sort_unstable();
    let mut found: Vec<Match> = Vec::new();
    for (sad, y, x) in all {
        if found.len() == top_k {
            break;
        }
        if found
            .iter()
            .any(|m| m.x.abs_diff(x) <= radius.0 && m.y.abs_diff(y) <= radius.1)
        {
            continue;
        }
        found.push(Match { x, y, sad });
    }
    found
}

fuzz_target!(|input: Input| {
    for &(r, s, a) in input.words.iter().take(64) {
        assert_eq!(
            msad4(r, s, a),
            naive_msad4(r, s, a),
            "msad4({r:#x}, {s:x?}, {a:?})"
        );
    }

    if let Some((pattern, source)) = &input.buffer {
        let (pattern, source) = (
            &pattern[..pattern.len().min(16)],
            &source[..source.len().min(64)],
        );
        match msad4_buffer_search(pattern, source) {
            Ok(found) => {
                let threads = source.len() - pattern.len();
                let literal: Vec<[u32; 4]> = (0..threads)
                    .map(|x| {
                        pattern.iter().enumerate().fold([0; 4], |acc, (i, &r)| {
                            naive_msad4(r, [source[x + i], source[x + i + 1]], acc)
                        })
                    })
                    .collect();
                assert_eq!(found, literal, "buffer search");
            }
            Err(e) => assert!(pattern.is_empty() || source.len() <= pattern.len(), "{e}"),
        }
    }

    if let Some((pattern, source)) = &input.bytes {
        let (pattern, source) = (
            &pattern[..pattern.len().min(64)],
            &source[..source.len().min(256)],
        );
        match sad_bytes(pattern, source) {
            Ok(found) => {
                let want: Vec<u32> = (0..=source.len() - pattern.len())
                    .map(|x| {
                        pattern
                            .iter()
                            .zip(&source[x..])
                            .filter(|(p, _)| **p != 0)
                            .map(|(p, s)| u32::from(p.abs_diff(*s)))
                            .sum()
                    })
                    .collect();
                assert_eq!(found, want, "sad_bytes");
            }
            Err(e) => assert!(pattern.is_empty() || source.len() < pattern.len(), "{e}"),
        }
    }

    let channels = if input.rgba {
        Channels::Rgba8
    } else {
        Channels::R8
    };
    let (Some(image), Some(template)) = (
        input.image.build(channels, 40),
        input.template.build(channels, 14),
    ) else {
        return;
    };
    let fits = template.width() <= image.width() && template.height() <= image.height();
    let naive = fits.then(|| naive_map(&image, &template));
    let threads = usize::from(input.threads % 3) + 1;
    for backend in CpuExtension::supported() {
        match sad_map_using(&image, &template, threads, backend) {
            Ok(map) => {
                let (nx, ny, want) = naive.as_ref().expect("a map only where the template fits");
                assert_eq!((map.width(), map.height()), (*nx, *ny));
                let got: Vec<u64> = map.data().iter().map(|&v| u64::from(v)).collect();
                assert_eq!(&got, want, "{backend} SAD map");
            }
            Err(e) => assert!(!fits, "{backend}: {e}"),
        }
    }

    let Some(m) = &input.matches else { return };
    let Some(naive) = &naive else { return };
    let top_k = usize::from(m.top_k % 12);
    let radius = m.radius.map(|(x, y)| (u32::from(x % 8), u32::from(y % 8)));
    let want = naive_matches(
        naive,
        top_k,
        m.max_sad.map(u64::from),
        radius.unwrap_or((template.width() / 2, template.height() / 2)),
    );
    for backend in CpuExtension::supported() {
        for pruning in [Pruning::Never, Pruning::Always, Pruning::Auto] {
            let opts = MatchOptions {
                top_k,
                max_sad: m.max_sad.map(u64::from),
                nms_radius: radius,
                threads: usize::from(m.threads % 3),
                backend: Some(backend),
                pruning,
                // The oracle below is msad4's own masking (alpha masking has its own tests).
                masking: Masking::Msad4,
            };
            let found = find_matches(&image, &template, &opts).expect("valid pair");
            assert_eq!(found, want, "{backend} {pruning:?}");
        }
    }
});
