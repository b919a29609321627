//! The sampler engine: every D3D12 sampling operation, on the CPU, rule by rule.
//!
//! One scalar reference path follows SPEC.md (D3D11.3 FS chapter 7.18 and 22.4) step by step in
//! the order of R23: array slice → LOD → mip selection → per level: range reduction, fixed-point
//! position, offsets, address modes → fetch (or border) → compare / weight / min-max → blend.
//!
//! ```
//! use penumbra_core::{ComparisonFunc, Filter, Format, SamplerDesc, Sampler, Texture, TextureDesc};
//! // SPEC R80's PCF example: a 2×2 depth map, bilinear comparison at its centre.
//! let tex = Texture::from_f32(TextureDesc::new_2d(Format::R32Float, 2, 2), &[0.3, 0.6, 0.6, 0.9]).unwrap();
//! let sampler = Sampler::new(SamplerDesc::comparison(
//!     Filter::ComparisonMinMagLinearMipPoint,
//!     ComparisonFunc::LessEqual,
//! )).unwrap();
//! let lit = sampler.sample_cmp_level_zero(Some(&tex), [0.5, 0.5], 0.5, [0, 0]).unwrap();
//! assert_eq!(lit, 0.75);
//! ```

pub mod accum;
pub mod address;
pub mod batch;
pub mod combine;
mod cube;
pub mod lod;
pub mod quad;

use address::{Addressed, AxisParams, AxisTaps};
use combine::{Border, Combiner, Reduce};
pub use lod::LodMode;
use lod::{LodClamps, MipLevels};

use crate::desc::{
    AddressMode, DescError, Filter, FilterType, ReductionType, SamplerDesc, SamplerFlags,
};
use crate::format::{CompareRef, Format, flush_denormal};
use crate::texture::{Dimension, Texture};

/// A sample coordinate: up to four components, used per dimension as SPEC §1.2 / the case format
/// lay them out (`[u]`, `[u, slice]`, `[u, v]`, `[u, v, slice]`, `[u, v, w]`, `[x, y, z]`,
/// `[x, y, z, cube]`). Unused components are ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Coord(pub [f32; 4]);

macro_rules! coord_from {
    ($($n:literal),*) => {$(
        impl From<[f32; $n]> for Coord {
            #[inline]
            fn from(c: [f32; $n]) -> Coord {
                let mut out = [0.0; 4];
                out[..$n].copy_from_slice(&c);
                Coord(out)
            }
        }
    )*};
}
coord_from!(1, 2, 3, 4);

impl Coord {
    /// §1.4: f32 denormal inputs of arithmetic flush to zero of the same sign (R6).
    #[must_use]
    #[inline]
    pub fn flushed(self) -> Coord {
        Coord(self.0.map(flush_denormal))
    }
}

impl From<f32> for Coord {
    #[inline]
    fn from(u: f32) -> Coord {
        Coord([u, 0.0, 0.0, 0.0])
    }
}

impl From<glam::Vec2> for Coord {
    #[inline]
    fn from(v: glam::Vec2) -> Coord {
        Coord([v.x, v.y, 0.0, 0.0])
    }
}

impl From<glam::Vec3> for Coord {
    #[inline]
    fn from(v: glam::Vec3) -> Coord {
        Coord([v.x, v.y, v.z, 0.0])
    }
}

impl From<glam::Vec4> for Coord {
    #[inline]
    fn from(v: glam::Vec4) -> Coord {
        Coord(v.to_array())
    }
}

/// An immediate texel offset (HLSL `Offset`, `aoffimmi`; R39–R41): `[u]`, `[u, v]` or `[u, v, w]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offset(pub [i32; 3]);

macro_rules! offset_from {
    ($($n:literal),*) => {$(
        impl From<[i32; $n]> for Offset {
            #[inline]
            fn from(c: [i32; $n]) -> Offset {
                let mut out = [0; 3];
                out[..$n].copy_from_slice(&c);
                Offset(out)
            }
        }
    )*};
}
offset_from!(1, 2, 3);

impl From<()> for Offset {
    #[inline]
    fn from((): ()) -> Offset {
        Offset([0; 3])
    }
}

/// The cube face a direction selects (R98: the largest component, ties Z, then Y, then X; 0..6 in
/// the order +X, −X, +Y, −Y, +Z, −Z), or `None` for a zero or NaN direction.
#[must_use]
pub fn cube_face(direction: [f32; 3]) -> Option<u32> {
    cube::select_face(direction)
}

pub(crate) use cube::face_coord;

/// The world axes along which a cube face's texel x grows (`right`, +sc of R99) and its texel y
/// shrinks (`up`, −tc of R99).
#[must_use]
pub fn cube_face_axes(face: u32) -> (glam::Vec3, glam::Vec3) {
    use glam::Vec3;
    match face {
        0 => (Vec3::NEG_Z, Vec3::Y),
        1 => (Vec3::Z, Vec3::Y),
        2 => (Vec3::X, Vec3::NEG_Z),
        3 => (Vec3::X, Vec3::Z),
        4 => (Vec3::X, Vec3::Y),
        _ => (Vec3::NEG_X, Vec3::Y),
    }
}

/// Behaviour switches for what D3D leaves open or outside its rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SamplerOptions {
    /// `[EXT]` allow comparison sampling of formats D3D does not require (R77, R86): other UNORM
    /// formats quantize the reference with their width, half formats round it toward zero.
    pub extended_comparison_formats: bool,
    /// R41 lenient offsets (SM 6.7 programmable offsets): only the low 4 bits count,
    /// sign-extended. Off: offsets outside [−8, 7] are an error.
    pub lenient_offsets: bool,
    /// R26 legacy point rounding: `rne(s·256) >> 8` instead of `floor(s)`.
    pub legacy_point_rounding: bool,
}

/// Errors of a sampling call: a pairing or argument that D3D leaves undefined (SPEC R109), which
/// penumbra refuses instead of guessing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// R17: comparison ops need a COMPARISON filter, the others a non-comparison one.
    #[error("{op} needs a {needed} sampler, but Filter is {filter} (SPEC R17; D3D11.3 FS 22.3.34)")]
    SamplerKind {
        /// The operation.
        op: &'static str,
        /// The sampler's filter.
        filter: Filter,
        /// "COMPARISON" or "non-comparison".
        needed: &'static str,
    },
    /// R40: offsets are undefined on cubes.
    #[error(
        "offset {offset:?} on a {dimension} texture: offsets are not allowed on cubes (SPEC R40; D3D11.3 FS 22.4.15)"
    )]
    OffsetOnCube {
        /// The offset given.
        offset: [i32; 3],
        /// The texture's dimension.
        dimension: Dimension,
    },
    /// R41: an immediate offset outside [−8, 7].
    #[error("offset {value} on axis {axis} is outside [-8, 7] (SPEC R41; D3D11.3 FS 22.4.15)")]
    OffsetRange {
        /// 0 = u, 1 = v, 2 = w.
        axis: usize,
        /// The value.
        value: i32,
    },
    /// The operation does not exist for this dimension (R77 for comparisons on 3D, R120 gathers).
    #[error("{op} is not defined on {dimension} textures (SPEC {rule})")]
    Dimension {
        /// The operation.
        op: &'static str,
        /// The texture's dimension.
        dimension: Dimension,
        /// The rule.
        rule: &'static str,
    },
    /// R77: a comparison on a format D3D does not require to support it.
    #[error(
        "comparison sampling of {format} is not required by D3D (SPEC R77; FL11 \"Shader sample_c\"); enable SamplerOptions::extended_comparison_formats for the [EXT] behaviour of R86"
    )]
    ComparisonFormat {
        /// The texture's format.
        format: Format,
    },
    /// R120: the gather component must be 0..=3.
    #[error("gather component {0} is not one of 0 (R), 1 (G), 2 (B), 3 (A) (SPEC R120)")]
    GatherComponent(u32),
    /// R18: a constraint of NON_NORMALIZED_COORDINATES on the view or the call.
    #[error("NON_NORMALIZED_COORDINATES: {0} (SPEC R18; VulkanOn12)")]
    NonNormalized(String),
}

/// Everything a non-gather sample takes besides the texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleArgs {
    /// The coordinate.
    pub coord: Coord,
    /// Where the LOD comes from.
    pub lod: LodMode,
    /// Immediate texel offset.
    pub offset: Offset,
    /// Per-sample LOD clamp (HLSL `Clamp`, R58), if any.
    pub clamp: Option<f32>,
}

impl SampleArgs {
    /// The arguments with every f32 denormal flushed to a signed zero (§1.4, R6): coordinates,
    /// explicit LOD, derivatives, bias and clamp are all inputs of f32 arithmetic.
    #[must_use]
    #[inline]
    pub fn flushed(&self) -> SampleArgs {
        let lod = match self.lod {
            LodMode::Zero => LodMode::Zero,
            LodMode::Level(l) => LodMode::Level(flush_denormal(l)),
            LodMode::Grad { ddx, ddy, bias } => LodMode::Grad {
                ddx: ddx.map(flush_denormal),
                ddy: ddy.map(flush_denormal),
                bias: flush_denormal(bias),
            },
        };
        SampleArgs {
            coord: self.coord.flushed(),
            lod,
            offset: self.offset,
            clamp: self.clamp.map(flush_denormal),
        }
    }
}

/// The one policy for an error that validation has already ruled out (a sampler and texture
/// checked when a shadow map or a batch was built, arguments built by the caller itself): never a
/// panic in a game. `debug_assert!` makes the broken invariant fail every test; a release build
/// returns `fallback`, which each caller names (a shadow map: 1.0, nothing in the way; a batch:
/// 0.0, the answer of an empty slot, R88/R107).
#[inline]
pub(crate) fn validated<T: std::fmt::Debug>(r: Result<T, SampleError>, fallback: T) -> T {
    debug_assert!(r.is_ok(), "an error validation ruled out: {r:?}");
    r.unwrap_or(fallback)
}

/// A validated D3D12 sampler, ready to sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    desc: SamplerDesc,
    options: SamplerOptions,
    /// R10: `clamp(MaxAnisotropy, 1, 16)`.
    max_aniso: u32,
}

/// Where the taps of one sample come from.
struct Source<'a> {
    tex: &'a Texture,
    format: Format,
    dim: Dimension,
    /// The resource slice (for cubes: the first face of the selected cube).
    slice: u32,
}

impl Sampler {
    /// Validates `desc` (R7–R18) and builds a sampler with default options.
    pub fn new(desc: SamplerDesc) -> Result<Sampler, DescError> {
        Sampler::with_options(desc, SamplerOptions::default())
    }

    /// Validates `desc` and builds a sampler with `options`.
    pub fn with_options(desc: SamplerDesc, options: SamplerOptions) -> Result<Sampler, DescError> {
        desc.validate()?;
        Ok(Sampler {
            desc,
            options,
            max_aniso: desc.max_anisotropy.clamp(1, 16),
        })
    }

    /// The description this sampler was built from.
    #[must_use]
    #[inline]
    pub fn desc(&self) -> &SamplerDesc {
        &self.desc
    }

    /// The options.
    #[must_use]
    #[inline]
    pub fn options(&self) -> &SamplerOptions {
        &self.options
    }

    fn check_kind(&self, op: &'static str, comparison: bool) -> Result<(), SampleError> {
        let is_cmp = self.desc.filter.reduction() == ReductionType::Comparison;
        if is_cmp != comparison {
            return Err(SampleError::SamplerKind {
                op,
                filter: self.desc.filter,
                needed: if comparison {
                    "COMPARISON"
                } else {
                    "non-comparison"
                },
            });
        }
        Ok(())
    }

    fn check_offset(&self, tex: &Texture, offset: Offset) -> Result<[i64; 3], SampleError> {
        let dim = tex.dimension();
        let axes = dim.axes();
        let mut out = [0i64; 3];
        if dim.is_cube() {
            if offset.0 != [0; 3] {
                return Err(SampleError::OffsetOnCube {
                    offset: offset.0,
                    dimension: dim,
                });
            }
            return Ok(out);
        }
        for (axis, (out, &o)) in out.iter_mut().zip(&offset.0).take(axes).enumerate() {
            *out = if self.options.lenient_offsets {
                i64::from((o << 28) >> 28)
            } else if (-8..=7).contains(&o) {
                i64::from(o)
            } else {
                return Err(SampleError::OffsetRange { axis, value: o });
            };
        }
        if self.non_normalized() && out != [0; 3] {
            return Err(SampleError::NonNormalized("offsets are not allowed".into()));
        }
        Ok(out)
    }

    #[inline]
    fn non_normalized(&self) -> bool {
        self.desc
            .flags
            .contains(SamplerFlags::NON_NORMALIZED_COORDINATES)
    }

    fn check_non_normalized(&self, tex: &Texture) -> Result<(), SampleError> {
        if !self.non_normalized() {
            return Ok(());
        }
        let dim = tex.dimension();
        if !matches!(dim, Dimension::Texture1D | Dimension::Texture2D) {
            return Err(SampleError::NonNormalized(format!(
                "the view must be Texture1D or Texture2D, not {dim}"
            )));
        }
        if tex.view().mip_count != 1 {
            return Err(SampleError::NonNormalized(format!(
                "the view must have exactly 1 mip, not {}",
                tex.view().mip_count
            )));
        }
        Ok(())
    }

    fn check_compare_target(&self, op: &'static str, tex: &Texture) -> Result<(), SampleError> {
        let dim = tex.dimension();
        if dim == Dimension::Texture3D {
            return Err(SampleError::Dimension {
                op,
                dimension: dim,
                rule: "R77; D3D11.3 FS 22.4.19",
            });
        }
        let format = tex.format();
        if !format.supports_comparison() && !self.options.extended_comparison_formats {
            return Err(SampleError::ComparisonFormat { format });
        }
        Ok(())
    }

    /// The array slice of R43 (`clamp(rne(a), 0, n−1)`, NaN → 0), as a view element index.
    fn element(tex: &Texture, coord: &Coord) -> u32 {
        let Some(i) = tex.dimension().array_coord() else {
            return 0;
        };
        let last = tex.view().element_count - 1;
        let a = coord.0[i].round_ties_even();
        if a.is_nan() || a <= 0.0 {
            0
        } else if a >= last as f32 {
            last
        } else {
            a as u32
        }
    }

    fn source<'a>(tex: &'a Texture, coord: &Coord) -> Source<'a> {
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
    fn effective_filter(&self, dim: Dimension, lod: &LodMode) -> (Filter, bool) {
        let f = self.desc.filter;
        let aniso = f.is_anisotropic()
            && matches!(dim, Dimension::Texture2D | Dimension::Texture2DArray)
            && matches!(lod, LodMode::Grad { ddx, ddy, .. } if ddx.iter().chain(ddy).all(|d| d.is_finite()));
        (if aniso { f } else { f.isotropic() }, aniso)
    }

    /// Computes the LOD of a sample (R46–R58) without selecting mips.
    fn compute_lod(
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

    /// The general non-comparison sample (sample, sample_l, sample_d, sample_b with a clamp).
    pub fn sample(
        &self,
        tex: Option<&Texture>,
        args: &SampleArgs,
    ) -> Result<[f32; 4], SampleError> {
        self.check_kind("sample", false)?;
        let Some(tex) = tex else { return Ok([0.0; 4]) }; // R107
        self.run(tex, args, None)
    }

    /// The general comparison sample (`sample_c` family, R77–R92); the result is the filtered
    /// fraction of passing taps in [0, 1].
    pub fn sample_cmp(
        &self,
        tex: Option<&Texture>,
        args: &SampleArgs,
        reference: f32,
    ) -> Result<f32, SampleError> {
        self.check_kind("sample_c", true)?;
        let Some(tex) = tex else { return Ok(0.0) }; // R88, R107
        self.check_compare_target("sample_c", tex)?;
        Ok(self.run(tex, args, Some(reference))?[0])
    }

    /// One sample: filtered texels, or with a comparison `reference` the filtered fraction of
    /// passing taps.
    fn run(
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
    fn out_of_bounds(format: Format, reduce: Reduce) -> [f32; 4] {
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

    fn axis_params(&self, size: [u32; 3], axes: usize, offset: [i64; 3]) -> [AxisParams; 3] {
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

    /// `SampleLevel` / `sample_l`: explicit LOD (R52).
    pub fn sample_level(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        lod: f32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.sample(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Level(lod),
                offset: offset.into(),
                clamp: None,
            },
        )
    }

    /// `SampleGrad` / `sample_d`: LOD from explicit derivatives (R46–R48).
    pub fn sample_grad(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        ddx: [f32; 3],
        ddy: [f32; 3],
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.sample(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Grad {
                    ddx,
                    ddy,
                    bias: 0.0,
                },
                offset: offset.into(),
                clamp: None,
            },
        )
    }

    /// `SampleBias` / `sample_b`: derivatives plus a shader bias (R53).
    pub fn sample_bias(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        ddx: [f32; 3],
        ddy: [f32; 3],
        bias: f32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.sample(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Grad { ddx, ddy, bias },
                offset: offset.into(),
                clamp: None,
            },
        )
    }

    /// `SampleCmp` with explicit derivatives (`sample_c` / SM 6.8 `SampleCmpGrad`; R80, R87).
    pub fn sample_cmp_grad(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        ddx: [f32; 3],
        ddy: [f32; 3],
        offset: impl Into<Offset>,
    ) -> Result<f32, SampleError> {
        self.sample_cmp(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Grad {
                    ddx,
                    ddy,
                    bias: 0.0,
                },
                offset: offset.into(),
                clamp: None,
            },
            reference,
        )
    }

    /// `SampleCmpLevelZero` / `sample_c_lz`: LOD 0, then bias and clamps as usual (R89–R90).
    pub fn sample_cmp_level_zero(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        offset: impl Into<Offset>,
    ) -> Result<f32, SampleError> {
        self.sample_cmp(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Zero,
                offset: offset.into(),
                clamp: None,
            },
            reference,
        )
    }

    /// `SampleCmpLevel` (SM 6.7): comparison at an explicit LOD (R91).
    pub fn sample_cmp_level(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        lod: f32,
        offset: impl Into<Offset>,
    ) -> Result<f32, SampleError> {
        self.sample_cmp(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Level(lod),
                offset: offset.into(),
                clamp: None,
            },
            reference,
        )
    }

    /// `Gather*` / `gather4`: the four texels of the bilinear footprint on view mip 0, component
    /// `component` of each, in the order (i0,j1), (i1,j1), (i1,j0), (i0,j0) (R120).
    pub fn gather(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        component: u32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.check_kind("gather4", false)?;
        if component > 3 {
            return Err(SampleError::GatherComponent(component));
        }
        let Some(tex) = tex else { return Ok([0.0; 4]) };
        self.gather_impl(tex, coord.into(), offset.into(), None, component as usize)
    }

    /// `GatherCmp*` / `gather4_c`: the four per-tap comparison results (R120, R79, R82).
    pub fn gather_cmp(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.check_kind("gather4_c", true)?;
        let Some(tex) = tex else { return Ok([0.0; 4]) };
        self.check_compare_target("gather4_c", tex)?;
        self.gather_impl(tex, coord.into(), offset.into(), Some(reference), 0)
    }

    fn gather_impl(
        &self,
        tex: &Texture,
        coord: Coord,
        offset: Offset,
        reference: Option<f32>,
        component: usize,
    ) -> Result<[f32; 4], SampleError> {
        let coord = coord.flushed();
        let dim = tex.dimension();
        if !matches!(
            dim,
            Dimension::Texture2D
                | Dimension::Texture2DArray
                | Dimension::TextureCube
                | Dimension::TextureCubeArray
        ) {
            return Err(SampleError::Dimension {
                op: if reference.is_some() {
                    "gather4_c"
                } else {
                    "gather4"
                },
                dimension: dim,
                rule: "R120; D3D11.3 FS 22.4.2",
            });
        }
        self.check_non_normalized(tex)?;
        let offset = self.check_offset(tex, offset)?;
        let src = Self::source(tex, &coord);
        let format = src.format;
        let border = Border::new(self.desc.border_color, format);
        let cmp = reference.map(|r| (self.desc.comparison_func, format.quantize_reference(r)));
        let view = tex.view();
        // R120 + R62: a resource clamp that removes view mip 0 gives the out-of-bounds value.
        if view.resource_min_lod_clamp - view.most_detailed_mip as f32 > 0.0 {
            let oob = match cmp {
                Some((func, r)) => Self::out_of_bounds(format, Reduce::Compare(func, r)),
                None => {
                    let v = if component < format.channels() {
                        0.0
                    } else if component == 3 {
                        1.0
                    } else {
                        0.0
                    };
                    [v; 4]
                }
            };
            return Ok(oob);
        }
        // The four taps in D3D order: (i0,j1), (i1,j1), (i1,j0), (i0,j0).
        let taps: [Tap<'_>; 4] = if dim.is_cube() {
            cube::gather_taps(&src, &coord)
        } else {
            let mip = view.most_detailed_mip;
            let size = tex.level_size(mip);
            let params = self.axis_params(size, 2, offset);
            let fu = params[0].linear_position(coord.0[0]);
            let fv = params[1].linear_position(coord.0[1]);
            let (i0, j0) = (fu >> 8, fv >> 8);
            let data = tex.subresource(mip, src.slice);
            let bpt = format.bytes_per_texel();
            let tap = |i: i64, j: i64| match (
                address::address(i, size[0], params[0].mode),
                address::address(j, size[1], params[1].mode),
            ) {
                (Addressed::Texel(x), Addressed::Texel(y)) => {
                    let at = (y as usize * size[0] as usize + x as usize) * bpt;
                    Tap::Texel(&data[at..at + bpt])
                }
                _ => Tap::Border,
            };
            [
                tap(i0, j0 + 1),
                tap(i0 + 1, j0 + 1),
                tap(i0 + 1, j0),
                tap(i0, j0),
            ]
        };
        Ok(taps.map(|t| t.gather_value(format, &border, cmp, component)))
    }

    /// `CalculateLevelOfDetail` and `...Unclamped` (R54): `[clamped, unclamped]` for derivatives
    /// `ddx`, `ddy`. The clamped value includes the sampler and resource clamps; the empty set and
    /// an unbound texture give 0.
    pub fn calculate_lod(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        ddx: [f32; 3],
        ddy: [f32; 3],
    ) -> Result<[f32; 2], SampleError> {
        let Some(tex) = tex else { return Ok([0.0; 2]) };
        let lod = self.compute_lod(
            tex,
            &coord.into(),
            &LodMode::Grad {
                ddx,
                ddy,
                bias: 0.0,
            },
            None,
        );
        let clamped = if lod.empty { 0.0 } else { lod.clamped };
        Ok([clamped, lod.unclamped])
    }
}

/// One gather tap.
#[derive(Clone, Copy)]
enum Tap<'a> {
    Texel(&'a [u8]),
    Border,
    /// A cube corner: the average of the three real texels (R120, FS 22.4.2).
    Corner([&'a [u8]; 3]),
}

impl Tap<'_> {
    fn gather_value(
        &self,
        format: Format,
        border: &Border,
        cmp: Option<(crate::desc::ComparisonFunc, CompareRef)>,
        c: usize,
    ) -> f32 {
        let one = |t: &[u8]| -> f32 {
            match cmp {
                Some((func, r)) => f32::from(u8::from(Combiner::compare_texel(format, func, r, t))),
                None if c < format.channels() => {
                    format.decode_component_raw(format.raw_component(t, c))
                }
                None => {
                    if c == 3 {
                        1.0
                    } else {
                        0.0
                    }
                }
            }
        };
        match self {
            Tap::Texel(t) => one(t),
            Tap::Border => match cmp {
                Some((func, r)) => f32::from(u8::from(Combiner::compare_border(border, func, r))),
                None => border.rgba[c],
            },
            // R103, R120: the average of the three real texels, rounded once.
            Tap::Corner(ts) => accum::third_of_sum(ts.map(one)),
        }
    }
}
