//! A small level for the plugin tests: an app with the plugin, a floor, a box, a sun.
#![allow(dead_code)] // each test file uses part of it

use bevy_app::{App, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
use bevy_penumbra::prelude::*;
use bevy_transform::prelude::*;
use glam::Vec3;

/// An app with task pools, transform propagation and the plugin.
pub fn app() -> App {
    app_with(PenumbraPlugin::default())
}

/// An app with task pools, transform propagation and this plugin.
pub fn app_with<M>(plugin: impl bevy_app::Plugins<M>) -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TransformPlugin));
    app.add_plugins(plugin);
    app
}

/// A 40 × 40 floor whose top is y = 0.
pub fn floor(app: &mut App) -> Entity {
    app.world_mut()
        .spawn((
            Occluder::cuboid(Vec3::new(40.0, 1.0, 40.0)),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ))
        .id()
}

/// A 2 × 2 × 2 box centred at `center`.
pub fn crate_box(app: &mut App, center: Vec3) -> Entity {
    app.world_mut()
        .spawn((
            Occluder::cuboid(Vec3::splat(2.0)),
            Transform::from_translation(center),
        ))
        .id()
}

/// A sun shining straight down, 512² map.
pub fn sun(app: &mut App) -> Entity {
    app.world_mut()
        .spawn((
            ShadowLight::directional(1.0).with_resolution(512),
            Transform::default().looking_to(Vec3::NEG_Y, Vec3::Z),
        ))
        .id()
}

/// A one-point probe at `at`.
pub fn probe(app: &mut App, at: Vec3) -> Entity {
    app.world_mut()
        .spawn((LightProbe::point(), Transform::from_translation(at)))
        .id()
}

/// Moves an entity's `Transform`.
pub fn move_to(app: &mut App, entity: Entity, at: Vec3) {
    app.world_mut()
        .get_mut::<Transform>(entity)
        .expect("entity has a Transform")
        .translation = at;
}

/// The entity's exposure.
pub fn exposure(app: &App, entity: Entity) -> Exposure {
    app.world()
        .get::<Exposure>(entity)
        .expect("entity has an Exposure")
        .clone()
}

/// The plugin's diagnostics.
pub fn diagnostics(app: &App) -> PenumbraDiagnostics {
    app.world().resource::<PenumbraDiagnostics>().clone()
}

/// Runs `f` with a `ShadowQuery` on the app's world.
pub fn with_query<R>(app: &mut App, f: impl FnOnce(&ShadowQuery) -> R) -> R {
    let mut state = SystemState::<ShadowQuery>::new(app.world_mut());
    // Every field is an `Option<Res<_>>`, so the parameter is always valid.
    let query = state.get(app.world()).expect("ShadowQuery is always valid");
    f(&query)
}

// `table_rows()`: the shared exposure table `core/tests/data/outside_map.txt`.
include!("../../../core/tests/data/outside_map.rs");

/// A box occluder from `min` to `max` with an identity transform, so its vertices are the
/// corners themselves (the same bits a Lua `scene:addBox(min, max)` gives).
pub fn world_box(app: &mut App, min: Vec3, max: Vec3) -> Entity {
    let mesh = std::sync::Arc::new(penumbra_core::raster::Mesh::cuboid(min, max));
    app.world_mut()
        .spawn((Occluder::mesh(mesh), Transform::IDENTITY))
        .id()
}

/// The table's scene: floor, crate, a bounded sun and a spot lamp (returns the two lights).
pub fn table_scene(app: &mut App) -> (Entity, Entity) {
    world_box(
        app,
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    );
    world_box(app, Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0));
    let bounds = penumbra_core::shadow::Aabb {
        min: Vec3::new(-10.0, -1.0, -10.0),
        max: Vec3::new(10.0, 2.0, 10.0),
    };
    let sun = app
        .world_mut()
        .spawn((
            ShadowLight::directional(0.5)
                .with_resolution(256)
                .with_bounds(bounds),
            Transform::default().looking_to(Vec3::NEG_Y, Vec3::Z),
        ))
        .id();
    let lamp = app
        .world_mut()
        .spawn((
            ShadowLight::spot(30f32.to_radians(), 10.0, 20.0).with_resolution(128),
            Transform::from_xyz(0.0, 6.0, 0.0).looking_to(Vec3::NEG_Y, Vec3::Z),
        ))
        .id();
    (sun, lamp)
}
