//! Batched `sample_c_lz`: bilinear (or point) PCF over slices of lookups, with scalar, AVX2 and
//! AVX-512 kernels that return exactly the bits of [`Sampler::sample_cmp_level_zero`].
//!
//! A [`CmpBatch`] is prepared once per (sampler, texture, array slice) and reused for as many
//! lookups as needed, frame after frame:
//!
//! ```
//! use penumbra_core::{ComparisonFunc, Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc};
//! let tex = Texture::from_f32(TextureDesc::new_2d(Format::D32Float, 2, 2), &[0.3, 0.6, 0.6, 0.9])?;
//! let sampler = Sampler::new(SamplerDesc::comparison(
//!     Filter::ComparisonMinMagLinearMipPoint,
//!     ComparisonFunc::LessEqual,
//! ))?;
//! let batch = sampler.cmp_level_zero_batch(&tex, 0)?;
//! let mut lit = [0.0; 2];
//! batch.run(&[[0.5, 0.5], [0.0, 0.0]], &[0.5, 0.5], &mut lit)?;
//! assert_eq!(lit, [0.75, 0.0]); // SPEC R80's example, then the 0.3 corner texel alone
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it stays bit-exact
//!
//! Construction resolves everything `sample_c_lz` keeps constant across lookups (R56–R60: LOD 0
//! plus `MipLODBias`, `MinLOD`/`MaxLOD` and the resource clamp → magnification or one mip level;
//! the MAG or MIN filter type; slice R43; address modes; border R35/R37; the empty set R62), then
//! picks one of three paths ([`BatchPath`]):
//!
//! * **Kernel** — 2D/2DArray views of R32_FLOAT, D32_FLOAT, R32_FLOAT_X8X24, R24_UNORM_X8,
//!   R16_UNORM, D16_UNORM (and the \[EXT\] R8 formats), normalized coordinates, a single mip level,
//!   point or bilinear, CLAMP, BORDER or WRAP on each axis. The level is copied once into a
//!   *key image*: every texel becomes an integer key whose signed order is the comparison's order
//!   (f32: flushed per R6/R85, −0 = +0, NaN placed where it fails every test but NOT_EQUAL, R79;
//!   UNORM: the stored code, compared with the exactly quantized reference of R82/R83), padded by
//!   two texels on each side with what the address mode puts there (a clamped edge texel, the
//!   wrapped texel, or the border's R as a key, R32–R37). Every tap of R27 then lands in the
//!   padded image at `clamp(t + 2, 0, N + 2)` without any per-tap address-mode logic. The image
//!   is stored in *row pairs* (each entry holds a texel and the one below it), so a lane's whole
//!   2×2 footprint is two adjacent entries: one 16-byte (32-bit keys) or 8-byte (16-bit keys)
//!   load, nearly always within one cache line. The 2×2 weights are the integer products `(256−w)·w` of
//!   R27 and the result is `Σ passing weights · 2^-16`, exactly the R70 sum for 0/1 values.
//!   Building the key image costs O(texels) time and `2·(W+4)·(H+3)` keys of memory (2 bytes
//!   each for the 8/16-bit UNORM formats, 4 otherwise: a 2048² D32 map takes 32 MiB); a batch
//!   is meant to be built once and reused across frames. Images over 4 MiB are read with
//!   software prefetches one chunk of lookups ahead (and, on Linux, transparent huge pages are
//!   requested for them), which roughly doubles random-access throughput on big maps.
//! * **Constant** — NEVER and ALWAYS give 0 and 1 whatever the lookup.
//! * **Reference** — everything else (MIRROR, MIRROR_ONCE, two blended mips, cubes, 1D,
//!   non-normalized coordinates, R16_FLOAT): every lookup goes through the scalar reference.
//!
//! The kernel's CPU extension ([`CpuExtension`], the one type of `crate::cpu`) is picked at run
//! time; the `force-scalar` feature of `penumbra_core` pins it to the portable one. The batch
//! has kernels for [`extensions`]: scalar, AVX2 (8 lookups a step) and AVX-512 (16); SSE4.1 runs
//! the scalar one. Every kernel performs the same integer and correctly rounded f32 operations
//! in the same order, so they agree bit for bit with each other and with the scalar reference
//! (`tests/batch.rs` checks every level the CPU has).

/// The configuration → const generics match every kernel makes once per call: point or linear,
/// any WRAP axis, the test (`$run` is the kernel's generic loop). Defined before the kernel
/// modules so that they (and `simd_entry_points!`) see it.
macro_rules! dispatch {
    ($run:ident, $c:expr, $k:ty, $unorm:tt, $args:tt) => {
        match ($c.point, $c.any_wrap) {
            (false, false) => dispatch!(@test $run, $c, $k, false, false, $unorm, $args),
            (false, true) => dispatch!(@test $run, $c, $k, false, true, $unorm, $args),
            (true, false) => dispatch!(@test $run, $c, $k, true, false, $unorm, $args),
            (true, true) => dispatch!(@test $run, $c, $k, true, true, $unorm, $args),
        }
    };
    (@test $run:ident, $c:expr, $k:ty, $p:tt, $w:tt, $unorm:tt, ($keys:expr, $uv:expr, $refs:expr, $out:expr)) => {{
        use $crate::sample::batch::{EQUAL, LESS, NOT_EQUAL, Test};
        match $c.test {
            Test::Less => $run::<$k, $p, $w, LESS, $unorm>($c, $keys, $uv, $refs, $out),
            Test::Equal => $run::<$k, $p, $w, EQUAL, $unorm>($c, $keys, $uv, $refs, $out),
            Test::NotEqual => $run::<$k, $p, $w, NOT_EQUAL, $unorm>($c, $keys, $uv, $refs, $out),
        }
    }};
}

mod keys;
mod lazy;
mod scalar;

#[cfg(target_arch = "x86_64")]
mod driver;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

pub use crate::cpu::CpuExtension;

use keys::{Fill, KernelPlan, Keys};
pub(crate) use lazy::{KeyWriter, LevelBytes, SpareKeys};

/// The levels this CPU and build support that have a batch kernel of their own, portable first
/// (what tests and benches loop over).
#[must_use]
pub fn extensions() -> Vec<CpuExtension> {
    [
        CpuExtension::None,
        CpuExtension::Avx2,
        CpuExtension::Avx512bw,
    ]
    .into_iter()
    .filter(|e| e.is_supported())
    .collect()
}

use super::address::{Addressed, address};
use super::combine::Border;
use super::lod::{self, LodMode};
use super::{Coord, SampleError, Sampler};
use crate::desc::{AddressMode, ComparisonFunc, FilterType};
use crate::format::{ComponentKind, Format};
use crate::texture::{Dimension, Texture};

/// Errors of [`CmpBatch::run`], [`CmpBatch::run_projected`] and [`CmpBatch::with_backend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// `run`: the three slices must have the same length.
    #[error("batch lengths differ: {uv} coordinates, {refs} references, {out} outputs")]
    Length {
        /// `uv.len()`.
        uv: usize,
        /// `refs.len()`.
        refs: usize,
        /// `out.len()`.
        out: usize,
    },
    /// `run_projected`: one output per point.
    #[error("batch lengths differ: {points} points, {out} outputs")]
    ProjectedLength {
        /// `points.len()`.
        points: usize,
        /// `out.len()`.
        out: usize,
    },
    /// `with_backend`: this CPU (or this build, with `force-scalar`) cannot run the level.
    #[error("the {0} CPU extension is not available on this CPU or in this build (force-scalar)")]
    Unavailable(CpuExtension),
}

/// How a [`CmpBatch`] answers its lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchPath {
    /// The SIMD/scalar kernels over the key image.
    Kernel,
    /// NEVER / ALWAYS: every lookup gives the same value.
    Constant,
    /// A configuration the kernels do not cover: the scalar reference, lookup by lookup.
    Reference,
}

/// A prepared batch of `sample_c_lz` lookups on one slice of one texture with one sampler.
///
/// Built by [`Sampler::cmp_level_zero_batch`]; see the [module docs](self) for what it resolves
/// up front and what construction costs.
#[derive(Debug)]
pub struct CmpBatch {
    /// A copy of the sampler (samplers are small and `Copy`).
    sampler: Sampler,
    /// A clone of the texture (its storage is shared); `None` for a batch whose key image is
    /// filled region by region ([`CmpBatch::refresh`]), which never takes the reference path.
    tex: Option<Texture>,
    /// The view element (R43, already clamped) the lookups read.
    element: u32,
    /// `slice as f32`: the third coordinate the reference path passes on unchanged (a cube's
    /// or a volume's third coordinate is not an array index, so it must not be clamped).
    third: f32,
    backend: CpuExtension,
    plan: Plan,
}

#[derive(Debug)]
enum Plan {
    Constant(f32),
    Kernel(KernelPlan),
    Reference,
}

/// What a reference becomes before it is compared with the keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RefKind {
    /// R82/R83: exact UNORM quantization to `max = 2^n − 1`.
    Unorm,
    /// R82/R85: the ordered key of the flushed f32.
    Float,
}

/// The per-tap integer test, after the key transforms (see `FuncMap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Test {
    /// `ref_key < key` (LESS, LESS_EQUAL, GREATER, GREATER_EQUAL).
    Less,
    /// `ref_key == key` (EQUAL).
    Equal,
    /// `ref_key != key` (NOT_EQUAL).
    NotEqual,
}

/// `Test` as the const parameter of the SIMD kernels.
pub(crate) const LESS: u8 = 0;
/// See [`LESS`].
pub(crate) const EQUAL: u8 = 1;
/// See [`LESS`].
pub(crate) const NOT_EQUAL: u8 = 2;

/// The per-plan constants of the kernels (identical meaning in every backend).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Consts {
    /// `256·N` along u and v, as f32 (exact): `fl(U'·256N) = 256·fl(U'·N)` (R25), so the
    /// fixed-point position of R27 is `rne(fl(U'·256N) − 128)` without a separate scaling.
    pub size256: [f32; 2],
    /// Largest first-tap index in the padded image per axis: `N + 2`.
    pub hi: [i32; 2],
    /// WRAP range reduction (R24) on the axis, else the CLAMP/BORDER one.
    pub wrap: [bool; 2],
    /// Any axis wraps.
    pub any_wrap: bool,
    /// Point sampling: one texel, `F = floor(fl(U'·256N)) & !255` (R26), or with `floor` off the
    /// legacy `rne(fl(U'·256N)) & !255`.
    pub point: bool,
    /// Point sampling with R26's `floor` (instead of the legacy round-to-nearest-even).
    pub floor: bool,
    /// Entries (key pairs) per row of the image: the padded row's `W + 4`, rounded up to whole
    /// cache lines in a lazy image (`keys::Layout`).
    pub stride: i32,
    /// The key image is large (`PREFETCH_BYTES`): the SIMD kernels prefetch ahead.
    pub prefetch: bool,
    /// The integer test every tap makes.
    pub test: Test,
    /// How references are quantized.
    pub ref_kind: RefKind,
    /// UNORM `2^n − 1` as f64 (R83).
    pub unorm_max: f64,
    /// Reference key transform: `(key ^ ref_xor) + ref_add` (order reversal, ≤ → <).
    pub ref_xor: i32,
    /// See `ref_xor`.
    pub ref_add: i32,
}

/// The key a NaN texel gets: below every reference key, so `ref < key` and `ref == key` fail.
pub(crate) const NAN_TEXEL: i32 = i32::MIN;
/// The key a NaN reference gets: above every texel key, so both tests fail.
pub(crate) const NAN_REF: i32 = i32::MAX;

/// Key images above this size (well past a core's L2, up against the shared L3) are prefetched
/// ahead by the SIMD kernels; below it the prefetches cost more than they save (measured).
const PREFETCH_BYTES: usize = 4 << 20;

/// Lookups per chunk of `run_projected` (projected into a stack buffer, then looked up).
const PROJECT_CHUNK: usize = 1024;

impl Sampler {
    /// Prepares a batch of `sample_c_lz` lookups on view element `slice` of `tex`: the array
    /// coordinate of a Texture2DArray (R43: rounded and clamped to the view's elements like the
    /// coordinate of a single lookup), ignored by a Texture2D. Other dimensions take the
    /// reference path with `[u, v, slice]` as their coordinate, exactly as a single call would.
    ///
    /// Validates like [`Sampler::sample_cmp`] (R17 pairing, R77 dimension and format, R18) and
    /// resolves what `sample_c_lz` keeps constant across lookups. May copy the sampled level into
    /// a key image (O(texels); see the [module docs](crate::sample::batch)).
    pub fn cmp_level_zero_batch(&self, tex: &Texture, slice: u32) -> Result<CmpBatch, SampleError> {
        crate::zone!("penumbra::cmp_level_zero_batch");
        self.check_kind("sample_c", true)?;
        self.check_compare_target("sample_c", tex)?;
        self.check_non_normalized(tex)?;
        let coord = Coord([0.0, 0.0, slice as f32, 0.0]);
        let element = Self::element(tex, &coord);
        let plan = self.plan(tex, element, Fill::Eager);
        Ok(CmpBatch {
            sampler: *self,
            tex: Some(tex.clone()),
            element,
            third: slice as f32,
            backend: CpuExtension::default(),
            plan,
        })
    }

    /// A batch over `tex` whose key image starts empty and is filled region by region with
    /// [`CmpBatch::refresh`] as the texels are written (a map drawn tile by tile). `None`
    /// unless the kernels or a constant answer the lookups (never the reference path, which
    /// would read the texture).
    ///
    /// `spare`: a key image taken from a dropped lazy batch ([`CmpBatch::take_keys`]), used
    /// as this batch's image when it has the size and key type (its old contents stay: the
    /// caller refreshes every region before reading it), so that no new image is allocated
    /// (and a large one unmapped when it is dropped); dropped otherwise.
    pub(crate) fn cmp_level_zero_batch_lazy(
        &self,
        tex: &Texture,
        slice: u32,
        spare: Option<SpareKeys>,
    ) -> Option<CmpBatch> {
        crate::zone!("penumbra::cmp_level_zero_batch");
        self.check_kind("sample_c", true).ok()?;
        self.check_compare_target("sample_c", tex).ok()?;
        self.check_non_normalized(tex).ok()?;
        let coord = Coord([0.0, 0.0, slice as f32, 0.0]);
        let element = Self::element(tex, &coord);
        let plan = self.plan(tex, element, Fill::Lazy(spare.map(|k| k.0)));
        if matches!(plan, Plan::Reference) {
            return None;
        }
        Some(CmpBatch {
            sampler: *self,
            tex: None,
            element,
            third: slice as f32,
            backend: CpuExtension::default(),
            plan,
        })
    }

    fn plan(&self, tex: &Texture, element: u32, fill: Fill) -> Plan {
        let func = self.desc.comparison_func;
        match func {
            ComparisonFunc::None | ComparisonFunc::Never => return Plan::Constant(0.0),
            ComparisonFunc::Always => return Plan::Constant(1.0),
            _ => {}
        }
        let dim = tex.dimension();
        let modes = [self.desc.address_u, self.desc.address_v];
        let kernel_mode = |m| {
            matches!(
                m,
                AddressMode::Clamp | AddressMode::Border | AddressMode::Wrap
            )
        };
        if !matches!(dim, Dimension::Texture2D | Dimension::Texture2DArray)
            || self.non_normalized()
            || !modes.into_iter().all(kernel_mode)
            || tex.format().kind() == ComponentKind::Float16
        {
            return Plan::Reference;
        }
        let coord = Coord::default();
        let lod = self.compute_lod(tex, &coord, &LodMode::Zero, None);
        let (filter, _) = self.effective_filter(dim, &LodMode::Zero);
        let format = tex.format();
        if lod.empty {
            return KernelPlan::empty_set(self, format).map_or(Plan::Reference, Plan::Kernel);
        }
        let mips = lod::select_mips(
            lod.clamped,
            filter.mip_filter() == FilterType::Linear,
            tex.view().mip_count,
        );
        if mips.count != 1 {
            return Plan::Reference;
        }
        let ty = if mips.magnify {
            filter.mag_filter()
        } else {
            filter.min_filter()
        };
        let (level, linear) = (mips.levels[0].0, ty == FilterType::Linear);
        let view = tex.view();
        let mip = view.most_detailed_mip + level;
        let slice = view.first_slice + element;
        KernelPlan::build(self, tex, mip, slice, linear, fill).map_or(Plan::Reference, Plan::Kernel)
    }
}

impl CmpBatch {
    /// The same batch on another CPU extension (tests and benches; a level without a batch
    /// kernel of its own runs the widest one below it); refused when this CPU or build cannot
    /// run it.
    pub fn with_backend(mut self, backend: CpuExtension) -> Result<Self, BatchError> {
        if !backend.is_supported() {
            return Err(BatchError::Unavailable(backend));
        }
        self.backend = backend;
        Ok(self)
    }

    /// The CPU extension `run` uses.
    #[must_use]
    #[inline]
    pub fn backend(&self) -> CpuExtension {
        self.backend
    }

    /// Which path answers the lookups.
    #[must_use]
    pub fn path(&self) -> BatchPath {
        match self.plan {
            Plan::Constant(_) => BatchPath::Constant,
            Plan::Kernel(_) => BatchPath::Kernel,
            Plan::Reference => BatchPath::Reference,
        }
    }

    /// The view element (array slice, R43) a Texture2DArray batch reads; 0 for other views.
    #[must_use]
    #[inline]
    pub fn element(&self) -> u32 {
        self.element
    }

    /// `out[i] = sample_cmp_level_zero(tex, [uv[i][0], uv[i][1], slice], refs[i])`, bit for bit.
    pub fn run(&self, uv: &[[f32; 2]], refs: &[f32], out: &mut [f32]) -> Result<(), BatchError> {
        if uv.len() != refs.len() || uv.len() != out.len() {
            return Err(BatchError::Length {
                uv: uv.len(),
                refs: refs.len(),
                out: out.len(),
            });
        }
        crate::zone!("penumbra::CmpBatch::run");
        crate::plot!("cmp batch lookups", uv.len());
        self.lookup(uv, refs, out);
        Ok(())
    }

    /// Projects world points with `view_proj` and looks them up as [`CmpBatch::run`] does.
    ///
    /// Per point `p`, in plain f32 operations (each rounded once, never fused) in exactly this
    /// order, in every backend: `clip_r = ((m[0][r]·x + m[1][r]·y) + m[2][r]·z) + m[3][r]` for
    /// the rows r = x, y, z, w (`m[c]` = column c of `view_proj`); `ndc = clip.xyz / clip.w`;
    /// `u = 0.5·ndc.x + 0.5`; `v = 0.5 − 0.5·ndc.y`; `ref = ndc.z + depth_bias`.
    pub fn run_projected(
        &self,
        view_proj: &glam::Mat4,
        points: &[glam::Vec3],
        depth_bias: f32,
        out: &mut [f32],
    ) -> Result<(), BatchError> {
        if points.len() != out.len() {
            return Err(BatchError::ProjectedLength {
                points: points.len(),
                out: out.len(),
            });
        }
        crate::zone!("penumbra::CmpBatch::run_projected");
        crate::plot!("cmp batch lookups", points.len());
        let m = view_proj.to_cols_array_2d();
        let mut uv = [[0.0f32; 2]; PROJECT_CHUNK];
        let mut refs = [0.0f32; PROJECT_CHUNK];
        for (pts, out) in points
            .chunks(PROJECT_CHUNK)
            .zip(out.chunks_mut(PROJECT_CHUNK))
        {
            let n = pts.len();
            self.project(&m, pts, depth_bias, &mut uv[..n], &mut refs[..n]);
            self.lookup(&uv[..n], &refs[..n], out);
        }
        Ok(())
    }

    fn project(
        &self,
        m: &[[f32; 4]; 4],
        pts: &[glam::Vec3],
        bias: f32,
        uv: &mut [[f32; 2]],
        refs: &mut [f32],
    ) {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_backend` and `CpuExtension::default` only pick supported levels.
            CpuExtension::Avx2 => unsafe { avx2::project(m, pts, bias, uv, refs) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            CpuExtension::Avx512bw => unsafe { avx512::project(m, pts, bias, uv, refs) },
            _ => project_points(m, pts, bias, uv, refs),
        }
    }

    fn lookup(&self, uv: &[[f32; 2]], refs: &[f32], out: &mut [f32]) {
        match &self.plan {
            Plan::Constant(v) => out.fill(*v),
            Plan::Reference => {
                for ((&[u, v], &r), o) in uv.iter().zip(refs).zip(out.iter_mut()) {
                    *o = crate::sample::validated(
                        self.sampler.sample_cmp_level_zero(
                            self.tex.as_ref(),
                            [u, v, self.third],
                            r,
                            (),
                        ),
                        0.0,
                    );
                }
            }
            Plan::Kernel(k) => {
                let c = &k.consts;
                let lead = k.lead;
                match (&k.keys, self.backend) {
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: only available backends are ever selected; the key image has the
                    // padded size the constants describe.
                    (Keys::U16(keys), CpuExtension::Avx2) => unsafe {
                        avx2::run_u16(c, &keys[lead..], uv, refs, out)
                    },
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: as above.
                    (Keys::I32(keys), CpuExtension::Avx2) => unsafe {
                        avx2::run_i32(c, &keys[lead..], uv, refs, out)
                    },
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: as above.
                    (Keys::U16(keys), CpuExtension::Avx512bw) => unsafe {
                        avx512::run_u16(c, &keys[lead..], uv, refs, out)
                    },
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: as above.
                    (Keys::I32(keys), CpuExtension::Avx512bw) => unsafe {
                        avx512::run_i32(c, &keys[lead..], uv, refs, out)
                    },
                    (Keys::U16(keys), _) => scalar::run_u16(c, &keys[lead..], uv, refs, out),
                    (Keys::I32(keys), _) => scalar::run_i32(c, &keys[lead..], uv, refs, out),
                }
            }
        }
    }
}

/// The projection of [`CmpBatch::run_projected`], written once so that every backend performs
/// the same operations in the same order (Rust never fuses a multiply and an add on its own; the
/// SIMD backends compile this loop with their target features, vectorized but not reordered).
#[inline(always)]
pub(crate) fn project_points(
    m: &[[f32; 4]; 4],
    pts: &[glam::Vec3],
    bias: f32,
    uv: &mut [[f32; 2]],
    refs: &mut [f32],
) {
    for ((p, uv), r) in pts.iter().zip(uv.iter_mut()).zip(refs.iter_mut()) {
        let row = |i: usize| ((m[0][i] * p.x + m[1][i] * p.y) + m[2][i] * p.z) + m[3][i];
        let w = row(3);
        let (x, y, z) = (row(0) / w, row(1) / w, row(2) / w);
        *uv = [0.5 * x + 0.5, 0.5 - 0.5 * y];
        *r = z + bias;
    }
}

#[cfg(test)]
mod refresh_tests {
    use super::*;
    use crate::desc::{Filter, SamplerDesc};
    use crate::texture::TextureDesc;

    /// The entries of a plan's key image, row by row, without what its layout puts around
    /// them (a lazy image's lead and the rows' tails).
    fn keys(b: &CmpBatch) -> Vec<i32> {
        let Plan::Kernel(p) = &b.plan else {
            panic!("a kernel plan")
        };
        let all: Vec<i32> = match &p.keys {
            Keys::U16(v) => v.iter().map(|&k| i32::from(k)).collect(),
            Keys::I32(v) => v.clone(),
        };
        let stride = p.consts.stride as usize;
        let (cols, rows) = match &p.padding {
            Some(pad) => (pad.cols.len(), pad.rows.len() - 1),
            None => (stride, all.len() / (2 * stride)),
        };
        let mut out = Vec::with_capacity(2 * cols * rows);
        for q in 0..rows {
            let row = p.lead + 2 * q * stride;
            out.extend_from_slice(&all[row..row + 2 * cols]);
        }
        out
    }

    /// Where a key image lies.
    fn image_at(keys: &Keys) -> *const u8 {
        match keys {
            Keys::U16(v) => v.as_ptr().cast(),
            Keys::I32(v) => v.as_ptr().cast(),
        }
    }

    /// Where a kernel plan's key image lies.
    fn keys_at(b: &CmpBatch) -> *const u8 {
        match &b.plan {
            Plan::Kernel(p) => image_at(&p.keys),
            _ => panic!("a kernel plan"),
        }
    }

    /// A lazy batch refreshed rectangle by rectangle over the whole level holds the key image
    /// an eager build makes, for every address mode a tiled map uses, every kernel format,
    /// odd sizes, and texels of every kind (NaN, ±inf, denormals, −0); every other round the
    /// batch starts from a spare image holding another texture's keys, which it takes over
    /// and whose every key the refreshes replace.
    #[test]
    fn a_lazy_batch_refreshed_region_by_region_holds_the_eager_key_image() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x7265_6672);
        let formats = [
            Format::D32Float,
            Format::R32Float,
            Format::R32FloatX8X24Typeless,
            Format::D16Unorm,
            Format::R16Unorm,
            Format::R24UnormX8Typeless,
        ];
        let modes = [AddressMode::Clamp, AddressMode::Border, AddressMode::Wrap];
        let funcs = [ComparisonFunc::LessEqual, ComparisonFunc::Greater];
        for round in 0..120 {
            let format = formats[round % formats.len()];
            let (w, h) = (1 + rng.below_mod(150) as u32, 1 + rng.below_mod(40) as u32);
            let desc = TextureDesc::new_2d(format, w, h);
            let mut data = vec![0u8; desc.total_bytes() as usize];
            for b in &mut data {
                *b = rng.next_u32() as u8;
            }
            for t in data.chunks_exact_mut(format.bytes_per_texel()) {
                if format.kind() == ComponentKind::Float32 && rng.below_mod(4) == 0 {
                    t[..4].copy_from_slice(&rng.f32_special().to_le_bytes());
                }
            }
            let tex = Texture::new(desc, data).unwrap();
            let mut d =
                SamplerDesc::comparison(Filter::ComparisonMinMagLinearMipPoint, funcs[round % 2]);
            d.address_u = modes[rng.index_mod(3)];
            d.address_v = modes[rng.index_mod(3)];
            d.border_color = [rng.f32_in(0.0, 1.0), 0.0, 0.0, 1.0];
            let s = Sampler::new(d).unwrap();
            let eager = s.cmp_level_zero_batch(&tex, 0).unwrap();
            let spare = (round % 2 == 1).then(|| {
                // The same shape, other texels: stale keys for the new batch.
                let mut other = tex.subresource(0, 0).to_vec();
                for b in &mut other {
                    *b = b.wrapping_add(1 + rng.next_u32() as u8 % 200);
                }
                let other = Texture::new(desc, other).unwrap();
                let mut old = s.cmp_level_zero_batch_lazy(&other, 0, None).unwrap();
                old.refresh(other.subresource(0, 0), [0, 0, w - 1, h - 1]);
                old.take_keys().unwrap()
            });
            let spare_at = spare.as_ref().map(|k| image_at(&k.0));
            let mut lazy = s.cmp_level_zero_batch_lazy(&tex, 0, spare).unwrap();
            if let Plan::Kernel(p) = &lazy.plan {
                // Every row's first texel entry starts a cache line (`Layout`).
                let key = if matches!(p.keys, Keys::U16(_)) { 2 } else { 4 };
                let first = keys_at(&lazy) as usize + key * (p.lead + 4);
                let row = 2 * key * p.consts.stride as usize;
                assert_eq!((first % 64, row % 64), (0, 0), "round {round}: {format}");
            }
            if let Some(at) = spare_at {
                assert_eq!(
                    keys_at(&lazy),
                    at,
                    "round {round}: the spare image is taken over"
                );
            }
            // Rectangles of random sizes, row band after row band, covering the level.
            let mut y = 0;
            while y < h {
                let y1 = (y + rng.below_mod(9) as u32).min(h - 1);
                let mut x = 0;
                while x < w {
                    // Mostly tile-sized, sometimes wider than the refresh's 64-texel runs.
                    let reach = if rng.below_mod(4) == 0 { 100 } else { 33 };
                    let x1 = (x + rng.below_mod(reach) as u32).min(w - 1);
                    lazy.refresh(tex.subresource(0, 0), [x, y, x1, y1]);
                    x = x1 + 1;
                }
                y = y1 + 1;
            }
            assert!(
                keys(&lazy) == keys(&eager),
                "round {round}: {format} {w}×{h} {:?}/{:?}",
                d.address_u,
                d.address_v
            );
        }
    }

    /// Texels written back from a lazy batch's keys are each texel as the scalar sampler's
    /// comparisons see it: the same bits, except +0 for −0 and denormals (flushed first, R6,
    /// R85) and the quiet NaN for every NaN; so every comparison, of every function, at any
    /// position, answers the same on them as on the original texels. Formats whose keys do
    /// not hold a whole texel give nothing back.
    #[test]
    fn texels_from_keys_compare_as_the_texels_they_were_made_from() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x6b65_7973);
        let formats = [
            Format::D32Float,
            Format::R32Float,
            Format::D16Unorm,
            Format::R16Unorm,
            Format::R32FloatX8X24Typeless,
            Format::R24UnormX8Typeless,
        ];
        let funcs = [
            ComparisonFunc::LessEqual,
            ComparisonFunc::Greater,
            ComparisonFunc::Equal,
            ComparisonFunc::NotEqual,
        ];
        for round in 0..48 {
            let format = formats[round % formats.len()];
            let (w, h) = (1 + rng.below_mod(70) as u32, 1 + rng.below_mod(40) as u32);
            let desc = TextureDesc::new_2d(format, w, h);
            let mut data = vec![0u8; desc.total_bytes() as usize];
            for b in &mut data {
                *b = rng.next_u32() as u8;
            }
            let float = format.kind() == ComponentKind::Float32;
            for t in data.chunks_exact_mut(format.bytes_per_texel()) {
                if float && rng.below_mod(2) == 0 {
                    let v = match rng.below_mod(4) {
                        0 => -0.0,
                        1 => f32::from_bits(rng.below_mod(0x0080_0000) as u32),
                        _ => rng.f32_special(),
                    };
                    t[..4].copy_from_slice(&v.to_le_bytes());
                } else if float {
                    t[..4].copy_from_slice(&rng.f32_in(-0.5, 1.5).to_le_bytes());
                }
            }
            let tex = Texture::new(desc, data).unwrap();
            let mut d =
                SamplerDesc::comparison(Filter::ComparisonMinMagLinearMipPoint, funcs[round % 4]);
            d.address_u = AddressMode::Clamp;
            d.address_v = AddressMode::Wrap;
            let s = Sampler::new(d).unwrap();
            let mut lazy = s.cmp_level_zero_batch_lazy(&tex, 0, None).unwrap();
            lazy.refresh(tex.subresource(0, 0), [0, 0, w - 1, h - 1]);
            let writer = lazy.key_writer().unwrap();
            let decodable = matches!(
                format,
                Format::D32Float | Format::R32Float | Format::D16Unorm | Format::R16Unorm
            );
            assert_eq!(writer.texels_kind().is_some(), decodable, "{format}");
            let mut back = vec![0u8; desc.total_bytes() as usize];
            // Rectangle by rectangle, as tiles are.
            let mut y = 0;
            while y < h {
                let y1 = (y + rng.below_mod(9) as u32).min(h - 1);
                let mut x = 0;
                while x < w {
                    let x1 = (x + rng.below_mod(33) as u32).min(w - 1);
                    // SAFETY: `back` is borrowed mutably here alone; nothing writes the keys.
                    let ok = unsafe {
                        writer.texels_from_keys(back.as_mut_ptr(), back.len(), [x, y, x1, y1])
                    };
                    assert_eq!(ok, decodable, "{format}");
                    x = x1 + 1;
                }
                y = y1 + 1;
            }
            if !decodable {
                assert!(back.iter().all(|&b| b == 0), "{format}: nothing written");
                continue;
            }
            let bpt = format.bytes_per_texel();
            for (a, b) in tex
                .subresource(0, 0)
                .chunks_exact(bpt)
                .zip(back.chunks_exact(bpt))
            {
                if float {
                    let a = u32::from_le_bytes(a.try_into().unwrap());
                    let b = u32::from_le_bytes(b.try_into().unwrap());
                    let want = if f32::from_bits(a).is_nan() {
                        0x7FC0_0000
                    } else if a & 0x7FFF_FFFF < 0x0080_0000 {
                        0
                    } else {
                        a
                    };
                    assert_eq!(b, want, "{format}: {a:#x}");
                } else {
                    assert_eq!(a, b, "{format}");
                }
            }
            let back = Texture::new(desc, back).unwrap();
            for _ in 0..400 {
                let uv = [rng.f32_in(-0.2, 1.2), rng.f32_in(-0.2, 1.2)];
                let r = if rng.below_mod(5) == 0 {
                    rng.f32_special()
                } else {
                    rng.f32_in(-0.5, 1.5)
                };
                let want = s.sample_cmp_level_zero(Some(&tex), uv, r, [0, 0]).unwrap();
                let got = s.sample_cmp_level_zero(Some(&back), uv, r, [0, 0]).unwrap();
                assert_eq!(got.to_bits(), want.to_bits(), "{format} {uv:?} {r}");
            }
        }
    }
}
