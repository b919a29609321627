//! # penumbra — Direct3D 12's texture sampler on the CPU, for game tools
//!
//! The facade crate: it re-exports the engine ([`penumbra_core`]) and hosts the `penumbra`
//! command-line tool.
//!
//! The README's shadow example, kept compiling here:
//!
//! ```
//! # fn main() -> Result<(), penumbra::shadow::ShadowError> {
//! use glam::Vec3;
//! use penumbra::shadow::{Light, Lighting, Occluder, PcfKernel, Viewer};
//!
//! let mut lighting = Lighting::new(); // owns occluders, lights, eyes and their maps
//! lighting.add_occluder(Occluder::cuboid(Vec3::new(-10.0, -1.0, -10.0), Vec3::new(10.0, 0.0, 10.0))); // floor
//! let crate_box = lighting.add_occluder(Occluder::cuboid(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)));
//! let sun = lighting.add_light(Light::directional(Vec3::new(0.3, -1.0, 0.2), 1.0).with_kernel(PcfKernel::PCF_3X3));
//! let guard = lighting.add_eye(Viewer::new(Vec3::new(0.0, 1.7, -8.0), Vec3::Z, 90f32.to_radians(), 20.0));
//! let lit = lighting.lit_fraction(sun, Vec3::new(5.0, 0.0, 5.0), Some(Vec3::Y))?; // maps render on first use
//! let exposure = lighting.exposure(Vec3::new(5.0, 0.0, 5.0), Some(Vec3::Y))?.total(); // all lights
//! let seen = lighting.can_see(guard, Vec3::new(0.0, 1.0, 5.0))?; // the crate is in the way
//! lighting.remove_occluder(crate_box); // drops only the maps this change can reach
//! assert_eq!((lit, exposure, seen), (1.0, 1.0, false));
//! assert!(lighting.can_see(guard, Vec3::new(0.0, 1.0, 5.0))?);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

/// The engine crate under its own name (`penumbra::engine::...`); everything is also re-exported
/// at the top level.
pub use penumbra_core as engine;
pub use penumbra_core::*;

// used by the `penumbra` binary, fuzz targets and examples; not a stable API
#[doc(hidden)]
pub mod cases;
pub mod judge;
// used by the `penumbra` binary, fuzz targets and examples; not a stable API
#[doc(hidden)]
pub mod level;
/// Picture helpers (shadow maps, top-down maps, heat maps): [`penumbra_core::picture`], under
/// its old name (`penumbra::picture` is the same module).
pub use penumbra_core::picture as pictures;
