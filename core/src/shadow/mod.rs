//! Lights, shadow maps and the queries a game asks of them: how lit is this point, how exposed
//! is it to all lights, can this eye see that point.
//!
//! A [`ShadowMap`] is a depth texture rendered by [`crate::raster`] from a light (or an eye),
//! its view-projection matrices, and the D3D12 static sampler the renderer samples it with
//! (default `COMPARISON_MIN_MAG_LINEAR_MIP_POINT`, `BORDER` with `OPAQUE_WHITE`, `LESS_EQUAL`).
//! Queries project a world point into the map and run `sample_c_lz` — so the answer is the one
//! the GPU's shadow shader gives for the same map and sampler.
//!
//! ```
//! use glam::Vec3;
//! use penumbra_core::raster::Mesh;
//! use penumbra_core::shadow::{Light, Occluder, PcfKernel, Scene};
//! let mut scene = Scene::default();
//! scene.add(Occluder::cuboid(Vec3::new(-10.0, -1.0, -10.0), Vec3::new(10.0, 0.0, 10.0))); // floor
//! scene.add(Occluder::cuboid(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)));     // a crate
//! let sun = Light::directional(Vec3::new(0.0, -1.0, 0.0), 1.0);
//! let map = sun.render(&scene).unwrap();
//! let under = map.lit_fraction(Vec3::new(0.0, 0.0, 0.0), None, PcfKernel::Hardware2x2);
//! let open = map.lit_fraction(Vec3::new(5.0, 0.0, 5.0), None, PcfKernel::Hardware2x2);
//! assert_eq!((under, open), (0.0, 1.0));
//! ```

mod light;
mod map;
mod sight;

pub use light::{Light, LightKind, ShadowBias, default_shadow_sampler};
pub use map::{PcfKernel, ShadowError, ShadowMap, exposure};
pub use sight::{EyeMap, Viewer};

use std::sync::Arc;

use glam::{Mat4, Vec3};

use crate::raster::{Instance, Mesh};

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
}

impl Occluder {
    /// An axis-aligned box occluder.
    #[must_use]
    pub fn cuboid(min: Vec3, max: Vec3) -> Occluder {
        Occluder {
            mesh: Arc::new(Mesh::cuboid(min, max)),
            transform: Mat4::IDENTITY,
        }
    }

    /// A mesh occluder with a transform.
    #[must_use]
    pub fn mesh(mesh: Arc<Mesh>, transform: Mat4) -> Occluder {
        Occluder { mesh, transform }
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
            })
            .collect()
    }

    pub(crate) fn thread_count(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.threads
        }
    }
}
