//! Judging: penumbra's answer next to lavapipe's, classified with SPEC §3.3's tolerances and the
//! documented Vulkan-vs-D3D differences (conformance/SCHEMA.md, WGPU.md).
//!
//! Every lookup lands in one class:
//! * **exact** — bit-for-bit equal (±0 equal) in every compared component;
//! * **within tolerance** — within `k·ε·R + δ` (SPEC §3.3 items 1–2) of penumbra's value;
//! * **explained** — off by a documented difference, and an *alternate model* of that difference
//!   (penumbra run under the other API's rule) reproduces lavapipe's value;
//! * **MISMATCH** — anything else.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use penumbra_core::sample::lod::select_mips;
use penumbra_core::{Filter, FilterType, ReductionType, Sampler, SamplerDesc, Texture};

use crate::case::{
    BAND, Dim, Group, Lookup, Op, Probe, SamplerSpec, Scenario, TexSpec, clamp_lod, cube_corner,
};

/// SPEC §3.3: `ε = 1.2/256`, two independent 0.6-ULP snaps of an 8-bit grid.
pub const EPS: f64 = 1.2 / 256.0;

/// Why a lookup that differs is still right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// lavapipe converts UNORM codes as `code · fl(1/(2^n−1))`, 1 ulp off R1's exact quotient for
    /// some codes (126 of 256 R8 codes, 512 of 65536 D16 codes).
    UnormDecode,
    /// lavapipe clamps a D16 reference to [0, 1] but does not quantize it (D3D does, R82).
    D16RefNotQuantized,
    /// MIP POINT at LOD x.5: D3D rounds up (R60), lavapipe does not.
    MipPointHalf,
    /// Gradient LOD within lavapipe's approximate log2 (0 to 0.043 too low).
    GradLodLog2,
    /// General (not axis-aligned) footprints may differ by up to ~0.5 LOD (SPEC §3.3 item 6).
    GradLodFootprint,
    /// Bilinear footprint at a cube corner: 3-way split (R103) vs another rule, ≤ R/12.
    CubeCorner,
}

impl Reason {
    /// A one-line description for the report.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Reason::UnormDecode => {
                "lavapipe UNORM->float = code * f32 reciprocal, 1 ulp off R1's exact k/(2^n-1) for some codes"
            }
            Reason::D16RefNotQuantized => {
                "D16 reference clamped but not quantized by lavapipe (D3D quantizes, R82)"
            }
            Reason::MipPointHalf => {
                "MIP POINT at LOD x.5: D3D rounds up (R60), lavapipe picks the lower (even) level"
            }
            Reason::GradLodLog2 => {
                "gradient LOD within lavapipe's approximate log2 (0..0.043 low): result in the LOD bracket"
            }
            Reason::GradLodFootprint => {
                "general-footprint gradient LOD within +-0.55 (SPEC 3.3 item 6): result in the LOD bracket"
            }
            Reason::CubeCorner => {
                "cube corner: D3D's 3-way weight split (R103/R120) vs lavapipe's, within R/12"
            }
        }
    }
}

/// The class of one lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Bit-for-bit equal.
    Exact,
    /// Within SPEC §3.3's tolerance.
    WithinTolerance,
    /// A documented difference, reproduced by its alternate model.
    Explained(Reason),
    /// An unexplained difference.
    Mismatch,
}

/// What penumbra said about one lookup.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The class.
    pub class: Class,
    /// penumbra's value.
    pub penumbra: [f32; 4],
    /// The tolerance per component used for "within tolerance".
    pub tolerance: [f64; 4],
    /// Components compared (1 for scalar results).
    pub channels: usize,
}

/// A texture as penumbra sees it, plus lavapipe's UNORM decode of it (the alternate model).
pub struct PenumbraTexture {
    /// The texture.
    pub texture: Texture,
    /// The same texels decoded like lavapipe (UNORM formats only).
    pub decoded: Option<Texture>,
}

impl PenumbraTexture {
    /// Builds both from the shared description.
    #[must_use]
    pub fn new(spec: &TexSpec) -> PenumbraTexture {
        PenumbraTexture {
            texture: spec.penumbra(),
            decoded: spec.lavapipe_decoded(),
        }
    }
}

/// The penumbra samplers one group needs.
struct Samplers {
    main: Sampler,
    /// MINIMUM_/MAXIMUM_ variants of a non-comparison sampler, for the footprint range `R`.
    min_max: Option<(Sampler, Sampler)>,
    /// MINIMUM_/MAXIMUM_MIN_MAG_MIP_LINEAR with the same addressing: the texels lavapipe's
    /// linear paths touch even where D3D's weights are exactly 0 or 1.
    linear_min_max: Option<(Sampler, Sampler)>,
}

impl Samplers {
    fn new(spec: &SamplerSpec) -> Samplers {
        let desc = spec.d3d();
        let build =
            |d: SamplerDesc| Sampler::new(d).expect("mapped sampler descriptions are valid");
        let pair = |f: &dyn Fn(ReductionType) -> Filter| {
            spec.compare.is_none().then(|| {
                let with = |r| {
                    let mut d = desc;
                    d.filter = f(r);
                    build(d)
                };
                (with(ReductionType::Minimum), with(ReductionType::Maximum))
            })
        };
        let linear = FilterType::Linear;
        Samplers {
            main: build(desc),
            min_max: pair(&|r| spec.filter(r)),
            linear_min_max: pair(&|r| Filter::encode_basic(linear, linear, linear, r)),
        }
    }
}

/// How one evaluation is done: on which texture, at which LOD, with which reference.
#[derive(Clone, Copy)]
struct How<'a> {
    tex: &'a Texture,
    /// Replaces the lookup's LOD (explicit LOD or gradients) by this explicit one.
    lod: Option<f32>,
    /// Clamp the reference to [0, 1] (lavapipe's D16 rule, applied to the decoded D32 model).
    clamp_ref: bool,
}

fn eval(s: &Sampler, dim: Dim, lk: &Lookup, how: How<'_>) -> [f32; 4] {
    let c = lk.penumbra_coord(dim);
    let t = Some(how.tex);
    let dref = if how.clamp_ref {
        lk.dref.clamp(0.0, 1.0)
    } else {
        lk.dref
    };
    let r = match (lk.op, how.lod) {
        (Op::SampleLevel | Op::SampleGrad, Some(l)) => s.sample_level(t, c, l, ()),
        (Op::SampleLevel, None) => s.sample_level(t, c, lk.level, ()),
        (Op::SampleGrad, None) => s.sample_grad(t, c, lk.ddx, lk.ddy, ()),
        (Op::SampleCompareLevel, _) => s.sample_cmp_level_zero(t, c, dref, ()).map(|v| [v; 4]),
        (Op::Gather(comp), _) => s.gather(t, c, comp, ()),
        (Op::GatherCompare, _) => s.gather_cmp(t, c, dref, ()),
    };
    r.expect("every generated lookup is valid for penumbra")
}

/// One group's judge.
struct GroupJudge<'a> {
    spec: &'a TexSpec,
    tex: &'a PenumbraTexture,
    sampler: &'a SamplerSpec,
    samplers: Samplers,
}

impl GroupJudge<'_> {
    fn dim(&self) -> Dim {
        self.spec.dim
    }

    /// Components compared: depth lookups and comparisons return one value.
    fn channels(&self, lk: &Lookup) -> usize {
        match lk.op {
            Op::SampleCompareLevel => 1,
            Op::SampleLevel if self.spec.fmt.is_depth() => 1,
            _ => 4,
        }
    }

    /// `k` of SPEC §3.3 for a filtered lookup at explicit `lod`: interpolated axes plus one when
    /// mips are blended; and whether the level-0/level-1 footprint is linear.
    fn k_at(&self, lod: f32) -> (u32, std::ops::Range<u32>, bool) {
        let clamped = clamp_lod(lod, self.sampler);
        let mip_linear = self.sampler.mip == wgpu::MipmapFilterMode::Linear;
        let mips = select_mips(clamped, mip_linear, self.spec.mips);
        let ty = if mips.magnify {
            self.sampler.mag
        } else {
            self.sampler.min
        };
        let linear = ty == wgpu::FilterMode::Linear;
        let first = mips.levels[0].0;
        let last = mips.levels[mips.count - 1].0;
        let k = if linear { 2 } else { 0 } + u32::from(mips.count == 2);
        (k, first..last + 1, linear)
    }

    /// Whether lavapipe runs linear arithmetic for this sampler at all: then even D3D's point
    /// answers (weights exactly 0 or 1) may come back a few ulp off — SPEC §3.3 item 1's f32
    /// operation-order slack `δ = 2^-20·max|texel|`.
    fn any_linear(&self) -> bool {
        let s = self.sampler;
        s.mag == wgpu::FilterMode::Linear
            || s.min == wgpu::FilterMode::Linear
            || s.mip == wgpu::MipmapFilterMode::Linear
    }

    /// SPEC §3.3's tolerance for a lookup whose D3D value is `value`, and the cube-corner slack
    /// (`R/12`, item 4). Filtered lookups (`lod` = explicit LOD before clamps) use
    /// `k·ε·R + δ` with `R` from penumbra's MINIMUM/MAXIMUM filters over the same footprint (R93);
    /// PCF uses `R = 1`; exact classes get only the f32 slack where lavapipe does arithmetic.
    fn tolerance(&self, lk: &Lookup, tex: &Texture, lod: f32, value: &[f32; 4]) -> Tol {
        let slack32 = |v: f32| 2f64.powi(-20) * f64::from(v.abs());
        if let Op::Gather(_) | Op::GatherCompare = lk.op {
            // A cube-corner texel is an average of three (R120): f32 slack.
            let corner = cube_corner(self.spec, lk.coord, 0..1);
            return Tol {
                tol: value.map(|v| if corner { slack32(v) } else { 0.0 }),
                corner: [0.0; 4],
            };
        }
        let (k, levels, linear) = self.k_at(lod);
        let corner = linear && cube_corner(self.spec, lk.coord, levels);
        if lk.op.is_compare() {
            let t = match k {
                0 if self.any_linear() => slack32(1.0),
                k => f64::from(k) * EPS,
            };
            return Tol {
                tol: [t; 4],
                corner: [if corner { 1.0 / 12.0 } else { 0.0 }; 4],
            };
        }
        if k == 0 {
            return Tol {
                tol: if self.any_linear() {
                    self.linear_slack(lk, tex, lod)
                } else {
                    [0.0; 4]
                },
                corner: [0.0; 4],
            };
        }
        let (smin, smax) = self
            .samplers
            .min_max
            .as_ref()
            .expect("non-comparison sampler");
        let how = How {
            tex,
            lod: Some(lod),
            clamp_ref: false,
        };
        let lo = eval(smin, self.dim(), lk, how);
        let hi = eval(smax, self.dim(), lk, how);
        let mut out = Tol {
            tol: [0.0; 4],
            corner: [0.0; 4],
        };
        for c in 0..4 {
            let r = f64::from(hi[c]) - f64::from(lo[c]);
            let delta = match self.spec.fmt.unorm_bits() {
                Some(n) => 1.0 / f64::from((1u32 << n) - 1),
                None => slack32(lo[c].abs().max(hi[c].abs())),
            };
            out.tol[c] = f64::from(k) * EPS * r + delta;
            if corner {
                out.corner[c] = r / 12.0;
            }
        }
        out
    }

    /// The f32 slack `2^-20·max|texel|` over the texels lavapipe's linear arithmetic touches
    /// around a D3D point answer: the trilinear footprints at `lod` and half a level above
    /// (so that the next mip, weighted 0 by D3D, is included).
    fn linear_slack(&self, lk: &Lookup, tex: &Texture, lod: f32) -> [f64; 4] {
        let (smin, smax) = self
            .samplers
            .linear_min_max
            .as_ref()
            .expect("non-comparison sampler");
        let mut out = [0.0f64; 4];
        for l in [lod, lod + 0.5] {
            let how = How {
                tex,
                lod: Some(l),
                clamp_ref: false,
            };
            let lo = eval(smin, self.dim(), lk, how);
            let hi = eval(smax, self.dim(), lk, how);
            for c in 0..4 {
                let m = f64::from(lo[c].abs().max(hi[c].abs()));
                out[c] = out[c].max(2f64.powi(-20) * m);
            }
        }
        out
    }

    /// The LOD a lookup samples at, before clamps (explicit, or from its gradients).
    fn lod(&self, lk: &Lookup) -> f32 {
        match lk.op {
            Op::SampleGrad => self
                .samplers
                .main
                .calculate_lod(
                    Some(&self.tex.texture),
                    lk.penumbra_coord(self.dim()),
                    lk.ddx,
                    lk.ddy,
                )
                .expect("valid lookup")[1],
            Op::SampleLevel => lk.level,
            _ => 0.0,
        }
    }

    /// What penumbra returns for LODs in `[lo, hi]`: one accepted interval per stretch between
    /// breakpoints (integers, x.5, 0, the clamps). Within a stretch the result moves
    /// monotonically with the mip weight (or not at all), so its ends bound it; across a
    /// discontinuity — the MIP POINT switch at x.5, the mag/min switch at 0 — only the values on
    /// either side are accepted, not the gap between them.
    fn bracket(&self, lk: &Lookup, tex: &Texture, lo: f32, hi: f32) -> Vec<Range4> {
        // Beyond D3D's 8-bit LOD snapping (R60), so each side of a switch is sampled cleanly.
        const STEP: f32 = 2.0 / 256.0;
        // Just above an integer: at 0 the minification side of the mag/min switch (R59).
        const TINY: f32 = 1.0 / 1048576.0;
        let mut points = vec![lo, hi, self.sampler.lod_min, self.sampler.lod_max];
        let mut i = lo.floor();
        while i <= hi.ceil() {
            points.extend([
                i - STEP,
                i,
                i + TINY,
                i + STEP,
                i + 0.5 - STEP,
                i + 0.5 + STEP,
            ]);
            i += 1.0;
        }
        points.retain(|p| (lo..=hi).contains(p));
        points.sort_by(f32::total_cmp);
        points.dedup();
        let mip_point = self.sampler.mip == wgpu::MipmapFilterMode::Nearest;
        let switches = self.sampler.mag != self.sampler.min;
        let values: Vec<([f32; 4], Tol)> = points
            .iter()
            .map(|&p| {
                let how = How {
                    tex,
                    lod: Some(p),
                    clamp_ref: false,
                };
                let v = eval(&self.samplers.main, self.dim(), lk, how);
                let t = self.tolerance(lk, tex, p, &v);
                (v, t)
            })
            .collect();
        let mut out: Vec<Range4> = values
            .iter()
            .map(|(v, t)| Range4::at(v, t.widened()))
            .collect();
        for (w, pair) in points.windows(2).zip(values.windows(2)) {
            let (a, b) = (w[0], w[1]);
            let half = (a - 0.5).ceil() + 0.5;
            let jump = (mip_point && half <= b) || (switches && a <= 0.0 && b > 0.0);
            if jump {
                continue;
            }
            let (va, ta) = &pair[0];
            let (vb, tb) = &pair[1];
            let (wa, wb) = (ta.widened(), tb.widened());
            out.push(Range4 {
                lo: std::array::from_fn(|c| f64::from(va[c].min(vb[c]))),
                hi: std::array::from_fn(|c| f64::from(va[c].max(vb[c]))),
                tol: std::array::from_fn(|c| wa[c].max(wb[c])),
            });
        }
        out
    }

    fn judge(&self, lk: &Lookup, got: &[f32; 4]) -> Verdict {
        let n = self.channels(lk);
        let main = How {
            tex: &self.tex.texture,
            lod: None,
            clamp_ref: false,
        };
        let expected = eval(&self.samplers.main, self.dim(), lk, main);
        let lod = self.lod(lk);
        let tol = self.tolerance(lk, &self.tex.texture, lod, &expected);
        let verdict = |class| Verdict {
            class,
            penumbra: expected,
            tolerance: tol.tol,
            channels: n,
        };
        if (0..n).all(|c| got[c] == expected[c] || (got[c].is_nan() && expected[c].is_nan())) {
            return verdict(Class::Exact);
        }
        if Range4::at(&expected, tol.tol).contains(got, n) {
            return verdict(Class::WithinTolerance);
        }
        verdict(match self.explain(lk, got, lod) {
            Some(r) => Class::Explained(r),
            None => Class::Mismatch,
        })
    }

    /// Tries each documented difference's alternate model, strongest first, each on penumbra's
    /// texture and on the texture as lavapipe decodes it (UNORM formats, where lavapipe's
    /// conversion is 1 ulp off for some codes and rides along with every other difference).
    /// The first model that reproduces lavapipe's value names the reason.
    fn explain(&self, lk: &Lookup, got: &[f32; 4], lod: f32) -> Option<Reason> {
        let n = self.channels(lk);
        let models: Vec<(&Texture, bool)> = std::iter::once((&self.tex.texture, false))
            .chain(self.tex.decoded.as_ref().map(|d| (d, true)))
            .collect();
        // (value, tolerance) of a model on `tex` at an optional LOD override.
        let model = |tex: &Texture, decoded: bool, over: Option<f32>| {
            // lavapipe compares a D16 reference clamped, unquantized, with its decoded texel:
            // the decoded texture is D32, which compares floats exactly.
            let how = How {
                tex,
                lod: over,
                clamp_ref: decoded && lk.op.is_compare(),
            };
            let v = eval(&self.samplers.main, self.dim(), lk, how);
            let t = self.tolerance(lk, tex, over.unwrap_or(lod), &v);
            (v, t)
        };
        let in_bracket = |tex: &Texture, lo: f32, hi: f32| {
            let ranges = self.bracket(lk, tex, lo, hi);
            ranges.iter().any(|r| r.contains(got, n))
        };
        if lk.probe == Probe::MipHalf {
            for &(tex, decoded) in &models {
                let (v, t) = model(tex, decoded, Some(lk.level - BAND as f32));
                if Range4::at(&v, t.widened()).contains(got, n) {
                    return Some(Reason::MipPointHalf);
                }
            }
        }
        if let Some(&(tex, true)) = models.get(1) {
            let (v, t) = model(tex, true, None);
            if Range4::at(&v, t.tol).contains(got, n) {
                return Some(match lk.probe {
                    Probe::RefNearCode => Reason::D16RefNotQuantized,
                    _ => Reason::UnormDecode,
                });
            }
        }
        if lk.op == Op::SampleGrad {
            for &(tex, _) in &models {
                if in_bracket(tex, lod - 0.05, lod + 0.005) {
                    return Some(Reason::GradLodLog2);
                }
            }
        }
        for &(tex, decoded) in &models {
            let (v, t) = model(tex, decoded, None);
            if t.corner.iter().any(|&x| x > 0.0) && Range4::at(&v, t.widened()).contains(got, n) {
                return Some(Reason::CubeCorner);
            }
            if matches!(lk.op, Op::Gather(_) | Op::GatherCompare)
                && cube_corner(self.spec, lk.coord, 0..1)
                && gather_corner_ok(lk.op, &v, got)
            {
                return Some(Reason::CubeCorner);
            }
        }
        if lk.op == Op::SampleGrad && !lk.axis_aligned {
            for &(tex, _) in &models {
                if in_bracket(tex, lod - 0.55, lod + 0.55) {
                    return Some(Reason::GradLodFootprint);
                }
            }
        }
        None
    }
}

/// A tolerance and the cube-corner slack on top of it.
struct Tol {
    tol: [f64; 4],
    corner: [f64; 4],
}

impl Tol {
    /// The tolerance with the corner slack added.
    fn widened(&self) -> [f64; 4] {
        std::array::from_fn(|c| self.tol[c] + self.corner[c])
    }
}

/// An accepted interval per component: `[lo − tol, hi + tol]`.
struct Range4 {
    lo: [f64; 4],
    hi: [f64; 4],
    tol: [f64; 4],
}

impl Range4 {
    fn at(v: &[f32; 4], tol: [f64; 4]) -> Range4 {
        let w = v.map(f64::from);
        Range4 { lo: w, hi: w, tol }
    }

    fn contains(&self, a: &[f32; 4], n: usize) -> bool {
        (0..n).all(|c| {
            let v = f64::from(a[c]);
            v >= self.lo[c] - self.tol[c] && v <= self.hi[c] + self.tol[c]
        })
    }
}

/// A cube-corner gather: exactly one component (the missing texel) differs, and lavapipe's
/// value for it lies within the three real texels' range (for comparisons: 0 or 1, which SPEC
/// R120 accepts from GPUs).
fn gather_corner_ok(op: Op, expected: &[f32; 4], got: &[f32; 4]) -> bool {
    let differs: Vec<usize> = (0..4).filter(|&c| got[c] != expected[c]).collect();
    let [d] = differs[..] else { return false };
    if op == Op::GatherCompare {
        return got[d] == 0.0 || got[d] == 1.0;
    }
    let (lo, hi) = (0..4)
        .filter(|&c| c != d)
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), c| {
            (a.min(got[c]), b.max(got[c]))
        });
    (lo..=hi).contains(&got[d])
}

/// Counts per op and class, the reasons, and the cases that failed.
#[derive(Default)]
pub struct Report {
    /// (op name, class) → count.
    pub counts: BTreeMap<(&'static str, Class), usize>,
    /// Unexplained differences, described.
    pub mismatches: Vec<String>,
    /// Lookups whose lavapipe answer changed when their group ran in reverse order.
    pub order_dependent: Vec<String>,
    /// Coverage: (dimension, format) → lookups.
    pub coverage: BTreeMap<(&'static str, &'static str), usize>,
    /// Coverage of sampler and lookup features ("address WRAP", "compare LESS", …) → lookups.
    pub features: BTreeMap<String, usize>,
    /// Per op, the largest `|lavapipe − penumbra| / tolerance` among "within tolerance" lookups,
    /// and that case.
    pub worst_ratio: BTreeMap<&'static str, (f64, String)>,
    /// Lookups judged.
    pub total: usize,
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Gather(_) => "textureGather",
        other => other.name(),
    }
}

/// Describes a case fully, for a failure message.
#[must_use]
pub fn describe_case(
    spec: &TexSpec,
    group: &Group,
    lk: &Lookup,
    got: &[f32; 4],
    v: &Verdict,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  texture: {} {} {}x{} layers {} mips {}",
        spec.dim.name(),
        spec.fmt.name(),
        spec.width,
        spec.height,
        spec.layers,
        spec.mips
    );
    let _ = writeln!(s, "  sampler: {}", group.sampler.describe());
    let _ = write!(s, "  lookup:  {} coord {:?}", lk.op.name(), lk.coord);
    if let Op::Gather(c) = lk.op {
        let _ = write!(s, " component {c}");
    }
    if spec.dim == Dim::D2Array {
        let _ = write!(s, " layer {} (D3D slice {})", lk.layer, lk.slice);
    }
    match lk.op {
        Op::SampleLevel => {
            let _ = write!(s, " level {}", lk.level);
        }
        Op::SampleGrad => {
            let _ = write!(
                s,
                " ddx {:?} ddy {:?} (axis-aligned {})",
                lk.ddx, lk.ddy, lk.axis_aligned
            );
        }
        Op::SampleCompareLevel | Op::GatherCompare => {
            let _ = write!(s, " ref {:e} ({:?})", lk.dref, lk.probe);
        }
        Op::Gather(_) => {}
    }
    let _ = writeln!(s);
    let n = v.channels;
    let _ = writeln!(
        s,
        "  penumbra: {:?}\n  lavapipe: {:?}\n  tolerance: {:?}",
        &v.penumbra[..n],
        &got[..n],
        &v.tolerance[..n]
    );
    s
}

/// The features one lookup exercises, for the coverage table.
fn features(spec: &TexSpec, group: &Group, lk: &Lookup) -> Vec<String> {
    let d = group.sampler.d3d();
    let mut out = vec![format!("filter {}", d.filter.name())];
    let axes = if spec.dim == Dim::Cube { 3 } else { 2 };
    let modes = [d.address_u, d.address_v, d.address_w];
    let mut seen = Vec::new();
    for m in &modes[..axes] {
        if !seen.contains(m) {
            seen.push(*m);
            out.push(format!("address {}", m.name()));
        }
    }
    if group.sampler.uses_border() {
        out.push(format!(
            "border {:?}",
            group
                .sampler
                .border
                .unwrap_or(wgpu::SamplerBorderColor::Zero)
        ));
    }
    if group.sampler.compare.is_some() {
        out.push(format!("compare {}", d.comparison_func.name()));
    }
    if d.min_lod != 0.0 || d.max_lod != 32.0 {
        out.push("other MinLOD/MaxLOD".into());
    }
    if spec.mips > 1 {
        out.push("other mipmapped".into());
    }
    if spec.dim == Dim::D2Array && !(0..spec.layers as i32).contains(&lk.layer) {
        out.push("other array-layer-out-of-range".into());
    }
    if lk.probe != Probe::Plain {
        out.push(format!("probe {:?}", lk.probe));
    }
    out
}

/// Judges every lookup of a scenario against lavapipe's results from two runs: `first` in each
/// group's natural order, `second` reversed, so every lookup meets other neighbours in
/// lavapipe's SIMD lanes. A lookup counts in the class of its first run unless either run is a
/// MISMATCH; answers that changed bit-wise between the runs are listed separately.
#[must_use]
pub fn judge(scenario: &Scenario, first: &[Vec<[f32; 4]>], second: &[Vec<[f32; 4]>]) -> Report {
    let textures: Vec<PenumbraTexture> =
        scenario.textures.iter().map(PenumbraTexture::new).collect();
    let mut report = Report::default();
    for (g, group) in scenario.groups.iter().enumerate() {
        let spec = &scenario.textures[group.texture];
        let judge = GroupJudge {
            spec,
            tex: &textures[group.texture],
            sampler: &group.sampler,
            samplers: Samplers::new(&group.sampler),
        };
        for (i, lk) in group.lookups.iter().enumerate() {
            let runs = [&first[g][i], &second[g][i]];
            let verdicts = runs.map(|got| judge.judge(lk, got));
            let n = verdicts[0].channels;
            if (0..n).any(|c| runs[0][c].to_bits() != runs[1][c].to_bits()) {
                report.order_dependent.push(format!(
                    "{}  other order: {:?} ({:?})",
                    describe_case(spec, group, lk, runs[0], &verdicts[0]),
                    &runs[1][..n],
                    verdicts[1].class
                ));
            }
            let mut class = verdicts[0].class;
            for (got, v) in runs.iter().zip(&verdicts) {
                if v.class == Class::Mismatch {
                    class = Class::Mismatch;
                    report
                        .mismatches
                        .push(describe_case(spec, group, lk, got, v));
                    break;
                }
            }
            if class == Class::WithinTolerance {
                let v = &verdicts[0];
                let ratio = (0..n)
                    .filter(|&c| v.tolerance[c] > 0.0)
                    .map(|c| {
                        (f64::from(runs[0][c]) - f64::from(v.penumbra[c])).abs() / v.tolerance[c]
                    })
                    .fold(0.0, f64::max);
                let worst = report.worst_ratio.entry(op_name(lk.op)).or_default();
                if ratio > worst.0 {
                    *worst = (ratio, describe_case(spec, group, lk, runs[0], v));
                }
            }
            for f in features(spec, group, lk) {
                *report.features.entry(f).or_default() += 1;
            }
            *report.counts.entry((op_name(lk.op), class)).or_default() += 1;
            *report
                .coverage
                .entry((spec.dim.name(), spec.fmt.name()))
                .or_default() += 1;
            report.total += 1;
        }
    }
    report
}

impl Report {
    /// The summary table: one row per op, columns exact / within tolerance / explained /
    /// MISMATCH, then the explained reasons.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<28}{:>8}{:>11}{:>11}{:>10}{:>8}",
            "op", "exact", "tolerance", "explained", "MISMATCH", "total"
        );
        let mut col = [0usize; 5];
        for op in Op::REPORTED {
            let name = op_name(op);
            let mut row = [0usize; 5];
            for (&(o, class), &n) in &self.counts {
                if o != name {
                    continue;
                }
                let i = match class {
                    Class::Exact => 0,
                    Class::WithinTolerance => 1,
                    Class::Explained(_) => 2,
                    Class::Mismatch => 3,
                };
                row[i] += n;
                row[4] += n;
            }
            for i in 0..5 {
                col[i] += row[i];
            }
            let _ = writeln!(
                s,
                "{:<28}{:>8}{:>11}{:>11}{:>10}{:>8}",
                name, row[0], row[1], row[2], row[3], row[4]
            );
        }
        let _ = writeln!(
            s,
            "{:<28}{:>8}{:>11}{:>11}{:>10}{:>8}",
            "all", col[0], col[1], col[2], col[3], col[4]
        );
        let mut reasons: BTreeMap<Reason, usize> = BTreeMap::new();
        for (&(_, class), &n) in &self.counts {
            if let Class::Explained(r) = class {
                *reasons.entry(r).or_default() += n;
            }
        }
        if !reasons.is_empty() {
            let _ = writeln!(s, "explained:");
            for (r, n) in reasons {
                let _ = writeln!(s, "  {n:>6}  {}", r.describe());
            }
        }
        if !self.worst_ratio.is_empty() {
            let _ = write!(
                s,
                "largest |difference|/tolerance among 'within tolerance':"
            );
            for (op, (r, _)) in &self.worst_ratio {
                let _ = write!(s, " {op} {r:.3};");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "coverage, lookups per dimension and format:");
        let mut last = "";
        for ((d, f), n) in &self.coverage {
            if *d != last {
                let _ = write!(s, "{}  {d:<8}", if last.is_empty() { "" } else { "\n" });
                last = d;
            }
            let _ = write!(s, " {f} {n};");
        }
        let _ = writeln!(s, "\ncoverage, lookups per feature:");
        let mut last = String::new();
        for (f, n) in &self.features {
            let (kind, value) = f.split_once(' ').unwrap_or((f, ""));
            if kind != last {
                let _ = write!(s, "{}  {kind}:", if last.is_empty() { "" } else { "\n" });
                last = kind.to_string();
            }
            let _ = write!(s, " {value} {n};");
        }
        let _ = writeln!(s);
        s
    }
}
