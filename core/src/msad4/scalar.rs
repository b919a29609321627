//! The portable reference: `msad4` itself and a branch-free SAD-map row kernel.
//!
//! Every other backend must produce exactly what this file produces.

use super::plan::Plan;

/// `msad4(reference, source, accum)` as HLSL defines it (HLSL msad4 docs, D3D11.3 FS 22.12.15).
///
/// * R113: bytes are numbered little-endian, `byte_i(x) = (x >> 8i) & 0xFF`.
/// * R114: alignment `k` (0..=3) is the 4 bytes starting at byte `k` of the 8-byte little-endian
///   `source.y:source.x`.
/// * R115: `result[k] = accum[k] + Σ |byte_i(reference) − byte_i(S_k)|` over the reference bytes
///   that are not 0 (a 0 *reference* byte is "don't care"; a 0 source byte is compared normally).
/// * R116 `[CHOICE]`: computed in u64 and saturated to `u32::MAX` (HLSL only defines results up
///   to 65535, so no caller should rely on anything above it).
///
/// Branch-free: the mask is a multiply by 0 or 1, the saturation a `min`.
///
/// ```
/// use penumbra_core::msad4::msad4;
/// // The HLSL documentation's example (SPEC §4.2).
/// let r = msad4(0xA100_B2C3, [0xD7B0_C372, 0x4F57_C2A3], [1, 2, 3, 4]);
/// assert_eq!(r, [153, 6, 92, 113]);
/// ```
#[inline]
#[must_use]
pub fn msad4(reference: u32, source: [u32; 2], accum: [u32; 4]) -> [u32; 4] {
    // R114: the 8-byte window the four alignments are cut from.
    let window = u64::from(source[0]) | (u64::from(source[1]) << 32);
    let mut result = [0u32; 4];
    for (k, out) in result.iter_mut().enumerate() {
        let aligned = (window >> (8 * k)) as u32;
        let mut sum = u64::from(accum[k]);
        for i in 0..4 {
            // R113: little-endian byte i.
            let r = (reference >> (8 * i)) as u8;
            let s = (aligned >> (8 * i)) as u8;
            // R115: only reference bytes that are 0 are masked.
            sum += u64::from(r != 0) * u64::from(r.abs_diff(s));
        }
        // R116 [CHOICE]: saturate instead of wrapping.
        *out = sum.min(u64::from(u32::MAX)) as u32;
    }
    result
}

/// One row of the SAD map: `out[x]` = masked SAD of the template at position `x` of the row that
/// starts at `row[0]`, for every `x < out.len()`.
///
/// Each cared template byte adds `|t − image|` to every position at once, four bytes per pass,
/// in u16 lanes that are widened to u32 before they could overflow. No branch depends on pixel
/// data, and the inner loops are straight zips LLVM can vectorize with the baseline instruction
/// set.
pub(crate) fn sad_row(plan: &Plan, row: &[u8], out: &mut [u32], acc: &mut Vec<u16>) {
    let n = out.len();
    out.fill(0);
    acc.resize(n, 0);
    for batch in plan.byte_batches() {
        acc.fill(0);
        let mut quads = batch.chunks_exact(4);
        for q in &mut quads {
            let [t0, t1, t2, t3] = [q[0].value, q[1].value, q[2].value, q[3].value];
            let s0 = &row[q[0].off..q[0].off + n];
            let s1 = &row[q[1].off..q[1].off + n];
            let s2 = &row[q[2].off..q[2].off + n];
            let s3 = &row[q[3].off..q[3].off + n];
            for ((((a, &p0), &p1), &p2), &p3) in acc.iter_mut().zip(s0).zip(s1).zip(s2).zip(s3) {
                *a += u16::from(ad(t0, p0))
                    + u16::from(ad(t1, p1))
                    + u16::from(ad(t2, p2))
                    + u16::from(ad(t3, p3));
            }
        }
        for op in quads.remainder() {
            let src = &row[op.off..op.off + n];
            for (a, &s) in acc.iter_mut().zip(src) {
                *a += u16::from(ad(op.value, s));
            }
        }
        for (o, &a) in out.iter_mut().zip(acc.iter()) {
            *o += u32::from(a);
        }
    }
}

/// `|a − b|` as `max − min` in u8, which vectorizes to byte max/min/sub (`u8::abs_diff` widens).
#[inline(always)]
fn ad(a: u8, b: u8) -> u8 {
    a.max(b) - a.min(b)
}

/// The masked SAD of the template at one position, or `None` as soon as a partial sum exceeds
/// `limit` (partial-distortion elimination: the sum only grows, so the position cannot score
/// `≤ limit`). Row `i` of the template is `tpl[i·width..]` with its care mask (`0xFF` cared,
/// `0` masked, R115) in `mask`, compared with `data[offs[i]..]`.
///
/// Written as straight zips so the SIMD backends can compile the same body with their features.
#[inline(always)]
pub(crate) fn position_sad(
    offs: &[usize],
    tpl: &[u8],
    mask: &[u8],
    width: usize,
    data: &[u8],
    limit: u32,
) -> Option<u32> {
    let mut sum = 0u32;
    let rows = tpl.chunks_exact(width).zip(mask.chunks_exact(width));
    for (&off, (t, m)) in offs.iter().zip(rows) {
        let img = &data[off..off + width];
        sum += t
            .iter()
            .zip(m)
            .zip(img)
            .map(|((&t, &m), &p)| u32::from(ad(t, p) & m))
            .sum::<u32>();
        if sum > limit {
            return None;
        }
    }
    Some(sum)
}

/// Lane types of the bound arithmetic: u16 when every block sum fits (twice the lanes per
/// register), u32 otherwise.
pub(crate) trait Lane: Copy + Ord + Default + Send + Sync + 'static {
    /// Largest value.
    const MAX: Self;
    /// A byte, widened.
    fn from_u8(v: u8) -> Self;
    /// Sum of up to four bytes (one pixel), widened; exact while the result fits the lane.
    fn from_u16(v: u16) -> Self;
    /// A template block sum; callers only pick a lane type the sum fits.
    fn from_u32(v: u32) -> Self;
    /// Widened for the candidate keys.
    fn to_u32(self) -> u32;
    /// Wrapping add (running sums stay exact as long as the true value fits).
    fn wadd(self, o: Self) -> Self;
    /// Wrapping subtract.
    fn wsub(self, o: Self) -> Self;
    /// Adds bound terms: saturating for u16, so a too-large bound stays a lower bound.
    fn bound_add(self, o: Self) -> Self;
}

impl Lane for u16 {
    const MAX: Self = u16::MAX;
    #[inline(always)]
    fn from_u8(v: u8) -> Self {
        u16::from(v)
    }
    #[inline(always)]
    fn from_u16(v: u16) -> Self {
        v
    }
    #[inline(always)]
    fn from_u32(v: u32) -> Self {
        v.min(u32::from(u16::MAX)) as u16
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn wadd(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn wsub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn bound_add(self, o: Self) -> Self {
        self.saturating_add(o)
    }
}

impl Lane for u32 {
    const MAX: Self = u32::MAX;
    #[inline(always)]
    fn from_u8(v: u8) -> Self {
        u32::from(v)
    }
    #[inline(always)]
    fn from_u16(v: u16) -> Self {
        u32::from(v)
    }
    #[inline(always)]
    fn from_u32(v: u32) -> Self {
        v
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn wadd(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn wsub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn bound_add(self, o: Self) -> Self {
        // Bounds never exceed 255 × template bytes < 2^31 (the template size limit).
        self.wrapping_add(o)
    }
}

/// One row of the successive-elimination bound: `out[x] = Σ |T_b − W_b(x)|` over the template's
/// fully cared blocks `(rel, T_b)`, where `sums[rel + x]` is the image's block sum `W_b(x)`.
///
/// With `early = Some((first, limit))`, a run of positions whose sum over the `first` blocks
/// is already above `limit` everywhere stops there: its partial sum is still a lower bound,
/// and above `limit` whatever the other blocks add.
///
/// Works on 64 positions at a time with every block summed before the store, so the partial
/// sums stay in registers.
#[inline(always)]
pub(crate) fn bound_row<T: Lane>(
    blocks: &[(usize, u32)],
    sums: &[T],
    early: Option<(usize, T)>,
    out: &mut [T],
) {
    const LANES: usize = 64;
    let whole = out.len() / LANES * LANES;
    let (body, tail) = out.split_at_mut(whole);
    let (first, limit) = early.unwrap_or((blocks.len(), T::MAX));
    let (head, rest) = blocks.split_at(first.min(blocks.len()));
    let add = |mut acc: [T; LANES], blocks: &[(usize, u32)], x0: usize| {
        for &(rel, t) in blocks {
            let t = T::from_u32(t);
            let s: &[T; LANES] = sums[rel + x0..rel + x0 + LANES].try_into().unwrap();
            for (a, &v) in acc.iter_mut().zip(s) {
                *a = a.bound_add(t.max(v).wsub(t.min(v)));
            }
        }
        acc
    };
    // Two loops, so that without an early stop no horizontal minimum is computed at all.
    if rest.is_empty() {
        for (ci, o) in body.chunks_exact_mut(LANES).enumerate() {
            o.copy_from_slice(&add([T::default(); LANES], blocks, ci * LANES));
        }
    } else {
        for (ci, o) in body.chunks_exact_mut(LANES).enumerate() {
            let x0 = ci * LANES;
            let mut acc = add([T::default(); LANES], head, x0);
            if row_min(&acc) <= limit {
                acc = add(acc, rest, x0);
            }
            o.copy_from_slice(&acc);
        }
    }
    tail.fill(T::default());
    for &(rel, t) in blocks {
        let t = T::from_u32(t);
        for (a, &v) in tail.iter_mut().zip(&sums[rel + whole..]) {
            *a = a.bound_add(t.max(v).wsub(t.min(v)));
        }
    }
}

/// `col[x] += Σ_c row[x·count + c]` (one pixel's bytes summed over its channels), or `−=` when
/// `add` is false.
#[inline(always)]
pub(crate) fn col_update<T: Lane>(col: &mut [T], row: &[u8], count: usize, add: bool) {
    let f = |c: T, v: T| if add { c.wadd(v) } else { c.wsub(v) };
    if count == 1 {
        for (c, &v) in col.iter_mut().zip(row) {
            *c = f(*c, T::from_u8(v));
        }
    } else {
        for (c, px) in col.iter_mut().zip(row.chunks_exact(count)) {
            let v = px.iter().map(|&b| u16::from(b)).sum::<u16>();
            *c = f(*c, T::from_u16(v));
        }
    }
}

/// `out[x] = Σ_{c < bw} col[x + c]` for `x < out.len() = col.len() − bw + 1`, by doubling:
/// sums of 1, 2, 4… columns, combined along the bits of `bw` (a few vectorizable passes instead
/// of a serial running sum).
#[inline(always)]
pub(crate) fn window_sums<T: Lane>(
    col: &[T],
    bw: usize,
    out: &mut [T],
    cur: &mut Vec<T>,
    next: &mut Vec<T>,
) {
    let len = out.len();
    out.fill(T::default());
    cur.clear();
    cur.extend_from_slice(col);
    next.resize(col.len(), T::default());
    let (mut p, mut off) = (1, 0);
    loop {
        if bw & p != 0 {
            for (o, &v) in out.iter_mut().zip(&cur[off..off + len]) {
                *o = o.wadd(v);
            }
            off += p;
        }
        if 2 * p > bw {
            break;
        }
        // Sums of 2p columns from sums of p columns.
        let valid = col.len() + 1 - 2 * p;
        for ((n, &a), &b) in next[..valid].iter_mut().zip(&cur[..valid]).zip(&cur[p..]) {
            *n = a.wadd(b);
        }
        std::mem::swap(cur, next);
        p *= 2;
    }
}

/// The smallest value of `row` (`T::MAX` if empty).
#[inline(always)]
pub(crate) fn row_min<T: Lane>(row: &[T]) -> T {
    row.iter().fold(T::MAX, |m, &v| m.min(v))
}

/// Turns the SIMD kernels' `2·SAD + bias` into the SAD.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline(always)]
pub(crate) fn finish_doubled(out: &mut [u32], bias: u32) {
    for v in out {
        *v = v.wrapping_sub(bias) >> 1;
    }
}

/// Defines, in a SIMD backend's file, `#[target_feature]` copies of the portable helpers above,
/// so the same bodies are compiled with that backend's instructions.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
macro_rules! portable_helpers {
    ($feat:literal) => {
        /// [`scalar::position_sad`](super::scalar::position_sad) with this backend's features.
        #[target_feature(enable = $feat)]
        pub(crate) fn position_sad(
            offs: &[usize],
            tpl: &[u8],
            mask: &[u8],
            width: usize,
            data: &[u8],
            limit: u32,
        ) -> Option<u32> {
            super::scalar::position_sad(offs, tpl, mask, width, data, limit)
        }

        /// [`scalar::bound_row`](super::scalar::bound_row) with this backend's features.
        #[target_feature(enable = $feat)]
        pub(crate) fn bound_row<T: super::scalar::Lane>(
            blocks: &[(usize, u32)],
            sums: &[T],
            early: Option<(usize, T)>,
            out: &mut [T],
        ) {
            super::scalar::bound_row(blocks, sums, early, out)
        }

        /// [`scalar::col_update`](super::scalar::col_update) with this backend's features.
        #[target_feature(enable = $feat)]
        pub(crate) fn col_update<T: super::scalar::Lane>(
            col: &mut [T],
            row: &[u8],
            count: usize,
            add: bool,
        ) {
            super::scalar::col_update(col, row, count, add)
        }

        /// [`scalar::window_sums`](super::scalar::window_sums) with this backend's features.
        #[target_feature(enable = $feat)]
        pub(crate) fn window_sums<T: super::scalar::Lane>(
            col: &[T],
            bw: usize,
            out: &mut [T],
            cur: &mut Vec<T>,
            next: &mut Vec<T>,
        ) {
            super::scalar::window_sums(col, bw, out, cur, next)
        }

        /// [`scalar::row_min`](super::scalar::row_min) with this backend's features.
        #[target_feature(enable = $feat)]
        pub(crate) fn row_min<T: super::scalar::Lane>(row: &[T]) -> T {
            super::scalar::row_min(row)
        }

        /// [`scalar::finish_doubled`](super::scalar::finish_doubled) with this backend's
        /// features.
        #[target_feature(enable = $feat)]
        pub(crate) fn finish_doubled(out: &mut [u32], bias: u32) {
            super::scalar::finish_doubled(out, bias)
        }
    };
}
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
pub(crate) use portable_helpers;
