//! The portable kernel: one lookup at a time, written branch-free (bit masks, f32 min/max and
//! `select_unpredictable` instead of data-dependent `if`s; monomorphized per configuration like
//! the SIMD kernels, so no configuration tests in the loop either).
//!
//! It is also the model the SIMD kernels mirror operation for operation: flush (R6, where it can
//! matter), range reduction (R24), `x = fl(U'·256N)` (= `256·fl(U'·N)`, R25), `F = rne(x − 128)`
//! (= `rne(fl(s − 0.5)·256)`, R27) or `floor(x) & !255` for point (R26), `t = F >> 8`,
//! `w = F & 255`, the padded index `clamp(t + 2, 0, N + 2)`, four keys from the row-pair image,
//! the integer test against the reference key, and `Σ passing (256−w)·w products · 2^-16`.

use super::{Consts, EQUAL, LESS, NAN_REF, RefKind};

/// A key as stored in the key image.
pub(super) trait Key: Copy {
    fn get(self) -> i32;
}

impl Key for u16 {
    #[inline(always)]
    fn get(self) -> i32 {
        i32::from(self)
    }
}

impl Key for i32 {
    #[inline(always)]
    fn get(self) -> i32 {
        self
    }
}

/// True when the f32 bits are a NaN.
#[inline(always)]
pub(super) fn is_nan_bits(bits: u32) -> bool {
    bits & 0x7FFF_FFFF > 0x7F80_0000
}

/// The signed, order-preserving key of a non-NaN f32: denormals and −0 become +0 first (R6,
/// R85), negative values have their magnitude bits flipped. ±inf map to ∓2139095041/2139095040.
#[inline(always)]
pub(super) fn float_key(bits: u32) -> i32 {
    let i = bits as i32;
    let k = i ^ (((i >> 31) as u32) >> 1) as i32;
    let tiny = (bits & 0x7FFF_FFFF) < 0x0080_0000;
    k & -i32::from(!tiny)
}

/// `if c { a } else { b }` as a conditional move (the condition depends on the data, so a
/// branch would mispredict).
#[inline(always)]
fn select<T>(c: bool, a: T, b: T) -> T {
    std::hint::select_unpredictable(c, a, b)
}

/// R6 / §1.4: an f32 denormal input becomes a zero of the same sign.
#[inline(always)]
fn flush(x: f32) -> f32 {
    let b = x.to_bits();
    let tiny = (b & 0x7FFF_FFFF) < 0x0080_0000;
    f32::from_bits(b & (0x8000_0000 | (u32::from(!tiny).wrapping_neg() >> 1)))
}

/// `x` with NaN replaced by +0 (R5), by a mask on the bits.
#[inline(always)]
fn nan_to_zero(x: f32) -> f32 {
    let keep = u32::from(!x.is_nan()).wrapping_neg();
    f32::from_bits(x.to_bits() & keep)
}

/// `rne(x) as i32` with NaN → 0 (R5), for |x| < 2^31: adding 1.5·2^52 in f64 rounds to an
/// integer in the default rounding mode (to nearest even) and leaves it in the low bits — no
/// float-to-integer conversion instruction, whose out-of-range handling can cost a branch.
#[inline(always)]
fn rne_i32(x: f32) -> i32 {
    (f64::from(nan_to_zero(x)) + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

/// `floor(x) as i32` with NaN → 0 (R5), for |x| < 2^31.
#[inline(always)]
fn floor_i32(x: f32) -> i32 {
    let t = rne_i32(x);
    // A tie or a value just below an integer rounded up: step down. `t as f32` is exact when it
    // matters (|x| < 2^23; above, x and t are the same integer).
    t - i32::from(t as f32 > x)
}

/// `floor` as an f32 (exact; keeps the sign of zero like `f32::floor`).
#[inline(always)]
fn floor_f32(x: f32) -> f32 {
    let small = x.abs() < 8_388_608.0;
    let f = floor_i32(select(small, x, 0.0)) as f32;
    select(small, f, x).copysign(x)
}

/// R82/R83: exact UNORM quantization (NaN → 0, clamp, `trunc(x·max + 0.5)`). The f64 product of
/// a 24-bit mantissa and an up-to-24-bit `max` is exact, and adding 0.5 can only round where the
/// truncation cannot change.
#[inline(always)]
pub(super) fn quantize(r: f32, max: f64) -> i32 {
    let r = select(r > 0.0, r, 0.0);
    let r = select(r < 1.0, r, 1.0);
    let q = f64::from(r) * max + 0.5;
    // SAFETY: 0.5 ≤ q ≤ max + 0.5 < 2^24.
    unsafe { q.to_int_unchecked::<i32>() }
}

/// The reference key of one lookup (see `Consts::ref_xor`).
#[inline(always)]
fn ref_key<const UNORM: bool>(c: &Consts, r: f32) -> i32 {
    if UNORM {
        (quantize(r, c.unorm_max) ^ c.ref_xor).wrapping_add(c.ref_add)
    } else {
        let bits = r.to_bits();
        let k = (float_key(bits) ^ c.ref_xor).wrapping_add(c.ref_add);
        select(is_nan_bits(bits), NAN_REF, k)
    }
}

/// One axis: the padded index of the first tap and the weight of the second (R24–R27).
#[inline(always)]
fn axis<const POINT: bool, const WRAP: bool>(c: &Consts, a: usize, u: f32) -> (i32, i32) {
    // R6: only point sampling (floor) and WRAP can tell a denormal from a zero; for bilinear
    // CLAMP/BORDER `fl(fl(u·N) − 0.5)` is −0.5 either way.
    let u = if POINT || WRAP { flush(u) } else { u };
    // R24 with comparisons: NaN passes through.
    let clamped = select(u < -10.0, -10.0, u);
    let mut reduced = select(clamped > 10.0, 10.0, clamped);
    if WRAP {
        reduced = select(c.wrap[a], u - floor_f32(u), reduced);
    }
    // fl(U'·256N) = 256·fl(U'·N) and fl(256s − 128) = 256·fl(s − 0.5): scaling by 256 is exact
    // (U' is 0 or at least 2^-126 after the flush; a denormal U' that skips it gives F = −128
    // both ways).
    let x = reduced * c.size256[a];
    let f = if POINT {
        select(c.floor, floor_i32(x), rne_i32(x)) & !255
    } else {
        rne_i32(x - 128.0)
    };
    let t = f >> 8;
    // The clamp to the padded image in f32 (exact: |t| < 2^18), where min/max never become
    // branches.
    let p = ((t + 2) as f32).max(0.0).min(c.hi[a] as f32);
    // SAFETY: 0 ≤ p ≤ N + 2, an integer.
    (unsafe { p.to_int_unchecked::<i32>() }, f & 255)
}

#[inline(always)]
fn lookup<K: Key, const POINT: bool, const WRAP: bool, const TEST: u8, const UNORM: bool>(
    c: &Consts,
    keys: &[K],
    u: f32,
    v: f32,
    r: f32,
) -> f32 {
    let (px, wx) = axis::<POINT, WRAP>(c, 0, u);
    let (py, wy) = axis::<POINT, WRAP>(c, 1, v);
    let i = 2 * (py * c.stride + px) as usize;
    debug_assert!(i + 3 < keys.len());
    // SAFETY: px ≤ N + 2 and py ≤ M + 2: entries i/2 and i/2 + 1 are inside the M + 3 rows
    // of `stride` ≥ N + 4 row-pair entries.
    let k = unsafe {
        [
            keys.get_unchecked(i).get(),
            keys.get_unchecked(i + 2).get(),
            keys.get_unchecked(i + 1).get(),
            keys.get_unchecked(i + 3).get(),
        ]
    };
    let rk = ref_key::<UNORM>(c, r);
    let pass = |k: i32| match TEST {
        LESS => rk < k,
        EQUAL => rk == k,
        _ => rk != k,
    };
    let (w0x, w0y) = (256 - wx, 256 - wy);
    let row0 = select(pass(k[0]), w0x, 0) + select(pass(k[1]), wx, 0);
    let row1 = select(pass(k[2]), w0x, 0) + select(pass(k[3]), wx, 0);
    let sum = row0 * w0y + row1 * wy;
    sum as f32 * (1.0 / 65536.0)
}

#[inline(always)]
fn run_impl<K: Key, const POINT: bool, const WRAP: bool, const TEST: u8, const UNORM: bool>(
    c: &Consts,
    keys: &[K],
    uv: &[[f32; 2]],
    refs: &[f32],
    out: &mut [f32],
) {
    for ((&[u, v], &r), o) in uv.iter().zip(refs).zip(out.iter_mut()) {
        *o = lookup::<K, POINT, WRAP, TEST, UNORM>(c, keys, u, v, r);
    }
}

/// The scalar kernel over 16-bit UNORM keys (lengths checked by the caller).
pub(super) fn run_u16(c: &Consts, keys: &[u16], uv: &[[f32; 2]], refs: &[f32], out: &mut [f32]) {
    dispatch!(run_impl, c, u16, true, (keys, uv, refs, out))
}

/// The scalar kernel over 32-bit keys (f32 or 24-bit UNORM).
pub(super) fn run_i32(c: &Consts, keys: &[i32], uv: &[[f32; 2]], refs: &[f32], out: &mut [f32]) {
    if c.ref_kind == RefKind::Unorm {
        dispatch!(run_impl, c, i32, true, (keys, uv, refs, out))
    } else {
        dispatch!(run_impl, c, i32, false, (keys, uv, refs, out))
    }
}
