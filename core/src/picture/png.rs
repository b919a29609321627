//! PNG in and out (the `image` crate with only its `png` feature): msad4 [`Image`]s and SAD heat
//! maps (re-exported by [`msad4`](crate::msad4)), and 8-bit pixel buffers ([`encode_pixels`]).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageFormat, ImageReader};

use crate::msad4::{Channels, Image, MatchError, SadMap};

/// How large a PNG the loaders decode. A PNG compresses a blank 20000² picture into a few
/// hundred kilobytes, so the size of the file says nothing about the memory its pixels take:
/// the pixel count is checked before any pixel is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// The most pixels (width × height) an image may have.
    pub max_pixels: u64,
    /// The most bytes of PNG file read.
    pub max_file_bytes: u64,
}

impl DecodeLimits {
    /// 64 megapixels (an 8192² image: 256 MB as RGBA8) and 256 MB of file.
    pub const DEFAULT: DecodeLimits = DecodeLimits {
        max_pixels: 64 << 20,
        max_file_bytes: 256 << 20,
    };
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Reads a PNG file as `channels` (R8: luma; RGBA8: straight RGBA). Any bit depth or colour type
/// PNG allows is converted. Decodes within [`DecodeLimits::DEFAULT`].
pub fn load_png(path: impl AsRef<Path>, channels: Channels) -> Result<Image, MatchError> {
    load_png_within(path, channels, false, &DecodeLimits::DEFAULT)
}

/// [`load_png`] (or, with `template`, [`load_png_template`]) within `limits`: an image with
/// more pixels is an error naming its size, and memory that cannot be had is an error too.
pub fn load_png_within(
    path: impl AsRef<Path>,
    channels: Channels,
    template: bool,
    limits: &DecodeLimits,
) -> Result<Image, MatchError> {
    let path = path.as_ref();
    let bytes = crate::files::read(
        path,
        &crate::files::ReadLimits::input(limits.max_file_bytes),
    )
    .map_err(|e| MatchError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let decoded = decode(&bytes, path, limits)?;
    drop(bytes);
    to_image(decoded, channels, template)
}

/// Reads a PNG file as a template: like [`load_png`], but every fully transparent pixel
/// (alpha 0) becomes all-zero bytes, which the matcher treats as "don't care" (R115).
///
/// Opaque bytes that are 0 (pure black in R8, a 0 channel in RGBA8) are "don't care" too: that
/// is `msad4`'s rule, not a choice of this loader.
pub fn load_png_template(path: impl AsRef<Path>, channels: Channels) -> Result<Image, MatchError> {
    load_png_within(path, channels, true, &DecodeLimits::DEFAULT)
}

/// Decodes PNG bytes held in memory as `channels` (within [`DecodeLimits::DEFAULT`]).
pub fn decode_png(bytes: &[u8], channels: Channels) -> Result<Image, MatchError> {
    let decoded = decode(bytes, Path::new("<memory>"), &DecodeLimits::DEFAULT)?;
    to_image(decoded, channels, false)
}

/// Decodes PNG bytes held in memory as a template, like [`load_png_template`]: fully transparent
/// pixels become all-zero ("don't care") bytes.
pub fn decode_png_template(bytes: &[u8], channels: Channels) -> Result<Image, MatchError> {
    let decoded = decode(bytes, Path::new("<memory>"), &DecodeLimits::DEFAULT)?;
    to_image(decoded, channels, true)
}

/// Encodes an image as PNG (8-bit grey for R8, 8-bit RGBA for RGBA8).
pub fn encode_png(image: &Image) -> Result<Vec<u8>, MatchError> {
    let color = match image.channels() {
        Channels::R8 => image::ExtendedColorType::L8,
        Channels::Rgba8 => image::ExtendedColorType::Rgba8,
    };
    let mut out = std::io::Cursor::new(Vec::new());
    image::write_buffer_with_format(
        &mut out,
        image.data(),
        image.width(),
        image.height(),
        color,
        ImageFormat::Png,
    )
    .map_err(|e| MatchError::Io {
        path: PathBuf::new(),
        message: e.to_string(),
    })?;
    Ok(out.into_inner())
}

/// Encodes 8-bit `pixels` (`width × height`, row-major, laid out as `color` says) as a PNG.
pub fn encode_pixels(
    pixels: &[u8],
    width: u32,
    height: u32,
    color: image::ExtendedColorType,
) -> Result<Vec<u8>, image::ImageError> {
    use image::ImageEncoder;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png).write_image(pixels, width, height, color)?;
    Ok(png)
}

/// Writes [`encode_png`]'s bytes of `image` to `path` (atomically: a failed write leaves the
/// file that was there).
pub fn write_png(image: &Image, path: impl AsRef<Path>) -> Result<(), MatchError> {
    let path = path.as_ref();
    let bytes = encode_png(image).map_err(|e| with_path(e, path))?;
    crate::files::write_atomic(path, &bytes).map_err(|e| MatchError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Encodes a SAD map as an RGB heat-map PNG: the best (lowest) SAD is white, then yellow and
/// red down to black for the worst.
pub fn encode_heatmap_png(map: &SadMap) -> Result<Vec<u8>, MatchError> {
    let lo = map.data().iter().copied().min().unwrap_or(0);
    let hi = map.data().iter().copied().max().unwrap_or(0);
    let span = f64::from(hi - lo).max(1.0);
    let mut rgb = Vec::new();
    rgb.try_reserve_exact(map.data().len() * 3)
        .map_err(|_| MatchError::OutOfMemory {
            bytes: map.data().len() as u64 * 3,
        })?;
    for &sad in map.data() {
        let heat = 1.0 - f64::from(sad - lo) / span;
        let ramp = |start: f64| ((3.0 * heat - start).clamp(0.0, 1.0) * 255.0).round() as u8;
        rgb.extend([ramp(0.0), ramp(1.0), ramp(2.0)]);
    }
    let img = image::RgbImage::from_raw(map.width(), map.height(), rgb).ok_or_else(|| {
        MatchError::Io {
            path: PathBuf::new(),
            message: "heat map buffer has the wrong size".into(),
        }
    })?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, ImageFormat::Png)
        .map_err(|e| MatchError::Io {
            path: PathBuf::new(),
            message: e.to_string(),
        })?;
    Ok(out.into_inner())
}

/// Writes [`encode_heatmap_png`]'s picture of `map` to `path` (atomically).
pub fn write_heatmap_png(map: &SadMap, path: impl AsRef<Path>) -> Result<(), MatchError> {
    let path = path.as_ref();
    let bytes = encode_heatmap_png(map).map_err(|e| with_path(e, path))?;
    crate::files::write_atomic(path, &bytes).map_err(|e| MatchError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Decodes a PNG within `limits`: the header's size is checked first, and the decoder's own
/// allocations are capped at what that size needs.
fn decode(bytes: &[u8], path: &Path, limits: &DecodeLimits) -> Result<DynamicImage, MatchError> {
    let bad = |e: image::ImageError| MatchError::Decode {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let (w, h) = ImageReader::with_format(Cursor::new(bytes), ImageFormat::Png)
        .into_dimensions()
        .map_err(bad)?;
    let pixels = u64::from(w) * u64::from(h);
    if pixels > limits.max_pixels {
        return Err(MatchError::Decode {
            path: path.to_path_buf(),
            message: format!(
                "{w}×{h} is {pixels} pixels, more than the {} allowed (raise the limit to read it)",
                limits.max_pixels
            ),
        });
    }
    // The decoder and the conversion after it allocate without asking; memory is probed
    // fallibly first (decoded as 16-bit RGBA at worst, plus an RGBA8 copy), so an image too large
    // for the memory left is an error instead of an abort.
    let worst = pixels.saturating_mul(12);
    Vec::<u8>::new()
        .try_reserve_exact(usize::try_from(worst).unwrap_or(usize::MAX))
        .map_err(|_| MatchError::OutOfMemory { bytes: worst })?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), ImageFormat::Png);
    let mut caps = image::Limits::default();
    // 16-bit RGBA is the widest a PNG decodes to.
    caps.max_alloc = Some(pixels.saturating_mul(8).saturating_add(1 << 20));
    reader.limits(caps);
    reader.decode().map_err(|e| match e {
        image::ImageError::Limits(_) => MatchError::OutOfMemory {
            bytes: pixels.saturating_mul(8),
        },
        other => bad(other),
    })
}

/// The decoded picture as `channels`, converting in place where the decoder already gave that
/// layout; with `clear_transparent`, fully transparent pixels become all-zero bytes.
fn to_image(
    decoded: DynamicImage,
    channels: Channels,
    clear_transparent: bool,
) -> Result<Image, MatchError> {
    let (w, h) = (decoded.width(), decoded.height());
    if clear_transparent && decoded.color().has_alpha() {
        // Templates are small: the alpha plane is read from a copy, so the colour conversion
        // is the same as for an opaque picture.
        let alpha = decoded.to_rgba8();
        let mut data = match channels {
            Channels::R8 => decoded.into_luma8().into_raw(),
            Channels::Rgba8 => decoded.into_rgba8().into_raw(),
        };
        let bpp = channels.bytes_per_pixel();
        for (px, a) in data.chunks_exact_mut(bpp).zip(alpha.pixels()) {
            if a.0[3] == 0 {
                px.fill(0);
            }
        }
        return Image::new(w, h, channels, data);
    }
    // Images can be large: converted in place where the decoder already gave `channels`.
    let data = match channels {
        Channels::R8 => decoded.into_luma8().into_raw(),
        Channels::Rgba8 => decoded.into_rgba8().into_raw(),
    };
    Image::new(w, h, channels, data)
}

fn with_path(e: MatchError, path: &Path) -> MatchError {
    match e {
        MatchError::Io { message, .. } => MatchError::Io {
            path: path.to_path_buf(),
            message,
        },
        other => other,
    }
}
