//! `penumbra sample CASES.json [-o RESULTS.json] [--timeout S]`: evaluates sampling cases.

use std::io::Write;
use std::path::PathBuf;

use penumbra::cases::CaseFile;
use penumbra_core::files::{self, ReadLimits};

use super::limits::{Timeout, parse_timeout};
use super::output::Failure;

/// The largest case file read: 2 GiB of JSON (its textures are bounded by the engine's own
/// texture limits).
const MAX_CASE_FILE_BYTES: u64 = 2 << 30;

/// Evaluate D3D12 sampling cases from a JSON case file (see docs/case-format.md).
#[derive(clap::Args)]
pub struct SampleArgs {
    /// The case file (JSON: textures and cases).
    cases: PathBuf,
    /// Write the results here instead of standard output (replaced in one step: a failed write
    /// leaves the earlier file as it was).
    #[arg(short, long, value_name = "RESULTS.json")]
    output: Option<PathBuf>,
    /// Time limit in seconds for reading and evaluating the cases ("inf" for none).
    #[arg(long, value_name = "S", default_value = "10", value_parser = parse_timeout)]
    timeout: Timeout,
}

/// Runs the subcommand.
pub fn run(args: &SampleArgs) -> Result<(), Failure> {
    let text = files::read_text(&args.cases, &ReadLimits::input(MAX_CASE_FILE_BYTES))
        .map_err(|e| format!("cannot read {}: {e}", args.cases.display()))?;
    // One deadline for reading the cases and evaluating them.
    args.timeout.run(|| evaluate(args, text))
}

fn evaluate(args: &SampleArgs, text: String) -> Result<(), Failure> {
    let file = CaseFile::from_string(text).map_err(|e| {
        if penumbra_core::deadline::expired() {
            args.timeout.exceeded()
        } else {
            format!("{}: {e}", args.cases.display())
        }
    })?;
    // Every case is evaluated before anything is written: an interrupted run leaves no
    // output, and no file is touched.
    let results = file.evaluate_all().map_err(|_| args.timeout.exceeded())?;
    match &args.output {
        Some(path) => {
            files::write_atomic_with(path, |w| results.write(w))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            let (ok, errors) = results.counts();
            super::output::eprintln_quiet(&format!(
                "{} cases: {ok} ok, {errors} error -> {}",
                file.len(),
                path.display()
            ));
            Ok(())
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            results
                .write(&mut out)
                .and_then(|()| out.flush())
                .map_err(Failure::Stdout)
        }
    }
}
