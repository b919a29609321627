//! AVX-512BW kernel: `vdbpsadbw` (`_mm512_dbsad_epu8`) scores 32 positions per instruction.
//!
//! With the template word broadcast to every dword of `a` and the image bytes in `b` shuffled
//! with `0x94` (dwords 0,1,1,2 of each 128-bit lane), each 64-bit lane yields the SADs at 4
//! consecutive byte offsets, and each 128-bit lane covers 8 positions: a load at `p` scores
//! positions `p + 16m + 0..8`, a load at `p + 8` positions `p + 16m + 8..16` (m = 0..3).

use core::arch::x86_64::*;

use super::plan::{Plan, STRIP};
use super::scalar;

/// Byte offsets of the four loads per op; together they cover the 128 positions of a strip.
const LOADS: [usize; 4] = [0, 8, 64, 72];

/// Fills `out` (a multiple of [`STRIP`] long) with `2·SAD + 255·plan.masked_in_pairs` per
/// position; the caller finishes with `(v − bias) / 2`.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW, and `row` must be valid for reads of
/// `op.off + out.len() + 8` bytes for every op of `plan`.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn sad_row(plan: &Plan, row: *const u8, out: &mut [u32]) {
    debug_assert_eq!(out.len() % STRIP, 0);
    out.fill(0);
    for (s, strip) in out.chunks_exact_mut(STRIP).enumerate() {
        // SAFETY: the caller guarantees every read below stays inside the padded planes.
        unsafe {
            let base = row.add(s * STRIP);
            for batch in &plan.batches {
                let mut p = [_mm512_setzero_si512(); 4];
                for op in &plan.plain[batch.plain.clone()] {
                    let t = _mm512_set1_epi32(op.word as i32);
                    let at = base.add(op.off);
                    for (acc, off) in p.iter_mut().zip(LOADS) {
                        let img = _mm512_loadu_si512(at.add(off).cast());
                        *acc = _mm512_add_epi16(*acc, _mm512_dbsad_epu8::<0x94>(t, img));
                    }
                }
                // Plain SADs count twice so that paired ones (which count cared bytes twice)
                // share one total.
                flush(strip, p, 1);
                if batch.pair.is_empty() {
                    continue;
                }
                let mut q = [_mm512_setzero_si512(); 4];
                for op in &plan.pair[batch.pair.clone()] {
                    let lo = _mm512_set1_epi32(op.lo as i32);
                    let hi = _mm512_set1_epi32(op.hi as i32);
                    let at = base.add(op.off);
                    for (acc, off) in q.iter_mut().zip(LOADS) {
                        let img = _mm512_loadu_si512(at.add(off).cast());
                        let both = _mm512_add_epi16(
                            _mm512_dbsad_epu8::<0x94>(lo, img),
                            _mm512_dbsad_epu8::<0x94>(hi, img),
                        );
                        *acc = _mm512_add_epi16(*acc, both);
                    }
                }
                flush(strip, q, 0);
            }
        }
    }
}

/// Widens the four u16 accumulators to u32, puts them back in position order, shifts them left
/// by `shift` and adds them to `strip`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn flush(strip: &mut [u32], acc: [__m512i; 4], shift: u32) {
    let sh = _mm_cvtsi32_si128(shift as i32);
    for half in 0..2 {
        let (a, b) = (acc[2 * half], acc[2 * half + 1]);
        let lanes = [
            (
                _mm512_extracti32x4_epi32::<0>(a),
                _mm512_extracti32x4_epi32::<0>(b),
            ),
            (
                _mm512_extracti32x4_epi32::<1>(a),
                _mm512_extracti32x4_epi32::<1>(b),
            ),
            (
                _mm512_extracti32x4_epi32::<2>(a),
                _mm512_extracti32x4_epi32::<2>(b),
            ),
            (
                _mm512_extracti32x4_epi32::<3>(a),
                _mm512_extracti32x4_epi32::<3>(b),
            ),
        ];
        for (m, (la, lb)) in lanes.into_iter().enumerate() {
            let wide = _mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(_mm256_cvtepu16_epi32(la)),
                _mm256_cvtepu16_epi32(lb),
            );
            let wide = _mm512_sll_epi32(wide, sh);
            let dst = &mut strip[64 * half + 16 * m..64 * half + 16 * m + 16];
            // SAFETY: `dst` is exactly 16 u32.
            unsafe {
                let old = _mm512_loadu_si512(dst.as_ptr().cast());
                _mm512_storeu_si512(dst.as_mut_ptr().cast(), _mm512_add_epi32(old, wide));
            }
        }
    }
}

scalar::portable_helpers!("avx512f,avx512bw");
