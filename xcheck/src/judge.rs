//! Judging: lavapipe's answers next to penumbra's, through the project's one judge
//! (`penumbra::judge`, profile `lavapipe`, or `nvidia` on an NVIDIA GPU): the scenario is exported as a case file and the
//! GPU's answers as its results ([`crate::export`]), and every lookup is classified exactly as
//! `tests/lavapipe.rs` and `penumbra judge` classify a case — exact, within SPEC §3.3's
//! tolerance, explained by a re-computed Vulkan-vs-D3D difference or guard band, or
//! non-conformant. This module adds only what a live run needs: both run orders, the per-op
//! table and the coverage of the generated scenario.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use penumbra::judge::{Profile, Suite, Verdict};

use crate::case::{Dim, Group, Lookup, Op, Probe, Scenario, TexSpec};
use crate::export;

/// Counts per op and class, the reasons, and the cases that failed.
#[derive(Default)]
pub struct Report {
    /// (op name, class) → count; the classes are [`Verdict::class`]'s names.
    pub counts: BTreeMap<(&'static str, &'static str), usize>,
    /// Explained lookups per reason.
    pub reasons: BTreeMap<String, usize>,
    /// Unexplained differences, described.
    pub mismatches: Vec<String>,
    /// Lookups whose lavapipe answer changed when their group ran in reverse order.
    pub order_dependent: Vec<String>,
    /// Coverage: (dimension, format) → lookups.
    pub coverage: BTreeMap<(&'static str, &'static str), usize>,
    /// Coverage of sampler and lookup features ("address WRAP", "compare LESS", …) → lookups.
    pub features: BTreeMap<String, usize>,
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
pub fn describe_case(spec: &TexSpec, group: &Group, lk: &Lookup, verdict: &str) -> String {
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
    let _ = writeln!(s, "\n  {verdict}");
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
/// lavapipe's SIMD lanes. A lookup counts in the class of its first run unless either run is not
/// conformant; answers that changed bit-wise between the runs are listed separately.
///
/// # Panics
/// If the exported scenario is not a valid case file (a bug of [`crate::export`]).
#[must_use]
pub fn judge(
    scenario: &Scenario,
    first: &[Vec<[f32; 4]>],
    second: &[Vec<[f32; 4]>],
    profile: Profile,
) -> Report {
    let (cases, exported) = export::case_file(scenario);
    let suites = [first, second].map(|answers| {
        let results = export::results(scenario, &exported, answers);
        Suite::new(&cases, &results, profile).expect("the exported scenario loads")
    });
    let mut report = Report::default();
    for (i, &(g, l)) in exported.iter().enumerate() {
        let group = &scenario.groups[g];
        let spec = &scenario.textures[group.texture];
        let lk = &group.lookups[l];
        let verdicts = suites.each_ref().map(|s| s.classify(i));
        let answers = suites.each_ref().map(|s| s.theirs(i).map(<[f32]>::to_vec));
        // Compared as bits: a NaN answered the same way twice is not order-dependent.
        let bits = |a: &Result<Vec<f32>, &str>| {
            a.as_ref()
                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                .map_err(|e| e.to_string())
        };
        if bits(&answers[0]) != bits(&answers[1]) {
            report.order_dependent.push(describe_case(
                spec,
                group,
                lk,
                &format!(
                    "lavapipe: {:?} ({}), other order: {:?} ({})",
                    answers[0],
                    verdicts[0].class(),
                    answers[1],
                    verdicts[1].class()
                ),
            ));
        }
        let mut class = verdicts[0].class();
        for v in &verdicts {
            if let Verdict::NonConformant(_) | Verdict::NotCompared(_) = v {
                class = v.class();
                let text = match v {
                    Verdict::NonConformant(f) => f.to_string(),
                    other => format!("{other:?}"),
                };
                report
                    .mismatches
                    .push(describe_case(spec, group, lk, &text));
                break;
            }
        }
        if let Verdict::Explained(r) = &verdicts[0]
            && class == "explained"
        {
            *report.reasons.entry(r.clone()).or_default() += 1;
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
                    "exact" => 0,
                    "tolerance" => 1,
                    "explained" => 2,
                    _ => 3,
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
        if !self.reasons.is_empty() {
            let _ = writeln!(s, "explained (docs/conformance.md):");
            for (r, n) in &self.reasons {
                let _ = writeln!(s, "  {n:>6}  {r}");
            }
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
