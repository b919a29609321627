//! # penumbra_core — Direct3D 12 texture sampling on the CPU
//!
//! A scalar reference implementation of D3D12 sampling that follows the project's rule book
//! (`SPEC.md`, rules R1–R120, themselves paraphrased from the D3D11.3 Functional Spec and the
//! D3D12 headers) rule by rule, plus `msad4` image matching.
//!
//! * [`profile`] — Tracy hooks that compile to nothing without the `tracy` feature.
#![warn(missing_docs)]

pub mod profile;
