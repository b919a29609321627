//! Why one case, or one texture of a case file, is invalid: [`CaseError`] (its message is the
//! `reason` of an error result) and the [`FieldError`] of a field that holds the wrong value.

use std::fmt::Display;

use penumbra_core::format::ParseFormatError;
use penumbra_core::{DescError, Dimension, Format, ParseEnumError, SampleError, TextureError};

/// Why a case is invalid (or a texture description, for
/// [`CaseFileError::Texture`](super::CaseFileError::Texture)). Each message names the field or the
/// rule at fault; the texts are those of `docs/case-format.md`'s `reason`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CaseError {
    /// A field holds a value it cannot (`coord[1]: "x" is not a number ...`).
    #[error("{field}: {problem}")]
    Field {
        /// The field as messages name it: `"MipLODBias"`, `"coord[1]"`, `"data[0][3]"`.
        field: String,
        /// What is wrong with its value.
        problem: FieldError,
    },
    /// A required field is missing: a case's `sampler`, `op` or `coord`, a texture's `format`.
    #[error("{field} is required")]
    Required {
        /// The field.
        field: &'static str,
    },
    /// The operation needs a field the case does not give (`sample_l needs `lod``).
    #[error("{op} needs `{field}`")]
    NeedsField {
        /// The case's `op`.
        op: String,
        /// The missing field.
        field: String,
    },
    /// The case is not a JSON object.
    #[error("a case must be an object")]
    NotAnObject,
    /// The file has no case with this index.
    #[error("no such case")]
    NoSuchCase {
        /// The index asked for.
        index: usize,
    },
    /// The case's text, read when the file was, does not parse a second time (a bug).
    #[error("internal: case {index} does not parse again: {reason}")]
    Reparse {
        /// The case.
        index: usize,
        /// serde_json's message.
        reason: String,
    },
    /// A value the JSON reader refuses (a key twice, a lone surrogate escape, the deadline).
    #[error("{reason}")]
    Json {
        /// The reader's message.
        reason: String,
    },
    /// A sampler-description field breaks a rule (its field, value, rule and source).
    #[error(transparent)]
    Desc(#[from] DescError),
    /// The operation is not defined on this texture with this sampler (the rule it breaks).
    #[error(transparent)]
    Sample(#[from] SampleError),
    /// A texture's entry in `textures` is not an object.
    #[error("expected an object")]
    TextureNotObject,
    /// A texture without a `dimension` (or one that is not a string).
    #[error("dimension is required (1D, 1DArray, 2D, 2DArray, 3D, Cube, CubeArray)")]
    DimensionRequired,
    /// An unknown `format` name.
    #[error(transparent)]
    Format(#[from] ParseFormatError),
    /// A texture description, data or view the engine refuses (an unknown `dimension`, a size
    /// past D3D12's limits, a view outside the texture).
    #[error(transparent)]
    Texture(#[from] TextureError),
    /// A texture without `data` as an array.
    #[error("data is required: one array per subresource")]
    DataRequired,
    /// An entry of `data` that is not an array.
    #[error("data[{sub}] is not an array")]
    SubresourceNotArray {
        /// Index in `data`.
        sub: usize,
    },
    /// A subresource with the wrong number of values.
    #[error(
        "data[{sub}] (mip {mip}, slice {slice}) has {values} values, but {}×{}×{} texels of {format} need {need}",
        size[0], size[1], size[2]
    )]
    SubresourceLength {
        /// Index in `data`.
        sub: usize,
        /// Its mip level.
        mip: u32,
        /// Its array slice.
        slice: u32,
        /// The values it has.
        values: usize,
        /// The level's width, height and depth.
        size: [u32; 3],
        /// The texture's format.
        format: Format,
        /// The values the level needs (texels × channels).
        need: usize,
    },
    /// The texel bytes of a subresource cannot be reserved.
    #[error("not enough memory for data[{sub}] ({bytes} bytes)")]
    OutOfMemory {
        /// Index in `data`.
        sub: usize,
        /// The bytes asked for.
        bytes: usize,
    },
    /// `data` with the wrong number of subresources.
    #[error("data has {count} subresources, but mip_levels × array_size = {expected}")]
    SubresourceCount {
        /// The subresources given.
        count: usize,
        /// `mip_levels × array_size`.
        expected: usize,
    },
}

/// What is wrong with a field's value ([`CaseError::Field`]). Values are quoted as their JSON
/// text, cut to 60 characters.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldError {
    /// A JSON number that does not parse as one (`1e`).
    #[error("{text} is not a number")]
    NotANumber {
        /// The number's text.
        text: String,
    },
    /// A string that is none of the number spellings.
    #[error(
        "{value} is not a number (use a number, \"NaN\", \"Inf\", \"-Inf\" or \"0x\" and 8 hex digits of f32 bits)"
    )]
    NotANumberString {
        /// The value.
        value: String,
    },
    /// Neither a number nor a string.
    #[error("expected a number, got {got}")]
    ExpectedNumber {
        /// The value.
        got: String,
    },
    /// A number that is not an unsigned 32-bit integer.
    #[error("{value} is not an unsigned 32-bit integer")]
    NotU32 {
        /// The value.
        value: String,
    },
    /// A string that is not `0x` and hex digits.
    #[error("{value} is not an integer")]
    NotInteger {
        /// The value.
        value: String,
    },
    /// Not an integer (or one out of the field's range).
    #[error("expected an integer, got {got}")]
    ExpectedInteger {
        /// The value.
        got: String,
    },
    /// An enum field that is neither a string nor a number.
    #[error("expected a D3D12 name or number, got {got}")]
    ExpectedName {
        /// The value.
        got: String,
    },
    /// A string that names no value of the field's D3D12 type.
    #[error("{0}")]
    Name(ParseEnumError),
    /// `Flags` that is neither a number nor flag names.
    #[error("expected a number or flag names, got {got}")]
    ExpectedFlags {
        /// The value.
        got: String,
    },
    /// A `BorderColor` array that does not have 4 entries.
    #[error("expected 4 floats, got {got}")]
    BorderColorLength {
        /// Its length.
        got: usize,
    },
    /// A `sampler` key that is no D3D12_SAMPLER_DESC field.
    #[error(
        "unknown field {name} (D3D12_SAMPLER_DESC names: Filter, AddressU, AddressV, AddressW, MipLODBias, MaxAnisotropy, ComparisonFunc, BorderColor, MinLOD, MaxLOD)"
    )]
    UnknownSamplerField {
        /// The key.
        name: String,
    },
    /// `sampler` or a texture's `view` that is not an object.
    #[error("expected an object")]
    ExpectedObject,
    /// A `sampler` without `Filter`.
    #[error("Filter is required")]
    FilterRequired,
    /// A `0x` string past 16 bits for a half-float component.
    #[error("{value} is not a 16-bit half pattern")]
    NotHalf {
        /// The value.
        value: String,
    },
    /// A UNORM code past the format's largest.
    #[error("code {code} does not fit {bits}-bit {format} (max {max})")]
    CodeTooLarge {
        /// The code.
        code: u32,
        /// The component's bits.
        bits: u32,
        /// The texture's format.
        format: Format,
        /// The largest code.
        max: u32,
    },
    /// A `coord` of no or more than 4 numbers.
    #[error("expected 1 to 4 numbers, got {got}")]
    CoordLength {
        /// The numbers given.
        got: usize,
    },
    /// A `coord` shorter than the texture's dimension needs.
    #[error("a {dimension} texture needs {need} components, got {got}")]
    CoordComponents {
        /// The texture's dimension.
        dimension: Dimension,
        /// The components it needs.
        need: usize,
        /// The components given.
        got: usize,
    },
    /// An `offset` that is not an array.
    #[error("expected an array of integers")]
    ExpectedIntegers,
    /// An `offset` of more than 3 integers.
    #[error("at most 3 integers")]
    TooManyIntegers,
    /// A `ddx` or `ddy` of more than 3 numbers.
    #[error("at most 3 numbers")]
    TooManyNumbers,
    /// A `texture` index with no texture.
    #[error("index {index} is out of range")]
    TextureIndex {
        /// The index as written.
        index: String,
    },
    /// A `texture` id that no texture has.
    #[error("no texture has id {id}")]
    NoTextureId {
        /// The id, quoted.
        id: String,
    },
    /// A `texture` that is neither an id, an index nor null.
    #[error("expected an id, an index or null, got {got}")]
    ExpectedTexture {
        /// The value.
        got: String,
    },
    /// An `op` that is no operation of the case format.
    #[error(
        "unknown operation {name} (sample_l, sample_grad, sample_b, sample_c_l, sample_c_lz, sample_c_grad, gather4, gather4_c, lod)"
    )]
    UnknownOp {
        /// The op, quoted.
        name: String,
    },
}

impl CaseError {
    /// A [`CaseError::Field`].
    pub(super) fn field(field: impl Into<String>, problem: FieldError) -> CaseError {
        CaseError::Field {
            field: field.into(),
            problem,
        }
    }

    /// A [`CaseError::Json`] with the reader's message.
    pub(super) fn json(e: impl Display) -> CaseError {
        CaseError::Json {
            reason: e.to_string(),
        }
    }
}

/// The message, for callers that report reasons as text.
impl From<CaseError> for String {
    fn from(e: CaseError) -> String {
        e.to_string()
    }
}
