//! Shadow maps drawn tile by tile, as queries need them, and redrawn only where something
//! moved.
//!
//! A tiled map starts with no texel drawn. A query first works out which [`MAP_TILE`]² tiles
//! its taps read, and which rows of texels in each (each tap's 2×2 footprint, found with the
//! sampler's own arithmetic, through its address mode; for a cube map, across face edges too),
//! draws the missing rows (over the benches' 10,000-probe flight, the probes' filters read a
//! fifth of the rows of the nearest cascade's tiles they reach, three fifths over all three;
//! the rows of an area are drawn in one pass that skips the others, each triangle piece set
//! up once) —
//! rasterizing only the triangles that reach each tile ([`crate::raster`]'s tile drawer over
//! the lighting's [`InstanceIndex`]) and writing its part of the batched path's key image (and
//! its texels, when the query reads texels: the scalar sampler's taps; tiles drawn for the
//! batched path alone have theirs written from the keys when such a query comes) — and then
//! samples as a fully drawn map would. Each drawn tile holds the bits a full render gives it,
//! so every answer is the answer of the full map.
//!
//! When an occluder changes, [`Tiled::invalidate`] forgets the tiles that its old and new
//! bounds cover in each slice (a light-space rectangle with a margin; a whole slice when the
//! bounds reach behind a perspective light); the next query that needs them draws them again
//! from the changed scene.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard};
use std::time::Instant;

use glam::{Mat4, Vec3};

use super::lighting::OccluderId;
use super::{Aabb, Occluder};
use crate::desc::AddressMode;
use crate::format::{self, Format};
use crate::raster::{
    Area, CullMode, InstanceIndex, Instances, Mesh, Placed, RasterState, TileBuf, TileDrawer,
    TileScratch,
};
use crate::sample::Sampler;
use crate::sample::batch::{CmpBatch, KeyWriter, LevelBytes, SpareKeys};
use crate::texture::{Dimension, Texture, TextureDesc};

mod resident;

pub use resident::TileStats;
use resident::*;
pub(crate) use resident::{LAYER_SHARE, Resident, TileCounters};

impl Placed for Occluder {
    fn mesh(&self) -> &Mesh {
        &self.mesh
    }
    fn transform(&self) -> Mat4 {
        self.transform
    }
    fn cull(&self) -> Option<CullMode> {
        self.cull
    }
}

/// Edge of the square tiles a map is drawn in (texels): the unit of drawing on demand and of
/// forgetting after a change. Small enough that a few probes draw little more than what their
/// filters read, large enough that finding a tile's triangles is paid over many texels.
pub const MAP_TILE: u32 = 32;

/// The occluders of a lighting in handle order, with the world-space index tiles are drawn
/// through. Kept by the lighting and updated in place as occluders move.
#[derive(Clone, Debug, Default)]
pub(crate) struct SceneIndex {
    pub(crate) occluders: Vec<Occluder>,
    /// The handle of each occluder (same order), for the answers of ray casts.
    pub(crate) ids: Vec<OccluderId>,
    /// Also holds each occluder's inverse transform for ray casts, updated with its box.
    pub(crate) index: InstanceIndex,
}

impl SceneIndex {
    pub(crate) fn new(occluders: Vec<(OccluderId, Occluder)>) -> SceneIndex {
        let (ids, occluders): (Vec<_>, Vec<_>) = occluders.into_iter().unzip();
        let index = InstanceIndex::of(&occluders);
        SceneIndex {
            occluders,
            ids,
            index,
        }
    }

    /// Replaces occluder `i` and refits the index to it.
    pub(crate) fn replace(&mut self, i: usize, occluder: Occluder) {
        self.occluders[i] = occluder;
        self.index.update_of(i, &self.occluders);
    }
}

/// The tiles a query needs, each with the rows of its texels that the query reads (a bit per
/// row of the tile): a short list for a few taps, a bit per tile of every slice once the list
/// grows.
#[derive(Clone, Debug)]
pub(crate) struct Needs {
    /// Tiles and their rows while they are few.
    list: Vec<(u32, Rows)>,
    bits: Vec<u64>,
    /// The rows of each tile of the bitmap (by global index), once there is one.
    rows: Vec<Rows>,
    /// Tiles in all (the bitmap's size when it is made).
    tiles: usize,
}

/// What is drawn of a map, at one moment ([`ShadowMap::drawn_tiles`]): for every
/// [`MAP_TILE`]² tile of every slice, the rows of its texels drawn so far. A map drawn tile by
/// tile draws a tile only on the rows its queries' filter taps read (with, in a row of tiles
/// none of which was drawn yet, the rows its neighbours read), so this is the work the
/// queries made, and what
/// [`picture::drawn_picture`](crate::picture::drawn_picture) shows; a map drawn whole has
/// every row of every tile.
///
/// [`ShadowMap::drawn_tiles`]: crate::shadow::ShadowMap::drawn_tiles
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawnTiles {
    resolution: u32,
    across: u32,
    slices: u32,
    /// Per tile (slice after slice, row-major in a slice), a bit per drawn row inside the map.
    rows: Vec<u32>,
}

/// Texels of tile `i` along an axis of a map `resolution` texels across: [`MAP_TILE`], or fewer
/// for the last tile where the map's edge cuts it.
fn tile_extent(resolution: u32, i: u32) -> u32 {
    resolution.min((i + 1) * MAP_TILE) - i * MAP_TILE
}

/// The rows of tile row `ty` that lie inside a map `resolution` texels across.
fn rows_inside(resolution: u32, ty: u32) -> Rows {
    (u64::MAX >> (64 - tile_extent(resolution, ty))) as Rows
}

impl DrawnTiles {
    /// A map of `resolution`² texels in `slices` slices drawn whole: every row of every tile.
    pub(crate) fn whole(resolution: u32, slices: u32) -> DrawnTiles {
        let across = resolution.div_ceil(MAP_TILE);
        // Slice after slice, each row of tiles `across` times.
        let rows = (0..slices)
            .flat_map(|_| 0..across)
            .flat_map(|ty| std::iter::repeat_n(rows_inside(resolution, ty), across as usize))
            .collect();
        DrawnTiles {
            resolution,
            across,
            slices,
            rows,
        }
    }

    /// The map's size in texels (square).
    #[must_use]
    pub fn resolution(&self) -> u32 {
        self.resolution
    }

    /// Tiles along each side of a slice ([`MAP_TILE`] texels each; the last may be cut).
    #[must_use]
    pub fn tiles_across(&self) -> u32 {
        self.across
    }

    /// Slices (1 for a 2D map, 6 for a cube's faces, the cascades of a sun).
    #[must_use]
    pub fn slices(&self) -> u32 {
        self.slices
    }

    /// The drawn rows of tile (`tx`, `ty`) of `slice`, a bit per row of the tile (bit 0 its top
    /// row); 0 for a tile not drawn or outside the map.
    #[must_use]
    pub fn rows(&self, slice: u32, tx: u32, ty: u32) -> u32 {
        if slice >= self.slices || tx >= self.across || ty >= self.across {
            return 0;
        }
        let per = (self.across * self.across) as usize;
        self.rows[slice as usize * per + (ty * self.across + tx) as usize]
    }

    /// Whether texel (`x`, `y`) of `slice` is drawn (false outside the map).
    #[must_use]
    pub fn texel(&self, slice: u32, x: u32, y: u32) -> bool {
        x < self.resolution
            && y < self.resolution
            && self.rows(slice, x / MAP_TILE, y / MAP_TILE) >> (y % MAP_TILE) & 1 == 1
    }

    /// Tiles with at least one row drawn.
    #[must_use]
    pub fn tiles(&self) -> usize {
        self.rows.iter().filter(|&&r| r != 0).count()
    }

    /// Tile rows drawn ([`ShadowMap::tile_rows_drawn`](crate::shadow::ShadowMap::tile_rows_drawn)).
    #[must_use]
    pub fn tile_rows(&self) -> u64 {
        self.rows.iter().map(|r| u64::from(r.count_ones())).sum()
    }

    /// Texels drawn, of every slice.
    #[must_use]
    pub fn texels(&self) -> u64 {
        (0..self.slices).map(|s| self.slice_texels(s)).sum()
    }

    /// Texels drawn in `slice` (0 past the last slice).
    #[must_use]
    pub fn slice_texels(&self, slice: u32) -> u64 {
        let per = (self.across * self.across) as usize;
        let first = (slice as usize).saturating_mul(per);
        let Some(rows) = self.rows.get(first..first + per) else {
            return 0;
        };
        rows.iter()
            .enumerate()
            .map(|(t, r)| {
                let width = tile_extent(self.resolution, t as u32 % self.across);
                u64::from(r.count_ones()) * u64::from(width)
            })
            .sum()
    }
}

/// Rows of one tile, a bit per texel row (bit `y` for the tile's row `y`): what a query reads
/// there, or what is drawn of it. A query's taps read few rows of most tiles they reach (the
/// 6 × 6 texels of a Castaño filter every dozen texels, over a cascade's close slices), and a
/// tile is drawn and laid out only on the rows asked for; rows past the map's edge (in a
/// tile that the edge cuts) are never drawn, whatever their bits.
pub(crate) type Rows = u32;

/// Every row of a tile.
pub(crate) const ALL_ROWS: Rows = Rows::MAX;
const _: () = assert!(MAP_TILE == Rows::BITS, "a bit per row of a tile");

/// Tiles along each side of a block whose tiles drawn whole share one walk of the
/// hierarchies and one vertex set-up ([`Tiled::jobs`]).
const GROUP: u32 = 16;

/// The parts of an area as drawn: each part a rectangle of texels and the rows of it to draw
/// (a bit per row from its top), in order; a part directly below the one before, exactly as
/// wide, joins it (its rows shifted below the other's) while the two are at most 64 rows high.
fn stacked(parts: &[([u32; 4], u64)]) -> Vec<([u32; 4], u64)> {
    let mut out: Vec<([u32; 4], u64)> = Vec::with_capacity(parts.len());
    for &(r, rows) in parts {
        if let Some((last, last_rows)) = out.last_mut() {
            let height = last[3] - last[1] + 1;
            if last[0] == r[0] && last[2] == r[2] && last[3] + 1 == r[1] && r[3] - last[1] < 64 {
                *last_rows |= rows << height;
                last[3] = r[3];
                continue;
            }
        }
        out.push((r, rows));
    }
    out
}

/// Tiles drawn in one pass: `across` × `down` tiles from tile `first` (a global index, the
/// top-left tile).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Merged {
    first: usize,
    across: u32,
    down: u32,
}

impl Merged {
    /// The tiles' global indices, row by row.
    fn tiles(self, map: &Tiled) -> impl Iterator<Item = usize> {
        let w = map.tiles as usize;
        (0..self.down as usize)
            .flat_map(move |dy| (0..self.across as usize).map(move |dx| self.first + dy * w + dx))
    }

    /// The inclusive texel rectangle the tiles cover together.
    fn rect(self, map: &Tiled) -> [u32; 4] {
        let local = self.first % map.per_slice();
        let last = local + (self.down as usize - 1) * map.tiles as usize + self.across as usize - 1;
        let [x0, y0, ..] = map.tile_rect(local);
        let [.., x1, y1] = map.tile_rect(last);
        [x0, y0, x1, y1]
    }
}

/// One job of a tile pass.
enum Job {
    /// Tiles drawn from every occluder (no layer), all of one block of one slice (global
    /// indices), each with the rows asked of it and whether none of it is drawn yet, in the
    /// map's order.
    Group(Vec<(usize, Rows, bool)>),
    /// A tile under moving occluders: drawn without `moving` into a new layer, then with them
    /// over it (`None`), or only them over a copy of its kept layer.
    Layered(usize, Vec<u32>, Option<TileValues>),
}

/// Tiles a need list holds before it turns into a bitmap.
const LIST: usize = 32;

impl Needs {
    #[inline]
    fn set(&mut self, t: usize, rows: Rows) {
        if !self.bits.is_empty() {
            self.bits[t / 64] |= 1 << (t % 64);
            self.rows[t] |= rows;
        } else if let Some((_, r)) = self
            .list
            .iter_mut()
            .rev()
            .find(|(listed, _)| *listed == t as u32)
        {
            // (From the end: taps in a row mostly mark the tile marked last.)
            *r |= rows;
        } else if self.list.len() < LIST {
            self.list.push((t as u32, rows));
        } else {
            self.bits = vec![0; self.tiles.div_ceil(64)];
            self.rows = vec![0; self.tiles];
            for (i, r) in std::mem::take(&mut self.list) {
                self.bits[i as usize / 64] |= 1 << (i % 64);
                self.rows[i as usize] = r;
            }
            self.bits[t / 64] |= 1 << (t % 64);
            self.rows[t] |= rows;
        }
    }

    /// Adds the tiles and rows of `other` (needs of the same map).
    pub(crate) fn merge(&mut self, other: &Needs) {
        for (t, rows) in other.iter() {
            self.set(t, rows);
        }
    }

    /// Each needed tile once, with its rows.
    fn iter(&self) -> impl Iterator<Item = (usize, Rows)> + '_ {
        let listed = self.list.iter().map(|&(t, r)| (t as usize, r));
        let rows = &self.rows;
        let bitmap = self.bits.iter().enumerate().flat_map(move |(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                (b != 0).then(|| {
                    let i = b.trailing_zeros() as usize;
                    b &= b - 1;
                    (w * 64 + i, rows[w * 64 + i])
                })
            })
        });
        listed.chain(bitmap)
    }
}

thread_local! {
    /// Set when a tile this thread needed was left undrawn because the deadline had passed.
    static SKIPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The tile drawer's buffers, kept from one tile to the next.
    static SCRATCH: std::cell::RefCell<TileScratch> = std::cell::RefCell::new(TileScratch::default());
    /// A tile's values, kept from one group of tiles to the next.
    static VALUES: std::cell::Cell<Option<TileValues>> = const { std::cell::Cell::new(None) };
}

/// Whether a tile this thread needed was left undrawn by the deadline since the last call
/// (and clears the flag): the answers computed meanwhile are not the map's.
pub(crate) fn take_skipped() -> bool {
    SKIPPED.with(|s| s.replace(false))
}

/// A shadow map's texels, drawn tile by tile on demand.
#[derive(Debug)]
pub(crate) struct Tiled {
    scene: Arc<SceneIndex>,
    state: RasterState,
    format: Format,
    resolution: u32,
    /// The depth the map is cleared to, as the target's clear stores it.
    clear: f32,
    view_proj: Vec<Mat4>,
    /// Tiles along each edge of a slice.
    tiles: u32,
    /// The sampler wraps u, v (else clamps or reads the border: either way the nearest texel's
    /// tile holds what a tap past the edge reads).
    wrap: [bool; 2],
    threads: usize,
    /// Tiles drawn for the batched path alone leave their texels unwritten (see
    /// [`Resident::texels`]): the keys can give them back.
    keys_only: bool,
    /// The lighting's counts (shared by its maps) and this map's own.
    counters: Arc<TileCounters>,
    own: TileCounters,
    resident: RwLock<Resident>,
    /// The whole map, once something asked for the texture itself.
    snapshot: OnceLock<Texture>,
    /// What the first such call that the deadline stopped returned.
    partial: OnceLock<Texture>,
}

/// Where [`Tiled::clamped_span`] clamps a tap's texel-space position: beyond every map.
const SPAN_LIMIT: f32 = 65536.0;

/// R27's first texel of a tap whose texel-space position, less half a texel, is `x`: the
/// texel a bilinear tap reads first and the lower one a point tap (R25/R26, either rounding)
/// can read.
#[inline]
fn first_texel(x: f32) -> i64 {
    crate::sample::address::linear_fixed(x) >> 8
}

/// `floor(v)`: R27's first texel give or take one, as a bound for the cube's face
/// coordinates (computed here apart from the sampler's; the caller adds a texel of slack on
/// each side).
#[inline]
fn texel_floor(v: f32) -> i64 {
    // floor without a call to libm's: truncation, one down for negative non-integers. NaN
    // clamps to 0 through `as`.
    let v = f64::from(v).clamp(-1e12, 1e12);
    let t = v as i64;
    t - i64::from((t as f64) > v)
}

impl Tiled {
    /// A tiled map of `slices` slices (6 for a cube), or `None` when its sampler would take the
    /// reference path (address modes other than CLAMP, BORDER and WRAP, or formats the kernels
    /// do not take): such maps are drawn whole.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        sampler: &Sampler,
        dimension: Dimension,
        format: Format,
        resolution: u32,
        view_proj: Vec<Mat4>,
        state: RasterState,
        clear: f32,
        scene: Arc<SceneIndex>,
        counters: Arc<TileCounters>,
        threads: usize,
    ) -> Option<Tiled> {
        let desc = sampler.desc();
        let wrap = [desc.address_u, desc.address_v].map(|m| m == AddressMode::Wrap);
        let tileable = |m| {
            matches!(
                m,
                AddressMode::Clamp | AddressMode::Border | AddressMode::Wrap
            )
        };
        if !(tileable(desc.address_u) && tileable(desc.address_v)) {
            return None;
        }
        let slices = view_proj.len() as u32;
        let desc = TextureDesc::new(dimension, format, [resolution, resolution, 1], slices);
        let spare = counters.spares.get().and_then(|s| s.take(&desc));
        let (texture, spare_keys) = match spare {
            Some(s) => match Texture::over_recycled(desc, s.texels) {
                Some(t) => (t, s.keys),
                None => (Texture::zeroed_lazy(desc).ok()?, Vec::new()),
            },
            None => (Texture::zeroed_lazy(desc).ok()?, Vec::new()),
        };
        let cube = dimension == Dimension::TextureCube;
        // Each batch takes a spare key image (the old map's, of the same shape) instead of a
        // new one.
        let mut spare_keys = spare_keys.into_iter();
        let mut batches = if cube {
            // Each face's batch is planned on an untouched 2D texture of the face's size: a lazy
            // batch reads no texel, only the size and format.
            let face_desc = TextureDesc::new_2d(format, resolution, resolution);
            let stand_in = Texture::zeroed_lazy(face_desc).ok()?;
            (0..6)
                .map(|_| sampler.cmp_level_zero_batch_lazy(&stand_in, 0, spare_keys.next()))
                .collect::<Vec<_>>()
        } else {
            (0..slices)
                .map(|s| sampler.cmp_level_zero_batch_lazy(&texture, s, spare_keys.next()))
                .collect()
        };
        if batches.iter().any(Option::is_none) {
            return None;
        }
        // Tiles leave their texels unwritten only where the keys can give them back.
        let keys_only = batches.iter_mut().all(|b| {
            b.as_mut()
                .and_then(CmpBatch::key_writer)
                .is_some_and(|k| k.texels_kind().is_some())
        });
        let tiles = resolution.div_ceil(MAP_TILE);
        let per_slice = (tiles * tiles) as usize;
        let clear = {
            let mut target = crate::raster::DepthTarget::new(1, 1, format).ok()?;
            target.clear(clear);
            target.depth(0, 0)
        };
        Some(Tiled {
            scene,
            state,
            format,
            resolution,
            clear,
            view_proj,
            tiles,
            wrap,
            threads: threads.max(1),
            keys_only,
            counters,
            own: TileCounters::default(),
            resident: RwLock::new(Resident {
                texture,
                batches,
                rows: vec![0; per_slice * slices as usize],
                texels: vec![0; (per_slice * slices as usize).div_ceil(64)],
                from_keys: vec![0; (per_slice * slices as usize).div_ceil(64)],
                layers: HashMap::new(),
                touched: HashMap::new(),
            }),
            snapshot: OnceLock::new(),
            partial: OnceLock::new(),
        })
    }

    fn per_slice(&self) -> usize {
        (self.tiles * self.tiles) as usize
    }

    /// An empty set of needs for this map.
    pub(crate) fn needs(&self) -> Needs {
        Needs {
            list: Vec::new(),
            bits: Vec::new(),
            rows: Vec::new(),
            tiles: self.per_slice() * self.view_proj.len(),
        }
    }

    /// The tiles (at most four) of one axis that hold texels `lo..=hi` (at most four texels)
    /// through the address mode: wrapped, or clamped to the edge (a tap past a clamped or
    /// bordered edge reads the edge texel or the border, both written with the edge's tile);
    /// with each tile, a bit for each of those texels in it (its rows, on the v axis).
    #[inline]
    fn axis_tiles(&self, lo: i64, hi: i64, wrap: bool) -> ([u32; 4], [Rows; 4], usize) {
        let n = i64::from(self.resolution);
        let hi = hi.min(lo + 3);
        let mut out = [0u32; 4];
        let mut rows = [0; 4];
        let mut len = 0;
        for x in lo..=hi {
            let x = if wrap {
                x.rem_euclid(n)
            } else {
                x.clamp(0, n - 1)
            } as u32;
            let t = x / MAP_TILE;
            if len == 0 || out[len - 1] != t {
                out[len] = t;
                len += 1;
            }
            rows[len - 1] |= 1 << (x % MAP_TILE);
        }
        (out, rows, len)
    }

    /// Marks the tiles a tap at (u, v) of `slice` reads: texels `t₀` and `t₀ + 1` on each axis,
    /// where `t₀` is R27's first texel, found with the sampler's own f32 arithmetic (the range
    /// reduction of R24, `fl(U'·N) − 0.5`, then `rne(·256) >> 8`). A bilinear tap reads those
    /// two texels (one when a weight is 0, R68); a point tap one of them (R25, R26); every
    /// lookup of a tiled map is one or the other at LOD 0 (D3D11.3 FS 7.18.7–7.18.8).
    #[inline]
    pub(crate) fn need_2d(&self, needs: &mut Needs, slice: usize, [u, v]: [f32; 2]) {
        if slice >= self.view_proj.len() {
            return;
        }
        if !(u.is_finite() && v.is_finite()) {
            self.need_slice(needs, slice);
            return;
        }
        let n = self.resolution as f32;
        let reduce = |c: f32, wrap: bool| if wrap { c - c.floor() } else { c };
        let tx = first_texel(reduce(u, self.wrap[0]) * n - 0.5);
        let ty = first_texel(reduce(v, self.wrap[1]) * n - 0.5);
        let xs = self.axis_tiles(tx, tx + 1, self.wrap[0]);
        let ys = self.axis_tiles(ty, ty + 1, self.wrap[1]);
        self.need_tiles(needs, slice, xs, ys);
    }

    /// [`Tiled::need_2d`] for every tap of `taps`, with the same result. Taps near each other
    /// mostly read the same tiles and rows: on axes that do not wrap, each tap's first texels,
    /// the (one or two) tiles of its footprint across and its two rows are worked out in
    /// integers (sixteen taps at a time with AVX-512), and a tap whose tiles and rows are those
    /// of the tap before it marks nothing more.
    pub(crate) fn need_2d_taps(&self, needs: &mut Needs, slice: usize, taps: &[[f32; 2]]) {
        if slice >= self.view_proj.len() {
            return;
        }
        if self.wrap[0] || self.wrap[1] {
            for &c in taps {
                self.need_2d(needs, slice, c);
            }
            return;
        }
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if crate::cpu::CpuExtension::Avx512bw.is_supported() {
            // SAFETY: AVX-512 F (and BW) is present.
            unsafe { self.clamped_taps_avx512(needs, slice, taps) };
            return;
        }
        self.clamped_taps(needs, slice, taps);
    }

    /// Marks the tiles and rows of texel rectangles of `slice`, each given by the first and
    /// the last tap of a grid of taps (`[u first, v first, u last, v last]`, finite; see
    /// `ShadowMap::sort_grid`): from the first tap's first texels to the last tap's second
    /// ones, as [`Tiled::need_2d_taps`] of all the grid's taps would mark them when their
    /// footprints meet. The texel of a tap is a non-decreasing function of its coordinate,
    /// clamp included, so the corners bound every tap of the grid. Returns false, marking
    /// nothing, on a map whose axes wrap (there a grid's taps need not be ordered so).
    pub(crate) fn need_2d_corners(
        &self,
        needs: &mut Needs,
        slice: usize,
        corners: &[[f32; 4]],
    ) -> bool {
        if self.wrap[0] || self.wrap[1] {
            return false;
        }
        if slice >= self.view_proj.len() {
            return true;
        }
        let n = self.resolution as f32;
        let base = slice * self.per_slice();
        let row = self.tiles as usize;
        let mut before = None;
        for &[u0, v0, u1, v1] in corners {
            // The same arithmetic as `clamped_taps`, on the corners.
            let [x0, x1, y0, y1] = self.corner_spans([u0, u1, v0, v1].map(|c| c * n - 0.5));
            let rect = (x0 / MAP_TILE, x1 / MAP_TILE, y0, y1);
            if before == Some(rect) {
                continue;
            }
            before = Some(rect);
            let (x0, x1, y0, y1) = rect;
            for ty in y0 / MAP_TILE..=y1 / MAP_TILE {
                let top = ty * MAP_TILE;
                let (lo, hi) = (y0.max(top) - top, y1.min(top + MAP_TILE - 1) - top);
                let rows: Rows = (Rows::MAX >> (Rows::BITS - 1 - (hi - lo))) << lo;
                for tx in x0..=x1 {
                    needs.set(base + ty as usize * row + tx as usize, rows);
                }
            }
        }
        true
    }

    /// [`Tiled::clamped_span`] of four values at once: the first texel of `x[0]`, the second of
    /// `x[1]`, the first of `x[2]` and the second of `x[3]` (a grid's corners: its first and
    /// last u, then v). On x86-64 in SSE2 lanes with the same operations in the same order (an
    /// f32 clamp, the exact ×256 and f64 widening, `rne_whole`'s two f64 additions, the
    /// truncation of a whole value), so the same texels; the clamps to the map stay scalar.
    #[inline]
    fn corner_spans(&self, x: [f32; 4]) -> [u32; 4] {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            use crate::sample::address::RNE_ROUND;
            use std::arch::x86_64::*;
            let last = self.resolution as i32 - 1;
            let mut ts = [0i32; 4];
            // SAFETY: SSE2 is part of x86-64's baseline; the store writes four lanes into four
            // values.
            unsafe {
                let c = _mm_setr_ps(x[0], x[1], x[2], x[3]);
                let c = _mm_min_ps(
                    _mm_max_ps(c, _mm_set1_ps(-SPAN_LIMIT)),
                    _mm_set1_ps(SPAN_LIMIT),
                );
                let c = _mm_mul_ps(c, _mm_set1_ps(256.0));
                // |x·256| ≤ 2²⁴: inside `rne_whole`'s range, where it adds and takes away
                // RNE_ROUND.
                let round = |d: __m128d| {
                    let r = _mm_set1_pd(RNE_ROUND);
                    _mm_cvttpd_epi32(_mm_sub_pd(_mm_add_pd(d, r), r))
                };
                let (lo, hi) = (
                    round(_mm_cvtps_pd(c)),
                    round(_mm_cvtps_pd(_mm_movehl_ps(c, c))),
                );
                let t = _mm_srai_epi32::<8>(_mm_unpacklo_epi64(lo, hi));
                _mm_storeu_si128(ts.as_mut_ptr().cast(), t);
            }
            let clamp = |t: i32| t.clamp(0, last) as u32;
            [
                clamp(ts[0]),
                clamp(ts[1] + 1),
                clamp(ts[2]),
                clamp(ts[3] + 1),
            ]
        }
        #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
        {
            [
                self.clamped_span(x[0]).0,
                self.clamped_span(x[1]).1,
                self.clamped_span(x[2]).0,
                self.clamped_span(x[3]).1,
            ]
        }
    }

    /// Texels t₀ and t₀ + 1 on an axis that does not wrap, clamped to the map (the texels of
    /// `axis_tiles`), for a tap whose `fl(U'·N) − 0.5` is `x` and whose coordinate is finite
    /// (`x` is then finite or infinite). Past ±2¹⁶ every first texel lies off the map
    /// on that side (a map is at most 2¹⁴ texels across), so `x` is clamped there first; x·256
    /// is then exact and, rounded (`first_texel`), a whole i32.
    #[inline]
    fn clamped_span(&self, x: f32) -> (u32, u32) {
        let last = self.resolution as i32 - 1;
        let x = x.clamp(-SPAN_LIMIT, SPAN_LIMIT);
        let fixed = crate::sample::address::rne_whole(f64::from(x * 256.0));
        // SAFETY: |x·256| ≤ 2²⁴ and whole.
        let t = unsafe { fixed.to_int_unchecked::<i32>() } >> 8;
        (t.clamp(0, last) as u32, (t + 1).clamp(0, last) as u32)
    }

    /// Marks the tiles `xs` × (those of texel rows `ys`) of the slice whose first tile is
    /// `base`, with rows `ys` in them: `xs` the first and the last tile on the u axis, `ys` the
    /// two texel rows ([`Tiled::clamped_span`]).
    #[inline]
    fn need_spans(&self, needs: &mut Needs, base: usize, xs: (u32, u32), ys: (u32, u32)) {
        let row = self.tiles as usize;
        let (y0, y1) = (ys.0 / MAP_TILE, ys.1 / MAP_TILE);
        let (r0, r1): (Rows, Rows) = (1 << (ys.0 % MAP_TILE), 1 << (ys.1 % MAP_TILE));
        let rows = if y0 == y1 { [r0 | r1, 0] } else { [r0, r1] };
        for (y, rows) in (y0..=y1).zip(rows) {
            for x in xs.0..=xs.1 {
                needs.set(base + y as usize * row + x as usize, rows);
            }
        }
    }

    /// [`Tiled::need_2d_taps`] on a map whose axes do not wrap, one tap at a time.
    fn clamped_taps(&self, needs: &mut Needs, slice: usize, taps: &[[f32; 2]]) {
        let n = self.resolution as f32;
        let base = slice * self.per_slice();
        // The tiles (u) and rows (v) of the tap before.
        let mut before = None;
        for &[u, v] in taps {
            if !(u.is_finite() && v.is_finite()) {
                self.need_2d(needs, slice, [u, v]);
                continue;
            }
            // The same arithmetic as `need_2d` on an axis that does not wrap.
            let (x0, x1) = self.clamped_span(u * n - 0.5);
            let spans = (
                (x0 / MAP_TILE, x1 / MAP_TILE),
                self.clamped_span(v * n - 0.5),
            );
            if before != Some(spans) {
                before = Some(spans);
                self.need_spans(needs, base, spans.0, spans.1);
            }
        }
    }

    /// [`Tiled::clamped_taps`] sixteen taps at a time: the same spans (f32 `u·N − 0.5` and its
    /// clamp, then the rounding to 1/256 as one f32-to-integer conversion to nearest even,
    /// which rounds the exact x·256 as `rne_whole` does), each tap compared with the one
    /// before it in one step; taps with a non-finite coordinate go to `need_2d`.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[target_feature(enable = "avx512f")]
    unsafe fn clamped_taps_avx512(&self, needs: &mut Needs, slice: usize, taps: &[[f32; 2]]) {
        use std::arch::x86_64::*;
        let base = slice * self.per_slice();
        let n = _mm512_set1_ps(self.resolution as f32);
        let half = _mm512_set1_ps(0.5);
        let (low, high) = (_mm512_set1_ps(-SPAN_LIMIT), _mm512_set1_ps(SPAN_LIMIT));
        let scale = _mm512_set1_ps(256.0);
        let last = _mm512_set1_epi32(self.resolution as i32 - 1);
        let zero = _mm512_setzero_si512();
        let one = _mm512_set1_epi32(1);
        let infinity = _mm512_set1_ps(f32::INFINITY);
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        // The scalar path divides by the tile's edge; a shift does the same for a power of two.
        const { assert!(MAP_TILE.is_power_of_two()) };
        const SHIFT: u32 = MAP_TILE.trailing_zeros();
        // An axis' spans, the first and the last texel (v), or their tiles (u: texels shifted
        // by `shift`), in the low and the high half of each lane.
        let spans = |c: __m512, shift: __m512i| {
            let x = _mm512_sub_ps(_mm512_mul_ps(c, n), half);
            let x = _mm512_min_ps(_mm512_max_ps(x, low), high);
            let fixed = _mm512_cvt_roundps_epi32::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm512_mul_ps(x, scale),
            );
            let t = _mm512_srai_epi32::<8>(fixed);
            let lo = _mm512_min_epi32(_mm512_max_epi32(t, zero), last);
            let hi = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(t, one), zero), last);
            _mm512_or_si512(
                _mm512_srlv_epi32(lo, shift),
                _mm512_slli_epi32::<16>(_mm512_srlv_epi32(hi, shift)),
            )
        };
        let (tiles, texels) = (_mm512_set1_epi32(SHIFT as i32), zero);
        // A span no tap has (texels are under 2¹⁶), as "the tap before" the first.
        let mut before = [_mm512_set1_epi32(-1); 2];
        let chunks = taps.chunks_exact(16);
        let rest = chunks.remainder();
        for chunk in chunks {
            // SAFETY: 16 taps are 32 floats.
            let (a, b) = unsafe {
                let p = chunk.as_ptr().cast::<f32>();
                (_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16)))
            };
            let u = _mm512_permutex2var_ps(a, even, b);
            let v = _mm512_permutex2var_ps(a, odd, b);
            let finite = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_abs_ps(u), infinity)
                & _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_abs_ps(v), infinity);
            let now = [spans(u, tiles), spans(v, texels)];
            // Each lane's tap before: the last lane of the chunk before, then this chunk's.
            let prev = [
                _mm512_alignr_epi32::<15>(now[0], before[0]),
                _mm512_alignr_epi32::<15>(now[1], before[1]),
            ];
            let new = _mm512_cmpneq_epi32_mask(now[0], prev[0])
                | _mm512_cmpneq_epi32_mask(now[1], prev[1]);
            before = now;
            let mut marked = new & finite;
            if marked != 0 {
                let (mut xs, mut ys) = ([0u32; 16], [0u32; 16]);
                // SAFETY: 16 lanes into 16 values each.
                unsafe {
                    _mm512_storeu_si512(xs.as_mut_ptr().cast(), now[0]);
                    _mm512_storeu_si512(ys.as_mut_ptr().cast(), now[1]);
                }
                let span = |s: u32| (s & 0xFFFF, s >> 16);
                while marked != 0 {
                    let k = marked.trailing_zeros() as usize;
                    marked &= marked - 1;
                    self.need_spans(needs, base, span(xs[k]), span(ys[k]));
                }
            }
            let mut non_finite = !finite;
            while non_finite != 0 {
                let k = non_finite.trailing_zeros() as usize;
                non_finite &= non_finite - 1;
                self.need_2d(needs, slice, chunk[k]);
            }
        }
        self.clamped_taps(needs, slice, rest);
    }

    /// Marks tiles `xs` × `ys` (`axis_tiles`' results), each with its rows.
    fn need_tiles(
        &self,
        needs: &mut Needs,
        slice: usize,
        (xs, _, nx): ([u32; 4], [Rows; 4], usize),
        (ys, rows, ny): ([u32; 4], [Rows; 4], usize),
    ) {
        let base = slice * self.per_slice();
        for (&y, &rows) in ys[..ny].iter().zip(&rows) {
            for &x in &xs[..nx] {
                needs.set(base + (y * self.tiles + x) as usize, rows);
            }
        }
    }

    fn need_slice(&self, needs: &mut Needs, slice: usize) {
        let base = slice * self.per_slice();
        for t in 0..self.per_slice() {
            needs.set(base + t, ALL_ROWS);
        }
    }

    /// Marks the tiles a seamless cube tap in direction `d` (the sampler's coordinate) reads:
    /// round the sample on its face and, near an edge, on the faces across it (directions a
    /// texel and a half away along the face, as the seamless footprint reaches no farther).
    pub(crate) fn need_cube(&self, needs: &mut Needs, d: Vec3) {
        if !d.is_finite() || d == Vec3::ZERO {
            for face in 0..6 {
                self.need_slice(needs, face);
            }
            return;
        }
        let n = self.resolution as f32;
        let texel = 1.0 / n;
        let at = |d: Vec3| {
            let fc = crate::sample::face_coord([d.x, d.y, d.z]);
            (fc.face as usize, fc.s * n - 0.5, fc.t * n - 0.5)
        };
        let (face, s, t) = at(d);
        let near_edge = s < 2.0 || t < 2.0 || s > n - 3.0 || t > n - 3.0;
        let (right, up) = crate::sample::cube_face_axes(face as u32);
        let m = d.abs().max_element();
        let offsets: &[f32] = if near_edge { &[-1.5, 0.0, 1.5] } else { &[0.0] };
        for &ds in offsets {
            for &dt in offsets {
                let p = d + (right * ds - up * dt) * (2.0 * texel * m);
                let (f, s, t) = at(p);
                let (tx, ty) = (texel_floor(s), texel_floor(t));
                let xs = self.axis_tiles(tx - 1, tx + 2, false);
                // Whole tiles on a cube face: the window bounds which tiles a seamless tap
                // reaches (its corners across two edges too), not which rows.
                let (ys, _, ny) = self.axis_tiles(ty - 1, ty + 2, false);
                self.need_tiles(needs, f, xs, (ys, [ALL_ROWS; 4], ny));
            }
        }
    }

    /// Draws the needed tiles that are not drawn yet; false when the [deadline](crate::deadline)
    /// passed first and left some undrawn (they stay undrawn, for a later call; the thread's
    /// skip flag, [`take_skipped`], is set). Threads that need the same tiles at once wait for
    /// one of them to draw them.
    pub(crate) fn ensure(&self, needs: &Needs) -> bool {
        self.ensure_with(needs, false)
    }

    /// [`Tiled::ensure`], writing the drawn tiles' texels too when `texels` (always where the
    /// keys cannot give them back; see [`Resident::texels`]).
    fn ensure_with(&self, needs: &Needs, texels: bool) -> bool {
        let missing: Vec<(usize, Rows)> = {
            let r = self.read();
            needs
                .iter()
                .filter(|&(t, rows)| !r.covers(t, rows))
                .collect()
        };
        if missing.is_empty() {
            return true;
        }
        let mut w = self.resident.write().unwrap_or_else(|e| e.into_inner());
        // The rows still missing (another thread may have drawn some meanwhile).
        let missing: Vec<(usize, Rows)> = missing
            .into_iter()
            .filter(|&(t, rows)| !w.covers(t, rows))
            .map(|(t, rows)| (t, rows & !w.rows[t]))
            .collect();
        if missing.is_empty() {
            return true;
        }
        crate::zone!("penumbra::shadow::draw tiles");
        let started = std::time::Instant::now();
        // Each tile once (`Needs` holds a set): the workers' writes rely on it.
        debug_assert!(
            missing
                .iter()
                .map(|(t, _)| t)
                .collect::<std::collections::HashSet<_>>()
                .len()
                == missing.len(),
            "a tile listed twice"
        );
        // A tile under moving occluders is drawn whole (its layer is a whole tile's).
        let plans: Vec<(usize, Plan, Rows, bool)> = missing
            .iter()
            .map(|&(t, rows)| {
                let fresh = !w.ready(t);
                match w.plan(t) {
                    Plan::Whole => (t, Plan::Whole, rows, fresh),
                    layered => (t, layered, ALL_ROWS, fresh),
                }
            })
            .collect();
        let layered = plans
            .iter()
            .filter(|(_, p, ..)| matches!(p, Plan::OverLayer(..)))
            .count() as u64;
        let w = &mut *w;
        let texels = texels || !self.keys_only;
        // The workers write their tiles straight into the key images (and the texels).
        let (drawn, render, layout) = self.draw(plans, &w.targets(), texels);
        // Tiles started (not those that only gained rows) and rows drawn.
        let (mut started_tiles, mut rows_drawn) = (0u64, 0u64);
        for (t, rows, layer) in &mut *drawn.lock().unwrap_or_else(|e| e.into_inner()) {
            started_tiles += u64::from(!w.ready(*t));
            let real = self.real_rows(*t, *rows);
            rows_drawn += u64::from(real.count_ones());
            // Rows past the map's edge count as drawn: a need for the whole tile is then met.
            w.drawn(*t, real | !self.real_rows(*t, ALL_ROWS), texels);
            if !w.touched.is_empty() {
                w.touched.remove(t);
            }
            if let Some(layer) = layer.take() {
                w.layers.insert(*t, layer);
            }
        }
        let drawn = drawn.into_inner().unwrap_or_else(|e| e.into_inner());
        let wall = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        for c in [&*self.counters, &self.own] {
            c.wall_ns.fetch_add(wall, Ordering::Relaxed);
            c.rendered.fetch_add(started_tiles, Ordering::Relaxed);
            c.rows.fetch_add(rows_drawn, Ordering::Relaxed);
            c.layered.fetch_add(layered, Ordering::Relaxed);
            c.render_ns.fetch_add(render, Ordering::Relaxed);
            c.layout_ns.fetch_add(layout, Ordering::Relaxed);
        }
        crate::plot!(
            "penumbra tiles rendered",
            self.counters.rendered.load(Ordering::Relaxed) as f64
        );
        crate::plot!("penumbra tile rows rendered", rows_drawn as f64);
        let complete = drawn.len() == missing.len();
        if !complete {
            SKIPPED.with(|s| s.set(true));
        }
        complete
    }

    /// Rasterizes tiles (global indices, each with its plan and the rows to draw), side by
    /// side on the map's threads, each written into `targets` (its texels too when `texels`)
    /// by the thread that drew it; returns the tiles drawn with the rows drawn (those asked
    /// for, maybe more) and the layers they made for later redraws, and the time spent
    /// drawing and writing them (ns, summed over threads).
    #[allow(clippy::type_complexity)]
    fn draw(
        &self,
        plans: Vec<(usize, Plan, Rows, bool)>,
        targets: &LayoutTargets<'_>,
        texels: bool,
    ) -> (Mutex<Vec<(usize, Rows, Option<Layer>)>>, u64, u64) {
        let n = self.resolution;
        let drawers: Vec<TileDrawer<'_, Occluder>> = self
            .view_proj
            .iter()
            .map(|vp| {
                TileDrawer::new(
                    n,
                    n,
                    self.format,
                    *vp,
                    &self.scene.occluders,
                    &self.scene.index,
                    &self.state,
                )
            })
            .collect();
        let per = self.per_slice();
        let out = Mutex::new(Vec::with_capacity(plans.len()));
        let (render, layout) = (AtomicU64::new(0), AtomicU64::new(0));
        // Helper threads start per call: worth it only for a good number of tiles.
        let threads = if plans.len() >= 8 { self.threads } else { 1 };
        let jobs = self.jobs(plans, threads);
        // The pieces the coarse depth test skipped (summed over the jobs).
        let rejected = crate::raster::run_parallel(jobs.into_iter(), threads, |job| {
            // Once the deadline has passed the remaining tiles stay undrawn.
            if crate::deadline::expired() {
                return 0;
            }
            let area = |t: usize| {
                let [x0, y0, x1, y1] = self.tile_rect(t % per);
                Area {
                    origin: [x0 as i32, y0 as i32],
                    stride: MAP_TILE as usize,
                    clip: [x0 as i32, y0 as i32, x1 as i32, y1 as i32],
                    rows: crate::raster::EVERY_ROW,
                }
            };
            // Stores the drawn parts of `slice` held in `values` (rows of `stride` values from
            // texel `origin`): of each rectangle of `parts`, the rows `rows` (a bit per row from
            // its top). Then records the tiles `tiles`; returns when the layout ended: the next
            // area's drawing starts then (two clock reads an area).
            let finish = |slice: usize,
                          origin: [u32; 2],
                          parts: &[([u32; 4], u64)],
                          values: &TileValues,
                          stride: usize,
                          tiles: &mut dyn Iterator<Item = (usize, Rows, Option<Layer>)>,
                          start: Instant| {
                let drawn = Instant::now();
                let area = AreaValues {
                    values,
                    origin,
                    stride,
                };
                for &([x0, y0, x1, y1], rows) in parts {
                    for (a, b) in row_runs(rows, y1 - y0 + 1) {
                        let run = [x0, y0 + a, x1, y0 + b];
                        // SAFETY: each tile is in one job of one call, so no other thread
                        // writes its texels or the keys its region owns; `run` lies in these
                        // tiles.
                        unsafe { targets.store(self, slice, run, area, texels) };
                    }
                }
                let end = Instant::now();
                render.fetch_add((drawn - start).as_nanos() as u64, Ordering::Relaxed);
                layout.fetch_add((end - drawn).as_nanos() as u64, Ordering::Relaxed);
                out.lock().unwrap_or_else(|e| e.into_inner()).extend(tiles);
                end
            };
            match job {
                Job::Group(group) => {
                    let start = Instant::now();
                    let tiles: Vec<usize> = group.iter().map(|&(t, ..)| t).collect();
                    // The rows asked of a tile of the job (`group` is sorted), and whether
                    // none of it is drawn yet.
                    let asked = |t: usize| {
                        group
                            .binary_search_by_key(&t, |&(t, ..)| t)
                            .map_or((0, false), |k| (group[k].1, group[k].2))
                    };
                    let slice = tiles[0] / per;
                    let drawer = &drawers[slice];
                    // One walk of the hierarchies and one set-up for the group's rectangle,
                    // then each tile drawn from the pieces that reach it, into its area's
                    // buffer.
                    let rect = tiles.iter().map(|&t| area(t).clip).fold(
                        [i32::MAX, i32::MAX, i32::MIN, i32::MIN],
                        |a, b| {
                            [
                                a[0].min(b[0]),
                                a[1].min(b[1]),
                                a[2].max(b[2]),
                                a[3].max(b[3]),
                            ]
                        },
                    );
                    SCRATCH.with_borrow_mut(|scratch| {
                        drawer.collect(rect, scratch, Instances::All);
                        let mut rejected = 0;
                        let mut start = start;
                        // The thread's buffer (one of this map's format, an area's size),
                        // cleared before each area.
                        let mut values = match VALUES.take() {
                            Some(v) if v.is_of(self.format) && v.len() == AREA_VALUES => v,
                            _ => TileValues::cleared_len(self.format, self.clear, AREA_VALUES),
                        };
                        for (k, merged) in self.merge(&tiles).into_iter().enumerate() {
                            // A block started before the deadline stops at it too; the tiles
                            // left stay undrawn (`ensure` reports them).
                            if k > 0 && crate::deadline::expired() {
                                break;
                            }
                            let rect = merged.rect(self);
                            let stride = (MAP_TILE * merged.across) as usize;
                            let len = stride * (MAP_TILE * merged.down) as usize;
                            values.refill_first(self.format, self.clear, len);
                            // The rows each tile draws, and the parts laid out: a row of tiles
                            // none of which was drawn yet draws the rows any of them asked for,
                            // laid out at once (rows of keys as long as the area's); a row with
                            // a tile that only gains rows draws tile by tile the rows asked.
                            let tiles: Vec<(usize, (Rows, bool))> =
                                merged.tiles(self).map(|t| (t, asked(t))).collect();
                            let mut draws: Vec<Rows> = Vec::with_capacity(4);
                            let mut parts = Vec::with_capacity(4);
                            for row in tiles.chunks(merged.across as usize) {
                                if row.iter().all(|&(_, (_, fresh))| fresh) {
                                    let union = row.iter().fold(0, |u, &(_, (rows, _))| u | rows);
                                    draws.extend(row.iter().map(|_| union));
                                    let [x0, y0, ..] = area(row[0].0).clip;
                                    let [.., x1, y1] = area(row[row.len() - 1].0).clip;
                                    let rect = [x0, y0, x1, y1].map(|c| c as u32);
                                    parts.push((rect, u64::from(union)));
                                } else {
                                    for &(t, (rows, _)) in row {
                                        draws.push(rows);
                                        let rect = area(t).clip.map(|c| c as u32);
                                        parts.push((rect, u64::from(rows)));
                                    }
                                }
                            }
                            // Drawn part by part, not tile by tile: a row of fresh tiles as one
                            // area, and such rows one above the other as one (a piece that
                            // crosses a tile edge inside is set up once, not per tile; the
                            // texels drawn are the same).
                            let mut buf = values.buf_first(len);
                            for ([x0, y0, x1, y1], rows) in stacked(&parts) {
                                let area = Area {
                                    origin: [rect[0] as i32, rect[1] as i32],
                                    stride,
                                    clip: [x0, y0, x1, y1].map(|c| c as i32),
                                    rows,
                                };
                                rejected += drawer.draw_collected(area, &mut buf, scratch).rejected;
                            }
                            let mut drawn = tiles
                                .iter()
                                .zip(&draws)
                                .map(|(&(t, _), &rows)| (t, rows, None));
                            start = finish(
                                slice,
                                [rect[0], rect[1]],
                                &parts,
                                &values,
                                stride,
                                &mut drawn,
                                start,
                            );
                        }
                        VALUES.set(Some(values));
                        rejected
                    })
                }
                Job::Layered(t, moving, kept) => {
                    let start = Instant::now();
                    let drawer = &drawers[t / per];
                    let draw = |values: &mut TileValues, which: Instances<'_>| {
                        SCRATCH
                            .with_borrow_mut(|scratch| {
                                drawer.draw_some(area(t), values.buf(), scratch, which)
                            })
                            .rejected
                    };
                    let mut rejected = 0;
                    let (values, layer) = match kept {
                        None => {
                            let mut base = TileValues::cleared(self.format, self.clear);
                            rejected += draw(&mut base, Instances::AllBut(&moving));
                            let mut values = base.clone();
                            rejected += draw(&mut values, Instances::Only(&moving));
                            (values, Some(Layer { moving, base }))
                        }
                        Some(mut values) => {
                            rejected += draw(&mut values, Instances::Only(&moving));
                            (values, None)
                        }
                    };
                    let rect = self.tile_rect(t % per);
                    let stride = MAP_TILE as usize;
                    finish(
                        t / per,
                        [rect[0], rect[1]],
                        &[(rect, u64::from(ALL_ROWS))],
                        &values,
                        stride,
                        &mut std::iter::once((t, ALL_ROWS, layer)),
                        start,
                    );
                    rejected
                }
            }
        });
        for c in [&*self.counters, &self.own] {
            c.rejected.fetch_add(rejected, Ordering::Relaxed);
        }
        crate::plot!("penumbra tiles pieces rejected", rejected as f64);
        (out, render.into_inner(), layout.into_inner())
    }

    /// The drawing jobs of `plans`: tiles drawn whole are grouped by blocks of
    /// [`GROUP`]² tiles of one slice (one walk of the hierarchies and one vertex set-up
    /// serve the block's tiles: neighbouring tiles share most of their triangles, and a
    /// large triangle reaches many tiles); tiles with layers are drawn one by one.
    ///
    /// With fewer jobs than `threads` (a small map, or few tiles in few blocks), the largest
    /// blocks are split in halves until every thread has a job or every block is one tile.
    /// Blocks with more tiles come first: in the 10,000-probe flight that took 1–2 % off the
    /// frame, and 14 % off the layout's CPU, over ten alternated pairs (benches/README.md).
    fn jobs(&self, plans: Vec<(usize, Plan, Rows, bool)>, threads: usize) -> Vec<Job> {
        let per = self.per_slice();
        let blocks = self.tiles.div_ceil(GROUP) as usize;
        // (block, tile) of the tiles drawn whole.
        let mut whole = Vec::new();
        let mut jobs = Vec::new();
        for (t, plan, rows, fresh) in plans {
            match plan {
                Plan::Whole => {
                    let (slice, local) = (t / per, (t % per) as u32);
                    let (bx, by) = (
                        (local % self.tiles / GROUP) as usize,
                        (local / self.tiles / GROUP) as usize,
                    );
                    whole.push(((slice * blocks + by) * blocks + bx, t, rows, fresh));
                }
                Plan::NewLayer(moving) => jobs.push(Job::Layered(t, moving, None)),
                Plan::OverLayer(moving, base) => jobs.push(Job::Layered(t, moving, Some(base))),
            }
        }
        // In the map's order (by block, then by tile), so that runs are repeatable.
        let whole = in_block_order(whole, self.view_proj.len() * blocks * blocks);
        let mut groups: Vec<Vec<(usize, Rows, bool)>> = whole
            .chunk_by(|a, b| a.0 == b.0)
            .map(|block| {
                block
                    .iter()
                    .map(|&(_, t, rows, fresh)| (t, rows, fresh))
                    .collect()
            })
            .collect();
        while jobs.len() + groups.len() < threads {
            let Some(largest) = groups.iter_mut().max_by_key(|g| g.len()) else {
                break;
            };
            if largest.len() < 2 {
                break;
            }
            let half = largest.split_off(largest.len() / 2);
            groups.push(half);
        }
        // Largest first (stable: ties keep the map's order), so that the pass does not end
        // with one thread drawing a large block alone.
        groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
        jobs.extend(groups.into_iter().map(Job::Group));
        jobs
    }

    /// The tiles of a drawing job (global indices of one slice, each once) merged into areas,
    /// in the map's order: each 2×2 block of tiles (on even tile columns and rows) whose four
    /// tiles are all in the job, else each pair side by side (the left one on an even column),
    /// else the tile alone. An area is drawn into one buffer part by part (a row of fresh
    /// tiles at once, and such rows one above the other at once: [`stacked`]; a tile that only
    /// gains rows alone; a texel's depth does not depend on the part it is drawn in), then laid
    /// out at once: with rows of keys twice as long, in a quarter of the calls, the layout of
    /// the 10,000-probe flight costs 15–30 % less, and drawing by parts instead of tiles sets up
    /// a piece once where it crosses tile edges inside (benches/README.md).
    fn merge(&self, tiles: &[usize]) -> Vec<Merged> {
        let (w, per) = (self.tiles as usize, self.per_slice());
        // A job's tiles come in the map's order; a copy is sorted only if they do not.
        let sorted: std::borrow::Cow<'_, [usize]> = if tiles.is_sorted() {
            tiles.into()
        } else {
            let mut v = tiles.to_vec();
            v.sort_unstable();
            v.into()
        };
        let mut done = vec![false; sorted.len()];
        let mut merged = Vec::with_capacity(sorted.len());
        for i in 0..sorted.len() {
            if done[i] {
                continue;
            }
            let t = sorted[i];
            let (tx, ty) = ((t % per) % w, (t % per) / w);
            // Position in `sorted` of tile `t + d`, when the job has it and it is not taken
            // (it comes after `t`).
            let free = |d: usize| {
                sorted[i + 1..]
                    .binary_search(&(t + d))
                    .ok()
                    .map(|j| i + 1 + j)
                    .filter(|&j| !done[j])
            };
            let right = (tx % 2 == 0 && tx + 1 < w).then(|| free(1)).flatten();
            let below = (ty % 2 == 0 && ty + 1 < w)
                .then(|| free(w).zip(free(w + 1)))
                .flatten();
            let (across, down) = match (right, below) {
                (Some(r), Some((b, br))) => {
                    (done[r], done[b], done[br]) = (true, true, true);
                    (2, 2)
                }
                (Some(r), None) => {
                    done[r] = true;
                    (2, 1)
                }
                _ => (1, 1),
            };
            merged.push(Merged {
                first: t,
                across,
                down,
            });
        }
        merged
    }

    /// The inclusive texel rectangle of tile `local` of a slice: x0, y0, x1, y1.
    fn tile_rect(&self, local: usize) -> [u32; 4] {
        let (tx, ty) = (local as u32 % self.tiles, local as u32 / self.tiles);
        let n = self.resolution;
        let (x0, y0) = (tx * MAP_TILE, ty * MAP_TILE);
        [
            x0,
            y0,
            x0 + tile_extent(n, tx) - 1,
            y0 + tile_extent(n, ty) - 1,
        ]
    }

    /// The batches with every tile of `needs` drawn (one read lock when they are), and the
    /// texels of those tiles too when `texels`: tiles not drawn yet are drawn with them, and
    /// tiles drawn for the batched path alone have them written from their keys.
    pub(crate) fn read_with(&self, needs: &Needs, texels: bool) -> RwLockReadGuard<'_, Resident> {
        {
            let r = self.read();
            let there = |(t, rows)| r.covers(t, rows) && (!texels || r.has_texels(t));
            if needs.iter().all(there) {
                return r;
            }
        }
        self.ensure_with(needs, texels);
        if texels {
            let mut w = self.resident.write().unwrap_or_else(|e| e.into_inner());
            let lacking: Vec<usize> = needs
                .iter()
                .map(|(t, _)| t)
                .filter(|&t| w.ready(t) && !w.has_texels(t))
                .collect();
            if !lacking.is_empty() {
                crate::zone!("penumbra::shadow::texels from keys");
                let rows: Vec<Rows> = lacking.iter().map(|&t| w.rows[t]).collect();
                let targets = w.targets();
                // SAFETY: the write lock keeps every other reader and writer away.
                let written: Vec<bool> = lacking
                    .iter()
                    .zip(rows)
                    .map(|(&t, rows)| unsafe { targets.texels_from_keys(self, t, rows) })
                    .collect();
                drop(targets);
                for (&t, ok) in lacking.iter().zip(written) {
                    // (Not for a map whose tiles always write their texels.)
                    debug_assert!(ok, "texels of tile {t} from its keys");
                    w.from_keys[t / 64] |= u64::from(ok) << (t % 64);
                }
            }
        }
        self.read()
    }

    /// The texels and batches, for reading (after [`Tiled::ensure`]).
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Resident> {
        self.resident.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The whole map as a texture: every tile not drawn yet is drawn first. When the deadline
    /// stops that, the texture returned is incomplete (as a stopped full render is; the caller
    /// that set the deadline asks [`crate::deadline::expired`]) and the next call goes on.
    pub(crate) fn texture(&self) -> &Texture {
        if let Some(t) = self.snapshot.get() {
            return t;
        }
        let mut all = self.needs();
        for s in 0..self.view_proj.len() {
            self.need_slice(&mut all, s);
        }
        {
            // A tile drawn without its texels is drawn again with them: the texture has every
            // texel's own bits (texels written from keys have a comparison's view of them).
            let mut w = self.resident.write().unwrap_or_else(|e| e.into_inner());
            for (t, _) in all.iter() {
                if w.ready(t) && !w.has_drawn_texels(t) {
                    w.forget(t);
                }
            }
        }
        let complete = self.ensure_with(&all, true);
        let texture = self.read().texture.clone();
        if complete {
            self.snapshot.get_or_init(|| texture)
        } else {
            self.partial.get_or_init(|| texture)
        }
    }

    /// This map's tile work since it was made.
    pub(crate) fn stats(&self) -> TileStats {
        self.own.stats()
    }

    /// The threads the map draws tiles on.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Tiles of all slices.
    pub(crate) fn tile_count(&self) -> usize {
        self.per_slice() * self.view_proj.len()
    }

    /// Of rows `rows` of tile `t` (global index), those inside the map (the map's edge may cut
    /// its last row of tiles).
    fn real_rows(&self, t: usize, rows: Rows) -> Rows {
        if self.resolution.is_multiple_of(MAP_TILE) {
            // Every row of every tile lies on the map (and no division per tile).
            return rows;
        }
        rows & rows_inside(self.resolution, (t % self.per_slice()) as u32 / self.tiles)
    }

    /// Which rows of which tiles are drawn now (see [`DrawnTiles`]).
    pub(crate) fn drawn_tiles(&self) -> DrawnTiles {
        let r = self.read();
        DrawnTiles {
            resolution: self.resolution,
            across: self.tiles,
            slices: self.view_proj.len() as u32,
            rows: (0..r.rows.len())
                .map(|t| self.real_rows(t, r.rows[t]))
                .collect(),
        }
    }

    /// Tiles drawn so far.
    pub(crate) fn drawn(&self) -> usize {
        self.read().rows.iter().filter(|&&rows| rows != 0).count()
    }

    /// Draws from `scene` from now on (the lighting swaps it while it changes the index).
    pub(crate) fn set_scene(&mut self, scene: Arc<SceneIndex>) {
        self.scene = scene;
    }

    /// The same map over the changed `scene`, forgetting the drawn tiles that a change inside
    /// any of `boxes` can reach; returns how many it forgot. `changed`: the one occluder that
    /// changed (its position in the scene index, which stays the same); `None` when occluders
    /// came or went (positions moved), which drops every layer.
    pub(crate) fn invalidate(
        &mut self,
        scene: Arc<SceneIndex>,
        boxes: &[Aabb],
        changed: Option<u32>,
    ) -> u64 {
        crate::zone!("penumbra::shadow::invalidate tiles");
        self.scene = scene;
        self.snapshot = OnceLock::new();
        self.partial = OnceLock::new();
        let per = self.per_slice();
        let r = self.resident.get_mut().unwrap_or_else(|e| e.into_inner());
        if changed.is_none() {
            r.layers.clear();
            r.touched.clear();
        }
        let mut forgot = 0u64;
        for (slice, vp) in self.view_proj.iter().enumerate() {
            for b in boxes.iter().filter(|b| !b.is_empty()) {
                let rect = screen_rect(vp, b, self.resolution);
                let (x0, y0, x1, y1) = match rect {
                    Some(r) => r,
                    None => (0, 0, self.tiles - 1, self.tiles - 1),
                };
                for ty in y0..=y1 {
                    for tx in x0..=x1 {
                        let t = slice * per + (ty * self.tiles + tx) as usize;
                        if r.forget(t) {
                            forgot += 1;
                        }
                        if let Some(o) = changed {
                            let touched = r.touched.entry(t).or_default();
                            if !touched.contains(&o) {
                                touched.push(o);
                            }
                        }
                    }
                }
            }
        }
        self.counters
            .invalidated
            .fetch_add(forgot, Ordering::Relaxed);
        self.own.invalidated.fetch_add(forgot, Ordering::Relaxed);
        crate::plot!(
            "penumbra tiles invalidated",
            self.counters.invalidated.load(Ordering::Relaxed) as f64
        );
        forgot
    }
}

impl Drop for Tiled {
    /// Gives the texels and key images to the lighting's spares (when no clone of the texture
    /// is held elsewhere).
    fn drop(&mut self) {
        self.snapshot.take();
        self.partial.take();
        let r = self.resident.get_mut().unwrap_or_else(|e| e.into_inner());
        let Some(stand_in) = Texture::zeroed_lazy(TextureDesc::new_2d(self.format, 1, 1)).ok()
        else {
            return;
        };
        let texture = std::mem::replace(&mut r.texture, stand_in);
        let desc = *texture.desc();
        let Some(texels) = texture.into_bytes() else {
            return;
        };
        let keys = r
            .batches
            .drain(..)
            .filter_map(|b| b.and_then(CmpBatch::take_keys))
            .collect();
        self.counters.spares.get_or_init(Box::default).give(Spare {
            desc,
            texels,
            keys,
            since: Instant::now(),
        });
    }
}

/// The tiles (inclusive) a box covers in a slice seen through `vp`, with a margin of two
/// texels; `None` when the box reaches behind the view (every tile may change).
fn screen_rect(vp: &Mat4, b: &Aabb, n: u32) -> Option<(u32, u32, u32, u32)> {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for c in b.corners() {
        let clip = *vp * c.extend(1.0);
        if !(clip.is_finite() && clip.w > 1e-6) {
            return None;
        }
        let x = (f64::from(clip.x) / f64::from(clip.w) + 1.0) * 0.5 * f64::from(n);
        let y = (1.0 - f64::from(clip.y) / f64::from(clip.w)) * 0.5 * f64::from(n);
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x), hi[1].max(y)];
    }
    let tiles = f64::from(n.div_ceil(MAP_TILE));
    let margin = 2.0
        + 1e-4
            * (lo[0]
                .abs()
                .max(hi[0].abs())
                .max(lo[1].abs().max(hi[1].abs())));
    let to_tile = |p: f64| (p / f64::from(MAP_TILE)).floor().clamp(0.0, tiles - 1.0) as u32;
    let (x0, x1) = (to_tile(lo[0] - margin), to_tile(hi[0] + margin));
    let (y0, y1) = (to_tile(lo[1] - margin), to_tile(hi[1] + margin));
    // Wholly off the slice: nothing there can change.
    if hi[0] + margin < 0.0
        || hi[1] + margin < 0.0
        || lo[0] - margin > f64::from(n)
        || lo[1] - margin > f64::from(n)
    {
        return Some((1, 1, 0, 0));
    }
    Some((x0, y0, x1, y1))
}

/// `whole` ((block, tile, rows, fresh), tiles distinct) ordered by block, then tile: what
/// sorting the tuples gives. With no more blocks than a few per tile, by counting the tiles of
/// each block (linear: a frame's pass lists thousands of tiles, and the blocks are few); else
/// by sorting.
fn in_block_order<T: Copy>(
    mut whole: Vec<(usize, usize, Rows, T)>,
    blocks: usize,
) -> Vec<(usize, usize, Rows, T)> {
    if whole.len() < 64 || blocks > 4 * whole.len() || whole.iter().any(|w| w.0 >= blocks) {
        whole.sort_unstable_by_key(|w| (w.0, w.1));
        return whole;
    }
    if !whole.is_sorted_by_key(|w| w.1) {
        whole.sort_unstable_by_key(|w| w.1);
    }
    // Where each block's tiles start, then a stable scatter (tiles stay in order per block).
    let mut start = vec![0usize; blocks + 1];
    for w in &whole {
        start[w.0 + 1] += 1;
    }
    for b in 0..blocks {
        start[b + 1] += start[b];
    }
    let mut out = whole.clone();
    for w in &whole {
        out[start[w.0]] = *w;
        start[w.0] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shadow::light::Light;

    /// An empty tiled map of `slices` slices (a 2D array when more than one) whose sampler
    /// addresses u and v with `modes`.
    fn test_map(modes: [AddressMode; 2], resolution: u32, slices: usize) -> Tiled {
        let mut light = Light::directional(Vec3::NEG_Y, 1.0);
        (light.sampler.address_u, light.sampler.address_v) = (modes[0], modes[1]);
        let sampler = Sampler::new(light.sampler.to_sampler_desc()).expect("sampler");
        let dimension = if slices > 1 {
            Dimension::Texture2DArray
        } else {
            Dimension::Texture2D
        };
        Tiled::new(
            &sampler,
            dimension,
            light.format,
            resolution,
            vec![Mat4::IDENTITY; slices],
            light.raster_state(),
            1.0,
            Arc::new(SceneIndex::new(Vec::new())),
            Arc::new(TileCounters::default()),
            1,
        )
        .expect("a tileable map")
    }

    /// A normalized coordinate of a map `n` texels wide whose `u·N − 0.5` lies a few ulps from
    /// a texel's whole or half point or from where R27's rounding moves to the next texel,
    /// within `reach` texels of texel `around` (half the time at the edge of a tile).
    fn near_rounding(rng: &mut penumbra_testkit::Rng, n: f32, around: f32, reach: f32) -> f32 {
        let fractions = [
            0.0,
            1.0 / 512.0,
            0.5 - 1.0 / 512.0,
            0.5,
            1.0 - 1.0 / 128.0,
            1.0 - 1.0 / 256.0,
            1.0 - 1.0 / 512.0,
        ];
        let mut k = (around + rng.f32_in(-reach, reach)).floor();
        if rng.below_mod(2) == 0 {
            // Near the edge of a tile, where a footprint starts to span two.
            let tile = MAP_TILE as f32;
            k = (k / tile).round() * tile + rng.pick(&[-3.0, -2.0, -1.0, 0.0]);
        }
        let x = k + rng.pick(&fractions) + 0.5;
        let u = f32::from_bits(
            (x / n)
                .to_bits()
                .wrapping_add_signed(rng.index_mod(7) as i32 - 3),
        );
        if u.is_finite() { u } else { 0.5 }
    }

    /// Every texel a lookup reads lies in a tile that `need_2d` marks, on a row marked in it:
    /// the sampler's own taps
    /// (R27's bilinear pair, R25/R26's point texel in both roundings) of coordinates a hair
    /// either side of the places where R27's rounding moves to the next texel, and of random
    /// ones, on clamped, bordered and wrapped axes of maps that are and are not whole tiles.
    #[test]
    fn marked_tiles_hold_every_texel_the_sampler_reads() {
        use crate::sample::address::{Addressed, AxisParams};
        let mut rng = penumbra_testkit::Rng::xorshift64(0x6e65_6564);
        let modes = [AddressMode::Clamp, AddressMode::Border, AddressMode::Wrap];
        for round in 0..300 {
            let resolution = rng.pick(&[1, 31, 32, 33, 64, 100, 2048, 16384]);
            let mode = [rng.pick(&modes), rng.pick(&modes)];
            let tiled = test_map(mode, resolution, 1);
            let n = resolution as f32;
            for _ in 0..200 {
                let coordinate = |rng: &mut penumbra_testkit::Rng| {
                    if rng.below_mod(4) == 0 {
                        rng.f32_in(-0.2, 1.2)
                    } else {
                        near_rounding(rng, n, n / 2.0, n / 2.0 + 3.0)
                    }
                };
                let (u, v) = (coordinate(&mut rng), coordinate(&mut rng));
                let mut needs = tiled.needs();
                tiled.need_2d(&mut needs, 0, [u, v]);
                let marked: Vec<(usize, Rows)> = needs.iter().collect();
                assert!(marked.len() <= 4, "round {round}: {marked:?}");
                let texels = |c: f32, mode: AddressMode| {
                    let axis = AxisParams {
                        size: resolution,
                        mode,
                        offset: 0,
                        non_normalized: false,
                    };
                    let mut out = Vec::new();
                    let linear = axis.linear(c);
                    let taps = [axis.point(c, false), axis.point(c, true), linear];
                    for t in taps {
                        for &(a, _) in &t.taps[..t.count] {
                            if let Addressed::Texel(i) = a {
                                out.push(i);
                            }
                        }
                    }
                    // A bilinear tap with a zero weight still reads its second texel's key.
                    if linear.count == 1 {
                        let f = axis.linear_position(c) >> 8;
                        if let Addressed::Texel(i) =
                            crate::sample::address::address(f + 1, resolution, mode)
                        {
                            out.push(i);
                        }
                    }
                    out
                };
                for x in texels(u, mode[0]) {
                    for y in texels(v, mode[1]) {
                        let tile = ((y / MAP_TILE) * tiled.tiles + x / MAP_TILE) as usize;
                        let row = 1 << (y % MAP_TILE);
                        assert!(
                            marked.iter().any(|&(t, rows)| t == tile && rows & row != 0),
                            "round {round}: {resolution}², {mode:?}, ({u:e}, {v:e}) reads \
                             texel ({x}, {y}) in tile {tile}; marked {marked:?}"
                        );
                    }
                }
            }
        }
    }

    /// A tile drawn for the batched path leaves its texels unwritten; a scalar reader has them
    /// written from the keys without drawing the tile again; the whole texture draws it again
    /// (keys keep a comparison's view of a texel, not always its bits).
    #[test]
    fn texels_are_written_only_for_readers_of_texels() {
        let map = test_map([AddressMode::Clamp; 2], 100, 1);
        let mut needs = map.needs();
        map.need_2d(&mut needs, 0, [0.5, 0.5]);
        let tiles: Vec<usize> = needs.iter().map(|(t, _)| t).collect();
        let one = 1.0f32.to_le_bytes();
        // A texel of the tile's first drawn row.
        let texel_of = |r: &Resident, t: usize| {
            let [x0, y0, ..] = map.tile_rect(t);
            let y0 = y0 + r.rows[t].trailing_zeros();
            let at = (y0 as usize * 100 + x0 as usize) * 4;
            <[u8; 4]>::try_from(&r.texture.subresource(0, 0)[at..at + 4]).unwrap()
        };
        assert!(map.ensure(&needs));
        {
            let r = map.read();
            for &t in &tiles {
                assert!(r.ready(t) && !r.has_texels(t), "tile {t}");
                assert_eq!(texel_of(&r, t), [0; 4], "tile {t}: texels unwritten");
            }
        }
        assert_eq!(map.stats().tiles_rendered, tiles.len() as u64);
        {
            let r = map.read_with(&needs, true);
            for &t in &tiles {
                assert!(r.has_texels(t), "tile {t}");
                assert_eq!(texel_of(&r, t), one, "tile {t}: the clear depth");
            }
        }
        assert_eq!(
            map.stats().tiles_rendered,
            tiles.len() as u64,
            "no tile drawn again"
        );
        let texture = map.texture();
        assert!(texture.subresource(0, 0).chunks_exact(4).all(|t| t == one));
        // The tiles whose texels came from their keys are drawn again for it.
        let all = map.tile_count() as u64;
        assert_eq!(map.stats().tiles_rendered, all + tiles.len() as u64);
        assert!(tiles.iter().all(|&t| map.read().has_drawn_texels(t)));
    }

    /// Marking a list of taps at once marks exactly the tiles and rows that marking each tap does (on
    /// this CPU's path and the portable one): clusters of taps a few texels wide (the filters'
    /// footprints) round random points, inside the map, on its edges and past them, with
    /// special values among them, in lists long and short; map sizes that are and are not
    /// whole tiles; clamped, bordered and wrapped axes.
    #[test]
    fn marking_taps_at_once_marks_each_taps_tiles() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x7461_7073);
        let modes = [AddressMode::Clamp, AddressMode::Border, AddressMode::Wrap];
        for round in 0..400 {
            let resolution = rng.pick(&[1, 31, 32, 33, 64, 100, 256, 2048]);
            let u_mode = rng.pick(&modes);
            let v_mode = if round % 2 == 0 {
                u_mode
            } else {
                rng.pick(&modes)
            };
            let tiled = test_map([u_mode, v_mode], resolution, 2);
            let texel = 1.0 / resolution as f32;
            let mut taps = Vec::new();
            for _ in 0..rng.index_mod(40) {
                let centre = [rng.f32_in(-0.1, 1.1), rng.f32_in(-0.1, 1.1)];
                let spread = rng.pick(&[0.0, 1.0, 2.5, 6.0]);
                for _ in 0..1 + rng.index_mod(13) {
                    let mut tap = centre.map(|c| c + rng.f32_in(-spread, spread) * texel);
                    if rng.below_mod(3) == 0 {
                        let (axis, n) = (rng.index_mod(2), resolution as f32);
                        tap[axis] = near_rounding(&mut rng, n, centre[axis] * n, 8.0);
                    }
                    if rng.below_mod(50) == 0 {
                        tap[rng.index_mod(2)] = rng.f32_special();
                    }
                    taps.push(tap);
                }
            }
            let slice = rng.index_mod(3);
            let (mut one_by_one, mut at_once) = (tiled.needs(), tiled.needs());
            for &tap in &taps {
                tiled.need_2d(&mut one_by_one, slice, tap);
            }
            tiled.need_2d_taps(&mut at_once, slice, &taps);
            let sorted = |n: &Needs| {
                let mut v: Vec<(usize, Rows)> = n.iter().collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            assert_eq!(
                sorted(&at_once),
                sorted(&one_by_one),
                "round {round}: {resolution}², {:?}/{:?}, slice {slice}, taps {taps:?}",
                u_mode,
                v_mode
            );
            // The one-tap-at-a-time path of unwrapped maps too, which the SIMD one replaces
            // where the CPU has AVX-512.
            if !(tiled.wrap[0] || tiled.wrap[1]) && slice < tiled.view_proj.len() {
                let mut scalar = tiled.needs();
                tiled.clamped_taps(&mut scalar, slice, &taps);
                assert_eq!(
                    sorted(&scalar),
                    sorted(&one_by_one),
                    "round {round}: scalar"
                );
            }
        }
    }

    /// Ordering a pass's tiles by block by counting gives what sorting the tuples gave: lists in
    /// and out of tile order, short and long, few blocks and more blocks than tiles.
    #[test]
    fn tiles_in_block_order_are_the_sorted_tiles() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x626c_6f63);
        for round in 0..300 {
            let most_blocks = rng.pick(&[4, 256, 5000]);
            let blocks = 1 + rng.index_mod(most_blocks);
            let most_tiles = rng.pick(&[10, 100, 3000]);
            let n = rng.index_mod(most_tiles);
            let mut tiles: Vec<usize> = (0..n * 2).collect();
            // Distinct tiles, in order or shuffled.
            for i in (1..tiles.len()).rev() {
                tiles.swap(i, rng.index_mod(i + 1));
            }
            tiles.truncate(n);
            if round % 2 == 0 {
                tiles.sort_unstable();
            }
            let whole: Vec<(usize, usize, Rows, bool)> = tiles
                .iter()
                .map(|&t| (rng.index_mod(blocks), t, rng.next_u32(), t % 3 == 0))
                .collect();
            let mut sorted = whole.clone();
            sorted.sort_unstable();
            assert_eq!(in_block_order(whole, blocks), sorted, "round {round}");
        }
    }

    /// A grid's corners mark what its taps mark one by one: grids of 1–4 × 1–4 taps on
    /// clamped and bordered maps, their neighbours up to 1.95 texels apart (footprints that
    /// meet), near R27's rounding points, tile edges and the map's edges and beyond it. On a
    /// wrapped axis the corners are refused.
    #[test]
    fn grid_corners_mark_what_the_grids_taps_mark() {
        // The four spans at once are the scalar ones, next to every rounding, past the map,
        // past `SPAN_LIMIT` and at ±∞.
        let mut rng = penumbra_testkit::Rng::xorshift64(0x636f_726e);
        for resolution in [1, 31, 32, 2048] {
            let tiled = test_map([AddressMode::Clamp; 2], resolution, 1);
            let n = resolution as f32;
            for _ in 0..4000 {
                let x: [f32; 4] = std::array::from_fn(|_| match rng.below_mod(6) {
                    0 => rng.pick(&[f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1e30, -1e30]),
                    1 => rng.f32_in(-70_000.0, 70_000.0),
                    2 => (rng.f32_in(-4.0, n + 4.0) * 256.0).round() / 256.0 + 1.0 / 512.0,
                    _ => {
                        let around = rng.f32_in(-3.0, n + 3.0);
                        near_rounding(&mut rng, n, around, 2.0) * n - 0.5
                    }
                });
                let scalar = [
                    tiled.clamped_span(x[0]).0,
                    tiled.clamped_span(x[1]).1,
                    tiled.clamped_span(x[2]).0,
                    tiled.clamped_span(x[3]).1,
                ];
                assert_eq!(tiled.corner_spans(x), scalar, "{resolution}²: {x:?}");
            }
        }
        let mut rng = penumbra_testkit::Rng::xorshift64(0x6772_6964);
        let modes = [AddressMode::Clamp, AddressMode::Border];
        let sorted = |n: &Needs| {
            let mut v: Vec<(usize, Rows)> = n.iter().collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for round in 0..400 {
            let resolution = rng.pick(&[1, 31, 32, 33, 64, 100, 256, 2048]);
            let n = resolution as f32;
            let tiled = test_map([rng.pick(&modes), rng.pick(&modes)], resolution, 2);
            let slice = rng.index_mod(3);
            // One axis' tap positions: growing, neighbours less than two texels apart.
            let axis = |rng: &mut penumbra_testkit::Rng| {
                let first = if rng.below_mod(2) == 0 {
                    let around = rng.f32_in(-3.0, n + 3.0);
                    near_rounding(rng, n, around, 2.0)
                } else {
                    rng.f32_in(-0.05, 1.05)
                };
                let mut at = vec![first];
                for _ in 0..rng.index_mod(4) {
                    let any = rng.f32_in(0.0, 1.95);
                    let gap = rng.pick(&[0.0, 1.0, 1.7, 1.95, any]);
                    at.push(at[at.len() - 1] + gap / n);
                }
                at
            };
            let (mut taps, mut corners) = (Vec::new(), Vec::new());
            for _ in 0..1 + rng.index_mod(20) {
                let (us, vs) = (axis(&mut rng), axis(&mut rng));
                for &v in &vs {
                    taps.extend(us.iter().map(|&u| [u, v]));
                }
                corners.push([us[0], vs[0], us[us.len() - 1], vs[vs.len() - 1]]);
            }
            let (mut by_taps, mut by_corners) = (tiled.needs(), tiled.needs());
            tiled.need_2d_taps(&mut by_taps, slice, &taps);
            assert!(tiled.need_2d_corners(&mut by_corners, slice, &corners));
            assert_eq!(
                sorted(&by_corners),
                sorted(&by_taps),
                "round {round}: {resolution}², slice {slice}, corners {corners:?}"
            );
        }
        let wrapped = test_map([AddressMode::Clamp, AddressMode::Wrap], 64, 1);
        let mut needs = wrapped.needs();
        assert!(!wrapped.need_2d_corners(&mut needs, 0, &[[0.1, 0.1, 0.2, 0.2]]));
        assert!(sorted(&needs).is_empty());
    }

    /// A map whose edge cuts its last row of tiles: asking for whole tiles once every real
    /// row is drawn draws nothing (rows past the edge are never asked for), and each real row
    /// was drawn once.
    #[test]
    fn rows_past_the_edge_are_never_missing() {
        let map = test_map([AddressMode::Clamp; 2], 100, 1);
        let mut taps = Vec::new();
        for y in 0..100 {
            taps.push([0.5, (y as f32 + 0.5) / 100.0]);
        }
        let mut rows = map.needs();
        map.need_2d_taps(&mut rows, 0, &taps);
        assert!(map.ensure(&rows));
        let drawn = map.stats();
        assert_eq!(map.drawn_tiles().tile_rows(), drawn.rows_rendered);
        let mut whole = map.needs();
        map.need_slice(&mut whole, 0);
        // The column of tiles the taps drew is whole now; the others are drawn whole.
        assert!(map.ensure(&whole));
        let after = map.stats();
        assert_eq!(
            after.rows_rendered,
            100 * 4,
            "each real row of each tile once"
        );
        assert_eq!(after.tiles_rendered, 16);
        assert!(map.ensure(&whole));
        assert_eq!(map.stats(), after, "no pass once every real row is drawn");
    }

    /// The runs of a row mask are its set bits, each once, in order, within the length given.
    #[test]
    fn runs_are_found() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x726f_7773);
        for _ in 0..2000 {
            let density = rng.f32_unit();
            let rows = (0..32).fold(0 as Rows, |m, k| {
                m | Rows::from(rng.f32_unit() < density * density) << k
            });
            let len = rng.pick(&[1, 7, 31, 32]);
            let mut from_runs = 0u64;
            let mut last = None;
            for (a, b) in row_runs(u64::from(rows), len) {
                assert!(
                    a <= b && b < len && last.is_none_or(|l| l + 1 < a),
                    "{rows:b}"
                );
                last = Some(b);
                from_runs |= (u64::MAX >> (63 - (b - a))) << a;
            }
            assert_eq!(
                from_runs,
                u64::from(rows) & ((1 << len) - 1),
                "{rows:032b} in {len}"
            );
        }
    }

    /// Parts directly one above the other and as wide join, their rows stacked; parts side
    /// by side, of other widths or apart stay as they are; no joined part passes 64 rows.
    #[test]
    fn parts_one_above_the_other_are_drawn_as_one() {
        let top = ([0, 0, 63, 31], 0b1100_0000_0000_0000_0000_0000_0000_0001);
        let below = ([0, 32, 63, 63], 0b101);
        assert_eq!(
            stacked(&[top, below]),
            vec![([0, 0, 63, 63], top.1 | (0b101 << 32))]
        );
        // Side by side (a row of tiles drawn tile by tile): apart.
        let left = ([0, 32, 31, 63], 0b1);
        let right = ([32, 32, 63, 63], 0b10);
        assert_eq!(stacked(&[left, right]), vec![left, right]);
        // Narrower below, or a gap between: apart.
        assert_eq!(stacked(&[top, left]), vec![top, left]);
        let lower = ([0, 33, 63, 64], 0b1);
        assert_eq!(stacked(&[top, lower]), vec![top, lower]);
        // A third part would pass 64 rows: it starts a new one.
        let third = ([0, 64, 63, 95], 0b1);
        assert_eq!(
            stacked(&[top, below, third]),
            vec![([0, 0, 63, 63], top.1 | (0b101 << 32)), third]
        );
        // Every row of the joined part's mask lies inside its rectangle.
        for (r, rows) in stacked(&[top, below, third]) {
            let h = r[3] - r[1] + 1;
            assert!(h <= 64 && (h == 64 || rows >> h == 0));
        }
    }

    /// The areas a job's tiles are merged into: every tile in exactly one area; four tiles
    /// make a 2×2 area only when the job has all four (on even columns and rows), else two
    /// side by side make a pair (on an even column), at the slice's last column and row too;
    /// areas cover exactly their tiles' texels.
    #[test]
    fn merged_areas_hold_each_tile_of_a_job_once() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x6d65_7267);
        // 7 tiles a side (the last one 8 texels wide), 5 (the last 2), 4, 1.
        for resolution in [200, 130, 128, 32] {
            let map = test_map([AddressMode::Clamp; 2], resolution, 2);
            let (w, per) = (map.tiles as usize, map.per_slice());
            for round in 0..40 {
                let slice = round % 2;
                let share = rng.f32_unit();
                let tiles: Vec<usize> = (0..per)
                    .filter(|_| round == 0 || rng.f32_unit() < share)
                    .map(|local| slice * per + local)
                    .collect();
                if tiles.is_empty() {
                    continue;
                }
                let mut shuffled = tiles.clone();
                shuffled.reverse();
                let merged = map.merge(&shuffled);
                assert_eq!(merged, map.merge(&tiles), "the order given does not matter");
                let mut seen: Vec<usize> = merged.iter().flat_map(|m| m.tiles(&map)).collect();
                seen.sort_unstable();
                assert_eq!(seen, tiles, "each tile once ({resolution}, round {round})");
                let has = |t: usize| tiles.binary_search(&t).is_ok();
                for m in &merged {
                    let local = m.first % per;
                    let (tx, ty) = (local % w, local / w);
                    let quad = tx % 2 == 0
                        && ty % 2 == 0
                        && tx + 1 < w
                        && ty + 1 < w
                        && [1, w, w + 1].iter().all(|&d| has(m.first + d));
                    let pair = tx % 2 == 0 && tx + 1 < w && has(m.first + 1);
                    let expected = if quad {
                        (2, 2)
                    } else if pair {
                        (2, 1)
                    } else {
                        (1, 1)
                    };
                    // A tile on an odd row whose 2×2 block was merged was taken by it; one
                    // left over pairs with its right neighbour if that one is free.
                    if ty % 2 == 1 && tx % 2 == 0 && (m.across, m.down) == (2, 1) {
                        assert!(has(m.first + 1));
                    } else if ty % 2 == 0 {
                        assert_eq!((m.across, m.down), expected, "tile {local} of {resolution}");
                    } else {
                        assert_eq!(m.down, 1);
                    }
                    let [x0, y0, x1, y1] = m.rect(&map);
                    let texels: u32 = m
                        .tiles(&map)
                        .map(|t| {
                            let [a, b, c, d] = map.tile_rect(t % per);
                            (c - a + 1) * (d - b + 1)
                        })
                        .sum();
                    assert_eq!((x1 - x0 + 1) * (y1 - y0 + 1), texels, "no texel outside");
                    assert!(x1 - x0 < 2 * MAP_TILE && y1 - y0 < 2 * MAP_TILE);
                }
            }
        }
    }
}
