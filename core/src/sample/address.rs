//! Coordinates to texel indices: range reduction (R24), the fixed-point texel position
//! (R25–R27), offsets (R39) and the five address modes (R28–R32) — D3D11.3 FS 7.18.6–7.18.9.

use crate::desc::AddressMode;
use crate::format::flush_denormal;

/// R24: range reduction of a normalized coordinate before it is scaled to texels.
#[must_use]
#[inline]
pub fn range_reduce(u: f32, mode: AddressMode) -> f32 {
    match mode {
        AddressMode::Wrap => u - floor_f32(u),
        // Exact in f32 (halving, truncation, the difference, doubling); a denormal half flushes (§1.4).
        AddressMode::Mirror => {
            let half = flush_denormal(u / 2.0);
            2.0 * (half - half.trunc())
        }
        // Written with comparisons so that NaN passes through (it becomes 0 at R5's conversion).
        // `f32::clamp` keeps NaN, which then becomes 0 at R5's conversion.
        AddressMode::Clamp | AddressMode::Border | AddressMode::MirrorOnce => u.clamp(-10.0, 10.0),
    }
}

/// R5: float → integer with NaN → 0 and saturation; Rust's `as` conversion does exactly that.
#[inline]
fn to_int(x: f32) -> i64 {
    x as i64
}

/// R25/R26: the texel a point sample picks, before addressing: `floor(s)` on the f32 texel-space
/// position `s` (never rounds up; VO12's `PointSamplingAddressesNeverRoundUp`), or with
/// `legacy_rounding` the old 16.8 fixed-point round-to-nearest-even (`rne(s·256) >> 8`).
#[must_use]
#[inline]
pub fn point_texel(s: f32, legacy_rounding: bool) -> i64 {
    if legacy_rounding {
        to_int((s * 256.0).round_ties_even()) >> 8
    } else {
        to_int(floor_f32(s))
    }
}

/// R27: the 8-bit fixed-point position of a linear sample: `F = rne(s·256)` for `s` already shifted
/// by −0.5 texel (`s·256` is exact in f32).
#[must_use]
#[inline]
pub fn linear_fixed(s: f32) -> i64 {
    to_int_f64(rne_whole(f64::from(s * 256.0)))
}

/// R5 for an f64 that holds an f32's whole value (or is NaN or infinite).
#[inline]
fn to_int_f64(v: f64) -> i64 {
    v as i64
}

/// What [`rne_whole`] adds and takes away: 1.5·2⁵².
pub(crate) const RNE_ROUND: f64 = 6_755_399_441_055_744.0;

/// `v.round_ties_even()` without a call to libm's `rint` (baseline x86-64 has no rounding
/// instruction, and the call showed in the profiles of the shadow queries): adding and taking
/// away 1.5·2⁵² rounds an f64 below 2⁵¹ to the nearest integer, ties to even, in the default
/// rounding mode. Larger values, infinities and NaN are whole already (or NaN) and come back
/// as they are; so does every f32 (widened exactly), except that −0.5 ≤ v < 0 gives +0.0, not
/// −0.0 (equal as numbers).
#[inline]
pub(crate) fn rne_whole(v: f64) -> f64 {
    if v.abs() < 2_251_799_813_685_248.0 {
        (v + RNE_ROUND) - RNE_ROUND
    } else {
        v
    }
}

/// `v.floor()` to the bit (−0.0 stays −0.0, NaN stays NaN) without a call to libm's `floorf`
/// (baseline x86-64 has no rounding instruction; the Castaño filters floor two coordinates a
/// lookup). Below 2²³ in magnitude the truncation to an integer is exact, and one is taken
/// away where it went up; larger values, infinities and NaN are whole already. The result
/// has the sign of `v` in every case (a floor of a negative value is at most −1, or −0.0).
#[inline]
pub(crate) fn floor_f32(v: f32) -> f32 {
    if v.abs() < 8_388_608.0 {
        let t = v as i32 as f32;
        let t = if t > v { t - 1.0 } else { t };
        t.copysign(v)
    } else {
        v
    }
}

/// Where a tap lands along one axis after the address mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressed {
    /// A texel index in `[0, N−1]`.
    Texel(u32),
    /// Outside the texture in BORDER mode: the tap takes the border colour (R32).
    Border,
}

/// R28–R32: applies an address mode to a texel index `t` of a level `n` texels wide.
#[must_use]
#[inline]
pub fn address(t: i64, n: u32, mode: AddressMode) -> Addressed {
    let n = i64::from(n);
    if (0..n).contains(&t) {
        return Addressed::Texel(t as u32);
    }
    let i = match mode {
        AddressMode::Wrap => t.rem_euclid(n),
        AddressMode::Mirror => {
            let t = if t < 0 { -t - 1 } else { t };
            let flip = (t / n) & 1 == 1;
            let m = t % n;
            if flip { n - 1 - m } else { m }
        }
        AddressMode::Clamp => t.clamp(0, n - 1),
        AddressMode::MirrorOnce => {
            let t = if t < 0 { -t - 1 } else { t };
            t.clamp(0, n - 1)
        }
        AddressMode::Border => return Addressed::Border,
    };
    Addressed::Texel(i as u32)
}

/// The taps of one axis: up to two (index, weight numerator over 256) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisTaps {
    /// The taps; only the first `count` are used.
    pub taps: [(Addressed, u32); 2],
    /// 1 or 2. Weight-0 taps are dropped (R68, R94).
    pub count: usize,
}

impl AxisTaps {
    /// A single tap of full weight.
    #[must_use]
    #[inline]
    pub const fn single(a: Addressed) -> Self {
        AxisTaps {
            taps: [(a, 256), (a, 0)],
            count: 1,
        }
    }
}

/// How one axis of a level is filtered.
#[derive(Clone, Copy, Debug)]
pub struct AxisParams {
    /// Level size along the axis.
    pub size: u32,
    /// Address mode of the axis.
    pub mode: AddressMode,
    /// Integer texel offset (R39).
    pub offset: i64,
    /// Coordinates are texel-space already (R18): no range reduction, no scaling.
    pub non_normalized: bool,
}

impl AxisParams {
    /// The texel-space position `fl(U'·N)` of a normalized coordinate (R24–R25).
    #[inline]
    fn scaled(&self, u: f32) -> f32 {
        if self.non_normalized {
            u
        } else {
            range_reduce(u, self.mode) * self.size as f32
        }
    }

    /// The single tap of point filtering (R25, R26, R39).
    #[must_use]
    #[inline]
    pub fn point(&self, u: f32, legacy_rounding: bool) -> AxisTaps {
        let t = point_texel(self.scaled(u), legacy_rounding) + self.offset;
        AxisTaps::single(address(t, self.size, self.mode))
    }

    /// The fixed-point position of linear filtering with the offset applied (R27, R39).
    #[must_use]
    #[inline]
    pub fn linear_position(&self, u: f32) -> i64 {
        linear_fixed(self.scaled(u) - 0.5) + 256 * self.offset
    }

    /// The two taps of linear filtering, the weight-0 one dropped (R27, R68).
    #[must_use]
    #[inline]
    pub fn linear(&self, u: f32) -> AxisTaps {
        let f = self.linear_position(u);
        let t0 = f >> 8;
        let w1 = (f & 255) as u32;
        let a0 = address(t0, self.size, self.mode);
        if w1 == 0 {
            return AxisTaps::single(a0);
        }
        AxisTaps {
            taps: [(a0, 256 - w1), (address(t0 + 1, self.size, self.mode), w1)],
            count: 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast rounding gives `to_int(rne(s·256))` on every 1/1024 step over a 4096-texel
    /// level (the ties of the ×256 rounding among them), at the edges of its range, on
    /// special values and on random bit patterns.
    #[test]
    fn linear_fixed_is_r5_of_rne() {
        let reference = |s: f32| to_int((s * 256.0).round_ties_even());
        let steps = (-2048..4096 * 1024 + 2048).map(|k| k as f32 / 1024.0 - 0.5);
        let edges = [
            4_194_303.5f32,
            4_194_304.0,
            -4_194_304.0,
            8_796_093_022_207.0,
            8_796_093_022_208.0,
            1e9,
            -1e9,
            1e30,
            f32::MAX,
            f32::MIN,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE / 3.0,
        ];
        let mut rng = penumbra_testkit::Rng::xorshift32(0x7269_6e74);
        let random = (0..1_000_000).map(|_| f32::from_bits(rng.next_u32()));
        for s in steps.chain(edges).chain(random) {
            assert_eq!(linear_fixed(s), reference(s), "{s:e}");
        }
    }

    #[test]
    fn rne_whole_rounds_every_f32_as_rint_does() {
        // Halves and their neighbours up to 2²⁴, where f32 values stop having fractions.
        let halves = (0..=24).flat_map(|e| {
            let h = (1u32 << e) as f32 + 0.5;
            [
                h,
                h.next_down(),
                h.next_up(),
                -h,
                (-h).next_down(),
                (-h).next_up(),
            ]
        });
        let edges = [
            0.5f32,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.0,
            -0.0,
            8_388_607.5,
            8_388_608.0,
            1e30,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
        ];
        let mut rng = penumbra_testkit::Rng::xorshift32(0x726e_6577);
        let random = (0..1_000_000).map(|_| f32::from_bits(rng.next_u32()));
        for x in halves.chain(edges).chain(random) {
            let got = rne_whole(f64::from(x));
            let want = f64::from(x.round_ties_even());
            // The same number (a negative value that rounds to zero may give +0.0).
            assert!(
                got == want || (got.is_nan() && want.is_nan()),
                "{x:e}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn floor_f32_is_floor_to_the_bit() {
        // Integers, halves and their neighbours up to 2²⁴ either side, and the specials.
        let near = (0..=24).flat_map(|e| {
            let w = (1u32 << e) as f32;
            [w, w + 0.5, w - 0.5].into_iter().flat_map(|v| {
                [v, v.next_down(), v.next_up()]
                    .into_iter()
                    .flat_map(|v| [v, -v])
            })
        });
        let edges = [
            0.0f32,
            -0.0,
            0.3,
            -0.3,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            8_388_607.5,
            -8_388_607.5,
            1e30,
            -1e30,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let mut rng = penumbra_testkit::Rng::xorshift32(0x666c_6f6f);
        // Any bits, and magnitudes below 2²⁴ (where the fractions are), either sign.
        let random: Vec<f32> = (0..2_000_000)
            .map(|k| {
                let bits = rng.next_u32();
                if k % 2 == 0 {
                    f32::from_bits(bits)
                } else {
                    f32::from_bits(bits & 0xcbff_ffff)
                }
            })
            .collect();
        for x in near.chain(edges).chain(random) {
            let (got, want) = (floor_f32(x), x.floor());
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{x:e} ({:#x}): {got:e} vs {want:e}",
                x.to_bits()
            );
        }
    }

    #[test]
    fn array_slice_is_r43() {
        let reference = |a: f32, count: u32| {
            let last = count.saturating_sub(1);
            let a = a.round_ties_even();
            if a.is_nan() || a <= 0.0 {
                0
            } else if a >= last as f32 {
                last
            } else {
                a as u32
            }
        };
        let mut rng = penumbra_testkit::Rng::xorshift32(0x0061_7272);
        for count in [0, 1, 2, 4, 5, 2048] {
            let steps = (-64..(count as i32 + 4) * 32).map(|k| k as f32 / 32.0);
            let edges = [
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                -0.0,
                0.5,
                1.5,
                2.5,
                -0.5,
            ];
            let random = (0..100_000).map(|_| f32::from_bits(rng.next_u32()));
            for a in steps.chain(edges).chain(random) {
                assert_eq!(
                    crate::sample::filter::array_slice(a, count),
                    reference(a, count),
                    "{a:e} of {count}"
                );
            }
        }
    }

    #[test]
    fn worked_example_n4_u03_r27() {
        let p = AxisParams {
            size: 4,
            mode: AddressMode::Clamp,
            offset: 0,
            non_normalized: false,
        };
        assert_eq!((0.3f32 * 4.0).to_bits(), 0x3F99_999A); // 1.2000000476837158
        assert_eq!(p.linear_position(0.3), 179);
        let taps = p.linear(0.3);
        assert_eq!(taps.count, 2);
        assert_eq!(taps.taps[0], (Addressed::Texel(0), 77));
        assert_eq!(taps.taps[1], (Addressed::Texel(1), 179));
    }

    #[test]
    fn mirror_sequence_r29() {
        let got: Vec<u32> = (-5..=8)
            .map(|t| match address(t, 4, AddressMode::Mirror) {
                Addressed::Texel(i) => i,
                Addressed::Border => 99,
            })
            .collect();
        assert_eq!(got, [3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]);
    }

    #[test]
    fn mirror_once_sequence_r31() {
        let got: Vec<u32> = (-5..=8)
            .map(|t| match address(t, 4, AddressMode::MirrorOnce) {
                Addressed::Texel(i) => i,
                Addressed::Border => 99,
            })
            .collect();
        assert_eq!(got, [3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3]);
    }

    #[test]
    fn wrap_clamp_border_r28_r30_r32() {
        assert_eq!(address(-1, 4, AddressMode::Wrap), Addressed::Texel(3));
        assert_eq!(address(9, 4, AddressMode::Wrap), Addressed::Texel(1));
        assert_eq!(address(-7, 4, AddressMode::Clamp), Addressed::Texel(0));
        assert_eq!(address(7, 4, AddressMode::Clamp), Addressed::Texel(3));
        assert_eq!(address(4, 4, AddressMode::Border), Addressed::Border);
        assert_eq!(address(3, 4, AddressMode::Border), Addressed::Texel(3));
    }

    #[test]
    fn range_reduction_r24() {
        assert_eq!(range_reduce(1.25, AddressMode::Wrap), 0.25);
        assert_eq!(range_reduce(-0.25, AddressMode::Wrap), 0.75);
        assert_eq!(range_reduce(-3.5, AddressMode::Mirror), -1.5);
        assert_eq!(range_reduce(1e30, AddressMode::Clamp), 10.0);
        assert_eq!(range_reduce(-1e30, AddressMode::MirrorOnce), -10.0);
        assert!(range_reduce(f32::NAN, AddressMode::Border).is_nan());
    }

    #[test]
    fn nan_coordinate_lands_on_texel_zero_r110() {
        let p = AxisParams {
            size: 8,
            mode: AddressMode::Clamp,
            offset: 0,
            non_normalized: false,
        };
        assert_eq!(
            p.point(f32::NAN, false),
            AxisTaps::single(Addressed::Texel(0))
        );
        assert_eq!(p.linear_position(f32::NAN), 0);
    }

    #[test]
    fn point_never_rounds_up_r26() {
        let just_below = 1.0f32.next_down(); // s = 0.99999994 in a 1-texel-per-unit level
        assert_eq!(point_texel(just_below, false), 0);
        assert_eq!(point_texel(just_below, true), 1);
    }

    #[test]
    fn offsets_move_taps_in_texels_r39() {
        let p = AxisParams {
            size: 4,
            mode: AddressMode::Border,
            offset: -1,
            non_normalized: false,
        };
        assert_eq!(p.point(0.1, false), AxisTaps::single(Addressed::Border));
        let p = AxisParams { offset: 2, ..p };
        assert_eq!(p.point(0.1, false), AxisTaps::single(Addressed::Texel(2)));
    }
}
