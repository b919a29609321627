//! A mesh's ray-cast data: its triangles in the hierarchy's leaf order, cast against nearest
//! first or counted along a ray.

use std::sync::Arc;

use glam::Vec3;

use super::TriangleRay;
use super::traversal::{Best, BoxRay, EMPTY_STACK, Stack, nearest};
use crate::raster::Mesh;
use crate::raster::index::{MeshIndex, Node, Quad, Wide};

/// What ray casts read of a mesh, built on its first cast ([`MeshIndex::ray_data`]) and
/// shared by every instance of the mesh.
#[derive(Debug, Default)]
pub(in crate::raster) struct RayData {
    /// The root of the hierarchy (`None` for a mesh with nothing to hit).
    pub(super) root: Option<Node>,
    /// The hierarchy's 4-wide form.
    quads: Vec<Quad>,
    /// The vertices of the indexed triangles leaf by leaf: entry `k` is triangle `order[k]`.
    pub(super) triangles: Vec<[Vec3; 3]>,
    order: Vec<u32>,
}

impl MeshIndex {
    /// The ray-cast data of `mesh`, the mesh this index was built from (made on first use).
    pub(in crate::raster) fn ray_data(&self, mesh: &Mesh) -> &Arc<RayData> {
        self.ray.get_or_init(|| {
            let (p, idx) = (mesh.positions(), mesh.indices());
            let order = self.bvh.order.clone();
            let triangles = order
                .iter()
                .map(|&t| {
                    let t = 3 * t as usize;
                    [idx[t], idx[t + 1], idx[t + 2]].map(|k| p[k as usize])
                })
                .collect();
            Arc::new(RayData {
                root: self.bvh.nodes.first().copied(),
                quads: Wide::of(&self.bvh.nodes).quads,
                triangles,
                order,
            })
        })
    }
}

impl RayData {
    /// Offers every triangle that `ray` (in this mesh's space) hits before `best.t` to `best`,
    /// as instance `instance` (record `record`).
    #[inline]
    pub(super) fn cast(
        &self,
        ray: &TriangleRay,
        hit: (u32, u32),
        best: &mut Best,
        stack: &mut Stack,
    ) {
        let Some(root) = &self.root else {
            return;
        };
        let boxes = BoxRay::for_mesh(ray, (root.lo, root.hi));
        let (tris, order) = (&self.triangles, &self.order);
        nearest(
            root,
            &self.quads,
            &boxes,
            best,
            stack,
            &mut |first, count, best| {
                let (first, end) = (first as usize, (first + count) as usize);
                for (k, &[a, b, c]) in tris.iter().enumerate().take(end).skip(first) {
                    if let Some(t) = ray.intersect(a, b, c)
                        && t <= best.t
                    {
                        best.offer(t, hit, order[k], k as u32);
                    }
                }
            },
        );
    }

    /// How many triangles the ray crosses (at any `t ≥ 0`), and whether one of them at
    /// `t = 0`.
    pub(super) fn crossings(&self, ray: &TriangleRay) -> (u32, bool) {
        let Some(root) = &self.root else {
            return (0, false);
        };
        let boxes = BoxRay::for_mesh(ray, (root.lo, root.hi));
        let tris = &self.triangles;
        let (mut count, mut at_origin) = (0u32, false);
        // Nothing lowers `best.t`: every leaf the ray enters is visited.
        let mut best = Best::within(f32::INFINITY);
        let mut stack = EMPTY_STACK;
        nearest(
            root,
            &self.quads,
            &boxes,
            &mut best,
            &mut stack,
            &mut |first, n, _| {
                for &[a, b, c] in tris.iter().skip(first as usize).take(n as usize) {
                    if let Some(t) = ray.intersect(a, b, c) {
                        count += 1;
                        at_origin |= t == 0.0;
                    }
                }
            },
        );
        (count, at_origin)
    }
}
