//! AVX2 kernel: `vmpsadbw` (`_mm256_mpsadbw_epu8`) scores 16 positions per instruction.
//!
//! With the template word in dword 0 of each 128-bit lane of `b` and the image bytes in `a`,
//! each 128-bit lane yields the SADs at 8 consecutive byte offsets: a 32-byte load at `p`
//! scores positions `p + 0..8` and `p + 16..24`, a load at `p + 8` positions `p + 8..16` and
//! `p + 24..32`.

use core::arch::x86_64::*;

use super::plan::{Plan, STRIP};
use super::scalar;

/// Positions per inner strip.
const WIDTH: usize = 64;
/// Byte offsets of the four loads per op; together they cover the 64 positions of a strip.
const LOADS: [usize; 4] = [0, 8, 32, 40];

/// Fills `out` (a multiple of [`STRIP`] long) with the SAD per position, or, when the plan has
/// masked words ([`Plan::doubled`]), with `2·SAD + 255·plan.masked_in_pairs`, which the caller
/// finishes with `(v − bias) / 2`.
///
/// # Safety
/// The CPU must support AVX2, and `row` must be valid for reads of `op.off + out.len() + 8`
/// bytes for every op of `plan`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sad_row(plan: &Plan, row: *const u8, out: &mut [u32]) {
    debug_assert_eq!(out.len() % STRIP, 0);
    // Plain SADs count twice when paired ones (which count cared bytes twice) share the total.
    let shift = u32::from(plan.doubled());
    for (s, strip) in out.chunks_exact_mut(WIDTH).enumerate() {
        // SAFETY: the caller guarantees every read below stays inside the padded planes.
        unsafe {
            let base = row.add(s * WIDTH);
            for (b, batch) in plan.batches.iter().enumerate() {
                let mut p = [_mm256_setzero_si256(); 4];
                for op in &plan.plain[batch.plain.clone()] {
                    let t = _mm256_set1_epi32(op.word as i32);
                    let at = base.add(op.off);
                    for (acc, off) in p.iter_mut().zip(LOADS) {
                        let img = _mm256_loadu_si256(at.add(off).cast());
                        *acc = _mm256_add_epi16(*acc, _mm256_mpsadbw_epu8::<0>(img, t));
                    }
                }
                // The first batch stores, later ones add: `out` needs no clearing.
                flush(strip, p, shift, b == 0);
                if batch.pair.is_empty() {
                    continue;
                }
                let mut q = [_mm256_setzero_si256(); 4];
                for op in &plan.pair[batch.pair.clone()] {
                    let lo = _mm256_set1_epi32(op.lo as i32);
                    let hi = _mm256_set1_epi32(op.hi as i32);
                    let at = base.add(op.off);
                    for (acc, off) in q.iter_mut().zip(LOADS) {
                        let img = _mm256_loadu_si256(at.add(off).cast());
                        let both = _mm256_add_epi16(
                            _mm256_mpsadbw_epu8::<0>(img, lo),
                            _mm256_mpsadbw_epu8::<0>(img, hi),
                        );
                        *acc = _mm256_add_epi16(*acc, both);
                    }
                }
                flush(strip, q, 0, false);
            }
        }
    }
}

/// Widens the four u16 accumulators to u32 in position order, shifts them left by `shift` and
/// adds them to `strip`.
#[inline]
#[target_feature(enable = "avx2")]
fn flush(strip: &mut [u32], acc: [__m256i; 4], shift: u32, store: bool) {
    let sh = _mm_cvtsi32_si128(shift as i32);
    for (g, a) in acc.into_iter().enumerate() {
        // Load g covers positions 32·(g / 2) + 8·(g % 2) + {0..8, 16..24}.
        let first = 32 * (g / 2) + 8 * (g % 2);
        let halves = [
            (first, _mm256_castsi256_si128(a)),
            (first + 16, _mm256_extracti128_si256::<1>(a)),
        ];
        for (at, h) in halves {
            let wide = _mm256_sll_epi32(_mm256_cvtepu16_epi32(h), sh);
            let dst = &mut strip[at..at + 8];
            // SAFETY: `dst` is exactly 8 u32.
            unsafe {
                let sum = if store {
                    wide
                } else {
                    _mm256_add_epi32(_mm256_loadu_si256(dst.as_ptr().cast()), wide)
                };
                _mm256_storeu_si256(dst.as_mut_ptr().cast(), sum);
            }
        }
    }
}

scalar::portable_helpers!("avx2");
