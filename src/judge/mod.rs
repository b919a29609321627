//! Judging another implementation's answer to a sampling case against penumbra's (D3D12's):
//! the one judge of the project, used by `tests/lavapipe.rs`, `tests/nvidia.rs`, the live
//! cross-check in `xcheck/` and `penumbra judge` (docs/conformance.md).
//!
//! [`Suite::classify`] sorts a case into one of these classes, trying in this order:
//! 1. **exact** — the bits are equal;
//! 2. **within tolerance** — SPEC §3.3's recipe (`model.rs`): `|a − b| ≤ k·ε·R + δ`, with `R`
//!    taken from the engine itself — the MINIMUM and MAXIMUM variants of a filter read exactly the
//!    texels of the standard filter (R93), so their answers bound the footprint;
//! 3. **explained** — a re-computation: the case is rewritten so that penumbra evaluates it with
//!    one or more documented behaviours of the [`Profile`] applied (for lavapipe a float copy of
//!    the texture with its UNORM decoding, an unquantized reference, its LOD, per-level min/max;
//!    for the H200 its LOD errors, its cube LODs, its 8-bit corner weights, R75's bounds for its
//!    anisotropic footprints; `model.rs`, `nvidia.rs`), and the result reproduces the answer — bit
//!    for bit for the exact classes, within tolerance for the filtered ones. Failing that, a guard
//!    band of SPEC §3.3 (`bands.rs`): the case's own numbers lie in the band and moving the input
//!    inside the band reproduces the answer; last, SPEC §3.3 item 1's f32 slack for exact-class
//!    answers of samplers with a linear part;
//! 4. **non-conformant** — none of the above, with both answers, the ulps and the rule.
//!
//! Cases that one side does not answer (D3D12 does not define them, or the implementation
//! reported an error) are **not compared**.

mod bands;
mod case;
mod model;
mod nvidia;

use crate::cases::{CaseFile, Json, parse_f32, parse_sampler};
use crate::{Dimension, Format};
use serde_json::{Value, json};

use case::{Batch, Case, Op, code, cube_face, hex, num, subsets};

pub use model::unorm_decode;
use model::{Diff, Model, Prediction, predict, reproduces};

/// The verdict on one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Bits equal.
    Exact,
    /// Within SPEC §3.3's tolerance.
    WithinTolerance,
    /// A guard band of SPEC §3.3 or a documented behaviour of the profile reproduces the
    /// answer: the reason (the bands and behaviours, joined by `+`).
    Explained(String),
    /// Not compared: penumbra or the implementation did not give an answer (the reason).
    NotCompared(String),
    /// None of the above.
    NonConformant(Box<Failure>),
}

impl Verdict {
    /// The verdict's class as one word: `exact`, `tolerance`, `explained`, `not-compared`,
    /// `NON-CONFORMANT`.
    #[must_use]
    pub fn class(&self) -> &'static str {
        match self {
            Verdict::Exact => "exact",
            Verdict::WithinTolerance => "tolerance",
            Verdict::Explained(_) => "explained",
            Verdict::NotCompared(_) => "not-compared",
            Verdict::NonConformant(_) => "NON-CONFORMANT",
        }
    }
}

/// Why an answer is not conformant: both answers, the difference and the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// penumbra's answer (D3D12's, SPEC.md).
    pub penumbra: Vec<f32>,
    /// The judged implementation's answer.
    pub theirs: Vec<f32>,
    /// Per component, the distance in f32 ulps (`u64::MAX` where one is NaN and the other not).
    pub ulps: Vec<u64>,
    /// The rule the answer breaks: SPEC §3.3's item for this kind of result, with its tolerance.
    pub rule: String,
    /// The behaviours and guard bands that were tried.
    pub tried: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "penumbra {}, theirs {}, ulps {:?}; {}; tried: {}",
            show(&self.penumbra),
            show(&self.theirs),
            self.ulps,
            self.rule,
            self.tried
        )
    }
}

/// Values with their bits, for reports.
fn show(v: &[f32]) -> String {
    let bits: Vec<_> = v.iter().map(|x| format!("0x{:08x}", x.to_bits())).collect();
    format!("{v:?} [{}]", bits.join(", "))
}

/// Distance in ulps between two f32 (±0 equal; NaNs equal to each other, infinitely far from
/// numbers).
#[must_use]
pub fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    // Map the bits onto a monotonic integer line.
    let key = |x: f32| {
        let i = i64::from(x.to_bits() as i32);
        if i < 0 { i64::from(i32::MIN) - i } else { i }
    };
    key(a).abs_diff(key(b))
}

/// Whose behaviours, beyond D3D12's own tolerances and guard bands, may explain an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// D3D12 alone: exact, SPEC §3.3's tolerances and guard bands.
    #[default]
    D3d,
    /// Mesa's lavapipe through a D3D12→Vulkan translation (SCHEMA.md's documented differences).
    Lavapipe,
    /// The NVIDIA H200 of `nvidia-results.json` (Vulkan 1.4.312, driver 580.159.04).
    Nvidia,
}

impl std::str::FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Profile, String> {
        match s.to_ascii_lowercase().as_str() {
            "d3d" | "d3d12" => Ok(Profile::D3d),
            "lavapipe" | "llvmpipe" => Ok(Profile::Lavapipe),
            "nvidia" | "h200" => Ok(Profile::Nvidia),
            _ => Err(format!(
                "unknown profile {s:?}: expected d3d, lavapipe or nvidia"
            )),
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Profile::D3d => "d3d",
            Profile::Lavapipe => "lavapipe",
            Profile::Nvidia => "nvidia",
        })
    }
}

/// A case file or a results file that cannot be judged.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The case file does not parse.
    #[error("the case file: {0}")]
    Cases(#[from] crate::cases::CaseFileError),
    /// A JSON document is not what the case format describes.
    #[error("{what}: {problem} (docs/case-format.md)")]
    Shape {
        /// Which document or entry.
        what: String,
        /// What is wrong.
        problem: String,
    },
}

fn shape(what: impl Into<String>, problem: impl Into<String>) -> JudgeError {
    JudgeError::Shape {
        what: what.into(),
        problem: problem.into(),
    }
}

/// At most this many guard bands are combined in one re-computation.
const MAX_BANDS: usize = 3;

/// The case file, penumbra's engine and the judged implementation's answers.
pub struct Suite {
    textures: Vec<Value>,
    cases: Vec<Value>,
    file: CaseFile,
    theirs: Vec<Result<Vec<f32>, String>>,
    /// `[clamped, unclamped]` LOD of the cases with gradients (the `lod` op).
    grad_lods: Vec<Option<[f32; 2]>>,
    profile: Profile,
}

/// One answer of a results file: `bits` when present (lossless), else `result`.
fn answer(r: &Value, what: &str) -> Result<Result<Vec<f32>, String>, JudgeError> {
    match r.get("status").and_then(Value::as_str) {
        Some("ok") => {}
        Some(other) => {
            let reason = r.get("reason").or_else(|| r.get("notes"));
            return Ok(Err(match reason {
                Some(Value::String(s)) => format!("{other}: {s}"),
                Some(v) => format!("{other}: {v}"),
                None => other.to_string(),
            }));
        }
        None => return Err(shape(what, "no \"status\"")),
    }
    if let Some(bits) = r.get("bits") {
        let list = bits
            .as_array()
            .ok_or_else(|| shape(what, "\"bits\" is not an array"))?;
        return list
            .iter()
            .map(|b| {
                b.as_str()
                    .and_then(|t| t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")))
                    .and_then(|t| u32::from_str_radix(t, 16).ok())
                    .map(f32::from_bits)
                    .ok_or_else(|| shape(what, format!("bits {b} is not \"0x\" and 8 hex digits")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Ok);
    }
    let list = r
        .get("result")
        .and_then(Value::as_array)
        .ok_or_else(|| shape(what, "an \"ok\" result without \"result\" or \"bits\""))?;
    list.iter()
        .map(|v| parse_f32(&Json::from(v), "result").map_err(|e| shape(what, e)))
        .collect::<Result<Vec<_>, _>>()
        .map(Ok)
}

impl Suite {
    /// Loads a case file and an implementation's results for it (the result form of
    /// docs/case-format.md: one entry per case, matched by `index` where it is given).
    ///
    /// # Errors
    /// The case file does not parse, or the results do not match it.
    pub fn new(cases: &Value, results: &Value, profile: Profile) -> Result<Suite, JudgeError> {
        let file = CaseFile::parse(&cases.to_string())?;
        let textures = cases["textures"].as_array().cloned().unwrap_or_default();
        let list = cases["cases"]
            .as_array()
            .cloned()
            .ok_or_else(|| shape("the case file", "no \"cases\" array"))?;
        let entries = results
            .get("results")
            .and_then(Value::as_array)
            .ok_or_else(|| shape("the results file", "no \"results\" array"))?;
        if entries.len() != list.len() {
            return Err(shape(
                "the results file",
                format!("{} results for {} cases", entries.len(), list.len()),
            ));
        }
        let mut theirs: Vec<Option<Result<Vec<f32>, String>>> = vec![None; list.len()];
        for (k, r) in entries.iter().enumerate() {
            let i = match r.get("index") {
                None => k,
                Some(v) => v
                    .as_u64()
                    .and_then(|i| usize::try_from(i).ok())
                    .filter(|&i| i < list.len())
                    .ok_or_else(|| {
                        shape(
                            format!("result {k}"),
                            format!("index {v} is not a case's index"),
                        )
                    })?,
            };
            if theirs[i].is_some() {
                return Err(shape(
                    format!("result {k}"),
                    format!("a second result for case {i}"),
                ));
            }
            theirs[i] = Some(answer(r, &format!("result {k}"))?);
        }
        let theirs: Vec<_> = theirs.into_iter().flatten().collect();
        let grads =
            |c: &Value| Op::parse(c["op"].as_str().unwrap_or("")).is_some_and(Op::has_gradients);
        // CalculateLevelOfDetail of every case with gradients, in one more file.
        let lod_cases: Vec<Value> = list
            .iter()
            .map(|c| {
                let mut l = c.clone();
                if grads(c) {
                    l["op"] = "lod".into();
                }
                l
            })
            .collect();
        let lod_file =
            CaseFile::parse(&json!({"textures": textures, "cases": lod_cases}).to_string())?;
        let grad_lods = list
            .iter()
            .enumerate()
            .map(|(i, c)| {
                grads(c)
                    .then(|| lod_file.evaluate(i).ok().map(|v| [v[0], v[1]]))
                    .flatten()
            })
            .collect();
        Ok(Suite {
            textures,
            cases: list,
            file,
            theirs,
            grad_lods,
            profile,
        })
    }

    /// The profile the suite judges with.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Whether the file has no cases.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// penumbra's answer to case `i`.
    ///
    /// # Errors
    /// The case is one D3D12 does not define (the reason).
    pub fn penumbra(&self, i: usize) -> Result<Vec<f32>, String> {
        self.file.evaluate(i).map_err(|e| e.to_string())
    }

    /// The judged implementation's answer to case `i`.
    ///
    /// # Errors
    /// It gave none (its status and reason).
    pub fn theirs(&self, i: usize) -> Result<&[f32], &str> {
        match &self.theirs[i] {
            Ok(v) => Ok(v),
            Err(e) => Err(e),
        }
    }

    /// Number of cases.
    #[must_use]
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// The case's id as written in the file.
    #[must_use]
    pub fn id(&self, i: usize) -> String {
        match &self.cases[i]["id"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    fn case(&self, i: usize) -> Result<Case, String> {
        let json = &self.cases[i];
        let tex = match &json["texture"] {
            Value::String(s) => self.textures.iter().enumerate().find_map(|(k, t)| {
                let id = match &t["id"] {
                    Value::Null => k.to_string(),
                    Value::String(id) => id.clone(),
                    other => other.to_string(),
                };
                (id == *s).then_some(t)
            }),
            Value::Number(n) => n.as_u64().and_then(|k| self.textures.get(k as usize)),
            _ => None,
        }
        .ok_or("no texture bound")?;
        let text = |k: &str| tex[k].as_str().unwrap_or("");
        let int = |k: &str| tex[k].as_u64().unwrap_or(1) as u32;
        let format: Format = text("format").parse().map_err(|e| format!("{e}"))?;
        let dim: Dimension = text("dimension").parse().map_err(|e| format!("{e}"))?;
        let op = Op::parse(json["op"].as_str().unwrap_or("")).ok_or("an op this test knows")?;
        let desc = parse_sampler(&Json::from(&json["sampler"]))?;
        let coord = json["coord"]
            .as_array()
            .ok_or("coord")?
            .iter()
            .map(num)
            .collect();
        let mut case = Case {
            json: json.clone(),
            tex: tex.clone(),
            format,
            dim,
            size: [int("width"), int("height")],
            mips: int("mip_levels"),
            op,
            filter: desc.filter,
            desc,
            coord,
            lod: None,
            lod_nudge: 0.0,
            profile: self.profile,
        };
        let biased = match op {
            Op::Gather | Op::GatherCmp => None,
            Op::SampleCmpLz => Some(case.desc.mip_lod_bias),
            Op::SampleL | Op::SampleCmpL => Some(num(&json["lod"]) + case.desc.mip_lod_bias),
            Op::SampleGrad | Op::SampleCmpGrad => {
                Some(self.grad_lods[i].ok_or("the LOD of the gradients")?[1])
            }
        };
        case.lod = biased.map(|b| (b, case.sampler_clamp(b)));
        Ok(case)
    }

    /// Classifies case `i` under the suite's profile.
    #[must_use]
    pub fn classify(&self, i: usize) -> Verdict {
        let (ours, theirs) = match (self.file.evaluate(i), &self.theirs[i]) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(e), _) => {
                return Verdict::NotCompared(format!("D3D12 does not define this case: {e}"));
            }
            (Ok(_), Err(t)) => return Verdict::NotCompared(format!("no answer ({t})")),
        };
        if ours.len() == theirs.len()
            && ours
                .iter()
                .zip(theirs)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        {
            return Verdict::Exact;
        }
        let failure = |rule: String, tried: String| {
            Verdict::NonConformant(Box::new(Failure {
                ulps: ours.iter().zip(theirs).map(|(&a, &b)| ulps(a, b)).collect(),
                penumbra: ours.clone(),
                theirs: theirs.clone(),
                rule,
                tried,
            }))
        };
        if ours.len() != theirs.len() {
            return failure(
                format!(
                    "the case format: {} components for this op, the answer has {}",
                    ours.len(),
                    theirs.len()
                ),
                "nothing".into(),
            );
        }
        let case = match self.case(i) {
            Ok(c) => c,
            Err(e) => {
                return failure(
                    format!("the case cannot be re-evaluated: {e}"),
                    "nothing".into(),
                );
            }
        };
        let base = match predict(&case, &[Model::default()]) {
            Ok(mut p) => p.remove(0),
            Err(e) => {
                return failure(
                    format!("the case cannot be re-evaluated: {e}"),
                    "nothing".into(),
                );
            }
        };
        if base.tol.is_some() && base.accepts(theirs) {
            return Verdict::WithinTolerance;
        }
        let format = case.format;
        let names = |diffs: &[Diff]| diffs.iter().map(|d| d.name(format)).collect::<Vec<_>>();
        let diffs = Diff::applicable(&case, self.profile);
        // A documented behaviour of the profile.
        if let Some(d) = subsets(&diffs, false)
            .into_iter()
            .find(|d| reproduces(&case, d, theirs))
        {
            return Verdict::Explained(names(&d).join("+"));
        }
        if self.profile == Profile::Nvidia && nvidia::corner_gather(&case, &ours, theirs) {
            return Verdict::Explained("nv-cube-corner-gather-8bit".into());
        }
        if nvidia::aniso_applies(&case, self.profile) && nvidia::aniso_bounds(&case, theirs) {
            return Verdict::Explained("anisotropic-footprint".into());
        }
        // A guard band, possibly together with documented behaviours.
        if let Some(reason) = in_guard_band(&case, &diffs, theirs) {
            return Verdict::Explained(reason);
        }
        if bands::at_cube_corner(&case)
            && let Some(d) = subsets(&diffs, true)
                .into_iter()
                .find(|d| corner_accepts(&case, d, theirs))
        {
            let mut reason = vec!["guard-band:cube-corner"];
            reason.extend(names(&d));
            return Verdict::Explained(reason.join("+"));
        }
        // SPEC §3.3 item 1's f32 operation-order slack: a sampler with a linear part may run its
        // arithmetic even where D3D's weights are exactly 0 and 1.
        if let Some(slack) = model::order_slack(&case)
            && let Some(d) = subsets(&diffs, true).into_iter().find(|d| {
                predict(&case, &[Model::with(d)])
                    .is_ok_and(|p| p[0].accepts_with(theirs, &vec![slack; theirs.len()]))
            })
        {
            let mut reason = vec!["f32-operation-order"];
            reason.extend(names(&d));
            return Verdict::Explained(reason.join("+"));
        }
        failure(
            base.rule(&case),
            format!(
                "behaviours {:?}, bands {:?}",
                names(&diffs),
                bands::groups(&case)
                    .iter()
                    .map(|g| g.band)
                    .collect::<Vec<_>>()
            ),
        )
    }

    /// penumbra's and the implementation's answers for case `i` and the tolerance of SPEC §3.3,
    /// for reports.
    #[must_use]
    pub fn describe(&self, i: usize) -> String {
        let tol = self
            .case(i)
            .and_then(|c| predict(&c, &[Model::default()]))
            .map_or_else(|e| e, |p| p[0].describe_tol());
        format!(
            "penumbra {:?}, theirs {:?}; {tol}",
            self.file.evaluate(i).map_err(|e| e.to_string()),
            self.theirs[i]
        )
    }

    /// Checks that the rewrites behind the explanations change nothing by themselves: the float
    /// copy of a UNORM texture (D3D's decoded values, quantized border and reference) and the
    /// explicit-LOD rewrite at penumbra's own LOD must reproduce penumbra bit for bit. Returns
    /// the failures.
    #[must_use]
    pub fn check_rewrites(&self) -> Vec<String> {
        let mut failures = Vec::new();
        for i in 0..self.len() {
            let (Ok(case), Ok(ours)) = (self.case(i), self.file.evaluate(i)) else {
                continue;
            };
            let mut variants = Vec::new();
            if model::unorm_bits(case.format).is_some() {
                let mut json = case.json.clone();
                model::adapt_to_float_copy(&case, &Model::default(), &mut json);
                variants.push(("float copy", model::float_texture(&case, false), json));
            }
            if let Some((_, clamped)) = case.lod {
                let json = model::explicit_lod(&case, &case.json, clamped);
                variants.push(("explicit LOD", case.tex.clone(), json));
            }
            for (what, texture, json) in variants {
                let mut b = Batch::new(texture);
                b.push(json);
                let got = b.run().map(|mut r| r.remove(0));
                let same = matches!(&got, Ok(Ok(v))
                    if v.len() == ours.len()
                        && v.iter().zip(&ours).all(|(a, b)| a.to_bits() == b.to_bits()));
                if !same {
                    failures.push(format!(
                        "case {i} ({}): the {what} rewrite gives {got:?}, penumbra {ours:?}",
                        self.id(i)
                    ));
                }
            }
        }
        failures
    }
}

/// Moves the input inside the guard bands the case's numbers fall into (at most one nudge per
/// band, up to [`MAX_BANDS`] bands) and looks for a re-computation, with or without documented
/// differences, that reproduces lavapipe's answer. The reason names the bands, then the
/// differences.
fn in_guard_band(case: &Case, diffs: &[Diff], theirs: &[f32]) -> Option<String> {
    let groups = bands::groups(case);
    let mut choices: Vec<Vec<(usize, bands::Nudge)>> = vec![Vec::new()];
    for (g, group) in groups.iter().enumerate() {
        let mut more = Vec::new();
        for choice in &choices {
            for &n in &group.options {
                if choice.len() < MAX_BANDS {
                    let mut c = choice.clone();
                    c.push((g, n));
                    more.push(c);
                }
            }
        }
        choices.extend(more);
    }
    choices.retain(|c| !c.is_empty());
    choices.sort_by_key(Vec::len);
    let diff_sets = subsets(diffs, true);
    for choice in choices {
        let nudged = choice
            .iter()
            .fold(case.clone(), |c, &(_, n)| bands::apply(&c, n));
        if let Some(d) = diff_sets.iter().find(|d| reproduces(&nudged, d, theirs)) {
            let mut bands: Vec<&str> = choice.iter().map(|&(g, _)| groups[g].band).collect();
            bands.dedup();
            let mut reason = format!("guard-band:{}", bands.join("+"));
            for x in d {
                reason = format!("{reason}+{}", x.name(case.format));
            }
            return Some(reason);
        }
    }
    None
}

/// SPEC §3.3 item 4 at a cube corner: the answer within the tolerance plus `R/12` (`R` of the
/// footprint; the four texels of a gather; 1 for PCF) of the re-computation.
fn corner_accepts(case: &Case, diffs: &[Diff], theirs: &[f32]) -> bool {
    let Ok(preds) = predict(case, &[Model::with(diffs)]) else {
        return false;
    };
    let p: &Prediction = &preds[0];
    let r = match &p.range {
        Some(r) => r.clone(),
        None if case.op.compares() => vec![1.0; p.value.len()],
        None => {
            let (lo, hi) = p
                .value
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            vec![f64::from(hi) - f64::from(lo); p.value.len()]
        }
    };
    let extra: Vec<f64> = r.iter().map(|r| r / 12.0).collect();
    p.accepts_with(theirs, &extra)
}
