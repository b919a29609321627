//! # penumbra — Direct3D 12's texture sampler on the CPU, for game tools
//!
//! The facade crate: it re-exports the engine ([`penumbra_core`]) and hosts the `penumbra`
//! command-line tool.
#![warn(missing_docs)]

pub use penumbra_core as core;
pub use penumbra_core::*;

pub mod cases;
pub mod level;
/// Picture helpers (shadow maps, top-down maps, heat maps), shared with the Lua module.
pub use penumbra_lua::pictures;
