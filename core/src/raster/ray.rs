//! Exact ray casts against triangle meshes and their instances: the nearest hit along a ray, and
//! whether a point lies inside a closed mesh.
//!
//! * **Triangle test**: the watertight test of Woop, Benthin and Wald, "Watertight Ray/Triangle
//!   Intersection", Journal of Computer Graphics Techniques 2(1), 2013
//!   (<https://jcgt.org/published/0002/01/05/>). The ray is moved to the origin and sheared so
//!   that it runs along +z; a triangle is then hit when the origin lies inside its 2D
//!   projection, decided by the signs of three edge functions. Each vertex's sheared
//!   coordinates depend on the vertex alone and an edge function of a shared edge is computed
//!   from the same two vertices in both triangles, so the two values are exact negations of
//!   each other: a ray through a shared edge or vertex of a closed mesh hits at least one of the
//!   triangles round it (points on an edge count as inside, and an edge function of exactly 0
//!   is recomputed in f64, where the products are exact). No face is culled.
//! * **Traversal**: the mesh's own hierarchy (object space, [`super::index`], built with the
//!   surface-area heuristic), walked in its 4-wide form ([`Quad`]: four child boxes in two
//!   cache lines, tested together with 4-wide arithmetic, which halves the chain of dependent
//!   loads of a binary walk), nearest child first, a box skipped once its entry lies beyond the
//!   best hit so far; the stack lives on the call stack. The box test is the slab test with the
//!   ray's reciprocal direction (clamped to ±`f32::MAX`, so no distance is NaN), made
//!   conservative twice over: the far distance is scaled by `1 + 2γ₃` (Ize, "Robust BVH Ray
//!   Traversal", JCGT 2(2), 2013), and each box is widened by the largest error the shear can
//!   make in a vertex's coordinates relative to the ray (a few ulps of the largest distance
//!   from the ray's origin to the mesh's bounds; Woop et al. widen boxes during traversal for
//!   the same reason), so that no box is skipped that holds a triangle the triangle test would
//!   hit.
//! * **Instances**: the world-space hierarchy over the instances ([`InstanceIndex`]), walked
//!   the same way. A ray is taken into each instance's object space with the inverse of its
//!   transform (computed when the index is built or updated, and kept with the instance's
//!   mesh in one cache line per instance, in the hierarchy's leaf order); the direction is not
//!   renormalized there, so a hit's `t` in object space is its world `t`. The shear constants
//!   and the reciprocal direction are computed once per ray and instance.
//!
//! Ties are broken the same way everywhere: among hits at the same distance, the smallest
//! instance index wins, then the smallest triangle index. The answer is therefore the
//! lexicographic minimum of `(t, instance, triangle)` over every triangle the triangle test hits,
//! whatever order the hierarchy visits them in (a brute-force loop over all triangles with
//! [`TriangleRay::intersect`] gives the same bits).
//!
//! Degenerate input never panics: a ray with a NaN or infinite origin or direction, or a zero
//! direction, hits nothing; an instance whose transform is not an invertible affine map (a
//! singular or non-finite matrix, or a projective one) is never hit; triangles with a non-finite
//! vertex are not in the hierarchy and are never hit.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Vec3, Vec4};

use super::index::{MeshIndex, Node, Quad, Wide};
use super::{Instance, InstanceIndex, Mesh, Placed};

/// Unit roundoff of f32 (2⁻²⁴).
const U: f32 = f32::EPSILON * 0.5;

/// `1 + 2γ₃` with `γₙ = n·u / (1 − n·u)`: the factor by which the far distance of a slab test
/// is enlarged so that rounding never rejects a box the exact test would keep (Ize 2013).
const FAR_SCALE: f32 = 1.0 + 2.0 * (3.0 * U / (1.0 - 3.0 * U));

/// The widening of a mesh's boxes for one ray, in units of `u` times the largest distance from
/// the ray's origin to the mesh's bounds along an axis. The shear moves a vertex relative to the
/// exact ray by at most about `6u` of that distance; 32 leaves room for the slab test's own
/// rounding.
const PAD_UNITS: f32 = 32.0;

/// Entries of a traversal stack: a 4-wide walk pushes at most three boxes per level, and the
/// trees the builder makes over realistic scenes are under ten levels deep; a walk that needs
/// more goes on with a fresh stack (see [`descend_cold`]) instead of overflowing.
const STACK: usize = 32;

/// The distance a box test returns for a miss.
const MISS: f32 = f32::INFINITY;

/// What a ray cast found.
///
/// `Id` names what was hit: an [`OccluderId`](crate::shadow::OccluderId) from
/// [`Lighting::raycast`](crate::shadow::Lighting::raycast), the instance's position in its list
/// from [`InstanceIndex::raycast`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit<Id = u32> {
    /// The hit point in world space: `origin + distance · direction / |direction|`.
    pub position: Vec3,
    /// The unit geometric normal of the hit triangle in world space (through the inverse
    /// transpose of the instance's transform), turned to face the ray's origin:
    /// `normal · direction ≤ 0`. Triangles are hit from both sides.
    pub normal: Vec3,
    /// World units from the origin to the hit, along the normalized direction.
    pub distance: f32,
    /// What was hit.
    pub occluder: Id,
    /// The triangle's index in its mesh (indices `3·triangle .. 3·triangle + 3`).
    pub triangle: u32,
}

impl<Id> RayHit<Id> {
    /// The same hit named by `f(occluder)`.
    #[must_use]
    pub fn map_id<J>(self, f: impl FnOnce(Id) -> J) -> RayHit<J> {
        RayHit {
            position: self.position,
            normal: self.normal,
            distance: self.distance,
            occluder: f(self.occluder),
            triangle: self.triangle,
        }
    }
}

/// `direction` scaled to unit length, as the casts use it (scaled by its largest component
/// first, so that huge and tiny vectors normalize too); `None` for a zero or non-finite vector.
#[must_use]
pub fn unit_direction(direction: Vec3) -> Option<Vec3> {
    if !direction.is_finite() {
        return None;
    }
    let largest = direction.abs().max_element();
    if largest == 0.0 {
        return None;
    }
    // A division (a subnormal `largest` has no finite reciprocal), then a multiplication.
    let d = direction / largest;
    let d = d * (1.0 / d.length());
    (d.is_finite() && d != Vec3::ZERO).then_some(d)
}

/// The world-to-object matrix that ray casts use for an instance placed by `transform`
/// (inverted in f64, then rounded to f32); `None` when `transform` is not finite, not affine
/// (its last row is not `(0, 0, 0, 1)`) or not invertible: rays never hit such an instance.
#[must_use]
pub fn ray_inverse(transform: &Mat4) -> Option<Mat4> {
    if !transform.is_finite() || transform.row(3) != Vec4::W {
        return None;
    }
    let m = transform.as_dmat4();
    let det = m.determinant();
    if !det.is_finite() || det == 0.0 {
        return None;
    }
    let inv = m.inverse().as_mat4();
    (inv.is_finite() && inv.determinant() != 0.0).then_some(inv)
}

/// An affine map by its columns, applied in one fixed order of operations, so that the
/// cached instance records and [`TriangleRay::through`] move rays the same way bit for bit.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Affine {
    columns: [Vec3; 4],
}

impl Affine {
    fn of(m: &Mat4) -> Affine {
        Affine {
            columns: [m.x_axis, m.y_axis, m.z_axis, m.w_axis].map(|c| c.truncate()),
        }
    }

    #[inline]
    fn vector(&self, v: Vec3) -> Vec3 {
        let [x, y, z, _] = self.columns;
        x * v.x + y * v.y + z * v.z
    }

    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        self.vector(p) + self.columns[3]
    }

    /// The ray `(origin, direction)` through the map.
    #[inline]
    fn ray(&self, origin: Vec3, direction: Vec3) -> Option<TriangleRay> {
        TriangleRay::new(self.point(origin), self.vector(direction))
    }

    /// The transpose of the linear part times `n` (a normal through the inverse transpose,
    /// when this is an inverse).
    fn transpose_vector(&self, n: Vec3) -> Vec3 {
        let [x, y, z, _] = self.columns;
        Vec3::new(x.dot(n), y.dot(n), z.dot(n))
    }
}

/// A ray set up for the watertight triangle test (Woop, Benthin and Wald 2013): its origin and
/// direction (not necessarily unit) and the shear that takes it onto the +z axis.
#[derive(Clone, Copy, Debug)]
pub struct TriangleRay {
    origin: Vec3,
    direction: Vec3,
    /// Rows of the shear: for `a = p − origin`, the sheared coordinates of `p` are
    /// `(sx·a, sy·a, sz·a)`. With `kz` the axis of the direction's largest magnitude and `kx`,
    /// `ky` the next two (swapped when `direction[kz] < 0`, which keeps the winding),
    /// `sx = e_kx − (d_kx · r)·e_kz`, `sy = e_ky − (d_ky · r)·e_kz`, `sz = r·e_kz` with
    /// `r = 1 / d_kz` (any fixed shear keeps the test watertight):
    /// the paper's `A_kx − S_x·A_kz`, `A_ky − S_y·A_kz` and `S_z·A_kz`, written as dot
    /// products (the other terms are exact zeros), so that no coordinate is picked at run time.
    sx: Vec3,
    sy: Vec3,
    sz: Vec3,
    /// `1 / direction`, component by component, for the box tests.
    inv: Vec3,
}

impl TriangleRay {
    /// The ray from `origin` along `direction` (any length); `None` when either is not finite
    /// or the direction is zero.
    #[must_use]
    pub fn new(origin: Vec3, direction: Vec3) -> Option<TriangleRay> {
        if !origin.is_finite() || !direction.is_finite() || direction == Vec3::ZERO {
            return None;
        }
        let a = direction.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let (mut kx, mut ky) = ((kz + 1) % 3, (kz + 2) % 3);
        if direction[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        let e = |k: usize| Vec3::AXES[k];
        let inv = direction.recip();
        let sz = inv[kz];
        let sx = e(kx) - (direction[kx] * sz) * e(kz);
        let sy = e(ky) - (direction[ky] * sz) * e(kz);
        Some(TriangleRay {
            origin,
            direction,
            sx,
            sy,
            sz: sz * e(kz),
            inv,
        })
    }

    /// The world ray (`origin`, unit `direction`) in the object space of an instance whose
    /// [`ray_inverse`] is `inverse`: the same `t` names the same point in both spaces.
    #[must_use]
    pub fn through(inverse: &Mat4, origin: Vec3, direction: Vec3) -> Option<TriangleRay> {
        Affine::of(inverse).ray(origin, direction)
    }

    /// The origin.
    #[must_use]
    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// The direction.
    #[must_use]
    pub fn direction(&self) -> Vec3 {
        self.direction
    }

    /// Where the ray meets the triangle `(a, b, c)`, in units of the direction's length
    /// (`origin + t · direction`), or `None`. Either side is hit; a ray in the triangle's plane
    /// is not. Only `t ≥ 0` is returned (never `-0.0`); a non-finite `t` is a miss.
    #[inline(always)]
    #[must_use]
    pub fn intersect(&self, a: Vec3, b: Vec3, c: Vec3) -> Option<f32> {
        let (a, b, c) = (a - self.origin, b - self.origin, c - self.origin);
        let (ax, ay) = (self.sx.dot(a), self.sy.dot(a));
        let (bx, by) = (self.sx.dot(b), self.sy.dot(b));
        let (cx, cy) = (self.sx.dot(c), self.sy.dot(c));
        // The edge functions; each is antisymmetric in its two vertices, bit for bit.
        let mut u = cx * by - cy * bx;
        let mut v = ax * cy - ay * cx;
        let mut w = bx * ay - by * ax;
        if u == 0.0 || v == 0.0 || w == 0.0 {
            (u, v, w) = edges_f64([ax, ay, bx, by, cx, cy]);
        }
        if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
            return None;
        }
        let det = u + v + w;
        if det == 0.0 {
            return None;
        }
        let (az, bz, cz) = (self.sz.dot(a), self.sz.dot(b), self.sz.dot(c));
        let t = (u * az + v * bz + w * cz) / det;
        (t >= 0.0 && t.is_finite()).then_some(t + 0.0)
    }
}

/// The edge functions of [`TriangleRay::intersect`] for a ray on an edge in f32, decided in
/// f64, where the products of f32 values are exact and the sign of the difference is right.
#[cold]
#[inline(never)]
fn edges_f64([ax, ay, bx, by, cx, cy]: [f32; 6]) -> (f32, f32, f32) {
    let f = f64::from;
    (
        (f(cx) * f(by) - f(cy) * f(bx)) as f32,
        (f(ax) * f(cy) - f(ay) * f(cx)) as f32,
        (f(bx) * f(ay) - f(by) * f(ax)) as f32,
    )
}

/// A ray set up for slab tests against boxes, widened by `pad` on every side.
///
/// Widening a box's low plane by `pad` is moving the origin by `pad` towards it, so the low
/// planes are measured from `origin + pad` and the high ones from `origin − pad`, both
/// rounded outwards. The reciprocal direction is clamped to ±`f32::MAX`, so that no slab
/// distance is NaN (`0 · ∞`: a ray that runs in a plane is at distance 0 from it), and the
/// slab's entry and exit are the smaller and the larger of its two plane distances.
#[derive(Clone, Copy, Debug)]
struct BoxRay {
    up: [f32; 3],
    down: [f32; 3],
    inv: [f32; 3],
    /// The same, 4 wide, for [`Quad`] tests.
    up4: [Vec4; 3],
    down4: [Vec4; 3],
    inv4: [Vec4; 3],
}

impl BoxRay {
    /// `inv` is the reciprocal of the direction, component by component.
    fn new(origin: Vec3, inv: Vec3, pad: f32) -> BoxRay {
        let inv = inv
            .clamp(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX))
            .to_array();
        let o = origin.to_array();
        let (up, down) = if pad > 0.0 {
            // `pad` plus more than the rounding of `x ± pad` (at most `|x| · 2⁻²⁴` past
            // `pad`), so the origin moves by at least `pad`; finite, so that a lane at +∞
            // gives +∞ − finite, never NaN.
            let limit = |x: f32| x.clamp(-f32::MAX, f32::MAX);
            let pad = |x: f32| pad + x.abs() * (4.0 * U);
            (o.map(|x| limit(x + pad(x))), o.map(|x| limit(x - pad(x))))
        } else {
            (o, o)
        };
        BoxRay {
            up,
            down,
            inv,
            up4: up.map(Vec4::splat),
            down4: down.map(Vec4::splat),
            inv4: inv.map(Vec4::splat),
        }
    }

    /// The ray in a mesh's object space, its boxes widened by the shear's error bound.
    fn for_mesh(ray: &TriangleRay, bounds: ([f32; 3], [f32; 3])) -> BoxRay {
        let o = ray.origin;
        let reach = (Vec3::from(bounds.0) - o)
            .abs()
            .max((Vec3::from(bounds.1) - o).abs())
            .max_element();
        BoxRay::new(o, ray.inv, (PAD_UNITS * U * reach).min(f32::MAX))
    }

    /// The distance at which the ray enters the box from `lo` to `hi` within `[0, t_max]`, or
    /// [`MISS`].
    #[inline(always)]
    fn enter_box(&self, lo: &[f32; 3], hi: &[f32; 3], t_max: f32) -> f32 {
        let mut t_near = 0.0f32;
        let mut t_far = t_max;
        for a in 0..3 {
            let t_lo = (lo[a] - self.up[a]) * self.inv[a];
            let t_hi = (hi[a] - self.down[a]) * self.inv[a];
            t_near = t_near.max(t_lo.min(t_hi));
            t_far = t_far.min(t_lo.max(t_hi));
        }
        if t_near <= t_far * FAR_SCALE && t_near < MISS {
            t_near
        } else {
            MISS
        }
    }

    #[inline(always)]
    fn enter(&self, n: &Node, t_max: f32) -> f32 {
        self.enter_box(&n.lo, &n.hi, t_max)
    }

    /// Where the ray enters and leaves the four slabs of a quad along axis `a`.
    #[inline(always)]
    fn slab(&self, q: &Quad, a: usize) -> (Vec4, Vec4) {
        let t_lo = (Vec4::from_array(q.lo[a]) - self.up4[a]) * self.inv4[a];
        let t_hi = (Vec4::from_array(q.hi[a]) - self.down4[a]) * self.inv4[a];
        (t_lo.min(t_hi), t_lo.max(t_hi))
    }

    /// [`BoxRay::enter_box`] for the four boxes of a quad at once: the entry distances, and a
    /// bit per lane entered (never one without a child).
    #[inline(always)]
    fn enter_quad(&self, q: &Quad, t_max: f32) -> ([f32; 4], u32) {
        let ((nx, fx), (ny, fy), (nz, fz)) = (self.slab(q, 0), self.slab(q, 1), self.slab(q, 2));
        let near = nx.max(ny).max(nz.max(Vec4::ZERO));
        let far = fx.min(fy).min(fz.min(Vec4::splat(t_max))) * FAR_SCALE;
        let hit = near.cmple(far) & near.cmplt(Vec4::splat(MISS));
        (near.to_array(), hit.bitmask())
    }
}

/// The best hit so far: the lexicographic minimum of `(t, instance, triangle)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Best {
    pub(crate) t: f32,
    pub(crate) instance: u32,
    pub(crate) triangle: u32,
    /// The instance's record, and where the triangle is in its mesh's leaf order.
    record: u32,
    slot: u32,
}

impl Best {
    /// Nothing yet; hits up to `t_max` (included) are taken.
    fn within(t_max: f32) -> Best {
        Best {
            t: t_max,
            instance: u32::MAX,
            triangle: u32::MAX,
            record: 0,
            slot: 0,
        }
    }

    fn found(&self) -> bool {
        self.instance != u32::MAX
    }

    #[inline]
    fn offer(&mut self, t: f32, (instance, record): (u32, u32), triangle: u32, slot: u32) {
        if t < self.t || (t == self.t && (instance, triangle) < (self.instance, self.triangle)) {
            *self = Best {
                t,
                instance,
                triangle,
                record,
                slot,
            };
        }
    }
}

/// A traversal stack: a pair (count 0) or a leaf's items (first, count), and the distance at
/// which the ray enters it.
type Stack = [(u32, u32, f32); STACK];

/// An empty stack.
const EMPTY_STACK: Stack = [(0, 0, 0.0); STACK];

/// Visits the leaves of the hierarchy (`root` and its 4-wide form `quads`) that the ray
/// enters before `best.t`, nearest box first: `leaf(first, count, best)` may lower `best.t`,
/// and boxes entered beyond it are then skipped (boxes entered exactly at it are still
/// visited, for ties).
#[inline(always)]
fn nearest(
    root: &Node,
    quads: &[Quad],
    ray: &BoxRay,
    best: &mut Best,
    stack: &mut Stack,
    leaf: &mut impl FnMut(u32, u32, &mut Best),
) {
    if ray.enter(root, best.t) == MISS {
        return;
    }
    if root.count > 0 {
        leaf(root.first, root.count, best);
        return;
    }
    descend(quads, 0, ray, best, stack, leaf);
}

/// [`nearest`] from quad `quad`, whose boxes are still to be tested.
#[inline(always)]
fn descend(
    quads: &[Quad],
    mut quad: u32,
    ray: &BoxRay,
    best: &mut Best,
    stack: &mut Stack,
    leaf: &mut impl FnMut(u32, u32, &mut Best),
) {
    let mut top = 0usize;
    loop {
        if let Some(q) = quads.get(quad as usize) {
            let (t, mut mask) = ray.enter_quad(q, best.t);
            if mask != 0 {
                // The nearest lane entered is visited now; the others are pushed, farthest
                // first.
                let mut lane = mask.trailing_zeros() as usize;
                if mask & (mask - 1) != 0 {
                    let mut hits = [(0.0f32, 0usize); 4];
                    let mut n = 0;
                    while mask != 0 {
                        let l = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        let mut k = n;
                        while k > 0 && hits[k - 1].0 < t[l] {
                            hits[k] = hits[k - 1];
                            k -= 1;
                        }
                        hits[k] = (t[l], l);
                        n += 1;
                    }
                    for &(tl, l) in &hits[..n - 1] {
                        let entry = (q.link[l], q.count[l], tl);
                        if top < STACK {
                            stack[top] = entry;
                            top += 1;
                        } else {
                            // Deeper than any tree the builder makes; go on with a new stack.
                            descend_cold(quads, entry, ray, best, leaf);
                        }
                    }
                    lane = hits[n - 1].1;
                }
                let (link, count) = (q.link[lane], q.count[lane]);
                if count == 0 {
                    quad = link;
                    continue;
                }
                leaf(link, count, best);
            }
        }
        // The next pushed box that still starts before the best hit.
        loop {
            if top == 0 {
                return;
            }
            top -= 1;
            let (link, count, t) = stack[top];
            if t > best.t {
                continue;
            }
            if count == 0 {
                quad = link;
                break;
            }
            leaf(link, count, best);
        }
    }
}

/// One stack entry of [`descend`] on a fresh stack, for the (never expected) overflow of one.
#[inline(never)]
#[cold]
fn descend_cold(
    quads: &[Quad],
    (link, count, t): (u32, u32, f32),
    ray: &BoxRay,
    best: &mut Best,
    leaf: &mut impl FnMut(u32, u32, &mut Best),
) {
    if t > best.t {
        return;
    }
    if count > 0 {
        leaf(link, count, best);
    } else {
        let mut fresh = EMPTY_STACK;
        descend(quads, link, ray, best, &mut fresh, leaf);
    }
}

/// What ray casts read of a mesh, built on its first cast ([`MeshIndex::ray_data`]) and
/// shared by every instance of the mesh.
#[derive(Debug, Default)]
pub(super) struct RayData {
    /// The root of the hierarchy (`None` for a mesh with nothing to hit).
    root: Option<Node>,
    /// The hierarchy's 4-wide form.
    quads: Vec<Quad>,
    /// The vertices of the indexed triangles leaf by leaf: entry `k` is triangle `order[k]`.
    triangles: Vec<[Vec3; 3]>,
    order: Vec<u32>,
}

impl MeshIndex {
    /// The ray-cast data of `mesh`, the mesh this index was built from (made on first use).
    pub(super) fn ray_data(&self, mesh: &Mesh) -> &Arc<RayData> {
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
    fn cast(&self, ray: &TriangleRay, hit: (u32, u32), best: &mut Best, stack: &mut Stack) {
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
    fn crossings(&self, ray: &TriangleRay) -> (u32, bool) {
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

/// What a cast reads of one instance, in one cache line: its world-to-object map and its
/// mesh.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(super) struct Record {
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
pub(super) struct InstanceRays {
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
    pub(super) fn update(&mut self, slot: usize, inverse: Option<Mat4>, mesh: &Mesh) {
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
        let [a, b, c] = rays.meshes[record.mesh as usize].triangles[best.slot as usize];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_edge_functions_are_exact_negations() {
        // Two triangles sharing the edge (p, q), the ray aimed at a point of it.
        let (p, q) = (Vec3::new(0.1, 0.0, 1.0), Vec3::new(0.3, 1.0, 1.7));
        let (r, s) = (Vec3::new(-1.0, 0.5, 1.2), Vec3::new(1.0, 0.4, 1.3));
        let mut hits = 0;
        for k in 0..1000 {
            let f = k as f32 / 999.0;
            let target = p + (q - p) * f;
            let ray = TriangleRay::new(
                Vec3::new(0.01, -0.02, -3.0),
                target - Vec3::new(0.01, -0.02, -3.0),
            )
            .expect("valid ray");
            let one = ray.intersect(p, q, r).is_some();
            let two = ray.intersect(q, p, s).is_some();
            assert!(one || two, "the ray at f = {f} slipped through the edge");
            hits += usize::from(one) + usize::from(two);
        }
        assert!(hits >= 1000);
    }

    #[test]
    fn box_tests_keep_a_ray_along_a_face_plane_and_agree_on_quads() {
        let n = Node {
            lo: [0.0, 0.0, 0.0],
            hi: [1.0, 1.0, 1.0],
            first: 0,
            count: 1,
        };
        let far = Node {
            lo: [0.0, 0.0, 5.0],
            hi: [1.0, 1.0, 6.0],
            first: 0,
            count: 1,
        };
        let mut quad = Quad::default();
        for (lane, b) in [n, far].iter().enumerate() {
            for a in 0..3 {
                quad.lo[a][lane] = b.lo[a];
                quad.hi[a][lane] = b.hi[a];
            }
        }
        // Along the planes x = 0 and y = 1 (a zero direction component of either sign): the
        // widened boxes keep the ray; the empty lanes are never entered.
        for d in [
            Vec3::Z,
            Vec3::new(-0.0, 0.0, 1.0),
            Vec3::new(0.0, -0.0, 1.0),
        ] {
            let r = BoxRay::new(Vec3::new(0.0, 1.0, -1.0), d.recip(), 1e-6);
            let t = r.enter(&n, f32::INFINITY);
            assert!(t > 0.99 && t <= 1.0, "{t}");
            let (ts, mask) = r.enter_quad(&quad, f32::INFINITY);
            assert_eq!(
                (mask, ts[0], ts[1]),
                (0b11, t, r.enter(&far, f32::INFINITY))
            );
            assert!(ts[1] > 5.9 && ts[1] <= 6.0, "{ts:?}");
            // A cut-off before the far box drops it.
            assert_eq!(r.enter_quad(&quad, 3.0).1, 0b01);
        }
        for o in [Vec3::new(1.5, 0.5, -1.0), Vec3::new(0.5, -0.001, -1.0)] {
            for d in [Vec3::Z, Vec3::NEG_Z, Vec3::new(1e-30, -1e-30, 1.0)] {
                let r = BoxRay::new(o, d.recip(), 1e-6);
                assert_eq!(r.enter(&n, f32::INFINITY), MISS);
                assert_eq!(r.enter_quad(&quad, f32::INFINITY).1, 0);
            }
        }
        // Going away: behind the origin is not a hit; a huge pad keeps every real box and no
        // empty lane.
        let r = BoxRay::new(Vec3::new(0.5, 0.5, 2.0), Vec3::Z.recip(), 0.0);
        assert_eq!(r.enter_quad(&quad, f32::INFINITY).1, 0b10);
        let r = BoxRay::new(Vec3::new(0.5, 0.5, 2.0), Vec3::Z.recip(), f32::MAX);
        let (ts, mask) = r.enter_quad(&quad, f32::INFINITY);
        assert_eq!((mask, ts[0]), (0b11, 0.0));
    }
}
