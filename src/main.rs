//! The `penumbra` command.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Direct3D 12's texture sampler on the CPU, for game tools.
#[derive(Parser)]
#[command(
    name = "penumbra",
    version,
    about,
    after_help = "Exit status: 0 on success; 1 on any failure, with one line on standard error \
                  (bad input, a --timeout that passed, memory that cannot be had, standard output \
                  that cannot be written); 141 when standard output is a closed pipe (the command \
                  ends quietly, as SIGPIPE ends a Unix tool)."
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the built-in demo: a sample level and script that print a visibility report (which
    /// probes are lit, which guard sees what, where a sprite is) and write pictures.
    Demo(cli::demo::DemoArgs),
    /// Run a level designer's Lua script in the sandbox.
    Run(cli::run::RunArgs),
    /// Evaluate D3D12 sampling cases from a JSON case file.
    Sample(cli::sample::SampleArgs),
    /// Find a template (sprite, tile, UI element) in an image by masked SAD (HLSL msad4).
    Match(cli::match_cmd::MatchArgs),
    /// Judge a GPU's or driver's answers to a case file against D3D12's rules: exact, within
    /// tolerance, a known behaviour, or not conformant.
    Judge(cli::judge::JudgeArgs),
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if e.use_stderr() => {
            // A usage error: clap's message (it names the flag and what it takes), status 1
            // like every other failure of the command.
            let _ = e.print();
            return ExitCode::FAILURE;
        }
        // `--help` and `--version`: their text on standard output, which may fail too.
        Err(e) => {
            return match e.print() {
                Ok(()) => ExitCode::SUCCESS,
                Err(io) => ExitCode::from(cli::output::Failure::Stdout(io).report()),
            };
        }
    };
    let result = match &args.command {
        Command::Demo(a) => cli::demo::run(a),
        Command::Run(a) => cli::run::run(a),
        Command::Sample(a) => cli::sample::run(a),
        Command::Match(a) => cli::match_cmd::run(a),
        Command::Judge(a) => cli::judge::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => ExitCode::from(failure.report()),
    }
}
