//! Binning set-up triangles to tiles, and drawing the tiles (in parallel when asked).

use super::draw::{self, Area, Batch, TileBuf};
use super::setup::Tri;
use super::target::{DepthTarget, TILE_SIZE, TileMut};
use crate::cpu::CpuExtension;

/// Tile log2 edge.
const TILE_SHIFT: u32 = TILE_SIZE.trailing_zeros();
/// Estimated cost of one triangle piece, in pixels, for the parallel-or-not decision.
const PIECE_COST: u64 = 16;
/// In [`Chunk::index`]: a piece that reaches several tiles (its `tile_of`), or the end of such
/// a piece's tiles (in `spans`). No grid has this many tiles (at most 128² of them).
const SPANS: u32 = u32::MAX;

/// The target's tile grid.
pub(crate) struct Grid {
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub width: u32,
    pub height: u32,
}

impl Grid {
    /// Inclusive pixel rectangle of tile `t`: x0, y0, x1, y1.
    pub(crate) fn rect(&self, t: usize) -> [i32; 4] {
        self.rect_at(
            (t % self.tiles_x as usize) as u32,
            (t / self.tiles_x as usize) as u32,
        )
    }

    /// Inclusive pixel rectangle of the tile in column `tx` and row `ty`.
    #[inline]
    pub(crate) fn rect_at(&self, tx: u32, ty: u32) -> [i32; 4] {
        let (x0, y0) = (tx * TILE_SIZE, ty * TILE_SIZE);
        [
            x0 as i32,
            y0 as i32,
            ((x0 + TILE_SIZE).min(self.width) - 1) as i32,
            ((y0 + TILE_SIZE).min(self.height) - 1) as i32,
        ]
    }
}

/// The set-up triangles of one contiguous part of the submission, and per tile the indices of
/// those that touch it, in submission order.
pub(crate) struct Chunk {
    pub tris: Vec<Tri>,
    /// `items[offsets[t]..offsets[t + 1]]` are the triangles of tile t.
    offsets: Vec<u32>,
    items: Vec<u32>,
    /// Submitted triangles with at least one piece in `tris`.
    pub drawn: u64,
    /// Estimated raster work (pixels of clipped bounds plus a cost per piece).
    pub work: u64,
    /// Per piece indexed so far ([`Chunk::index`]): its tile, or [`SPANS`] for a piece that
    /// reaches several, whose tiles are listed in `spans` (each list ended by [`SPANS`]).
    tile_of: Vec<u32>,
    spans: Vec<u32>,
    /// Pieces per tile, shifted by one (the counting sort's counts).
    counts: Vec<u32>,
    /// The deadline passed while indexing: no piece after is binned.
    stopped: bool,
}

impl Chunk {
    pub fn with_capacity(triangles: usize) -> Chunk {
        Chunk {
            tris: Vec::with_capacity(triangles),
            offsets: Vec::new(),
            items: Vec::new(),
            drawn: 0,
            work: 0,
            tile_of: Vec::with_capacity(triangles),
            spans: Vec::new(),
            counts: Vec::new(),
            stopped: false,
        }
    }

    /// Works out the tiles of the pieces set up since the last call (`tris[tile_of.len()..]`):
    /// called right after each part of the set-up, it reads their records while they are
    /// still in the cache (read after the whole set-up, the records of 100,000 triangles
    /// come back from memory: that read was 13 % of a full 2048² draw).
    pub fn index(&mut self, grid: &Grid) {
        let tiles = grid.tiles_x as usize * grid.tiles_y as usize;
        if self.counts.len() != tiles + 1 {
            self.counts = vec![0; tiles + 1];
        }
        let first = self.tile_of.len();
        for (i, t) in self.tris.iter().enumerate().skip(first) {
            // Large, thin triangles touch many tiles: stop binning once the deadline has passed
            // (the draw then skips every tile).
            if self.stopped || (i % 1024 == 1023 && crate::deadline::expired()) {
                self.stopped = true;
                break;
            }
            let [x0, y0, x1, y1] = t.bbox.map(u32::from);
            self.work += u64::from(x1 - x0 + 1) * u64::from(y1 - y0 + 1) + PIECE_COST;
            let (tx0, ty0) = (x0 >> TILE_SHIFT, y0 >> TILE_SHIFT);
            let (tx1, ty1) = (x1 >> TILE_SHIFT, y1 >> TILE_SHIFT);
            if tx0 == tx1 && ty0 == ty1 {
                let tile = ty0 as usize * grid.tiles_x as usize + tx0 as usize;
                self.tile_of.push(tile as u32);
                self.counts[tile + 1] += 1;
                continue;
            }
            self.tile_of.push(SPANS);
            for ty in ty0..=ty1 {
                for tx in tx0..=tx1 {
                    if draw::may_cover(t, grid.rect_at(tx, ty)) {
                        let tile = ty as usize * grid.tiles_x as usize + tx as usize;
                        self.spans.push(tile as u32);
                        self.counts[tile + 1] += 1;
                    }
                }
            }
            self.spans.push(SPANS);
        }
    }

    /// Bins the pieces to tiles (a counting sort, so each tile's list keeps submission order),
    /// indexing any that [`Chunk::index`] has not.
    pub fn bin(&mut self, grid: &Grid) {
        self.index(grid);
        let tiles = grid.tiles_x as usize * grid.tiles_y as usize;
        let mut counts = std::mem::take(&mut self.counts);
        for t in 0..tiles {
            counts[t + 1] += counts[t];
        }
        let mut cursor = counts.clone();
        let mut items = vec![0u32; counts[tiles] as usize];
        let mut spanned = self.spans.iter();
        for (i, &tile) in self.tile_of.iter().enumerate() {
            if tile != SPANS {
                items[cursor[tile as usize] as usize] = i as u32;
                cursor[tile as usize] += 1;
                continue;
            }
            for &tile in spanned.by_ref().take_while(|&&t| t != SPANS) {
                items[cursor[tile as usize] as usize] = i as u32;
                cursor[tile as usize] += 1;
            }
        }
        self.offsets = counts;
        self.items = items;
        self.tile_of = Vec::new();
        self.spans = Vec::new();
    }

    /// The triangles (indices into `tris`) that touch tile `t`.
    fn tile_items(&self, t: usize) -> &[u32] {
        &self.items[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }
}

/// Draws every tile with the LESS test (`greater`: the GREATER test) on the kernel of `ext`;
/// returns the number of pixels written.
pub(crate) fn draw(
    target: &mut DepthTarget,
    grid: &Grid,
    chunks: &[Chunk],
    threads: usize,
    greater: bool,
    ext: CpuExtension,
) -> u64 {
    crate::zone!("penumbra::raster::draw");
    let busy = |t: usize| chunks.iter().any(|c| !c.tile_items(t).is_empty());
    let tiles = target.tiles_mut(busy);
    let rejected = std::sync::atomic::AtomicU64::new(0);
    let written = each_tile(tiles.into_iter(), threads, |tile| {
        let drawn = draw_tile(tile, grid, chunks, greater, ext);
        rejected.fetch_add(drawn.rejected, std::sync::atomic::Ordering::Relaxed);
        drawn.written
    });
    crate::plot!("penumbra::raster pieces rejected", rejected.into_inner());
    written
}

/// Runs `work` on every tile, on this thread or on up to `threads`; sums the results.
fn each_tile<I, F>(tiles: I, threads: usize, work: F) -> u64
where
    I: Iterator + Send,
    I::Item: Send,
    F: Fn(I::Item) -> u64 + Sync,
{
    if threads <= 1 {
        tiles.map(work).sum()
    } else {
        super::run_parallel(tiles, threads, work)
    }
}

/// Reads one value per cache line of the tile, front to back, so that the hardware prefetcher
/// streams the tile into the cache before the triangles touch it in scattered order (a cold
/// tile otherwise costs one memory round trip per line).
#[inline]
fn warm<S: Copy>(tile: &[S]) {
    let per_line = (64 / std::mem::size_of::<S>()).max(1);
    for line in tile.chunks(per_line) {
        std::hint::black_box(line[0]);
    }
}

/// Draws tile `t`'s triangles, chunk after chunk, each chunk in submission order.
/// Returns the pixels written and the pieces the coarse depth test skipped.
fn draw_tile(
    tile: TileMut<'_>,
    grid: &Grid,
    chunks: &[Chunk],
    greater: bool,
    ext: CpuExtension,
) -> draw::Drawn {
    // Once the deadline has passed the remaining tiles are skipped (`rasterize` reports it).
    if crate::deadline::expired() {
        return draw::Drawn::default();
    }
    let t = tile.index;
    // A tile that held a pending clear was just written, so it is in the cache already.
    let (buf, filled) = tile.buf();
    if !filled {
        match &buf {
            TileBuf::F32(b) => warm(b),
            TileBuf::U16(b) => warm(b),
        }
    }
    let batches: Vec<Batch<'_>> = chunks
        .iter()
        .filter(|c| !c.tile_items(t).is_empty())
        .map(|c| Batch {
            tris: &c.tris,
            items: Some(c.tile_items(t)),
        })
        .collect();
    draw::draw_tris(buf, Area::tile(grid.rect(t)), &batches, greater, ext, true)
}
