//! The AVX2 kernel: 8 lookups per step, operation for operation the scalar kernel's arithmetic.
//!
//! Each lane's 2×2 footprint is one load from the row-pair key image: 16 bytes (32-bit keys) or
//! 8 bytes (16-bit keys). Scalar loads from spilled indices beat `vpgather` on the CPUs measured
//! (AMD Zen 5), then a transpose puts the keys in lane order.
//!
//! The helpers are `#[inline(always)]` without target features of their own, so that they are
//! inlined into the `#[target_feature(enable = "avx2")]` entry points and compiled with AVX2.

use std::arch::x86_64::*;

use super::{Consts, EQUAL, LESS, NAN_REF};

const LANES: usize = 8;
/// How many steps ahead big images are prefetched.
const AHEAD: usize = 8;

/// Constants splatted once per batch.
pub(super) struct Splat {
    size256: [__m256; 2],
    hi: [__m256i; 2],
    wrap: [__m256; 2],
    floor: __m256,
    stride: __m256i,
    unorm_max: __m256d,
    ref_xor: __m256i,
    ref_add: __m256i,
}

/// An all-ones or all-zeros lane mask.
#[inline(always)]
unsafe fn mask(b: bool) -> __m256 {
    unsafe { _mm256_castsi256_ps(_mm256_set1_epi32(-i32::from(b))) }
}

impl Splat {
    #[inline(always)]
    unsafe fn new(c: &Consts) -> Splat {
        unsafe {
            Splat {
                size256: [_mm256_set1_ps(c.size256[0]), _mm256_set1_ps(c.size256[1])],
                hi: [_mm256_set1_epi32(c.hi[0]), _mm256_set1_epi32(c.hi[1])],
                wrap: [mask(c.wrap[0]), mask(c.wrap[1])],
                floor: mask(c.floor),
                stride: _mm256_set1_epi32(c.stride),
                unorm_max: _mm256_set1_pd(c.unorm_max),
                ref_xor: _mm256_set1_epi32(c.ref_xor),
                ref_add: _mm256_set1_epi32(c.ref_add),
            }
        }
    }
}

/// The lane values of `idx`, as plain loads from a spill (cheaper than lane extractions; the
/// volatile reads keep the compiler from turning them back into extractions).
#[inline(always)]
unsafe fn lanes(idx: __m256i) -> [usize; LANES] {
    let mut ix = [0i32; LANES];
    let mut out = [0usize; LANES];
    unsafe {
        _mm256_storeu_si256(ix.as_mut_ptr().cast(), idx);
        for (o, i) in out.iter_mut().zip(&ix) {
            *o = std::ptr::read_volatile(i) as usize;
        }
    }
    out
}

/// The 16 bytes of entries `i` and `i + 1` of a 32-bit row-pair image.
#[inline(always)]
unsafe fn load16(base: *const i32, i: usize) -> __m128i {
    unsafe { _mm_loadu_si128(base.add(2 * i).cast()) }
}

/// Lanes `i` (low half) and `j` (high half).
#[inline(always)]
unsafe fn load16x2(base: *const i32, i: usize, j: usize) -> __m256i {
    unsafe {
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(load16(base, i)), load16(base, j))
    }
}

/// How the key image is stored and fetched.
pub(super) trait Fetch: Sized {
    /// The four keys of each lane's footprint at entry `idx`: row 0 left/right, row 1 left/right.
    ///
    /// # Safety
    /// AVX2; entries `idx` and `idx + 1` inside the row-pair image at `base`.
    unsafe fn fetch(base: *const Self, idx: __m256i) -> [__m256i; 4];
}

impl Fetch for u16 {
    #[inline(always)]
    unsafe fn fetch(base: *const u16, idx: __m256i) -> [__m256i; 4] {
        unsafe {
            let ix = lanes(idx);
            // One 8-byte load per lane: [k00 k10 k01 k11]. Lanes (0,1,4,5) go to `a` and
            // (2,3,6,7) to `b` so that the in-lane shuffles come out in lane order.
            let ld = |l: usize| base.add(2 * ix[l]).cast::<i64>().read_unaligned();
            let a = _mm256_castsi256_ps(_mm256_setr_epi64x(ld(0), ld(1), ld(4), ld(5)));
            let b = _mm256_castsi256_ps(_mm256_setr_epi64x(ld(2), ld(3), ld(6), ld(7)));
            let left = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(a, b));
            let right = _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(a, b));
            let lo = _mm256_set1_epi32(0xFFFF);
            [
                _mm256_and_si256(left, lo),
                _mm256_and_si256(right, lo),
                _mm256_srli_epi32::<16>(left),
                _mm256_srli_epi32::<16>(right),
            ]
        }
    }
}

impl Fetch for i32 {
    #[inline(always)]
    unsafe fn fetch(base: *const i32, idx: __m256i) -> [__m256i; 4] {
        unsafe {
            let ix = lanes(idx);
            // One 16-byte load per lane: [k00 k10 k01 k11]; lanes i and i + 4 share a register,
            // then a 4×4 transpose per 128-bit half.
            let r = [
                load16x2(base, ix[0], ix[4]),
                load16x2(base, ix[1], ix[5]),
                load16x2(base, ix[2], ix[6]),
                load16x2(base, ix[3], ix[7]),
            ];
            let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
            let t1 = _mm256_unpacklo_epi32(r[2], r[3]);
            let t2 = _mm256_unpackhi_epi32(r[0], r[1]);
            let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
            [
                _mm256_unpacklo_epi64(t0, t1),
                _mm256_unpacklo_epi64(t2, t3),
                _mm256_unpackhi_epi64(t0, t1),
                _mm256_unpackhi_epi64(t2, t3),
            ]
        }
    }
}

/// R6: clears the magnitude of denormals, keeps the sign.
#[inline(always)]
unsafe fn flush(x: __m256) -> __m256 {
    unsafe {
        let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
        let abs = _mm256_and_ps(x, abs_mask);
        let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(abs, _mm256_set1_ps(f32::MIN_POSITIVE));
        _mm256_andnot_ps(_mm256_and_ps(tiny, abs_mask), x)
    }
}

/// One axis: padded first-tap index and second-tap weight (see `scalar::axis`).
#[inline(always)]
unsafe fn axis<const POINT: bool, const WRAP: bool>(
    k: &Splat,
    a: usize,
    u: __m256,
) -> (__m256i, __m256i) {
    unsafe {
        // R6: only point sampling and WRAP can tell a denormal from a zero.
        let u = if POINT || WRAP { flush(u) } else { u };
        // R24: MAXPS/MINPS return their second operand when one is NaN, so NaN passes through.
        let lo = _mm256_max_ps(_mm256_set1_ps(-10.0), u);
        let mut reduced = _mm256_min_ps(_mm256_set1_ps(10.0), lo);
        if WRAP {
            let wrapped = _mm256_sub_ps(u, _mm256_floor_ps(u));
            reduced = _mm256_blendv_ps(reduced, wrapped, k.wrap[a]);
        }
        let x = _mm256_mul_ps(reduced, k.size256[a]);
        // R5: NaN converts to 0.
        let ordered = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_ORD_Q>(x, x));
        let f = if POINT {
            // R26 floor, or the legacy round-to-nearest-even; then the texel only.
            let r = _mm256_blendv_ps(_mm256_round_ps::<8>(x), _mm256_floor_ps(x), k.floor);
            let f = _mm256_and_si256(_mm256_cvttps_epi32(r), ordered);
            _mm256_and_si256(f, _mm256_set1_epi32(!255))
        } else {
            // R27: CVTPS2DQ rounds to nearest even in the default MXCSR mode.
            let x = _mm256_sub_ps(x, _mm256_set1_ps(128.0));
            _mm256_and_si256(_mm256_cvtps_epi32(x), ordered)
        };
        let t = _mm256_add_epi32(_mm256_srai_epi32::<8>(f), _mm256_set1_epi32(2));
        let p = _mm256_min_epi32(_mm256_max_epi32(t, _mm256_setzero_si256()), k.hi[a]);
        (p, _mm256_and_si256(f, _mm256_set1_epi32(255)))
    }
}

/// R83 on 4 lanes: `trunc(x·max + 0.5)` in f64.
#[inline(always)]
unsafe fn quantize4(k: &Splat, x: __m128) -> __m128i {
    unsafe {
        let p = _mm256_mul_pd(_mm256_cvtps_pd(x), k.unorm_max);
        _mm256_cvttpd_epi32(_mm256_add_pd(p, _mm256_set1_pd(0.5)))
    }
}

/// The reference keys of 8 lookups (see `scalar::ref_key`).
#[inline(always)]
unsafe fn ref_key<const UNORM: bool>(k: &Splat, r: __m256) -> __m256i {
    unsafe {
        if UNORM {
            // R3: MAXPS returns the second operand (0) for NaN.
            let r = _mm256_min_ps(_mm256_max_ps(r, _mm256_setzero_ps()), _mm256_set1_ps(1.0));
            let lo = quantize4(k, _mm256_castps256_ps128(r));
            let hi = quantize4(k, _mm256_extractf128_ps::<1>(r));
            let q = _mm256_set_m128i(hi, lo);
            _mm256_add_epi32(_mm256_xor_si256(q, k.ref_xor), k.ref_add)
        } else {
            let bits = _mm256_castps_si256(r);
            let abs = _mm256_and_si256(bits, _mm256_set1_epi32(0x7FFF_FFFF));
            let flip = _mm256_srli_epi32::<1>(_mm256_srai_epi32::<31>(bits));
            let key = _mm256_xor_si256(bits, flip);
            let tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x0080_0000), abs);
            let key = _mm256_andnot_si256(tiny, key);
            let key = _mm256_add_epi32(_mm256_xor_si256(key, k.ref_xor), k.ref_add);
            let nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F80_0000));
            _mm256_blendv_epi8(key, _mm256_set1_epi32(NAN_REF), nan)
        }
    }
}

/// The per-lookup values a step computes before it touches the key image.
#[derive(Clone, Copy)]
pub(super) struct Prep {
    idx: __m256i,
    wx: __m256i,
    wy: __m256i,
    rk: __m256i,
}

/// Positions, weights and reference keys of 8 lookups (R24–R27, R82).
#[inline(always)]
unsafe fn prepare<const POINT: bool, const WRAP: bool, const UNORM: bool>(
    k: &Splat,
    u: __m256,
    v: __m256,
    r: __m256,
) -> Prep {
    unsafe {
        let (px, wx) = axis::<POINT, WRAP>(k, 0, u);
        let (py, wy) = axis::<POINT, WRAP>(k, 1, v);
        let idx = _mm256_add_epi32(_mm256_mullo_epi32(py, k.stride), px);
        let rk = ref_key::<UNORM>(k, r);
        Prep { idx, wx, wy, rk }
    }
}

/// The weight `w` where the tap with `key` passes the test against `rk`, 0 where it fails.
#[inline(always)]
unsafe fn pass<const TEST: u8>(key: __m256i, rk: __m256i, w: __m256) -> __m256 {
    unsafe {
        match TEST {
            LESS => _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(key, rk)), w),
            EQUAL => _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(key, rk)), w),
            _ => _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(key, rk)), w),
        }
    }
}

/// Fetches, compares and weights 8 prepared lookups.
#[inline(always)]
unsafe fn finish<K: Fetch, const TEST: u8>(keys: *const K, p: Prep) -> __m256 {
    unsafe {
        let rk = p.rk;
        let t = K::fetch(keys, p.idx);
        // Weights: u in 1/256 steps, v in 2^-16 steps, so the sum is the result; every value is
        // a small multiple of a power of two and every step is exact.
        let w1x = _mm256_cvtepi32_ps(p.wx);
        let w0x = _mm256_sub_ps(_mm256_set1_ps(256.0), w1x);
        let w1y = _mm256_mul_ps(_mm256_cvtepi32_ps(p.wy), _mm256_set1_ps(1.0 / 65536.0));
        let w0y = _mm256_sub_ps(_mm256_set1_ps(1.0 / 256.0), w1y);
        let row0 = _mm256_add_ps(pass::<TEST>(t[0], rk, w0x), pass::<TEST>(t[1], rk, w1x));
        let row1 = _mm256_add_ps(pass::<TEST>(t[2], rk, w0x), pass::<TEST>(t[3], rk, w1x));
        _mm256_add_ps(_mm256_mul_ps(row0, w0y), _mm256_mul_ps(row1, w1y))
    }
}

/// Starts loading the footprints of 8 prepared lookups into the cache.
#[inline(always)]
unsafe fn prefetch<K: Fetch>(keys: *const K, p: &Prep) {
    unsafe {
        for i in lanes(p.idx) {
            _mm_prefetch::<_MM_HINT_T0>(keys.add(2 * i).cast());
        }
    }
}

/// 8 (u, v) pairs as two vectors in lane order.
#[inline(always)]
unsafe fn load_uv(p: *const [f32; 2]) -> (__m256, __m256) {
    unsafe {
        let a = _mm256_loadu_ps(p.cast());
        let b = _mm256_loadu_ps(p.cast::<f32>().add(8));
        (
            in_order(_mm256_shuffle_ps::<0b10_00_10_00>(a, b)),
            in_order(_mm256_shuffle_ps::<0b11_01_11_01>(a, b)),
        )
    }
}

/// Undoes the 128-bit-lane interleave of `_mm256_shuffle_ps` on two consecutive loads.
#[inline(always)]
unsafe fn in_order(x: __m256) -> __m256 {
    unsafe { _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(x))) }
}

/// A prepared step of zeros.
#[inline(always)]
unsafe fn blank() -> Prep {
    unsafe {
        let z = _mm256_setzero_si256();
        Prep {
            idx: z,
            wx: z,
            wy: z,
            rk: z,
        }
    }
}

/// Loads and prepares the `LANES` lookups at `uv` and `refs`.
#[inline(always)]
unsafe fn step<const POINT: bool, const WRAP: bool, const UNORM: bool>(
    k: &Splat,
    uv: *const [f32; 2],
    refs: *const f32,
) -> Prep {
    unsafe {
        let (u, v) = load_uv(uv);
        prepare::<POINT, WRAP, UNORM>(k, u, v, _mm256_loadu_ps(refs))
    }
}

/// Stores `LANES` results.
#[inline(always)]
unsafe fn store(out: *mut f32, res: __m256) {
    unsafe { _mm256_storeu_ps(out, res) }
}

super::driver::simd_entry_points!("avx2", Avx2, "AVX2");
