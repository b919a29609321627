//! Occluders: the level geometry that casts shadows and blocks sight.
//!
//! Put an [`Occluder`] on any entity with a `Transform`: a box ([`Occluder::cuboid`]) or a
//! triangle mesh shared by `Arc` ([`Occluder::mesh`]). Its world placement is the entity's
//! `GlobalTransform`, so occluders can be children of moving platforms.
//!
//! The [`OccluderPlugin`] keeps the engine's occluders (in the
//! [`ShadowMaps`] lighting) in step with the world in
//! [`PenumbraSystems::Prepare`]: it visits only occluders whose `Occluder` or `GlobalTransform`
//! changed (or that were added or removed) and ignores writes that leave them where they were;
//! the engine then drops only the maps the change can reach.
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
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_transform::components::{GlobalTransform, Transform};
use glam::Vec3;
use penumbra_core::raster::Mesh;
use penumbra_core::shadow::{Aabb, Occluder as CoreOccluder, OccluderId};

use crate::shadow::ShadowMaps;
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

/// Keeps the engine occluders in step with the [`Occluder`]s (part of
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
        app.init_resource::<ShadowMaps>()
            .init_resource::<PenumbraDiagnostics>()
            .add_systems(
                self.schedule,
                sync_occluders.in_set(PenumbraSystems::Prepare),
            );
    }
}

/// Occluders whose shape or placement was written this frame (or that were added).
type Moved = Or<(Changed<Occluder>, Changed<GlobalTransform>)>;

/// Applies added, moved, changed and removed occluders to the engine lighting.
pub fn sync_occluders(
    changed: Query<(Entity, &Occluder, &GlobalTransform), Moved>,
    mut removed: RemovedComponents<Occluder>,
    mut maps: ResMut<ShadowMaps>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::sync_occluders");
    let start = Instant::now();
    let lighting = maps.bypass_change_detection().lighting_mut();
    let mut count = 0u32;
    for entity in removed.read() {
        // A removed-then-re-added occluder is handled below as added.
        if !changed.contains(entity) && lighting.remove_occluder(occluder_id(entity)).is_some() {
            count += 1;
        }
    }
    for (entity, occluder, transform) in &changed {
        let id = occluder_id(entity);
        let matrix = transform.to_matrix();
        if let Some(old) = lighting.occluder(id)
            && Arc::ptr_eq(&old.mesh, &occluder.mesh)
            && old.transform == matrix
        {
            continue; // rewritten but not moved
        }
        lighting.set_occluder(id, CoreOccluder::mesh(occluder.mesh.clone(), matrix));
        count += 1;
    }
    diagnostics.occluders = lighting.occluder_count() as u32;
    diagnostics.occluders_changed = count;
    if count > 0 {
        maps.set_changed();
    }
    diagnostics.sync_occluders = start.elapsed();
}

/// The engine handle of an occluder entity.
fn occluder_id(entity: Entity) -> OccluderId {
    OccluderId(entity.to_bits())
}
