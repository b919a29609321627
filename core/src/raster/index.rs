//! Bounding-volume hierarchies that let a single tile of a target be drawn from only the
//! triangles that can reach it: one per mesh over its triangles (object space, built once per
//! mesh and shared by every instance of it) and one per submission over its instances (world
//! space, refitted in place when an instance moves).
//!
//! Culling is conservative: a node is skipped only when every point of its box lies outside
//! one plane of the tile's frustum in clip space, by more than a slack that covers the f32
//! rounding of the rasterizer's own vertex transform. The planes are homogeneous
//! (`n · (x, y, z, w) ≥ 0`), so the test is right for points behind a perspective light too.
//!
//! Ray casts ([`super::ray`]) walk the same hierarchies, in a 4-wide form made from them.

use std::sync::{Arc, OnceLock};

use glam::{DVec4, Mat4, Vec3};

use super::ray::{InstanceRays, RayData};
use super::{Instance, Mesh, Placed};

/// Items per leaf of a mesh's hierarchy (triangles).
const MESH_LEAF: usize = 4;
/// Items per leaf of an instance hierarchy.
const INSTANCE_LEAF: usize = 1;
/// Relative slack of a plane test: far above the few f32 roundings of `(VP·M)·p`.
const RELATIVE_SLACK: f64 = 1e-5;

/// A box that contains everything (an item whose bounds cannot be trusted, such as an instance
/// with a projective transform, is never culled).
const UNBOUNDED: ([f32; 3], [f32; 3]) = ([-f32::MAX; 3], [f32::MAX; 3]);

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) lo: [f32; 3],
    pub(super) hi: [f32; 3],
    /// Leaf: first item in `order`; inner node: index of the first child (the second follows).
    pub(super) first: u32,
    /// Items of a leaf; 0 for an inner node.
    pub(super) count: u32,
}

/// A bounding-volume hierarchy over item boxes, split by the binned surface-area heuristic
/// (at the median of the widest axis of the box centres where it finds no split, and deep in
/// the tree).
#[derive(Clone, Debug, Default)]
pub(crate) struct Bvh {
    pub(super) nodes: Vec<Node>,
    /// Item indices, leaf by leaf.
    pub(super) order: Vec<u32>,
    /// Parent of each node (`u32::MAX` for the root), for refits.
    parent: Vec<u32>,
    /// The leaf of each item (`u32::MAX` for items left out), for refits.
    leaf_of: Vec<u32>,
    /// The hierarchy four children to a node, for ray casts and the frustum walks of tiles
    /// ([`Bvh::with_wide`]: every mesh and instance index has it); refits keep it.
    pub(super) wide: Wide,
}

/// A node of the 4-wide hierarchy that ray casts and frustum walks take: up to four children,
/// each a box and either another [`Quad`] or a leaf of the binary hierarchy, in two cache
/// lines, so that a ray (or a tile's planes) tests all four boxes with 4-wide arithmetic and
/// one dependent load per level (the binary tree needs two). Lanes without a child have boxes
/// at +∞ on every axis, which no ray enters.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct Quad {
    /// Per axis, the low and the high bound of each child.
    pub(super) lo: [[f32; 4]; 3],
    pub(super) hi: [[f32; 4]; 3],
    /// Per child: an inner child's quad, or a leaf's first item in `order`.
    pub(super) link: [u32; 4],
    /// Per child: a leaf's item count; 0 for an inner child.
    pub(super) count: [u32; 4],
}

impl Default for Quad {
    fn default() -> Quad {
        Quad {
            lo: [[f32::INFINITY; 4]; 3],
            hi: [[f32::INFINITY; 4]; 3],
            link: [0; 4],
            count: [0; 4],
        }
    }
}

impl Quad {
    fn set_bounds(&mut self, lane: usize, lo: [f32; 3], hi: [f32; 3]) {
        for a in 0..3 {
            self.lo[a][lane] = lo[a];
            self.hi[a][lane] = hi[a];
        }
    }
}

/// The 4-wide form of a binary hierarchy: quad 0 holds the root's children.
#[derive(Clone, Debug, Default)]
pub(super) struct Wide {
    pub(super) quads: Vec<Quad>,
    /// Where each binary node is a child: `4 · quad + lane`, or `u32::MAX` (the root, and
    /// inner nodes whose children a quad took instead), for refits.
    lane_of: Vec<u32>,
}

impl Wide {
    /// The 4-wide form of `nodes`. Each quad starts from an inner node's two children and
    /// opens the inner child of largest surface area until it has four (MacDonald and Booth's
    /// surface area as the chance that a ray meets the box); the quads of one quad's children
    /// are stored together.
    pub(super) fn of(nodes: &[Node]) -> Wide {
        let mut wide = Wide {
            quads: Vec::new(),
            lane_of: vec![u32::MAX; nodes.len()],
        };
        let Some(root) = nodes.first() else {
            return wide;
        };
        if root.count > 0 {
            return wide;
        }
        wide.quads.push(Quad::default());
        // (quad, binary node whose subtree it holds)
        let mut todo = vec![(0usize, 0usize)];
        while let Some((q, n)) = todo.pop() {
            let first = nodes[n].first as usize;
            let mut children = vec![first, first + 1];
            while children.len() < 4 {
                let open = children
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| nodes[c].count == 0)
                    .max_by(|a, b| {
                        let area = |c: usize| half_area((nodes[c].lo, nodes[c].hi));
                        area(*a.1).total_cmp(&area(*b.1))
                    })
                    .map(|(k, _)| k);
                let Some(k) = open else {
                    break;
                };
                let c = children.remove(k);
                let f = nodes[c].first as usize;
                children.extend([f, f + 1]);
            }
            let mut quad = Quad::default();
            for (lane, &c) in children.iter().enumerate() {
                let node = &nodes[c];
                quad.set_bounds(lane, node.lo, node.hi);
                wide.lane_of[c] = (4 * q + lane) as u32;
                if node.count > 0 {
                    (quad.link[lane], quad.count[lane]) = (node.first, node.count);
                } else {
                    let child = wide.quads.len();
                    wide.quads.push(Quad::default());
                    quad.link[lane] = child as u32;
                    todo.push((child, c));
                }
            }
            wide.quads[q] = quad;
        }
        wide
    }

    /// Binary node `node` has the box `lo`, `hi` now.
    fn refit(&mut self, node: usize, lo: [f32; 3], hi: [f32; 3]) {
        if let Some(&at) = self.lane_of.get(node)
            && let Some(quad) = self.quads.get_mut(at as usize / 4)
        {
            quad.set_bounds(at as usize % 4, lo, hi);
        }
    }
}

fn union(a: ([f32; 3], [f32; 3]), b: ([f32; 3], [f32; 3])) -> ([f32; 3], [f32; 3]) {
    (
        std::array::from_fn(|i| a.0[i].min(b.0[i])),
        std::array::from_fn(|i| a.1[i].max(b.1[i])),
    )
}

const EMPTY_BOX: ([f32; 3], [f32; 3]) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);

/// Buckets per axis of the binned surface-area split.
const BINS: usize = 16;
/// Nodes this deep and deeper split at the median, so that no tree gets much deeper than
/// `SAH_DEPTH + log2(items)`, however the items lie.
const SAH_DEPTH: usize = 24;

/// Half the surface area of a box (0 for an empty one), in f64 so that unbounded boxes stay
/// finite.
fn half_area(b: ([f32; 3], [f32; 3])) -> f64 {
    let d: [f64; 3] = std::array::from_fn(|a| (f64::from(b.1[a]) - f64::from(b.0[a])).max(0.0));
    d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
}

/// Splits `slice` in two by the surface-area heuristic (MacDonald and Booth 1990; binned as
/// in Wald, "On fast Construction of SAH-based Bounding Volume Hierarchies", 2007): the
/// centres are put in [`BINS`] buckets along each axis, and the bucket boundary with the least
/// `area(left) · n_left + area(right) · n_right` wins. The items of the left part come first;
/// returns their count, or `None` when no boundary leaves both parts non-empty.
fn sah_split(
    slice: &mut [u32],
    bx: &impl Fn(u32) -> ([f32; 3], [f32; 3]),
    centre: &impl Fn(u32, usize) -> f32,
    clo: [f32; 3],
    chi: [f32; 3],
) -> Option<usize> {
    let bin_of = |axis: usize| {
        let (lo, extent) = (clo[axis], chi[axis] - clo[axis]);
        let scale = BINS as f32 / extent;
        move |c: f32| (((c - lo) * scale) as usize).min(BINS - 1)
    };
    let mut best: Option<(f64, usize, usize)> = None;
    for axis in 0..3 {
        let extent = chi[axis] - clo[axis];
        if !(extent > 0.0 && extent.is_finite()) {
            continue;
        }
        let bin = bin_of(axis);
        let mut boxes = [EMPTY_BOX; BINS];
        let mut counts = [0usize; BINS];
        for &i in slice.iter() {
            let b = bin(centre(i, axis));
            counts[b] += 1;
            boxes[b] = union(boxes[b], bx(i));
        }
        let mut right = [(0.0f64, 0usize); BINS];
        let (mut acc, mut n) = (EMPTY_BOX, 0);
        for k in (1..BINS).rev() {
            acc = union(acc, boxes[k]);
            n += counts[k];
            right[k] = (half_area(acc), n);
        }
        let (mut acc, mut n) = (EMPTY_BOX, 0);
        for k in 1..BINS {
            acc = union(acc, boxes[k - 1]);
            n += counts[k - 1];
            let (area, m) = right[k];
            if n == 0 || m == 0 {
                continue;
            }
            let cost = half_area(acc) * n as f64 + area * m as f64;
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, axis, k));
            }
        }
    }
    let (cost, axis, k) = best?;
    if !cost.is_finite() {
        return None;
    }
    let bin = bin_of(axis);
    let mut left = 0;
    for j in 0..slice.len() {
        if bin(centre(slice[j], axis)) < k {
            slice.swap(left, j);
            left += 1;
        }
    }
    Some(left)
}

impl Bvh {
    /// A hierarchy over `boxes` (`None`: the item is left out, it can never be drawn).
    fn build(boxes: &[Option<([f32; 3], [f32; 3])>], leaf: usize) -> Bvh {
        let mut items: Vec<u32> = (0..boxes.len() as u32)
            .filter(|&i| boxes[i as usize].is_some())
            .collect();
        let mut bvh = Bvh {
            nodes: Vec::with_capacity(2 * items.len() / leaf.max(1) + 1),
            order: Vec::with_capacity(items.len()),
            parent: Vec::new(),
            leaf_of: vec![u32::MAX; boxes.len()],
            wide: Wide::default(),
        };
        if items.is_empty() {
            return bvh;
        }
        let bx = |i: u32| boxes[i as usize].unwrap_or(UNBOUNDED);
        // (node, range of `items`) still to split.
        bvh.nodes.push(Node {
            lo: [0.0; 3],
            hi: [0.0; 3],
            first: 0,
            count: 0,
        });
        bvh.parent.push(u32::MAX);
        let mut stack = vec![(0usize, 0usize, items.len(), 0usize)];
        while let Some((node, start, end, depth)) = stack.pop() {
            let slice = &mut items[start..end];
            let bounds = slice.iter().fold(EMPTY_BOX, |b, &i| union(b, bx(i)));
            bvh.nodes[node].lo = bounds.0;
            bvh.nodes[node].hi = bounds.1;
            if slice.len() <= leaf {
                bvh.nodes[node].first = bvh.order.len() as u32;
                bvh.nodes[node].count = slice.len() as u32;
                for &i in slice.iter() {
                    bvh.leaf_of[i as usize] = node as u32;
                }
                bvh.order.extend_from_slice(slice);
                continue;
            }
            // A binned surface-area split (the median on the widest axis of the centres where
            // it finds none, and below `SAH_DEPTH`); centres of unbounded boxes are 0, which
            // keeps them finite.
            let centre = |i: u32, a: usize| {
                let (lo, hi) = bx(i);
                0.5 * lo[a] + 0.5 * hi[a]
            };
            let (mut clo, mut chi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
            for &i in slice.iter() {
                for a in 0..3 {
                    let c = centre(i, a);
                    clo[a] = clo[a].min(c);
                    chi[a] = chi[a].max(c);
                }
            }
            let sah = if depth < SAH_DEPTH {
                sah_split(slice, &bx, &centre, clo, chi)
            } else {
                None
            };
            let mid = sah.unwrap_or_else(|| {
                let axis = (0..3)
                    .max_by(|&a, &b| (chi[a] - clo[a]).total_cmp(&(chi[b] - clo[b])))
                    .unwrap_or(0);
                let mid = slice.len() / 2;
                slice.select_nth_unstable_by(mid, |&a, &b| {
                    centre(a, axis).total_cmp(&centre(b, axis))
                });
                mid
            });
            let left = bvh.nodes.len();
            for _ in 0..2 {
                bvh.nodes.push(Node {
                    lo: [0.0; 3],
                    hi: [0.0; 3],
                    first: 0,
                    count: 0,
                });
                bvh.parent.push(node as u32);
            }
            bvh.nodes[node].first = left as u32;
            stack.push((left, start, start + mid, depth + 1));
            stack.push((left + 1, start + mid, end, depth + 1));
        }
        bvh
    }

    /// The same hierarchy with its 4-wide form.
    pub(super) fn with_wide(mut self) -> Bvh {
        self.wide = Wide::of(&self.nodes);
        self
    }

    /// Calls `f` with every item whose box is not wholly outside one of `planes`.
    ///
    /// A node wholly inside a plane has every descendant inside it too, so its children are
    /// tested only against the planes it straddles (a bit mask of them rides on the stack):
    /// for a tile's narrow column most nodes near it are inside most of its planes.
    fn visit(&self, planes: &[Plane], f: impl FnMut(u32)) {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if planes.len() <= simd::PLANES && std::arch::is_x86_feature_detected!("avx2") {
            if !self.wide.quads.is_empty() {
                let each = simd::EachPlane::new(planes);
                // SAFETY: the CPU has AVX2 (checked above).
                return unsafe { self.visit_quads_avx2(&each, f) };
            }
            let soa = simd::Planes::new(planes);
            // SAFETY: the CPU has AVX2 (checked above).
            return unsafe { self.visit_avx2(&soa, planes.len(), f) };
        }
        self.visit_with(
            planes.len(),
            |mask, lo, hi| Plane::classify(planes, mask, lo, hi),
            f,
        );
    }

    /// [`Bvh::visit`] with the planes tested four at a time (the same arithmetic, so the same
    /// answers, as [`Plane::classify`]).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[target_feature(enable = "avx2")]
    unsafe fn visit_avx2(&self, planes: &simd::Planes, count: usize, f: impl FnMut(u32)) {
        self.visit_with(
            count,
            // SAFETY: AVX2 is enabled in this function.
            |mask, lo, hi| unsafe { planes.classify(mask, lo, hi) },
            f,
        );
    }

    /// [`Bvh::visit`] over the 4-wide form: the four children of a quad are tested against one
    /// plane at a time, lane by lane with [`Plane::classify`]'s arithmetic (so each child is
    /// kept or dropped, and its planes left to test, as the binary walk would with the same
    /// mask), and a quad's children are one load instead of a node per level.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[target_feature(enable = "avx2")]
    unsafe fn visit_quads_avx2(&self, planes: &simd::EachPlane, mut f: impl FnMut(u32)) {
        let quads = &self.wide.quads;
        let mut stack = [(0u32, 0u32); 64];
        stack[0] = (0, planes.all());
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (at, mask) = stack[top];
            let quad = &quads[at as usize];
            // SAFETY: AVX2 is enabled in this function.
            let (kept, masks) = unsafe { planes.classify_quad(mask, quad) };
            let lanes = quad.link.iter().zip(&quad.count).zip(masks);
            for (lane, ((&link, &count), lane_mask)) in lanes.enumerate() {
                if kept & (1 << lane) == 0 {
                    continue;
                }
                if count > 0 {
                    self.leaf_items(link, count)
                        .iter()
                        .copied()
                        .for_each(&mut f);
                } else if link == 0 {
                    // No child in this lane (quad 0 is the root's, never a child).
                } else if top < stack.len() {
                    // Asked for now, the child's two lines arrive while its siblings (and
                    // their subtrees, for all but the last pushed) are looked at.
                    let child: *const Quad = quads.as_ptr().wrapping_add(link as usize);
                    crate::cpu::prefetch_range(child.cast(), std::mem::size_of::<Quad>());
                    stack[top] = (link, lane_mask);
                    top += 1;
                } else {
                    // Deeper than the trees the builder makes; visit the quad's subtree whole.
                    self.visit_quad_all(link, &mut f);
                }
            }
        }
    }

    /// Every item under quad `at`.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    fn visit_quad_all(&self, at: u32, f: &mut impl FnMut(u32)) {
        let quad = &self.wide.quads[at as usize];
        for lane in 0..4 {
            let (link, count) = (quad.link[lane], quad.count[lane]);
            if count > 0 {
                self.leaf_items(link, count)
                    .iter()
                    .copied()
                    .for_each(&mut *f);
            } else if link != 0 {
                self.visit_quad_all(link, f);
            }
        }
    }

    /// The items of a quad's leaf lane: `count` of them from `first` in the item order.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[inline(always)]
    fn leaf_items(&self, first: u32, count: u32) -> &[u32] {
        &self.order[first as usize..][..count as usize]
    }

    /// The walk of [`Bvh::visit`], with `classify` as [`Plane::classify`] over `count` planes.
    #[inline(always)]
    fn visit_with(
        &self,
        count: usize,
        classify: impl Fn(u32, [f32; 3], [f32; 3]) -> Option<u32>,
        mut f: impl FnMut(u32),
    ) {
        if self.nodes.is_empty() {
            return;
        }
        // Planes past the 32nd are tested at every node (no caller passes more than seven).
        let all = if count >= 32 {
            u32::MAX
        } else {
            (1u32 << count) - 1
        };
        let mut stack = [(0u32, 0u32); 64];
        stack[0] = (0, all);
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (at, mask) = stack[top];
            let node = &self.nodes[at as usize];
            let Some(mask) = classify(mask, node.lo, node.hi) else {
                continue;
            };
            if node.count > 0 {
                let items = &self.order[node.first as usize..][..node.count as usize];
                for &i in items {
                    f(i);
                }
            } else if top + 2 <= stack.len() {
                stack[top] = (node.first, mask);
                stack[top + 1] = (node.first + 1, mask);
                top += 2;
            } else {
                // Deeper than the trees the builder makes (at most about 24 + 33 levels); visit it all.
                self.visit_all(node.first, &mut f);
                self.visit_all(node.first + 1, &mut f);
            }
        }
    }

    fn visit_all(&self, node: u32, f: &mut impl FnMut(u32)) {
        let n = &self.nodes[node as usize];
        if n.count > 0 {
            for &i in &self.order[n.first as usize..][..n.count as usize] {
                f(i);
            }
        } else {
            self.visit_all(n.first, f);
            self.visit_all(n.first + 1, f);
        }
    }

    /// Where item `item` is in `order`, if it is in the hierarchy.
    fn slot_of(&self, item: usize) -> Option<usize> {
        let leaf = self.nodes.get(*self.leaf_of.get(item)? as usize)?;
        let first = leaf.first as usize;
        let k = self.order[first..first + leaf.count as usize]
            .iter()
            .position(|&i| i as usize == item)?;
        Some(first + k)
    }

    /// The bounds of everything (`None` when empty).
    fn root(&self) -> Option<([f32; 3], [f32; 3])> {
        self.nodes.first().map(|n| (n.lo, n.hi))
    }

    /// Recomputes the boxes from the leaf of `item` up to the root after its box changed.
    /// Returns false when the item was left out at build time (the hierarchy must be rebuilt).
    fn refit(&mut self, item: usize, boxes: &[Option<([f32; 3], [f32; 3])>]) -> bool {
        let Some(&leaf) = self.leaf_of.get(item) else {
            return false;
        };
        if leaf == u32::MAX {
            return false;
        }
        let mut node = leaf as usize;
        loop {
            let n = self.nodes[node];
            let b = if n.count > 0 {
                self.order[n.first as usize..][..n.count as usize]
                    .iter()
                    .fold(EMPTY_BOX, |b, &i| {
                        // An item that has nothing drawable any more adds nothing.
                        union(b, boxes[i as usize].unwrap_or(EMPTY_BOX))
                    })
            } else {
                let (l, r) = (
                    self.nodes[n.first as usize],
                    self.nodes[n.first as usize + 1],
                );
                union((l.lo, l.hi), (r.lo, r.hi))
            };
            self.nodes[node].lo = b.0;
            self.nodes[node].hi = b.1;
            self.wide.refit(node, b.0, b.1);
            let up = self.parent[node];
            if up == u32::MAX {
                return true;
            }
            node = up as usize;
        }
    }
}

/// A homogeneous plane `n · p ≥ 0` with the slack of its test.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plane {
    n: DVec4,
    /// `|n|` through the same transform, for the rounding slack.
    abs: DVec4,
}

impl Plane {
    /// A plane of clip space.
    pub(crate) fn clip(n: DVec4) -> Plane {
        Plane { n, abs: n.abs() }
    }

    /// This clip-space plane pulled back through `m` (clip = m · p): `mᵀ · n`.
    pub(crate) fn through(&self, m: &Mat4) -> Plane {
        let cols = m.to_cols_array_2d();
        let (mut n, mut abs) = ([0.0f64; 4], [0.0f64; 4]);
        for (j, col) in cols.iter().enumerate() {
            for (i, &e) in col.iter().enumerate() {
                let e = f64::from(e);
                n[j] += self.n[i] * e;
                abs[j] += self.abs[i] * e.abs();
            }
        }
        Plane {
            n: DVec4::from_array(n),
            abs: DVec4::from_array(abs),
        }
    }

    /// True when every point of the box is outside the plane by more than the slack.
    #[cfg(test)]
    fn excludes(&self, lo: [f32; 3], hi: [f32; 3]) -> bool {
        Self::any_excludes(std::slice::from_ref(self), lo, hi)
    }

    /// True when every point of the box is outside one of `planes` by more than the slack.
    #[cfg(test)]
    fn any_excludes(planes: &[Plane], lo: [f32; 3], hi: [f32; 3]) -> bool {
        Self::classify(planes, u32::MAX, lo, hi).is_none()
    }

    /// A box's centre, half extent and largest magnitude per axis, as [`Plane::classify`]
    /// uses them.
    #[inline(always)]
    fn box_terms(lo: [f32; 3], hi: [f32; 3]) -> [[f64; 3]; 3] {
        let mut terms = [[0.0f64; 3]; 3];
        for a in 0..3 {
            let (l, h) = (f64::from(lo[a]), f64::from(hi[a]));
            terms[0][a] = 0.5 * (l + h);
            terms[1][a] = 0.5 * (h - l);
            terms[2][a] = l.abs().max(h.abs());
        }
        terms
    }

    /// Tests the box against the planes of `mask` (bit k: `planes[k]`; planes past the 32nd
    /// always): `None` when every point of the box is outside one of them by more than the
    /// slack, else the mask without the planes the box is wholly inside by more than the slack.
    /// The box's largest value of `n · p` is `n · c + |n| · e` (centre c, half extent e), its
    /// smallest `n · c − |n| · e`, and the slack scales with `|M|ᵀ|n| · (|c| + e)`, the largest
    /// magnitude of the terms a vertex transform adds there. The box is read once for all the
    /// planes. NaN (a degenerate box or plane) neither excludes nor drops a plane.
    #[inline]
    fn classify(planes: &[Plane], mask: u32, lo: [f32; 3], hi: [f32; 3]) -> Option<u32> {
        let [c, e, m] = Plane::box_terms(lo, hi);
        let mut left = mask;
        for (k, p) in planes.iter().enumerate() {
            let bit = if k < 32 { 1u32 << k } else { 0 };
            if k < 32 && mask & bit == 0 {
                continue;
            }
            let centre = p.n.w + (p.n.x * c[0] + p.n.y * c[1] + p.n.z * c[2]);
            let reach = p.n.x.abs() * e[0] + p.n.y.abs() * e[1] + p.n.z.abs() * e[2];
            let slack =
                RELATIVE_SLACK * (p.abs.w + p.abs.x * m[0] + p.abs.y * m[1] + p.abs.z * m[2]);
            if centre + reach < -slack {
                return None;
            }
            if centre - reach > slack {
                left &= !bit;
            }
        }
        Some(left)
    }
}

/// A mesh's hierarchy over its triangles (those with three finite vertices: no other can be
/// drawn), in object space.
#[derive(Debug, Default)]
pub(crate) struct MeshIndex {
    pub(super) bvh: Bvh,
    /// What ray casts read, made on the first cast so that meshes only ever drawn do not
    /// carry it.
    pub(super) ray: OnceLock<Arc<RayData>>,
}

impl MeshIndex {
    pub(crate) fn new(mesh: &Mesh) -> MeshIndex {
        crate::zone!("penumbra::raster::MeshIndex::new");
        let p = mesh.positions();
        let boxes: Vec<Option<([f32; 3], [f32; 3])>> = mesh
            .indices()
            .chunks_exact(3)
            .map(|t| {
                let v = [p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]];
                v.iter().all(|v| v.is_finite()).then(|| {
                    let lo = v[0].min(v[1]).min(v[2]);
                    let hi = v[0].max(v[1]).max(v[2]);
                    (lo.to_array(), hi.to_array())
                })
            })
            .collect();
        MeshIndex {
            bvh: Bvh::build(&boxes, MESH_LEAF).with_wide(),
            ray: OnceLock::new(),
        }
    }

    /// Calls `f` with every triangle that may meet the region inside `planes`.
    pub(crate) fn visit(&self, planes: &[Plane], f: impl FnMut(u32)) {
        self.bvh.visit(planes, f);
    }

    /// Asks for the first `bytes` of the hierarchy's nodes (the 4-wide ones the walks take,
    /// where there are) and item order (a hint).
    pub(super) fn prefetch(&self, bytes: usize) {
        let (nodes, quads, order) = (&self.bvh.nodes, &self.bvh.wide.quads, &self.bvh.order);
        if quads.is_empty() {
            crate::cpu::prefetch_range(
                nodes.as_ptr().cast(),
                (nodes.len() * std::mem::size_of::<Node>()).min(bytes),
            );
        } else {
            crate::cpu::prefetch_range(
                quads.as_ptr().cast(),
                (quads.len() * std::mem::size_of::<Quad>()).min(bytes),
            );
        }
        crate::cpu::prefetch_range(order.as_ptr().cast(), (order.len() * 4).min(bytes));
    }

    /// The bounds of the drawable triangles.
    pub(super) fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        self.bvh.root()
    }
}

/// A world-space hierarchy over the instances of a submission, for drawing it tile by tile
/// with [`rasterize_tiles`](super::rasterize_tiles).
///
/// Built once for a list of instances and kept while they move: [`InstanceIndex::update`]
/// refits the boxes above one instance whose transform or mesh changed (the tree's shape stays,
/// so after many large moves a rebuild culls better). The index refers to instances by
/// position: it must be used with the same list (same length and order) it was built or
/// updated for.
#[derive(Clone, Debug, Default)]
pub struct InstanceIndex {
    pub(super) bvh: Bvh,
    pub(super) boxes: Vec<Option<([f32; 3], [f32; 3])>>,
    /// Each instance's world-to-object matrix for ray casts ([`super::ray::ray_inverse`]),
    /// kept with the boxes; `None`: rays never hit the instance.
    pub(super) inverses: Vec<Option<Mat4>>,
    /// The ray casts' per-instance records, made on the first cast and kept by updates.
    pub(super) ray: OnceLock<InstanceRays>,
}

/// The world box of an instance: its mesh's drawable bounds through its transform, padded for
/// rounding; unbounded for a projective transform, `None` for nothing drawable.
fn instance_box(instance: &impl Placed) -> Option<([f32; 3], [f32; 3])> {
    let (lo, hi) = instance.mesh().index().bounds()?;
    let m = instance.transform();
    if m.row(3) != glam::Vec4::W || !m.is_finite() {
        return Some(UNBOUNDED);
    }
    let (mut wlo, mut whi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
    for k in 0..8 {
        let c = Vec3::new(
            if k & 1 == 0 { lo[0] } else { hi[0] },
            if k & 2 == 0 { lo[1] } else { hi[1] },
            if k & 4 == 0 { lo[2] } else { hi[2] },
        );
        let w = m.transform_point3(c);
        wlo = wlo.min(w);
        whi = whi.max(w);
    }
    if !(wlo.is_finite() && whi.is_finite()) {
        return Some(UNBOUNDED);
    }
    let pad = (wlo.abs().max(whi.abs()).max_element() * 1e-5).max(1e-6);
    Some(((wlo - pad).to_array(), (whi + pad).to_array()))
}

impl InstanceIndex {
    /// The index of `instances`.
    #[must_use]
    pub fn new(instances: &[Instance<'_>]) -> InstanceIndex {
        InstanceIndex::of(instances)
    }

    /// The index of any placed things.
    pub(crate) fn of(instances: &[impl Placed]) -> InstanceIndex {
        crate::zone!("penumbra::raster::InstanceIndex::new");
        let boxes: Vec<_> = instances.iter().map(instance_box).collect();
        let inverses = instances
            .iter()
            .map(|i| super::ray::ray_inverse(&i.transform()))
            .collect();
        InstanceIndex {
            bvh: Bvh::build(&boxes, INSTANCE_LEAF).with_wide(),
            boxes,
            inverses,
            ray: OnceLock::new(),
        }
    }

    /// Number of instances indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// True when no instance is indexed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// After instance `i` of the list changed (its transform or mesh), refits the index to it;
    /// rebuilds the whole index when `i` had nothing drawable before. `instances` is the list
    /// after the change.
    ///
    /// # Panics
    /// If `instances` does not have the indexed length or `i` is not an index of it.
    pub fn update(&mut self, i: usize, instances: &[Instance<'_>]) {
        self.update_of(i, instances);
    }

    /// [`InstanceIndex::update`] for any placed things.
    pub(crate) fn update_of(&mut self, i: usize, instances: &[impl Placed]) {
        assert_eq!(
            instances.len(),
            self.boxes.len(),
            "an InstanceIndex is updated with the list it indexes"
        );
        let b = instance_box(&instances[i]);
        self.inverses[i] = super::ray::ray_inverse(&instances[i].transform());
        let was = self.boxes[i].is_some();
        self.boxes[i] = b;
        if b.is_some() && !(was && self.bvh.refit(i, &self.boxes)) {
            self.bvh = Bvh::build(&self.boxes, INSTANCE_LEAF).with_wide();
            // The leaf order changed: the records are made again on the next cast.
            self.ray = OnceLock::new();
        } else if b.is_none() && was {
            // Its leaf keeps the item, which now adds nothing to the boxes above it.
            self.bvh.refit(i, &self.boxes);
        }
        if let (Some(rays), Some(slot)) = (self.ray.get_mut(), self.bvh.slot_of(i)) {
            rays.update(slot, self.inverses[i], instances[i].mesh());
        }
    }

    /// Calls `f` with every instance whose box is not wholly outside one of `planes` (world
    /// space).
    pub(crate) fn visit(&self, planes: &[Plane], f: impl FnMut(u32)) {
        self.bvh.visit(planes, f);
    }
}

/// [`Plane::classify`] four planes at a time.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod simd {
    use std::arch::x86_64::*;

    use super::{Plane, Quad, RELATIVE_SLACK};

    /// Most planes tested this way (two vectors of four).
    pub(super) const PLANES: usize = 8;

    /// Planes laid out component by component, four to a vector; the places past the last
    /// plane hold zeros (never outside, never inside, and never in a mask anyway).
    pub(super) struct Planes {
        n: [[[f64; 4]; 4]; 2],
        abs_n: [[[f64; 4]; 3]; 2],
        slack: [[[f64; 4]; 4]; 2],
    }

    /// Planes one by one (one lane per child of a quad).
    pub(super) struct EachPlane {
        /// n.x, n.y, n.z, n.w, |n.x|, |n.y|, |n.z|, abs.x, abs.y, abs.z, abs.w.
        terms: [[f64; 11]; PLANES],
        count: usize,
    }

    impl EachPlane {
        pub(super) fn new(planes: &[Plane]) -> EachPlane {
            let mut terms = [[0.0; 11]; PLANES];
            for (t, p) in terms.iter_mut().zip(planes) {
                *t = [
                    p.n.x,
                    p.n.y,
                    p.n.z,
                    p.n.w,
                    p.n.x.abs(),
                    p.n.y.abs(),
                    p.n.z.abs(),
                    p.abs.x,
                    p.abs.y,
                    p.abs.z,
                    p.abs.w,
                ];
            }
            EachPlane {
                terms,
                count: planes.len().min(PLANES),
            }
        }

        /// The mask of every plane.
        pub(super) fn all(&self) -> u32 {
            (1u32 << self.count) - 1
        }

        /// [`Plane::classify`] of the four child boxes of `quad` against the planes of `mask`:
        /// the lanes kept (a bit each) and each lane's mask left. Lanes without a child give
        /// NaN terms (their boxes are +∞), which keep them: the caller skips them.
        ///
        /// # Safety
        /// The CPU must support AVX2.
        #[inline(always)]
        pub(super) unsafe fn classify_quad(&self, mask: u32, quad: &Quad) -> (u32, [u32; 4]) {
            let mut kept = 0xF;
            let mut masks = [mask; 4];
            // SAFETY: AVX2 (the caller's contract); the loads read whole arrays.
            unsafe {
                let (mul, add, sub) = (_mm256_mul_pd, _mm256_add_pd, _mm256_sub_pd);
                let half = _mm256_set1_pd(0.5);
                let sign = _mm256_set1_pd(-0.0);
                // Per axis: centre 0.5·(l + h), half extent 0.5·(h − l), magnitude
                // max(|l|, |h|), as `Plane::box_terms` (exact conversions from f32).
                let mut c = [_mm256_setzero_pd(); 3];
                let mut e = [_mm256_setzero_pd(); 3];
                let mut m = [_mm256_setzero_pd(); 3];
                for a in 0..3 {
                    let l = _mm256_cvtps_pd(_mm_loadu_ps(quad.lo[a].as_ptr()));
                    let h = _mm256_cvtps_pd(_mm_loadu_ps(quad.hi[a].as_ptr()));
                    c[a] = mul(half, add(l, h));
                    e[a] = mul(half, sub(h, l));
                    // f64::max of two non-NaN magnitudes (a NaN bound cannot come from a
                    // finite box, and makes the other terms NaN anyway).
                    m[a] = _mm256_max_pd(_mm256_andnot_pd(sign, l), _mm256_andnot_pd(sign, h));
                }
                let mut left = mask;
                while left != 0 {
                    let k = left.trailing_zeros() as usize;
                    left &= left - 1;
                    if k >= self.count {
                        break;
                    }
                    let [nx, ny, nz, nw, ax, ay, az, sx, sy, sz, sw] =
                        self.terms[k].map(|x| _mm256_set1_pd(x));
                    // centre = n.w + (n.x·c0 + n.y·c1 + n.z·c2)
                    let centre = add(nw, add(add(mul(nx, c[0]), mul(ny, c[1])), mul(nz, c[2])));
                    // reach = |n.x|·e0 + |n.y|·e1 + |n.z|·e2
                    let reach = add(add(mul(ax, e[0]), mul(ay, e[1])), mul(az, e[2]));
                    // slack = RELATIVE_SLACK · (abs.w + abs.x·m0 + abs.y·m1 + abs.z·m2)
                    let sum = add(add(add(sw, mul(sx, m[0])), mul(sy, m[1])), mul(sz, m[2]));
                    let slack = mul(_mm256_set1_pd(RELATIVE_SLACK), sum);
                    let neg_slack = _mm256_xor_pd(slack, sign);
                    let outside = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(
                        add(centre, reach),
                        neg_slack,
                    )) as u32;
                    kept &= !outside;
                    if kept == 0 {
                        break;
                    }
                    let inside =
                        _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(sub(centre, reach), slack))
                            as u32;
                    // Without branches: which lanes are inside follows no pattern.
                    for (lane, lane_mask) in masks.iter_mut().enumerate() {
                        *lane_mask &= !((inside >> lane & 1) << k);
                    }
                }
            }
            (kept, masks)
        }
    }

    impl Planes {
        pub(super) fn new(planes: &[Plane]) -> Planes {
            let mut soa = Planes {
                n: [[[0.0; 4]; 4]; 2],
                abs_n: [[[0.0; 4]; 3]; 2],
                slack: [[[0.0; 4]; 4]; 2],
            };
            for (k, p) in planes.iter().take(PLANES).enumerate() {
                let (v, lane) = (k / 4, k % 4);
                for a in 0..4 {
                    soa.n[v][a][lane] = p.n[a];
                    soa.slack[v][a][lane] = p.abs[a];
                }
                for a in 0..3 {
                    soa.abs_n[v][a][lane] = p.n[a].abs();
                }
            }
            soa
        }

        /// [`Plane::classify`] with the same operations in the same order, lane by lane
        /// (no fused multiply-add): the same sums, so the same answers.
        ///
        /// # Safety
        /// The CPU must support AVX2.
        #[inline(always)]
        pub(super) unsafe fn classify(&self, mask: u32, lo: [f32; 3], hi: [f32; 3]) -> Option<u32> {
            let [c, e, m] = Plane::box_terms(lo, hi);
            let mut left = mask;
            // SAFETY: AVX2 (the caller's contract); the loads read whole arrays.
            unsafe {
                let [c0, c1, c2] = c.map(|x| _mm256_set1_pd(x));
                let [e0, e1, e2] = e.map(|x| _mm256_set1_pd(x));
                let [m0, m1, m2] = m.map(|x| _mm256_set1_pd(x));
                let ld = |a: &[f64; 4]| _mm256_loadu_pd(a.as_ptr());
                let (mul, add, sub) = (_mm256_mul_pd, _mm256_add_pd, _mm256_sub_pd);
                for v in 0..2 {
                    let bits = (mask >> (4 * v)) & 0xF;
                    if bits == 0 {
                        continue;
                    }
                    let [nx, ny, nz, nw] = &self.n[v];
                    let [ax, ay, az] = &self.abs_n[v];
                    let [sx, sy, sz, sw] = &self.slack[v];
                    // centre = n.w + (n.x·c0 + n.y·c1 + n.z·c2)
                    let centre = add(
                        ld(nw),
                        add(add(mul(ld(nx), c0), mul(ld(ny), c1)), mul(ld(nz), c2)),
                    );
                    // reach = |n.x|·e0 + |n.y|·e1 + |n.z|·e2
                    let reach = add(add(mul(ld(ax), e0), mul(ld(ay), e1)), mul(ld(az), e2));
                    // slack = RELATIVE_SLACK · (abs.w + abs.x·m0 + abs.y·m1 + abs.z·m2)
                    let sum = add(
                        add(add(ld(sw), mul(ld(sx), m0)), mul(ld(sy), m1)),
                        mul(ld(sz), m2),
                    );
                    let slack = mul(_mm256_set1_pd(RELATIVE_SLACK), sum);
                    let neg_slack = _mm256_xor_pd(slack, _mm256_set1_pd(-0.0));
                    let outside = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(
                        add(centre, reach),
                        neg_slack,
                    )) as u32;
                    if outside & bits != 0 {
                        return None;
                    }
                    let inside =
                        _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(sub(centre, reach), slack))
                            as u32;
                    left &= !((inside & bits) << (4 * v));
                }
            }
            Some(left)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refit_follows_a_moved_item_and_the_tree_keeps_every_item() {
        let boxes: Vec<_> = (0..100)
            .map(|i| {
                let x = i as f32;
                Some(([x, 0.0, 0.0], [x + 0.5, 1.0, 1.0]))
            })
            .collect();
        let mut bvh = Bvh::build(&boxes, 2);
        let everything = Plane::clip(DVec4::new(0.0, 0.0, 0.0, 1.0));
        let mut seen = Vec::new();
        bvh.visit(&[everything], |i| seen.push(i));
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        // x ≥ 1000 holds nothing, until item 7 moves there.
        let far = Plane::clip(DVec4::new(1.0, 0.0, 0.0, -1000.0));
        let mut hits = Vec::new();
        bvh.visit(&[far], |i| hits.push(i));
        assert!(hits.is_empty());
        let mut moved = boxes.clone();
        moved[7] = Some(([2000.0, 0.0, 0.0], [2001.0, 1.0, 1.0]));
        assert!(bvh.refit(7, &moved));
        bvh.visit(&[far], |i| hits.push(i));
        assert!(hits.contains(&7), "{hits:?}");
    }

    /// `count` clip-space planes of random normals, offsets within ±`reach`, pulled back
    /// through `m`.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    fn random_planes(
        rng: &mut penumbra_testkit::Rng,
        count: usize,
        reach: f32,
        m: &Mat4,
    ) -> Vec<Plane> {
        (0..count)
            .map(|_| {
                let n = DVec4::new(
                    f64::from(rng.f32_in(-1.0, 1.0)),
                    f64::from(rng.f32_in(-1.0, 1.0)),
                    f64::from(rng.f32_in(-1.0, 1.0)),
                    f64::from(rng.f32_in(-reach, reach)),
                );
                Plane::clip(n).through(m)
            })
            .collect()
    }

    /// The four-at-a-time classification gives the scalar one's answers: random planes
    /// (clip planes pulled back through random matrices, some with NaN or infinite entries),
    /// random boxes (some with special values), random masks of up to eight planes.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[test]
    fn simd_classify_gives_the_scalar_answers() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = penumbra_testkit::Rng::xorshift64(0x636c_6173);
        let value = |rng: &mut penumbra_testkit::Rng, scale: f32| {
            if rng.below_mod(40) == 0 {
                rng.f32_special()
            } else {
                rng.f32_in(-scale, scale)
            }
        };
        let (mut outside, mut dropped) = (0, 0);
        for round in 0..20_000 {
            let count = 1 + rng.index_mod(simd::PLANES);
            let m = Mat4::from_cols_array(&std::array::from_fn(|_| value(&mut rng, 4.0)));
            let planes = random_planes(&mut rng, count, 2.0, &m);
            let a: [f32; 3] = std::array::from_fn(|_| value(&mut rng, 10.0));
            let b: [f32; 3] = std::array::from_fn(|_| value(&mut rng, 10.0));
            let lo = std::array::from_fn(|i| a[i].min(b[i]));
            let hi = std::array::from_fn(|i| a[i].max(b[i]));
            let mask = rng.next_u32() & ((1 << count) - 1);
            let scalar = Plane::classify(&planes, mask, lo, hi);
            // SAFETY: AVX2 checked above.
            let simd = unsafe { simd::Planes::new(&planes).classify(mask, lo, hi) };
            assert_eq!(simd, scalar, "round {round}: {lo:?}..{hi:?}, mask {mask:b}");
            match scalar {
                None => outside += 1,
                Some(left) if left != mask => dropped += 1,
                _ => {}
            }
        }
        // Both outcomes were exercised.
        assert!(
            outside > 1000 && dropped > 1000,
            "{outside} outside, {dropped} dropped"
        );
    }

    /// The walk over the 4-wide form finds every item the walk over the binary tree finds,
    /// and every item whose own box is not wholly outside a plane: random boxes (a few
    /// unbounded or emptied by a refit), random frusta of up to eight planes.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[test]
    fn the_wide_walk_finds_what_the_binary_walk_finds() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = penumbra_testkit::Rng::xorshift64(0x7175_6164);
        let (mut found, mut missed_by_planes) = (0usize, 0usize);
        for round in 0..300 {
            let n = 1 + rng.index_mod(300);
            let mut boxes: Vec<Option<([f32; 3], [f32; 3])>> = (0..n)
                .map(|_| {
                    if rng.below_mod(50) == 0 {
                        return Some(UNBOUNDED);
                    }
                    let c: [f32; 3] = std::array::from_fn(|_| rng.f32_in(-50.0, 50.0));
                    let e: [f32; 3] = std::array::from_fn(|_| rng.f32_in(0.0, 3.0));
                    Some((
                        std::array::from_fn(|a| c[a] - e[a]),
                        std::array::from_fn(|a| c[a] + e[a]),
                    ))
                })
                .collect();
            let leaf = 1 + rng.index_mod(4);
            let mut bvh = Bvh::build(&boxes, leaf).with_wide();
            if n > 3 && rng.below_mod(4) == 0 {
                // An item that has nothing drawable any more: its leaf's box may be empty.
                let i = rng.index_mod(n);
                boxes[i] = None;
                bvh.refit(i, &boxes);
            }
            let count = 1 + rng.index_mod(simd::PLANES);
            let m = Mat4::from_cols_array(&std::array::from_fn(|_| rng.f32_in(-1.0, 1.0)));
            let planes = random_planes(&mut rng, count, 30.0, &m);
            let mut wide = Vec::new();
            bvh.visit(&planes, |i| wide.push(i));
            let mut binary = Vec::new();
            bvh.visit_with(
                planes.len(),
                |mask, lo, hi| Plane::classify(&planes, mask, lo, hi),
                |i| binary.push(i),
            );
            wide.sort_unstable();
            let len = wide.len();
            wide.dedup();
            assert_eq!(wide.len(), len, "round {round}: an item visited twice");
            for i in &binary {
                assert!(
                    wide.binary_search(i).is_ok(),
                    "round {round}: item {i} missed"
                );
            }
            for (i, b) in boxes.iter().enumerate() {
                if let Some((lo, hi)) = b
                    && Plane::classify(&planes, u32::MAX, *lo, *hi).is_some()
                {
                    assert!(
                        wide.binary_search(&(i as u32)).is_ok(),
                        "round {round}: {i}"
                    );
                    found += 1;
                } else {
                    missed_by_planes += 1;
                }
            }
        }
        assert!(
            found > 1000 && missed_by_planes > 1000,
            "{found} / {missed_by_planes}"
        );
    }

    #[test]
    fn nan_planes_and_unbounded_boxes_never_exclude() {
        let p = Plane::clip(DVec4::new(f64::NAN, 0.0, 0.0, -1.0));
        assert!(!p.excludes([0.0; 3], [1.0; 3]));
        let q = Plane::clip(DVec4::new(1.0, 0.0, 0.0, -1.0));
        assert!(!q.excludes(UNBOUNDED.0, UNBOUNDED.1));
        assert!(q.excludes([0.0; 3], [0.5; 3]));
    }
}
