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

mod eyes;
mod lights;
mod occluders;
mod queries;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

use super::light::Light;
use super::map::ShadowMap;
use super::sight::{EyeMap, Viewer};
use super::tiles::{SceneIndex, TileCounters};
use super::{Aabb, Occluder, Scene, ShadowError};

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
    /// The bounds of every occluder (made on first need, kept through changes inside it).
    bounds: OnceLock<Aabb>,
}

/// How an occluder change alters the index.
enum IndexChange {
    /// Occluder `i` (in handle order) was replaced.
    Replace(usize, Occluder),
    /// Occluders were added or removed.
    Rebuild,
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
