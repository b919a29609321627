//! The depth buffer the rasterizer draws into, stored tile by tile.

use crate::format::{self, Format};
use crate::texture::{Texture, TextureDesc, limits};

use super::RasterError;

/// Edge of the square tiles the target is split into (pixels).
pub const TILE_SIZE: u32 = 64;
/// Pixels in one tile.
pub(crate) const TILE_PIXELS: usize = (TILE_SIZE * TILE_SIZE) as usize;

/// A D32_FLOAT or D16_UNORM depth buffer.
///
/// The values are kept in [`TILE_SIZE`]² tiles, each tile contiguous and row-major inside, so
/// that every tile can be drawn by a different thread; [`DepthTarget::depth`] and
/// [`DepthTarget::to_texture`] hide the layout. A new target is cleared to 1.0 (the far plane).
#[derive(Clone, Debug, PartialEq)]
pub struct DepthTarget {
    width: u32,
    height: u32,
    format: Format,
    tiles_x: u32,
    tiles_y: u32,
    storage: Storage,
}

/// The tiled values: f32 depths for D32_FLOAT, 16-bit codes for D16_UNORM.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Storage {
    F32(Vec<f32>),
    U16(Vec<u16>),
}

impl DepthTarget {
    /// A `width` × `height` target of `format` (D32_FLOAT or D16_UNORM), cleared to 1.0.
    ///
    /// # Errors
    /// [`RasterError::InvalidSize`] unless both edges are in `1..=16384` (D3D12's 2D limit),
    /// [`RasterError::UnsupportedFormat`] for any other format.
    pub fn new(width: u32, height: u32, format: Format) -> Result<DepthTarget, RasterError> {
        crate::zone!("penumbra::raster::DepthTarget::new");
        if !(1..=limits::MAX_EDGE_2D).contains(&width)
            || !(1..=limits::MAX_EDGE_2D).contains(&height)
        {
            return Err(RasterError::InvalidSize { width, height });
        }
        let tiles_x = width.div_ceil(TILE_SIZE);
        let tiles_y = height.div_ceil(TILE_SIZE);
        let len = tiles_x as usize * tiles_y as usize * TILE_PIXELS;
        let storage = match format {
            Format::D32Float => Storage::F32(vec![1.0; len]),
            Format::D16Unorm => Storage::U16(vec![u16::MAX; len]),
            other => return Err(RasterError::UnsupportedFormat(other)),
        };
        Ok(DepthTarget {
            width,
            height,
            format,
            tiles_x,
            tiles_y,
            storage,
        })
    }

    /// Width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The format: `Format::D32Float` or `Format::D16Unorm`.
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// Sets every pixel to `depth`, like `ClearDepthStencilView`: the value is clamped to
    /// [0, 1] (NaN clears to 0) and, for D16, rounded to the nearest code.
    pub fn clear(&mut self, depth: f32) {
        crate::zone!("penumbra::raster::DepthTarget::clear");
        let depth = if depth.is_nan() {
            0.0
        } else {
            format::flush_denormal(depth.clamp(0.0, 1.0))
        };
        match &mut self.storage {
            Storage::F32(values) => values.fill(depth),
            Storage::U16(codes) => codes.fill(format::float_to_unorm(depth, 16) as u16),
        }
    }

    /// Index of pixel (x, y) in the tiled storage.
    #[inline]
    fn index(&self, x: u32, y: u32) -> usize {
        assert!(
            x < self.width && y < self.height,
            "pixel ({x}, {y}) is outside the {}×{} target",
            self.width,
            self.height
        );
        let tile = (y / TILE_SIZE) as usize * self.tiles_x as usize + (x / TILE_SIZE) as usize;
        tile * TILE_PIXELS + ((y % TILE_SIZE) * TILE_SIZE + x % TILE_SIZE) as usize
    }

    /// The depth at pixel (x, y) as a float (a D16 code k reads as k / 65535).
    ///
    /// # Panics
    /// If (x, y) is outside the target.
    #[must_use]
    pub fn depth(&self, x: u32, y: u32) -> f32 {
        let i = self.index(x, y);
        match &self.storage {
            Storage::F32(values) => values[i],
            Storage::U16(codes) => format::unorm_to_f32(u32::from(codes[i]), 16),
        }
    }

    /// The stored bits at pixel (x, y): the f32 bits for D32, the 16-bit code for D16.
    ///
    /// # Panics
    /// If (x, y) is outside the target.
    #[must_use]
    pub fn raw(&self, x: u32, y: u32) -> u32 {
        let i = self.index(x, y);
        match &self.storage {
            Storage::F32(values) => values[i].to_bits(),
            Storage::U16(codes) => u32::from(codes[i]),
        }
    }

    /// Every depth as a float, row by row from the top-left pixel (`width × height` values).
    #[must_use]
    pub fn depths(&self) -> Vec<f32> {
        crate::zone!("penumbra::raster::DepthTarget::depths");
        let mut out = Vec::with_capacity(self.width as usize * self.height as usize);
        for y in 0..self.height {
            out.extend((0..self.width).map(|x| self.depth(x, y)));
        }
        out
    }

    /// The description of the texture [`DepthTarget::to_texture`] makes: 2D, this size and
    /// format, one mip, one slice.
    #[must_use]
    pub fn to_texture_desc(&self) -> TextureDesc {
        TextureDesc::new_2d(self.format, self.width, self.height)
    }

    /// The depths as a [`Texture`] (2D, one mip) in the packed little-endian layout of the
    /// format, ready to be sampled.
    #[must_use]
    pub fn to_texture(&self) -> Texture {
        crate::zone!("penumbra::raster::DepthTarget::to_texture");
        let bpt = self.format.bytes_per_texel();
        let mut bytes = Vec::with_capacity(self.width as usize * self.height as usize * bpt);
        for y in 0..self.height {
            let row_start = self.index(0, y);
            for tx in 0..self.tiles_x {
                let start = row_start + tx as usize * TILE_PIXELS;
                let len = (self.width - tx * TILE_SIZE).min(TILE_SIZE) as usize;
                match &self.storage {
                    Storage::F32(values) => {
                        for v in &values[start..start + len] {
                            bytes.extend_from_slice(&v.to_le_bytes());
                        }
                    }
                    Storage::U16(codes) => {
                        for c in &codes[start..start + len] {
                            bytes.extend_from_slice(&c.to_le_bytes());
                        }
                    }
                }
            }
        }
        // The size was validated against D3D12's 2D limits in `new`, so the texture is valid.
        Texture::new(self.to_texture_desc(), bytes).expect("a DepthTarget is a valid 2D texture")
    }

    /// Tiles per row and per column.
    pub(crate) fn tile_grid(&self) -> (u32, u32) {
        (self.tiles_x, self.tiles_y)
    }

    /// The tiled storage, for the rasterizer.
    pub(crate) fn storage_mut(&mut self) -> &mut Storage {
        &mut self.storage
    }
}
