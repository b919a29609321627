//! The queries a [`Lighting`] answers about one light or eye, and ray casts against its
//! occluders.

use glam::Vec3;

use super::{EyeId, LightId, Lighting, OccluderId};
use crate::raster::{RayHit, SORT_FROM, coherent_order, unit_direction};
use crate::shadow::ShadowError;
use crate::shadow::tiles::SceneIndex;

impl Lighting {
    // ---- queries on one light or eye -------------------------------------------------------

    /// How lit `point` is in one light's map (see
    /// [`ShadowMap::lit_fraction`](crate::shadow::ShadowMap::lit_fraction)).
    ///
    /// # Errors
    /// As [`Lighting::map`].
    pub fn lit_fraction(
        &self,
        light: LightId,
        point: Vec3,
        normal: Option<Vec3>,
    ) -> Result<f32, ShadowError> {
        let map = self.map(light)?;
        crate::shadow::tiles::take_skipped();
        let lit = map.lit_fraction(point, normal);
        // Tiles left undrawn by the deadline: the answer is not the map's.
        if crate::shadow::tiles::take_skipped() {
            return Err(ShadowError::Interrupted);
        }
        Ok(lit)
    }

    /// The fraction of a target disc of `radius` at `target` that `eye` sees
    /// ([`EyeMap::visible_fraction`](crate::shadow::EyeMap::visible_fraction)).
    ///
    /// # Errors
    /// As [`Lighting::eye_map`].
    pub fn visible_fraction(
        &self,
        eye: EyeId,
        target: Vec3,
        radius: f32,
    ) -> Result<f32, ShadowError> {
        Ok(self.eye_map(eye)?.visible_fraction(target, radius))
    }

    /// True when `eye` sees at least half of a point target
    /// ([`EyeMap::can_see`](crate::shadow::EyeMap::can_see)).
    ///
    /// # Errors
    /// As [`Lighting::eye_map`].
    pub fn can_see(&self, eye: EyeId, target: Vec3) -> Result<bool, ShadowError> {
        Ok(self.eye_map(eye)?.can_see(target))
    }

    // ---- ray casts -------------------------------------------------------------------------

    /// The nearest occluder triangle that the ray from `origin` along `direction` meets at a
    /// distance in `[0, max_distance]`, among the occluders `filter` returns true for.
    ///
    /// `direction` need not be unit: distances ([`RayHit::distance`], `max_distance`) are world
    /// units along the normalized direction, and `position = origin + distance · direction /
    /// |direction|`. The test is exact and watertight (Woop, Benthin and Wald 2013, see
    /// [`TriangleRay`](crate::raster::TriangleRay)): a ray through a shared edge or vertex of a
    /// closed mesh never slips between its triangles. Both sides of a triangle are hit (no
    /// culling; a ray that starts inside a closed occluder hits its inside), and
    /// [`RayHit::normal`] is the triangle's unit geometric normal turned towards the origin.
    /// Among hits at the same distance the occluder first in handle order wins, then the
    /// smallest triangle index, so the answer does not depend on how the occluders are
    /// indexed. The ray sees the occluders as they are now (the world-space index is built on
    /// first need and follows [`Lighting::set_occluder`]).
    ///
    /// `None` for a miss, and (no panic) for a NaN or infinite `origin`, a zero, NaN or
    /// infinite `direction`, or a NaN or negative `max_distance`; an occluder whose transform
    /// is not an invertible affine map (singular, non-finite or projective) is never hit, nor
    /// are triangles with a non-finite vertex. `filter` is called for the occluders whose
    /// bounds the ray reaches, in no set order.
    #[must_use]
    pub fn raycast(
        &self,
        origin: Vec3,
        direction: Vec3,
        max_distance: f32,
        filter: &dyn Fn(OccluderId) -> bool,
    ) -> Option<RayHit<OccluderId>> {
        crate::zone!("penumbra::Lighting::raycast");
        self.cast_one(self.scene_index(), origin, direction, max_distance, filter)
    }

    /// [`Lighting::raycast`] for each `(origin, direction)` of `rays`, on up to `threads`
    /// threads (0: all cores): entry `i` holds the bits one `raycast` of ray `i` returns,
    /// whatever the thread count.
    #[must_use]
    pub fn raycast_many(
        &self,
        rays: &[(Vec3, Vec3)],
        max_distance: f32,
        filter: &(dyn Fn(OccluderId) -> bool + Sync),
        threads: usize,
    ) -> Vec<Option<RayHit<OccluderId>>> {
        crate::zone!("penumbra::Lighting::raycast_many");
        /// Rays per job handed to a thread.
        const CHUNK: usize = 256;
        let scene = self.scene_index();
        let threads = if threads == 0 {
            crate::cpu::available_threads()
        } else {
            threads
        };
        let cast = |rays: &[(Vec3, Vec3)], out: &mut [Option<RayHit<OccluderId>>]| {
            for (&(origin, direction), hit) in rays.iter().zip(out) {
                *hit = self.cast_one(scene, origin, direction, max_distance, filter);
            }
        };
        let cast_all = |rays: &[(Vec3, Vec3)]| {
            let mut out = vec![None; rays.len()];
            if threads > 1 && rays.len() > CHUNK {
                crate::raster::run_parallel(
                    rays.chunks(CHUNK).zip(out.chunks_mut(CHUNK)),
                    threads,
                    |(rays, out)| {
                        cast(rays, out);
                        0
                    },
                );
            } else {
                cast(rays, &mut out);
            }
            out
        };
        if rays.len() < SORT_FROM {
            return cast_all(rays);
        }
        // Large batches are cast along a Z-order curve through the origins: each ray's answer
        // is the same in any order, and neighbours on the curve read the same nodes and
        // triangles, which then stay in cache. The rays are gathered into that order first
        // and the answers scattered back after, in loops of independent loads and stores
        // (a cast that read its ray from a random place in a large batch would wait for it).
        let order = coherent_order(rays);
        let sorted: Vec<(Vec3, Vec3)> = order.iter().map(|&i| rays[i as usize]).collect();
        let hits = cast_all(&sorted);
        let mut out = vec![None; rays.len()];
        for (&i, hit) in order.iter().zip(hits) {
            out[i as usize] = hit;
        }
        out
    }

    fn cast_one(
        &self,
        scene: &SceneIndex,
        origin: Vec3,
        direction: Vec3,
        max_distance: f32,
        filter: &dyn Fn(OccluderId) -> bool,
    ) -> Option<RayHit<OccluderId>> {
        let direction = unit_direction(direction)?;
        let ids = &scene.ids;
        let best = scene
            .index
            .cast_of(&scene.occluders, origin, direction, max_distance, |i| {
                filter(ids[i as usize])
            })?;
        let hit = scene
            .index
            .hit_of(&scene.occluders, origin, direction, &best);
        Some(hit.map_id(|i| ids[i as usize]))
    }

    /// The occluder (first in handle order) that holds `point` inside its closed mesh, or
    /// `None`.
    ///
    /// Each occluder whose bounds hold the point is decided on its own by the parity of its
    /// triangles crossed by three rays from the point along fixed directions that are far from
    /// every axis and from each other, taking the majority of the three, so that one ray that
    /// grazes an edge or a vertex (and counts a crossing twice or not at all) does not decide.
    /// The mesh must be closed (every edge shared by two triangles, as in
    /// [`Mesh::cuboid`](crate::raster::Mesh::cuboid)): for an open mesh the answer is
    /// unspecified. A point on the surface, where one of the rays meets a triangle at distance
    /// exactly 0, counts as inside; a point within rounding of the surface but not on it in
    /// f32 is decided by the parity and may go either way, but always the same way for the
    /// same point and occluders. Occluders whose transform is not an invertible affine map
    /// never hold a point; a NaN or infinite point is inside nothing.
    #[must_use]
    pub fn is_inside(&self, point: Vec3) -> Option<OccluderId> {
        crate::zone!("penumbra::Lighting::is_inside");
        let scene = self.scene_index();
        let i = scene.index.inside_of(&scene.occluders, point)?;
        Some(scene.ids[i as usize])
    }
}
