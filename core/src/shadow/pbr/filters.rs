//! The filters of bevy_pbr's shadow sampling as penumbra evaluates them (hardware 2×2, the
//! Castaño 13-tap Gaussian, the temporal spirals, the cube filters), and the lookups they go
//! through: one comparison at a time, or recorded, batched and replayed for many receivers.

use super::*;
use crate::shadow::map::{Answers, Sorted};
use crate::shadow::tiles::Needs;

/// Where a shadow factor's comparisons come from: the map, now ([`Now`]), or — for many
/// receivers at once — a first pass that records every tap ([`Record`]), one batched lookup of
/// them all, and a second pass that reads the results back in the same order ([`Replay`]).
/// The factor's arithmetic never depends on a comparison's result for its control flow, so
/// both passes make the same taps, and the batched answers are the bits of one comparison
/// each: the factors are those of one receiver at a time.
pub(super) trait Lookups {
    /// Comparisons of `taps` (2D: u, v, slice; cube: a direction) with `depth`, into `out`.
    fn compare_many(&mut self, map: &ShadowMap, taps: &[Vec3], depth: f32, out: &mut [f32]);

    /// Whether [`Lookups::compare_many`] reads the taps' positions. [`Replay`] does not (it
    /// hands back the recorded answers in order, by count alone), so the filters skip working
    /// the positions out again — their rotations and divisions — and pass placeholders: the
    /// weights and sums, which are all a factor's bits depend on besides the answers, are
    /// computed the same either way.
    fn reads_taps(&self) -> bool {
        true
    }

    /// [`Lookups::compare_many`] of taps on one slice that form a grid, as
    /// [`ShadowMap::sort_grid`] describes (the Castaño filter's): recorded with the corners
    /// that mark their tiles at once.
    fn compare_grid(&mut self, map: &ShadowMap, taps: &[Vec3], depth: f32, out: &mut [f32]) {
        self.compare_many(map, taps, depth, out);
    }

    /// One comparison.
    fn compare(&mut self, map: &ShadowMap, tap: Vec3, depth: f32) -> f32 {
        let mut r = [0.0];
        self.compare_many(map, &[tap], depth, &mut r);
        r[0]
    }
}

/// Comparisons made on the map as they come.
pub(super) struct Now;

impl Lookups for Now {
    fn compare_many(&mut self, map: &ShadowMap, taps: &[Vec3], depth: f32, out: &mut [f32]) {
        map.compare_many(taps, depth, out);
    }

    fn compare(&mut self, map: &ShadowMap, tap: Vec3, depth: f32) -> f32 {
        map.compare(tap, depth)
    }
}

/// The taps of a first pass, routed as they come (each answered 0 for now): the lookups that
/// [`ShadowMap::sort_lookups`] of them all would give, without a list of the taps first.
pub(super) struct Record(pub(super) Sorted);

impl Lookups for Record {
    fn compare_many(&mut self, map: &ShadowMap, taps: &[Vec3], depth: f32, out: &mut [f32]) {
        map.sort_more(&mut self.0, taps, depth);
        out[..taps.len()].fill(0.0);
    }

    fn compare_grid(&mut self, map: &ShadowMap, taps: &[Vec3], depth: f32, out: &mut [f32]) {
        map.sort_grid(&mut self.0, taps, depth);
        out[..taps.len()].fill(0.0);
    }
}

/// The batched answers of the recorded taps, read back in order.
pub(super) struct Replay<'a>(pub(super) Answers<'a>);

impl Lookups for Replay<'_> {
    fn reads_taps(&self) -> bool {
        false
    }

    fn compare_many(&mut self, _: &ShadowMap, taps: &[Vec3], _: f32, out: &mut [f32]) {
        self.0.next_taps(&mut out[..taps.len()]);
    }

    fn compare_grid(&mut self, _: &ShadowMap, taps: &[Vec3], _: f32, out: &mut [f32]) {
        self.0.next_grid(&mut out[..taps.len()]);
    }
}

/// A light's shadow factor of one receiver (`R`), through any [`Lookups`]: compiled once per
/// kind of lookups, so that each pass of [`batched`] has its lookups inlined into the filters.
pub(super) trait Factor<R>: Sync {
    fn factor(&self, lookups: &mut impl Lookups, receiver: &R) -> f32;

    /// [`batched`]'s first pass over `part`: each receiver's factor through `record` into
    /// `out`, and where the recording stood after it into `ends`. A light may record many
    /// receivers at once, as long as it records the same lookups in the same order and
    /// gives the same factors.
    fn record_part(
        &self,
        record: &mut Record,
        part: &[R],
        out: &mut [f32],
        ends: &mut Vec<(u32, u32)>,
    ) {
        record_each(self, record, part, out, ends);
    }
}

/// [`Factor::record_part`] one receiver at a time.
pub(super) fn record_each<R>(
    factor: &(impl Factor<R> + ?Sized),
    record: &mut Record,
    part: &[R],
    out: &mut [f32],
    ends: &mut Vec<(u32, u32)>,
) {
    for (k, (r, o)) in part.iter().zip(out.iter_mut()).enumerate() {
        *o = factor.factor(record, r);
        recorded(record, ends, k, part.len());
    }
}

/// After receiver `k` of a part of `len`: where the recording stands, into `ends`; after the
/// first, room for the part's taps (receivers make about as many taps each: room now rather
/// than a copy of them all at every doubling).
#[inline]
pub(super) fn recorded(record: &mut Record, ends: &mut Vec<(u32, u32)>, k: usize, len: usize) {
    ends.push(record.0.recorded());
    if k == 0 {
        record.0.reserve_like(len);
    }
}

/// One light with the map and filter its factors read ([`Factor`]).
pub(super) struct Factors<'a, T> {
    pub(super) light: &'a T,
    pub(super) map: &'a ShadowMap,
    pub(super) filter: PbrFilter,
}

/// Receivers from which [`batched`] works on the threads of a map drawn tile by tile.
pub(super) const PARALLEL_RECEIVERS: usize = 1024;

/// Shadow factors of many receivers into `out`, by `factor.factor(lookups, receiver)` run twice
/// around one batched lookup of every tap (see [`Lookups`]). Many receivers on a map drawn tile
/// by tile are split between the map's threads: each records its part, the map draws every tile
/// they read at once, then each looks its part up and finishes it. In Tracy each part's first
/// pass is a `penumbra::pbr::record taps` zone, the marking of its tiles
/// `penumbra::shadow::mark tiles`, and its lookups with the second pass
/// `penumbra::pbr::look up taps` (the drawing between them, `penumbra::shadow::draw tiles`).
pub(super) fn batched<R: Sync>(
    map: &ShadowMap,
    receivers: &[R],
    out: &mut [f32],
    factor: &impl Factor<R>,
) {
    let threads = map.tiled().map_or(1, |t| t.threads());
    // The first pass: each receiver's factor with every answer +0 into `out`, and where the
    // recording stood after it.
    let record = |part: &[R], out: &mut [f32]| {
        crate::zone!("penumbra::pbr::record taps");
        let mut record = Record(map.sorted());
        let mut ends = Vec::with_capacity(part.len());
        factor.record_part(&mut record, part, out, &mut ends);
        (record.0, ends)
    };
    // The second pass; `drawn`: the tiles the taps read are drawn already. A receiver whose
    // answers are all +0 (wholly in shadow, most of them in a level) keeps the first pass's
    // factor, which is the one it would compute now (see `Answers::skip_zeros`).
    let finish = |part: &[R], (sorted, ends): &(Sorted, Vec<_>), out: &mut [f32], drawn: bool| {
        crate::zone!("penumbra::pbr::look up taps");
        // Drawn already, or looked for and drawn now.
        let mut replay = Replay(map.answers(sorted, !drawn));
        for ((r, o), &end) in part.iter().zip(out.iter_mut()).zip(ends) {
            if !replay.0.skip_zeros(end) {
                *o = factor.factor(&mut replay, r);
            }
        }
    };
    if threads <= 1 || receivers.len() < PARALLEL_RECEIVERS {
        let recorded = record(receivers, out);
        finish(receivers, &recorded, out, false);
        return;
    }
    let lens = part_lengths(receivers.len(), threads);
    let mut parts: Vec<&[R]> = Vec::with_capacity(lens.len());
    let mut rest = receivers;
    for &n in &lens {
        let (part, after) = rest.split_at(n);
        parts.push(part);
        rest = after;
    }
    let records = std::sync::Mutex::new(Vec::with_capacity(parts.len()));
    // Each part records and routes its taps and works out the tiles they read; the merged
    // tiles are then drawn in one pass, before any part looks up.
    let first = parts.iter().zip(split_mut(out, &lens)).enumerate();
    crate::raster::run_parallel(first, threads, |(k, (part, out))| {
        let recorded = record(part, out);
        let needs = map.sorted_needs(&recorded.0);
        records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((k, recorded, needs));
        0
    });
    let mut records = records.into_inner().unwrap_or_else(|e| e.into_inner());
    records.sort_unstable_by_key(|(k, ..)| *k);
    let mut merged: Option<Needs> = None;
    for needs in records.iter_mut().filter_map(|(.., n)| n.take()) {
        match &mut merged {
            Some(m) => m.merge(&needs),
            None => merged = Some(needs),
        }
    }
    if let Some(needs) = &merged {
        map.draw_needs(needs);
    }
    let jobs = parts
        .into_iter()
        .zip(split_mut(out, &lens))
        .zip(records.iter().map(|(_, recorded, _)| recorded));
    crate::raster::run_parallel(jobs, threads, |((part, out), recorded)| {
        finish(part, recorded, out, true);
        0
    });
}

/// The lengths of [`batched`]'s parts of `n` receivers on `threads` threads, largest first:
/// each what is left over twice the threads (at least an eighth of an even share), so
/// that the threads, taking parts in turn, run out of work at about the same time; the last
/// parts are small where equal ones left one thread finishing a large part alone.
pub(super) fn part_lengths(n: usize, threads: usize) -> Vec<usize> {
    let threads = threads.max(1);
    let least = n.div_ceil(8 * threads).max(1);
    let mut lens = Vec::new();
    let mut left = n;
    while left > 0 {
        let len = (left / (2 * threads)).max(least).min(left);
        lens.push(len);
        left -= len;
    }
    lens
}

/// `out` cut into parts of `lens` (which sum to at most its length).
fn split_mut<'a>(mut out: &'a mut [f32], lens: &[usize]) -> Vec<&'a mut [f32]> {
    let mut parts = Vec::with_capacity(lens.len());
    for &n in lens {
        let (part, after) = std::mem::take(&mut out).split_at_mut(n);
        parts.push(part);
        out = after;
    }
    parts
}

/// WGSL's `mix`.
pub(super) fn mix(a: f32, b: f32, t: f32) -> f32 {
    a * (1.0 - t) + b * t
}

/// `fract` as WGSL defines it (`x − floor(x)`).
pub(super) fn fract(x: f32) -> f32 {
    x - crate::sample::address::floor_f32(x)
}

/// `interleaved_gradient_noise` of `bevy_pbr::utils` (its literals as written).
#[allow(clippy::excessive_precision)]
pub(super) fn interleaved_gradient_noise(pixel: Vec2, frame: u32) -> f32 {
    let xy = pixel + 5.588_238 * (frame % 64) as f32;
    fract(52.982_918_9 * fract(0.067_110_56 * xy.x + 0.005_837_15 * xy.y))
}

/// The rotation angles a temporal filter uses: the pixel's, or the evenly spaced set whose
/// mean stands for it.
pub(super) fn temporal_angles(pixel: Option<TemporalPixel>) -> impl Iterator<Item = f32> {
    let (first, count) = match pixel {
        Some(p) => (
            Some(2.0 * PI * interleaved_gradient_noise(p.frag_coord, p.frame)),
            1,
        ),
        None => (None, TEMPORAL_MEAN_ROTATIONS),
    };
    (0..count).map(move |k| first.unwrap_or(2.0 * PI * k as f32 / TEMPORAL_MEAN_ROTATIONS as f32))
}

/// `random_rotation_matrix` applied to a spiral offset: (m.y, −m.x; m.x, m.y) with m = (sin,
/// cos), WGSL's column-major `mat2x2` times the vector.
pub(super) fn rotate(angle: f32, v: [f32; 2]) -> Vec2 {
    let (s, c) = angle.sin_cos();
    Vec2::new(c * v[0] + s * v[1], -s * v[0] + c * v[1])
}

/// One bilinear comparison of slice `slice` at `uv` (`sample_shadow_map_hardware`).
pub(super) fn hardware_2d(
    lookups: &mut impl Lookups,
    map: &ShadowMap,
    slice: usize,
    uv: Vec2,
    depth: f32,
) -> f32 {
    lookups.compare(map, Vec3::new(uv.x, uv.y, slice as f32), depth)
}

/// `sample_shadow_map` of a 2D map or cascade slice.
pub(super) fn sample_2d(
    lookups: &mut impl Lookups,
    map: &ShadowMap,
    slice: usize,
    uv: Vec2,
    depth: f32,
    texel_size: f32,
    filter: PbrFilter,
) -> f32 {
    match filter {
        PbrFilter::Hardware2x2 => hardware_2d(lookups, map, slice, uv, depth),
        PbrFilter::Gaussian => castano_thirteen(lookups, map, slice, uv, depth),
        PbrFilter::Temporal(pixel) => {
            let size = map.resolution() as f32;
            // `calculate_uv_offset_scale_jimenez_fourteen` with blur size 1.
            let f = 0.015
                + (texel_size - 0.003_906_25) * (0.035 - 0.015) / (0.022_949_219 - 0.003_906_25);
            let scale = f * 1.0 / (texel_size * size);
            let mut total = 0.0;
            let mut count = 0;
            let reads = lookups.reads_taps();
            for angle in temporal_angles(pixel) {
                let taps = if reads {
                    SPIRAL.map(|s| {
                        let t = uv + rotate(angle, s) * scale;
                        Vec3::new(t.x, t.y, slice as f32)
                    })
                } else {
                    [Vec3::ZERO; 8]
                };
                let mut r = [0.0; 8];
                lookups.compare_many(map, &taps, depth, &mut r);
                let sum = r.iter().fold(0.0, |sum, &r| sum + r);
                total += sum / 8.0;
                count += 1;
            }
            total / count as f32
        }
    }
}

/// `sample_shadow_map_castano_thirteen`.
pub(super) fn castano_thirteen(
    lookups: &mut impl Lookups,
    map: &ShadowMap,
    slice: usize,
    light_local: Vec2,
    depth: f32,
) -> f32 {
    let size = map.resolution() as f32;
    let inv = 1.0 / size;
    let uv = light_local * size;
    // A GPU's weights would be NaN where the texel coordinate is not finite; the single
    // bilinear comparison there is the sampler's defined answer (R6) instead.
    if !uv.is_finite() {
        return hardware_2d(lookups, map, slice, light_local, depth);
    }
    let mut base = (uv + 0.5).map(crate::sample::address::floor_f32);
    let s = uv.x + 0.5 - base.x;
    let t = uv.y + 0.5 - base.y;
    base -= 0.5;
    base *= inv;
    let (uw, vw) = (castano_weights(s), castano_weights(t));
    let mut taps = [Vec3::ZERO; 9];
    if lookups.reads_taps() {
        taps = castano_taps(base, inv, slice, [s, t], uw, vw);
    }
    castano_sum(lookups, map, &taps, depth, uw, vw)
}

/// [`castano_thirteen`] from its taps and weights on: the nine comparisons, as a grid, and
/// their weighted sum.
#[inline(always)]
pub(super) fn castano_sum(
    lookups: &mut impl Lookups,
    map: &ShadowMap,
    taps: &[Vec3; 9],
    depth: f32,
    uw: [f32; 3],
    vw: [f32; 3],
) -> f32 {
    let mut r = [0.0; 9];
    // Three rows of three taps, u and v growing (see `castano_taps`).
    lookups.compare_grid(map, taps, depth, &mut r);
    castano_weighted(uw, vw, &r)
}

/// [`castano_thirteen`]'s weighted sum of its nine comparisons `r`.
#[inline(always)]
pub(super) fn castano_weighted(uw: [f32; 3], vw: [f32; 3], r: &[f32; 9]) -> f32 {
    let mut sum = 0.0;
    for j in 0..3 {
        for i in 0..3 {
            sum += uw[i] * vw[j] * r[3 * j + i];
        }
    }
    sum * (1.0 / 144.0)
}

/// [`castano_thirteen`]'s weights along one axis, for the fraction `f` of the texel grid.
#[inline(always)]
pub(super) fn castano_weights(f: f32) -> [f32; 3] {
    [4.0 - 3.0 * f, 7.0, 1.0 + 3.0 * f]
}

/// The nine tap positions of [`castano_thirteen`] (slice `slice`) from its texel-grid `base`
/// (already scaled by `inv` = 1 / map size), the fractions `s`, `t` and the weights: three
/// rows of three, u and v growing. For `s` in [0, 1) the offsets on an axis lie in
/// [−1.25, −1], [3/7, 4/7] and [2, 2.25] texels, so f32 rounding keeps them in order and
/// neighbouring taps are at most 1.75 texels apart: their 2×2 footprints meet, and the taps
/// form the grid `ShadowMap::sort_grid` asks for.
#[inline(always)]
pub(super) fn castano_taps(
    base: Vec2,
    inv: f32,
    slice: usize,
    [s, t]: [f32; 2],
    uw: [f32; 3],
    vw: [f32; 3],
) -> [Vec3; 9] {
    // The six quotients (3 − 2s)/w₀, (3 + s)/w₁, s/w₂ and t's, two vector divisions rather
    // than six in a row (each lane's quotient is the scalar one, bit for bit).
    let [q0, q1, q2, q3] = (Vec4::new(3.0 - 2.0 * s, 3.0 + s, s, 3.0 - 2.0 * t)
        / Vec4::new(uw[0], uw[1], uw[2], vw[0]))
    .to_array();
    let [q4, q5, ..] =
        (Vec4::new(3.0 + t, t, 1.0, 1.0) / Vec4::new(vw[1], vw[2], 1.0, 1.0)).to_array();
    let u = [q0 - 2.0, q1, q2 + 2.0];
    let v = [q3 - 2.0, q4, q5 + 2.0];
    std::array::from_fn(|k| {
        let tap = base + Vec2::new(u[k % 3], v[k / 3]) * inv;
        Vec3::new(tap.x, tap.y, slice as f32)
    })
}

/// `sample_shadow_cubemap`.
pub(super) fn sample_cube(
    lookups: &mut impl Lookups,
    map: &ShadowMap,
    local: Vec3,
    distance_to_light: f32,
    depth: f32,
    filter: PbrFilter,
) -> f32 {
    match filter {
        PbrFilter::Hardware2x2 => lookups.compare(map, local, depth),
        PbrFilter::Gaussian => {
            let taps = if lookups.reads_taps() {
                let basis =
                    orthonormalize(local.normalize()) * (POINT_SHADOW_SCALE * distance_to_light);
                D3D_SAMPLE_POINTS.map(|p| local + p[0] * basis.x_axis + p[1] * basis.y_axis)
            } else {
                [Vec3::ZERO; 8]
            };
            let mut r = [0.0; 8];
            lookups.compare_many(map, &taps, depth, &mut r);
            let mut sum = 0.0;
            for (r, w) in r.iter().zip(D3D_SAMPLE_WEIGHTS) {
                sum += r * w;
            }
            sum
        }
        PbrFilter::Temporal(pixel) => {
            let reads = lookups.reads_taps();
            let basis = if reads {
                orthonormalize(local.normalize()) * (POINT_SHADOW_SCALE * distance_to_light)
            } else {
                Mat3::ZERO
            };
            let mut total = 0.0;
            let mut count = 0;
            for angle in temporal_angles(pixel) {
                let taps = if reads {
                    SPIRAL.map(|s| {
                        let o = rotate(angle, s) * POINT_SHADOW_TEMPORAL_OFFSET_SCALE;
                        local + o.x * basis.x_axis + o.y * basis.y_axis
                    })
                } else {
                    [Vec3::ZERO; 8]
                };
                let mut r = [0.0; 8];
                lookups.compare_many(map, &taps, depth, &mut r);
                let mut sum = 0.0;
                for r in r {
                    sum += r * 0.125;
                }
                total += sum;
                count += 1;
            }
            total / count as f32
        }
    }
}
