//! PNG in and out (the `image` crate with only its `png` feature).

use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageFormat};

use super::{Channels, Image, MatchError, SadMap};

/// Reads a PNG file as `channels` (R8: luma; RGBA8: straight RGBA). Any bit depth or colour type
/// PNG allows is converted.
pub fn load_png(path: impl AsRef<Path>, channels: Channels) -> Result<Image, MatchError> {
    let path = path.as_ref();
    let bytes = read(path)?;
    let decoded = decode(&bytes, path)?;
    to_image(&decoded, channels, false)
}

/// Reads a PNG file as a template: like [`load_png`], but every fully transparent pixel
/// (alpha 0) becomes all-zero bytes, which the matcher treats as "don't care" (R115).
///
/// Opaque bytes that are 0 (pure black in R8, a 0 channel in RGBA8) are "don't care" too: that
/// is `msad4`'s rule, not a choice of this loader.
pub fn load_png_template(path: impl AsRef<Path>, channels: Channels) -> Result<Image, MatchError> {
    let path = path.as_ref();
    let bytes = read(path)?;
    let decoded = decode(&bytes, path)?;
    to_image(&decoded, channels, true)
}

/// Decodes PNG bytes held in memory as `channels`.
pub fn decode_png(bytes: &[u8], channels: Channels) -> Result<Image, MatchError> {
    let decoded = decode(bytes, Path::new("<memory>"))?;
    to_image(&decoded, channels, false)
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

/// Writes [`encode_png`]'s bytes of `image` to `path`.
pub fn write_png(image: &Image, path: impl AsRef<Path>) -> Result<(), MatchError> {
    let path = path.as_ref();
    let bytes = encode_png(image).map_err(|e| with_path(e, path))?;
    std::fs::write(path, bytes).map_err(|e| MatchError::Io {
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
    let mut rgb = Vec::with_capacity(map.data().len() * 3);
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

/// Writes [`encode_heatmap_png`]'s picture of `map` to `path`.
pub fn write_heatmap_png(map: &SadMap, path: impl AsRef<Path>) -> Result<(), MatchError> {
    let path = path.as_ref();
    let bytes = encode_heatmap_png(map).map_err(|e| with_path(e, path))?;
    std::fs::write(path, bytes).map_err(|e| MatchError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn read(path: &Path) -> Result<Vec<u8>, MatchError> {
    std::fs::read(path).map_err(|e| MatchError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn decode(bytes: &[u8], path: &Path) -> Result<DynamicImage, MatchError> {
    image::load_from_memory_with_format(bytes, ImageFormat::Png).map_err(|e| MatchError::Decode {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn to_image(
    decoded: &DynamicImage,
    channels: Channels,
    clear_transparent: bool,
) -> Result<Image, MatchError> {
    let (w, h) = (decoded.width(), decoded.height());
    let mut data = match channels {
        Channels::R8 => decoded.to_luma8().into_raw(),
        Channels::Rgba8 => decoded.to_rgba8().into_raw(),
    };
    if clear_transparent && decoded.color().has_alpha() {
        let alpha = decoded.to_rgba8();
        let bpp = channels.bytes_per_pixel();
        for (px, a) in data.chunks_exact_mut(bpp).zip(alpha.pixels()) {
            if a.0[3] == 0 {
                px.fill(0);
            }
        }
    }
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
