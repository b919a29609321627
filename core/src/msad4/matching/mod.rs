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

mod bound;
mod search;
mod select;

use serde::Serialize;

use super::plan::{Masking, apply_masking};
use super::{CpuExtension, Image, MatchError, Prepared, check_backend};

pub(crate) use search::ExactRows;

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

#[cfg(test)]
mod tests;
