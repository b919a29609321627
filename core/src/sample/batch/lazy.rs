//! Lazy batches: a key image filled region by region as a tiled map draws its tiles (from
//! several threads at once), and key images handed from a dropped batch to the next one.

use super::keys::{Keys, Padding};
use super::{CmpBatch, Plan};

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
/// refreshed: other threads may be writing the others).
#[derive(Clone, Copy)]
pub(crate) struct LevelBytes {
    ptr: *const u8,
    len: usize,
}

impl LevelBytes {
    #[cfg(test)]
    pub(crate) fn of(level: &[u8]) -> LevelBytes {
        LevelBytes {
            ptr: level.as_ptr(),
            len: level.len(),
        }
    }

    /// A level given by its first byte and length.
    ///
    /// # Safety
    /// The `len` bytes from `ptr` stay allocated while this is used, and the ranges read are
    /// written by no one meanwhile.
    pub(crate) unsafe fn from_raw(ptr: *const u8, len: usize) -> LevelBytes {
        LevelBytes { ptr, len }
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
    pub(crate) unsafe fn refresh(&self, level: LevelBytes, [x0, y0, x1, y1]: [u32; 4]) {
        let pad = self.pad;
        let bpt = pad.format.bytes_per_texel();
        let (w, h) = (pad.width, pad.height);
        if x0 > x1 || y0 > y1 || x1 >= w || y1 >= h {
            // Every caller asks for a tile inside the level: a rectangle outside it is a bug
            // that would leave stale keys (of a recycled image) to be read.
            debug_assert!(false, "refresh of {:?} outside {w}×{h}", [x0, y0, x1, y1]);
            return;
        }
        let stride = pad.cols.len();
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
        const RUN: u32 = 64;
        let mut rows = [[0i32; RUN as usize]; 2];
        let [above, below] = &mut rows;
        let (mut above, mut below) = (above, below);
        // The entry rows are a whole padded row of keys apart (16 KiB for a 2048² D32 map),
        // too far for the hardware prefetcher: each row's first store would wait for its
        // lines. Fetch the rows this loop writes two rows ahead.
        let ahead = |r: usize| {
            let first = 2 * (r * stride + x0 as usize + 2);
            keys.prefetch(first, 2 * (x1 - x0 + 1) as usize);
        };
        let row_keys = |y: u32, x: u32, out: &mut [i32]| {
            let start = (y as usize * w as usize + x as usize) * bpt;
            pad.keymap
                .keys_of_row(pad.format, level.range(start, out.len() * bpt), out);
        };
        let (q0, q1) = (y0 as usize + 2, y1 as usize + 2);
        let mut x = x0;
        while x <= x1 {
            let len = (x1 - x + 1).min(RUN) as usize;
            let first = x as usize + 2;
            ahead(q0 - 1);
            ahead(q0);
            row_keys(y0, x, &mut above[..len]);
            // SAFETY (each `put_entries`): these halves are this rectangle's (the caller's
            // contract); q0 ≥ 2, and q1 < pairs = h + 3.
            unsafe { keys.put_entries(q0 - 1, first, stride, None, Some(&above[..len])) };
            for y in y0 + 1..=y1 {
                let r = y as usize + 1;
                ahead(r + 2);
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
        // The two pads on each side: each repeats some texel (WRAP: one far away; CLAMP,
        // MIRROR: the edge's) or is the border, which belongs to the nearest texel's region.
        let (cols_n, rows_n) = (stride, pad.rows.len());
        let in_x = |p: usize| (x0..=x1).contains(&Padding::owner(&pad.cols, w, p));
        let in_y = |q: usize| (y0..=y1).contains(&Padding::owner(&pad.rows, h, q));
        let key_at = |q: usize, p: usize| match (pad.rows[q], pad.cols[p]) {
            (Some(y), Some(x)) => {
                let at = (y as usize * w as usize + x as usize) * bpt;
                pad.keymap
                    .key(pad.format.raw_component(level.range(at, bpt), 0))
            }
            _ => pad.border,
        };
        let pad_cols: Vec<usize> = [0, 1, cols_n - 2, cols_n - 1]
            .into_iter()
            .filter(|&p| in_x(p))
            .collect();
        let pad_rows: Vec<usize> = [0, 1, rows_n - 2, rows_n - 1]
            .into_iter()
            .filter(|&q| in_y(q))
            .collect();
        // Pad columns of the rows the rectangle's texels own (inside rows and pad rows), and
        // the inside columns of the pad rows.
        let own_rows = (y0 as usize + 2..=y1 as usize + 2).chain(pad_rows.iter().copied());
        for q in own_rows {
            for &p in &pad_cols {
                put(q, p, key_at(q, p));
            }
        }
        for &q in &pad_rows {
            for p in x0 as usize + 2..=x1 as usize + 2 {
                put(q, p, key_at(q, p));
            }
        }
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
            unsafe { keys.refresh(LevelBytes::of(level), rect) };
        }
    }

    /// A writer of this lazy batch's key image, for [`KeyWriter::refresh`] from several threads
    /// at once (each its own regions); `None` for a batch that is not filled region by region.
    pub(crate) fn key_writer(&mut self) -> Option<KeyWriter<'_>> {
        let Plan::Kernel(plan) = &mut self.plan else {
            return None;
        };
        let pad = plan.padding.as_deref()?;
        let keys = match &mut plan.keys {
            Keys::U16(v) => KeyPtr::U16(v.as_mut_ptr(), v.len()),
            Keys::I32(v) => KeyPtr::I32(v.as_mut_ptr(), v.len()),
        };
        Some(KeyWriter { keys, pad })
    }
}
