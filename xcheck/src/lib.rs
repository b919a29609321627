//! # penumbra_xcheck — penumbra against wgpu on Mesa's lavapipe
//!
//! A live cross-check of penumbra's D3D12 sampler against a conformant Vulkan implementation:
//! random textures and wgpu sampler descriptions from a seed ([`case`]), the same lookups run by
//! WGSL compute shaders through wgpu's Vulkan backend on lavapipe ([`gpu`]) and by penumbra with
//! the equivalent D3D12_SAMPLER_DESC, and every pair classified with SPEC §3.3's tolerances and
//! the documented Vulkan-vs-D3D differences ([`judge`]).
//!
//! This crate is a workspace member only so that the main crates never depend on wgpu; it is not
//! published. Run it with `cargo test -p penumbra_xcheck --release` (see README.md).

#![warn(missing_docs)]

pub mod case;
pub mod export;
pub mod gpu;
pub mod judge;
pub mod rng;

/// The seed used when `PENUMBRA_XCHECK_SEED` is not set.
pub const DEFAULT_SEED: u64 = 0x5EED_D3D1_2F00_0001;

/// The seed of this run: `PENUMBRA_XCHECK_SEED` (decimal or `0x` hex) or [`DEFAULT_SEED`].
///
/// # Panics
/// If the variable is set but not a number.
#[must_use]
pub fn seed_from_env() -> u64 {
    match std::env::var("PENUMBRA_XCHECK_SEED") {
        Ok(s) => {
            let s = s.trim();
            let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("PENUMBRA_XCHECK_SEED={s:?} is not a u64"))
        }
        Err(_) => DEFAULT_SEED,
    }
}
