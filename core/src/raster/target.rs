//! The depth buffer the rasterizer draws into, stored tile by tile.

use crate::format::{self, Format};
use crate::texture::{Texture, TextureDesc, limits};

use super::RasterError;
use super::draw::TileBuf;

/// Edge of the square tiles the target is split into (pixels).
pub const TILE_SIZE: u32 = 128;
/// Pixels in one tile.
pub(crate) const TILE_PIXELS: usize = (TILE_SIZE * TILE_SIZE) as usize;

/// A D32_FLOAT or D16_UNORM depth buffer.
///
/// The values are kept in [`TILE_SIZE`]² tiles, each tile contiguous and row-major inside, so
/// that every tile can be drawn by a different thread; [`DepthTarget::depth`] and
/// [`DepthTarget::to_texture`] hide the layout. A new target is cleared to 1.0 (the far plane).
///
/// A clear is lazy, as a GPU's fast clear is: [`DepthTarget::clear`] only records the value and
/// marks every tile as holding it; a tile's memory is filled when the rasterizer first draws
/// into it, while the tile is being brought into the cache anyway, and a tile no triangle
/// touches is never written at all. Every reader sees the cleared value either way.
#[derive(Clone, Debug)]
pub struct DepthTarget {
    width: u32,
    height: u32,
    format: Format,
    tiles_x: u32,
    tiles_y: u32,
    storage: Storage,
    /// Per tile: its values are the last clear's, not yet written to `storage`.
    unwritten: Vec<bool>,
    /// The last clear's stored bits (f32 bits for D32, the code for D16).
    clear_bits: u32,
}

/// One tile of a target, handed to the rasterizer: [`TileMut::buf`] writes a pending clear
/// first.
pub(crate) struct TileMut<'a> {
    /// The tile's index, row-major over the tile grid.
    pub index: usize,
    buf: TileBuf<'a>,
    unwritten: &'a mut bool,
    clear_bits: u32,
}

impl<'a> TileMut<'a> {
    /// The tile's values, with the last clear written into them first if it was still
    /// pending; also whether it was (the values were then just written, so they are in the
    /// cache).
    pub(crate) fn buf(self) -> (TileBuf<'a>, bool) {
        let filled = std::mem::replace(self.unwritten, false);
        let mut buf = self.buf;
        if filled {
            match &mut buf {
                TileBuf::F32(v) => fill_f32(v, f32::from_bits(self.clear_bits)),
                TileBuf::U16(c) => c.fill(self.clear_bits as u16),
            }
        }
        (buf, filled)
    }
}

/// `v.fill(x)` with the widest stores the CPU has. A cleared tile is filled just before its
/// first triangle (64 KiB at D32); with the portable code's 16-byte stores that was 11 % of a
/// full 2048² draw on an AVX-512 Xeon, with 64-byte ones 6 % (`perf`, benches/README.md).
fn fill_f32(v: &mut [f32], x: f32) {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if crate::cpu::CpuExtension::Avx512bw.is_supported() {
        // SAFETY: AVX-512 F is present.
        unsafe { fill_f32_avx512(v, x) };
        return;
    }
    v.fill(x);
}

/// [`fill_f32`] sixteen values a store.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[target_feature(enable = "avx512f")]
unsafe fn fill_f32_avx512(v: &mut [f32], x: f32) {
    use std::arch::x86_64::{_mm512_set1_ps, _mm512_storeu_ps};
    let k = _mm512_set1_ps(x);
    let mut groups = v.chunks_exact_mut(16);
    for g in &mut groups {
        // SAFETY: `g` holds sixteen values.
        unsafe { _mm512_storeu_ps(g.as_mut_ptr(), k) };
    }
    groups.into_remainder().fill(x);
}

impl PartialEq for DepthTarget {
    /// Equal when the size, the format and every pixel's stored bits are equal (however much
    /// of a clear is still pending on either side).
    fn eq(&self, other: &DepthTarget) -> bool {
        if (self.width, self.height, self.format) != (other.width, other.height, other.format) {
            return false;
        }
        (0..self.unwritten.len()).all(|t| {
            if !self.unwritten[t] && !other.unwritten[t] {
                let r = t * TILE_PIXELS..(t + 1) * TILE_PIXELS;
                return match (&self.storage, &other.storage) {
                    (Storage::F32(a), Storage::F32(b)) => a[r.clone()]
                        .iter()
                        .zip(&b[r])
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    (Storage::U16(a), Storage::U16(b)) => a[r.clone()] == b[r],
                    _ => false,
                };
            }
            (0..TILE_PIXELS).all(|i| self.stored(t, i) == other.stored(t, i))
        })
    }
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
        let tiles = tiles_x as usize * tiles_y as usize;
        let len = tiles * TILE_PIXELS;
        // Zeroed memory (which the system hands out untouched) with a pending clear to 1.0.
        let (storage, clear_bits) = match format {
            Format::D32Float => (Storage::F32(vec![0.0; len]), 1f32.to_bits()),
            Format::D16Unorm => (Storage::U16(vec![0; len]), u32::from(u16::MAX)),
            other => return Err(RasterError::UnsupportedFormat(other)),
        };
        Ok(DepthTarget {
            width,
            height,
            format,
            tiles_x,
            tiles_y,
            storage,
            unwritten: vec![true; tiles],
            clear_bits,
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
        self.clear_bits = match self.storage {
            Storage::F32(_) => depth.to_bits(),
            Storage::U16(_) => format::float_to_unorm(depth, 16),
        };
        // The memory is written tile by tile as the rasterizer reaches it (`TileMut::buf`).
        self.unwritten.fill(true);
    }

    /// The tile of pixel (x, y) and the pixel's index inside it.
    #[inline]
    fn locate(&self, x: u32, y: u32) -> (usize, usize) {
        assert!(
            x < self.width && y < self.height,
            "pixel ({x}, {y}) is outside the {}×{} target",
            self.width,
            self.height
        );
        let tile = (y / TILE_SIZE) as usize * self.tiles_x as usize + (x / TILE_SIZE) as usize;
        (tile, ((y % TILE_SIZE) * TILE_SIZE + x % TILE_SIZE) as usize)
    }

    /// The stored bits of value `i` of tile `t` (the clear's while it is pending there).
    #[inline]
    fn stored(&self, t: usize, i: usize) -> u32 {
        if self.unwritten[t] {
            return self.clear_bits;
        }
        match &self.storage {
            Storage::F32(values) => values[t * TILE_PIXELS + i].to_bits(),
            Storage::U16(codes) => u32::from(codes[t * TILE_PIXELS + i]),
        }
    }

    /// The depth at pixel (x, y) as a float (a D16 code k reads as k / 65535).
    ///
    /// # Panics
    /// If (x, y) is outside the target.
    #[must_use]
    pub fn depth(&self, x: u32, y: u32) -> f32 {
        let (t, i) = self.locate(x, y);
        let bits = self.stored(t, i);
        match &self.storage {
            Storage::F32(_) => f32::from_bits(bits),
            Storage::U16(_) => format::unorm_to_f32(bits, 16),
        }
    }

    /// The stored bits at pixel (x, y): the f32 bits for D32, the 16-bit code for D16.
    ///
    /// # Panics
    /// If (x, y) is outside the target.
    #[must_use]
    pub fn raw(&self, x: u32, y: u32) -> u32 {
        let (t, i) = self.locate(x, y);
        self.stored(t, i)
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
            let (row_tile, row_start) = self.locate(0, y);
            for tx in 0..self.tiles_x {
                let tile = row_tile + tx as usize;
                let start = tile * TILE_PIXELS + row_start;
                let len = (self.width - tx * TILE_SIZE).min(TILE_SIZE) as usize;
                if self.unwritten[tile] {
                    // Little-endian: the code of a D16 clear is the first two bytes.
                    let clear = self.clear_bits.to_le_bytes();
                    for _ in 0..len {
                        bytes.extend_from_slice(&clear[..bpt]);
                    }
                    continue;
                }
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

    /// The tiles for which `wanted(tile index)` holds, for the rasterizer to draw into (in
    /// tile order).
    pub(crate) fn tiles_mut(&mut self, wanted: impl Fn(usize) -> bool) -> Vec<TileMut<'_>> {
        let clear_bits = self.clear_bits;
        let flags = self.unwritten.iter_mut();
        let tile = |(index, (buf, unwritten))| TileMut {
            index,
            buf,
            unwritten,
            clear_bits,
        };
        let bufs: Box<dyn Iterator<Item = TileBuf<'_>> + '_> = match &mut self.storage {
            Storage::F32(values) => Box::new(values.chunks_mut(TILE_PIXELS).map(TileBuf::F32)),
            Storage::U16(codes) => Box::new(codes.chunks_mut(TILE_PIXELS).map(TileBuf::U16)),
        };
        bufs.zip(flags)
            .enumerate()
            .filter(|(t, _)| wanted(*t))
            .map(tile)
            .collect()
    }
}
