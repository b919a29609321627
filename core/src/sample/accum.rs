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
