//! Sampling case files: the JSON interchange format of `penumbra sample` (see
//! `docs/case-format.md`). A file holds textures and cases; every case is evaluated on its own,
//! so one invalid case never stops the others: [`CaseError`] says why one is invalid.
//!
//! ```
//! let input = r#"{
//!   "textures": [{"id": "depth", "dimension": "2D", "format": "R32_FLOAT", "width": 2, "height": 2,
//!                 "data": [[0.3, 0.6, 0.6, 0.9]]}],
//!   "cases": [{"id": "pcf", "texture": "depth", "op": "sample_c_lz", "coord": [0.5, 0.5], "ref": 0.5,
//!              "sampler": {"Filter": "COMPARISON_MIN_MAG_LINEAR_MIP_POINT", "ComparisonFunc": "LESS_EQUAL"}}]
//! }"#;
//! let output = penumbra::cases::run_text(input).unwrap();
//! assert_eq!(output["results"][0]["result"][0], 0.75);
//! ```

use penumbra_core::Texture;

mod error;
mod evaluate;
mod read;
mod write;

pub mod json;

pub use error::{CaseError, FieldError};
pub use json::{Json, JsonError};
pub use read::{parse_f32, parse_sampler};
pub use write::{Results, number_value, run_text};

/// A file-level error: the file cannot be read as a case file at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaseFileError {
    /// Not valid JSON, or an object with a key twice.
    #[error("not valid JSON: {0}")]
    Json(#[from] JsonError),
    /// The top level is not an object with `textures` and `cases`.
    #[error("{0}")]
    Shape(String),
    /// A texture cannot be built from its description and data.
    #[error("texture {index} ({id}): {reason}")]
    Texture {
        /// Index in `textures`.
        index: usize,
        /// Its id.
        id: String,
        /// What is wrong (the message of a [`CaseError`]).
        reason: String,
    },
    /// Two textures with one id.
    #[error("textures {first} and {second} both have the id {id:?}; ids must be unique")]
    DuplicateTextureId {
        /// The id.
        id: String,
        /// Index of the first texture with it.
        first: usize,
        /// Index of the second.
        second: usize,
    },
}

/// A case file: its textures, built when it is read, and its cases, kept as text and read one
/// at a time when they are evaluated (so a large file never becomes a tree in memory).
pub struct CaseFile {
    textures: Vec<(String, Texture)>,
    /// The file's text.
    source: String,
    /// Where each case's object lies in `source`.
    cases: Vec<std::ops::Range<usize>>,
}

/// What one case gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The result values.
    Ok(Vec<f32>),
    /// Why the case is invalid.
    Error(CaseError),
}

#[cfg(test)]
mod tests;
