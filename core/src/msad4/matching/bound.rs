//! The exact lower bound of successive elimination: the template's fully cared blocks in up to
//! two sizes, against block sums of the image computed band by band.

use crate::msad4::scalar::{self, Lane};
use crate::msad4::{CpuExtension, Image, dispatch};
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
use crate::msad4::{avx2, avx512, sse41};

/// Successive-elimination data: fully cared blocks of the template in up to two sizes, against
/// block sums of the image (channels summed) computed band by band.
///
/// The first layer is a grid of `bw`×`bh` blocks; the second, for sprites, holds the fully
/// cared blocks of half that size that lie outside every fully cared first-layer block (the
/// ring of a sprite's outline, where a whole block would hold a "don't care" byte). Each term
/// costs the same whatever its size, and a term over `A` pixels adds about `√A` times a
/// per-pixel constant to a random window's bound: small blocks where the big ones cannot go
/// roughly double what the outline contributes, which separates a near copy of a sprite from
/// noise far better than its interior alone.
pub(super) struct Bound {
    pub(super) layers: Vec<Layer>,
    /// `(layer, dy, dx, template block sum)` of each block.
    pub(super) blocks: Vec<(usize, usize, usize, u32)>,
}

/// One block size of a [`Bound`].
#[derive(Clone, Copy)]
pub(super) struct Layer {
    pub(super) bw: usize,
    pub(super) bh: usize,
}

/// Lower-bound rows computed per band (the block sums of a band are reused by all its rows).
const BOUND_BAND_ROWS: usize = 256;

impl Bound {
    /// Blocks of up to 8×8 pixels, at least a 4×4 grid of them: a random window's bound then
    /// averages roughly
    /// `84 / √64 ≈ 10` per pixel (each block term is about `0.8·74·√(2·64)` on uniform noise),
    /// well above the few units per pixel that separate a near copy of the template (lighting,
    /// compression) from the template, so the bound still singles out the match; coarser blocks
    /// (a fixed 4×4 grid on a 64×64 template is 16×16 pixels each) let most of a noisy image
    /// through. Per position the bound costs one term per block, an eighth of what scoring the
    /// position costs at 8×8. A sprite's outline gets a second layer of half-size blocks.
    pub(super) fn new(image: &Image, template: &Image) -> Bound {
        let side = template.width().min(template.height()) as usize;
        let (tw, th) = (template.width() as usize, template.height() as usize);
        let layer = |block: usize| Layer {
            bw: block.min(tw),
            bh: block.min(th),
        };
        // A sprite whose transparent pixels leave whole blocks over less than half of it starts
        // from blocks half the size (the first layer alone must rank an exact copy first).
        let mut first = layer((side / 4).clamp(1, 8));
        if first.bw >= 2 && first.bh >= 2 {
            let cared = template.data().iter().filter(|&&b| b != 0).count();
            let covered = |l: Layer| {
                let probe = Bound::with_layer(image, template, l);
                probe.blocks.len() * l.bw * l.bh * image.channels().bytes_per_pixel()
            };
            let finer = layer((first.bw.min(first.bh) / 2).max(1));
            let whole = covered(first);
            if 2 * whole < cared && covered(finer) > whole {
                first = finer;
            }
        }
        let mut bound = Bound {
            layers: vec![first],
            blocks: Vec::new(),
        };
        let mut covered = vec![false; tw * th];
        bound.add_layer(image, template, first, &mut covered);
        if first.bw >= 2 && first.bh >= 2 {
            let half = Layer {
                bw: first.bw / 2,
                bh: first.bh / 2,
            };
            let before = bound.blocks.len();
            bound.layers.push(half);
            bound.add_layer(image, template, half, &mut covered);
            if bound.blocks.len() == before {
                bound.layers.pop();
            }
        }
        bound
    }

    /// A one-layer bound of `layer`-sized blocks.
    fn with_layer(image: &Image, template: &Image, layer: Layer) -> Bound {
        let mut bound = Bound {
            layers: vec![layer],
            blocks: Vec::new(),
        };
        let mut covered = vec![false; (template.width() * template.height()) as usize];
        bound.add_layer(image, template, layer, &mut covered);
        bound
    }

    /// Adds the fully cared `layer`-sized blocks of the template's grid that overlap no pixel
    /// in `covered` (and marks theirs).
    fn add_layer(&mut self, image: &Image, template: &Image, layer: Layer, covered: &mut [bool]) {
        let count = image.channels().bytes_per_pixel();
        let (tw, th) = (template.width() as usize, template.height() as usize);
        let index = self.layers.len() - 1;
        let Layer { bw, bh } = layer;
        for by in 0..th / bh {
            for bx in 0..tw / bw {
                let (y0, x0) = (by * bh, bx * bw);
                let mut sum = 0u32;
                let mut usable = true;
                for r in y0..y0 + bh {
                    usable &= !covered[r * tw + x0..r * tw + x0 + bw].contains(&true);
                    let start = (r * tw + x0) * count;
                    for &b in &template.data()[start..start + bw * count] {
                        sum += u32::from(b);
                        usable &= b != 0;
                    }
                }
                if usable {
                    for r in y0..y0 + bh {
                        covered[r * tw + x0..r * tw + x0 + bw].fill(true);
                    }
                    self.blocks.push((index, y0, x0, sum));
                }
            }
        }
    }

    /// The first layer alone (a cheaper, weaker bound).
    pub(super) fn first_layer(&self) -> Bound {
        Bound {
            layers: self.layers[..1].to_vec(),
            blocks: self.blocks.iter().copied().filter(|b| b.0 == 0).collect(),
        }
    }

    /// How many blocks the first layer has (they come first in `blocks`).
    pub(super) fn first_layer_len(&self) -> usize {
        self.blocks.iter().take_while(|b| b.0 == 0).count()
    }

    /// Whether the bound has any term.
    pub(super) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Whether every block sum fits u16 lanes (R8 blocks up to 257 pixels).
    pub(super) fn fits_u16(&self, image: &Image) -> bool {
        let area = self.layers.iter().map(|l| l.bw * l.bh).max().unwrap_or(0);
        area * 255 * image.channels().bytes_per_pixel() <= usize::from(u16::MAX)
    }

    /// Bound rows `ys` (each `nx` long), band by band, handed to `sink(y, row)`; `early` as in
    /// `bound_row` (the blocks are in layer order).
    pub(super) fn rows<T: Lane>(
        &self,
        image: &Image,
        nx: usize,
        backend: CpuExtension,
        ys: std::ops::Range<usize>,
        early: Option<(usize, T)>,
        mut sink: impl FnMut(usize, &[T]),
    ) {
        let count = image.channels().bytes_per_pixel();
        let w = image.width() as usize;
        // Rows of block sums each layer needs below a band's first row.
        let spans: Vec<usize> = (0..self.layers.len())
            .map(|l| {
                let dys = self.blocks.iter().filter(|b| b.0 == l).map(|b| b.1);
                dys.max().unwrap_or(0)
            })
            .collect();
        let span = spans.iter().copied().max().unwrap_or(0);
        let luma = |y: usize| &image.data()[y * w * count..(y + 1) * w * count];
        let mut col = vec![T::default(); w];
        let mut sums = Vec::new();
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        let mut out = vec![T::default(); nx];
        // Every layer's sums have rows of stride `w` (of which `w − bw + 1` are valid), one
        // layer after the other, so one offset per block addresses any layer's row.
        let layer_len = (BOUND_BAND_ROWS.min(ys.len()) + span) * w;
        let rel: Vec<(usize, u32)> = self
            .blocks
            .iter()
            .map(|&(l, dy, dx, t)| (l * layer_len + dy * w + dx, t))
            .collect();
        sums.resize(self.layers.len() * layer_len, T::default());
        for y0 in ys.clone().step_by(BOUND_BAND_ROWS) {
            if crate::deadline::expired() {
                return;
            }
            let n = BOUND_BAND_ROWS.min(ys.end - y0);
            for (l, layer) in self.layers.iter().enumerate() {
                let Layer { bw, bh } = *layer;
                let sw = w - bw + 1;
                let rows = &mut sums[l * layer_len..][..(n + spans[l]) * w];
                // Column sums over `bh` rows, slid down one row at a time (R8 bytes, or the
                // four channels of RGBA8 added: the bound on channel sums is weaker but still
                // exact).
                col.fill(T::default());
                for r in y0..y0 + bh {
                    dispatch!(backend, col_update(&mut col, luma(r), count, true));
                }
                for (i, srow) in rows.chunks_exact_mut(w).enumerate() {
                    if i > 0 {
                        let (enter, leave) = (luma(y0 + i + bh - 1), luma(y0 + i - 1));
                        dispatch!(backend, col_update(&mut col, enter, count, true));
                        dispatch!(backend, col_update(&mut col, leave, count, false));
                    }
                    dispatch!(
                        backend,
                        window_sums(&col, bw, &mut srow[..sw], &mut pa, &mut pb)
                    );
                }
            }
            for i in 0..n {
                // A row of a large template's bound is milliseconds of work.
                if crate::deadline::expired() {
                    return;
                }
                dispatch!(backend, bound_row(&rel, &sums[i * w..], early, &mut out));
                sink(y0 + i, &out);
            }
        }
    }
}
