//! `penumbra run SCRIPT [--root DIR] [--out DIR] [--max-memory MB] [--timeout S]`: runs a level
//! designer's script in the sandbox (see docs/lua-api.md).

use std::path::PathBuf;
use std::time::Duration;

use penumbra_lua::{Runtime, RuntimeOptions};

use super::limits::{Timeout, parse_megabytes, parse_timeout};
use super::output::Failure;

/// Run a Lua script in the sandbox, with the `penumbra` module.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The script (Luau).
    script: PathBuf,
    /// The only folder the script may read below and require modules from [default: the
    /// script's folder].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The only folder the script may write below (created on the first write).
    #[arg(long, value_name = "DIR", default_value = "penumbra-out")]
    out: PathBuf,
    /// Memory limit in megabytes: the Lua heap and everything the script makes (textures,
    /// scenes, shadow maps, images) share it (see docs/lua-api.md, "Limits").
    #[arg(long, value_name = "MB", default_value = "256", value_parser = parse_megabytes)]
    max_memory: usize,
    /// Time limit in seconds ("inf" for none); it holds inside long calls too.
    #[arg(long, value_name = "S", default_value = "10", value_parser = parse_timeout)]
    timeout: Timeout,
}

/// Runs the subcommand.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let root = match &args.root {
        Some(root) => root.clone(),
        None => match args.script.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    let options = RuntimeOptions::new(root)
        .out_dir(&args.out)
        .max_memory(args.max_memory)
        .timeout(args.timeout.0.unwrap_or(Duration::MAX));
    let runtime = Runtime::new(options).map_err(|e| e.to_string())?;
    runtime.run_file(&args.script).map_err(script_failure)
}

/// A script's error as the command reports it: a closed standard output under `print` ends
/// quietly (status 141), everything else is the error's one line.
pub fn script_failure(e: penumbra_lua::ScriptError) -> Failure {
    if e.kind == penumbra_lua::ScriptErrorKind::OutputClosed {
        Failure::StdoutClosed
    } else {
        Failure::Message(e.to_string())
    }
}
