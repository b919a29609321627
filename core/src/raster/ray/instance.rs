//! Ray casts against instances: each instance's cached world-to-object record, the walk of the
//! instance hierarchy, and the inside test.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Vec3};

use super::mesh::RayData;
use super::traversal::{Best, BoxRay, EMPTY_STACK, Stack, Warm, nearest};
use super::triangle::Affine;
use super::{RayHit, TriangleRay, unit_direction};
use crate::raster::index::Node;
use crate::raster::{Instance, InstanceIndex, Mesh, Placed};

/// What a cast reads of one instance, in one cache line: its world-to-object map and its
/// mesh.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(in crate::raster) struct Record {
    inverse: Affine,
    /// The mesh's entry in [`InstanceRays::meshes`]; `u32::MAX`: never hit (no inverse, or
    /// nothing to hit).
    mesh: u32,
    /// The instance's position in the list.
    instance: u32,
}

/// The ray-cast data of an [`InstanceIndex`]: a [`Record`] per item of the hierarchy's
/// leaf order (so that the instances of a leaf, and of neighbouring leaves, lie together),
/// and each mesh's [`RayData`]. Built on the first cast; [`InstanceIndex::update`] keeps it.
#[derive(Clone, Debug, Default)]
pub(in crate::raster) struct InstanceRays {
    records: Vec<Record>,
    meshes: Vec<Arc<RayData>>,
    /// Where each mesh's data is in `meshes`, by its address.
    slots: HashMap<usize, u32>,
}

impl InstanceRays {
    fn new(index: &InstanceIndex, instances: &[impl Placed]) -> InstanceRays {
        crate::zone!("penumbra::raster::InstanceRays::new");
        let mut rays = InstanceRays::default();
        rays.records = index
            .bvh
            .order
            .iter()
            .map(|&i| rays.record(i, index.inverses[i as usize], instances[i as usize].mesh()))
            .collect();
        rays
    }

    fn record(&mut self, instance: u32, inverse: Option<Mat4>, mesh: &Mesh) -> Record {
        let data = mesh.index().ray_data(mesh);
        let key = Arc::as_ptr(data) as usize;
        let slot = match self.slots.get(&key) {
            Some(&s) => s,
            None => {
                let s = self.meshes.len() as u32;
                self.meshes.push(Arc::clone(data));
                self.slots.insert(key, s);
                s
            }
        };
        match inverse {
            Some(inv) if data.root.is_some() => Record {
                inverse: Affine::of(&inv),
                mesh: slot,
                instance,
            },
            _ => Record {
                inverse: Affine::default(),
                mesh: u32::MAX,
                instance,
            },
        }
    }

    /// After the instance at leaf-order position `slot` changed.
    pub(in crate::raster) fn update(&mut self, slot: usize, inverse: Option<Mat4>, mesh: &Mesh) {
        if let Some(r) = self.records.get(slot).copied() {
            self.records[slot] = self.record(r.instance, inverse, mesh);
        }
    }
}

/// The directions of the inside test (object space): fixed, far from every axis, plane of
/// two axes and each other, so that a ray along one rarely grazes an edge that another grazes.
const INSIDE_DIRECTIONS: [Vec3; 3] = [
    Vec3::new(0.5773, 0.6118, 0.5407),
    Vec3::new(-0.7072, 0.3090, 0.6360),
    Vec3::new(0.2588, -0.8660, 0.4280),
];

impl InstanceIndex {
    /// The ray-cast data, made on first use from `instances` (the indexed list).
    fn rays(&self, instances: &[impl Placed]) -> &InstanceRays {
        self.ray.get_or_init(|| InstanceRays::new(self, instances))
    }

    /// The nearest hit of the ray from `origin` along the unit `direction` within
    /// `[0, max_distance]`, among the instances `filter` keeps; `instances` is the list this
    /// index was built or updated for.
    pub(crate) fn cast_of(
        &self,
        instances: &[impl Placed],
        origin: Vec3,
        direction: Vec3,
        max_distance: f32,
        filter: impl Fn(u32) -> bool,
    ) -> Option<Best> {
        // NaN is not `>= 0` either.
        if max_distance.is_nan()
            || max_distance < 0.0
            || !origin.is_finite()
            || !direction.is_finite()
        {
            return None;
        }
        let root = self.bvh.nodes.first()?;
        let rays = self.rays(instances);
        let mut best = Best::within(max_distance);
        let world = BoxRay::new(origin, direction.recip(), 0.0);
        let mut stack = EMPTY_STACK;
        // Made (zeroed) when the ray first reaches an instance.
        let mut mesh_stack: Option<Stack> = None;
        nearest(
            root,
            &self.bvh.wide.quads,
            &world,
            &mut best,
            &mut stack,
            Warm::of(&rays.records),
            &mut |first, count, best| {
                let records = rays.records.iter().enumerate();
                for (k, r) in records.skip(first as usize).take(count as usize) {
                    let Some(mesh) = rays.meshes.get(r.mesh as usize) else {
                        continue;
                    };
                    if !filter(r.instance) {
                        continue;
                    }
                    if let Some(ray) = r.inverse.ray(origin, direction) {
                        let stack = mesh_stack.get_or_insert(EMPTY_STACK);
                        mesh.cast(&ray, (r.instance, k as u32), best, stack);
                    }
                }
            },
        );
        best.found().then_some(best)
    }

    /// The hit `best` found, described in world space.
    pub(crate) fn hit_of(
        &self,
        instances: &[impl Placed],
        origin: Vec3,
        direction: Vec3,
        best: &Best,
    ) -> RayHit<u32> {
        let rays = self.rays(instances);
        let record = &rays.records[best.record as usize];
        let [a, b, c] = rays.meshes[record.mesh as usize].triangle(best.slot);
        let n = record.inverse.transpose_vector((b - a).cross(c - a));
        let normal = n
            .try_normalize()
            .or_else(|| unit_direction(n))
            .unwrap_or(-direction);
        let normal = if normal.dot(direction) > 0.0 {
            -normal
        } else {
            normal
        };
        RayHit {
            position: origin + direction * best.t,
            normal,
            distance: best.t,
            occluder: best.instance,
            triangle: best.triangle,
        }
    }

    /// The nearest hit of the ray from `origin` along `direction` (any length; distances are
    /// world units along the normalized direction) with a distance in `[0, max_distance]` among
    /// `instances`, the list this index was built or updated for; [`RayHit::occluder`] is the
    /// instance's position in it. See the module (`raster::ray`) for the tests and tie-breaking.
    ///
    /// `None` for a miss, and for a NaN or infinite `origin`, a zero, NaN or infinite
    /// `direction`, or a NaN or negative `max_distance`. Instances whose transform is not an
    /// invertible affine map are never hit.
    ///
    /// # Panics
    /// If `instances` does not have the indexed length.
    #[must_use]
    pub fn raycast(
        &self,
        instances: &[Instance<'_>],
        origin: Vec3,
        direction: Vec3,
        max_distance: f32,
    ) -> Option<RayHit> {
        crate::zone!("penumbra::raster::InstanceIndex::raycast");
        assert_eq!(
            instances.len(),
            self.len(),
            "an InstanceIndex is cast against the list it indexes"
        );
        let direction = unit_direction(direction)?;
        let best = self.cast_of(instances, origin, direction, max_distance, |_| true)?;
        Some(self.hit_of(instances, origin, direction, &best))
    }

    /// The first instance (smallest index) whose closed mesh holds `point`: decided per
    /// instance by the parity of the triangles crossed along three fixed directions, by
    /// majority; a point where one of the rays meets a triangle at distance 0 (on the surface)
    /// counts as inside.
    pub(crate) fn inside_of(&self, instances: &[impl Placed], point: Vec3) -> Option<u32> {
        if !point.is_finite() {
            return None;
        }
        let p = point.to_array();
        let mut candidates = Vec::new();
        let nodes = &self.bvh.nodes;
        let mut stack = vec![0usize];
        while let Some(n) = stack.pop() {
            let Some(node) = nodes.get(n) else {
                continue;
            };
            if (0..3).any(|a| !(node.lo[a] <= p[a] && p[a] <= node.hi[a])) {
                continue;
            }
            if node.count > 0 {
                let first = node.first as usize;
                candidates.extend_from_slice(&self.bvh.order[first..first + node.count as usize]);
            } else {
                stack.extend([node.first as usize, node.first as usize + 1]);
            }
        }
        candidates.sort_unstable();
        candidates.into_iter().find(|&i| {
            let Some(Some(inverse)) = self.inverses.get(i as usize) else {
                return false;
            };
            let mesh = instances[i as usize].mesh();
            let data = mesh.index().ray_data(mesh);
            let Some(Node { lo, hi, .. }) = data.root else {
                return false;
            };
            let local = inverse.transform_point3(point);
            // Outside the bounds (widened by far more than any rounding): outside.
            let slack = (Vec3::from(lo).abs().max(Vec3::from(hi).abs()).max_element()) * 1e-4;
            if local.cmplt(Vec3::from(lo) - slack).any()
                || local.cmpgt(Vec3::from(hi) + slack).any()
            {
                return false;
            }
            let mut odd = 0;
            for d in INSIDE_DIRECTIONS {
                let Some(ray) = TriangleRay::new(local, d) else {
                    return false;
                };
                let (count, on_surface) = data.crossings(&ray);
                if on_surface {
                    return true;
                }
                odd += count & 1;
            }
            odd >= 2
        })
    }
}
