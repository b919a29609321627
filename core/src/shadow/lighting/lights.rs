//! The lights of a [`Lighting`] and their shadow maps, rendered on first need.

use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use super::{LightId, LightSlot, Lighting, allocate, lazy};
use crate::shadow::light::Light;
use crate::shadow::map::ShadowMap;
use crate::shadow::{Scene, ShadowError};

impl Lighting {
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
}
