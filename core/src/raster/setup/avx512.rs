//! Triangle set-up eight triangles at a time, with AVX-512 (F, BW, VL and DQ).
//!
//! The common case of [`Context::triangle`] runs here in vector lanes: no corner outside a clip
//! plane, no depth bias. Any other triangle goes to the scalar set-up in its turn, so `out`
//! receives the same records in the same order.
//!
//! The records are the same bit for bit because each step repeats the scalar one:
//! * The integer steps run in 32-bit lanes. Snapped coordinates are at most 2²⁵ in magnitude
//!   (`FIXED_LIMIT`), so their differences fit.
//! * Twice the area runs in f64 lanes, and it is exact there. The differences are below 2²⁶,
//!   so each product is an integer below 2⁵², and their difference is below 2⁵³.
//! * The depth plane and the record's depths take the scalar code's f64 operations in the
//!   same order. Rust never fuses a multiply and an add.
//!
//! The vertex transform runs sixteen vertices at a time in the same way ([`vertices`]).
//!
//! The tests in `setup::tests` compare the two paths over random and edge inputs.

use std::arch::x86_64::*;
use std::mem::offset_of;

use glam::{Mat4, Vec3, Vec4};

use super::{
    Context, CullMode, FIXED_LIMIT, HALF, Lanes8, NON_FINITE, PLANE_BOTTOM, PLANE_FAR, PLANE_LEFT,
    PLANE_NEAR, PLANE_RIGHT, PLANE_TOP, PLANE_W, SUB_BITS, Tri, VIEW_BOTTOM, VIEW_LEFT, VIEW_RIGHT,
    VIEW_TOP, Vertex, W_MIN,
};

/// Triangles per call of [`triangles`].
pub(super) const LANES: usize = 8;

/// Most vertices that the gathers' 32-bit offsets (4 per 32-byte vertex) can reach.
const MAX_VERTICES: usize = 1 << 28;

const _: () = assert!(size_of::<Vertex>() == 32);

/// Whether [`triangles`] may run on this CPU for a mesh with these vertices.
pub(super) fn usable(vertices: &[Vertex]) -> bool {
    vertices.len() <= MAX_VERTICES
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512dq")
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
/// The CPU must support AVX-512 F, BW, VL and DQ ([`usable`]), and `vertices.len()` be at most
/// `MAX_VERTICES`. `idx` holds 3 to `3 · LANES` indices, a multiple of 3 (a [`Mesh`]'s all
/// name a vertex; a batch with one that does not goes to the scalar set-up, which panics on it
/// as it always did).
///
/// [`Mesh`]: crate::raster::Mesh
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
pub(super) unsafe fn triangles(
    ctx: &Context,
    vertices: &[Vertex],
    idx: &[u32],
    cull: Option<CullMode>,
    out: &mut Vec<Tri>,
) -> u64 {
    let n = idx.len() / 3;
    debug_assert!((1..=LANES).contains(&n) && idx.len() == 3 * n);
    debug_assert!(vertices.len() <= MAX_VERTICES);
    // SAFETY: the CPU features are the caller's contract.
    let Some([c0, c1, c2]) = (unsafe { corners(vertices, idx) }) else {
        // An index names no vertex: the scalar set-up's slice indexing reports it.
        return ctx.one_by_one(vertices, idx, cull, out);
    };
    // Lanes past the last triangle are not triangles.
    let absent = !((1u16 << n) - 1) as __mmask8;

    // Dropped outright: a corner not finite, or all three outside one plane. Handed to the
    // scalar set-up: a corner outside a clip plane in force (to be cut).
    let any = _mm256_or_si256(_mm256_or_si256(c0.code, c1.code), c2.code);
    let all = _mm256_and_si256(_mm256_and_si256(c0.code, c1.code), c2.code);
    let dropped = _mm256_test_epi32_mask(any, _mm256_set1_epi32(i32::from(NON_FINITE)))
        | _mm256_test_epi32_mask(all, all)
        | absent;
    let clipped =
        _mm256_test_epi32_mask(any, _mm256_set1_epi32(i32::from(ctx.clip_mask))) & !dropped;
    let mut live: __mmask8 = !(dropped | clipped);

    // Twice the signed area (`area2`), exact in f64.
    let diff = |a: __m256i, b: __m256i| _mm512_cvtepi32_pd(_mm256_sub_epi32(a, b));
    let area = _mm512_sub_pd(
        _mm512_mul_pd(diff(c1.x, c0.x), diff(c2.y, c0.y)),
        _mm512_mul_pd(diff(c1.y, c0.y), diff(c2.x, c0.x)),
    );
    let zero = _mm512_setzero_pd();
    let clockwise = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(area, zero);
    let nonzero = _mm512_cmp_pd_mask::<_CMP_NEQ_OQ>(area, zero);
    // `Context::culled`: front-facing is clockwise unless fronts are counter-clockwise.
    let front = if ctx.front_ccw { !clockwise } else { clockwise };
    let kept = match cull.unwrap_or(ctx.cull) {
        CullMode::None => !0,
        CullMode::Front => !front,
        CullMode::Back => front,
    };
    live &= nonzero & kept;

    // Counter-clockwise triangles swap corners 1 and 2.
    let x1 = _mm256_mask_blend_epi32(clockwise, c2.x, c1.x);
    let x2 = _mm256_mask_blend_epi32(clockwise, c1.x, c2.x);
    let y1 = _mm256_mask_blend_epi32(clockwise, c2.y, c1.y);
    let y2 = _mm256_mask_blend_epi32(clockwise, c1.y, c2.y);
    let z1 = _mm256_mask_blend_ps(clockwise, c2.z, c1.z);
    let z2 = _mm256_mask_blend_ps(clockwise, c1.z, c2.z);
    let (x0, y0) = (c0.x, c0.y);

    // `plane`: the depth's slopes per pixel.
    let z0 = _mm512_cvtps_pd(c0.z);
    let (z1, z2) = (_mm512_cvtps_pd(z1), _mm512_cvtps_pd(z2));
    let (dz1, dz2) = (_mm512_sub_pd(z1, z0), _mm512_sub_pd(z2, z0));
    let (ex1, ey1, ex2, ey2) = (diff(x1, x0), diff(y1, y0), diff(x2, x0), diff(y2, y0));
    let scale = _mm512_div_pd(
        _mm512_set1_pd(f64::from(1u32 << SUB_BITS)),
        _mm512_abs_pd(area),
    );
    let dzdx = _mm512_mul_pd(
        _mm512_sub_pd(_mm512_mul_pd(dz1, ey2), _mm512_mul_pd(dz2, ey1)),
        scale,
    );
    let dzdy = _mm512_mul_pd(
        _mm512_sub_pd(_mm512_mul_pd(dz2, ex1), _mm512_mul_pd(dz1, ex2)),
        scale,
    );
    // NaN (0x01, 0x80) and ±infinity (0x08, 0x10).
    let not_finite = |v: __m512d| _mm512_fpclass_pd_mask::<0x99>(v);
    live &= !(not_finite(dzdx) | not_finite(dzdy));

    // `emit`: the pixel bounds.
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
        _mm256_max_epi32(c, _mm256_setzero_si256())
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
    live &= _mm256_cmple_epi32_mask(x_lo, x_hi) & _mm256_cmple_epi32_mask(y_lo, y_hi);
    if live | clipped == 0 {
        return 0;
    }

    // Top-left edges: clockwise with y down, a left edge runs up, a top edge to the right.
    let top_left = |(xa, ya): (__m256i, __m256i), (xb, yb): (__m256i, __m256i)| {
        let (dx, dy) = (_mm256_sub_epi32(xb, xa), _mm256_sub_epi32(yb, ya));
        let z = _mm256_setzero_si256();
        _mm256_cmplt_epi32_mask(dy, z)
            | (_mm256_cmpeq_epi32_mask(dy, z) & _mm256_cmpgt_epi32_mask(dx, z))
    };
    let edges = [
        top_left((x0, y0), (x1, y1)),
        top_left((x1, y1), (x2, y2)),
        top_left((x2, y2), (x0, y0)),
    ];

    // Whether every depth inside lies in [2⁻¹²⁶, 1] (no depth bias here: it adds 0.0).
    let z_min = _mm512_add_pd(_mm512_min_pd(_mm512_min_pd(z0, z1), z2), zero);
    let z_max = _mm512_add_pd(_mm512_max_pd(_mm512_max_pd(z0, z1), z2), zero);
    let sub = _mm512_set1_pd(f64::from(1u32 << SUB_BITS));
    let one = _mm512_set1_pd(1.0);
    let reach = |lo: __m256i, hi: __m256i| {
        _mm512_add_pd(
            _mm512_div_pd(_mm512_cvtepi32_pd(_mm256_sub_epi32(hi, lo)), sub),
            one,
        )
    };
    let slack = _mm512_mul_pd(
        _mm512_add_pd(
            _mm512_add_pd(
                _mm512_add_pd(_mm512_abs_pd(z_max), _mm512_abs_pd(z_min)),
                _mm512_mul_pd(_mm512_abs_pd(dzdx), reach(min_x, max_x)),
            ),
            _mm512_mul_pd(_mm512_abs_pd(dzdy), reach(min_y, max_y)),
        ),
        _mm512_set1_pd(f64::from(f32::EPSILON).powi(2)),
    );
    let plain = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(
        _mm512_sub_pd(z_min, slack),
        _mm512_set1_pd(f64::from(f32::MIN_POSITIVE) * 2.0),
    ) & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(_mm512_add_pd(z_max, slack), one);

    // The depth at the centre of the bounds' first pixel.
    let centre = |lo: __m256i, o: __m256i| {
        let fixed = _mm256_sub_epi32(
            _mm256_add_epi32(
                _mm256_slli_epi32::<{ SUB_BITS as i32 }>(lo),
                _mm256_set1_epi32(half),
            ),
            o,
        );
        _mm512_div_pd(_mm512_cvtepi32_pd(fixed), sub)
    };
    let zr = _mm512_add_pd(
        _mm512_add_pd(
            _mm512_add_pd(z0, zero),
            _mm512_mul_pd(dzdx, centre(x_lo, x0)),
        ),
        _mm512_mul_pd(dzdy, centre(y_lo, y0)),
    );
    let span = _mm256_set1_epi32(super::COMPACT_SPAN << SUB_BITS);
    let compact = _mm256_cmple_epi32_mask(_mm256_sub_epi32(max_x, min_x), span)
        & _mm256_cmple_epi32_mask(_mm256_sub_epi32(max_y, min_y), span);

    if clipped == 0 {
        // SAFETY: the CPU features are the caller's contract.
        unsafe {
            push_all(
                out,
                live,
                &[x0, x1, x2],
                &[y0, y1, y2],
                [x_lo, y_lo, x_hi, y_hi],
                [zr, dzdx, dzdy],
                edges,
                plain,
                compact,
            )
        };
        return u64::from(live.count_ones());
    }

    let lanes_i32 = |v: __m256i| {
        let mut a = [0i32; LANES];
        // SAFETY: `a` holds 8 i32s; an unaligned store.
        unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) };
        a
    };
    let lanes_f64 = |v: __m512d| {
        let mut a = [0f64; LANES];
        // SAFETY: `a` holds 8 f64s; an unaligned store.
        unsafe { _mm512_storeu_pd(a.as_mut_ptr(), v) };
        a
    };
    let lanes = Lanes8 {
        x: [x0, x1, x2].map(lanes_i32),
        y: [y0, y1, y2].map(lanes_i32),
        bounds: [x_lo, y_lo, x_hi, y_hi].map(lanes_i32),
        depth: [zr, dzdx, dzdy].map(lanes_f64),
        edges,
        plain,
        compact,
    };
    ctx.push_lanes(&lanes, live, clipped, vertices, idx, cull, out)
}

/// Two 32-bit lanes as one 64-bit word, `lo` in the low half.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn words(lo: __m256i, hi: __m256i) -> __m512i {
    _mm512_or_si512(
        _mm512_cvtepu32_epi64(lo),
        _mm512_slli_epi64::<32>(_mm512_cvtepu32_epi64(hi)),
    )
}

/// Vertices per call of [`vertices`].
pub(super) const VERTEX_LANES: usize = 16;

/// Transforms the (1 to [`VERTEX_LANES`]) `positions` by `m` into `out`, as
/// `ctx.vertex(m * p.extend(1.0))` does one by one, with the same bits: glam's product
/// (`((x_axis·x + y_axis·y) + z_axis·z) + w_axis·1`, no fused operations), the same plane
/// tests, projection and rounding (to nearest even, as the scalar conversion).
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL and DQ ([`usable`]); `out` is as long as
/// `positions`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
pub(super) unsafe fn vertices(ctx: &Context, m: &Mat4, positions: &[Vec3], out: &mut [Vertex]) {
    let n = positions.len();
    debug_assert!((1..=VERTEX_LANES).contains(&n) && out.len() == n);
    // The 3n floats of the positions, in three vectors (missing ones read as 0).
    let floats = positions.as_ptr().cast::<f32>();
    let load = |k: usize| {
        let count = (3 * n).saturating_sub(16 * k).min(16);
        let mask = ((1u32 << count) - 1) as __mmask16;
        // SAFETY: the masked load reads only the floats its mask selects, inside `positions`.
        unsafe { _mm512_maskz_loadu_ps(mask, floats.wrapping_add(16 * k)) }
    };
    let (a, b, c) = (load(0), load(1), load(2));
    // Lane l takes float 3l + k: from `a`, `b` (below 32) in a first step, `c` in a second.
    let component = |k: i32| {
        let first: [i32; 16] = std::array::from_fn(|l| (3 * l as i32 + k).min(31));
        let second: [i32; 16] = std::array::from_fn(|l| {
            let f = 3 * l as i32 + k;
            if f < 32 { l as i32 } else { 16 + f - 32 }
        });
        // SAFETY: reads of two 16-lane arrays.
        let (first, second) = unsafe {
            (
                _mm512_loadu_si512(first.as_ptr().cast()),
                _mm512_loadu_si512(second.as_ptr().cast()),
            )
        };
        let ab = _mm512_permutex2var_ps(a, first, b);
        _mm512_permutex2var_ps(ab, second, c)
    };
    let (px, py, pz) = (component(0), component(1), component(2));
    let one = _mm512_set1_ps(1.0);
    let row = |r: usize| {
        let col = |v: Vec4| _mm512_set1_ps(v[r]);
        let mut res = _mm512_mul_ps(col(m.x_axis), px);
        res = _mm512_add_ps(res, _mm512_mul_ps(col(m.y_axis), py));
        res = _mm512_add_ps(res, _mm512_mul_ps(col(m.z_axis), pz));
        _mm512_add_ps(res, _mm512_mul_ps(col(m.w_axis), one))
    };
    let (x, y, z, w) = (row(0), row(1), row(2), row(3));

    // `Context::vertex`: NaN and ±infinity are classes 0x01, 0x80, 0x08, 0x10.
    let bad = |v: __m512| _mm512_fpclass_ps_mask::<0x99>(v);
    let not_finite = bad(x) | bad(y) | bad(z) | bad(w);
    let zero = _mm512_setzero_ps();
    let below = |v: __m512| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(v, zero);
    let bit = |k: __mmask16, plane: u16| _mm512_maskz_set1_epi32(k, i32::from(plane));
    let (gx, gy) = (_mm512_set1_ps(ctx.guard_x), _mm512_set1_ps(ctx.guard_y));
    let planes = [
        bit(below(_mm512_sub_ps(w, _mm512_set1_ps(W_MIN))), PLANE_W),
        bit(below(z), PLANE_NEAR),
        bit(below(_mm512_sub_ps(w, z)), PLANE_FAR),
        bit(below(_mm512_add_ps(x, _mm512_mul_ps(gx, w))), PLANE_LEFT),
        bit(below(_mm512_sub_ps(_mm512_mul_ps(gx, w), x)), PLANE_RIGHT),
        bit(below(_mm512_add_ps(y, _mm512_mul_ps(gy, w))), PLANE_BOTTOM),
        bit(below(_mm512_sub_ps(_mm512_mul_ps(gy, w), y)), PLANE_TOP),
    ]
    .into_iter()
    .fold(_mm512_setzero_si512(), |acc, b| _mm512_or_si512(acc, b));
    let neg_w = _mm512_sub_ps(zero, w);
    let lt = |a: __m512, b: __m512| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b);
    let view = [
        bit(lt(x, neg_w), VIEW_LEFT),
        bit(lt(w, x), VIEW_RIGHT),
        bit(lt(y, neg_w), VIEW_BOTTOM),
        bit(lt(w, y), VIEW_TOP),
    ]
    .into_iter()
    .fold(_mm512_setzero_si512(), |acc, b| _mm512_or_si512(acc, b));
    let clip_mask = _mm512_set1_epi32(i32::from(ctx.clip_mask));
    let mut code = _mm512_or_si512(_mm512_and_si512(planes, clip_mask), view);
    // Inside every clip plane in force (and finite): projected.
    let inside = !_mm512_test_epi32_mask(code, clip_mask) & !not_finite;
    let inv = _mm512_div_ps(one, w);
    let sx = _mm512_mul_ps(
        _mm512_add_ps(_mm512_mul_ps(x, inv), one),
        _mm512_set1_ps(ctx.scale_x),
    );
    let sy = _mm512_mul_ps(
        _mm512_sub_ps(one, _mm512_mul_ps(y, inv)),
        _mm512_set1_ps(ctx.scale_y),
    );
    let sz = _mm512_mul_ps(z, inv);
    let limit = _mm512_set1_ps(FIXED_LIMIT);
    let fits = |v: __m512| _mm512_cmp_ps_mask::<_CMP_LE_OQ>(_mm512_abs_ps(v), limit);
    let projected = inside & fits(sx) & fits(sy) & !bad(sz);
    // A vertex that could not be projected is not finite; one not finite is nothing else.
    code = _mm512_mask_or_epi32(
        code,
        inside & !projected,
        code,
        _mm512_set1_epi32(i32::from(NON_FINITE)),
    );
    code = _mm512_mask_set1_epi32(code, not_finite, i32::from(NON_FINITE));
    let fx = _mm512_maskz_cvtps_epi32(projected, sx);
    let fy = _mm512_maskz_cvtps_epi32(projected, sy);
    let fz = _mm512_maskz_mov_ps(projected, sz);

    // Records of 32 bytes: clip x y | clip z w | x y | z, code (pad 0).
    let fields = [
        _mm512_castps_si512(x),
        _mm512_castps_si512(y),
        _mm512_castps_si512(z),
        _mm512_castps_si512(w),
        fx,
        fy,
        _mm512_castps_si512(fz),
        code,
    ];
    // Vertices 0–7, then 8–15.
    let halves = [
        fields.map(|v| _mm512_castsi512_si256(v)),
        fields.map(|v| _mm512_extracti64x4_epi64::<1>(v)),
    ];
    let dst = out.as_mut_ptr().cast::<__m512i>();
    for (h, f) in halves.iter().enumerate() {
        let r: [__m512i; 4] = std::array::from_fn(|k| words(f[2 * k], f[2 * k + 1]));
        let s = [
            _mm512_unpacklo_epi64(r[0], r[1]),
            _mm512_unpackhi_epi64(r[0], r[1]),
            _mm512_unpacklo_epi64(r[2], r[3]),
            _mm512_unpackhi_epi64(r[2], r[3]),
        ];
        for j in 0..4 {
            let j64 = 2 * j as i64;
            let pick = _mm512_setr_epi64(j64, j64 + 1, 8 + j64, 9 + j64, 0, 0, 0, 0);
            let lo = _mm512_permutex2var_epi64(s[0], pick, s[2]);
            let hi = _mm512_permutex2var_epi64(s[1], pick, s[3]);
            let two = _mm512_shuffle_i64x2::<0x44>(lo, hi);
            // Records 8h + 2j and 8h + 2j + 1.
            let first = 8 * h + 2 * j;
            let mask = match n.saturating_sub(first) {
                0 => 0,
                1 => 0x0F,
                _ => 0xFF,
            };
            // SAFETY: the masked store writes only records below n, inside `out`, each
            // whole (its fields any bits, its pad 0).
            unsafe { _mm512_mask_storeu_epi64(dst.wrapping_add(first / 2).cast(), mask, two) };
        }
    }
}

// `push_all` writes a record as eight 8-byte words: x0 x1 | x2 y0 | y1 y2 | bbox | zr | dzdx |
// dzdy | top_left, plain, compact.
const _: () = {
    assert!(size_of::<Tri>() == 64);
    assert!(offset_of!(Tri, x) == 0 && offset_of!(Tri, y) == 12 && offset_of!(Tri, bbox) == 24);
    assert!(
        offset_of!(Tri, zr) == 32 && offset_of!(Tri, dzdx) == 40 && offset_of!(Tri, dzdy) == 48
    );
    assert!(offset_of!(Tri, top_left) == 56 && offset_of!(Tri, plain) == 57);
    assert!(offset_of!(Tri, compact) == 58);
};

/// Pushes the records of the lanes in `live`, in lane order, onto `out`: the lanes' fields
/// are put together as 8-byte words and transposed, eight records of eight words, and each
/// record is written whole.
///
/// # Safety
/// The CPU must support AVX-512 F and VL.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
unsafe fn push_all(
    out: &mut Vec<Tri>,
    live: __mmask8,
    x: &[__m256i; 3],
    y: &[__m256i; 3],
    bounds: [__m256i; 4],
    depth: [__m512d; 3],
    edges: [__mmask8; 3],
    plain: __mmask8,
    compact: __mmask8,
) {
    let [x_lo, y_lo, x_hi, y_hi] = bounds;
    let corner = |b: __m256i, a: __m256i| _mm256_or_si256(a, _mm256_slli_epi32::<16>(b));
    let flag = |k: __mmask8, v: i32| _mm256_maskz_mov_epi32(k, _mm256_set1_epi32(v));
    let flags = _mm256_or_si256(
        _mm256_or_si256(
            _mm256_or_si256(flag(edges[0], 1), flag(edges[1], 2)),
            _mm256_or_si256(flag(edges[2], 4), flag(plain, 1 << 8)),
        ),
        flag(compact, 1 << 16),
    );
    let rows = [
        words(x[0], x[1]),
        words(x[2], y[0]),
        words(y[1], y[2]),
        words(corner(y_lo, x_lo), corner(y_hi, x_hi)),
        _mm512_castpd_si512(depth[0]),
        _mm512_castpd_si512(depth[1]),
        _mm512_castpd_si512(depth[2]),
        _mm512_cvtepu32_epi64(flags),
    ];
    // Transpose: word w of record l is rows[w] lane l.
    let t: [__m512i; 8] = std::array::from_fn(|i| {
        let (a, b) = (rows[i & !1], rows[i | 1]);
        if i & 1 == 0 {
            _mm512_unpacklo_epi64(a, b)
        } else {
            _mm512_unpackhi_epi64(a, b)
        }
    });
    // t[2p + h] holds rows 2p, 2p + 1 at lanes h, h + 2, h + 4, h + 6.
    let low = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    let high = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    // u[q][j]: rows 4q..4q + 4 of lanes j and j + 4.
    let u: [[__m512i; 4]; 2] = std::array::from_fn(|q| {
        let (a0, a1, b0, b1) = (t[4 * q], t[4 * q + 1], t[4 * q + 2], t[4 * q + 3]);
        [
            _mm512_permutex2var_epi64(a0, low, b0),
            _mm512_permutex2var_epi64(a1, low, b1),
            _mm512_permutex2var_epi64(a0, high, b0),
            _mm512_permutex2var_epi64(a1, high, b1),
        ]
    });
    let first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    let second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
    let records: [__m512i; 8] = std::array::from_fn(|l| {
        let pick = if l < 4 { first } else { second };
        _mm512_permutex2var_epi64(u[0][l % 4], pick, u[1][l % 4])
    });
    out.reserve(LANES);
    let len = out.len();
    // SAFETY: room for eight records past `len` was reserved; a record is 64 bytes at a
    // 64-byte boundary (`Tri`'s alignment), and each is written whole with a valid value
    // (its flags are 0 or 1, its padding 0). Every lane is stored, at the place of the live
    // lanes before it, so a culled lane's store is overwritten by the next live lane's or
    // lies past the new length.
    unsafe {
        let at = out.as_mut_ptr().add(len).cast::<__m512i>();
        let mut k = 0;
        for (l, r) in records.into_iter().enumerate() {
            _mm512_store_si512(at.add(k), r);
            k += usize::from((live >> l) & 1);
        }
        out.set_len(len + k);
    }
}

/// The three corners of the eight triangles of `idx`, gathered from `vertices`; `None` if an
/// index names no vertex (nothing is gathered then).
///
/// # Safety
/// As [`triangles`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
unsafe fn corners(vertices: &[Vertex], idx: &[u32]) -> Option<[Corner; 3]> {
    // The indices, 16 and up to 8 more; missing ones read as 0, a vertex of the mesh once the
    // indices are checked (`idx` names at least one, so there is one).
    let len = idx.len().min(3 * LANES);
    let lo_mask = ((1u32 << len.min(16)) - 1) as __mmask16;
    let hi_mask = ((1u32 << len.saturating_sub(16)) - 1) as __mmask16;
    // SAFETY: masked loads read only the elements their masks select, all inside `idx`.
    let (lo, hi) = unsafe {
        (
            _mm512_maskz_loadu_epi32(lo_mask, idx.as_ptr().cast()),
            _mm512_maskz_loadu_epi32(hi_mask, idx.as_ptr().wrapping_add(16).cast()),
        )
    };
    // Every index below the vertex count (`MAX_VERTICES` fits an i32), compared unsigned.
    let count = _mm512_set1_epi32(vertices.len() as i32);
    if _mm512_mask_cmpge_epu32_mask(lo_mask, lo, count)
        | _mm512_mask_cmpge_epu32_mask(hi_mask, hi, count)
        != 0
    {
        return None;
    }
    let base = vertices.as_ptr().cast::<u8>();
    Some(std::array::from_fn(|c| {
        let c = c as i32;
        // Lane l takes index 3l + c of the 24 (16 and up from `hi`).
        let pick = _mm512_setr_epi32(
            c,
            c + 3,
            c + 6,
            c + 9,
            c + 12,
            c + 15,
            c + 18,
            c + 21,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        );
        let index = _mm512_castsi512_si256(_mm512_permutex2var_epi32(lo, pick, hi));
        // A vertex is 32 bytes: four 8-byte steps.
        let offsets = _mm256_slli_epi32::<2>(index);
        // SAFETY: every index names a vertex of `vertices` (checked above), whose x, y and
        // z, code (+ pad) words are 8 bytes each, inside it and initialised.
        let (xy, zc) = unsafe {
            (
                _mm512_i32gather_epi64::<8>(offsets, base.add(offset_of!(Vertex, x)).cast()),
                _mm512_i32gather_epi64::<8>(offsets, base.add(offset_of!(Vertex, z)).cast()),
            )
        };
        Corner {
            x: _mm512_cvtepi64_epi32(xy),
            y: _mm512_cvtepi64_epi32(_mm512_srli_epi64::<32>(xy)),
            z: _mm256_castsi256_ps(_mm512_cvtepi64_epi32(zc)),
            code: _mm512_cvtepi64_epi32(_mm512_srli_epi64::<32>(zc)),
        }
    }))
}
