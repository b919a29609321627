//! The one place probes meet a shadow map: many points, one light.
//!
//! [`lit_fractions`] goes through the core's batched comparison path
//! (`ShadowMap::lit_fractions`, built on `Sampler::cmp_level_zero_batch` with SIMD kernels), which
//! returns the same bits as the scalar `ShadowMap::lit_fraction` for every point.

use glam::Vec3;

use super::LightExposure;
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
        if reach_sum > 0.0 {
            let share = LightExposure {
                light: light.entity(),
                lit_fraction: lit_sum / reach_sum,
                irradiance: lit_sum * inv,
                unshadowed: reach_sum * inv,
            };
            total += share.irradiance;
            unshadowed += share.unshadowed;
            each(share);
        }
    }
    (total, unshadowed)
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
