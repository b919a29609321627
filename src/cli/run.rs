//! `penumbra run SCRIPT [--root DIR] [--out DIR] [--max-memory MB] [--timeout S]`: runs a level
//! designer's script in the sandbox (see docs/lua-api.md).

use std::path::PathBuf;
use std::time::Duration;

use penumbra_lua::{Runtime, RuntimeOptions};

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
    /// Memory limit in megabytes (the Lua heap; textures get the same budget).
    #[arg(long, value_name = "MB", default_value_t = 256)]
    max_memory: u64,
    /// Time limit in seconds.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    timeout: f64,
}

/// Runs the subcommand.
pub fn run(args: &RunArgs) -> Result<(), String> {
    let root = match &args.root {
        Some(root) => root.clone(),
        None => match args.script.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    let timeout = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| {
            format!(
                "--timeout {}: expected a number of seconds > 0",
                args.timeout
            )
        })?;
    let max_memory = usize::try_from(args.max_memory)
        .ok()
        .and_then(|mb| mb.checked_mul(1 << 20))
        .filter(|&bytes| bytes > 0)
        .ok_or_else(|| {
            format!(
                "--max-memory {}: expected a number of megabytes > 0",
                args.max_memory
            )
        })?;
    let options = RuntimeOptions::new(root)
        .out_dir(&args.out)
        .max_memory(max_memory)
        .timeout(timeout);
    let runtime = Runtime::new(options).map_err(|e| e.to_string())?;
    runtime.run_file(&args.script).map_err(|e| e.to_string())
}
