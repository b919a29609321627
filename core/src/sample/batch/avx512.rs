//! The AVX-512 (F) kernel: 16 lookups per step, operation for operation the scalar kernel's
//! arithmetic, with mask registers for the tests and the NaN → 0 conversions.
//!
//! The helpers are `#[inline(always)]` without target features of their own, so that they are
//! inlined into the `#[target_feature(enable = "avx512f")]` entry points.

use std::arch::x86_64::*;

use super::{Consts, EQUAL, LESS, NAN_REF};

const LANES: usize = 16;
/// How many steps ahead big images are prefetched.
const AHEAD: usize = 4;

/// Constants splatted once per batch.
pub(super) struct Splat {
    size256: [__m512; 2],
    hi: [__m512i; 2],
    wrap: [__mmask16; 2],
    floor: bool,
    stride: __m512i,
    unorm_max: __m512d,
    ref_xor: __m512i,
    ref_add: __m512i,
}

impl Splat {
    #[inline(always)]
    unsafe fn new(c: &Consts) -> Splat {
        let m = |b: bool| if b { 0xFFFF } else { 0 };
        unsafe {
            Splat {
                size256: [_mm512_set1_ps(c.size256[0]), _mm512_set1_ps(c.size256[1])],
                hi: [_mm512_set1_epi32(c.hi[0]), _mm512_set1_epi32(c.hi[1])],
                wrap: [m(c.wrap[0]), m(c.wrap[1])],
                floor: c.floor,
                stride: _mm512_set1_epi32(c.stride),
                unorm_max: _mm512_set1_pd(c.unorm_max),
                ref_xor: _mm512_set1_epi32(c.ref_xor),
                ref_add: _mm512_set1_epi32(c.ref_add),
            }
        }
    }
}

/// The lane values of `idx`, as plain loads from a spill (cheaper than lane extractions; the
/// volatile reads keep the compiler from turning them back into extractions).
#[inline(always)]
unsafe fn lanes(idx: __m512i) -> [usize; LANES] {
    let mut ix = [0i32; LANES];
    let mut out = [0usize; LANES];
    unsafe {
        _mm512_storeu_si512(ix.as_mut_ptr().cast(), idx);
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

/// Lanes `i`, `i + 4`, `i + 8`, `i + 12` of `ix` in the four 128-bit blocks.
#[inline(always)]
unsafe fn load16x4(base: *const i32, ix: &[usize; LANES], i: usize) -> __m512i {
    unsafe {
        let v = _mm512_castsi128_si512(load16(base, ix[i]));
        let v = _mm512_inserti32x4::<1>(v, load16(base, ix[i + 4]));
        let v = _mm512_inserti32x4::<2>(v, load16(base, ix[i + 8]));
        _mm512_inserti32x4::<3>(v, load16(base, ix[i + 12]))
    }
}

/// How the key image is stored and fetched.
pub(super) trait Fetch: Sized {
    /// The four keys of each lane's footprint at entry `idx`: row 0 left/right, row 1 left/right.
    ///
    /// # Safety
    /// AVX-512F; entries `idx` and `idx + 1` inside the row-pair image at `base`.
    unsafe fn fetch(base: *const Self, idx: __m512i) -> [__m512i; 4];
}

impl Fetch for u16 {
    #[inline(always)]
    unsafe fn fetch(base: *const u16, idx: __m512i) -> [__m512i; 4] {
        unsafe {
            let ix = lanes(idx);
            // One 8-byte load per lane: [k00 k10 k01 k11].
            let ld = |l: usize| base.add(2 * ix[l]).cast::<i64>().read_unaligned();
            let a = _mm512_setr_epi64(ld(0), ld(1), ld(2), ld(3), ld(4), ld(5), ld(6), ld(7));
            let b = _mm512_setr_epi64(ld(8), ld(9), ld(10), ld(11), ld(12), ld(13), ld(14), ld(15));
            let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
            let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
            let left = _mm512_permutex2var_epi32(a, even, b);
            let right = _mm512_permutex2var_epi32(a, odd, b);
            let lo = _mm512_set1_epi32(0xFFFF);
            [
                _mm512_and_si512(left, lo),
                _mm512_and_si512(right, lo),
                _mm512_srli_epi32::<16>(left),
                _mm512_srli_epi32::<16>(right),
            ]
        }
    }
}

impl Fetch for i32 {
    #[inline(always)]
    unsafe fn fetch(base: *const i32, idx: __m512i) -> [__m512i; 4] {
        unsafe {
            let ix = lanes(idx);
            // One 16-byte load per lane: [k00 k10 k01 k11]; lanes i, i + 4, i + 8, i + 12 share
            // a register, then a 4×4 transpose per 128-bit block.
            let r = [
                load16x4(base, &ix, 0),
                load16x4(base, &ix, 1),
                load16x4(base, &ix, 2),
                load16x4(base, &ix, 3),
            ];
            let t0 = _mm512_unpacklo_epi32(r[0], r[1]);
            let t1 = _mm512_unpacklo_epi32(r[2], r[3]);
            let t2 = _mm512_unpackhi_epi32(r[0], r[1]);
            let t3 = _mm512_unpackhi_epi32(r[2], r[3]);
            [
                _mm512_unpacklo_epi64(t0, t1),
                _mm512_unpacklo_epi64(t2, t3),
                _mm512_unpackhi_epi64(t0, t1),
                _mm512_unpackhi_epi64(t2, t3),
            ]
        }
    }
}

/// R6: clears the magnitude of denormals, keeps the sign.
#[inline(always)]
unsafe fn flush(x: __m512) -> __m512 {
    unsafe {
        let bits = _mm512_castps_si512(x);
        let abs = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFF_FFFF));
        let tiny = _mm512_cmplt_epi32_mask(abs, _mm512_set1_epi32(0x0080_0000));
        let sign = _mm512_set1_epi32(i32::MIN);
        _mm512_castsi512_ps(_mm512_mask_and_epi32(bits, tiny, bits, sign))
    }
}

/// One axis: padded first-tap index and second-tap weight (see `scalar::axis`).
#[inline(always)]
unsafe fn axis<const POINT: bool, const WRAP: bool>(
    k: &Splat,
    a: usize,
    u: __m512,
) -> (__m512i, __m512i) {
    unsafe {
        // R6: only point sampling and WRAP can tell a denormal from a zero.
        let u = if POINT || WRAP { flush(u) } else { u };
        // R24: MAXPS/MINPS return their second operand when one is NaN, so NaN passes through.
        let lo = _mm512_max_ps(_mm512_set1_ps(-10.0), u);
        let mut reduced = _mm512_min_ps(_mm512_set1_ps(10.0), lo);
        if WRAP {
            let floor = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(u);
            reduced = _mm512_mask_sub_ps(reduced, k.wrap[a], u, floor);
        }
        let x = _mm512_mul_ps(reduced, k.size256[a]);
        // R5: NaN converts to 0 (zero-masked conversions).
        let ordered = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(x, x);
        let f = if POINT {
            // R26 floor, or the legacy round-to-nearest-even; then the texel only.
            let f = if k.floor {
                _mm512_maskz_cvt_roundps_epi32::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
                    ordered, x,
                )
            } else {
                _mm512_maskz_cvt_roundps_epi32::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                    ordered, x,
                )
            };
            _mm512_and_si512(f, _mm512_set1_epi32(!255))
        } else {
            let x = _mm512_sub_ps(x, _mm512_set1_ps(128.0));
            _mm512_maskz_cvt_roundps_epi32::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                ordered, x,
            )
        };
        let t = _mm512_add_epi32(_mm512_srai_epi32::<8>(f), _mm512_set1_epi32(2));
        let p = _mm512_min_epi32(_mm512_max_epi32(t, _mm512_setzero_si512()), k.hi[a]);
        (p, _mm512_and_si512(f, _mm512_set1_epi32(255)))
    }
}

/// R83 on 8 lanes: `trunc(x·max + 0.5)` in f64.
#[inline(always)]
unsafe fn quantize8(k: &Splat, x: __m256) -> __m256i {
    unsafe {
        let p = _mm512_mul_pd(_mm512_cvtps_pd(x), k.unorm_max);
        _mm512_cvttpd_epi32(_mm512_add_pd(p, _mm512_set1_pd(0.5)))
    }
}

/// The reference keys of 16 lookups (see `scalar::ref_key`).
#[inline(always)]
unsafe fn ref_key<const UNORM: bool>(k: &Splat, r: __m512) -> __m512i {
    unsafe {
        if UNORM {
            // R3: MAXPS returns the second operand (0) for NaN.
            let r = _mm512_min_ps(_mm512_max_ps(r, _mm512_setzero_ps()), _mm512_set1_ps(1.0));
            let lo = quantize8(k, _mm512_castps512_ps256(r));
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(r)));
            let q = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), quantize8(k, hi));
            _mm512_add_epi32(_mm512_xor_si512(q, k.ref_xor), k.ref_add)
        } else {
            float_keys(_mm512_castps_si512(r), k.ref_xor, k.ref_add, NAN_REF)
        }
    }
}

/// The keys of sixteen f32s given by their `bits` (`scalar::float_key`: denormals and −0 as
/// +0, R6, R85; negative values' magnitude bits flipped), then `(key ^ xor) + add`, and `nan`
/// in the lanes of NaNs: the reference keys ([`NAN_REF`]), and a tiled map's texel keys
/// ([`NAN_TEXEL`](super::NAN_TEXEL), `lazy::float_inside_avx512`).
#[inline(always)]
pub(super) unsafe fn float_keys(bits: __m512i, xor: __m512i, add: __m512i, nan: i32) -> __m512i {
    unsafe {
        let abs = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFF_FFFF));
        let flip = _mm512_srli_epi32::<1>(_mm512_srai_epi32::<31>(bits));
        let key = _mm512_xor_si512(bits, flip);
        let tiny = _mm512_cmplt_epi32_mask(abs, _mm512_set1_epi32(0x0080_0000));
        let key = _mm512_maskz_mov_epi32(!tiny, key);
        let key = _mm512_add_epi32(_mm512_xor_si512(key, xor), add);
        let is_nan = _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(0x7F80_0000));
        _mm512_mask_mov_epi32(key, is_nan, _mm512_set1_epi32(nan))
    }
}

/// The per-lookup values a step computes before it touches the key image.
#[derive(Clone, Copy)]
pub(super) struct Prep {
    idx: __m512i,
    wx: __m512i,
    wy: __m512i,
    rk: __m512i,
}

/// Positions, weights and reference keys of 16 lookups (R24–R27, R82).
#[inline(always)]
unsafe fn prepare<const POINT: bool, const WRAP: bool, const UNORM: bool>(
    k: &Splat,
    u: __m512,
    v: __m512,
    r: __m512,
) -> Prep {
    unsafe {
        let (px, wx) = axis::<POINT, WRAP>(k, 0, u);
        let (py, wy) = axis::<POINT, WRAP>(k, 1, v);
        let idx = _mm512_add_epi32(_mm512_mullo_epi32(py, k.stride), px);
        let rk = ref_key::<UNORM>(k, r);
        Prep { idx, wx, wy, rk }
    }
}

/// The lanes where the tap with `key` passes the test against `rk`.
#[inline(always)]
unsafe fn pass<const TEST: u8>(key: __m512i, rk: __m512i) -> __mmask16 {
    unsafe {
        match TEST {
            LESS => _mm512_cmpgt_epi32_mask(key, rk),
            EQUAL => _mm512_cmpeq_epi32_mask(key, rk),
            _ => _mm512_cmpneq_epi32_mask(key, rk),
        }
    }
}

/// Fetches, compares and weights 16 prepared lookups.
#[inline(always)]
unsafe fn finish<K: Fetch, const TEST: u8>(keys: *const K, p: Prep) -> __m512 {
    unsafe {
        let rk = p.rk;
        let t = K::fetch(keys, p.idx);
        let m = [
            pass::<TEST>(t[0], rk),
            pass::<TEST>(t[1], rk),
            pass::<TEST>(t[2], rk),
            pass::<TEST>(t[3], rk),
        ];
        // Weights: u in 1/256 steps, v in 2^-16 steps, so the sum is the result; every value is
        // a small multiple of a power of two and every step is exact.
        let w1x = _mm512_cvtepi32_ps(p.wx);
        let w0x = _mm512_sub_ps(_mm512_set1_ps(256.0), w1x);
        let w1y = _mm512_mul_ps(_mm512_cvtepi32_ps(p.wy), _mm512_set1_ps(1.0 / 65536.0));
        let w0y = _mm512_sub_ps(_mm512_set1_ps(1.0 / 256.0), w1y);
        let row0 = _mm512_add_ps(
            _mm512_maskz_mov_ps(m[0], w0x),
            _mm512_maskz_mov_ps(m[1], w1x),
        );
        let row1 = _mm512_add_ps(
            _mm512_maskz_mov_ps(m[2], w0x),
            _mm512_maskz_mov_ps(m[3], w1x),
        );
        _mm512_add_ps(_mm512_mul_ps(row0, w0y), _mm512_mul_ps(row1, w1y))
    }
}

/// Starts loading the footprints of 16 prepared lookups into the cache.
#[inline(always)]
unsafe fn prefetch<K: Fetch>(keys: *const K, p: &Prep) {
    unsafe {
        for i in lanes(p.idx) {
            _mm_prefetch::<_MM_HINT_T0>(keys.add(2 * i).cast());
        }
    }
}

/// 16 (u, v) pairs as two vectors in lane order.
#[inline(always)]
unsafe fn load_uv(p: *const [f32; 2]) -> (__m512, __m512) {
    unsafe {
        let a = _mm512_loadu_ps(p.cast());
        let b = _mm512_loadu_ps(p.cast::<f32>().add(16));
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        (
            _mm512_permutex2var_ps(a, even, b),
            _mm512_permutex2var_ps(a, odd, b),
        )
    }
}

/// A prepared step of zeros.
#[inline(always)]
unsafe fn blank() -> Prep {
    unsafe {
        let z = _mm512_setzero_si512();
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
        prepare::<POINT, WRAP, UNORM>(k, u, v, _mm512_loadu_ps(refs))
    }
}

/// Stores `LANES` results.
#[inline(always)]
unsafe fn store(out: *mut f32, res: __m512) {
    unsafe { _mm512_storeu_ps(out, res) }
}

super::driver::simd_entry_points!("avx512f", Avx512, "AVX-512F");
