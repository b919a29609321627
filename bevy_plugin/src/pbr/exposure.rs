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
    probes
        .par_iter_mut()
        .for_each(|(transform, probe, mut exposure)| {
            if !all && !transform.is_changed() && !probe.is_changed() {
                return;
            }
            let mut shares: Vec<crate::probe::LightExposure> = Vec::new();
            let n = probe.offsets.len().max(1) as f32;
            let normal = probe.normal.unwrap_or(Vec3::ZERO);
            for entry in shadows.lights.values() {
                if entry.camera.is_some() && entry.camera != camera {
                    continue;
                }
                let (mut arrive, mut could) = (0.0, 0.0);
                for &o in &probe.offsets {
                    let p = transform.transform_point(o);
                    let u = entry.unshadowed(p);
                    if u <= 0.0 {
                        continue;
                    }
                    let factor = match view {
                        Some(v) => shadows
                            .factor_of(entry, &v, p, normal, v.filter)
                            .unwrap_or(1.0),
                        None => 1.0,
                    };
                    arrive += u * factor;
                    could += u;
                }
                if could > 0.0 {
                    shares.push(crate::probe::LightExposure {
                        light: entry.light,
                        lit_fraction: arrive / could,
                        irradiance: arrive / n,
                        unshadowed: could / n,
                    });
                }
            }
            let mut next = exposure.clone();
            next.replace_lights(|l| game.contains(&l.light), shares);
            if *exposure != next {
                *exposure = next;
            }
        });
    diagnostics.update_pbr_exposure = start.elapsed();
}
