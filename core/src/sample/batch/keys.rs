//! The key image of a kernel plan: the level's texels as integer keys in the comparison's
//! order, padded by what the address modes put around the level, stored in row pairs (see the
//! module docs of `batch`), with the constants every kernel reads.

use super::*;

/// How [`KernelPlan::build`] makes a key image.
pub(super) enum Fill {
    /// Built now from the level's texels.
    Eager,
    /// Left to be filled region by region (`KeyWriter::refresh`): in the given image when it
    /// has the size and key type (its contents are stale until refreshed), else in a new
    /// zeroed one.
    Lazy(Option<Keys>),
}

/// The key image and the constants every kernel reads.
#[derive(Debug)]
pub(super) struct KernelPlan {
    pub(super) consts: Consts,
    pub(super) keys: Keys,
    /// Keys of `keys` before the image's first entry: a lazy image starts where its texels'
    /// entries begin on a cache line ([`Layout`]); 0 for the others.
    pub(super) lead: usize,
    /// How padded texels map to the level's texels, for [`CmpBatch::refresh`].
    pub(super) padding: Option<Box<Padding>>,
}

/// Where a lazy key image's entries lie: rows of `stride` entries (the padded width rounded
/// up to whole 64-byte lines) from key `lead` on, chosen so that every row's first texel
/// entry (padded column 2) starts a line. A tile's refresh then writes each of its rows with
/// whole-line stores: a row of 32 texels is four lines of 32-bit key pairs rather than five
/// lines split by every store (the padded row of 2052 entries put alternate rows 32 bytes off
/// the lines).
pub(super) struct Layout {
    pub(super) stride: usize,
    pub(super) lead: usize,
    /// Keys in the image, `lead` and the last row's tail included.
    pub(super) len: usize,
}

impl Layout {
    /// Bytes in a cache line.
    const LINE: usize = 64;

    /// The layout of `rows` entry rows of `cols` padded columns, keys of `key_bytes` bytes, in
    /// an image whose first key is at address `base`.
    pub(super) fn lazy(cols: usize, rows: usize, key_bytes: usize, base: usize) -> Layout {
        let entry = 2 * key_bytes;
        let stride = cols.next_multiple_of(Self::LINE / entry);
        // Padded column 2 of row 0 is at `base + lead·key + 2·entry`.
        let to_line = (Self::LINE - (base + 2 * entry) % Self::LINE) % Self::LINE;
        let lead = to_line / key_bytes;
        Layout {
            stride,
            lead,
            len: Self::LINE / key_bytes + 2 * rows * stride,
        }
    }
}

/// The padded key image's sources: per padded column and row, the texel it repeats (`None`:
/// the border).
#[derive(Debug)]
pub(super) struct Padding {
    pub(super) cols: Vec<Option<u32>>,
    pub(super) rows: Vec<Option<u32>>,
    pub(super) border: i32,
    pub(super) keymap: KeyMap,
    pub(super) format: Format,
    pub(super) width: u32,
    pub(super) height: u32,
    /// Entries in a row of the image ([`Layout`]).
    pub(super) stride: usize,
}

impl Padding {
    /// The texel a padded position belongs to: the one it repeats, or for a border position
    /// the nearest texel (whose region writes it).
    pub(super) fn owner(sources: &[Option<u32>], n: u32, p: usize) -> u32 {
        sources[p].unwrap_or_else(|| (p as i64 - 2).clamp(0, i64::from(n) - 1) as u32)
    }
}

/// The padded key image in row pairs: entry `q·stride + p` holds the keys of padded texels
/// `(p, q)` and `(p, q + 1)`, so one lane's whole 2×2 footprint is the two adjacent entries `i`
/// and `i + 1` — one 16-byte (32-bit keys) or 8-byte (16-bit keys) load.
pub(super) enum Keys {
    /// 8- and 16-bit UNORM codes (R16, D16, \[EXT\] R8).
    U16(Vec<u16>),
    /// Ordered f32 keys, or 24-bit UNORM codes.
    I32(Vec<i32>),
}

impl std::fmt::Debug for Keys {
    /// The size, not the (possibly huge) contents.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Keys::U16(v) => write!(f, "U16({} keys)", v.len()),
            Keys::I32(v) => write!(f, "I32({} keys)", v.len()),
        }
    }
}

impl Keys {
    pub(super) fn bytes(&self) -> usize {
        match self {
            Keys::U16(v) => 2 * v.len(),
            Keys::I32(v) => 4 * v.len(),
        }
    }

    /// The address of the first key.
    pub(super) fn address(&self) -> usize {
        match self {
            Keys::U16(v) => v.as_ptr() as usize,
            Keys::I32(v) => v.as_ptr() as usize,
        }
    }
}

/// How a comparison function maps onto the kernels' integer tests.
pub(super) struct FuncMap {
    pub(super) test: Test,
    /// Texel and reference keys are order-reversed (GREATER, GREATER_EQUAL).
    pub(super) reverse: bool,
    /// `ref ≤ key` is tested as `ref − 1 < key`.
    pub(super) or_equal: bool,
}

impl FuncMap {
    pub(super) fn new(func: ComparisonFunc) -> FuncMap {
        let (test, reverse, or_equal) = match func {
            ComparisonFunc::Less => (Test::Less, false, false),
            ComparisonFunc::LessEqual => (Test::Less, false, true),
            ComparisonFunc::Greater => (Test::Less, true, false),
            ComparisonFunc::GreaterEqual => (Test::Less, true, true),
            ComparisonFunc::NotEqual => (Test::NotEqual, false, false),
            _ => (Test::Equal, false, false),
        };
        FuncMap {
            test,
            reverse,
            or_equal,
        }
    }
}

/// The key transform of one format: texel key = `(code_key ^ xor) + add`.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeyMap {
    pub(super) kind: RefKind,
    /// UNORM `2^n − 1` (0 for floats).
    pub(super) max: u32,
    pub(super) xor: i32,
    pub(super) add: i32,
}

/// `bytes` as little-endian 32-bit words when texels are 4 bytes, the bytes are aligned for
/// it and the CPU is little-endian (always so for a texture's rows on the CPUs penumbra runs
/// on); `None` otherwise, for the byte-by-byte path.
fn words_of(bytes: &[u8], bpt: usize) -> Option<&[u32]> {
    if bpt != 4 || cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: every bit pattern is a valid u32; `align_to` hands out only the aligned middle.
    let (pre, words, post) = unsafe { bytes.align_to::<u32>() };
    (pre.is_empty() && post.is_empty()).then_some(words)
}

impl KeyMap {
    pub(super) fn new(format: Format, reverse: bool) -> Option<KeyMap> {
        let (kind, max) = match format.kind() {
            ComponentKind::Float32 => (RefKind::Float, 0),
            ComponentKind::Unorm(_) => (RefKind::Unorm, format.unorm_max()?),
            ComponentKind::Float16 => return None,
        };
        // Order reversal: `!k` for float keys, `max − k` (= `!k + max + 1`) for UNORM codes.
        let (xor, add) = match (reverse, kind) {
            (false, _) => (0, 0),
            (true, RefKind::Float) => (-1, 0),
            (true, RefKind::Unorm) => (-1, max as i32 + 1),
        };
        Some(KeyMap {
            kind,
            max,
            xor,
            add,
        })
    }

    /// The key of a raw R code (UNORM code or f32 bits).
    #[inline]
    pub(super) fn key(self, raw: u32) -> i32 {
        match self.kind {
            RefKind::Unorm => ((raw as i32) ^ self.xor).wrapping_add(self.add),
            RefKind::Float => {
                if scalar::is_nan_bits(raw) {
                    NAN_TEXEL
                } else {
                    (scalar::float_key(raw) ^ self.xor).wrapping_add(self.add)
                }
            }
        }
    }

    /// The keys of a row of texels of `format` (its packed bytes), into `out` (one per texel):
    /// the same keys as [`KeyMap::key`] of each texel's R, in loops per format that compile to
    /// straight-line code.
    pub(super) fn keys_of_row(self, format: Format, bytes: &[u8], out: &mut [i32]) {
        let (xor, add) = (self.xor, self.add);
        let bpt = format.bytes_per_texel();
        match format.kind() {
            ComponentKind::Float32 => {
                let key = |raw: u32| {
                    let key = (scalar::float_key(raw) ^ xor).wrapping_add(add);
                    if scalar::is_nan_bits(raw) {
                        NAN_TEXEL
                    } else {
                        key
                    }
                };
                if let Some(words) = words_of(bytes, bpt) {
                    // The texels as 32-bit words: one load each, and the loop vectorizes.
                    for (o, &w) in out.iter_mut().zip(words) {
                        *o = key(w);
                    }
                } else {
                    for (o, t) in out.iter_mut().zip(bytes.chunks_exact(bpt)) {
                        *o = key(u32::from_le_bytes([t[0], t[1], t[2], t[3]]));
                    }
                }
            }
            ComponentKind::Unorm(_) if bpt == 2 => {
                for (o, t) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    let raw = i32::from(u16::from_le_bytes([t[0], t[1]]));
                    *o = (raw ^ xor).wrapping_add(add);
                }
            }
            _ => {
                for (o, t) in out.iter_mut().zip(bytes.chunks_exact(bpt)) {
                    *o = self.key(format.raw_component(t, 0));
                }
            }
        }
    }

    /// The key of the border's R (R35, R37).
    pub(super) fn border_key(self, color: [f32; 4], format: Format) -> i32 {
        let border = Border::new(color, format);
        match (self.kind, border.r_code) {
            (RefKind::Unorm, Some(code)) => self.key(code),
            _ => self.key(border.rgba[0].to_bits()),
        }
    }
}

impl KernelPlan {
    pub(super) fn consts(sampler: &Sampler, map: &FuncMap, keys: KeyMap, size: [u32; 2]) -> Consts {
        let wrap = [
            sampler.desc.address_u == AddressMode::Wrap,
            sampler.desc.address_v == AddressMode::Wrap,
        ];
        Consts {
            size256: size.map(|n| (256 * n) as f32),
            hi: size.map(|n| n as i32 + 2),
            wrap,
            any_wrap: wrap[0] || wrap[1],
            point: false,
            floor: false,
            stride: size[0] as i32 + 4,
            prefetch: false,
            test: map.test,
            ref_kind: keys.kind,
            unorm_max: f64::from(keys.max),
            ref_xor: keys.xor,
            ref_add: keys.add - i32::from(map.or_equal),
        }
    }

    /// The key image of one level, padded by two texels per side (R28–R37 baked in).
    ///
    /// [`Fill::Lazy`]: the image is left as it is (a new one zeroed, untouched memory) and
    /// filled later by `refresh`.
    pub(super) fn build(
        sampler: &Sampler,
        tex: &Texture,
        mip: u32,
        slice: u32,
        linear: bool,
        fill: Fill,
    ) -> Option<Self> {
        let format = tex.format();
        let map = FuncMap::new(sampler.desc.comparison_func);
        let keymap = KeyMap::new(format, map.reverse)?;
        let [w, h, _] = tex.level_size(mip);
        let mut consts = Self::consts(sampler, &map, keymap, [w, h]);
        if !linear {
            consts.point = true;
            consts.floor = !sampler.options.legacy_point_rounding; // R26
        }
        let pads = |n: u32, mode: AddressMode| -> Vec<Option<u32>> {
            (-2..i64::from(n) + 2)
                .map(|t| match address(t, n, mode) {
                    Addressed::Texel(i) => Some(i),
                    Addressed::Border => None,
                })
                .collect()
        };
        let cols = pads(w, sampler.desc.address_u);
        let rows = pads(h, sampler.desc.address_v);
        let border = keymap.border_key(sampler.desc.border_color, format);
        if let Fill::Lazy(spare) = fill {
            let narrow = keymap.kind == RefKind::Unorm && keymap.max <= u32::from(u16::MAX);
            let key_bytes = if narrow { 2 } else { 4 };
            // The image's length does not depend on where it lies: a spare of that length fits.
            let len = Layout::lazy(cols.len(), rows.len() - 1, key_bytes, 0).len;
            let keys = match spare {
                Some(Keys::U16(v)) if narrow && v.len() == len => Keys::U16(v),
                Some(Keys::I32(v)) if !narrow && v.len() == len => Keys::I32(v),
                _ if narrow => Keys::U16(crate::zeroed::zeroed_vec(len)?),
                _ => {
                    let v = crate::zeroed::zeroed_vec(len)?;
                    advise_huge_pages(&v);
                    Keys::I32(v)
                }
            };
            let layout = Layout::lazy(cols.len(), rows.len() - 1, key_bytes, keys.address());
            consts.stride = layout.stride as i32;
            consts.prefetch = keys.bytes() > PREFETCH_BYTES;
            let padding = Padding {
                cols,
                rows,
                border,
                keymap,
                format,
                width: w,
                height: h,
                stride: layout.stride,
            };
            return Some(KernelPlan {
                consts,
                keys,
                lead: layout.lead,
                padding: Some(Box::new(padding)),
            });
        }
        let data = tex.subresource(mip, slice);
        let bpt = format.bytes_per_texel();
        let row_keys = |row: Option<u32>| -> Vec<i32> {
            cols.iter()
                .map(|col| match (row, col) {
                    (Some(y), Some(x)) => {
                        let at = (y as usize * w as usize + *x as usize) * bpt;
                        keymap.key(format.raw_component(&data[at..at + bpt], 0))
                    }
                    _ => border,
                })
                .collect()
        };
        let pairs = (rows.len() - 1) * cols.len();
        let mut prev = row_keys(rows[0]);
        let mut rows_below = rows[1..].iter().map(|&r| row_keys(r));
        let keys = if keymap.kind == RefKind::Unorm && keymap.max <= u32::from(u16::MAX) {
            let mut v = Vec::new();
            v.try_reserve_exact(2 * pairs).ok()?;
            for cur in rows_below.by_ref() {
                v.extend(
                    prev.iter()
                        .zip(&cur)
                        .flat_map(|(&a, &b)| [a as u16, b as u16]),
                );
                prev = cur;
            }
            Keys::U16(v)
        } else {
            let mut v = Vec::new();
            v.try_reserve_exact(2 * pairs).ok()?;
            advise_huge_pages(&v);
            for cur in rows_below.by_ref() {
                v.extend(prev.iter().zip(&cur).flat_map(|(&a, &b)| [a, b]));
                prev = cur;
            }
            Keys::I32(v)
        };
        consts.prefetch = keys.bytes() > PREFETCH_BYTES;
        Some(KernelPlan {
            consts,
            keys,
            lead: 0,
            padding: None,
        })
    }

    /// R62/R108: the resource clamp removed every level; each lookup compares the reference with
    /// a texel of 0 — a 1×1 level of 0 whose pads are 0 as well.
    pub(super) fn empty_set(sampler: &Sampler, format: Format) -> Option<Self> {
        let map = FuncMap::new(sampler.desc.comparison_func);
        let keymap = KeyMap::new(format, map.reverse)?;
        let consts = Self::consts(sampler, &map, keymap, [1, 1]);
        let zero = keymap.key(0);
        let len = 2 * 4 * 5;
        let keys = if keymap.kind == RefKind::Unorm && keymap.max <= u32::from(u16::MAX) {
            Keys::U16(vec![zero as u16; len])
        } else {
            Keys::I32(vec![zero; len])
        };
        Some(KernelPlan {
            consts,
            keys,
            lead: 0,
            padding: None,
        })
    }
}

/// Asks Linux for transparent huge pages on the 2 MiB-aligned part of a large, still untouched
/// key image (THP is often in `madvise` mode): random lookups over a big map otherwise miss the
/// TLB on most taps. Advice only; a failure changes nothing.
#[cfg(target_os = "linux")]
pub(super) fn advise_huge_pages<T>(v: &Vec<T>) {
    unsafe extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    const HUGE: usize = 2 << 20;
    let start = v.as_ptr() as usize;
    let end = start + v.capacity() * size_of::<T>();
    let first = start.next_multiple_of(HUGE);
    if end >= first + HUGE {
        let len = (end - first) / HUGE * HUGE;
        // SAFETY: the range lies inside the vector's own allocation; MADV_HUGEPAGE changes no
        // contents and no mapping, only how the kernel backs the pages.
        unsafe { madvise(first as *mut std::ffi::c_void, len, MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn advise_huge_pages<T>(_: &Vec<T>) {}

#[cfg(test)]
mod layout_tests {
    use super::Layout;

    /// Wherever the image lies, its rows' first texel entries start lines, its rows are whole
    /// lines, and every entry lies inside its length.
    #[test]
    fn lazy_layouts_start_each_rows_texels_on_a_line() {
        for key in [2, 4] {
            for base in (0..256).step_by(key) {
                for cols in [5, 6, 36, 2052, 2053] {
                    let rows = 7;
                    let l = Layout::lazy(cols, rows, key, base);
                    assert!(l.stride >= cols && l.stride < cols + 64 / (2 * key));
                    assert_eq!((2 * key * l.stride) % 64, 0, "{key} {cols}");
                    assert_eq!((base + key * (l.lead + 4)) % 64, 0, "{key} {base}");
                    assert!(l.lead + 2 * rows * l.stride <= l.len, "{key} {base} {cols}");
                    assert_eq!(l.len, Layout::lazy(cols, rows, key, 0).len);
                }
            }
        }
    }
}
