//! `penumbra judge CASES.json RESULTS.json [--profile P] [--json OUT] [--summary]`: is another
//! implementation's answer to each case D3D12's?

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use penumbra::judge::{Profile, Suite, Verdict};
use penumbra_core::files::{self, ReadLimits};
use serde_json::{Value, json};

use super::output::Failure;

/// The largest case or results file read: 2 GiB of JSON, as `penumbra sample` reads.
const MAX_FILE_BYTES: u64 = 2 << 30;

/// Judge a GPU's or driver's answers to a case file: exact, within D3D12's tolerances, a known
/// behaviour of the profile, or not conformant.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when every answer is conformant; 1 when one is not \
                        (named on standard error) or an input cannot be read."
)]
pub struct JudgeArgs {
    /// The case file (docs/case-format.md).
    cases: PathBuf,
    /// The implementation's results for it, in the result form of `penumbra sample`.
    results: PathBuf,
    /// Whose documented behaviours may explain a difference: d3d (none: D3D12's tolerances and
    /// guard bands only), lavapipe (Mesa's CPU Vulkan driver) or nvidia (the H200 of
    /// docs/conformance.md).
    #[arg(long, default_value = "d3d", value_parser = parse_profile)]
    profile: Profile,
    /// Also write every verdict as JSON here (replaced in one step).
    #[arg(long, value_name = "OUT.json")]
    json: Option<PathBuf>,
    /// Print only the cases that are not exact, and the totals.
    #[arg(long)]
    summary: bool,
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

fn read_json(path: &Path) -> Result<Value, Failure> {
    let text = files::read_text(path, &ReadLimits::input(MAX_FILE_BYTES))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::from(format!("{}: not JSON: {e}", path.display())))
}

/// Runs the subcommand.
pub fn run(args: &JudgeArgs) -> Result<(), Failure> {
    let cases = read_json(&args.cases)?;
    let results = read_json(&args.results)?;
    let suite = Suite::new(&cases, &results, args.profile).map_err(|e| {
        format!(
            "{} and {}: {e}",
            args.cases.display(),
            args.results.display()
        )
    })?;
    let mut text = String::new();
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut verdicts = Vec::with_capacity(suite.len());
    for i in 0..suite.len() {
        let verdict = suite.classify(i);
        let id = suite.id(i);
        *counts.entry(verdict.class()).or_default() += 1;
        let mut entry = json!({"index": i, "id": id, "class": verdict.class()});
        let detail = match &verdict {
            Verdict::Exact | Verdict::WithinTolerance => String::new(),
            Verdict::Explained(r) => {
                *reasons.entry(r.clone()).or_default() += 1;
                entry["reason"] = r.clone().into();
                format!(" ({r})")
            }
            Verdict::NotCompared(why) => {
                entry["reason"] = why.clone().into();
                format!(" ({why})")
            }
            Verdict::NonConformant(f) => {
                failed.push(format!("{i} ({id})"));
                entry["penumbra"] = f.penumbra.iter().map(|&x| f64::from(x)).collect();
                entry["theirs"] = f.theirs.iter().map(|&x| f64::from(x)).collect();
                entry["ulps"] = f.ulps.clone().into();
                entry["rule"] = f.rule.clone().into();
                format!(
                    "\n    penumbra {:?}\n    theirs   {:?}\n    ulps     {:?}\n    rule     {}",
                    f.penumbra, f.theirs, f.ulps, f.rule
                )
            }
        };
        if !(args.summary && verdict == Verdict::Exact) {
            let _ = writeln!(text, "{i} {id}: {}{detail}", verdict.class());
        }
        verdicts.push(entry);
    }
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    let explained: Vec<String> = reasons.iter().map(|(r, k)| format!("{r} {k}")).collect();
    let total = format!(
        "{} cases, profile {}: {} exact, {} within tolerance, {} explained{}, {} not compared, \
         {} non-conformant",
        suite.len(),
        args.profile,
        n("exact"),
        n("tolerance"),
        n("explained"),
        if explained.is_empty() {
            String::new()
        } else {
            format!(" ({})", explained.join(", "))
        },
        n("not-compared"),
        failed.len()
    );
    let _ = writeln!(text, "{total}");
    if let Some(path) = &args.json {
        let doc = json!({
            "profile": args.profile.to_string(),
            "summary": {
                "cases": suite.len(),
                "exact": n("exact"),
                "within_tolerance": n("tolerance"),
                "explained": reasons,
                "not_compared": n("not-compared"),
                "non_conformant": failed.len(),
            },
            "cases": verdicts,
        });
        files::write_atomic_with(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &doc).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    super::output::print(&text)?;
    if failed.is_empty() {
        Ok(())
    } else {
        let mut names = failed
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if failed.len() > 5 {
            names.push_str(", ...");
        }
        Err(Failure::from(format!(
            "{} of {} answers are not D3D12-conformant under profile {}: case {names}",
            failed.len(),
            suite.len(),
            args.profile
        )))
    }
}
