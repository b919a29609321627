//! # penumbra_core — Direct3D 12 texture sampling on the CPU
//!
//! A scalar reference implementation of D3D12 sampling that follows the project's rule book
//! (`SPEC.md`, rules R1–R120, themselves paraphrased from the D3D11.3 Functional Spec and the
//! D3D12 headers) rule by rule.
//!
//! * [`desc`] — the D3D12 vocabulary: [`Filter`], [`AddressMode`], [`ComparisonFunc`],
//!   [`SamplerDesc`], [`StaticSamplerDesc`], [`StaticSamplerTable`].
//! * [`format`](mod@format) — texel formats and exact conversions.
//! * [`texture`] — textures, mip chains and views.
//! * [`sample`] — the [`Sampler`] and every sampling operation.
//! * [`msad4`] — HLSL's `msad4` (R113–R118) and masked-SAD template matching built on it.
//! * `picture` (the `png` feature) — pictures to look at: depth maps, heat maps, top-down maps
//!   of a level, and PNG in and out.
//! * [`raster`] — a depth-only triangle rasterizer with D3D12's rules, for baking depth maps.
//! * [`shadow`] — lights, shadow maps, lit fraction, exposure and line of sight.
//! * [`gltf`] — glTF 2.0 levels: meshes and node transforms read from `.glb`/`.gltf`, and
//!   written as `.glb`.
//! * [`profile`] — Tracy hooks that compile to nothing without the `tracy` feature.
//! * [`deadline`] — cooperative deadlines that stop long calls early.
//! * [`files`] — atomic writes and bounded, sandbox-safe reads.
#![warn(missing_docs)]

pub mod cpu;
pub mod deadline;
pub mod desc;
pub mod files;
pub mod format;
pub mod gltf;
pub mod msad4;
#[cfg(feature = "png")]
pub mod picture;
mod pool;
pub mod profile;
pub mod raster;
pub mod sample;
pub mod shadow;
pub mod texture;
mod zeroed;

pub use desc::{
    AddressMode, ComparisonFunc, DescError, Filter, FilterType, ParseEnumError, ReductionType,
    SamplerDesc, SamplerFlags, ShaderVisibility, StaticBorderColor, StaticSamplerDesc,
    StaticSamplerTable, TableError,
};
pub use format::Format;
pub use pool::set_helper_watch;
pub use sample::{Coord, LodMode, Offset, SampleArgs, SampleError, Sampler, SamplerOptions};
pub use texture::{Dimension, Texture, TextureDesc, TextureError, TextureView};
