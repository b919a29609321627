//! Re-computing a case the way lavapipe works: each documented Vulkan-vs-D3D12 difference is a
//! rewrite of the case (a float copy of a UNORM texture, another border colour or reference, an
//! explicit LOD, per-level min/max) that penumbra then evaluates; and SPEC §3.3's tolerance for
//! the result.

use crate::format::ComponentKind;
use crate::sample::lod::select_mips;
use crate::{FilterType, Format, ReductionType};
use serde_json::Value;

use super::{Batch, Case, Profile, hex, num};

/// ε of SPEC §3.3: two independent 0.6-ULP snaps of an 8-bit grid.
const EPS: f64 = 1.2 / 256.0;
/// PCF tolerance by number of interpolated axes (SPEC §3.3 item 2, R = 1: bilinear ≤ 0.0094,
/// trilinear ≤ 0.0141).
const PCF_TOL: [f64; 4] = [0.0, 0.0047, 0.0094, 0.0141];
/// How much lower lavapipe's approximate log2 makes a LOD from gradients (SCHEMA.md).
pub(super) const LOG2_SLACK: f32 = 0.043;
/// How much lower and higher than D3D's (R47–R52) the H200 makes a LOD from gradients: measured
/// −0.05 to +0.08 on this case file and a larger run.
pub(super) const NV_GRAD_LOD: (f32, f32) = (0.05, 0.08);
/// SPEC §3.3 item 6: general (not axis-aligned) footprints may differ by up to about 0.5 LOD
/// between implementations; 0.55 with the rounding of an 8.8 LOD.
pub(super) const FOOTPRINT_LOD: f32 = 0.55;
/// Samples of the LOD bracket `[−LOG2_SLACK, 0]`, ends included: 17.
const BRACKET_STEPS: u32 = 16;
/// One step of the 8.8 fixed-point LOD (R60).
pub(super) const LOD_STEP: f32 = 1.0 / 256.0;

/// One documented Vulkan-vs-D3D12 difference (SCHEMA.md, "Comparing with lavapipe").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Diff {
    /// UNORM → float through an f32 reciprocal, `k · fl(1/(2^n − 1))`: 1 ulp off for some codes
    /// (D3D: correctly rounded, R1).
    Reciprocal,
    /// UNORM border colours clamped but not quantized (D3D: quantized, R35).
    BorderNotQuantized,
    /// UNORM comparison references clamped but not quantized, a NaN reference becomes 1.0
    /// (D3D: quantized, NaN → 0, R82–R84).
    RefNotQuantized,
    /// MIP POINT at a LOD of exactly x.5 rounds half to even (D3D: up, R60).
    MipHalfEven,
    /// The LOD from gradients is 0 to 0.043 too low (approximate log2; D3D: R47).
    Log2,
    /// MINIMUM/MAXIMUM with linear mip filtering: reduced per level, then blended by the mip
    /// weight (D3D: one reduction over both levels, R93–R94).
    MinMaxPerLevel,
    /// NVIDIA: the LOD from gradients is 0.05 lower to 0.08 higher than D3D's (R47–R52).
    NvGradLod,
    /// NVIDIA: the fraction of a LOD that blends two mips is kept in 8 bits, rounded down
    /// (D3D: R60's 8.8 fixed point rounds to nearest).
    NvLodFraction8,
    /// NVIDIA: the LOD from gradients of a footprint that is not axis-aligned is within ±0.55
    /// of D3D's (SPEC §3.3 item 6: per-axis lengths against D3D's, R47–R50).
    NvFootprintLod,
    /// NVIDIA: a filtered R16_FLOAT result is rounded to f16 (D3D: f32 filtering, R66).
    NvF16Result,
    /// NVIDIA: the LOD of a cube map from gradients is its own (D3D: R52's face-space
    /// derivatives); the answer is D3D's at another LOD within the sampler's clamps.
    NvCubeLod,
}

impl Diff {
    /// The reason printed for the difference.
    pub(super) fn name(self, format: Format) -> &'static str {
        match self {
            Diff::Reciprocal => "unorm-f32-reciprocal",
            Diff::BorderNotQuantized => "unorm-border-not-quantized",
            Diff::RefNotQuantized if format == Format::D16Unorm => "d16-ref-not-quantized",
            Diff::RefNotQuantized => "unorm-ref-not-quantized",
            Diff::MipHalfEven => "mip-point-half-even",
            Diff::Log2 => "lod-log2-approx",
            Diff::MinMaxPerLevel => "minmax-per-level-blend",
            Diff::NvGradLod => "nv-grad-lod",
            Diff::NvLodFraction8 => "nv-lod-fraction-8bit",
            Diff::NvCubeLod => "nv-cube-lod",
            Diff::NvFootprintLod => "nv-footprint-lod",
            Diff::NvF16Result => "nv-f16-result",
        }
    }

    /// The differences of `profile` that can change this case's answer.
    pub(super) fn applicable(case: &Case, profile: Profile) -> Vec<Diff> {
        match profile {
            Profile::D3d => Vec::new(),
            Profile::Lavapipe => Diff::lavapipe(case),
            Profile::Nvidia => Diff::nvidia(case),
        }
    }

    fn lavapipe(case: &Case) -> Vec<Diff> {
        let mut diffs = Vec::new();
        if let Some(bits) = unorm_bits(case.format) {
            diffs.push(Diff::Reciprocal);
            let channels = case.format.channels();
            if border_sampled(case)
                && case.desc.border_color[..channels]
                    .iter()
                    .any(|&c| !unorm_representable(c, bits))
            {
                diffs.push(Diff::BorderNotQuantized);
            }
            if case.op.compares() {
                diffs.push(Diff::RefNotQuantized);
            }
        }
        let mip = case.filter.mip_filter();
        if case.lod.is_some() && mip == FilterType::Point {
            diffs.push(Diff::MipHalfEven);
        }
        if case.lod.is_some() && mip == FilterType::Linear && min_max(case) {
            diffs.push(Diff::MinMaxPerLevel);
        }
        if case.op.has_gradients() {
            diffs.push(Diff::Log2);
        }
        diffs
    }

    fn nvidia(case: &Case) -> Vec<Diff> {
        let mut diffs = Vec::new();
        if case.op.has_gradients() {
            if case.dim.is_cube() {
                diffs.push(Diff::NvCubeLod);
            } else {
                // The narrow, measured LOD error first; general footprints may need more.
                diffs.push(Diff::NvGradLod);
                if !axis_aligned(case) {
                    diffs.push(Diff::NvFootprintLod);
                }
            }
        }
        if case.format.kind() == ComponentKind::Float16 && !case.op.compares() && !case.op.gathers()
        {
            diffs.push(Diff::NvF16Result);
        }
        if case.lod.is_some() && case.filter.mip_filter() == FilterType::Linear && case.mips > 1 {
            diffs.push(Diff::NvLodFraction8);
        }
        diffs
    }
}

/// A lavapipe model: which differences are applied, and by how much the LOD from gradients is
/// lowered.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Model {
    reciprocal: bool,
    border_raw: bool,
    ref_raw: bool,
    half_even: bool,
    per_level: bool,
    lod_trunc8: bool,
    f16_result: bool,
    lod_shift: f32,
}

impl Model {
    pub(super) fn with(diffs: &[Diff]) -> Model {
        let mut m = Model::default();
        for d in diffs {
            match d {
                Diff::Reciprocal => m.reciprocal = true,
                Diff::BorderNotQuantized => m.border_raw = true,
                Diff::RefNotQuantized => m.ref_raw = true,
                Diff::MipHalfEven => m.half_even = true,
                Diff::MinMaxPerLevel => m.per_level = true,
                Diff::NvLodFraction8 => m.lod_trunc8 = true,
                Diff::NvF16Result => m.f16_result = true,
                Diff::Log2 | Diff::NvGradLod | Diff::NvFootprintLod | Diff::NvCubeLod => {}
            }
        }
        m
    }

    /// The texture is replaced by a float copy of its decoded UNORM values.
    fn float_copy(&self) -> bool {
        self.reciprocal || self.border_raw || self.ref_raw
    }
}

/// What a model predicts for a case: values, and the per-component tolerance (`None`: an exact
/// class, the bits must be equal).
#[derive(Clone, Debug)]
pub(super) struct Prediction {
    pub value: Vec<f32>,
    pub tol: Option<Vec<f64>>,
    /// `R` per component (max − min over the footprint), when it was computed.
    pub range: Option<Vec<f64>>,
    /// Interpolated axes of the filter (SPEC §3.3's `k`).
    pub k: u32,
}

impl Prediction {
    /// Whether `got` is this prediction: bit for bit in an exact class, else within tolerance
    /// widened by `extra` per component.
    pub(super) fn accepts_with(&self, got: &[f32], extra: &[f64]) -> bool {
        self.value.len() == got.len()
            && (0..got.len()).all(|c| {
                let (p, l) = (self.value[c], got[c]);
                let slack = extra.get(c).copied().unwrap_or(0.0);
                match &self.tol {
                    None if slack == 0.0 => {
                        p.to_bits() == l.to_bits() || (p.is_nan() && l.is_nan())
                    }
                    None => close(p, l, slack),
                    Some(t) => close(p, l, t[c] + slack),
                }
            })
    }

    pub(super) fn accepts(&self, got: &[f32]) -> bool {
        self.accepts_with(got, &[])
    }

    /// The rule of SPEC §3.3 that this kind of result is held to, with its tolerance.
    pub(super) fn rule(&self, case: &Case) -> String {
        match &self.tol {
            None if case.op.gathers() => {
                "SPEC §3.3 item 3 (gathers return texels: an exact class; R118-R120)".into()
            }
            None if min_max(case) => "SPEC §3.3 item 3 (min/max: an exact class; R93)".into(),
            None => "SPEC §3.3 item 3 (point sampling: an exact class)".into(),
            Some(_) if case.op.compares() => format!(
                "SPEC §3.3 item 2 (PCF: |a - b| <= k·ε with R = 1): {}",
                self.describe_tol()
            ),
            Some(_) => format!(
                "SPEC §3.3 item 1 (filtered: |a - b| <= k·ε·R + δ): {}",
                self.describe_tol()
            ),
        }
    }

    pub(super) fn describe_tol(&self) -> String {
        match &self.tol {
            None => "exact class (bits must be equal)".into(),
            Some(t) => format!(
                "k = {}, R = [{}], |Δ| ≤ [{}]",
                self.k,
                self.range.as_deref().map_or("1 (PCF)".into(), list),
                list(t)
            ),
        }
    }
}

fn list(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.3e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn close(a: f32, b: f32, tol: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (f64::from(a) - f64::from(b)).abs() <= tol
}

/// UNORM → float: D3D's correctly rounded `k / (2^n − 1)` (R1) or lavapipe's
/// `k · fl(1/(2^n − 1))`.
pub fn unorm_decode(k: u32, bits: u32, reciprocal: bool) -> f32 {
    let m = ((1u64 << bits) - 1) as f32;
    if reciprocal {
        k as f32 * (1.0 / m)
    } else {
        k as f32 / m
    }
}

/// R3: float → UNORM code (NaN → 0, clamp, scale, +0.5, truncate), in f64 (R83).
pub(super) fn unorm_quantize(x: f32, bits: u32) -> u32 {
    if x.is_nan() {
        return 0;
    }
    let m = ((1u64 << bits) - 1) as f64;
    (f64::from(x).clamp(0.0, 1.0) * m + 0.5) as u32
}

fn unorm_representable(x: f32, bits: u32) -> bool {
    unorm_decode(unorm_quantize(x, bits), bits, false) == x
}

pub(super) fn unorm_bits(format: Format) -> Option<u32> {
    match format.kind() {
        ComponentKind::Unorm(bits) => Some(bits),
        _ => None,
    }
}

fn min_max(case: &Case) -> bool {
    matches!(
        case.filter.reduction(),
        ReductionType::Minimum | ReductionType::Maximum
    )
}

/// Evaluates `models` (which must agree on the float copy and its decoding) for a case, with
/// tolerances, in one batch.
pub(super) fn predict(case: &Case, models: &[Model]) -> Result<Vec<Prediction>, String> {
    struct Plan {
        /// One evaluation, or two levels blended with `weight`.
        value: Vec<usize>,
        weight: f32,
        /// The MINIMUM and MAXIMUM variants, for `R`.
        range: Option<(usize, usize)>,
        k: u32,
        exact: bool,
        /// Round the result to f16 (the H200's R16_FLOAT filtering).
        f16: bool,
    }
    let bits = unorm_bits(case.format);
    let float_copy = models[0].float_copy() && bits.is_some();
    let mut batch = Batch::new(if float_copy {
        float_texture(case, models[0].reciprocal)
    } else {
        case.tex.clone()
    });
    let filter = case.filter.raw();
    let mut plans = Vec::new();
    for m in models {
        let mut base = case.json.clone();
        if float_copy {
            adapt_to_float_copy(case, m, &mut base);
        }

        // The LOD lavapipe would use, applied through an explicit-LOD rewrite when it differs.
        let target = case.lod.map(|(biased, clamped)| {
            let mut l = case.sampler_clamp(biased - m.lod_shift) + case.lod_nudge;
            if m.half_even && case.filter.mip_filter() == FilterType::Point {
                l = half_even_lod(l);
            }
            if m.lod_trunc8 && l > 0.0 && l.is_finite() {
                l = (l * 256.0).floor() / 256.0;
            }
            (
                l,
                l != clamped || m.lod_shift != 0.0 || case.lod_nudge != 0.0,
            )
        });
        let at = |lod: f32, filter: Option<u32>| {
            let mut c = explicit_lod(case, &base, lod);
            if let Some(f) = filter {
                c["sampler"]["Filter"] = f.into();
            }
            c
        };
        let value_case = match target {
            Some((l, true)) => at(l, None),
            _ => base.clone(),
        };
        let lod = target.map(|(l, _)| l);
        let mut plan = Plan {
            value: Vec::new(),
            weight: 0.0,
            range: None,
            k: interpolated_axes(case, lod),
            exact: false,
            f16: m.f16_result,
        };
        let mut per_level = false;
        if let Some(l) = lod.filter(|_| m.per_level) {
            let mips = select_mips(l, true, case.mips);
            if mips.count == 2 {
                // Each level on its own (MIP POINT at its integer LOD), blended in f32 by the
                // fraction of the LOD.
                per_level = true;
                for (level, _) in mips.levels {
                    plan.value
                        .push(batch.push(at(level as f32, Some(filter & !3))));
                }
                plan.weight = l - l.floor();
                plan.k = 1;
            }
        }
        if plan.value.is_empty() {
            plan.value.push(batch.push(value_case.clone()));
        }
        plan.exact = case.op.gathers() || plan.k == 0 || (min_max(case) && !per_level);
        if !case.op.compares() && !case.op.gathers() {
            let with = |reduction: u32| {
                let mut c = value_case.clone();
                c["sampler"]["Filter"] = ((filter & !0x180) | reduction << 7).into();
                c
            };
            plan.range = Some((batch.push(with(2)), batch.push(with(3))));
        }
        plans.push(plan);
    }
    let results = batch.run()?;
    let get = |i: usize| results[i].clone();
    plans
        .into_iter()
        .map(|p| {
            let value: Vec<f32> = if let [a, b] = p.value[..] {
                let (a, b) = (get(a)?, get(b)?);
                a.iter()
                    .zip(&b)
                    .map(|(&x, &y)| x + p.weight * (y - x))
                    .collect()
            } else {
                get(p.value[0])?
            };
            let mut range = None;
            let mut delta = vec![0.0; value.len()];
            if let Some((lo, hi)) = p.range {
                let (lo, hi) = (get(lo)?, get(hi)?);
                let r = (0..value.len()).map(|c| {
                    let r = (f64::from(hi[c]) - f64::from(lo[c])).abs();
                    if r.is_finite() { r } else { 0.0 }
                });
                range = Some(r.collect::<Vec<_>>());
                for (c, d) in delta.iter_mut().enumerate() {
                    *d = match bits {
                        Some(n) => 1.0 / ((1u64 << n) - 1) as f64,
                        None => f64::from(lo[c].abs().max(hi[c].abs())) * 2f64.powi(-20),
                    } + border_step(case, c);
                }
            }
            let tol = match (&range, p.exact) {
                (_, true) => None,
                (None, false) => Some(vec![PCF_TOL[p.k.min(3) as usize]; value.len()]),
                (Some(r), false) => Some(
                    r.iter()
                        .zip(&delta)
                        .map(|(r, d)| f64::from(p.k) * EPS * r + d)
                        .collect(),
                ),
            };
            let value = if p.f16 {
                value
                    .iter()
                    .map(|&x| half::f16::from_f32(x).to_f32())
                    .collect()
            } else {
                value
            };
            Ok(Prediction {
                value,
                tol,
                range,
                k: p.k,
            })
        })
        .collect()
}

/// The LOD-from-gradients bracket: the answer equals (or is within tolerance of) the answer at
/// some LOD moved by a shift in `shifts` (subtracted from D3D's LOD), or — where the result is
/// continuous in the LOD (linear mip filtering) — lies between two neighbouring samples.
pub(super) fn bracket_accepts(case: &Case, model: Model, shifts: &[f32], theirs: &[f32]) -> bool {
    let models: Vec<Model> = shifts
        .iter()
        .map(|&lod_shift| Model { lod_shift, ..model })
        .collect();
    let Ok(preds) = predict(case, &models) else {
        return false;
    };
    if preds.iter().any(|p| p.accepts(theirs)) {
        return true;
    }
    case.filter.mip_filter() == FilterType::Linear
        && preds.windows(2).any(|w| {
            let (a, b) = (&w[0], &w[1]);
            let (Some(ta), Some(tb)) = (&a.tol, &b.tol) else {
                return false;
            };
            theirs.iter().enumerate().all(|(c, &l)| {
                let t = ta[c].max(tb[c]);
                let (x, y) = (f64::from(a.value[c]), f64::from(b.value[c]));
                let l = f64::from(l);
                l >= x.min(y) - t && l <= x.max(y) + t
            })
        })
}

/// Whether the gradients are axis-aligned: each derivative moves along one axis only, the two
/// along different axes (SPEC §3.3 item 6: then every implementation agrees within ε).
pub(super) fn axis_aligned(case: &Case) -> bool {
    let list = |k: &str| -> Vec<f32> {
        case.json
            .get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(num).collect())
            .unwrap_or_default()
    };
    let (dx, dy) = (list("ddx"), list("ddy"));
    let axes = case.dim.axes().min(dx.len()).min(dy.len());
    let along = |d: &[f32]| {
        let moving: Vec<usize> = (0..axes).filter(|&i| d[i] != 0.0).collect();
        moving
    };
    let (a, b) = (along(&dx), along(&dy));
    a.len() <= 1 && b.len() <= 1 && (a.is_empty() || b.is_empty() || a != b)
}

/// `n + 1` evenly spaced shifts from `lo` to `hi`, ends included.
fn shifts(lo: f32, hi: f32, n: u32) -> Vec<f32> {
    (0..=n)
        .map(|j| lo + (hi - lo) * j as f32 / n as f32)
        .collect()
}

/// Whether the model with these differences reproduces the answer.
pub(super) fn reproduces(case: &Case, diffs: &[Diff], theirs: &[f32]) -> bool {
    let model = Model::with(diffs);
    if diffs.contains(&Diff::NvCubeLod) {
        // Every LOD the sampler's clamps and the view allow, in 8.8 steps (R60).
        let Some((biased, _)) = case.lod else {
            return false;
        };
        let lo = case.desc.min_lod.max(0.0);
        let hi = case.desc.max_lod.min((case.mips - 1) as f32).max(lo);
        let steps = (((hi - lo) * 256.0).ceil() as u32).clamp(1, 256 * 16);
        let list: Vec<f32> = shifts(lo, hi, steps)
            .into_iter()
            .map(|l| biased - l)
            .collect();
        bracket_accepts(case, model, &list, theirs)
    } else if diffs.contains(&Diff::NvFootprintLod) {
        let n = (2.0 * FOOTPRINT_LOD * 256.0).ceil() as u32;
        bracket_accepts(
            case,
            model,
            &shifts(-FOOTPRINT_LOD, FOOTPRINT_LOD, n),
            theirs,
        )
    } else if diffs.contains(&Diff::NvGradLod) {
        let (down, up) = NV_GRAD_LOD;
        // 1/256 apart: every 8.8 LOD in the range.
        let n = ((down + up) * 256.0).ceil() as u32;
        bracket_accepts(case, model, &shifts(-up, down, n), theirs)
    } else if diffs.contains(&Diff::Log2) {
        bracket_accepts(case, model, &shifts(0.0, LOG2_SLACK, BRACKET_STEPS), theirs)
    } else {
        predict(case, &[model]).is_ok_and(|p| p[0].accepts(theirs))
    }
}

/// SPEC §3.3 item 1's `δ = 2^-20·max|texel|` for a sampler with any linear part (an exact-class
/// answer may come back a few ulps off from an implementation that runs the linear arithmetic
/// with weights 0 and 1): the largest texel of the trilinear footprint at the case's LOD and half
/// a level above (the next mip, weighted 0), or 1 for comparisons. `None` for an all-point
/// sampler or a gather.
pub(super) fn order_slack(case: &Case) -> Option<f64> {
    let f = case.filter;
    let linear = [f.mag_filter(), f.min_filter(), f.mip_filter()].contains(&FilterType::Linear)
        || f.is_anisotropic();
    if !linear || case.op.gathers() {
        return None;
    }
    let slack = |m: f64| 2f64.powi(-20) * m;
    if case.op.compares() {
        return Some(slack(1.0));
    }
    let lod = case.lod.map_or(0.0, |(_, clamped)| clamped);
    let mut batch = Batch::new(case.tex.clone());
    let mut ids = Vec::new();
    for l in [lod, lod + 0.5] {
        for reduction in [2u32, 3] {
            let mut c = explicit_lod(case, &case.json, l);
            // MIN_MAG_MIP_LINEAR with the MINIMUM or MAXIMUM reduction.
            c["sampler"]["Filter"] = (0x15 | reduction << 7).into();
            ids.push(batch.push(c));
        }
    }
    let results = batch.run().ok()?;
    let mut m = 0.0f64;
    for i in ids {
        for &v in results[i].as_ref().ok()? {
            if v.is_finite() {
                m = m.max(f64::from(v.abs()));
            }
        }
    }
    Some(slack(m))
}

/// A float copy of a UNORM texture (R32_FLOAT, or R32G32B32A32_FLOAT for 4 channels) holding the
/// decoded values, D3D's or lavapipe's.
pub(super) fn float_texture(case: &Case, reciprocal: bool) -> Value {
    let bits = unorm_bits(case.format).expect("a UNORM format");
    let mut t = case.tex.clone();
    t["format"] = if case.format.channels() == 4 {
        "R32G32B32A32_FLOAT"
    } else {
        "R32_FLOAT"
    }
    .into();
    let decode = |sub: &Value| -> Value {
        sub.as_array()
            .expect("a subresource")
            .iter()
            .map(|v| hex(unorm_decode(super::code(v), bits, reciprocal)))
            .collect()
    };
    t["data"] = case.tex["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(decode)
        .collect();
    t
}

/// Rewrites a case for the float copy of its UNORM texture: the border colour and the comparison
/// reference become the float values the filter sees — quantized as D3D does, or under the model
/// only clamped (a NaN reference becomes 1.0).
pub(super) fn adapt_to_float_copy(case: &Case, m: &Model, json: &mut Value) {
    let bits = unorm_bits(case.format).expect("a UNORM format");
    let quantized = |x: f32| unorm_decode(unorm_quantize(x, bits), bits, m.reciprocal);
    json["sampler"]["BorderColor"] = case
        .desc
        .border_color
        .iter()
        .map(|&c| match m.border_raw {
            true if c.is_nan() => hex(0.0),
            true => hex(c.clamp(0.0, 1.0)),
            false => hex(quantized(c)),
        })
        .collect();
    if case.op.compares() {
        let r = num(&json["ref"]);
        json["ref"] = match m.ref_raw {
            true if r.is_nan() => hex(1.0),
            true => hex(r.clamp(0.0, 1.0)),
            false => hex(quantized(r)),
        };
    }
}

/// The case as an explicit-LOD op at exactly `lod` (bias 0, no sampler clamps).
pub(super) fn explicit_lod(case: &Case, json: &Value, lod: f32) -> Value {
    let mut c = json.clone();
    c["op"] = case.op.explicit().into();
    if let Some(o) = c.as_object_mut() {
        o.remove("ddx");
        o.remove("ddy");
    }
    c["lod"] = hex(lod);
    c["sampler"]["MipLODBias"] = 0.into();
    c["sampler"]["MinLOD"] = hex(-f32::MAX);
    c["sampler"]["MaxLOD"] = hex(f32::MAX);
    c
}

/// MIP POINT at an 8.8 LOD of exactly x.5 with x even: lavapipe reads level x, D3D level x + 1
/// (R60); one fixed-point step lower reads level x. (A nudge of 2^-10 would vanish in the 8.8
/// rounding of R60.)
fn half_even_lod(l: f32) -> f32 {
    if l <= 0.0 || !l.is_finite() {
        return l;
    }
    let fl = (l * 256.0).round_ties_even() as i64;
    if fl & 255 == 128 && (fl >> 8) % 2 == 0 {
        l - LOD_STEP
    } else {
        l
    }
}

/// SPEC §3.3's `k`: interpolated axes of the filter that runs at `lod` (cubes count as 2D), plus
/// one when two mips are blended.
fn interpolated_axes(case: &Case, lod: Option<f32>) -> u32 {
    let f = case.filter;
    let Some(l) = lod else {
        return 0;
    };
    let magnify = l <= 0.0 || l.is_nan();
    let t = if magnify {
        f.mag_filter()
    } else {
        f.min_filter()
    };
    let mut k = if t == FilterType::Linear || f.is_anisotropic() {
        case.dim.axes() as u32
    } else {
        0
    };
    if !magnify
        && f.mip_filter() == FilterType::Linear
        && select_mips(l, true, case.mips).count == 2
    {
        k += 1;
    }
    k
}

/// Whether a BORDER address mode can put the border colour into the footprint (never on cubes,
/// R100).
pub(super) fn border_sampled(case: &Case) -> bool {
    use crate::AddressMode::Border;
    !case.dim.is_cube()
        && [
            case.desc.address_u,
            case.desc.address_v,
            case.desc.address_w,
        ][..case.dim.axes()]
            .contains(&Border)
}

/// SPEC §3.3 item 8: one format step more for a UNORM border colour component that is not
/// representable.
fn border_step(case: &Case, c: usize) -> f64 {
    match unorm_bits(case.format) {
        Some(bits)
            if c < case.format.channels()
                && border_sampled(case)
                && !unorm_representable(case.desc.border_color[c], bits) =>
        {
            1.0 / ((1u64 << bits) - 1) as f64
        }
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::judge::Suite;

    /// A suite of cases on a 2×1 (mip 0) and 1×1 (mip 1) R32_FLOAT texture: texels 0 and 1,
    /// then 4 on the second level. The answers do not matter here.
    fn suite(cases: Vec<Value>) -> Suite {
        let texture = json!({"id": "t", "dimension": "2D", "format": "R32_FLOAT", "width": 2,
            "height": 1, "mip_levels": 2, "data": [[0.0, 1.0], [4.0]]});
        let results: Vec<Value> = (0..cases.len())
            .map(|i| json!({"index": i, "status": "ok", "result": [0, 0, 0, 1]}))
            .collect();
        Suite::new(
            &json!({"textures": [texture], "cases": cases}),
            &json!({ "results": results }),
            Profile::Nvidia,
        )
        .unwrap()
    }

    fn value(suite: &Suite, i: usize, diffs: &[Diff]) -> f32 {
        let case = suite.case(i).unwrap();
        predict(&case, &[Model::with(diffs)]).unwrap()[0].value[0]
    }

    /// 8 bits of sub-texel precision (R27, FS 7.18.8): 4,096 evenly spaced positions between
    /// two texel centres give 257 distinct bilinear results (0/256 to 256/256) — the count the
    /// H200 gives, so its quantized weights are D3D12's and need no behaviour of their own.
    #[test]
    fn bilinear_weights_have_8_bits_like_the_h200s() {
        let n = 4096;
        let cases: Vec<Value> = (0..n)
            .map(|j| {
                // From the centre of texel 0 (u = 0.25) to that of texel 1 (u = 0.75).
                let u = 0.25 + 0.5 * f64::from(j) / f64::from(n - 1);
                json!({"texture": "t", "op": "sample_l", "coord": [u, 0.5], "lod": 0,
                    "sampler": {"Filter": "MIN_MAG_MIP_LINEAR"}})
            })
            .collect();
        let suite = suite(cases);
        let mut seen: Vec<u32> = (0..n as usize)
            .map(|i| value(&suite, i, &[]).to_bits())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 257);
    }

    /// NVIDIA's trilinear LOD fraction: 8 bits, rounded down — never above D3D's (R60 rounds the
    /// 8.8 LOD to nearest), equal to it on the 1/256 grid.
    #[test]
    fn the_8_bit_lod_fraction_is_never_above_the_exact_one() {
        let lods: Vec<f32> = (0..=600).map(|j| j as f32 / 600.0).collect();
        let cases: Vec<Value> = lods
            .iter()
            .map(|&l| {
                json!({"texture": "t", "op": "sample_l", "coord": [0.25, 0.5], "lod": l,
                    "sampler": {"Filter": "MIN_MAG_MIP_LINEAR"}})
            })
            .collect();
        let suite = suite(cases);
        for (i, &l) in lods.iter().enumerate() {
            // Texel 0 of level 0 is 0, level 1 is 4: the result is 4 · fraction.
            let exact = value(&suite, i, &[]);
            let nv = value(&suite, i, &[Diff::NvLodFraction8]);
            assert!(nv <= exact, "LOD {l}: {nv} > {exact}");
            assert!(exact - nv < 4.0 / 256.0 + 1e-6, "LOD {l}: {nv} vs {exact}");
            assert_eq!(nv, 4.0 * (l * 256.0).floor() / 256.0, "LOD {l}");
        }
    }
}
