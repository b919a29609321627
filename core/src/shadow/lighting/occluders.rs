//! The occluders of a [`Lighting`]: adding, replacing and removing them, the scene and index
//! the maps draw from, and which maps an occluder change reaches.

use std::sync::{Arc, OnceLock};

use glam::Vec3;

use super::{IndexChange, Lighting, OccluderId, OccluderSlot, allocate};
use crate::shadow::light::{Light, LightKind};
use crate::shadow::tiles::{SceneIndex, TileStats};
use crate::shadow::{Aabb, Occluder, Scene};

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
    let view = crate::shadow::light::look_to_lh(position, direction, Vec3::Y);
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

impl Lighting {
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
        let position = self.occluders.contains_key(&id).then(|| {
            // The index keeps the handles in order: a search instead of a walk.
            match self.index.get().map(|ix| ix.ids.binary_search(&id)) {
                Some(Ok(i)) => i,
                _ => self.occluders.range(..id).count(),
            }
        });
        let change = match position {
            Some(i) => IndexChange::Replace(i, occluder.clone()),
            None => IndexChange::Rebuild,
        };
        let old = self.occluders.insert(id, OccluderSlot { occluder, bounds });
        self.update_bounds(old.as_ref().map(|o| o.bounds), bounds);
        match &old {
            Some(o) => self.invalidate(&[o.bounds, bounds], change),
            None => self.invalidate(&[bounds], change),
        }
        old.is_some()
    }

    /// Removes an occluder; maps its bounds reach are dropped.
    pub fn remove_occluder(&mut self, id: OccluderId) -> Option<Occluder> {
        let old = self.occluders.remove(&id)?;
        self.update_bounds(Some(old.bounds), Aabb::EMPTY);
        self.invalidate(&[old.bounds], IndexChange::Rebuild);
        Some(old.occluder)
    }

    /// Removes every occluder.
    pub fn clear_occluders(&mut self) {
        let bounds: Vec<Aabb> = self.occluders.values().map(|o| o.bounds).collect();
        self.occluders.clear();
        self.bounds = OnceLock::new();
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
        *self.bounds.get_or_init(|| {
            let mut b = Aabb::EMPTY;
            for o in self.occluders.values() {
                if !o.bounds.is_empty() {
                    b.include(o.bounds.min);
                    b.include(o.bounds.max);
                }
            }
            b
        })
    }

    /// Keeps the bounds of every occluder after one went from `old` to `new`: a change strictly
    /// inside them only grows them by `new` (an occluder moving inside a level costs nothing
    /// here); one touching their faces makes them again on the next need.
    fn update_bounds(&mut self, old: Option<Aabb>, new: Aabb) {
        let Some(all) = self.bounds.get_mut() else {
            return;
        };
        let inside =
            |b: &Aabb| b.is_empty() || (b.min.cmpgt(all.min).all() && b.max.cmplt(all.max).all());
        if old.as_ref().is_none_or(inside) {
            if !new.is_empty() {
                all.include(new.min);
                all.include(new.max);
            }
        } else {
            self.bounds = OnceLock::new();
        }
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
    pub(super) fn scene_index(&self) -> &Arc<SceneIndex> {
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
        // The occluder that changed in place (its position in the index), for the tiles' layers.
        let changed = match (change, self.index.get_mut()) {
            (IndexChange::Replace(i, occluder), Some(index)) => {
                Arc::make_mut(index).replace(i, occluder);
                u32::try_from(i).ok()
            }
            _ => {
                self.index = OnceLock::new();
                None
            }
        };
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
                            lights |= tiled.invalidate(Arc::clone(index), &reached, changed) > 0;
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
}
