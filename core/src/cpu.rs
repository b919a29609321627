//! The CPU extensions penumbra's SIMD kernels use (the msad4 SAD kernels, the batched PCF
//! kernels), their runtime detection, and one way to force a level everywhere.
//!
//! Every kernel family has a portable scalar version that is the reference; the wider ones
//! must give the same bits (tests run every supported level against it with
//! [`check_against_scalar`]). A family without a kernel of its own at some level runs its widest
//! kernel below it: the batched PCF has none for SSE4.1, so [`CpuExtension::Sse41`] runs its
//! scalar one ([`crate::sample::batch::extensions`] lists the levels it has).

use std::fmt;

/// An instruction-set level of the SIMD kernels.
///
/// [`CpuExtension::default`] is the best level this CPU supports (always [`CpuExtension::None`]
/// with the `force-scalar` feature or off x86-64), and what every kernel uses unless told
/// otherwise. Force another one through
/// [`MatchOptions::backend`](crate::msad4::MatchOptions::backend) or
/// [`sad_map_using`](crate::msad4::sad_map_using) (msad4), or
/// [`CmpBatch::with_backend`](crate::sample::batch::CmpBatch::with_backend) (batched PCF) — tests
/// and benches do; asking for a level the CPU lacks is an error
/// ([`MatchError::UnsupportedCpuExtension`](crate::msad4::MatchError::UnsupportedCpuExtension),
/// [`BatchError::Unavailable`](crate::sample::batch::BatchError::Unavailable)) instead of
/// undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CpuExtension {
    /// Portable Rust, branch-free; the reference every other level equals.
    None,
    /// SSE4.1: msad4's `mpsadbw` (the batched PCF runs its scalar kernel).
    Sse41,
    /// AVX2: msad4's `vmpsadbw` on 256-bit registers; the batched PCF 8 lookups per step.
    Avx2,
    /// AVX-512 F + BW: msad4's `vdbpsadbw` on 512-bit registers; the batched PCF 16 lookups per
    /// step; the rasterizer 16 pixels per step (with VL and DQ, which such CPUs have).
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

/// Runs `run` at [`CpuExtension::None`], then at every other supported level in `levels`, and
/// asserts each gives what the scalar level gave (`what` names the case in the message). The one
/// helper the SIMD tests use.
///
/// # Panics
/// When a level's answer differs from the scalar one.
#[doc(hidden)]
pub fn check_against_scalar<T: PartialEq + fmt::Debug>(
    levels: &[CpuExtension],
    what: &str,
    mut run: impl FnMut(CpuExtension) -> T,
) -> T {
    let scalar = run(CpuExtension::None);
    for &level in levels {
        if level != CpuExtension::None && level.is_supported() {
            let got = run(level);
            assert!(
                got == scalar,
                "{what}: {level} gives {got:?}, the scalar kernel {scalar:?}"
            );
        }
    }
    scalar
}

/// Asks for the cache lines of the `bytes` bytes at `p` to be brought into the cache: a hint
/// that reads and writes nothing and never faults (for rows of a big image that a loop will
/// write soon, too far apart for the hardware prefetcher to guess). No-op off x86-64.
#[inline(always)]
pub(crate) fn prefetch_range(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let end = p.wrapping_add(bytes);
        let mut at = p.wrapping_sub(p as usize & 63);
        while at < end {
            // SAFETY: a prefetch is only a hint: it never faults and touches no memory the
            // program can see, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) };
            at = at.wrapping_add(64);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// The threads this process may run at once (`std::thread::available_parallelism`, 1 when
/// unknown), asked once: on Linux the standard library reads the cgroup's CPU quota from
/// files on every call, which a map render per frame should not pay.
pub(crate) fn available_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
