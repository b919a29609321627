//! Shadow-casting lights and their maps.
//!
//! A [`ShadowLight`] on an entity is a directional (sun), spot or point light placed by the
//! entity's `GlobalTransform`: lights shine along the entity's forward axis (−Z, as Bevy's own
//! lights do), spot and point lights sit at its translation. Each has the settings a renderer
//! gives its shadow map — resolution, depth format, bias, PCF kernel and the static sampler it
//! is read with — so the map the [`ShadowMapPlugin`] renders is the one the GPU samples.
//!
//! Maps live in the [`ShadowMaps`] resource, a binding over the engine's
//! [`Lighting`], which owns the occluders, lights, eyes and
//! their maps. Each frame the plugin hands it the lights that changed (component, transform,
//! resolved sampler); the engine drops a light's map only when the light changed or an
//! occluder change can reach it — anywhere for a directional light, inside the view out to
//! `range` for spot and point lights — and [`PenumbraSystems::Rasterize`] renders the dropped
//! maps, side by side on the `ComputeTaskPool`. A static scene renders each map once.
//!
//! ```
//! use bevy_app::App;
//! use bevy_ecs::prelude::*;
//! use bevy_penumbra::prelude::*;
//! use bevy_transform::prelude::*;
//! use glam::Vec3;
//!
//! let mut app = App::new();
//! app.add_plugins((bevy_app::TaskPoolPlugin::default(), TransformPlugin, PenumbraPlugin::default()));
//! app.world_mut().spawn((Occluder::cuboid(Vec3::new(20.0, 1.0, 20.0)), Transform::from_xyz(0.0, -0.5, 0.0)));
//! let lamp = app.world_mut().spawn((
//!     ShadowLight::spot(0.6, 15.0, 30.0).with_resolution(256).with_kernel(PcfKernel::PCF_3X3),
//!     Transform::from_xyz(0.0, 5.0, 0.0).looking_at(Vec3::ZERO, Vec3::Z),
//! )).id();
//! app.update();
//! let maps = app.world().resource::<ShadowMaps>();
//! assert_eq!(maps.get(lamp).unwrap().map().resolution(), 256);
//! ```

use std::collections::HashMap;
use std::time::Instant;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_tasks::ComputeTaskPool;
use bevy_transform::components::{GlobalTransform, Transform};
use glam::Vec3;
use penumbra_core::Format;
use penumbra_core::shadow::{
    Aabb, EyeId, EyeMap, Light, LightId, LightKind, Lighting, PcfKernel, ShadowBias, ShadowError,
    ShadowMap,
};

use crate::samplers::{ShadowSampler, StaticSamplers};
use crate::{PenumbraDiagnostics, PenumbraSystems, ShadowSettings};

/// What kind of light a [`ShadowLight`] is; placement comes from the `GlobalTransform`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShadowLightKind {
    /// A light infinitely far away shining along the entity's forward axis (the sun).
    Directional {
        /// The world box the map covers; `None` fits every occluder.
        bounds: Option<Aabb>,
    },
    /// A cone from the entity's translation along its forward axis.
    Spot {
        /// Half-angle of the cone, radians (below 1.55).
        outer_angle: f32,
        /// Half-angle of the full-intensity core, radians.
        inner_angle: f32,
        /// Where the light fades to zero; the map's far plane.
        range: f32,
    },
    /// Light in every direction from the entity's translation (a cube map).
    Point {
        /// Where the light fades to zero; the map's far plane.
        range: f32,
    },
}

/// A light that casts shadows, with the settings of its shadow map.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Transform)]
pub struct ShadowLight {
    /// Kind and shape.
    pub kind: ShadowLightKind,
    /// Intensity (at distance 1 for spot and point lights).
    pub intensity: f32,
    /// Map size in texels (per cube face for point lights).
    pub resolution: u32,
    /// Depth format: `D32Float` (default) or `D16Unorm`.
    pub format: Format,
    /// Rasterizer depth bias, receiver bias and normal offset.
    pub bias: ShadowBias,
    /// The PCF kernel of the game's shadow shader.
    pub kernel: PcfKernel,
    /// The static sampler the map is read with.
    pub sampler: ShadowSampler,
}

impl ShadowLight {
    fn from_engine(kind: ShadowLightKind, engine: Light) -> ShadowLight {
        ShadowLight {
            kind,
            intensity: engine.intensity,
            resolution: engine.resolution,
            format: engine.format,
            bias: engine.bias,
            kernel: engine.kernel,
            sampler: ShadowSampler::Default,
        }
    }

    /// A directional light (2048² map fitted to every occluder).
    #[must_use]
    pub fn directional(intensity: f32) -> ShadowLight {
        ShadowLight::from_engine(
            ShadowLightKind::Directional { bounds: None },
            Light::directional(Vec3::NEG_Z, intensity),
        )
    }

    /// A spot light with cone half-angle `angle` (radians; full intensity inside 0.8 × `angle`)
    /// and a 1024² map.
    #[must_use]
    pub fn spot(angle: f32, range: f32, intensity: f32) -> ShadowLight {
        ShadowLight::from_engine(
            ShadowLightKind::Spot {
                outer_angle: angle,
                inner_angle: angle * 0.8,
                range,
            },
            Light::spot(Vec3::ZERO, Vec3::NEG_Z, angle, range, intensity),
        )
    }

    /// A point light with a 512² cube map.
    #[must_use]
    pub fn point(range: f32, intensity: f32) -> ShadowLight {
        ShadowLight::from_engine(
            ShadowLightKind::Point { range },
            Light::point(Vec3::ZERO, range, intensity),
        )
    }

    /// For a directional light, the world box its map covers (no effect on other kinds).
    #[must_use]
    pub fn with_bounds(mut self, world_bounds: Aabb) -> ShadowLight {
        if let ShadowLightKind::Directional { bounds } = &mut self.kind {
            *bounds = Some(world_bounds);
        }
        self
    }

    /// Another map resolution.
    #[must_use]
    pub fn with_resolution(mut self, resolution: u32) -> ShadowLight {
        self.resolution = resolution;
        self
    }

    /// Another depth format.
    #[must_use]
    pub fn with_format(mut self, format: Format) -> ShadowLight {
        self.format = format;
        self
    }

    /// Another bias.
    #[must_use]
    pub fn with_bias(mut self, bias: ShadowBias) -> ShadowLight {
        self.bias = bias;
        self
    }

    /// Another PCF kernel.
    #[must_use]
    pub fn with_kernel(mut self, kernel: PcfKernel) -> ShadowLight {
        self.kernel = kernel;
        self
    }

    /// Another sampler.
    #[must_use]
    pub fn with_sampler(mut self, sampler: ShadowSampler) -> ShadowLight {
        self.sampler = sampler;
        self
    }

    /// The static sampler a pixel shader sees at `register(s{register}, space{space})`.
    #[must_use]
    pub fn with_sampler_register(self, register: u32, space: u32) -> ShadowLight {
        self.with_sampler(ShadowSampler::Register { register, space })
    }

    /// The static sampler named `name` in the [`StaticSamplers`] table.
    #[must_use]
    pub fn with_sampler_name(self, name: impl Into<String>) -> ShadowLight {
        self.with_sampler(ShadowSampler::Named(name.into()))
    }

    /// The engine light this component describes at `transform`, read with `sampler`.
    #[must_use]
    pub fn to_engine(
        &self,
        transform: &GlobalTransform,
        sampler: penumbra_core::StaticSamplerDesc,
    ) -> Light {
        let position = transform.translation();
        let direction = *transform.forward();
        let kind = match self.kind {
            ShadowLightKind::Directional { bounds } => LightKind::Directional { direction, bounds },
            ShadowLightKind::Spot {
                outer_angle,
                inner_angle,
                range,
            } => LightKind::Spot {
                position,
                direction,
                outer_angle,
                inner_angle,
                range,
            },
            ShadowLightKind::Point { range } => LightKind::Point { position, range },
        };
        Light {
            kind,
            intensity: self.intensity,
            resolution: self.resolution,
            format: self.format,
            bias: self.bias,
            sampler,
            kernel: self.kernel.clone(),
            ..Light::directional(Vec3::NEG_Z, 0.0)
        }
    }
}

/// Why a light has no map.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// The light names a static sampler the table does not have.
    #[error("no static sampler {0} in the StaticSamplers table (SPEC R119)")]
    SamplerNotFound(ShadowSampler),
    /// The engine refused the light or its sampler.
    #[error(transparent)]
    Shadow(#[from] ShadowError),
}

/// One light's rendered map, seen through [`ShadowMaps`].
#[derive(Clone, Copy, Debug)]
pub struct LightMap<'a> {
    entity: Entity,
    name: Option<&'a str>,
    map: &'a ShadowMap,
}

impl<'a> LightMap<'a> {
    /// The light's entity.
    #[must_use]
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// The light entity's [`Name`], if it has one.
    #[must_use]
    pub fn name(&self) -> Option<&'a str> {
        self.name
    }

    /// The engine light (world placement, resolved sampler) the map was rendered for.
    #[must_use]
    pub fn light(&self) -> &'a Light {
        self.map.light()
    }

    /// The map.
    #[must_use]
    pub fn map(&self) -> &'a ShadowMap {
        self.map
    }
}

/// The engine handle of a light entity.
pub(crate) fn light_id(entity: Entity) -> LightId {
    LightId(entity.to_bits())
}

/// The engine handle of a viewer entity.
pub(crate) fn eye_id(entity: Entity) -> EyeId {
    EyeId(entity.to_bits())
}

/// The entity of an engine handle this plugin made.
pub(crate) fn entity_of(id: u64) -> Option<Entity> {
    Entity::try_from_bits(id)
}

/// The world's lighting: the engine's [`Lighting`] (occluders, lights and viewers by entity,
/// their maps), the lights' names, and why a light or viewer has no map.
#[derive(Resource, Debug, Default)]
pub struct ShadowMaps {
    lighting: Lighting,
    names: HashMap<LightId, Name>,
    errors: EntityHashMap<MapError>,
    eye_errors: EntityHashMap<ShadowError>,
}

impl ShadowMaps {
    /// The engine lighting (read-only; the plugin's systems keep it in step with the world).
    #[must_use]
    pub fn lighting(&self) -> &Lighting {
        &self.lighting
    }

    pub(crate) fn lighting_mut(&mut self) -> &mut Lighting {
        &mut self.lighting
    }

    fn view(&self, id: LightId) -> Option<LightMap<'_>> {
        Some(LightMap {
            entity: entity_of(id.0)?,
            name: self.names.get(&id).map(Name::as_str),
            map: self.lighting.rendered_map(id)?,
        })
    }

    /// The rendered maps, in entity order.
    pub fn iter(&self) -> impl Iterator<Item = LightMap<'_>> {
        self.lighting.lights().filter_map(|(id, _)| self.view(id))
    }

    /// Number of rendered maps.
    #[must_use]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// True without rendered maps.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The map of a light entity.
    #[must_use]
    pub fn get(&self, light: Entity) -> Option<LightMap<'_>> {
        self.view(light_id(light))
    }

    /// The map of the light whose [`Name`] is `name` (the first in entity order).
    #[must_use]
    pub fn get_by_name(&self, name: &str) -> Option<LightMap<'_>> {
        self.iter().find(|m| m.name() == Some(name))
    }

    /// Why a light has no map (an unknown sampler, an invalid light, a directional light with
    /// nothing to fit), until it changes and renders.
    #[must_use]
    pub fn error(&self, light: Entity) -> Option<&MapError> {
        self.errors.get(&light)
    }

    /// Every light that has no map, and why.
    pub fn errors(&self) -> impl Iterator<Item = (Entity, &MapError)> {
        self.errors.iter().map(|(e, err)| (*e, err))
    }

    /// The eye map of a [`Viewer`](crate::sight::Viewer) entity.
    #[must_use]
    pub fn eye_map(&self, viewer: Entity) -> Option<&EyeMap> {
        self.lighting.rendered_eye_map(eye_id(viewer))
    }

    /// Why a viewer has no eye map (an invalid field of view or range).
    #[must_use]
    pub fn eye_error(&self, viewer: Entity) -> Option<&ShadowError> {
        self.eye_errors.get(&viewer)
    }

    /// Number of rendered eye maps.
    #[must_use]
    pub fn eye_map_count(&self) -> usize {
        self.lighting
            .eyes()
            .filter(|(id, _)| self.lighting.rendered_eye_map(*id).is_some())
            .count()
    }

    pub(crate) fn set_eye_error(&mut self, viewer: Entity, error: Option<ShadowError>) {
        match error {
            Some(e) => {
                if self.eye_errors.get(&viewer) != Some(&e) {
                    log::error!("bevy_penumbra: viewer {viewer}: {e}");
                }
                self.eye_errors.insert(viewer, e);
            }
            None => {
                self.eye_errors.remove(&viewer);
            }
        }
    }

    fn fail(&mut self, light: Entity, error: MapError) {
        // Once per new reason, not on every retry after an occluder change.
        if self.errors.get(&light) != Some(&error) {
            log::error!("bevy_penumbra: shadow light {light}: {error}");
        }
        self.errors.insert(light, error);
    }

    fn remove(&mut self, light: Entity) -> bool {
        let id = light_id(light);
        self.names.remove(&id);
        let had_error = self.errors.remove(&light).is_some();
        self.lighting.remove_light(id).is_some() || had_error
    }
}

/// Renders [`ShadowLight`]s into [`ShadowMaps`] (part of
/// [`PenumbraPlugin`](crate::PenumbraPlugin)).
#[derive(Clone, Debug)]
pub struct ShadowMapPlugin {
    /// The schedule the system runs in.
    pub schedule: InternedScheduleLabel,
}

impl ShadowMapPlugin {
    /// The plugin for `schedule`.
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        ShadowMapPlugin {
            schedule: schedule.intern(),
        }
    }
}

impl Default for ShadowMapPlugin {
    fn default() -> Self {
        ShadowMapPlugin::new(PostUpdate)
    }
}

impl Plugin for ShadowMapPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ShadowMaps>()
            .init_resource::<StaticSamplers>()
            .init_resource::<ShadowSettings>()
            .init_resource::<PenumbraDiagnostics>()
            .add_systems(
                self.schedule,
                render_shadow_maps.in_set(PenumbraSystems::Rasterize),
            );
    }

    fn finish(&self, _app: &mut App) {
        crate::plugin::ensure_compute_task_pool();
    }
}

/// Runs `render` for every job: side by side on the `ComputeTaskPool` with one rasterizer
/// thread each when there are several, with `threads` rasterizer threads when there is one.
pub(crate) fn render_all<T: Sync>(threads: usize, jobs: &[T], render: impl Fn(&T, usize) + Sync) {
    match jobs {
        [] => {}
        [one] => render(one, threads),
        many => {
            let render = &render;
            ComputeTaskPool::get_or_init(bevy_tasks::TaskPool::default).scope(|s| {
                for job in many {
                    s.spawn(async move { render(job, 1) });
                }
            });
        }
    }
}

/// A light with change ticks, and its name if any.
type LightData = (
    Entity,
    Ref<'static, ShadowLight>,
    Ref<'static, GlobalTransform>,
    Option<Ref<'static, Name>>,
);

/// Hands the lights that changed to the engine, drops removed ones, renders every map the
/// engine no longer holds, and records why a light could not render.
pub fn render_shadow_maps(
    lights: Query<LightData>,
    mut removed: RemovedComponents<ShadowLight>,
    samplers: Res<StaticSamplers>,
    settings: Res<ShadowSettings>,
    mut maps: ResMut<ShadowMaps>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::render_shadow_maps");
    let start = Instant::now();
    let before = maps.lighting.light_generation();
    let state = maps.bypass_change_detection();
    for entity in removed.read() {
        if !lights.contains(entity) {
            state.remove(entity);
        }
    }
    for (entity, light, transform, name) in &lights {
        let id = light_id(entity);
        let known = state.lighting.light(id).is_some() || state.errors.contains_key(&entity);
        let name_changed = name.as_ref().is_some_and(|n| n.is_changed());
        if known
            && !name_changed
            && !light.is_changed()
            && !transform.is_changed()
            && !samplers.is_changed()
        {
            continue;
        }
        match name {
            Some(n) => state.names.insert(id, Name::clone(&n)),
            None => state.names.remove(&id),
        };
        let Some(sampler) = samplers.resolve(&light.sampler) else {
            let error = MapError::SamplerNotFound(light.sampler.clone());
            state.lighting.remove_light(id);
            state.fail(entity, error);
            continue;
        };
        state
            .lighting
            .set_light(id, light.to_engine(&transform, sampler));
    }
    let pending = state.lighting.pending_lights();
    let lighting = &state.lighting;
    render_all(settings.raster_threads, &pending, |&id, threads| {
        let _ = lighting.map_with_threads(id, threads);
    });
    for id in &pending {
        let Some(entity) = entity_of(id.0) else {
            continue;
        };
        match state.lighting.map_error(*id).cloned() {
            Some(error) => state.fail(entity, MapError::Shadow(error)),
            None => {
                state.errors.remove(&entity);
            }
        }
    }
    if maps.lighting.light_generation() != before || !pending.is_empty() {
        maps.set_changed();
    }
    let rendered = pending.len() as u32;
    diagnostics.shadow_maps_rendered = rendered;
    diagnostics.total_shadow_maps_rendered += u64::from(rendered);
    diagnostics.render_shadow_maps = start.elapsed();
}
