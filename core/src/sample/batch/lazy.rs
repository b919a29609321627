//! Lazy batches: a key image filled region by region as a tiled map draws its tiles (from
//! several threads at once), and key images handed from a dropped batch to the next one.

use super::keys::{Keys, Padding};
use super::{CmpBatch, Plan};
use super::{NAN_TEXEL, RefKind};
use crate::format::ComponentKind;

/// How many entry rows ahead of the one being written the writers fetch the image's lines:
/// the rows are a padded row apart (16 KiB for a 2048² D32 map), too far for the hardware
/// prefetcher, and the lines are mostly in the last-level cache, not in L1 or L2. Without the
/// fetches a tiled flight frame's layout took 1.5–2 times as long; four rows did slightly
/// better than two (benches/README, stop 50).
const AHEAD: usize = 4;

/// The key image of a lazy batch, written region by region ([`KeyWriter::refresh`]) — from
/// several threads at once when their regions differ: the positions a region owns (its
/// texels' and the pads that repeat or border them) are no other region's, and a region's keys
/// are made from its own texels only.
pub(crate) struct KeyWriter<'a> {
    keys: KeyPtr,
    pad: &'a Padding,
}

#[derive(Clone, Copy)]
enum KeyPtr {
    U16(*mut u16, usize),
    I32(*mut i32, usize),
}

// SAFETY: a `KeyWriter` is made from a mutable borrow of its batch and writes only through
// `refresh`, whose callers keep the regions of concurrent calls apart.
unsafe impl Send for KeyWriter<'_> {}
unsafe impl Sync for KeyWriter<'_> {}

impl KeyPtr {
    /// Writes one entry row's keys for the consecutive positions `first..` of padded rows `r`
    /// (`upper`, the entries' first keys) and `r + 1` (`lower`, their second keys): whole
    /// entries when both are given, one half of each otherwise (the other half belongs to
    /// another region). Bounds-checked once for the run.
    ///
    /// # Safety
    /// No other thread reads or writes those keys meanwhile.
    #[inline(always)]
    unsafe fn put_entries(
        self,
        r: usize,
        first: usize,
        stride: usize,
        upper: Option<&[i32]>,
        lower: Option<&[i32]>,
    ) {
        let n = upper.or(lower).map_or(0, <[i32]>::len);
        if n == 0 {
            return;
        }
        let start = 2 * (r * stride + first);
        let len = match self {
            KeyPtr::U16(_, len) | KeyPtr::I32(_, len) => len,
        };
        assert!(start + 2 * n <= len, "keys {start}+{} of {len}", 2 * n);
        // SAFETY (every write): in bounds (checked); exclusive by the caller's contract.
        unsafe {
            match (self, upper, lower) {
                // Both halves: one two-key write per entry, which compiles to interleaving
                // vector stores (a half written alone is a store per key).
                (KeyPtr::U16(p, _), Some(u), Some(l)) => {
                    let p = p.add(start).cast::<[u16; 2]>();
                    for (k, (&a, &b)) in u.iter().zip(&l[..n]).enumerate() {
                        p.add(k).write_unaligned([a as u16, b as u16]);
                    }
                }
                (KeyPtr::I32(p, _), Some(u), Some(l)) => {
                    let p = p.add(start).cast::<[i32; 2]>();
                    for (k, (&a, &b)) in u.iter().zip(&l[..n]).enumerate() {
                        p.add(k).write_unaligned([a, b]);
                    }
                }
                (_, half_u, half_l) => {
                    let (run, at) = match (half_u, half_l) {
                        (Some(u), _) => (u, start),
                        (None, Some(l)) => (l, start + 1),
                        (None, None) => return,
                    };
                    match self {
                        KeyPtr::U16(p, _) => {
                            let p = p.add(at);
                            for (k, &key) in run.iter().enumerate() {
                                p.add(2 * k).write(key as u16);
                            }
                        }
                        KeyPtr::I32(p, _) => {
                            let p = p.add(at);
                            for (k, &key) in run.iter().enumerate() {
                                p.add(2 * k).write(key);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Asks for keys `start..start + n` to be brought into the cache (a hint: nothing is
    /// read or written; ignored past the image's end).
    #[inline(always)]
    fn prefetch(self, start: usize, n: usize) {
        let (p, size, len) = match self {
            KeyPtr::U16(p, len) => (p.cast::<u8>(), 2, len),
            KeyPtr::I32(p, len) => (p.cast::<u8>(), 4, len),
        };
        if start < len {
            let n = n.min(len - start);
            crate::cpu::prefetch_range(p.wrapping_add(start * size), n * size);
        }
    }

    /// Key `i` of the image (bounds-checked).
    ///
    /// # Safety
    /// No other thread writes key `i` meanwhile.
    #[inline(always)]
    unsafe fn get(self, i: usize) -> i32 {
        match self {
            KeyPtr::U16(p, len) => {
                assert!(i < len, "key {i} of {len}");
                // SAFETY: in bounds (checked); unwritten meanwhile by the caller's contract.
                i32::from(unsafe { p.add(i).read() })
            }
            KeyPtr::I32(p, len) => {
                assert!(i < len, "key {i} of {len}");
                // SAFETY: as above.
                unsafe { p.add(i).read() }
            }
        }
    }

    /// Writes key `i` of the image (bounds-checked).
    ///
    /// # Safety
    /// No other thread reads or writes key `i` meanwhile.
    #[inline(always)]
    unsafe fn put(self, i: usize, key: i32) {
        match self {
            KeyPtr::U16(p, len) => {
                assert!(i < len, "key {i} of {len}");
                // SAFETY: in bounds (checked); exclusive by the caller's contract.
                unsafe { p.add(i).write(key as u16) }
            }
            KeyPtr::I32(p, len) => {
                assert!(i < len, "key {i} of {len}");
                // SAFETY: as above.
                unsafe { p.add(i).write(key) }
            }
        }
    }
}

/// A level's packed bytes, read a range at a time (only the texels of the region being
/// refreshed: other threads may be writing the others) — the whole level, or only the region's
/// own texels in rows of their own.
#[derive(Clone, Copy)]
pub(crate) struct LevelBytes {
    ptr: *const u8,
    len: usize,
    /// The texel at `ptr`, and texels per row (0: the level's width).
    origin: [u32; 2],
    row: usize,
}

impl LevelBytes {
    #[cfg(test)]
    pub(crate) fn of(level: &[u8]) -> LevelBytes {
        // SAFETY: the slice is borrowed whole, and shared while it is.
        unsafe { Self::from_raw(level.as_ptr(), level.len()) }
    }

    /// A level given by its first byte and length.
    ///
    /// # Safety
    /// The `len` bytes from `ptr` stay allocated while this is used, and the ranges read are
    /// written by no one meanwhile.
    pub(crate) unsafe fn from_raw(ptr: *const u8, len: usize) -> LevelBytes {
        // SAFETY: the caller's contract, for the whole level.
        unsafe { Self::region(ptr, len, [0, 0], 0) }
    }

    /// The texels of a region alone, `row` texels a row from texel `origin` of the level: the
    /// packed bytes of a drawn tile before (or instead of) their copy into the level. A
    /// refresh through it reads only that region's texels.
    ///
    /// # Safety
    /// As [`LevelBytes::from_raw`].
    pub(crate) unsafe fn region(
        ptr: *const u8,
        len: usize,
        origin: [u32; 2],
        row: usize,
    ) -> LevelBytes {
        LevelBytes {
            ptr,
            len,
            origin,
            row,
        }
    }

    /// Where texel (x, y) of a level `width` texels wide starts.
    #[inline]
    fn offset(&self, x: u32, y: u32, width: u32, bpt: usize) -> usize {
        let row = if self.row == 0 {
            width as usize
        } else {
            self.row
        };
        let (x, y) = (
            x.wrapping_sub(self.origin[0]),
            y.wrapping_sub(self.origin[1]),
        );
        (y as usize * row + x as usize) * bpt
    }

    /// Bytes `start..start + n` (bounds-checked).
    fn range(&self, start: usize, n: usize) -> &[u8] {
        assert!(
            start <= self.len && n <= self.len - start,
            "bytes {start}+{n} of {}",
            self.len
        );
        // SAFETY: in bounds (checked); the maker of `self` keeps the range unwritten while
        // it is read (`from_raw`), or it is a borrowed slice (`of`).
        unsafe { std::slice::from_raw_parts(self.ptr.add(start), n) }
    }
}

impl KeyWriter<'_> {
    /// [`CmpBatch::refresh`] through the writer.
    ///
    /// # Safety
    /// Concurrent calls on writers of the same batch refresh disjoint texel rectangles, and
    /// nothing else reads or writes the batch's keys meanwhile.
    ///
    /// `level` is borrowed, not moved, down to the AVX-512 writer: a moved `LevelBytes` was
    /// copied at each call with 16-byte loads that spanned the caller's smaller stores of its
    /// fields. Such a load cannot take its bytes from the store buffer; it waits until every
    /// older store has reached the cache, the previous rectangle's key lines included, and
    /// that wait was 4–5 % of a tiled flight frame's CPU time.
    #[inline(always)]
    pub(crate) unsafe fn refresh(&self, level: &LevelBytes, [x0, y0, x1, y1]: [u32; 4]) {
        let pad = self.pad;
        let bpt = pad.format.bytes_per_texel();
        let (w, h) = (pad.width, pad.height);
        if x0 > x1 || y0 > y1 || x1 >= w || y1 >= h {
            // Every caller asks for a tile inside the level: a rectangle outside it is a bug
            // that would leave stale keys (of a recycled image) to be read.
            debug_assert!(false, "refresh of {:?} outside {w}×{h}", [x0, y0, x1, y1]);
            return;
        }
        let stride = pad.stride;
        let pairs = pad.rows.len() - 1;
        let keys = self.keys;
        // Padded row q is the upper key of entry row q and the lower of entry row q − 1.
        // SAFETY (every `put` below): the position belongs to this rectangle, so to this call.
        let put = |q: usize, p: usize, key: i32| unsafe {
            if q < pairs {
                keys.put(2 * (q * stride + p), key);
            }
            if q >= 1 {
                keys.put(2 * ((q - 1) * stride + p) + 1, key);
            }
        };
        // Inside: padded (x + 2, y + 2) repeats texel (x, y) in every address mode; keys a run
        // of texels at a time, straight from their bytes. Entry row r pairs padded rows r and
        // r + 1, so the region's texel rows q0..=q1 (padded) fill entry rows q0..q1 whole and
        // one half of entry rows q0 − 1 (lower keys) and q1 (upper keys): each entry is
        // written once, from two rows of keys.
        // SAFETY: the caller's contract; the rectangle lies inside the level (checked).
        unsafe { self.inside(level, [x0, y0, x1, y1]) };
        // The two pads on each side: each repeats some texel (WRAP: one far away; CLAMP,
        // MIRROR: the edge's) or is the border, which belongs to the nearest texel's region.
        let (cols_n, rows_n) = (pad.cols.len(), pad.rows.len());
        let in_x = |p: usize| (x0..=x1).contains(&Padding::owner(&pad.cols, w, p));
        let in_y = |q: usize| (y0..=y1).contains(&Padding::owner(&pad.rows, h, q));
        let key_at = |q: usize, p: usize| match (pad.rows[q], pad.cols[p]) {
            (Some(y), Some(x)) => {
                let at = level.offset(x, y, w, bpt);
                pad.keymap
                    .key(pad.format.raw_component(level.range(at, bpt), 0))
            }
            _ => pad.border,
        };
        // (No allocation: a map drawn tile by tile refreshes many small rectangles.)
        let pads = |n: usize, owned: &dyn Fn(usize) -> bool| {
            let mut out = [0usize; 4];
            let mut len = 0;
            for p in [0, 1, n - 2, n - 1] {
                if owned(p) {
                    out[len] = p;
                    len += 1;
                }
            }
            (out, len)
        };
        let (pad_cols, cols_len) = pads(cols_n, &in_x);
        let (pad_rows, rows_len) = pads(rows_n, &in_y);
        let (pad_cols, pad_rows) = (&pad_cols[..cols_len], &pad_rows[..rows_len]);
        // Pad columns of the rows the rectangle's texels own (inside rows and pad rows), and
        // the inside columns of the pad rows.
        let own_rows = (y0 as usize + 2..=y1 as usize + 2).chain(pad_rows.iter().copied());
        for q in own_rows {
            for &p in pad_cols {
                put(q, p, key_at(q, p));
            }
        }
        for &q in pad_rows {
            for p in x0 as usize + 2..=x1 as usize + 2 {
                put(q, p, key_at(q, p));
            }
        }
    }

    /// The inside positions of [`KeyWriter::refresh`]'s rectangle, a run of up to 64 texels of
    /// every row at a time: with AVX-512 for one-f32 texels and 32-bit keys (a tiled D32 map's
    /// key image), else the portable way.
    ///
    /// # Safety
    /// As [`KeyWriter::refresh`]; the rectangle lies inside the level.
    unsafe fn inside(&self, level: &LevelBytes, [x0, y0, x1, y1]: [u32; 4]) {
        let pad = self.pad;
        let bpt = pad.format.bytes_per_texel();
        let w = pad.width;
        let stride = pad.stride;
        let pairs = pad.rows.len() - 1;
        let keys = self.keys;
        let (q0, q1) = (y0 as usize + 2, y1 as usize + 2);
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if let KeyPtr::I32(p, len) = keys
            && pad.format.kind() == ComponentKind::Float32
            && bpt == 4
            && crate::cpu::CpuExtension::Avx512bw.is_supported()
        {
            // The last entry written (of entry row q1 < pairs, as y1 < h) lies in the image:
            // every other lies before it.
            let last = 2 * (q1.min(pairs - 1) * stride + x1 as usize + 2) + 1;
            assert!(last < len, "key {last} of {len}");
            // SAFETY: AVX-512 F is present; the entries written lie in the image (checked)
            // and are this rectangle's (the caller's contract).
            unsafe { float_inside_avx512(p, stride, pairs, level, [x0, y0, x1, y1], pad) };
            return;
        }
        const RUN: u32 = 64;
        let mut rows = [[0i32; RUN as usize]; 2];
        let [above, below] = &mut rows;
        let (mut above, mut below) = (above, below);
        // The entry rows are a whole padded row of keys apart: fetch the rows this loop
        // writes `AHEAD` rows ahead.
        let ahead = |r: usize| {
            let first = 2 * (r * stride + x0 as usize + 2);
            keys.prefetch(first, 2 * (x1 - x0 + 1) as usize);
        };
        let row_keys = |y: u32, x: u32, out: &mut [i32]| {
            let start = level.offset(x, y, w, bpt);
            pad.keymap
                .keys_of_row(pad.format, level.range(start, out.len() * bpt), out);
        };
        let mut x = x0;
        while x <= x1 {
            let len = (x1 - x + 1).min(RUN) as usize;
            let first = x as usize + 2;
            for r in q0 - 1..q0 + AHEAD {
                ahead(r);
            }
            row_keys(y0, x, &mut above[..len]);
            // SAFETY (each `put_entries`): these halves are this rectangle's (the caller's
            // contract); q0 ≥ 2, and q1 < pairs = h + 3.
            unsafe { keys.put_entries(q0 - 1, first, stride, None, Some(&above[..len])) };
            for y in y0 + 1..=y1 {
                let r = y as usize + 1;
                ahead(r + AHEAD);
                row_keys(y, x, &mut below[..len]);
                unsafe {
                    keys.put_entries(r, first, stride, Some(&above[..len]), Some(&below[..len]))
                };
                std::mem::swap(&mut above, &mut below);
            }
            if q1 < pairs {
                unsafe { keys.put_entries(q1, first, stride, Some(&above[..len]), None) };
            }
            x += len as u32;
        }
    }
}

impl KeyWriter<'_> {
    /// Whether [`KeyWriter::texels_from_keys`] can give this level's texels back (true: as
    /// f32s, false: as 16-bit codes), on a little-endian CPU.
    pub(crate) fn texels_kind(&self) -> Option<bool> {
        let (format, kind) = (self.pad.format, self.pad.keymap.kind);
        let bpt = format.bytes_per_texel();
        match format.kind() {
            _ if cfg!(target_endian = "big") => None,
            ComponentKind::Float32 if bpt == 4 && kind == RefKind::Float => Some(true),
            ComponentKind::Unorm(16) if bpt == 2 && kind == RefKind::Unorm => Some(false),
            _ => None,
        }
    }

    /// Writes the texels of `x0..=x1 × y0..=y1` into `level` (the level's packed bytes,
    /// `len` of them) from their keys, for the scalar sampler's comparisons: they read the
    /// texels written as they read the texels the keys were made from. A key keeps a texel's
    /// value as comparisons see it, so a −0 or a denormal texel comes back as +0 (comparisons
    /// flush them to 0 first: R6, R85) and a NaN as the quiet NaN (every NaN compares alike).
    /// Only D32_FLOAT-like (one f32 per texel) and D16_UNORM-like (one 16-bit code) formats
    /// come back; false, with nothing written, for others.
    ///
    /// # Safety
    /// The `len` bytes from `level` stay allocated; no other thread reads or writes the
    /// rectangle's texels or writes its keys meanwhile.
    pub(crate) unsafe fn texels_from_keys(
        &self,
        level: *mut u8,
        len: usize,
        [x0, y0, x1, y1]: [u32; 4],
    ) -> bool {
        let pad = self.pad;
        let map = pad.keymap;
        let bpt = pad.format.bytes_per_texel();
        let Some(float) = self.texels_kind() else {
            return false;
        };
        if x0 > x1 || y0 > y1 || x1 >= pad.width || y1 >= pad.height {
            debug_assert!(false, "texels of {:?} outside the level", [x0, y0, x1, y1]);
            return false;
        }
        let stride = pad.stride;
        let w = pad.width as usize;
        for y in y0..=y1 {
            let at = (y as usize * w + x0 as usize) * bpt;
            let n = (x1 - x0 + 1) as usize;
            assert!(at + n * bpt <= len, "texels {at}+{} of {len}", n * bpt);
            // Texel (x, y) is the upper key of entry (x + 2, y + 2).
            let first = 2 * ((y as usize + 2) * stride + x0 as usize + 2);
            for k in 0..n {
                // SAFETY: in bounds (checked); the caller's contract keeps both unshared.
                unsafe {
                    let key = self.keys.get(first + 2 * k);
                    let dest = level.add(at + k * bpt);
                    let unkeyed = key.wrapping_sub(map.add) ^ map.xor;
                    if float {
                        let bits = if key == NAN_TEXEL {
                            0x7FC0_0000u32
                        } else {
                            // `float_key` undone: it flips a negative value's magnitude bits.
                            (unkeyed ^ (((unkeyed >> 31) as u32) >> 1) as i32) as u32
                        };
                        dest.cast::<[u8; 4]>().write_unaligned(bits.to_le_bytes());
                    } else {
                        dest.cast::<[u8; 2]>()
                            .write_unaligned((unkeyed as u16).to_le_bytes());
                    }
                }
            }
        }
        true
    }
}

/// A key image taken from a dropped batch, for a lazy batch of the same shape.
#[derive(Debug)]
pub(crate) struct SpareKeys(pub(super) Keys);

impl CmpBatch {
    /// The key image of a lazy batch (filled region by region), for reuse.
    pub(crate) fn take_keys(self) -> Option<SpareKeys> {
        match self.plan {
            Plan::Kernel(plan) if plan.padding.is_some() => Some(SpareKeys(plan.keys)),
            _ => None,
        }
    }

    /// Rewrites the keys that the level's texels `x0..=x1 × y0..=y1` own, from `level` (the
    /// level's packed bytes, row-major): every padded position that repeats one of them, and
    /// the border positions nearest to them. A lazy batch whose every region was refreshed
    /// holds the key image an eager build makes. No effect on other batches.
    #[cfg(test)]
    pub(crate) fn refresh(&mut self, level: &[u8], rect: [u32; 4]) {
        if let Some(keys) = self.key_writer() {
            // SAFETY: the writer borrows this batch mutably: nothing else reads or writes its
            // keys meanwhile; `level` is a whole slice.
            unsafe { keys.refresh(&LevelBytes::of(level), rect) };
        }
    }

    /// A writer of this lazy batch's key image, for [`KeyWriter::refresh`] from several threads
    /// at once (each its own regions); `None` for a batch that is not filled region by region.
    pub(crate) fn key_writer(&mut self) -> Option<KeyWriter<'_>> {
        let Plan::Kernel(plan) = &mut self.plan else {
            return None;
        };
        let pad = plan.padding.as_deref()?;
        // The image's entries begin `lead` keys in ([`Layout`](super::keys::Layout)).
        let lead = plan.lead;
        let keys = match &mut plan.keys {
            Keys::U16(v) => KeyPtr::U16(v[lead..].as_mut_ptr(), v.len() - lead),
            Keys::I32(v) => KeyPtr::I32(v[lead..].as_mut_ptr(), v.len() - lead),
        };
        Some(KeyWriter { keys, pad })
    }
}

/// [`KeyWriter::inside`] for texels of one f32 and 32-bit keys, sixteen texels at a time: a
/// row's texels loaded, keyed as `KeyMap::keys_of_row` keys them (R6, R85: denormals and −0
/// as +0, NaN as [`NAN_TEXEL`]), and interleaved with the row above's keys into whole entries
/// (64-byte stores; masked ones for the entries' halves the rectangle owns alone and for a
/// run's last texels).
///
/// # Safety
/// AVX-512 F; `keys` holds every entry of entry rows `y0 + 1 ..= y1 + 2` (the last when
/// below `pairs`) at padded columns `x0 + 2 ..= x1 + 2` of rows of `stride` entries, which no
/// other thread reads or writes meanwhile; the rectangle lies inside the level.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[target_feature(enable = "avx512f")]
unsafe fn float_inside_avx512(
    keys: *mut i32,
    stride: usize,
    pairs: usize,
    level: &LevelBytes,
    [x0, y0, x1, y1]: [u32; 4],
    pad: &Padding,
) {
    use std::arch::x86_64::*;
    let (xor, add) = (
        _mm512_set1_epi32(pad.keymap.xor),
        _mm512_set1_epi32(pad.keymap.add),
    );
    let w = pad.width;
    // Entries k of a run's sixteen: the upper keys (row r) from `a`, the lower (row r + 1)
    // from `b`, first and second eight.
    let first_eight = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let second_eight =
        _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    // Each bit of an 8-bit entry mask doubled: the two keys of each entry.
    let doubled = |m: u32| -> __mmask16 {
        let mut d = 0u16;
        for k in 0..8 {
            if m >> k & 1 != 0 {
                d |= 3 << (2 * k);
            }
        }
        d
    };
    // SAFETY: AVX-512 F is enabled here.
    let key = |bits: __m512i| unsafe { super::avx512::float_keys(bits, xor, add, NAN_TEXEL) };
    const RUN: u32 = 64;
    let (q0, q1) = (y0 as usize + 2, y1 as usize + 2);
    let mut x = x0;
    while x <= x1 {
        let n = (x1 - x + 1).min(RUN) as usize;
        let vectors = n.div_ceil(16);
        let first = x as usize + 2;
        // Per vector: the texels of the run it holds, and its entries' keys, both halves.
        let mut lanes = [0u16; 4];
        let mut halves = [[0u16; 2]; 4];
        for v in 0..vectors {
            let m = (u32::MAX >> (32 - (n - 16 * v).min(16))) as u16;
            lanes[v] = m;
            halves[v] = [doubled(u32::from(m) & 0xFF), doubled(u32::from(m) >> 8)];
        }
        let row = |y: u32| {
            let start = level.offset(x, y, w, 4);
            let bytes = level.range(start, 4 * n);
            let mut out = [_mm512_setzero_si512(); 4];
            for (v, o) in out.iter_mut().enumerate().take(vectors) {
                // SAFETY: the lanes loaded lie in `bytes` (`n` texels).
                *o = key(unsafe {
                    _mm512_maskz_loadu_epi32(lanes[v], bytes.as_ptr().cast::<i32>().add(16 * v))
                });
            }
            out
        };
        // Entry row r from the keys of padded rows r (`upper`) and r + 1 (`lower`); `half`:
        // the lanes of the halves this rectangle owns.
        let put = |r: usize, upper: &[__m512i; 4], lower: &[__m512i; 4], half: u16| {
            let at = keys.wrapping_add(2 * (r * stride + first));
            for v in 0..vectors {
                let (a, b) = (upper[v], lower[v]);
                // SAFETY: entries of this rectangle's entry rows and columns (the caller's
                // contract), written by this thread alone.
                unsafe {
                    _mm512_mask_storeu_epi32(
                        at.add(32 * v),
                        halves[v][0] & half,
                        _mm512_permutex2var_epi32(a, first_eight, b),
                    );
                    _mm512_mask_storeu_epi32(
                        at.add(32 * v + 16),
                        halves[v][1] & half,
                        _mm512_permutex2var_epi32(a, second_eight, b),
                    );
                }
            }
        };
        // `AHEAD` rows ahead, as the portable writer fetches them.
        let ahead = |r: usize| {
            crate::cpu::prefetch_range(keys.wrapping_add(2 * (r * stride + first)).cast(), 8 * n)
        };
        for r in q0 - 1..q0 + AHEAD {
            ahead(r);
        }
        let mut above = row(y0);
        // Entry row q0 − 1: only its lower keys (row q0) are this rectangle's.
        put(q0 - 1, &above, &above, 0xAAAA);
        for y in y0 + 1..=y1 {
            let r = y as usize + 1;
            ahead(r + AHEAD);
            let below = row(y);
            put(r, &above, &below, 0xFFFF);
            above = below;
        }
        if q1 < pairs {
            // Entry row q1: only its upper keys.
            put(q1, &above, &above, 0x5555);
        }
        x += n as u32;
    }
}
