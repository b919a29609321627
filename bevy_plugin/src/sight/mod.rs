//! Line of sight: what guards, cameras and turrets can see.
//!
//! A [`Viewer`] is an eye at its entity's `GlobalTransform`, looking along the forward axis (−Z)
//! with a field of view and a range, and a list of target entities to watch. The
//! [`LineOfSightPlugin`] renders each viewer's depth map — the engine's eye map, the same
//! rasterizer and comparison sampler as a shadow map with the eye as the light, kept by the
//! engine's [`Lighting`](penumbra_core::shadow::Lighting) in [`ShadowMaps`] — in
//! [`PenumbraSystems::Rasterize`], again only when the eye
//! moved or an occluder changed within its view and range — and in
//! [`PenumbraSystems::Query`] writes one [`Sighting`] per target
//! into the viewer's [`LineOfSight`].
//!
//! Targets are points: the target entity's translation, moved by its [`SightTarget`] offset; a
//! [`SightTarget`] radius makes the target a small disc facing the eye (five probe points), so a
//! target half behind a pillar is half visible.
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
//! let player = app.world_mut().spawn(Transform::from_xyz(0.0, 1.0, -8.0)).id();
//! let wall = app.world_mut().spawn((Occluder::cuboid(Vec3::new(4.0, 3.0, 0.5)), Transform::from_xyz(0.0, 1.5, -4.0))).id();
//! let guard = app.world_mut().spawn((
//!     Viewer::new(90f32.to_radians(), 20.0).with_targets([player]),
//!     Transform::from_xyz(0.0, 1.0, 0.0), // looks along −Z, at the wall
//! )).id();
//! app.update();
//! assert!(!app.world().get::<LineOfSight>(guard).unwrap().sees(player));
//! app.world_mut().despawn(wall);
//! app.update();
//! assert!(app.world().get::<LineOfSight>(guard).unwrap().sees(player));
//! ```

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_transform::components::{GlobalTransform, Transform};
use glam::Vec3;
use penumbra_core::shadow::{EyeMap, Viewer as Eye};

use crate::shadow::{ShadowMaps, entity_of, eye_id, render_all};
use crate::{PenumbraDiagnostics, PenumbraSystems, ShadowSettings};

/// An eye at the entity's transform, looking along its forward axis (−Z).
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Transform, LineOfSight)]
pub struct Viewer {
    /// Full field of view, radians; 177.6° (2 × 1.55 rad) or more sees all around (a cube map).
    pub fov: f32,
    /// How far the eye sees.
    pub range: f32,
    /// Depth-map size in texels (per cube face for all-around eyes).
    pub resolution: u32,
    /// The entities to check every frame.
    pub targets: Vec<Entity>,
}

impl Viewer {
    /// An eye with a field of view (radians) and range, a 512² depth map and no targets.
    #[must_use]
    pub fn new(fov: f32, range: f32) -> Viewer {
        Viewer {
            fov,
            range,
            resolution: 512,
            targets: Vec::new(),
        }
    }

    /// The same eye watching `targets`.
    #[must_use]
    pub fn with_targets(mut self, targets: impl IntoIterator<Item = Entity>) -> Viewer {
        self.targets = targets.into_iter().collect();
        self
    }

    /// Another depth-map resolution.
    #[must_use]
    pub fn with_resolution(mut self, resolution: u32) -> Viewer {
        self.resolution = resolution;
        self
    }

    /// The engine eye this component describes at `transform`.
    #[must_use]
    pub fn to_engine(&self, transform: &GlobalTransform) -> Eye {
        Eye {
            position: transform.translation(),
            direction: *transform.forward(),
            fov: self.fov,
            range: self.range,
            resolution: self.resolution,
        }
    }
}

/// Where a viewer looks at this entity: its translation plus a local `offset` (a chest, a head),
/// and the `radius` of the disc that stands for it.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct SightTarget {
    /// Offset in the entity's local space.
    pub offset: Vec3,
    /// Radius of the target seen as a disc facing the eye; 0 is a point.
    pub radius: f32,
}

/// What a viewer sees of one target this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sighting {
    /// The target entity.
    pub target: Entity,
    /// The world point looked at.
    pub point: Vec3,
    /// The fraction of the target's probe points the eye sees (0 outside range or field of
    /// view, or while the eye has no map).
    pub visible_fraction: f32,
    /// `visible_fraction` ≥ [`ShadowSettings::sight_threshold`] (and above 0).
    pub seen: bool,
}

/// A viewer's sightings of its targets, updated every frame by the [`LineOfSightPlugin`].
///
/// Targets that do not exist (or have no transform) are left out.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct LineOfSight {
    sightings: Vec<Sighting>,
}

impl LineOfSight {
    /// One sighting per existing target, in the order of [`Viewer::targets`].
    #[must_use]
    pub fn sightings(&self) -> &[Sighting] {
        &self.sightings
    }

    /// The sighting of `target`.
    #[must_use]
    pub fn get(&self, target: Entity) -> Option<&Sighting> {
        self.sightings.iter().find(|s| s.target == target)
    }

    /// True when `target` is seen.
    #[must_use]
    pub fn sees(&self, target: Entity) -> bool {
        self.get(target).is_some_and(|s| s.seen)
    }
}

/// A viewer's visible fraction of a target of `radius` at `point`, and whether that counts as
/// seen — shared by [`LineOfSight`] and [`ShadowQuery`](crate::query::ShadowQuery).
pub(crate) fn look(eye: Option<&EyeMap>, point: Vec3, radius: f32, threshold: f32) -> (f32, bool) {
    let fraction = eye.map_or(0.0, |e| e.visible_fraction(point, radius));
    (fraction, fraction > 0.0 && fraction >= threshold)
}

/// Renders eye maps and updates [`LineOfSight`]s (part of
/// [`PenumbraPlugin`](crate::PenumbraPlugin)).
#[derive(Clone, Debug)]
pub struct LineOfSightPlugin {
    /// The schedule the systems run in.
    pub schedule: InternedScheduleLabel,
}

impl LineOfSightPlugin {
    /// The plugin for `schedule`.
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        LineOfSightPlugin {
            schedule: schedule.intern(),
        }
    }
}

impl Default for LineOfSightPlugin {
    fn default() -> Self {
        LineOfSightPlugin::new(PostUpdate)
    }
}

impl Plugin for LineOfSightPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ShadowMaps>()
            .init_resource::<ShadowSettings>()
            .init_resource::<PenumbraDiagnostics>()
            .add_systems(
                self.schedule,
                (
                    render_eye_maps.in_set(PenumbraSystems::Rasterize),
                    update_line_of_sight.in_set(PenumbraSystems::Query),
                ),
            );
    }

    fn finish(&self, _app: &mut App) {
        crate::plugin::ensure_compute_task_pool();
    }
}

/// Hands the viewers that moved or changed to the engine, drops removed ones, and renders every
/// eye map the engine no longer holds (an occluder change within an eye's range drops it).
pub fn render_eye_maps(
    viewers: Query<(Entity, Ref<Viewer>, Ref<GlobalTransform>)>,
    mut removed: RemovedComponents<Viewer>,
    settings: Res<ShadowSettings>,
    mut maps: ResMut<ShadowMaps>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::render_eye_maps");
    let start = Instant::now();
    let state = maps.bypass_change_detection();
    let before = state.lighting().eye_generation();
    for entity in removed.read() {
        if !viewers.contains(entity) {
            state.lighting_mut().remove_eye(eye_id(entity));
            state.set_eye_error(entity, None);
        }
    }
    for (entity, viewer, transform) in &viewers {
        let id = eye_id(entity);
        let known = state.lighting().eye(id).is_some();
        if known && !viewer.is_changed() && !transform.is_changed() {
            continue;
        }
        state
            .lighting_mut()
            .set_eye(id, viewer.to_engine(&transform));
    }
    let pending = state.lighting().pending_eyes();
    let lighting = state.lighting();
    render_all(settings.raster_threads, &pending, |&id, threads| {
        let _ = lighting.eye_map_with_threads(id, threads);
    });
    for id in &pending {
        if let Some(entity) = entity_of(id.0) {
            let error = state.lighting().eye_map_error(*id).cloned();
            state.set_eye_error(entity, error);
        }
    }
    if state.lighting().eye_generation() != before || !pending.is_empty() {
        maps.set_changed();
    }
    let rendered = pending.len() as u32;
    diagnostics.eye_maps_rendered = rendered;
    diagnostics.total_eye_maps_rendered += u64::from(rendered);
    diagnostics.render_eye_maps = start.elapsed();
}

/// Writes every viewer's [`LineOfSight`] of its targets, in parallel.
pub fn update_line_of_sight(
    maps: Res<ShadowMaps>,
    settings: Res<ShadowSettings>,
    mut viewers: Query<(Entity, &Viewer, Mut<LineOfSight>)>,
    targets: Query<(&GlobalTransform, Option<&SightTarget>)>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::update_line_of_sight");
    let start = Instant::now();
    let checked = AtomicU32::new(0);
    let threshold = settings.sight_threshold;
    viewers.par_iter_mut().for_each_init(
        LineOfSight::default,
        |scratch, (entity, viewer, mut sight)| {
            let eye = maps.eye_map(entity);
            scratch.sightings.clear();
            for &target in &viewer.targets {
                let Ok((transform, shape)) = targets.get(target) else {
                    continue;
                };
                let shape = shape.copied().unwrap_or_default();
                let point = transform.transform_point(shape.offset);
                let (visible_fraction, seen) = look(eye, point, shape.radius, threshold);
                scratch.sightings.push(Sighting {
                    target,
                    point,
                    visible_fraction,
                    seen,
                });
            }
            checked.fetch_add(scratch.sightings.len() as u32, Ordering::Relaxed);
            if *sight != *scratch {
                std::mem::swap(&mut *sight, scratch);
            }
        },
    );
    diagnostics.sightings = checked.into_inner();
    diagnostics.update_line_of_sight = start.elapsed();
}
