//! A mesh's ray-cast data: its triangles in the hierarchy's leaf order, cast against nearest
//! first or counted along a ray.

use std::sync::Arc;

use glam::Vec3;

use super::TriangleRay;
use super::traversal::{Best, BoxRay, EMPTY_STACK, Stack, Warm, nearest};
use super::triangle::Leaf4;
use crate::raster::Mesh;
use crate::raster::index::{MeshIndex, Node, Quad};

/// What ray casts read of a mesh, built on its first cast ([`MeshIndex::ray_data`]) and
/// shared by every instance of the mesh.
#[derive(Debug, Default)]
pub(in crate::raster) struct RayData {
    /// The root of the hierarchy (`None` for a mesh with nothing to hit); a leaf root's
    /// `first` is its first block of `leaves`.
    pub(super) root: Option<Node>,
    /// The hierarchy's 4-wide form; a leaf child's link is its first block of `leaves`.
    quads: Vec<Quad>,
    /// The indexed triangles leaf by leaf, four to a block (a leaf of `n` triangles takes
    /// `⌈n/4⌉` consecutive blocks), so that one 4-wide test covers a leaf of the builder's.
    leaves: Vec<Leaf4>,
    /// The mesh's triangle index of each lane of `leaves`.
    ids: Vec<[u32; 4]>,
}

/// Blocks of [`Leaf4`] a leaf of `count` triangles takes.
fn blocks(count: u32) -> u32 {
    count.div_ceil(4)
}

impl MeshIndex {
    /// The ray-cast data of `mesh`, the mesh this index was built from (made on first use).
    pub(in crate::raster) fn ray_data(&self, mesh: &Mesh) -> &Arc<RayData> {
        self.ray.get_or_init(|| {
            let (p, idx) = (mesh.positions(), mesh.indices());
            let order = &self.bvh.order;
            let vertices = |t: u32| {
                let t = 3 * t as usize;
                [idx[t], idx[t + 1], idx[t + 2]].map(|k| p[k as usize])
            };
            let (mut leaves, mut ids) = (Vec::new(), Vec::new());
            // A leaf's blocks, appended; returns the first.
            let mut pack = |first: u32, count: u32| {
                let at = leaves.len() as u32;
                let items = &order[first as usize..(first + count) as usize];
                for chunk in items.chunks(4) {
                    let (mut leaf, mut id) = (Leaf4::default(), [u32::MAX; 4]);
                    for (lane, &t) in chunk.iter().enumerate() {
                        leaf.set(lane, vertices(t));
                        id[lane] = t;
                    }
                    leaves.push(leaf);
                    ids.push(id);
                }
                at
            };
            let mut root = self.bvh.nodes.first().copied();
            // The index's own 4-wide form (made with it, for the frustum walks of tiles).
            let mut quads = self.bvh.wide.quads.clone();
            if let Some(r) = root.as_mut().filter(|r| r.count > 0) {
                r.first = pack(r.first, r.count);
            }
            // Quads in order, so that the blocks follow the order the builder made.
            for q in &mut quads {
                for lane in 0..4 {
                    if q.count[lane] > 0 {
                        q.link[lane] = pack(q.link[lane], q.count[lane]);
                    }
                }
            }
            Arc::new(RayData {
                root,
                quads,
                leaves,
                ids,
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
        let (leaves, ids) = (&self.leaves, &self.ids);
        nearest(
            root,
            &self.quads,
            &boxes,
            best,
            stack,
            Warm::of(leaves),
            &mut |first, count, best| {
                let mut left = count;
                for b in first..first + blocks(count) {
                    let (Some(leaf), Some(id)) = (leaves.get(b as usize), ids.get(b as usize))
                    else {
                        return;
                    };
                    let (t, mut mask) = ray.intersect4(leaf, left);
                    left = left.saturating_sub(4);
                    while mask != 0 {
                        let l = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        if t[l] <= best.t {
                            best.offer(t[l], hit, id[l], 4 * b + l as u32);
                        }
                    }
                }
            },
        );
    }

    /// The vertices of the triangle at `slot` ([`Best::slot`]) of this mesh's leaves.
    pub(super) fn triangle(&self, slot: u32) -> [Vec3; 3] {
        self.leaves[slot as usize / 4].triangle(slot as usize % 4)
    }

    /// How many triangles the ray crosses (at any `t ≥ 0`), and whether one of them at
    /// `t = 0`.
    pub(super) fn crossings(&self, ray: &TriangleRay) -> (u32, bool) {
        let Some(root) = &self.root else {
            return (0, false);
        };
        let boxes = BoxRay::for_mesh(ray, (root.lo, root.hi));
        let leaves = &self.leaves;
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
            Warm::of(leaves),
            &mut |first, n, _| {
                let mut left = n;
                for leaf in leaves.iter().skip(first as usize).take(blocks(n) as usize) {
                    let (t, mask) = ray.intersect4(leaf, left);
                    left = left.saturating_sub(4);
                    count += mask.count_ones();
                    at_origin |= (0..4).any(|l| mask & (1 << l) != 0 && t[l] == 0.0);
                }
            },
        );
        (count, at_origin)
    }
}
