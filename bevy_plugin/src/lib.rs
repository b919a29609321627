//! # bevy_penumbra — gameplay queries that agree with the game's shadows
//!
//! Stealth games ask "how lit is the player?", "can this guard see that point?", "is this
//! pickup in the sun?", and the answer must match the shadows on screen. Ray casts against
//! colliders disagree with a rendered shadow map at every edge; penumbra renders the same kind
//! of shadow map (D3D12 rasterization rules, depth bias) and samples it with the same D3D12
//! comparison filter and PCF kernel the game's shadow shader uses, on the CPU.
//!
//! Add [`PenumbraPlugin`] and put components on entities:
//!
//! * [`Occluder`](occluder::Occluder) — a box or an `Arc`-shared triangle mesh that casts
//!   shadows and blocks sight;
//! * [`ShadowLight`](shadow::ShadowLight) — a directional, spot or point light with its map's
//!   resolution, bias, PCF kernel and static sampler (by register or by name, from the
//!   [`StaticSamplers`](samplers::StaticSamplers) table loaded from RON);
//! * [`LightProbe`](probe::LightProbe) → [`Exposure`](probe::Exposure): per-light lit fractions
//!   and the total at points around the entity;
//! * [`Viewer`](sight::Viewer) → [`LineOfSight`](sight::LineOfSight): what an eye with a field
//!   of view and a range sees of its targets.
//!
//! Positions come from `GlobalTransform`. Each frame, after transform propagation, the plugin
//! re-renders only the maps a change can reach ([`PenumbraSystems::Rasterize`]), then updates
//! the components in parallel ([`PenumbraSystems::Query`]). Any system can ask ad-hoc questions
//! through the [`ShadowQuery`](query::ShadowQuery) system parameter. How long it all took is in
//! [`PenumbraDiagnostics`].
//!
//! ```
//! use bevy_app::{App, TaskPoolPlugin, Update};
//! use bevy_ecs::prelude::*;
//! use bevy_penumbra::prelude::*;
//! use bevy_transform::prelude::*;
//! use glam::Vec3;
//!
//! #[derive(Component)]
//! struct Player;
//!
//! fn report(players: Query<&Exposure, With<Player>>) {
//!     for exposure in &players {
//!         println!("player exposure {:.2}", exposure.total());
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), TransformPlugin, PenumbraPlugin::default()))
//!     .add_systems(bevy_app::PostUpdate, report.after(PenumbraSystems::Query));
//! let world = app.world_mut();
//! world.spawn((Occluder::cuboid(Vec3::new(30.0, 1.0, 30.0)), Transform::from_xyz(0.0, -0.5, 0.0)));
//! world.spawn((Occluder::cuboid(Vec3::new(1.0, 4.0, 6.0)), Transform::from_xyz(0.0, 2.0, 0.0)));
//! world.spawn((
//!     ShadowLight::directional(1.0).with_resolution(1024).with_kernel(PcfKernel::PCF_3X3),
//!     // Sunlight from +x, low: the wall shades the ground on its −x side.
//!     Transform::default().looking_to(Vec3::new(-1.0, -1.0, 0.0), Vec3::Y),
//! ));
//! let player = world.spawn((Player, LightProbe::body(1.8), Transform::from_xyz(-1.5, 0.0, 0.0))).id();
//! app.update();
//! let exposure = app.world().get::<Exposure>(player).unwrap();
//! assert!(exposure.total() < 0.5, "mostly in the wall's shadow: {}", exposure.total());
//! ```
//!
//! ## Setup
//!
//! The plugin reads `GlobalTransform`s, so the app needs `bevy_transform`'s `TransformPlugin`
//! (part of Bevy's `DefaultPlugins`). Queries run in parallel on the `ComputeTaskPool`:
//! `bevy_app`'s `TaskPoolPlugin` (also in `DefaultPlugins`) sizes it; without it the plugin
//! creates one with a thread per core. The plugin runs in `PostUpdate` after
//! `TransformSystems::Propagate` by default ([`PenumbraPlugin::new`] picks another schedule);
//! systems that read [`Exposure`](probe::Exposure) or [`LineOfSight`](sight::LineOfSight) the
//! same frame go `.after(PenumbraSystems::Query)`.
//!
//! ## Features
//!
//! * `ron` (default) — static sampler tables from RON text or files
//!   (`PenumbraPlugin::try_with_sampler_ron`, `StaticSamplers::from_ron`). Without it the plugin
//!   compiles no RON parser, and no image codec in any case (penumbra_core's `png` feature is
//!   only turned on by the `lua` feature's crate).
//! * `tracy` — Tracy zones in every system, plots of probes updated and maps rendered per
//!   frame, and a frame mark per Bevy frame (forwards `penumbra_core/tracy`).
//! * `trace` — `tracing` spans for every Bevy system (bevy_ecs's `trace`), as shown by Bevy's
//!   `trace_tracy`.
//! * `lua` — `lua::LuaScriptPlugin`: a level's Lua scripts run every frame as a system with
//!   the [`ShadowQuery`](query::ShadowQuery) API, sandboxed; a failing script is logged and
//!   disabled, never a crash.
#![warn(missing_docs)]

mod diagnostics;
#[cfg(feature = "lua")]
pub mod lua;
pub mod occluder;
#[cfg(feature = "pbr")]
pub mod pbr;
mod plugin;
pub mod probe;
pub mod query;
pub mod samplers;
mod settings;
pub mod shadow;
pub mod sight;

pub use diagnostics::{
    PenumbraDiagnostics, PenumbraDiagnosticsPlugin, mark_frame, paths as diagnostic_paths,
    publish_diagnostics,
};
/// The math crate of the API (glam 0.33, the version `bevy_math` 0.20 re-exports: Bevy's
/// `Vec3` is this `Vec3`). Use it, or `bevy::math`, rather than a `glam` of your own.
pub use glam;
pub use penumbra_core;
pub use plugin::{PenumbraCorePlugin, PenumbraPlugin, PenumbraSystems};
pub use settings::ShadowSettings;

/// The types a game uses most.
pub mod prelude {
    pub use crate::occluder::Occluder;
    pub use crate::probe::{Exposure, LightExposure, LightProbe};
    pub use crate::query::{MapRef, QueryError, ShadowQuery};
    pub use crate::samplers::{ShadowSampler, StaticSamplers};
    pub use crate::shadow::{ShadowLight, ShadowLightKind, ShadowMaps};
    pub use crate::sight::{LineOfSight, SightTarget, Sighting, Viewer};
    pub use crate::{PenumbraDiagnostics, PenumbraPlugin, PenumbraSystems, ShadowSettings};
    pub use glam::{Mat4, Quat, Vec2, Vec3};
    pub use penumbra_core::shadow::{PcfKernel, ShadowBias};
}
