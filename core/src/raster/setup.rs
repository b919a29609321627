//! Per-vertex and per-triangle work: clip codes, projection and snapping, clipping, culling,
//! the depth plane, the depth bias, and the setup record the tiles are drawn from.

use glam::{Mat4, Vec3, Vec4};

use crate::cpu::CpuExtension;
use crate::format::Format;

use super::{CullMode, DepthBias, RasterState};

/// Sub-pixel precision: positions snap to 1/256 pixel (D3D's 8 fractional bits).
pub(crate) const SUB_BITS: u32 = 8;
/// Fixed-point offset of a pixel centre inside its pixel (0.5 pixel).
pub(crate) const HALF: i64 = 1 << (SUB_BITS - 1);
/// Pixels of guard band round the target: triangles are cut at the sides only past it.
const GUARD_BAND: f32 = 16384.0;
/// The `w ≥ W_MIN` plane that keeps every projected vertex in front of the camera.
const W_MIN: f32 = 1.0 / (1u32 << 20) as f32;
/// Largest magnitude of a snapped coordinate accepted (fixed point, about 2^17 pixels); the
/// guard band keeps real ones under 2^23, so edge functions stay far inside i64.
const FIXED_LIMIT: f32 = (1u32 << 25) as f32;

/// A vertex with a NaN or infinite clip coordinate (or that could not be projected).
const NON_FINITE: u16 = 1 << 15;
/// Clip planes, in the order polygons are cut against them.
const PLANE_W: u16 = 1 << 0;
const PLANE_NEAR: u16 = 1 << 1;
const PLANE_FAR: u16 = 1 << 2;
const PLANE_LEFT: u16 = 1 << 3;
const PLANE_RIGHT: u16 = 1 << 4;
const PLANE_BOTTOM: u16 = 1 << 5;
const PLANE_TOP: u16 = 1 << 6;
const PLANES: [u16; 7] = [
    PLANE_W,
    PLANE_NEAR,
    PLANE_FAR,
    PLANE_LEFT,
    PLANE_RIGHT,
    PLANE_BOTTOM,
    PLANE_TOP,
];
/// The sides of the viewport itself: only used to reject triangles wholly outside one of them.
const VIEW_LEFT: u16 = 1 << 7;
const VIEW_RIGHT: u16 = 1 << 8;
const VIEW_BOTTOM: u16 = 1 << 9;
const VIEW_TOP: u16 = 1 << 10;
/// Most vertices a triangle clipped by the 7 planes can have is 10; room for rounding slack.
const MAX_POLY: usize = 16;

/// A transformed vertex: clip-space position, and its snapped screen position and depth when it
/// lies inside every clip plane. Laid out in C order with no uninitialised bytes (32 in all),
/// so that the SIMD set-up can gather `x`, `y` and `z`, `code` as two 64-bit words.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct Vertex {
    clip: Vec4,
    /// Snapped screen x, y (1/256 pixel) and z/w; valid when no clip-plane bit is set.
    x: i32,
    y: i32,
    z: f32,
    /// Planes this vertex is outside of (and [`NON_FINITE`]).
    code: u16,
    /// Always 0: fills the struct to 32 bytes.
    pad: u16,
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx512;
#[cfg(test)]
mod tests;

/// Eight triangles of a vector set-up, lane l of each field at index l, and each mask with
/// lane l in bit l: the corners (after the swap that makes them clockwise), the bounds (x0, y0,
/// x1, y1), the depth (`zr`, `dzdx`, `dzdy`), the top-left edges, `plain` and `compact`.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
    allow(dead_code)
)]
struct Lanes8 {
    x: [[i32; 8]; 3],
    y: [[i32; 8]; 3],
    bounds: [[i32; 8]; 4],
    depth: [[f64; 8]; 3],
    edges: [u8; 3],
    plain: u8,
    compact: u8,
}

/// The vector code the vertex transform and the triangle set-up may use: each writes the
/// scalar code's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
    allow(dead_code)
)]
pub(crate) enum Lanes {
    Scalar,
    /// AVX2: the set-up, eight triangles at a time, and the transform, eight vertices.
    Avx2,
    /// AVX-512 F, BW, VL and DQ: the set-up, eight triangles at a time, and the transform,
    /// sixteen vertices.
    Avx512,
}

impl Lanes {
    /// The widest code at or below `ext` that this build and CPU run.
    pub(crate) fn of(ext: CpuExtension) -> Lanes {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            if ext >= CpuExtension::Avx512bw && ext.is_supported() && avx512::usable(&[]) {
                return Lanes::Avx512;
            }
            if ext >= CpuExtension::Avx2 && ext.is_supported() && avx2::usable(&[]) {
                return Lanes::Avx2;
            }
        }
        let _ = ext;
        Lanes::Scalar
    }
}

/// A snapped vertex: fixed-point x and y, and z/w.
type Snapped = (i32, i32, f32);

/// A triangle ready to draw: clockwise on screen (positive area), bounds clipped to the target.
/// One cache line each (the tiles read them in scattered order), laid out in C order (the
/// SIMD set-up writes whole records).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Tri {
    /// Snapped vertex positions (1/256 pixel).
    pub x: [i32; 3],
    pub y: [i32; 3],
    /// Pixel bounds of the centres it may cover, inclusive: min x, min y, max x, max y.
    pub bbox: [u16; 4],
    /// Biased depth at the centre of the first pixel of `bbox` (min x, min y), and its change
    /// per pixel along x and y: every pixel's depth is computed from these alone (the formula
    /// of [`super::draw`]), whatever part of the target is drawn.
    pub zr: f64,
    pub dzdx: f64,
    pub dzdy: f64,
    /// Bit i: edge i (vertex i → vertex i + 1) is a top or left edge.
    pub top_left: u8,
    /// Every depth inside lies in [2⁻¹²⁶, 1]: no clamp and no subnormal flush is needed.
    pub plain: bool,
    /// The snapped vertices span at most [`COMPACT_SPAN`] pixels along x and along y, so every
    /// edge function at the pixel centres of the bounds, widened by 15 pixels left and right,
    /// lies under 2³¹ in magnitude (see [`COMPACT_SPAN`]): the SIMD kernels' 32-bit lanes hold
    /// them without a per-tile check.
    pub compact: bool,
}

/// Largest span of a [`Tri::compact`] triangle's vertices, in pixels. With spans of at most
/// S = 64 pixels (S·256 in fixed point) an edge's |dx| and |dy| are at most S·256; a centre of
/// the widened bounds lies at most S·256 from a vertex along y and (S + 16)·256 along x; so
/// |e| ≤ S·256 · S·256 + S·256 · (S + 16)·256 + 1 ≈ 6.0·10⁸, under 2³¹ ≈ 2.1·10⁹.
pub(crate) const COMPACT_SPAN: i32 = 64;

impl Tri {
    /// Edge i as (dx, dy, origin x, origin y, fill bias): the edge function at fixed-point
    /// point (px, py) is `dx·(py − oy) − dy·(px − ox)`, and a centre is covered when it plus the
    /// fill bias (0 for top-left edges, −1 otherwise) is ≥ 0 for all three edges.
    #[inline]
    pub fn edge(&self, i: usize) -> (i64, i64, i64, i64, i64) {
        let j = if i == 2 { 0 } else { i + 1 };
        let (ox, oy) = (i64::from(self.x[i]), i64::from(self.y[i]));
        let bias = if self.top_left & (1 << i) != 0 { 0 } else { -1 };
        (
            i64::from(self.x[j]) - ox,
            i64::from(self.y[j]) - oy,
            ox,
            oy,
            bias,
        )
    }
}

/// Everything per-call that vertex and triangle setup need.
pub(crate) struct Context {
    /// Target size.
    width: i32,
    height: i32,
    /// Viewport scale to fixed point: W·128 and H·128.
    scale_x: f32,
    scale_y: f32,
    /// Guard band in NDC units: |x/w| ≤ guard_x keeps x within GUARD_BAND pixels of the target.
    guard_x: f32,
    guard_y: f32,
    /// Clip planes in force.
    clip_mask: u16,
    cull: CullMode,
    front_ccw: bool,
    bias: DepthBias,
    /// Bits of a UNORM target, `None` for a float one.
    unorm_bits: Option<u32>,
}

/// Twice the signed area of a snapped triangle, in (1/256 pixel)²; positive when the triangle
/// is clockwise on screen (y down).
#[inline]
fn area2(p: &[Snapped; 3]) -> i64 {
    let (x0, y0) = (i64::from(p[0].0), i64::from(p[0].1));
    (i64::from(p[1].0) - x0) * (i64::from(p[2].1) - y0)
        - (i64::from(p[1].1) - y0) * (i64::from(p[2].0) - x0)
}

/// `v.round_ties_even() as i32` for |v| ≤ [`FIXED_LIMIT`]: on x86-64 one conversion in the
/// default rounding mode (to nearest, ties to even) instead of a call to `rintf` (baseline
/// x86-64 has no rounding instruction).
#[inline(always)]
fn round_to_i32(v: f32) -> i32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64; the conversion reads MXCSR's rounding mode, which Rust
    // code never changes from round-to-nearest-even.
    unsafe {
        use std::arch::x86_64::{_mm_cvtss_si32, _mm_set_ss};
        _mm_cvtss_si32(_mm_set_ss(v))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        v.round_ties_even() as i32
    }
}

/// 2^k as an f32, exactly, for k in −149..=127.
fn pow2(k: i32) -> f32 {
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1u32 << (k + 149))
    }
}

/// The binary exponent of a depth for the float bias: that of its f32 encoding, with 0,
/// negatives and subnormals counting as the smallest normal exponent.
fn exponent(z: f32) -> i32 {
    let field = ((z.to_bits() >> 23) & 0xFF) as i32;
    if z <= 0.0 || field == 0 {
        -126
    } else {
        field - 127
    }
}

impl Context {
    pub fn new(width: u32, height: u32, format: Format, state: &RasterState) -> Context {
        let (w, h) = (width as f32, height as f32);
        let mut clip_mask = PLANE_W | PLANE_LEFT | PLANE_RIGHT | PLANE_BOTTOM | PLANE_TOP;
        if state.depth_clip {
            clip_mask |= PLANE_NEAR | PLANE_FAR;
        }
        Context {
            width: width as i32,
            height: height as i32,
            scale_x: w * 128.0,
            scale_y: h * 128.0,
            guard_x: 1.0 + 2.0 * GUARD_BAND / w,
            guard_y: 1.0 + 2.0 * GUARD_BAND / h,
            clip_mask,
            cull: state.cull,
            front_ccw: state.front_counter_clockwise,
            bias: state.depth_bias,
            unorm_bits: match format {
                Format::D16Unorm => Some(16),
                _ => None,
            },
        }
    }

    /// Signed distance of `c` to `plane` (≥ 0 inside).
    #[inline]
    fn distance(&self, plane: u16, c: Vec4) -> f32 {
        match plane {
            PLANE_W => c.w - W_MIN,
            PLANE_NEAR => c.z,
            PLANE_FAR => c.w - c.z,
            PLANE_LEFT => c.x + self.guard_x * c.w,
            PLANE_RIGHT => self.guard_x * c.w - c.x,
            PLANE_BOTTOM => c.y + self.guard_y * c.w,
            _ => self.guard_y * c.w - c.y,
        }
    }

    /// Puts a freshly cut point exactly on `plane`, so later planes see it there.
    #[inline]
    fn onto_plane(&self, plane: u16, c: &mut Vec4) {
        match plane {
            PLANE_W => c.w = W_MIN,
            PLANE_NEAR => c.z = 0.0,
            PLANE_FAR => c.z = c.w,
            PLANE_LEFT => c.x = -self.guard_x * c.w,
            PLANE_RIGHT => c.x = self.guard_x * c.w,
            PLANE_BOTTOM => c.y = -self.guard_y * c.w,
            _ => c.y = self.guard_y * c.w,
        }
    }

    /// Perspective divide, viewport and snapping: `None` if the result is not finite or far
    /// outside the guard band.
    #[inline]
    fn project(&self, c: Vec4) -> Option<Snapped> {
        let inv = 1.0 / c.w;
        let x = (c.x * inv + 1.0) * self.scale_x;
        let y = (1.0 - c.y * inv) * self.scale_y;
        let z = c.z * inv;
        if x.abs() <= FIXED_LIMIT && y.abs() <= FIXED_LIMIT && z.is_finite() {
            Some((round_to_i32(x), round_to_i32(y), z))
        } else {
            None
        }
    }

    /// Vertex processing for one clip-space position.
    #[inline]
    pub fn vertex(&self, clip: Vec4) -> Vertex {
        let mut v = Vertex {
            clip,
            ..Vertex::default()
        };
        if !clip.is_finite() {
            v.code = NON_FINITE;
            return v;
        }
        // The planes' `distance < 0`, written out (the same expressions as `distance`).
        let (x, y, z, w) = (clip.x, clip.y, clip.z, clip.w);
        let bit = |outside: bool, plane: u16| if outside { plane } else { 0 };
        let planes = bit(w - W_MIN < 0.0, PLANE_W)
            | bit(z < 0.0, PLANE_NEAR)
            | bit(w - z < 0.0, PLANE_FAR)
            | bit(x + self.guard_x * w < 0.0, PLANE_LEFT)
            | bit(self.guard_x * w - x < 0.0, PLANE_RIGHT)
            | bit(y + self.guard_y * w < 0.0, PLANE_BOTTOM)
            | bit(self.guard_y * w - y < 0.0, PLANE_TOP);
        v.code = (planes & self.clip_mask)
            | bit(x < -w, VIEW_LEFT)
            | bit(x > w, VIEW_RIGHT)
            | bit(y < -w, VIEW_BOTTOM)
            | bit(y > w, VIEW_TOP);
        if v.code & self.clip_mask == 0 {
            match self.project(clip) {
                Some((x, y, z)) => (v.x, v.y, v.z) = (x, y, z),
                None => v.code |= NON_FINITE,
            }
        }
        v
    }

    /// [`Context::vertex`] of `m · (p, 1)` for each of `positions`, into `out` (as long). With
    /// [`Lanes::Avx512`] sixteen at a time in vector lanes ([`avx512::vertices`]), with
    /// [`Lanes::Avx2`] eight ([`avx2::vertices`]), with the same bits.
    pub fn vertices(&self, m: &Mat4, positions: &[Vec3], out: &mut [Vertex], lanes: Lanes) {
        assert_eq!(positions.len(), out.len(), "one vertex per position");
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if lanes == Lanes::Avx512 && avx512::usable(&[]) {
            let n = avx512::VERTEX_LANES;
            for (p, v) in positions.chunks(n).zip(out.chunks_mut(n)) {
                // SAFETY: `usable` checked the CPU's features; `p` and `v` are as long.
                unsafe { avx512::vertices(self, m, p, v) };
            }
            return;
        }
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if lanes != Lanes::Scalar && avx2::usable(&[]) {
            let n = avx2::VERTEX_LANES;
            for (p, v) in positions.chunks(n).zip(out.chunks_mut(n)) {
                // SAFETY: `usable` checked the CPU's features; `p` and `v` are as long.
                unsafe { avx2::vertices(self, m, p, v) };
            }
            return;
        }
        let _ = lanes;
        for (p, v) in positions.iter().zip(out) {
            *v = self.vertex(*m * p.extend(1.0));
        }
    }

    /// Whether a triangle of this winding (clockwise on screen or not) is culled.
    #[inline]
    fn culled(&self, clockwise: bool, cull: Option<CullMode>) -> bool {
        let front = clockwise != self.front_ccw;
        match cull.unwrap_or(self.cull) {
            CullMode::None => false,
            CullMode::Front => front,
            CullMode::Back => !front,
        }
    }

    /// Sets up the triangles of `indices` (three per triangle, each below `vertices.len()`,
    /// as a [`Mesh`](super::Mesh) guarantees; panics on one that is not) in order, as
    /// [`Context::triangle`] does one by one; returns how many pushed a piece. With
    /// [`Lanes::Avx2`] or [`Lanes::Avx512`], eight at a time share the vector set-up
    /// ([`avx2`], [`avx512`]), which pushes the same records.
    pub fn triangles(
        &self,
        vertices: &[Vertex],
        indices: &[u32],
        cull: Option<CullMode>,
        lanes: Lanes,
        out: &mut Vec<Tri>,
    ) -> u64 {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if self.unbiased() {
            // Whole triangles, a batch of lanes at a time.
            let batches = |n: usize| indices[..indices.len() / 3 * 3].chunks(3 * n);
            if lanes == Lanes::Avx512 && avx512::usable(vertices) {
                // SAFETY: `usable` checked the CPU's features and the vertex count.
                let run = |b| unsafe { avx512::triangles(self, vertices, b, cull, out) };
                return batches(avx512::LANES).map(run).sum();
            }
            if lanes != Lanes::Scalar && avx2::usable(vertices) {
                // SAFETY: as above, for AVX2.
                let run = |b| unsafe { avx2::triangles(self, vertices, b, cull, out) };
                return batches(avx2::LANES).map(run).sum();
            }
        }
        let _ = lanes;
        self.one_by_one(vertices, indices, cull, out)
    }

    /// [`Context::triangle`] of each triangle of `indices` (three per triangle), in order;
    /// returns how many pushed a piece. Panics on an index that names no vertex.
    fn one_by_one(
        &self,
        vertices: &[Vertex],
        indices: &[u32],
        cull: Option<CullMode>,
        out: &mut Vec<Tri>,
    ) -> u64 {
        indices
            .chunks_exact(3)
            .map(|k| {
                let tri = [0, 1, 2].map(|c| &vertices[k[c] as usize]);
                u64::from(self.triangle(tri, cull, out))
            })
            .sum()
    }

    /// Pushes, in lane order, the records of the `live` lanes of a vector set-up's batch
    /// (`idx`: its indices) and the scalar set-up of its `clipped` lanes; returns how many
    /// pushed a piece. A loop over set bits: whether a lane is culled is a coin toss that a
    /// branch per lane would often guess wrong.
    #[allow(clippy::too_many_arguments)]
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
        allow(dead_code)
    )]
    fn push_lanes(
        &self,
        lanes: &Lanes8,
        live: u8,
        clipped: u8,
        vertices: &[Vertex],
        idx: &[u32],
        cull: Option<CullMode>,
        out: &mut Vec<Tri>,
    ) -> u64 {
        let mut drawn = 0;
        let mut todo = live | clipped;
        out.reserve(todo.count_ones() as usize);
        while todo != 0 {
            let l = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let bit = 1u8 << l;
            if clipped & bit != 0 {
                drawn += self.one_by_one(vertices, &idx[3 * l..3 * l + 3], cull, out);
            } else {
                let lane = |e: u8| (e >> l) & 1;
                let [xs, ys] = [&lanes.x, &lanes.y];
                out.push(Tri {
                    x: [xs[0][l], xs[1][l], xs[2][l]],
                    y: [ys[0][l], ys[1][l], ys[2][l]],
                    bbox: lanes.bounds.map(|b| b[l] as u16),
                    zr: lanes.depth[0][l],
                    dzdx: lanes.depth[1][l],
                    dzdy: lanes.depth[2][l],
                    top_left: lane(lanes.edges[0])
                        | lane(lanes.edges[1]) << 1
                        | lane(lanes.edges[2]) << 2,
                    plain: lanes.plain & bit != 0,
                    compact: lanes.compact & bit != 0,
                });
                drawn += 1;
            }
        }
        drawn
    }

    /// Sets up one triangle, pushing the pieces to draw onto `out`; returns whether any piece
    /// was pushed.
    /// `cull` overrides the state's cull mode for this triangle's instance.
    pub fn triangle(&self, v: [&Vertex; 3], cull: Option<CullMode>, out: &mut Vec<Tri>) -> bool {
        let any = v[0].code | v[1].code | v[2].code;
        if any & NON_FINITE != 0 || v[0].code & v[1].code & v[2].code != 0 {
            return false;
        }
        if any & self.clip_mask != 0 {
            return self.clipped(v, any & self.clip_mask, cull, out);
        }
        let p = [
            (v[0].x, v[0].y, v[0].z),
            (v[1].x, v[1].y, v[1].z),
            (v[2].x, v[2].y, v[2].z),
        ];
        let area = area2(&p);
        if area == 0 || self.culled(area > 0, cull) {
            return false;
        }
        let p = if area > 0 { p } else { [p[0], p[2], p[1]] };
        let Some((dzdx, dzdy)) = plane(&p, area.abs()) else {
            return false;
        };
        let max_z = p[0].2.max(p[1].2).max(p[2].2);
        let bias = self.bias(dzdx, dzdy, max_z);
        self.emit(&p, dzdx, dzdy, bias, out)
    }

    /// A triangle that crosses one or more clip planes: cut it, then draw the fan of the
    /// remaining convex polygon.
    #[cold]
    fn clipped(
        &self,
        v: [&Vertex; 3],
        planes: u16,
        cull: Option<CullMode>,
        out: &mut Vec<Tri>,
    ) -> bool {
        // The winding of the part in front of the camera is the sign of det(x, y, w): negative
        // when it is clockwise on screen (screen y runs against NDC y).
        let [a, b, c] = [v[0].clip, v[1].clip, v[2].clip].map(|c| c.as_dvec4());
        let det = a.x * (b.y * c.w - c.y * b.w) - a.y * (b.x * c.w - c.x * b.w)
            + a.w * (b.x * c.y - c.x * b.y);
        if det == 0.0 || !det.is_finite() {
            return false;
        }
        let clockwise = det < 0.0;
        if self.culled(clockwise, cull) {
            return false;
        }
        let mut poly = [Vec4::ZERO; MAX_POLY];
        poly[..3].copy_from_slice(&[v[0].clip, v[1].clip, v[2].clip]);
        let mut n = 3;
        for plane in PLANES {
            if planes & plane != 0 {
                n = self.cut(plane, &mut poly, n);
                if n < 3 {
                    return false;
                }
            }
        }
        let mut q = [(0, 0, 0.0f32); MAX_POLY];
        for k in 0..n {
            match self.project(poly[k]) {
                Some(s) => q[k] = s,
                None => return false,
            }
        }
        let max_z = q[..n].iter().fold(f32::NEG_INFINITY, |m, s| m.max(s.2));
        let mut bias = None;
        let mut drawn = false;
        for k in 1..n - 1 {
            let p = [q[0], q[k], q[k + 1]];
            let area = area2(&p);
            // Slivers that rounding turned over are dropped with the empty ones.
            if area == 0 || (area > 0) != clockwise {
                continue;
            }
            let p = if area > 0 { p } else { [p[0], p[2], p[1]] };
            let Some((dzdx, dzdy)) = plane(&p, area.abs()) else {
                continue;
            };
            // One bias for the whole primitive, from its first piece.
            let bias = *bias.get_or_insert_with(|| self.bias(dzdx, dzdy, max_z));
            drawn |= self.emit(&p, dzdx, dzdy, bias, out);
        }
        drawn
    }

    /// Sutherland–Hodgman: cuts the convex polygon `poly[..n]` by `plane`, returning the new
    /// vertex count (0 if the polygon became unusable). An edge's cut point is always computed
    /// from its inside end towards its outside end, so two triangles sharing the edge get the
    /// same point.
    fn cut(&self, plane: u16, poly: &mut [Vec4; MAX_POLY], n: usize) -> usize {
        let mut out = [Vec4::ZERO; MAX_POLY];
        let mut m = 0;
        for i in 0..n {
            let (a, b) = (poly[i], poly[if i + 1 == n { 0 } else { i + 1 }]);
            let (da, db) = (self.distance(plane, a), self.distance(plane, b));
            if da.is_nan() || db.is_nan() || m + 2 > MAX_POLY {
                return 0;
            }
            if da >= 0.0 {
                out[m] = a;
                m += 1;
            }
            if (da >= 0.0) != (db >= 0.0) {
                let (inside, d_in, outside, d_out) = if da >= 0.0 {
                    (a, da, b, db)
                } else {
                    (b, db, a, da)
                };
                let t = d_in / (d_in - d_out);
                // A weighted sum keeps w > 0 when both ends have it.
                let mut p = inside * (1.0 - t) + outside * t;
                self.onto_plane(plane, &mut p);
                if !p.is_finite() {
                    return 0;
                }
                out[m] = p;
                m += 1;
            }
        }
        *poly = out;
        m
    }

    /// Whether [`Context::bias`] is 0 for every primitive.
    fn unbiased(&self) -> bool {
        self.bias.depth_bias == 0 && self.bias.slope_scaled_depth_bias == 0.0
    }

    /// D3D12's depth bias for a primitive with these slopes (per pixel) and largest z.
    fn bias(&self, dzdx: f64, dzdy: f64, max_z: f32) -> f64 {
        let b = self.bias;
        if self.unbiased() {
            return 0.0;
        }
        let max_slope = dzdx.abs().max(dzdy.abs()) as f32;
        let unit = match self.unorm_bits {
            Some(bits) => pow2(-(bits as i32)),
            None => pow2(exponent(max_z) - 23),
        };
        let mut bias = b.depth_bias as f32 * unit + b.slope_scaled_depth_bias * max_slope;
        if bias.is_nan() {
            bias = 0.0;
        }
        if b.depth_bias_clamp > 0.0 {
            bias = bias.min(b.depth_bias_clamp);
        } else if b.depth_bias_clamp < 0.0 {
            bias = bias.max(b.depth_bias_clamp);
        }
        f64::from(bias)
    }

    /// Pushes a clockwise triangle if its bounds hold a pixel centre of the target.
    fn emit(&self, p: &[Snapped; 3], dzdx: f64, dzdy: f64, bias: f64, out: &mut Vec<Tri>) -> bool {
        let (min_x, max_x) = (
            p[0].0.min(p[1].0).min(p[2].0),
            p[0].0.max(p[1].0).max(p[2].0),
        );
        let (min_y, max_y) = (
            p[0].1.min(p[1].1).min(p[2].1),
            p[0].1.max(p[1].1).max(p[2].1),
        );
        // Pixel x has its centre at 256·x + 128: the first centre ≥ min, the last ≤ max.
        let half = HALF as i32;
        let x_lo = ((min_x - half + 255) >> SUB_BITS).max(0);
        let x_hi = ((max_x - half) >> SUB_BITS).min(self.width - 1);
        let y_lo = ((min_y - half + 255) >> SUB_BITS).max(0);
        let y_hi = ((max_y - half) >> SUB_BITS).min(self.height - 1);
        if x_lo > x_hi || y_lo > y_hi {
            return false;
        }
        let mut top_left = 0u8;
        for i in 0..3 {
            let j = (i + 1) % 3;
            let (dx, dy) = (p[j].0 - p[i].0, p[j].1 - p[i].1);
            // Clockwise with y down: a left edge runs upwards, a top edge runs to the right.
            if dy < 0 || (dy == 0 && dx > 0) {
                top_left |= 1 << i;
            }
        }
        // Depths at covered centres are convex combinations of the vertex depths, up to the
        // rounding of the f64 plane evaluation (bounded generously by `slack`). When they are
        // all within [2⁻¹²⁶, 1], the tiles skip the clamp and the subnormal flush.
        let z_min = f64::from(p[0].2.min(p[1].2).min(p[2].2)) + bias;
        let z_max = f64::from(p[0].2.max(p[1].2).max(p[2].2)) + bias;
        let reach = |d: i32| f64::from(d.unsigned_abs()) / f64::from(1u32 << SUB_BITS) + 1.0;
        let (reach_x, reach_y) = (reach(max_x - min_x), reach(max_y - min_y));
        let slack = (z_max.abs() + z_min.abs() + dzdx.abs() * reach_x + dzdy.abs() * reach_y)
            * f64::from(f32::EPSILON).powi(2);
        let plain = z_min - slack >= f64::from(f32::MIN_POSITIVE) * 2.0 && z_max + slack <= 1.0;
        let sub = f64::from(1u32 << SUB_BITS);
        let zr = (f64::from(p[0].2) + bias)
            + dzdx * (f64::from((x_lo << SUB_BITS) + half - p[0].0) / sub)
            + dzdy * (f64::from((y_lo << SUB_BITS) + half - p[0].1) / sub);
        out.push(Tri {
            x: [p[0].0, p[1].0, p[2].0],
            y: [p[0].1, p[1].1, p[2].1],
            bbox: [x_lo as u16, y_lo as u16, x_hi as u16, y_hi as u16],
            zr,
            dzdx,
            dzdy,
            top_left,
            plain,
            compact: max_x - min_x <= COMPACT_SPAN << SUB_BITS
                && max_y - min_y <= COMPACT_SPAN << SUB_BITS,
        });
        true
    }
}

/// The depth plane of a snapped triangle of twice-area `area` (> 0): ∂z/∂x and ∂z/∂y per pixel,
/// or `None` when they are not finite.
fn plane(p: &[Snapped; 3], area: i64) -> Option<(f64, f64)> {
    let x1 = f64::from(p[1].0 - p[0].0);
    let y1 = f64::from(p[1].1 - p[0].1);
    let x2 = f64::from(p[2].0 - p[0].0);
    let y2 = f64::from(p[2].1 - p[0].1);
    let z0 = f64::from(p[0].2);
    let (z1, z2) = (f64::from(p[1].2) - z0, f64::from(p[2].2) - z0);
    let scale = f64::from(1u32 << SUB_BITS) / area as f64;
    let dzdx = (z1 * y2 - z2 * y1) * scale;
    let dzdy = (z2 * x1 - z1 * x2) * scale;
    (dzdx.is_finite() && dzdy.is_finite()).then_some((dzdx, dzdy))
}
