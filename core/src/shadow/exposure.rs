//! Exposure: how much light reaches points and probes, light by light.
//!
//! **The definition** (one, used by every layer): a light's part of the exposure at a point is
//! `Light::unshadowed(point) × lit fraction` — intensity × distance falloff × spot cone, times
//! the PCF lit fraction in the light's map ([`exposure_part`](super::exposure_part)). A point
//! outside every map of a light (outside a directional map's square or depth range, outside
//! every cascade) is unshadowed by it: lit fraction 1, and it still gets the light's falloff
//! and cone. Points behind a spot light, outside its cone or past a spot or point light's range
//! get 0 from the falloff and cone, not from the map.
//!
//! A probe is a few points that stand for one thing (a body: ankles, waist, head). Per light,
//! over the probe's n points with `u` = unshadowed and `f` = lit fraction:
//!
//! * `irradiance` = Σ u·f / n — the light that arrives, averaged;
//! * `unshadowed` = Σ u / n — what would arrive with no occluders;
//! * `lit_fraction` = Σ u·f / Σ u — the share that gets through.
//!
//! A light counts only where `u > 0` at some point of the probe. Lights are summed in handle
//! order; sums over points run in point order, so a one-point probe's total is bit for bit the
//! point's exposure. Lights whose map cannot be rendered are left out (see
//! [`Lighting::map_error`]).

use glam::Vec3;

use super::ShadowError;
use super::lighting::{LightId, Lighting};
use super::map::{Normals, ShadowMap};

/// One light's part of the exposure at `point` — **the** definition of exposure, which
/// [`exposure`], [`Lighting`] and every binding (the Lua scene, the Bevy plugin, the CLI demo)
/// build on: the light that arrives unshadowed (`Light::unshadowed`: intensity × distance
/// falloff × spot cone) times the lit fraction in the light's map.
///
/// * A point outside every map of the light (outside a directional map's square or depth
///   range, outside every cascade, past a spot or point map's far end) is unshadowed by it:
///   lit fraction 1, and it still gets the light's falloff and cone.
/// * Behind a spot light, outside its cone, past a spot or point light's range, or at a
///   non-finite point the falloff and cone give 0 — not the map.
///
/// Probes average this over their points ([`Lighting::probe_exposures`]).
#[must_use]
pub fn exposure_part(map: &ShadowMap, point: Vec3, normal: Option<Vec3>) -> f32 {
    let unshadowed = map.light().unshadowed(point);
    if unshadowed > 0.0 {
        unshadowed * map.lit_fraction(point, normal)
    } else {
        0.0
    }
}

/// The sum over `maps` (in order) of each light's [`exposure_part`] at `point` — how exposed a
/// point (the player) is to all the lights of a level.
#[must_use]
pub fn exposure<'a>(
    maps: impl IntoIterator<Item = &'a ShadowMap>,
    point: Vec3,
    normal: Option<Vec3>,
) -> f32 {
    crate::zone!("penumbra::shadow::exposure");
    maps.into_iter()
        .map(|map| exposure_part(map, point, normal))
        .fold(0.0, |total, part| total + part)
}

/// Points a loop handles between two deadline checks.
const CHECK_EVERY: usize = 4096;

/// One light's share of an [`Exposure`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightShare {
    /// The light.
    pub light: LightId,
    /// The fraction of this light's unshadowed light that arrives, 0 (in its shadow) to 1.
    pub lit_fraction: f32,
    /// Light that arrives (intensity × falloff × cone × lit), averaged over the points.
    pub irradiance: f32,
    /// Light that would arrive with no occluders, averaged over the points.
    pub unshadowed: f32,
}

/// How much light reaches a point or a probe, and from which lights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exposure {
    lights: Vec<LightShare>,
    total: f32,
    unshadowed: f32,
}

impl Exposure {
    /// Light arriving from every light (the sum of their `irradiance`).
    #[must_use]
    pub fn total(&self) -> f32 {
        self.total
    }

    /// Light that would arrive with no occluders.
    #[must_use]
    pub fn unshadowed(&self) -> f32 {
        self.unshadowed
    }

    /// The fraction of the light that could arrive that does (`total / unshadowed`); `None` when
    /// no light reaches.
    #[must_use]
    pub fn lit_fraction(&self) -> Option<f32> {
        (self.unshadowed > 0.0).then(|| self.total / self.unshadowed)
    }

    /// Each light that reaches, in handle order.
    #[must_use]
    pub fn lights(&self) -> &[LightShare] {
        &self.lights
    }

    /// The share of one light, if it reaches.
    #[must_use]
    pub fn light(&self, light: LightId) -> Option<&LightShare> {
        self.lights.iter().find(|l| l.light == light)
    }
}

/// One probe of [`Lighting::probe_exposures`]: its points in the shared point list and the
/// normal of the surface it lies on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeSpan {
    /// Index of the probe's first point.
    pub start: usize,
    /// Number of points.
    pub len: usize,
    /// Surface normal (normal-offset bias), if any.
    pub normal: Option<Vec3>,
}

/// Reusable buffers of [`Lighting::probe_exposures`] and [`Lighting::exposures`].
#[derive(Debug, Default)]
pub struct ExposureScratch {
    sums: Vec<(f32, f32)>,
    reached: Vec<Vec3>,
    weight: Vec<f32>,
    owner: Vec<usize>,
    lit: Vec<f32>,
}

/// Normals compared to the bit (`==` would group −0 with +0, and NaN with nothing).
fn normal_bits(n: Option<Vec3>) -> Option<[u32; 3]> {
    n.map(|v| v.to_array().map(f32::to_bits))
}

impl Lighting {
    /// The light's map for a query that needs it: `None` (left out) when it cannot be
    /// rendered, an error only when the deadline stopped it.
    fn query_map(&self, id: LightId) -> Result<Option<&super::ShadowMap>, ShadowError> {
        match self.map(id) {
            Ok(map) => Ok(Some(map)),
            Err(ShadowError::Interrupted) => Err(ShadowError::Interrupted),
            Err(_) => Ok(None),
        }
    }

    /// The lit fractions of `reached` in light `id`'s map with `normal`, into `lit`; false when
    /// the light is left out (its map cannot be rendered).
    fn lit_of(
        &self,
        id: LightId,
        reached: &[Vec3],
        normal: Option<Vec3>,
        lit: &mut Vec<f32>,
    ) -> Result<bool, ShadowError> {
        let Some(map) = self.query_map(id)? else {
            return Ok(false);
        };
        lit.clear();
        lit.resize(reached.len(), 0.0);
        for (p, o) in reached.chunks(CHECK_EVERY).zip(lit.chunks_mut(CHECK_EVERY)) {
            crate::deadline::check().map_err(|_| ShadowError::Interrupted)?;
            super::tiles::take_skipped();
            map.lit_fractions(p, normal, o);
            // Tiles left undrawn by the deadline: these answers are not the map's.
            if super::tiles::take_skipped() {
                return Err(ShadowError::Interrupted);
            }
        }
        Ok(true)
    }

    /// The lights whose unshadowed light is above 0 at one of `points` — the maps an exposure
    /// query of these points renders (a host that charges memory for maps can do so first).
    #[must_use]
    pub fn lights_reaching(&self, points: &[Vec3]) -> Vec<LightId> {
        self.lights()
            .filter(|(_, light)| {
                let falloff = light.falloff();
                points.iter().any(|&p| falloff.at(p) > 0.0)
            })
            .map(|(id, _)| id)
            .collect()
    }

    /// The exposure at one point, with each light's share.
    ///
    /// # Errors
    /// [`ShadowError::Interrupted`] when the deadline passes.
    pub fn exposure(&self, point: Vec3, normal: Option<Vec3>) -> Result<Exposure, ShadowError> {
        self.probe_exposure(&[point], normal)
    }

    /// The exposure of a probe made of `points` on a surface facing `normal`.
    ///
    /// # Errors
    /// As [`Lighting::exposure`].
    pub fn probe_exposure(
        &self,
        points: &[Vec3],
        normal: Option<Vec3>,
    ) -> Result<Exposure, ShadowError> {
        let mut out = [Exposure::default()];
        let probe = ProbeSpan {
            start: 0,
            len: points.len(),
            normal,
        };
        self.probe_exposures(points, &[probe], &mut out, &mut ExposureScratch::default())?;
        let [exposure] = out;
        Ok(exposure)
    }

    /// The exposure of many probes at once, into `out` (one per probe). Per light, the points
    /// of runs of probes with the same normal go to the map's batched path in one call; the
    /// sums are the same bits as [`Lighting::probe_exposure`] of each probe.
    ///
    /// # Errors
    /// As [`Lighting::exposure`].
    ///
    /// # Panics
    /// If `out` is shorter than `probes`, or a probe's points lie outside `points`.
    pub fn probe_exposures(
        &self,
        points: &[Vec3],
        probes: &[ProbeSpan],
        out: &mut [Exposure],
        scratch: &mut ExposureScratch,
    ) -> Result<(), ShadowError> {
        crate::zone!("penumbra::Lighting::probe_exposures");
        let n = probes.len();
        let out = &mut out[..n];
        let lights = self.light_count();
        let ExposureScratch {
            sums,
            reached,
            weight,
            owner,
            lit,
        } = scratch;
        sums.clear();
        sums.resize(lights * n, (0.0, 0.0));
        for (l, (id, light)) in self.lights().enumerate() {
            let sums = &mut sums[l * n..][..n];
            let mut first = 0;
            while first < n {
                let normal = probes[first].normal;
                let mut end = first + 1;
                while end < n && normal_bits(probes[end].normal) == normal_bits(normal) {
                    end += 1;
                }
                reached.clear();
                weight.clear();
                owner.clear();
                let falloff = light.falloff();
                for (i, probe) in probes[first..end].iter().enumerate() {
                    for &point in &points[probe.start..][..probe.len] {
                        let u = falloff.at(point);
                        if u > 0.0 {
                            reached.push(point);
                            weight.push(u);
                            owner.push(first + i);
                        }
                    }
                }
                first = end;
                if reached.is_empty() {
                    continue;
                }
                if !self.lit_of(id, reached, normal, lit)? {
                    continue;
                }
                for ((&w, &f), &i) in weight.iter().zip(lit.iter()).zip(owner.iter()) {
                    let s = &mut sums[i];
                    s.0 += w * f;
                    s.1 += w;
                }
            }
        }
        let ids: Vec<LightId> = self.lights().map(|(id, _)| id).collect();
        for (i, (probe, exposure)) in probes.iter().zip(out).enumerate() {
            exposure.lights.clear();
            let (mut total, mut unshadowed) = (0.0f32, 0.0f32);
            if probe.len > 0 {
                let inv = 1.0 / probe.len as f32;
                for (l, &id) in ids.iter().enumerate() {
                    let (lit_sum, reach_sum) = sums[l * n + i];
                    if reach_sum > 0.0 {
                        let share = LightShare {
                            light: id,
                            lit_fraction: lit_sum / reach_sum,
                            irradiance: lit_sum * inv,
                            unshadowed: reach_sum * inv,
                        };
                        total += share.irradiance;
                        unshadowed += share.unshadowed;
                        exposure.lights.push(share);
                    }
                }
            }
            exposure.total = total;
            exposure.unshadowed = unshadowed;
        }
        Ok(())
    }

    /// The exposure (total over lights) at every point into `out`, with the receivers'
    /// `normals`: the same bits as [`Lighting::exposure`]`(point).total()` for each.
    ///
    /// # Errors
    /// As [`Lighting::exposure`].
    ///
    /// # Panics
    /// If `out`, or a per-point `normals` slice, is shorter than `points`.
    pub fn exposures<'n>(
        &self,
        points: &[Vec3],
        normals: impl Into<Normals<'n>>,
        out: &mut [f32],
        scratch: &mut ExposureScratch,
    ) -> Result<(), ShadowError> {
        crate::zone!("penumbra::Lighting::exposures");
        let normals = normals.into();
        let out = &mut out[..points.len()];
        if let Normals::Each(n) = normals {
            assert!(
                n.len() >= points.len(),
                "{} normals for {} points",
                n.len(),
                points.len()
            );
        }
        out.fill(0.0);
        let ExposureScratch {
            reached,
            weight,
            owner,
            lit,
            ..
        } = scratch;
        for (id, light) in self.lights() {
            let mut first = 0;
            while first < points.len() {
                // Runs of points with the same normal share one batched call.
                let normal = normals.get(first);
                let mut end = first + 1;
                if let Normals::Each(_) = normals {
                    while end < points.len() && normal_bits(normals.get(end)) == normal_bits(normal)
                    {
                        end += 1;
                    }
                } else {
                    end = points.len();
                }
                reached.clear();
                weight.clear();
                owner.clear();
                let falloff = light.falloff();
                for (k, &p) in points.iter().enumerate().take(end).skip(first) {
                    let u = falloff.at(p);
                    if u > 0.0 {
                        reached.push(p);
                        weight.push(u);
                        owner.push(k);
                    }
                }
                first = end;
                if reached.is_empty() {
                    continue;
                }
                if !self.lit_of(id, reached, normal, lit)? {
                    continue;
                }
                for ((&u, &f), &k) in weight.iter().zip(lit.iter()).zip(owner.iter()) {
                    // As a one-point probe: (0 + u·f) · 1.
                    out[k] += u * f;
                }
            }
        }
        Ok(())
    }
}
