//! The batched queries of a map: the lit fractions of many points through the SIMD comparison
//! path, to the bits of the scalar query.

use glam::Vec3;

use super::query::{cube_tap, lit_of_sum, project_cols};
use super::{LightSource, MapLayout, Normals, ShadowMap};
use crate::format::flush_denormal;
use crate::sample::address::linear_fixed;
use crate::sample::cube_face as select_face;
use crate::sample::{Coord, LodMode, Offset, SampleArgs, array_slice, validated};
use crate::shadow::kernel::{Anchor, PcfKernel, Tap, grid_anchor};
use crate::shadow::tiles::{Needs, Tiled};

impl ShadowMap {
    /// [`ShadowMap::lit_fraction`] of many points at once, into `out` (same length), with the
    /// light's kernel and the receivers' `normals`, through the batched SIMD comparison path
    /// where the map allows it (2D maps and cascades; cube maps face by face, with taps whose
    /// footprint crosses a face edge on the scalar sampler). Returns exactly the bits
    /// `lit_fraction` returns for each point.
    ///
    /// # Panics
    /// If `out`, or a per-point `normals` slice, is shorter than `points`.
    pub fn lit_fractions<'n>(
        &self,
        points: &[Vec3],
        normals: impl Into<Normals<'n>>,
        out: &mut [f32],
    ) {
        self.lit_fractions_with(points, normals, &self.light.kernel, out);
    }

    /// [`ShadowMap::lit_fractions`] with another kernel (the bits of
    /// [`ShadowMap::lit_fraction_with`]).
    ///
    /// # Panics
    /// As [`ShadowMap::lit_fractions`].
    pub fn lit_fractions_with<'n>(
        &self,
        points: &[Vec3],
        normals: impl Into<Normals<'n>>,
        kernel: &PcfKernel,
        out: &mut [f32],
    ) {
        crate::zone!("penumbra::shadow::lit_fractions");
        crate::plot!("penumbra lit fractions per call", points.len() as f64);
        let normals = normals.into();
        if let Normals::Each(n) = normals {
            assert!(
                n.len() >= points.len(),
                "{} normals for {} points",
                n.len(),
                points.len()
            );
        }
        let out = &mut out[..points.len()];
        if points.len() <= SCALAR_POINTS {
            // A few points (one query, a small probe): the scalar query gives the same bits,
            // and a map asked only this never builds key images that cost O(map size).
            for (k, (&p, o)) in points.iter().zip(out.iter_mut()).enumerate() {
                *o = self.lit_fraction_with(p, normals.get(k), kernel);
            }
            return;
        }
        let batches = self.batched_slices();
        let batches = &batches[..];
        if let MapLayout::Cube { position } = self.layout {
            self.cube_lit_fractions(position, batches, points, normals, kernel, out);
            return;
        }
        // The tap count as a constant for the common fixed kernels: loops unroll, and one
        // tap's weighted sum folds away.
        match (kernel.anchor(), kernel.len()) {
            // (`planar::<TAPS>` for TAPS > 0 takes only kernels anchored at the sample.)
            (Anchor::Sample, 1) => self.planar::<1>(batches, points, normals, kernel, out),
            (Anchor::Sample, 4) => self.planar::<4>(batches, points, normals, kernel, out),
            (Anchor::Sample, 16) => self.planar::<16>(batches, points, normals, kernel, out),
            _ => self.planar::<0>(batches, points, normals, kernel, out),
        }
    }

    /// [`ShadowMap::lit_fractions`] on 2D maps and cascades, for kernels of `TAPS` taps (0: the
    /// kernel's length, known at run time).
    #[inline(never)]
    fn planar<const TAPS: usize>(
        &self,
        batches: &[bool],
        points: &[Vec3],
        normals: Normals<'_>,
        kernel: &PcfKernel,
        out: &mut [f32],
    ) {
        let taps = if TAPS > 0 { TAPS } else { kernel.len() };
        let texel = 1.0 / self.resolution as f32;
        let size = self.resolution as f32;
        let grid = kernel.anchor() == Anchor::TexelGrid;
        let fixed = kernel.resolve(0.0, 0.0);
        let mut moving = fixed.clone();
        let scale = kernel.scale();
        // For the fixed kernels of TAPS taps: their offsets and weights as arrays.
        let offsets: [[f32; 2]; TAPS] = std::array::from_fn(|j| [fixed[j].du, fixed[j].dv]);
        let weights: [f32; TAPS] = std::array::from_fn(|j| fixed[j].weight);
        let unit = weights.iter().all(|&w| w == 1.0);
        // Points per round: enough lookups per batch run for the kernels' prefetching and to
        // amortize the call, few enough for the scratch to stay in L1/L2.
        const CHUNK: usize = 1024;
        let cap = points.len().min(CHUNK);
        // Per slice: the taps of the points that fall in it, point-major (tap `j` of the
        // slice's `i`-th point at `i·taps + j`), and which point each came from.
        let mut lists: Vec<SliceTaps> = batches
            .iter()
            .map(|&b| SliceTaps::with_capacity(if b { cap } else { 0 }, taps, grid))
            .collect();
        let mut res = vec![0.0f32; cap * taps];
        // One orthographic map lit from a direction, no normal offset (a sun): the receiver
        // bias is one constant shift and the projection one matrix.
        let fast = match (&self.layout, self.source, normals.none_offset()) {
            (MapLayout::Single, LightSource::Direction(d), true) => Some((
                -d * self.light.bias.receiver,
                self.view_proj[0].to_cols_array(),
            )),
            _ => None,
        };
        for (chunk_index, chunk) in points.chunks(CHUNK).enumerate() {
            let base = chunk_index * CHUNK;
            let out = &mut out[base..][..chunk.len()];
            for list in &mut lists {
                list.clear();
            }
            for (k, &p) in chunk.iter().enumerate() {
                let receiver = match &fast {
                    // `receiver` for this case with its constants hoisted: the same operations.
                    Some((shift, cols)) => p
                        .is_finite()
                        .then(|| project_cols(cols, p + *shift))
                        .flatten()
                        .filter(|&uvz| self.inside(uvz))
                        .map(|uvz| (0, p, uvz)),
                    None => self.receiver(p, normals.get(base + k)),
                };
                match receiver {
                    None => out[k] = 1.0,
                    Some((slice, _, [u, v, z])) if batches.get(slice).copied() == Some(true) => {
                        let list = &mut lists[slice];
                        let at = list.points * taps;
                        list.owner[list.points] = base + k;
                        list.points += 1;
                        // The coordinates `lit_fraction_with` gives the sampler, to the bit.
                        if TAPS > 0 {
                            // A fixed kernel: offsets known for the call, loops of TAPS.
                            let uv: &mut [[f32; 2]; TAPS] =
                                (&mut list.uv[at..at + TAPS]).try_into().expect("TAPS");
                            for (c, o) in uv.iter_mut().zip(&offsets) {
                                *c = [u + o[0] * texel, v + o[1] * texel];
                            }
                        } else {
                            let ((au, fu), (av, fv)) = if grid {
                                (grid_anchor(u, size, texel), grid_anchor(v, size, texel))
                            } else {
                                ((u, 0.0), (v, 0.0))
                            };
                            let resolved: &[Tap] = if grid {
                                kernel.resolve_into(fu, fv, &mut moving);
                                &moving
                            } else {
                                &fixed
                            };
                            let uv = &mut list.uv[at..at + taps];
                            for (c, t) in uv.iter_mut().zip(resolved) {
                                *c = [au + t.du * texel, av + t.dv * texel];
                            }
                            if grid {
                                let w = &mut list.weights[at..at + taps];
                                for (w, t) in w.iter_mut().zip(resolved) {
                                    *w = t.weight;
                                }
                            }
                        }
                        list.refs[at..at + taps].fill(z);
                    }
                    Some(_) => out[k] = self.lit_fraction_with(p, normals.get(base + k), kernel),
                }
            }
            let reader = self.batch_reader(false, |t, needs| {
                for (slice, list) in lists.iter().enumerate() {
                    t.need_2d_taps(needs, slice, &list.uv[..list.points * taps]);
                }
            });
            for (slice, list) in lists.iter().enumerate() {
                let Some(batch) = reader.batch(slice) else {
                    continue;
                };
                if list.points == 0 {
                    continue;
                }
                let n = list.points * taps;
                let res = &mut res[..n];
                if batch.run(&list.uv[..n], &list.refs[..n], res).is_err() {
                    res.fill(1.0);
                }
                if TAPS > 0 {
                    for (&k, results) in list.owner[..list.points]
                        .iter()
                        .zip(res.as_chunks::<TAPS>().0)
                    {
                        // Weighted and summed in tap order, like `lit_fraction_with` (a weight
                        // of 1 multiplies exactly, so unit weights skip it).
                        let sum = if unit {
                            results.iter().fold(0.0f32, |s, &r| s + r)
                        } else {
                            results
                                .iter()
                                .zip(&weights)
                                .fold(0.0f32, |s, (&r, &w)| s + w * r)
                        };
                        out[k - base] = lit_of_sum(sum, scale);
                    }
                    continue;
                }
                for (i, &k) in list.owner[..list.points].iter().enumerate() {
                    let results = &res[i * taps..][..taps];
                    // Weighted and summed in tap order, like `lit_fraction_with`.
                    let sum = if grid {
                        let weights = &list.weights[i * taps..][..taps];
                        results
                            .iter()
                            .zip(weights)
                            .fold(0.0f32, |s, (&r, &w)| s + w * r)
                    } else {
                        results
                            .iter()
                            .zip(&fixed)
                            .fold(0.0f32, |s, (&r, t)| s + t.weight * r)
                    };
                    out[k - base] = lit_of_sum(sum, scale);
                }
            }
        }
    }

    /// [`ShadowMap::lit_fractions`] on a cube map. Inside one face, R100's seamless filtering is
    /// plain 2D bilinear filtering of that face (R99's face coordinates, R27's taps), so a tap
    /// whose whole 2×2 footprint lies inside a face goes to that face's batch; taps whose
    /// footprint reaches across an edge or a corner (R102–R104) go through the scalar sampler.
    #[inline(never)]
    fn cube_lit_fractions(
        &self,
        position: Vec3,
        batches: &[bool],
        points: &[Vec3],
        normals: Normals<'_>,
        kernel: &PcfKernel,
        out: &mut [f32],
    ) {
        const CHUNK: usize = 256;
        // Cube maps place every kernel's taps around the sample position (f = 0).
        let resolved = kernel.resolve(0.0, 0.0);
        let scale = kernel.scale();
        let taps = resolved.len();
        let texel = 1.0 / self.resolution as f32;
        let size = self.resolution as f32;
        // First-tap indices whose 2×2 footprint stays inside the face.
        let inside = 0..=i64::from(self.resolution) - 2;
        let mut uv: [Vec<[f32; 2]>; 6] = Default::default();
        let mut refs: [Vec<f32>; 6] = Default::default();
        let mut slots: [Vec<usize>; 6] = Default::default();
        let mut res = Vec::with_capacity(CHUNK * taps);
        let mut face_res = Vec::new();
        // Taps whose footprint crosses a face edge: sampled once the tiles are there.
        let mut seams: Vec<(Coord, f32, usize)> = Vec::new();
        for (chunk_index, chunk) in points.chunks(CHUNK).enumerate() {
            let base = chunk_index * CHUNK;
            let out = &mut out[base..][..chunk.len()];
            res.clear();
            res.resize(chunk.len() * taps, 1.0f32);
            for face in 0..6 {
                uv[face].clear();
                refs[face].clear();
                slots[face].clear();
            }
            seams.clear();
            let mut live = [false; CHUNK];
            for (k, &point) in chunk.iter().enumerate() {
                let Some((slice, p, [_, _, z])) = self.receiver(point, normals.get(base + k))
                else {
                    out[k] = 1.0;
                    continue;
                };
                live[k] = true;
                for (j, t) in resolved.iter().enumerate() {
                    let dd = cube_tap(self.light.cube, position, slice, p, [t.du, t.dv], texel);
                    // The sampler flushes denormal coordinates first (SPEC §1.4, R6).
                    let coord = Coord([dd.x, dd.y, dd.z, 0.0]).flushed();
                    let [x, y, z3, _] = coord.0;
                    let fc = crate::sample::face_coord([x, y, z3]);
                    let i0 = linear_fixed(fc.s * size - 0.5) >> 8;
                    let j0 = linear_fixed(fc.t * size - 0.5) >> 8;
                    let face = fc.face as usize;
                    let batched = select_face([x, y, z3]).is_some()
                        && inside.contains(&i0)
                        && inside.contains(&j0)
                        && batches.get(face).copied() == Some(true);
                    if batched {
                        uv[face].push([fc.s, fc.t]);
                        refs[face].push(z);
                        slots[face].push(k * taps + j);
                    } else {
                        seams.push((coord, z, k * taps + j));
                    }
                }
            }
            let reader = self.batch_reader(!seams.is_empty(), |t, needs| {
                for (face, list) in uv.iter().enumerate() {
                    t.need_2d_taps(needs, face, list);
                }
                for (coord, _, _) in &seams {
                    self.need_coord(t, needs, coord);
                }
            });
            for &(coord, z, slot) in &seams {
                let args = SampleArgs {
                    coord,
                    lod: LodMode::Zero,
                    offset: Offset::default(),
                    clamp: None,
                };
                res[slot] = validated(
                    self.sampler.sample_cmp(Some(reader.texture()), &args, z),
                    1.0,
                );
            }
            for face in 0..6 {
                let Some(batch) = reader.batch(face) else {
                    continue;
                };
                if uv[face].is_empty() {
                    continue;
                }
                face_res.clear();
                face_res.resize(uv[face].len(), 0.0f32);
                if batch.run(&uv[face], &refs[face], &mut face_res).is_err() {
                    face_res.fill(1.0);
                }
                for (&slot, &r) in slots[face].iter().zip(&face_res) {
                    res[slot] = r;
                }
            }
            for (k, o) in out.iter_mut().enumerate() {
                if live[k] {
                    // Weighted and summed in tap order, like `lit_fraction_with`.
                    let sum = res[k * taps..][..taps]
                        .iter()
                        .zip(&resolved)
                        .fold(0.0f32, |s, (&r, t)| s + t.weight * r);
                    *o = lit_of_sum(sum, scale);
                }
            }
        }
    }
}

/// Calls of `lit_fractions` with at most this many points take the scalar query.
const SCALAR_POINTS: usize = 16;

/// The lookups of one slice in a round of `lit_fractions` (sized once, filled by index).
struct SliceTaps {
    uv: Vec<[f32; 2]>,
    refs: Vec<f32>,
    /// Per-lookup weights (texel-grid kernels only; fixed kernels' weights are constants).
    weights: Vec<f32>,
    /// The point (index in the call) of each group of `taps` lookups.
    owner: Vec<usize>,
    /// Points filled so far.
    points: usize,
}

impl SliceTaps {
    fn with_capacity(points: usize, taps: usize, weights: bool) -> Self {
        SliceTaps {
            uv: vec![[0.0; 2]; points * taps],
            refs: vec![0.0; points * taps],
            weights: vec![0.0; if weights { points * taps } else { 0 }],
            owner: vec![0; points],
            points: 0,
        }
    }

    fn clear(&mut self) {
        self.points = 0;
    }
}

/// Where [`ShadowMap::route`] sends one lookup.
enum Route {
    /// The batched path of slice `.0`, at this 2D position.
    Batch(usize, [f32; 2]),
    /// The scalar sampler, with the flushed coordinate.
    Scalar(Coord),
}

/// Lookups sorted for [`ShadowMap::compare_batch`]: per slice (cube face) the batched ones
/// with their references, each lookup's slice in call order, and the rest for the scalar
/// sampler with their positions in the call.
pub(crate) struct Sorted {
    uv: Vec<Vec<[f32; 2]>>,
    refs: Vec<Vec<f32>>,
    /// Each lookup's slice, in call order ([`SCALAR`] for the scalar sampler's): two bytes a
    /// lookup, where a position per batched lookup took eight. The taps of a grid routed
    /// whole ([`ShadowMap::sort_grid`]) are not listed here but in `grids`.
    route: Vec<u16>,
    /// Per grid of taps ([`ShadowMap::sort_grid`]), in call order: the slice all its taps
    /// went to, or [`SCALAR`] for a grid whose taps were routed one by one (in `route`), and
    /// its number of taps.
    grids: Vec<(u16, u16)>,
    /// The scalar sampler's lookups, in call order: the flushed coordinate and the reference.
    scalar: Vec<(Coord, f32)>,
    /// Which slices have a batch ([`ShadowMap::batched_slices`]).
    batched: Vec<bool>,
    /// The bits of the last z that `ShadowMap::sort_on_one_slice` found a slice with a batch
    /// for, and that slice.
    last_slice: Option<(u32, usize)>,
    /// Per slice, the first and the last tap of each grid of taps ([`ShadowMap::sort_grid`]):
    /// `[u first, v first, u last, v last]`, flushed as the taps are.
    corners: Vec<Vec<[f32; 4]>>,
    /// Per slice, whether every batched lookup came in a grid with finite corners: the tiles
    /// the slice's lookups read are then those of the corners' rectangles.
    by_corners: Vec<bool>,
}

/// Everything a [`Sorted`] holds, as bits (for tests that compare two recordings).
#[cfg(test)]
pub(crate) type SortedBits = (
    Vec<Vec<[u32; 2]>>,
    Vec<Vec<u32>>,
    Vec<u16>,
    Vec<(u16, u16)>,
    Vec<([u32; 4], u32)>,
    Vec<Vec<[u32; 4]>>,
    Vec<bool>,
);

impl Sorted {
    /// Its lookups, grids, corners and routes as bits (the slice cache and the list of
    /// batched slices left out).
    #[cfg(test)]
    pub(crate) fn bits(&self) -> SortedBits {
        (
            self.uv
                .iter()
                .map(|l| l.iter().map(|c| c.map(f32::to_bits)).collect())
                .collect(),
            self.refs
                .iter()
                .map(|l| l.iter().map(|r| r.to_bits()).collect())
                .collect(),
            self.route.clone(),
            self.grids.clone(),
            self.scalar
                .iter()
                .map(|(c, r)| (c.0.map(f32::to_bits), r.to_bits()))
                .collect(),
            self.corners
                .iter()
                .map(|l| l.iter().map(|c| c.map(f32::to_bits)).collect())
                .collect(),
            self.by_corners.clone(),
        )
    }

    /// Lists a grid of `n` taps routed whole to slice `s` (its taps already listed there),
    /// with its first and last taps' flushed coordinates `corners`: where one is not finite,
    /// the slice's tiles are marked tap by tap instead.
    fn push_grid(&mut self, s: usize, n: u16, corners: [f32; 4]) {
        self.grids.push((s as u16, n));
        if corners.iter().all(|c| c.is_finite()) {
            self.corners[s].push(corners);
        } else {
            self.by_corners[s] = false;
        }
    }

    /// Where the recording stands: grids and lookups routed one by one so far (the end of one
    /// item's lookups, for [`Answers::skip_zeros`]).
    pub(crate) fn recorded(&self) -> (u32, u32) {
        (self.grids.len() as u32, self.route.len() as u32)
    }

    /// Makes room for `times` as many lookups as are sorted now, slice by slice (for parts
    /// whose items make about as many lookups each as the first).
    pub(crate) fn reserve_like(&mut self, times: usize) {
        for (uv, refs) in self.uv.iter_mut().zip(&mut self.refs) {
            let n = uv.len().saturating_mul(times);
            uv.reserve(n);
            refs.reserve(n);
        }
        self.route.reserve(self.route.len().saturating_mul(times));
        self.grids.reserve(self.grids.len().saturating_mul(times));
        for corners in &mut self.corners {
            corners.reserve(corners.len().saturating_mul(times));
        }
    }
}

/// [`Sorted::route`] of a lookup that goes to the scalar sampler.
const SCALAR: u16 = u16::MAX;

/// The array slice of a 2D lookup whose flushed coordinate has this `z` (R43), on a map of
/// `batched.len()` slices.
fn slice_2d(z: f32, batched: &[bool]) -> usize {
    array_slice(z, u32::try_from(batched.len()).unwrap_or(u32::MAX)) as usize
}

/// The answers of a [`Sorted`]'s lookups ([`ShadowMap::answers`]), computed slice by slice
/// and handed back in the order they were recorded: a lookup routed by itself takes the next
/// answer of its slice (or of the scalar sampler's), a grid routed whole the next answers of
/// its slice, with no list of every answer in call order between.
pub(crate) struct Answers<'a> {
    sorted: &'a Sorted,
    /// Every slice's answers, one slice after the other.
    res: Vec<f32>,
    /// Per slice, where its next answer is in `res`.
    at: Vec<usize>,
    /// The scalar sampler's answers, in call order.
    scalar: Vec<f32>,
    next_route: usize,
    next_grid: usize,
    next_scalar: usize,
}

impl Answers<'_> {
    /// The answer of the next lookup routed by itself (1 past the recorded ones: both passes
    /// of a filter make the same lookups, so none is asked for).
    #[inline]
    pub(crate) fn next_tap(&mut self) -> f32 {
        let s = self.sorted.route.get(self.next_route).copied();
        self.next_route += 1;
        match s {
            Some(SCALAR) => {
                self.next_scalar += 1;
                self.scalar.get(self.next_scalar - 1).copied()
            }
            Some(s) => self.at.get_mut(usize::from(s)).and_then(|at| {
                *at += 1;
                self.res.get(*at - 1).copied()
            }),
            None => None,
        }
        .unwrap_or(1.0)
    }

    /// The answers of the next lookups routed by themselves, into `out`.
    #[inline]
    pub(crate) fn next_taps(&mut self, out: &mut [f32]) {
        for o in out {
            *o = self.next_tap();
        }
    }

    /// The answers of the next grid of taps ([`ShadowMap::sort_grid`]), into `out` (its
    /// length: the grid's taps).
    #[inline]
    pub(crate) fn next_grid(&mut self, out: &mut [f32]) {
        let g = self.sorted.grids.get(self.next_grid).copied();
        self.next_grid += 1;
        match g {
            Some((s, _)) if s != SCALAR => {
                let n = out.len();
                if let Some(at) = self.at.get_mut(usize::from(s))
                    && let Some(res) = self.res.get(*at..*at + n)
                {
                    out.copy_from_slice(res);
                    *at += n;
                } else {
                    out.fill(1.0);
                }
            }
            _ => self.next_taps(out),
        }
    }

    /// Passes over the answers of the next item's lookups, up to `end` ([`Sorted::recorded`]
    /// after it was recorded), when they are all +0 (a receiver wholly in shadow) and the item
    /// made only grids on at most two slices; then true. Else false, with nothing passed over.
    ///
    /// A first pass records with +0 for every answer, so such an item's recorded value is the
    /// value its second pass would compute from these answers, bit for bit: the arithmetic
    /// between a filter's answers and its value is the same in both passes.
    #[inline]
    pub(crate) fn skip_zeros(&mut self, (grid_end, route_end): (u32, u32)) -> bool {
        let (grid_end, route_end) = (grid_end as usize, route_end as usize);
        if route_end != self.next_route {
            return false;
        }
        let Some(grids) = self.sorted.grids.get(self.next_grid..grid_end) else {
            return false;
        };
        // The answers taken from each slice: (slice, count), at most two slices.
        let mut took = [(usize::MAX, 0usize); 2];
        for &(s, n) in grids {
            let s = usize::from(s);
            match took.iter_mut().find(|t| t.0 == s || t.0 == usize::MAX) {
                Some(t) if s != usize::from(SCALAR) => *t = (s, t.1 + usize::from(n)),
                _ => return false,
            }
        }
        let zeros = |&(s, n): &(usize, usize)| {
            s == usize::MAX
                || self.at.get(s).is_some_and(|&at| {
                    self.res
                        .get(at..at + n)
                        .is_some_and(|r| r.iter().all(|a| a.to_bits() == 0))
                })
        };
        if !took.iter().all(zeros) {
            return false;
        }
        for (s, n) in took {
            if let Some(at) = self.at.get_mut(s) {
                *at += n;
            }
        }
        self.next_grid = grid_end;
        true
    }
}

/// Whether lookups in slice `s` go through its batch: it has one, and `s` fits
/// [`Sorted::route`]'s two-byte ids.
fn has_batch(s: usize, batched: &[bool]) -> bool {
    s < usize::from(SCALAR) && batched.get(s).copied() == Some(true)
}

impl ShadowMap {
    /// [`ShadowMap::compare`] of each of `coords` with its own reference, into `out`: the same
    /// bits as one `compare` each. Lookups whose bilinear footprint lies inside one slice (on a
    /// cube map, inside one face) go through the batched SIMD path; a tiled map draws every
    /// tile the lookups read at once.
    ///
    /// # Panics
    /// If `refs` or `out` is shorter than `coords`.
    pub fn compare_batch(&self, coords: &[Vec3], refs: &[f32], out: &mut [f32]) {
        let sorted = self.sort_lookups(coords, &refs[..coords.len()]);
        self.compare_sorted(&sorted, &mut out[..coords.len()]);
    }

    /// The answers of `sorted`'s lookups (routed one by one: no grids) into `out`, in call
    /// order, the tiles they read looked for (and drawn) first.
    fn compare_sorted(&self, sorted: &Sorted, out: &mut [f32]) {
        debug_assert!(sorted.grids.is_empty());
        let mut answers = self.answers(sorted, true);
        for o in out {
            *o = answers.next_tap();
        }
    }

    /// The answers of `sorted`'s lookups, to be handed back in the order they were recorded
    /// ([`Answers`]); `mark`: the tiles they read are looked for (and drawn) first, else they
    /// are drawn already ([`ShadowMap::sorted_needs`]).
    pub(crate) fn answers<'a>(&self, sorted: &'a Sorted, mark: bool) -> Answers<'a> {
        crate::zone!("penumbra::ShadowMap::compare_batch");
        let reader = self.batch_reader(!sorted.scalar.is_empty(), |t, needs| {
            if mark {
                self.mark(t, needs, sorted);
            } else {
                // Drawn already, but maybe without their texels, which the scalar sampler
                // reads (see `Resident::texels`).
                for (coord, ..) in &sorted.scalar {
                    self.need_coord(t, needs, coord);
                }
            }
        });
        let scalar = (sorted.scalar.iter())
            .map(|&(coord, r)| {
                let args = SampleArgs {
                    coord,
                    lod: LodMode::Zero,
                    offset: Offset::default(),
                    clamp: None,
                };
                validated(
                    self.sampler.sample_cmp(Some(reader.texture()), &args, r),
                    1.0,
                )
            })
            .collect();
        // Each slice's answers, one slice after the other, handed out in call order by
        // `Answers`.
        let mut start = Vec::with_capacity(sorted.uv.len());
        let mut res = Vec::with_capacity(sorted.uv.iter().map(Vec::len).sum());
        for (s, uv) in sorted.uv.iter().enumerate() {
            let first = res.len();
            start.push(first);
            res.resize(first + uv.len(), 1.0f32);
            if !uv.is_empty()
                && let Some(batch) = reader.batch(s)
                && batch.run(uv, &sorted.refs[s], &mut res[first..]).is_err()
            {
                res[first..].fill(1.0);
            }
        }
        Answers {
            sorted,
            res,
            at: start,
            scalar,
            next_route: 0,
            next_grid: 0,
            next_scalar: 0,
        }
    }

    /// Draws now every tile that comparisons at `coords` read (a map drawn tile by tile; a
    /// whole map has nothing to draw), so that comparisons made afterwards, from any number
    /// of threads at once, only read.
    pub fn draw_tiles_for(&self, coords: &[Vec3]) {
        if self.tiled().is_none() {
            return;
        }
        // The references do not change which tiles a lookup reads.
        let sorted = self.sort_lookups(coords, &vec![0.0; coords.len()]);
        if let Some(needs) = self.sorted_needs(&sorted) {
            self.draw_needs(&needs);
        }
    }

    /// Draws the tiles of `needs` ([`ShadowMap::sorted_needs`] of this map, maybe merged) that
    /// are not drawn yet.
    pub(crate) fn draw_needs(&self, needs: &Needs) {
        if let Some(t) = self.tiled() {
            t.ensure(needs);
        }
    }

    /// The tiles that the lookups of `sorted` read; `None` for a map drawn whole. Threads can
    /// sort and mark parts of a batch at once, draw the merged set in one pass, then look
    /// their parts up ([`ShadowMap::answers`]) without routing them again.
    pub(crate) fn sorted_needs(&self, sorted: &Sorted) -> Option<Needs> {
        self.tiled().map(|t| {
            let mut needs = t.needs();
            self.mark(t, &mut needs, sorted);
            needs
        })
    }

    /// Where one lookup goes: the batched path of a slice (its 2D position there) when its
    /// bilinear footprint lies inside that slice (a cube face) and the slice has a batch, else
    /// the scalar sampler (also for a slice past [`Sorted::route`]'s two-byte ids, an array of
    /// 65,535 slices or more: the same answers).
    fn route(&self, c: &Vec3, batched: &[bool]) -> Route {
        // The sampler flushes denormal coordinates first (SPEC §1.4, R6).
        let coord = Coord([c.x, c.y, c.z, 0.0]).flushed();
        let [x, y, z, _] = coord.0;
        let slice = if self.cube {
            // Inside one face, seamless filtering is that face's 2D filtering (R100).
            let size = self.resolution as f32;
            let inside = 0..=i64::from(self.resolution) - 2;
            let fc = crate::sample::face_coord([x, y, z]);
            let i0 = linear_fixed(fc.s * size - 0.5) >> 8;
            let j0 = linear_fixed(fc.t * size - 0.5) >> 8;
            (select_face([x, y, z]).is_some() && inside.contains(&i0) && inside.contains(&j0))
                .then_some((fc.face as usize, [fc.s, fc.t]))
        } else {
            Some((slice_2d(z, batched), [x, y]))
        };
        match slice {
            Some((s, at)) if has_batch(s, batched) => Route::Batch(s, at),
            _ => Route::Scalar(coord),
        }
    }

    /// An empty [`Sorted`] for lookups of this map.
    pub(crate) fn sorted(&self) -> Sorted {
        let batched = self.batched_slices();
        let slices = batched.len();
        Sorted {
            uv: vec![Vec::new(); slices],
            refs: vec![Vec::new(); slices],
            route: Vec::new(),
            grids: Vec::new(),
            scalar: Vec::new(),
            batched,
            last_slice: None,
            corners: vec![Vec::new(); slices],
            by_corners: vec![true; slices],
        }
    }

    /// Routes each lookup once: to a slice's batched path, or to the scalar sampler.
    pub(crate) fn sort_lookups(&self, coords: &[Vec3], refs: &[f32]) -> Sorted {
        let mut sorted = self.sorted();
        sorted.route.reserve(coords.len());
        for (c, &r) in coords.iter().zip(refs) {
            self.sort_one(&mut sorted, c, r, coords.len());
        }
        sorted
    }

    /// Routes lookups `taps`, all with the reference `depth`, after those `sorted` holds:
    /// the same as [`ShadowMap::sort_lookups`] of them all at once. Taps of one 2D slice (a
    /// filter's taps round one point) are routed together: their slice once, then each tap
    /// flushed and pushed.
    pub(crate) fn sort_more(&self, sorted: &mut Sorted, taps: &[Vec3], depth: f32) {
        if let Some(s) = self.sort_on_one_slice(sorted, taps, depth, true) {
            sorted.by_corners[s] = false;
            return;
        }
        for c in taps {
            self.sort_one(sorted, c, depth, 0);
        }
    }

    /// [`ShadowMap::sort_more`] of taps that form a grid: rows of taps on one 2D slice, u
    /// growing along a row and v from row to row, each tap's 2×2 footprint (R27) meeting its
    /// neighbours' (as the Castaño filter's nine taps do). The texels they read are then the
    /// rectangle from the first tap's first texels to the last tap's second ones, and their
    /// tiles are marked from it ([`Tiled::need_2d_corners`]) rather than tap by tap. The taps
    /// go to the slices `sort_more` sends them to; a grid on one slice is listed once in
    /// [`Sorted::grids`] (its slice and tap count) rather than tap by tap in `route`.
    pub(crate) fn sort_grid(&self, sorted: &mut Sorted, taps: &[Vec3], depth: f32) {
        let whole = u16::try_from(taps.len())
            .ok()
            .and_then(|n| Some((self.sort_on_one_slice(sorted, taps, depth, false)?, n)));
        let Some((s, n)) = whole else {
            sorted.grids.push((SCALAR, 0));
            for c in taps {
                self.sort_one(sorted, c, depth, 0);
            }
            return;
        };
        let uv = &sorted.uv[s];
        let (first, last) = (uv[uv.len() - taps.len()], uv[uv.len() - 1]);
        sorted.push_grid(s, n, [first[0], first[1], last[0], last[1]]);
    }

    /// `sort_more`'s shortcut: taps on one 2D slice that has a batch, routed together (their
    /// slice once, then each tap flushed and pushed; `route`: each tap's slice listed in
    /// [`Sorted::route`], else the caller lists the group's). Returns the slice, or `None`
    /// with nothing routed when the taps do not qualify.
    fn sort_on_one_slice(
        &self,
        sorted: &mut Sorted,
        taps: &[Vec3],
        depth: f32,
        route: bool,
    ) -> Option<usize> {
        let first = taps.first()?;
        if self.cube || taps.iter().any(|t| t.z.to_bits() != first.z.to_bits()) {
            return None;
        }
        let s = Self::batch_slice(sorted, first.z)?;
        let n = taps.len();
        // The sampler flushes denormal coordinates first (R6), as `route` does.
        sorted.uv[s].extend(
            taps.iter()
                .map(|t| [flush_denormal(t.x), flush_denormal(t.y)]),
        );
        sorted.refs[s].extend(std::iter::repeat_n(depth, n));
        if route {
            sorted.route.extend(std::iter::repeat_n(s as u16, n));
        }
        Some(s)
    }

    /// The slice with a batch that 2D lookups at array coordinate `z` go to (`None`: the
    /// slice has no batch), through the cache of the last one found.
    #[inline]
    fn batch_slice(sorted: &mut Sorted, z: f32) -> Option<usize> {
        match sorted.last_slice {
            Some((bits, s)) if bits == z.to_bits() => Some(s),
            _ => {
                // `route` of a 2D lookup: the slice depends on the flushed z alone.
                let flushed = Coord([0.0, 0.0, z, 0.0]).flushed().0[2];
                let s = slice_2d(flushed, &sorted.batched);
                if !has_batch(s, &sorted.batched) {
                    return None;
                }
                sorted.last_slice = Some((z.to_bits(), s));
                Some(s)
            }
        }
    }

    /// [`ShadowMap::sort_grid`] of the nine taps of a three-by-three grid on array slice `z`:
    /// tap `k` at (`u[k % 3]`, `v[k / 3]`). The same recording, without the taps first: each
    /// coordinate flushed once (R6) rather than once per tap, and the slice found once.
    /// (Only the AVX-512 first pass of a sun's factors records so.)
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
        allow(dead_code)
    )]
    pub(crate) fn sort_grid_3x3(
        &self,
        sorted: &mut Sorted,
        z: f32,
        u: [f32; 3],
        v: [f32; 3],
        depth: f32,
    ) {
        let s = if self.cube {
            None
        } else {
            Self::batch_slice(sorted, z)
        };
        let Some(s) = s else {
            let taps: [Vec3; 9] = std::array::from_fn(|k| Vec3::new(u[k % 3], v[k / 3], z));
            self.sort_grid(sorted, &taps, depth);
            return;
        };
        let (u, v) = (u.map(flush_denormal), v.map(flush_denormal));
        let uv = &mut sorted.uv[s];
        for row in v {
            uv.extend(u.map(|col| [col, row]));
        }
        sorted.refs[s].extend([depth; 9]);
        sorted.push_grid(s, 9, [u[0], v[0], u[2], v[2]]);
    }

    /// Routes one lookup after those `sorted` holds; `hint`: how many lookups the call
    /// routes in all (room for them is made in the first slice reached).
    fn sort_one(&self, sorted: &mut Sorted, c: &Vec3, r: f32, hint: usize) {
        let i = sorted.route.len();
        match self.route(c, &sorted.batched) {
            Route::Batch(s, at) => {
                if sorted.uv[s].capacity() == 0 {
                    // Room for every lookup in the first slice reached (most batches read
                    // one or two): no copies as the lists grow.
                    let n = hint.saturating_sub(i);
                    sorted.uv[s].reserve(n);
                    sorted.refs[s].reserve(n);
                }
                sorted.uv[s].push(at);
                sorted.refs[s].push(r);
                sorted.route.push(s as u16);
                sorted.by_corners[s] = false;
            }
            Route::Scalar(coord) => {
                sorted.scalar.push((coord, r));
                sorted.route.push(SCALAR);
            }
        }
    }

    /// Marks the tiles the sorted lookups read.
    fn mark(&self, t: &Tiled, needs: &mut Needs, sorted: &Sorted) {
        crate::zone!("penumbra::shadow::mark tiles");
        for (s, list) in sorted.uv.iter().enumerate() {
            if !(sorted.by_corners[s] && t.need_2d_corners(needs, s, &sorted.corners[s])) {
                t.need_2d_taps(needs, s, list);
            }
        }
        for (coord, ..) in &sorted.scalar {
            self.need_coord(t, needs, coord);
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::Sorted;
    use crate::desc::AddressMode;
    use crate::shadow::{Light, Occluder, Scene, ShadowMap, shadow_sampler};

    /// The maps the sorting tests route on: a cascaded one (2D slices with batches), a cube
    /// and a mirrored 2D map (no batch).
    fn sorting_lights() -> [Light; 3] {
        let down = Vec3::new(0.3, -1.0, 0.2);
        let mut mirrored = Light::directional(down, 1.0);
        mirrored.sampler = shadow_sampler(mirrored.depth, AddressMode::Mirror);
        [
            Light::cascaded(down, Vec3::ZERO, vec![4.0, 8.0, 16.0], 1.0),
            Light::point(Vec3::new(0.0, 4.0, 0.0), 20.0, 1.0),
            mirrored,
        ]
    }

    /// An array coordinate for a 2D lookup on a map of `slices` slices: mostly a whole slice,
    /// else NaN, ±0 or denormal, past the last slice, negative, or between two.
    fn array_slice(rng: &mut penumbra_testkit::Rng, slices: f32) -> f32 {
        match rng.below_mod(10) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 1e-40,
            3 => slices + 2.0,
            4 => -2.7,
            5 => 0.5,
            _ => (rng.f32_unit() * slices).floor(),
        }
    }

    /// `a` and `b` hold the same lookups, bit for bit and in the same order; `route`: each of
    /// `a`'s lookups' slice in call order (its grids' taps included).
    fn assert_same(a: &Sorted, route: &[u16], b: &Sorted, what: &str) {
        let bits = |v: &[[f32; 2]]| v.iter().map(|c| c.map(f32::to_bits)).collect::<Vec<_>>();
        let ref_bits = |v: &[f32]| v.iter().map(|r| r.to_bits()).collect::<Vec<_>>();
        assert_eq!(route, b.route, "{what}: routes");
        for (s, (ua, ub)) in a.uv.iter().zip(&b.uv).enumerate() {
            assert_eq!(bits(ua), bits(ub), "{what}: slice {s} positions");
            assert_eq!(
                ref_bits(&a.refs[s]),
                ref_bits(&b.refs[s]),
                "{what}: slice {s} refs"
            );
        }
        let scalar = |s: &Sorted| {
            s.scalar
                .iter()
                .map(|(c, r)| (c.0.map(f32::to_bits), r.to_bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(scalar(a), scalar(b), "{what}: scalar lookups");
    }

    /// Taps routed a filter's worth at a time as the batched PBR filters record them
    /// (`sort_more` or `sort_grid`: one slice for a group on one 2D slice) sort exactly as all
    /// of them routed at once (`sort_lookups`): the same slices, flushed positions, references
    /// and scalar lookups, in the same order. Groups of 1 to 20 taps on one slice, on several,
    /// on slices past the array or NaN, with denormal, −0 and non-finite coordinates, a
    /// slice's z repeated or not from group to group; a cascaded map, a cube map and a map
    /// without batches (MIRROR takes the reference path).
    #[test]
    fn taps_sorted_group_by_group_sort_as_all_at_once() {
        let mut scene = Scene::default();
        scene.add(Occluder::cuboid(
            Vec3::new(-10.0, -1.0, -10.0),
            Vec3::new(10.0, 0.0, 10.0),
        ));
        scene.add(Occluder::cuboid(
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.0, 2.0, 1.0),
        ));
        let mut rng = penumbra_testkit::Rng::xorshift64(0x736f_7274);
        for light in sorting_lights() {
            let map = ShadowMap::render(light.with_resolution(64), &scene).unwrap();
            let slices = map.view_proj().len() as f32;
            let coord = |rng: &mut penumbra_testkit::Rng| match rng.below_mod(12) {
                0 => rng.f32_special(),
                1 => 1e-40,
                2 => -0.0,
                _ => rng.f32_in(-1.05, 1.05),
            };
            let (mut taps, mut refs) = (Vec::new(), Vec::new());
            let mut sorted = map.sorted();
            let mut calls = Vec::new();
            for _ in 0..500 {
                let z = array_slice(&mut rng, slices);
                let mixed = rng.below_mod(6) == 0;
                let depth = rng.f32_in(-0.1, 1.1);
                let group: Vec<Vec3> = (0..1 + rng.below_mod(20))
                    .map(|_| {
                        let z = if mixed {
                            (rng.f32_unit() * slices).floor()
                        } else {
                            z
                        };
                        Vec3::new(coord(&mut rng), coord(&mut rng), z)
                    })
                    .collect();
                // `sort_grid` routes as `sort_more` does, but lists a grid on one slice once
                // (and adds corners).
                let grid = rng.below_mod(2) == 0;
                if grid {
                    map.sort_grid(&mut sorted, &group, depth);
                } else {
                    map.sort_more(&mut sorted, &group, depth);
                }
                calls.push((grid, group.len()));
                refs.extend(std::iter::repeat_n(depth, group.len()));
                taps.extend(group);
            }
            let what = format!("{:?}", map.light().kind);
            // Each tap's slice in call order: a grid on one slice listed once in `grids`.
            let (mut route, mut taps_routed, mut grids) = (Vec::new(), 0, 0);
            for (grid, n) in calls {
                let whole = grid.then(|| sorted.grids[grids]);
                grids += usize::from(grid);
                match whole {
                    Some((s, m)) if s != super::SCALAR => {
                        assert_eq!(usize::from(m), n);
                        route.extend(std::iter::repeat_n(s, n));
                    }
                    _ => {
                        route.extend_from_slice(&sorted.route[taps_routed..taps_routed + n]);
                        taps_routed += n;
                    }
                }
            }
            assert_eq!(
                (taps_routed, grids),
                (sorted.route.len(), sorted.grids.len())
            );
            assert_same(&sorted, &route, &map.sort_lookups(&taps, &refs), &what);
            assert!(
                sorted.route.iter().any(|&s| s != super::SCALAR)
                    == map.batched_slices().contains(&true),
                "{what}: batched lookups where the map has batches"
            );
        }
    }

    /// `sort_grid_3x3` records what `sort_grid` of the nine taps records, bit for bit: on a
    /// cascaded map, a cube map and a mirrored one (no batch), with coordinates that are
    /// denormal (flushed), ±0, non-finite or past the map, and slices that are whole, between
    /// two, past the last, negative, denormal or NaN, one call after another (the slice cache
    /// carried over).
    #[test]
    fn a_three_by_three_grid_records_as_its_nine_taps() {
        let mut scene = Scene::default();
        scene.add(Occluder::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
        let mut rng = penumbra_testkit::Rng::xorshift64(0x3378_3367);
        for light in sorting_lights() {
            let map = ShadowMap::render(light.with_resolution(64), &scene).unwrap();
            let slices = map.view_proj().len() as f32;
            let coord = |rng: &mut penumbra_testkit::Rng| match rng.below_mod(10) {
                0 => rng.f32_special(),
                1 => 1e-40 * if rng.below_mod(2) == 0 { 1.0 } else { -1.0 },
                2 => -0.0,
                _ => rng.f32_in(-0.05, 1.05),
            };
            let (mut nine, mut grid) = (map.sorted(), map.sorted());
            for round in 0..400 {
                let z = array_slice(&mut rng, slices);
                let u = [0; 3].map(|_| coord(&mut rng));
                let v = [0; 3].map(|_| coord(&mut rng));
                let depth = rng.f32_in(-0.1, 1.1);
                let taps: [Vec3; 9] = std::array::from_fn(|k| Vec3::new(u[k % 3], v[k / 3], z));
                map.sort_grid(&mut nine, &taps, depth);
                map.sort_grid_3x3(&mut grid, z, u, v, depth);
                assert_eq!(
                    nine.bits(),
                    grid.bits(),
                    "{:?}, round {round}: {u:?} {v:?} on {z}",
                    map.light().kind
                );
            }
            assert!(!nine.grids.is_empty());
        }
    }

    /// `skip_zeros` passes over an item's answers only when every one is +0 (not −0, not a
    /// NaN, not 1) and the item made only grids routed whole on at most two slices; it then
    /// moves every cursor as the second pass would, and otherwise moves none.
    #[test]
    fn only_answers_that_are_all_plus_zero_are_passed_over() {
        let mut scene = Scene::default();
        scene.add(Occluder::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
        let light = Light::cascaded(
            Vec3::new(0.3, -1.0, 0.2),
            Vec3::ZERO,
            vec![4.0, 8.0, 16.0],
            1.0,
        );
        let map = ShadowMap::render(light.with_resolution(64), &scene).unwrap();
        let grid = |slice: f32| [Vec3::new(0.4, 0.4, slice), Vec3::new(0.41, 0.41, slice)];
        // Items: two grids on slices 0 and 1; one grid on slice 2; three grids on three
        // slices; one lookup routed by itself.
        let mut sorted = map.sorted();
        let mut ends = Vec::new();
        map.sort_grid(&mut sorted, &grid(0.0), 0.5);
        map.sort_grid(&mut sorted, &grid(1.0), 0.5);
        ends.push(sorted.recorded());
        map.sort_grid(&mut sorted, &grid(2.0), 0.5);
        ends.push(sorted.recorded());
        for z in [0.0, 1.0, 2.0] {
            map.sort_grid(&mut sorted, &grid(z), 0.5);
        }
        ends.push(sorted.recorded());
        map.sort_more(&mut sorted, &[Vec3::new(0.5, 0.5, 0.0)], 0.5);
        ends.push(sorted.recorded());
        let lens: Vec<usize> = sorted.uv.iter().map(Vec::len).collect();
        assert_eq!(lens[..3], [5, 4, 4]);
        let answers = |values: [f32; 13]| super::Answers {
            sorted: &sorted,
            res: values.to_vec(),
            at: vec![0, 5, 9],
            scalar: Vec::new(),
            next_route: 0,
            next_grid: 0,
            next_scalar: 0,
        };
        // Slice 0: items 1, 3, 4; slice 1: items 1, 3; slice 2: items 2, 3.
        let mut a = answers([0.0; 13]);
        assert!(a.skip_zeros(ends[0]));
        assert_eq!((a.at.clone(), a.next_grid), (vec![2, 7, 9], 2));
        assert!(a.skip_zeros(ends[1]));
        assert_eq!((a.at.clone(), a.next_grid), (vec![2, 7, 11], 3));
        assert!(!a.skip_zeros(ends[2]), "three slices");
        assert_eq!((a.at.clone(), a.next_grid), (vec![2, 7, 11], 3));
        let mut out = [1.0; 2];
        for _ in 0..3 {
            a.next_grid(&mut out);
        }
        assert!(!a.skip_zeros(ends[3]), "a lookup routed by itself");
        assert_eq!(a.next_tap().to_bits(), 0);
        for bad in [-0.0, f32::NAN, 1.0, 1e-45] {
            for at in [0, 6, 9] {
                let mut values = [0.0; 13];
                values[at] = bad;
                let mut a = answers(values);
                let first = a.skip_zeros(ends[0]);
                assert_eq!(first, at == 9, "{bad} at {at}");
                if !first {
                    // The second pass takes the item's answers.
                    a.next_grid(&mut out);
                    a.next_grid(&mut out);
                }
                assert_eq!(a.skip_zeros(ends[1]), at != 9, "{bad} at {at}");
            }
        }
    }
}
