//! How the subcommands end: standard output written through [`print`], which reports a failed
//! write instead of panicking, and one [`Failure`] type that `main` turns into an exit status.
//!
//! * A closed pipe (`penumbra sample cases.json | head -c1`) ends the command quietly with
//!   status 141, as a Unix tool killed by `SIGPIPE` does (128 + 13).
//! * Any other failed write to standard output (a full disk, `> /dev/full`) is one line on
//!   standard error naming standard output, and status 1.
//! * Every other failure is one line on standard error, and status 1.

use std::io::{self, Write};

/// Exit status of a command whose standard output was closed (128 + SIGPIPE).
pub const CLOSED_PIPE_STATUS: u8 = 141;

/// Why a subcommand failed.
#[derive(Debug)]
pub enum Failure {
    /// A message for standard error.
    Message(String),
    /// Standard output could not be written.
    Stdout(io::Error),
    /// Standard output was closed under a script's `print` (the script's error is not worth
    /// reporting to a reader that went away).
    StdoutClosed,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Message(message)
    }
}

impl Failure {
    /// Reports the failure on standard error (if there is anything to say) and gives the exit
    /// status.
    pub fn report(self) -> u8 {
        match self {
            Failure::Stdout(e) if e.kind() == io::ErrorKind::BrokenPipe => CLOSED_PIPE_STATUS,
            Failure::StdoutClosed => CLOSED_PIPE_STATUS,
            Failure::Stdout(e) => {
                eprintln_quiet(&format!("penumbra: cannot write to standard output: {e}"));
                1
            }
            Failure::Message(m) => {
                eprintln_quiet(&format!("penumbra: {}", crate::cli::escape_controls(&m)));
                1
            }
        }
    }
}

/// Writes `text` to standard output and flushes it.
///
/// # Errors
/// [`Failure::Stdout`] when the write or the flush fails.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::Stdout)
}

/// A line on standard error; a failure to write it cannot be reported anywhere, so it is
/// dropped (never a panic).
pub fn eprintln_quiet(line: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{line}");
}
