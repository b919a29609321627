//! The AVX-512 kernel: sixteen pixels of a row at a time for the triangles whose part in the
//! area is at most [`SMALL_GROUPS`] sixteen-pixel groups across (the common case: a tile of
//! the map's tiled storage is two groups wide), with mask registers for coverage and for the
//! depth test's writes and a bit count for the pixels written. Wider parts, and areas whose
//! rows are not a multiple of sixteen values, take the AVX2 kernel.
//!
//! The arithmetic is the AVX2 kernel's lane for lane: all three edge functions per centre, in
//! 32-bit lanes where the per-triangle bound allows ([`Edges32`]) and else in 64-bit lanes
//! ([`Edges64`]: large triangles), the module's depth formula on f64 lanes
//! with the portable kernel's operations in the same order, the same clamping and UNORM16
//! rounding, and the depth test keeping the stored value unless the new one passes — so the
//! bits are the same.

use std::arch::x86_64::*;

use super::{Area, Batch, Coarse, Edges, TileBuf, Tri, avx2, edges_in_i32, groups_of, row_depth};

/// Triangles at most this many sixteen-pixel groups wide take this kernel.
const SMALL_GROUPS: i32 = 4;

/// Draws `tris` into `area` of the tile with the AVX-512 kernel (AVX2 where it cannot).
///
/// # Safety
/// The CPU must support AVX-512 F, BW, VL and DQ, and POPCNT.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,popcnt")]
pub(super) unsafe fn draw(
    buf: TileBuf<'_>,
    area: Area,
    batches: &[Batch<'_>],
    greater: bool,
    coarse: &mut Coarse,
    count: bool,
) -> u64 {
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,popcnt")]
    fn each<S: Lanes16, const GREATER: bool, const COUNT: bool>(
        buf: &mut [S],
        area: Area,
        batches: &[Batch<'_>],
        coarse: &mut Coarse,
    ) -> u64 {
        // Every group written lies inside the buffer (the caller checked
        // `Area::fits_groups` for 16 pixels, and `draw_tris` `Area::fits` for the AVX2 code's
        // eight).
        let at = buf.as_mut_ptr();
        let mut written = 0;
        for b in batches {
            written += b.each(coarse, area.clip, |t| {
                // SAFETY: AVX-512 is enabled here; `at` is a whole tile.
                unsafe {
                    if t.plain {
                        triangle::<S, true, GREATER, COUNT>(at, area, t)
                    } else {
                        triangle::<S, false, GREATER, COUNT>(at, area, t)
                    }
                }
            });
        }
        written
    }
    if !area.fits_groups(buf.len(), 16) {
        // SAFETY: AVX-512 F implies AVX2.
        return unsafe { avx2::draw(buf, area, batches, greater, coarse) };
    }
    // The test and the count as constants of the loop.
    fn pick<S: Lanes16>(
        b: &mut [S],
        area: Area,
        batches: &[Batch<'_>],
        coarse: &mut Coarse,
        greater: bool,
        count: bool,
    ) -> u64 {
        // SAFETY (each call): the caller's contract, AVX-512 F, BW, VL, DQ and POPCNT.
        unsafe {
            match (greater, count) {
                (false, true) => each::<S, false, true>(b, area, batches, coarse),
                (true, true) => each::<S, true, true>(b, area, batches, coarse),
                (false, false) => each::<S, false, false>(b, area, batches, coarse),
                (true, false) => each::<S, true, false>(b, area, batches, coarse),
            }
        }
    }
    match buf {
        TileBuf::F32(b) => pick(b, area, batches, coarse, greater, count),
        TileBuf::U16(b) => pick(b, area, batches, coarse, greater, count),
    }
}

/// A storage whose sixteen consecutive cells take one depth test.
trait Lanes16: avx2::Lanes {
    /// The depth test with writes on the sixteen cells at `at` for depths `d`, in the lanes of
    /// `inside` only; returns the lanes written.
    unsafe fn test_write16<const GREATER: bool>(
        at: *mut Self,
        d: __m512,
        inside: __mmask16,
    ) -> __mmask16;
}

impl Lanes16 for f32 {
    #[inline(always)]
    unsafe fn test_write16<const GREATER: bool>(
        at: *mut f32,
        d: __m512,
        inside: __mmask16,
    ) -> __mmask16 {
        unsafe {
            let old = _mm512_loadu_ps(at);
            // Ordered compares: a NaN on either side fails, as the AVX2 kernel's does.
            let pass = if GREATER {
                _mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(inside, d, old)
            } else {
                _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(inside, d, old)
            };
            _mm512_storeu_ps(at, _mm512_mask_mov_ps(old, pass, d));
            pass
        }
    }
}

impl Lanes16 for u16 {
    #[inline(always)]
    unsafe fn test_write16<const GREATER: bool>(
        at: *mut u16,
        d: __m512,
        inside: __mmask16,
    ) -> __mmask16 {
        unsafe {
            let lo = unorm16x8(_mm512_castps512_ps256(d));
            let hi = unorm16x8(_mm512_extractf32x8_ps::<1>(d));
            // As `_mm_packus_epi32` does: negative to 0, above 65535 to 65535.
            let codes32 = _mm512_max_epi32(
                _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi),
                _mm512_setzero_si512(),
            );
            let codes = _mm512_cvtusepi32_epi16(codes32);
            let old = _mm256_loadu_si256(at.cast());
            let pass = if GREATER {
                _mm256_mask_cmpgt_epu16_mask(inside, codes, old)
            } else {
                _mm256_mask_cmplt_epu16_mask(inside, codes, old)
            };
            _mm256_storeu_si256(at.cast(), _mm256_mask_mov_epi16(old, pass, codes));
            pass
        }
    }
}

/// The portable `unorm16` of eight depths, as 32-bit lanes: (f64(d)·65535 + 1/2) truncated.
#[inline(always)]
unsafe fn unorm16x8(d: __m256) -> __m256i {
    unsafe {
        let scaled = _mm512_mul_pd(_mm512_cvtps_pd(d), _mm512_set1_pd(65535.0));
        _mm512_cvttpd_epi32(_mm512_add_pd(scaled, _mm512_set1_pd(0.5)))
    }
}

/// `viewport_depth` of eight depths: min(z, 1) (a NaN gives 1, as `f64::min` does), then +0
/// below the smallest normal f32.
#[inline(always)]
unsafe fn clamp8(z: __m512d) -> __m512d {
    unsafe {
        let z = _mm512_min_pd(z, _mm512_set1_pd(1.0));
        let smallest = _mm512_set1_pd(f64::from(f32::MIN_POSITIVE));
        _mm512_maskz_mov_pd(_mm512_cmp_pd_mask::<_CMP_GE_OQ>(z, smallest), z)
    }
}

/// The x terms' factors `x − xr` of the sixteen pixels from `x` on, as f64 (exact).
#[inline(always)]
unsafe fn offsets16(t: &Tri, x: i32) -> [__m512d; 2] {
    unsafe {
        let base = _mm512_set1_pd(f64::from(x - i32::from(t.bbox[0])));
        [
            _mm512_add_pd(base, _mm512_setr_pd(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)),
            _mm512_add_pd(
                base,
                _mm512_setr_pd(8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0),
            ),
        ]
    }
}

/// The x terms `∂z/∂x · (x − xr)` of the sixteen pixels whose [`offsets16`] are `k`: the same
/// in every row, so worked out once per triangle.
#[inline(always)]
unsafe fn x_terms16(dzdx: __m512d, [k_lo, k_hi]: [__m512d; 2]) -> [__m512d; 2] {
    unsafe { [_mm512_mul_pd(dzdx, k_lo), _mm512_mul_pd(dzdx, k_hi)] }
}

/// The depths of the sixteen pixels whose [`x_terms16`] are `terms`, for a row whose depth
/// before the x term is `zrow` (the portable `pixel_depth` and `viewport_depth`, lane by lane).
#[inline(always)]
unsafe fn depth16<const PLAIN: bool>(zrow: __m512d, [t_lo, t_hi]: [__m512d; 2]) -> __m512 {
    unsafe {
        let mut z_lo = _mm512_add_pd(zrow, t_lo);
        let mut z_hi = _mm512_add_pd(zrow, t_hi);
        if !PLAIN {
            z_lo = clamp8(z_lo);
            z_hi = clamp8(z_hi);
        }
        _mm512_insertf32x8::<1>(
            _mm512_castps256_ps512(_mm512_cvtpd_ps(z_lo)),
            _mm512_cvtpd_ps(z_hi),
        )
    }
}

/// Draws the part of `t` inside `area` into the tile at `buf`; returns the pixels written when
/// `COUNT` (else any number: the caller drops it).
#[inline(always)]
unsafe fn triangle<S: Lanes16, const PLAIN: bool, const GREATER: bool, const COUNT: bool>(
    buf: *mut S,
    area: Area,
    t: &Tri,
) -> u64 {
    let Some([xs, ys, xe, ye]) = area.span_of(t) else {
        return 0;
    };
    // The last group of a row ends inside the buffer's row (`groups_of`).
    let (xa, groups) = groups_of(&area, xs, xe, 16);
    if groups <= SMALL_GROUPS {
        let span = [xs, ys, xe, ye];
        // SAFETY (both): the caller's contract; the group arithmetic stays in the tile.
        return match edges_in_i32(t, xa, ys, 16 * groups - 1, ye - ys) {
            Ok(edges) => unsafe {
                let edges = Edges32::new(edges);
                if groups == 1 {
                    small::<S, _, PLAIN, GREATER, true, COUNT>(buf, area, t, span, xa, 1, edges)
                } else {
                    small::<S, _, PLAIN, GREATER, false, COUNT>(
                        buf, area, t, span, xa, groups, edges,
                    )
                }
            },
            // A large triangle: its edge functions over the part need 64 bits.
            Err(edges) => unsafe {
                let edges = Edges64::new(edges);
                small::<S, _, PLAIN, GREATER, false, COUNT>(buf, area, t, span, xa, groups, edges)
            },
        };
    }
    // SAFETY: as above (AVX-512 F implies AVX2; the area fits eight-pixel groups too).
    unsafe { avx2::triangle::<S, PLAIN, GREATER>(buf, area, t) }
}

/// All three edges for every centre of each group (`row_ev`: at the part's first group of
/// row ys; `group_step` and `row_step`: their steps from one group to the next and from one
/// row to the next, in the lanes' width).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn small<
    S: Lanes16,
    E: EdgeLanes,
    const PLAIN: bool,
    const GREATER: bool,
    const ONE: bool,
    const COUNT: bool,
>(
    buf: *mut S,
    area: Area,
    t: &Tri,
    [xs, ys, xe, ye]: [i32; 4],
    xa: i32,
    groups: i32,
    (mut row_ev, group_step, row_step): (E, [__m512i; 3], [__m512i; 3]),
) -> u64 {
    unsafe {
        // The lanes of each group inside the part's columns: from xs on in the first group, up
        // to xe in the last.
        let mut columns = [u16::MAX; SMALL_GROUPS as usize];
        columns[0] = u16::MAX << (xs - xa);
        // One group (the common case) is known at compile time: no loop over the groups.
        let groups = if ONE { 1 } else { groups };
        let last = (groups - 1) as usize;
        columns[last] &= (u32::MAX >> (31 - (xe - xa - 16 * last as i32))) as u16;
        let dzdx = _mm512_set1_pd(t.dzdx);
        let sixteen = _mm512_set1_pd(16.0);
        let mut terms = [[_mm512_setzero_pd(); 2]; SMALL_GROUPS as usize];
        let mut k = offsets16(t, xa);
        for term in terms.iter_mut().take(groups as usize) {
            *term = x_terms16(dzdx, k);
            k = [_mm512_add_pd(k[0], sixteen), _mm512_add_pd(k[1], sixteen)];
        }
        let mut written = 0u64;
        let mut row = buf.add(area.index(xa, ys));
        for y in ys..ye + 1 {
            let zrow = _mm512_set1_pd(row_depth(t, y));
            let mut ev = row_ev;
            let on = area.row_on(y);
            for (g, (&cols, &term)) in
                columns
                    .iter()
                    .zip(&terms)
                    .enumerate()
                    .take(if on { groups as usize } else { 0 })
            {
                let inside = !ev.outside() & cols;
                let d = depth16::<PLAIN>(zrow, term);
                let pass = S::test_write16::<GREATER>(row.add(16 * g), d, inside);
                if COUNT {
                    written += u64::from(pass.count_ones());
                }
                ev = ev.step(group_step);
            }
            row_ev = row_ev.step(row_step);
            row = row.add(area.stride);
        }
        written
    }
}

/// The three edge functions of sixteen centres, in lanes wide enough for the triangle.
trait EdgeLanes: Copy {
    /// The centres outside some edge (a sign bit set in e0 | e1 | e2).
    unsafe fn outside(self) -> u16;
    /// The functions `by` further on (one step per edge, in the lanes' width).
    unsafe fn step(self, by: [__m512i; 3]) -> Self;
}

/// One vector of sixteen 32-bit lanes per edge: for triangles whose edge functions over the
/// part stay under 2³¹ ([`edges_in_i32`]).
#[derive(Clone, Copy)]
struct Edges32([__m512i; 3]);

impl Edges32 {
    /// The functions at the part's first group of its first row, from `edges_in_i32`'s values
    /// there and steps along x and y; with the steps from one group and one row to the next
    /// (wrapping: only values inside the checked range are ever used).
    #[inline(always)]
    unsafe fn new((e, sx, sy): Edges) -> (Edges32, [__m512i; 3], [__m512i; 3]) {
        unsafe {
            let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            let mut at = [_mm512_setzero_si512(); 3];
            let mut group_step = [_mm512_setzero_si512(); 3];
            let mut row_step = [_mm512_setzero_si512(); 3];
            for i in 0..3 {
                let lane_step = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(sx[i] as i32));
                at[i] = _mm512_add_epi32(_mm512_set1_epi32(e[i] as i32), lane_step);
                group_step[i] = _mm512_set1_epi32((sx[i] as i32).wrapping_mul(16));
                row_step[i] = _mm512_set1_epi32(sy[i] as i32);
            }
            (Edges32(at), group_step, row_step)
        }
    }
}

impl EdgeLanes for Edges32 {
    #[inline(always)]
    unsafe fn outside(self) -> u16 {
        let [e0, e1, e2] = self.0;
        unsafe { _mm512_movepi32_mask(_mm512_ternarylogic_epi32::<0xFE>(e0, e1, e2)) }
    }

    #[inline(always)]
    unsafe fn step(self, by: [__m512i; 3]) -> Edges32 {
        let mut e = self.0;
        for (v, &d) in e.iter_mut().zip(&by) {
            *v = unsafe { _mm512_add_epi32(*v, d) };
        }
        Edges32(e)
    }
}

/// Two vectors of eight 64-bit lanes per edge (centres 0–7 and 8–15): for a large triangle,
/// whose steps across a part reach 2³¹; they hold the portable kernel's 64-bit edge functions
/// exactly. (Such triangles took the AVX2 kernel's exact row runs eight pixels at a time, and
/// in a flight frame cost as much as all the small ones.)
#[derive(Clone, Copy)]
struct Edges64([[__m512i; 2]; 3]);

impl Edges64 {
    /// The functions at the part's first group of its first row, from `edges_in_i32`'s values
    /// there and steps along x and y; with the steps from one group and one row to the next.
    #[inline(always)]
    unsafe fn new((e, sx, sy): Edges) -> (Edges64, [__m512i; 3], [__m512i; 3]) {
        unsafe {
            let lanes = [
                _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                _mm512_setr_epi64(8, 9, 10, 11, 12, 13, 14, 15),
            ];
            let mut at = [[_mm512_setzero_si512(); 2]; 3];
            let mut group_step = [_mm512_setzero_si512(); 3];
            let mut row_step = [_mm512_setzero_si512(); 3];
            for i in 0..3 {
                for (v, &k) in at[i].iter_mut().zip(&lanes) {
                    let lane_step = _mm512_mullo_epi64(k, _mm512_set1_epi64(sx[i]));
                    *v = _mm512_add_epi64(_mm512_set1_epi64(e[i]), lane_step);
                }
                group_step[i] = _mm512_set1_epi64(sx[i].wrapping_mul(16));
                row_step[i] = _mm512_set1_epi64(sy[i]);
            }
            (Edges64(at), group_step, row_step)
        }
    }
}

impl EdgeLanes for Edges64 {
    #[inline(always)]
    unsafe fn outside(self) -> u16 {
        let [[a0, b0], [a1, b1], [a2, b2]] = self.0;
        unsafe {
            let lo = _mm512_movepi64_mask(_mm512_ternarylogic_epi64::<0xFE>(a0, a1, a2));
            let hi = _mm512_movepi64_mask(_mm512_ternarylogic_epi64::<0xFE>(b0, b1, b2));
            u16::from(lo) | u16::from(hi) << 8
        }
    }

    #[inline(always)]
    unsafe fn step(self, by: [__m512i; 3]) -> Edges64 {
        let mut e = self.0;
        for (halves, &d) in e.iter_mut().zip(&by) {
            for v in halves {
                *v = unsafe { _mm512_add_epi64(*v, d) };
            }
        }
        Edges64(e)
    }
}
