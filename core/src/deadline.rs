//! Cooperative deadlines for long calls.
//!
//! Rendering a large shadow map, searching a big image or generating the mips of a huge texture
//! can take seconds. A host that must stay responsive — the Lua sandbox with its `--timeout`, a
//! tool with a frame budget — runs such calls inside [`with_deadline`]; the engine's long loops
//! (per raster tile, per search row, per mip row) ask [`expired`] and stop early once the
//! deadline has passed, and the call then returns its error type's `Interrupted` variant
//! ([`crate::shadow::ShadowError::Interrupted`], [`crate::msad4::MatchError::Interrupted`],
//! [`crate::TextureError::Interrupted`]). A call that was interrupted returns no partial answer.
//!
//! The deadline is per thread; the engine's own worker threads inherit the deadline of the
//! thread that started the call. Without a deadline a check costs one thread-local read; with
//! one it reads the monotonic clock (tens of nanoseconds), so loops check once per tile or row,
//! never per texel.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use penumbra_core::deadline;
//!
//! let soon = Instant::now() + Duration::from_millis(5);
//! let steps = deadline::with_deadline(Some(soon), || {
//!     let mut steps = 0u64;
//!     while !deadline::expired() {
//!         steps += 1;
//!     }
//!     steps
//! });
//! assert!(steps > 0);
//! assert!(deadline::current().is_none()); // restored on the way out
//! ```

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static CURRENT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// A call stopped because the deadline set with [`with_deadline`] passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("stopped: the caller's deadline passed")]
pub struct Interrupted;

/// Runs `f` with `deadline` in force on this thread (the earlier of it and any deadline already
/// in force), restoring the previous one afterwards, also when `f` panics.
pub fn with_deadline<R>(deadline: Option<Instant>, f: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(Cell::get);
    let effective = match (previous, deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let _restore = Restore(previous);
    CURRENT.with(|c| c.set(effective));
    f()
}

/// Puts the previous deadline back when dropped.
struct Restore(Option<Instant>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// The deadline in force on this thread, to hand to worker threads.
#[must_use]
pub fn current() -> Option<Instant> {
    CURRENT.with(Cell::get)
}

/// Whether the deadline in force has passed (false without one).
#[must_use]
pub fn expired() -> bool {
    current().is_some_and(|d| Instant::now() >= d)
}

/// `Err(Interrupted)` once the deadline in force has passed.
///
/// # Errors
/// [`Interrupted`] when the deadline has passed.
pub fn check() -> Result<(), Interrupted> {
    if expired() { Err(Interrupted) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_earlier_deadline_wins_and_the_outer_one_comes_back() {
        let now = Instant::now();
        let far = now + Duration::from_secs(3600);
        let past = now.checked_sub(Duration::from_millis(1)).unwrap_or(now);
        assert!(!expired());
        with_deadline(Some(far), || {
            assert_eq!(current(), Some(far));
            assert!(check().is_ok());
            with_deadline(Some(past), || assert_eq!(check(), Err(Interrupted)));
            with_deadline(None, || assert_eq!(current(), Some(far)));
            assert_eq!(current(), Some(far));
        });
        assert_eq!(current(), None);
    }

    #[test]
    fn a_panic_restores_the_previous_deadline() {
        let far = Instant::now() + Duration::from_secs(3600);
        let caught = std::panic::catch_unwind(|| with_deadline(Some(far), || panic!("boom")));
        assert!(caught.is_err());
        assert_eq!(current(), None);
    }
}
