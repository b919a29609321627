//! The two searches of [`find_matches`](super::find_matches): the exhaustive scan, and the
//! pruned rounds of bound passes and exact scores.

use super::bound::Bound;
use super::select::{Below, RowSink, Smallest, greedy, merge};
use super::{Key, Match, Search};
use crate::msad4::Image;
use crate::msad4::scalar::Lane;

impl Search<'_> {
    pub(super) fn positions(&self) -> usize {
        self.prepared.plan.nx * self.prepared.plan.ny
    }

    /// Scores every position (streamed, never stored), then walks the best in order.
    pub(super) fn exhaustive(&self) -> Vec<Match> {
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
    pub(super) fn pruned(&self, template: &Image, alpha: bool, strict: bool) -> Option<Vec<Match>> {
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
                        crate::msad4::position_sad(self.backend, rows, &image.data()[at..], tau)
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

/// The template's rows with care masks, for [`crate::msad4::position_sad`] on the image's own
/// bytes.
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
