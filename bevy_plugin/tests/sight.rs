//! Viewers and line of sight: walls block, range and field of view limit, the component and
//! `ShadowQuery` agree, and eyes re-render only when they or nearby occluders move.

mod support;

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_penumbra::prelude::*;
use bevy_transform::prelude::*;
use glam::Vec3;
use support::*;

fn sight(app: &App, viewer: Entity) -> LineOfSight {
    app.world().get::<LineOfSight>(viewer).unwrap().clone()
}

/// A guard at the origin looking along −z, a wall 4 m ahead (x in −2..2), and targets behind
/// the wall, beside it, behind the guard and beyond its range.
struct Level {
    app: App,
    guard: Entity,
    wall: Entity,
    hidden: Entity,
    visible: Entity,
    behind: Entity,
    far: Entity,
}

fn level() -> Level {
    let mut app = app();
    floor(&mut app);
    let wall = app
        .world_mut()
        .spawn((
            Occluder::cuboid(Vec3::new(4.0, 3.0, 0.5)),
            Transform::from_xyz(0.0, 1.5, -4.0),
        ))
        .id();
    let mut target = |at: Vec3| app.world_mut().spawn(Transform::from_translation(at)).id();
    let hidden = target(Vec3::new(0.0, 1.0, -8.0));
    let visible = target(Vec3::new(5.0, 1.0, -8.0));
    let behind = target(Vec3::new(0.0, 1.0, 5.0));
    let far = target(Vec3::new(8.0, 1.0, -30.0));
    let guard = app
        .world_mut()
        .spawn((
            Viewer::new(100f32.to_radians(), 20.0)
                .with_resolution(256)
                .with_targets([hidden, visible, behind, far]),
            Transform::from_xyz(0.0, 1.6, 0.0),
        ))
        .id();
    Level {
        app,
        guard,
        wall,
        hidden,
        visible,
        behind,
        far,
    }
}

#[test]
fn walls_block_and_field_of_view_and_range_limit() {
    let Level {
        mut app,
        guard,
        hidden,
        visible,
        behind,
        far,
        ..
    } = level();
    app.update();
    let los = sight(&app, guard);
    assert_eq!(los.sightings().len(), 4);
    assert!(!los.sees(hidden));
    assert_eq!(los.get(hidden).unwrap().visible_fraction, 0.0);
    assert!(los.sees(visible));
    assert_eq!(los.get(visible).unwrap().visible_fraction, 1.0);
    assert!(!los.sees(behind), "outside the field of view");
    assert!(!los.sees(far), "beyond range");
}

#[test]
fn removing_the_wall_or_moving_the_target_changes_the_answer() {
    let Level {
        mut app,
        guard,
        wall,
        hidden,
        visible,
        ..
    } = level();
    app.update();
    move_to(&mut app, visible, Vec3::new(0.5, 1.0, -9.0)); // steps behind the wall
    app.update();
    assert!(!sight(&app, guard).sees(visible));
    app.world_mut().despawn(wall);
    app.update();
    assert!(sight(&app, guard).sees(hidden));
    assert!(sight(&app, guard).sees(visible));
}

#[test]
fn a_half_hidden_target_is_partly_visible() {
    let Level {
        mut app,
        guard,
        hidden,
        ..
    } = level();
    // Half a metre wide, centred on the wall's edge.
    app.world_mut().entity_mut(hidden).insert(SightTarget {
        offset: Vec3::ZERO,
        radius: 0.4,
    });
    move_to(&mut app, hidden, Vec3::new(4.0, 1.0, -8.0));
    app.update();
    let s = *sight(&app, guard).get(hidden).unwrap();
    assert!(
        s.visible_fraction > 0.0 && s.visible_fraction < 1.0,
        "{s:?}"
    );
    // The same from ShadowQuery.
    let q = with_query(&mut app, |q| q.visible_fraction(guard, s.point, 0.4));
    assert_eq!(q, Ok(s.visible_fraction));
}

#[test]
fn can_see_agrees_with_line_of_sight() {
    let Level {
        mut app,
        guard,
        hidden,
        visible,
        behind,
        far,
        ..
    } = level();
    app.update();
    let los = sight(&app, guard);
    with_query(&mut app, |q| {
        for target in [hidden, visible, behind, far] {
            let s = los.get(target).unwrap();
            assert_eq!(q.can_see(guard, s.point), Ok(s.seen));
        }
        assert!(matches!(
            q.can_see(guard, Vec3::NAN),
            Err(QueryError::NotFinite(_))
        ));
    });
}

#[test]
fn eyes_rerender_only_when_they_or_nearby_occluders_move() {
    let Level { mut app, guard, .. } = level();
    let other = app
        .world_mut()
        .spawn((
            Viewer::new(1.2, 5.0).with_resolution(64),
            Transform::from_xyz(15.0, 1.6, 15.0),
        ))
        .id();
    app.update();
    assert_eq!(diagnostics(&app).eye_maps_rendered, 2);
    app.update();
    assert_eq!(diagnostics(&app).eye_maps_rendered, 0);
    // The guard turns: its eye only.
    app.world_mut()
        .get_mut::<Transform>(guard)
        .unwrap()
        .rotate_y(0.3);
    app.update();
    assert_eq!(diagnostics(&app).eye_maps_rendered, 1);
    // A box appears behind the other viewer (it looks along −Z) and behind the guard: inside
    // the other's range but outside both views, so neither map is dropped.
    crate_box(&mut app, Vec3::new(17.0, 1.0, 17.0));
    app.update();
    let d = diagnostics(&app);
    assert_eq!((d.eye_maps_rendered, d.total_eye_maps_rendered), (0, 3));
    // A box in front of the other viewer, behind the guard: the other's eye only.
    crate_box(&mut app, Vec3::new(15.0, 1.0, 12.0));
    app.update();
    let d = diagnostics(&app);
    assert_eq!((d.eye_maps_rendered, d.total_eye_maps_rendered), (1, 4));
    assert!(
        app.world()
            .resource::<ShadowMaps>()
            .eye_map(other)
            .is_some()
    );
}

#[test]
fn missing_targets_are_left_out() {
    let Level {
        mut app,
        guard,
        far,
        ..
    } = level();
    app.world_mut().despawn(far);
    app.update();
    let los = sight(&app, guard);
    assert_eq!(los.sightings().len(), 3);
    assert!(los.get(far).is_none());
}
