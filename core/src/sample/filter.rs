//! The filtering core of the scalar reference path, in the order of R23: array slice → LOD →
//! mip selection → per level: address, fetch (or border), weight, combine (D3D11.3 FS 7.18).

use super::address::{Addressed, AxisParams, AxisTaps};
use super::combine::{Border, Combiner, Reduce};
use super::lod::{self, LodClamps, LodMode, MipLevels};
use super::{Coord, SampleArgs, SampleError, Sampler, Source, cube};
use crate::desc::{AddressMode, Filter, FilterType, ReductionType};
use crate::format::{CompareRef, Format};
use crate::texture::{Dimension, Texture};

/// R43's array slice of array coordinate `a` among `count` slices: `clamp(rne(a), 0,
/// count − 1)`, NaN → 0 (D3D11.3 FS 7.18.7).
pub(crate) fn array_slice(a: f32, count: u32) -> u32 {
    let last = count.saturating_sub(1);
    // rne through f64 (exact for every f32), without a libm call.
    let a = super::address::rne_whole(f64::from(a));
    if a.is_nan() || a <= 0.0 {
        0
    } else if a >= f64::from(last) {
        last
    } else {
        a as u32
    }
}

impl Sampler {
    /// The array slice of R43 (`clamp(rne(a), 0, n−1)`, NaN → 0), as a view element index.
    pub(super) fn element(tex: &Texture, coord: &Coord) -> u32 {
        let Some(i) = tex.dimension().array_coord() else {
            return 0;
        };
        array_slice(coord.0[i], tex.view().element_count)
    }

    pub(super) fn source<'a>(tex: &'a Texture, coord: &Coord) -> Source<'a> {
        let dim = tex.dimension();
        let element = Self::element(tex, coord);
        let per = if dim.is_cube() { 6 } else { 1 };
        Source {
            tex,
            format: tex.format(),
            dim,
            slice: tex.view().first_slice + element * per,
        }
    }

    fn lod_clamps(&self, tex: &Texture, clamp: Option<f32>) -> LodClamps {
        let view = tex.view();
        LodClamps {
            mip_lod_bias: self.desc.mip_lod_bias,
            min_lod: self.desc.min_lod,
            max_lod: self.desc.max_lod,
            resource_clamp: view.resource_min_lod_clamp - view.most_detailed_mip as f32,
            sample_clamp: clamp,
            mip_count: view.mip_count,
        }
    }

    /// The effective filter for this op and dimension: anisotropic filters act as their isotropic
    /// counterpart for LOD-explicit/zero ops and non-2D views (R22, R76).
    pub(super) fn effective_filter(&self, dim: Dimension, lod: &LodMode) -> (Filter, bool) {
        let f = self.desc.filter;
        let aniso = f.is_anisotropic()
            && matches!(dim, Dimension::Texture2D | Dimension::Texture2DArray)
            && matches!(lod, LodMode::Grad { ddx, ddy, .. } if ddx.iter().chain(ddy).all(|d| d.is_finite()));
        (if aniso { f } else { f.isotropic() }, aniso)
    }

    /// Computes the LOD of a sample (R46–R58) without selecting mips.
    pub(super) fn compute_lod(
        &self,
        tex: &Texture,
        coord: &Coord,
        lod: &LodMode,
        clamp: Option<f32>,
    ) -> lod::Lod {
        let (_, aniso_applies) = self.effective_filter(tex.dimension(), lod);
        self.compute_lod_with(tex, coord, lod, clamp, aniso_applies)
    }

    /// [`Sampler::compute_lod`] for a caller that already knows whether anisotropy applies.
    fn compute_lod_with(
        &self,
        tex: &Texture,
        coord: &Coord,
        lod: &LodMode,
        clamp: Option<f32>,
        aniso_applies: bool,
    ) -> lod::Lod {
        let dim = tex.dimension();
        let view = tex.view();
        let size0 = tex.level_size(view.most_detailed_mip);
        let (raw, shader_bias, aniso) = match *lod {
            LodMode::Zero => (0.0, 0.0, None),
            LodMode::Level(l) => (l, 0.0, None),
            LodMode::Grad { ddx, ddy, bias } => {
                if aniso_applies {
                    let (l, a) = lod::anisotropic_lod(ddx, ddy, size0, self.max_aniso);
                    (l, bias, Some(a))
                } else if dim.is_cube() {
                    (cube::cube_lod(coord, ddx, ddy, size0[0]), bias, None)
                } else {
                    (lod::isotropic_lod(ddx, ddy, size0, dim.axes()), bias, None)
                }
            }
        };
        let (unclamped, clamped, empty) =
            lod::clamp_lod(raw, shader_bias, &self.lod_clamps(tex, clamp));
        lod::Lod {
            unclamped,
            clamped,
            empty,
            aniso,
        }
    }

    /// One sample: filtered texels, or with a comparison `reference` the filtered fraction of
    /// passing taps.
    pub(super) fn run(
        &self,
        tex: &Texture,
        args: &SampleArgs,
        reference: Option<f32>,
    ) -> Result<[f32; 4], SampleError> {
        let args = &args.flushed();
        self.check_non_normalized(tex)?;
        let offset = self.check_offset(tex, args.offset)?;
        let src = Self::source(tex, &args.coord);
        let (filter, aniso_applies) = self.effective_filter(src.dim, &args.lod);
        let lod = self.compute_lod_with(tex, &args.coord, &args.lod, args.clamp, aniso_applies);
        let format = src.format;
        let border = Border::new(self.desc.border_color, format);
        let reduce = match reference {
            Some(r) => Reduce::Compare(self.desc.comparison_func, format.quantize_reference(r)),
            None => match filter.reduction() {
                ReductionType::Minimum => Reduce::Min,
                ReductionType::Maximum => Reduce::Max,
                _ => Reduce::Sum,
            },
        };
        let mut acc = Combiner::new(format, border, reduce);
        if lod.empty {
            return Ok(Self::out_of_bounds(format, reduce));
        }
        let mips = lod::select_mips(
            lod.clamped,
            filter.mip_filter() == FilterType::Linear,
            tex.view().mip_count,
        );
        let linear = if mips.magnify {
            filter.mag_filter()
        } else {
            filter.min_filter()
        } == FilterType::Linear;
        match lod.aniso {
            Some(a) if a.probes > 1 => {
                let n = a.probes;
                let inv_n = 1.0 / f64::from(n);
                for i in 0..n {
                    let k = (f64::from(i) + 0.5) / f64::from(n) - 0.5;
                    let mut c = args.coord;
                    c.0[0] = (f64::from(c.0[0]) + k * f64::from(a.axis[0])) as f32;
                    c.0[1] = (f64::from(c.0[1]) + k * f64::from(a.axis[1])) as f32;
                    self.filter_levels(&src, &c, &mips, linear, offset, inv_n, &mut acc);
                }
            }
            _ => self.filter_levels(&src, &args.coord, &mips, linear, offset, 1.0, &mut acc),
        }
        Ok(acc.finish())
    }

    /// R62/R108: the out-of-bounds value — 0 in the format's components, defaults elsewhere; a
    /// comparison compares that 0 like a texel ([CHOICE] R62).
    pub(super) fn out_of_bounds(format: Format, reduce: Reduce) -> [f32; 4] {
        match reduce {
            Reduce::Compare(func, reference) => {
                let pass = match reference {
                    CompareRef::Unorm(q) => func.passes_u32(q, 0),
                    CompareRef::Float(r) => func.passes(r, 0.0),
                };
                [if pass { 1.0 } else { 0.0 }; 4]
            }
            _ => {
                let mut v = [0.0, 0.0, 0.0, 1.0];
                v[..format.channels()].fill(0.0);
                v
            }
        }
    }

    /// Filters every selected mip level into `acc` with an extra weight factor (R65–R67).
    #[allow(clippy::too_many_arguments)]
    fn filter_levels(
        &self,
        src: &Source<'_>,
        coord: &Coord,
        mips: &MipLevels,
        linear: bool,
        offset: [i64; 3],
        scale: f64,
        acc: &mut Combiner,
    ) {
        for &(level, mip_w) in &mips.levels[..mips.count] {
            let weight = scale * f64::from(mip_w) / 256.0;
            if src.dim.is_cube() {
                cube::filter_cube_level(src, coord, level, linear, weight, acc);
            } else {
                self.filter_level(src, coord, level, linear, offset, weight, acc);
            }
        }
    }

    pub(super) fn axis_params(
        &self,
        size: [u32; 3],
        axes: usize,
        offset: [i64; 3],
    ) -> [AxisParams; 3] {
        let modes = [
            self.desc.address_u,
            self.desc.address_v,
            self.desc.address_w,
        ];
        let nn = self.non_normalized();
        std::array::from_fn(|i| AxisParams {
            size: size[i],
            mode: if i < axes {
                modes[i]
            } else {
                AddressMode::Clamp
            },
            offset: offset[i],
            non_normalized: nn,
        })
    }

    /// One view level of a 1D/2D/3D texture: taps per axis, combined (R25–R32, R66).
    #[allow(clippy::too_many_arguments)]
    fn filter_level(
        &self,
        src: &Source<'_>,
        coord: &Coord,
        level: u32,
        linear: bool,
        offset: [i64; 3],
        weight: f64,
        acc: &mut Combiner,
    ) {
        let mip = src.tex.view().most_detailed_mip + level;
        let size = src.tex.level_size(mip);
        let axes = src.dim.axes();
        let params = self.axis_params(size, axes, offset);
        let legacy = self.options.legacy_point_rounding;
        let taps: [AxisTaps; 3] = std::array::from_fn(|i| {
            if i >= axes {
                AxisTaps::single(Addressed::Texel(0))
            } else if linear {
                params[i].linear(coord.0[i])
            } else {
                params[i].point(coord.0[i], legacy)
            }
        });
        let data = src.tex.subresource(mip, src.slice);
        let bpt = src.format.bytes_per_texel();
        // Unused axes carry a single tap of weight 256, so the denominator is always 256³.
        let denom = f64::from(1u32 << 24);
        for &(az, wz) in &taps[2].taps[..taps[2].count] {
            for &(ay, wy) in &taps[1].taps[..taps[1].count] {
                for &(ax, wx) in &taps[0].taps[..taps[0].count] {
                    let w = weight * f64::from(wx * wy * wz) / denom;
                    match (ax, ay, az) {
                        (Addressed::Texel(x), Addressed::Texel(y), Addressed::Texel(z)) => {
                            let at = ((z as usize * size[1] as usize + y as usize)
                                * size[0] as usize
                                + x as usize)
                                * bpt;
                            acc.texel(&data[at..at + bpt], w);
                        }
                        _ => acc.border(w),
                    }
                }
            }
        }
    }
}
