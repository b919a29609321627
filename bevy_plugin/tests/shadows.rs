//! Shadow maps and exposure through the plugin: shadows where the boxes are, updates the frame
//! something moves, and no re-rendering when nothing does.

mod support;

use bevy_app::PluginGroup;
use bevy_penumbra::prelude::*;
use bevy_penumbra::sight::LineOfSightPlugin;
use bevy_transform::prelude::*;
use glam::Vec3;
use penumbra_core::shadow::ShadowError;
use std::time::Duration;
use support::*;

#[test]
fn probe_under_a_box_is_in_shadow_and_in_the_open_is_lit() {
    let mut app = app();
    floor(&mut app);
    crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    let sun = sun(&mut app);
    let under = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    let open = probe(&mut app, Vec3::new(8.0, 0.5, 0.0));
    app.update();

    let shaded = exposure(&app, under);
    assert_eq!(shaded.total(), 0.0);
    assert_eq!(shaded.lit_fraction(), Some(0.0));
    assert_eq!(shaded.light(sun).unwrap().lit_fraction, 0.0);
    assert_eq!(shaded.light(sun).unwrap().unshadowed, 1.0);
    let lit = exposure(&app, open);
    assert_eq!(lit.total(), 1.0);
    assert_eq!(lit.lit_fraction(), Some(1.0));
}

#[test]
fn moving_the_box_updates_the_answer_the_same_frame() {
    let mut app = app();
    floor(&mut app);
    let box_ = crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    sun(&mut app);
    let under = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    let beside = probe(&mut app, Vec3::new(6.0, 0.5, 0.0));
    app.update();
    assert_eq!(exposure(&app, under).total(), 0.0);
    assert_eq!(exposure(&app, beside).total(), 1.0);

    // Moved in game code between frames; the next update propagates, re-renders and re-queries.
    move_to(&mut app, box_, Vec3::new(6.0, 3.0, 0.0));
    app.update();
    assert_eq!(exposure(&app, under).total(), 1.0);
    assert_eq!(exposure(&app, beside).total(), 0.0);
    // The sun's square still fits the scene: no map is rendered whole again; the tiles the
    // box left and reached are forgotten, and the probes draw again those they read.
    let d = diagnostics(&app);
    assert_eq!(d.shadow_maps_rendered, 0);
    assert!(d.tiles_invalidated > 0, "{d:?}");
    assert!(
        (1..=d.tiles_invalidated).contains(&d.tiles_rendered),
        "{d:?}"
    );
    // The query systems waited for those tiles: that wait is theirs to leave out of
    // query_time, and no more than the systems took.
    let systems = d.update_exposure + d.update_line_of_sight + d.update_pbr_exposure;
    assert!(
        d.tile_wall > Duration::ZERO && d.tile_wall <= systems,
        "{d:?}"
    );
    assert_eq!(d.query_time(), systems - d.tile_wall);
}

#[test]
fn a_static_scene_is_rendered_once() {
    let mut app = app();
    floor(&mut app);
    crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    sun(&mut app);
    app.world_mut().spawn((
        ShadowLight::spot(0.5, 12.0, 20.0).with_resolution(128),
        Transform::from_xyz(4.0, 6.0, 0.0).looking_at(Vec3::new(4.0, 0.0, 0.0), Vec3::Z),
    ));
    app.world_mut().spawn((
        ShadowLight::point(10.0, 20.0).with_resolution(64),
        Transform::from_xyz(-4.0, 3.0, 0.0),
    ));
    probe(&mut app, Vec3::new(1.0, 0.5, 1.0));
    app.update();
    let first = diagnostics(&app);
    assert_eq!(first.shadow_maps_rendered, 3);
    assert_eq!(first.occluders, 2);
    assert_eq!(first.probes_updated, 1);

    for _ in 0..3 {
        app.update();
    }
    let later = diagnostics(&app);
    assert_eq!(later.total_shadow_maps_rendered, 3, "nothing moved");
    assert_eq!(later.shadow_maps_rendered, 0);
    assert_eq!(later.occluders_changed, 0);
    assert_eq!(later.probes_updated, 0, "static probes keep their exposure");
    assert_eq!(later.frames, 4);
}

#[test]
fn writing_the_same_transform_does_not_rerender() {
    let mut app = app();
    floor(&mut app);
    let box_ = crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    let sun = sun(&mut app);
    app.update();
    // Change detection fires, but nothing moved.
    move_to(&mut app, box_, Vec3::new(0.0, 3.0, 0.0));
    app.world_mut()
        .get_mut::<ShadowLight>(sun)
        .unwrap()
        .intensity = 1.0;
    app.update();
    let d = diagnostics(&app);
    assert_eq!(d.occluders_changed, 0);
    assert_eq!(d.shadow_maps_rendered, 0);
}

#[test]
fn an_occluder_change_rerenders_only_the_lights_it_reaches() {
    let mut app = app();
    floor(&mut app);
    let near = crate_box(&mut app, Vec3::new(0.0, 1.0, 0.0));
    let far = crate_box(&mut app, Vec3::new(15.0, 1.0, 15.0));
    let sun = sun(&mut app);
    let lamp = app
        .world_mut()
        .spawn((
            ShadowLight::spot(0.6, 8.0, 10.0).with_resolution(128),
            Transform::from_xyz(0.0, 6.0, 0.0).looking_at(Vec3::ZERO, Vec3::Z),
        ))
        .id();
    // Probes beside both boxes, so both maps draw tiles.
    probe(&mut app, Vec3::new(1.5, 0.5, 1.5));
    probe(&mut app, Vec3::new(16.5, 0.5, 16.5));
    app.update();
    let rendered = |app: &bevy_app::App| diagnostics(app).total_shadow_maps_rendered;
    assert_eq!(rendered(&app), 2);
    let forgotten = |app: &bevy_app::App, light| {
        let maps = app.world().resource::<ShadowMaps>();
        maps.get(light)
            .and_then(|m| m.map().tile_stats())
            .map(|s| s.tiles_invalidated)
    };
    assert_eq!(
        (forgotten(&app, sun), forgotten(&app, lamp)),
        (Some(0), Some(0))
    );

    // Far outside the lamp's range: the sun forgets the tiles the box covers; the lamp keeps
    // everything, and no map is rendered whole again (the sun's square still fits).
    move_to(&mut app, far, Vec3::new(15.0, 1.0, 12.0));
    app.update();
    assert_eq!(rendered(&app), 2);
    assert!(forgotten(&app, sun) > Some(0));
    assert_eq!(forgotten(&app, lamp), Some(0));

    // Inside its range: both forget tiles.
    let sun_before = forgotten(&app, sun);
    move_to(&mut app, near, Vec3::new(1.0, 1.0, 0.0));
    app.update();
    assert_eq!(rendered(&app), 2);
    assert!(forgotten(&app, sun) > sun_before);
    assert!(forgotten(&app, lamp) > Some(0));

    // Moving the lamp renders the lamp's map afresh, only.
    move_to(&mut app, lamp, Vec3::new(0.5, 6.0, 0.0));
    app.update();
    assert_eq!(rendered(&app), 3);
    assert_eq!(diagnostics(&app).shadow_maps_rendered, 1);
    assert_eq!(forgotten(&app, lamp), Some(0));
}

#[test]
fn removing_an_occluder_or_a_light_updates_exposure() {
    let mut app = app();
    floor(&mut app);
    let box_ = crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    let sun = sun(&mut app);
    let under = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    app.update();
    assert_eq!(exposure(&app, under).total(), 0.0);

    app.world_mut().despawn(box_);
    app.update();
    assert_eq!(exposure(&app, under).total(), 1.0);

    app.world_mut().entity_mut(sun).remove::<ShadowLight>();
    app.update();
    let e = exposure(&app, under);
    assert!(e.lights().is_empty());
    assert_eq!(e.lit_fraction(), None);
    assert!(app.world().resource::<ShadowMaps>().is_empty());
}

#[test]
fn exposure_sums_lights_with_falloff_and_reports_each() {
    let mut app = app();
    floor(&mut app);
    crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    let sun = sun(&mut app);
    // A point light beside the box, under its top: it lights the probe the sun cannot.
    let bulb = app
        .world_mut()
        .spawn((
            ShadowLight::point(10.0, 4.0).with_resolution(128),
            Transform::from_xyz(3.0, 1.0, 0.0),
        ))
        .id();
    let under = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    app.update();
    let e = exposure(&app, under);
    assert_eq!(e.lights().len(), 2);
    assert_eq!(e.light(sun).unwrap().lit_fraction, 0.0);
    let share = e.light(bulb).unwrap();
    assert_eq!(share.lit_fraction, 1.0);
    assert!(
        share.unshadowed > 0.0 && share.unshadowed < 4.0,
        "falloff: {share:?}"
    );
    assert_eq!(e.total(), share.irradiance);
    assert!(e.lit_fraction().unwrap() > 0.0 && e.lit_fraction().unwrap() < 1.0);
}

#[test]
fn probe_offsets_follow_the_entity_transform() {
    let mut app = app();
    floor(&mut app);
    crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
    sun(&mut app);
    // Two points 6 m apart along local +x: one under the box, one in the open.
    let e = app
        .world_mut()
        .spawn((
            LightProbe::new([Vec3::ZERO, Vec3::new(6.0, 0.0, 0.0)]),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ))
        .id();
    app.update();
    assert_eq!(exposure(&app, e).total(), 0.5);
    // Turned 180° about y, the second point swings to −x, also in the open.
    app.world_mut().get_mut::<Transform>(e).unwrap().rotation =
        glam::Quat::from_rotation_y(std::f32::consts::PI);
    app.world_mut().get_mut::<Transform>(e).unwrap().translation = Vec3::new(3.0, 0.5, 0.0);
    app.update();
    // Now at x = 3 and x = −3: both out of the box's shadow.
    assert_eq!(exposure(&app, e).total(), 1.0);
    assert_eq!(diagnostics(&app).probes_updated, 1);
}

#[test]
fn an_invalid_light_records_an_error_and_renders_nothing() {
    let mut app = app();
    floor(&mut app);
    let bad = app
        .world_mut()
        .spawn((
            ShadowLight::spot(2.0, 10.0, 1.0),
            Transform::from_xyz(0.0, 5.0, 0.0),
        ))
        .id();
    let p = probe(&mut app, Vec3::new(0.0, 0.5, 0.0));
    app.update();
    let maps = app.world().resource::<ShadowMaps>();
    assert!(maps.get(bad).is_none());
    assert!(matches!(
        maps.error(bad),
        Some(bevy_penumbra::shadow::MapError::Shadow(ShadowError::Light(
            _
        )))
    ));
    assert!(exposure(&app, p).lights().is_empty());

    // Fixing it renders it.
    app.world_mut().get_mut::<ShadowLight>(bad).unwrap().kind = ShadowLightKind::Spot {
        outer_angle: 0.5,
        inner_angle: 0.4,
        range: 10.0,
    };
    app.update();
    let maps = app.world().resource::<ShadowMaps>();
    assert!(maps.get(bad).is_some() && maps.error(bad).is_none());
}

#[test]
fn a_directional_light_waits_for_occluders() {
    let mut app = app();
    let sun = sun(&mut app);
    app.update();
    assert!(matches!(
        app.world().resource::<ShadowMaps>().error(sun),
        Some(bevy_penumbra::shadow::MapError::Shadow(
            ShadowError::EmptyScene
        ))
    ));
    floor(&mut app);
    app.update();
    assert!(app.world().resource::<ShadowMaps>().get(sun).is_some());
}

#[test]
fn sub_plugins_can_be_disabled() {
    let mut app = app_with(
        PenumbraPlugin::default()
            .build()
            .disable::<LineOfSightPlugin>(),
    );
    floor(&mut app);
    sun(&mut app);
    let guard = app
        .world_mut()
        .spawn((Viewer::new(1.5, 10.0), Transform::from_xyz(0.0, 1.0, 0.0)))
        .id();
    app.update();
    assert_eq!(app.world().resource::<ShadowMaps>().eye_map_count(), 0);
    assert_eq!(app.world().resource::<ShadowMaps>().len(), 1);
    let answer = with_query(&mut app, |q| q.can_see(guard, Vec3::new(0.0, 1.0, -3.0)));
    assert_eq!(answer, Err(QueryError::NoEyeMap(guard)));
}

#[test]
fn the_shared_exposure_table_holds_in_bevy() {
    // Outside a light's map the light still counts, unshadowed (issue 14): the same bits as
    // core's and Lua's tests of this table, from the ad-hoc query and from probes.
    let mut app = app();
    table_scene(&mut app);
    let rows: Vec<(Vec3, f32, String)> = table_rows()
        .into_iter()
        .map(|(p, e, why)| (Vec3::from(p), e, why))
        .collect();
    let probes: Vec<bevy_ecs::entity::Entity> = rows.iter().map(|r| probe(&mut app, r.0)).collect();
    app.update();
    for ((p, want, why), probe) in rows.iter().zip(probes) {
        let query = with_query(&mut app, |q| q.exposure(*p)).unwrap_or(0.0);
        assert_eq!(query.to_bits(), want.to_bits(), "{p} ({why}): {query}");
        let component = exposure(&app, probe).total();
        assert_eq!(component.to_bits(), want.to_bits(), "probe {p} ({why})");
    }
}
