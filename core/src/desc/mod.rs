//! Sampler descriptions as D3D12 spells them, validated once (SPEC §2.1, §2.2, R119).
//!
//! * [`Filter`] and its bit fields ([`FilterType`], [`ReductionType`], [`filter::raw`] for the
//!   d3d12.h macros) — R7, R19–R22.
//! * [`AddressMode`], [`ComparisonFunc`], [`StaticBorderColor`], [`ShaderVisibility`] — R8, R11,
//!   R14, R79, R119.
//! * [`SamplerDesc`] (heap sampler) and [`StaticSamplerDesc`] (root-signature sampler), with
//!   `validate` — R9–R18.
//! * [`StaticSamplerTable`] — a root signature's static samplers, looked up by binding — R119.
//!
//! Every enum prints and parses its D3D12 name (prefix optional) and serializes as that name;
//! it also deserializes from the raw number. Errors name the D3D12 field and the SPEC rule.
//!
//! ```
//! use penumbra_core::{ComparisonFunc, Filter, SamplerDesc, ShaderVisibility, StaticSamplerTable};
//!
//! // A PCF shadow sampler for heap use.
//! let shadow = SamplerDesc::comparison(Filter::ComparisonMinMagLinearMipPoint, ComparisonFunc::LessEqual);
//! shadow.validate()?;
//!
//! // The same as a static sampler, from RON.
//! let table = StaticSamplerTable::from_ron(
//!     r#"(samplers: {
//!         "shadow": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: LESS_EQUAL,
//!                    AddressU: CLAMP, AddressV: CLAMP, ShaderRegister: 2, RegisterSpace: 3,
//!                    ShaderVisibility: PIXEL),
//!     })"#,
//! )?;
//! let found = table.lookup(3, 2, ShaderVisibility::Pixel).unwrap();
//! assert_eq!(found.filter, Filter::ComparisonMinMagLinearMipPoint);
//! assert!(table.lookup(3, 2, ShaderVisibility::Vertex).is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod enums;
mod error;
pub mod filter;
mod sampler;
mod table;

pub use enums::{AddressMode, ComparisonFunc, ShaderVisibility, StaticBorderColor};
pub use error::{DescError, ParseEnumError, TableError};
pub use filter::{Filter, FilterType, ReductionType};
pub use sampler::{
    DRIVER_RESERVED_REGISTER_SPACE_START, FLOAT32_MAX, MAX_LIVE_STATIC_SAMPLERS, MAX_MAXANISOTROPY,
    MIP_LOD_BIAS_MAX, MIP_LOD_BIAS_MIN, SamplerDesc, SamplerFlags, StaticSamplerDesc,
};
pub use table::StaticSamplerTable;
