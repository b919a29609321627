//! Lua scripts as Bevy systems (the `lua` feature): a level's gameplay checks written by level
//! designers, run every frame with the [`ShadowQuery`] API, sandboxed like `penumbra run`.
//!
//! A system script is a file under the script root (or a string) that returns a function; the
//! [`LuaScriptPlugin`] loads it once at startup and calls the function every frame, after the
//! probes and sight lines are updated, with a `world` table:
//!
//! | `world.` | answers |
//! |---|---|
//! | `litFraction(p)`, `exposure(p)` | [`ShadowQuery::lit_fraction`], [`ShadowQuery::exposure`] (nil where no light reaches) |
//! | `litFractionFrom(light, p)` | one light's lit fraction (`light`: an entity or a light's `Name`) |
//! | `canSee(viewer, p)`, `visibleFraction(viewer, p, radius)` | [`ShadowQuery::can_see`], [`ShadowQuery::visible_fraction`] |
//! | `sampleCmp(light, {u, v, slice} or direction, reference)` | `SampleCmpLevelZero` on a light's map |
//! | `probes()` | `{entity, name, position, total, unshadowed, litFraction}` per [`LightProbe`] (its [`Exposure`]) |
//! | `viewers()` | `{entity, name, position, sightings}` per [`Viewer`]; `sightings` = its [`LineOfSight`]: `{target, point, visibleFraction, seen}` |
//! | `lights()` | `{entity, name}` per light with a map |
//! | `setFlag(entity, flag, on)` | adds or removes a flag in the entity's [`ScriptFlags`] |
//! | `frame` | frames the script has run, from 1 |
//!
//! ```lua
//! -- scripts/dark_probes.luau: flag every probe darker than 0.25
//! return function(world)
//!     for _, probe in world.probes() do
//!         world.setFlag(probe.entity, "dark", probe.total < 0.25)
//!     end
//! end
//! ```
//!
//! The sandbox is the one of [`penumbra_lua::Runtime`]: Luau's sandbox, a memory limit, a
//! deadline per call (default 50 ms), no `io`/`load`/`os.execute`, `require` and file reads only
//! under the script root. **A script never takes the game down:** a script that fails to load,
//! raises an error, runs out of memory or time is logged once at `error` level with its file and
//! line (`penumbra lua: scripts/dark_probes.luau:3: ...; the script is disabled`) and skipped
//! from then on; [`LuaScriptStatus`] says which scripts run and why the others stopped.

mod world;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::name::Name;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_transform::components::GlobalTransform;
use penumbra_lua::mlua::{Function, Value};
use penumbra_lua::{Runtime, RuntimeOptions, ScriptError, embed};

use crate::PenumbraSystems;
use crate::probe::{Exposure, LightProbe};
use crate::query::ShadowQuery;
use crate::sight::{LineOfSight, Viewer};
use world::{CallFlags, FlagChanges, ProbeEntry, ViewerEntry, WorldView, world_table};

/// Where a system script comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptSource {
    /// A file, relative to the working folder; it must lie under the script root.
    File(PathBuf),
    /// Source text and the name errors show for it.
    Text {
        /// Shown in errors: `name:line: message`.
        name: String,
        /// The script.
        source: String,
    },
}

impl ScriptSource {
    /// The name errors and [`LuaScriptStatus`] show.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            ScriptSource::File(path) => path.display().to_string(),
            ScriptSource::Text { name, .. } => name.clone(),
        }
    }
}

/// Runs a level's Lua system scripts every frame (see the [module docs](self)).
///
/// ```no_run
/// use bevy_app::App;
/// use bevy_penumbra::prelude::*;
/// use bevy_penumbra::lua::LuaScriptPlugin;
///
/// App::new().add_plugins((
///     PenumbraPlugin::default(),
///     LuaScriptPlugin::new("levels/yard").with_file("levels/yard/dark_probes.luau"),
/// ));
/// ```
#[derive(Clone, Debug)]
pub struct LuaScriptPlugin {
    /// The script root: scripts, `require`d modules and loaded files lie under it.
    pub root: PathBuf,
    /// The scripts, run in this order every frame.
    pub scripts: Vec<ScriptSource>,
    /// Bytes the Lua heap may use (all scripts share one state). Default 64 MB.
    pub max_memory: usize,
    /// How long loading a script, and each frame's call of it, may take. Default 50 ms.
    pub timeout: Duration,
    /// The schedule the scripts run in (default `PostUpdate`, in
    /// [`PenumbraSystems::Writeback`], after the probes and sight lines are updated).
    pub schedule: InternedScheduleLabel,
    /// Reload script files while the game runs when they, or a module or file they read,
    /// change (default on). A reload that fails is logged and the previous version keeps
    /// running.
    pub hot_reload: bool,
}

impl LuaScriptPlugin {
    /// Default memory limit: 64 MB.
    pub const DEFAULT_MAX_MEMORY: usize = 64 << 20;
    /// Default time limit of a load or a frame's call: 50 ms.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(50);

    /// No scripts yet, with the script root `root`.
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LuaScriptPlugin {
            root: root.into(),
            scripts: Vec::new(),
            max_memory: Self::DEFAULT_MAX_MEMORY,
            timeout: Self::DEFAULT_TIMEOUT,
            schedule: PostUpdate.intern(),
            hot_reload: true,
        }
    }

    /// Turns reloading changed script files on or off (default on).
    #[must_use]
    pub fn hot_reload(mut self, on: bool) -> Self {
        self.hot_reload = on;
        self
    }

    /// Adds a script file (relative to the working folder, under the root).
    #[must_use]
    pub fn with_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.scripts.push(ScriptSource::File(path.into()));
        self
    }

    /// Adds a script from source text; `name` is what errors show.
    #[must_use]
    pub fn with_source(mut self, name: impl Into<String>, source: impl Into<String>) -> Self {
        self.scripts.push(ScriptSource::Text {
            name: name.into(),
            source: source.into(),
        });
        self
    }

    /// Sets the Lua memory limit in bytes.
    #[must_use]
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.max_memory = bytes;
        self
    }

    /// Sets the time limit of a load or a frame's call.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs the scripts in `schedule` instead of `PostUpdate`.
    #[must_use]
    pub fn in_schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.schedule = schedule.intern();
        self
    }
}

impl Plugin for LuaScriptPlugin {
    fn build(&self, app: &mut App) {
        let options = RuntimeOptions::new(&self.root)
            .max_memory(self.max_memory)
            .timeout(self.timeout);
        let (mut scripts, status) = LuaScripts::load(options, &self.scripts);
        if self.hot_reload {
            scripts.start_watch();
        }
        app.insert_non_send(scripts)
            .insert_resource(status)
            .add_systems(
                self.schedule,
                (reload_lua_scripts, run_lua_scripts)
                    .chain()
                    .in_set(PenumbraSystems::Writeback),
            );
    }
}

/// Flags set by Lua system scripts (`world.setFlag(entity, "dark", true)`), for game systems to
/// read. Changed only when a flag is added or removed.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags(BTreeSet<String>);

impl ScriptFlags {
    /// True when `flag` is set.
    #[must_use]
    pub fn contains(&self, flag: &str) -> bool {
        self.0.contains(flag)
    }

    /// The flags, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// True when no flag is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How one system script is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptState {
    /// The script's name (its path, or the name given with its source).
    pub name: String,
    /// Frames it ran without error.
    pub runs: u64,
    /// Why it stopped (failed to load, raised an error, ran out of memory or time): the
    /// message logged, with file and line. `None` while it runs.
    pub error: Option<String>,
}

/// The state of every system script, in the order they run.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct LuaScriptStatus {
    /// One entry per script; empty when the runtime itself could not start (see `setup_error`).
    pub scripts: Vec<ScriptState>,
    /// Why the Lua runtime could not start (e.g. the root folder is missing), if it could not.
    pub setup_error: Option<String>,
}

impl LuaScriptStatus {
    /// The state of the script named `name`.
    #[must_use]
    pub fn script(&self, name: &str) -> Option<&ScriptState> {
        self.scripts.iter().find(|s| s.name == name)
    }
}

/// The Lua state and the loaded scripts' functions (a non-`Send` resource: Lua states stay on
/// the main thread).
pub struct LuaScripts {
    runtime: Option<Runtime>,
    /// Each script's per-frame function; `None` once it failed.
    functions: Vec<Option<Function>>,
    /// Where each script came from (files are reloaded when they change).
    sources: Vec<ScriptSource>,
    /// The files the scripts read, watched for changes (with `hot_reload`).
    watch: Option<penumbra_lua::watch::FileWatch>,
}

impl LuaScripts {
    fn load(options: RuntimeOptions, sources: &[ScriptSource]) -> (LuaScripts, LuaScriptStatus) {
        let mut status = LuaScriptStatus::default();
        let runtime = match Runtime::new(options) {
            Ok(runtime) => runtime,
            Err(e) => {
                let message = format!("penumbra lua: cannot start the script runtime: {e}");
                log::error!("{message}; no script runs");
                status.setup_error = Some(message);
                return (
                    LuaScripts {
                        runtime: None,
                        functions: Vec::new(),
                        sources: sources.to_vec(),
                        watch: None,
                    },
                    status,
                );
            }
        };
        let mut functions = Vec::with_capacity(sources.len());
        for source in sources {
            let name = source.name();
            let loaded: Result<Value, ScriptError> = match source {
                ScriptSource::File(path) => runtime.eval_file(path),
                ScriptSource::Text { name, source } => runtime.eval(source, name),
            };
            let (function, error) = match loaded {
                Ok(Value::Function(f)) => (Some(f), None),
                Ok(other) => (
                    None,
                    Some(format!(
                        "{name}: a system script must return a function (got {})",
                        embed::describe(&other)
                    )),
                ),
                Err(e) => (None, Some(e.to_string())),
            };
            if let Some(error) = &error {
                let _ = runtime.lua().gc_collect();
                log::error!("penumbra lua: {error}; the script is disabled");
            }
            functions.push(function);
            status.scripts.push(ScriptState {
                name,
                runs: 0,
                error,
            });
        }
        (
            LuaScripts {
                runtime: Some(runtime),
                functions,
                sources: sources.to_vec(),
                watch: None,
            },
            status,
        )
    }

    /// The files to watch: every file the scripts read, and the script files themselves
    /// (also those that failed to load, so that fixing one reloads it).
    fn watched_files(&self) -> Vec<PathBuf> {
        let mut files = self
            .runtime
            .as_ref()
            .map(Runtime::files_read)
            .unwrap_or_default();
        for source in &self.sources {
            if let ScriptSource::File(path) = source {
                files.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()));
            }
        }
        files
    }

    /// Starts watching the scripts' files; a watch that cannot start is logged.
    fn start_watch(&mut self) {
        if self.runtime.is_none()
            || !self
                .sources
                .iter()
                .any(|s| matches!(s, ScriptSource::File(_)))
        {
            return;
        }
        match penumbra_lua::watch::FileWatch::new(&self.watched_files()) {
            Ok(w) => self.watch = Some(w),
            Err(e) => log::warn!("penumbra lua: {e}; scripts will not reload when they change"),
        }
    }

    /// Loads every script file again after `changed` files changed: a script that loads
    /// replaces its old version (and clears its error); one that fails is logged and the old
    /// version keeps running.
    fn reload(&mut self, changed: &[PathBuf], status: &mut LuaScriptStatus) {
        let Some(runtime) = &self.runtime else { return };
        penumbra_core::zone!("bevy_penumbra::reload_lua_scripts");
        runtime.forget_modules(changed);
        for ((source, function), state) in self
            .sources
            .iter()
            .zip(self.functions.iter_mut())
            .zip(status.scripts.iter_mut())
        {
            let ScriptSource::File(path) = source else {
                continue;
            };
            match runtime.eval_file::<Value>(path) {
                Ok(Value::Function(f)) => {
                    *function = Some(f);
                    state.error = None;
                    log::info!("penumbra lua: reloaded {}", state.name);
                }
                Ok(other) => {
                    let message = format!(
                        "{}: a system script must return a function (got {})",
                        state.name,
                        embed::describe(&other)
                    );
                    reload_failed(function.is_some(), state, message);
                }
                Err(e) => reload_failed(function.is_some(), state, e.to_string()),
            }
        }
        let _ = runtime.lua().gc_collect();
        let files = self.watched_files();
        if let Some(w) = &mut self.watch
            && let Err(e) = w.set_files(&files)
        {
            log::warn!("penumbra lua: {e}");
        }
    }
}

/// Logs a failed reload; a script that was running keeps its old version and status.
fn reload_failed(running: bool, state: &mut ScriptState, message: String) {
    if running {
        log::error!(
            "penumbra lua: reloading failed: {message}; the previous version keeps running"
        );
    } else {
        log::error!("penumbra lua: reloading failed: {message}; the script stays disabled");
        state.error = Some(message);
    }
}

/// Reloads the script files when a file they read changed (see
/// [`LuaScriptPlugin::hot_reload`]).
pub fn reload_lua_scripts(
    mut scripts: NonSendMut<LuaScripts>,
    mut status: ResMut<LuaScriptStatus>,
) {
    let changed = match &scripts.watch {
        Some(w) => w.changed(),
        None => return,
    };
    if !changed.is_empty() {
        scripts.reload(&changed, &mut status);
    }
}

/// Calls every running script's function with the frame's `world`, then applies the flags they
/// set. A failing script is logged once and disabled.
#[allow(clippy::type_complexity)]
pub fn run_lua_scripts(
    mut scripts: NonSendMut<LuaScripts>,
    mut status: ResMut<LuaScriptStatus>,
    query: ShadowQuery,
    probes: Query<(Entity, &GlobalTransform, &Exposure, Option<&Name>), With<LightProbe>>,
    viewers: Query<
        (
            Entity,
            &GlobalTransform,
            Option<&Name>,
            Option<&LineOfSight>,
        ),
        With<Viewer>,
    >,
    mut flags: Query<&mut ScriptFlags>,
    mut commands: Commands,
) {
    penumbra_core::zone!("bevy_penumbra::run_lua_scripts");
    let LuaScripts {
        runtime, functions, ..
    } = &mut *scripts;
    let Some(runtime) = runtime else { return };
    if functions.iter().all(Option::is_none) {
        return;
    }
    let view = WorldView {
        query: &query,
        probes: probes
            .iter()
            .map(|(entity, transform, exposure, name)| ProbeEntry {
                entity,
                position: transform.translation(),
                name: name.map(Name::as_str),
                exposure,
            })
            .collect(),
        viewers: viewers
            .iter()
            .map(|(entity, transform, name, sight)| ViewerEntry {
                entity,
                position: transform.translation(),
                name: name.map(Name::as_str),
                sightings: sight.map_or(&[], LineOfSight::sightings),
            })
            .collect(),
    };
    let mut frame_changes = FlagChanges::new();
    for (function, state) in functions.iter_mut().zip(status.scripts.iter_mut()) {
        let Some(f) = function else { continue };
        let frame = state.runs + 1;
        // Each call's flags land only if the call succeeds (a failing script changes nothing).
        let changes = RefCell::new(CallFlags::default());
        let result = runtime.call(&state.name, |lua| {
            lua.scope(|scope| {
                let world = world_table(lua, scope, &view, &changes, frame)?;
                f.call::<()>(world)
            })
        });
        match result {
            Ok(()) => {
                state.runs = frame;
                for (entity, edits) in changes.into_inner().changes {
                    frame_changes.entry(entity).or_default().extend(edits);
                }
            }
            Err(e) => {
                // What the failed call left behind (a memory bomb's tables) must not starve the
                // scripts after it: collect it now.
                let _ = runtime.lua().gc_collect();
                let message = e.to_string();
                log::error!("penumbra lua: {message}; the script is disabled");
                state.error = Some(message);
                *function = None;
            }
        }
    }
    for (entity, edits) in frame_changes {
        // Touch the component (and its change tick) only when a flag really changes.
        let differs =
            |set: &BTreeSet<String>| edits.iter().any(|(flag, &on)| on != set.contains(flag));
        if let Ok(mut current) = flags.get_mut(entity) {
            if differs(&current.0) {
                for (flag, on) in edits {
                    if on {
                        current.0.insert(flag);
                    } else {
                        current.0.remove(&flag);
                    }
                }
            }
        } else if differs(&BTreeSet::new())
            && let Ok(mut e) = commands.get_entity(entity)
        {
            let set = edits
                .into_iter()
                .filter(|&(_, on)| on)
                .map(|(f, _)| f)
                .collect();
            // `try_insert`: the entity may be despawned before the commands apply.
            e.try_insert(ScriptFlags(set));
        }
    }
}
