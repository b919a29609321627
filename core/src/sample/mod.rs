//! The sampler engine: every D3D12 sampling operation, on the CPU, rule by rule.
//!
//! One scalar reference path follows SPEC.md (D3D11.3 FS chapter 7.18 and 22.4) step by step in
//! the order of R23: array slice → LOD → mip selection → per level: range reduction, fixed-point
//! position, offsets, address modes → fetch (or border) → compare / weight / min-max → blend.
//!
//! ```
//! use penumbra_core::{ComparisonFunc, Filter, Format, SamplerDesc, Sampler, Texture, TextureDesc};
//! // SPEC R80's PCF example: a 2×2 depth map, bilinear comparison at its centre.
//! let tex = Texture::from_f32(TextureDesc::new_2d(Format::R32Float, 2, 2), &[0.3, 0.6, 0.6, 0.9]).unwrap();
//! let sampler = Sampler::new(SamplerDesc::comparison(
//!     Filter::ComparisonMinMagLinearMipPoint,
//!     ComparisonFunc::LessEqual,
//! )).unwrap();
//! let lit = sampler.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, [0, 0]).unwrap();
//! assert_eq!(lit, 0.75);
//! ```

// Internals of the reference path, public for test and fuzz access only: not a stable API.
#[doc(hidden)]
pub mod accum;
#[doc(hidden)]
pub mod address;
pub mod batch;
#[doc(hidden)]
pub mod combine;
mod cube;
pub mod lod;
pub mod quad;

mod args;
mod error;
mod filter;
mod gather;
mod ops;
mod validate;

pub use args::{Coord, Offset, SampleArgs};
pub use error::SampleError;
pub(crate) use error::validated;
use gather::Tap;
pub use lod::LodMode;

use crate::desc::{DescError, SamplerDesc};
use crate::format::Format;
use crate::texture::{Dimension, Texture};

/// The cube face a direction selects (R98: the largest component, ties Z, then Y, then X; 0..6 in
/// the order +X, −X, +Y, −Y, +Z, −Z), or `None` for a zero or NaN direction.
#[must_use]
pub fn cube_face(direction: [f32; 3]) -> Option<u32> {
    cube::select_face(direction)
}

pub(crate) use cube::face_coord;
pub(crate) use filter::array_slice;

/// The world axes along which a cube face's texel x grows (`right`, +sc of R99) and its texel y
/// shrinks (`up`, −tc of R99).
#[must_use]
pub fn cube_face_axes(face: u32) -> (glam::Vec3, glam::Vec3) {
    use glam::Vec3;
    match face {
        0 => (Vec3::NEG_Z, Vec3::Y),
        1 => (Vec3::Z, Vec3::Y),
        2 => (Vec3::X, Vec3::NEG_Z),
        3 => (Vec3::X, Vec3::Z),
        4 => (Vec3::X, Vec3::Y),
        _ => (Vec3::NEG_X, Vec3::Y),
    }
}

/// Behaviour switches for what D3D leaves open or outside its rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SamplerOptions {
    /// `[EXT]` allow comparison sampling of formats D3D does not require (R77, R86): other UNORM
    /// formats quantize the reference with their width, half formats round it toward zero.
    pub extended_comparison_formats: bool,
    /// R41 lenient offsets (SM 6.7 programmable offsets): only the low 4 bits count,
    /// sign-extended. Off: offsets outside [−8, 7] are an error.
    pub lenient_offsets: bool,
    /// R26 legacy point rounding: `rne(s·256) >> 8` instead of `floor(s)`.
    pub legacy_point_rounding: bool,
}

/// A validated D3D12 sampler, ready to sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    desc: SamplerDesc,
    options: SamplerOptions,
    /// R10: `clamp(MaxAnisotropy, 1, 16)`.
    max_aniso: u32,
}

/// Where the taps of one sample come from.
struct Source<'a> {
    tex: &'a Texture,
    format: Format,
    dim: Dimension,
    /// The resource slice (for cubes: the first face of the selected cube).
    slice: u32,
}

impl Sampler {
    /// Validates `desc` (R7–R18) and builds a sampler with default options.
    pub fn new(desc: SamplerDesc) -> Result<Sampler, DescError> {
        Sampler::with_options(desc, SamplerOptions::default())
    }

    /// Validates `desc` and builds a sampler with `options`.
    pub fn with_options(desc: SamplerDesc, options: SamplerOptions) -> Result<Sampler, DescError> {
        desc.validate()?;
        Ok(Sampler {
            desc,
            options,
            max_aniso: desc.max_anisotropy.clamp(1, 16),
        })
    }

    /// The description this sampler was built from.
    #[must_use]
    #[inline]
    pub fn desc(&self) -> &SamplerDesc {
        &self.desc
    }

    /// The options.
    #[must_use]
    #[inline]
    pub fn options(&self) -> &SamplerOptions {
        &self.options
    }
}
