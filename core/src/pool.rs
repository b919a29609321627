//! Helper threads kept between parallel passes.
//!
//! A game asks for tiles, queries and ray batches every frame, each a short parallel pass.
//! Starting a thread per pass costs tens of microseconds of the frame and leaves each pass
//! with cold thread-local buffers (the tile drawer's set-up lists and vertex cache). The pool
//! keeps its helpers parked on a condition variable between passes instead.
//!
//! One pass runs on the pool at a time. [`run`] returns `false` without running anything when
//! the pool is serving another pass (two Bevy systems, or a pass started from inside a pass);
//! the caller then starts threads of its own, as before the pool existed. Either way the work
//! done and its results are the same: only who does it changes.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// Most helpers the pool starts (a caller asking for more gets this many).
const MAX_HELPERS: usize = 63;

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
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
        done: Condvar::new(),
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
            while !(st.pass != seen && st.tickets > 0) {
                if st.pass != seen && st.tickets == 0 {
                    // The pass has all the helpers it wants: wait for the next one.
                    seen = st.pass;
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
            drop(st);
            // SAFETY: `run` keeps the task alive until `finished` reaches `claimed`, which
            // this helper's increment below is part of.
            let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { (*task)() }));
            st = self.lock();
            if let Err(p) = outcome {
                st.panic.get_or_insert(p);
            }
            st.finished += 1;
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
    }
    pool.wake.notify_all();
    let own = catch_unwind(AssertUnwindSafe(task));
    let mut st = pool.lock();
    // Helpers still asleep are not needed any more.
    st.tickets = 0;
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
