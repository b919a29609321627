//! `penumbra sample CASES.json [-o RESULTS.json] [--timeout S]`: evaluates sampling cases.

use std::io::Write;
use std::path::PathBuf;

use penumbra::cases::{CaseFile, WriteError};
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
    let shown = args.cases.display();
    let text = files::read_text(&args.cases, &ReadLimits::input(MAX_CASE_FILE_BYTES))
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let timeout = args.timeout;
    // Reading is linear in the file, and bounded by the deadline too.
    // One deadline for reading and evaluating.
    timeout.run(|| evaluate(args, text, timeout))
}

fn evaluate(args: &SampleArgs, text: String, timeout: Timeout) -> Result<(), Failure> {
    let shown = args.cases.display();
    let file = CaseFile::from_string(text).map_err(|e| {
        if penumbra_core::deadline::expired() {
            timeout.exceeded()
        } else {
            format!("{shown}: {e}")
        }
    })?;
    let stopped = |e: WriteError| -> Failure {
        match e {
            WriteError::Interrupted => Failure::Message(timeout.exceeded()),
            WriteError::Io(e) => Failure::Stdout(e),
        }
    };
    match &args.output {
        Some(path) => {
            let mut counts = (0, 0);
            let mut interrupted = false;
            files::write_atomic_with(path, |w| {
                counts = file.write_results(w).map_err(|e| match e {
                    WriteError::Io(e) => e,
                    WriteError::Interrupted => {
                        interrupted = true;
                        std::io::Error::other("interrupted")
                    }
                })?;
                Ok(())
            })
            .map_err(|e| {
                if interrupted {
                    timeout.exceeded()
                } else {
                    format!("cannot write {}: {e}", path.display())
                }
            })?;
            super::output::eprintln_quiet(&format!(
                "{} cases: {} ok, {} error -> {}",
                file.len(),
                counts.0,
                counts.1,
                path.display()
            ));
            Ok(())
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
            timeout
                .run(|| file.write_results(&mut out))
                .map_err(stopped)?;
            out.flush().map_err(Failure::Stdout)
        }
    }
}
