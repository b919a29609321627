//! The game lights' shares of every [`Exposure`](crate::probe::Exposure)
//! ([`update_pbr_exposure`]).

use std::time::{Duration, Instant};

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::prelude::*;
use bevy_transform::components::GlobalTransform;
use glam::Vec3;

use penumbra_core::shadow::pbr::PbrReceiver;

use super::PbrShadows;
use crate::PenumbraDiagnostics;
use crate::shadow::ShadowMaps;

/// The probes [`update_pbr_exposure`] reads: where they are and what they sample.
type ProbePlaces<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Ref<'static, GlobalTransform>,
        Ref<'static, crate::probe::LightProbe>,
    ),
    With<crate::probe::Exposure>,
>;

/// The exposures [`update_pbr_exposure`] writes: those of the same probes.
type ProbeExposures<'w, 's> = Query<
    'w,
    's,
    (Entity, &'static mut crate::probe::Exposure),
    (With<GlobalTransform>, With<crate::probe::LightProbe>),
>;

/// Adds the game lights' shares to every [`Exposure`](crate::probe::Exposure), seen from
/// [`PbrShadows::default_camera`]: for every probe when a camera, light, map or occluder
/// changed (or the plugin's own lights did, which rewrites every `Exposure`), else only for
/// probes that moved or changed.
pub fn update_pbr_exposure(
    shadows: Res<PbrShadows>,
    maps: Option<Res<ShadowMaps>>,
    probes: ProbePlaces,
    mut exposures: ProbeExposures,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
    mut scratch: Local<PbrExposureScratch>,
) {
    penumbra_core::zone!("bevy_penumbra::update_pbr_exposure");
    let start = Instant::now();
    let now = (
        shadows.generation(),
        maps.map_or(0, |m| m.lighting().light_generation()),
    );
    let all = scratch.last.replace(now) != Some(now);
    if shadows.lights.is_empty() && scratch.reported.is_empty() {
        // Probes may move before the next run, which that run's change ticks would not show.
        scratch.every_probe = false;
        diagnostics.update_pbr_exposure = Duration::ZERO;
        return;
    }
    let camera = shadows.default_camera();
    let view = camera.and_then(|c| shadows.cameras.get(&c)).copied();
    // The shares replaced: those of the game lights now and of the ones reported before (a
    // light that went away leaves no share behind).
    let current: EntityHashSet = shadows.lights.values().map(|l| l.light).collect();
    let same_lights = current == scratch.reported;
    let mut game = std::mem::replace(&mut scratch.reported, current.clone());
    game.extend(current);
    let game = &game;
    let PbrExposureScratch {
        every_probe,
        todo,
        receivers,
        shares,
        last_shares,
        reached,
        weights,
        factors,
        after,
        ..
    } = &mut *scratch;
    // The probes to answer and their receivers: points (in offset order), normals and the
    // camera's view depth (which only a directional light reads; 0 without a camera, when no
    // light is looked up).
    let view_from_world = view.as_ref().map(|v| v.view_from_world);
    let view_z = |point: Vec3| view_from_world.map_or(0.0, |m| m.transform_point3(point).z);
    let kept = all && *every_probe && same_probes(&probes, todo);
    if kept {
        // Every probe as it was when `todo` and `receivers` were made for all of them: their
        // points and normals stand, and only the view depths (the camera may have moved) are
        // worked out again. Reading each probe's offsets again is most of a gathering's time.
        for r in receivers.iter_mut() {
            r.view_z = view_z(r.point);
        }
    } else {
        todo.clear();
        receivers.clear();
        for (entity, transform, probe) in &probes {
            if !all && !transform.is_changed() && !probe.is_changed() {
                continue;
            }
            let first = receivers.len();
            let normal = probe.normal.unwrap_or(Vec3::ZERO);
            for &o in &probe.offsets {
                let point = transform.transform_point(o);
                receivers.push(PbrReceiver {
                    point,
                    normal,
                    view_z: view_z(point),
                });
            }
            todo.push((entity, first, probe.offsets.len()));
        }
        *every_probe = all;
    }
    // Per light, the points it reaches and their shadow factors, all at once through the
    // map's batched path; then per probe, in offset order, the sums one probe at a time made.
    // `shares` holds each answered light's share of every probe, light after light.
    std::mem::swap(shares, last_shares);
    shares.clear();
    for entry in shadows.lights.values() {
        if entry.camera.is_some() && entry.camera != camera {
            continue;
        }
        reached.clear();
        weights.clear();
        match &entry.model {
            // `unshadowed` does not read the point for a sun.
            super::PbrModel::Directional(_) => {
                weights.resize(receivers.len(), entry.unshadowed(Vec3::ZERO));
            }
            _ => weights.extend(receivers.iter().map(|r| entry.unshadowed(r.point))),
        }
        // A light that reaches every point (a sun always does) takes the list as it is.
        let all_reached = weights.iter().all(|&u| u > 0.0);
        if !all_reached {
            reached.extend(
                receivers
                    .iter()
                    .zip(weights.iter())
                    .filter(|&(_, &u)| u > 0.0)
                    .map(|(r, _)| *r),
            );
        }
        let reached: &[PbrReceiver] = if all_reached { receivers } else { reached };
        factors.clear();
        factors.resize(reached.len(), 1.0);
        if let Some(v) = &view {
            shadows.factors_of(entry, v, reached, factors);
        }
        let mut factor = factors.iter();
        shares.extend(todo.iter().map(|(_, first, len)| {
            let (mut arrive, mut could) = (0.0, 0.0);
            for &u in &weights[*first..*first + *len] {
                if u <= 0.0 {
                    continue;
                }
                let f = factor.next().copied().unwrap_or(1.0);
                arrive += u * f;
                could += u;
            }
            (could > 0.0).then(|| {
                // x / 1 is x, bit for bit (a NaN is already quiet): a probe of one point (the
                // common one) skips two of the three divisions.
                let per_point = |x: f32| {
                    if *len == 1 {
                        x
                    } else {
                        x / (*len).max(1) as f32
                    }
                };
                crate::probe::LightExposure {
                    light: entry.light,
                    lit_fraction: arrive / could,
                    irradiance: per_point(arrive),
                    unshadowed: per_point(could),
                }
            })
        }));
    }
    // Written only where it changes, so that change detection sees only those probes. The
    // exposures are walked in the order `todo` was made in (the two queries match the same
    // entities, so they iterate alike; no entity lookups); a probe not met there (none,
    // unless that order changed) is looked up by entity.
    let count = todo.len();
    // The same probes, lights and shares as when the last run wrote or checked them: a probe
    // whose exposure nothing else changed since then, and whose shares are those bit for bit,
    // is as `update` would leave it (its held lights and totals are what that run left), and
    // its exposure is not read (each one's list lies apart on the heap).
    let unchanged = kept && same_lights && last_shares.len() == shares.len();
    let same_shares = |k: usize| {
        let step = count.max(1);
        let bits = |l: &Option<crate::probe::LightExposure>| {
            l.map(|l| {
                (
                    l.light,
                    [l.lit_fraction, l.irradiance, l.unshadowed].map(f32::to_bits),
                )
            })
        };
        // A plain loop: `step_by` would divide to size itself, once per probe.
        let mut i = k;
        while i < shares.len() {
            if bits(&shares[i]) != bits(&last_shares[i]) {
                return false;
            }
            i += step;
        }
        true
    };
    let is_game = |l: &crate::probe::LightExposure| game.contains(&l.light);
    let mut update = |k: usize, exposure: &mut Mut<crate::probe::Exposure>| {
        let mine = shares
            .iter()
            .skip(k)
            .step_by(count.max(1))
            .flatten()
            .copied();
        if let Some(totals) = exposure.replaced(is_game, mine, after) {
            exposure.set_lights(after, totals);
        }
    };
    let mut next = 0;
    for (entity, mut exposure) in &mut exposures {
        if next < count && todo[next].0 == entity {
            if !(unchanged && !exposure.is_changed() && same_shares(next)) {
                update(next, &mut exposure);
            }
            next += 1;
        }
    }
    for (k, (entity, _, _)) in todo.iter().enumerate().skip(next) {
        if let Ok((_, mut exposure)) = exposures.get_mut(*entity) {
            update(k, &mut exposure);
        }
    }
    diagnostics.update_pbr_exposure = start.elapsed();
}

/// Whether `probes` are the probes of `todo`, in its order, none moved or changed since the
/// system last ran.
fn same_probes(probes: &ProbePlaces, todo: &[(Entity, usize, usize)]) -> bool {
    let mut held = todo.iter();
    probes.iter().all(|(entity, transform, probe)| {
        held.next().is_some_and(|&(e, ..)| e == entity)
            && !transform.is_changed()
            && !probe.is_changed()
    }) && held.next().is_none()
}

/// Frame-to-frame buffers of [`update_pbr_exposure`] (kept to avoid reallocating every frame).
#[derive(Default)]
pub struct PbrExposureScratch {
    /// The generations seen last frame (a change answers every probe again).
    last: Option<((u64, u64), u64)>,
    /// The game lights whose shares were written last frame.
    reported: EntityHashSet,
    /// Whether `todo` and `receivers` hold every probe (the last run answered them all).
    every_probe: bool,
    /// The probes answered this frame: entity, first point, point count.
    todo: Vec<(Entity, usize, usize)>,
    /// Their receivers (world points, normals, view depths), probe after probe.
    receivers: Vec<PbrReceiver>,
    /// Each answered light's share of each probe (`None`: the light does not reach it), light
    /// after light.
    shares: Vec<Option<crate::probe::LightExposure>>,
    /// The last run's `shares`.
    last_shares: Vec<Option<crate::probe::LightExposure>>,
    /// One light's receivers when it does not reach every point, every point's unshadowed
    /// weight, and the shadow factors of the receivers it reaches.
    reached: Vec<PbrReceiver>,
    weights: Vec<f32>,
    factors: Vec<f32>,
    /// One probe's lights after the update.
    after: Vec<crate::probe::LightExposure>,
}
