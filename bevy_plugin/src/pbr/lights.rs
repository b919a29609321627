//! The game's lights: bevy_light's directional (per camera, through its cascades), spot and point
//! lights kept in step with [`PbrShadows`] ([`sync_pbr_lights`]), and their maps rendered
//! ([`render_pbr_maps`]).

use std::time::Instant;

use bevy_camera::Camera;
use bevy_ecs::prelude::*;
use bevy_light::{
    CascadeShadowConfig, Cascades, DirectionalLight, DirectionalLightShadowMap, PointLight,
    PointLightShadowMap, ShadowFilteringMethod, SpotLight,
};
use bevy_transform::components::GlobalTransform;
use penumbra_core::shadow::LightId;
use penumbra_core::shadow::pbr::{PbrCascade, PbrDirectional, PbrFilter, PbrPoint, PbrSpot};

use super::{CameraView, PbrLight, PbrModel, PbrShadows};
use crate::shadow::render_all;
use crate::{PenumbraDiagnostics, ShadowSettings};

type DirectionalData = (
    Entity,
    &'static DirectionalLight,
    &'static GlobalTransform,
    Option<&'static CascadeShadowConfig>,
    Option<&'static Cascades>,
);

/// Keeps the game lights of [`PbrShadows`] in step with the world.
#[allow(clippy::too_many_arguments)]
pub fn sync_pbr_lights(
    cameras: Query<(
        Entity,
        &Camera,
        &GlobalTransform,
        Option<&ShadowFilteringMethod>,
    )>,
    directional: Query<DirectionalData>,
    spots: Query<(Entity, &SpotLight, &GlobalTransform)>,
    points: Query<(Entity, &PointLight, &GlobalTransform)>,
    directional_size: Option<Res<DirectionalLightShadowMap>>,
    point_size: Option<Res<PointLightShadowMap>>,
    mut shadows: ResMut<PbrShadows>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::sync_pbr_lights");
    let start = Instant::now();
    let state = &mut *shadows;
    let before = std::mem::take(&mut state.cameras);
    for (entity, camera, transform, filter) in &cameras {
        let filter = match filter.copied().unwrap_or_default() {
            ShadowFilteringMethod::Hardware2x2 => PbrFilter::Hardware2x2,
            ShadowFilteringMethod::Gaussian => PbrFilter::Gaussian,
            ShadowFilteringMethod::Temporal => PbrFilter::Temporal(None),
        };
        state.cameras.insert(
            entity,
            CameraView {
                view_from_world: transform.to_matrix().inverse(),
                filter,
                active: camera.is_active,
            },
        );
    }
    if state.cameras != before {
        state.generation += 1;
    }
    let dir_size = directional_size.map_or(2048, |r| r.size as u32);
    let cube_size = point_size.map_or(1024, |r| r.size as u32);
    let mut seen: Vec<(Entity, Option<Entity>, PbrModel, f32, bool)> = Vec::new();
    for (entity, light, transform, config, cascades) in &directional {
        let model = |overlap_proportion: f32, cascades: Vec<PbrCascade>| {
            PbrModel::Directional(PbrDirectional {
                direction_to_light: *transform.back(),
                depth_bias: light.shadow_depth_bias,
                normal_bias: light.shadow_normal_bias,
                overlap_proportion,
                cascades,
                resolution: dir_size,
            })
        };
        let with_cascades = (config, cascades, light.shadow_maps_enabled);
        let (Some(config), Some(cascades), true) = with_cascades else {
            // No shadow maps: light without shadows, for any camera.
            seen.push((
                entity,
                None,
                model(0.0, Vec::new()),
                light.illuminance,
                false,
            ));
            continue;
        };
        let mut per_camera: Vec<_> = cascades.cascades.iter().collect();
        per_camera.sort_by_key(|(c, _)| **c);
        if per_camera.is_empty() {
            // Shadows on but no camera has cascades yet (no camera, or before bevy_light's
            // first update): unshadowed, as Bevy draws it.
            let unshadowed = model(config.overlap_proportion, Vec::new());
            seen.push((entity, None, unshadowed, light.illuminance, false));
        }
        for (camera, list) in per_camera {
            let cascades = list
                .iter()
                .zip(&config.bounds)
                .map(|(c, &far_bound)| PbrCascade {
                    clip_from_world: c.clip_from_world,
                    texel_size: c.texel_size,
                    far_bound,
                })
                .collect();
            let model = model(config.overlap_proportion, cascades);
            seen.push((entity, Some(*camera), model, light.illuminance, true));
        }
    }
    for (entity, light, transform) in &spots {
        let model = PbrModel::Spot(PbrSpot {
            position: transform.translation(),
            direction: *transform.forward(),
            // As bevy_pbr extracts spot lights: the outer angle below π/2, the inner one
            // inside it.
            outer_angle: light.outer_angle.min(std::f32::consts::FRAC_PI_2 - 1e-4),
            inner_angle: light
                .inner_angle
                .min(light.outer_angle.min(std::f32::consts::FRAC_PI_2 - 1e-4)),
            range: light.range,
            near_z: light.shadow_map_near_z,
            depth_bias: light.shadow_depth_bias,
            normal_bias: light.shadow_normal_bias,
            resolution: dir_size,
        });
        seen.push((
            entity,
            None,
            model,
            light.intensity,
            light.shadow_maps_enabled,
        ));
    }
    for (entity, light, transform) in &points {
        let model = PbrModel::Point(PbrPoint {
            position: transform.translation(),
            range: light.range,
            near_z: light.shadow_map_near_z,
            depth_bias: light.shadow_depth_bias,
            normal_bias: light.shadow_normal_bias,
            resolution: cube_size,
        });
        seen.push((
            entity,
            None,
            model,
            light.intensity,
            light.shadow_maps_enabled,
        ));
    }
    let mut live = std::collections::BTreeSet::new();
    for (light, camera, model, intensity, shadows) in seen {
        let key = (light, camera);
        live.insert(key);
        // A light renders a map when it casts shadows and, for a directional light, has
        // cascades for this camera; otherwise its factor is 1 and the engine holds nothing.
        let shadows =
            shadows && !matches!(&model, PbrModel::Directional(d) if d.cascades.is_empty());
        if let Some(old) = state.lights.get_mut(&key)
            && old.model == model
            && old.shadows == shadows
        {
            if old.intensity != intensity {
                // No new map, but every probe's share changes.
                old.intensity = intensity;
                state.generation += 1;
            }
            continue;
        }
        let id = match state.lights.get(&key) {
            Some(old) => old.id,
            None => {
                state.next_id += 1;
                LightId(state.next_id)
            }
        };
        state.generation += 1;
        if shadows {
            let engine = match &model {
                PbrModel::Directional(d) => d.light(intensity),
                PbrModel::Spot(s) => s.light(intensity),
                PbrModel::Point(p) => p.light(intensity),
            };
            state.lighting.set_light(id, engine);
        } else {
            state.lighting.remove_light(id);
        }
        state.lights.insert(
            key,
            PbrLight {
                light,
                camera,
                model,
                intensity,
                shadows,
                id,
            },
        );
    }
    let gone: Vec<_> = state
        .lights
        .keys()
        .filter(|k| !live.contains(*k))
        .copied()
        .collect();
    for key in gone {
        if let Some(old) = state.lights.remove(&key) {
            state.lighting.remove_light(old.id);
            state.generation += 1;
        }
    }
    diagnostics.sync_pbr += start.elapsed();
}

/// Renders the game lights' maps that changed, side by side on the `ComputeTaskPool`.
pub fn render_pbr_maps(
    shadows: Res<PbrShadows>,
    settings: Res<ShadowSettings>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::render_pbr_maps");
    let start = Instant::now();
    let pending = shadows.lighting.pending_lights();
    let lighting = &shadows.lighting;
    render_all(settings.raster_threads, &pending, |&id, threads| {
        let _ = lighting.map_with_threads(id, threads);
    });
    for id in &pending {
        if let Some(error) = lighting.map_error(*id)
            && let Some(entry) = shadows.lights.values().find(|l| l.id == *id)
        {
            log::error!(
                "bevy_penumbra: the shadow map of {} failed: {error}",
                entry.light
            );
        }
    }
    diagnostics.pbr_maps_rendered = pending.len() as u32;
    diagnostics.render_pbr_maps = start.elapsed();
}
