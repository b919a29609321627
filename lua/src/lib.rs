//! # penumbra_lua — the penumbra Lua module and its sandboxed script runtime
//!
//! Level designers and tools programmers script penumbra in Luau (the default) or Lua 5.4 (the
//! `lua54` feature). Scripts are untrusted: a [`Runtime`] runs them in a sandbox with a memory
//! limit, a deadline, no `io`/`load`/`os.execute`, a `require` confined to the script root, and
//! file access only through the API (reads under the root, writes under the output folder).
//!
//! The global `penumbra` is the module table ([`module`] builds it for any `mlua::Lua`): samplers
//! from D3D12 names or RON, textures, every sampling operation, PNG input/output, scenes
//! (occluders, lights, eyes; `lightAt`, `canSee`, probes along paths, pictures, CSV) and image
//! matching (`msad4`, `findImage`, SAD heat maps). The Lua side is documented in
//! `docs/lua-api.md`, and `types.d.luau` gives editors its types. The scene draws its pictures with
//! [`penumbra_core::picture`] ([`pictures`] is the old name of that module).
//!
//! ```
//! use std::time::Duration;
//! use penumbra_lua::{Runtime, RuntimeOptions};
//!
//! let root = std::env::temp_dir();
//! let runtime = Runtime::new(RuntimeOptions::new(&root).timeout(Duration::from_secs(2)))?;
//! let lit: f64 = runtime.eval(
//!     r#"
//!     local depth = penumbra.texture({ format = "R32_FLOAT", width = 2, height = 2,
//!                                      data = { 0.3, 0.6, 0.6, 0.9 } })
//!     local pcf = penumbra.sampler({ filter = "COMPARISON_MIN_MAG_LINEAR_MIP_POINT",
//!                                    comparisonFunc = "LESS_EQUAL" })
//!     return pcf:sampleCmpLevelZero(depth, { 0.5, 0.5 }, 0.5)
//!     "#,
//!     "example",
//! )?;
//! assert_eq!(lit, 0.75);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

#[cfg(all(feature = "luau", feature = "lua54"))]
compile_error!(
    "penumbra_lua: enable exactly one of the `luau` and `lua54` features \
     (for Lua 5.4 build with `--no-default-features --features lua54`)"
);
#[cfg(not(any(feature = "luau", feature = "lua54")))]
compile_error!(
    "penumbra_lua: enable one of the `luau` (default) and `lua54` features \
     (for Lua 5.4 build with `--no-default-features --features lua54`)"
);

mod api;
mod context;
pub mod embed;
mod error;
mod paths;
mod profile;
mod require;
mod runtime;
mod sandbox;
pub mod watch;

/// The picture helpers, which now live in [`penumbra_core::picture`].
pub use penumbra_core::picture as pictures;

pub use api::module;
pub use error::{LuaSetupError, ScriptError, ScriptErrorKind};
pub use runtime::{Runtime, RuntimeOptions};

/// The mlua this crate is built on, so hosts use the same version (and Lua flavour).
pub use mlua;

/// The Lua flavour this build runs: `"Luau"` or `"Lua 5.4"`.
pub const FLAVOUR: &str = if cfg!(feature = "luau") {
    "Luau"
} else {
    "Lua 5.4"
};

/// The fields and methods of every script-visible type, `(type, fields, methods)`, as the
/// did-you-mean errors know them (for tests that check them against types.d.luau).
#[doc(hidden)]
#[must_use]
pub fn member_lists() -> Vec<(
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)> {
    api::names::member_lists()
}
