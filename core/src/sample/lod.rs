//! Level of detail: from derivatives (R46–R49), explicit or zero (R52), bias and clamps (R56–R58),
//! the empty-set case (R62), magnification and mip selection in 8.8 fixed point (R59–R61) —
//! D3D11.3 FS 7.18.10–7.18.11.

/// How a sample gets its LOD.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LodMode {
    /// LOD 0, derivatives zero (`sample_c_lz`, R52, R89).
    Zero,
    /// An explicit LOD (`sample_l`, `SampleCmpLevel`, R52).
    Level(f32),
    /// Derivatives of the normalized coordinate along screen x and y, plus a shader bias
    /// (`sample_d` with bias 0, `sample_b`, `SampleCmpGrad`/`SampleCmpBias`; R46–R48, R53).
    Grad {
        /// d(coord)/dx per coordinate axis (u, v, w; a direction's x, y, z for cubes).
        ddx: [f32; 3],
        /// d(coord)/dy per coordinate axis.
        ddy: [f32; 3],
        /// The shader's bias (`SampleBias`), 0 for `SampleGrad`.
        bias: f32,
    },
}

/// The anisotropic footprint of R48/R72.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anisotropy {
    /// Number of probes, `clamp(ceil(ratio − 2^-8), 1, MaxAnisotropy)` (R72).
    pub probes: u32,
    /// The major-axis derivative in normalized coordinates (the anisotropy line).
    pub axis: [f32; 2],
}

/// The LOD of one sample before mip selection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lod {
    /// The LOD with biases but without any clamp (what `CalculateLevelOfDetailUnclamped` reports).
    pub unclamped: f32,
    /// After the sampler, resource and per-sample clamps (R57, R58).
    pub clamped: f32,
    /// The resource or per-sample clamp lies past the view's last mip: the sample reads the
    /// out-of-bounds value (R62).
    pub empty: bool,
    /// The anisotropic footprint, when the filter is anisotropic and applies (R22, R48).
    pub aniso: Option<Anisotropy>,
}

/// The clamps that apply to a LOD.
#[derive(Clone, Copy, Debug)]
pub struct LodClamps {
    /// `MipLODBias` of the sampler.
    pub mip_lod_bias: f32,
    /// `MinLOD` of the sampler.
    pub min_lod: f32,
    /// `MaxLOD` of the sampler.
    pub max_lod: f32,
    /// `ResourceMinLODClamp − MostDetailedMip`: the view's clamp in view mip space (R58).
    pub resource_clamp: f32,
    /// The per-sample clamp (HLSL `Clamp` argument), if any.
    pub sample_clamp: Option<f32>,
    /// Number of mips in the view.
    pub mip_count: u32,
}

/// R47: `log2(max(|dX|, |dY|))` with Euclidean lengths, in f64, rounded once to f32 (SPEC §3.2).
/// `size` is the view's level-0 size per axis; `axes` the number of axes used.
#[must_use]
pub fn isotropic_lod(ddx: [f32; 3], ddy: [f32; 3], size: [u32; 3], axes: usize) -> f32 {
    let len = |d: [f32; 3]| {
        (0..axes)
            .map(|i| {
                let t = f64::from(d[i]) * f64::from(size[i]);
                t * t
            })
            .sum::<f64>()
            .sqrt()
    };
    // §1.4 max: a NaN length is ignored unless both are NaN.
    len(ddx).max(len(ddy)).log2() as f32
}

/// R48/R49: the anisotropic LOD (of the minor axis) and footprint on a 2D level-0 of `size`
/// texels, with `max_aniso` already clamped to [1, 16] (R10).
#[must_use]
pub fn anisotropic_lod(
    ddx: [f32; 3],
    ddy: [f32; 3],
    size: [u32; 3],
    max_aniso: u32,
) -> (f32, Anisotropy) {
    let (w, h) = (f64::from(size[0]), f64::from(size[1]));
    let (xu, xv) = (f64::from(ddx[0]) * w, f64::from(ddx[1]) * h);
    let (yu, yv) = (f64::from(ddy[0]) * w, f64::from(ddy[1]) * h);
    let lx2 = xu * xu + xv * xv;
    let ly2 = yu * yu + yv * yv;
    let det = (xu * yv - xv * yu).abs();
    let x_major = lx2 > ly2;
    let major = if x_major { lx2 } else { ly2 }.sqrt();
    let axis = if x_major {
        [ddx[0], ddx[1]]
    } else {
        [ddy[0], ddy[1]]
    };
    let max_aniso_f = f64::from(max_aniso);
    let (ratio, lod) = if major == 0.0 {
        (1.0, f64::NEG_INFINITY) // R49: a zero footprint is a point.
    } else {
        let (mut ratio, minor) = if det == 0.0 {
            (max_aniso_f, major / max_aniso_f) // R49: parallel derivatives.
        } else {
            let ratio = major * major / det;
            if ratio > max_aniso_f {
                (max_aniso_f, major / max_aniso_f)
            } else {
                (ratio, det / major)
            }
        };
        if minor < 1.0 {
            ratio = (ratio * minor).max(1.0); // R48, R73: minor itself is not clamped.
        }
        (ratio, minor.log2())
    };
    let probes = ((ratio - 1.0 / 256.0).ceil().max(1.0) as u32).min(max_aniso);
    (lod as f32, Anisotropy { probes, axis })
}

/// R56–R58 and R62: biases, sampler clamps, resource and per-sample clamps, the empty set.
#[must_use]
pub fn clamp_lod(lod: f32, shader_bias: f32, c: &LodClamps) -> (f32, f32, bool) {
    let biased = lod + c.mip_lod_bias + shader_bias;
    // R57 with §1.4's NaN-ignoring min/max: NaN → max(MinLOD, MaxLOD); MinLOD wins over MaxLOD.
    let mut clamped = biased.min(c.max_lod).max(c.min_lod);
    clamped = clamped.max(c.resource_clamp);
    if let Some(s) = c.sample_clamp {
        clamped = clamped.max(s);
    }
    let last = (c.mip_count - 1) as f32;
    let empty = c.resource_clamp > last || c.sample_clamp.is_some_and(|s| s > last);
    (biased, clamped, empty)
}

/// The mip levels a sample reads, with their weights (numerators over 256).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MipLevels {
    /// View levels and weights; only the first `count` are used.
    pub levels: [(u32, u32); 2],
    /// 1 or 2.
    pub count: usize,
    /// True when the sample magnifies (R59): the MAG filter type on level 0.
    pub magnify: bool,
}

/// The largest LOD of the 8.8 fixed-point format, 127 + 255/256 (R60).
const LOD_MAX: f32 = 127.0 + 255.0 / 256.0;

/// R59–R61: magnification test, 8.8 fixed-point LOD, mip point / mip linear selection, levels
/// clamped to the view.
#[must_use]
pub fn select_mips(clamped: f32, mip_linear: bool, mip_count: u32) -> MipLevels {
    if clamped <= 0.0 || clamped.is_nan() {
        return MipLevels {
            levels: [(0, 256), (0, 0)],
            count: 1,
            magnify: true,
        };
    }
    let fl = (clamped.clamp(-128.0, LOD_MAX) * 256.0).round_ties_even() as i32;
    let last = mip_count as i32 - 1;
    if !mip_linear {
        let level = ((fl + 128) >> 8).clamp(0, last) as u32;
        return MipLevels {
            levels: [(level, 256), (level, 0)],
            count: 1,
            magnify: false,
        };
    }
    let l0 = fl >> 8;
    let frac = (fl & 255) as u32;
    if l0 >= last {
        return MipLevels {
            levels: [(last as u32, 256), (0, 0)],
            count: 1,
            magnify: false,
        };
    }
    let l0 = l0.max(0) as u32;
    if frac == 0 {
        return MipLevels {
            levels: [(l0, 256), (0, 0)],
            count: 1,
            magnify: false,
        };
    }
    MipLevels {
        levels: [(l0, 256 - frac), (l0 + 1, frac)],
        count: 2,
        magnify: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAMPS: LodClamps = LodClamps {
        mip_lod_bias: 0.0,
        min_lod: 0.0,
        max_lod: f32::MAX,
        resource_clamp: 0.0,
        sample_clamp: None,
        mip_count: 9,
    };

    #[test]
    fn isotropic_example_r47() {
        let lod = isotropic_lod(
            [1.0 / 128.0, 0.0, 0.0],
            [0.0, 1.0 / 128.0, 0.0],
            [256, 256, 1],
            2,
        );
        assert_eq!(lod, 1.0);
    }

    #[test]
    fn anisotropic_examples_r48() {
        let (lod, a) = anisotropic_lod(
            [4.0 / 64.0, 0.0, 0.0],
            [0.0, 1.0 / 64.0, 0.0],
            [64, 64, 1],
            16,
        );
        assert_eq!((lod, a.probes), (0.0, 4));
        let (lod, a) = anisotropic_lod(
            [4.0 / 64.0, 0.0, 0.0],
            [0.0, 1.0 / 64.0, 0.0],
            [64, 64, 1],
            2,
        );
        assert_eq!((lod, a.probes), (1.0, 2));
    }

    #[test]
    fn degenerate_anisotropy_r49() {
        let (lod, a) = anisotropic_lod([0.0; 3], [0.0; 3], [64, 64, 1], 16);
        assert_eq!((lod, a.probes), (f32::NEG_INFINITY, 1));
        // Parallel derivatives: ratio = MaxAniso, minor = major / MaxAniso.
        let (lod, a) = anisotropic_lod(
            [8.0 / 64.0, 0.0, 0.0],
            [4.0 / 64.0, 0.0, 0.0],
            [64, 64, 1],
            4,
        );
        assert_eq!((lod, a.probes), (1.0, 4));
    }

    #[test]
    fn nan_lod_becomes_max_lod_and_min_lod_wins_r57() {
        let c = LodClamps {
            min_lod: 1.0,
            max_lod: 3.0,
            ..CLAMPS
        };
        assert_eq!(clamp_lod(f32::NAN, 0.0, &c).1, 3.0);
        assert_eq!(clamp_lod(f32::INFINITY, 0.0, &c).1, 3.0);
        assert_eq!(clamp_lod(f32::NEG_INFINITY, 0.0, &c).1, 1.0);
        let c = LodClamps {
            min_lod: 4.0,
            max_lod: 2.0,
            ..CLAMPS
        };
        assert_eq!(clamp_lod(3.0, 0.0, &c).1, 4.0);
        assert_eq!(clamp_lod(f32::NAN, 0.0, &c).1, 4.0);
    }

    #[test]
    fn resource_clamp_can_exceed_max_lod_r58() {
        // FS 5.8.6.2's example: sampler [1.2, 4], resource clamp 4.5.
        let c = LodClamps {
            min_lod: 1.2,
            max_lod: 4.0,
            resource_clamp: 4.5,
            ..CLAMPS
        };
        assert_eq!(clamp_lod(2.0, 0.0, &c).1, 4.5);
    }

    #[test]
    fn clamp_past_the_last_level_is_the_empty_set_r62() {
        let c = LodClamps {
            resource_clamp: 5.1,
            mip_count: 6,
            ..CLAMPS
        };
        assert!(clamp_lod(0.0, 0.0, &c).2);
        let c = LodClamps {
            resource_clamp: 5.0,
            mip_count: 6,
            ..CLAMPS
        };
        assert!(!clamp_lod(0.0, 0.0, &c).2);
        let c = LodClamps {
            sample_clamp: Some(5.5),
            mip_count: 6,
            ..CLAMPS
        };
        assert!(clamp_lod(0.0, 0.0, &c).2);
        // A sampler clamp never empties the set.
        let c = LodClamps {
            min_lod: 9.0,
            mip_count: 6,
            ..CLAMPS
        };
        assert!(!clamp_lod(0.0, 0.0, &c).2);
    }

    #[test]
    fn mip_point_rounds_half_up_r60() {
        assert_eq!(select_mips(0.5, false, 9).levels[0].0, 1);
        assert_eq!(select_mips(1.5, false, 9).levels[0].0, 2);
        assert_eq!(select_mips(0.49, false, 9).levels[0].0, 0);
        assert_eq!(select_mips(7.0, false, 3).levels[0].0, 2);
    }

    #[test]
    fn mip_linear_blends_near_integers_r61() {
        let m = select_mips(1.01, true, 9);
        assert_eq!(m.count, 2);
        assert_eq!(m.levels, [(1, 253), (2, 3)]);
        let m = select_mips(1.0, true, 9);
        assert_eq!((m.count, m.levels[0]), (1, (1, 256)));
    }

    #[test]
    fn lod_zero_magnifies_r59_r63() {
        assert!(select_mips(0.0, true, 9).magnify);
        let m = select_mips(0.5, true, 9);
        assert_eq!((m.magnify, m.levels), (false, [(0, 128), (1, 128)]));
        assert_eq!(select_mips(0.5, false, 9).levels[0].0, 1);
    }
}
