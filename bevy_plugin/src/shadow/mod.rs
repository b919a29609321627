//! Shadow-casting lights and their maps.
//!
//! A [`ShadowLight`] on an entity is a directional (sun), spot or point light placed by the
//! entity's `GlobalTransform`: lights shine along the entity's forward axis (−Z, as Bevy's own
//! lights do), spot and point lights sit at its translation. Each has the settings a renderer
//! gives its shadow map — resolution, depth format, bias, PCF kernel and the static sampler it
//! is read with — so the map the [`ShadowMapPlugin`] renders is the one the GPU samples.
//!
//! Maps live in the [`ShadowMaps`] resource. A light's map is re-rendered in
//! [`PenumbraSystems::Rasterize`] only when the light (its
//! component, transform or resolved sampler) changed, or an occluder changed within its reach
//! — anywhere for a directional light, within `range` for spot and point lights. A static
//! scene renders each map once.
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
//!     ShadowLight::spot(0.6, 15.0, 30.0).with_resolution(256).with_kernel(PcfKernel::Pcf3x3),
//!     Transform::from_xyz(0.0, 5.0, 0.0).looking_at(Vec3::ZERO, Vec3::Z),
//! )).id();
//! app.update();
//! let maps = app.world().resource::<ShadowMaps>();
//! assert_eq!(maps.get(lamp).unwrap().map().resolution(), 256);
//! ```

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
    Aabb, Light, LightKind, PcfKernel, Scene, ShadowBias, ShadowError, ShadowMap,
};

use crate::occluder::OccluderScene;
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
            kernel: self.kernel,
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

/// One light's rendered map, with the engine light it was rendered for.
#[derive(Clone, Debug)]
pub struct LightMap {
    entity: Entity,
    name: Option<Name>,
    light: Light,
    map: ShadowMap,
}

impl LightMap {
    /// The light's entity.
    #[must_use]
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// The light entity's [`Name`], if it has one.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_ref().map(Name::as_str)
    }

    /// The engine light (world placement, resolved sampler) the map was rendered for.
    #[must_use]
    pub fn light(&self) -> &Light {
        &self.light
    }

    /// The map.
    #[must_use]
    pub fn map(&self) -> &ShadowMap {
        &self.map
    }

    /// True when `point` lies inside the map: inside a directional map's square, a spot light's
    /// cone, or a point light's range.
    #[must_use]
    pub fn covers(&self, point: Vec3) -> bool {
        match &self.light.kind {
            LightKind::Directional { .. } | LightKind::Cascaded { .. } => self
                .map
                .project(0, point)
                .is_some_and(|[u, v, _]| (0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&v)),
            LightKind::Spot { .. } => self.light.unshadowed(point) > 0.0,
            LightKind::Point { position, range } => point.distance(*position) <= *range,
        }
    }

    /// Light that reaches `point` if nothing is in the way — intensity × falloff × cone — or 0
    /// when the point is outside the map.
    #[must_use]
    pub fn reach(&self, point: Vec3) -> f32 {
        if !point.is_finite() || !self.covers(point) {
            return 0.0;
        }
        self.light.unshadowed(point)
    }
}

/// Every light's shadow map (in entity order), and why a light has none.
#[derive(Resource, Debug, Default)]
pub struct ShadowMaps {
    maps: Vec<LightMap>,
    errors: EntityHashMap<MapError>,
}

impl ShadowMaps {
    /// The maps, in entity order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &LightMap> {
        self.maps.iter()
    }

    /// Number of maps.
    #[must_use]
    pub fn len(&self) -> usize {
        self.maps.len()
    }

    /// True without maps.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    /// The map of a light entity.
    #[must_use]
    pub fn get(&self, light: Entity) -> Option<&LightMap> {
        self.position(light).ok().map(|i| &self.maps[i])
    }

    /// The map of the light whose [`Name`] is `name` (the first in entity order).
    #[must_use]
    pub fn get_by_name(&self, name: &str) -> Option<&LightMap> {
        self.maps.iter().find(|m| m.name() == Some(name))
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

    fn position(&self, light: Entity) -> Result<usize, usize> {
        self.maps.binary_search_by_key(&light, |m| m.entity)
    }

    fn insert(&mut self, map: LightMap) {
        self.errors.remove(&map.entity);
        match self.position(map.entity) {
            Ok(i) => self.maps[i] = map,
            Err(i) => self.maps.insert(i, map),
        }
    }

    fn fail(&mut self, light: Entity, error: MapError) {
        self.remove(light);
        self.errors.insert(light, error);
    }

    fn remove(&mut self, light: Entity) -> bool {
        let had_error = self.errors.remove(&light).is_some();
        match self.position(light) {
            Ok(i) => {
                self.maps.remove(i);
                true
            }
            Err(_) => had_error,
        }
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
            .init_resource::<OccluderScene>()
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

/// True when an occluder change this frame can move a shadow in `light`'s map.
pub(crate) fn scene_change_reaches(occluders: &OccluderScene, kind: &LightKind) -> bool {
    match kind {
        // The map is fitted to the whole scene: any change can move it.
        LightKind::Directional { .. } | LightKind::Cascaded { .. } => {
            !occluders.changed_regions().is_empty()
        }
        LightKind::Spot {
            position, range, ..
        }
        | LightKind::Point { position, range } => occluders.changed_within(*position, *range),
    }
}

/// Renders the maps of many lights: side by side on the `ComputeTaskPool` (one rasterizer
/// thread each) when there are several, with `threads` rasterizer threads when there is one.
pub(crate) fn render_all<T, R>(
    scene: &Scene,
    threads: usize,
    jobs: &[T],
    render: impl Fn(&T, &Scene) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send + 'static,
{
    match jobs {
        [] => Vec::new(),
        [one] => {
            let scene = Scene {
                occluders: scene.occluders.clone(),
                threads,
            };
            vec![render(one, &scene)]
        }
        many => {
            let scene = Scene {
                occluders: scene.occluders.clone(),
                threads: 1,
            };
            let (scene, render) = (&scene, &render);
            ComputeTaskPool::get_or_init(bevy_tasks::TaskPool::default).scope(|s| {
                for job in many {
                    s.spawn(async move { render(job, scene) });
                }
            })
        }
    }
}

struct LightJob {
    entity: Entity,
    name: Option<Name>,
    light: Light,
}

/// A light with change ticks, and its name if any.
type LightData = (
    Entity,
    Ref<'static, ShadowLight>,
    Ref<'static, GlobalTransform>,
    Option<Ref<'static, Name>>,
);

/// Re-renders the map of every light that changed or that an occluder change reaches, drops the
/// maps of removed lights, and records why a light could not render.
pub fn render_shadow_maps(
    lights: Query<LightData>,
    mut removed: RemovedComponents<ShadowLight>,
    occluders: Res<OccluderScene>,
    samplers: Res<StaticSamplers>,
    settings: Res<ShadowSettings>,
    mut maps: ResMut<ShadowMaps>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::render_shadow_maps");
    let start = Instant::now();
    for entity in removed.read() {
        if !lights.contains(entity) && maps.bypass_change_detection().remove(entity) {
            maps.set_changed();
        }
    }
    let mut jobs = Vec::new();
    for (entity, light, transform, name) in &lights {
        let known = maps.position(entity).is_ok() || maps.error(entity).is_some();
        let name_changed = name.as_ref().is_some_and(|n| n.is_changed());
        let light_changed = light.is_changed() || transform.is_changed() || samplers.is_changed();
        if known && !light_changed && !name_changed && !occluders.is_changed() {
            continue;
        }
        let Some(sampler) = samplers.resolve(&light.sampler) else {
            let error = MapError::SamplerNotFound(light.sampler.clone());
            if maps.error(entity) != Some(&error) {
                log::error!("bevy_penumbra: shadow light {entity}: {error}");
                maps.fail(entity, error);
            }
            continue;
        };
        let engine = light.to_engine(&transform, sampler);
        let name = name.map(|n| Name::clone(&n));
        if let Ok(i) = maps.position(entity)
            && maps.maps[i].light == engine
            && !scene_change_reaches(&occluders, &engine.kind)
        {
            if maps.maps[i].name != name {
                maps.maps[i].name = name;
            }
            continue;
        }
        jobs.push(LightJob {
            entity,
            name,
            light: engine,
        });
    }
    let results = render_all(
        occluders.scene(),
        settings.raster_threads,
        &jobs,
        |job, scene| job.light.render(scene),
    );
    let rendered = results.len() as u32;
    for (job, result) in jobs.into_iter().zip(results) {
        match result {
            Ok(map) => maps.insert(LightMap {
                entity: job.entity,
                name: job.name,
                light: job.light,
                map,
            }),
            Err(error) => {
                let error = MapError::from(error);
                // Once per new reason, not on every retry after an occluder change.
                if maps.error(job.entity) != Some(&error) {
                    log::error!("bevy_penumbra: shadow light {}: {error}", job.entity);
                }
                maps.fail(job.entity, error);
            }
        }
    }
    diagnostics.shadow_maps_rendered = rendered;
    diagnostics.total_shadow_maps_rendered += u64::from(rendered);
    diagnostics.render_shadow_maps = start.elapsed();
}
