//! Ad-hoc queries from any system: [`ShadowQuery`].
//!
//! Components answer the questions a game asks every frame ([`Exposure`](crate::probe::Exposure),
//! [`LineOfSight`](crate::sight::LineOfSight)); [`ShadowQuery`] answers the ones it asks once —
//! is this pickup in the sun, how lit is the spot the AI wants to hide in, can this guard see
//! that point, what does the shader's `SampleCmpLevelZero` return here. It reads the engine
//! lighting the plugin keeps in step with the world (ask after
//! [`PenumbraSystems::Rasterize`](crate::PenumbraSystems::Rasterize) for this frame's shadows;
//! asked earlier, a map an occluder change dropped is rendered on the spot, with the lights of
//! the last frame) and gives the same numbers as the components for the same points.
//!
//! Nothing here panics: no plugin, no light, no map yet, a point outside every map or a
//! non-finite point is `None` or a [`QueryError`].
//!
//! ```
//! use bevy_ecs::prelude::*;
//! use bevy_penumbra::prelude::*;
//! use glam::Vec3;
//!
//! fn hide(query: ShadowQuery, guards: Query<Entity, With<Viewer>>) {
//!     let spot = Vec3::new(3.0, 1.0, -2.0);
//!     let dark = query.lit_fraction(spot).is_none_or(|lit| lit < 0.2);
//!     let watched = guards.iter().any(|g| query.can_see(g, spot).unwrap_or(false));
//!     if dark && !watched {
//!         // hide there
//!     }
//! }
//! # bevy_ecs::system::assert_is_system(hide);
//! ```

mod system_param;

pub use system_param::ShadowQuery;

use bevy_ecs::entity::Entity;
use glam::Vec3;
use penumbra_core::SampleError;

use crate::shadow::MapError;

/// Names a light's shadow map: by entity, or by the light entity's `Name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapRef<'a> {
    /// The light entity.
    Entity(Entity),
    /// The light entity's `Name`.
    Name(&'a str),
}

impl From<Entity> for MapRef<'_> {
    fn from(entity: Entity) -> Self {
        MapRef::Entity(entity)
    }
}

impl<'a> From<&'a str> for MapRef<'a> {
    fn from(name: &'a str) -> Self {
        MapRef::Name(name)
    }
}

/// Why a [`ShadowQuery`] has no answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The entity is not a light with a map: not a `ShadowLight`, or not rendered yet.
    #[error("entity {0} has no shadow map (not a ShadowLight, or not rendered yet)")]
    NoMap(Entity),
    /// No light with a map has this `Name`.
    #[error("no shadow map of a light named {0:?}")]
    UnknownName(String),
    /// The light could not render its map.
    #[error("the shadow map of light {light} failed: {error}")]
    MapFailed {
        /// The light.
        light: Entity,
        /// Why.
        error: MapError,
    },
    /// The entity is not a viewer with an eye map: not a `Viewer`, or not rendered yet.
    #[error("entity {0} has no eye map (not a Viewer, or not rendered yet)")]
    NoEyeMap(Entity),
    /// A coordinate is NaN or infinite.
    #[error("point {0} is not finite")]
    NotFinite(Vec3),
    /// The sampler refused the sample (SPEC R109: a pairing D3D leaves undefined).
    #[error(transparent)]
    Sample(#[from] SampleError),
    /// A query about the game's own lights failed (feature `pbr`).
    #[cfg(feature = "pbr")]
    #[error(transparent)]
    Game(#[from] crate::pbr::PbrError),
}
