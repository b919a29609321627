//! The watertight ray/triangle test (Woop, Benthin and Wald 2013), and the affine maps that take
//! rays into an instance's object space.

use glam::{Mat4, Vec3, Vec4};

/// An affine map by its columns, applied in one fixed order of operations, so that the
/// cached instance records and [`TriangleRay::through`] move rays the same way bit for bit.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::raster) struct Affine {
    columns: [Vec3; 4],
}

impl Affine {
    pub(super) fn of(m: &Mat4) -> Affine {
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
    pub(super) fn ray(&self, origin: Vec3, direction: Vec3) -> Option<TriangleRay> {
        TriangleRay::new(self.point(origin), self.vector(direction))
    }

    /// The transpose of the linear part times `n` (a normal through the inverse transpose,
    /// when this is an inverse).
    pub(super) fn transpose_vector(&self, n: Vec3) -> Vec3 {
        let [x, y, z, _] = self.columns;
        Vec3::new(x.dot(n), y.dot(n), z.dot(n))
    }
}

/// A ray set up for the watertight triangle test (Woop, Benthin and Wald 2013): its origin and
/// direction (not necessarily unit) and the shear that takes it onto the +z axis.
#[derive(Clone, Copy, Debug)]
pub struct TriangleRay {
    pub(super) origin: Vec3,
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
    pub(super) inv: Vec3,
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
    ///
    /// [`ray_inverse`]: super::ray_inverse
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

/// Up to four triangles of a leaf, structure of arrays (`v[vertex][axis]`, a lane per
/// triangle), for [`TriangleRay::intersect4`]: a leaf's triangles lie side by side in leaf
/// order, 144 bytes where a triangle at a time would read the same bytes with four times the
/// arithmetic. Lanes past the leaf's count are zeros and never reported.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Leaf4 {
    pub(super) v: [[Vec4; 3]; 3],
}

impl Leaf4 {
    /// Triangle `lane` of the leaf.
    pub(super) fn triangle(&self, lane: usize) -> [Vec3; 3] {
        self.v.map(|[x, y, z]| Vec3::new(x[lane], y[lane], z[lane]))
    }

    pub(super) fn set(&mut self, lane: usize, t: [Vec3; 3]) {
        for (v, p) in self.v.iter_mut().zip(t) {
            for (axis, c) in v.iter_mut().zip(p.to_array()) {
                axis[lane] = c;
            }
        }
    }
}

impl TriangleRay {
    /// [`TriangleRay::intersect`] for the first `lanes` triangles of `leaf` at once: the
    /// distances and a bit per lane hit. Every lane goes through the same IEEE operations in
    /// the same order as the scalar test (glam's `Vec3::dot` is `(x·x′ + y·y′) + z·z′`; no
    /// fused multiply-adds), so each lane's bits are the scalar test's; a lane with an edge
    /// function of exactly 0 is handed to the scalar test, which decides it in f64.
    #[inline(always)]
    pub(super) fn intersect4(&self, leaf: &Leaf4, lanes: u32) -> ([f32; 4], u32) {
        let valid = (1u32 << lanes.min(4)) - 1;
        let o = self.origin;
        let rel = |p: &[Vec4; 3]| {
            [
                p[0] - Vec4::splat(o.x),
                p[1] - Vec4::splat(o.y),
                p[2] - Vec4::splat(o.z),
            ]
        };
        let dot = |s: Vec3, p: &[Vec4; 3]| {
            Vec4::splat(s.x) * p[0] + Vec4::splat(s.y) * p[1] + Vec4::splat(s.z) * p[2]
        };
        let [a, b, c] = [rel(&leaf.v[0]), rel(&leaf.v[1]), rel(&leaf.v[2])];
        let (ax, ay) = (dot(self.sx, &a), dot(self.sy, &a));
        let (bx, by) = (dot(self.sx, &b), dot(self.sy, &b));
        let (cx, cy) = (dot(self.sx, &c), dot(self.sy, &c));
        let u = cx * by - cy * bx;
        let v = ax * cy - ay * cx;
        let w = bx * ay - by * ax;
        let zero = Vec4::ZERO;
        let exact = (u.cmpeq(zero) | v.cmpeq(zero) | w.cmpeq(zero)).bitmask() & valid;
        let neg = u.cmplt(zero) | v.cmplt(zero) | w.cmplt(zero);
        let pos = u.cmpgt(zero) | v.cmpgt(zero) | w.cmpgt(zero);
        let det = u + v + w;
        let (az, bz, cz) = (dot(self.sz, &a), dot(self.sz, &b), dot(self.sz, &c));
        let t = (u * az + v * bz + w * cz) / det + zero;
        let keep = !(neg & pos) & !det.cmpeq(zero) & t.cmpge(zero) & t.is_finite_mask();
        let mut ts = t.to_array();
        let mut mask = keep.bitmask() & valid & !exact;
        if exact != 0 {
            mask |= self.intersect_lanes(leaf, exact, &mut ts);
        }
        (ts, mask)
    }

    /// The lanes of `lanes` through the scalar test (edge functions of 0, decided in f64).
    #[cold]
    #[inline(never)]
    fn intersect_lanes(&self, leaf: &Leaf4, mut lanes: u32, ts: &mut [f32; 4]) -> u32 {
        let mut mask = 0;
        while lanes != 0 {
            let l = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let [a, b, c] = leaf.triangle(l);
            if let Some(t) = self.intersect(a, b, c) {
                ts[l] = t;
                mask |= 1 << l;
            }
        }
        mask
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
