//! The flying-camera scene of the `pbr_frame` bench and the `cascade_tiles` example: the
//! benches' 100k-triangle level (`benches/support/level.rs`) as `Mesh3d` entities, a sun with
//! four 2048² cascades, a camera that can fly back and forth, and a square grid of probes.
//!
//! Included with `#[path = ".../bevy_plugin/benches/support/flight.rs"] mod flight;` beside
//! `mod level` (the level's support file), which it reads as `super::level`.

use bevy_app::{App, Update};
use bevy_asset::{AssetApp, AssetPlugin, Assets, RenderAssetUsages};
use bevy_camera::{Camera3d, PerspectiveProjection, Projection};
use bevy_ecs::prelude::*;
use bevy_light::{CascadeShadowConfigBuilder, DirectionalLight};
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology};
use bevy_penumbra::pbr::add_cascade_systems;
use bevy_penumbra::prelude::*;
use bevy_shape::Cuboid;
use bevy_transform::prelude::*;
use glam::{Quat, Vec3};

use super::level::{cuboids, ground_grid, height};

/// Whether the camera flies this frame.
#[derive(Resource)]
pub struct MoveCamera(pub bool);

/// Moves the camera 0.1 m sideways a frame, back and forth over 10 m (x from −5 to 5 m and
/// back), so every frame's cascades change while the probes stay in view: a camera that only
/// went one way would leave the probes behind after a few thousand iterations and the frames
/// criterion times would stop asking for tiles.
fn fly(
    moving: Res<MoveCamera>,
    mut frame: Local<u32>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    if moving.0 {
        *frame = (*frame + 1) % 200;
        let x = (*frame as f32 - 100.0).abs() * 0.1 - 5.0;
        for mut t in &mut camera {
            t.translation.x = x;
        }
    }
}

/// The bench's app with `probes` probes, and penumbra or not.
pub fn app(probes: usize, penumbra: bool) -> App {
    let mut app = App::new();
    app.add_plugins((AssetPlugin::default(), TransformPlugin));
    if penumbra {
        app.add_plugins(PenumbraPlugin::default());
    }
    app.init_asset::<Mesh>()
        .insert_resource(MoveCamera(false))
        .add_systems(Update, fly);
    add_cascade_systems(&mut app);
    let world = app.world_mut();
    let (positions, indices) = ground_grid();
    let ground = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices));
    let mut assets = world.resource_mut::<Assets<Mesh>>();
    let ground = assets.add(ground);
    let cube = assets.add(Mesh::from(Cuboid::new(1.0, 1.0, 1.0)));
    world.spawn((Mesh3d(ground), Transform::IDENTITY));
    for c in cuboids() {
        world.spawn((
            Mesh3d(cube.clone()),
            Transform::from_xyz(c.x, height(c.x, c.z) - 0.1 + c.size.y * 0.5, c.z)
                .with_rotation(Quat::from_rotation_y(c.angle))
                .with_scale(c.size),
        ));
    }
    world.spawn((
        DirectionalLight {
            shadow_maps_enabled: true,
            ..Default::default()
        },
        Transform::IDENTITY.looking_to(Vec3::new(-0.45, -0.77, 0.45), Vec3::Y),
        CascadeShadowConfigBuilder {
            num_cascades: 4,
            maximum_distance: 100.0,
            ..Default::default()
        }
        .build(),
    ));
    world.spawn((
        Camera3d::default(),
        Projection::Perspective(PerspectiveProjection {
            aspect_ratio: 16.0 / 9.0,
            ..Default::default()
        }),
        Transform::from_xyz(0.0, 8.0, 20.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    // Probes on a square grid around the camera's target, 30 m across.
    let side = (probes as f32).sqrt().ceil() as usize;
    for k in 0..probes {
        let (i, j) = ((k % side) as f32, (k / side) as f32);
        let x = -15.0 + 30.0 * i / side as f32;
        let z = -15.0 + 30.0 * j / side as f32;
        world.spawn((
            LightProbe::point().with_normal(Vec3::Y),
            Transform::from_xyz(x, height(x, z) + 0.05, z),
        ));
    }
    app.update();
    app
}
