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

/// Fills `out` (a multiple of [`STRIP`] long) with the SAD per position, or, when the plan has
/// masked words ([`Plan::doubled`]), with `2·SAD + 255·plan.masked_in_pairs`, which the caller
/// finishes with `(v − bias) / 2`.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW, and `row` must be valid for reads of
/// `op.off + out.len() + 8` bytes for every op of `plan`.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn sad_row(plan: &Plan, row: *const u8, out: &mut [u32]) {
    debug_assert_eq!(out.len() % STRIP, 0);
    // Two strips per pass share each op's broadcast and loop overhead (small templates have
    // few ops per strip); an odd last strip goes alone.
    let pairs = out.len() / (2 * STRIP);
    let (two, one) = out.split_at_mut(pairs * 2 * STRIP);
    for (s, strips) in two.chunks_exact_mut(2 * STRIP).enumerate() {
        // SAFETY: the caller's guarantee covers every strip of `out`.
        unsafe { strips_pass::<2>(plan, row.add(s * 2 * STRIP), strips) };
    }
    if !one.is_empty() {
        // SAFETY: as above.
        unsafe { strips_pass::<1>(plan, row.add(pairs * 2 * STRIP), one) };
    }
}

/// `sad_row` for `S` consecutive strips starting at `base`.
///
/// # Safety
/// As for [`sad_row`], for the `S` strips of `out`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn strips_pass<const S: usize>(plan: &Plan, base: *const u8, out: &mut [u32]) {
    // Plain SADs count twice when paired ones (which count cared bytes twice) share the total.
    let shift = u32::from(plan.doubled());
    // SAFETY: the caller guarantees every read below stays inside the padded planes.
    unsafe {
        for (b, batch) in plan.batches.iter().enumerate() {
            let mut p = [[_mm512_setzero_si512(); 4]; S];
            for op in &plan.plain[batch.plain.clone()] {
                let t = _mm512_set1_epi32(op.word as i32);
                for (s, acc) in p.iter_mut().enumerate() {
                    let at = base.add(s * STRIP + op.off);
                    for (acc, off) in acc.iter_mut().zip(LOADS) {
                        let img = _mm512_loadu_si512(at.add(off).cast());
                        *acc = _mm512_add_epi16(*acc, _mm512_dbsad_epu8::<0x94>(t, img));
                    }
                }
            }
            for (strip, p) in out.chunks_exact_mut(STRIP).zip(p) {
                // The first batch stores, later ones add: `out` needs no clearing.
                flush(strip, p, shift, b == 0);
            }
            if batch.pair.is_empty() {
                continue;
            }
            let mut q = [[_mm512_setzero_si512(); 4]; S];
            for op in &plan.pair[batch.pair.clone()] {
                let lo = _mm512_set1_epi32(op.lo as i32);
                let hi = _mm512_set1_epi32(op.hi as i32);
                for (s, acc) in q.iter_mut().enumerate() {
                    let at = base.add(s * STRIP + op.off);
                    for (acc, off) in acc.iter_mut().zip(LOADS) {
                        let img = _mm512_loadu_si512(at.add(off).cast());
                        let both = _mm512_add_epi16(
                            _mm512_dbsad_epu8::<0x94>(lo, img),
                            _mm512_dbsad_epu8::<0x94>(hi, img),
                        );
                        *acc = _mm512_add_epi16(*acc, both);
                    }
                }
            }
            for (strip, q) in out.chunks_exact_mut(STRIP).zip(q) {
                flush(strip, q, 0, false);
            }
        }
    }
}

/// Widens the four u16 accumulators to u32 in position order, shifts them left by `shift` and
/// stores them in `strip` (`store`) or adds them to it.
///
/// Lane `m` of the load at 0 holds positions `16m..16m + 8`, lane `m` of the load at 8 the next
/// eight (likewise 64 and 72 for the second half), so interleaving their 128-bit lanes with one
/// two-source permute puts 32 positions in order; each half then widens with one
/// `vpmovzxwd`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn flush(strip: &mut [u32], acc: [__m512i; 4], shift: u32, store: bool) {
    let sh = _mm_cvtsi32_si128(shift as i32);
    // Quadword indices: 0–7 from `a`, 8–15 from `b`.
    let first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    let second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    for half in 0..2 {
        let (a, b) = (acc[2 * half], acc[2 * half + 1]);
        for (k, idx) in [first, second].into_iter().enumerate() {
            let ordered = _mm512_permutex2var_epi64(a, idx, b);
            let quarters = [
                _mm512_castsi512_si256(ordered),
                _mm512_extracti64x4_epi64::<1>(ordered),
            ];
            for (q, h) in quarters.into_iter().enumerate() {
                let wide = _mm512_sll_epi32(_mm512_cvtepu16_epi32(h), sh);
                let at = 64 * half + 32 * k + 16 * q;
                let dst = &mut strip[at..at + 16];
                // SAFETY: `dst` is exactly 16 u32.
                unsafe {
                    let sum = if store {
                        wide
                    } else {
                        _mm512_add_epi32(_mm512_loadu_si512(dst.as_ptr().cast()), wide)
                    };
                    _mm512_storeu_si512(dst.as_mut_ptr().cast(), sum);
                }
            }
        }
    }
}

scalar::portable_helpers!("avx512f,avx512bw");
