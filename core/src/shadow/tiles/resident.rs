//! The state behind a tiled map: which tiles are drawn, the layers kept under moving
//! occluders, how a missing tile is drawn, where its texels and keys go, the work counters and
//! the spare buffers of dropped maps.

use super::*;

/// Counts of tile work, and the buffers of dropped maps, shared by every tiled map of a
/// lighting.
#[derive(Debug, Default)]
pub(crate) struct TileCounters {
    /// Made when a first map is dropped (a lighting costs little until it has maps: scripts
    /// may hold many).
    pub(super) spares: OnceLock<Box<Spares>>,
    pub(crate) rendered: AtomicU64,
    pub(crate) rows: AtomicU64,
    pub(crate) layered: AtomicU64,
    pub(crate) invalidated: AtomicU64,
    pub(crate) render_ns: AtomicU64,
    pub(crate) layout_ns: AtomicU64,
    pub(crate) wall_ns: AtomicU64,
    pub(crate) rejected: AtomicU64,
}

/// The texels and key images of dropped tiled maps, kept a little while for the next map of
/// the same shape: a light whose matrices change every frame (a cascade that follows the
/// camera) would otherwise have the system hand out, and zero, fresh memory for every tile it
/// draws. A recycled buffer keeps its old contents, which no query reads: a map reads only the
/// tiles it has drawn.
#[derive(Debug, Default)]
pub(crate) struct Spares(Mutex<VecDeque<Spare>>);

#[derive(Debug)]
pub(super) struct Spare {
    pub(super) desc: TextureDesc,
    pub(super) texels: Vec<u8>,
    pub(super) keys: Vec<SpareKeys>,
    pub(super) since: Instant,
}

/// Most spares kept, and how long one is kept unused.
pub(super) const MOST_SPARES: usize = 4;
pub(super) const SPARE_FOR: std::time::Duration = std::time::Duration::from_secs(2);

impl Spares {
    pub(super) fn give(&self, spare: Spare) {
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|s| s.since.elapsed() < SPARE_FOR);
        list.push_back(spare);
        while list.len() > MOST_SPARES {
            list.pop_front();
        }
    }

    pub(super) fn take(&self, desc: &TextureDesc) -> Option<Spare> {
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|s| s.since.elapsed() < SPARE_FOR);
        let i = list.iter().rposition(|s| s.desc == *desc)?;
        list.remove(i)
    }
}

/// Tile work of a [`Lighting`](crate::shadow::Lighting) since it was made (see
/// [`Lighting::tile_stats`](crate::shadow::Lighting::tile_stats)); subtract two readings for a frame's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileStats {
    /// Tiles drawn (a tile drawn again after an invalidation counts again). A tile is drawn
    /// only on the rows of texels that queries read ([`TileStats::rows_rendered`]); rows that
    /// a later query reads are added to it, which does not count as another tile.
    pub tiles_rendered: u64,
    /// Rows of tiles drawn ([`MAP_TILE`] texels each). Until occluders change, no row is drawn
    /// twice, except that asking for a map's whole texture draws again the tiles drawn for
    /// the batched path alone (their texels were never written).
    pub rows_rendered: u64,
    /// Of those, tiles drawn again over a kept layer: a tile that occluders keep moving over
    /// keeps what every other occluder drew there, and only the moving ones are drawn again.
    pub tiles_layered: u64,
    /// Drawn tiles forgotten because an occluder change covered them.
    pub tiles_invalidated: u64,
    /// Triangle pieces skipped while drawing tiles because the tile's coarse depth showed that
    /// no pixel of them could pass the depth test (what a tile held already hid them).
    pub pieces_rejected: u64,
    /// Time spent rasterizing tiles (all threads).
    pub render: std::time::Duration,
    /// Time spent writing drawn tiles into the maps' key images, and into their texels where
    /// a query reads texels (all threads).
    pub layout: std::time::Duration,
    /// Wall-clock time of the tile passes (drawing and layout, however many threads shared
    /// them), as the threads that asked for the tiles waited for them: the part of a query's
    /// own time that went to tiles.
    pub wall: std::time::Duration,
}

impl TileCounters {
    pub(crate) fn stats(&self) -> TileStats {
        TileStats {
            tiles_rendered: self.rendered.load(Ordering::Relaxed),
            rows_rendered: self.rows.load(Ordering::Relaxed),
            tiles_layered: self.layered.load(Ordering::Relaxed),
            tiles_invalidated: self.invalidated.load(Ordering::Relaxed),
            pieces_rejected: self.rejected.load(Ordering::Relaxed),
            render: std::time::Duration::from_nanos(self.render_ns.load(Ordering::Relaxed)),
            layout: std::time::Duration::from_nanos(self.layout_ns.load(Ordering::Relaxed)),
            wall: std::time::Duration::from_nanos(self.wall_ns.load(Ordering::Relaxed)),
        }
    }
}

/// What a tiled map's queries read, behind its lock.
#[derive(Debug)]
pub(crate) struct Resident {
    /// Every slice's texels (zero where no tile is drawn yet).
    pub(crate) texture: Texture,
    /// The batched path of each slice (each face of a cube), its key image filled tile by tile.
    pub(crate) batches: Vec<Option<CmpBatch>>,
    /// The drawn rows of each tile, slice after slice: none for a tile not drawn. Rows past
    /// the map's edge count as drawn once a tile's first rows are.
    pub(super) rows: Vec<Rows>,
    /// Drawn tiles whose texels are written too. The batched path reads only the key images,
    /// so a tile drawn for it alone leaves its texels unwritten (a third of a tile's memory
    /// traffic); the scalar sampler's queries have them written from the keys
    /// ([`Tiled::read_with`]), a whole map's texture has them drawn.
    pub(super) texels: Vec<u64>,
    /// Drawn tiles whose texels were written from their keys: each texel as comparisons see
    /// it, which the scalar sampler reads as it would the drawn bits, but not the texture.
    pub(super) from_keys: Vec<u64>,
    /// Tiles that moving occluders crossed: what every other occluder drew there (see
    /// [`Layer`]), by tile.
    pub(super) layers: HashMap<usize, Layer>,
    /// The occluders (positions in the scene index) changed over each tile since it was
    /// drawn, by tile.
    pub(super) touched: HashMap<usize, Vec<u32>>,
}

/// A tile's drawing without its moving occluders: the tile drawn from every occluder but
/// `moving`. Redrawing the tile after one of those moved draws only them over a copy of `base`
/// — with the depth test that is the bits of drawing the whole tile again.
#[derive(Debug)]
pub(super) struct Layer {
    pub(super) moving: Vec<u32>,
    pub(super) base: TileValues,
}

/// Most moving occluders a tile keeps a [`Layer`] for; a tile crossed by more is drawn whole.
pub(super) const MOST_MOVING: usize = 4;

/// How one missing tile is drawn.
pub(super) enum Plan {
    /// From every occluder.
    Whole,
    /// From every occluder but `moving`, kept as the tile's new layer, then those over it.
    NewLayer(Vec<u32>),
    /// Only the layer's moving occluders, over a copy of its base.
    OverLayer(Vec<u32>, TileValues),
}

/// A drawn area's values: rows of `stride` values from texel `origin` of the slice.
#[derive(Clone, Copy)]
pub(super) struct AreaValues<'a> {
    pub(super) values: &'a TileValues,
    pub(super) origin: [u32; 2],
    pub(super) stride: usize,
}

/// Raw views of a map's texels and key images, each slice's, for the tile workers: each writes
/// the texels of its own tiles and the keys their regions own (see [`KeyWriter`]).
pub(super) struct LayoutTargets<'a> {
    pub(super) levels: Vec<(*mut u8, usize)>,
    pub(super) keys: Vec<Option<KeyWriter<'a>>>,
}

// SAFETY: made from a mutable borrow of the resident data; written only through `store`, whose
// callers give each tile to one thread.
unsafe impl Send for LayoutTargets<'_> {}
unsafe impl Sync for LayoutTargets<'_> {}

impl LayoutTargets<'_> {
    /// Writes the drawn texel rectangle `[x0, y0, x1, y1]` of `slice` (rows of tiles of `map`,
    /// held in `area`) into the key image, and into the texels when `texels` (else the keys are
    /// made from the values straight away; see [`Resident::texels`]).
    ///
    /// # Safety
    /// No other thread writes or reads those tiles (their texels and the keys their regions
    /// own) meanwhile.
    pub(super) unsafe fn store(
        &self,
        map: &Tiled,
        slice: usize,
        [x0, y0, x1, y1]: [u32; 4],
        area: AreaValues<'_>,
        texels: bool,
    ) {
        crate::zone!("penumbra::shadow::tile layout");
        let AreaValues {
            values,
            origin: [ox, oy],
            stride,
        } = area;
        let n = map.resolution as usize;
        let bpt = map.format.bytes_per_texel();
        let len = (x1 - x0 + 1) as usize;
        let (level, level_len) = self.levels[slice];
        if texels {
            // The map's rows are far apart: fetch the rows written two rows ahead (see
            // `KeyWriter::refresh`).
            let ahead = |y: u32| {
                if y <= y1 {
                    let at = (y as usize * n + x0 as usize) * bpt;
                    crate::cpu::prefetch_range(level.wrapping_add(at), len * bpt);
                }
            };
            ahead(y0);
            ahead(y0 + 1);
            for y in y0..=y1 {
                ahead(y + 2);
                let row = (y - oy) as usize * stride + (x0 - ox) as usize;
                let at = (y as usize * n + x0 as usize) * bpt;
                assert!(
                    at + len * bpt <= level_len,
                    "a row of the rectangle inside its slice"
                );
                // SAFETY: in bounds (checked); these bytes are the rectangle's, written by this
                // thread alone (the caller's contract).
                let dest = unsafe { std::slice::from_raw_parts_mut(level.add(at), len * bpt) };
                match values {
                    TileValues::F32(v) => write_le(dest, &v[row..row + len], f32::to_le_bytes),
                    TileValues::U16(v) => write_le(dest, &v[row..row + len], u16::to_le_bytes),
                }
            }
        }
        if let Some(Some(keys)) = self.keys.get(slice) {
            let source = if texels {
                // SAFETY: the level stays allocated (borrowed by `self`); the refresh reads
                // only the rectangle's texels.
                unsafe { LevelBytes::from_raw(level.cast_const(), level_len) }
            } else {
                values.region([ox, oy], stride)
            };
            // SAFETY: the refresh reads only the rectangle's texels and writes only the keys
            // its tiles' regions own (the caller's contract).
            unsafe { keys.refresh(&source, [x0, y0, x1, y1]) };
        }
    }

    /// Writes drawn tile `t`'s texels from its keys (see [`KeyWriter::texels_from_keys`]);
    /// false, with nothing written, where they cannot be had back so.
    ///
    /// # Safety
    /// No other thread writes or reads tile `t`'s texels or writes its keys meanwhile.
    pub(super) unsafe fn texels_from_keys(&self, map: &Tiled, t: usize, rows: Rows) -> bool {
        let per = map.per_slice();
        let slice = t / per;
        let (level, len) = self.levels[slice];
        let Some(Some(keys)) = self.keys.get(slice) else {
            return false;
        };
        let [x0, y0, x1, y1] = map.tile_rect(t % per);
        // Only the drawn rows: the keys of the others are stale.
        row_runs(u64::from(rows), y1 - y0 + 1).all(|(a, b)| {
            // SAFETY: the level stays allocated (borrowed by `self`); the caller's contract.
            unsafe { keys.texels_from_keys(level, len, [x0, y0 + a, x1, y0 + b]) }
        })
    }
}

/// The runs of set bits of `mask` among its first `len` bits: (first, last) of each, from bit 0.
pub(super) fn row_runs(mask: u64, len: u32) -> impl Iterator<Item = (u32, u32)> {
    let mut m = if len >= 64 {
        mask
    } else {
        mask & ((1 << len) - 1)
    };
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let first = m.trailing_zeros();
            let run = (m >> first).trailing_ones();
            m &= !(((1u128 << run) - 1) << first) as u64;
            (first, first + run - 1)
        })
    })
}

impl Resident {
    /// The raw views the tile workers write through.
    pub(super) fn targets(&mut self) -> LayoutTargets<'_> {
        // One base pointer for every slice: taking `&mut` to each slice in turn would make
        // the earlier slices' pointers invalid under Rust's aliasing rules.
        let levels = self.texture.subresources_raw(0);
        let keys = self
            .batches
            .iter_mut()
            .map(|b| b.as_mut().and_then(CmpBatch::key_writer))
            .collect();
        LayoutTargets { levels, keys }
    }

    /// Whether tile `t` is drawn (some of its rows at least).
    pub(super) fn ready(&self, t: usize) -> bool {
        self.rows[t] != 0
    }

    /// Whether rows `rows` of tile `t` are drawn.
    pub(super) fn covers(&self, t: usize, rows: Rows) -> bool {
        self.ready(t) && self.rows[t] & rows == rows
    }

    /// Forgets tile `t`'s drawing; whether it had one.
    pub(super) fn forget(&mut self, t: usize) -> bool {
        std::mem::take(&mut self.rows[t]) != 0
    }

    /// Whether tile `t` is drawn with its texels written (as drawn, or from its keys).
    pub(super) fn has_texels(&self, t: usize) -> bool {
        self.ready(t) && (self.texels[t / 64] | self.from_keys[t / 64]) >> (t % 64) & 1 != 0
    }

    /// Whether tile `t` is drawn with its texels written as drawn.
    pub(super) fn has_drawn_texels(&self, t: usize) -> bool {
        self.ready(t) && self.texels[t / 64] >> (t % 64) & 1 != 0
    }

    /// Records that rows `rows` (not none) of tile `t` were just drawn, with their texels
    /// written or not. Rows drawn before stay drawn; the tile then has its texels written only
    /// where both drawings wrote them (the others are written from the keys when asked for).
    pub(super) fn drawn(&mut self, t: usize, rows: Rows, texels: bool) {
        debug_assert!(rows != 0, "tile {t} drawn on no row");
        let (w, bit) = (t / 64, 1u64 << (t % 64));
        let had = self.ready(t) && self.texels[w] & bit != 0;
        self.rows[t] |= rows;
        self.from_keys[w] &= !bit;
        if texels && (had || self.rows[t] == rows) {
            self.texels[w] |= bit;
        } else {
            self.texels[w] &= !bit;
        }
    }

    /// How missing tile `t` is drawn: over its layer when only the layer's moving occluders
    /// changed there; with a new layer when a few occluders did (the moving ones of the old
    /// layer and the newly changed); else whole.
    pub(super) fn plan(&mut self, t: usize) -> Plan {
        // (Most maps have no touched tile: no hashing then.)
        if self.touched.is_empty() {
            return Plan::Whole;
        }
        let Some(touched) = self.touched.get(&t) else {
            return Plan::Whole;
        };
        if let Some(layer) = self.layers.get(&t)
            && touched.iter().all(|o| layer.moving.contains(o))
        {
            return Plan::OverLayer(layer.moving.clone(), layer.base.clone());
        }
        let mut moving = self.layers.remove(&t).map(|l| l.moving).unwrap_or_default();
        for &o in touched {
            if !moving.contains(&o) {
                moving.push(o);
            }
        }
        // Layers hold at most a quarter of the map's tiles (moving occluders that roam a
        // whole map stop adding them).
        // (Counted, as before, over the tiles rounded up to a multiple of 64.)
        let most_layers = self.rows.len().next_multiple_of(64).div_ceil(LAYER_SHARE);
        if moving.len() <= MOST_MOVING && self.layers.len() < most_layers {
            Plan::NewLayer(moving)
        } else {
            Plan::Whole
        }
    }
}

/// A map keeps layers for at most one tile in this many (so they add at most a quarter of its
/// texels; [`ShadowMap::batch_bytes`](crate::shadow::ShadowMap::batch_bytes) counts them).
pub(crate) const LAYER_SHARE: usize = 4;

/// The values a buffer of merged tiles holds: 2 × 2 tiles.
pub(super) const AREA_VALUES: usize = (4 * MAP_TILE * MAP_TILE) as usize;

/// One drawn tile's (or area's) values, row-major.
#[derive(Clone, Debug)]
pub(super) enum TileValues {
    F32(Vec<f32>),
    U16(Vec<u16>),
}

impl TileValues {
    /// A tile's values, every one what a cleared map holds.
    pub(super) fn cleared(format: Format, clear: f32) -> TileValues {
        Self::cleared_len(format, clear, (MAP_TILE * MAP_TILE) as usize)
    }

    /// [`TileValues::cleared`] with room for `len` values (an area of merged tiles).
    pub(super) fn cleared_len(format: Format, clear: f32, len: usize) -> TileValues {
        let mut values = match format {
            Format::D16Unorm => TileValues::U16(vec![0; len]),
            _ => TileValues::F32(vec![0.0; len]),
        };
        values.refill_first(format, clear, len);
        values
    }

    pub(super) fn len(&self) -> usize {
        match self {
            TileValues::U16(v) => v.len(),
            TileValues::F32(v) => v.len(),
        }
    }

    /// Sets the first `len` values to what [`TileValues::cleared`] gives for `format` and
    /// `clear`, for the next area drawn (a buffer reused area after area instead of one
    /// allocated per area).
    pub(super) fn refill_first(&mut self, format: Format, clear: f32, len: usize) {
        debug_assert!(self.is_of(format));
        match self {
            TileValues::U16(v) => v[..len].fill(format::float_to_unorm(clear, 16) as u16),
            TileValues::F32(v) => v[..len].fill(clear),
        }
    }

    /// Whether these values have the storage of `format`'s (what [`TileValues::cleared`]
    /// makes for it).
    pub(super) fn is_of(&self, format: Format) -> bool {
        matches!(self, TileValues::U16(_)) == (format == Format::D16Unorm)
    }

    /// These values as the packed texels of the area whose first texel is `origin` (rows of
    /// `stride` texels), for [`KeyWriter::refresh`](crate::sample::batch::KeyWriter).
    /// Their memory is their little-endian bytes on a little-endian CPU; on others tiles
    /// always write their texels, and their keys are made from those.
    pub(super) fn region(&self, origin: [u32; 2], stride: usize) -> LevelBytes {
        let (ptr, len) = match self {
            TileValues::F32(v) => (v.as_ptr().cast::<u8>(), size_of_val(v.as_slice())),
            TileValues::U16(v) => (v.as_ptr().cast::<u8>(), size_of_val(v.as_slice())),
        };
        // SAFETY: the values stay borrowed while the refresh reads them; f32 and u16 have no
        // padding, so their `len` bytes are initialized.
        unsafe { LevelBytes::region(ptr, len, origin, stride) }
    }

    pub(super) fn buf(&mut self) -> TileBuf<'_> {
        let len = self.len();
        self.buf_first(len)
    }

    /// The first `len` values, for drawing.
    pub(super) fn buf_first(&mut self, len: usize) -> TileBuf<'_> {
        match self {
            TileValues::F32(v) => TileBuf::F32(&mut v[..len]),
            TileValues::U16(v) => TileBuf::U16(&mut v[..len]),
        }
    }
}

/// The texel types of a drawn tile: plain numbers of `N` bytes, no padding.
pub(super) trait Plain: Copy {}
impl Plain for f32 {}
impl Plain for u16 {}

/// Writes `values` into `dest` as little-endian bytes (`dest` holds exactly their bytes).
pub(super) fn write_le<T: Plain, const N: usize>(
    dest: &mut [u8],
    values: &[T],
    bytes: fn(T) -> [u8; N],
) {
    #[cfg(target_endian = "little")]
    {
        let _ = bytes;
        debug_assert_eq!(size_of::<T>(), N);
        // SAFETY: `T` is f32 or u16 (plain numbers of N bytes, no padding), so their memory
        // is `values.len() · N` initialized bytes, which on a little-endian CPU are their
        // little-endian encodings.
        let raw = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values))
        };
        dest.copy_from_slice(raw);
    }
    #[cfg(not(target_endian = "little"))]
    for (d, &v) in dest.chunks_exact_mut(N).zip(values) {
        d.copy_from_slice(&bytes(v));
    }
}
