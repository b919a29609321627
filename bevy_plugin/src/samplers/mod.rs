//! Static samplers: the game's root-signature samplers, so queries filter shadow maps exactly as
//! its shaders do.
//!
//! A D3D12 renderer declares its shadow sampler once, as a static sampler of a root signature.
//! Give the plugin the same table — a RON file of [`StaticSamplerDesc`]s in D3D12's own names,
//! validated as a root signature's set (SPEC R119: valid fields, no two samplers on one
//! register, space and visibility) — and let each [`ShadowLight`](crate::shadow::ShadowLight)
//! pick its sampler by register or by name ([`ShadowSampler`]).
//!
//! ```
//! use bevy_penumbra::PenumbraPlugin;
//!
//! let plugin = PenumbraPlugin::default().try_with_sampler_ron(
//!     r#"(samplers: {
//!         "shadow_pcf": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: LESS_EQUAL,
//!                        AddressU: BORDER, AddressV: BORDER, AddressW: BORDER,
//!                        BorderColor: OPAQUE_WHITE, ShaderRegister: 2, ShaderVisibility: PIXEL),
//!     })"#,
//! )?;
//! # let _ = plugin;
//! # Ok::<(), bevy_penumbra::samplers::SamplerTableError>(())
//! ```
//!
//! A bad table is an error of the builder call, before the app is built, and its message
//! names the entry, the D3D12 field and the rule:
//!
//! ```
//! use bevy_penumbra::PenumbraPlugin;
//! let err = PenumbraPlugin::default()
//!     .try_with_sampler_ron(r#"(samplers: {"shadow": (Filter: ANISOTROPIC, MaxAnisotropy: 40)})"#)
//!     .unwrap_err();
//! assert!(err.to_string().contains("static sampler 0 (shadow): MaxAnisotropy = 40"), "{err}");
//! ```
//!
//! Hot reloading is replacing the [`StaticSamplers`] resource: every light then re-resolves its
//! sampler and re-renders.

use std::fmt;
use std::path::{Path, PathBuf};

use bevy_ecs::resource::Resource;
use penumbra_core::shadow::default_shadow_sampler;
use penumbra_core::{ShaderVisibility, StaticSamplerDesc, StaticSamplerTable, TableError};

/// The game's static samplers (a validated [`StaticSamplerTable`]), as a resource.
///
/// The default is an empty table; lights that use [`ShadowSampler::Default`] need none.
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct StaticSamplers(StaticSamplerTable);

impl Default for StaticSamplers {
    fn default() -> Self {
        // An empty set is a valid root signature.
        StaticSamplers(StaticSamplerTable::new(Vec::new()).unwrap_or_else(|_| unreachable!()))
    }
}

impl StaticSamplers {
    /// Wraps a validated table.
    #[must_use]
    pub fn new(table: StaticSamplerTable) -> Self {
        StaticSamplers(table)
    }

    /// Parses and validates a table from RON (a list of [`StaticSamplerDesc`]s, or the named form
    /// `(samplers: { "name": (...), ... })`).
    ///
    /// # Errors
    /// [`SamplerTableError::Invalid`], naming the entry, the field and the rule (or the line and
    /// column of a syntax error).
    #[cfg(feature = "ron")]
    pub fn from_ron(text: &str) -> Result<Self, SamplerTableError> {
        StaticSamplerTable::from_ron(text)
            .map(StaticSamplers)
            .map_err(|error| SamplerTableError::Invalid { path: None, error })
    }

    /// Reads, parses and validates a RON file.
    ///
    /// # Errors
    /// [`SamplerTableError::Read`] when the file cannot be read, [`SamplerTableError::Invalid`]
    /// (with the path) when its contents are not a valid table.
    #[cfg(feature = "ron")]
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, SamplerTableError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SamplerTableError::Read {
            path: path.to_owned(),
            source,
        })?;
        StaticSamplerTable::from_ron(&text)
            .map(StaticSamplers)
            .map_err(|error| SamplerTableError::Invalid {
                path: Some(path.to_owned()),
                error,
            })
    }

    /// The table.
    #[must_use]
    pub fn table(&self) -> &StaticSamplerTable {
        &self.0
    }

    /// The description `sampler` names: the engine's default shadow sampler, the entry a pixel
    /// shader sees at a register (R119), or the named entry. `None` when the table has no such
    /// entry.
    #[must_use]
    pub fn resolve(&self, sampler: &ShadowSampler) -> Option<StaticSamplerDesc> {
        match sampler {
            ShadowSampler::Default => Some(default_shadow_sampler()),
            ShadowSampler::Register { register, space } => self
                .0
                .lookup(*space, *register, ShaderVisibility::Pixel)
                .copied(),
            ShadowSampler::Named(name) => self.0.get(name).copied(),
        }
    }
}

impl From<StaticSamplerTable> for StaticSamplers {
    fn from(table: StaticSamplerTable) -> Self {
        StaticSamplers(table)
    }
}

/// Which sampler a light's map is read with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ShadowSampler {
    /// The engine's shadow sampler (`COMPARISON_MIN_MAG_LINEAR_MIP_POINT`, `BORDER` with
    /// `OPAQUE_WHITE`, `LESS_EQUAL`); needs no table.
    #[default]
    Default,
    /// The static sampler a pixel shader sees as `register(s{register}, space{space})`.
    Register {
        /// `ShaderRegister`.
        register: u32,
        /// `RegisterSpace`.
        space: u32,
    },
    /// The table entry with this name.
    Named(String),
}

impl fmt::Display for ShadowSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShadowSampler::Default => f.write_str("the default shadow sampler"),
            ShadowSampler::Register { register, space } => {
                write!(f, "register(s{register}, space{space}) for PIXEL")
            }
            ShadowSampler::Named(name) => write!(f, "{name:?}"),
        }
    }
}

/// Why a static-sampler table could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SamplerTableError {
    /// The file could not be read.
    #[error("bevy_penumbra: cannot read the static sampler table {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The text is not a valid table.
    #[error("bevy_penumbra: invalid static sampler table{}: {error}", in_file(path.as_deref()))]
    Invalid {
        /// The file, when the table came from one.
        path: Option<PathBuf>,
        /// What is wrong, naming the entry.
        error: TableError,
    },
}

fn in_file(path: Option<&Path>) -> String {
    path.map(|p| format!(" {}", p.display()))
        .unwrap_or_default()
}
