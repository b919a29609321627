//! Binning set-up triangles to tiles, and drawing the tiles (in parallel when asked).

use super::setup::{HALF, SUB_BITS, Tri};
use super::target::{Storage, TILE_PIXELS, TILE_SIZE};

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
        let (tx, ty) = (
            (t % self.tiles_x as usize) as u32,
            (t / self.tiles_x as usize) as u32,
        );
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
                    if single || may_cover(t, grid.rect(tile)) {
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

/// Whether any pixel centre of `rect` (inclusive, clipped to the bounds) can be inside `t`: for
/// each edge, the largest edge function over the rectangle is at one of its corners.
fn may_cover(t: &Tri, rect: [i32; 4]) -> bool {
    let x0 = rect[0].max(i32::from(t.bbox[0]));
    let y0 = rect[1].max(i32::from(t.bbox[1]));
    let x1 = rect[2].min(i32::from(t.bbox[2]));
    let y1 = rect[3].min(i32::from(t.bbox[3]));
    if x0 > x1 || y0 > y1 {
        return false;
    }
    let centre = |p: i32| (i64::from(p) << SUB_BITS) + HALF;
    (0..3).all(|i| {
        let (dx, dy, ox, oy, bias) = t.edge(i);
        let px = centre(if dy < 0 { x1 } else { x0 });
        let py = centre(if dx > 0 { y1 } else { y0 });
        dx * (py - oy) - dy * (px - ox) + bias >= 0
    })
}

/// A depth buffer cell: the LESS (or, with `GREATER`, the GREATER) test with write.
trait Slot: Copy + Send {
    /// Tests the interpolated (biased) depth `z` against the stored value and writes it if it
    /// is less (greater); returns whether it wrote. `PLAIN`: `z` is known to lie in
    /// [2⁻¹²⁶, 1] already.
    fn test_write<const PLAIN: bool, const GREATER: bool>(&mut self, z: f64) -> bool;
}

/// The depth a pixel sees: clamped to the viewport's [0, 1], with subnormals (and −0) made +0.
#[inline(always)]
fn viewport_depth<const PLAIN: bool>(z: f64) -> f32 {
    if PLAIN {
        return z as f32;
    }
    let z = z.min(1.0);
    if z >= f64::from(f32::MIN_POSITIVE) {
        z as f32
    } else {
        0.0
    }
}

impl Slot for f32 {
    #[inline(always)]
    fn test_write<const PLAIN: bool, const GREATER: bool>(&mut self, z: f64) -> bool {
        let (d, old) = (viewport_depth::<PLAIN>(z), *self);
        let pass = if GREATER { d > old } else { d < old };
        *self = if pass { d } else { old };
        pass
    }
}

/// `float_to_unorm(d, 16)` for d in [0, 1]: d·65535 is exact in f64 (24 + 16 bits), and so
/// are + 1/2 and the truncation, so this is the same round-half-up conversion.
#[inline(always)]
fn unorm16(d: f32) -> u16 {
    (f64::from(d) * 65535.0 + 0.5) as u16
}

impl Slot for u16 {
    #[inline(always)]
    fn test_write<const PLAIN: bool, const GREATER: bool>(&mut self, z: f64) -> bool {
        let (code, old) = (unorm16(viewport_depth::<PLAIN>(z)), *self);
        let pass = if GREATER { code > old } else { code < old };
        *self = if pass { code } else { old };
        pass
    }
}

/// Draws every tile with the LESS test (`greater`: the GREATER test); returns the number of
/// pixels written.
pub(crate) fn draw(
    storage: &mut Storage,
    grid: &Grid,
    chunks: &[Chunk],
    threads: usize,
    greater: bool,
) -> u64 {
    crate::zone!("penumbra::raster::draw");
    match (storage, greater) {
        (Storage::F32(values), false) => draw_tiles::<_, false>(values, grid, chunks, threads),
        (Storage::F32(values), true) => draw_tiles::<_, true>(values, grid, chunks, threads),
        (Storage::U16(codes), false) => draw_tiles::<_, false>(codes, grid, chunks, threads),
        (Storage::U16(codes), true) => draw_tiles::<_, true>(codes, grid, chunks, threads),
    }
}

fn draw_tiles<S: Slot, const GREATER: bool>(
    buf: &mut [S],
    grid: &Grid,
    chunks: &[Chunk],
    threads: usize,
) -> u64 {
    let busy = |t: usize| chunks.iter().any(|c| !c.tile_items(t).is_empty());
    let tiles = buf
        .chunks_mut(TILE_PIXELS)
        .enumerate()
        .filter(|&(t, _)| busy(t));
    if threads <= 1 {
        tiles
            .map(|(t, tile)| draw_tile::<S, GREATER>(tile, t, grid, chunks))
            .sum()
    } else {
        super::run_parallel(tiles, threads, |(t, tile)| {
            draw_tile::<S, GREATER>(tile, t, grid, chunks)
        })
    }
}

/// One tile's pixels, of either storage.
pub(crate) enum TileBuf<'a> {
    F32(&'a mut [f32]),
    U16(&'a mut [u16]),
}

/// Draws `tris` into one tile (inclusive pixel rectangle `rect`, `TILE_PIXELS` values) with the
/// LESS test (`greater`: GREATER); returns the pixels written. The same arithmetic as a full
/// draw, so a tile drawn here holds the bits the full draw gives it.
pub(crate) fn draw_tris(buf: TileBuf<'_>, rect: [i32; 4], tris: &[Tri], greater: bool) -> u64 {
    fn each<S: Slot, const GREATER: bool>(tile: &mut [S], rect: [i32; 4], tris: &[Tri]) -> u64 {
        tris.iter()
            .map(|t| draw_triangle::<S, GREATER>(tile, rect, t))
            .sum()
    }
    match (buf, greater) {
        (TileBuf::F32(b), false) => each::<_, false>(b, rect, tris),
        (TileBuf::F32(b), true) => each::<_, true>(b, rect, tris),
        (TileBuf::U16(b), false) => each::<_, false>(b, rect, tris),
        (TileBuf::U16(b), true) => each::<_, true>(b, rect, tris),
    }
}

/// Reads one value per cache line of the tile, front to back, so that the hardware prefetcher
/// streams the tile into the cache before the triangles touch it in scattered order (a cold
/// tile otherwise costs one memory round trip per line).
#[inline]
fn warm<S: Slot>(tile: &[S]) {
    let per_line = (64 / std::mem::size_of::<S>()).max(1);
    for line in tile.chunks(per_line) {
        std::hint::black_box(line[0]);
    }
}

/// Draws tile `t`'s triangles, chunk after chunk, each chunk in submission order.
fn draw_tile<S: Slot, const GREATER: bool>(
    tile: &mut [S],
    t: usize,
    grid: &Grid,
    chunks: &[Chunk],
) -> u64 {
    // Once the deadline has passed the remaining tiles are skipped (`rasterize` reports it).
    if crate::deadline::expired() {
        return 0;
    }
    let rect = grid.rect(t);
    warm(tile);
    let mut written = 0;
    for chunk in chunks {
        for &i in chunk.tile_items(t) {
            written += draw_triangle::<S, GREATER>(tile, rect, &chunk.tris[i as usize]);
        }
    }
    written
}

/// Draws the part of `t` inside `rect` (the tile's inclusive pixel rectangle) into `tile`, with
/// incremental edge functions: one set of products at the first pixel, then additions.
#[inline]
fn draw_triangle<S: Slot, const GREATER: bool>(tile: &mut [S], rect: [i32; 4], t: &Tri) -> u64 {
    let xs = rect[0].max(i32::from(t.bbox[0]));
    let ys = rect[1].max(i32::from(t.bbox[1]));
    let xe = rect[2].min(i32::from(t.bbox[2]));
    let ye = rect[3].min(i32::from(t.bbox[3]));
    if xs > xe || ys > ye {
        return 0;
    }
    let px = (i64::from(xs) << SUB_BITS) + HALF;
    let py = (i64::from(ys) << SUB_BITS) + HALF;
    let mut e = [0i64; 3];
    let mut step_x = [0i64; 3];
    let mut step_y = [0i64; 3];
    let mut inv = [0f64; 3];
    for i in 0..3 {
        let (dx, dy, ox, oy, bias) = t.edge(i);
        e[i] = dx * (py - oy) - dy * (px - ox) + bias;
        step_x[i] = -dy << SUB_BITS;
        step_y[i] = dx << SUB_BITS;
        inv[i] = 1.0 / (step_x[i] as f64).abs();
    }
    let sub = f64::from(1u32 << SUB_BITS);
    let z_start = t.z0
        + t.dzdx * ((px - i64::from(t.x[0])) as f64 / sub)
        + t.dzdy * ((py - i64::from(t.y[0])) as f64 / sub);
    let width = i64::from(xe - xs + 1);
    let mut written = 0;
    for (r, y) in (ys..=ye).enumerate() {
        // The covered centres of a row are one run [lo, hi): each edge bounds it from one side
        // (or, when parallel to the row, keeps all or nothing).
        let (mut lo, mut hi) = (0, width);
        for i in 0..3 {
            let (e, s) = (e[i], step_x[i]);
            if s > 0 {
                lo = lo.max(first_inside(e, s, inv[i], width));
            } else if s < 0 {
                hi = hi.min(end_inside(e, s, inv[i], width));
            } else if e < 0 {
                hi = 0;
            }
        }
        for i in 0..3 {
            e[i] += step_y[i];
        }
        // No early exit on an empty row: a thin triangle can miss every centre of one row and
        // still cover centres in the next.
        if lo >= hi {
            continue;
        }
        let start = ((y - rect[1]) as usize) * TILE_SIZE as usize + (xs - rect[0]) as usize;
        let z_row = z_start + t.dzdy * r as f64;
        let span = &mut tile[start + lo as usize..start + hi as usize];
        written += if t.plain {
            depth_span::<S, true, GREATER>(span, z_row + t.dzdx * lo as f64, t.dzdx)
        } else {
            depth_span::<S, false, GREATER>(span, z_row + t.dzdx * lo as f64, t.dzdx)
        };
    }
    written
}

/// The first k in `0..=width` with `e + k·s ≥ 0`, for `s > 0` (`inv` = 1/s): estimated in
/// floating point, then settled exactly.
#[inline(always)]
fn first_inside(e: i64, s: i64, inv: f64, width: i64) -> i64 {
    if e >= 0 {
        return 0;
    }
    let mut k = (((-e) as f64 * inv) as i64 + 1).clamp(0, width);
    while k < width && e + k * s < 0 {
        k += 1;
    }
    while k > 0 && e + (k - 1) * s >= 0 {
        k -= 1;
    }
    k
}

/// One past the last k in `0..width` with `e + k·s ≥ 0`, for `s < 0` (`inv` = 1/|s|); 0 if none.
#[inline(always)]
fn end_inside(e: i64, s: i64, inv: f64, width: i64) -> i64 {
    if e < 0 {
        return 0;
    }
    let mut k = ((e as f64 * inv) as i64 + 1).clamp(0, width);
    while k < width && e + k * s >= 0 {
        k += 1;
    }
    while k > 0 && e + (k - 1) * s < 0 {
        k -= 1;
    }
    k
}

/// The depth test and write along one covered run starting at depth `z0`.
#[inline(always)]
fn depth_span<S: Slot, const PLAIN: bool, const GREATER: bool>(
    span: &mut [S],
    z0: f64,
    dzdx: f64,
) -> u64 {
    let mut written = 0;
    let mut k = 0.0;
    for slot in span {
        written += u64::from(slot.test_write::<PLAIN, GREATER>(z0 + dzdx * k));
        k += 1.0;
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format;

    #[test]
    fn unorm16_matches_float_to_unorm_on_zero_one() {
        let mut rng = penumbra_testkit::Rng::xorshift32(0x1234_5678);
        let check =
            |d: f32| assert_eq!(u32::from(unorm16(d)), format::float_to_unorm(d, 16), "{d}");
        for code in 0..=65535u32 {
            let d = code as f32 / 65535.0;
            check(d);
            check(f32::from_bits(d.to_bits().saturating_sub(1)));
            check(f32::from_bits(d.to_bits() + 1).min(1.0));
            // Half-way points between codes.
            check(((f64::from(code) + 0.5) / 65535.0).min(1.0) as f32);
        }
        for _ in 0..1_000_000 {
            let bits = rng.next_u32();
            check((bits >> 8) as f32 / (1u32 << 24) as f32);
        }
        check(0.0);
        check(1.0);
        check(f32::MIN_POSITIVE);
    }
}
