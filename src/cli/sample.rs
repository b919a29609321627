//! `penumbra sample CASES.json [-o RESULTS.json]`: evaluates sampling cases.

use std::path::PathBuf;

use penumbra::cases::CaseFile;

/// Evaluate D3D12 sampling cases from a JSON case file (see docs/case-format.md).
#[derive(clap::Args)]
pub struct SampleArgs {
    /// The case file (JSON: textures and cases).
    cases: PathBuf,
    /// Write the results here instead of standard output.
    #[arg(short, long, value_name = "RESULTS.json")]
    output: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &SampleArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.cases)
        .map_err(|e| format!("cannot read {}: {e}", args.cases.display()))?;
    let file = CaseFile::parse(&text).map_err(|e| format!("{}: {e}", args.cases.display()))?;
    let out = file.run();
    let mut json = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    json.push('\n');
    match &args.output {
        Some(path) => {
            std::fs::write(path, json)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            let s = &out["summary"];
            eprintln!(
                "{} cases: {} ok, {} error -> {}",
                file.len(),
                s["ok"],
                s["error"],
                path.display()
            );
        }
        None => print!("{json}"),
    }
    Ok(())
}
