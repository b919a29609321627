//! The game lights' shares of every [`Exposure`](crate::probe::Exposure)
//! ([`update_pbr_exposure`]).

use std::time::{Duration, Instant};

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::prelude::*;
use bevy_transform::components::GlobalTransform;
use glam::Vec3;

use super::PbrShadows;
use crate::PenumbraDiagnostics;
use crate::shadow::ShadowMaps;

/// Adds the game lights' shares to every [`Exposure`](crate::probe::Exposure), seen from
/// [`PbrShadows::default_camera`]: for every probe when a camera, light, map or occluder
/// changed (or the plugin's own lights did, which rewrites every `Exposure`), else only for
/// probes that moved or changed.
pub fn update_pbr_exposure(
    shadows: Res<PbrShadows>,
    maps: Option<Res<ShadowMaps>>,
    mut probes: Query<(
        Entity,
        Ref<GlobalTransform>,
        Ref<crate::probe::LightProbe>,
        &mut crate::probe::Exposure,
    )>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
    mut last: Local<Option<((u64, u64), u64)>>,
    mut reported: Local<EntityHashSet>,
) {
    penumbra_core::zone!("bevy_penumbra::update_pbr_exposure");
    let start = Instant::now();
    let now = (
        shadows.generation(),
        maps.map_or(0, |m| m.lighting().light_generation()),
    );
    let all = last.replace(now) != Some(now);
    if shadows.lights.is_empty() && reported.is_empty() {
        diagnostics.update_pbr_exposure = Duration::ZERO;
        return;
    }
    let camera = shadows.default_camera();
    let view = camera.and_then(|c| shadows.cameras.get(&c)).copied();
    // The shares replaced: those of the game lights now and of the ones reported before (a
    // light that went away leaves no share behind).
    let current: EntityHashSet = shadows.lights.values().map(|l| l.light).collect();
    let mut game = std::mem::replace(&mut *reported, current.clone());
    game.extend(current);
    let game = &game;
    // The probes to answer, their points (in offset order) and normals.
    let mut todo: Vec<(Entity, usize, usize)> = Vec::new();
    let (mut points, mut normals) = (Vec::new(), Vec::new());
    for (entity, transform, probe, _) in &probes {
        if !all && !transform.is_changed() && !probe.is_changed() {
            continue;
        }
        let first = points.len();
        let normal = probe.normal.unwrap_or(Vec3::ZERO);
        for &o in &probe.offsets {
            points.push(transform.transform_point(o));
            normals.push(normal);
        }
        todo.push((entity, first, probe.offsets.len()));
    }
    // Per light, the points it reaches and their shadow factors, all at once through the
    // map's batched path; then per probe, in offset order, the sums one probe at a time made.
    let mut shares: Vec<Vec<crate::probe::LightExposure>> = vec![Vec::new(); todo.len()];
    let (mut reached, mut reached_normals, mut weights, mut factors) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for entry in shadows.lights.values() {
        if entry.camera.is_some() && entry.camera != camera {
            continue;
        }
        reached.clear();
        reached_normals.clear();
        weights.clear();
        for (&p, &n) in points.iter().zip(&normals) {
            let u = entry.unshadowed(p);
            weights.push(u);
            if u > 0.0 {
                reached.push(p);
                reached_normals.push(n);
            }
        }
        factors.clear();
        factors.resize(reached.len(), 1.0);
        if let Some(v) = &view {
            shadows.factors_of(entry, v, &reached, &reached_normals, &mut factors);
        }
        let mut factor = factors.iter();
        for ((_, first, len), shares) in todo.iter().zip(&mut shares) {
            let (mut arrive, mut could) = (0.0, 0.0);
            for &u in &weights[*first..*first + *len] {
                if u <= 0.0 {
                    continue;
                }
                let f = factor.next().copied().unwrap_or(1.0);
                arrive += u * f;
                could += u;
            }
            if could > 0.0 {
                let n = (*len).max(1) as f32;
                shares.push(crate::probe::LightExposure {
                    light: entry.light,
                    lit_fraction: arrive / could,
                    irradiance: arrive / n,
                    unshadowed: could / n,
                });
            }
        }
    }
    for ((entity, _, _), shares) in todo.into_iter().zip(shares) {
        if let Ok((_, _, _, mut exposure)) = probes.get_mut(entity) {
            let mut next = exposure.clone();
            next.replace_lights(|l| game.contains(&l.light), shares);
            if *exposure != next {
                *exposure = next;
            }
        }
    }
    diagnostics.update_pbr_exposure = start.elapsed();
}
