//! SSE4.1 kernel: `mpsadbw` (`_mm_mpsadbw_epu8`) scores 8 positions per instruction.
//!
//! With the template word in dword 0 of `b` and 16 image bytes in `a`, `mpsadbw` yields the SADs
//! at the 8 consecutive byte offsets `p + 0..8`; four loads cover 32 positions in order.

use core::arch::x86_64::*;

use super::plan::{Plan, STRIP};
use super::scalar;

/// Positions per inner strip.
const WIDTH: usize = 32;
/// Byte offsets of the four loads per op.
const LOADS: [usize; 4] = [0, 8, 16, 24];

/// Fills `out` (a multiple of [`STRIP`] long) with the SAD per position, or, when the plan has
/// masked words ([`Plan::doubled`]), with `2·SAD + 255·plan.masked_in_pairs`, which the caller
/// finishes with `(v − bias) / 2`.
///
/// # Safety
/// The CPU must support SSE4.1, and `row` must be valid for reads of `op.off + out.len() + 8`
/// bytes for every op of `plan`.
#[target_feature(enable = "sse4.1")]
pub(crate) unsafe fn sad_row(plan: &Plan, row: *const u8, out: &mut [u32]) {
    debug_assert_eq!(out.len() % STRIP, 0);
    // Plain SADs count twice when paired ones (which count cared bytes twice) share the total.
    let shift = u32::from(plan.doubled());
    for (s, strip) in out.chunks_exact_mut(WIDTH).enumerate() {
        // SAFETY: the caller guarantees every read below stays inside the padded planes.
        unsafe {
            let base = row.add(s * WIDTH);
            for (b, batch) in plan.batches.iter().enumerate() {
                let mut p = [_mm_setzero_si128(); 4];
                for op in &plan.plain[batch.plain.clone()] {
                    let t = _mm_cvtsi32_si128(op.word as i32);
                    let at = base.add(op.off);
                    for (acc, off) in p.iter_mut().zip(LOADS) {
                        let img = _mm_loadu_si128(at.add(off).cast());
                        *acc = _mm_add_epi16(*acc, _mm_mpsadbw_epu8::<0>(img, t));
                    }
                }
                // The first batch stores, later ones add: `out` needs no clearing.
                flush(strip, p, shift, b == 0);
                if batch.pair.is_empty() {
                    continue;
                }
                let mut q = [_mm_setzero_si128(); 4];
                for op in &plan.pair[batch.pair.clone()] {
                    let lo = _mm_cvtsi32_si128(op.lo as i32);
                    let hi = _mm_cvtsi32_si128(op.hi as i32);
                    let at = base.add(op.off);
                    for (acc, off) in q.iter_mut().zip(LOADS) {
                        let img = _mm_loadu_si128(at.add(off).cast());
                        let both = _mm_add_epi16(
                            _mm_mpsadbw_epu8::<0>(img, lo),
                            _mm_mpsadbw_epu8::<0>(img, hi),
                        );
                        *acc = _mm_add_epi16(*acc, both);
                    }
                }
                flush(strip, q, 0, false);
            }
        }
    }
}

/// Widens the four u16 accumulators to u32, shifts them left by `shift` and adds them to
/// `strip` (load g covers positions `8g..8g + 8`).
#[inline]
#[target_feature(enable = "sse4.1")]
fn flush(strip: &mut [u32], acc: [__m128i; 4], shift: u32, store: bool) {
    let sh = _mm_cvtsi32_si128(shift as i32);
    let zero = _mm_setzero_si128();
    for (g, a) in acc.into_iter().enumerate() {
        let halves = [_mm_cvtepu16_epi32(a), _mm_unpackhi_epi16(a, zero)];
        for (h, wide) in halves.into_iter().enumerate() {
            let dst = &mut strip[8 * g + 4 * h..8 * g + 4 * h + 4];
            // SAFETY: `dst` is exactly 4 u32.
            unsafe {
                let wide = _mm_sll_epi32(wide, sh);
                let sum = if store {
                    wide
                } else {
                    _mm_add_epi32(_mm_loadu_si128(dst.as_ptr().cast()), wide)
                };
                _mm_storeu_si128(dst.as_mut_ptr().cast(), sum);
            }
        }
    }
}

scalar::portable_helpers!("sse4.1");
