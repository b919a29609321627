//! Helper threads kept between parallel passes.
//!
//! A game asks for tiles, queries and ray batches every frame, each a short parallel pass.
//! Starting a thread per pass costs tens of microseconds of the frame and leaves each pass
//! with cold thread-local buffers (the tile drawer's set-up lists and vertex cache). The pool
//! keeps its helpers parked on a condition variable between passes instead.
//!
//! Waking a parked thread is slow where it matters most: on a virtual machine an idle core is
//! halted, and a helper woken through the condition variable started its share about 50 µs
//! after the pass was posted (measured on the benches' 2-vCPU machine in the 10,000-probe
//! flight, which runs three passes a frame), while the caller, woken the same way when the
//! last helper ended, lost much of that again. So a helper that has just served a pass first
//! watches for the next one for a short while ([`SPIN`], or what [`set_helper_watch`] sets),
//! offering its core to any other thread that wants it every few checks, and only then parks;
//! the caller likewise watches its helpers finish before it sleeps. The price is up to that
//! long of a core after each pass that no other pass follows soon.
//!
//! One pass runs on the pool at a time. [`run`] returns `false` without running anything when
//! the pool is serving another pass (two Bevy systems, or a pass started from inside a pass);
//! the caller then starts threads of its own, as before the pool existed. Either way the work
//! done and its results are the same: only who does it changes.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Most helpers the pool starts (a caller asking for more gets this many).
const MAX_HELPERS: usize = 63;

/// How long a helper watches for the next pass, and the caller for its helpers to finish,
/// before parking on the condition variable, unless [`set_helper_watch`] says otherwise. A
/// frame's passes follow each other within a few hundred microseconds; a helper with nothing
/// to do for longer than this sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// The watch in force, in nanoseconds ([`set_helper_watch`]).
static WATCH_NANOS: AtomicU64 = AtomicU64::new(SPIN.as_nanos() as u64);

/// Sets how long penumbra's helper threads watch for the next parallel pass after serving
/// one, and a thread that started a pass watches its helpers finish, before they sleep
/// (200 µs unless set). Watching lets passes that follow each other closely (the tile
/// drawing and the two filter passes of a frame's queries) start without waiting for a
/// sleeping thread to wake, about 50 µs each on a virtual machine; it costs up to that long
/// of a core after a frame's last pass. `Duration::ZERO` sleeps at once, for a game that
/// would rather spend no CPU time waiting (on battery, say). Results never depend on it.
///
/// ```
/// use std::time::Duration;
/// penumbra_core::set_helper_watch(Duration::ZERO); // park at once
/// penumbra_core::set_helper_watch(Duration::from_micros(200)); // the default
/// ```
pub fn set_helper_watch(watch: Duration) {
    WATCH_NANOS.store(saturating_nanos(watch), Ordering::Relaxed);
}

/// `d` in nanoseconds, `u64::MAX` past 584 years.
fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The watch in force ([`set_helper_watch`]).
fn watch() -> Duration {
    Duration::from_nanos(WATCH_NANOS.load(Ordering::Relaxed))
}

/// Watches `done` until it holds or `watch` has passed, giving the core to any other thread
/// that wants it every few checks; returns whether it holds. With no watch, checks once.
fn spin_until(watch: Duration, mut done: impl FnMut() -> bool) -> bool {
    if watch.is_zero() {
        return done();
    }
    let start = Instant::now();
    let mut checks = 0u32;
    loop {
        if done() {
            return true;
        }
        checks = checks.wrapping_add(1);
        if checks.is_multiple_of(64) {
            if start.elapsed() >= watch {
                return false;
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The task of the pass being served, its lifetime erased: [`run`] does not return before
/// every helper that took it has finished with it.
#[derive(Clone, Copy)]
struct TaskRef(*const (dyn Fn() + Sync));

// SAFETY: the task is `Sync` (callable from any thread); the pointer is only dereferenced while
// `run` keeps the task alive (see `TaskRef`).
unsafe impl Send for TaskRef {}

#[derive(Default)]
struct State {
    /// Helpers started so far.
    helpers: usize,
    /// A pass is being served.
    busy: bool,
    /// Counts the passes, so that a helper takes part in each at most once.
    pass: u64,
    task: Option<TaskRef>,
    /// Helpers still wanted for the current pass (the caller takes back those not claimed
    /// once its own share is done).
    tickets: usize,
    /// Helpers that took the current task, and those of them that are done with it.
    claimed: usize,
    finished: usize,
    /// The first panic of a helper in the current pass.
    panic: Option<Box<dyn Any + Send>>,
}

struct Pool {
    state: Mutex<State>,
    /// Helpers wait here for a pass.
    wake: Condvar,
    /// The caller waits here for its helpers to finish.
    done: Condvar,
    /// `State::pass`, readable without the lock (helpers watch it before parking).
    posted: AtomicU64,
    /// Helpers of the current pass that have claimed it and not finished (the caller watches
    /// it before sleeping).
    running: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
        done: Condvar::new(),
        posted: AtomicU64::new(0),
        running: AtomicUsize::new(0),
    })
}

impl Pool {
    /// The state, whatever a panicking thread left (every field is consistent between
    /// statements that hold the lock, and tasks run outside it).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A helper's life: wait for a pass it has not served, take a ticket, run the task.
    fn serve(&'static self) {
        let mut seen = 0;
        let mut st = self.lock();
        loop {
            let mut watched = false;
            while !(st.pass != seen && st.tickets > 0) {
                if st.pass != seen && st.tickets == 0 {
                    // The pass has all the helpers it wants: wait for the next one.
                    seen = st.pass;
                }
                if !watched {
                    // Watch for the next pass a while before parking (see the module's doc).
                    watched = true;
                    drop(st);
                    spin_until(watch(), || self.posted.load(Ordering::Acquire) != seen);
                    st = self.lock();
                    continue;
                }
                st = self.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            seen = st.pass;
            st.tickets -= 1;
            st.claimed += 1;
            let Some(TaskRef(task)) = st.task else {
                // Unreachable: tickets are only handed out with a task.
                st.finished += 1;
                continue;
            };
            self.running.fetch_add(1, Ordering::AcqRel);
            drop(st);
            // SAFETY: `run` keeps the task alive until `finished` reaches `claimed`, which
            // this helper's increment below is part of.
            let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { (*task)() }));
            st = self.lock();
            if let Err(p) = outcome {
                st.panic.get_or_insert(p);
            }
            st.finished += 1;
            self.running.fetch_sub(1, Ordering::AcqRel);
            if st.finished == st.claimed {
                self.done.notify_all();
            }
        }
    }
}

/// Runs `task` on this thread and on up to `helpers` pool threads at once, and returns when
/// every run has finished (`true`); a panic in any of them is resumed here. Returns `false`
/// at once, having run nothing, when the pool is serving another pass or cannot start a
/// thread.
///
/// Helpers that have not woken by the time this thread's run ends are not waited for: the
/// task is expected to share its work out through a queue, so a late helper would find
/// nothing left.
pub(crate) fn run(helpers: usize, task: &(dyn Fn() + Sync)) -> bool {
    let helpers = helpers.min(MAX_HELPERS);
    if helpers == 0 {
        task();
        return true;
    }
    let pool = pool();
    {
        let mut st = pool.lock();
        if st.busy {
            return false;
        }
        while st.helpers < helpers {
            let started = std::thread::Builder::new()
                // Short: Linux keeps 15 bytes of a thread's name for profilers.
                .name(format!("penumbra #{}", st.helpers + 1))
                .spawn(move || pool.serve());
            if started.is_err() {
                break;
            }
            st.helpers += 1;
        }
        if st.helpers == 0 {
            return false;
        }
        // SAFETY: only the lifetime is erased; the task outlives every use (see `TaskRef`).
        let task: *const (dyn Fn() + Sync + '_) = task;
        let task: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(task) };
        st.busy = true;
        st.pass = st.pass.wrapping_add(1);
        st.task = Some(TaskRef(task));
        st.tickets = helpers.min(st.helpers);
        st.claimed = 0;
        st.finished = 0;
        st.panic = None;
        pool.posted.store(st.pass, Ordering::Release);
    }
    pool.wake.notify_all();
    let own = catch_unwind(AssertUnwindSafe(task));
    let mut st = pool.lock();
    // Helpers still asleep are not needed any more.
    st.tickets = 0;
    if st.finished < st.claimed {
        // No helper claims the pass from here on: watch the running ones end before sleeping.
        drop(st);
        spin_until(watch(), || pool.running.load(Ordering::Acquire) == 0);
        st = pool.lock();
    }
    while st.finished < st.claimed {
        st = pool.done.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    st.task = None;
    st.busy = false;
    let helper_panic = st.panic.take();
    drop(st);
    if let Err(p) = own {
        resume_unwind(p);
    }
    if let Some(p) = helper_panic {
        resume_unwind(p);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// `run`, tried again while another test of the same process holds the pool (a pass
    /// with a panic holds it for as long as the panic message takes); false if it stayed
    /// busy for ten seconds.
    fn run_when_free(helpers: usize, task: &(dyn Fn() + Sync)) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if run(helpers, task) {
                return true;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        false
    }

    /// Every item of a shared queue is worked once, over many passes, and a pass started
    /// while another runs is refused rather than mixed in.
    #[test]
    fn passes_share_out_their_items_and_a_nested_pass_is_refused() {
        for pass in 0..200 {
            let next = AtomicUsize::new(0);
            let sum = AtomicUsize::new(0);
            let nested = AtomicUsize::new(0);
            let task = || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= 1000 {
                        break;
                    }
                    sum.fetch_add(i, Ordering::Relaxed);
                }
                if !run(1, &|| {}) {
                    nested.fetch_add(1, Ordering::Relaxed);
                }
            };
            assert!(run_when_free(1 + pass % 3, &task), "pass {pass} never ran");
            assert_eq!(sum.load(Ordering::Relaxed), 999 * 1000 / 2, "pass {pass}");
            assert!(nested.load(Ordering::Relaxed) >= 1, "pass {pass}");
        }
    }

    /// Helpers serve passes that follow each other at once (they are still watching) and
    /// passes that come after they have parked (woken through the condition variable), and
    /// with no watch at all (`set_helper_watch(ZERO)`): in each, the caller's task waits
    /// until a second thread has joined it.
    #[test]
    fn helpers_join_passes_whether_watching_or_parked() {
        let pauses = [0, 0, 3, 0, 5, 0, 0, 3, 0, 0, 2, 0];
        for (pass, pause) in pauses.into_iter().enumerate() {
            // The last third with no watch (other tests of the process may run meanwhile:
            // what they compute does not depend on it).
            if pass == 8 {
                set_helper_watch(Duration::ZERO);
            }
            std::thread::sleep(Duration::from_millis(pause));
            let entered = AtomicUsize::new(0);
            let joined = AtomicUsize::new(0);
            let task = || {
                let me = entered.fetch_add(1, Ordering::AcqRel);
                if me == 0 {
                    // The first thread in (the caller, or a helper when the caller is late)
                    // waits for a second one, for as long as a parked helper could need.
                    let start = Instant::now();
                    while entered.load(Ordering::Acquire) < 2
                        && start.elapsed() < Duration::from_secs(5)
                    {
                        std::thread::yield_now();
                    }
                }
                joined.fetch_max(entered.load(Ordering::Acquire), Ordering::AcqRel);
            };
            let served = run_when_free(1, &task);
            if pass == pauses.len() - 1 {
                set_helper_watch(SPIN);
            }
            assert!(served, "pass {pass} never ran");
            assert!(
                joined.load(Ordering::Acquire) >= 2,
                "pass {pass} (after {pause} ms) ran on the caller alone"
            );
        }
    }

    /// With no watch a condition is checked once; with one, until it holds or the watch
    /// has passed, however often that takes.
    #[test]
    fn a_watch_checks_until_its_time_is_up() {
        let mut checks = 0;
        assert!(!spin_until(Duration::ZERO, || {
            checks += 1;
            false
        }));
        assert_eq!(checks, 1);
        let start = Instant::now();
        checks = 0;
        assert!(!spin_until(Duration::from_millis(2), || {
            checks += 1;
            false
        }));
        assert!(start.elapsed() >= Duration::from_millis(2));
        assert!(checks > 64, "{checks} checks");
        checks = 0;
        assert!(spin_until(Duration::from_secs(10), || {
            checks += 1;
            checks == 100
        }));
        assert_eq!(checks, 100);
        // The setting is kept in nanoseconds; huge values saturate.
        assert_eq!(saturating_nanos(SPIN), 200_000);
        assert_eq!(saturating_nanos(Duration::MAX), u64::MAX);
    }

    /// A panic in the task reaches the caller, and the pool serves the next pass.
    #[test]
    fn a_panic_reaches_the_caller_and_the_pool_goes_on() {
        let ran = AtomicUsize::new(0);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            run_when_free(2, &|| {
                ran.fetch_add(1, Ordering::Relaxed);
                panic!("a task's panic");
            })
        }));
        assert!(outcome.is_err());
        assert!(ran.load(Ordering::Relaxed) >= 1);
        let count = AtomicUsize::new(0);
        let served = run_when_free(1, &|| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert!(served, "the pool stayed busy after a panic");
        assert!(count.load(Ordering::Relaxed) >= 1);
    }
}
