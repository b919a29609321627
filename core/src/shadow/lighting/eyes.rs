//! The eyes of a [`Lighting`] and their depth maps, rendered on first need.

use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use super::{EyeId, EyeSlot, Lighting, allocate, lazy};
use crate::shadow::sight::{EyeMap, Viewer};
use crate::shadow::{Scene, ShadowError};

impl Lighting {
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

    fn scene_with(&self, threads: usize) -> Scene {
        let scene = self.scene();
        Scene {
            occluders: scene.occluders.clone(),
            threads,
        }
    }
}
