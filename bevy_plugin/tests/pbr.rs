//! The `pbr` feature reading a game's own scene: which meshes cast, culling, asset changes,
//! lights coming and going, bad input, and the components (Exposure, LineOfSight) on the game's
//! meshes and lights.

use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::{AssetApp, AssetPlugin, Assets, Handle, RenderAssetUsages};
use bevy_camera::visibility::InheritedVisibility;
use bevy_camera::{Camera3d, PerspectiveProjection, Projection};
use bevy_ecs::prelude::*;
use bevy_light::{
    CascadeShadowConfig, CascadeShadowConfigBuilder, DirectionalLight, NotShadowCaster, PointLight,
    ShadowFilteringMethod, SpotLight,
};
use bevy_mesh::{Indices, Mesh, Mesh3d, MeshBuilder, Meshable, PrimitiveTopology};
use bevy_penumbra::pbr::{PbrError, PbrShadows, ShadowCull, add_cascade_systems, triangles_of};
use bevy_penumbra::penumbra_core::raster::CullMode;
use bevy_penumbra::penumbra_core::shadow::pbr::{PbrFilter, TemporalPixel};
use bevy_penumbra::prelude::*;
use bevy_shape::{Cuboid, Plane3d};
use bevy_transform::prelude::*;

struct Yard {
    app: App,
    sun: Entity,
    camera: Entity,
    crate_entity: Entity,
    crate_mesh: Handle<Mesh>,
}

/// Ground, one 2 m crate at the origin, a sun from straight above (tilted a little towards +z),
/// a camera looking at the crate.
fn yard() -> Yard {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin::default(),
        TransformPlugin,
        PenumbraPlugin::default(),
    ))
    .init_asset::<Mesh>();
    add_cascade_systems(&mut app);
    let world = app.world_mut();
    let mut meshes = world.resource_mut::<Assets<Mesh>>();
    let ground = meshes.add(Plane3d::default().mesh().size(40.0, 40.0).build());
    let crate_mesh = meshes.add(Mesh::from(Cuboid::new(2.0, 2.0, 2.0)));
    world.spawn((Mesh3d(ground), Transform::IDENTITY));
    let crate_entity = world
        .spawn((
            Mesh3d(crate_mesh.clone()),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ))
        .id();
    let sun = world
        .spawn((
            DirectionalLight {
                shadow_maps_enabled: true,
                ..Default::default()
            },
            Transform::IDENTITY.looking_to(Vec3::new(0.0, -1.0, 0.2), Vec3::Y),
            CascadeShadowConfigBuilder::default().build(),
        ))
        .id();
    let camera = world
        .spawn((
            Camera3d::default(),
            Projection::Perspective(PerspectiveProjection::default()),
            ShadowFilteringMethod::Hardware2x2,
            Transform::from_xyz(0.0, 6.0, 12.0).looking_at(Vec3::ZERO, Vec3::Y),
        ))
        .id();
    app.update();
    Yard {
        app,
        sun,
        camera,
        crate_entity,
        crate_mesh,
    }
}

/// On the ground just past the crate's +z side, in its shadow.
const BEHIND: Vec3 = Vec3::new(0.0, 0.0, 1.2);
/// On the open ground.
const OPEN: Vec3 = Vec3::new(6.0, 0.0, 3.0);

/// A point probe facing up at `at`.
fn probe_at(world: &mut World, at: Vec3) -> Entity {
    let probe = LightProbe::point().with_normal(Vec3::Y);
    world.spawn((probe, Transform::from_translation(at))).id()
}

impl Yard {
    fn factor(&self, point: Vec3) -> f32 {
        self.app
            .world()
            .resource::<PbrShadows>()
            .shadow_factor(self.camera, self.sun, point, Vec3::Y)
            .unwrap()
    }
}

#[test]
fn game_meshes_cast_bevy_shadows() {
    let y = yard();
    assert_eq!(y.factor(BEHIND), 0.0);
    assert_eq!(y.factor(OPEN), 1.0);
    assert_eq!(y.app.world().resource::<PbrShadows>().occluder_count(), 2);
}

#[test]
fn not_shadow_caster_and_hidden_meshes_cast_nothing_until_they_do_again() {
    let mut y = yard();
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .insert(NotShadowCaster);
    y.app.update();
    assert_eq!(y.factor(BEHIND), 1.0, "NotShadowCaster");
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .remove::<NotShadowCaster>();
    y.app.update();
    assert_eq!(y.factor(BEHIND), 0.0, "casting again");
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .insert(InheritedVisibility::HIDDEN);
    y.app.update();
    assert_eq!(y.factor(BEHIND), 1.0, "hidden");
    // A few frames with nothing changed in between: only what changes is looked at again.
    y.app.update();
    y.app.update();
    assert_eq!(y.factor(BEHIND), 1.0, "still hidden");
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .insert(InheritedVisibility::VISIBLE);
    y.app.update();
    assert_eq!(y.factor(BEHIND), 0.0, "visible again");
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .insert(NotShadowCaster);
    y.app.update();
    y.app.update();
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .remove::<NotShadowCaster>();
    y.app.update();
    assert_eq!(y.factor(BEHIND), 0.0, "casting again after quiet frames");
    y.app.world_mut().entity_mut(y.crate_entity).despawn();
    y.app.update();
    assert_eq!(y.factor(BEHIND), 1.0, "despawned");
    assert_eq!(y.app.world().resource::<PbrShadows>().occluder_count(), 1);
}

#[test]
fn back_faces_are_culled_unless_shadow_cull_says_otherwise() {
    let mut y = yard();
    y.app.world_mut().entity_mut(y.crate_entity).despawn();
    // A one-sided roof at 3 m whose front faces the ground (turned upside down): the sun sees
    // its back, which StandardMaterial's default culls.
    let roof = y
        .app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Plane3d::default().mesh().size(4.0, 4.0).build());
    let roof = y
        .app
        .world_mut()
        .spawn((
            Mesh3d(roof),
            Transform::from_xyz(0.0, 3.0, 0.0)
                .with_rotation(Quat::from_rotation_x(std::f32::consts::PI)),
        ))
        .id();
    y.app.update();
    let under = Vec3::new(0.0, 0.0, 0.6);
    assert_eq!(y.factor(under), 1.0, "back face culled");
    y.app.world_mut().entity_mut(roof).insert(ShadowCull(None));
    y.app.update();
    assert_eq!(y.factor(under), 0.0, "double-sided");
    y.app
        .world_mut()
        .entity_mut(roof)
        .insert(ShadowCull(Some(CullMode::Front)));
    y.app.update();
    assert_eq!(y.factor(under), 0.0, "front faces culled: the back casts");
}

#[test]
fn a_changed_mesh_asset_is_read_again() {
    let mut y = yard();
    assert_eq!(
        y.factor(Vec3::new(0.0, 0.0, 1.9)),
        1.0,
        "past the 2 m crate's shadow"
    );
    let taller = Mesh::from(Cuboid::new(2.0, 8.0, 2.0));
    *y.app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .get_mut(&y.crate_mesh)
        .unwrap() = taller;
    y.app.update();
    y.app.update();
    assert_eq!(
        y.factor(Vec3::new(0.0, 0.0, 1.9)),
        0.0,
        "the 8 m crate's shadow"
    );
}

#[test]
fn a_mesh_only_in_the_render_world_is_skipped() {
    let mut y = yard();
    let mut mesh = Mesh::from(Cuboid::new(2.0, 2.0, 2.0));
    let _gpu = mesh.take_gpu_data().unwrap();
    let handle = y.app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh);
    y.app
        .world_mut()
        .spawn((Mesh3d(handle), Transform::from_xyz(6.0, 1.0, 2.0)));
    y.app.update();
    y.app.update();
    assert_eq!(y.factor(OPEN), 1.0, "no shadow from the extracted mesh");
    assert_eq!(y.app.world().resource::<PbrShadows>().occluder_count(), 2);
}

#[test]
fn strips_u16_and_unindexed_meshes_become_triangles() {
    let quad = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 0.0, -1.0],
        [1.0, 0.0, -1.0],
    ];
    let strip = Mesh::new(
        PrimitiveTopology::TriangleStrip,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, quad.to_vec())
    .with_inserted_indices(Indices::U16(vec![0, 1, 2, 3]));
    let m = triangles_of(&strip).unwrap().unwrap();
    // The second triangle of a strip keeps the winding: (2, 1, 3) read as (1, 2, 3) flipped.
    assert_eq!(m.indices(), &[0, 1, 2, 2, 1, 3]);
    let list = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, quad[..3].to_vec());
    assert_eq!(triangles_of(&list).unwrap().unwrap().indices(), &[0, 1, 2]);
    let lines = Mesh::new(PrimitiveTopology::LineList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, quad.to_vec());
    assert!(triangles_of(&lines).unwrap().is_none());
}

#[test]
fn unknown_entities_and_bad_points_are_errors_and_removed_lights_go() {
    let mut y = yard();
    let shadows = y.app.world().resource::<PbrShadows>();
    assert_eq!(
        shadows.shadow_factor(y.sun, y.sun, OPEN, Vec3::Y),
        Err(PbrError::UnknownCamera(y.sun))
    );
    assert_eq!(
        shadows.shadow_factor(y.camera, y.camera, OPEN, Vec3::Y),
        Err(PbrError::UnknownLight(y.camera))
    );
    assert!(matches!(
        shadows.shadow_factor(y.camera, y.sun, Vec3::NAN, Vec3::Y),
        Err(PbrError::NotFinite(..))
    ));
    y.app.world_mut().entity_mut(y.sun).despawn();
    y.app.update();
    let shadows = y.app.world().resource::<PbrShadows>();
    assert_eq!(
        shadows.shadow_factor(y.camera, y.sun, OPEN, Vec3::Y),
        Err(PbrError::UnknownLight(y.sun))
    );
    assert_eq!(shadows.lighting().lights().len(), 0);
}

#[test]
fn temporal_is_one_pixel_exactly_or_the_mean_of_rotations() {
    let y = yard();
    let shadows = y.app.world().resource::<PbrShadows>();
    // On the shadow's edge at the crate's +x side.
    let edge = Vec3::new(1.0, 0.0, 0.0);
    let pixel = PbrFilter::Temporal(Some(TemporalPixel {
        frag_coord: glam::Vec2::new(100.5, 60.5),
        frame: 3,
    }));
    let a = shadows
        .shadow_factor_with(y.camera, y.sun, edge, Vec3::Y, pixel)
        .unwrap();
    let b = shadows
        .shadow_factor_with(y.camera, y.sun, edge, Vec3::Y, pixel)
        .unwrap();
    assert_eq!(a.to_bits(), b.to_bits());
    let mean = shadows
        .shadow_factor_with(y.camera, y.sun, edge, Vec3::Y, PbrFilter::Temporal(None))
        .unwrap();
    assert!(
        (0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&mean),
        "{a} {mean}"
    );
    assert!(mean > 0.0 && mean < 1.0, "a soft edge: {mean}");
    assert_eq!(
        shadows
            .shadow_factor_with(y.camera, y.sun, OPEN, Vec3::Y, PbrFilter::Temporal(None))
            .unwrap(),
        1.0
    );
}

#[test]
fn exposure_and_line_of_sight_use_the_game_scene() {
    let mut y = yard();
    let world = y.app.world_mut();
    let lamp = world
        .spawn((
            PointLight {
                shadow_maps_enabled: true,
                intensity: 100_000.0,
                range: 20.0,
                ..Default::default()
            },
            Transform::from_xyz(-4.0, 3.0, 0.0),
        ))
        .id();
    let _spot = world
        .spawn((
            SpotLight {
                shadow_maps_enabled: true,
                ..Default::default()
            },
            Transform::from_xyz(4.0, 5.0, 0.0).looking_at(Vec3::new(4.0, 0.0, 0.0), Vec3::Z),
        ))
        .id();
    let [hidden, open] = [BEHIND, OPEN].map(|at| probe_at(world, at));
    // A guard on the far side of the crate: the crate (a Mesh3d) hides the player behind it.
    let player = world
        .spawn((SightTarget::default(), Transform::from_xyz(0.0, 0.5, 2.5)))
        .id();
    let guard = world
        .spawn((
            Viewer::new(1.2, 20.0).with_targets([player]),
            Transform::from_xyz(0.0, 0.5, -6.0).looking_at(Vec3::new(0.0, 0.5, 2.5), Vec3::Y),
        ))
        .id();
    y.app.update();
    y.app.update();
    let world = y.app.world();
    let e_hidden = world.get::<Exposure>(hidden).unwrap();
    let e_open = world.get::<Exposure>(open).unwrap();
    let sun_hidden = e_hidden.light(y.sun).unwrap();
    let sun_open = e_open.light(y.sun).unwrap();
    assert_eq!(sun_hidden.lit_fraction, 0.0);
    assert_eq!(sun_open.lit_fraction, 1.0);
    // Lux: the sun's illuminance arrives whole in the open.
    let illuminance = DirectionalLight::default().illuminance;
    assert!((sun_open.irradiance - illuminance).abs() < 1e-3 * illuminance);
    // The lamp reaches both, with Bevy's windowed inverse square.
    let lamp_open = e_open.light(lamp).unwrap();
    let d2 = (OPEN - Vec3::new(-4.0, 3.0, 0.0)).length_squared();
    let window = (1.0 - (d2 / 400.0).powi(2)).clamp(0.0, 1.0).powi(2);
    let expected = 100_000.0 / (4.0 * std::f32::consts::PI) * window / d2;
    assert!(
        (lamp_open.unshadowed - expected).abs() < 1e-3 * expected,
        "{lamp_open:?} {expected}"
    );
    assert!(e_open.total() > e_hidden.total());
    let sight = world.get::<LineOfSight>(guard).unwrap();
    assert!(!sight.sees(player), "the crate hides the player");
    // Nothing moves: the exposure stays; the sun turns to shine from +z: the probe behind the
    // crate (+z side) comes into the light, although the probe itself did not move.
    y.app.update();
    assert_eq!(
        y.app
            .world()
            .get::<Exposure>(hidden)
            .unwrap()
            .light(y.sun)
            .unwrap()
            .lit_fraction,
        0.0
    );
    y.app
        .world_mut()
        .entity_mut(y.sun)
        .insert(Transform::IDENTITY.looking_to(Vec3::new(0.0, -1.0, -0.2), Vec3::Y));
    y.app.update();
    assert_eq!(
        y.app
            .world()
            .get::<Exposure>(hidden)
            .unwrap()
            .light(y.sun)
            .unwrap()
            .lit_fraction,
        1.0
    );
    // The sun's illuminance alone changes: the probes that did not move follow.
    y.app
        .world_mut()
        .get_mut::<DirectionalLight>(y.sun)
        .unwrap()
        .illuminance = 500.0;
    y.app.update();
    let sun_open = y
        .app
        .world()
        .get::<Exposure>(open)
        .unwrap()
        .light(y.sun)
        .copied();
    assert!((sun_open.unwrap().irradiance - 500.0).abs() < 1e-3);
    // A light that goes away leaves no share behind, even in probes that did not move.
    y.app.world_mut().entity_mut(lamp).despawn();
    y.app.update();
    let e = y.app.world().get::<Exposure>(open).unwrap();
    assert!(e.light(lamp).is_none());
    let sum: f32 = e.lights().iter().map(|l| l.irradiance).sum();
    assert!((e.total() - sum).abs() < 1e-3, "{} {sum}", e.total());
}

/// Every probe is answered again when the scene changes, but an `Exposure` is written (and so
/// marked changed for `Changed<Exposure>` queries) only when its value changes.
#[test]
fn exposures_answered_again_are_written_only_when_they_change() {
    let mut y = yard();
    let world = y.app.world_mut();
    let [hidden, open] = [BEHIND, OPEN].map(|at| probe_at(world, at));
    y.app.update();
    y.app.update();
    let changed = |y: &Yard, e: Entity| {
        let ticks = y.app.world().entity(e).get_change_ticks::<Exposure>();
        ticks.unwrap().changed
    };
    let lit = |y: &Yard, e: Entity| {
        let exposure = y.app.world().get::<Exposure>(e).unwrap();
        exposure.light(y.sun).map(|l| l.lit_fraction)
    };
    assert_eq!((lit(&y, hidden), lit(&y, open)), (Some(0.0), Some(1.0)));
    let before = (changed(&y, hidden), changed(&y, open));
    let generation = y.app.world().resource::<PbrShadows>().generation();
    // The camera moved: Bevy's cascades changed, so every probe is answered again, but
    // neither exposure changes.
    y.app
        .world_mut()
        .entity_mut(y.camera)
        .insert(Transform::from_xyz(0.5, 6.0, 12.0).looking_at(Vec3::ZERO, Vec3::Y));
    y.app.update();
    assert_ne!(
        y.app.world().resource::<PbrShadows>().generation(),
        generation
    );
    assert_eq!((lit(&y, hidden), lit(&y, open)), (Some(0.0), Some(1.0)));
    assert_eq!((changed(&y, hidden), changed(&y, open)), before);
    // The crate moved from the one probe to the other: both exposures change and are written.
    y.app
        .world_mut()
        .entity_mut(y.crate_entity)
        .insert(Transform::from_translation(
            OPEN + Vec3::new(0.0, 1.0, -0.5),
        ));
    y.app.update();
    assert_eq!((lit(&y, hidden), lit(&y, open)), (Some(1.0), Some(0.0)));
    assert_ne!(changed(&y, hidden), before.0);
    assert_ne!(changed(&y, open), before.1);
}

#[test]
fn a_spot_as_wide_as_bevy_allows_has_a_map() {
    let mut y = yard();
    // 1.56 rad is past penumbra's own spot lights (below 1.55) but a cone Bevy draws.
    let wide = y
        .app
        .world_mut()
        .spawn((
            SpotLight {
                shadow_maps_enabled: true,
                outer_angle: 1.56,
                inner_angle: 1.5,
                ..Default::default()
            },
            Transform::from_xyz(0.0, 6.0, 0.0).looking_at(Vec3::ZERO, Vec3::Z),
        ))
        .id();
    y.app.update();
    let shadows = y.app.world().resource::<PbrShadows>();
    // The ground under the crate (its top hides it from the lamp above) and the open ground.
    let at = |p: Vec3| shadows.shadow_factor(y.camera, wide, p, Vec3::Y);
    assert_eq!(at(Vec3::new(0.0, 0.0, 0.5)), Ok(0.0));
    assert_eq!(at(Vec3::new(4.0, 0.0, 0.0)), Ok(1.0));
    // Wider than π/2: Bevy clamps it to π/2 − 10⁻⁴ when it extracts the light; so does this.
    y.app
        .world_mut()
        .get_mut::<SpotLight>(wide)
        .unwrap()
        .outer_angle = 1.7;
    y.app.update();
    let shadows = y.app.world().resource::<PbrShadows>();
    let f = shadows.shadow_factor(y.camera, wide, Vec3::new(4.0, 0.0, 0.0), Vec3::Y);
    assert!(f.as_ref().is_ok_and(|f| (0.0..=1.0).contains(f)), "{f:?}");
}

/// The exposure system answers all probes at once through the maps' batched path (split
/// between threads when there are many): every game light's share is, bit for bit, what
/// `PbrShadows::shadow_factor` of each probe point gives, summed as one probe at a time.
#[test]
fn batched_exposures_are_the_bits_of_one_point_at_a_time() {
    let mut y = yard();
    let world = y.app.world_mut();
    world.spawn((
        PointLight {
            shadow_maps_enabled: true,
            intensity: 100_000.0,
            range: 20.0,
            ..Default::default()
        },
        Transform::from_xyz(-4.0, 3.0, 0.5),
    ));
    world.spawn((
        SpotLight {
            shadow_maps_enabled: true,
            ..Default::default()
        },
        Transform::from_xyz(4.0, 5.0, 0.0).looking_at(Vec3::new(4.0, 0.0, 0.0), Vec3::Z),
    ));
    world
        .entity_mut(y.camera)
        .insert(ShadowFilteringMethod::Gaussian);
    // 1,600 probes over the yard, some standing bodies of four points, with and without a
    // normal: enough for the batched factors to split between threads.
    let mut probes = Vec::new();
    for k in 0..1600 {
        let (i, j) = ((k % 40) as f32, (k / 40) as f32);
        let at = Vec3::new(-10.0 + 0.5 * i, 0.0, -10.0 + 0.5 * j);
        let probe = match k % 3 {
            0 => LightProbe::body(1.8),
            1 => LightProbe::point().with_normal(Vec3::Y),
            _ => LightProbe::point(),
        };
        probes.push(world.spawn((probe, Transform::from_translation(at))).id());
    }
    y.app.update();
    y.app.update();
    let (mut checked, mut shadowed) = (0, 0);
    let shadows = y.app.world().resource::<PbrShadows>();
    for &e in &probes {
        let exposure = y.app.world().get::<Exposure>(e).unwrap();
        let expected = expected_shares(&y, e);
        for entry in shadows.lights() {
            if entry.camera.is_some_and(|c| c != y.camera) {
                continue;
            }
            let held = exposure.light(entry.light);
            let Some(share) = expected.iter().find(|s| s.light == entry.light) else {
                // A light that reaches none of the probe's points leaves no share.
                assert!(held.is_none(), "{e}: {held:?}");
                continue;
            };
            let held = held.expect("a share for a light that reaches");
            assert_eq!(
                held.lit_fraction.to_bits(),
                share.lit_fraction.to_bits(),
                "{e}: {held:?}"
            );
            checked += 1;
            shadowed += usize::from(share.lit_fraction < 0.5);
        }
    }
    assert!(
        checked > 3000 && shadowed > 10,
        "{checked} shares, {shadowed} shadowed"
    );
}

/// Each game light's share of probe `e` as one point at a time gives it
/// (`PbrShadows::shadow_factor` of each point, summed over the points): the lights in
/// `PbrShadows::lights` order, those that reach no point left out.
fn expected_shares(y: &Yard, e: Entity) -> Vec<LightExposure> {
    let world = y.app.world();
    let shadows = world.resource::<PbrShadows>();
    let probe = world.get::<LightProbe>(e).unwrap();
    let at = world.get::<GlobalTransform>(e).unwrap();
    let normal = probe.normal.unwrap_or(Vec3::ZERO);
    let mut shares = Vec::new();
    for entry in shadows.lights() {
        if entry.camera.is_some_and(|c| c != y.camera) {
            continue;
        }
        let (mut arrive, mut could) = (0.0f32, 0.0f32);
        for &o in &probe.offsets {
            let p = at.transform_point(o);
            let u = entry.unshadowed(p);
            if u <= 0.0 {
                continue;
            }
            let f = shadows
                .shadow_factor(y.camera, entry.light, p, normal)
                .unwrap_or(1.0);
            arrive += u * f;
            could += u;
        }
        if could > 0.0 {
            let n = probe.offsets.len().max(1) as f32;
            shares.push(LightExposure {
                light: entry.light,
                lit_fraction: arrive / could,
                irradiance: arrive / n,
                unshadowed: could / n,
            });
        }
    }
    shares
}

/// The exposure system keeps its probes' points, and leaves alone the exposures whose shares
/// did not change, from one frame to the next. Over frames in which the camera moves (every
/// probe answered again) and, one at a time after the first three, a probe moves, a probe's
/// points change, probes come and go (or leave and come back), another system overwrites an
/// exposure, an occluder moves, and the sun goes (a frame with no game light at all, in which
/// a probe moves) and comes back: every exposure holds, bit for bit, the shares one point at a
/// time gives, and nothing else.
#[test]
fn kept_probes_and_exposures_follow_every_change() {
    let mut y = yard();
    y.app
        .world_mut()
        .entity_mut(y.camera)
        .insert(ShadowFilteringMethod::Gaussian);
    let world = y.app.world_mut();
    // Enough probes for the batched factors to split between threads.
    let mut probes: Vec<Entity> = (0..1100)
        .map(|k| {
            let (i, j) = ((k % 40) as f32, (k / 40) as f32);
            let at = Vec3::new(-6.0 + 0.3 * i, 0.0, -4.0 + 0.3 * j);
            let probe = match k % 4 {
                0 => LightProbe::body(1.8),
                _ => LightProbe::point().with_normal(Vec3::Y),
            };
            world.spawn((probe, Transform::from_translation(at))).id()
        })
        .collect();
    y.app.update();
    let sun = y.sun;
    let mut sun_bundle = None;
    for frame in 0..16 {
        let world = y.app.world_mut();
        // Nearer or further each frame: some probes cross from one cascade to the next.
        let (x, z) = (0.37 * frame as f32, 12.0 + 1.3 * (frame % 5) as f32);
        world
            .entity_mut(y.camera)
            .insert(Transform::from_xyz(x, 6.0, z).looking_at(Vec3::ZERO, Vec3::Y));
        match frame {
            // From the open ground into the crate's shadow.
            3 => {
                world
                    .entity_mut(probes[39])
                    .insert(Transform::from_xyz(0.0, 0.0, 1.1));
            }
            // Half of the probe's points, now two, under the crate.
            4 => {
                world.get_mut::<LightProbe>(probes[4]).unwrap().offsets =
                    vec![Vec3::ZERO, Vec3::new(4.8, 0.0, 5.1)]
            }
            5 => {
                world.despawn(probes.remove(7));
                let e = world.spawn((LightProbe::point(), Transform::from_xyz(0.1, 0.0, 1.3)));
                probes.push(e.id());
            }
            6 => *world.get_mut::<Exposure>(probes[9]).unwrap() = Exposure::default(),
            7 => {
                world
                    .entity_mut(y.crate_entity)
                    .insert(Transform::from_xyz(-3.0, 1.0, -1.0));
            }
            8 => {
                let light = *world.get::<DirectionalLight>(sun).unwrap();
                let cascades = world.get::<CascadeShadowConfig>(sun).unwrap().clone();
                let transform = *world.get::<Transform>(sun).unwrap();
                sun_bundle = Some((light, cascades, transform));
                world.despawn(sun);
            }
            // No game light this frame or the last: the system has nothing to do, and a
            // probe moves meanwhile.
            10 => {
                world
                    .entity_mut(probes[20])
                    .insert(Transform::from_xyz(-3.0, 0.0, 0.2));
            }
            11 => {
                let bundle = sun_bundle.take().unwrap();
                y.sun = world.spawn(bundle).id();
            }
            // A probe leaves the system's probes; then another leaves and the first comes back:
            // as many probes as before, none of them changed, but not the same ones.
            12 => {
                world.entity_mut(probes[30]).remove::<Exposure>();
            }
            13 => {
                world.entity_mut(probes[31]).remove::<Exposure>();
                world.entity_mut(probes[30]).insert(Exposure::default());
            }
            _ => {}
        }
        y.app.update();
        let world = y.app.world();
        let mut checked = 0;
        for &e in &probes {
            let Some(exposure) = world.get::<Exposure>(e) else {
                continue;
            };
            checked += 1;
            let expected = expected_shares(&y, e);
            let bits = |l: &[LightExposure]| {
                l.iter()
                    .map(|l| {
                        let v = [l.lit_fraction, l.irradiance, l.unshadowed];
                        (l.light, v.map(f32::to_bits))
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                bits(exposure.lights()),
                bits(&expected),
                "frame {frame}, probe {e}"
            );
            let total: f32 = expected.iter().map(|l| l.irradiance).sum();
            assert_eq!(exposure.total().to_bits(), total.to_bits(), "frame {frame}");
        }
        assert!(checked >= probes.len() - 1, "frame {frame}");
    }
}
