//! The canonical weighted sum of SPEC R70 / §3.2: the f64 products `value·weight` (exact for the
//! dyadic weights of point/linear/mip filtering), summed to the correctly rounded f64 sum, rounded
//! to f32, clamped to the weighted taps' range, denormals flushed.
//!
//! The sum is kept error-free as a Shewchuk expansion (two-sum), so the result does not depend on
//! tap order or on how far apart the texel exponents are — a plain sequential f64 sum is not
//! enough there (SPEC §3.2). The f64 rounding step is the one the independent reference model
//! takes as well (its results are the correctly rounded f64 sum, then f32), which only matters
//! for the non-dyadic weights of cube corners (R103) and anisotropic probes (R72).

use crate::format::flush_denormal;

/// Most components a non-overlapping f64 expansion can have (the f64 exponent range / 53, rounded up).
const MAX_COMPONENTS: usize = 48;

/// An exact sum of f64 terms.
#[derive(Clone, Copy)]
pub(crate) struct Expansion {
    parts: [f64; MAX_COMPONENTS],
    len: usize,
}

#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

impl Expansion {
    pub(crate) const ZERO: Expansion = Expansion {
        parts: [0.0; MAX_COMPONENTS],
        len: 0,
    };

    /// Adds one f64 term exactly (Shewchuk's grow-expansion with zero elimination).
    #[inline]
    pub(crate) fn add(&mut self, b: f64) {
        if b == 0.0 {
            return;
        }
        let mut q = b;
        let mut n = 0;
        for i in 0..self.len {
            let (s, err) = two_sum(q, self.parts[i]);
            if err != 0.0 {
                self.parts[n] = err;
                n += 1;
            }
            q = s;
        }
        if q != 0.0 || n == 0 {
            self.parts[n] = q;
            n += 1;
        }
        self.len = n.min(MAX_COMPONENTS);
    }

    /// The sign of the exact sum: −1, 0 or 1 (the sign of its largest non-zero component).
    #[inline]
    fn sign(&self) -> i32 {
        for i in (0..self.len).rev() {
            let p = self.parts[i];
            if p > 0.0 {
                return 1;
            }
            if p < 0.0 {
                return -1;
            }
        }
        0
    }

    /// The sign of `self − (a + b)`, exactly.
    fn cmp_with2(&self, a: f64, b: f64) -> i32 {
        let mut e = *self;
        e.add(-a);
        e.add(-b);
        e.sign()
    }

    /// The exact sum rounded once to f64 (round to nearest, ties to even), like `math.fsum`.
    pub(crate) fn round_to_f64(&self) -> f64 {
        // Summed from +0 (an empty `Iterator::sum` of floats starts at −0).
        let r = self.parts[..self.len].iter().fold(0.0f64, |a, &p| a + p);
        if !r.is_finite() {
            return r;
        }
        let up = r.next_up();
        let down = r.next_down();
        // Half the gap to each neighbour is exact (a power of two), so r ± half is an exact
        // two-term midpoint.
        let half_up = (up - r) * 0.5;
        let half_down = (r - down) * 0.5;
        let even = |a: f64, b: f64| if a.to_bits() & 1 == 0 { a } else { b };
        match self.cmp_with2(r, half_up) {
            1 => return up,
            0 => return even(r, up),
            _ => {}
        }
        match self.cmp_with2(r, -half_down) {
            -1 => down,
            0 => even(r, down),
            _ => r,
        }
    }

    /// The sum as R70 rounds it: correctly rounded to f64, then to f32.
    #[inline]
    pub(crate) fn round_to_f32(&self) -> f32 {
        self.round_to_f64() as f32
    }
}

/// The average of three f32 values, `(a + b + c) / 3` computed exactly and rounded once to f32
/// (to nearest, ties to even), then flushed as every filtered result is (R6): the value a cube
/// gather synthesizes for a corner's missing texel (R103, R120). Weighting each value by a
/// rounded `1/3` instead can land one ulp off. NaN in, NaN out; infinities of one sign give that
/// infinity, of both NaN; three −0 give −0.
pub(crate) fn third_of_sum(values: [f32; 3]) -> f32 {
    if values.iter().any(|v| v.is_nan()) {
        return f32::NAN;
    }
    let pos = values.contains(&f32::INFINITY);
    let neg = values.contains(&f32::NEG_INFINITY);
    match (pos, neg) {
        (true, true) => return f32::NAN,
        (true, false) => return f32::INFINITY,
        (false, true) => return f32::NEG_INFINITY,
        _ => {}
    }
    if values.iter().all(|&v| v == 0.0 && v.is_sign_negative()) {
        return -0.0;
    }
    let mut sum = Expansion::ZERO;
    for v in values {
        sum.add(f64::from(v));
    }
    // `sign(S − 3·m)` for a midpoint `m` of two neighbouring f32 values: `m` needs 25 bits and
    // `3·m` 27, both exact in f64.
    let above = |m: f64| {
        let mut e = sum;
        e.add(-3.0 * m);
        e.sign()
    };
    let even = |q: f32| q.to_bits() & 1 == 0;
    // The f64 quotient is within an ulp of the answer; step to the nearest f32 by midpoints.
    let mut q = (sum.round_to_f64() / 3.0) as f32;
    for _ in 0..4 {
        let up = q.next_up();
        if up.is_finite() {
            let c = above((f64::from(q) + f64::from(up)) * 0.5);
            if c > 0 || (c == 0 && even(up)) {
                q = up;
                continue;
            }
        }
        let down = q.next_down();
        if down.is_finite() {
            let c = above((f64::from(q) + f64::from(down)) * 0.5);
            if c < 0 || (c == 0 && even(down)) {
                q = down;
                continue;
            }
        }
        break;
    }
    flush_denormal(q)
}

/// Weighted sum of f32 values with non-negative weights, per SPEC R70.
#[derive(Clone, Copy)]
pub(crate) struct WeightedSum {
    sum: Expansion,
    min: f32,
    max: f32,
    any: bool,
    all_negative_zero: bool,
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
}

impl WeightedSum {
    pub(crate) const NEW: WeightedSum = WeightedSum {
        sum: Expansion::ZERO,
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
        any: false,
        all_negative_zero: true,
        nan: false,
        pos_inf: false,
        neg_inf: false,
    };

    /// Adds `value·weight`; callers skip weight-0 taps (R68).
    #[inline]
    pub(crate) fn add(&mut self, value: f32, weight: f64) {
        self.any = true;
        if value.is_nan() {
            self.nan = true;
            return;
        }
        if value.is_infinite() {
            if value > 0.0 {
                self.pos_inf = true;
            } else {
                self.neg_inf = true;
            }
            return;
        }
        if !(value == 0.0 && value.is_sign_negative()) {
            self.all_negative_zero = false;
        }
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum.add(f64::from(value) * weight);
    }

    /// The result: rounded once, clamped to the taps' range (so R69 holds exactly), flushed (R6).
    pub(crate) fn finish(&self) -> f32 {
        if !self.any {
            return 0.0;
        }
        if self.nan || (self.pos_inf && self.neg_inf) {
            return f32::NAN;
        }
        if self.pos_inf {
            return f32::INFINITY;
        }
        if self.neg_inf {
            return f32::NEG_INFINITY;
        }
        if self.all_negative_zero {
            return -0.0;
        }
        let r = self.sum.round_to_f32();
        // Clamp with comparisons so that a ±0 range keeps its sign (R69: constant in, constant out).
        let r = if r < self.min || (r == self.min && self.min.is_sign_negative()) {
            self.min
        } else if r > self.max {
            self.max
        } else {
            r
        };
        flush_denormal(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finite f32 as `m · 2^e` (`m` an integer).
    fn parts(v: f32) -> (i128, i32) {
        let bits = v.to_bits();
        let exp = ((bits >> 23) & 0xFF) as i32;
        let mant = i128::from(bits & 0x7F_FFFF);
        let (m, e) = if exp == 0 {
            (mant, -149)
        } else {
            (mant | 0x80_0000, exp - 150)
        };
        (if v < 0.0 { -m } else { m }, e)
    }

    /// `(a + b + c) / 3` rounded once, by exact integer arithmetic on the f32 bits (an
    /// independent oracle; the values' exponents must lie within about 70 of each other so that
    /// everything fits an i128).
    fn rational_third(values: [f32; 3]) -> Option<f32> {
        if values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let guess = (values.iter().map(|&v| f64::from(v)).sum::<f64>() / 3.0) as f32;
        let mut candidates = vec![guess];
        for _ in 0..2 {
            let (lo, hi) = (
                candidates[0].next_down(),
                candidates[candidates.len() - 1].next_up(),
            );
            candidates.insert(0, lo);
            candidates.push(hi);
        }
        candidates.retain(|q| q.is_finite());
        let base = values
            .iter()
            .chain(&candidates)
            .filter(|v| **v != 0.0)
            .map(|&v| parts(v).1)
            .min()
            .unwrap_or(0);
        let top = values
            .iter()
            .chain(&candidates)
            .filter(|v| **v != 0.0)
            .map(|&v| parts(v).1)
            .max()
            .unwrap_or(0);
        if top - base > 96 {
            // A cancellation left the answer far below the values: out of this oracle's reach.
            return None;
        }
        let scaled = |v: f32| {
            let (m, e) = parts(v);
            if m == 0 { 0 } else { m << (e - base) }
        };
        let total: i128 = values.iter().map(|&v| scaled(v)).sum();
        let dist = |q: f32| (scaled(q) * 3 - total).abs();
        let mut best = guess;
        for &q in &candidates {
            let (d, b) = (dist(q), dist(best));
            if d < b || (d == b && q.to_bits() & 1 == 0 && best.to_bits() & 1 == 1) {
                best = q;
            }
        }
        Some(flush_denormal(best))
    }

    #[test]
    fn a_cube_corners_average_is_rounded_once_r103_r120() {
        // The weighted form (each value times f64 1/3) is one ulp off here; the exact average
        // is not.
        let mut rng = penumbra_testkit::Rng::xorshift64(0x0123_4567_89AB_CDEF);
        let mut next = || rng.next_u64();
        let (mut differs, mut checked) = (0, 0);
        for i in 0..200_000 {
            let v = |r: u64| -> f32 {
                match i % 3 {
                    // Values of one scale (texels of an ordinary map).
                    0 => (r % 1_000_000) as f32 / 997.0,
                    // Any sign and scale, the three within 2^±35 of each other.
                    1 => {
                        let scale = 2f32.powi(i / 3 % 200 - 100);
                        let m = f32::from_bits(0x3F80_0000 | (r as u32 & 0x7F_FFFF));
                        let spread = 2f32.powi((r >> 32) as i32 % 70 - 35);
                        let sign = if r & (1 << 40) != 0 { -1.0 } else { 1.0 };
                        sign * m * scale * spread
                    }
                    // Near 1, where the weights matter most.
                    _ => 1.0 + (r % 4096) as f32 * f32::EPSILON,
                }
            };
            let values = [v(next()), v(next()), v(next())];
            let Some(want) = rational_third(values) else {
                continue;
            };
            checked += 1;
            let got = third_of_sum(values);
            assert_eq!(got.to_bits(), want.to_bits(), "{values:?}");
            let mut weighted = WeightedSum::NEW;
            for x in values {
                weighted.add(x, 1.0 / 3.0);
            }
            if weighted.finish().to_bits() != want.to_bits() {
                differs += 1;
            }
        }
        assert!(checked > 180_000, "{checked}");
        // The old weighting really was off somewhere (the test would pass it otherwise).
        assert!(differs > 0);
        assert!(third_of_sum([f32::NAN, 1.0, 2.0]).is_nan());
        assert_eq!(third_of_sum([f32::INFINITY, 1.0, 2.0]), f32::INFINITY);
        assert!(third_of_sum([f32::INFINITY, f32::NEG_INFINITY, 2.0]).is_nan());
        assert_eq!(
            third_of_sum([-0.0, -0.0, -0.0]).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(third_of_sum([1.0, -1.0, 0.0]).to_bits(), 0);
        assert_eq!(third_of_sum([f32::MAX, f32::MAX, f32::MAX]), f32::MAX);
        assert_eq!(third_of_sum([1.0, 1.0, 2.0]), 4.0 / 3.0);
    }

    fn exact_round(terms: &[(f32, f64)]) -> f32 {
        let mut s = WeightedSum::NEW;
        for &(v, w) in terms {
            s.add(v, w);
        }
        s.finish()
    }

    #[test]
    fn widely_spread_exponents_sum_exactly_r70() {
        // 1 + 2^-60 + 2^-60 - 1: a sequential f64 sum loses both small terms, the exact sum keeps
        // them, in any order.
        for order in [
            [2f64.powi(-60), 1.0, 2f64.powi(-60), -1.0],
            [1.0, -1.0, 2f64.powi(-60), 2f64.powi(-60)],
        ] {
            let mut e = Expansion::ZERO;
            for v in order {
                e.add(v);
            }
            assert_eq!(e.round_to_f64(), 2f64.powi(-59));
        }
    }

    #[test]
    fn f64_rounding_is_correct_at_ties() {
        // 1 + 2^-53 is a tie in f64: to even (1.0); a tiny extra term pushes it up.
        let mut e = Expansion::ZERO;
        e.add(1.0);
        e.add(2f64.powi(-53));
        assert_eq!(e.round_to_f64(), 1.0);
        e.add(2f64.powi(-200));
        assert_eq!(e.round_to_f64(), 1.0 + 2f64.powi(-52));
    }

    #[test]
    fn constant_input_gives_constant_output_r69() {
        for v in [0.1f32, 1.0 / 3.0, 123.456, -7.25e-20, -0.0] {
            let w = [
                0.69921875 * 0.3046875,
                0.30078125 * 0.3046875,
                0.69921875 * 0.6953125,
                0.30078125 * 0.6953125,
            ];
            let r = exact_round(&w.map(|w| (v, w)));
            assert_eq!(r.to_bits(), v.to_bits(), "{v}");
        }
    }

    #[test]
    fn non_finite_taps_follow_ieee() {
        assert!(exact_round(&[(f32::NAN, 0.5), (1.0, 0.5)]).is_nan());
        assert!(exact_round(&[(f32::INFINITY, 0.5), (f32::NEG_INFINITY, 0.5)]).is_nan());
        assert_eq!(
            exact_round(&[(f32::INFINITY, 0.5), (1.0, 0.5)]),
            f32::INFINITY
        );
    }
}
