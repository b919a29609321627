//! CPU extensions the msad4 kernels can use, and their runtime detection.

use std::fmt;

/// An instruction-set level for the SAD kernels.
///
/// [`CpuExtension::default`] is the best level this CPU supports (always [`CpuExtension::None`]
/// with the `force-scalar` feature or off x86-64). Pass another one through
/// [`MatchOptions::backend`](super::MatchOptions::backend) or
/// [`sad_map_using`](super::sad_map_using) to force it (tests and benches do); asking for a level
/// the CPU lacks gives [`MatchError::UnsupportedCpuExtension`](super::MatchError::UnsupportedCpuExtension)
/// instead of undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CpuExtension {
    /// Portable Rust, branch-free (`scalar.rs`); the reference every other backend equals.
    None,
    /// SSE4.1 `mpsadbw` (`sse41.rs`).
    Sse41,
    /// AVX2 `vmpsadbw` on 256-bit registers (`avx2.rs`).
    Avx2,
    /// AVX-512BW `vdbpsadbw` on 512-bit registers (`avx512.rs`).
    Avx512bw,
}

impl CpuExtension {
    /// Every level, from the portable one to the widest.
    pub const ALL: [CpuExtension; 4] = [Self::None, Self::Sse41, Self::Avx2, Self::Avx512bw];

    /// True when this build and this CPU can run the level.
    #[must_use]
    pub fn is_supported(self) -> bool {
        match self {
            Self::None => true,
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            Self::Sse41 => std::arch::is_x86_feature_detected!("sse4.1"),
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            Self::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            Self::Avx512bw => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
            _ => false,
        }
    }

    /// The levels this build and CPU can run, portable first.
    #[must_use]
    pub fn supported() -> Vec<CpuExtension> {
        Self::ALL.into_iter().filter(|e| e.is_supported()).collect()
    }

    /// A short lowercase name (`"none"`, `"sse4.1"`, `"avx2"`, `"avx512bw"`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Sse41 => "sse4.1",
            Self::Avx2 => "avx2",
            Self::Avx512bw => "avx512bw",
        }
    }
}

impl Default for CpuExtension {
    /// The best level this CPU supports (cached after the first call).
    fn default() -> Self {
        static BEST: std::sync::OnceLock<CpuExtension> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            Self::ALL
                .into_iter()
                .rev()
                .find(|e| e.is_supported())
                .unwrap_or(Self::None)
        })
    }
}

impl fmt::Display for CpuExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
