//! The game's own scene, answered as Bevy's renderer draws it (feature `pbr`).
//!
//! With [`PbrShadowPlugin`] (part of [`PenumbraPlugin`](crate::PenumbraPlugin) when the feature
//! is on) the plugin reads what a Bevy game already has:
//!
//! * **geometry**: every entity with `Mesh3d` and a `GlobalTransform` whose `Mesh` is in
//!   `Assets<Mesh>` (triangle lists and strips, u16 or u32 indices or none). Meshes are
//!   converted once per asset and again on `AssetEvent::Modified`. Entities with
//!   `NotShadowCaster`, or hidden (`InheritedVisibility` false), cast no shadow. Back faces are
//!   culled with counter-clockwise fronts, as `StandardMaterial` does by default; put a
//!   [`ShadowCull`] on an entity whose material culls otherwise. A mesh whose data went to the
//!   render world (`RenderAssetUsages` without `MAIN_WORLD`) is skipped with one warning naming
//!   the entity. The same meshes also block [`Viewer`](crate::sight::Viewer)s and shadow the
//!   plugin's own [`ShadowLight`](crate::shadow::ShadowLight)s.
//! * **lights**: `DirectionalLight`s with `shadow_maps_enabled`, through the `Cascades` Bevy
//!   computed for each camera (this plugin runs after
//!   `SimulationLightSystems::UpdateDirectionalLightCascades` and never re-derives them) and
//!   their `CascadeShadowConfig`; `PointLight`s (a cube map) and `SpotLight`s, with their depth
//!   and normal biases and `shadow_map_near_z`; map sizes from `DirectionalLightShadowMap`
//!   (also spot lights) and `PointLightShadowMap`; each camera's `ShadowFilteringMethod`.
//!
//! The answer, [`PbrShadows::shadow_factor`], is the shadow factor bevy_pbr's fragment shader
//! computes for a world point and normal seen by a camera — biases, reverse-Z maps, the clamp-
//! to-edge comparison sampler, cascade choice and blend, the filter kernels — as documented in
//! [`penumbra_core::shadow::pbr`] and checked pixel by pixel against Bevy's renderer by
//! `bevy_plugin/tests/parity.rs`.
//!
//! Light arriving ([`PbrShadows::irradiance`], and the game lights' shares of every
//! [`Exposure`](crate::probe::Exposure)) is in Bevy's units: a directional light's
//! `illuminance` (lux) × its shadow factor; a point or spot light's `intensity` (lumens) / 4π
//! (candela, as bevy_pbr converts it) × Bevy's windowed inverse square
//! `saturate(1 − (d²/r²)²)² / max(d², 10⁻⁴)` (× the spot's `saturate(cos·scale + offset)²`) ×
//! its shadow factor: lux at a surface facing the light (no N·L, no colour).
//!
//! ```
//! use bevy_app::App;
//! use bevy_asset::{AssetApp, AssetPlugin, Assets};
//! use bevy_camera::{Camera, Camera3d, Projection};
//! use bevy_ecs::prelude::*;
//! use bevy_light::{CascadeShadowConfigBuilder, DirectionalLight};
//! use bevy_mesh::{Mesh, Mesh3d, MeshBuilder, Meshable};
//! use bevy_penumbra::prelude::*;
//! use bevy_penumbra::pbr::PbrShadows;
//! use bevy_transform::prelude::*;
//! use bevy_shape::{Cuboid, Plane3d};
//!
//! let mut app = App::new();
//! app.add_plugins((
//!     bevy_app::TaskPoolPlugin::default(),
//!     AssetPlugin::default(),
//!     TransformPlugin,
//!     PenumbraPlugin::default(),
//! ));
//! app.init_asset::<Mesh>();
//! # bevy_penumbra::pbr::add_cascade_systems(&mut app);
//! let world = app.world_mut();
//! let ground = world.resource_mut::<Assets<Mesh>>().add(Plane3d::default().mesh().size(40.0, 40.0).build());
//! let crate_mesh = world.resource_mut::<Assets<Mesh>>().add(Mesh::from(Cuboid::new(2.0, 2.0, 2.0)));
//! world.spawn((Mesh3d(ground), Transform::IDENTITY));
//! world.spawn((Mesh3d(crate_mesh), Transform::from_xyz(0.0, 1.0, 0.0)));
//! let sun = world.spawn((
//!     DirectionalLight { shadow_maps_enabled: true, ..Default::default() },
//!     Transform::IDENTITY.looking_to(Vec3::new(0.0, -1.0, 0.2), Vec3::Y),
//!     CascadeShadowConfigBuilder::default().build(),
//! )).id();
//! let camera = world.spawn((
//!     Camera3d::default(),
//!     Projection::default(),
//!     Transform::from_xyz(0.0, 6.0, 12.0).looking_at(Vec3::ZERO, Vec3::Y),
//! )).id();
//! app.update();
//! let shadows = app.world().resource::<PbrShadows>();
//! let under = shadows.shadow_factor(camera, sun, Vec3::new(0.0, 0.0, 1.2), Vec3::Y).unwrap();
//! let open = shadows.shadow_factor(camera, sun, Vec3::new(5.0, 0.0, 3.0), Vec3::Y).unwrap();
//! assert_eq!((under, open), (0.0, 1.0));
//! ```

use std::collections::{BTreeMap, HashMap};
use std::f32::consts::PI;
use std::sync::Arc;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_asset::{AssetEvent, AssetEventSystems, AssetId};
use bevy_camera::visibility::VisibilitySystems;
use bevy_ecs::entity::{EntityHashMap, EntityHashSet};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_light::{DirectionalLightShadowMap, PointLightShadowMap, SimulationLightSystems};
use bevy_mesh::Mesh;
use glam::{Mat4, Vec3};
use penumbra_core::raster::{CullMode, Mesh as CoreMesh};
use penumbra_core::shadow::pbr::PbrReceiver;
use penumbra_core::shadow::pbr::{PbrDirectional, PbrFilter, PbrPoint, PbrSpot, point_attenuation};
use penumbra_core::shadow::{LightId, Lighting, OccluderId, ShadowError};

use crate::shadow::ShadowMaps;
use crate::{PenumbraDiagnostics, PenumbraSystems, ShadowSettings};

mod exposure;
mod lights;
mod mesh;

pub use exposure::update_pbr_exposure;
pub use lights::{render_pbr_maps, sync_pbr_lights};
pub use mesh::{sync_pbr_meshes, triangles_of};

/// A mesh entity's cull mode in shadow passes when its material does not cull back faces
/// (`StandardMaterial::cull_mode`): `ShadowCull(None)` for double-sided materials,
/// `ShadowCull(Some(CullMode::Front))` for front-culled ones. Without it, back faces are culled.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowCull(pub Option<CullMode>);

impl Default for ShadowCull {
    fn default() -> Self {
        ShadowCull(Some(CullMode::Back))
    }
}

/// The renderer model of one game light.
#[derive(Clone, Debug, PartialEq)]
pub enum PbrModel {
    /// A directional light's cascades for one camera.
    Directional(PbrDirectional),
    /// A spot light.
    Spot(PbrSpot),
    /// A point light.
    Point(PbrPoint),
}

/// One game light (per camera for directional lights) as the plugin holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct PbrLight {
    /// The light's entity.
    pub light: Entity,
    /// The camera whose cascades these are (directional lights only).
    pub camera: Option<Entity>,
    /// The renderer model.
    pub model: PbrModel,
    /// Bevy's intensity: lux (`illuminance`) for directional lights, lumens for the others.
    pub intensity: f32,
    /// Whether the light casts shadows (`shadow_maps_enabled`); without, its factor is 1.
    pub shadows: bool,
    id: LightId,
}

/// What the plugin knows of a camera.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CameraView {
    view_from_world: Mat4,
    filter: PbrFilter,
    active: bool,
}

/// Why [`PbrShadows`] has no answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PbrError {
    /// The entity is not a camera the plugin has seen.
    #[error("entity {0} is not a camera (Camera with a GlobalTransform)")]
    UnknownCamera(Entity),
    /// The entity is not a light the plugin has seen.
    #[error("entity {0} is not a DirectionalLight, PointLight or SpotLight")]
    UnknownLight(Entity),
    /// A coordinate is NaN or infinite.
    #[error("point {0} or normal {1} is not finite")]
    NotFinite(Vec3, Vec3),
    /// The light's map could not render.
    #[error("the shadow map of light {light} failed: {error}")]
    Map {
        /// The light.
        light: Entity,
        /// Why.
        error: ShadowError,
    },
}

#[derive(Clone, Debug)]
enum MeshEntry {
    Ready(Option<Arc<CoreMesh>>),
    Extracted,
}

/// The game's scene as Bevy's renderer shadows it: its meshes, its lights (per camera for
/// directional lights) and their maps, rendered on demand with bevy_pbr's conventions.
#[derive(Resource, Debug, Default)]
pub struct PbrShadows {
    lighting: Lighting,
    lights: BTreeMap<(Entity, Option<Entity>), PbrLight>,
    cameras: EntityHashMap<CameraView>,
    mesh_cache: HashMap<AssetId<Mesh>, MeshEntry>,
    occluders: EntityHashMap<AssetId<Mesh>>,
    warned: EntityHashSet,
    next_id: u64,
    /// Bumped when a camera or a light changes (maps and occluders are in the lighting's
    /// `light_generation`).
    generation: u64,
}

impl PbrShadows {
    /// The engine lighting of the game's scene.
    #[must_use]
    pub fn lighting(&self) -> &Lighting {
        &self.lighting
    }

    /// Every game light the plugin holds (a directional light once per camera).
    pub fn lights(&self) -> impl Iterator<Item = &PbrLight> {
        self.lights.values()
    }

    /// Changes when anything an answer depends on changed: a camera, a light, a map or an
    /// occluder.
    #[must_use]
    pub fn generation(&self) -> (u64, u64) {
        (self.generation, self.lighting.light_generation())
    }

    /// Mesh entities that cast shadows.
    #[must_use]
    pub fn occluder_count(&self) -> usize {
        self.occluders.len()
    }

    /// The first active camera (in entity order) with cascades of some directional light,
    /// else the first active camera: what [`Exposure`](crate::probe::Exposure) answers for.
    #[must_use]
    pub fn default_camera(&self) -> Option<Entity> {
        let mut cams: Vec<Entity> = self
            .cameras
            .iter()
            .filter(|(_, c)| c.active)
            .map(|(e, _)| *e)
            .collect();
        cams.sort();
        cams.iter()
            .copied()
            .find(|c| self.lights.keys().any(|(_, cam)| *cam == Some(*c)))
            .or_else(|| cams.first().copied())
    }

    /// The camera, with `point` and `normal` checked to be finite.
    fn view(&self, camera: Entity, point: Vec3, normal: Vec3) -> Result<&CameraView, PbrError> {
        let view = self
            .cameras
            .get(&camera)
            .ok_or(PbrError::UnknownCamera(camera))?;
        if !point.is_finite() || !normal.is_finite() {
            return Err(PbrError::NotFinite(point, normal));
        }
        Ok(view)
    }

    /// Removes a mesh entity's occluder from both lightings.
    fn drop_occluder(&mut self, entity: Entity, maps: &mut ShadowMaps) {
        if self.occluders.remove(&entity).is_some() {
            let id = OccluderId(entity.to_bits());
            self.lighting.remove_occluder(id);
            maps.lighting_mut().remove_occluder(id);
        }
    }

    /// The shadow factor Bevy's fragment shader computes at `point` (with unit surface
    /// `normal`) for `light`, seen by `camera` with the camera's `ShadowFilteringMethod`
    /// (`Temporal` as the mean of [`penumbra_core::shadow::pbr::TEMPORAL_MEAN_ROTATIONS`]
    /// rotations): 1 lit, 0 in shadow. As Bevy draws it, a directional light is 1 past the
    /// last cascade's far bound and outside the chosen cascade's box (points behind the camera
    /// take the first cascade, and are usually outside it); a light without shadow maps, or a
    /// camera without cascades yet, gives 1.
    ///
    /// # Errors
    /// An unknown camera or light, a non-finite point or normal, a map that failed to render.
    pub fn shadow_factor(
        &self,
        camera: Entity,
        light: Entity,
        point: Vec3,
        normal: Vec3,
    ) -> Result<f32, PbrError> {
        let view = self
            .cameras
            .get(&camera)
            .ok_or(PbrError::UnknownCamera(camera))?;
        self.shadow_factor_with(camera, light, point, normal, view.filter)
    }

    /// [`PbrShadows::shadow_factor`] with another filter (for example
    /// `PbrFilter::Temporal(Some(pixel))` for one pixel of one frame).
    ///
    /// # Errors
    /// As [`PbrShadows::shadow_factor`].
    pub fn shadow_factor_with(
        &self,
        camera: Entity,
        light: Entity,
        point: Vec3,
        normal: Vec3,
        filter: PbrFilter,
    ) -> Result<f32, PbrError> {
        let view = self.view(camera, point, normal)?;
        let entry = self
            .lights
            .get(&(light, Some(camera)))
            .or_else(|| self.lights.get(&(light, None)));
        let Some(entry) = entry else {
            // A directional light without cascades for this camera (shadows off, or the
            // camera is new this frame) is unshadowed, as Bevy draws it.
            return if self.lights.keys().any(|(l, _)| *l == light) {
                Ok(1.0)
            } else {
                Err(PbrError::UnknownLight(light))
            };
        };
        self.factor_of(entry, view, point, normal, filter)
    }

    /// [`PbrShadows::factor_of`] with the camera's filter for many receivers (their view depth
    /// in this camera's view, which only a directional light reads), into `out` (1 where the
    /// map fails to render): the same bits, through the map's batched path.
    fn factors_of(
        &self,
        entry: &PbrLight,
        view: &CameraView,
        receivers: &[PbrReceiver],
        out: &mut [f32],
    ) {
        let out = &mut out[..receivers.len()];
        let map = match self.lighting.map(entry.id) {
            Ok(map) if entry.shadows => map,
            _ => {
                out.fill(1.0);
                return;
            }
        };
        match &entry.model {
            PbrModel::Directional(d) => d.shadow_factors(map, receivers, view.filter, out),
            PbrModel::Spot(s) => s.shadow_factors(map, receivers, view.filter, out),
            PbrModel::Point(p) => p.shadow_factors(map, receivers, view.filter, out),
        }
    }

    fn factor_of(
        &self,
        entry: &PbrLight,
        view: &CameraView,
        point: Vec3,
        normal: Vec3,
        filter: PbrFilter,
    ) -> Result<f32, PbrError> {
        if !entry.shadows {
            return Ok(1.0);
        }
        let map = self.lighting.map(entry.id).map_err(|error| PbrError::Map {
            light: entry.light,
            error,
        })?;
        Ok(match &entry.model {
            PbrModel::Directional(d) => {
                let view_z = view.view_from_world.transform_point3(point).z;
                d.shadow_factor(map, point, normal, view_z, filter)
            }
            PbrModel::Spot(s) => s.shadow_factor(map, point, normal, filter),
            PbrModel::Point(p) => p.shadow_factor(map, point, normal, filter),
        })
    }

    /// The light arriving at `point` (unit `normal`) from every game light, seen by `camera`,
    /// in lux (see the [module docs](self)), light by light and in total. A directional light
    /// counts through this camera's cascades, or unshadowed when no camera has any; one whose
    /// cascades belong only to other cameras is left out.
    ///
    /// # Errors
    /// As [`PbrShadows::shadow_factor`].
    pub fn irradiance(
        &self,
        camera: Entity,
        point: Vec3,
        normal: Vec3,
    ) -> Result<PbrIrradiance, PbrError> {
        let view = self.view(camera, point, normal)?;
        let mut shares = Vec::new();
        let mut total = 0.0;
        for entry in self.lights.values() {
            if entry.camera.is_some_and(|c| c != camera) {
                continue;
            }
            let unshadowed = entry.unshadowed(point);
            if unshadowed <= 0.0 {
                continue;
            }
            let factor = self.factor_of(entry, view, point, normal, view.filter)?;
            shares.push(PbrShare {
                light: entry.light,
                shadow_factor: factor,
                lux: unshadowed * factor,
            });
            total += unshadowed * factor;
        }
        Ok(PbrIrradiance { shares, total })
    }
}

/// One game light's part of [`PbrShadows::irradiance`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbrShare {
    /// The light.
    pub light: Entity,
    /// Its shadow factor at the point.
    pub shadow_factor: f32,
    /// The light arriving from it (lux).
    pub lux: f32,
}

/// The light arriving at a point from the game's lights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PbrIrradiance {
    /// Each light that reaches the point, in light order.
    pub shares: Vec<PbrShare>,
    /// Their sum (lux).
    pub total: f32,
}

impl PbrLight {
    /// Light arriving at `point` with no occluders, in lux.
    #[must_use]
    pub fn unshadowed(&self, point: Vec3) -> f32 {
        match &self.model {
            PbrModel::Directional(_) => self.intensity,
            PbrModel::Point(p) => self.intensity / (4.0 * PI) * p.falloff(point),
            PbrModel::Spot(s) => {
                let d2 = (point - s.position).length_squared();
                self.intensity / (4.0 * PI) * point_attenuation(d2, s.range) * s.cone(point)
            }
        }
    }
}

/// Reads the game's meshes and lights into [`PbrShadows`] (and the meshes into
/// [`ShadowMaps`]), renders the maps that changed, and adds the game lights to every
/// [`Exposure`](crate::probe::Exposure). Part of [`PenumbraPlugin`](crate::PenumbraPlugin) with
/// the `pbr` feature.
#[derive(Clone, Debug)]
pub struct PbrShadowPlugin {
    /// The schedule the systems run in.
    pub schedule: InternedScheduleLabel,
}

impl PbrShadowPlugin {
    /// The plugin for `schedule`.
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        PbrShadowPlugin {
            schedule: schedule.intern(),
        }
    }
}

impl Default for PbrShadowPlugin {
    fn default() -> Self {
        PbrShadowPlugin::new(PostUpdate)
    }
}

impl Plugin for PbrShadowPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PbrShadows>()
            .init_resource::<ShadowMaps>()
            .init_resource::<ShadowSettings>()
            .init_resource::<PenumbraDiagnostics>()
            .add_message::<AssetEvent<Mesh>>()
            .configure_sets(
                self.schedule,
                PenumbraSystems::Prepare
                    .after(SimulationLightSystems::UpdateDirectionalLightCascades)
                    .after(VisibilitySystems::VisibilityPropagate),
            )
            .add_systems(
                self.schedule,
                (
                    (sync_pbr_meshes.after(AssetEventSystems), sync_pbr_lights)
                        .chain()
                        .in_set(PenumbraSystems::Prepare),
                    render_pbr_maps.in_set(PenumbraSystems::Rasterize),
                    update_pbr_exposure
                        .in_set(PenumbraSystems::Query)
                        .after(crate::probe::update_exposure),
                ),
            );
    }

    fn finish(&self, _app: &mut App) {
        crate::plugin::ensure_compute_task_pool();
    }
}

/// Adds bevy_light's cascade computation (`build_directional_light_cascades` in
/// `SimulationLightSystems::UpdateDirectionalLightCascades`) and its resources to an app that
/// has no `LightPlugin` (tests, servers); a game with Bevy's `PbrPlugin` has it already.
pub fn add_cascade_systems(app: &mut App) {
    app.init_resource::<DirectionalLightShadowMap>()
        .init_resource::<PointLightShadowMap>()
        .add_systems(
            PostUpdate,
            bevy_light::cascade::build_directional_light_cascades
                .in_set(SimulationLightSystems::UpdateDirectionalLightCascades)
                .after(bevy_transform::TransformSystems::Propagate),
        );
}
