//! Drawing single tiles of a target from only the triangles that can reach them.
//!
//! [`TileDrawer`] holds what one view of a submission needs (the per-instance matrices, the
//! set-up context, the tile grid); [`TileDrawer::draw`] finds a tile's triangles through the
//! [`InstanceIndex`] and each mesh's own hierarchy (a mesh of a few triangles, a box, is taken
//! whole), sets them up exactly as [`rasterize`] does, with the same vector code (the same
//! vertex transform `(view_proj · transform) · p`, the same clipping, snapping and depth plane)
//! and draws them into the tile with the same per-tile arithmetic. The depth
//! test with writes keeps the nearest value whatever the order triangles come in, so a tile
//! drawn here holds, bit for bit, what a full [`rasterize`] of the same submission writes there.
//!
//! [`rasterize`]: super::rasterize

use glam::{DVec4, Mat4, Vec3};

use super::draw::{self, Area, TileBuf};
use super::index::{InstanceIndex, Plane};
use super::setup::{self, Tri};
use super::target::TILE_SIZE;
use super::tile::Grid;
use super::{DepthFunc, DepthTarget, Instance, Mesh, Placed, RasterState, RasterStats};
use crate::cpu::CpuExtension;
use crate::format::Format;

/// Pixels of margin round a tile when its triangles are looked up: covers snapping (1/512
/// pixel) and the rounding of the viewport transform with room to spare.
const MARGIN: f64 = 2.0;

/// Reusable buffers of [`TileDrawer::draw`].
#[derive(Debug, Default)]
pub(crate) struct TileScratch {
    tris: Vec<Tri>,
    /// The set-up pieces of `tris` that reach the tile being drawn, when one collection serves
    /// several tiles ([`TileDrawer::draw_collected`]).
    items: Vec<u32>,
    /// The bounds of `tris`' pieces, one list per side (x0, y0, x1, y1): each tile of a
    /// collection tests all of them, which the compiler then does many at a time.
    sides: [Vec<u16>; 4],
    /// One byte per piece, whether it meets the tile being drawn.
    meets: Vec<u8>,
    /// The pixel rectangle `tris` was collected for.
    collected: [i32; 4],
    /// The instances a walk of the instance hierarchy reached, in its order.
    reached: Vec<u32>,
    /// Where the instance being set up has put each mesh vertex in its compact list,
    /// direct-mapped by index: the triangles of a mesh share vertices (a height field's, six
    /// each), so most are found here instead of listed again. Tagged with `epoch`, which each
    /// instance moves on.
    cache: Vec<(u64, u32)>,
    epoch: u32,
    /// The instance's triangles to set up: the positions of their vertices (each once, give or
    /// take cache collisions) and three indices into them per triangle.
    positions: Vec<Vec3>,
    indices: Vec<u32>,
    /// Those positions transformed.
    vertices: Vec<setup::Vertex>,
}

/// Meshes of at most this many triangles (and twice as many vertices) are set up whole,
/// without a walk of their hierarchy: a box's twelve triangles take one batch of the vector
/// set-up's lanes.
const SMALL_MESH: usize = 16;

/// Slots of the vertex cache (a power of two).
const CACHE_SLOTS: usize = 256;

impl TileScratch {
    /// Starts the cache and the lists afresh for the next instance.
    fn next_instance(&mut self) {
        if self.cache.is_empty() {
            self.cache = vec![(u64::MAX, 0); CACHE_SLOTS];
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Tags of 2³² instances ago could match again: forget them all.
            self.cache.fill((u64::MAX, 0));
            self.epoch = 1;
        }
        self.positions.clear();
        self.indices.clear();
    }

    /// Lists vertex `k` of the current instance (at `position`) unless the cache has it, and
    /// its index into the compact list.
    #[inline(always)]
    fn vertex(&mut self, k: u32, position: Vec3) -> u32 {
        let tag = (u64::from(self.epoch) << 32) | u64::from(k);
        let slot = &mut self.cache[k as usize & (CACHE_SLOTS - 1)];
        if slot.0 != tag {
            *slot = (tag, self.positions.len() as u32);
            self.positions.push(position);
        }
        slot.1
    }
}

/// One view of one submission, ready to draw tile by tile.
pub(crate) struct TileDrawer<'a, P> {
    instances: &'a [P],
    index: &'a InstanceIndex,
    view_proj: Mat4,
    ctx: setup::Context,
    /// The vector code the vertex transform and the set-up run.
    lanes: setup::Lanes,
    grid: Grid,
    greater: bool,
    depth_clip: bool,
}

/// What drawing one tile did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TileStats {
    /// Set-up pieces drawn into the tile.
    pub pieces: u64,
    /// Pixels written.
    pub written: u64,
    /// Pieces skipped by the coarse depth test (they could not pass a single depth test).
    pub rejected: u64,
}

impl<'a, P: Placed + Sync> TileDrawer<'a, P> {
    /// Nothing is computed per instance here: a tile pays only for the instances it meets.
    ///
    /// # Panics
    /// If `index` does not index `instances` (a different length).
    pub(crate) fn new(
        width: u32,
        height: u32,
        format: Format,
        view_proj: Mat4,
        instances: &'a [P],
        index: &'a InstanceIndex,
        state: &RasterState,
    ) -> TileDrawer<'a, P> {
        assert_eq!(
            index.len(),
            instances.len(),
            "the InstanceIndex must index the instances drawn"
        );
        TileDrawer {
            instances,
            index,
            view_proj,
            ctx: setup::Context::new(width, height, format, state),
            lanes: setup::Lanes::of(CpuExtension::default()),
            grid: Grid {
                tiles_x: width.div_ceil(TILE_SIZE),
                tiles_y: height.div_ceil(TILE_SIZE),
                width,
                height,
            },
            greater: state.depth_func == DepthFunc::Greater,
            depth_clip: state.depth_clip,
        }
    }

    /// Tiles per row and per column.
    pub(crate) fn tile_grid(&self) -> (u32, u32) {
        (self.grid.tiles_x, self.grid.tiles_y)
    }

    /// The clip-space planes round the pixel rectangle `rect` (inclusive, with [`MARGIN`]), and
    /// in front of the camera.
    fn planes(&self, [x0, y0, x1, y1]: [i32; 4]) -> ([Plane; 7], usize) {
        let (w, h) = (f64::from(self.grid.width), f64::from(self.grid.height));
        // Screen x = (ndc + 1)·W/2, screen y = (1 − ndc)·H/2; centres at +0.5.
        let left = 2.0 * (f64::from(x0) + 0.5 - MARGIN) / w - 1.0;
        let right = 2.0 * (f64::from(x1) + 0.5 + MARGIN) / w - 1.0;
        let top = 1.0 - 2.0 * (f64::from(y0) + 0.5 - MARGIN) / h;
        let bottom = 1.0 - 2.0 * (f64::from(y1) + 0.5 + MARGIN) / h;
        let mut planes = [Plane::clip(DVec4::ZERO); 7];
        planes[0] = Plane::clip(DVec4::new(1.0, 0.0, 0.0, -left));
        planes[1] = Plane::clip(DVec4::new(-1.0, 0.0, 0.0, right));
        planes[2] = Plane::clip(DVec4::new(0.0, 1.0, 0.0, -bottom));
        planes[3] = Plane::clip(DVec4::new(0.0, -1.0, 0.0, top));
        planes[4] = Plane::clip(DVec4::new(0.0, 0.0, 0.0, 1.0));
        let mut n = 5;
        if self.depth_clip {
            planes[5] = Plane::clip(DVec4::new(0.0, 0.0, 1.0, 0.0));
            planes[6] = Plane::clip(DVec4::new(0.0, 0.0, -1.0, 1.0));
            n = 7;
        }
        (planes, n)
    }

    /// Draws the triangles that reach `area`'s clip rectangle into `buf` with the depth test,
    /// over what `buf` holds.
    pub(crate) fn draw(
        &self,
        area: Area,
        buf: TileBuf<'_>,
        scratch: &mut TileScratch,
    ) -> TileStats {
        self.draw_some(area, buf, scratch, Instances::All)
    }

    /// [`TileDrawer::draw`] for only some instances (indices into the drawer's list): with the
    /// depth test, drawing a tile without some instances and then those instances over it
    /// writes the bits of drawing it whole.
    pub(crate) fn draw_some(
        &self,
        area: Area,
        buf: TileBuf<'_>,
        scratch: &mut TileScratch,
        which: Instances<'_>,
    ) -> TileStats {
        crate::zone!("penumbra::raster::draw tile");
        self.collect(area.clip, scratch, which);
        let drawn = self.draw_batch(area, buf, &scratch.tris, None, true);
        TileStats {
            pieces: scratch.tris.len() as u64,
            written: drawn.written,
            rejected: drawn.rejected,
        }
    }

    /// Sets up, into `scratch`, every triangle of `which` that may reach the pixel rectangle
    /// `rect` (inclusive): one hierarchy walk and one vertex transform for all the tiles of a
    /// rectangle, which [`TileDrawer::draw_collected`] then draws one by one.
    pub(crate) fn collect(&self, rect: [i32; 4], scratch: &mut TileScratch, which: Instances<'_>) {
        crate::zone!("penumbra::raster::collect tiles");
        let (clip_planes, n) = self.planes(rect);
        let clip_planes = &clip_planes[..n];
        scratch.tris.clear();
        scratch.collected = rect;
        let mut tris = std::mem::take(&mut scratch.tris);
        let mut reached_list = std::mem::take(&mut scratch.reached);
        let mut instance = |i: u32| {
            let inst = &self.instances[i as usize];
            // The product `rasterize` makes per instance, so vertices land on the same bits.
            let m = &(self.view_proj * inst.transform());
            let mesh = inst.mesh();
            let (positions, indices, cull) = (mesh.positions(), mesh.indices(), inst.cull());
            scratch.next_instance();
            let (vertices, listed) =
                if indices.len() <= 3 * SMALL_MESH && positions.len() <= 2 * SMALL_MESH {
                    // Every triangle, the ones the hierarchy would have passed over too: a
                    // piece writes only the pixel centres it covers, and the walk finds every
                    // piece that covers one of the rectangle's (the depth test keeps the
                    // nearest whatever the order).
                    (positions, indices)
                } else {
                    let object: [Plane; 7] =
                        std::array::from_fn(|k| clip_planes[k.min(n - 1)].through(m));
                    mesh.index().visit(&object[..n], |tri| {
                        let base = 3 * tri as usize;
                        for &k in &indices[base..base + 3] {
                            let local = scratch.vertex(k, positions[k as usize]);
                            scratch.indices.push(local);
                        }
                    });
                    (&scratch.positions[..], &scratch.indices[..])
                };
            // The vector transform and set-up (as wide as the CPU has) make the scalar code's
            // vertices and records, in the same order.
            scratch.vertices.clear();
            scratch
                .vertices
                .resize(vertices.len(), setup::Vertex::default());
            self.ctx
                .vertices(m, vertices, &mut scratch.vertices, self.lanes);
            self.ctx
                .triangles(&scratch.vertices, listed, cull, self.lanes, &mut tris);
        };
        match which {
            Instances::Only(list) => {
                for &i in list {
                    if (i as usize) < self.instances.len() {
                        instance(i);
                    }
                }
            }
            Instances::All | Instances::AllBut(_) => {
                let world: Vec<Plane> = clip_planes
                    .iter()
                    .map(|p| p.through(&self.view_proj))
                    .collect();
                let skip: &[u32] = match which {
                    Instances::AllBut(list) => list,
                    _ => &[],
                };
                // The instances the walk reaches lie scattered in memory, each a chain of
                // records (the instance, its mesh, the mesh's vertices, indices and
                // hierarchy): listed first, they are drawn with the records of the next few
                // asked for ahead, a link of the chain at a time.
                let mut reached = std::mem::take(&mut reached_list);
                reached.clear();
                self.index.visit(&world, |i| {
                    if !skip.contains(&i) {
                        reached.push(i);
                    }
                });
                let record = |k: usize| reached.get(k).map(|&j| &self.instances[j as usize]);
                for (k, &i) in reached.iter().enumerate() {
                    if let Some(p) = record(k + 4) {
                        crate::cpu::prefetch_range(
                            (p as *const P).cast(),
                            std::mem::size_of::<P>(),
                        );
                    }
                    if let Some(p) = record(k + 2) {
                        crate::cpu::prefetch_range(
                            (p.mesh() as *const Mesh).cast(),
                            std::mem::size_of::<Mesh>(),
                        );
                    }
                    if let Some(p) = record(k + 1) {
                        p.mesh().prefetch();
                    }
                    instance(i);
                }
                reached_list = reached;
            }
        }
        for (side, list) in scratch.sides.iter_mut().enumerate() {
            list.clear();
            list.extend(tris.iter().map(|t| t.bbox[side]));
        }
        scratch.tris = tris;
        scratch.reached = reached_list;
    }

    /// Draws into `buf` (with the depth test, over what it holds) the pieces of the last
    /// [`TileDrawer::collect`] whose bounds meet the rows of `area` it draws ([`Area::rows`]:
    /// a clip rectangle of at most 64 rows, which must lie inside the collected one), with the
    /// bits [`TileDrawer::draw`] writes there (a piece's pixels and depths do not depend on the
    /// area it is drawn into, and the depth test keeps the nearest value whatever the order).
    /// The pieces that meet the rows from the first drawn to the last are found once, and each
    /// is set up once however many runs of rows the mask has.
    pub(crate) fn draw_collected(
        &self,
        area: Area,
        buf: &mut TileBuf<'_>,
        scratch: &mut TileScratch,
    ) -> TileStats {
        crate::zone!("penumbra::raster::draw tile");
        let [x0, y0, x1, y1] = area.clip;
        if x0 > x1 || y0 > y1 {
            return TileStats::default();
        }
        // (Checked once a part.) A row mask reaches 64 rows at most.
        assert!(y1 - y0 < 64, "a row mask over {:?}", area.clip);
        let rows = area.rows & (u64::MAX >> (63 - (y1 - y0)));
        if rows == 0 {
            return TileStats::default();
        }
        let (first, last) = (rows.trailing_zeros(), 63 - rows.leading_zeros());
        let clip = [x0, y0 + first as i32, x1, y0 + last as i32];
        debug_assert!(
            {
                let [cx0, cy0, cx1, cy1] = scratch.collected;
                cx0 <= clip[0] && cy0 <= clip[1] && clip[2] <= cx1 && clip[3] <= cy1
            },
            "rows of a tile drawn from pieces collected for {:?} lie outside it: {:?}",
            scratch.collected,
            clip
        );
        pieces_meeting(&scratch.sides, clip, &mut scratch.meets, &mut scratch.items);
        let area = Area {
            clip,
            rows: rows >> first,
            ..area
        };
        // (A tiled map counts no pixels: the count is left out.)
        let drawn = self.draw_batch(
            area,
            buf.reborrow(),
            &scratch.tris,
            Some(&scratch.items),
            false,
        );
        TileStats {
            pieces: scratch.items.len() as u64,
            written: drawn.written,
            rejected: drawn.rejected,
        }
    }

    /// Draws `tris` (those `items` names) into `area` of `buf`; `count`: count the pixels
    /// written.
    fn draw_batch(
        &self,
        area: Area,
        buf: TileBuf<'_>,
        tris: &[Tri],
        items: Option<&[u32]>,
        count: bool,
    ) -> draw::Drawn {
        draw::draw_tris(
            buf,
            area,
            &[draw::Batch { tris, items }],
            self.greater,
            CpuExtension::default(),
            count,
        )
    }
}

/// The indices of the pieces whose bounds (`sides`: every piece's x0, y0, x1, y1, inclusive)
/// meet the pixel rectangle `clip`, in order, into `items`. The test runs over whole lists of
/// sides without branches (into `meets`, a byte a piece), then the hits are read eight bytes
/// at a time: a tile meets few of a block's pieces. Kept out of line: inlined into its
/// callers, the compiler no longer did the test many pieces at a time.
///
/// With AVX-512 BW the test runs on 32 pieces at a time into a mask register, whose bits are
/// read directly ([`pieces_meeting_avx512`]): in the 10,000-probe flight a part meets 21 of
/// a block's 576 pieces on average, and the portable test and the reading of its bytes were
/// 3 % of the frame's CPU time.
#[inline(never)]
fn pieces_meeting(
    sides: &[Vec<u16>; 4],
    clip: [i32; 4],
    meets: &mut Vec<u8>,
    items: &mut Vec<u32>,
) {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if CpuExtension::Avx512bw.is_supported() {
        // SAFETY: AVX-512 F and BW are present.
        unsafe { pieces_meeting_avx512(sides, clip, items) };
        return;
    }
    pieces_meeting_portable(sides, clip, meets, items);
}

/// [`pieces_meeting`] without vector code of its own (the compiler's, for the baseline CPU).
fn pieces_meeting_portable(
    sides: &[Vec<u16>; 4],
    clip: [i32; 4],
    meets: &mut Vec<u8>,
    items: &mut Vec<u32>,
) {
    items.clear();
    let [x0, y0, x1, y1] = clip;
    let top = i32::from(u16::MAX);
    if x1 < 0 || y1 < 0 || x0 > top || y0 > top {
        return;
    }
    // Bounds are u16: the rectangle's sides clamped to that range meet the same pieces.
    let side = |v: i32| v.clamp(0, i32::from(u16::MAX)) as u16;
    let [x0, y0, x1, y1] = [x0, y0, x1, y1].map(side);
    let [bx0, by0, bx1, by1] = sides;
    let n = bx0.len();
    let (bx0, by0, bx1, by1) = (&bx0[..n], &by0[..n], &bx1[..n], &by1[..n]);
    meets.clear();
    meets.resize(n, 0);
    for k in 0..n {
        meets[k] = u8::from((bx0[k] <= x1) & (x0 <= bx1[k]) & (by0[k] <= y1) & (y0 <= by1[k]));
    }
    let mut words = meets.chunks_exact(8);
    for (w, bytes) in (&mut words).enumerate() {
        let mut word = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
        while word != 0 {
            let byte = word.trailing_zeros() / 8;
            items.push((8 * w) as u32 + byte);
            word &= !(0xFF << (8 * byte));
        }
    }
    let done = n - words.remainder().len();
    for (k, &m) in words.remainder().iter().enumerate() {
        if m != 0 {
            items.push((done + k) as u32);
        }
    }
}

/// [`pieces_meeting`] 32 pieces at a time: the four bounds tests as unsigned 16-bit compares
/// into one mask, whose set bits are the pieces, in order.
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn pieces_meeting_avx512(sides: &[Vec<u16>; 4], clip: [i32; 4], items: &mut Vec<u32>) {
    use std::arch::x86_64::*;
    items.clear();
    let [x0, y0, x1, y1] = clip;
    let top = i32::from(u16::MAX);
    if x1 < 0 || y1 < 0 || x0 > top || y0 > top {
        return;
    }
    // As the portable test: the rectangle's sides clamped to u16 meet the same pieces.
    let side = |v: i32| _mm512_set1_epi16(v.clamp(0, top) as u16 as i16);
    let [x0, y0, x1, y1] = [x0, y0, x1, y1].map(side);
    let [bx0, by0, bx1, by1] = sides;
    let n = bx0.len().min(by0.len()).min(bx1.len()).min(by1.len());
    let mut k = 0;
    while k < n {
        let lanes = (n - k).min(32);
        let live = u32::MAX >> (32 - lanes);
        // SAFETY: the masked loads read lanes k..k + lanes of each list, all inside it.
        let load = |list: &[u16]| unsafe {
            _mm512_maskz_loadu_epi16(live, list.as_ptr().add(k).cast::<i16>())
        };
        let mut m = live
            & _mm512_cmple_epu16_mask(load(bx0), x1)
            & _mm512_cmple_epu16_mask(x0, load(bx1))
            & _mm512_cmple_epu16_mask(load(by0), y1)
            & _mm512_cmple_epu16_mask(y0, load(by1));
        while m != 0 {
            items.push((k + m.trailing_zeros() as usize) as u32);
            m &= m - 1;
        }
        k += 32;
    }
}

/// Which instances [`TileDrawer::draw_some`] draws.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Instances<'a> {
    All,
    /// Every instance but these.
    AllBut(&'a [u32]),
    /// Only these.
    Only(&'a [u32]),
}

/// Draws the tiles `tiles` (column, row) of `target` from `instances` through `view_proj`,
/// finding each tile's triangles through `index` (built for `instances`): each tile drawn
/// holds exactly the bits a full [`rasterize`](super::rasterize) of the same submission writes
/// into it, and no other tile is touched. Like `rasterize` it draws over what the target holds
/// (clear the tiles first to start afresh). Tiles outside the grid are ignored; up to
/// `threads` threads draw tiles side by side.
///
/// The cost grows with the tiles asked and the triangles that reach them, not with the size
/// of the submission or of the target. In the stats, `triangles_drawn` counts set-up pieces
/// per tile (a triangle drawn into three tiles counts three times).
///
/// # Panics
/// If `index` does not index `instances` (a different length).
///
/// ```
/// use glam::camera::lh;
/// use glam::{Mat4, Vec3};
/// use penumbra_core::Format;
/// use penumbra_core::raster::{
///     DepthTarget, Instance, InstanceIndex, Mesh, RasterState, TILE_SIZE, rasterize,
///     rasterize_tiles,
/// };
///
/// // Four tiles; the cube covers the middle, where they meet.
/// let t = TILE_SIZE;
/// let cube = Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0));
/// let instances = [Instance::new(&cube, Mat4::IDENTITY)];
/// let view = lh::view::look_at_mat4(Vec3::new(0.0, 0.0, -5.0), Vec3::ZERO, Vec3::Y);
/// let vp = lh::proj::directx::perspective(1.0, 1.0, 1.0, 10.0) * view;
/// let state = RasterState::default();
/// let mut full = DepthTarget::new(2 * t, 2 * t, Format::D32Float).unwrap();
/// rasterize(&mut full, vp, &instances, &state, 1);
///
/// let index = InstanceIndex::new(&instances);
/// let mut tiled = DepthTarget::new(2 * t, 2 * t, Format::D32Float).unwrap();
/// rasterize_tiles(&mut tiled, vp, &instances, &index, &state, &[(0, 0), (1, 1)], 1);
/// assert_eq!(tiled.raw(t - 1, t - 1), full.raw(t - 1, t - 1)); // in tile (0, 0)
/// assert_ne!(full.raw(t, t - 1), 1.0f32.to_bits()); // the cube is drawn in tile (1, 0)…
/// assert_eq!(tiled.raw(t, t - 1), 1.0f32.to_bits()); // …which `tiled` did not draw
/// ```
pub fn rasterize_tiles(
    target: &mut DepthTarget,
    view_proj: Mat4,
    instances: &[Instance<'_>],
    index: &InstanceIndex,
    state: &RasterState,
    tiles: &[(u32, u32)],
    threads: usize,
) -> RasterStats {
    crate::zone!("penumbra::raster::rasterize_tiles");
    let drawer = TileDrawer::new(
        target.width(),
        target.height(),
        target.format(),
        view_proj,
        instances,
        index,
        state,
    );
    let (tx, ty) = drawer.tile_grid();
    let mut wanted = vec![false; tx as usize * ty as usize];
    for &(x, y) in tiles {
        if x < tx && y < ty {
            wanted[(y * tx + x) as usize] = true;
        }
    }
    let tiles = target.tiles_mut(|t| wanted[t]);
    let (pieces, written) = run(tiles.into_iter(), threads, |tile| {
        let rect = drawer.grid.rect(tile.index);
        let mut scratch = TileScratch::default();
        let stats = drawer.draw(Area::tile(rect), tile.buf().0, &mut scratch);
        (stats.pieces, stats.written)
    });
    RasterStats {
        triangles_in: instances
            .iter()
            .map(|i| i.mesh.triangle_count() as u64)
            .sum(),
        triangles_drawn: pieces,
        pixels_written: written,
    }
}

/// Runs the tile jobs on up to `threads` threads; sums (pieces, pixels).
fn run<I, F>(jobs: I, threads: usize, work: F) -> (u64, u64)
where
    I: Iterator + Send,
    I::Item: Send,
    F: Fn(I::Item) -> (u64, u64) + Sync,
{
    let pieces = std::sync::atomic::AtomicU64::new(0);
    let written = super::run_parallel(jobs, threads.max(1), |job| {
        let (p, w) = work(job);
        pieces.fetch_add(p, std::sync::atomic::Ordering::Relaxed);
        w
    });
    (pieces.into_inner(), written)
}

#[cfg(test)]
mod tests {
    use super::{pieces_meeting, pieces_meeting_portable};
    use penumbra_testkit::Rng;

    /// The batched bounds test (AVX-512 where the CPU has it, and the portable one) picks the
    /// pieces the one-piece-at-a-time test picks, in order: random bounds and rectangles,
    /// empty and inverted ones, sides outside u16 (negative, past 65,535), and lists of any
    /// length round the vector width.
    #[test]
    fn pieces_meeting_is_the_plain_bounds_test() {
        let mut rng = Rng::xorshift64(0x6d65_6574);
        let coord = |rng: &mut Rng| -> i32 {
            match rng.below_mod(8) {
                0 => -(rng.below_mod(100) as i32) - 1,
                1 => 65_535 + rng.below_mod(3) as i32,
                _ => rng.below_mod(300) as i32,
            }
        };
        let (mut meets, mut items) = (Vec::new(), Vec::new());
        for round in 0..2000 {
            let n = rng.below_mod(100) as usize;
            let boxes: Vec<[u16; 4]> = (0..n)
                .map(|_| {
                    let mut side = || match rng.below_mod(10) {
                        0 => u16::MAX,
                        _ => rng.below_mod(300) as u16,
                    };
                    [side(), side(), side(), side()]
                })
                .collect();
            let sides: [Vec<u16>; 4] =
                std::array::from_fn(|s| boxes.iter().map(|b| b[s]).collect());
            let clip = [
                coord(&mut rng),
                coord(&mut rng),
                coord(&mut rng),
                coord(&mut rng),
            ];
            let [x0, y0, x1, y1] = clip;
            let plain: Vec<u32> = (0..n as u32)
                .filter(|&k| {
                    let [bx0, by0, bx1, by1] = boxes[k as usize].map(i32::from);
                    bx0 <= x1 && x0 <= bx1 && by0 <= y1 && y0 <= by1
                })
                .collect();
            pieces_meeting(&sides, clip, &mut meets, &mut items);
            assert_eq!(items, plain, "round {round}: {clip:?} {boxes:?}");
            pieces_meeting_portable(&sides, clip, &mut meets, &mut items);
            assert_eq!(items, plain, "round {round}, portable: {clip:?} {boxes:?}");
        }
    }
}
