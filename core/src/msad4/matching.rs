//! Best-k template matching: exhaustive over the SAD map, or pruned with exact bounds.
//!
//! Both searches define the answer the same way: sort every position by `(sad, y, x)`, drop those
//! above `max_sad`, then walk the list and accept a position unless it lies within the
//! suppression radius of one already accepted (greedy non-maximum suppression), until `top_k`
//! are accepted. The pruned search reaches the same list while scoring few positions exactly:
//!
//! * **Successive elimination.** For any block of template bytes that are all cared for,
//!   `|Σ T_b − Σ W_b| ≤ Σ_b |t − w|` (triangle inequality), so the sum of these terms over the
//!   template's fully cared blocks is a lower bound `LB ≤ SAD` at every position. Blocks with a
//!   0 ("don't care", R115) byte are left out: for them a plain window sum is no bound (only
//!   sums over the cared bytes would be). A sprite's outline, where whole blocks would hold
//!   such bytes, gets a second layer of half-size blocks. Block sums of the image come from
//!   running column sums and doubling row sums, band by band; RGBA8 bounds use channel-summed
//!   blocks (weaker, still exact). The bound runs in u16 lanes when every block sum fits,
//!   saturating, which keeps it a lower bound.
//! * **Threshold from the bounds.** Take the `n` positions of smallest `LB`; every position not
//!   among them has `LB ≥ τ + 1`, hence `SAD > τ`. Score the `n` exactly: the greedy walk over
//!   those with `SAD ≤ τ` is exactly the start of the walk over all positions. If it accepts
//!   `top_k` matches (or `τ ≥ max_sad`, or all positions were taken) it is the answer; otherwise
//!   `n` grows.
//! * **An upper bound from exact scores.** When the bounds of the best windows do not reach
//!   past their SADs (a near copy of the template, not an exact one), the exact SADs of those
//!   windows give `u`, the `k`-th accepted SAD: every window with `LB ≤ u` is collected (if
//!   there are few enough) and scored; all others have `SAD > u`. The first round ranks by the
//!   first layer alone (enough for an exact copy, and cheaper); this one uses both layers, and
//!   skips the second for runs of positions already past `u` after the first.
//! * **Partial-distortion elimination.** A position's SAD is summed row by row and abandoned as
//!   soon as it exceeds `τ`, which only removes positions the walk would ignore.

use serde::Serialize;

use super::plan::{Masking, apply_masking};
use super::scalar::{self, Lane};
use super::{CpuExtension, Image, MatchError, Prepared, check_backend, dispatch};
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
use super::{avx2, avx512, sse41};

/// One match: the template's top-left corner in the image, and its SAD there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Match {
    /// Column of the template's left edge.
    pub x: u32,
    /// Row of the template's top edge.
    pub y: u32,
    /// Masked sum of absolute differences (over all channels).
    pub sad: u64,
}

/// Whether [`find_matches`] may prune positions with exact bounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Pruning {
    /// Prune when the template is large enough for it to pay, fall back to the exhaustive search
    /// when the bounds do not discriminate.
    #[default]
    Auto,
    /// Always score every position (the reference answer).
    Never,
    /// Always use the bounds, however weak (tests use it to compare with `Never`).
    Always,
}

/// Options of [`find_matches`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchOptions {
    /// How many matches to return at most (0 returns none).
    pub top_k: usize,
    /// Ignore positions whose SAD is above this.
    pub max_sad: Option<u64>,
    /// Suppression half-extent `(rx, ry)`: a position is dropped if an accepted match lies within
    /// `|dx| ≤ rx` and `|dy| ≤ ry`. `None` means half the template's size; `Some((0, 0))` turns
    /// suppression off.
    pub nms_radius: Option<(u32, u32)>,
    /// Threads for large images (0 counts as 1).
    pub threads: usize,
    /// Force a backend; `None` is the best this CPU has.
    pub backend: Option<CpuExtension>,
    /// Bound-based pruning (never changes the answer, only the time).
    pub pruning: Pruning,
    /// What counts as "don't care" in the template ([`Masking::Auto`]: the alpha channel for
    /// RGBA8 templates, 0 bytes for R8).
    pub masking: Masking,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            top_k: 1,
            max_sad: None,
            nms_radius: None,
            threads: 1,
            backend: None,
            pruning: Pruning::Auto,
            masking: Masking::Auto,
        }
    }
}

/// The best `top_k` positions of `template` in `image` by masked SAD (R115 in 2D), best first,
/// with non-maximum suppression and the optional `max_sad`; ties go to the smaller `(y, x)`.
///
/// The answer is defined as: every position sorted by `(sad, y, x)`, those above `max_sad`
/// dropped, then walked greedily, each accepted unless it lies within `nms_radius` of one already
/// accepted. With [`Pruning::Auto`] large templates skip most positions through exact lower
/// bounds (successive elimination on the template's fully cared blocks, then partial-distortion
/// elimination), never an approximation: the result is the same as with [`Pruning::Never`].
///
/// ```
/// use penumbra_core::msad4::{find_matches, Image, MatchOptions};
/// let image = Image::r8(6, 1, vec![9, 1, 2, 9, 1, 2])?;
/// let template = Image::r8(2, 1, vec![1, 2])?;
/// let opts = MatchOptions { top_k: 3, nms_radius: Some((0, 0)), ..MatchOptions::default() };
/// let found = find_matches(&image, &template, &opts)?;
/// let xs: Vec<(u32, u64)> = found.iter().map(|m| (m.x, m.sad)).collect();
/// assert_eq!(xs, vec![(1, 0), (4, 0), (2, 1 + 7)]);
/// # Ok::<(), penumbra_core::msad4::MatchError>(())
/// ```
pub fn find_matches(
    image: &Image,
    template: &Image,
    opts: &MatchOptions,
) -> Result<Vec<Match>, MatchError> {
    crate::zone!("penumbra::msad4::find_matches");
    let backend = opts.backend.unwrap_or_default();
    check_backend(backend)?;
    let (template, zeros) = apply_masking(template, opts.masking)?;
    let template = &*template;
    let prepared = Prepared::with_alpha(image, template, zeros.as_ref())?;
    if opts.top_k == 0 {
        return Ok(Vec::new());
    }
    let search = Search {
        prepared: &prepared,
        k: opts.top_k,
        radius: opts
            .nms_radius
            .unwrap_or((template.width() / 2, template.height() / 2)),
        limit: opts
            .max_sad
            .map_or(u32::MAX, |m| m.min(u64::from(u32::MAX)) as u32),
        threads: opts.threads.max(1),
        backend,
    };
    let prune = match opts.pruning {
        Pruning::Never => false,
        Pruning::Always => true,
        Pruning::Auto => {
            let plan = &search.prepared.plan;
            plan.plain.len() + 2 * plan.pair.len() >= PRUNE_MIN_WORDS
                && search.positions() >= PRUNE_MIN_POSITIONS
        }
    };
    let found = if prune
        && let Some(found) =
            search.pruned(template, zeros.is_some(), opts.pruning == Pruning::Always)
    {
        found
    } else {
        search.exhaustive()
    };
    // The passes stop early once the deadline has passed; their answer is then incomplete.
    crate::deadline::check()?;
    Ok(found)
}

/// Kernel work per position (template words, masked ones counting twice) from which pruning
/// usually beats scoring every position: 64 is a 16×16 R8 template.
const PRUNE_MIN_WORDS: usize = 64;
/// Positions below which the exhaustive search is too quick to bother.
const PRUNE_MIN_POSITIONS: usize = 1 << 16;

/// A candidate position: `(score, y, x)` orders exactly as the matches do.
type Key = (u32, u32, u32);

struct Search<'a> {
    prepared: &'a Prepared<'a>,
    k: usize,
    radius: (u32, u32),
    limit: u32,
    threads: usize,
    backend: CpuExtension,
}

impl Search<'_> {
    fn positions(&self) -> usize {
        self.prepared.plan.nx * self.prepared.plan.ny
    }

    /// Scores every position (streamed, never stored), then walks the best in order.
    fn exhaustive(&self) -> Vec<Match> {
        let mut n = self
            .k
            .saturating_mul(64)
            .max(1024)
            .min(self.positions() + 1);
        loop {
            let parts = par_rows(self.prepared.plan.ny, self.threads, |ys| {
                let mut best = Smallest::new(n, self.limit, self.backend);
                self.prepared
                    .rows(self.backend, ys, |y, row| best.push_row(y, row));
                best.into_vec()
            });
            let keys = merge(parts, n);
            let found = greedy(&keys, self.k, self.radius);
            // Fewer than `n` keys means every position within `limit` was taken.
            if found.len() == self.k || keys.len() < n {
                return found;
            }
            n = n.saturating_mul(4);
        }
    }

    /// The bound-based search; `None` asks for the exhaustive one (no usable bound, or the bound
    /// does not discriminate and `strict` is off).
    ///
    /// With `alpha` (alpha masking of a template with opaque 0 bytes) the bounds are those of
    /// `msad4`'s masking, which are still lower bounds (the opaque 0 bytes only add), and the
    /// exact scores count every byte of the opaque pixels.
    fn pruned(&self, template: &Image, alpha: bool, strict: bool) -> Option<Vec<Match>> {
        let image = self.prepared.image;
        let full = Bound::new(image, template);
        if full.is_empty() && !strict {
            return None;
        }
        // Round 1 ranks positions by the first layer alone (a third of the cost on a sprite,
        // and enough for an exact copy); the rounds after it use every layer.
        let coarse = full.first_layer();
        let rows = ExactRows::new(image, template, alpha);
        let total = self.positions();
        let mut n = self.k.saturating_mul(64).max(1024).min(total);
        let mut bound = &coarse;
        let mut tried_upper = false;
        loop {
            let keys = self.smallest_bounds(bound, n + 1, u32::MAX);
            let complete = keys.len() <= n;
            // Every position left out has LB ≥ next, so SAD ≥ next.
            let next = if complete {
                u64::MAX
            } else {
                u64::from(keys[n].0)
            };
            if next > 0 {
                let tau = (next - 1).min(u64::from(self.limit)) as u32;
                let scored = self.score(&keys[..n.min(keys.len())], &rows, tau);
                let found = greedy(&scored, self.k, self.radius);
                if found.len() == self.k || complete || next > u64::from(self.limit) {
                    return Some(found);
                }
            }
            if !tried_upper {
                // The bounds of the best windows did not reach past their SADs (a near copy
                // rather than an exact one, say). Their exact SADs give an upper bound `u`:
                // every window with LB ≤ u, if not too many, holds the answer.
                tried_upper = true;
                bound = &full;
                if let Some(found) = self.upper_round(bound, &keys, &rows) {
                    return Some(found);
                }
            }
            // Each round is a full bound pass plus exact scores: give up for the exhaustive
            // scan while it is still a small part of what that costs.
            if !strict && n.saturating_mul(64) > total {
                return None;
            }
            n = n.saturating_mul(16).min(total);
        }
    }

    /// The second round of [`Search::pruned`]: score the first round's candidates `keys`
    /// exactly, take the walk's `k`-th accepted SAD as `u`, collect every position with
    /// LB ≤ u (at most 1/64 of all positions, or 16,384; more means the bound is too weak to
    /// pay) and walk their exact SADs ≤ u. Every other position has SAD ≥ LB > u, so if that
    /// walk accepts `k` matches it is the start of the walk over all positions.
    ///
    /// The bound pass stops early on runs of positions already past `u` after the first layer
    /// of `bound`.
    fn upper_round(&self, bound: &Bound, keys: &[Key], rows: &ExactRows) -> Option<Vec<Match>> {
        let exact = self.score(keys, rows, self.limit);
        let u = greedy(&exact, self.k, self.radius).get(self.k - 1)?.sad as u32;
        let cap = (self.positions() / 64).max(1 << 14);
        let candidates = self.bounds_below(bound, u, cap)?;
        let found = greedy(&self.score(&candidates, rows, u), self.k, self.radius);
        (found.len() == self.k).then_some(found)
    }

    /// One pass of the lower bound over every position, split into bands of rows (one per
    /// thread), each band's rows handed to its own sink from `sink` (u16 lanes when every
    /// block sum fits). With `early = Some(limit)`, runs of positions past `limit` after the
    /// bound's first layer skip the other layers.
    fn bound_pass<S: RowSink + Send>(
        &self,
        bound: &Bound,
        early: Option<u32>,
        sink: impl Fn() -> S + Sync,
    ) -> Vec<S> {
        let image = self.prepared.image;
        let nx = self.prepared.plan.nx;
        let first = bound.first_layer_len();
        let small = bound.fits_u16(image);
        par_rows(self.prepared.plan.ny, self.threads, |ys| {
            let mut s = sink();
            if small {
                let early = early.map(|l| (first, u16::from_u32(l)));
                bound.rows::<u16>(image, nx, self.backend, ys, early, |y, lb| {
                    s.push_row(y, lb)
                });
            } else {
                let early = early.map(|l| (first, l));
                bound.rows::<u32>(image, nx, self.backend, ys, early, |y, lb| {
                    s.push_row(y, lb)
                });
            }
            s
        })
    }

    /// One pass of the lower bound over every position: the `n` smallest bounds `≤ limit`,
    /// sorted.
    fn smallest_bounds(&self, bound: &Bound, n: usize, limit: u32) -> Vec<Key> {
        let parts = self.bound_pass(bound, None, || Smallest::new(n, limit, self.backend));
        merge(parts.into_iter().map(Smallest::into_vec).collect(), n)
    }

    /// One pass of the lower bound over every position: all positions with a bound `≤ limit`,
    /// in `(y, x)` order (which keeps the exact scoring that follows walking the image in
    /// order), or `None` when there are more than `cap`.
    fn bounds_below(&self, bound: &Bound, limit: u32, cap: usize) -> Option<Vec<Key>> {
        let parts = self.bound_pass(bound, Some(limit), || Below::new(limit, cap, self.backend));
        let mut keys = Vec::new();
        for part in parts {
            keys.extend(part.keys?);
            if keys.len() > cap {
                return None;
            }
        }
        Some(keys)
    }

    /// Exact SADs (≤ `tau`) of the candidates whose bound is ≤ `tau`, sorted by key.
    fn score(&self, keys: &[Key], rows: &ExactRows, tau: u32) -> Vec<Key> {
        let keys: Vec<Key> = keys.iter().copied().filter(|k| k.0 <= tau).collect();
        let image = self.prepared.image;
        let bpp = image.channels().bytes_per_pixel();
        let width = image.width() as usize;
        let parts = par_rows(
            keys.len(),
            self.threads.min(keys.len() / 128 + 1),
            |range| {
                keys[range]
                    .iter()
                    .enumerate()
                    // One exact SAD of a large template takes milliseconds: checked each time
                    // (the candidates are a few thousand at most).
                    .take_while(|_| !crate::deadline::expired())
                    .filter_map(|(_, &(_, y, x))| {
                        let at = (y as usize * width + x as usize) * bpp;
                        super::position_sad(self.backend, rows, &image.data()[at..], tau)
                            .map(|sad| (sad, y, x))
                    })
                    .collect::<Vec<Key>>()
            },
        );
        let mut scored: Vec<Key> = parts.into_iter().flatten().collect();
        scored.sort_unstable();
        scored
    }
}

/// Runs `f` over `0..len` split into at most `threads` contiguous ranges, on scoped threads when
/// there is more than one, and returns the results in range order.
fn par_rows<R: Send>(
    len: usize,
    threads: usize,
    f: impl Fn(std::ops::Range<usize>) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, len.max(1));
    if threads == 1 {
        return vec![f(0..len)];
    }
    let per = len.div_ceil(threads);
    let deadline = crate::deadline::current();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..len)
            .step_by(per)
            .map(|a| {
                let f = &f;
                s.spawn(move || {
                    crate::deadline::with_deadline(deadline, || f(a..(a + per).min(len)))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The template's rows with care masks, for [`super::position_sad`] on the image's own bytes.
pub(crate) struct ExactRows {
    /// Offset of each template row from a position's first byte.
    pub offs: Vec<usize>,
    /// Template bytes, `width` per row (all channels interleaved, as in the image).
    pub tpl: Vec<u8>,
    /// `0xFF` where the template byte is cared for, `0` where it is 0 (R115).
    pub mask: Vec<u8>,
    pub width: usize,
}

impl ExactRows {
    /// The rows of `template`, cared for as `msad4` masks (every 0 byte is "don't care"), or,
    /// with `alpha`, as alpha masking does (every byte of a pixel whose alpha is not 0; the
    /// template's transparent pixels are already all 0).
    fn new(image: &Image, template: &Image, alpha: bool) -> ExactRows {
        let bpp = image.channels().bytes_per_pixel();
        let row_bytes = image.width() as usize * bpp;
        let width = template.width() as usize * bpp;
        let mask = if alpha {
            template
                .data()
                .chunks_exact(4)
                .flat_map(|p| [if p[3] == 0 { 0 } else { 0xFF }; 4])
                .collect()
        } else {
            template
                .data()
                .iter()
                .map(|&b| if b == 0 { 0 } else { 0xFF })
                .collect()
        };
        ExactRows {
            offs: (0..template.height() as usize)
                .map(|r| r * row_bytes)
                .collect(),
            tpl: template.data().to_vec(),
            mask,
            width,
        }
    }
}

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
struct Bound {
    layers: Vec<Layer>,
    /// `(layer, dy, dx, template block sum)` of each block.
    blocks: Vec<(usize, usize, usize, u32)>,
}

/// One block size of a [`Bound`].
#[derive(Clone, Copy)]
struct Layer {
    bw: usize,
    bh: usize,
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
    fn new(image: &Image, template: &Image) -> Bound {
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
    fn first_layer(&self) -> Bound {
        Bound {
            layers: self.layers[..1].to_vec(),
            blocks: self.blocks.iter().copied().filter(|b| b.0 == 0).collect(),
        }
    }

    /// How many blocks the first layer has (they come first in `blocks`).
    fn first_layer_len(&self) -> usize {
        self.blocks.iter().take_while(|b| b.0 == 0).count()
    }

    /// Whether the bound has any term.
    fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Whether every block sum fits u16 lanes (R8 blocks up to 257 pixels).
    fn fits_u16(&self, image: &Image) -> bool {
        let area = self.layers.iter().map(|l| l.bw * l.bh).max().unwrap_or(0);
        area * 255 * image.channels().bytes_per_pixel() <= usize::from(u16::MAX)
    }

    /// Bound rows `ys` (each `nx` long), band by band, handed to `sink(y, row)`; `early` as in
    /// `bound_row` (the blocks are in layer order).
    fn rows<T: Lane>(
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

/// Takes the bound rows of a pass, in `(y, x)` order.
trait RowSink {
    fn push_row<T: Lane>(&mut self, y: usize, row: &[T]);
}

/// Keeps the `n` smallest keys `≤ limit` of positions pushed in `(y, x)` order.
struct Smallest {
    backend: CpuExtension,
    heap: std::collections::BinaryHeap<Key>,
    n: usize,
    /// Only values strictly below this can still enter.
    below: u64,
}

impl Smallest {
    fn new(n: usize, limit: u32, backend: CpuExtension) -> Smallest {
        Smallest {
            backend,
            heap: std::collections::BinaryHeap::with_capacity(n.min(1 << 20) + 1),
            n,
            below: if n == 0 { 0 } else { u64::from(limit) + 1 },
        }
    }

    fn into_vec(self) -> Vec<Key> {
        self.heap.into_vec()
    }
}

impl RowSink for Smallest {
    fn push_row<T: Lane>(&mut self, y: usize, row: &[T]) {
        const CHUNK: usize = 64;
        if u64::from(dispatch!(self.backend, row_min(row)).to_u32()) >= self.below {
            return;
        }
        for (ci, chunk) in row.chunks(CHUNK).enumerate() {
            if u64::from(dispatch!(self.backend, row_min(chunk)).to_u32()) >= self.below {
                continue;
            }
            for (j, &v) in chunk.iter().enumerate() {
                let v = v.to_u32();
                // Positions arrive in (y, x) order, so a later one beats the worst kept only
                // when its value is strictly smaller.
                if u64::from(v) < self.below {
                    self.heap.push((v, y as u32, (ci * CHUNK + j) as u32));
                    if self.heap.len() > self.n {
                        self.heap.pop();
                    }
                    if self.heap.len() == self.n {
                        self.below = self.heap.peek().map_or(self.below, |k| u64::from(k.0));
                    }
                }
            }
        }
    }
}

/// Collects the keys `≤ limit` of positions pushed in `(y, x)` order, giving up (`None`) past
/// `cap` of them.
struct Below {
    backend: CpuExtension,
    keys: Option<Vec<Key>>,
    limit: u32,
    cap: usize,
}

impl Below {
    fn new(limit: u32, cap: usize, backend: CpuExtension) -> Below {
        Below {
            backend,
            keys: Some(Vec::new()),
            limit,
            cap,
        }
    }
}

impl RowSink for Below {
    fn push_row<T: Lane>(&mut self, y: usize, row: &[T]) {
        const CHUNK: usize = 64;
        let Some(keys) = &mut self.keys else {
            return;
        };
        if dispatch!(self.backend, row_min(row)).to_u32() > self.limit {
            return;
        }
        for (ci, chunk) in row.chunks(CHUNK).enumerate() {
            if dispatch!(self.backend, row_min(chunk)).to_u32() > self.limit {
                continue;
            }
            for (j, &v) in chunk.iter().enumerate() {
                if v.to_u32() <= self.limit {
                    keys.push((v.to_u32(), y as u32, (ci * CHUNK + j) as u32));
                }
            }
        }
        if keys.len() > self.cap {
            self.keys = None;
        }
    }
}

/// The `n` smallest of the per-band keys (each band's own `n` smallest), sorted.
fn merge(parts: Vec<Vec<Key>>, n: usize) -> Vec<Key> {
    let mut keys: Vec<Key> = parts.into_iter().flatten().collect();
    keys.sort_unstable();
    keys.truncate(n);
    keys
}

/// Greedy non-maximum suppression over keys sorted best first: a key is accepted unless an
/// accepted match lies within `rx` columns and `ry` rows of it.
///
/// Accepted matches are kept in a grid of cells `(rx + 1) × (ry + 1)` large. Two matches in one
/// cell would be within the radius of each other, so a cell holds at most one, and a candidate
/// need only look at the 3 × 3 cells around its own: linear in the keys walked, where comparing
/// with every accepted match was quadratic (a `top_k` of millions on a blank image).
fn greedy(keys: &[Key], k: usize, (rx, ry): (u32, u32)) -> Vec<Match> {
    let mut found: Vec<Match> = Vec::with_capacity(k.min(keys.len()));
    let (cw, ch) = (u64::from(rx) + 1, u64::from(ry) + 1);
    let mut cells: std::collections::HashMap<(u64, u64), usize> = std::collections::HashMap::new();
    for &(sad, y, x) in keys {
        if found.len() == k {
            break;
        }
        let (cx, cy) = (u64::from(x) / cw, u64::from(y) / ch);
        let near = |dx: i64, dy: i64| {
            let (nx, ny) = (cx.checked_add_signed(dx)?, cy.checked_add_signed(dy)?);
            let m = &found[*cells.get(&(nx, ny))?];
            (m.x.abs_diff(x) <= rx && m.y.abs_diff(y) <= ry).then_some(())
        };
        let taken = (-1..=1).any(|dy| (-1..=1).any(|dx| near(dx, dy).is_some()));
        if !taken {
            cells.insert((cx, cy), found.len());
            found.push(Match {
                x,
                y,
                sad: u64::from(sad),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msad4::Channels;

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// The suppression walk as it was first written: each key against every accepted match.
    fn greedy_quadratic(keys: &[Key], k: usize, (rx, ry): (u32, u32)) -> Vec<Match> {
        let mut found: Vec<Match> = Vec::new();
        for &(sad, y, x) in keys {
            if found.len() == k {
                break;
            }
            if found
                .iter()
                .all(|m| m.x.abs_diff(x) > rx || m.y.abs_diff(y) > ry)
            {
                found.push(Match {
                    x,
                    y,
                    sad: u64::from(sad),
                });
            }
        }
        found
    }

    #[test]
    fn grid_suppression_equals_the_pairwise_walk() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let n = (rng.next() % 400) as usize;
            let span = 1 + (rng.next() % 64) as u32;
            let mut keys: Vec<Key> = (0..n)
                .map(|_| {
                    let sad = (rng.next() % 50) as u32;
                    let y = (rng.next() % u64::from(span)) as u32;
                    let x = (rng.next() % u64::from(span)) as u32;
                    (sad, y, x)
                })
                .collect();
            // Edge coordinates: the grid must not wrap or overflow at u32::MAX.
            if round % 7 == 0 {
                keys.push((0, u32::MAX, u32::MAX));
                keys.push((1, u32::MAX - 1, 0));
            }
            keys.sort_unstable();
            keys.dedup_by_key(|k| (k.1, k.2));
            let radius = (
                (rng.next() % 6) as u32,
                [0, 1, 3, 9, u32::MAX][(rng.next() % 5) as usize],
            );
            let k = 1 + (rng.next() % 40) as usize;
            assert_eq!(
                greedy(&keys, k, radius),
                greedy_quadratic(&keys, k, radius),
                "round {round}, radius {radius:?}, k {k}"
            );
        }
    }

    fn masked_sad(image: &Image, template: &Image, x: usize, y: usize) -> u32 {
        let bpp = image.channels().bytes_per_pixel();
        let (w, tw) = (
            image.width() as usize * bpp,
            template.width() as usize * bpp,
        );
        let mut sum = 0;
        for (r, row) in template.data().chunks_exact(tw).enumerate() {
            for (c, &t) in row.iter().enumerate() {
                let p = image.data()[(y + r) * w + x * bpp + c];
                if t != 0 {
                    sum += u32::from(t.abs_diff(p));
                }
            }
        }
        sum
    }

    /// Every layer's blocks are fully cared, no two blocks overlap, and the bound (with and
    /// without the early stop) never exceeds the masked SAD at any position.
    #[test]
    fn layered_bound_is_a_lower_bound_of_the_masked_sad() {
        let mut rng = Rng(0x5EED_B0D5);
        for (case, (tw, th, channels)) in [
            (48, 48, Channels::R8),
            (33, 20, Channels::R8),
            (16, 16, Channels::Rgba8),
            (64, 40, Channels::R8),
        ]
        .into_iter()
        .enumerate()
        {
            let bpp = channels.bytes_per_pixel();
            let (w, h) = (97usize, 71usize);
            let data: Vec<u8> = (0..w * h * bpp).map(|_| rng.next() as u8).collect();
            let image = Image::new(w as u32, h as u32, channels, data).unwrap();
            // A sprite: an ellipse of random bytes, transparent (0) outside.
            let (cx, cy) = ((tw as f64 - 1.0) / 2.0, (th as f64 - 1.0) / 2.0);
            let tpl: Vec<u8> = (0..tw * th * bpp)
                .map(|i| {
                    let (x, y) = (((i / bpp) % tw) as f64, ((i / bpp) / tw) as f64);
                    let (dx, dy) = ((x - cx) / (tw as f64 / 2.0), (y - cy) / (th as f64 / 2.0));
                    if dx * dx + dy * dy <= 1.0 {
                        (rng.next() % 255 + 1) as u8
                    } else {
                        0
                    }
                })
                .collect();
            let template = Image::new(tw as u32, th as u32, channels, tpl).unwrap();
            let bound = Bound::new(&image, &template);
            assert_eq!(
                bound.layers.len(),
                2,
                "case {case}: a sprite gets a ring layer"
            );
            let mut owner = vec![usize::MAX; tw * th];
            for (i, &(l, dy, dx, t)) in bound.blocks.iter().enumerate() {
                let Layer { bw, bh } = bound.layers[l];
                let mut sum = 0;
                for r in dy..dy + bh {
                    for c in dx..dx + bw {
                        assert_eq!(owner[r * tw + c], usize::MAX, "case {case}: overlap");
                        owner[r * tw + c] = i;
                        for k in 0..bpp {
                            let b = template.data()[(r * tw + c) * bpp + k];
                            assert_ne!(b, 0, "case {case}: a block holds a don't-care byte");
                            sum += u32::from(b);
                        }
                    }
                }
                assert_eq!(sum, t, "case {case}: block sum");
            }
            let (nx, ny) = (w - tw + 1, h - th + 1);
            let sads: Vec<u32> = (0..ny * nx)
                .map(|i| masked_sad(&image, &template, i % nx, i / nx))
                .collect();
            let first = bound.first_layer_len();
            let mut limit = sads.clone();
            limit.sort_unstable();
            let limit = limit[limit.len() / 50];
            for backend in CpuExtension::ALL.into_iter().filter(|b| b.is_supported()) {
                for early in [None, Some((first, limit))] {
                    let mut got = vec![u32::MAX; nx * ny];
                    bound.rows::<u32>(&image, nx, backend, 0..ny, early, |y, row| {
                        got[y * nx..(y + 1) * nx].copy_from_slice(row);
                    });
                    for (i, (&lb, &sad)) in got.iter().zip(&sads).enumerate() {
                        assert!(
                            lb <= sad,
                            "case {case} {backend:?} {early:?} at {i}: {lb} > {sad}"
                        );
                    }
                    if bound.fits_u16(&image) {
                        let mut got16 = vec![0u32; nx * ny];
                        let early16 = early.map(|(f, l)| (f, u16::from_u32(l)));
                        bound.rows::<u16>(&image, nx, backend, 0..ny, early16, |y, row| {
                            for (g, &v) in got16[y * nx..(y + 1) * nx].iter_mut().zip(row) {
                                *g = u32::from(v);
                            }
                        });
                        let want: Vec<u32> = got.iter().map(|&v| v.min(65535)).collect();
                        assert_eq!(got16, want, "case {case} {backend:?}: u16 = saturated u32");
                    }
                }
            }
        }
    }
}
