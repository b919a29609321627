//! Typed errors of the descriptor layer: one for a bad field ([`DescError`]), one for text that
//! names no enum value ([`ParseEnumError`]) and one for a whole static-sampler set ([`TableError`]).

use super::enums::ShaderVisibility;

/// A sampler-description field that breaks a rule of SPEC §2.1/§2.2.
///
/// Names the field as D3D12 spells it (`"MipLODBias"`), the offending value, the SPEC rule and the
/// public source the rule comes from:
///
/// ```
/// use penumbra_core::{SamplerDesc, Filter};
/// let desc = SamplerDesc { mip_lod_bias: 20.0, ..SamplerDesc::new(Filter::MinMagMipLinear) };
/// let err = desc.validate().unwrap_err();
/// assert_eq!(err.field, "MipLODBias");
/// assert_eq!(err.rule, "R9");
/// assert!(err.to_string().starts_with("MipLODBias = 20: "));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value}: {reason} (SPEC {rule}; {cite})")]
#[non_exhaustive]
pub struct DescError {
    /// The field, with its D3D12 name (`"Filter"`, `"AddressV"`, `"MipLODBias"`, ...).
    pub field: &'static str,
    /// The offending value as text.
    pub value: String,
    /// The SPEC.md rule broken, e.g. `"R9"`.
    pub rule: &'static str,
    /// What the rule requires.
    pub reason: String,
    /// The public source behind the rule (a header constant, the FS section, the DXC validator).
    pub cite: &'static str,
}

impl DescError {
    /// Builds an error for `field` holding `value`, breaking `rule` (which requires `reason`).
    #[must_use]
    pub fn new(
        field: &'static str,
        value: impl Into<String>,
        rule: &'static str,
        reason: impl Into<String>,
        cite: &'static str,
    ) -> Self {
        Self {
            field,
            value: value.into(),
            rule,
            reason: reason.into(),
            cite,
        }
    }
}

/// Text that is neither a name nor a valid number of a D3D12 enumeration (`FromStr`, serde).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a {type_name}: expected {expected}")]
#[non_exhaustive]
pub struct ParseEnumError {
    /// The D3D12 type, e.g. `"D3D12_FILTER"`.
    pub type_name: &'static str,
    /// The text that failed to parse.
    pub input: String,
    /// What would have been accepted.
    pub expected: String,
}

impl ParseEnumError {
    /// Builds the error for `input`, which is no `type_name`.
    #[must_use]
    pub fn new(type_name: &'static str, input: &str, expected: impl Into<String>) -> Self {
        Self {
            type_name,
            input: input.to_owned(),
            expected: expected.into(),
        }
    }
}

/// Why a set of static samplers cannot form a root signature's table (SPEC R119).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// One entry is not a valid static sampler.
    #[error("static sampler {}: {error}", entry_label(*.index, .name))]
    Entry {
        /// Position of the entry in the input.
        index: usize,
        /// The entry's name, if the table is named.
        name: Option<String>,
        /// What is wrong with it (boxed to keep `Result<_, TableError>` small).
        error: Box<DescError>,
    },
    /// Two entries bind the same `register(sN, spaceM)` for overlapping shader visibilities.
    #[error(
        "static samplers {} and {} both bind s{register}, space{space} for {visibility} \
         (SPEC R119; DXC root-signature validator)",
        entry_label(*.first, .first_name),
        entry_label(*.second, .second_name)
    )]
    Overlap {
        /// Position of the earlier entry.
        first: usize,
        /// Name of the earlier entry.
        first_name: Option<String>,
        /// Position of the later entry.
        second: usize,
        /// Name of the later entry.
        second_name: Option<String>,
        /// The shared `ShaderRegister`.
        register: u32,
        /// The shared `RegisterSpace`.
        space: u32,
        /// The stages both are visible to (`ALL` only if both are `ALL`).
        visibility: ShaderVisibility,
    },
    /// An entry uses a register space reserved for drivers.
    #[error(
        "static sampler {}: RegisterSpace = {space:#X} is reserved for drivers \
         (0xFFFFFFF0..=0xFFFFFFFF) (SPEC R119; D3D12_DRIVER_RESERVED_REGISTER_SPACE_VALUES_START/END)",
        entry_label(*.index, .name)
    )]
    ReservedSpace {
        /// Position of the entry.
        index: usize,
        /// Name of the entry.
        name: Option<String>,
        /// The reserved space it asked for.
        space: u32,
    },
    /// More entries than a device can hold.
    #[error(
        "{count} static samplers exceed D3D12_MAX_LIVE_STATIC_SAMPLERS = 2032 (SPEC R119; d3d12.h)"
    )]
    TooMany {
        /// How many entries were given.
        count: usize,
    },
    /// Two entries share a name, so lookups by name would be ambiguous.
    #[error("static samplers {first} and {second} are both named {name:?}")]
    DuplicateName {
        /// Position of the earlier entry.
        first: usize,
        /// Position of the later entry.
        second: usize,
        /// The shared name.
        name: String,
    },
    /// The RON text does not parse; the message starts with `line:column`.
    #[error("RON {0}")]
    Ron(String),
}

/// `3` or `3 (pcf)`.
fn entry_label(index: usize, name: &Option<String>) -> String {
    match name {
        Some(name) => format!("{index} ({name})"),
        None => index.to_string(),
    }
}
