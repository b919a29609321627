//! Choosing among scored positions: the `n` smallest keys or all keys below a limit, taken row by
//! row, merged across bands, then walked greedily with non-maximum suppression.

use super::{Key, Match};
use crate::msad4::scalar::{self, Lane};
use crate::msad4::{CpuExtension, dispatch};
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
use crate::msad4::{avx2, avx512, sse41};

/// Takes the bound rows of a pass, in `(y, x)` order.
pub(super) trait RowSink {
    fn push_row<T: Lane>(&mut self, y: usize, row: &[T]);
}

/// Keeps the `n` smallest keys `≤ limit` of positions pushed in `(y, x)` order.
pub(super) struct Smallest {
    backend: CpuExtension,
    heap: std::collections::BinaryHeap<Key>,
    n: usize,
    /// Only values strictly below this can still enter.
    below: u64,
}

impl Smallest {
    pub(super) fn new(n: usize, limit: u32, backend: CpuExtension) -> Smallest {
        Smallest {
            backend,
            heap: std::collections::BinaryHeap::with_capacity(n.min(1 << 20) + 1),
            n,
            below: if n == 0 { 0 } else { u64::from(limit) + 1 },
        }
    }

    pub(super) fn into_vec(self) -> Vec<Key> {
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
pub(super) struct Below {
    backend: CpuExtension,
    pub(super) keys: Option<Vec<Key>>,
    limit: u32,
    cap: usize,
}

impl Below {
    pub(super) fn new(limit: u32, cap: usize, backend: CpuExtension) -> Below {
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
pub(super) fn merge(parts: Vec<Vec<Key>>, n: usize) -> Vec<Key> {
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
pub(super) fn greedy(keys: &[Key], k: usize, (rx, ry): (u32, u32)) -> Vec<Match> {
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
