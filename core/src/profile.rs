//! Tracy profiling hooks.
//!
//! Every macro here compiles to nothing unless `penumbra_core` is built with its `tracy` feature,
//! so a normal build carries no Tracy code at all. With the feature on, zones are recorded only
//! while a `tracy_client::Client` is running (the application starts it); otherwise they cost a
//! single relaxed atomic load.
//!
//! ```
//! fn bake() {
//!     penumbra_core::zone!("bake");
//!     penumbra_core::plot!("texels baked", 64.0);
//! }
//! bake();
//! ```

#[cfg(feature = "tracy")]
#[doc(hidden)]
pub mod __private {
    pub use tracy_client;
}

/// Opens a Tracy zone named `$name` (a string literal) that lasts until the end of the enclosing
/// block. Expands to nothing without the `tracy` feature.
#[cfg(feature = "tracy")]
#[macro_export]
macro_rules! zone {
    ($name:literal) => {
        let _penumbra_zone = $crate::profile::__private::tracy_client::Client::running().map(|c| {
            c.span(
                $crate::profile::__private::tracy_client::span_location!($name),
                0,
            )
        });
    };
}

/// Opens a Tracy zone named `$name` (a string literal) that lasts until the end of the enclosing
/// block. Expands to nothing without the `tracy` feature.
#[cfg(not(feature = "tracy"))]
#[macro_export]
macro_rules! zone {
    ($name:literal) => {};
}

/// Sends one value of the Tracy plot `$name` (a string literal). Expands to nothing without the
/// `tracy` feature (the value expression is not evaluated then).
#[cfg(feature = "tracy")]
#[macro_export]
macro_rules! plot {
    ($name:literal, $value:expr) => {
        if let Some(c) = $crate::profile::__private::tracy_client::Client::running() {
            c.plot(
                $crate::profile::__private::tracy_client::plot_name!($name),
                ($value) as f64,
            );
        }
    };
}

/// Sends one value of the Tracy plot `$name` (a string literal). Expands to nothing without the
/// `tracy` feature (the value expression is not evaluated then).
#[cfg(not(feature = "tracy"))]
#[macro_export]
macro_rules! plot {
    ($name:literal, $value:expr) => {};
}

/// Marks the end of a frame (Tracy's main frame). Expands to nothing without the `tracy` feature.
#[cfg(feature = "tracy")]
#[macro_export]
macro_rules! frame_mark {
    () => {
        if let Some(c) = $crate::profile::__private::tracy_client::Client::running() {
            c.frame_mark();
        }
    };
}

/// Marks the end of a frame (Tracy's main frame). Expands to nothing without the `tracy` feature.
#[cfg(not(feature = "tracy"))]
#[macro_export]
macro_rules! frame_mark {
    () => {};
}

/// True when this build carries the Tracy hooks (the `tracy` feature).
#[must_use]
pub const fn enabled() -> bool {
    cfg!(feature = "tracy")
}
