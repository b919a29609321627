//! penumbra's parity generator: renders a scene with Bevy's real renderer (bevy_pbr, on whatever
//! Vulkan device wgpu finds — Mesa's lavapipe in CI) and writes, for every pixel, the shadow
//! factor bevy_pbr's own shadow functions compute there, the world position and the normal
//! they were given. The main workspace's `bevy_plugin/tests/parity.rs` rebuilds the same scene
//! in a Bevy 0.20 `App` with bevy_penumbra and compares every pixel.
//!
//! ```text
//! penumbra_parity <scene> <output dir>     # scenes: sun-a, sun-b, sun-near, spot, point
//! ```
//!
//! Each run writes `<scene>.json` (the scene: meshes with their triangles and world matrices,
//! camera, light, shadow-map sizes, and the cascades Bevy computed) and `<scene>-<filter>.f32`
//! per shadow filter (`hardware2x2`, `gaussian`): little-endian f32 records of nine values per
//! covered pixel — x, y, factor, position (3), normal (3).

use std::time::Duration;

use bevy::app::{AppExit, ScheduleRunnerPlugin};
use bevy::asset::RenderAssetUsages;
use bevy::camera::{ImageRenderTarget, RenderTarget};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::light::{
    CascadeShadowConfig, CascadeShadowConfigBuilder, Cascades, DirectionalLightShadowMap,
    PointLightShadowMap, ShadowFilteringMethod,
};
use bevy::mesh::{Indices, MeshVertexBufferLayoutRef, VertexAttributeValues};
use bevy::pbr::{Material, MaterialPipeline, MaterialPipelineKey, MaterialPlugin};
use bevy::prelude::*;
use bevy::render::gpu_readback::{Readback, ReadbackComplete};
use bevy::render::render_resource::{
    AsBindGroup, Face, RenderPipelineDescriptor, SpecializedMeshPipelineError, TextureFormat,
    TextureUsages,
};
use bevy::render::view::Msaa;
use bevy::shader::ShaderRef;
use bevy::window::ExitCondition;
use serde_json::{Value, json};

/// The scenes: a sun with four cascades seen from three places, a spot light, a point light.
const SCENES: [&str; 5] = ["sun-a", "sun-b", "sun-near", "spot", "point"];
const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;
/// Frames rendered in each output mode before its last readback is kept.
const FRAMES_PER_MODE: u32 = 24;
const FILTERS: [(&str, ShadowFilteringMethod); 2] = [
    ("hardware2x2", ShadowFilteringMethod::Hardware2x2),
    ("gaussian", ShadowFilteringMethod::Gaussian),
];

#[derive(Asset, TypePath, AsBindGroup, Clone, Debug)]
struct ParityMaterial {
    /// x: 0 writes (factor, position), 1 writes (normal, marker); y: the light's kind.
    #[uniform(0)]
    params: UVec4,
}

impl Material for ParityMaterial {
    fn fragment_shader() -> ShaderRef {
        "shaders/parity.wgsl".into()
    }

    // Back faces culled with counter-clockwise fronts in the main and the shadow pass, as
    // StandardMaterial does by default.
    fn specialize(
        _pipeline: &MaterialPipeline,
        descriptor: &mut RenderPipelineDescriptor,
        _layout: &MeshVertexBufferLayoutRef,
        _key: MaterialPipelineKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        descriptor.primitive.cull_mode = Some(Face::Back);
        Ok(())
    }
}

#[derive(Resource, Clone)]
struct Job {
    scene: String,
    out: std::path::PathBuf,
}

#[derive(Component)]
struct Capture(usize);

#[derive(Component)]
struct SceneMesh(&'static str);

#[derive(Resource, Default)]
struct Captured {
    /// Per filter: the last readback of mode 0 and of mode 1.
    frames: Vec<[Option<Vec<f32>>; 2]>,
    material: Option<Handle<ParityMaterial>>,
    cameras: Vec<Entity>,
    frame: u32,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let scene = args.next().unwrap_or_else(|| "sun-a".into());
    let out = args
        .next()
        .map_or_else(|| "../tests/data/parity".into(), Into::into);
    if !SCENES.contains(&scene.as_str()) {
        eprintln!("unknown scene {scene}: one of {SCENES:?}");
        std::process::exit(2);
    }
    std::fs::create_dir_all(&out).expect("create the output folder");
    App::new()
        .add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    ..default()
                })
                .set(AssetPlugin {
                    file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/assets").into(),
                    ..default()
                }),
        )
        .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::ZERO))
        .add_plugins(MaterialPlugin::<ParityMaterial>::default())
        .insert_resource(Job { scene, out })
        .init_resource::<Captured>()
        .add_systems(Startup, setup)
        .add_systems(Update, step)
        .run();
}

/// The light of a scene: its kind number for the shader and its description.
fn light_kind(scene: &str) -> u32 {
    match scene {
        "spot" => 1,
        "point" => 2,
        _ => 0,
    }
}

fn camera_transform(scene: &str) -> Transform {
    match scene {
        "sun-b" => {
            Transform::from_xyz(10.0, 4.0, -9.0).looking_at(Vec3::new(-1.0, 0.0, 1.0), Vec3::Y)
        }
        // Close to the crate: the first cascade (4 m) covers the near ground.
        "sun-near" => {
            Transform::from_xyz(2.5, 1.6, 4.5).looking_at(Vec3::new(-0.5, 0.6, 0.0), Vec3::Y)
        }
        _ => Transform::from_xyz(-9.0, 7.0, 12.0).looking_at(Vec3::new(0.0, 1.0, 0.0), Vec3::Y),
    }
}

fn setup(
    mut commands: Commands,
    job: Res<Job>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ParityMaterial>>,
    mut images: ResMut<Assets<Image>>,
    mut captured: ResMut<Captured>,
) {
    let kind = light_kind(&job.scene);
    let material = materials.add(ParityMaterial {
        params: UVec4::new(0, kind, 0, 0),
    });
    captured.material = Some(material.clone());
    let parts: [(&'static str, Mesh, Transform); 6] = [
        (
            "ground",
            Plane3d::default().mesh().size(40.0, 40.0).build(),
            Transform::IDENTITY,
        ),
        (
            "crate",
            Cuboid::new(2.0, 2.0, 2.0).into(),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ),
        (
            "post",
            Cuboid::new(1.0, 3.0, 1.0).into(),
            Transform::from_xyz(3.0, 1.5, -2.0),
        ),
        (
            "wall",
            Cuboid::new(6.0, 3.0, 0.5).into(),
            Transform::from_xyz(-3.0, 1.5, -4.0).with_rotation(Quat::from_rotation_y(0.35)),
        ),
        (
            "slab",
            Cuboid::new(3.0, 0.3, 3.0).into(),
            Transform::from_xyz(2.0, 2.5, 3.0),
        ),
        (
            "ball",
            Sphere::new(0.8).mesh().ico(3).expect("an icosphere"),
            Transform::from_xyz(-2.5, 0.8, 2.0),
        ),
    ];
    for (name, mesh, transform) in parts {
        commands.spawn((
            SceneMesh(name),
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(material.clone()),
            transform,
        ));
    }
    match kind {
        0 => {
            commands.spawn((
                DirectionalLight {
                    shadow_maps_enabled: true,
                    illuminance: 10_000.0,
                    ..default()
                },
                Transform::IDENTITY.looking_to(Vec3::new(-0.5, -0.8, -0.35), Vec3::Y),
                CascadeShadowConfigBuilder {
                    num_cascades: 4,
                    first_cascade_far_bound: 4.0,
                    maximum_distance: 40.0,
                    ..default()
                }
                .build(),
            ));
        }
        1 => {
            commands.spawn((
                SpotLight {
                    shadow_maps_enabled: true,
                    range: 25.0,
                    outer_angle: 0.7,
                    inner_angle: 0.5,
                    ..default()
                },
                Transform::from_xyz(4.0, 8.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y),
            ));
        }
        _ => {
            commands.spawn((
                PointLight {
                    shadow_maps_enabled: true,
                    range: 20.0,
                    ..default()
                },
                Transform::from_xyz(0.5, 4.5, 1.0),
            ));
        }
    }
    for (index, (_, filter)) in FILTERS.iter().enumerate() {
        let mut image = Image::new_target_texture(WIDTH, HEIGHT, TextureFormat::Rgba32Float, None);
        image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
        image.asset_usage = RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD;
        let handle = images.add(image);
        let camera = commands
            .spawn((
                Camera3d::default(),
                Camera {
                    clear_color: ClearColorConfig::Custom(Color::LinearRgba(LinearRgba::new(
                        -1.0, 0.0, 0.0, 0.0,
                    ))),
                    order: index as isize,
                    ..default()
                },
                RenderTarget::Image(ImageRenderTarget {
                    handle: handle.clone(),
                    scale_factor: 1.0,
                }),
                Projection::Perspective(PerspectiveProjection {
                    fov: 0.8,
                    aspect_ratio: WIDTH as f32 / HEIGHT as f32,
                    near: 0.1,
                    far: 200.0,
                    ..default()
                }),
                Msaa::Off,
                Tonemapping::None,
                *filter,
                camera_transform(&job.scene),
            ))
            .id();
        captured.cameras.push(camera);
        captured.frames.push([None, None]);
        commands
            .spawn((Readback::texture(handle), Capture(index)))
            .observe(keep_readback);
    }
}

fn keep_readback(
    event: On<ReadbackComplete>,
    captures: Query<&Capture>,
    mut captured: ResMut<Captured>,
) {
    let Ok(capture) = captures.get(event.entity) else {
        return;
    };
    let values: Vec<f32> = event
        .data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if values.len() != (WIDTH * HEIGHT * 4) as usize {
        return;
    }
    let covered = values.chunks_exact(4).filter(|p| p[0] != -1.0).count();
    if covered == 0 {
        return;
    }
    let mode = usize::from(values.chunks_exact(4).any(|p| p[3] == 1.0e30));
    captured.frames[capture.0][mode] = Some(values);
}

fn mat4_json(m: &Mat4) -> Value {
    json!(m.to_cols_array())
}

#[allow(clippy::too_many_arguments)]
fn step(
    job: Res<Job>,
    mut captured: ResMut<Captured>,
    mut materials: ResMut<Assets<ParityMaterial>>,
    meshes: Res<Assets<Mesh>>,
    parts: Query<(&SceneMesh, &Mesh3d, &GlobalTransform)>,
    cameras: Query<(&GlobalTransform, &Projection)>,
    directional: Query<(
        &DirectionalLight,
        &GlobalTransform,
        &CascadeShadowConfig,
        &Cascades,
    )>,
    spots: Query<(&SpotLight, &GlobalTransform)>,
    points: Query<(&PointLight, &GlobalTransform)>,
    directional_size: Res<DirectionalLightShadowMap>,
    point_size: Res<PointLightShadowMap>,
    mut exit: MessageWriter<AppExit>,
) {
    captured.frame += 1;
    let frame = captured.frame;
    if frame == FRAMES_PER_MODE {
        if let Some(mut m) = captured
            .material
            .clone()
            .and_then(|h| materials.get_mut(&h))
        {
            m.params.x = 1;
        }
        return;
    }
    if frame < 2 * FRAMES_PER_MODE {
        return;
    }
    let complete = captured
        .frames
        .iter()
        .all(|f| f[0].is_some() && f[1].is_some());
    if !complete {
        if frame > 20 * FRAMES_PER_MODE {
            eprintln!("no complete readback after {frame} frames");
            exit.write(AppExit::error());
        }
        return;
    }
    let mut mesh_list = Vec::new();
    let mut sorted: Vec<_> = parts.iter().collect();
    sorted.sort_by_key(|(name, ..)| name.0);
    for (name, mesh, transform) in sorted {
        let mesh = meshes.get(&mesh.0).expect("the mesh asset");
        let Some(VertexAttributeValues::Float32x3(positions)) =
            mesh.attribute(Mesh::ATTRIBUTE_POSITION)
        else {
            panic!("{} has no positions", name.0);
        };
        let indices: Vec<u32> = match mesh.indices() {
            Some(Indices::U16(i)) => i.iter().map(|&i| u32::from(i)).collect(),
            Some(Indices::U32(i)) => i.clone(),
            None => (0..positions.len() as u32).collect(),
        };
        mesh_list.push(json!({
            "name": name.0,
            "world_from_local": mat4_json(&transform.to_matrix()),
            "positions": positions.iter().flatten().copied().collect::<Vec<f32>>(),
            "indices": indices,
        }));
    }
    let mut camera_list = Vec::new();
    for (index, &camera) in captured.cameras.iter().enumerate() {
        let (transform, projection) = cameras.get(camera).expect("the camera");
        let Projection::Perspective(p) = projection else {
            panic!("perspective cameras only");
        };
        let cascades: Vec<Value> = directional
            .iter()
            .flat_map(|(.., c)| c.cascades.get(&camera).cloned().unwrap_or_default())
            .map(|c| {
                json!({
                    "clip_from_world": mat4_json(&c.clip_from_world),
                    "world_from_cascade": mat4_json(&c.world_from_cascade),
                    "clip_from_cascade": mat4_json(&c.clip_from_cascade),
                    "texel_size": c.texel_size,
                })
            })
            .collect();
        camera_list.push(json!({
            "filter": FILTERS[index].0,
            "world_from_view": mat4_json(&transform.to_matrix()),
            "fov": p.fov,
            "aspect_ratio": p.aspect_ratio,
            "near": p.near,
            "far": p.far,
            "cascades": cascades,
        }));
    }
    let light = if let Some((l, t, config, _)) = directional.iter().next() {
        json!({
            "kind": "directional",
            "world_from_light": mat4_json(&t.to_matrix()),
            "illuminance": l.illuminance,
            "shadow_depth_bias": l.shadow_depth_bias,
            "shadow_normal_bias": l.shadow_normal_bias,
            "cascade_bounds": config.bounds,
            "overlap_proportion": config.overlap_proportion,
            "minimum_distance": config.minimum_distance,
        })
    } else if let Some((l, t)) = spots.iter().next() {
        json!({
            "kind": "spot",
            "world_from_light": mat4_json(&t.to_matrix()),
            "intensity": l.intensity,
            "range": l.range,
            "radius": l.radius,
            "inner_angle": l.inner_angle,
            "outer_angle": l.outer_angle,
            "shadow_depth_bias": l.shadow_depth_bias,
            "shadow_normal_bias": l.shadow_normal_bias,
            "shadow_map_near_z": l.shadow_map_near_z,
        })
    } else {
        let (l, t) = points.iter().next().expect("a light");
        json!({
            "kind": "point",
            "world_from_light": mat4_json(&t.to_matrix()),
            "intensity": l.intensity,
            "range": l.range,
            "radius": l.radius,
            "shadow_depth_bias": l.shadow_depth_bias,
            "shadow_normal_bias": l.shadow_normal_bias,
            "shadow_map_near_z": l.shadow_map_near_z,
        })
    };
    let header = json!({
        "generator": "penumbra_parity (Bevy 0.19.1, bevy_pbr's shadow shaders)",
        "scene": job.scene,
        "width": WIDTH,
        "height": HEIGHT,
        "directional_shadow_map_size": directional_size.size,
        "point_shadow_map_size": point_size.size,
        "meshes": mesh_list,
        "light": light,
        "cameras": camera_list,
    });
    let path = job.out.join(format!("{}.json", job.scene));
    std::fs::write(&path, serde_json::to_string_pretty(&header).expect("json"))
        .expect("write the scene");
    for (index, (filter, _)) in FILTERS.iter().enumerate() {
        let [Some(a), Some(b)] = &captured.frames[index] else {
            unreachable!()
        };
        let mut bytes = Vec::new();
        let mut covered = 0;
        for y in 0..HEIGHT {
            for x in 0..WIDTH {
                let k = ((y * WIDTH + x) * 4) as usize;
                if a[k] == -1.0 || b[k + 3] != 1.0e30 {
                    continue;
                }
                covered += 1;
                let record = [
                    x as f32,
                    y as f32,
                    a[k],
                    a[k + 1],
                    a[k + 2],
                    a[k + 3],
                    b[k],
                    b[k + 1],
                    b[k + 2],
                ];
                for v in record {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        let path = job.out.join(format!("{}-{filter}.f32", job.scene));
        std::fs::write(&path, bytes).expect("write the samples");
        println!(
            "parity {} {filter}: {covered} pixels written to {}",
            job.scene,
            path.display()
        );
    }
    exit.write(AppExit::Success);
}
