//! Binning set-up triangles to tiles, and drawing the tiles (in parallel when asked).

use super::draw::{self, Area, Batch, TileBuf};
use super::setup::Tri;
use super::target::{DepthTarget, TILE_SIZE, TileMut};
use crate::cpu::CpuExtension;

/// Tile log2 edge.
const TILE_SHIFT: u32 = TILE_SIZE.trailing_zeros();
/// Estimated cost of one triangle piece, in pixels, for the parallel-or-not decision.
const PIECE_COST: u64 = 16;

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
}

impl Chunk {
    pub fn with_capacity(triangles: usize) -> Chunk {
        Chunk {
            tris: Vec::with_capacity(triangles),
            offsets: Vec::new(),
            items: Vec::new(),
            drawn: 0,
            work: 0,
        }
    }

    /// Bins `tris` to tiles (a counting sort, so each tile's list keeps submission order).
    pub fn bin(&mut self, grid: &Grid) {
        let tiles = grid.tiles_x as usize * grid.tiles_y as usize;
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(self.tris.len() + self.tris.len() / 4);
        let mut counts = vec![0u32; tiles + 1];
        let mut work = 0u64;
        for (i, t) in self.tris.iter().enumerate() {
            // Large, thin triangles touch many tiles: stop binning once the deadline has passed
            // (the draw then skips every tile).
            if i % 1024 == 1023 && crate::deadline::expired() {
                break;
            }
            let [x0, y0, x1, y1] = t.bbox.map(u32::from);
            work += u64::from(x1 - x0 + 1) * u64::from(y1 - y0 + 1) + PIECE_COST;
            let (tx0, ty0) = (x0 >> TILE_SHIFT, y0 >> TILE_SHIFT);
            let (tx1, ty1) = (x1 >> TILE_SHIFT, y1 >> TILE_SHIFT);
            let single = tx0 == tx1 && ty0 == ty1;
            for ty in ty0..=ty1 {
                for tx in tx0..=tx1 {
                    let tile = ty as usize * grid.tiles_x as usize + tx as usize;
                    if single || draw::may_cover(t, grid.rect_at(tx, ty)) {
                        pairs.push((tile as u32, i as u32));
                        counts[tile + 1] += 1;
                    }
                }
            }
        }
        for t in 0..tiles {
            counts[t + 1] += counts[t];
        }
        let mut cursor = counts.clone();
        let mut items = vec![0u32; pairs.len()];
        for (tile, i) in pairs {
            items[cursor[tile as usize] as usize] = i;
            cursor[tile as usize] += 1;
        }
        self.offsets = counts;
        self.items = items;
        self.work = work;
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
    draw::draw_tris(buf, Area::tile(grid.rect(t)), &batches, greater, ext)
}
