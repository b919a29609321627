//! The canonical weighted sum of SPEC R70 / §3.2: `Σ value·weight` computed exactly, rounded once
//! to f32, clamped to the weighted taps' range, denormals flushed.
//!
//! Products and sums are kept error-free as a Shewchuk expansion (two-product + two-sum), so the
//! result does not depend on tap order or on how far apart the texel exponents are — a plain f64
//! sum is not enough there (SPEC §3.2).

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

#[inline]
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
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

    /// Adds `a·b` exactly.
    #[inline]
    pub(crate) fn add_product(&mut self, a: f64, b: f64) {
        let (p, e) = two_product(a, b);
        self.add(e);
        self.add(p);
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

    /// The sign of `self − m`, exactly.
    fn cmp_with(&self, m: f64) -> i32 {
        let mut e = *self;
        e.add(-m);
        e.sign()
    }

    /// The exact sum rounded once to f32 (round to nearest, ties to even).
    pub(crate) fn round_to_f32(&self) -> f32 {
        // Summed from +0 (an empty `Iterator::sum` of floats starts at −0).
        let approx = self.parts[..self.len].iter().fold(0.0f64, |a, &p| a + p);
        let r = approx as f32;
        if !r.is_finite() {
            return r;
        }
        let up = r.next_up();
        let down = r.next_down();
        let hi_mid = (f64::from(r) + f64::from(up)) * 0.5;
        let lo_mid = (f64::from(r) + f64::from(down)) * 0.5;
        let even = |a: f32, b: f32| if a.to_bits() & 1 == 0 { a } else { b };
        match self.cmp_with(hi_mid) {
            1 => return up,
            0 => return even(r, up),
            _ => {}
        }
        match self.cmp_with(lo_mid) {
            -1 => down,
            0 => even(r, down),
            _ => r,
        }
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
        self.sum.add_product(f64::from(value), weight);
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
    fn widely_spread_exponents_round_once_r70() {
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23 in f32; a tiny extra term decides it upward.
        let t = [
            (1.0f32, 0.5),
            (1.0, 0.5),
            (2f32.powi(-24), 1.0),
            (2f32.powi(-100), 1.0),
        ];
        let mut e = Expansion::ZERO;
        for (v, w) in t {
            e.add_product(f64::from(v), w);
        }
        assert_eq!(e.round_to_f32(), 1.0 + 2f32.powi(-23));
        // Without it the tie goes to even (1.0).
        assert_eq!(exact_round(&t[..3]), 1.0);
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
