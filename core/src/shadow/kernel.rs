//! PCF kernels as data: weighted lists of bilinear comparison taps.
//!
//! A kernel is a list of taps; each tap is one hardware bilinear PCF lookup (`sample_c_lz`,
//! a 2×2 texel footprint, SPEC R27/R66) at an offset from an anchor, with a weight. The lit
//! fraction is `scale × Σ weightᵢ × tapᵢ`, summed in list order.
//!
//! The offset and weight of a tap are given per axis as short formulas of the receiver's
//! position `f` inside its texel ([`AxisTerm`]), which is enough for kernels whose taps move
//! with the receiver, such as Castaño's 13-texel filter (nine bilinear taps whose weights sum
//! to 144, as The Witness and Bevy's `Gaussian` shadow filter use it). Kernels whose taps are
//! fixed (today's 2×2, 3×3 and 5×5) have `f` play no part.

use std::borrow::Cow;

use super::ShadowError;

/// Where a kernel's taps are placed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// Around the receiver's own sample position (`f` = 0 in every [`AxisTerm`]).
    Sample,
    /// Around the texel corner nearest the receiver: with `t = uv × size`, the anchor is
    /// `(floor(t + ½) − ½) / size` and `f = t + ½ − floor(t + ½)` (in [0, 1)), per axis.
    /// Castaño's kernels work this way. 2D maps and cascades only.
    TexelGrid,
}

/// One axis of a tap: its weight `w(f) = weight[0] + weight[1]·f` and its offset in texels
/// `o(f) = (offset[0] + offset[1]·f) / w(f) + shift`, each operation rounded to f32 in that
/// order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisTerm {
    /// Constant and `f` coefficient of the weight.
    pub weight: [f32; 2],
    /// Constant and `f` coefficient of the offset's numerator.
    pub offset: [f32; 2],
    /// Added to the offset after the division.
    pub shift: f32,
}

impl AxisTerm {
    /// A fixed offset of `texels` with weight 1.
    #[must_use]
    pub const fn fixed(texels: f32) -> AxisTerm {
        AxisTerm {
            weight: [1.0, 0.0],
            offset: [texels, 0.0],
            shift: 0.0,
        }
    }

    /// `(weight, offset)` at sub-texel position `f`.
    #[inline(always)]
    #[must_use]
    pub fn at(&self, f: f32) -> (f32, f32) {
        let w = self.weight[0] + self.weight[1] * f;
        (w, (self.offset[0] + self.offset[1] * f) / w + self.shift)
    }
}

/// One bilinear tap: its u and v terms; its weight is `w_u × w_v`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelTap {
    /// The u axis.
    pub u: AxisTerm,
    /// The v axis.
    pub v: AxisTerm,
}

/// A tap resolved for one receiver: texel offsets from the anchor and weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tap {
    pub du: f32,
    pub dv: f32,
    pub weight: f32,
}

/// The most taps a kernel may have.
pub const MAX_TAPS: usize = 64;

/// How many comparison taps a lit-fraction query takes, where, and how they are weighted.
#[derive(Clone, Debug, PartialEq)]
pub struct PcfKernel {
    name: Cow<'static, str>,
    anchor: Anchor,
    taps: Cow<'static, [KernelTap]>,
    scale: f32,
}

/// The taps of a separable kernel of `N × N` taps: every pair of `terms`, u varying fastest,
/// then v (row by row). `M` must be `N × N`.
const fn product<const N: usize, const M: usize>(terms: [AxisTerm; N]) -> [KernelTap; M] {
    let mut k = [KernelTap {
        u: AxisTerm::fixed(0.0),
        v: AxisTerm::fixed(0.0),
    }; M];
    let mut i = 0;
    while i < M {
        k[i] = KernelTap {
            u: terms[i % N],
            v: terms[i / N],
        };
        i += 1;
    }
    k
}

/// Fixed axis terms at these texel offsets.
const fn fixed<const N: usize>(offsets: [f32; N]) -> [AxisTerm; N] {
    let mut t = [AxisTerm::fixed(0.0); N];
    let mut i = 0;
    while i < N {
        t[i] = AxisTerm::fixed(offsets[i]);
        i += 1;
    }
    t
}

const K2: [KernelTap; 1] = product::<1, 1>(fixed([0.0]));
const K3: [KernelTap; 4] = product::<2, 4>(fixed([-0.5, 0.5]));
const K5: [KernelTap; 16] = product::<4, 16>(fixed([-1.5, -0.5, 0.5, 1.5]));

/// Castaño's three terms per axis for the 5×5-texel (13-texel) filter.
const CASTANO: [AxisTerm; 3] = [
    // w = 4 − 3f, o = (3 − 2f) / w − 2
    AxisTerm {
        weight: [4.0, -3.0],
        offset: [3.0, -2.0],
        shift: -2.0,
    },
    // w = 7, o = (3 + f) / 7
    AxisTerm {
        weight: [7.0, 0.0],
        offset: [3.0, 1.0],
        shift: 0.0,
    },
    // w = 1 + 3f, o = f / w + 2
    AxisTerm {
        weight: [1.0, 3.0],
        offset: [0.0, 1.0],
        shift: 2.0,
    },
];

const K13: [KernelTap; 9] = product::<3, 9>(CASTANO);

impl PcfKernel {
    /// One hardware bilinear PCF tap (`sample_c_lz`): a 2×2 texel footprint.
    pub const HARDWARE_2X2: PcfKernel = PcfKernel {
        name: Cow::Borrowed("2x2"),
        anchor: Anchor::Sample,
        taps: Cow::Borrowed(&K2),
        scale: 1.0,
    };
    /// 2×2 bilinear taps half a texel apart, averaged: a 3×3 texel tent filter.
    pub const PCF_3X3: PcfKernel = PcfKernel {
        name: Cow::Borrowed("3x3"),
        anchor: Anchor::Sample,
        taps: Cow::Borrowed(&K3),
        scale: 0.25,
    };
    /// 4×4 bilinear taps one texel apart, averaged: a 5×5 texel tent filter.
    pub const PCF_5X5: PcfKernel = PcfKernel {
        name: Cow::Borrowed("5x5"),
        anchor: Anchor::Sample,
        taps: Cow::Borrowed(&K5),
        scale: 0.0625,
    };
    /// Castaño's 13-texel filter: nine bilinear taps on the texel grid, weights summing to 144.
    pub const CASTANO_13: PcfKernel = PcfKernel {
        name: Cow::Borrowed("castano13"),
        anchor: Anchor::TexelGrid,
        taps: Cow::Borrowed(&K13),
        // 1/144 in f32, as shaders write `sum * (1.0 / 144.0)`.
        scale: 1.0 / 144.0,
    };

    /// A kernel of your own: `taps` (1 to [`MAX_TAPS`]) placed from `anchor`, their weighted
    /// sum multiplied by `scale`.
    ///
    /// # Errors
    /// [`ShadowError::Kernel`] for no taps, too many, or a non-finite or non-positive scale or
    /// weight constant.
    pub fn new(
        name: impl Into<String>,
        anchor: Anchor,
        taps: Vec<KernelTap>,
        scale: f32,
    ) -> Result<PcfKernel, ShadowError> {
        let name = name.into();
        let bad = |why: String| Err(ShadowError::Kernel(format!("{name}: {why}")));
        if taps.is_empty() || taps.len() > MAX_TAPS {
            return bad(format!("{} taps, expected 1 to {MAX_TAPS}", taps.len()));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return bad(format!("scale {scale} is not a finite number > 0"));
        }
        for (i, t) in taps.iter().enumerate() {
            for term in [t.u, t.v] {
                let values = [
                    term.weight[0],
                    term.weight[1],
                    term.offset[0],
                    term.offset[1],
                    term.shift,
                ];
                if values.iter().any(|v| !v.is_finite()) {
                    return bad(format!("tap {} has a value that is not finite", i + 1));
                }
                // The weight must stay positive over f in [0, 1) (it divides the offset).
                let (w0, w1) = (term.weight[0], term.weight[0] + term.weight[1]);
                if !(w0 > 0.0 && w1 > 0.0) {
                    return bad(format!(
                        "tap {} has a weight that is not > 0 over the texel",
                        i + 1
                    ));
                }
            }
        }
        Ok(PcfKernel {
            name: Cow::Owned(name),
            anchor,
            taps: Cow::Owned(taps),
            scale,
        })
    }

    /// The kernel's name as settings files write it: `2x2`, `3x3`, `5x5`, `castano13`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the taps are placed from.
    #[must_use]
    pub fn anchor(&self) -> Anchor {
        self.anchor
    }

    /// The taps, in summing order.
    #[must_use]
    pub fn taps(&self) -> &[KernelTap] {
        &self.taps
    }

    /// The factor applied to the weighted sum.
    #[must_use]
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Number of bilinear lookups per query.
    #[must_use]
    pub fn len(&self) -> usize {
        self.taps.len()
    }

    /// Never true (a kernel has at least one tap); for clippy's sake.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.taps.is_empty()
    }

    /// The tap offsets in texels of a [`Anchor::Sample`] kernel (relative to the sample
    /// position); `None` for texel-grid kernels, whose taps move with the receiver.
    #[must_use]
    pub fn offsets(&self) -> Option<Vec<[f32; 2]>> {
        (self.anchor == Anchor::Sample).then(|| {
            self.resolve(0.0, 0.0)
                .iter()
                .map(|t| [t.du, t.dv])
                .collect()
        })
    }

    /// The taps at sub-texel position (fu, fv).
    pub(crate) fn resolve(&self, fu: f32, fv: f32) -> Vec<Tap> {
        let mut out = vec![
            Tap {
                du: 0.0,
                dv: 0.0,
                weight: 0.0
            };
            self.taps.len()
        ];
        self.resolve_into(fu, fv, &mut out);
        out
    }

    /// [`PcfKernel::resolve`] into `out` (the kernel's length).
    #[inline(always)]
    pub(crate) fn resolve_into(&self, fu: f32, fv: f32, out: &mut [Tap]) {
        for (t, o) in self.taps.iter().zip(out) {
            let (wu, du) = t.u.at(fu);
            let (wv, dv) = t.v.at(fv);
            *o = Tap {
                du,
                dv,
                weight: wu * wv,
            };
        }
    }
}

impl Default for PcfKernel {
    fn default() -> Self {
        PcfKernel::HARDWARE_2X2
    }
}

impl std::str::FromStr for PcfKernel {
    type Err = ShadowError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "2x2" | "hardware" | "Hardware2x2" => Ok(PcfKernel::HARDWARE_2X2),
            "3x3" | "Pcf3x3" => Ok(PcfKernel::PCF_3X3),
            "5x5" | "Pcf5x5" => Ok(PcfKernel::PCF_5X5),
            "castano13" | "13" | "gaussian" => Ok(PcfKernel::CASTANO_13),
            other => Err(ShadowError::Kernel(format!(
                "unknown PCF kernel `{other}`: expected 2x2, 3x3, 5x5 or castano13"
            ))),
        }
    }
}

/// The texel-grid anchor of one axis: `(anchor coordinate, f)` for normalized coordinate `c`
/// on a map of `size` texels (`texel` = 1 / size), following Castaño's shader:
/// `t = c·size; b = floor(t + ½); f = t + ½ − b; anchor = (b − ½)·texel`.
#[inline(always)]
pub(crate) fn grid_anchor(c: f32, size: f32, texel: f32) -> (f32, f32) {
    let t = c * size;
    let b = crate::sample::address::floor_f32(t + 0.5);
    let f = t + 0.5 - b;
    ((b - 0.5) * texel, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_offsets_are_todays() {
        assert_eq!(PcfKernel::HARDWARE_2X2.offsets().unwrap(), vec![[0.0, 0.0]]);
        assert_eq!(
            PcfKernel::PCF_3X3.offsets().unwrap(),
            vec![[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]]
        );
        let k5 = PcfKernel::PCF_5X5.offsets().unwrap();
        assert_eq!(k5.len(), 16);
        assert_eq!((k5[1], k5[4]), ([-0.5, -1.5], [-1.5, -0.5]));
        for k in [
            PcfKernel::HARDWARE_2X2,
            PcfKernel::PCF_3X3,
            PcfKernel::PCF_5X5,
        ] {
            // Unit weights, and a scale that is exactly 1 / taps (so ×scale is ÷taps).
            assert!(k.resolve(0.3, 0.7).iter().all(|t| t.weight == 1.0));
            assert_eq!(k.scale() * k.len() as f32, 1.0);
        }
    }

    #[test]
    fn castano_weights_sum_to_144_everywhere_in_the_texel() {
        for i in 0..=16 {
            let f = i as f32 / 16.0;
            let taps = PcfKernel::CASTANO_13.resolve(f, f);
            let sum: f32 = taps.iter().map(|t| t.weight).sum();
            assert!((sum - 144.0).abs() < 1e-3, "{f}: {sum}");
        }
        // At f = 0 the u terms are (4, −1.25), (7, 3/7), (1, 2) by hand.
        let t = PcfKernel::CASTANO_13.resolve(0.0, 0.0);
        assert_eq!((t[0].weight, t[0].du), (16.0, 3.0 / 4.0 - 2.0));
        assert_eq!((t[1].weight, t[1].du), (28.0, 3.0 / 7.0));
        assert_eq!((t[2].weight, t[2].du), (4.0, 2.0));
        assert_eq!(t[3].dv, 3.0 / 7.0);
    }

    #[test]
    fn grid_anchor_follows_castano() {
        // 8 texels: c = 0.3 → t = 2.4, b = 2, f = 0.9, anchor = 1.5 / 8.
        let (a, f) = grid_anchor(0.3, 8.0, 0.125);
        assert_eq!(a, 1.5 * 0.125);
        assert!((f - 0.9).abs() < 1e-6);
    }

    #[test]
    fn bad_kernels_are_refused() {
        let tap = KernelTap {
            u: AxisTerm::fixed(0.0),
            v: AxisTerm::fixed(0.0),
        };
        assert!(PcfKernel::new("none", Anchor::Sample, vec![], 1.0).is_err());
        assert!(PcfKernel::new("nan", Anchor::Sample, vec![tap], f32::NAN).is_err());
        let mut bad = tap;
        bad.u.weight = [1.0, -1.0];
        assert!(PcfKernel::new("zero weight", Anchor::Sample, vec![bad], 1.0).is_err());
        assert!(PcfKernel::new("ok", Anchor::Sample, vec![tap], 1.0).is_ok());
        assert!("7x7".parse::<PcfKernel>().is_err());
        assert_eq!("castano13".parse::<PcfKernel>().unwrap().len(), 9);
    }
}
