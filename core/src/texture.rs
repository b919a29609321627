//! Textures: dimension, format, mip chain, array slices, packed storage, and the SRV view that
//! sampling goes through (SPEC §1.2).
//!
//! A [`Texture`] is immutable and cheap to clone: the texel storage sits behind an `Arc`, so many
//! threads can sample one texture at once, and [`Texture::with_view`] makes a second view of the
//! same storage without copying it.
//!
//! ```
//! use penumbra_core::{Dimension, Format, Texture, TextureDesc};
//! use penumbra_core::texture::MipFilter;
//! // A 4×4 R32_FLOAT map with a full mip chain of min values (hierarchical Z).
//! let desc = TextureDesc::new_2d(Format::R32Float, 4, 4).with_mip_levels(3);
//! let level0: Vec<f32> = (0..16).map(|i| i as f32 / 16.0).collect();
//! let tex = Texture::from_level0_f32(desc, &level0, MipFilter::Min).unwrap();
//! assert_eq!(tex.level_size(2), [1, 1, 1]);
//! assert_eq!(tex.load(2, 0, [0, 0, 0])[0], 0.0);
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::format::Format;

/// D3D12's hardware limits (SPEC §1.2, d3d12.h `D3D12_REQ_*`).
pub mod limits {
    /// Largest edge of a 1D, 2D or cube texture (`D3D12_REQ_TEXTURE2D_U_OR_V_DIMENSION`).
    pub const MAX_EDGE_2D: u32 = 16384;
    /// Largest edge of a 3D texture (`D3D12_REQ_TEXTURE3D_U_V_OR_W_DIMENSION`).
    pub const MAX_EDGE_3D: u32 = 2048;
    /// Largest array size (`D3D12_REQ_TEXTURE2D_ARRAY_AXIS_DIMENSION`).
    pub const MAX_ARRAY_SIZE: u32 = 2048;
    /// Largest mip count (`D3D12_REQ_MIP_LEVELS`).
    pub const MAX_MIP_LEVELS: u32 = 15;
    /// Largest storage penumbra allocates for one texture, in bytes (a guard so that hostile
    /// sizes give an error instead of aborting the process on allocation).
    pub const MAX_BYTES: u64 = 4 << 30;
}

/// The dimension of a texture (and of the view that samples it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dimension {
    /// `Texture1D`: coordinate `[u]`.
    Texture1D,
    /// `Texture1DArray`: coordinate `[u, slice]`.
    Texture1DArray,
    /// `Texture2D`: coordinate `[u, v]`.
    Texture2D,
    /// `Texture2DArray`: coordinate `[u, v, slice]`.
    Texture2DArray,
    /// `Texture3D`: coordinate `[u, v, w]`.
    Texture3D,
    /// `TextureCube`: coordinate `[x, y, z]` (a direction).
    TextureCube,
    /// `TextureCubeArray`: coordinate `[x, y, z, cube]`.
    TextureCubeArray,
}

impl Dimension {
    /// Every dimension.
    pub const ALL: [Dimension; 7] = [
        Dimension::Texture1D,
        Dimension::Texture1DArray,
        Dimension::Texture2D,
        Dimension::Texture2DArray,
        Dimension::Texture3D,
        Dimension::TextureCube,
        Dimension::TextureCubeArray,
    ];

    /// The short name used by case files: `1D`, `1DArray`, `2D`, `2DArray`, `3D`, `Cube`, `CubeArray`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Dimension::Texture1D => "1D",
            Dimension::Texture1DArray => "1DArray",
            Dimension::Texture2D => "2D",
            Dimension::Texture2DArray => "2DArray",
            Dimension::Texture3D => "3D",
            Dimension::TextureCube => "Cube",
            Dimension::TextureCubeArray => "CubeArray",
        }
    }

    /// Number of filtered axes (1, 2 or 3; cubes filter 2D faces).
    #[must_use]
    #[inline]
    pub const fn axes(self) -> usize {
        match self {
            Dimension::Texture1D | Dimension::Texture1DArray => 1,
            Dimension::Texture3D => 3,
            _ => 2,
        }
    }

    /// Number of derivative / offset components the coordinate has (3 for cubes: a direction).
    #[must_use]
    #[inline]
    pub const fn gradient_axes(self) -> usize {
        match self {
            Dimension::TextureCube | Dimension::TextureCubeArray => 3,
            other => other.axes(),
        }
    }

    /// True for the array dimensions (including cube arrays).
    #[must_use]
    #[inline]
    pub const fn is_array(self) -> bool {
        matches!(
            self,
            Dimension::Texture1DArray | Dimension::Texture2DArray | Dimension::TextureCubeArray
        )
    }

    /// True for cubes and cube arrays.
    #[must_use]
    #[inline]
    pub const fn is_cube(self) -> bool {
        matches!(self, Dimension::TextureCube | Dimension::TextureCubeArray)
    }

    /// Index of the array coordinate in a sample coordinate, if any (R43).
    #[must_use]
    #[inline]
    pub const fn array_coord(self) -> Option<usize> {
        match self {
            Dimension::Texture1DArray => Some(1),
            Dimension::Texture2DArray => Some(2),
            Dimension::TextureCubeArray => Some(3),
            _ => None,
        }
    }

    /// Number of coordinate components a sample takes.
    #[must_use]
    pub const fn coord_len(self) -> usize {
        match self {
            Dimension::Texture1D => 1,
            Dimension::Texture1DArray | Dimension::Texture2D => 2,
            Dimension::Texture2DArray | Dimension::Texture3D | Dimension::TextureCube => 3,
            Dimension::TextureCubeArray => 4,
        }
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dimension {
    type Err = TextureError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let short = s.strip_prefix("Texture").unwrap_or(s);
        Dimension::ALL
            .into_iter()
            .find(|d| d.name() == short)
            .ok_or_else(|| TextureError::UnknownDimension(s.to_string()))
    }
}

/// The shape and format of a texture resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    /// Dimension of the resource.
    pub dimension: Dimension,
    /// Texel format.
    pub format: Format,
    /// Width of mip 0.
    pub width: u32,
    /// Height of mip 0 (1 for 1D textures).
    pub height: u32,
    /// Depth of mip 0 (1 unless 3D).
    pub depth: u32,
    /// Number of array slices: 1 for non-arrays, 6 for a cube, `6·n` for a cube array.
    pub array_size: u32,
    /// Number of mip levels.
    pub mip_levels: u32,
}

impl TextureDesc {
    /// A 2D texture with one mip.
    #[must_use]
    pub const fn new_2d(format: Format, width: u32, height: u32) -> Self {
        TextureDesc {
            dimension: Dimension::Texture2D,
            format,
            width,
            height,
            depth: 1,
            array_size: 1,
            mip_levels: 1,
        }
    }

    /// A texture of any dimension with one mip; `array_size` counts 2D slices (6 per cube).
    #[must_use]
    pub const fn new(
        dimension: Dimension,
        format: Format,
        [width, height, depth]: [u32; 3],
        array_size: u32,
    ) -> Self {
        TextureDesc {
            dimension,
            format,
            width,
            height,
            depth,
            array_size,
            mip_levels: 1,
        }
    }

    /// The same description with `mip_levels` mips.
    #[must_use]
    pub const fn with_mip_levels(mut self, mip_levels: u32) -> Self {
        self.mip_levels = mip_levels;
        self
    }

    /// The full mip count for this size: `floor(log2(max edge)) + 1`.
    #[must_use]
    pub fn full_mip_count(&self) -> u32 {
        let edge = self.width.max(self.height).max(self.depth).max(1);
        32 - edge.leading_zeros()
    }

    /// Size of mip `mip` (`max(1, size >> mip)` per axis).
    #[must_use]
    #[inline]
    pub fn level_size(&self, mip: u32) -> [u32; 3] {
        [
            (self.width >> mip).max(1),
            (self.height >> mip).max(1),
            (self.depth >> mip).max(1),
        ]
    }

    /// Bytes of one subresource at mip `mip`.
    #[must_use]
    pub fn subresource_bytes(&self, mip: u32) -> usize {
        let [w, h, d] = self.level_size(mip);
        w as usize * h as usize * d as usize * self.format.bytes_per_texel()
    }

    /// Total bytes of all subresources.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        (0..self.mip_levels)
            .map(|m| self.subresource_bytes(m) as u64)
            .sum::<u64>()
            * u64::from(self.array_size)
    }

    /// Checks the description against D3D12's limits (SPEC §1.2) and its own consistency.
    pub fn validate(&self) -> Result<(), TextureError> {
        let bad = |field: &'static str, value: u32, reason: String| {
            Err(TextureError::InvalidDesc {
                field,
                value,
                reason,
            })
        };
        let dim = self.dimension;
        let max_edge = if dim == Dimension::Texture3D {
            limits::MAX_EDGE_3D
        } else {
            limits::MAX_EDGE_2D
        };
        for (field, value) in [("width", self.width), ("height", self.height)] {
            if value == 0 {
                return bad(field, value, "must be at least 1".into());
            }
            if value > max_edge {
                return bad(
                    field,
                    value,
                    format!("exceeds D3D12's limit of {max_edge} for {dim} textures"),
                );
            }
        }
        if matches!(dim, Dimension::Texture1D | Dimension::Texture1DArray) && self.height != 1 {
            return bad("height", self.height, "must be 1 for 1D textures".into());
        }
        if dim == Dimension::Texture3D {
            if self.depth == 0 || self.depth > max_edge {
                return bad(
                    "depth",
                    self.depth,
                    format!("must be in 1..={max_edge} for 3D textures"),
                );
            }
        } else if self.depth != 1 {
            return bad(
                "depth",
                self.depth,
                "must be 1 unless the texture is 3D".into(),
            );
        }
        if dim.is_cube() && self.width != self.height {
            return bad(
                "height",
                self.height,
                format!("cube faces are square, but width is {}", self.width),
            );
        }
        let array_ok = match dim {
            Dimension::Texture1D | Dimension::Texture2D | Dimension::Texture3D => {
                self.array_size == 1
            }
            Dimension::TextureCube => self.array_size == 6,
            Dimension::TextureCubeArray => {
                self.array_size >= 6 && self.array_size.is_multiple_of(6)
            }
            Dimension::Texture1DArray | Dimension::Texture2DArray => self.array_size >= 1,
        };
        if !array_ok || self.array_size > limits::MAX_ARRAY_SIZE + 5 {
            return bad(
                "array_size",
                self.array_size,
                match dim {
                    Dimension::TextureCube => "must be 6 for a cube".into(),
                    Dimension::TextureCubeArray => {
                        "must be a non-zero multiple of 6 for a cube array".into()
                    }
                    d if !d.is_array() => format!("must be 1 for a {d} texture"),
                    _ => format!("must be in 1..={}", limits::MAX_ARRAY_SIZE),
                },
            );
        }
        let slices_limit = if dim.is_cube() {
            limits::MAX_ARRAY_SIZE / 6 * 6
        } else {
            limits::MAX_ARRAY_SIZE
        };
        if self.array_size > slices_limit {
            return bad(
                "array_size",
                self.array_size,
                format!("exceeds D3D12's limit of {slices_limit}"),
            );
        }
        let full = self.full_mip_count();
        if self.mip_levels == 0 || self.mip_levels > full.min(limits::MAX_MIP_LEVELS) {
            return bad(
                "mip_levels",
                self.mip_levels,
                format!(
                    "must be in 1..={} for this size",
                    full.min(limits::MAX_MIP_LEVELS)
                ),
            );
        }
        let total = self.total_bytes();
        if total > limits::MAX_BYTES {
            return Err(TextureError::TooLarge { bytes: total });
        }
        Ok(())
    }
}

/// A shader-resource view (SRV) of a texture: which mips and slices sampling sees (SPEC §1.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureView {
    /// The resource mip that is view LOD 0 (`MostDetailedMip`).
    pub most_detailed_mip: u32,
    /// Number of mips in the view; `None` means all from `most_detailed_mip` on (D3D12's −1).
    pub mip_levels: Option<u32>,
    /// First 2D slice of the view (`FirstArraySlice`, or `First2DArrayFace` for cube arrays).
    pub first_array_slice: u32,
    /// Number of array elements: slices for 1D/2D arrays, cubes for cube arrays; `None` = all
    /// from `first_array_slice` on.
    pub array_size: Option<u32>,
    /// `ResourceMinLODClamp`, in resource mip space (R58).
    pub resource_min_lod_clamp: f32,
}

impl Default for TextureView {
    fn default() -> Self {
        TextureView {
            most_detailed_mip: 0,
            mip_levels: None,
            first_array_slice: 0,
            array_size: None,
            resource_min_lod_clamp: 0.0,
        }
    }
}

/// A view after validation against its texture: every count resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResolvedView {
    /// The resource mip that is view LOD 0.
    pub most_detailed_mip: u32,
    /// Number of mips in the view (≥ 1).
    pub mip_count: u32,
    /// First 2D slice.
    pub first_slice: u32,
    /// Number of array elements (slices, or cubes for cube dimensions).
    pub element_count: u32,
    /// `ResourceMinLODClamp` (resource mip space).
    pub resource_min_lod_clamp: f32,
}

/// Errors of building a texture or a view.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TextureError {
    /// A field of the description is out of range.
    #[error("texture {field} = {value}: {reason} (SPEC §1.2)")]
    InvalidDesc {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u32,
        /// What is wrong.
        reason: String,
    },
    /// The data does not have the length the description needs.
    #[error("texture data has {actual} {unit}, but {what} needs {expected}")]
    DataLength {
        /// What was being filled (e.g. "mip 1 of slice 0").
        what: String,
        /// Needed length.
        expected: usize,
        /// Given length.
        actual: usize,
        /// "bytes" or "values".
        unit: &'static str,
    },
    /// The wrong number of subresources.
    #[error("texture has {actual} subresources, but mip_levels × array_size = {expected}")]
    SubresourceCount {
        /// mip_levels × array_size.
        expected: usize,
        /// Given.
        actual: usize,
    },
    /// The texture would be larger than penumbra allocates.
    #[error(
        "texture needs {bytes} bytes, more than the {} penumbra allocates for one texture",
        limits::MAX_BYTES
    )]
    TooLarge {
        /// Bytes needed.
        bytes: u64,
    },
    /// The memory could not be allocated.
    #[error("could not allocate {bytes} bytes for the texture")]
    OutOfMemory {
        /// Bytes requested.
        bytes: u64,
    },
    /// The [deadline](crate::deadline) in force passed before the mips were generated.
    #[error("stopped: the deadline passed before the texture was made")]
    Interrupted,
    /// A view field is out of range for this texture.
    #[error("view {field} = {value}: {reason}")]
    InvalidView {
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// An unknown dimension name.
    #[error(
        "unknown texture dimension `{0}`: expected 1D, 1DArray, 2D, 2DArray, 3D, Cube or CubeArray"
    )]
    UnknownDimension(String),
    /// A texel address outside the texture.
    #[error("texel (mip {mip}, slice {slice}, {x}, {y}, {z}) is outside the texture")]
    OutOfBounds {
        /// Mip.
        mip: u32,
        /// Slice.
        slice: u32,
        /// x.
        x: u32,
        /// y.
        y: u32,
        /// z.
        z: u32,
    },
}

/// How [`Texture::generate_mips`] reduces a 2×2(×2) footprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MipFilter {
    /// The average (a box filter), for colour and ordinary maps.
    Average,
    /// The minimum, for conservative hierarchical depth (reversed-Z or "nearest occluder").
    Min,
    /// The maximum, for conservative hierarchical depth ("farthest occluder").
    Max,
}

#[derive(Clone, Debug)]
struct Storage {
    desc: TextureDesc,
    data: Vec<u8>,
    /// Byte offset of each subresource, D3D12 order `mip + slice·mip_levels`.
    offsets: Vec<usize>,
}

/// An immutable texture with its view. Clone it freely: the storage is shared.
#[derive(Clone, Debug)]
pub struct Texture {
    storage: Arc<Storage>,
    view: ResolvedView,
}

fn allocate(desc: &TextureDesc) -> Result<(Vec<u8>, Vec<usize>), TextureError> {
    desc.validate()?;
    let total = desc.total_bytes();
    let mut data = Vec::new();
    data.try_reserve_exact(total as usize)
        .map_err(|_| TextureError::OutOfMemory { bytes: total })?;
    filled_in_steps(&mut data, total as usize, |d, n| d.resize(d.len() + n, 0))?;
    let (_, offsets) = layout(desc);
    Ok((data, offsets))
}

/// Bytes written between two deadline checks when a large texture is zeroed or copied (a
/// gigabyte takes about a second).
const FILL_STEP: usize = 16 << 20;

/// Grows `data` (already reserved) to `total` bytes by `grow(data, n)` steps of at most
/// [`FILL_STEP`], checking the [deadline](crate::deadline) between steps.
fn filled_in_steps(
    data: &mut Vec<u8>,
    total: usize,
    mut grow: impl FnMut(&mut Vec<u8>, usize),
) -> Result<(), TextureError> {
    while data.len() < total {
        if crate::deadline::expired() {
            return Err(TextureError::Interrupted);
        }
        let n = FILL_STEP.min(total - data.len());
        grow(data, n);
    }
    Ok(())
}

impl Texture {
    /// A texture from packed bytes holding every subresource in D3D12 order
    /// (`mip + slice·mip_levels`), each tightly packed, rows first.
    pub fn new(desc: TextureDesc, data: Vec<u8>) -> Result<Texture, TextureError> {
        desc.validate()?;
        let expected = desc.total_bytes() as usize;
        if data.len() != expected {
            return Err(TextureError::DataLength {
                what: format!(
                    "a {} {}×{}×{} texture with {} mips and {} slices",
                    desc.format,
                    desc.width,
                    desc.height,
                    desc.depth,
                    desc.mip_levels,
                    desc.array_size
                ),
                expected,
                actual: data.len(),
                unit: "bytes",
            });
        }
        let (_, offsets) = layout(&desc);
        Ok(Texture::from_storage(Storage {
            desc,
            data,
            offsets,
        }))
    }

    /// A texture filled with zero bytes.
    pub fn zeroed(desc: TextureDesc) -> Result<Texture, TextureError> {
        let (data, offsets) = allocate(&desc)?;
        Ok(Texture::from_storage(Storage {
            desc,
            data,
            offsets,
        }))
    }

    /// A texture of zero bytes whose memory is left to the allocator's zeroed pages, untouched
    /// until written (a map drawn tile by tile pays only for the tiles it draws).
    pub(crate) fn zeroed_lazy(desc: TextureDesc) -> Result<Texture, TextureError> {
        desc.validate()?;
        let total = desc.total_bytes();
        let total =
            usize::try_from(total).map_err(|_| TextureError::OutOfMemory { bytes: total })?;
        let (_, offsets) = layout(&desc);
        let data = crate::zeroed::zeroed_vec(total).ok_or(TextureError::OutOfMemory {
            bytes: total as u64,
        })?;
        Ok(Texture::from_storage(Storage {
            desc,
            data,
            offsets,
        }))
    }

    /// The bytes of one subresource to write (copied first if another texture shares them).
    pub(crate) fn subresource_mut(&mut self, mip: u32, slice: u32) -> &mut [u8] {
        let storage = Arc::make_mut(&mut self.storage);
        let i = (mip + slice * storage.desc.mip_levels) as usize;
        let start = storage.offsets[i];
        let len = storage.desc.subresource_bytes(mip);
        &mut storage.data[start..start + len]
    }

    /// A texture from one byte vector per subresource, in D3D12 order.
    pub fn from_subresources(
        desc: TextureDesc,
        subresources: &[&[u8]],
    ) -> Result<Texture, TextureError> {
        desc.validate()?;
        let expected = (desc.mip_levels * desc.array_size) as usize;
        if subresources.len() != expected {
            return Err(TextureError::SubresourceCount {
                expected,
                actual: subresources.len(),
            });
        }
        // Every length is checked before anything is allocated.
        for (i, sub) in subresources.iter().enumerate() {
            let mip = i as u32 % desc.mip_levels;
            let need = desc.subresource_bytes(mip);
            if sub.len() != need {
                return Err(TextureError::DataLength {
                    what: format!("mip {mip} of slice {}", i as u32 / desc.mip_levels),
                    expected: need,
                    actual: sub.len(),
                    unit: "bytes",
                });
            }
        }
        let (mut data, offsets) = allocate(&desc)?;
        for (i, sub) in subresources.iter().enumerate() {
            data[offsets[i]..offsets[i] + sub.len()].copy_from_slice(sub);
        }
        Ok(Texture::from_storage(Storage {
            desc,
            data,
            offsets,
        }))
    }

    /// A texture from float component values for every subresource (D3D12 order, `channels()`
    /// values per texel), each encoded into the format (UNORM with R3's rounding, f16 to nearest).
    pub fn from_f32(desc: TextureDesc, values: &[f32]) -> Result<Texture, TextureError> {
        // The length is checked before anything is allocated.
        desc.validate()?;
        let f = desc.format;
        let ch = f.channels();
        let texels = (desc.total_bytes() / f.bytes_per_texel() as u64) as usize;
        if values.len() != texels * ch {
            return Err(TextureError::DataLength {
                what: format!("{texels} texels of {f}"),
                expected: texels * ch,
                actual: values.len(),
                unit: "values",
            });
        }
        let (mut data, offsets) = allocate(&desc)?;
        for (t, chunk) in data.chunks_exact_mut(f.bytes_per_texel()).enumerate() {
            for c in 0..ch {
                f.store_raw_component(chunk, c, f.encode_component(values[t * ch + c]));
            }
        }
        Ok(Texture::from_storage(Storage {
            desc,
            data,
            offsets,
        }))
    }

    /// A texture whose mip 0 of every slice comes from `level0` (float values, `channels()` per
    /// texel, slices one after another) and whose further mips are generated with `filter`.
    pub fn from_level0_f32(
        desc: TextureDesc,
        level0: &[f32],
        filter: MipFilter,
    ) -> Result<Texture, TextureError> {
        // The length is checked before anything is allocated.
        desc.validate()?;
        let f = desc.format;
        let ch = f.channels();
        let per_slice = desc.subresource_bytes(0) / f.bytes_per_texel();
        if level0.len() != per_slice * ch * desc.array_size as usize {
            return Err(TextureError::DataLength {
                what: format!("mip 0 of {} slices of {f}", desc.array_size),
                expected: per_slice * ch * desc.array_size as usize,
                actual: level0.len(),
                unit: "values",
            });
        }
        let (mut data, offsets) = allocate(&desc)?;
        for slice in 0..desc.array_size as usize {
            let start = offsets[slice * desc.mip_levels as usize];
            let sub = &mut data[start..start + desc.subresource_bytes(0)];
            for (t, chunk) in sub.chunks_exact_mut(f.bytes_per_texel()).enumerate() {
                for c in 0..ch {
                    let v = level0[(slice * per_slice + t) * ch + c];
                    f.store_raw_component(chunk, c, f.encode_component(v));
                }
            }
        }
        let mut storage = Storage {
            desc,
            data,
            offsets,
        };
        generate_mips_in_place(&mut storage, filter)?;
        Ok(Texture::from_storage(storage))
    }

    /// A copy of this texture with mips 1.. regenerated from mip 0 with `filter`
    /// (the view is kept).
    ///
    /// # Errors
    /// [`TextureError::OutOfMemory`] when the copy cannot be allocated;
    /// [`TextureError::Interrupted`] when the [deadline](crate::deadline) in force passes first.
    pub fn generate_mips(&self, filter: MipFilter) -> Result<Texture, TextureError> {
        let src = &self.storage.data;
        let mut data = Vec::new();
        data.try_reserve_exact(src.len())
            .map_err(|_| TextureError::OutOfMemory {
                bytes: src.len() as u64,
            })?;
        filled_in_steps(&mut data, src.len(), |d, n| {
            let at = d.len();
            d.extend_from_slice(&src[at..at + n]);
        })?;
        let mut storage = Storage {
            desc: self.storage.desc,
            data,
            offsets: self.storage.offsets.clone(),
        };
        generate_mips_in_place(&mut storage, filter)?;
        Ok(Texture {
            storage: Arc::new(storage),
            view: self.view,
        })
    }

    fn from_storage(storage: Storage) -> Texture {
        let desc = storage.desc;
        let view = ResolvedView {
            most_detailed_mip: 0,
            mip_count: desc.mip_levels,
            first_slice: 0,
            element_count: if desc.dimension.is_cube() {
                desc.array_size / 6
            } else {
                desc.array_size
            },
            resource_min_lod_clamp: 0.0,
        };
        Texture {
            storage: Arc::new(storage),
            view,
        }
    }

    /// The same storage seen through another view (validated against the resource).
    pub fn with_view(&self, view: TextureView) -> Result<Texture, TextureError> {
        let desc = &self.storage.desc;
        let bad = |field: &'static str, value: String, reason: String| {
            Err(TextureError::InvalidView {
                field,
                value,
                reason,
            })
        };
        if view.most_detailed_mip >= desc.mip_levels {
            return bad(
                "most_detailed_mip",
                view.most_detailed_mip.to_string(),
                format!("the texture has {} mips", desc.mip_levels),
            );
        }
        let left = desc.mip_levels - view.most_detailed_mip;
        let mip_count = view.mip_levels.unwrap_or(left);
        if mip_count == 0 || mip_count > left {
            return bad(
                "mip_levels",
                mip_count.to_string(),
                format!("must be in 1..={left} from mip {}", view.most_detailed_mip),
            );
        }
        if view.resource_min_lod_clamp.is_nan() {
            return bad(
                "resource_min_lod_clamp",
                "NaN".into(),
                "must be a number".into(),
            );
        }
        let per = if desc.dimension.is_cube() { 6 } else { 1 };
        if view.first_array_slice >= desc.array_size
            || (desc.dimension == Dimension::TextureCube && view.first_array_slice != 0)
        {
            return bad(
                "first_array_slice",
                view.first_array_slice.to_string(),
                format!("the texture has {} slices", desc.array_size),
            );
        }
        let slices_left = desc.array_size - view.first_array_slice;
        let element_count = view.array_size.unwrap_or(slices_left / per);
        if element_count == 0 || element_count * per > slices_left {
            return bad(
                "array_size",
                element_count.to_string(),
                format!(
                    "only {} {} remain from slice {}",
                    slices_left / per,
                    if per == 6 { "cubes" } else { "slices" },
                    view.first_array_slice
                ),
            );
        }
        if !desc.dimension.is_array() && element_count != 1 {
            return bad(
                "array_size",
                element_count.to_string(),
                format!("a {} view has one element", desc.dimension),
            );
        }
        Ok(Texture {
            storage: Arc::clone(&self.storage),
            view: ResolvedView {
                most_detailed_mip: view.most_detailed_mip,
                mip_count,
                first_slice: view.first_array_slice,
                element_count,
                resource_min_lod_clamp: view.resource_min_lod_clamp,
            },
        })
    }

    /// The resource description.
    #[must_use]
    #[inline]
    pub fn desc(&self) -> &TextureDesc {
        &self.storage.desc
    }

    /// The resolved view sampling goes through.
    #[must_use]
    #[inline]
    pub fn view(&self) -> &ResolvedView {
        &self.view
    }

    /// The texel format.
    #[must_use]
    #[inline]
    pub fn format(&self) -> Format {
        self.storage.desc.format
    }

    /// The dimension.
    #[must_use]
    #[inline]
    pub fn dimension(&self) -> Dimension {
        self.storage.desc.dimension
    }

    /// Size of resource mip `mip`.
    #[must_use]
    #[inline]
    pub fn level_size(&self, mip: u32) -> [u32; 3] {
        self.storage.desc.level_size(mip)
    }

    /// All texel bytes of all subresources.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.storage.data
    }

    /// The packed bytes of one subresource (resource mip and slice).
    #[must_use]
    #[inline]
    pub fn subresource(&self, mip: u32, slice: u32) -> &[u8] {
        let desc = &self.storage.desc;
        let i = (mip + slice * desc.mip_levels) as usize;
        let start = self.storage.offsets[i];
        &self.storage.data[start..start + desc.subresource_bytes(mip)]
    }

    /// Loads one texel as RGBA floats (R1, R2, R6), resource coordinates.
    ///
    /// # Panics
    /// If the address is outside the texture; see [`Texture::try_load`].
    #[must_use]
    pub fn load(&self, mip: u32, slice: u32, [x, y, z]: [u32; 3]) -> [f32; 4] {
        self.try_load(mip, slice, [x, y, z])
            .expect("texel address outside the texture")
    }

    /// Loads one texel as RGBA floats, or an error when the address is outside the texture.
    pub fn try_load(
        &self,
        mip: u32,
        slice: u32,
        [x, y, z]: [u32; 3],
    ) -> Result<[f32; 4], TextureError> {
        let desc = &self.storage.desc;
        let [w, h, d] = desc.level_size(mip);
        if mip >= desc.mip_levels || slice >= desc.array_size || x >= w || y >= h || z >= d {
            return Err(TextureError::OutOfBounds {
                mip,
                slice,
                x,
                y,
                z,
            });
        }
        let bpt = desc.format.bytes_per_texel();
        let at = ((z as usize * h as usize + y as usize) * w as usize + x as usize) * bpt;
        Ok(desc
            .format
            .load(&self.subresource(mip, slice)[at..at + bpt]))
    }

    /// A copy of this texture with one texel replaced (encoded like [`Texture::from_f32`]).
    pub fn with_texel(
        &self,
        mip: u32,
        slice: u32,
        [x, y, z]: [u32; 3],
        value: [f32; 4],
    ) -> Result<Texture, TextureError> {
        let desc = self.storage.desc;
        let [w, h, d] = desc.level_size(mip);
        if mip >= desc.mip_levels || slice >= desc.array_size || x >= w || y >= h || z >= d {
            return Err(TextureError::OutOfBounds {
                mip,
                slice,
                x,
                y,
                z,
            });
        }
        let mut storage = Storage {
            desc,
            data: self.storage.data.clone(),
            offsets: self.storage.offsets.clone(),
        };
        let bpt = desc.format.bytes_per_texel();
        let at = storage.offsets[(mip + slice * desc.mip_levels) as usize]
            + ((z as usize * h as usize + y as usize) * w as usize + x as usize) * bpt;
        desc.format.store(value, &mut storage.data[at..at + bpt]);
        Ok(Texture {
            storage: Arc::new(storage),
            view: self.view,
        })
    }
}

fn layout(desc: &TextureDesc) -> (usize, Vec<usize>) {
    let mut offsets = Vec::with_capacity((desc.mip_levels * desc.array_size) as usize);
    let mut at = 0;
    for _slice in 0..desc.array_size {
        for mip in 0..desc.mip_levels {
            offsets.push(at);
            at += desc.subresource_bytes(mip);
        }
    }
    (at, offsets)
}

/// The source texels `[lo, hi)` a destination texel `x` of a `dst`-wide level covers in a
/// `src`-wide level. Footprints cover every source texel (odd sizes overlap by one), so min/max
/// chains stay conservative.
fn footprint(x: u32, src: u32, dst: u32) -> (u32, u32) {
    let lo = (u64::from(x) * u64::from(src) / u64::from(dst)) as u32;
    let hi = (u64::from(x + 1) * u64::from(src)).div_ceil(u64::from(dst)) as u32;
    (lo, hi.max(lo + 1).min(src))
}

/// Fills mips 1.. of every slice from the mip above; checks the deadline once per row.
fn generate_mips_in_place(storage: &mut Storage, filter: MipFilter) -> Result<(), TextureError> {
    let desc = storage.desc;
    let f = desc.format;
    let bpt = f.bytes_per_texel();
    let ch = f.channels();
    for slice in 0..desc.array_size {
        for mip in 1..desc.mip_levels {
            let [sw, sh, sd] = desc.level_size(mip - 1);
            let [dw, dh, dd] = desc.level_size(mip);
            let src_at = storage.offsets[(mip - 1 + slice * desc.mip_levels) as usize];
            let dst_at = storage.offsets[(mip + slice * desc.mip_levels) as usize];
            let (head, tail) = storage.data.split_at_mut(dst_at);
            let src = &head[src_at..];
            for z in 0..dd {
                let (z0, z1) = footprint(z, sd, dd);
                for y in 0..dh {
                    if crate::deadline::expired() {
                        return Err(TextureError::Interrupted);
                    }
                    let (y0, y1) = footprint(y, sh, dh);
                    for x in 0..dw {
                        let (x0, x1) = footprint(x, sw, dw);
                        let mut acc = [0f64; 4];
                        let mut ext = [f32::NAN; 4];
                        let mut n = 0u32;
                        for sz in z0..z1 {
                            for sy in y0..y1 {
                                for sx in x0..x1 {
                                    let at = ((sz * sh + sy) * sw + sx) as usize * bpt;
                                    let v = f.load(&src[at..at + bpt]);
                                    for c in 0..ch {
                                        acc[c] += f64::from(v[c]);
                                        ext[c] = match filter {
                                            MipFilter::Min => ext[c].min(v[c]),
                                            _ => ext[c].max(v[c]),
                                        };
                                    }
                                    n += 1;
                                }
                            }
                        }
                        let mut out = [0.0, 0.0, 0.0, 1.0];
                        for c in 0..ch {
                            out[c] = match filter {
                                MipFilter::Average => (acc[c] / f64::from(n)) as f32,
                                MipFilter::Min | MipFilter::Max => ext[c],
                            };
                        }
                        let at = ((z * dh + y) * dw + x) as usize * bpt;
                        f.store(out, &mut tail[at..at + bpt]);
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d16_texels_are_stored_in_two_bytes() {
        let desc = TextureDesc::new_2d(Format::D16Unorm, 3, 2);
        assert_eq!(desc.total_bytes(), 12);
        let t = Texture::new(desc, vec![0; 12]).unwrap();
        assert_eq!(t.subresource(0, 0).len(), 12);
    }

    #[test]
    fn wrong_data_length_is_an_error() {
        let desc = TextureDesc::new_2d(Format::R32Float, 2, 2);
        assert!(matches!(
            Texture::new(desc, vec![0; 15]),
            Err(TextureError::DataLength {
                expected: 16,
                actual: 15,
                ..
            })
        ));
    }

    #[test]
    fn zero_sizes_and_too_many_mips_are_errors() {
        assert!(
            TextureDesc::new_2d(Format::R8Unorm, 0, 4)
                .validate()
                .is_err()
        );
        assert!(
            TextureDesc::new_2d(Format::R8Unorm, 4, 4)
                .with_mip_levels(4)
                .validate()
                .is_err()
        );
        assert!(
            TextureDesc::new_2d(Format::R8Unorm, 4, 4)
                .with_mip_levels(3)
                .validate()
                .is_ok()
        );
        assert!(
            TextureDesc::new_2d(Format::R8Unorm, 16385, 1)
                .validate()
                .is_err()
        );
        let d3 = TextureDesc::new(Dimension::Texture3D, Format::R8Unorm, [2049, 1, 1], 1);
        assert!(d3.validate().is_err());
        let cube = TextureDesc::new(Dimension::TextureCube, Format::R8Unorm, [4, 4, 1], 5);
        assert!(cube.validate().is_err());
    }

    #[test]
    fn huge_textures_are_refused_before_allocation() {
        let desc = TextureDesc::new(
            Dimension::Texture2DArray,
            Format::R32G32B32A32Float,
            [16384, 16384, 1],
            2048,
        );
        assert!(matches!(
            Texture::zeroed(desc),
            Err(TextureError::TooLarge { .. })
        ));
    }

    #[test]
    fn subresources_follow_d3d12_order() {
        let desc = TextureDesc::new(Dimension::Texture2DArray, Format::R8Unorm, [2, 2, 1], 2)
            .with_mip_levels(2);
        let t =
            Texture::from_subresources(desc, &[&[1, 1, 1, 1], &[2], &[3, 3, 3, 3], &[4]]).unwrap();
        assert_eq!(t.subresource(1, 0), &[2]);
        assert_eq!(t.subresource(0, 1), &[3, 3, 3, 3]);
        assert_eq!(t.subresource(1, 1), &[4]);
    }

    #[test]
    fn min_max_chains_are_conservative_for_odd_sizes() {
        let desc = TextureDesc::new_2d(Format::R32Float, 5, 1).with_mip_levels(3);
        let l0 = [0.5, 0.4, 0.3, 0.2, 0.1];
        let tmin = Texture::from_level0_f32(desc, &l0, MipFilter::Min).unwrap();
        let tmax = Texture::from_level0_f32(desc, &l0, MipFilter::Max).unwrap();
        assert_eq!(tmin.load(2, 0, [0, 0, 0])[0], 0.1);
        assert_eq!(tmax.load(2, 0, [0, 0, 0])[0], 0.5);
        let tavg = Texture::from_level0_f32(
            TextureDesc::new_2d(Format::R32Float, 2, 2).with_mip_levels(2),
            &[0.0, 1.0, 1.0, 0.0],
            MipFilter::Average,
        )
        .unwrap();
        assert_eq!(tavg.load(1, 0, [0, 0, 0])[0], 0.5);
    }

    #[test]
    fn views_are_checked_against_the_resource() {
        let desc = TextureDesc::new(Dimension::Texture2DArray, Format::R8Unorm, [4, 4, 1], 3)
            .with_mip_levels(3);
        let t = Texture::zeroed(desc).unwrap();
        let v = t
            .with_view(TextureView {
                most_detailed_mip: 1,
                first_array_slice: 1,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(v.view().mip_count, 2);
        assert_eq!(v.view().element_count, 2);
        assert!(
            t.with_view(TextureView {
                most_detailed_mip: 3,
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            t.with_view(TextureView {
                mip_levels: Some(4),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            t.with_view(TextureView {
                first_array_slice: 1,
                array_size: Some(3),
                ..Default::default()
            })
            .is_err()
        );
    }
}
