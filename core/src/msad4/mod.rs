//! # `msad4` and template matching
//!
//! HLSL's `msad4` (SPEC §4, R113–R118) and what tools build on it: finding sprites, tiles and UI
//! elements in screenshots and textures by masked sums of absolute differences (SAD).
//!
//! * [`msad4`] — the intrinsic itself, bit for bit (little-endian bytes, four source alignments,
//!   0 *reference* bytes masked, saturating accumulation).
//! * [`msad4_buffer_search`] — the HLSL documentation's buffer search (R117) over `u32` words;
//!   [`sad_bytes`] is the same search on byte slices, one score per byte offset.
//! * [`sad_map`] — the SAD of an [`Image`] template at every position where it fits. RGBA8
//!   sums over the four channels, and template bytes that are 0 are "don't care", as in `msad4`:
//!   a sprite's transparent pixels (all bytes 0) do not count.
//! * [`Masking`] — what "don't care" means for a search: `msad4`'s own rule (every 0 template
//!   byte) or the alpha channel (only pixels with alpha 0; every byte of an opaque pixel counts,
//!   black included). [`find_matches`] and [`sad_map_masked`] take it; [`Masking::Auto`], the
//!   default, is alpha for RGBA8 templates and `msad4`'s rule for R8.
//! * [`find_matches`] — the best `k` positions, with non-maximum suppression and an optional
//!   `max_sad`; exact (a pruned search returns exactly what the exhaustive one returns) and
//!   deterministic (ties go to the smaller `(y, x)`).
//! * [`load_png`], [`load_png_template`], [`write_png`], [`write_heatmap_png`] — PNG in and out
//!   (the `image` crate with only its `png` feature), re-exported from `picture::png`.
//!
//! The SAD kernels come in four backends, one per file (`scalar.rs`, `sse41.rs`, `avx2.rs`,
//! `avx512.rs`), chosen at run time by [`CpuExtension::default`]; every backend's SAD map equals
//! the scalar one bit for bit. The `force-scalar` feature keeps only the portable one.
//!
//! ```
//! use penumbra_core::msad4::{find_matches, sad_map, Image, MatchOptions};
//!
//! // A 16×8 image of noise with a 3×2 sprite planted at (9, 4); its 0 bytes are transparent.
//! let mut pixels: Vec<u8> = (0..16 * 8).map(|i| (i * 37 % 251) as u8 + 1).collect();
//! let sprite = [200, 0, 201, 202, 203, 0];
//! for (i, &b) in sprite.iter().enumerate() {
//!     if b != 0 {
//!         pixels[(4 + i / 3) * 16 + 9 + i % 3] = b;
//!     }
//! }
//! let image = Image::r8(16, 8, pixels)?;
//! let template = Image::r8(3, 2, sprite.to_vec())?;
//!
//! let map = sad_map(&image, &template, 1)?;
//! assert_eq!((map.width(), map.height()), (14, 7));
//! assert_eq!(map.get(9, 4), Some(0));
//!
//! let best = find_matches(&image, &template, &MatchOptions::default())?;
//! assert_eq!((best[0].x, best[0].y, best[0].sad), (9, 4, 0));
//! # Ok::<(), penumbra_core::msad4::MatchError>(())
//! ```

use std::fmt;
use std::path::PathBuf;

mod matching;
mod plan;
mod scalar;
mod search;

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx512;
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod sse41;

pub use crate::cpu::CpuExtension;
#[cfg(feature = "png")]
pub use crate::picture::png::{
    DecodeLimits, decode_png, decode_png_template, encode_heatmap_png, encode_png, load_png,
    load_png_template, load_png_within, write_heatmap_png, write_png,
};
pub use matching::{Match, MatchOptions, Pruning, find_matches};
pub use plan::Masking;
pub use scalar::msad4;
pub use search::{msad4_buffer_search, sad_bytes};

use plan::{BAND_ROWS, Layout, Plan};

/// Errors of the msad4 searches, image constructors and PNG input/output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MatchError {
    /// An image or template with no pixels.
    #[error("{what} has zero size ({width}×{height})")]
    ZeroSize {
        /// What was empty ("image", "template", "pattern"…).
        what: &'static str,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
    /// Pixel data whose length does not match `width × height × bytes per pixel`.
    #[error("{width}×{height} {channels} needs {expected} bytes, got {actual}")]
    DataLength {
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
        /// Declared layout.
        channels: Channels,
        /// Bytes the size needs.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// A template wider or taller than the image it is searched in.
    #[error("template {}×{} is larger than the image {}×{}", template.0, template.1, image.0, image.1)]
    TemplateLargerThanImage {
        /// Template width and height.
        template: (u32, u32),
        /// Image width and height.
        image: (u32, u32),
    },
    /// Image and template with different channel layouts.
    #[error("image is {image} but template is {template}")]
    ChannelMismatch {
        /// The image's layout.
        image: Channels,
        /// The template's layout.
        template: Channels,
    },
    /// A template too large for the u32 sums of the kernels.
    #[error("template has {bytes} bytes; at most {max} are supported")]
    TemplateTooLarge {
        /// Bytes of the template (rows rounded up to whole words, all channels).
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// A search buffer too short for one position of the pattern (R117 needs `REF_SIZE + 1`
    /// source words).
    #[error("source has {actual} elements; a pattern of {pattern} needs at least {needed}")]
    SourceTooShort {
        /// Pattern length.
        pattern: usize,
        /// Source length needed for one position.
        needed: usize,
        /// Source length given.
        actual: usize,
    },
    /// A backend this build or CPU cannot run.
    #[error("this CPU or build does not support the {0} backend")]
    UnsupportedCpuExtension(CpuExtension),
    /// A file that could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Bytes that are not a PNG this crate can decode.
    #[error("{}: not a PNG image ({message})", path.display())]
    Decode {
        /// The file (empty for in-memory data).
        path: PathBuf,
        /// What the decoder said.
        message: String,
    },
    /// An image or map larger than the memory left (or than the decoder's limits allow).
    #[error("not enough memory for {bytes} bytes of image data")]
    OutOfMemory {
        /// Bytes that were asked for.
        bytes: u64,
    },
    /// The [deadline](crate::deadline) in force passed before the search finished.
    #[error("stopped: the deadline passed before the search finished")]
    Interrupted,
    /// [`Masking::Alpha`] asked for a template without an alpha channel.
    #[error(
        "alpha masking needs an RGBA8 template (this one is {0}); use msad4 masking for R8, \
         where 0 bytes are \"don't care\""
    )]
    AlphaNeedsRgba(Channels),
}

impl From<crate::deadline::Interrupted> for MatchError {
    fn from(_: crate::deadline::Interrupted) -> Self {
        MatchError::Interrupted
    }
}

/// Pixel layout of an [`Image`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channels {
    /// One byte per pixel (luma, or any single channel).
    R8,
    /// Four bytes per pixel, R G B A; SADs sum over all four.
    Rgba8,
}

impl Channels {
    /// Bytes per pixel: 1 for R8, 4 for RGBA8.
    #[must_use]
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            Channels::R8 => 1,
            Channels::Rgba8 => 4,
        }
    }
}

impl fmt::Display for Channels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Channels::R8 => "R8",
            Channels::Rgba8 => "RGBA8",
        })
    }
}

/// An 8-bit image, rows top to bottom, pixels left to right, no padding.
///
/// Built only through constructors that check the size, so every `Image` is non-empty and its
/// data has exactly `width × height × bytes per pixel` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    width: u32,
    height: u32,
    channels: Channels,
    data: Vec<u8>,
}

impl Image {
    /// An image of the given layout; fails on a zero size or a wrong data length.
    pub fn new(
        width: u32,
        height: u32,
        channels: Channels,
        data: Vec<u8>,
    ) -> Result<Image, MatchError> {
        if width == 0 || height == 0 {
            return Err(MatchError::ZeroSize {
                what: "image",
                width,
                height,
            });
        }
        let expected = (width as usize)
            .checked_mul(height as usize)
            .and_then(|n| n.checked_mul(channels.bytes_per_pixel()));
        if expected != Some(data.len()) {
            return Err(MatchError::DataLength {
                width,
                height,
                channels,
                expected: expected.unwrap_or(usize::MAX),
                actual: data.len(),
            });
        }
        Ok(Image {
            width,
            height,
            channels,
            data,
        })
    }

    /// A one-byte-per-pixel image.
    pub fn r8(width: u32, height: u32, data: Vec<u8>) -> Result<Image, MatchError> {
        Image::new(width, height, Channels::R8, data)
    }

    /// A four-bytes-per-pixel (R, G, B, A) image.
    pub fn rgba8(width: u32, height: u32, data: Vec<u8>) -> Result<Image, MatchError> {
        Image::new(width, height, Channels::Rgba8, data)
    }

    /// Width in pixels (≥ 1).
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels (≥ 1).
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Pixel layout.
    #[must_use]
    pub fn channels(&self) -> Channels {
        self.channels
    }

    /// The pixel bytes.
    #[must_use]
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Gives the pixel bytes back.
    #[must_use]
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }

    /// The bytes of pixel `(x, y)`, or `None` outside the image.
    #[must_use]
    pub fn pixel(&self, x: u32, y: u32) -> Option<&[u8]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let bpp = self.channels.bytes_per_pixel();
        let at = (y as usize * self.width as usize + x as usize) * bpp;
        Some(&self.data[at..at + bpp])
    }
}

/// The SAD of a template at every position where it fits: `width = W − w + 1`,
/// `height = H − h + 1`, row-major. `SadMap::default()` is an empty map (0 × 0), e.g. to start
/// [`sad_map_into`] with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SadMap {
    width: u32,
    height: u32,
    data: Vec<u32>,
}

impl SadMap {
    /// Positions per row.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Rows of positions.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The SADs, row-major.
    #[must_use]
    pub fn data(&self) -> &[u32] {
        &self.data
    }

    /// The SAD with the template's top-left corner at `(x, y)`, or `None` where it does not fit.
    #[must_use]
    pub fn get(&self, x: u32, y: u32) -> Option<u32> {
        (x < self.width && y < self.height)
            .then(|| self.data[y as usize * self.width as usize + x as usize])
    }
}

/// The masked SAD of `template` at every position of `image` where it fits, with the best
/// backend this CPU has, on `threads` threads (0 counts as 1).
///
/// R115 applied in two dimensions: template bytes that are 0 do not count, image bytes that are
/// 0 are compared normally; RGBA8 sums over the four channels.
pub fn sad_map(image: &Image, template: &Image, threads: usize) -> Result<SadMap, MatchError> {
    sad_map_using(image, template, threads, CpuExtension::default())
}

/// [`sad_map`] with a chosen [`Masking`]: with [`Masking::Alpha`] (or `Auto` on an RGBA8
/// template) only pixels whose alpha is 0 are "don't care", and every byte of the others counts,
/// 0 included.
///
/// ```
/// use penumbra_core::msad4::{Image, Masking, sad_map, sad_map_masked};
/// // An opaque black pixel and a transparent one, against white and grey.
/// let template = Image::rgba8(2, 1, vec![0, 0, 0, 255, 9, 9, 9, 0])?;
/// let image = Image::rgba8(2, 1, vec![255, 255, 255, 255, 128, 128, 128, 255])?;
/// // msad4's rule: the black pixel's 0 bytes do not count (its alpha matches), the
/// // transparent pixel's 9s do.
/// assert_eq!(sad_map(&image, &template, 1)?.data(), &[3 * 119]);
/// // Alpha masking: black counts in full, the transparent pixel not at all.
/// assert_eq!(sad_map_masked(&image, &template, Masking::Alpha, 1)?.data(), &[3 * 255]);
/// # Ok::<(), penumbra_core::msad4::MatchError>(())
/// ```
pub fn sad_map_masked(
    image: &Image,
    template: &Image,
    masking: Masking,
    threads: usize,
) -> Result<SadMap, MatchError> {
    sad_map_masked_using(image, template, masking, threads, CpuExtension::default())
}

/// [`sad_map_masked`] with a chosen backend.
pub fn sad_map_masked_using(
    image: &Image,
    template: &Image,
    masking: Masking,
    threads: usize,
    backend: CpuExtension,
) -> Result<SadMap, MatchError> {
    let (template, alpha) = plan::apply_masking(template, masking)?;
    sad_map_prepared(
        Prepared::with_alpha(image, &template, alpha.as_ref())?,
        threads,
        backend,
    )
}

/// [`sad_map`] with a chosen backend (fails with [`MatchError::UnsupportedCpuExtension`] if this
/// CPU or build lacks it).
pub fn sad_map_using(
    image: &Image,
    template: &Image,
    threads: usize,
    backend: CpuExtension,
) -> Result<SadMap, MatchError> {
    sad_map_prepared(Prepared::new(image, template)?, threads, backend)
}

fn sad_map_prepared(
    prepared: Prepared<'_>,
    threads: usize,
    backend: CpuExtension,
) -> Result<SadMap, MatchError> {
    crate::zone!("penumbra::msad4::sad_map");
    check_backend(backend)?;
    let mut data = Vec::new();
    data.try_reserve_exact(prepared.plan.nx * prepared.plan.ny)
        .map_err(|_| MatchError::OutOfMemory {
            bytes: 4 * prepared.plan.nx as u64 * prepared.plan.ny as u64,
        })?;
    prepared.map_into(backend, threads, &mut data);
    crate::deadline::check()?;
    Ok(SadMap {
        width: prepared.plan.nx as u32,
        height: prepared.plan.ny as u32,
        data,
    })
}

/// [`sad_map_using`] into `map`, reusing its storage: repeated matching (a template searched
/// frame after frame) allocates nothing once the storage is large enough. On an error before the
/// search `map` is left unchanged; after an [`MatchError::Interrupted`] its values are
/// unspecified.
///
/// ```
/// use penumbra_core::msad4::{CpuExtension, Image, SadMap, sad_map_into};
/// let image = Image::r8(4, 1, vec![1, 2, 3, 4])?;
/// let template = Image::r8(2, 1, vec![2, 3])?;
/// let mut map = SadMap::default();
/// for _frame in 0..3 {
///     sad_map_into(&image, &template, 1, CpuExtension::default(), &mut map)?;
/// }
/// assert_eq!(map.data(), &[2, 0, 2]);
/// # Ok::<(), penumbra_core::msad4::MatchError>(())
/// ```
pub fn sad_map_into(
    image: &Image,
    template: &Image,
    threads: usize,
    backend: CpuExtension,
    map: &mut SadMap,
) -> Result<(), MatchError> {
    crate::zone!("penumbra::msad4::sad_map");
    check_backend(backend)?;
    let prepared = Prepared::new(image, template)?;
    let need = prepared.plan.nx * prepared.plan.ny;
    map.data
        .try_reserve_exact(need.saturating_sub(map.data.len()))
        .map_err(|_| MatchError::OutOfMemory {
            bytes: 4 * need as u64,
        })?;
    // The size first: an interrupted search leaves values that are unspecified, but a map whose
    // size matches its data.
    map.width = prepared.plan.nx as u32;
    map.height = prepared.plan.ny as u32;
    prepared.map_into(backend, threads, &mut map.data);
    crate::deadline::check()?;
    Ok(())
}

fn check_backend(backend: CpuExtension) -> Result<(), MatchError> {
    if backend.is_supported() {
        Ok(())
    } else {
        Err(MatchError::UnsupportedCpuExtension(backend))
    }
}

/// A template planned against an image's band layout.
pub(crate) struct Prepared<'a> {
    pub image: &'a Image,
    pub layout: Layout,
    pub plan: Plan,
    /// Alpha masking's second pass, when the template has opaque 0 bytes.
    pub alpha: Option<AlphaPass>,
}

/// The opaque 0 bytes of an alpha-masked template, which `msad4` would not count: a template
/// holding 255 exactly there scores `Σ (255 − w)` over them, so their true share `Σ w` is
/// `255·n − that` ([`plan::apply_masking`]).
pub(crate) struct AlphaPass {
    plan: Plan,
    /// `255 × n`, `n` the number of opaque 0 bytes.
    full: u32,
}

impl<'a> Prepared<'a> {
    pub fn new(image: &'a Image, template: &Image) -> Result<Prepared<'a>, MatchError> {
        Prepared::with_alpha(image, template, None)
    }

    /// Planned for `template`, plus the second pass of alpha masking when `zeros` (the
    /// template of opaque 0 bytes from [`plan::apply_masking`]) is given.
    pub fn with_alpha(
        image: &'a Image,
        template: &Image,
        zeros: Option<&plan::OpaqueZeros>,
    ) -> Result<Prepared<'a>, MatchError> {
        plan::check_pair(image, template)?;
        let layout = Layout::new(image, template);
        let plan = Plan::new(&layout, image, template)?;
        let alpha = match zeros {
            Some(z) => Some(AlphaPass {
                plan: Plan::new(&layout, image, &z.template)?,
                full: z.full,
            }),
            None => None,
        };
        Ok(Prepared {
            image,
            layout,
            plan,
            alpha,
        })
    }

    /// Adds alpha masking's share of the opaque 0 bytes to a row of `msad4` SADs, if any.
    fn add_alpha(
        &self,
        backend: CpuExtension,
        row: &[u8],
        out: &mut [u32],
        extra: &mut Vec<u32>,
        scratch: &mut Vec<u16>,
    ) {
        if let Some(a) = &self.alpha {
            extra.resize(a.plan.padded_nx(), 0);
            sad_row(backend, &a.plan, row, extra, scratch);
            for (o, e) in out.iter_mut().zip(extra.iter()) {
                // `e ≤ full` (each of the n terms is at most 255), and the sum fits as the
                // template's own bound does (Plan::new checks it).
                *o += a.full - e;
            }
        }
    }

    /// The whole SAD map, rows split over `threads` threads, into `data` (replacing its
    /// contents and reusing its storage).
    pub fn map_into(&self, backend: CpuExtension, threads: usize, data: &mut Vec<u32>) {
        let nx = self.plan.nx;
        // Only storage `data` did not hold yet is zeroed: repeated matching at one size writes
        // straight over the previous map.
        data.resize(nx * self.plan.ny, 0);
        for_row_bands(data, nx, threads, |y0, band| {
            self.fill_band(backend, y0, band)
        });
    }

    /// Writes SAD-map rows `y0..` into `band` (whole rows). The kernels write padded rows
    /// (a multiple of [`STRIP`](plan::STRIP) long) straight into the band: the padding runs into
    /// the next row, which is computed afterwards and overwrites it; a row without that much
    /// room goes through a scratch row.
    fn fill_band(&self, backend: CpuExtension, y0: usize, band: &mut [u32]) {
        let plan = &self.plan;
        let (nx, padded) = (plan.nx, plan.padded_nx());
        let rows = band.len() / nx;
        let mut buf = Vec::new();
        let mut row_out = Vec::new();
        let mut scratch = Vec::new();
        let mut extra = Vec::new();
        for b0 in (0..rows).step_by(BAND_ROWS) {
            let n = BAND_ROWS.min(rows - b0);
            self.layout.fill(self.image, y0 + b0, n, &mut buf);
            for i in 0..n {
                // Rows left once the deadline has passed are not computed (the caller reports
                // the interruption).
                if crate::deadline::expired() {
                    return;
                }
                let row = &buf[i * self.layout.stride..];
                let at = (b0 + i) * nx;
                if let Some(out) = band.get_mut(at..at + padded) {
                    sad_row(backend, plan, row, out, &mut scratch);
                } else {
                    row_out.resize(padded, 0);
                    sad_row(backend, plan, row, &mut row_out, &mut scratch);
                    band[at..at + nx].copy_from_slice(&row_out[..nx]);
                }
                let out = &mut band[at..at + nx];
                self.add_alpha(backend, row, out, &mut extra, &mut scratch);
            }
        }
    }

    /// Computes SAD-map rows `ys`, band by band, handing each row to `sink(y, row)`.
    pub fn rows(
        &self,
        backend: CpuExtension,
        ys: std::ops::Range<usize>,
        mut sink: impl FnMut(usize, &[u32]),
    ) {
        let plan = &self.plan;
        let mut buf = Vec::new();
        let mut row_out = vec![0u32; plan.padded_nx()];
        let mut scratch = Vec::new();
        let mut extra = Vec::new();
        for y0 in ys.clone().step_by(BAND_ROWS) {
            let n = BAND_ROWS.min(ys.end - y0);
            self.layout.fill(self.image, y0, n, &mut buf);
            for i in 0..n {
                if crate::deadline::expired() {
                    return;
                }
                let row = &buf[i * self.layout.stride..];
                sad_row(backend, plan, row, &mut row_out, &mut scratch);
                let out = &mut row_out[..plan.nx];
                self.add_alpha(backend, row, out, &mut extra, &mut scratch);
                sink(y0 + i, out);
            }
        }
    }
}

/// One padded row of SADs with `backend` (the one dispatch point of the kernels).
fn sad_row(
    backend: CpuExtension,
    plan: &Plan,
    row: &[u8],
    out: &mut [u32],
    scratch: &mut Vec<u16>,
) {
    // Every kernel reads at most `max_off + out.len() + 8` bytes past `row[0]`; the plane
    // padding guarantees it, this check makes the unsafe calls below sound regardless.
    assert!(plan.max_off + out.len() + 8 <= row.len());
    match backend {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        CpuExtension::Sse41 if backend.is_supported() => {
            // SAFETY: SSE4.1 is detected and the read bound was checked above.
            unsafe { sse41::sad_row(plan, row.as_ptr(), out) };
            if plan.doubled() {
                // SAFETY: as above.
                unsafe { sse41::finish_doubled(out, 255 * plan.masked_in_pairs) };
            }
        }
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        CpuExtension::Avx2 if backend.is_supported() => {
            // SAFETY: AVX2 is detected and the read bound was checked above.
            unsafe { avx2::sad_row(plan, row.as_ptr(), out) };
            if plan.doubled() {
                // SAFETY: as above.
                unsafe { avx2::finish_doubled(out, 255 * plan.masked_in_pairs) };
            }
        }
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        CpuExtension::Avx512bw if backend.is_supported() => {
            // SAFETY: AVX-512F/BW are detected and the read bound was checked above.
            unsafe { avx512::sad_row(plan, row.as_ptr(), out) };
            if plan.doubled() {
                // SAFETY: as above.
                unsafe { avx512::finish_doubled(out, 255 * plan.masked_in_pairs) };
            }
        }
        _ => scalar::sad_row(plan, row, out, scratch),
    }
}

/// Splits `data` (rows of `width`) into at most `threads` bands of whole rows and runs
/// `f(first_row, band)` on each, on scoped threads when there is more than one.
pub(crate) fn for_row_bands<T: Send>(
    data: &mut [T],
    width: usize,
    threads: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let rows = data.len() / width.max(1);
    let threads = threads.clamp(1, rows.max(1));
    if threads == 1 {
        f(0, data);
        return;
    }
    let per = rows.div_ceil(threads);
    let deadline = crate::deadline::current();
    std::thread::scope(|s| {
        for (i, band) in data.chunks_mut(per * width).enumerate() {
            let f = &f;
            s.spawn(move || crate::deadline::with_deadline(deadline, || f(i * per, band)));
        }
    });
}

/// Calls `$f` from the backend's file (its `#[target_feature]` copy) when `$backend` is
/// supported, the portable one from `scalar.rs` otherwise.
macro_rules! dispatch {
    ($backend:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $backend {
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            // SAFETY: the backend's features were detected on this CPU; the body is safe code.
            CpuExtension::Sse41 if $backend.is_supported() => unsafe { sse41::$f($($arg),*) },
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            // SAFETY: as above.
            CpuExtension::Avx2 if $backend.is_supported() => unsafe { avx2::$f($($arg),*) },
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            // SAFETY: as above.
            CpuExtension::Avx512bw if $backend.is_supported() => unsafe { avx512::$f($($arg),*) },
            _ => scalar::$f($($arg),*),
        }
    };
}
pub(crate) use dispatch;

/// [`scalar::position_sad`] on `backend`, for the template rows of `rows`.
pub(crate) fn position_sad(
    backend: CpuExtension,
    rows: &matching::ExactRows,
    data: &[u8],
    limit: u32,
) -> Option<u32> {
    let (offs, tpl, mask, w) = (&rows.offs[..], &rows.tpl[..], &rows.mask[..], rows.width);
    dispatch!(backend, position_sad(offs, tpl, mask, w, data, limit))
}
