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
use std::time::{Duration, Instant};

use bevy_app::{App, Plugin, PostUpdate};
use bevy_asset::{AssetEvent, AssetEventSystems, AssetId, Assets};
use bevy_camera::Camera;
use bevy_camera::visibility::{InheritedVisibility, VisibilitySystems};
use bevy_ecs::entity::{EntityHashMap, EntityHashSet};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_light::{
    CascadeShadowConfig, Cascades, DirectionalLight, DirectionalLightShadowMap, NotShadowCaster,
    PointLight, PointLightShadowMap, ShadowFilteringMethod, SimulationLightSystems, SpotLight,
};
use bevy_mesh::{Indices, Mesh, Mesh3d, MeshAccessError, PrimitiveTopology, VertexAttributeValues};
use bevy_transform::components::GlobalTransform;
use glam::{Mat4, Vec3};
use penumbra_core::raster::{CullMode, Mesh as CoreMesh};
use penumbra_core::shadow::pbr::{
    PbrCascade, PbrDirectional, PbrFilter, PbrPoint, PbrSpot, point_attenuation,
};
use penumbra_core::shadow::{LightId, Lighting, Occluder as CoreOccluder, OccluderId, ShadowError};

use crate::shadow::{ShadowMaps, render_all};
use crate::{PenumbraDiagnostics, PenumbraSystems, ShadowSettings};

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

/// A Bevy mesh as penumbra triangles: `Ok(None)` for a mesh without triangles (lines, points,
/// no positions).
///
/// # Errors
/// The mesh's data is in the render world only.
pub fn triangles_of(mesh: &Mesh) -> Result<Option<CoreMesh>, MeshAccessError> {
    let positions = match mesh.try_attribute(Mesh::ATTRIBUTE_POSITION) {
        Ok(VertexAttributeValues::Float32x3(p)) => p,
        Ok(_) | Err(MeshAccessError::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let count = positions.len() as u32;
    let indices: Vec<u32> = match mesh.try_indices_option()? {
        Some(Indices::U16(i)) => i.iter().map(|&i| u32::from(i)).collect(),
        Some(Indices::U32(i)) => i.clone(),
        None => (0..count).collect(),
    };
    let list = match mesh.primitive_topology() {
        PrimitiveTopology::TriangleList => {
            let whole = indices.len() / 3 * 3;
            indices[..whole].to_vec()
        }
        // A strip's odd triangles swap their first two vertices to keep the winding.
        PrimitiveTopology::TriangleStrip => {
            let mut list = Vec::with_capacity(indices.len().saturating_sub(2) * 3);
            for (k, w) in indices.windows(3).enumerate() {
                if k % 2 == 0 {
                    list.extend_from_slice(&[w[0], w[1], w[2]]);
                } else {
                    list.extend_from_slice(&[w[1], w[0], w[2]]);
                }
            }
            list
        }
        _ => return Ok(None),
    };
    let points = positions.iter().map(|&p| Vec3::from_array(p)).collect();
    Ok(CoreMesh::new(points, list).ok())
}

type MeshData = (
    Entity,
    Ref<'static, Mesh3d>,
    Ref<'static, GlobalTransform>,
    Has<NotShadowCaster>,
    Option<Ref<'static, InheritedVisibility>>,
    Option<Ref<'static, ShadowCull>>,
);

/// Keeps the occluders of [`PbrShadows`] and [`ShadowMaps`] in step with the `Mesh3d` entities.
pub fn sync_pbr_meshes(
    meshes: Option<Res<Assets<Mesh>>>,
    mut events: MessageReader<AssetEvent<Mesh>>,
    entities: Query<MeshData>,
    mut removed: RemovedComponents<Mesh3d>,
    mut shadows: ResMut<PbrShadows>,
    mut maps: ResMut<ShadowMaps>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::sync_pbr_meshes");
    let start = Instant::now();
    let state = &mut *shadows;
    let mut changed_assets = Vec::new();
    for event in events.read() {
        match event {
            AssetEvent::Modified { id } | AssetEvent::Removed { id } | AssetEvent::Added { id } => {
                state.mesh_cache.remove(id);
                changed_assets.push(*id);
            }
            _ => {}
        }
    }
    for entity in removed.read() {
        state.drop_occluder(entity, &mut maps);
    }
    let Some(meshes) = meshes else {
        diagnostics.sync_pbr = start.elapsed();
        return;
    };
    for (entity, mesh3d, transform, no_shadow, visibility, cull) in &entities {
        let asset = mesh3d.id();
        let known = state.occluders.get(&entity) == Some(&asset);
        let casts = !no_shadow && visibility.as_ref().is_none_or(|v| v.get());
        let changed = mesh3d.is_changed()
            || transform.is_changed()
            || visibility.as_ref().is_some_and(|v| v.is_changed())
            || cull.as_ref().is_some_and(|c| c.is_changed())
            || changed_assets.contains(&asset);
        let id = OccluderId(entity.to_bits());
        if !casts {
            state.drop_occluder(entity, &mut maps);
            continue;
        }
        // Adding `NotShadowCaster` removes the occluder above; removing it leaves the entity
        // unknown, so it is added again here.
        if known && !changed {
            continue;
        }
        let entry = state
            .mesh_cache
            .entry(asset)
            .or_insert_with(|| match meshes.get(asset) {
                None => MeshEntry::Ready(None),
                Some(mesh) => match triangles_of(mesh) {
                    Ok(m) => MeshEntry::Ready(m.map(Arc::new)),
                    Err(_) => MeshEntry::Extracted,
                },
            });
        let mesh = match entry {
            MeshEntry::Ready(Some(m)) => m.clone(),
            MeshEntry::Ready(None) => {
                // Not loaded yet, or no triangles: look again when the asset changes.
                if meshes.get(asset).is_none() {
                    state.mesh_cache.remove(&asset);
                }
                state.drop_occluder(entity, &mut maps);
                continue;
            }
            MeshEntry::Extracted => {
                state.drop_occluder(entity, &mut maps);
                if state.warned.insert(entity) {
                    log::warn!(
                        "bevy_penumbra: the mesh of entity {entity} is in the render world only \
                         (RenderAssetUsages without MAIN_WORLD), so it casts no shadow in \
                         penumbra's queries; give it RenderAssetUsages::default()"
                    );
                }
                continue;
            }
        };
        // `ShadowCull(None)` culls nothing (the occluder's `None` would mean "the light's").
        let cull = cull.map_or(CullMode::Back, |c| c.0.unwrap_or(CullMode::None));
        let matrix = transform.to_matrix();
        state.lighting.set_occluder(
            id,
            CoreOccluder::mesh(mesh.clone(), matrix).with_cull(Some(cull)),
        );
        maps.lighting_mut()
            .set_occluder(id, CoreOccluder::mesh(mesh, matrix));
        state.occluders.insert(entity, asset);
    }
    diagnostics.sync_pbr = start.elapsed();
}

type DirectionalData = (
    Entity,
    &'static DirectionalLight,
    &'static GlobalTransform,
    Option<&'static CascadeShadowConfig>,
    Option<&'static Cascades>,
);

/// Keeps the game lights of [`PbrShadows`] in step with the world.
#[allow(clippy::too_many_arguments)]
pub fn sync_pbr_lights(
    cameras: Query<(
        Entity,
        &Camera,
        &GlobalTransform,
        Option<&ShadowFilteringMethod>,
    )>,
    directional: Query<DirectionalData>,
    spots: Query<(Entity, &SpotLight, &GlobalTransform)>,
    points: Query<(Entity, &PointLight, &GlobalTransform)>,
    directional_size: Option<Res<DirectionalLightShadowMap>>,
    point_size: Option<Res<PointLightShadowMap>>,
    mut shadows: ResMut<PbrShadows>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::sync_pbr_lights");
    let start = Instant::now();
    let state = &mut *shadows;
    let before = std::mem::take(&mut state.cameras);
    for (entity, camera, transform, filter) in &cameras {
        let filter = match filter.copied().unwrap_or_default() {
            ShadowFilteringMethod::Hardware2x2 => PbrFilter::Hardware2x2,
            ShadowFilteringMethod::Gaussian => PbrFilter::Gaussian,
            ShadowFilteringMethod::Temporal => PbrFilter::Temporal(None),
        };
        state.cameras.insert(
            entity,
            CameraView {
                view_from_world: transform.to_matrix().inverse(),
                filter,
                active: camera.is_active,
            },
        );
    }
    if state.cameras != before {
        state.generation += 1;
    }
    let dir_size = directional_size.map_or(2048, |r| r.size as u32);
    let cube_size = point_size.map_or(1024, |r| r.size as u32);
    let mut seen: Vec<(Entity, Option<Entity>, PbrModel, f32, bool)> = Vec::new();
    for (entity, light, transform, config, cascades) in &directional {
        let model = |overlap_proportion: f32, cascades: Vec<PbrCascade>| {
            PbrModel::Directional(PbrDirectional {
                direction_to_light: *transform.back(),
                depth_bias: light.shadow_depth_bias,
                normal_bias: light.shadow_normal_bias,
                overlap_proportion,
                cascades,
                resolution: dir_size,
            })
        };
        let with_cascades = (config, cascades, light.shadow_maps_enabled);
        let (Some(config), Some(cascades), true) = with_cascades else {
            // No shadow maps: light without shadows, for any camera.
            seen.push((
                entity,
                None,
                model(0.0, Vec::new()),
                light.illuminance,
                false,
            ));
            continue;
        };
        let mut per_camera: Vec<_> = cascades.cascades.iter().collect();
        per_camera.sort_by_key(|(c, _)| **c);
        if per_camera.is_empty() {
            // Shadows on but no camera has cascades yet (no camera, or before bevy_light's
            // first update): unshadowed, as Bevy draws it.
            let unshadowed = model(config.overlap_proportion, Vec::new());
            seen.push((entity, None, unshadowed, light.illuminance, false));
        }
        for (camera, list) in per_camera {
            let cascades = list
                .iter()
                .zip(&config.bounds)
                .map(|(c, &far_bound)| PbrCascade {
                    clip_from_world: c.clip_from_world,
                    texel_size: c.texel_size,
                    far_bound,
                })
                .collect();
            let model = model(config.overlap_proportion, cascades);
            seen.push((entity, Some(*camera), model, light.illuminance, true));
        }
    }
    for (entity, light, transform) in &spots {
        let model = PbrModel::Spot(PbrSpot {
            position: transform.translation(),
            direction: *transform.forward(),
            // As bevy_pbr extracts spot lights: the outer angle below π/2, the inner one
            // inside it.
            outer_angle: light.outer_angle.min(std::f32::consts::FRAC_PI_2 - 1e-4),
            inner_angle: light
                .inner_angle
                .min(light.outer_angle.min(std::f32::consts::FRAC_PI_2 - 1e-4)),
            range: light.range,
            near_z: light.shadow_map_near_z,
            depth_bias: light.shadow_depth_bias,
            normal_bias: light.shadow_normal_bias,
            resolution: dir_size,
        });
        seen.push((
            entity,
            None,
            model,
            light.intensity,
            light.shadow_maps_enabled,
        ));
    }
    for (entity, light, transform) in &points {
        let model = PbrModel::Point(PbrPoint {
            position: transform.translation(),
            range: light.range,
            near_z: light.shadow_map_near_z,
            depth_bias: light.shadow_depth_bias,
            normal_bias: light.shadow_normal_bias,
            resolution: cube_size,
        });
        seen.push((
            entity,
            None,
            model,
            light.intensity,
            light.shadow_maps_enabled,
        ));
    }
    let mut live = std::collections::BTreeSet::new();
    for (light, camera, model, intensity, shadows) in seen {
        let key = (light, camera);
        live.insert(key);
        // A light renders a map when it casts shadows and, for a directional light, has
        // cascades for this camera; otherwise its factor is 1 and the engine holds nothing.
        let shadows =
            shadows && !matches!(&model, PbrModel::Directional(d) if d.cascades.is_empty());
        if let Some(old) = state.lights.get_mut(&key)
            && old.model == model
            && old.shadows == shadows
        {
            if old.intensity != intensity {
                // No new map, but every probe's share changes.
                old.intensity = intensity;
                state.generation += 1;
            }
            continue;
        }
        let id = match state.lights.get(&key) {
            Some(old) => old.id,
            None => {
                state.next_id += 1;
                LightId(state.next_id)
            }
        };
        state.generation += 1;
        if shadows {
            let engine = match &model {
                PbrModel::Directional(d) => d.light(intensity),
                PbrModel::Spot(s) => s.light(intensity),
                PbrModel::Point(p) => p.light(intensity),
            };
            state.lighting.set_light(id, engine);
        } else {
            state.lighting.remove_light(id);
        }
        state.lights.insert(
            key,
            PbrLight {
                light,
                camera,
                model,
                intensity,
                shadows,
                id,
            },
        );
    }
    let gone: Vec<_> = state
        .lights
        .keys()
        .filter(|k| !live.contains(*k))
        .copied()
        .collect();
    for key in gone {
        if let Some(old) = state.lights.remove(&key) {
            state.lighting.remove_light(old.id);
            state.generation += 1;
        }
    }
    diagnostics.sync_pbr += start.elapsed();
}

/// Renders the game lights' maps that changed, side by side on the `ComputeTaskPool`.
pub fn render_pbr_maps(
    shadows: Res<PbrShadows>,
    settings: Res<ShadowSettings>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::render_pbr_maps");
    let start = Instant::now();
    let pending = shadows.lighting.pending_lights();
    let lighting = &shadows.lighting;
    render_all(settings.raster_threads, &pending, |&id, threads| {
        let _ = lighting.map_with_threads(id, threads);
    });
    for id in &pending {
        if let Some(error) = lighting.map_error(*id)
            && let Some(entry) = shadows.lights.values().find(|l| l.id == *id)
        {
            log::error!(
                "bevy_penumbra: the shadow map of {} failed: {error}",
                entry.light
            );
        }
    }
    diagnostics.pbr_maps_rendered = pending.len() as u32;
    diagnostics.render_pbr_maps = start.elapsed();
}

/// Adds the game lights' shares to every [`Exposure`](crate::probe::Exposure), seen from
/// [`PbrShadows::default_camera`]: for every probe when a camera, light, map or occluder
/// changed (or the plugin's own lights did, which rewrites every `Exposure`), else only for
/// probes that moved or changed.
pub fn update_pbr_exposure(
    shadows: Res<PbrShadows>,
    maps: Option<Res<ShadowMaps>>,
    mut probes: Query<(
        Ref<GlobalTransform>,
        Ref<crate::probe::LightProbe>,
        &mut crate::probe::Exposure,
    )>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
    mut last: Local<Option<((u64, u64), u64)>>,
    mut reported: Local<EntityHashSet>,
) {
    penumbra_core::zone!("bevy_penumbra::update_pbr_exposure");
    let start = Instant::now();
    let now = (
        shadows.generation(),
        maps.map_or(0, |m| m.lighting().light_generation()),
    );
    let all = last.replace(now) != Some(now);
    if shadows.lights.is_empty() && reported.is_empty() {
        diagnostics.update_pbr_exposure = Duration::ZERO;
        return;
    }
    let camera = shadows.default_camera();
    let view = camera.and_then(|c| shadows.cameras.get(&c)).copied();
    // The shares replaced: those of the game lights now and of the ones reported before (a
    // light that went away leaves no share behind).
    let current: EntityHashSet = shadows.lights.values().map(|l| l.light).collect();
    let mut game = std::mem::replace(&mut *reported, current.clone());
    game.extend(current);
    let game = &game;
    probes
        .par_iter_mut()
        .for_each(|(transform, probe, mut exposure)| {
            if !all && !transform.is_changed() && !probe.is_changed() {
                return;
            }
            let mut shares: Vec<crate::probe::LightExposure> = Vec::new();
            let n = probe.offsets.len().max(1) as f32;
            let normal = probe.normal.unwrap_or(Vec3::ZERO);
            for entry in shadows.lights.values() {
                if entry.camera.is_some() && entry.camera != camera {
                    continue;
                }
                let (mut arrive, mut could) = (0.0, 0.0);
                for &o in &probe.offsets {
                    let p = transform.transform_point(o);
                    let u = entry.unshadowed(p);
                    if u <= 0.0 {
                        continue;
                    }
                    let factor = match view {
                        Some(v) => shadows
                            .factor_of(entry, &v, p, normal, v.filter)
                            .unwrap_or(1.0),
                        None => 1.0,
                    };
                    arrive += u * factor;
                    could += u;
                }
                if could > 0.0 {
                    shares.push(crate::probe::LightExposure {
                        light: entry.light,
                        lit_fraction: arrive / could,
                        irradiance: arrive / n,
                        unshadowed: could / n,
                    });
                }
            }
            let mut next = exposure.clone();
            next.replace_lights(|l| game.contains(&l.light), shares);
            if *exposure != next {
                *exposure = next;
            }
        });
    diagnostics.update_pbr_exposure = start.elapsed();
}
