//! [`Lighting`]: the one owner of a level's occluders, lights, eyes and their rendered maps.
//!
//! Bindings (the Lua `Scene`, the Bevy plugin, the CLI) keep no maps of their own: they add,
//! update and remove things by handle, and ask. A light's map is rendered on first need and
//! kept until the light changes or an occluder change can reach it:
//!
//! * a directional or cascaded light, or any light with caller-supplied views: any occluder
//!   change (a directional map's depth range — and, without bounds, its square — follows the
//!   scene's bounds; caller views are not analysed);
//! * a spot or point light (and an eye): a change whose bounds — before or after — meet the
//!   map's frustum out to the light's range (a spot's square cone, a point light's cube).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use glam::Vec3;

use super::light::{Light, LightKind};
use super::map::ShadowMap;
use super::sight::{EyeMap, Viewer};
use super::tiles::{SceneIndex, TileCounters, TileStats};
use super::{Aabb, Occluder, Scene, ShadowError};
use crate::raster::{RayHit, unit_direction};

/// A light of a [`Lighting`]. Lights are summed in handle order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LightId(pub u64);

/// An occluder of a [`Lighting`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OccluderId(pub u64);

/// An eye of a [`Lighting`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EyeId(pub u64);

/// A map rendered on first need: the map, or why it could not be (an interrupted render is
/// not kept, so the next query tries again).
type Lazy<T> = OnceLock<Result<T, ShadowError>>;

#[derive(Debug)]
struct LightSlot {
    light: Light,
    map: Lazy<ShadowMap>,
}

#[derive(Debug)]
struct EyeSlot {
    viewer: Viewer,
    map: Lazy<EyeMap>,
}

#[derive(Debug)]
struct OccluderSlot {
    occluder: Occluder,
    bounds: Aabb,
}

/// Occluders, lights and eyes, with their maps rendered lazily and invalidated by region.
///
/// A map is rendered on first need and kept until its light (or eye) changes or an occluder
/// change can reach it: for a directional or cascaded light, or a light with caller-supplied
/// views, any occluder change; for a spot or point light, or an eye, a change whose bounds
/// (before or after) meet its map's frustum out to its range (a spot's square cone, a point
/// light's cube of faces). Lights are summed in handle order.
///
/// Queries take `&self` and may run on many threads at once; a map that two threads need at
/// the same moment may be rendered twice (the first kept).
///
/// ```
/// use glam::Vec3;
/// use penumbra_core::shadow::{Light, Lighting, Occluder};
/// let mut lighting = Lighting::new();
/// lighting.add_occluder(Occluder::cuboid(Vec3::new(-10.0, -1.0, -10.0), Vec3::new(10.0, 0.0, 10.0)));
/// let crate_box = lighting.add_occluder(Occluder::cuboid(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)));
/// let sun = lighting.add_light(Light::directional(Vec3::NEG_Y, 1.0).with_resolution(256));
/// let under = Vec3::ZERO;
/// assert_eq!(lighting.lit_fraction(sun, under, None)?, 0.0);
/// lighting.remove_occluder(crate_box);
/// assert_eq!(lighting.exposure(under, None)?.total(), 1.0); // re-rendered on demand
/// # Ok::<(), penumbra_core::shadow::ShadowError>(())
/// ```
#[derive(Debug, Default)]
pub struct Lighting {
    occluders: BTreeMap<OccluderId, OccluderSlot>,
    lights: BTreeMap<LightId, LightSlot>,
    eyes: BTreeMap<EyeId, EyeSlot>,
    next_id: u64,
    threads: usize,
    scene: OnceLock<Scene>,
    light_generation: u64,
    eye_generation: u64,
    maps_rendered: AtomicU64,
    eye_maps_rendered: AtomicU64,
    /// The occluders with their world-space index, shared with the tiled maps and changed in
    /// place as occluders move (rebuilt on first need after one is added or removed).
    index: OnceLock<Arc<SceneIndex>>,
    counters: Arc<TileCounters>,
}

/// How an occluder change alters the index.
enum IndexChange {
    /// Occluder `i` (in handle order) was replaced.
    Replace(usize, Occluder),
    /// Occluders were added or removed.
    Rebuild,
}

/// True when a change inside `b` can alter the map of a light of this kind and views.
fn reaches(light: &Light, b: &Aabb) -> bool {
    if b.is_empty() {
        return false;
    }
    if !light.views.is_empty() {
        return true;
    }
    match &light.kind {
        LightKind::Directional { .. } | LightKind::Cascaded { .. } => true,
        LightKind::Spot {
            position,
            direction,
            outer_angle,
            range,
            ..
        } => frustum_touches(*position, *direction, *outer_angle, *range, b),
        // The six faces, each cut at depth `range` along its axis, fill the cube of half-size
        // `range` round the light.
        LightKind::Point { position, range } => {
            let r = Vec3::splat(range * SLACK);
            b.min.cmple(*position + r).all() && b.max.cmpge(*position - r).all()
        }
    }
}

/// A little over 1, so rounding never drops a change at the edge of a map.
const SLACK: f32 = 1.001;

/// True when the box `b` may meet a spot light's square frustum (half-angle `half`, from the
/// light to view depth `range`; a reverse-Z map has no far plane, but receivers past that depth
/// are outside it and only nearer occluders can shadow the ones inside). Conservative: a box
/// beside a frustum's edge, outside it, may still count.
fn frustum_touches(position: Vec3, direction: Vec3, half: f32, range: f32, b: &Aabb) -> bool {
    let view = super::light::look_to_lh(position, direction, Vec3::Y);
    let t = half.tan() * SLACK;
    let c = b.corners().map(|p| view.transform_point3(p));
    let all = |outside: &dyn Fn(Vec3) -> bool| c.iter().all(|&p| outside(p));
    !(all(&|p| p.z < 0.0)
        || all(&|p| p.z > range * SLACK)
        || all(&|p| p.x > p.z * t)
        || all(&|p| p.x < -p.z * t)
        || all(&|p| p.y > p.z * t)
        || all(&|p| p.y < -p.z * t))
}

/// The next handle from `next` that `map` does not use.
fn allocate<K: Ord + Copy, V>(next: &mut u64, map: &BTreeMap<K, V>, key: fn(u64) -> K) -> K {
    while map.contains_key(&key(*next)) {
        *next = next.wrapping_add(1);
    }
    let id = key(*next);
    *next = next.wrapping_add(1);
    id
}

impl Lighting {
    /// An empty lighting (rasterizing on every core).
    #[must_use]
    pub fn new() -> Lighting {
        Lighting::default()
    }

    /// Threads the rasterizer may use for one map (0 = all cores).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
        self.scene = OnceLock::new();
    }

    /// Threads the rasterizer may use for one map (0 = all cores).
    #[must_use]
    pub fn threads(&self) -> usize {
        self.threads
    }

    // ---- occluders -------------------------------------------------------------------------

    /// Adds an occluder under a new handle.
    pub fn add_occluder(&mut self, occluder: Occluder) -> OccluderId {
        let id = allocate(&mut self.next_id, &self.occluders, OccluderId);
        self.set_occluder(id, occluder);
        id
    }

    /// Puts `occluder` under `id`, replacing what was there; maps that the old or new bounds
    /// can reach are dropped. Returns whether something was replaced.
    pub fn set_occluder(&mut self, id: OccluderId, occluder: Occluder) -> bool {
        let bounds = occluder.bounds();
        let position = self
            .occluders
            .contains_key(&id)
            .then(|| self.occluders.range(..id).count());
        let change = match position {
            Some(i) => IndexChange::Replace(i, occluder.clone()),
            None => IndexChange::Rebuild,
        };
        let old = self.occluders.insert(id, OccluderSlot { occluder, bounds });
        match &old {
            Some(o) => self.invalidate(&[o.bounds, bounds], change),
            None => self.invalidate(&[bounds], change),
        }
        old.is_some()
    }

    /// Removes an occluder; maps its bounds reach are dropped.
    pub fn remove_occluder(&mut self, id: OccluderId) -> Option<Occluder> {
        let old = self.occluders.remove(&id)?;
        self.invalidate(&[old.bounds], IndexChange::Rebuild);
        Some(old.occluder)
    }

    /// Removes every occluder.
    pub fn clear_occluders(&mut self) {
        let bounds: Vec<Aabb> = self.occluders.values().map(|o| o.bounds).collect();
        self.occluders.clear();
        self.invalidate(&bounds, IndexChange::Rebuild);
    }

    /// An occluder.
    #[must_use]
    pub fn occluder(&self, id: OccluderId) -> Option<&Occluder> {
        self.occluders.get(&id).map(|o| &o.occluder)
    }

    /// Every occluder, in handle order.
    pub fn occluders(&self) -> impl ExactSizeIterator<Item = (OccluderId, &Occluder)> {
        self.occluders.iter().map(|(id, o)| (*id, &o.occluder))
    }

    /// Number of occluders.
    #[must_use]
    pub fn occluder_count(&self) -> usize {
        self.occluders.len()
    }

    /// The occluders as one engine scene (built on first need after a change).
    #[must_use]
    pub fn scene(&self) -> &Scene {
        self.scene.get_or_init(|| Scene {
            occluders: self
                .occluders
                .values()
                .map(|o| o.occluder.clone())
                .collect(),
            threads: self.threads,
        })
    }

    /// Bounds of every occluder.
    #[must_use]
    pub fn bounds(&self) -> Aabb {
        let mut b = Aabb::EMPTY;
        for o in self.occluders.values() {
            if !o.bounds.is_empty() {
                b.include(o.bounds.min);
                b.include(o.bounds.max);
            }
        }
        b
    }

    /// Number of triangles.
    #[must_use]
    pub fn triangle_count(&self) -> usize {
        self.occluders
            .values()
            .map(|o| o.occluder.mesh.triangle_count())
            .sum()
    }

    /// The occluders and their index, as the tiled maps draw from them.
    fn scene_index(&self) -> &Arc<SceneIndex> {
        self.index.get_or_init(|| {
            Arc::new(SceneIndex::new(
                self.occluders
                    .iter()
                    .map(|(&id, o)| (id, o.occluder.clone()))
                    .collect(),
            ))
        })
    }

    /// Tile work so far: tiles drawn and forgotten, and the time spent drawing them and
    /// writing them into the maps (see [`TileStats`]).
    #[must_use]
    pub fn tile_stats(&self) -> TileStats {
        self.counters.stats()
    }

    /// Brings the maps up to date after an occluder change inside `boxes`: a tiled map whose
    /// matrices the change leaves as they were forgets only the tiles the boxes cover (and
    /// draws from the changed scene from now on); other maps the change can reach are dropped.
    fn invalidate(&mut self, boxes: &[Aabb], change: IndexChange) {
        crate::zone!("penumbra::Lighting::invalidate");
        self.scene = OnceLock::new();
        // The tiled maps let go of the index, so that it can change in place.
        let detached = Arc::new(SceneIndex::default());
        for slot in self.lights.values_mut() {
            if let Some(Ok(map)) = slot.map.get_mut()
                && let Some(tiled) = map.tiled_mut()
            {
                tiled.set_scene(Arc::clone(&detached));
            }
        }
        match (change, self.index.get_mut()) {
            (IndexChange::Replace(i, occluder), Some(index)) => {
                Arc::make_mut(index).replace(i, occluder);
            }
            _ => self.index = OnceLock::new(),
        }
        let mut lights = false;
        let any_tiled = self.lights.values().any(|s| {
            s.map
                .get()
                .is_some_and(|m| m.as_ref().is_ok_and(|m| m.tiled().is_some()))
        });
        // Only tiled maps need the bounds and the index now: a level being loaded, with no
        // map yet, pays for neither per occluder.
        let bounds = if any_tiled {
            self.bounds()
        } else {
            Aabb::EMPTY
        };
        let index = any_tiled.then(|| Arc::clone(self.scene_index()));
        for slot in self.lights.values_mut() {
            let reached: Vec<Aabb> = boxes
                .iter()
                .filter(|b| reaches(&slot.light, b))
                .copied()
                .collect();
            let light = &slot.light;
            let kept = match (slot.map.get_mut(), &index) {
                (Some(Ok(map)), Some(index)) if map.tiled().is_some() => {
                    let same = light
                        .projections(|| bounds)
                        .is_ok_and(|(m, _)| m == map.view_proj());
                    match map.tiled_mut() {
                        Some(tiled) if same => {
                            lights |= tiled.invalidate(Arc::clone(index), &reached) > 0;
                            true
                        }
                        _ => false,
                    }
                }
                (Some(_), _) => reached.is_empty(),
                (None, _) => true,
            };
            if !kept {
                slot.map = OnceLock::new();
                lights = true;
            }
        }
        let mut eyes = false;
        for slot in self.eyes.values_mut() {
            // An eye's map is its light's (a spot, or a point light for all-around eyes).
            let light = slot.viewer.as_light();
            if slot.map.get().is_some() && boxes.iter().any(|b| reaches(&light, b)) {
                slot.map = OnceLock::new();
                eyes = true;
            }
        }
        self.light_generation += u64::from(lights);
        self.eye_generation += u64::from(eyes);
    }

    // ---- lights ----------------------------------------------------------------------------

    /// Adds a light under a new handle.
    pub fn add_light(&mut self, light: Light) -> LightId {
        let id = allocate(&mut self.next_id, &self.lights, LightId);
        self.set_light(id, light);
        id
    }

    /// Puts `light` under `id`; its map is dropped unless the light is unchanged. Returns
    /// whether a light was replaced.
    pub fn set_light(&mut self, id: LightId, light: Light) -> bool {
        if let Some(slot) = self.lights.get_mut(&id) {
            if slot.light != light {
                slot.light = light;
                slot.map = OnceLock::new();
                self.light_generation += 1;
            }
            return true;
        }
        self.lights.insert(
            id,
            LightSlot {
                light,
                map: OnceLock::new(),
            },
        );
        self.light_generation += 1;
        false
    }

    /// Removes a light and its map.
    pub fn remove_light(&mut self, id: LightId) -> Option<Light> {
        let slot = self.lights.remove(&id)?;
        self.light_generation += 1;
        Some(slot.light)
    }

    /// A light.
    #[must_use]
    pub fn light(&self, id: LightId) -> Option<&Light> {
        self.lights.get(&id).map(|s| &s.light)
    }

    /// Every light, in handle order (the order exposures sum them in).
    pub fn lights(&self) -> impl ExactSizeIterator<Item = (LightId, &Light)> {
        self.lights.iter().map(|(id, s)| (*id, &s.light))
    }

    /// Number of lights.
    #[must_use]
    pub fn light_count(&self) -> usize {
        self.lights.len()
    }

    /// Changes whenever a light's map may have changed (a light added, changed or removed, or
    /// a map dropped by an occluder change); compare with the value of the last frame.
    #[must_use]
    pub fn light_generation(&self) -> u64 {
        self.light_generation
    }

    /// A light's shadow map, rendered now if it is not yet.
    ///
    /// # Errors
    /// [`ShadowError::UnknownHandle`], or why the map cannot be rendered (kept until the light
    /// or the occluders change; [`ShadowError::Interrupted`] is not kept).
    pub fn map(&self, id: LightId) -> Result<&ShadowMap, ShadowError> {
        self.map_with_threads(id, self.threads)
    }

    /// [`Lighting::map`] with `threads` rasterizer threads for a map rendered whole now (a host
    /// that renders many maps at once gives each one thread); tiles drawn later, as queries
    /// need them, use the lighting's own [`threads`](Lighting::threads).
    ///
    /// # Errors
    /// As [`Lighting::map`].
    pub fn map_with_threads(&self, id: LightId, threads: usize) -> Result<&ShadowMap, ShadowError> {
        let slot = self
            .lights
            .get(&id)
            .ok_or(ShadowError::UnknownHandle("light"))?;
        lazy(&slot.map, || {
            crate::zone!("penumbra::Lighting::render map");
            let _total = self.maps_rendered.fetch_add(1, Ordering::Relaxed) + 1;
            crate::plot!("penumbra lighting maps rendered", _total as f64);
            // Tiles are drawn as queries need them, on the lighting's threads; `threads` sizes
            // a whole render (samplers the tiles cannot serve), which happens now.
            let tile_threads = Scene {
                occluders: Vec::new(),
                threads: self.threads,
            }
            .thread_count();
            ShadowMap::render_tiled(
                slot.light.clone(),
                self.scene_index(),
                self.bounds(),
                &self.counters,
                tile_threads,
                threads,
            )
        })
    }

    /// A light's map if it is rendered (no rendering).
    #[must_use]
    pub fn rendered_map(&self, id: LightId) -> Option<&ShadowMap> {
        self.lights.get(&id)?.map.get()?.as_ref().ok()
    }

    /// Why a light has no map, if its last render failed.
    #[must_use]
    pub fn map_error(&self, id: LightId) -> Option<&ShadowError> {
        self.lights.get(&id)?.map.get()?.as_ref().err()
    }

    /// The lights whose maps are not rendered (nor known to fail), in handle order.
    #[must_use]
    pub fn pending_lights(&self) -> Vec<LightId> {
        self.lights
            .iter()
            .filter(|(_, s)| s.map.get().is_none())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Maps rendered since the lighting was made (light maps, eye maps).
    #[must_use]
    pub fn maps_rendered(&self) -> (u64, u64) {
        (
            self.maps_rendered.load(Ordering::Relaxed),
            self.eye_maps_rendered.load(Ordering::Relaxed),
        )
    }

    /// Bytes of every rendered light and eye map.
    #[must_use]
    pub fn resident_bytes(&self) -> u64 {
        let lights: u64 = self
            .lights
            .keys()
            .filter_map(|&id| self.rendered_map(id))
            .map(ShadowMap::bytes)
            .sum();
        let eyes: u64 = self
            .eyes
            .keys()
            .filter_map(|&id| self.rendered_eye_map(id))
            .map(|e| e.map().bytes())
            .sum();
        lights + eyes
    }

    fn scene_with(&self, threads: usize) -> Scene {
        let scene = self.scene();
        Scene {
            occluders: scene.occluders.clone(),
            threads,
        }
    }

    // ---- eyes ------------------------------------------------------------------------------

    /// Adds an eye under a new handle.
    pub fn add_eye(&mut self, viewer: Viewer) -> EyeId {
        let id = allocate(&mut self.next_id, &self.eyes, EyeId);
        self.set_eye(id, viewer);
        id
    }

    /// Puts `viewer` under `id`; its map is dropped unless the eye is unchanged. Returns
    /// whether an eye was replaced.
    pub fn set_eye(&mut self, id: EyeId, viewer: Viewer) -> bool {
        if let Some(slot) = self.eyes.get_mut(&id) {
            if slot.viewer != viewer {
                slot.viewer = viewer;
                slot.map = OnceLock::new();
                self.eye_generation += 1;
            }
            return true;
        }
        self.eyes.insert(
            id,
            EyeSlot {
                viewer,
                map: OnceLock::new(),
            },
        );
        self.eye_generation += 1;
        false
    }

    /// Removes an eye and its map.
    pub fn remove_eye(&mut self, id: EyeId) -> Option<Viewer> {
        let slot = self.eyes.remove(&id)?;
        self.eye_generation += 1;
        Some(slot.viewer)
    }

    /// An eye.
    #[must_use]
    pub fn eye(&self, id: EyeId) -> Option<&Viewer> {
        self.eyes.get(&id).map(|s| &s.viewer)
    }

    /// Every eye, in handle order.
    pub fn eyes(&self) -> impl ExactSizeIterator<Item = (EyeId, &Viewer)> {
        self.eyes.iter().map(|(id, s)| (*id, &s.viewer))
    }

    /// Changes whenever an eye's map may have changed.
    #[must_use]
    pub fn eye_generation(&self) -> u64 {
        self.eye_generation
    }

    /// An eye's depth map, rendered now if it is not yet.
    ///
    /// # Errors
    /// As [`Lighting::map`].
    pub fn eye_map(&self, id: EyeId) -> Result<&EyeMap, ShadowError> {
        self.eye_map_with_threads(id, self.threads)
    }

    /// [`Lighting::eye_map`] with `threads` rasterizer threads.
    ///
    /// # Errors
    /// As [`Lighting::map`].
    pub fn eye_map_with_threads(&self, id: EyeId, threads: usize) -> Result<&EyeMap, ShadowError> {
        let slot = self
            .eyes
            .get(&id)
            .ok_or(ShadowError::UnknownHandle("eye"))?;
        lazy(&slot.map, || {
            crate::zone!("penumbra::Lighting::render eye map");
            self.eye_maps_rendered.fetch_add(1, Ordering::Relaxed);
            slot.viewer.render(&self.scene_with(threads))
        })
    }

    /// An eye's map if it is rendered.
    #[must_use]
    pub fn rendered_eye_map(&self, id: EyeId) -> Option<&EyeMap> {
        self.eyes.get(&id)?.map.get()?.as_ref().ok()
    }

    /// Why an eye has no map, if its last render failed.
    #[must_use]
    pub fn eye_map_error(&self, id: EyeId) -> Option<&ShadowError> {
        self.eyes.get(&id)?.map.get()?.as_ref().err()
    }

    /// The eyes whose maps are not rendered (nor known to fail).
    #[must_use]
    pub fn pending_eyes(&self) -> Vec<EyeId> {
        self.eyes
            .iter()
            .filter(|(_, s)| s.map.get().is_none())
            .map(|(id, _)| *id)
            .collect()
    }

    // ---- queries on one light or eye -------------------------------------------------------

    /// How lit `point` is in one light's map (see [`ShadowMap::lit_fraction`]).
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
        super::tiles::take_skipped();
        let lit = map.lit_fraction(point, normal);
        // Tiles left undrawn by the deadline: the answer is not the map's.
        if super::tiles::take_skipped() {
            return Err(ShadowError::Interrupted);
        }
        Ok(lit)
    }

    /// The fraction of a target disc of `radius` at `target` that `eye` sees
    /// ([`EyeMap::visible_fraction`]).
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

    /// True when `eye` sees at least half of a point target ([`EyeMap::can_see`]).
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
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        let mut out = vec![None; rays.len()];
        let cast = |rays: &[(Vec3, Vec3)], out: &mut [Option<RayHit<OccluderId>>]| {
            for (&(origin, direction), hit) in rays.iter().zip(out) {
                *hit = self.cast_one(scene, origin, direction, max_distance, filter);
            }
        };
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

/// The value of `cell`, made by `make` if there is none; an interrupted make is not kept.
fn lazy<T>(
    cell: &OnceLock<Result<T, ShadowError>>,
    make: impl FnOnce() -> Result<T, ShadowError>,
) -> Result<&T, ShadowError> {
    if let Some(done) = cell.get() {
        return done.as_ref().map_err(Clone::clone);
    }
    match make() {
        Err(ShadowError::Interrupted) => Err(ShadowError::Interrupted),
        result => {
            // Another thread may have finished first; either result is the same map.
            let _ = cell.set(result);
            cell.get().expect("just set").as_ref().map_err(Clone::clone)
        }
    }
}
