//! What the SAD kernels share: the image copied into padded planes, and the template turned into a
//! list of 4-byte operations (one per `msad4` reference word, R115).

use super::{Image, MatchError};

/// Positions per kernel strip; every row of output is padded to a multiple of it.
pub(crate) const STRIP: usize = 128;

/// Bytes of slack after each plane row, so kernels may read past the last position of a strip.
const ROW_SLACK: usize = 192;

/// Largest template (bytes over all channels, rounded up to whole words) the kernels accept:
/// the SIMD paths sum `2·SAD + 255·masked` in u32.
pub(crate) const MAX_TEMPLATE_BYTES: usize = 5_000_000;

/// Most plain ops (≤ 4·255 each) one u16 lane can hold before it is widened to u32.
const PLAIN_PER_BATCH: usize = 64;
/// Most paired ops (two SADs, ≤ 2·4·255 each) one u16 lane can hold.
const PAIR_PER_BATCH: usize = 32;
/// Most single cared bytes (≤ 255 each) one u16 lane can hold (scalar path).
const BYTES_PER_BATCH: usize = 256;

/// Output rows computed per band: the kernels read a band of image rows copied into padded
/// planes, so each thread only ever touches a small, reused buffer.
pub(crate) const BAND_ROWS: usize = 32;

/// How a band of the image is laid out for the kernels: one 8-bit plane per channel, each row
/// padded to `stride` bytes, `rows` rows per plane.
pub(crate) struct Layout {
    pub stride: usize,
    pub rows: usize,
    pub count: usize,
    template_rows: usize,
}

impl Layout {
    pub fn new(image: &Image, template: &Image) -> Layout {
        let th = template.height() as usize;
        Layout {
            stride: (image.width() as usize + ROW_SLACK).next_multiple_of(64),
            rows: (BAND_ROWS + th - 1).min(image.height() as usize),
            count: image.channels().bytes_per_pixel(),
            template_rows: th,
        }
    }

    /// Bytes from the start of one plane to the next.
    pub fn plane_len(&self) -> usize {
        self.stride * self.rows
    }

    /// Copies the image rows that output rows `y0..y0 + out_rows` need into `buf`, one plane per
    /// channel (RGBA8 sums over channels, so each channel is matched alone).
    pub fn fill(&self, image: &Image, y0: usize, out_rows: usize, buf: &mut Vec<u8>) {
        let width = image.width() as usize;
        let count = self.count;
        let rows = out_rows + self.template_rows - 1;
        debug_assert!(rows <= self.rows);
        buf.resize(self.plane_len() * count, 0);
        let src = &image.data()[y0 * width * count..(y0 + rows) * width * count];
        for (c, plane) in buf.chunks_exact_mut(self.plane_len()).enumerate() {
            for (row, dst) in src
                .chunks_exact(width * count)
                .zip(plane.chunks_exact_mut(self.stride))
            {
                if count == 1 {
                    dst[..width].copy_from_slice(row);
                } else {
                    for (d, px) in dst[..width].iter_mut().zip(row.chunks_exact(count)) {
                        *d = px[c];
                    }
                }
            }
        }
    }
}

/// A template word whose bytes are all cared for: one plain SAD.
#[cfg_attr(
    any(feature = "force-scalar", not(target_arch = "x86_64")),
    allow(dead_code, reason = "read only by the SIMD kernels")
)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlainOp {
    /// Byte offset of the word's first image byte from the position's first byte.
    pub off: usize,
    /// The template word, bytes little-endian (R113).
    pub word: u32,
}

/// A template word with some bytes 0 ("don't care", R115): scored as
/// `SAD(lo) + SAD(hi)` where masked bytes are 0 in `lo` and 255 in `hi`, so that each masked
/// byte adds `x + (255 − x) = 255` whatever the image holds, and each cared byte counts twice.
#[cfg_attr(
    any(feature = "force-scalar", not(target_arch = "x86_64")),
    allow(dead_code, reason = "read only by the SIMD kernels")
)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairOp {
    pub off: usize,
    pub lo: u32,
    pub hi: u32,
}

/// Ops whose u16 partial sums cannot overflow (see the `*_PER_BATCH` limits).
#[cfg_attr(
    any(feature = "force-scalar", not(target_arch = "x86_64")),
    allow(dead_code, reason = "read only by the SIMD kernels")
)]
#[derive(Clone, Debug)]
pub(crate) struct Batch {
    pub plain: std::ops::Range<usize>,
    pub pair: std::ops::Range<usize>,
}

/// One cared template byte for the scalar path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByteOp {
    pub off: usize,
    pub value: u8,
}

/// The template prepared against one image layout.
#[cfg_attr(
    any(feature = "force-scalar", not(target_arch = "x86_64")),
    allow(dead_code, reason = "read only by the SIMD kernels")
)]
pub(crate) struct Plan {
    /// Positions per row (`W − w + 1`) and rows (`H − h + 1`) of the SAD map.
    pub nx: usize,
    pub ny: usize,
    pub plain: Vec<PlainOp>,
    pub pair: Vec<PairOp>,
    pub batches: Vec<Batch>,
    /// Masked bytes inside paired words: the SIMD total is `2·SAD + 255·masked_in_pairs`.
    pub masked_in_pairs: u32,
    /// Cared bytes in groups of at most [`BYTES_PER_BATCH`] (scalar path).
    pub bytes: Vec<ByteOp>,
    /// The largest `off` of any op: kernels read up to `max_off + padded_nx() + 8` bytes.
    pub max_off: usize,
}

impl Plan {
    /// Checks the pair and turns the template into ops against `layout`.
    pub fn new(layout: &Layout, image: &Image, template: &Image) -> Result<Plan, MatchError> {
        check_pair(image, template)?;
        let (tw, th) = (template.width() as usize, template.height() as usize);
        let count = layout.count;
        let words_per_row = tw.div_ceil(4);
        let mut plain = Vec::new();
        let mut pair = Vec::new();
        let mut bytes = Vec::new();
        let mut masked_in_pairs = 0u32;
        let tdata = template.data();
        let mut row_bytes = vec![0u8; words_per_row * 4];
        for c in 0..count {
            for r in 0..th {
                let row = &tdata[r * tw * count..(r + 1) * tw * count];
                for (d, px) in row_bytes.iter_mut().zip(row.chunks_exact(count)) {
                    *d = px[c];
                }
                // Bytes past the template's width stay 0: masked, so they never count (R115).
                row_bytes[tw..].fill(0);
                let base = c * layout.plane_len() + r * layout.stride;
                for (j, w) in row_bytes.chunks_exact(4).enumerate() {
                    let off = base + 4 * j;
                    for (i, &value) in w.iter().enumerate() {
                        if value != 0 {
                            bytes.push(ByteOp {
                                off: off + i,
                                value,
                            });
                        }
                    }
                    let w: [u8; 4] = [w[0], w[1], w[2], w[3]];
                    let word = u32::from_le_bytes(w);
                    let zeros = w.iter().filter(|&&b| b == 0).count() as u32;
                    match zeros {
                        4 => {}
                        0 => plain.push(PlainOp { off, word }),
                        _ => {
                            let fill = u32::from_le_bytes(w.map(|b| if b == 0 { 0xFF } else { b }));
                            masked_in_pairs += zeros;
                            pair.push(PairOp {
                                off,
                                lo: word,
                                hi: fill,
                            });
                        }
                    }
                }
            }
        }
        let batches = batches(plain.len(), pair.len());
        let max_off = plain
            .iter()
            .map(|o| o.off)
            .chain(pair.iter().map(|o| o.off))
            .chain(bytes.iter().map(|o| o.off))
            .max()
            .unwrap_or(0);
        Ok(Plan {
            nx: (image.width() - template.width()) as usize + 1,
            ny: (image.height() - template.height()) as usize + 1,
            plain,
            pair,
            batches,
            masked_in_pairs,
            bytes,
            max_off,
        })
    }

    /// The cared bytes cut into groups whose u16 sums cannot overflow.
    pub fn byte_batches(&self) -> std::slice::Chunks<'_, ByteOp> {
        self.bytes.chunks(BYTES_PER_BATCH)
    }

    /// True when the template has masked words: the SIMD kernels then total `2·SAD` plus a bias
    /// (see `masked_in_pairs`) and the row needs `finish_doubled`. (Unused by the portable
    /// kernel, the only one a `force-scalar` build has.)
    #[cfg_attr(feature = "force-scalar", allow(dead_code))]
    pub fn doubled(&self) -> bool {
        !self.pair.is_empty()
    }

    /// Length of one padded output row (a multiple of [`STRIP`]).
    pub fn padded_nx(&self) -> usize {
        self.nx.next_multiple_of(STRIP)
    }
}

/// Rejects template/image pairs the matcher cannot score.
pub(crate) fn check_pair(image: &Image, template: &Image) -> Result<(), MatchError> {
    if image.channels() != template.channels() {
        return Err(MatchError::ChannelMismatch {
            image: image.channels(),
            template: template.channels(),
        });
    }
    if template.width() > image.width() || template.height() > image.height() {
        return Err(MatchError::TemplateLargerThanImage {
            template: (template.width(), template.height()),
            image: (image.width(), image.height()),
        });
    }
    let bytes = (template.width() as usize).next_multiple_of(4)
        * template.height() as usize
        * template.channels().bytes_per_pixel();
    if bytes > MAX_TEMPLATE_BYTES {
        return Err(MatchError::TemplateTooLarge {
            bytes,
            max: MAX_TEMPLATE_BYTES,
        });
    }
    Ok(())
}

fn batches(plain: usize, pair: usize) -> Vec<Batch> {
    let n = plain
        .div_ceil(PLAIN_PER_BATCH)
        .max(pair.div_ceil(PAIR_PER_BATCH))
        .max(1);
    (0..n)
        .map(|i| Batch {
            plain: (i * PLAIN_PER_BATCH).min(plain)..((i + 1) * PLAIN_PER_BATCH).min(plain),
            pair: (i * PAIR_PER_BATCH).min(pair)..((i + 1) * PAIR_PER_BATCH).min(pair),
        })
        .collect()
}

/// What counts as "don't care" in a template.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Masking {
    /// [`Masking::Alpha`] for RGBA8 templates, [`Masking::Msad4`] for R8 ones (which have no
    /// alpha channel).
    #[default]
    Auto,
    /// Pixels whose alpha is 0 are "don't care"; every byte of any other pixel counts, 0
    /// included (a sprite's opaque black outline is compared like any colour). RGBA8 only.
    Alpha,
    /// `msad4`'s own rule (R115): every template byte that is 0 is "don't care", whatever its
    /// pixel's alpha — an opaque black pixel's colour bytes do not count.
    Msad4,
}

impl Masking {
    /// The name scripts and the command line use: "auto", "alpha" or "msad4".
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Masking::Auto => "auto",
            Masking::Alpha => "alpha",
            Masking::Msad4 => "msad4",
        }
    }

    /// The masking of a name given by [`Masking::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Masking> {
        [Masking::Auto, Masking::Alpha, Masking::Msad4]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// The second template of alpha masking: 255 at each opaque 0 byte, 0 elsewhere.
pub(crate) struct OpaqueZeros {
    pub template: Image,
    /// `255 ×` the number of opaque 0 bytes.
    pub full: u32,
}

/// The template `msad4`'s kernels score under `masking`, and the opaque 0 bytes they would
/// miss (none under [`Masking::Msad4`], or when the template has none).
///
/// Alpha masking is `msad4`'s masked SAD over the template with its transparent pixels
/// cleared, plus `Σ w` over the opaque 0 bytes (where `|0 − w| = w`); that sum is
/// `255·n − SAD(255s there)`, so both terms come from the same exact kernels.
pub(crate) fn apply_masking(
    template: &Image,
    masking: Masking,
) -> Result<(std::borrow::Cow<'_, Image>, Option<OpaqueZeros>), MatchError> {
    use super::Channels;
    let alpha = match (masking, template.channels()) {
        (Masking::Msad4, _) | (Masking::Auto, Channels::R8) => false,
        (Masking::Alpha, Channels::R8) => return Err(MatchError::AlphaNeedsRgba(Channels::R8)),
        (Masking::Alpha | Masking::Auto, Channels::Rgba8) => true,
    };
    if !alpha {
        return Ok((std::borrow::Cow::Borrowed(template), None));
    }
    let data = template.data();
    let transparent = data.chunks_exact(4).any(|p| p[3] == 0 && p != [0; 4]);
    let mut zeros = vec![0u8; data.len()];
    let mut n = 0u32;
    for (z, p) in zeros.chunks_exact_mut(4).zip(data.chunks_exact(4)) {
        if p[3] != 0 {
            for (zb, &b) in z.iter_mut().zip(p) {
                if b == 0 {
                    *zb = 255;
                    n += 1;
                }
            }
        }
    }
    let (w, h) = (template.width(), template.height());
    let kept = if transparent {
        let mut cleared = data.to_vec();
        for p in cleared.chunks_exact_mut(4) {
            if p[3] == 0 {
                p.fill(0);
            }
        }
        std::borrow::Cow::Owned(Image::rgba8(w, h, cleared)?)
    } else {
        std::borrow::Cow::Borrowed(template)
    };
    let zeros = (n > 0)
        .then(|| {
            Image::rgba8(w, h, zeros).map(|template| OpaqueZeros {
                template,
                full: 255 * n,
            })
        })
        .transpose()?;
    Ok((kept, zeros))
}
