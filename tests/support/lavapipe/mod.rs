//! The machinery of `tests/lavapipe.rs`: judging lavapipe's answer for one sampling case against
//! penumbra's.
//!
//! [`Suite::classify`] sorts a case into one of four classes, trying in this order:
//! 1. **exact** — the bits are equal;
//! 2. **within tolerance** — SPEC §3.3's recipe (`model.rs`): `|a − b| ≤ k·ε·R + δ`, with `R`
//!    taken from the engine itself — the MINIMUM and MAXIMUM variants of a filter read exactly the
//!    texels of the standard filter (R93), so their answers bound the footprint;
//! 3. **explained** — a re-computation: the case is rewritten so that penumbra evaluates it with
//!    one or more documented Vulkan-vs-D3D12 differences applied (a float copy of the texture
//!    with lavapipe's UNORM decoding, an unquantized reference, lavapipe's LOD, per-level
//!    min/max; `model.rs`), and the result reproduces lavapipe's answer — bit for bit for the
//!    exact classes, within tolerance for the filtered ones. Failing that, a guard band of SPEC
//!    §3.3 (`bands.rs`): the case's own numbers lie in the band and moving the input inside the
//!    band reproduces lavapipe's answer;
//! 4. **mismatch** — none of the above.

mod bands;
mod model;

use penumbra::cases::{CaseFile, Json, parse_f32, parse_sampler};
use penumbra::{Dimension, Filter, Format, SamplerDesc};
use serde_json::{Value, json};

pub use model::unorm_decode;
use model::{Diff, Model, Prediction, predict, reproduces};

/// The verdict on one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Bits equal.
    Exact,
    /// Within SPEC §3.3's tolerance.
    WithinTolerance,
    /// A documented difference or a guard band reproduces lavapipe's answer: the reason.
    Explained(String),
    /// None of the above: the report.
    Mismatch(String),
}

/// The operations of the case format that this comparison knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    SampleL,
    SampleGrad,
    SampleCmpLz,
    SampleCmpL,
    SampleCmpGrad,
    Gather,
    GatherCmp,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "sample_l" => Op::SampleL,
            "sample_grad" | "sample_d" => Op::SampleGrad,
            "sample_c_lz" => Op::SampleCmpLz,
            "sample_c_l" => Op::SampleCmpL,
            "sample_c_grad" | "sample_c_d" => Op::SampleCmpGrad,
            "gather4" => Op::Gather,
            "gather4_c" => Op::GatherCmp,
            _ => return None,
        })
    }

    fn compares(self) -> bool {
        matches!(
            self,
            Op::SampleCmpLz | Op::SampleCmpL | Op::SampleCmpGrad | Op::GatherCmp
        )
    }

    fn gathers(self) -> bool {
        matches!(self, Op::Gather | Op::GatherCmp)
    }

    fn has_gradients(self) -> bool {
        matches!(self, Op::SampleGrad | Op::SampleCmpGrad)
    }

    /// The explicit-LOD op with the same kind of result.
    fn explicit(self) -> &'static str {
        if self.compares() {
            "sample_c_l"
        } else {
            "sample_l"
        }
    }
}

/// An f32 written losslessly into a case file.
fn hex(x: f32) -> Value {
    Value::String(format!("0x{:08x}", x.to_bits()))
}

/// A number of a case file (JSON number, `"NaN"`, `"0x…"` bits).
fn num(v: &Value) -> f32 {
    parse_f32(&Json::from(v), "number").unwrap_or(f32::NAN)
}

/// A UNORM code of a texture's data (integer or `"0x…"`).
fn code(v: &Value) -> u32 {
    match v {
        Value::String(s) => u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0),
        other => other.as_u64().unwrap_or(0) as u32,
    }
}

/// Case variants on one texture, evaluated with a single parse.
struct Batch {
    texture: Value,
    cases: Vec<Value>,
}

impl Batch {
    fn new(texture: Value) -> Batch {
        Batch {
            texture,
            cases: Vec::new(),
        }
    }

    fn push(&mut self, mut case: Value) -> usize {
        case["texture"] = self.texture["id"].clone();
        self.cases.push(case);
        self.cases.len() - 1
    }

    fn run(self) -> Result<Vec<Result<Vec<f32>, String>>, String> {
        let doc = json!({"textures": [self.texture], "cases": self.cases});
        let file = CaseFile::parse(&doc.to_string()).map_err(|e| e.to_string())?;
        Ok((0..file.len()).map(|i| file.evaluate(i)).collect())
    }
}

/// One case with what the classification needs.
#[derive(Clone)]
struct Case {
    json: Value,
    tex: Value,
    format: Format,
    dim: Dimension,
    size: [u32; 2],
    mips: u32,
    op: Op,
    desc: SamplerDesc,
    filter: Filter,
    coord: Vec<f32>,
    /// penumbra's LOD before and after the sampler clamps (R56, R57); `None` for gathers.
    lod: Option<(f32, f32)>,
    /// Added to the clamped LOD (a guard-band nudge).
    lod_nudge: f32,
}

impl Case {
    fn sampler_clamp(&self, biased: f32) -> f32 {
        biased.min(self.desc.max_lod).max(self.desc.min_lod)
    }

    fn level_size(&self, level: u32) -> [u32; 2] {
        [
            (self.size[0] >> level).max(1),
            (self.size[1] >> level).max(1),
        ]
    }

    fn dir(&self) -> [f32; 3] {
        [self.coord[0], self.coord[1], self.coord[2]]
    }

    /// Recomputes the LOD from gradients after the coordinate moved (it depends on the cube face).
    fn refresh_lod(&mut self) {
        if !self.op.has_gradients() {
            return;
        }
        let mut c = self.json.clone();
        c["op"] = "lod".into();
        let mut b = Batch::new(self.tex.clone());
        b.push(c);
        if let Ok(Ok(v)) = b.run().map(|mut r| r.remove(0)) {
            self.lod = Some((v[1], self.sampler_clamp(v[1])));
        }
    }

    /// The LODs lavapipe may use: penumbra's clamped LOD, extended down by the log2 slack for a
    /// LOD from gradients.
    fn lod_range(&self) -> Option<(f32, f32)> {
        let (biased, clamped) = self.lod?;
        let low = if self.op.has_gradients() {
            self.sampler_clamp(biased - model::LOG2_SLACK)
        } else {
            clamped
        };
        Some((low.min(clamped), clamped))
    }

    /// Every view level a LOD in `lod_range` can read (level 0 for gathers).
    fn levels(&self) -> std::ops::RangeInclusive<u32> {
        let last = self.mips - 1;
        match self.lod_range() {
            None => 0..=0,
            Some((lo, hi)) => {
                let hi = (hi.max(0.0).ceil() as u32).min(last);
                let lo = (lo.max(0.0).floor() as u32).min(hi);
                lo..=hi
            }
        }
    }

    /// The coordinate of each filtered axis in texels of `level`: (u, v) of a 2D view, the face's
    /// (s, t) on a cube (R98, R99).
    fn texel_coords(&self, level: u32) -> Option<[f64; 2]> {
        let [w, h] = self.level_size(level);
        let (s, t) = if self.dim.is_cube() {
            let (_, s, t) = cube_face(self.dir())?;
            (s, t)
        } else {
            (f64::from(self.coord[0]), f64::from(self.coord[1]))
        };
        Some([s * f64::from(w), t * f64::from(h)])
    }
}

/// Face and face coordinates (s, t) of a cube direction (R98 ties Z > Y > X, R99), in f64; `None`
/// for a zero or NaN direction.
fn cube_face([x, y, z]: [f32; 3]) -> Option<(u32, f64, f64)> {
    let (x, y, z) = (f64::from(x), f64::from(y), f64::from(z));
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, sc, tc, m) = if az >= ay && az >= ax {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if x >= 0.0 {
        (0, -z, -y, ax)
    } else {
        (1, z, -y, ax)
    };
    if m.is_nan() || m == 0.0 {
        return None;
    }
    Some((face, 0.5 * sc / m + 0.5, 0.5 * tc / m + 0.5))
}

/// Subsets of `items` in order of size, the empty set first if `with_empty`.
fn subsets<T: Copy>(items: &[T], with_empty: bool) -> Vec<Vec<T>> {
    let mut masks: Vec<u32> = (u32::from(!with_empty)..1 << items.len()).collect();
    masks.sort_by_key(|m| m.count_ones());
    masks
        .into_iter()
        .map(|m| {
            (0..items.len())
                .filter(|b| m & (1 << b) != 0)
                .map(|b| items[b])
                .collect()
        })
        .collect()
}

/// At most this many guard bands are combined in one re-computation.
const MAX_BANDS: usize = 3;

/// The case file, penumbra's engine and lavapipe's answers.
pub struct Suite {
    textures: Vec<Value>,
    cases: Vec<Value>,
    file: CaseFile,
    lavapipe: Vec<Result<Vec<f32>, String>>,
    /// `[clamped, unclamped]` LOD of the cases with gradients (the `lod` op).
    grad_lods: Vec<Option<[f32; 2]>>,
}

impl Suite {
    /// Loads a case file and lavapipe's results for it.
    pub fn new(cases: &Value, lavapipe: &Value) -> Suite {
        let textures = cases["textures"].as_array().expect("textures").clone();
        let list = cases["cases"].as_array().expect("cases").clone();
        let file = CaseFile::parse(&cases.to_string()).expect("the case file parses");
        let lavapipe: Vec<_> = lavapipe["results"]
            .as_array()
            .expect("lavapipe results")
            .iter()
            .map(|r| match r["status"].as_str() {
                Some("ok") => Ok(r["result"]
                    .as_array()
                    .expect("a result")
                    .iter()
                    .map(num)
                    .collect()),
                _ => Err(r.get("reason").map_or("error".into(), Value::to_string)),
            })
            .collect();
        assert_eq!(lavapipe.len(), list.len(), "one lavapipe result per case");
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
            CaseFile::parse(&json!({"textures": textures, "cases": lod_cases}).to_string())
                .expect("the lod file parses");
        let grad_lods = list
            .iter()
            .enumerate()
            .map(|(i, c)| {
                grads(c)
                    .then(|| lod_file.evaluate(i).ok().map(|v| [v[0], v[1]]))
                    .flatten()
            })
            .collect();
        Suite {
            textures,
            cases: list,
            file,
            lavapipe,
            grad_lods,
        }
    }

    /// Number of cases.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// The case's id as written in the file.
    pub fn id(&self, i: usize) -> String {
        match &self.cases[i]["id"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    fn case(&self, i: usize) -> Result<Case, String> {
        let json = &self.cases[i];
        let tex = match &json["texture"] {
            Value::String(s) => self.textures.iter().find(|t| t["id"] == *s.as_str()),
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

    /// Classifies case `i`.
    pub fn classify(&self, i: usize) -> Verdict {
        let (ours, theirs) = match (self.file.evaluate(i), &self.lavapipe[i]) {
            (Ok(o), Ok(t)) => (o, t),
            (o, t) => {
                return Verdict::Mismatch(format!(
                    "case {i} ({}): penumbra {o:?}, lavapipe {t:?}",
                    self.id(i)
                ));
            }
        };
        if ours.len() == theirs.len()
            && ours
                .iter()
                .zip(theirs)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        {
            return Verdict::Exact;
        }
        let fail = |e: String| Verdict::Mismatch(format!("case {i} ({}): {e}", self.id(i)));
        let case = match self.case(i) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        let base = match predict(&case, &[Model::default()]) {
            Ok(mut p) => p.remove(0),
            Err(e) => return fail(e),
        };
        if base.tol.is_some() && base.accepts(theirs) {
            return Verdict::WithinTolerance;
        }
        let format = case.format;
        let names = |diffs: &[Diff]| diffs.iter().map(|d| d.name(format)).collect::<Vec<_>>();
        let diffs = Diff::applicable(&case);
        // A documented difference.
        if let Some(d) = subsets(&diffs, false)
            .into_iter()
            .find(|d| reproduces(&case, d, theirs))
        {
            return Verdict::Explained(names(&d).join("+"));
        }
        // A guard band, possibly together with documented differences.
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
        let show = |v: &[f32]| {
            let bits: Vec<_> = v.iter().map(|x| format!("0x{:08x}", x.to_bits())).collect();
            format!("{v:?} [{}]", bits.join(", "))
        };
        fail(format!(
            "penumbra {}, lavapipe {}; tolerance tried: {}; differences tried: {:?}; bands: {:?}",
            show(&ours),
            show(theirs),
            base.describe_tol(),
            names(&diffs),
            bands::groups(&case)
                .iter()
                .map(|g| g.band)
                .collect::<Vec<_>>()
        ))
    }

    /// penumbra's and lavapipe's answers for case `i` and the tolerance of SPEC §3.3, for reports.
    pub fn describe(&self, i: usize) -> String {
        let tol = self
            .case(i)
            .and_then(|c| predict(&c, &[Model::default()]))
            .map_or_else(|e| e, |p| p[0].describe_tol());
        format!(
            "penumbra {:?}, lavapipe {:?}; {tol}",
            self.file.evaluate(i),
            self.lavapipe[i]
        )
    }

    /// Checks that the rewrites behind the explanations change nothing by themselves: the float
    /// copy of a UNORM texture (D3D's decoded values, quantized border and reference) and the
    /// explicit-LOD rewrite at penumbra's own LOD must reproduce penumbra bit for bit. Returns
    /// the failures.
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
