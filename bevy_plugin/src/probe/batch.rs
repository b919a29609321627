//! The one place probes meet a shadow map: many points, one light.
//!
//! [`lit_fractions`] goes through the core's batched comparison path
//! (`ShadowMap::lit_fractions`, built on `Sampler::cmp_level_zero_batch` with SIMD kernels), which
//! returns the same bits as the scalar `ShadowMap::lit_fraction` for every point.

use glam::Vec3;

use super::{Exposure, LightExposure};
use crate::shadow::{LightMap, ShadowMaps};

/// Points handed to [`lit_fractions`] at a time; probes with more points go in several calls.
pub const BATCH: usize = 16;

/// The lit fraction of each of `points` in `light`'s map with the light's PCF kernel, into
/// `out` (same length; receivers facing `normal` get the normal-offset bias).
pub fn lit_fractions(light: &LightMap, points: &[Vec3], normal: Option<Vec3>, out: &mut [f32]) {
    debug_assert_eq!(points.len(), out.len());
    light
        .map()
        .lit_fractions(points, normal, light.light().kernel, out);
}

/// Light at a probe of `points` from every map: for each light that reaches at least one point,
/// `each(light)` with the light's share; returns (total, unshadowed) averaged over the points.
///
/// Per light, `lit_fraction` = Σ reach·lit / Σ reach over the points it reaches, `irradiance` =
/// Σ reach·lit / n, `unshadowed` = Σ reach / n. Lights are summed in entity order, so the
/// component and [`ShadowQuery`](crate::query::ShadowQuery) give the same bits.
pub(crate) fn evaluate(
    maps: &ShadowMaps,
    points: &[Vec3],
    normal: Option<Vec3>,
    mut each: impl FnMut(LightExposure),
) -> (f32, f32) {
    let (mut total, mut unshadowed) = (0.0f32, 0.0f32);
    if points.is_empty() {
        return (total, unshadowed);
    }
    let inv = 1.0 / points.len() as f32;
    for light in maps.iter() {
        let (lit_sum, reach_sum) = light_sums(light, points, normal);
        if let Some(share) = share(light, lit_sum, reach_sum, inv) {
            total += share.irradiance;
            unshadowed += share.unshadowed;
            each(share);
        }
    }
    (total, unshadowed)
}

/// A light's share of a probe from its sums over the probe's points (`inv` = 1 / points), or
/// `None` when it reaches none of them.
#[inline]
fn share(light: &LightMap, lit_sum: f32, reach_sum: f32, inv: f32) -> Option<LightExposure> {
    (reach_sum > 0.0).then(|| LightExposure {
        light: light.entity(),
        lit_fraction: lit_sum / reach_sum,
        irradiance: lit_sum * inv,
        unshadowed: reach_sum * inv,
    })
}

/// One probe of a [`evaluate_many`] call: its points in the shared point list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProbePoints {
    pub start: usize,
    pub len: usize,
    pub normal: Option<Vec3>,
}

/// Reusable buffers of [`evaluate_many`].
#[derive(Default)]
pub(crate) struct ManyScratch {
    sums: Vec<(f32, f32)>,
    reached: Vec<Vec3>,
    weight: Vec<f32>,
    owner: Vec<usize>,
    lit: Vec<f32>,
}

/// [`evaluate`] for many probes at once, into `out` (one [`Exposure`] per probe): per light,
/// the points of every probe (runs of probes with the same normal) go to the batched path in
/// one call instead of one call per probe. The sums run over each probe's points in order and
/// over lights in entity order, exactly as in `evaluate`, so the bits are the same.
pub(crate) fn evaluate_many(
    maps: &ShadowMaps,
    points: &[Vec3],
    probes: &[ProbePoints],
    out: &mut [Exposure],
    scratch: &mut ManyScratch,
) {
    debug_assert_eq!(probes.len(), out.len());
    let n = probes.len();
    let lights = maps.len();
    let ManyScratch {
        sums,
        reached,
        weight,
        owner,
        lit,
    } = scratch;
    sums.clear();
    sums.resize(lights * n, (0.0, 0.0));
    for (l, light) in maps.iter().enumerate() {
        let sums = &mut sums[l * n..][..n];
        let mut first = 0;
        while first < n {
            let normal = probes[first].normal;
            let mut end = first + 1;
            // Same normal to the bit (`==` would group −0 with +0, and NaN with nothing).
            let bits = |n: Option<Vec3>| n.map(|v| v.to_array().map(f32::to_bits));
            while end < n && bits(probes[end].normal) == bits(normal) {
                end += 1;
            }
            reached.clear();
            weight.clear();
            owner.clear();
            for (i, probe) in probes[first..end].iter().enumerate() {
                for &point in &points[probe.start..][..probe.len] {
                    let reach = light.reach(point);
                    if reach > 0.0 {
                        reached.push(point);
                        weight.push(reach);
                        owner.push(first + i);
                    }
                }
            }
            lit.clear();
            lit.resize(reached.len(), 0.0);
            lit_fractions(light, reached, normal, lit);
            for ((&w, &f), &i) in weight.iter().zip(lit.iter()).zip(owner.iter()) {
                let s = &mut sums[i];
                s.0 += w * f;
                s.1 += w;
            }
            first = end;
        }
    }
    for (i, (probe, exposure)) in probes.iter().zip(out).enumerate() {
        exposure.lights.clear();
        let (mut total, mut unshadowed) = (0.0f32, 0.0f32);
        if probe.len > 0 {
            let inv = 1.0 / probe.len as f32;
            for (l, light) in maps.iter().enumerate() {
                let (lit_sum, reach_sum) = sums[l * n + i];
                if let Some(share) = share(light, lit_sum, reach_sum, inv) {
                    total += share.irradiance;
                    unshadowed += share.unshadowed;
                    exposure.lights.push(share);
                }
            }
        }
        exposure.total = total;
        exposure.unshadowed = unshadowed;
    }
}

/// (Σ reach·lit, Σ reach) over the points `light` reaches.
fn light_sums(light: &LightMap, points: &[Vec3], normal: Option<Vec3>) -> (f32, f32) {
    let (mut lit_sum, mut reach_sum) = (0.0f32, 0.0f32);
    for chunk in points.chunks(BATCH) {
        let mut reached = [Vec3::ZERO; BATCH];
        let mut weight = [0.0f32; BATCH];
        let mut n = 0;
        for &point in chunk {
            let reach = light.reach(point);
            if reach > 0.0 {
                reached[n] = point;
                weight[n] = reach;
                n += 1;
            }
        }
        if n == 0 {
            continue;
        }
        let mut lit = [0.0f32; BATCH];
        lit_fractions(light, &reached[..n], normal, &mut lit[..n]);
        for k in 0..n {
            lit_sum += weight[k] * lit[k];
            reach_sum += weight[k];
        }
    }
    (lit_sum, reach_sum)
}
