//! What the API functions share within one Lua state — the file jail, the texture budget, the
//! deadline and the module registry —, stored as Lua app data (`Rc<ScriptContext>`). (The
//! programs that embed a runtime, the hosts, have their helpers in [`crate::embed`].)

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::Lua;

use crate::error::{ScriptErrorKind, located_error, megabytes};
use crate::paths::Jail;

/// How often (in interrupts or hook calls) the deadline reads the clock.
const CLOCK_EVERY: u32 = 64;

/// The state behind the module table.
pub(crate) struct ScriptContext {
    /// Where scripts may read (and where `require` looks); `None` without a runtime.
    pub root: Option<Jail>,
    /// Where scripts may write; `None` when the host gave no output folder.
    pub out: Option<Jail>,
    /// The memory budget: the Lua heap and all live textures, samplers, scenes, shadow maps and
    /// images together.
    pub textures: Budget,
    /// When the current run must stop.
    deadline: Cell<Option<Instant>>,
    /// The timeout the deadline came from, for messages.
    timeout: Cell<Duration>,
    /// Calls since the clock was last read.
    ticks: Cell<u32>,
    /// Set once the deadline has passed, so the run is reported as a timeout.
    timed_out: Cell<bool>,
    /// Chunk name (`@scripts/a.luau`) → the canonical folder `require` resolves `./` against.
    pub chunk_dirs: RefCell<HashMap<String, PathBuf>>,
    /// Modules being loaded (canonical paths), to report circular `require`s.
    pub loading: RefCell<HashSet<PathBuf>>,
    /// Runtime-named Tracy plots, leaked once per name.
    #[cfg(feature = "tracy")]
    pub plots: RefCell<HashMap<String, tracy_client::PlotName>>,
    /// Warnings given so far (`file:line: warning: …`), each place and kind once.
    warnings: RefCell<Vec<String>>,
    /// `(file, line, kind)` of the warnings given, so a loop warns once.
    warned: RefCell<HashSet<(String, u32, &'static str)>>,
    /// Whether warnings are also written to standard error.
    pub print_warnings: Cell<bool>,
    /// Every file scripts read (scripts, modules — cached ones too —, images, meshes, levels)
    /// in the order they were read, each once: what `--watch` and the Bevy reload watch.
    files_read: RefCell<Vec<PathBuf>>,
}

impl ScriptContext {
    /// A context with the given jails and texture budget and no deadline.
    pub fn new(root: Option<Jail>, out: Option<Jail>, texture_bytes: usize) -> Self {
        Self {
            root,
            out,
            textures: Budget::new(texture_bytes),
            deadline: Cell::new(None),
            timeout: Cell::new(Duration::ZERO),
            ticks: Cell::new(0),
            timed_out: Cell::new(false),
            chunk_dirs: RefCell::new(HashMap::new()),
            loading: RefCell::new(HashSet::new()),
            #[cfg(feature = "tracy")]
            plots: RefCell::new(HashMap::new()),
            warnings: RefCell::new(Vec::new()),
            warned: RefCell::new(HashSet::new()),
            print_warnings: Cell::new(true),
            files_read: RefCell::new(Vec::new()),
        }
    }

    /// Notes that a script read `path` (a path below the root).
    pub fn note_read(&self, path: &std::path::Path) {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut all = self.files_read.borrow_mut();
        // Kept once each, latest last: a script that loads the same file every frame does not
        // grow the list.
        all.retain(|p| *p != path);
        all.push(path);
    }

    /// The files scripts read so far, the most recently read last.
    pub fn files_read(&self) -> Vec<PathBuf> {
        self.files_read.borrow().clone()
    }

    /// Warns about a likely mistake that is not an error (an upward sun, an angle in
    /// radians): once per script line and `kind`, as `file:line: warning: message`, kept for
    /// [`Runtime::warnings`](crate::Runtime::warnings) and written to standard error unless
    /// the host turned that off. Never fails the script (a failed write is ignored).
    pub fn warn(&self, lua: &Lua, kind: &'static str, message: &str) {
        let (file, line) = crate::error::caller_location(lua).unwrap_or_else(|| ("?".into(), 0));
        if !self.warned.borrow_mut().insert((file.clone(), line, kind)) {
            return;
        }
        let text = format!("{file}:{line}: warning: {message}");
        if self.print_warnings.get() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
        let mut all = self.warnings.borrow_mut();
        // A script warning in a loop over many lines stays bounded.
        if all.len() < 1000 {
            all.push(text);
        }
    }

    /// The warnings given so far, oldest first.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.borrow().clone()
    }

    /// The context of `lua`, installing a default one (no files, no deadline) if there is none.
    pub fn of(lua: &Lua) -> Rc<ScriptContext> {
        if let Some(context) = lua.app_data_ref::<Rc<ScriptContext>>() {
            return Rc::clone(&context);
        }
        let context = Rc::new(ScriptContext::new(None, None, usize::MAX));
        lua.set_app_data(Rc::clone(&context));
        context
    }

    /// Starts a run that must end within `timeout`.
    pub fn start_run(&self, timeout: Duration) {
        self.timeout.set(timeout);
        self.timed_out.set(false);
        self.ticks.set(0);
        self.deadline.set(Instant::now().checked_add(timeout));
    }

    /// Ends the current run; returns whether it hit its deadline.
    pub fn end_run(&self) -> bool {
        self.deadline.set(None);
        self.timed_out.replace(false)
    }

    /// Fails with a timeout error once the deadline has passed. Reads the clock only every
    /// [`CLOCK_EVERY`] calls (the interrupt fires at every loop iteration and call).
    pub fn tick(&self, lua: &Lua) -> mlua::Result<()> {
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        if ticks.is_multiple_of(CLOCK_EVERY) || self.timed_out.get() {
            // Charges of objects collected while Lua code ran go back to the heap.
            self.textures.rebalance(lua);
            self.check_deadline(lua)?;
        }
        Ok(())
    }

    /// The most source bytes one chunk may have.
    pub fn max_source_bytes(&self) -> usize {
        self.textures.max_source_bytes()
    }

    /// The deadline of the current run, if any (handed to the engine's long calls through
    /// [`penumbra_core::deadline::with_deadline`]).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline.get()
    }

    /// Fails with a timeout error if the deadline has already been seen to pass (no clock read).
    pub fn check_timed_out(&self, lua: &Lua) -> mlua::Result<()> {
        if self.timed_out.get() {
            return self.check_deadline(lua);
        }
        Ok(())
    }

    /// Fails with a timeout error once the deadline has passed (reads the clock every time;
    /// long Rust loops call this every few thousand items).
    pub fn check_deadline(&self, lua: &Lua) -> mlua::Result<()> {
        let Some(deadline) = self.deadline.get() else {
            return Ok(());
        };
        if self.timed_out.get() || Instant::now() >= deadline {
            self.timed_out.set(true);
            return Err(located_error(
                lua,
                ScriptErrorKind::Timeout,
                format!(
                    "the script ran past its timeout of {:?} and was stopped",
                    self.timeout.get()
                ),
            ));
        }
        Ok(())
    }
}

/// Bytes charged for each Rust object a userdata holds (a sampler, a scene, a texture's
/// bookkeeping) besides its data: the userdata block itself is on the Lua heap, what it points
/// to is not.
pub(crate) const OBJECT_BYTES: u64 = 256;

/// Bytes of compiler memory charged per byte of source while a chunk compiles (Luau's compiler
/// allocates outside the Lua heap: about 30× the source for code, up to about 70× for large
/// table literals, measured).
pub(crate) const COMPILE_BYTES_PER_SOURCE_BYTE: u64 = 64;

/// The largest chunk compiled when the memory limit allows it.
pub(crate) const MAX_SOURCE_BYTES: usize = 4 << 20;

/// One memory budget for everything a script can make: the Lua heap, and a charge for every
/// texture, sampler, scene, shadow map, SAD map, image and compiler run it causes (each a
/// [`Charge`] that gives its bytes back when dropped or collected). The Lua heap's own limit is
/// kept at what the charges leave, so the two together never pass the limit.
pub(crate) struct Budget {
    limit: usize,
    used: Rc<Cell<usize>>,
}

impl Budget {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            used: Rc::new(Cell::new(0)),
        }
    }

    /// The limit, in bytes (`usize::MAX` for none).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Reserves `bytes` for a texture (see [`Budget::charge_for`]).
    pub fn charge(&self, lua: &Lua, bytes: u64) -> Result<Charge, String> {
        self.charge_for(lua, bytes.saturating_add(OBJECT_BYTES), "a texture")
    }

    /// Reserves `bytes` for `what` (`"a texture"`, `"the shadow map of \"sun\""`), running a
    /// full garbage collection first if the budget looks spent (textures, scenes and maps the
    /// script dropped are only given back when Lua collects them).
    pub fn charge_for(&self, lua: &Lua, bytes: u64, what: &str) -> Result<Charge, String> {
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        let fits = |used: usize| {
            used.checked_add(bytes)
                .and_then(|t| t.checked_add(self.heap(lua)))
                .is_some_and(|t| t <= self.limit)
        };
        if !fits(self.used.get()) {
            // A failed collection only means nothing more is freed.
            let _ = lua.gc_collect();
        }
        let used = self.used.get();
        if !fits(used) {
            return Err(format!(
                "{what} of {bytes} bytes does not fit: the script already uses {} bytes of Lua \
                 heap and {used} bytes of textures, scenes, maps and images, of its memory limit \
                 of {}",
                self.heap(lua),
                megabytes(self.limit)
            ));
        }
        self.used.set(used + bytes);
        self.rebalance(lua);
        Ok(Charge {
            bytes,
            used: Rc::clone(&self.used),
        })
    }

    /// Bytes the budget has left (after the heap and every charge).
    pub fn left(&self, lua: &Lua) -> usize {
        self.limit
            .saturating_sub(self.used.get())
            .saturating_sub(self.heap(lua))
    }

    /// The Lua heap's bytes, when the budget limits them.
    fn heap(&self, lua: &Lua) -> usize {
        if self.limit == usize::MAX {
            0
        } else {
            lua.used_memory()
        }
    }

    /// Sets the Lua heap's limit to what the charges leave (charges given back by collected
    /// objects are seen here; the API calls this after every call).
    pub fn rebalance(&self, lua: &Lua) {
        if self.limit != usize::MAX {
            let left = self.limit.saturating_sub(self.used.get()).max(1);
            // Only fails for a state without a memory limit of its own, which a budgeted
            // runtime always has.
            let _ = lua.set_memory_limit(left);
        }
    }

    /// The most source bytes compiled at once: what the compiler's estimated memory leaves
    /// in the limit, at most [`MAX_SOURCE_BYTES`].
    pub fn max_source_bytes(&self) -> usize {
        if self.limit == usize::MAX {
            return MAX_SOURCE_BYTES * 16;
        }
        // Half the limit at most for the compiler, so a chunk at the cap still compiles next to
        // a heap in use.
        (self.limit / (2 * COMPILE_BYTES_PER_SOURCE_BYTE as usize)).min(MAX_SOURCE_BYTES)
    }
}

/// Bytes of the budget held by one object (or by one call, for its temporaries).
pub(crate) struct Charge {
    bytes: usize,
    used: Rc<Cell<usize>>,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.used.set(self.used.get().saturating_sub(self.bytes));
    }
}

/// Checks a chunk's source before it is compiled: not larger than the budget allows (the
/// compiler's memory is outside the Lua heap and its time outside the deadline), no NUL byte
/// (Lua would silently stop reading there). Returns the compiler's charge, held while the
/// chunk compiles.
pub(crate) fn check_source(lua: &Lua, source: &[u8]) -> Result<Charge, String> {
    let context = ScriptContext::of(lua);
    let max = context.textures.max_source_bytes();
    if source.len() > max {
        return Err(format!(
            "the script has {} bytes, more than the {max} a chunk may have under the memory \
             limit of {} (split it into modules, or keep data in files)",
            source.len(),
            megabytes(context.textures.limit())
        ));
    }
    if let Some(at) = source.iter().position(|&b| b == 0) {
        let line = source[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(format!(
            "line {line}: the script contains a NUL byte; Lua would ignore everything after it"
        ));
    }
    context.textures.charge_for(
        lua,
        (source.len() as u64).saturating_mul(COMPILE_BYTES_PER_SOURCE_BYTE),
        "compiling the script",
    )
}
