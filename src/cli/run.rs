//! `penumbra run SCRIPT [--root DIR] [--out DIR] [--max-memory MB] [--timeout S] [--watch]`:
//! runs a level designer's script in the sandbox (see docs/lua-api.md); with `--watch`, again
//! whenever the script or a file it read changes.

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
    /// A level to preload: a glTF (.gltf, .glb) or Wavefront OBJ file below the root, given to
    /// the script as the global `level` (a Scene holding its meshes, named by their nodes).
    #[arg(long, value_name = "FILE")]
    level: Option<PathBuf>,
    /// Keep running: when the script, a module it requires or a file it loads changes, clear
    /// the screen and run it again in a fresh state (errors are printed, not fatal). Ctrl-C
    /// stops.
    #[arg(long)]
    watch: bool,
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
    let options = RuntimeOptions::new(&root)
        .out_dir(&args.out)
        .max_memory(args.max_memory)
        .timeout(args.timeout.0.unwrap_or(Duration::MAX));
    let level = match &args.level {
        Some(path) => Some(level_chunk(&root, path)?),
        None => None,
    };
    if args.watch {
        return watch(&args.script, &options, level.as_deref());
    }
    let runtime = Runtime::new(options).map_err(|e| e.to_string())?;
    if let Some(chunk) = &level {
        runtime.run_str(chunk, "--level").map_err(script_failure)?;
    }
    runtime.run_file(&args.script).map_err(script_failure)
}

/// The Lua that preloads `--level`: the global `level`, a scene with the file loaded (by its
/// path relative to the root, so the sandbox's rules hold).
fn level_chunk(root: &std::path::Path, path: &std::path::Path) -> Result<String, Failure> {
    let shown = path.display();
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).map_err(|e| format!("--level {shown}: {e}"));
    let (file, root) = (canonical(path)?, canonical(root)?);
    let rel = file.strip_prefix(&root).map_err(|_| {
        format!(
            "--level {shown}: the file is not below the script root {} (see --root)",
            root.display()
        )
    })?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let load = match ext.as_deref() {
        Some("gltf" | "glb") => "loadGltf",
        Some("obj") => "loadObj",
        _ => {
            return Err(format!("--level {shown}: expected a .gltf, .glb or .obj file").into());
        }
    };
    // A long-bracket string: no escapes to get wrong in a path.
    if rel.contains("]==]") || rel.contains('\n') {
        return Err(format!("--level {shown}: a path penumbra cannot pass to the script").into());
    }
    Ok(format!(
        "level = penumbra.scene()\nlevel:{load}([==[{rel}]==])\n"
    ))
}

/// `--watch`: run, then wait for a change of any file the run read and run again, forever.
fn watch(
    script: &std::path::Path,
    options: &RuntimeOptions,
    level: Option<&str>,
) -> Result<(), Failure> {
    use std::io::Write;
    let mut watch: Option<penumbra_lua::watch::FileWatch> = None;
    let mut first = true;
    loop {
        penumbra_core::zone!("penumbra::run::watch_run");
        if !first {
            // Clear the screen and go home (ANSI), as watch tools do.
            print!("\x1b[2J\x1b[H");
        }
        first = false;
        let started = std::time::Instant::now();
        // A fresh state each run: globals a script set must not leak into the next one.
        let (result, mut files) = match Runtime::new(options.clone()) {
            Ok(runtime) => {
                let result = match level {
                    Some(chunk) => runtime.run_str(chunk, "--level"),
                    None => Ok(()),
                }
                .and_then(|()| runtime.run_file(script));
                (result.map_err(|e| e.to_string()), runtime.files_read())
            }
            Err(e) => (Err(e.to_string()), Vec::new()),
        };
        // The script itself is watched even when it could not be read.
        files.push(script.to_path_buf());
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let mut out = std::io::stdout().lock();
        let status = match &result {
            Ok(()) => format!("ran in {ms:.1} ms"),
            Err(e) => format!("failed after {ms:.1} ms: {e}"),
        };
        let _ = writeln!(
            out,
            "-- penumbra run --watch: {status}; watching {} file(s), Ctrl-C stops",
            files.len()
        );
        let _ = out.flush();
        drop(out);
        match &mut watch {
            Some(w) => w.set_files(&files)?,
            None => watch = Some(penumbra_lua::watch::FileWatch::new(&files)?),
        }
        let w = watch.as_ref().expect("set above");
        while w
            .wait(Duration::from_secs(3600), Duration::from_millis(100))
            .is_empty()
        {}
    }
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
