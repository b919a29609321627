//! Turning fetched taps into a result: the weighted sum (R66, R70), per-tap comparison then
//! filtering (R79–R82), and min/max reduction (R93–R95).

use super::accum::WeightedSum;
use crate::desc::ComparisonFunc;
use crate::format::{CompareRef, ComponentKind, Format};

/// §1.4 / R95 minimum: NaN is ignored unless both are NaN; min(−0, +0) = −0.
#[must_use]
#[inline]
pub fn d3d_min(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

/// §1.4 / R95 maximum: NaN is ignored unless both are NaN; max(−0, +0) = +0.
#[must_use]
#[inline]
pub fn d3d_max(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_positive() {
        a
    } else {
        b
    }
}

/// The border colour as one format sees it (R34, R35, R37).
#[derive(Clone, Copy, Debug)]
pub struct Border {
    /// RGBA: the border's components where the format has them (clamped and quantized for UNORM),
    /// the format defaults elsewhere.
    pub rgba: [f32; 4],
    /// The R component's UNORM code, for comparisons.
    pub r_code: Option<u32>,
}

impl Border {
    /// The border `color` as seen through `format`.
    #[must_use]
    pub fn new(color: [f32; 4], format: Format) -> Border {
        let mut rgba = [0.0, 0.0, 0.0, 1.0];
        let mut r_code = None;
        for (c, out) in rgba.iter_mut().enumerate().take(format.channels()) {
            let b = format.border_component(color[c]);
            *out = b.value;
            if c == 0 {
                r_code = b.code;
            }
        }
        Border { rgba, r_code }
    }
}

/// What the taps are reduced to.
#[derive(Clone, Copy, Debug)]
pub enum Reduce {
    /// Weighted sum of RGBA.
    Sum,
    /// Per-tap comparison with a quantized reference, then the weighted sum of 0/1 (R80).
    Compare(ComparisonFunc, CompareRef),
    /// Per-component minimum over non-zero-weight taps.
    Min,
    /// Per-component maximum over non-zero-weight taps.
    Max,
}

/// Accumulates taps of one sample.
pub struct Combiner {
    format: Format,
    border: Border,
    reduce: Reduce,
    sums: [WeightedSum; 4],
    ext: [f32; 4],
}

impl Combiner {
    /// A combiner for `format` with the given border and reduction.
    #[must_use]
    #[inline]
    pub fn new(format: Format, border: Border, reduce: Reduce) -> Combiner {
        Combiner {
            format,
            border,
            reduce,
            sums: [WeightedSum::NEW; 4],
            ext: [f32::NAN; 4],
        }
    }

    /// The pass/fail of one stored texel under the comparison (R79, R82): UNORM formats compare
    /// integer codes, float formats the flushed value (R85).
    #[must_use]
    #[inline]
    pub fn compare_texel(
        format: Format,
        func: ComparisonFunc,
        reference: CompareRef,
        texel: &[u8],
    ) -> bool {
        let raw = format.raw_component(texel, 0);
        match (reference, format.kind()) {
            (CompareRef::Unorm(q), ComponentKind::Unorm(_)) => func.passes_u32(q, raw),
            (CompareRef::Float(r), _) => func.passes(r, format.decode_component(raw)),
            (CompareRef::Unorm(q), _) => func.passes(q as f32, format.decode_component(raw)),
        }
    }

    /// The pass/fail of a border tap (R37: the border's R as the texel depth).
    #[must_use]
    #[inline]
    pub fn compare_border(border: &Border, func: ComparisonFunc, reference: CompareRef) -> bool {
        match (reference, border.r_code) {
            (CompareRef::Unorm(q), Some(code)) => func.passes_u32(q, code),
            (CompareRef::Float(r), _) => func.passes(r, border.rgba[0]),
            (CompareRef::Unorm(q), None) => func.passes(q as f32, border.rgba[0]),
        }
    }

    #[inline]
    fn add_rgba(&mut self, v: [f32; 4], weight: f64) {
        match self.reduce {
            Reduce::Sum => {
                for (s, v) in self.sums.iter_mut().zip(v) {
                    s.add(v, weight);
                }
            }
            Reduce::Min => {
                for (e, v) in self.ext.iter_mut().zip(v) {
                    *e = d3d_min(*e, v);
                }
            }
            Reduce::Max => {
                for (e, v) in self.ext.iter_mut().zip(v) {
                    *e = d3d_max(*e, v);
                }
            }
            Reduce::Compare(..) => unreachable!("comparison taps go through add_pass"),
        }
    }

    /// Adds a stored texel with a non-zero weight.
    #[inline]
    pub fn texel(&mut self, texel: &[u8], weight: f64) {
        if let Reduce::Compare(func, reference) = self.reduce {
            let pass = Self::compare_texel(self.format, func, reference, texel);
            self.sums[0].add(if pass { 1.0 } else { 0.0 }, weight);
        } else {
            let v = self.format.load(texel);
            self.add_rgba(v, weight);
        }
    }

    /// Adds a border tap with a non-zero weight (R36).
    #[inline]
    pub fn border(&mut self, weight: f64) {
        if let Reduce::Compare(func, reference) = self.reduce {
            let pass = Self::compare_border(&self.border, func, reference);
            self.sums[0].add(if pass { 1.0 } else { 0.0 }, weight);
        } else {
            self.add_rgba(self.border.rgba, weight);
        }
    }

    /// The filtered RGBA (comparison: the scalar in every component, R78).
    #[must_use]
    pub fn finish(&self) -> [f32; 4] {
        match self.reduce {
            Reduce::Sum => self.sums.map(|s| s.finish()),
            Reduce::Compare(..) => [self.sums[0].finish(); 4],
            Reduce::Min | Reduce::Max => self.ext,
        }
    }
}
