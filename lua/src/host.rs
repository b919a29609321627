//! What the API functions share within one Lua state: the file jail, the texture budget, the
//! deadline and the module registry. Stored as Lua app data (`Rc<Host>`).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::Lua;

use crate::api::located_error;
use crate::error::{ScriptErrorKind, megabytes};
use crate::paths::Jail;

/// How often (in interrupts or hook calls) the deadline reads the clock.
const CLOCK_EVERY: u32 = 64;

/// The state behind the module table.
pub(crate) struct Host {
    /// Where scripts may read (and where `require` looks); `None` without a runtime.
    pub root: Option<Jail>,
    /// Where scripts may write; `None` when the host gave no output folder.
    pub out: Option<Jail>,
    /// Bytes all live textures, scene geometry and shadow maps may take together.
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
}

impl Host {
    /// A host with the given jails and texture budget and no deadline.
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
        }
    }

    /// The host of `lua`, installing a default one (no files, no deadline) if there is none.
    pub fn of(lua: &Lua) -> Rc<Host> {
        if let Some(host) = lua.app_data_ref::<Rc<Host>>() {
            return Rc::clone(&host);
        }
        let host = Rc::new(Host::new(None, None, usize::MAX));
        lua.set_app_data(Rc::clone(&host));
        host
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
            self.check_deadline(lua)?;
        }
        Ok(())
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

/// A byte budget shared by all textures, scene geometry and shadow maps of a state: each holds
/// a [`Charge`] that gives its bytes back when it is collected or dropped.
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

    /// Reserves `bytes` for a texture (see [`Budget::charge_for`]).
    pub fn charge(&self, lua: &Lua, bytes: u64) -> Result<Charge, String> {
        self.charge_for(lua, bytes, "a texture")
    }

    /// Reserves `bytes` for `what` (`"a texture"`, `"the shadow map of \"sun\""`), running a
    /// full garbage collection first if the budget looks spent (textures, scenes and maps the
    /// script dropped are only given back when Lua collects them).
    pub fn charge_for(&self, lua: &Lua, bytes: u64, what: &str) -> Result<Charge, String> {
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        let fits = |used: usize| used.checked_add(bytes).is_some_and(|t| t <= self.limit);
        if !fits(self.used.get()) {
            // A failed collection only means nothing more is freed.
            let _ = lua.gc_collect();
        }
        let used = self.used.get();
        if !fits(used) {
            return Err(format!(
                "{what} of {bytes} bytes does not fit: textures, scenes and shadow maps already \
                 take {used} of the {} the script may use for them",
                megabytes(self.limit)
            ));
        }
        self.used.set(used + bytes);
        Ok(Charge {
            bytes,
            used: Rc::clone(&self.used),
        })
    }
}

/// Bytes of the texture budget held by one texture.
pub(crate) struct Charge {
    bytes: usize,
    used: Rc<Cell<usize>>,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.used.set(self.used.get().saturating_sub(self.bytes));
    }
}
