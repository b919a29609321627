//! A depth-only triangle rasterizer that follows D3D12's rasterization rules, for baking shadow
//! maps and other depth buffers on the CPU.
//!
//! [`rasterize`] draws indexed triangle meshes ([`Mesh`], placed by [`Instance`]s) into a
//! D32_FLOAT or D16_UNORM [`DepthTarget`] seen through a view-projection matrix, the way a D3D12
//! pipeline with only a vertex shader (`SV_Position = view_proj · transform · position`) and a
//! depth-stencil target would draw them (rules as the D3D11.3 Functional Spec's rasterization
//! chapter states them, which D3D12 keeps):
//!
//! * **Clipping**: against `0 ≤ z ≤ w` when [`RasterState::depth_clip`] is on (D3D's
//!   default), and always against `w ≥ 2⁻²⁰` (just in front of the eye), so triangles that
//!   cross the camera plane or lie behind it are cut properly. The sides of the view volume are
//!   not clipped (a guard band of 16384 pixels round the target absorbs them); only triangles
//!   reaching past it are cut there.
//! * **Viewport** over the whole target, MinDepth 0, MaxDepth 1: `x = (x/w + 1)·W/2`,
//!   `y = (1 − y/w)·H/2` (NDC +1 is row 0), `z = z/w`.
//! * **Snapping** of x and y to 1/256 pixel (D3D's 8 sub-pixel bits), rounding to nearest even.
//!   Coverage is decided with exact integer edge functions on the snapped positions.
//! * **Coverage**: pixel centres at `(x + 0.5, y + 0.5)`; a centre exactly on an edge
//!   is inside only for a *top* edge (horizontal, above the other two) or a *left* edge. Two
//!   triangles that share an edge therefore never both cover a pixel, and never leave a gap.
//! * **Culling**: the facing of a triangle is its winding on screen; clockwise is front
//!   unless [`RasterState::front_counter_clockwise`]. Triangles of zero snapped area are dropped.
//! * **Depth**: `z/w`, interpolated linearly in screen space from the snapped vertices, plus the
//!   depth bias ([`DepthBias`]), then clamped to the viewport's [0, 1].
//! * **Depth test**: LESS (or GREATER, [`RasterState::depth_func`]) with writes; D16 compares and stores `float_to_unorm(depth, 16)`.
//!   Subnormal D32 results are flushed to +0 before the test (D3D's float32 rules).
//!
//! Vertices with NaN or infinite clip coordinates remove the triangles that use them.
//!
//! The target is split into [`TILE_SIZE`]² tiles. Triangles are set up once (in parallel chunks
//! of the submission), binned to the tiles their bounds and edges touch, then the tiles are drawn
//! in parallel, each walking its triangles in submission order; the result is bit-identical for
//! every thread count.
//!
//! [`rasterize_tiles`] draws chosen tiles only, finding their triangles through an
//! [`InstanceIndex`] (world space, over the instances) and each mesh's own hierarchy (object
//! space, built once per mesh): a tile drawn that way holds the bits the full draw gives it, at
//! a cost that follows the tile's triangles rather than the whole submission.
//!
//! [`InstanceIndex::raycast`] casts exact rays against the same hierarchies: the watertight
//! triangle test of Woop, Benthin and Wald (2013) in each instance's object space, nearest hit
//! first, ties broken by instance and then triangle index ([`TriangleRay`], [`RayHit`]).
//!
//! ```
//! use glam::camera::lh;
//! use glam::{Mat4, Vec3};
//! use penumbra_core::Format;
//! use penumbra_core::raster::{DepthTarget, Instance, Mesh, RasterState, rasterize};
//!
//! let cube = Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0));
//! let view = lh::view::look_at_mat4(Vec3::new(0.0, 0.0, -5.0), Vec3::ZERO, Vec3::Y);
//! let proj = lh::proj::directx::perspective(1.0, 1.0, 1.0, 10.0);
//! let mut target = DepthTarget::new(64, 64, Format::D32Float).unwrap();
//! let stats = rasterize(
//!     &mut target,
//!     proj * view,
//!     &[Instance::new(&cube, Mat4::IDENTITY)],
//!     &RasterState::default(),
//!     1,
//! );
//! assert_eq!(stats.triangles_in, 12);
//! assert_eq!(stats.triangles_drawn, 2); // only the face towards the camera is front-facing
//! assert!(target.depth(32, 32) < 1.0);
//! ```

mod draw;
mod index;
mod mesh;
mod ray;
mod setup;
mod target;
mod tile;
mod tiled;

use std::ops::Range;

use glam::Mat4;

use crate::cpu::CpuExtension;
use crate::format::Format;

pub(crate) use draw::{Area, EVERY_ROW, TileBuf};
pub use index::InstanceIndex;
pub use mesh::Mesh;
pub use ray::{RayHit, TriangleRay, ray_inverse, unit_direction};
pub(crate) use ray::{SORT_FROM, coherent_order};
pub use target::{DepthTarget, TILE_SIZE};
pub use tiled::rasterize_tiles;
pub(crate) use tiled::{Instances, TileDrawer, TileScratch};

/// Which faces are not drawn (`D3D12_CULL_MODE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CullMode {
    /// Draw every triangle (`D3D12_CULL_MODE_NONE`).
    None,
    /// Do not draw front-facing triangles (`D3D12_CULL_MODE_FRONT`).
    Front,
    /// Do not draw back-facing triangles (`D3D12_CULL_MODE_BACK`, the default).
    #[default]
    Back,
}

/// D3D12's depth bias (`DepthBias`, `SlopeScaledDepthBias`, `DepthBiasClamp` of
/// `D3D12_RASTERIZER_DESC`); all zero by default.
///
/// Per triangle, with `MaxDepthSlope = max(|∂z/∂x|, |∂z/∂y|)` in depth units per pixel:
///
/// * UNORM targets (D16): `bias = depth_bias · 2⁻¹⁶ + slope_scaled_depth_bias · MaxDepthSlope`;
/// * float targets (D32): `bias = depth_bias · 2^(e − 23) + slope_scaled_depth_bias ·
///   MaxDepthSlope`, where `e` is the binary exponent of the largest `z` of the triangle's
///   vertices (after clipping; a `z` of 0 or below counts as the smallest normal exponent, −126);
/// * then, when `depth_bias_clamp` is positive, `bias = min(bias, depth_bias_clamp)`, and when
///   it is negative, `bias = max(bias, depth_bias_clamp)`.
///
/// The bias is added to the interpolated depth of every pixel, before the clamp to [0, 1]. It is
/// computed in f32; a NaN bias counts as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthBias {
    /// Constant bias, in units of the format's resolution.
    pub depth_bias: i32,
    /// Factor of the triangle's largest depth slope.
    pub slope_scaled_depth_bias: f32,
    /// Largest magnitude of the bias (0: no clamp).
    pub depth_bias_clamp: f32,
}

/// The rasterizer state (the depth-relevant part of `D3D12_RASTERIZER_DESC`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RasterState {
    /// Which faces are culled.
    pub cull: CullMode,
    /// Front faces are counter-clockwise on screen instead of clockwise.
    pub front_counter_clockwise: bool,
    /// The depth bias.
    pub depth_bias: DepthBias,
    /// Clip against the near (`z = 0`) and far (`z = w`) planes (`DepthClipEnable`). When off,
    /// geometry in front of the near plane or past the far plane is drawn with its depth clamped
    /// to [0, 1] (pancaking, as shadow-map renderers use it).
    pub depth_clip: bool,
    /// The depth test: LESS (D3D12's usual shadow pass, the target cleared to 1) or GREATER
    /// (reverse depth, the target cleared to 0).
    pub depth_func: DepthFunc,
}

/// The depth test of a [`RasterState`] (with depth writes on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DepthFunc {
    /// `D3D12_COMPARISON_FUNC_LESS`: a pixel is written when nearer than the stored depth.
    #[default]
    Less,
    /// `D3D12_COMPARISON_FUNC_GREATER`: for reverse depth (near plane at 1).
    Greater,
}

impl Default for RasterState {
    /// D3D12's defaults: cull back faces, front faces clockwise, no bias, depth clip on.
    fn default() -> Self {
        RasterState {
            cull: CullMode::Back,
            front_counter_clockwise: false,
            depth_bias: DepthBias::default(),
            depth_clip: true,
            depth_func: DepthFunc::Less,
        }
    }
}

/// One placement of a mesh: its positions are transformed by `transform` (object → world)
/// before the view-projection.
#[derive(Clone, Copy, Debug)]
pub struct Instance<'a> {
    /// The mesh.
    pub mesh: &'a Mesh,
    /// Object-to-world matrix.
    pub transform: Mat4,
    /// This instance's cull mode instead of [`RasterState::cull`] (a material's cull mode).
    pub cull: Option<CullMode>,
}

impl<'a> Instance<'a> {
    /// An instance of `mesh` placed by `transform`, culled as the state says.
    #[must_use]
    pub fn new(mesh: &'a Mesh, transform: Mat4) -> Self {
        Instance {
            mesh,
            transform,
            cull: None,
        }
    }

    /// The same instance with its own cull mode.
    #[must_use]
    pub fn with_cull(mut self, cull: CullMode) -> Self {
        self.cull = Some(cull);
        self
    }
}

/// Something placed in the world that the tile drawer can draw: an [`Instance`], or a type of
/// a higher layer (an occluder) that owns its mesh.
pub(crate) trait Placed {
    fn mesh(&self) -> &Mesh;
    fn transform(&self) -> Mat4;
    fn cull(&self) -> Option<CullMode>;
}

impl Placed for Instance<'_> {
    fn mesh(&self) -> &Mesh {
        self.mesh
    }
    fn transform(&self) -> Mat4 {
        self.transform
    }
    fn cull(&self) -> Option<CullMode> {
        self.cull
    }
}

impl<'a> From<(&'a Mesh, Mat4)> for Instance<'a> {
    fn from((mesh, transform): (&'a Mesh, Mat4)) -> Self {
        Instance::new(mesh, transform)
    }
}

/// Counts from one [`rasterize`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RasterStats {
    /// Triangles submitted (all instances).
    pub triangles_in: u64,
    /// Triangles that survived clipping, culling and the degenerate test and whose bounds hold
    /// at least one pixel centre of the target (a triangle cut into pieces by clipping counts
    /// once).
    pub triangles_drawn: u64,
    /// Pixels that passed the depth test and were written.
    pub pixels_written: u64,
}

/// Errors of building meshes and targets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RasterError {
    /// The index count is not a multiple of three.
    #[error("a triangle list needs a multiple of 3 indices, got {len}")]
    IndexCount {
        /// Number of indices given.
        len: usize,
    },
    /// An index does not name a position.
    #[error("index {index} at position {at} is out of range for {vertex_count} vertices")]
    IndexOutOfRange {
        /// Where the index is in the index list.
        at: usize,
        /// Its value.
        index: u32,
        /// Number of positions.
        vertex_count: usize,
    },
    /// A target edge is 0 or larger than D3D12's 2D limit (16384).
    #[error("a depth target of {width}×{height}: each edge must be in 1..=16384")]
    InvalidSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The target format is not a depth format the rasterizer writes.
    #[error("{0} is not a depth target format (D32_FLOAT or D16_UNORM)")]
    UnsupportedFormat(Format),
}

/// Below this many vertices, transforming them is not split across threads.
const PARALLEL_VERTICES: usize = 8192;
/// Below this many triangles, setup is not split across threads.
const PARALLEL_TRIANGLES: usize = 2048;
/// Below this much estimated work (pixels of triangle bounds, plus a fixed cost per triangle
/// piece), tiles are not drawn in parallel.
const PARALLEL_RASTER_WORK: u64 = 1 << 16;

/// Draws `instances` into `target` through `view_proj` with the rules of the [module](self),
/// using up to `threads` threads (0 counts as 1) when the work is large enough to gain from
/// them. The depths written do not depend on `threads`.
///
/// Under a [deadline](crate::deadline) that passes during the call, the tiles not yet drawn are
/// skipped and the target is incomplete: a caller that sets a deadline asks
/// [`deadline::expired`](crate::deadline::expired) afterwards (tiles are skipped only once it
/// has passed, and time only moves on, so `false` then means the target is whole).
pub fn rasterize(
    target: &mut DepthTarget,
    view_proj: Mat4,
    instances: &[Instance<'_>],
    state: &RasterState,
    threads: usize,
) -> RasterStats {
    rasterize_using(
        target,
        view_proj,
        instances,
        state,
        threads,
        CpuExtension::default(),
    )
}

/// [`rasterize`] on the drawing kernel of `ext` (the widest one at or below it that this CPU
/// runs): every kernel writes the same bits. For tests and benches.
#[doc(hidden)]
pub fn rasterize_using(
    target: &mut DepthTarget,
    view_proj: Mat4,
    instances: &[Instance<'_>],
    state: &RasterState,
    threads: usize,
    ext: CpuExtension,
) -> RasterStats {
    crate::zone!("penumbra::raster::rasterize");
    let threads = threads.max(1);
    let ctx = setup::Context::new(target.width(), target.height(), target.format(), state);

    // Where each instance's vertices and triangles start in the concatenated submission.
    let mut vertex_base = Vec::with_capacity(instances.len() + 1);
    let mut triangle_base = Vec::with_capacity(instances.len() + 1);
    let (mut nv, mut nt) = (0usize, 0usize);
    for inst in instances {
        vertex_base.push(nv);
        triangle_base.push(nt);
        nv += inst.mesh.positions().len();
        nt += inst.mesh.triangle_count();
    }
    vertex_base.push(nv);
    triangle_base.push(nt);
    let matrices: Vec<Mat4> = instances.iter().map(|i| view_proj * i.transform).collect();

    let scene = Scene {
        instances,
        matrices: &matrices,
        vertex_base: &vertex_base,
        triangle_base: &triangle_base,
    };
    // The vector transform and set-up make the scalar code's bits.
    let lanes = setup::Lanes::of(ext);
    let vertices = scene.transform(&ctx, nv, threads, lanes);
    let (tiles_x, tiles_y) = target.tile_grid();
    let grid = tile::Grid {
        tiles_x,
        tiles_y,
        width: target.width(),
        height: target.height(),
    };
    let chunks = scene.setup(&ctx, &vertices, &grid, nt, threads, lanes);
    drop(vertices);
    let triangles_drawn = chunks.iter().map(|c| c.drawn).sum();
    let work: u64 = chunks.iter().map(|c| c.work).sum();
    let raster_threads = if work >= PARALLEL_RASTER_WORK {
        threads
    } else {
        1
    };
    let pixels_written = tile::draw(
        target,
        &grid,
        &chunks,
        raster_threads,
        state.depth_func == DepthFunc::Greater,
        ext,
    );
    crate::plot!("penumbra::raster triangles drawn", triangles_drawn);
    crate::plot!("penumbra::raster pixels written", pixels_written);
    RasterStats {
        triangles_in: nt as u64,
        triangles_drawn,
        pixels_written,
    }
}

/// The submission, flattened: instance `i` owns vertices `vertex_base[i]..vertex_base[i + 1]`
/// and triangles `triangle_base[i]..triangle_base[i + 1]` of the concatenation.
struct Scene<'s, 'a> {
    instances: &'s [Instance<'a>],
    matrices: &'s [Mat4],
    vertex_base: &'s [usize],
    triangle_base: &'s [usize],
}

/// Jobs per thread when work is split: enough for the threads to even out.
const JOBS_PER_THREAD: usize = 4;

/// Triangles set up between two [`tile::Chunk::index`] calls: their records (64 bytes each)
/// stay in the second-level cache until indexed.
const SETUP_PART: usize = 2048;

/// Runs `work` on every item of `items` on up to `threads` threads (the caller's included),
/// handing the items out one at a time, and returns the sum of the results. A panic in `work`
/// is re-raised in the caller.
pub(crate) fn run_parallel<I, F>(items: I, threads: usize, work: F) -> u64
where
    I: Iterator + Send,
    I::Item: Send,
    F: Fn(I::Item) -> u64 + Sync,
{
    let threads = threads
        .min(items.size_hint().1.unwrap_or(usize::MAX))
        .max(1);
    let queue = std::sync::Mutex::new(items);
    // Helpers work under the caller's deadline.
    let deadline = crate::deadline::current();
    let worker = || {
        let mut sum = 0;
        loop {
            // The lock is released before the item is worked on.
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            match next {
                Some(item) => sum += work(item),
                None => return sum,
            }
        }
    };
    if threads > 1 {
        // The pool's parked helpers first; threads of its own when the pool is serving
        // another pass.
        let total = std::sync::atomic::AtomicU64::new(0);
        let task = || {
            let sum = crate::deadline::with_deadline(deadline, worker);
            total.fetch_add(sum, std::sync::atomic::Ordering::Relaxed);
        };
        if crate::pool::run(threads - 1, &task) {
            return total.into_inner();
        }
    }
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| s.spawn(|| crate::deadline::with_deadline(deadline, worker)))
            .collect();
        let mut sum = worker();
        for h in helpers {
            sum += h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
        sum
    })
}

/// Splits `0..len` into `parts` contiguous ranges of nearly equal length.
fn split(len: usize, parts: usize) -> impl Iterator<Item = Range<usize>> {
    (0..parts).map(move |p| len * p / parts..len * (p + 1) / parts)
}

/// The instance that owns element `global` of a concatenation with these `bases`.
fn owner(bases: &[usize], global: usize) -> usize {
    bases.partition_point(|&b| b <= global) - 1
}

/// The parts of `range` (of a concatenation with these `bases`, one more than there are
/// instances) that each instance owns: the instance, and its own elements in that part.
fn parts(bases: &[usize], range: Range<usize>) -> impl Iterator<Item = (usize, Range<usize>)> {
    let first = if range.is_empty() {
        bases.len()
    } else {
        owner(bases, range.start)
    };
    (first..bases.len() - 1)
        .take_while(move |&i| bases[i] < range.end)
        .map(move |i| {
            let (lo, hi) = (bases[i].max(range.start), bases[i + 1].min(range.end));
            (i, lo - bases[i]..hi - bases[i])
        })
}

impl Scene<'_, '_> {
    /// Transforms every vertex of every instance to clip space and projects the ones inside the
    /// clip volume (vertex shading, done once per vertex).
    fn transform(
        &self,
        ctx: &setup::Context,
        nv: usize,
        threads: usize,
        lanes: setup::Lanes,
    ) -> Vec<setup::Vertex> {
        crate::zone!("penumbra::raster::transform");
        let mut out = vec![setup::Vertex::default(); nv];
        let fill = |slice: &mut [setup::Vertex], start: usize| {
            // Instance by instance: the part of each that falls in this slice.
            let range = start..start + slice.len();
            let mut at = 0;
            for (inst, own) in parts(self.vertex_base, range) {
                let positions = &self.instances[inst].mesh.positions()[own];
                let out = &mut slice[at..at + positions.len()];
                ctx.vertices(&self.matrices[inst], positions, out, lanes);
                at += positions.len();
            }
        };
        if threads > 1 && nv >= PARALLEL_VERTICES {
            let per = nv.div_ceil(threads * JOBS_PER_THREAD);
            run_parallel(out.chunks_mut(per).enumerate(), threads, |(c, slice)| {
                fill(slice, c * per);
                0
            });
        } else {
            fill(&mut out, 0);
        }
        out
    }

    /// Sets up and bins every triangle, in contiguous chunks of the submission (one when the
    /// work is small, else [`JOBS_PER_THREAD`] per thread); the chunks come back in
    /// submission order.
    fn setup(
        &self,
        ctx: &setup::Context,
        vertices: &[setup::Vertex],
        grid: &tile::Grid,
        nt: usize,
        threads: usize,
        lanes: setup::Lanes,
    ) -> Vec<tile::Chunk> {
        crate::zone!("penumbra::raster::setup");
        let run = |range: Range<usize>| {
            let mut chunk = tile::Chunk::with_capacity(range.len());
            // Instance by instance: the part of each that falls in this range.
            for (inst, own) in parts(self.triangle_base, range) {
                let mesh_vertices = &vertices[self.vertex_base[inst]..self.vertex_base[inst + 1]];
                let cull = self.instances[inst].cull;
                let indices = &self.instances[inst].mesh.indices()[3 * own.start..3 * own.end];
                // A few thousand triangles at a time, each part's records indexed to tiles
                // while they are still in the cache.
                for part in indices.chunks(3 * SETUP_PART) {
                    chunk.drawn += ctx.triangles(mesh_vertices, part, cull, lanes, &mut chunk.tris);
                    chunk.index(grid);
                }
            }
            chunk.bin(grid);
            chunk
        };
        if threads > 1 && nt >= PARALLEL_TRIANGLES {
            // More jobs than threads, handed out on demand, so that a thread that gets less
            // of the machine does less of the work; the chunks are put back in order.
            let jobs = threads * JOBS_PER_THREAD;
            let done = std::sync::Mutex::new(Vec::with_capacity(jobs));
            run_parallel(split(nt, jobs).enumerate(), threads, |(i, range)| {
                let chunk = run(range);
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, chunk));
                0
            });
            let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
            done.sort_unstable_by_key(|&(i, _)| i);
            done.into_iter().map(|(_, chunk)| chunk).collect()
        } else {
            vec![run(0..nt)]
        }
    }
}
