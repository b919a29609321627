//! Triangle set-up eight triangles at a time, and the vertex transform eight vertices at a
//! time, with AVX2: the AVX-512 code's steps ([`super::avx512`]) on CPUs without AVX-512. The integer steps run in eight 32-bit lanes,
//! the f64 ones in two halves of four lanes, and every predicate becomes an 8-bit mask (lane l
//! in bit l). The records are the scalar set-up's, bit for bit, in the same order (see the
//! AVX-512 module for why each step is exact; the tests in `setup::tests` compare them).

use std::arch::x86_64::*;

use glam::{Mat4, Vec3, Vec4};

use super::{
    Context, CullMode, FIXED_LIMIT, HALF, Lanes8, NON_FINITE, PLANE_BOTTOM, PLANE_FAR, PLANE_LEFT,
    PLANE_NEAR, PLANE_RIGHT, PLANE_TOP, PLANE_W, SUB_BITS, Tri, VIEW_BOTTOM, VIEW_LEFT, VIEW_RIGHT,
    VIEW_TOP, Vertex, W_MIN,
};

/// Triangles per call of [`triangles`].
pub(super) const LANES: usize = 8;

/// Most vertices whose 32-bit gather offsets (8 per 32-byte vertex) fit.
const MAX_VERTICES: usize = 1 << 28;

/// Whether [`triangles`] may run on this CPU for a mesh with these vertices.
pub(super) fn usable(vertices: &[Vertex]) -> bool {
    vertices.len() <= MAX_VERTICES && std::arch::is_x86_feature_detected!("avx2")
}

/// Eight f64 lanes as two halves of four.
#[derive(Clone, Copy)]
struct F64x8([__m256d; 2]);

/// `F64x8` methods applying an AVX2 `__m256d` operation to both halves, lane by lane.
macro_rules! lanewise {
    ($($name:ident => $op:ident),* $(,)?) => {
        $(
            #[inline]
            #[target_feature(enable = "avx2")]
            fn $name(self, o: F64x8) -> F64x8 {
                self.map2(o, |a, b| $op(a, b))
            }
        )*
    };
}

/// Lane l's sign bit, in bit l.
#[inline]
#[target_feature(enable = "avx2")]
fn bits(v: __m256i) -> u8 {
    _mm256_movemask_ps(_mm256_castsi256_ps(v)) as u8
}

/// All-ones lanes where `bits` has a bit.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes_of(bits: u8) -> __m256i {
    let each = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    _mm256_cmpeq_epi32(
        _mm256_and_si256(_mm256_set1_epi32(i32::from(bits)), each),
        each,
    )
}

impl F64x8 {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn from_i32(v: __m256i) -> F64x8 {
        F64x8([
            _mm256_cvtepi32_pd(_mm256_castsi256_si128(v)),
            _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(v)),
        ])
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn from_f32(v: __m256) -> F64x8 {
        F64x8([
            _mm256_cvtps_pd(_mm256_castps256_ps128(v)),
            _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)),
        ])
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(v: f64) -> F64x8 {
        F64x8([_mm256_set1_pd(v); 2])
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn map2(self, o: F64x8, f: impl Fn(__m256d, __m256d) -> __m256d) -> F64x8 {
        F64x8([f(self.0[0], o.0[0]), f(self.0[1], o.0[1])])
    }

    lanewise! {
        add => _mm256_add_pd,
        sub => _mm256_sub_pd,
        mul => _mm256_mul_pd,
        div => _mm256_div_pd,
        min => _mm256_min_pd,
        max => _mm256_max_pd,
    }

    /// |v| (the sign bit cleared).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn abs(self) -> F64x8 {
        let m = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
        F64x8([_mm256_and_pd(self.0[0], m), _mm256_and_pd(self.0[1], m)])
    }

    /// The lanes where `a OP b` holds (an ordered comparison), as bits.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn cmp<const OP: i32>(self, o: F64x8) -> u8 {
        let lo = _mm256_movemask_pd(_mm256_cmp_pd::<OP>(self.0[0], o.0[0]));
        let hi = _mm256_movemask_pd(_mm256_cmp_pd::<OP>(self.0[1], o.0[1]));
        (lo | hi << 4) as u8
    }

    /// The lanes holding a finite value, as bits (v − v is 0 only for those).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn finite(self) -> u8 {
        self.sub(self).cmp::<_CMP_EQ_OQ>(F64x8::splat(0.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn lanes(self) -> [f64; LANES] {
        let mut a = [0.0; LANES];
        // SAFETY: `a` holds eight f64s; unaligned stores of four each.
        unsafe {
            _mm256_storeu_pd(a.as_mut_ptr(), self.0[0]);
            _mm256_storeu_pd(a.as_mut_ptr().add(4), self.0[1]);
        }
        a
    }
}

/// One corner of eight triangles.
struct Corner {
    x: __m256i,
    y: __m256i,
    z: __m256,
    code: __m256i,
}

/// Sets up the triangles of `idx` (1 to [`LANES`] of them) as [`Context::triangle`] would,
/// one after the other; returns how many pushed a piece. The context must have no depth bias.
///
/// # Safety
/// The CPU must support AVX2 ([`usable`]), and `vertices.len()` be at most `MAX_VERTICES`.
/// `idx` holds 3 to `3 · LANES` indices, a multiple of 3 (a batch with one that names no vertex
/// goes to the scalar set-up, which panics on it).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn triangles(
    ctx: &Context,
    vertices: &[Vertex],
    idx: &[u32],
    cull: Option<CullMode>,
    out: &mut Vec<Tri>,
) -> u64 {
    let n = idx.len() / 3;
    debug_assert!((1..=LANES).contains(&n) && idx.len() == 3 * n);
    // The corners' indices, lane by lane; missing lanes take vertex 0.
    let mut index = [[0i32; LANES]; 3];
    for (l, k) in idx.chunks_exact(3).enumerate() {
        for c in 0..3 {
            if k[c] as usize >= vertices.len() {
                // An index names no vertex: the scalar set-up's slice indexing reports it.
                return ctx.one_by_one(vertices, idx, cull, out);
            }
            index[c][l] = k[c] as i32;
        }
    }
    // SAFETY: every index names a vertex (checked above, and lanes past `n` take vertex 0 of
    // the non-empty list); the CPU features are the caller's contract.
    let [c0, c1, c2] = index.map(|i| unsafe { corner(vertices, i) });
    let absent = !((1u16 << n) - 1) as u8;

    let any = _mm256_or_si256(_mm256_or_si256(c0.code, c1.code), c2.code);
    let all = _mm256_and_si256(_mm256_and_si256(c0.code, c1.code), c2.code);
    let zero = _mm256_setzero_si256();
    let has = |v: __m256i, m: u16| {
        !bits(_mm256_cmpeq_epi32(
            _mm256_and_si256(v, _mm256_set1_epi32(i32::from(m))),
            zero,
        ))
    };
    let dropped = has(any, NON_FINITE) | !bits(_mm256_cmpeq_epi32(all, zero)) | absent;
    let clipped = has(any, ctx.clip_mask) & !dropped;
    let mut live = !(dropped | clipped);

    let diff = |a: __m256i, b: __m256i| F64x8::from_i32(_mm256_sub_epi32(a, b));
    let area = diff(c1.x, c0.x)
        .mul(diff(c2.y, c0.y))
        .sub(diff(c1.y, c0.y).mul(diff(c2.x, c0.x)));
    let fzero = F64x8::splat(0.0);
    let clockwise = area.cmp::<_CMP_GT_OQ>(fzero);
    let nonzero = area.cmp::<_CMP_NEQ_OQ>(fzero);
    let front = if ctx.front_ccw { !clockwise } else { clockwise };
    let kept = match cull.unwrap_or(ctx.cull) {
        CullMode::None => !0,
        CullMode::Front => !front,
        CullMode::Back => front,
    };
    live &= nonzero & kept;

    // Counter-clockwise triangles swap corners 1 and 2.
    let cw = lanes_of(clockwise);
    let pick = |a: __m256i, b: __m256i| _mm256_blendv_epi8(b, a, cw);
    let (x1, x2) = (pick(c1.x, c2.x), pick(c2.x, c1.x));
    let (y1, y2) = (pick(c1.y, c2.y), pick(c2.y, c1.y));
    let cwf = _mm256_castsi256_ps(cw);
    let z1 = _mm256_blendv_ps(c2.z, c1.z, cwf);
    let z2 = _mm256_blendv_ps(c1.z, c2.z, cwf);
    let (x0, y0) = (c0.x, c0.y);

    let z0 = F64x8::from_f32(c0.z);
    let (z1, z2) = (F64x8::from_f32(z1), F64x8::from_f32(z2));
    let (dz1, dz2) = (z1.sub(z0), z2.sub(z0));
    let (ex1, ey1, ex2, ey2) = (diff(x1, x0), diff(y1, y0), diff(x2, x0), diff(y2, y0));
    let sub = F64x8::splat(f64::from(1u32 << SUB_BITS));
    let scale = sub.div(area.abs());
    let dzdx = dz1.mul(ey2).sub(dz2.mul(ey1)).mul(scale);
    let dzdy = dz2.mul(ex1).sub(dz1.mul(ex2)).mul(scale);
    live &= dzdx.finite() & dzdy.finite();

    let min_x = _mm256_min_epi32(_mm256_min_epi32(x0, x1), x2);
    let max_x = _mm256_max_epi32(_mm256_max_epi32(x0, x1), x2);
    let min_y = _mm256_min_epi32(_mm256_min_epi32(y0, y1), y2);
    let max_y = _mm256_max_epi32(_mm256_max_epi32(y0, y1), y2);
    let half = HALF as i32;
    let first = |min: __m256i| {
        let c = _mm256_srai_epi32::<{ SUB_BITS as i32 }>(_mm256_add_epi32(
            _mm256_sub_epi32(min, _mm256_set1_epi32(half)),
            _mm256_set1_epi32(255),
        ));
        _mm256_max_epi32(c, zero)
    };
    let last = |max: __m256i, size: i32| {
        let c = _mm256_srai_epi32::<{ SUB_BITS as i32 }>(_mm256_sub_epi32(
            max,
            _mm256_set1_epi32(half),
        ));
        _mm256_min_epi32(c, _mm256_set1_epi32(size - 1))
    };
    let (x_lo, x_hi) = (first(min_x), last(max_x, ctx.width));
    let (y_lo, y_hi) = (first(min_y), last(max_y, ctx.height));
    // lo ≤ hi: not lo > hi.
    live &= !bits(_mm256_cmpgt_epi32(x_lo, x_hi)) & !bits(_mm256_cmpgt_epi32(y_lo, y_hi));
    if live | clipped == 0 {
        return 0;
    }

    let top_left = |(xa, ya): (__m256i, __m256i), (xb, yb): (__m256i, __m256i)| {
        let (dx, dy) = (_mm256_sub_epi32(xb, xa), _mm256_sub_epi32(yb, ya));
        bits(_mm256_or_si256(
            _mm256_cmpgt_epi32(zero, dy),
            _mm256_and_si256(_mm256_cmpeq_epi32(dy, zero), _mm256_cmpgt_epi32(dx, zero)),
        ))
    };
    let edges = [
        top_left((x0, y0), (x1, y1)),
        top_left((x1, y1), (x2, y2)),
        top_left((x2, y2), (x0, y0)),
    ];

    let z_min = z0.min(z1).min(z2).add(fzero);
    let z_max = z0.max(z1).max(z2).add(fzero);
    let one = F64x8::splat(1.0);
    let reach = |lo: __m256i, hi: __m256i| diff(hi, lo).div(sub).add(one);
    let slack = z_max
        .abs()
        .add(z_min.abs())
        .add(dzdx.abs().mul(reach(min_x, max_x)))
        .add(dzdy.abs().mul(reach(min_y, max_y)))
        .mul(F64x8::splat(f64::from(f32::EPSILON).powi(2)));
    let plain = z_min
        .sub(slack)
        .cmp::<_CMP_GE_OQ>(F64x8::splat(f64::from(f32::MIN_POSITIVE) * 2.0))
        & z_max.add(slack).cmp::<_CMP_LE_OQ>(one);

    let centre = |lo: __m256i, o: __m256i| {
        let fixed = _mm256_sub_epi32(
            _mm256_add_epi32(
                _mm256_slli_epi32::<{ SUB_BITS as i32 }>(lo),
                _mm256_set1_epi32(half),
            ),
            o,
        );
        F64x8::from_i32(fixed).div(sub)
    };
    let zr = z0
        .add(fzero)
        .add(dzdx.mul(centre(x_lo, x0)))
        .add(dzdy.mul(centre(y_lo, y0)));
    let span = _mm256_set1_epi32(super::COMPACT_SPAN << SUB_BITS);
    let compact = !bits(_mm256_cmpgt_epi32(_mm256_sub_epi32(max_x, min_x), span))
        & !bits(_mm256_cmpgt_epi32(_mm256_sub_epi32(max_y, min_y), span));

    if clipped == 0 {
        let rows = [
            words(x0, x1),
            words(x2, y0),
            words(y1, y2),
            words(
                _mm256_or_si256(x_lo, _mm256_slli_epi32::<16>(y_lo)),
                _mm256_or_si256(x_hi, _mm256_slli_epi32::<16>(y_hi)),
            ),
            f64_words(zr),
            f64_words(dzdx),
            f64_words(dzdy),
            {
                let flag = |k: u8, v: i32| _mm256_and_si256(lanes_of(k), _mm256_set1_epi32(v));
                let flags = _mm256_or_si256(
                    _mm256_or_si256(
                        _mm256_or_si256(flag(edges[0], 1), flag(edges[1], 2)),
                        _mm256_or_si256(flag(edges[2], 4), flag(plain, 1 << 8)),
                    ),
                    flag(compact, 1 << 16),
                );
                words(flags, zero)
            },
        ];
        // SAFETY: the CPU features are the caller's contract.
        unsafe { push_all(out, live, rows) };
        return u64::from(live.count_ones());
    }
    let lanes_i32 = |v: __m256i| {
        let mut a = [0i32; LANES];
        // SAFETY: `a` holds 8 i32s; an unaligned store.
        unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) };
        a
    };
    let lanes = Lanes8 {
        x: [x0, x1, x2].map(lanes_i32),
        y: [y0, y1, y2].map(lanes_i32),
        bounds: [x_lo, y_lo, x_hi, y_hi].map(lanes_i32),
        depth: [zr, dzdx, dzdy].map(|v| v.lanes()),
        edges,
        plain,
        compact,
    };
    ctx.push_lanes(&lanes, live, clipped, vertices, idx, cull, out)
}

/// Vertices per call of [`vertices`].
pub(super) const VERTEX_LANES: usize = 8;

/// Transforms the (1 to [`VERTEX_LANES`]) `positions` by `m` into `out`, as
/// `ctx.vertex(m * p.extend(1.0))` does one by one, with the same bits (the AVX-512 transform's
/// steps, [`super::avx512::vertices`], in eight lanes with the masks as vectors).
///
/// # Safety
/// The CPU must support AVX2 ([`usable`]); `out` is as long as `positions`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn vertices(ctx: &Context, m: &Mat4, positions: &[Vec3], out: &mut [Vertex]) {
    let n = positions.len();
    debug_assert!((1..=VERTEX_LANES).contains(&n) && out.len() == n);
    // The positions' components, lane by lane (missing lanes 0).
    let mut p = [[0.0f32; VERTEX_LANES]; 3];
    for (l, v) in positions.iter().enumerate() {
        (p[0][l], p[1][l], p[2][l]) = (v.x, v.y, v.z);
    }
    // SAFETY: each array holds eight f32s.
    let [px, py, pz] = p.map(|c| unsafe { _mm256_loadu_ps(c.as_ptr()) });
    let one = _mm256_set1_ps(1.0);
    let row = |r: usize| {
        let col = |v: Vec4| _mm256_set1_ps(v[r]);
        let mut res = _mm256_mul_ps(col(m.x_axis), px);
        res = _mm256_add_ps(res, _mm256_mul_ps(col(m.y_axis), py));
        res = _mm256_add_ps(res, _mm256_mul_ps(col(m.z_axis), pz));
        _mm256_add_ps(res, _mm256_mul_ps(col(m.w_axis), one))
    };
    let (x, y, z, w) = (row(0), row(1), row(2), row(3));

    // `Context::vertex`, the masks as all-ones lanes. Not finite: v − v is not 0.
    let zero = _mm256_setzero_ps();
    let bad = |v: __m256| _mm256_cmp_ps::<_CMP_NEQ_UQ>(_mm256_sub_ps(v, v), zero);
    let not_finite = _mm256_or_ps(_mm256_or_ps(bad(x), bad(y)), _mm256_or_ps(bad(z), bad(w)));
    let lt = |a: __m256, b: __m256| _mm256_cmp_ps::<_CMP_LT_OQ>(a, b);
    let bit = |k: __m256, plane: u16| {
        _mm256_and_si256(_mm256_castps_si256(k), _mm256_set1_epi32(i32::from(plane)))
    };
    let (gx, gy) = (_mm256_set1_ps(ctx.guard_x), _mm256_set1_ps(ctx.guard_y));
    let planes = [
        bit(lt(_mm256_sub_ps(w, _mm256_set1_ps(W_MIN)), zero), PLANE_W),
        bit(lt(z, zero), PLANE_NEAR),
        bit(lt(_mm256_sub_ps(w, z), zero), PLANE_FAR),
        bit(lt(_mm256_add_ps(x, _mm256_mul_ps(gx, w)), zero), PLANE_LEFT),
        bit(
            lt(_mm256_sub_ps(_mm256_mul_ps(gx, w), x), zero),
            PLANE_RIGHT,
        ),
        bit(
            lt(_mm256_add_ps(y, _mm256_mul_ps(gy, w)), zero),
            PLANE_BOTTOM,
        ),
        bit(lt(_mm256_sub_ps(_mm256_mul_ps(gy, w), y), zero), PLANE_TOP),
    ]
    .into_iter()
    .fold(_mm256_setzero_si256(), |acc, b| _mm256_or_si256(acc, b));
    let neg_w = _mm256_sub_ps(zero, w);
    let view = [
        bit(lt(x, neg_w), VIEW_LEFT),
        bit(lt(w, x), VIEW_RIGHT),
        bit(lt(y, neg_w), VIEW_BOTTOM),
        bit(lt(w, y), VIEW_TOP),
    ]
    .into_iter()
    .fold(_mm256_setzero_si256(), |acc, b| _mm256_or_si256(acc, b));
    let clip_mask = _mm256_set1_epi32(i32::from(ctx.clip_mask));
    let mut code = _mm256_or_si256(_mm256_and_si256(planes, clip_mask), view);
    let finite = _mm256_xor_si256(_mm256_castps_si256(not_finite), _mm256_set1_epi32(-1));
    // Inside every clip plane in force, and finite: projected.
    let inside = _mm256_and_si256(
        _mm256_cmpeq_epi32(_mm256_and_si256(code, clip_mask), _mm256_setzero_si256()),
        finite,
    );
    let inv = _mm256_div_ps(one, w);
    let sx = _mm256_mul_ps(
        _mm256_add_ps(_mm256_mul_ps(x, inv), one),
        _mm256_set1_ps(ctx.scale_x),
    );
    let sy = _mm256_mul_ps(
        _mm256_sub_ps(one, _mm256_mul_ps(y, inv)),
        _mm256_set1_ps(ctx.scale_y),
    );
    let sz = _mm256_mul_ps(z, inv);
    let abs = |v: __m256| _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX)));
    let limit = _mm256_set1_ps(FIXED_LIMIT);
    let fits = |v: __m256| _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LE_OQ>(abs(v), limit));
    let projected = _mm256_and_si256(
        _mm256_and_si256(
            inside,
            _mm256_andnot_si256(_mm256_castps_si256(bad(sz)), fits(sx)),
        ),
        fits(sy),
    );
    // A vertex that could not be projected is not finite; one not finite is nothing else.
    let non_finite = _mm256_set1_epi32(i32::from(NON_FINITE));
    code = _mm256_or_si256(
        code,
        _mm256_and_si256(_mm256_andnot_si256(projected, inside), non_finite),
    );
    code = _mm256_blendv_epi8(code, non_finite, _mm256_castps_si256(not_finite));
    let fx = _mm256_and_si256(_mm256_cvtps_epi32(sx), projected);
    let fy = _mm256_and_si256(_mm256_cvtps_epi32(sy), projected);
    let fz = _mm256_and_si256(_mm256_castps_si256(sz), projected);

    // Records of eight 4-byte words: clip x, y, z, w, x, y, z, code (pad 0): an 8 × 8
    // transpose.
    let cast = _mm256_castps_si256;
    let r = [cast(x), cast(y), cast(z), cast(w), fx, fy, fz, code];
    let a: [__m256i; 8] = std::array::from_fn(|i| {
        let (p, q) = (r[i & !1], r[i | 1]);
        if i & 1 == 0 {
            _mm256_unpacklo_epi32(p, q)
        } else {
            _mm256_unpackhi_epi32(p, q)
        }
    });
    // a[2k]: words 2k, 2k + 1 of lanes 0, 1 | 4, 5; a[2k + 1]: of lanes 2, 3 | 6, 7.
    let b: [__m256i; 8] = std::array::from_fn(|i| {
        let (h, j) = (i / 4, i % 4);
        let (p, q) = (a[4 * h + (j & 1)], a[4 * h + 2 + (j & 1)]);
        if j < 2 {
            _mm256_unpacklo_epi64(p, q)
        } else {
            _mm256_unpackhi_epi64(p, q)
        }
    });
    // b[4h + j]: words 4h..4h + 4 of lanes (j = 0: 0 | 4; 1: 2 | 6; 2: 1 | 5; 3: 3 | 7).
    let lane_of = [0usize, 2, 1, 3];
    let dst = out.as_mut_ptr().cast::<__m256i>();
    for (j, &l) in lane_of.iter().enumerate() {
        for (half, sel) in [(0usize, 0x20), (1, 0x31)] {
            let rec = if sel == 0x20 {
                _mm256_permute2x128_si256::<0x20>(b[j], b[4 + j])
            } else {
                _mm256_permute2x128_si256::<0x31>(b[j], b[4 + j])
            };
            let lane = l + 4 * half;
            if lane < n {
                // SAFETY: record `lane` is inside `out`; it is written whole (its fields any
                // bits, its pad 0).
                unsafe { _mm256_storeu_si256(dst.add(lane), rec) };
            }
        }
    }
}

/// Two 32-bit lanes of eight as one 64-bit word each, `lo` in the low half: lanes 0–3, then
/// 4–7.
#[inline]
#[target_feature(enable = "avx2")]
fn words(lo: __m256i, hi: __m256i) -> [__m256i; 2] {
    let (a, b) = (_mm256_unpacklo_epi32(lo, hi), _mm256_unpackhi_epi32(lo, hi));
    // a: lanes 0, 1, 4, 5; b: lanes 2, 3, 6, 7.
    [
        _mm256_permute2x128_si256::<0x20>(a, b),
        _mm256_permute2x128_si256::<0x31>(a, b),
    ]
}

/// The f64 lanes as 64-bit words: lanes 0–3, then 4–7.
#[inline]
#[target_feature(enable = "avx2")]
fn f64_words(v: F64x8) -> [__m256i; 2] {
    [_mm256_castpd_si256(v.0[0]), _mm256_castpd_si256(v.0[1])]
}

/// Pushes the records of the lanes in `live`, in lane order, onto `out`: word w of record l is
/// `rows[w]` lane l (the layout `Tri`'s C order gives, which the AVX-512 set-up checks), four
/// records of four words transposed at a time, and each record written with two stores.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn push_all(out: &mut Vec<Tri>, live: u8, rows: [[__m256i; 2]; 8]) {
    // Words 0–3 or 4–7 (`q`) of records 0–3 or 4–7 (`h`): a 4 × 4 transpose.
    let quarter = |q: usize, h: usize| {
        let r = [0, 1, 2, 3].map(|w| rows[4 * q + w][h]);
        let (a, b) = (
            _mm256_unpacklo_epi64(r[0], r[1]),
            _mm256_unpackhi_epi64(r[0], r[1]),
        );
        let (c, d) = (
            _mm256_unpacklo_epi64(r[2], r[3]),
            _mm256_unpackhi_epi64(r[2], r[3]),
        );
        // a: (r0, r1) of records 0 and 2; b: of 1 and 3; c, d: (r2, r3) likewise.
        [
            _mm256_permute2x128_si256::<0x20>(a, c),
            _mm256_permute2x128_si256::<0x20>(b, d),
            _mm256_permute2x128_si256::<0x31>(a, c),
            _mm256_permute2x128_si256::<0x31>(b, d),
        ]
    };
    out.reserve(LANES);
    let len = out.len();
    // SAFETY: room for eight records past `len` was reserved; each is written whole (two
    // 32-byte stores) with a valid value (its flags 0 or 1, its padding 0). Every lane is
    // stored at the place of the live lanes before it, so a culled lane's record is
    // overwritten by the next live lane's or lies past the new length.
    unsafe {
        let at = out.as_mut_ptr().add(len).cast::<__m256i>();
        let mut k = 0;
        for h in 0..2 {
            let (first, second) = (quarter(0, h), quarter(1, h));
            for j in 0..4 {
                _mm256_storeu_si256(at.add(2 * k), first[j]);
                _mm256_storeu_si256(at.add(2 * k + 1), second[j]);
                k += usize::from((live >> (4 * h + j)) & 1);
            }
        }
        out.set_len(len + k);
    }
}

/// The corner of eight triangles whose vertices `index` names, gathered from `vertices`.
///
/// # Safety
/// The CPU must support AVX2; every index names a vertex of `vertices`, at most
/// `MAX_VERTICES` of them.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn corner(vertices: &[Vertex], index: [i32; LANES]) -> Corner {
    // SAFETY: `index` holds eight i32s.
    let index = unsafe { _mm256_loadu_si256(index.as_ptr().cast()) };
    // A vertex is 32 bytes: eight 4-byte steps; x, y, z and code + pad are words 4 to 7.
    let at = _mm256_slli_epi32::<3>(index);
    let base = vertices.as_ptr().cast::<i32>();
    let word = |w: i32| {
        // SAFETY: word w of a vertex of `vertices` is inside it and initialised.
        unsafe { _mm256_i32gather_epi32::<4>(base, _mm256_add_epi32(at, _mm256_set1_epi32(w))) }
    };
    Corner {
        x: word(4),
        y: word(5),
        z: _mm256_castsi256_ps(word(6)),
        code: word(7),
    }
}
