//! [`ShadowSettings`]: the knobs that apply to every light and viewer.

use bevy_ecs::resource::Resource;

/// Settings shared by every light and viewer, a resource the game may change at any time.
///
/// ```
/// use bevy_penumbra::ShadowSettings;
/// let strict = ShadowSettings { sight_threshold: 0.8, ..ShadowSettings::default() };
/// assert_eq!(strict.raster_threads, 0);
/// ```
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct ShadowSettings {
    /// Threads the rasterizer may use when a frame has a single map to render (0 = one per
    /// core). Several maps in one frame are rendered side by side on the `ComputeTaskPool`,
    /// one thread each. The depths written do not depend on it. A single map's extra threads
    /// are penumbra's own helpers (named `penumbra #N` in a profiler), started once and
    /// parked between passes.
    pub raster_threads: usize,
    /// The fraction of a target a [`Viewer`](crate::sight::Viewer) must see to count as
    /// [`seen`](crate::sight::Sighting::seen) (and for [`ShadowQuery::can_see`](crate::query::ShadowQuery::can_see));
    /// 0.5 by default, as `EyeMap::can_see` in the engine.
    pub sight_threshold: f32,
}

impl Default for ShadowSettings {
    fn default() -> Self {
        ShadowSettings {
            raster_threads: 0,
            sight_threshold: 0.5,
        }
    }
}
