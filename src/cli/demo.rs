//! `penumbra demo [--out DIR] [--profile] [--script]`: the main job on an embedded default. The
//! built-in Luau script (`src/demo/demo.luau`) builds the courtyard level, probes the player's
//! path, asks which guard sees what, finds a sprite in a screenshot, prints the report and
//! writes the pictures — in the same sandbox `penumbra run` uses, so the script is one a level
//! designer can copy (`--script` prints it).

use std::path::PathBuf;
use std::time::Duration;

use penumbra_lua::{Runtime, RuntimeOptions};

use super::output::{Failure, print};
use super::run::script_failure;

/// The demo script.
pub const SCRIPT: &str = include_str!("../demo/demo.luau");

/// How long the demo may run: seconds in a release build, far more than a debug build needs.
const TIMEOUT: Duration = Duration::from_secs(120);

/// How long a profiled run stays alive after its last event, so Tracy receives everything.
#[cfg(feature = "tracy")]
const LINGER: Duration = Duration::from_millis(1500);

/// Run the built-in demo: a sample level and script that print a visibility report and write
/// pictures.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// The folder the pictures go to (created if needed).
    #[arg(long, value_name = "DIR", default_value = "penumbra-out")]
    out: PathBuf,
    /// Profile the run with Tracy: wait for the profiler on 127.0.0.1:8086, then mark a frame
    /// per stage (needs a penumbra built with `--features tracy`).
    #[arg(long)]
    profile: bool,
    /// Print the demo's Luau script instead of running it.
    #[arg(long)]
    script: bool,
    /// Write the demo's level (its floor, walls, crates and pillars, one named node each) as a
    /// binary glTF file instead of running the demo; `penumbra run --level FILE` and
    /// `scene:loadGltf` read it back.
    #[arg(long, value_name = "FILE.glb")]
    write_level: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &DemoArgs) -> Result<(), Failure> {
    if args.script {
        return print(SCRIPT);
    }
    if let Some(path) = &args.write_level {
        let glb = penumbra::level::sample_level_glb().map_err(|e| e.to_string())?;
        penumbra_core::files::write_atomic(path, &glb)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let level = penumbra::level::sample_level();
        return print(&format!(
            "wrote {} ({} nodes, {} triangles)\n",
            path.display(),
            level.scene.occluders.len(),
            level.scene.triangle_count()
        ));
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(format!(
            "--out {}: exists and is not a folder; name a folder for the pictures",
            args.out.display()
        )
        .into());
    }
    let profiler = args.profile.then(profiler).flatten();
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    // The script reads no files: its root is the output folder.
    let options = RuntimeOptions::new(&args.out)
        .out_dir(&args.out)
        .timeout(TIMEOUT);
    let runtime = Runtime::new(options).map_err(|e| e.to_string())?;
    let result = runtime.run_str(SCRIPT, "demo.luau").map_err(script_failure);
    if let Some(profiler) = profiler {
        profiler.finish();
    }
    result
}

/// A connected Tracy profiler (the client handle keeps it running).
#[cfg(feature = "tracy")]
struct Profiler {
    _client: tracy_client::Client,
}

#[cfg(feature = "tracy")]
impl Profiler {
    /// Marks the last frame and stays alive long enough for Tracy to receive everything.
    fn finish(self) {
        penumbra_core::frame_mark!();
        std::thread::sleep(LINGER);
    }
}

/// Starts the Tracy client and waits until a profiler connects.
#[cfg(feature = "tracy")]
fn profiler() -> Option<Profiler> {
    let client = tracy_client::Client::start();
    eprintln!("waiting for Tracy on 127.0.0.1:8086... (connect the profiler, or Ctrl-C)");
    while !tracy_client::Client::is_connected() {
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("Tracy connected");
    Some(Profiler { _client: client })
}

/// Without Tracy there is nothing to connect to.
#[cfg(not(feature = "tracy"))]
enum Profiler {}

#[cfg(not(feature = "tracy"))]
impl Profiler {
    fn finish(self) {
        match self {}
    }
}

/// Says that this build cannot profile, and carries on without.
#[cfg(not(feature = "tracy"))]
fn profiler() -> Option<Profiler> {
    eprintln!(
        "penumbra: --profile: this penumbra was built without Tracy (rebuild with `--features \
         tracy`); running without profiling"
    );
    None
}
