//! Lights, shadow maps and the queries a game asks of them: how lit is this point, how exposed
//! is it to all lights, can this eye see that point.
//!
//! The layers, bottom up:
//!
//! * [`Light`] (`light`): what a light is, its falloff, and the conventions of its map as data
//!   — [`DepthConvention`] (forward or reverse depth), the comparison sampler, [`ShadowBias`]
//!   (rasterizer bias and the receiver-bias formula), [`RasterConvention`] (cull mode,
//!   winding, depth clip), the [`PcfKernel`] (weighted bilinear taps) and optional
//!   caller-supplied [`SliceView`]s.
//! * [`ShadowMap`] (`map`, `render`): a depth texture rendered by [`crate::raster`] from a
//!   light, owning that light. Queries project a world point into the map and run
//!   `sample_c_lz` with the light's sampler and kernel — the answer the GPU's shadow shader
//!   gives for the same map — one point at a time or batched (bit-identical).
//! * [`exposure_part`]: the one definition of exposure; [`Exposure`] and the probe averages.
//! * [`Lighting`]: occluders, lights and eyes by handle, maps rendered lazily and invalidated
//!   by region (see its docs), exposure and line-of-sight queries. Bindings sit on it.
//!
//! ```
//! use glam::Vec3;
//! use penumbra_core::shadow::{Light, Occluder, Scene, ShadowMap};
//! let mut scene = Scene::default();
//! scene.add(Occluder::cuboid(Vec3::new(-10.0, -1.0, -10.0), Vec3::new(10.0, 0.0, 10.0))); // floor
//! scene.add(Occluder::cuboid(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)));     // a crate
//! let sun = Light::directional(Vec3::new(0.0, -1.0, 0.0), 1.0);
//! let map = ShadowMap::render(sun, &scene).unwrap();
//! let under = map.lit_fraction(Vec3::new(0.0, 0.0, 0.0), None);
//! let open = map.lit_fraction(Vec3::new(5.0, 0.0, 5.0), None);
//! assert_eq!((under, open), (0.0, 1.0));
//! ```

mod error;
mod exposure;
mod kernel;
mod light;
mod lighting;
mod map;
pub mod pbr;
mod render;
mod sight;
mod tiles;

pub use error::ShadowError;
pub use exposure::{Exposure, ExposureScratch, LightShare, ProbeSpan, exposure, exposure_part};
pub use kernel::{Anchor, AxisTerm, KernelTap, MAX_TAPS, PcfKernel};
pub use light::{
    BiasOrder, CubeLookup, DepthConvention, Falloff, Light, LightKind, OffsetUnits,
    RasterConvention, ShadowBias, SliceView, default_shadow_sampler, shadow_sampler,
};
pub use lighting::{EyeId, LightId, Lighting, OccluderId};
pub use map::{Normals, ShadowMap};
pub use sight::{EyeMap, Viewer};
pub use tiles::{DrawnTiles, MAP_TILE, TileStats};

use std::sync::Arc;

use glam::{Mat4, Vec3};

use crate::raster::{CullMode, Instance, Mesh};

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Minimum corner.
    pub min: Vec3,
    /// Maximum corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (grows with [`Aabb::include`]).
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// Grows the box to contain `p` (non-finite points are ignored).
    pub fn include(&mut self, p: Vec3) {
        if p.is_finite() {
            self.min = self.min.min(p);
            self.max = self.max.max(p);
        }
    }

    /// True when nothing has been included.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        !(self.min.x <= self.max.x && self.min.y <= self.max.y && self.min.z <= self.max.z)
    }

    /// The eight corners.
    #[must_use]
    pub fn corners(&self) -> [Vec3; 8] {
        std::array::from_fn(|i| {
            Vec3::new(
                if i & 1 == 0 { self.min.x } else { self.max.x },
                if i & 2 == 0 { self.min.y } else { self.max.y },
                if i & 4 == 0 { self.min.z } else { self.max.z },
            )
        })
    }

    /// The centre.
    #[must_use]
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }
}

/// A piece of level geometry that casts shadows: a shared mesh and its world transform.
#[derive(Clone, Debug)]
pub struct Occluder {
    /// The mesh, shared (many occluders can use one mesh).
    pub mesh: Arc<Mesh>,
    /// Object-to-world transform.
    pub transform: Mat4,
    /// Its own cull mode in shadow passes instead of the light's (a material's cull mode, as
    /// Bevy's `StandardMaterial::cull_mode`); `None` follows the light's
    /// [`RasterConvention`].
    pub cull: Option<CullMode>,
}

impl Occluder {
    /// An axis-aligned box occluder.
    #[must_use]
    pub fn cuboid(min: Vec3, max: Vec3) -> Occluder {
        Occluder {
            mesh: Arc::new(Mesh::cuboid(min, max)),
            transform: Mat4::IDENTITY,
            cull: None,
        }
    }

    /// A mesh occluder with a transform.
    #[must_use]
    pub fn mesh(mesh: Arc<Mesh>, transform: Mat4) -> Occluder {
        Occluder {
            mesh,
            transform,
            cull: None,
        }
    }

    /// The same occluder with its own cull mode in shadow passes.
    #[must_use]
    pub fn with_cull(mut self, cull: Option<CullMode>) -> Occluder {
        self.cull = cull;
        self
    }

    /// World-space bounds.
    #[must_use]
    pub fn bounds(&self) -> Aabb {
        let mut b = Aabb::EMPTY;
        let Some((lo, hi)) = self.mesh.bounds() else {
            return b;
        };
        for c in (Aabb { min: lo, max: hi }).corners() {
            b.include(self.transform.transform_point3(c));
        }
        b
    }
}

/// The occluders of a level.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    /// Every occluder.
    pub occluders: Vec<Occluder>,
    /// Threads the rasterizer may use (0 = all cores).
    pub threads: usize,
}

impl Scene {
    /// Adds an occluder.
    pub fn add(&mut self, occluder: Occluder) -> &mut Self {
        self.occluders.push(occluder);
        self
    }

    /// Bounds of every occluder.
    #[must_use]
    pub fn bounds(&self) -> Aabb {
        let mut b = Aabb::EMPTY;
        for o in &self.occluders {
            let ob = o.bounds();
            if !ob.is_empty() {
                b.include(ob.min);
                b.include(ob.max);
            }
        }
        b
    }

    /// Number of triangles.
    #[must_use]
    pub fn triangle_count(&self) -> usize {
        self.occluders.iter().map(|o| o.mesh.triangle_count()).sum()
    }

    pub(crate) fn instances(&self) -> Vec<Instance<'_>> {
        self.occluders
            .iter()
            .map(|o| Instance {
                mesh: &o.mesh,
                transform: o.transform,
                cull: o.cull,
            })
            .collect()
    }

    pub(crate) fn thread_count(&self) -> usize {
        if self.threads == 0 {
            crate::cpu::available_threads()
        } else {
            self.threads
        }
    }
}
