//! The CPU extensions the batched kernels can use, and runtime detection.

use std::fmt;

/// One implementation of the batched kernels.
///
/// [`Backend::best`] is what a new batch uses; a test or a bench forces another one with
/// [`CmpBatch::with_backend`](super::CmpBatch::with_backend).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Portable Rust, branch-free; runs everywhere.
    Scalar,
    /// x86-64 AVX2: 8 lookups per step.
    Avx2,
    /// x86-64 AVX-512 (F): 16 lookups per step.
    Avx512,
}

impl Backend {
    /// Every backend, slowest first.
    pub const ALL: [Backend; 3] = [Backend::Scalar, Backend::Avx2, Backend::Avx512];

    /// True when this CPU can run the backend (and the `force-scalar` feature is off, for the
    /// SIMD ones).
    #[must_use]
    pub fn is_available(self) -> bool {
        match self {
            Backend::Scalar => true,
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            Backend::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            Backend::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
            Backend::Avx2 | Backend::Avx512 => false,
        }
    }

    /// The fastest available backend (always [`Backend::Scalar`] with `force-scalar`).
    #[must_use]
    pub fn best() -> Backend {
        Backend::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_available())
            .unwrap_or(Backend::Scalar)
    }

    /// The available backends, slowest first.
    #[must_use]
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }

    /// Lookups one kernel step handles.
    #[must_use]
    pub const fn lanes(self) -> usize {
        match self {
            Backend::Scalar => 1,
            Backend::Avx2 => 8,
            Backend::Avx512 => 16,
        }
    }

    /// A short lowercase name (`scalar`, `avx2`, `avx512`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }
}

impl Default for Backend {
    /// [`Backend::best`].
    fn default() -> Self {
        Backend::best()
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
