//! Occluders: the level geometry that casts shadows and blocks sight.
//!
//! Put an [`Occluder`] on any entity with a `Transform`: a box ([`Occluder::cuboid`]) or a
//! triangle mesh shared by `Arc` ([`Occluder::mesh`]). Its world placement is the entity's
//! `GlobalTransform`, so occluders can be children of moving platforms.
//!
//! The [`OccluderPlugin`] keeps the [`OccluderScene`] resource in step with the world in
//! [`PenumbraSystems::Prepare`]: it visits only occluders
//! whose `Occluder` or `GlobalTransform` changed (or that were added or removed), ignores
//! writes that leave them where they were, and records the world boxes that changed so each
//! light re-renders only when a change can reach it.
//!
//! ```
//! use std::sync::Arc;
//! use bevy_penumbra::occluder::Occluder;
//! use bevy_penumbra::penumbra_core::raster::Mesh;
//! use glam::Vec3;
//!
//! let crate_box = Occluder::cuboid(Vec3::new(1.0, 2.0, 1.0)); // 1 × 2 × 1, centred on the entity
//! let ramp = Arc::new(Mesh::new(
//!     vec![Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 2.0)],
//!     vec![0, 1, 2],
//! )?);
//! let a = Occluder::mesh(ramp.clone());
//! let b = Occluder::mesh(ramp); // the same triangles, placed by another entity's transform
//! # let _ = (crate_box, a, b);
//! # Ok::<(), penumbra_core::raster::RasterError>(())
//! ```

use std::sync::Arc;
use std::time::Instant;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_transform::components::{GlobalTransform, Transform};
use glam::{Mat4, Vec3};
use penumbra_core::raster::Mesh;
use penumbra_core::shadow::{Aabb, Occluder as CoreOccluder, Scene};

use crate::{PenumbraDiagnostics, PenumbraSystems};

/// Shadow-casting geometry: a triangle mesh (shared by `Arc`) placed by the entity's
/// `GlobalTransform`.
#[derive(Component, Clone, Debug)]
#[require(Transform)]
pub struct Occluder {
    mesh: Arc<Mesh>,
}

impl Occluder {
    /// A box of `size` (full lengths along x, y, z) centred on the entity.
    #[must_use]
    pub fn cuboid(size: Vec3) -> Occluder {
        let half = size.abs() * 0.5;
        Occluder {
            mesh: Arc::new(Mesh::cuboid(-half, half)),
        }
    }

    /// A triangle mesh in the entity's local space.
    #[must_use]
    pub fn mesh(mesh: Arc<Mesh>) -> Occluder {
        Occluder { mesh }
    }

    /// The mesh.
    #[must_use]
    pub fn shared_mesh(&self) -> &Arc<Mesh> {
        &self.mesh
    }

    /// World bounds when placed by `transform` (empty for a mesh without positions).
    #[must_use]
    pub fn world_bounds(&self, transform: &GlobalTransform) -> Aabb {
        CoreOccluder::mesh(self.mesh.clone(), transform.to_matrix()).bounds()
    }
}

impl From<Arc<Mesh>> for Occluder {
    fn from(mesh: Arc<Mesh>) -> Self {
        Occluder::mesh(mesh)
    }
}

#[derive(Clone, Debug)]
struct Placed {
    mesh: Arc<Mesh>,
    transform: Mat4,
    bounds: Aabb,
}

/// The engine's [`Scene`] of every [`Occluder`], and what changed in it this frame.
#[derive(Resource, Debug, Default)]
pub struct OccluderScene {
    scene: Scene,
    placed: EntityHashMap<Placed>,
    /// World boxes (before and after) of the occluders that changed this frame.
    changed: Vec<Aabb>,
}

impl OccluderScene {
    /// The engine scene, occluders in entity order.
    #[must_use]
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// Number of occluders.
    #[must_use]
    pub fn len(&self) -> usize {
        self.scene.occluders.len()
    }

    /// True without occluders.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.scene.occluders.is_empty()
    }

    /// World boxes where occluders appeared, moved away from, moved to, changed or vanished
    /// this frame (before and after each change).
    #[must_use]
    pub fn changed_regions(&self) -> &[Aabb] {
        &self.changed
    }

    /// True when a change this frame touches the sphere (`center`, `radius`) — whether a spot
    /// or point light (or an eye) of that range must re-render. Empty boxes (meshes without
    /// positions) touch nothing.
    #[must_use]
    pub fn changed_within(&self, center: Vec3, radius: f32) -> bool {
        self.changed.iter().any(|b| {
            !b.is_empty() && {
                let nearest = center.clamp(b.min, b.max);
                nearest.distance_squared(center) <= radius * radius
            }
        })
    }
}

/// Keeps [`OccluderScene`] in step with the [`Occluder`]s (part of
/// [`PenumbraPlugin`](crate::PenumbraPlugin)).
#[derive(Clone, Debug)]
pub struct OccluderPlugin {
    /// The schedule the system runs in.
    pub schedule: InternedScheduleLabel,
}

impl OccluderPlugin {
    /// The plugin for `schedule`.
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        OccluderPlugin {
            schedule: schedule.intern(),
        }
    }
}

impl Default for OccluderPlugin {
    fn default() -> Self {
        OccluderPlugin::new(PostUpdate)
    }
}

impl Plugin for OccluderPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<OccluderScene>()
            .init_resource::<PenumbraDiagnostics>()
            .add_systems(
                self.schedule,
                sync_occluders.in_set(PenumbraSystems::Prepare),
            );
    }
}

/// Occluders whose shape or placement was written this frame (or that were added).
type Moved = Or<(Changed<Occluder>, Changed<GlobalTransform>)>;

/// Applies added, moved, changed and removed occluders to the [`OccluderScene`]; the resource
/// is marked changed only when the scene did change.
pub fn sync_occluders(
    changed: Query<(Entity, &Occluder, &GlobalTransform), Moved>,
    mut removed: RemovedComponents<Occluder>,
    mut scene: ResMut<OccluderScene>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::sync_occluders");
    let start = Instant::now();
    let state = scene.bypass_change_detection();
    state.changed.clear();
    let mut count = 0u32;
    for entity in removed.read() {
        // A removed-then-re-added occluder is handled below as added.
        if let Some(old) = state.placed.remove(&entity) {
            state.changed.push(old.bounds);
            count += 1;
        }
    }
    for (entity, occluder, transform) in &changed {
        let matrix = transform.to_matrix();
        if let Some(old) = state.placed.get(&entity)
            && Arc::ptr_eq(&old.mesh, &occluder.mesh)
            && old.transform == matrix
        {
            continue; // rewritten but not moved
        }
        let bounds = CoreOccluder::mesh(occluder.mesh.clone(), matrix).bounds();
        let placed = Placed {
            mesh: occluder.mesh.clone(),
            transform: matrix,
            bounds,
        };
        if let Some(old) = state.placed.insert(entity, placed) {
            state.changed.push(old.bounds);
        }
        state.changed.push(bounds);
        count += 1;
    }
    if count > 0 {
        let mut entities: Vec<Entity> = state.placed.keys().copied().collect();
        entities.sort_unstable();
        state.scene.occluders = entities
            .iter()
            .map(|e| {
                let p = &state.placed[e];
                CoreOccluder::mesh(p.mesh.clone(), p.transform)
            })
            .collect();
        scene.set_changed();
    }
    diagnostics.occluders = scene.len() as u32;
    diagnostics.occluders_changed = count;
    diagnostics.sync_occluders = start.elapsed();
}
