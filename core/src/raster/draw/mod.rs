//! Drawing set-up triangles into a tile: which pixel centres each covers, the depth there, and
//! the depth test with writes.
//!
//! Every pixel's depth is a fixed function of the triangle and the pixel alone, never of the
//! part of the target being drawn:
//!
//! ```text
//! z(x, y) = (zr + ∂z/∂y · (y − yr)) + ∂z/∂x · (x − xr)
//! ```
//!
//! in f64, each product and each sum rounded once (no fused multiply-add), where `(xr, yr)` is
//! the first pixel of the triangle's bounds and `zr` the (biased) depth at its centre
//! ([`Tri::zr`]). So a tile, or any rectangle of one, drawn alone holds the bits the full draw
//! writes there, and the SIMD kernels give the portable one's bits.
//!
//! Coverage is exact (integer edge functions, D3D's top-left rule): the portable kernel finds
//! each row's run of covered centres; the AVX2 kernel tests eight centres at once with 32-bit
//! edge functions where they cannot overflow (small triangles, the common case) and otherwise
//! walks each row's exact run eight pixels at a time; the AVX-512 kernel tests sixteen at once
//! for triangles up to 64 pixels across in the area, with mask registers for coverage and
//! writes, and hands wider ones to the AVX2 code.

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx512;
mod scalar;

use crate::cpu::CpuExtension;

use super::setup::{HALF, SUB_BITS, Tri};
use super::target::TILE_SIZE;

/// A pixel buffer of either storage, row-major (an [`Area`] says where it lies on the target).
pub(crate) enum TileBuf<'a> {
    F32(&'a mut [f32]),
    U16(&'a mut [u16]),
}

impl TileBuf<'_> {
    /// The same buffer, borrowed again (for one more draw into it).
    pub(crate) fn reborrow(&mut self) -> TileBuf<'_> {
        match self {
            TileBuf::F32(b) => TileBuf::F32(b),
            TileBuf::U16(b) => TileBuf::U16(b),
        }
    }

    fn len(&self) -> usize {
        match self {
            TileBuf::F32(b) => b.len(),
            TileBuf::U16(b) => b.len(),
        }
    }
}

/// Where a pixel buffer sits on the target, and the part of it to draw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Area {
    /// The target pixel of the buffer's first value.
    pub origin: [i32; 2],
    /// Values from one row of the buffer to the next: a multiple of 8, so that the kernels'
    /// eight-pixel groups (aligned on the origin) never cross into the next row.
    pub stride: usize,
    /// The pixels to draw, inclusive: x0, y0, x1, y1 (inside the buffer).
    pub clip: [i32; 4],
    /// Of the clip rectangle's rows, those drawn: bit k for row `clip[1] + k`. [`EVERY_ROW`]
    /// draws every row (of a clip rectangle of any height); any other mask needs a clip
    /// rectangle at most 64 rows high. A piece is set up once however many runs of rows the
    /// mask has, and the rows left out are skipped, not drawn.
    pub rows: u64,
}

/// [`Area::rows`] for every row.
pub(crate) const EVERY_ROW: u64 = u64::MAX;

impl Area {
    /// The whole tile of the rasterizer's tiled storage whose inclusive pixel rectangle is
    /// `rect` (its buffer is `TILE_SIZE`² values).
    pub(crate) fn tile(rect: [i32; 4]) -> Area {
        Area {
            origin: [rect[0], rect[1]],
            stride: TILE_SIZE as usize,
            clip: rect,
            rows: EVERY_ROW,
        }
    }

    /// Whether a buffer of `len` values holds every group the kernels touch: the clip
    /// rectangle starts at or after the origin, and the last row's last group (rounded up to
    /// eight pixels from the origin) ends inside the buffer and inside its row.
    fn fits(&self, len: usize) -> bool {
        self.fits_groups(len, 8)
    }

    /// [`Area::fits`] for groups of `group` pixels (a power of two) aligned on the origin.
    fn fits_groups(&self, len: usize, group: usize) -> bool {
        let [x0, y0, x1, y1] = self.clip;
        if x0 > x1 || y0 > y1 {
            return true;
        }
        let (dx0, dy0) = (x0 - self.origin[0], y0 - self.origin[1]);
        let row_end = ((x1 - self.origin[0]) as usize | (group - 1)) + 1;
        dx0 >= 0
            && dy0 >= 0
            && self.stride.is_multiple_of(group)
            && row_end <= self.stride
            && (y1 - self.origin[1]) as usize * self.stride + row_end <= len
    }

    /// The part of `t`'s bounds inside the clip rectangle, from its first row drawn to its
    /// last ([`Area::rows`]): x0, y0, x1, y1, or `None`.
    #[inline(always)]
    fn span_of(&self, t: &Tri) -> Option<[i32; 4]> {
        let xs = self.clip[0].max(i32::from(t.bbox[0]));
        let mut ys = self.clip[1].max(i32::from(t.bbox[1]));
        let xe = self.clip[2].min(i32::from(t.bbox[2]));
        let mut ye = self.clip[3].min(i32::from(t.bbox[3]));
        if xs > xe || ys > ye {
            return None;
        }
        if self.rows != EVERY_ROW {
            // The clip is at most 64 rows high (the field's contract): the span's rows are
            // bits a..=b of the mask.
            let (a, b) = ((ys - self.clip[1]) as u32, (ye - self.clip[1]) as u32);
            debug_assert!(b < 64, "a row mask on a clip rectangle over 64 rows high");
            let m = (self.rows >> a) & (u64::MAX >> (63 - (b - a)));
            if m == 0 {
                return None;
            }
            ys += m.trailing_zeros() as i32;
            ye = ys - m.trailing_zeros() as i32 + (63 - m.leading_zeros()) as i32;
        }
        Some([xs, ys, xe, ye])
    }

    /// Whether row `y` (of the clip rectangle) is drawn ([`Area::rows`]).
    #[inline(always)]
    fn row_on(&self, y: i32) -> bool {
        (self.rows >> ((y - self.clip[1]) & 63)) & 1 != 0
    }

    /// Index of target pixel (x, y) in the buffer.
    #[inline(always)]
    fn index(&self, x: i32, y: i32) -> usize {
        (y - self.origin[1]) as usize * self.stride + (x - self.origin[0]) as usize
    }
}

/// Where the groups of `lanes` pixels (8 or 16) that cover the columns `xs..=xe` of a
/// triangle's part start on each row, and how many there are.
///
/// Groups are aligned on multiples of `lanes` from the buffer's origin, unless starting at `xs`
/// takes fewer: a triangle a few pixels wide that crosses an aligned boundary then takes one
/// group per row instead of two. (Over the benches' 100,000-triangle map in 64² tiles, 42,000 of
/// the 97,000 triangle pieces took two 16-pixel groups aligned, 8,600 do from `xs`.) Those groups end
/// inside the aligned group of `xe`, which [`Area::fits_groups`] checked: they take one group
/// less than the aligned ones, which start at most `lanes − 1` columns before `xs`.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
    allow(dead_code)
)]
#[inline(always)]
fn groups_of(area: &Area, xs: i32, xe: i32, lanes: i32) -> (i32, i32) {
    let aligned = area.origin[0] + ((xs - area.origin[0]) & !(lanes - 1));
    let groups = (xe - aligned) / lanes + 1;
    let need = (xe - xs) / lanes + 1;
    if need < groups {
        (xs, need)
    } else {
        (aligned, groups)
    }
}

/// The kernels the draw can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Scalar,
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    Avx2,
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    Avx512,
}

impl Kernel {
    fn of(ext: CpuExtension) -> Kernel {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            // The AVX-512 kernel also takes VL, DQ and POPCNT (its count of pixels written),
            // which every CPU with F and BW has (checked all the same).
            if ext >= CpuExtension::Avx512bw
                && ext.is_supported()
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("popcnt")
            {
                return Kernel::Avx512;
            }
            if ext >= CpuExtension::Avx2 && ext.is_supported() {
                return Kernel::Avx2;
            }
        }
        let _ = ext;
        Kernel::Scalar
    }
}

/// Set-up triangles to draw: all of `tris`, or those that `items` names, in its order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Batch<'a> {
    pub tris: &'a [Tri],
    pub items: Option<&'a [u32]>,
}

/// How many triangles ahead a batch's listed records are prefetched (they lie scattered in
/// the set-up records: a tile's triangles are a small part of them).
const PREFETCH_AHEAD: usize = 6;

impl Batch<'_> {
    /// Draws each triangle, in order, with `draw` (which returns the pixels written), except
    /// those `coarse` rejects for `clip`; returns the pixels written.
    #[inline(always)]
    fn each(&self, coarse: &mut Coarse, clip: [i32; 4], mut draw: impl FnMut(&Tri) -> u64) -> u64 {
        let mut written = 0;
        // Without the coarse test the loop is the kernel's alone.
        if coarse.on {
            self.visit(|t| {
                if !coarse.rejects(t, clip) {
                    written += draw(t);
                    coarse.drawn(t, clip);
                }
            });
        } else {
            self.visit(|t| written += draw(t));
        }
        written
    }

    /// Calls `f` with each triangle, in order.
    #[inline(always)]
    fn visit(&self, mut f: impl FnMut(&Tri)) {
        match self.items {
            None => self.tris.iter().for_each(f),
            Some(items) => {
                for (k, &i) in items.iter().enumerate() {
                    if let Some(&ahead) = items.get(k + PREFETCH_AHEAD) {
                        prefetch(&self.tris[ahead as usize]);
                    }
                    f(&self.tris[i as usize]);
                }
            }
        }
    }
}

/// The coarse depth of the area being drawn: one bound on every value it holds, learnt from
/// the pieces that cover every pixel of it, against which each later piece is tested before any
/// of its pixels. A piece wholly behind the bound (with LESS: its nearest depth at or past the
/// largest value held) cannot pass a single depth test, so it is skipped: the GPU's
/// hierarchical-Z rejection, with one block per tile.
///
/// Exactness: a pixel's depth is the f64 plane value `z` ([`pixel_depth`]) clamped to 1, rounded
/// to f32 and flushed to +0 below the smallest normal. The plane is linear, so over a piece
/// its values lie between the values at the piece's corners, up to the rounding of the
/// evaluation (a few f64 ulps of the terms; [`Coarse::range`] widens by far more). Rounding to
/// f32, the clamp and the flush are monotonic, so `z ≥ b` gives a stored depth `≥ b` whenever
/// `b` is 0 or a normal f32 at most 1; the bound is kept so (raising an upper bound keeps it
/// one). With GREATER everything is mirrored, and the bound must be at least 0 (a negative `z`
/// is flushed up to +0). A NaN held fails every test, so it needs no bound.
pub(crate) struct Coarse {
    /// LESS: every value held is at most `bound` (or NaN); GREATER: at least.
    bound: f32,
    greater: bool,
    /// Whether the test runs at all (32-bit float storage, small areas).
    on: bool,
    /// Pieces skipped.
    pub rejected: u64,
}

impl Coarse {
    /// Nothing known yet about the area; `on`: learn and test the bound.
    pub(crate) fn new(greater: bool, on: bool) -> Coarse {
        Coarse {
            bound: if greater {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            },
            greater,
            on,
            rejected: 0,
        }
    }

    /// Whether the bound can reject a piece: every depth written lies in [0, 1].
    #[inline(always)]
    fn useful(&self) -> bool {
        if self.greater {
            self.bound > 0.0
        } else {
            self.bound < 1.0
        }
    }

    /// The least and the greatest plane value of `t` over the pixels `span`: the values at its
    /// corners, widened by 2⁻⁴⁰ of the largest term the evaluation can meet on a target of
    /// 16384² (the evaluation's own rounding is under 2⁻⁵⁰ of it).
    fn range(t: &Tri, [x0, y0, x1, y1]: [i32; 4]) -> (f64, f64) {
        let at = |x: i32, y: i32| pixel_depth(t, row_depth(t, y), x);
        let c = [at(x0, y0), at(x1, y0), at(x0, y1), at(x1, y1)];
        let lo = c[0].min(c[1]).min(c[2]).min(c[3]);
        let hi = c[0].max(c[1]).max(c[2]).max(c[3]);
        let reach = f64::from(crate::texture::limits::MAX_EDGE_2D);
        let slack =
            (t.zr.abs() + (t.dzdx.abs() + t.dzdy.abs()) * reach) * f64::from(2.0f32.powi(-40));
        (lo - slack, hi + slack)
    }

    /// Whether the piece of `t` inside `clip` is wholly behind the bound (counted).
    #[inline(always)]
    fn rejects(&mut self, t: &Tri, clip: [i32; 4]) -> bool {
        if !self.useful() {
            return false;
        }
        let Some(span) = span_in(t, clip) else {
            return false;
        };
        let (lo, hi) = Self::range(t, span);
        let bound = f64::from(self.bound);
        let behind = if self.greater {
            hi <= bound
        } else {
            lo >= bound
        };
        self.rejected += u64::from(behind);
        behind
    }

    /// After `t` was drawn into `clip`: if it covers every pixel centre there, each now holds a
    /// depth no farther than the piece's farthest, which tightens the bound.
    #[inline(always)]
    fn drawn(&mut self, t: &Tri, clip: [i32; 4]) {
        let b = t.bbox.map(i32::from);
        if b[0] > clip[0] || b[1] > clip[1] || b[2] < clip[2] || b[3] < clip[3] {
            return;
        }
        if !covers(t, clip) {
            return;
        }
        let (lo, hi) = Self::range(t, clip);
        if self.greater {
            // Stored now ≥ the f32 of min(lo, 1) rounded down, flushed to 0 below the smallest
            // normal (and 0 stands for any negative value, which is flushed up to it).
            let v = lo.min(1.0);
            let mut f = v as f32;
            if f64::from(f) > v {
                f = f.next_down();
            }
            let floor = if f >= f32::MIN_POSITIVE {
                f
            } else {
                f.min(0.0)
            };
            self.bound = self.bound.max(floor);
        } else {
            // Stored now ≤ the f32 of min(hi, 1) rounded up; raised to the smallest normal if
            // it is a subnormal.
            let v = hi.min(1.0);
            let mut f = v as f32;
            if f64::from(f) < v {
                f = f.next_up();
            }
            let ceil = if f > 0.0 && f < f32::MIN_POSITIVE {
                f32::MIN_POSITIVE
            } else {
                f
            };
            self.bound = self.bound.min(ceil);
        }
    }
}

/// The pixels of `t`'s bounds inside `rect` (inclusive); `None` if none.
#[inline(always)]
fn span_in(t: &Tri, rect: [i32; 4]) -> Option<[i32; 4]> {
    let x0 = rect[0].max(i32::from(t.bbox[0]));
    let y0 = rect[1].max(i32::from(t.bbox[1]));
    let x1 = rect[2].min(i32::from(t.bbox[2]));
    let y1 = rect[3].min(i32::from(t.bbox[3]));
    (x0 <= x1 && y0 <= y1).then_some([x0, y0, x1, y1])
}

/// Whether `t` covers every pixel centre of `rect` (inclusive).
#[inline(always)]
fn covers(t: &Tri, rect: [i32; 4]) -> bool {
    edges_at_corners(t, rect, false)
}

/// Whether every edge function of `t` (fill bias included) is ≥ 0 at the corner of `rect`
/// where it is largest (`largest`: some centre of the rectangle may be inside each edge) or
/// smallest (every centre is inside every edge). The edge functions are linear, so over the
/// rectangle their extremes lie at its corners.
#[inline(always)]
fn edges_at_corners(t: &Tri, [x0, y0, x1, y1]: [i32; 4], largest: bool) -> bool {
    let centre = |p: i32| (i64::from(p) << SUB_BITS) + HALF;
    (0..3).all(|i| {
        let (dx, dy, ox, oy, bias) = t.edge(i);
        // Larger towards smaller x when dy > 0 (−dy·x), towards larger y when dx > 0.
        let px = centre(if (dy < 0) == largest { x1 } else { x0 });
        let py = centre(if (dx > 0) == largest { y1 } else { y0 });
        dx * (py - oy) - dy * (px - ox) + bias >= 0
    })
}

/// Asks for the cache line of `t` (a hint; nothing on other targets).
#[inline(always)]
fn prefetch(t: &Tri) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no effect on memory or on the program's behaviour.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (t as *const Tri).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = t;
}

/// Largest area edge (pixels) drawn with the coarse depth test ([`draw_tris`]).
const COARSE_AREA: i32 = 64;

/// What [`draw_tris`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Drawn {
    /// Pixels written (0 where the caller did not ask for the count).
    pub written: u64,
    /// Triangle pieces skipped whole by the coarse depth test ([`Coarse`]).
    pub rejected: u64,
}

/// Draws the triangles of `batches`, in order, into the part `area` of a tile with the LESS
/// test (`greater`: GREATER) on the kernel of `ext` (the best one at or below it), skipping the
/// pieces that the area's coarse depth shows cannot pass ([`Coarse`]; the same bits as drawing
/// them). `count`: count the pixels written ([`Drawn::written`]; the AVX-512 kernel skips the
/// count otherwise, a few of its instructions per sixteen pixels).
pub(crate) fn draw_tris(
    buf: TileBuf<'_>,
    area: Area,
    batches: &[Batch<'_>],
    greater: bool,
    ext: CpuExtension,
    count: bool,
) -> Drawn {
    draw_tris_with(buf, area, batches, greater, ext, true, count)
}

/// [`draw_tris`], with the coarse depth test on or off (for tests: the bits are the same).
pub(crate) fn draw_tris_with(
    buf: TileBuf<'_>,
    area: Area,
    batches: &[Batch<'_>],
    greater: bool,
    ext: CpuExtension,
    coarse: bool,
    count: bool,
) -> Drawn {
    assert!(
        area.fits(buf.len()),
        "{area:?} is not inside a buffer of {} values",
        buf.len()
    );
    // Only a piece that covers the whole area teaches the coarse test a bound: on areas of
    // the tiled maps' size (32²) and large triangles that is common, on the full draw's 128²
    // tiles rare (none in a frame of the 100k-triangle level), so larger areas go without.
    let [x0, y0, x1, y1] = area.clip;
    let small = x1 - x0 < COARSE_AREA && y1 - y0 < COARSE_AREA;
    let mut coarse = Coarse::new(greater, coarse && small && matches!(buf, TileBuf::F32(_)));
    let c = &mut coarse;
    let written = match Kernel::of(ext) {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        // SAFETY: `Kernel::of` chose AVX2 only where the CPU has it.
        Kernel::Avx2 => unsafe { avx2::draw(buf, area, batches, greater, c) },
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        // SAFETY: `Kernel::of` chose AVX-512 only where the CPU has F, BW, VL, DQ and POPCNT.
        Kernel::Avx512 => unsafe { avx512::draw(buf, area, batches, greater, c, count) },
        Kernel::Scalar => scalar::draw(buf, area, batches, greater, c),
    };
    Drawn {
        written: if count { written } else { 0 },
        rejected: coarse.rejected,
    }
}

/// Whether any pixel centre of `rect` (inclusive, clipped to the bounds) can be inside `t`: for
/// each edge, the largest edge function over the rectangle is at one of its corners.
#[inline(always)]
pub(crate) fn may_cover(t: &Tri, rect: [i32; 4]) -> bool {
    span_in(t, rect).is_some_and(|span| edges_at_corners(t, span, true))
}

/// Edge `i` of `t` at the centre of pixel (x, y), its fill bias included: covered when ≥ 0 for
/// all three edges. Also the changes per pixel along x and along y.
#[inline(always)]
fn edge_at(t: &Tri, i: usize, x: i32, y: i32) -> (i64, i64, i64) {
    let (dx, dy, ox, oy, bias) = t.edge(i);
    let px = (i64::from(x) << SUB_BITS) + HALF;
    let py = (i64::from(y) << SUB_BITS) + HALF;
    (
        dx * (py - oy) - dy * (px - ox) + bias,
        -dy << SUB_BITS,
        dx << SUB_BITS,
    )
}

/// The three edge functions of `t` at the centre of pixel (x, y) and their steps along x and
/// y ([`edge_at`]), when every value they take over `across` further pixels of a row and `down`
/// further rows stays under 2³¹ in magnitude, so that 32-bit lanes hold them exactly (`Ok`;
/// else `Err` with the same 64-bit values). An edge that is ≥ 0 over that whole rectangle is
/// given as a constant 0 (same coverage), so a large triangle fits wherever its other edges'
/// values do.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
    allow(dead_code)
)]
#[inline(always)]
fn edges_in_i32(t: &Tri, x: i32, y: i32, across: i32, down: i32) -> Result<Edges, Edges> {
    let mut e = [0i64; 3];
    let mut sx = [0i64; 3];
    let mut sy = [0i64; 3];
    for i in 0..3 {
        (e[i], sx[i], sy[i]) = edge_at(t, i, x, y);
    }
    // Every value over the kernels' groups of a compact triangle is under 2³¹
    // (`Tri::compact`): no check.
    if t.compact {
        return Ok((e, sx, sy));
    }
    let (across, down) = (i64::from(across), i64::from(down));
    for i in 0..3 {
        // An edge whose smallest value over the rectangle (at a corner: the function is
        // linear) is ≥ 0 covers all of it: a constant 0 tests the same. Large triangles
        // cross most rectangles they reach with one edge or two, and the other edges'
        // values there can be far past 2³¹.
        let least = e[i] + (sx[i] * across).min(0) + (sy[i] * down).min(0);
        if least >= 0 {
            (e[i], sx[i], sy[i]) = (0, 0, 0);
        }
    }
    let fits = (0..3).all(|i| {
        let reach = e[i].unsigned_abs()
            + across.unsigned_abs() * sx[i].unsigned_abs()
            + down.unsigned_abs() * sy[i].unsigned_abs();
        reach <= i32::MAX as u64
    });
    if fits {
        Ok((e, sx, sy))
    } else {
        Err((e, sx, sy))
    }
}

/// Three edge functions at a pixel centre, and their steps along x and along y.
type Edges = ([i64; 3], [i64; 3], [i64; 3]);

/// The depth of `t` at the start of row `y`, before the x term (see the module docs).
#[inline(always)]
fn row_depth(t: &Tri, y: i32) -> f64 {
    t.zr + t.dzdy * f64::from(y - i32::from(t.bbox[1]))
}

/// The depth of `t` at pixel x of a row whose [`row_depth`] is `zrow`.
#[inline(always)]
fn pixel_depth(t: &Tri, zrow: f64, x: i32) -> f64 {
    zrow + t.dzdx * f64::from(x - i32::from(t.bbox[0]))
}

/// The run `[lo, hi)` of covered centres of a row of `width` pixels, given the three edge
/// functions `e` at its first pixel, their steps `s` along x and `inv` = 1/|s|: each edge bounds
/// the run from one side (or, parallel to the row, keeps all or nothing).
#[inline(always)]
fn row_run(e: &[i64; 3], s: &[i64; 3], inv: &[f64; 3], width: i64) -> (i64, i64) {
    let (mut lo, mut hi) = (0, width);
    for i in 0..3 {
        if s[i] > 0 {
            lo = lo.max(first_inside(e[i], s[i], inv[i], width));
        } else if s[i] < 0 {
            hi = hi.min(end_inside(e[i], s[i], inv[i], width));
        } else if e[i] < 0 {
            hi = 0;
        }
    }
    (lo, hi)
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

/// The per-row stepping of a triangle over the part `[xs, xe] × [ys, ye]`: the edge functions at
/// (xs, ys), their steps, and 1/|step along x| for the run estimates.
#[inline(always)]
fn row_setup(t: &Tri, xs: i32, ys: i32) -> ([i64; 3], [i64; 3], [i64; 3], [f64; 3]) {
    let mut e = [0i64; 3];
    let mut sx = [0i64; 3];
    let mut sy = [0i64; 3];
    let mut inv = [0f64; 3];
    for i in 0..3 {
        (e[i], sx[i], sy[i]) = edge_at(t, i, xs, ys);
        inv[i] = 1.0 / (sx[i] as f64).abs();
    }
    (e, sx, sy, inv)
}

#[cfg(test)]
mod tests;
