//! The loop every SIMD kernel runs, written once: the prefetch ring for big key images, the
//! steps of `LANES` lookups, the padded tail, and the entry points that turn the batch's
//! configuration into const generics.
//!
//! A kernel ([`super::avx2`], [`super::avx512`]) supplies only its lane operations through
//! [`Lanes`] (splat the constants, load and prepare a step, fetch-test-weight-store it,
//! prefetch it) and calls [`simd_entry_points!`] with its target feature. Everything here is
//! `#[inline(always)]` and has no target features of its own, so it is compiled inside the
//! kernel's `#[target_feature]` functions with that kernel's instructions.

use super::Consts;

/// The widest kernel's lanes and the most steps any kernel prefetches ahead: the sizes of the
/// driver's fixed scratch (a kernel uses the first [`Lanes::LANES`] / [`Lanes::AHEAD`]).
const MAX_LANES: usize = 16;
const MAX_AHEAD: usize = 8;

/// One SIMD width's operations over key images of `K` (`u16` or `i32` keys).
///
/// # Safety
/// Every method needs the CPU features of the kernel that implements it; they are only called
/// from that kernel's `#[target_feature]` entry points.
pub(super) trait Lanes<K> {
    /// Lookups per step.
    const LANES: usize;
    /// How many steps ahead big images are prefetched.
    const AHEAD: usize;
    /// The batch constants as vectors, splatted once per call.
    type Splat;
    /// A prepared step: what it computes before it touches the key image.
    type Prep: Copy;

    /// # Safety
    /// The kernel's CPU features.
    unsafe fn splat(c: &Consts) -> Self::Splat;

    /// A prepared step of zeros (the prefetch ring's initial value).
    ///
    /// # Safety
    /// The kernel's CPU features.
    unsafe fn blank() -> Self::Prep;

    /// Loads `LANES` coordinates and references and computes positions, weights and reference
    /// keys (R24–R27, R82).
    ///
    /// # Safety
    /// The kernel's CPU features; `LANES` readable entries at `uv` and `refs`.
    unsafe fn step<const POINT: bool, const WRAP: bool, const UNORM: bool>(
        k: &Self::Splat,
        uv: *const [f32; 2],
        refs: *const f32,
    ) -> Self::Prep;

    /// Fetches, compares and weights a prepared step and stores its `LANES` results at `out`.
    ///
    /// # Safety
    /// The kernel's CPU features; `keys` the padded image the step was prepared for; `LANES`
    /// writable entries at `out`.
    unsafe fn finish<const TEST: u8>(keys: *const K, p: Self::Prep, out: *mut f32);

    /// Starts loading the footprints of a prepared step into the cache.
    ///
    /// # Safety
    /// The kernel's CPU features.
    unsafe fn prefetch(keys: *const K, p: &Self::Prep);
}

/// The kernel loop: full steps (one chunk ahead with prefetches when `c.prefetch`), then the
/// last `len % LANES` lookups through a zero-padded step.
///
/// # Safety
/// The CPU features of `L`; `keys` the padded image `c` describes; equal slice lengths.
#[inline(always)]
pub(super) unsafe fn drive<
    L: Lanes<K>,
    K,
    const POINT: bool,
    const WRAP: bool,
    const TEST: u8,
    const UNORM: bool,
>(
    c: &Consts,
    keys: &[K],
    uv: &[[f32; 2]],
    refs: &[f32],
    out: &mut [f32],
) {
    let lanes = L::LANES;
    debug_assert!(lanes <= MAX_LANES && L::AHEAD <= MAX_AHEAD);
    debug_assert!(uv.len() == refs.len() && uv.len() == out.len());
    // SAFETY: every step reads `lanes` entries at `i < n` with `i + lanes <= n <= len`; the tail
    // reads and writes the padded scratch; the caller's contract covers the features and keys.
    unsafe {
        let k = L::splat(c);
        let base = keys.as_ptr();
        let n = uv.len() / lanes * lanes;
        let mut done = 0;
        if c.prefetch {
            // Big images: a chunk is prepared and its footprints prefetched one chunk ahead of
            // the chunk that fetches, so the cache misses of AHEAD steps overlap.
            let ahead = L::AHEAD;
            let chunk = ahead * lanes;
            let chunks = n / chunk;
            let mut ring = [[L::blank(); MAX_AHEAD]; 2];
            for j in 0..chunks + 1 {
                if j < chunks {
                    for (s, p) in ring[j & 1][..ahead].iter_mut().enumerate() {
                        let i = j * chunk + s * lanes;
                        *p = L::step::<POINT, WRAP, UNORM>(
                            &k,
                            uv.as_ptr().add(i),
                            refs.as_ptr().add(i),
                        );
                        L::prefetch(base, p);
                    }
                }
                if j > 0 {
                    let at = (j - 1) * chunk;
                    for (s, p) in ring[(j - 1) & 1][..ahead].iter().enumerate() {
                        L::finish::<TEST>(base, *p, out.as_mut_ptr().add(at + s * lanes));
                    }
                }
            }
            done = chunks * chunk;
        }
        for i in (done..n).step_by(lanes) {
            let p = L::step::<POINT, WRAP, UNORM>(&k, uv.as_ptr().add(i), refs.as_ptr().add(i));
            L::finish::<TEST>(base, p, out.as_mut_ptr().add(i));
        }
        let rest = uv.len() - n;
        if rest > 0 {
            let mut tuv = [[0.0f32; 2]; MAX_LANES];
            let mut tr = [0.0f32; MAX_LANES];
            let mut to = [0.0f32; MAX_LANES];
            tuv[..rest].copy_from_slice(&uv[n..]);
            tr[..rest].copy_from_slice(&refs[n..]);
            let p = L::step::<POINT, WRAP, UNORM>(&k, tuv.as_ptr(), tr.as_ptr());
            L::finish::<TEST>(base, p, to.as_mut_ptr());
            out[n..].copy_from_slice(&to[..rest]);
        }
    }
}

/// A kernel's [`Lanes`] type `$isa` and its entry points, compiled with its target feature:
/// `run_u16` (16-bit UNORM keys), `run_i32` (f32 or 24-bit UNORM keys) and `project` (the
/// projection of `run_projected`). The kernel's module defines `LANES`, `AHEAD`, `Splat` (with
/// `new`), `Prep`, a `Fetch` trait for the key types, and the `#[inline(always)]` functions
/// `blank`, `step`, `finish`, `store` and `prefetch` the impl forwards to.
macro_rules! simd_entry_points {
    ($feature:literal, $isa:ident, $name:literal) => {
        #[doc = concat!("The ", $name, " kernel's lane operations, for the loop of `driver.rs`.")]
        pub(super) struct $isa;

        impl<K: Fetch> super::driver::Lanes<K> for $isa {
            const LANES: usize = LANES;
            const AHEAD: usize = AHEAD;
            type Splat = Splat;
            type Prep = Prep;

            #[inline(always)]
            unsafe fn splat(c: &super::Consts) -> Splat {
                unsafe { Splat::new(c) }
            }

            #[inline(always)]
            unsafe fn blank() -> Prep {
                unsafe { blank() }
            }

            #[inline(always)]
            unsafe fn step<const POINT: bool, const WRAP: bool, const UNORM: bool>(
                k: &Splat,
                uv: *const [f32; 2],
                refs: *const f32,
            ) -> Prep {
                unsafe { step::<POINT, WRAP, UNORM>(k, uv, refs) }
            }

            #[inline(always)]
            unsafe fn finish<const TEST: u8>(keys: *const K, p: Prep, out: *mut f32) {
                unsafe { store(out, finish::<K, TEST>(keys, p)) }
            }

            #[inline(always)]
            unsafe fn prefetch(keys: *const K, p: &Prep) {
                unsafe { prefetch(keys, p) }
            }
        }

        // Not `inline(always)`: each instantiation is a function of its own, so at `opt-level =
        // 0` (a game's default dev build) the stack holds one instantiation's locals, not those
        // of all of them inlined into the entry point (which overflowed a 2 MiB task thread).
        #[target_feature(enable = $feature)]
        unsafe fn run_impl<
            K,
            const POINT: bool,
            const WRAP: bool,
            const TEST: u8,
            const UNORM: bool,
        >(
            c: &super::Consts,
            keys: &[K],
            uv: &[[f32; 2]],
            refs: &[f32],
            out: &mut [f32],
        ) where
            $isa: super::driver::Lanes<K>,
        {
            // SAFETY: the entry points' contract.
            unsafe {
                super::driver::drive::<$isa, K, POINT, WRAP, TEST, UNORM>(c, keys, uv, refs, out)
            }
        }

        #[doc = concat!("The kernel over 16-bit UNORM keys.\n\n# Safety\nThe CPU must support ", $name, "; `keys` must be the padded image `c` describes (`2·(M + 3)·stride` keys, row pairs) and the slices must have equal lengths.")]
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn run_u16(
            c: &super::Consts,
            keys: &[u16],
            uv: &[[f32; 2]],
            refs: &[f32],
            out: &mut [f32],
        ) {
            debug_assert!(uv.len() == refs.len() && uv.len() == out.len());
            // SAFETY: the caller's contract.
            unsafe { dispatch!(run_impl, c, u16, true, (keys, uv, refs, out)) }
        }

        #[doc = concat!("The kernel over 32-bit keys (f32 or 24-bit UNORM).\n\n# Safety\nAs [`run_u16`] (", $name, ").")]
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn run_i32(
            c: &super::Consts,
            keys: &[i32],
            uv: &[[f32; 2]],
            refs: &[f32],
            out: &mut [f32],
        ) {
            debug_assert!(uv.len() == refs.len() && uv.len() == out.len());
            // SAFETY: the caller's contract.
            unsafe {
                if c.ref_kind == super::RefKind::Unorm {
                    dispatch!(run_impl, c, i32, true, (keys, uv, refs, out))
                } else {
                    dispatch!(run_impl, c, i32, false, (keys, uv, refs, out))
                }
            }
        }

        #[doc = concat!("The projection of `run_projected`, compiled for ", $name, " (same operations, same order).\n\n# Safety\nThe CPU must support ", $name, ".")]
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn project(
            m: &[[f32; 4]; 4],
            pts: &[glam::Vec3],
            bias: f32,
            uv: &mut [[f32; 2]],
            refs: &mut [f32],
        ) {
            super::project_points(m, pts, bias, uv, refs);
        }
    };
}
pub(super) use simd_entry_points;
