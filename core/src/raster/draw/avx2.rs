//! The AVX2 kernel: eight pixels of a row at a time, on eight-pixel columns of the buffer (its
//! rows are a multiple of eight values, so a group never crosses into the next row).
//!
//! Small triangles (at most [`SMALL_GROUPS`] groups across, the common case) test all three
//! edges for all eight centres with 32-bit edge functions — exact, since the triangle's bounds
//! keep them under 2³¹ (checked per triangle; otherwise the run walk below is used). Wider
//! triangles take each row's exact run of covered centres from the portable code and walk it
//! eight pixels at a time. Depths are the module's formula on four f64 lanes at a time, with the
//! portable kernel's operations in the same order, so the bits are the same.

use std::arch::x86_64::*;

use super::scalar::Slot;
use super::{
    Area, Batch, Coarse, TileBuf, Tri, edges_in_i32, groups_of, row_depth, row_run, row_setup,
};

/// Triangles at most this many eight-pixel groups wide take the all-edges test.
const SMALL_GROUPS: i32 = 4;

/// Draws `tris` into `area` of the tile with the AVX2 kernel.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn draw(
    buf: TileBuf<'_>,
    area: Area,
    batches: &[Batch<'_>],
    greater: bool,
    coarse: &mut Coarse,
) -> u64 {
    #[target_feature(enable = "avx2")]
    fn each<S: Lanes, const GREATER: bool>(
        buf: &mut [S],
        area: Area,
        batches: &[Batch<'_>],
        coarse: &mut Coarse,
    ) -> u64 {
        // Every group written lies inside the buffer (`draw_tris` checked `Area::fits`).
        let at = buf.as_mut_ptr();
        let mut written = 0;
        for b in batches {
            written += b.each(coarse, area.clip, |t| {
                // SAFETY: AVX2 is enabled here; `at` is a whole tile.
                unsafe {
                    if t.plain {
                        triangle::<S, true, GREATER>(at, area, t)
                    } else {
                        triangle::<S, false, GREATER>(at, area, t)
                    }
                }
            });
        }
        written
    }
    match (buf, greater) {
        (TileBuf::F32(b), false) => each::<_, false>(b, area, batches, coarse),
        (TileBuf::F32(b), true) => each::<_, true>(b, area, batches, coarse),
        (TileBuf::U16(b), false) => each::<_, false>(b, area, batches, coarse),
        (TileBuf::U16(b), true) => each::<_, true>(b, area, batches, coarse),
    }
}

/// A storage whose eight consecutive cells take one depth test.
pub(super) trait Lanes: Slot {
    /// The depth test with writes on the eight cells at `at` for depths `d`, except in the
    /// lanes where `out` is all ones; returns the lanes written, as all ones.
    unsafe fn test_write8<const GREATER: bool>(at: *mut Self, d: __m256, out: __m256i) -> __m256i;
}

impl Lanes for f32 {
    #[inline(always)]
    unsafe fn test_write8<const GREATER: bool>(at: *mut f32, d: __m256, out: __m256i) -> __m256i {
        unsafe {
            // Lanes left out get a depth that never passes (+∞ for LESS, −∞ for GREATER), so the
            // write is a plain min (max) with the stored values: no blend of the loaded values,
            // which compilers turn into a masked store (slow on some CPUs).
            let never = _mm256_set1_ps(if GREATER {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            });
            let d = _mm256_blendv_ps(d, never, _mm256_castsi256_ps(out));
            let old = _mm256_loadu_ps(at);
            let (pass, new) = if GREATER {
                (_mm256_cmp_ps::<_CMP_GT_OQ>(d, old), _mm256_max_ps(d, old))
            } else {
                (_mm256_cmp_ps::<_CMP_LT_OQ>(d, old), _mm256_min_ps(d, old))
            };
            // `min`/`max` keep the stored value (the second operand) unless `d` passes.
            _mm256_storeu_ps(at, new);
            _mm256_castps_si256(pass)
        }
    }
}

impl Lanes for u16 {
    #[inline(always)]
    unsafe fn test_write8<const GREATER: bool>(at: *mut u16, d: __m256, out: __m256i) -> __m256i {
        unsafe {
            let lo = unorm16x4(_mm256_castps256_ps128(d));
            let hi = unorm16x4(_mm256_extractf128_ps::<1>(d));
            let codes = _mm_packus_epi32(lo, hi);
            // Lanes left out get a code that never passes (as for f32 above).
            let out16 = _mm_packs_epi32(
                _mm256_castsi256_si128(out),
                _mm256_extracti128_si256::<1>(out),
            );
            let codes = if GREATER {
                _mm_andnot_si128(out16, codes)
            } else {
                _mm_or_si128(codes, out16)
            };
            let old = _mm_loadu_si128(at.cast());
            // Unsigned 16-bit order through the signed compare, sign bits flipped.
            let flip = _mm_set1_epi16(i16::MIN);
            let (c, o) = (_mm_xor_si128(codes, flip), _mm_xor_si128(old, flip));
            let (pass, new) = if GREATER {
                (_mm_cmpgt_epi16(c, o), _mm_max_epu16(codes, old))
            } else {
                (_mm_cmpgt_epi16(o, c), _mm_min_epu16(codes, old))
            };
            _mm_storeu_si128(at.cast(), new);
            _mm256_cvtepi16_epi32(pass)
        }
    }
}

/// The portable `unorm16` of four depths, as 32-bit lanes: (f64(d)·65535 + 1/2) truncated.
#[inline(always)]
unsafe fn unorm16x4(d: __m128) -> __m128i {
    unsafe {
        let scaled = _mm256_mul_pd(_mm256_cvtps_pd(d), _mm256_set1_pd(65535.0));
        _mm256_cvttpd_epi32(_mm256_add_pd(scaled, _mm256_set1_pd(0.5)))
    }
}

/// `viewport_depth` of four depths: min(z, 1) (a NaN gives 1, as `f64::min` does), then +0
/// below the smallest normal f32.
#[inline(always)]
unsafe fn clamp4(z: __m256d) -> __m256d {
    unsafe {
        let z = _mm256_min_pd(z, _mm256_set1_pd(1.0));
        let smallest = _mm256_set1_pd(f64::from(f32::MIN_POSITIVE));
        _mm256_and_pd(z, _mm256_cmp_pd::<_CMP_GE_OQ>(z, smallest))
    }
}

/// The x terms' factors `x − xr` of the eight pixels from `x` on, as f64 (exact).
#[inline(always)]
unsafe fn offsets8(t: &Tri, x: i32) -> [__m256d; 2] {
    unsafe {
        let base = _mm256_set1_pd(f64::from(x - i32::from(t.bbox[0])));
        [
            _mm256_add_pd(base, _mm256_setr_pd(0.0, 1.0, 2.0, 3.0)),
            _mm256_add_pd(base, _mm256_setr_pd(4.0, 5.0, 6.0, 7.0)),
        ]
    }
}

/// The next group's [`offsets8`] (integers in f64: exact).
#[inline(always)]
unsafe fn next8([lo, hi]: [__m256d; 2]) -> [__m256d; 2] {
    unsafe {
        let eight = _mm256_set1_pd(8.0);
        [_mm256_add_pd(lo, eight), _mm256_add_pd(hi, eight)]
    }
}

/// Sums the eight lane counts of `acc` (each lane −1 per pixel written).
#[inline(always)]
unsafe fn count(acc: __m256i) -> u64 {
    unsafe {
        let s = _mm_add_epi32(
            _mm256_castsi256_si128(acc),
            _mm256_extracti128_si256::<1>(acc),
        );
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        u64::from(_mm_cvtsi128_si32(s).unsigned_abs())
    }
}

/// The x terms `∂z/∂x · (x − xr)` of the eight pixels whose [`offsets8`] are `k` (the same in
/// every row of a triangle).
#[inline(always)]
unsafe fn x_terms8(dzdx: __m256d, [k_lo, k_hi]: [__m256d; 2]) -> [__m256d; 2] {
    unsafe { [_mm256_mul_pd(dzdx, k_lo), _mm256_mul_pd(dzdx, k_hi)] }
}

/// The depths of the eight pixels whose [`offsets8`] are `k`, for a row whose depth before the
/// x term is `zrow` (the portable `pixel_depth` and `viewport_depth`, lane by lane).
#[inline(always)]
unsafe fn depth8<const PLAIN: bool>(zrow: __m256d, dzdx: __m256d, k: [__m256d; 2]) -> __m256 {
    unsafe { depth8_of::<PLAIN>(zrow, x_terms8(dzdx, k)) }
}

/// [`depth8`] from the pixels' [`x_terms8`].
#[inline(always)]
unsafe fn depth8_of<const PLAIN: bool>(zrow: __m256d, [t_lo, t_hi]: [__m256d; 2]) -> __m256 {
    unsafe {
        let mut z_lo = _mm256_add_pd(zrow, t_lo);
        let mut z_hi = _mm256_add_pd(zrow, t_hi);
        if !PLAIN {
            z_lo = clamp4(z_lo);
            z_hi = clamp4(z_hi);
        }
        _mm256_set_m128(_mm256_cvtpd_ps(z_hi), _mm256_cvtpd_ps(z_lo))
    }
}

/// Lane numbers 0..8.
#[inline(always)]
unsafe fn iota() -> __m256i {
    unsafe { _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7) }
}

/// Lanes of the group starting at pixel `x` that lie left of `first`, as all ones.
#[inline(always)]
unsafe fn left_of(x: i32, first: i32) -> __m256i {
    unsafe { _mm256_cmpgt_epi32(_mm256_set1_epi32(first - x), iota()) }
}

/// Lanes of the group starting at pixel `x` that lie right of `last`, as all ones.
#[inline(always)]
unsafe fn right_of(x: i32, last: i32) -> __m256i {
    unsafe { _mm256_cmpgt_epi32(iota(), _mm256_set1_epi32(last - x)) }
}

/// Draws the part of `t` inside `area` into the tile at `buf`.
#[inline(always)]
pub(super) unsafe fn triangle<S: Lanes, const PLAIN: bool, const GREATER: bool>(
    buf: *mut S,
    area: Area,
    t: &Tri,
) -> u64 {
    let Some([xs, ys, xe, ye]) = area.span_of(t) else {
        return 0;
    };
    // The last group of a row ends inside the buffer's row (`groups_of`).
    let (xa, groups) = groups_of(&area, xs, xe, 8);
    if groups <= SMALL_GROUPS
        && let Ok((e, sx, sy)) = edges_in_i32(t, xa, ys, 8 * groups - 1, ye - ys)
    {
        // SAFETY: the caller's contract; the group arithmetic stays in the tile.
        return unsafe {
            small::<S, PLAIN, GREATER>(buf, area, t, [xs, ys, xe, ye], xa, groups, e, sx, sy)
        };
    }
    // SAFETY: as above.
    unsafe { runs::<S, PLAIN, GREATER>(buf, area, t, [xs, ys, xe, ye]) }
}

/// All three edges for every centre of each group, in 32-bit lanes (`e`: the edge functions at
/// (xa, ys), which with the steps stay under 2³¹ over the whole part).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn small<S: Lanes, const PLAIN: bool, const GREATER: bool>(
    buf: *mut S,
    area: Area,
    t: &Tri,
    [xs, ys, xe, ye]: [i32; 4],
    xa: i32,
    groups: i32,
    e: [i64; 3],
    sx: [i64; 3],
    sy: [i64; 3],
) -> u64 {
    unsafe {
        let lanes = iota();
        // The edge functions at the first group of the row, and their steps from one group to
        // the next and from one row to the next (wrapping: only values inside the checked range
        // are ever used).
        let mut row_ev = [_mm256_setzero_si256(); 3];
        let mut group_step = [_mm256_setzero_si256(); 3];
        let mut row_step = [_mm256_setzero_si256(); 3];
        for i in 0..3 {
            let lane_step = _mm256_mullo_epi32(lanes, _mm256_set1_epi32(sx[i] as i32));
            row_ev[i] = _mm256_add_epi32(_mm256_set1_epi32(e[i] as i32), lane_step);
            group_step[i] = _mm256_set1_epi32((sx[i] as i32).wrapping_mul(8));
            row_step[i] = _mm256_set1_epi32(sy[i] as i32);
        }
        // Lanes left of the part in the first group, right of it in the last.
        let mut edge_out = [_mm256_setzero_si256(); SMALL_GROUPS as usize];
        edge_out[0] = left_of(xa, xs);
        let last = (groups - 1) as usize;
        edge_out[last] = _mm256_or_si256(edge_out[last], right_of(xa + 8 * last as i32, xe));
        // The x terms are the same in every row: multiplied once.
        let dzdx = _mm256_set1_pd(t.dzdx);
        let mut terms = [[_mm256_setzero_pd(); 2]; SMALL_GROUPS as usize];
        let mut k = offsets8(t, xa);
        for term in terms.iter_mut().take(groups as usize) {
            *term = x_terms8(dzdx, k);
            k = next8(k);
        }
        let mut acc = _mm256_setzero_si256();
        let mut row = buf.add(area.index(xa, ys));
        for y in ys..ye + 1 {
            let zrow = _mm256_set1_pd(row_depth(t, y));
            let mut ev = row_ev;
            let on = area.row_on(y);
            for (g, (extra, &term)) in
                edge_out
                    .iter()
                    .zip(&terms)
                    .enumerate()
                    .take(if on { groups as usize } else { 0 })
            {
                let out = _mm256_or_si256(
                    _mm256_srai_epi32::<31>(_mm256_or_si256(_mm256_or_si256(ev[0], ev[1]), ev[2])),
                    *extra,
                );
                let d = depth8_of::<PLAIN>(zrow, term);
                let wrote = S::test_write8::<GREATER>(row.add(8 * g), d, out);
                acc = _mm256_add_epi32(acc, wrote);
                for i in 0..3 {
                    ev[i] = _mm256_add_epi32(ev[i], group_step[i]);
                }
            }
            for i in 0..3 {
                row_ev[i] = _mm256_add_epi32(row_ev[i], row_step[i]);
            }
            row = row.add(area.stride);
        }
        count(acc)
    }
}

/// Each row's exact run of covered centres (the portable kernel's), walked eight pixels at a
/// time on the tile's groups.
#[inline(always)]
unsafe fn runs<S: Lanes, const PLAIN: bool, const GREATER: bool>(
    buf: *mut S,
    area: Area,
    t: &Tri,
    [xs, ys, xe, ye]: [i32; 4],
) -> u64 {
    unsafe {
        let (mut e, sx, sy, inv) = row_setup(t, xs, ys);
        let width = i64::from(xe - xs + 1);
        let dzdx = _mm256_set1_pd(t.dzdx);
        let mut acc = _mm256_setzero_si256();
        for y in ys..ye + 1 {
            let (lo, hi) = row_run(&e, &sx, &inv, width);
            for i in 0..3 {
                e[i] += sy[i];
            }
            if lo >= hi || !area.row_on(y) {
                continue;
            }
            let (x0, x1) = (xs + lo as i32, xs + hi as i32 - 1);
            let zrow = _mm256_set1_pd(row_depth(t, y));
            let mut x = area.origin[0] + ((x0 - area.origin[0]) & !7);
            let mut at = buf.add(area.index(x, y));
            let mut k = offsets8(t, x);
            while x <= x1 {
                let out = if x < x0 || x + 7 > x1 {
                    _mm256_or_si256(left_of(x, x0), right_of(x, x1))
                } else {
                    _mm256_setzero_si256()
                };
                let d = depth8::<PLAIN>(zrow, dzdx, k);
                acc = _mm256_add_epi32(acc, S::test_write8::<GREATER>(at, d, out));
                x += 8;
                at = at.add(8);
                k = next8(k);
            }
        }
        count(acc)
    }
}
