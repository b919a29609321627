//! [`Runtime`]: one sandboxed Lua state with the `penumbra` module, for untrusted scripts.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use mlua::chunk::ChunkMode;
use mlua::{FromLuaMulti, Lua};

use crate::context::ScriptContext;
use crate::error::{LuaSetupError, ScriptError, ScriptErrorKind, megabytes};
use crate::paths::Jail;
use crate::{profile, sandbox};

/// What a [`Runtime`] allows a script: where it reads, where it writes, how much memory and how
/// much time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeOptions {
    /// The script root: `require` and `penumbra.loadTexture` reach only files below it.
    pub root: PathBuf,
    /// The only folder `tex:save` writes to (created on the first write); `None` forbids writes.
    pub out_dir: Option<PathBuf>,
    /// Bytes the script may use: the Lua heap and everything it makes (textures, samplers,
    /// scenes, maps, images, the compiler) together.
    pub max_memory: usize,
    /// How long one run (`run_file`, `run_str`, `eval`) may take.
    pub timeout: Duration,
}

impl RuntimeOptions {
    /// The default memory limit: 256 MB.
    pub const DEFAULT_MAX_MEMORY: usize = 256 << 20;
    /// The default timeout: 10 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// Options for scripts under `root`: no output folder, 256 MB, 10 s.
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            out_dir: None,
            max_memory: Self::DEFAULT_MAX_MEMORY,
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// Lets scripts write below `dir`.
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Sets the memory limit in bytes.
    #[must_use]
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.max_memory = bytes;
        self
    }

    /// Sets the time limit of one run.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A sandboxed Lua state (Luau, or Lua 5.4 with the `lua54` feature) with the global `penumbra`.
///
/// * Luau runs in its sandbox (read-only libraries and globals, a per-script environment);
///   both flavours lose `io`, `load`/`loadstring`/`dofile`/`loadfile`, `debug`, `package` and
///   all of `os` but `clock`, `time`, `date`, `difftime`.
/// * One budget of `max_memory` bytes holds the Lua heap and everything the script makes.
/// * Each run has a deadline of `timeout`, enforced by Luau's interrupt or a Lua 5.4 count hook
///   (and checked inside long API loops).
/// * `require` and file reads stay under the root, writes under the output folder.
///
/// Runs share one state: globals a script sets are seen by the next run.
pub struct Runtime {
    lua: Lua,
    context: Rc<ScriptContext>,
    options: RuntimeOptions,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Builds the sandboxed state. Fails if the root is not an existing folder or a limit is
    /// unusable.
    pub fn new(options: RuntimeOptions) -> Result<Self, LuaSetupError> {
        if options.timeout.is_zero() {
            return Err(LuaSetupError::Limit(
                "the timeout must be longer than zero".into(),
            ));
        }
        let root = Jail::existing(options.root.clone()).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotADirectory {
                LuaSetupError::RootNotFolder(options.root.clone())
            } else {
                LuaSetupError::Root {
                    path: options.root.clone(),
                    source,
                }
            }
        })?;
        let out = options.out_dir.clone().map(Jail::created_on_write);
        let context = Rc::new(ScriptContext::new(Some(root), out, options.max_memory));
        let lua = sandbox::new_lua().map_err(setup)?;
        lua.set_app_data(Rc::clone(&context));
        sandbox::prune_globals(&lua).map_err(setup)?;
        sandbox::install_print(&lua).map_err(setup)?;
        let globals = lua.globals();
        globals
            .raw_set("penumbra", crate::api::module(&lua).map_err(setup)?)
            .map_err(setup)?;
        globals
            .raw_set(
                "require",
                crate::require::require_function(&lua).map_err(setup)?,
            )
            .map_err(setup)?;
        crate::api::names::strict_globals(&lua).map_err(setup)?;
        sandbox::install_deadline(&lua, Rc::clone(&context)).map_err(setup)?;
        sandbox::guard_protected_calls(&lua, Rc::clone(&context)).map_err(setup)?;
        #[cfg(feature = "luau")]
        lua.sandbox(true).map_err(setup)?;
        let used = lua.used_memory();
        if options.max_memory <= used {
            return Err(LuaSetupError::Limit(format!(
                "a memory limit of {} is below the {used} bytes a bare Lua state takes",
                megabytes(options.max_memory)
            )));
        }
        lua.set_memory_limit(options.max_memory).map_err(setup)?;
        Ok(Self {
            lua,
            context,
            options,
        })
    }

    /// Runs the script file at `path` (relative to the working folder; it must lie under the
    /// root). Errors name the file as given, e.g. `scripts/level1.luau:12: ...`.
    pub fn run_file(&self, path: impl AsRef<Path>) -> Result<(), ScriptError> {
        self.eval_file(path)
    }

    /// Runs the script file at `path` like [`Runtime::run_file`] and converts what it returns
    /// (a host that keeps a function the script returns, say).
    pub fn eval_file<R: FromLuaMulti>(&self, path: impl AsRef<Path>) -> Result<R, ScriptError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let canonical = path
            .canonicalize()
            .map_err(|e| ScriptError::io(&shown, format!("cannot read the script: {e}")))?;
        if let Some(root) = &self.context.root {
            root.check_inside(&canonical, path).map_err(|_| {
                ScriptError::io(
                    &shown,
                    format!(
                        "the script lies outside its root {}",
                        root.shown().display()
                    ),
                )
            })?;
        }
        self.context.note_read(&canonical);
        let source = read_source(&canonical, self.context.max_source_bytes())
            .map_err(|e| ScriptError::io(&shown, format!("cannot read the script: {e}")))?;
        let chunk = format!("@{shown}");
        if let Some(dir) = canonical.parent() {
            self.context
                .chunk_dirs
                .borrow_mut()
                .insert(chunk.clone(), dir.to_path_buf());
        }
        // The main script counts as loading: `require` of itself is a circular require, not a
        // second run.
        let fresh = self.context.loading.borrow_mut().insert(canonical.clone());
        let result = self.execute::<R>(&source, &chunk, &shown);
        if fresh {
            self.context.loading.borrow_mut().remove(&canonical);
        }
        result
    }

    /// Runs `source` as a script named `name` (errors say `name:line: ...`; `require("./x")`
    /// resolves against the root).
    pub fn run_str(&self, source: &str, name: &str) -> Result<(), ScriptError> {
        self.eval(source, name)
    }

    /// Runs `source` as a script named `name` and converts what it returns.
    pub fn eval<R: FromLuaMulti>(&self, source: &str, name: &str) -> Result<R, ScriptError> {
        self.execute(source, &format!("@{name}"), name)
    }

    /// The Lua state, for hosts that add their own functions or call script functions (calls
    /// made outside a run have no deadline).
    #[must_use]
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// The warnings scripts got so far (`file:line: warning: …`, each place once): likely
    /// mistakes that are not errors, such as a directional light pointing up or a spot angle
    /// given in radians. They are also written to standard error unless
    /// [`Runtime::set_print_warnings`] turned that off.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        crate::context::ScriptContext::of(&self.lua).warnings()
    }

    /// Every file scripts run here read so far — scripts, `require`d modules, images, OBJ and
    /// glTF files — as canonical paths, each once, the most recently read last: what
    /// `penumbra run --watch` watches.
    #[must_use]
    pub fn files_read(&self) -> Vec<PathBuf> {
        self.context.files_read()
    }

    /// Forgets the cached results of the `require`d modules at `paths` (canonical, as
    /// [`Runtime::files_read`] gives them), so that a script evaluated again runs their new
    /// versions (the Bevy plugin's reload does this for the files that changed).
    pub fn forget_modules(&self, paths: &[PathBuf]) {
        let _ = crate::require::forget(&self.lua, paths);
    }

    /// Whether warnings are written to standard error as they happen (default on).
    pub fn set_print_warnings(&self, on: bool) {
        crate::context::ScriptContext::of(&self.lua)
            .print_warnings
            .set(on);
    }

    /// The options the runtime was built with.
    #[must_use]
    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// Runs host code that calls into Lua — a function a script returned, say — as one run:
    /// with the deadline of `timeout`, Rust panics caught, and errors reported like a script's
    /// (`name` is the script shown when the error has no line of its own).
    ///
    /// ```
    /// # use penumbra_lua::{Runtime, RuntimeOptions};
    /// let runtime = Runtime::new(RuntimeOptions::new(std::env::temp_dir()))?;
    /// let double: penumbra_lua::mlua::Function = runtime.eval("return function(x) return 2 * x end", "double.luau")?;
    /// let four: f64 = runtime.call("double.luau", |_| double.call(2.0))?;
    /// assert_eq!(four, 4.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// What `f` returns, with the file and line of the script code that raised it; a
    /// [`ScriptErrorKind::Timeout`] when the deadline stopped it.
    pub fn call<R>(
        &self,
        name: &str,
        f: impl FnOnce(&Lua) -> mlua::Result<R>,
    ) -> Result<R, ScriptError> {
        let _span = profile::span(name, "penumbra_lua::call", name, 0);
        self.guarded(name, || f(&self.lua))
    }

    fn execute<R: FromLuaMulti>(
        &self,
        source: &str,
        chunk: &str,
        shown: &str,
    ) -> Result<R, ScriptError> {
        let _span = profile::span(shown, "penumbra_lua::run", shown, 0);
        self.guarded(shown, || {
            // As `Chunk::eval`: an expression gives its value, anything else runs as statements.
            compile(&self.lua, source, chunk, true, |e| {
                mlua::Error::external(crate::error::ApiError::at(shown, e))
            })?
            .call::<R>(())
        })
    }

    /// One run of `f` under the deadline, with panics caught and errors converted.
    fn guarded<R>(
        &self,
        shown: &str,
        f: impl FnOnce() -> mlua::Result<R>,
    ) -> Result<R, ScriptError> {
        self.context.start_run(self.options.timeout);
        let result = catch_unwind(AssertUnwindSafe(f));
        let timed_out = self.context.end_run();
        match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                let mut err = ScriptError::from_lua(&e, shown, self.options.max_memory);
                if timed_out {
                    err.kind = ScriptErrorKind::Timeout;
                }
                self.untruncate(&mut err);
                Err(err)
            }
            Err(_) => Err(ScriptError {
                kind: ScriptErrorKind::Runtime,
                file: Some(shown.to_owned()),
                line: None,
                message: "internal error: a Rust panic stopped the script (please report it)"
                    .into(),
                traceback: None,
            }),
        }
    }
}

impl Runtime {
    /// Lua 5.4 cuts long file names in its messages to `...tail`; restores the full name of a
    /// chunk this runtime loaded.
    fn untruncate(&self, err: &mut ScriptError) {
        let Some(tail) = err.file.as_deref().and_then(|f| f.strip_prefix("...")) else {
            return;
        };
        let full = self
            .context
            .chunk_dirs
            .borrow()
            .keys()
            .filter_map(|chunk| chunk.strip_prefix('@'))
            .find(|name| name.ends_with(tail))
            .map(str::to_owned);
        if full.is_some() {
            err.file = full;
        }
    }
}

/// Compiles a chunk as the sandbox allows: its source checked first (size, NUL bytes; see
/// [`crate::context::check_source`], whose message goes through `refused`) and the compiler's
/// memory charged to the budget only while it runs. With `expression_first`, a source that is
/// an expression compiles to a function returning its value, as `Chunk::eval` does.
pub(crate) fn compile(
    lua: &Lua,
    source: &str,
    chunk: &str,
    expression_first: bool,
    refused: impl FnOnce(String) -> mlua::Error,
) -> mlua::Result<mlua::Function> {
    let compiling = crate::context::check_source(lua, source.as_bytes()).map_err(refused)?;
    let load = |text: &str| {
        lua.load(text)
            .set_name(chunk)
            .set_mode(ChunkMode::Text)
            .into_function()
    };
    let function = if expression_first {
        load(&format!("return {source}")).or_else(|_| load(source))?
    } else {
        load(source)?
    };
    drop(compiling);
    ScriptContext::of(lua).textures.rebalance(lua);
    Ok(function)
}

/// Reads a script or module file as the sandbox allows (a plain file with one link, at most
/// `max_bytes`; the size is checked before anything is read, so a 60 MB script costs nothing).
pub(crate) fn read_source(path: &Path, max_bytes: usize) -> Result<String, String> {
    let limits = penumbra_core::files::ReadLimits::sandboxed(max_bytes as u64);
    penumbra_core::files::read_text(path, &limits).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            let size = std::fs::metadata(path).map_or(0, |m| m.len());
            format!(
                "the file has {size} bytes, more than the {max_bytes} a chunk may have under the \
                 memory limit (the compiler needs about {}× the source; split the script, keep \
                 data in files, or raise the limit)",
                crate::context::COMPILE_BYTES_PER_SOURCE_BYTE
            )
        } else {
            e.to_string()
        }
    })
}

fn setup(e: mlua::Error) -> LuaSetupError {
    LuaSetupError::Lua(e.to_string())
}
