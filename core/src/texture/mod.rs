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

mod description;
mod mips;
mod view;

use std::sync::Arc;

use crate::format::Format;

pub use description::{Dimension, TextureDesc};
pub use mips::MipFilter;
pub use view::{ResolvedView, TextureView};

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
    /// A texture of `desc` over `data`, a buffer of its size whose contents are left as they
    /// are (a recycled buffer: the caller writes every byte it reads); `None` when the size is
    /// not the description's.
    pub(crate) fn over_recycled(desc: TextureDesc, data: Vec<u8>) -> Option<Texture> {
        desc.validate().ok()?;
        if data.len() as u64 != desc.total_bytes() {
            return None;
        }
        let (_, offsets) = layout(&desc);
        Some(Texture::from_storage(Storage {
            desc,
            data,
            offsets,
        }))
    }

    /// The texture's bytes, when no clone shares them.
    pub(crate) fn into_bytes(self) -> Option<Vec<u8>> {
        Arc::try_unwrap(self.storage).ok().map(|s| s.data)
    }

    /// Where mip `mip` of every array slice starts and how long it is, from one pointer to the
    /// whole buffer (so that no slice's pointer is made invalid by taking the next one), for
    /// writers that fill disjoint parts of several slices from several threads.
    pub(crate) fn subresources_raw(&mut self, mip: u32) -> Vec<(*mut u8, usize)> {
        let storage = Arc::make_mut(&mut self.storage);
        let len = storage.desc.subresource_bytes(mip);
        let base = storage.data.as_mut_ptr();
        (0..storage.desc.array_size)
            .map(|slice| {
                let start = storage.offsets[(mip + slice * storage.desc.mip_levels) as usize];
                assert!(
                    start + len <= storage.data.len(),
                    "subresource out of the buffer"
                );
                // SAFETY: in bounds (checked above); no reference into the buffer is made.
                (unsafe { base.add(start) }, len)
            })
            .collect()
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

#[cfg(test)]
mod tests;
