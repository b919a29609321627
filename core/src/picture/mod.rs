//! Pictures a user would rather look at than read: shadow maps, top-down maps of how lit a level
//! is, view cones, heat maps. Everything writes plain 8-bit PNGs.
//!
//! Compiled with the `png` feature. [`png`] holds the PNG reading and writing: msad4 [`Image`]s
//! and SAD heat maps in and out (re-exported by [`msad4`](crate::msad4)), and 8-bit pixel
//! buffers as PNG bytes. The Lua module (`penumbra_lua`) and the `penumbra` CLI draw with these.
//!
//! [`Image`]: crate::msad4::Image

use std::path::Path;

use image::{GrayImage, Luma, Rgb, RgbImage};

use crate::format::Format;
use crate::shadow::ShadowMap;
use crate::texture::Texture;

pub mod png;
mod top_down;

pub use top_down::TopDown;

/// An error writing a picture.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct PictureError {
    /// The file.
    pub path: String,
    /// Why.
    #[source]
    pub source: image::ImageError,
}

/// Saves an image, creating the folder.
pub fn save<P, C>(img: &image::ImageBuffer<P, C>, path: &Path) -> Result<(), PictureError>
where
    P: image::PixelWithColorType,
    [P::Subpixel]: image::EncodableLayout,
    C: std::ops::Deref<Target = [P::Subpixel]>,
{
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let failed = |source| PictureError {
        path: path.display().to_string(),
        source,
    };
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png)
        .map_err(failed)?;
    // Replaced in one step: a failed write leaves the earlier picture.
    crate::files::write_atomic(path, png.get_ref())
        .map_err(|e| failed(image::ImageError::IoError(e)))
}

/// A depth slice as grayscale: near is dark, far is light; the cleared far plane (1.0) is white.
/// The depth range of the geometry is stretched to the full gray range so the shapes show.
#[must_use]
pub fn depth_image(tex: &Texture, slice: u32) -> GrayImage {
    let [w, h, _] = tex.level_size(0);
    let depths: Vec<f32> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| tex.load(0, slice, [x, y, 0])[0])
        .collect();
    let (lo, hi) = depths
        .iter()
        .filter(|d| **d < 1.0)
        .fold((f32::MAX, f32::MIN), |(a, b), &d| (a.min(d), b.max(d)));
    let span = if hi > lo { hi - lo } else { 1.0 };
    GrayImage::from_fn(w, h, |x, y| {
        let d = depths[(y * w + x) as usize];
        if d >= 1.0 {
            Luma([255])
        } else {
            Luma([(20.0 + 200.0 * ((d - lo) / span).clamp(0.0, 1.0)) as u8])
        }
    })
}

/// Every slice of a depth texture side by side, each drawn as [`depth_image`] draws it (the six
/// faces of a cube map in D3D order +X, −X, +Y, −Y, +Z, −Z).
#[must_use]
pub fn depth_strip(tex: &Texture) -> GrayImage {
    let [w, h, _] = tex.level_size(0);
    let slices = tex.desc().array_size;
    let mut strip = GrayImage::new(w * slices, h);
    for slice in 0..slices {
        let face = depth_image(tex, slice);
        image::imageops::replace(&mut strip, &face, i64::from(slice * w), 0);
    }
    strip
}

/// What the queries so far drew of a map: its slices side by side as [`depth_strip`] lays them
/// out, the rows of texels drawn (those the queries' filter taps read) in warm tones over the
/// depth's gray (near dark), everything
/// never asked for dimmed in blue, and each tile that has rows drawn outlined in light blue
/// ([`DRAWN_TILE_OUTLINE`], on its edge texels that are not drawn) and lighter inside, so that
/// a few tiles show in a big map. A map drawn tile by tile shows the rows its queries' taps read
/// ([`ShadowMap::drawn_tiles`]); a map drawn whole is warm throughout.
///
/// The picture needs every depth, so it draws the map's missing tiles first (as
/// [`ShadowMap::texture`] does); what it shows as drawn is what was drawn before the call.
#[must_use]
pub fn drawn_picture(map: &ShadowMap) -> RgbImage {
    crate::zone!("penumbra::picture::drawn_picture");
    let drawn = map.drawn_tiles();
    let depths = depth_strip(map.texture());
    let n = map.resolution();
    let tile = crate::shadow::MAP_TILE;
    RgbImage::from_fn(depths.width(), depths.height(), |x, y| {
        let g = f32::from(depths.get_pixel(x, y)[0]);
        let shade = |k: [f32; 3]| Rgb(k.map(|k| (g * k).round().clamp(0.0, 255.0) as u8));
        // Drawn texels: amber, near (dark gray) to far (light), bright even where it is dark.
        let warm = || Rgb(DRAWN.map(|[a, k]| (a + g * k).round().clamp(0.0, 255.0) as u8));
        let (slice, x) = (x / n, x % n);
        if drawn.texel(slice, x, y) {
            return warm();
        }
        let (tx, ty) = (x / tile, y / tile);
        // A tile's first and last texels across and down (the map's edge ends a cut tile).
        let edge = |v: u32| v.is_multiple_of(tile) || v % tile == tile - 1 || v == n - 1;
        match drawn.rows(slice, tx, ty) {
            0 => shade([0.22, 0.27, 0.4]),
            _ if edge(x) || edge(y) => DRAWN_TILE_OUTLINE,
            // The rest of a tile with rows drawn, lighter, so that its box shows.
            _ => shade([0.5, 0.62, 0.9]),
        }
    })
}

/// Drawn texels in [`drawn_picture`]: per channel, a base plus the depth's gray times a factor.
const DRAWN: [[f32; 2]; 3] = [[90.0, 0.65], [55.0, 0.62], [10.0, 0.5]];

/// The outline of tiles with rows drawn in [`drawn_picture`].
pub const DRAWN_TILE_OUTLINE: Rgb<u8> = Rgb([110, 200, 255]);

/// A perceptual ramp from black through purple and orange to pale yellow (0 → 1).
#[must_use]
pub fn ramp(t: f32) -> Rgb<u8> {
    const STOPS: [[f32; 3]; 5] = [
        [0.0, 0.0, 0.02],
        [0.34, 0.06, 0.43],
        [0.73, 0.21, 0.33],
        [0.98, 0.55, 0.04],
        [0.99, 1.0, 0.64],
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) } * (STOPS.len() - 1) as f32;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f32;
    let c: [u8; 3] =
        std::array::from_fn(|k| ((STOPS[i][k] * (1.0 - f) + STOPS[i + 1][k] * f) * 255.0) as u8);
    Rgb(c)
}

/// A heat map of `values` (`w × h`, row-major), normalized to its own [min, max] and drawn with
/// [`ramp`]; `invert` makes low values bright (for SAD maps, where low is a good match).
#[must_use]
pub fn heat_map(values: &[f32], w: u32, h: u32, invert: bool) -> RgbImage {
    let (lo, hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let span = if hi > lo { hi - lo } else { 1.0 };
    RgbImage::from_fn(w, h, |x, y| {
        let t = (values[(y * w + x) as usize] - lo) / span;
        ramp(if invert { 1.0 - t } else { t })
    })
}

/// The red channel of `plane` (texels of `format`) as 8-bit gray, `[lo, hi]` → `0..255`
/// (rounded, clamped; NaN → 0). `lo`/`hi` default to the finite extremes; a flat plane is all 0.
#[must_use]
pub fn gray(format: Format, plane: &[u8], lo: Option<f32>, hi: Option<f32>) -> Vec<u8> {
    let bpt = format.bytes_per_texel();
    let red: Vec<f32> = plane.chunks_exact(bpt).map(|t| format.load(t)[0]).collect();
    let finite = || red.iter().copied().filter(|v| v.is_finite());
    let lo = lo.unwrap_or_else(|| finite().fold(f32::INFINITY, f32::min));
    let hi = hi.unwrap_or_else(|| finite().fold(f32::NEG_INFINITY, f32::max));
    let span = f64::from(hi) - f64::from(lo);
    red.iter()
        .map(|&v| {
            if v.is_nan() || span.is_nan() || span <= 0.0 {
                return 0;
            }
            let t = (f64::from(v) - f64::from(lo)) / span;
            (t * 255.0).round().clamp(0.0, 255.0) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_levels_map_their_finite_extremes_onto_the_gray_range() {
        let values = [0.5f32, 1.0, 0.75, f32::NAN, f32::INFINITY];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            gray(Format::R32Float, &bytes, None, None),
            [0, 255, 128, 0, 255]
        );
        assert_eq!(
            gray(Format::R32Float, &bytes, Some(0.0), Some(2.0)),
            [64, 128, 96, 0, 255]
        );
        let flat = 0.25f32.to_le_bytes().repeat(3);
        assert_eq!(gray(Format::R32Float, &flat, None, None), [0, 0, 0]);
    }
}
