//! A stealth level built the way a Bevy game is built — `Mesh3d` meshes, a `DirectionalLight`
//! with four cascades, a street lamp (`SpotLight`), a `Camera3d` that follows the player — and
//! bevy_penumbra's `pbr` feature answering from that scene alone: each tick prints the shadow
//! factor Bevy's renderer draws on the player (sun and lamp), the light arriving in lux, and
//! whether the guard sees them past the game's own walls.
//!
//! ```sh
//! cargo run --release --example pbr_stealth      # from the workspace root
//! ```
//!
//! The app is headless (no renderer): bevy_light's cascade system runs through
//! `add_cascade_systems`, which a game with Bevy's `PbrPlugin` already has.

use bevy_app::{App, PostUpdate, TaskPoolPlugin, Update};
use bevy_asset::{AssetApp, AssetPlugin, Assets};
use bevy_camera::{Camera3d, PerspectiveProjection, Projection};
use bevy_ecs::prelude::*;
use bevy_light::{CascadeShadowConfigBuilder, DirectionalLight, ShadowFilteringMethod, SpotLight};
use bevy_mesh::{Mesh, Mesh3d, MeshBuilder, Meshable};
use bevy_penumbra::pbr::{PbrShadows, add_cascade_systems};
use bevy_penumbra::prelude::*;
use bevy_shape::{Cuboid, Plane3d};
use bevy_transform::prelude::*;

/// Simulation steps (0.25 s of game time each).
const TICKS: u32 = 16;

#[derive(Component)]
struct Player;

#[derive(Component)]
struct Sun;

#[derive(Component)]
struct Lamp;

#[derive(Component)]
struct Guard;

#[derive(Resource, Default)]
struct Tick(u32);

fn main() {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin::default(),
        TransformPlugin,
        PenumbraPlugin::default(),
    ))
    .init_asset::<Mesh>()
    .init_resource::<Tick>()
    .add_systems(bevy_app::Startup, build_level)
    .add_systems(Update, (walk, follow_camera).chain())
    .add_systems(PostUpdate, report.after(PenumbraSystems::Query));
    add_cascade_systems(&mut app);
    for _ in 0..TICKS {
        app.update();
    }
}

fn build_level(mut commands: Commands, mut meshes: ResMut<Assets<Mesh>>) {
    let ground = meshes.add(Plane3d::default().mesh().size(60.0, 60.0).build());
    let wall = meshes.add(Mesh::from(Cuboid::new(10.0, 3.0, 0.4)));
    let crate_mesh = meshes.add(Mesh::from(Cuboid::new(1.5, 1.5, 1.5)));
    commands.spawn((Mesh3d(ground), Transform::IDENTITY));
    // A yard: a long wall to the south of the path, a shorter one to the north, crates.
    commands.spawn((Mesh3d(wall.clone()), Transform::from_xyz(0.0, 1.5, 2.0)));
    commands.spawn((
        Mesh3d(wall),
        Transform::from_xyz(-3.0, 1.5, -5.0).with_rotation(Quat::from_rotation_y(0.3)),
    ));
    for (x, z) in [(-6.0, -1.0), (3.5, -1.5), (7.0, 0.8)] {
        commands.spawn((Mesh3d(crate_mesh.clone()), Transform::from_xyz(x, 0.75, z)));
    }
    commands.spawn((
        Sun,
        DirectionalLight {
            shadow_maps_enabled: true,
            illuminance: 10_000.0,
            ..Default::default()
        },
        // A low evening sun from the south-west: the south wall shades the path.
        Transform::IDENTITY.looking_to(Vec3::new(0.45, -0.6, -0.66), Vec3::Y),
        CascadeShadowConfigBuilder {
            num_cascades: 4,
            first_cascade_far_bound: 5.0,
            maximum_distance: 60.0,
            ..Default::default()
        }
        .build(),
    ));
    commands.spawn((
        Lamp,
        SpotLight {
            shadow_maps_enabled: true,
            intensity: 400_000.0,
            range: 18.0,
            outer_angle: 0.6,
            inner_angle: 0.45,
            ..Default::default()
        },
        Transform::from_xyz(5.0, 6.0, 0.0).looking_at(Vec3::new(5.0, 0.0, -0.5), Vec3::Z),
    ));
    let player = commands
        .spawn((
            Player,
            LightProbe::body(1.8),
            SightTarget {
                offset: Vec3::Y * 1.2,
                radius: 0.2,
            },
            Transform::from_xyz(-9.0, 0.0, 0.0),
        ))
        .id();
    commands.spawn((
        Guard,
        Viewer::new(70f32.to_radians(), 20.0).with_targets([player]),
        Transform::from_xyz(9.0, 1.7, -6.0).looking_at(Vec3::new(0.0, 1.0, 0.0), Vec3::Y),
    ));
    commands.spawn((
        Camera3d::default(),
        Projection::Perspective(PerspectiveProjection {
            aspect_ratio: 16.0 / 9.0,
            ..Default::default()
        }),
        ShadowFilteringMethod::Gaussian,
        Transform::from_xyz(-9.0, 4.0, 7.0).looking_at(Vec3::new(-9.0, 0.5, 0.0), Vec3::Y),
    ));
}

/// The player walks east along z = 0 at 1.25 m per tick.
fn walk(mut tick: ResMut<Tick>, mut player: Query<&mut Transform, With<Player>>) {
    tick.0 += 1;
    for mut t in &mut player {
        t.translation.x = -9.0 + 1.25 * tick.0 as f32;
    }
}

/// A third-person camera: behind and above the player, so the cascades move every tick.
fn follow_camera(
    player: Query<&Transform, (With<Player>, Without<Camera3d>)>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    let (Ok(p), Ok(mut c)) = (player.single(), camera.single_mut()) else {
        return;
    };
    *c = Transform::from_translation(p.translation + Vec3::new(-1.0, 4.0, 7.0))
        .looking_at(p.translation + Vec3::Y * 0.8, Vec3::Y);
}

#[allow(clippy::type_complexity)]
fn report(
    tick: Res<Tick>,
    shadows: Res<PbrShadows>,
    player: Query<(&GlobalTransform, &Exposure), With<Player>>,
    sun: Query<Entity, With<Sun>>,
    lamp: Query<Entity, With<Lamp>>,
    guard: Query<&LineOfSight, With<Guard>>,
    camera: Query<Entity, With<Camera3d>>,
) {
    let (Ok((at, exposure)), Ok(sun), Ok(lamp), Ok(camera)) = (
        player.single(),
        sun.single(),
        lamp.single(),
        camera.single(),
    ) else {
        return;
    };
    // The shadow on the player's chest, facing the sky.
    let chest = at.translation() + Vec3::Y * 1.2;
    let factor = |light| {
        shadows
            .shadow_factor(camera, light, chest, Vec3::Y)
            .unwrap_or(f32::NAN)
    };
    let lux = shadows
        .irradiance(camera, chest, Vec3::Y)
        .map_or(f32::NAN, |i| i.total);
    let seen = guard
        .single()
        .is_ok_and(|l| l.sightings().iter().any(|s| s.seen));
    if tick.0 == 1 {
        println!("tick  player x   sun factor  lamp factor   lux at chest  probe lit  guard");
    }
    println!(
        "{:4}  {:8.2}   {:10.3}  {:11.3}   {:12.1}  {:9.3}  {}",
        tick.0,
        at.translation().x,
        factor(sun),
        factor(lamp),
        lux,
        exposure.lit_fraction().unwrap_or(0.0),
        if seen { "sees the player" } else { "-" },
    );
}
