//! Light probes: how lit is this entity, light by light.
//!
//! A [`LightProbe`] is a handful of points around its entity (offsets in the entity's local
//! space, so they turn and scale with it). In
//! [`PenumbraSystems::Query`] the [`LightProbePlugin`] samples
//! every light's shadow map at those points — with the light's own sampler and PCF kernel, as
//! the game's shadow shader does — and writes the result to the entity's [`Exposure`]:
//!
//! * per light ([`LightExposure`]): the fraction of the light that gets through
//!   (`lit_fraction`), the light that arrives (`irradiance`), and what would arrive with no
//!   occluders (`unshadowed`);
//! * the total over all lights, and the overall [`Exposure::lit_fraction`].
//!
//! The numbers are the engine's exposure
//! ([`exposure_part`](penumbra_core::shadow::exposure_part) defines it): a light
//! counts at points where its unshadowed light (falloff and cone) is above 0, and a point
//! outside the light's map is unshadowed by it. Probes are updated only when they moved,
//! changed, or a shadow map was re-rendered, in parallel on the `ComputeTaskPool`: each task
//! takes a run of probes and hands them to `Lighting::probe_exposures`, which gives all their
//! points to each light's batched comparison path in one call. [`Exposure`] is marked changed
//! only when its value changes.
//!
//! ```
//! use bevy_app::App;
//! use bevy_ecs::prelude::*;
//! use bevy_penumbra::prelude::*;
//! use bevy_transform::prelude::*;
//! use glam::Vec3;
//!
//! let mut app = App::new();
//! app.add_plugins((bevy_app::TaskPoolPlugin::default(), TransformPlugin, PenumbraPlugin::default()));
//! app.world_mut().spawn((Occluder::cuboid(Vec3::new(20.0, 1.0, 20.0)), Transform::from_xyz(0.0, -0.5, 0.0)));
//! app.world_mut().spawn((Occluder::cuboid(Vec3::splat(2.0)), Transform::from_xyz(0.0, 3.0, 0.0)));
//! app.world_mut().spawn((
//!     ShadowLight::directional(1.0).with_resolution(512),
//!     Transform::default().looking_to(Vec3::NEG_Y, Vec3::Z),
//! ));
//! let under = app.world_mut().spawn((LightProbe::point(), Transform::from_xyz(0.0, 0.5, 0.0))).id();
//! let open = app.world_mut().spawn((LightProbe::point(), Transform::from_xyz(6.0, 0.5, 0.0))).id();
//! app.update();
//! assert_eq!(app.world().get::<Exposure>(under).unwrap().total(), 0.0);
//! assert_eq!(app.world().get::<Exposure>(open).unwrap().total(), 1.0);
//! ```

use std::time::Instant;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_tasks::ComputeTaskPool;
use bevy_transform::components::{GlobalTransform, Transform};
use glam::Vec3;
use penumbra_core::shadow::{Exposure as CoreExposure, ProbeSpan};

use crate::shadow::{ShadowMaps, entity_of};
use crate::{PenumbraDiagnostics, PenumbraSystems};

/// Points around an entity where its light is measured.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Transform, Exposure)]
pub struct LightProbe {
    /// Probe points in the entity's local space (transformed by its `GlobalTransform`).
    pub offsets: Vec<Vec3>,
    /// World-space normal of the surface the probe lies on, if any (normal-offset bias).
    pub normal: Option<Vec3>,
}

impl LightProbe {
    /// One point at the entity's origin.
    #[must_use]
    pub fn point() -> LightProbe {
        LightProbe::new([Vec3::ZERO])
    }

    /// Points at these local offsets.
    #[must_use]
    pub fn new(offsets: impl IntoIterator<Item = Vec3>) -> LightProbe {
        LightProbe {
            offsets: offsets.into_iter().collect(),
            normal: None,
        }
    }

    /// A standing body of `height` whose origin is at its feet: ankles, waist, chest and head.
    #[must_use]
    pub fn body(height: f32) -> LightProbe {
        LightProbe::new([0.1, 0.5, 0.75, 0.95].map(|f| Vec3::new(0.0, f * height, 0.0)))
    }

    /// The same points on a surface facing `normal` (world space).
    #[must_use]
    pub fn with_normal(mut self, normal: Vec3) -> LightProbe {
        self.normal = Some(normal);
        self
    }
}

impl Default for LightProbe {
    fn default() -> Self {
        LightProbe::point()
    }
}

/// One light's share of a probe's [`Exposure`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightExposure {
    /// The light's entity.
    pub light: Entity,
    /// The fraction of this light's unshadowed light that arrives, 0 (in its shadow) to 1.
    pub lit_fraction: f32,
    /// Light that arrives (intensity × falloff × cone × lit), averaged over the probe's points.
    pub irradiance: f32,
    /// Light that would arrive with no occluders, averaged over the probe's points.
    pub unshadowed: f32,
}

/// How much light reaches a [`LightProbe`], updated by the [`LightProbePlugin`].
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct Exposure {
    lights: Vec<LightExposure>,
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
    /// no light reaches the probe.
    #[must_use]
    pub fn lit_fraction(&self) -> Option<f32> {
        (self.unshadowed > 0.0).then(|| self.total / self.unshadowed)
    }

    /// Each light that reaches the probe, in entity order.
    #[must_use]
    pub fn lights(&self) -> &[LightExposure] {
        &self.lights
    }

    /// The share of one light, if it reaches the probe.
    #[must_use]
    pub fn light(&self, light: Entity) -> Option<&LightExposure> {
        self.lights.iter().find(|l| l.light == light)
    }

    /// The exposure after replacing the shares of the lights `is_replaced` picks by `shares`
    /// (the game lights of the `pbr` feature, added after the plugin's own): its lights into
    /// `after` (cleared first) and its totals, or `None` when that leaves the exposure as it
    /// is (a NaN total always counts as a change, as `!=` has it). `is_replaced` runs once per
    /// light held.
    #[cfg(feature = "pbr")]
    pub(crate) fn replaced(
        &self,
        is_replaced: impl Fn(&LightExposure) -> bool,
        shares: impl Iterator<Item = LightExposure>,
        after: &mut Vec<LightExposure>,
    ) -> Option<(f32, f32)> {
        after.clear();
        let mut shares = shares.peekable();
        if let ([held], Some(&share)) = (&self.lights[..], shares.peek())
            && held.light == share.light
        {
            let replaced = is_replaced(held);
            if replaced {
                // One light held and its new share given (a game with one sun): unchanged
                // when the share and the totals are, with nothing built to find that out.
                shares.next();
                if shares.peek().is_none() {
                    // Each total summed as the one-element list's `sum` would be (the fold
                    // starts from −0), so the bits match the general path's.
                    let total: f32 = std::iter::once(share.irradiance).sum();
                    let unshadowed: f32 = std::iter::once(share.unshadowed).sum();
                    if share == *held && total == self.total && unshadowed == self.unshadowed {
                        return None;
                    }
                }
            }
            after.push(if replaced { share } else { *held });
        } else {
            after.extend(self.lights.iter().copied().filter(|l| !is_replaced(l)));
        }
        after.extend(shares);
        let total: f32 = after.iter().map(|l| l.irradiance).sum();
        let unshadowed: f32 = after.iter().map(|l| l.unshadowed).sum();
        (after[..] != self.lights[..] || total != self.total || unshadowed != self.unshadowed)
            .then_some((total, unshadowed))
    }

    /// Takes the lights and totals [`Exposure::replaced`] gave.
    #[cfg(feature = "pbr")]
    pub(crate) fn set_lights(&mut self, lights: &[LightExposure], (total, unshadowed): (f32, f32)) {
        self.lights.clear();
        self.lights.extend_from_slice(lights);
        self.total = total;
        self.unshadowed = unshadowed;
    }

    /// The engine's exposure with light handles turned back into entities.
    pub(crate) fn set_from(&mut self, exposure: &CoreExposure) {
        self.lights.clear();
        self.lights.extend(exposure.lights().iter().filter_map(|s| {
            Some(LightExposure {
                light: entity_of(s.light.0)?,
                lit_fraction: s.lit_fraction,
                irradiance: s.irradiance,
                unshadowed: s.unshadowed,
            })
        }));
        self.total = exposure.total();
        self.unshadowed = exposure.unshadowed();
    }
}

impl From<&CoreExposure> for Exposure {
    fn from(exposure: &CoreExposure) -> Self {
        let mut out = Exposure::default();
        out.set_from(exposure);
        out
    }
}

/// Updates every [`Exposure`] (part of [`PenumbraPlugin`](crate::PenumbraPlugin)).
#[derive(Clone, Debug)]
pub struct LightProbePlugin {
    /// The schedule the system runs in.
    pub schedule: InternedScheduleLabel,
}

impl LightProbePlugin {
    /// The plugin for `schedule`.
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        LightProbePlugin {
            schedule: schedule.intern(),
        }
    }
}

impl Default for LightProbePlugin {
    fn default() -> Self {
        LightProbePlugin::new(PostUpdate)
    }
}

impl Plugin for LightProbePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ShadowMaps>()
            .init_resource::<PenumbraDiagnostics>()
            .add_systems(
                self.schedule,
                update_exposure.in_set(PenumbraSystems::Query),
            );
    }

    fn finish(&self, _app: &mut App) {
        crate::plugin::ensure_compute_task_pool();
    }
}

/// Frame-to-frame buffers of [`update_exposure`] (kept to avoid reallocating every frame).
#[derive(Default)]
pub struct ExposureScratch {
    /// World points of the probes being updated, probe after probe.
    points: Vec<Vec3>,
    /// Which probes (in query order) are updated this frame.
    dirty: Vec<bool>,
    /// The updated probes' points.
    probes: Vec<ProbeSpan>,
    /// Their new exposures, as the engine gives them.
    results: Vec<CoreExposure>,
    /// Per-task buffers.
    tasks: Vec<CoreScratch>,
    /// The maps' generation the probes were last computed for.
    generation: Option<u64>,
}

type CoreScratch = penumbra_core::shadow::ExposureScratch;

/// The fewest probes a parallel task takes (fewer, larger tasks waste less on setup; up to four
/// tasks per thread even out the threads).
const MIN_TASK_PROBES: usize = 256;

/// Recomputes the [`Exposure`] of every probe that moved or changed, or of all probes when a
/// shadow map changed. The probes' points are gathered first; then, on the
/// `ComputeTaskPool`, each task hands a run of probes to `Lighting::probe_exposures`; finally
/// the components whose value changed are updated (so `Changed<Exposure>` means a real change).
pub fn update_exposure(
    maps: Res<ShadowMaps>,
    mut probes: Query<(Ref<GlobalTransform>, Ref<LightProbe>, Mut<Exposure>)>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
    mut scratch: Local<ExposureScratch>,
) {
    penumbra_core::zone!("bevy_penumbra::update_exposure");
    let start = Instant::now();
    let lighting = maps.lighting();
    let generation = lighting.light_generation();
    let maps_changed = scratch.generation != Some(generation);
    scratch.generation = Some(generation);
    let ExposureScratch {
        points,
        dirty,
        probes: list,
        results,
        tasks,
        ..
    } = &mut *scratch;
    points.clear();
    dirty.clear();
    list.clear();
    for (transform, probe, _) in &probes {
        let update = maps_changed || transform.is_changed() || probe.is_changed();
        dirty.push(update);
        if update {
            list.push(ProbeSpan {
                start: points.len(),
                len: probe.offsets.len(),
                normal: probe.normal,
            });
            points.extend(probe.offsets.iter().map(|&o| transform.transform_point(o)));
        }
    }
    results.resize_with(list.len(), CoreExposure::default);
    if !list.is_empty() {
        let pool = ComputeTaskPool::get();
        let threads = pool.thread_num().max(1);
        let per_task = list
            .len()
            .div_ceil(4 * threads)
            .max(MIN_TASK_PROBES)
            .min(list.len());
        let count = list.len().div_ceil(per_task);
        if tasks.len() < count {
            tasks.resize_with(count, CoreScratch::default);
        }
        let points = &points[..];
        // No deadline runs here, so the engine cannot be interrupted.
        if count == 1 {
            let _ = lighting.probe_exposures(points, list, results, &mut tasks[0]);
        } else {
            pool.scope(|scope| {
                for ((probes, out), scratch) in list
                    .chunks(per_task)
                    .zip(results.chunks_mut(per_task))
                    .zip(tasks.iter_mut())
                {
                    scope.spawn(async move {
                        let _ = lighting.probe_exposures(points, probes, out, scratch);
                    });
                }
            });
        }
    }
    let mut fresh = results.iter();
    let mut new = Exposure::default();
    // No probe to write (the common frame: nothing of the plugin's lights changed and no probe
    // moved): no second walk over every probe.
    let writes = if list.is_empty() { 0 } else { dirty.len() };
    for ((_, _, mut exposure), &update) in probes.iter_mut().zip(dirty.iter()).take(writes) {
        if update && let Some(result) = fresh.next() {
            new.set_from(result);
            if *exposure != new {
                std::mem::swap(&mut *exposure, &mut new);
            }
        }
    }
    diagnostics.probes_updated = list.len() as u32;
    diagnostics.probe_points = points.len() as u32;
    diagnostics.update_exposure = start.elapsed();
}

#[cfg(all(test, feature = "pbr"))]
mod tests {
    use super::{Exposure, LightExposure};
    use bevy_ecs::entity::Entity;

    /// `Exposure::replaced` as written for any number of lights: the held lights that are not
    /// replaced, then the shares; changed when the list or a total differs.
    fn replaced_by_lists(
        e: &Exposure,
        is_replaced: impl Fn(&LightExposure) -> bool,
        shares: &[LightExposure],
    ) -> (Option<(f32, f32)>, Vec<LightExposure>) {
        let mut after: Vec<LightExposure> = e
            .lights
            .iter()
            .copied()
            .filter(|l| !is_replaced(l))
            .collect();
        after.extend_from_slice(shares);
        let total: f32 = after.iter().map(|l| l.irradiance).sum();
        let unshadowed: f32 = after.iter().map(|l| l.unshadowed).sum();
        let changed = after[..] != e.lights[..] || total != e.total || unshadowed != e.unshadowed;
        (changed.then_some((total, unshadowed)), after)
    }

    /// The shortcut for one light held and its share given (one sun) answers as the lists
    /// do, over random exposures (none, one or more lights; totals that match or not), shares
    /// of the same light or others, equal or not, with NaN, −0 and +0 values: the same
    /// change, the same totals bit for bit, and the same lights when it changed.
    #[test]
    fn one_sun_replaced_as_the_lists_have_it() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x6f6e_6573);
        let light = |n: u32| Entity::from_raw_u32(n).unwrap();
        let value = |rng: &mut penumbra_testkit::Rng| match rng.below_mod(8) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => 0.5,
            _ => rng.f32_unit(),
        };
        let share = |rng: &mut penumbra_testkit::Rng, n: u32| LightExposure {
            light: light(n),
            lit_fraction: value(rng),
            irradiance: value(rng),
            unshadowed: value(rng),
        };
        let mut fast = 0;
        for round in 0..4000 {
            let some = |rng: &mut penumbra_testkit::Rng| -> Vec<LightExposure> {
                (0..rng.below_mod(3))
                    .map(|_| {
                        let n = 1 + rng.below_mod(3) as u32;
                        share(rng, n)
                    })
                    .collect()
            };
            let held = some(&mut rng);
            let mut shares = some(&mut rng);
            if rng.below_mod(2) == 0 && held.len() == 1 {
                // The usual frame: the sun's share again, often unchanged.
                shares = vec![if rng.below_mod(2) == 0 {
                    held[0]
                } else {
                    share(&mut rng, held[0].light.index_u32())
                }];
            }
            let mut e = Exposure {
                lights: held,
                total: 0.0,
                unshadowed: 0.0,
            };
            if rng.below_mod(4) != 0 {
                // Totals that match the lights, as the systems leave them.
                e.total = e.lights.iter().map(|l| l.irradiance).sum();
                e.unshadowed = e.lights.iter().map(|l| l.unshadowed).sum();
            }
            let game = [light(1 + rng.below_mod(3) as u32), light(2)];
            let is_replaced = |l: &LightExposure| game.contains(&l.light);
            let (want, want_after) = replaced_by_lists(&e, is_replaced, &shares);
            let mut after = vec![share(&mut rng, 9)];
            let got = e.replaced(is_replaced, shares.iter().copied(), &mut after);
            let bits = |t: Option<(f32, f32)>| t.map(|(a, b)| (a.to_bits(), b.to_bits()));
            assert_eq!(bits(got), bits(want), "round {round}: {e:?} {shares:?}");
            if got.is_some() {
                let b = |v: &[LightExposure]| {
                    v.iter()
                        .map(|l| (l.light, l.irradiance.to_bits(), l.unshadowed.to_bits()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(b(&after), b(&want_after), "round {round}");
            }
            fast += usize::from(
                e.lights.len() == 1 && shares.len() == 1 && e.lights[0].light == shares[0].light,
            );
        }
        assert!(fast > 500, "{fast} rounds took the shortcut");
    }
}
