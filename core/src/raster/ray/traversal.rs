//! Box tests and the walk of a 4-wide hierarchy: slab tests made conservative for the triangle
//! test, the best hit so far, and the nearest-first traversal shared by meshes and instances.

use glam::{Vec3, Vec4};

use super::TriangleRay;
use crate::cpu::prefetch_range;
use crate::raster::index::{Node, Quad};

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
pub(super) const MISS: f32 = f32::INFINITY;
/// A ray set up for slab tests against boxes, widened by `pad` on every side.
///
/// Widening a box's low plane by `pad` is moving the origin by `pad` towards it, so the low
/// planes are measured from `origin + pad` and the high ones from `origin − pad`, both
/// rounded outwards. The reciprocal direction is clamped to ±`f32::MAX`, so that no slab
/// distance is NaN (`0 · ∞`: a ray that runs in a plane is at distance 0 from it), and the
/// slab's entry and exit are the smaller and the larger of its two plane distances.
#[derive(Clone, Copy, Debug)]
pub(super) struct BoxRay {
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
    pub(super) fn new(origin: Vec3, inv: Vec3, pad: f32) -> BoxRay {
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
    pub(super) fn for_mesh(ray: &TriangleRay, bounds: ([f32; 3], [f32; 3])) -> BoxRay {
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
    pub(super) fn enter(&self, n: &Node, t_max: f32) -> f32 {
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
    pub(super) fn enter_quad(&self, q: &Quad, t_max: f32) -> ([f32; 4], u32) {
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
    pub(super) record: u32,
    pub(super) slot: u32,
}

impl Best {
    /// Nothing yet; hits up to `t_max` (included) are taken.
    pub(super) fn within(t_max: f32) -> Best {
        Best {
            t: t_max,
            instance: u32::MAX,
            triangle: u32::MAX,
            record: 0,
            slot: 0,
        }
    }

    pub(super) fn found(&self) -> bool {
        self.instance != u32::MAX
    }

    #[inline]
    pub(super) fn offer(
        &mut self,
        t: f32,
        (instance, record): (u32, u32),
        triangle: u32,
        slot: u32,
    ) {
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
pub(super) type Stack = [(u32, u32, f32); STACK];

/// An empty stack.
pub(super) const EMPTY_STACK: Stack = [(0, 0, 0.0); STACK];

/// Visits the leaves of the hierarchy (`root` and its 4-wide form `quads`) that the ray
/// enters before `best.t`, nearest box first: `leaf(first, count, best)` may lower `best.t`,
/// and boxes entered beyond it are then skipped (boxes entered exactly at it are still
/// visited, for ties).
#[inline(always)]
pub(super) fn nearest(
    root: &Node,
    quads: &[Quad],
    ray: &BoxRay,
    best: &mut Best,
    stack: &mut Stack,
    warm: Warm,
    leaf: &mut impl FnMut(u32, u32, &mut Best),
) {
    if ray.enter(root, best.t) == MISS {
        return;
    }
    if root.count > 0 {
        leaf(root.first, root.count, best);
        return;
    }
    descend(quads, 0, ray, best, stack, warm, leaf);
}

/// [`nearest`] from quad `quad`, whose boxes are still to be tested.
#[inline(always)]
fn descend(
    quads: &[Quad],
    mut quad: u32,
    ray: &BoxRay,
    best: &mut Best,
    stack: &mut Stack,
    warm: Warm,
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
                        if entry.1 == 0 {
                            let q = quads.as_ptr().wrapping_add(entry.0 as usize);
                            // Boxes put off on the stack are fetched while the nearest one is
                            // walked: the bottom of a big mesh's tree is not in cache.
                            prefetch_range(q.cast(), size_of::<Quad>());
                        } else {
                            warm.leaf(entry.0);
                        }
                        if top < STACK {
                            stack[top] = entry;
                            top += 1;
                        } else {
                            // Deeper than any tree the builder makes; go on with a new stack.
                            descend_cold(quads, entry, ray, best, warm, leaf);
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

/// Where a hierarchy's leaves keep their items, for prefetching: item `k` of a leaf is
/// `size` bytes at `base + k · size`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Warm {
    base: *const u8,
    size: usize,
}

impl Warm {
    pub(super) fn of<T>(items: &[T]) -> Warm {
        Warm {
            base: items.as_ptr().cast(),
            size: size_of::<T>(),
        }
    }

    /// Asks for the first item of the leaf that starts at `first`.
    #[inline(always)]
    fn leaf(self, first: u32) {
        prefetch_range(
            self.base.wrapping_add(first as usize * self.size),
            self.size,
        );
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
    warm: Warm,
    leaf: &mut impl FnMut(u32, u32, &mut Best),
) {
    if t > best.t {
        return;
    }
    if count > 0 {
        leaf(link, count, best);
    } else {
        let mut fresh = EMPTY_STACK;
        descend(quads, link, ray, best, &mut fresh, warm, leaf);
    }
}
