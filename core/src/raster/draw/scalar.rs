//! The portable kernel: each row's exact run of covered centres, then the depth test pixel by
//! pixel. The reference the SIMD kernel equals.

use super::{Area, Batch, Coarse, TileBuf, Tri, pixel_depth, row_depth, row_run, row_setup};

/// A depth buffer cell: the LESS (or, with `GREATER`, the GREATER) test with write.
pub(super) trait Slot: Copy {
    /// Tests the interpolated (biased) depth `z` against the stored value and writes it if it
    /// is less (greater); returns whether it wrote. `PLAIN`: `z` is known to lie in
    /// [2⁻¹²⁶, 1] already.
    fn test_write<const PLAIN: bool, const GREATER: bool>(&mut self, z: f64) -> bool;
}

/// The depth a pixel sees: clamped to the viewport's [0, 1], with subnormals (and −0) made +0.
#[inline(always)]
pub(super) fn viewport_depth<const PLAIN: bool>(z: f64) -> f32 {
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
pub(super) fn unorm16(d: f32) -> u16 {
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

/// Draws `tris` into `area` of the tile with the portable kernel.
pub(super) fn draw(
    buf: TileBuf<'_>,
    area: Area,
    batches: &[Batch<'_>],
    greater: bool,
    coarse: &mut Coarse,
) -> u64 {
    fn each<S: Slot, const GREATER: bool>(
        buf: &mut [S],
        area: Area,
        batches: &[Batch<'_>],
        coarse: &mut Coarse,
    ) -> u64 {
        let mut written = 0;
        for b in batches {
            written += b.each(coarse, area.clip, |t| triangle::<S, GREATER>(buf, area, t));
        }
        written
    }
    match (buf, greater) {
        (TileBuf::F32(b), false) => each::<_, false>(b, area, batches, coarse),
        (TileBuf::F32(b), true) => each::<_, true>(b, area, batches, coarse),
        (TileBuf::U16(b), false) => each::<_, false>(b, area, batches, coarse),
        (TileBuf::U16(b), true) => each::<_, true>(b, area, batches, coarse),
    }
}

/// Draws the part of `t` inside `area`: per row, the exact run of covered centres, then each
/// centre's depth (the module's formula) through the depth test.
#[inline(always)]
pub(super) fn triangle<S: Slot, const GREATER: bool>(buf: &mut [S], area: Area, t: &Tri) -> u64 {
    let Some([xs, ys, xe, ye]) = area.span_of(t) else {
        return 0;
    };
    let (mut e, sx, sy, inv) = row_setup(t, xs, ys);
    let width = i64::from(xe - xs + 1);
    let mut written = 0;
    for y in ys..=ye {
        // No early exit on an empty row: a thin triangle can miss every centre of one row and
        // still cover centres in the next.
        let (lo, hi) = row_run(&e, &sx, &inv, width);
        for i in 0..3 {
            e[i] += sy[i];
        }
        if lo >= hi || !area.row_on(y) {
            continue;
        }
        let zrow = row_depth(t, y);
        let (x0, x1) = (xs + lo as i32, xs + hi as i32);
        let start = area.index(x0, y);
        let span = &mut buf[start..start + (x1 - x0) as usize];
        written += if t.plain {
            run::<S, true, GREATER>(span, t, zrow, x0)
        } else {
            run::<S, false, GREATER>(span, t, zrow, x0)
        };
    }
    written
}

/// The depth test along one covered run starting at pixel `x0` of a row.
#[inline(always)]
fn run<S: Slot, const PLAIN: bool, const GREATER: bool>(
    span: &mut [S],
    t: &Tri,
    zrow: f64,
    x0: i32,
) -> u64 {
    let mut written = 0;
    for (k, slot) in span.iter_mut().enumerate() {
        let z = pixel_depth(t, zrow, x0 + k as i32);
        written += u64::from(slot.test_write::<PLAIN, GREATER>(z));
    }
    written
}
