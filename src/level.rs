//! The built-in sample level of the examples: a courtyard with crates, pillars and walls, a low
//! sun, two spot lights, two guards and a player's path. `penumbra demo` builds the same level
//! in Luau (`src/demo/demo.luau`); keep the two in step.

use glam::Vec3;

use penumbra_core::shadow::{EyeId, Light, LightId, Lighting, Occluder, Scene, Viewer};

/// A guard: where they stand and look.
#[derive(Clone, Debug)]
pub struct Guard {
    /// Name for reports.
    pub name: &'static str,
    /// The eye.
    pub viewer: Viewer,
}

/// The sample level.
#[derive(Clone, Debug)]
pub struct Level {
    /// The occluders.
    pub scene: Scene,
    /// The lights.
    pub lights: Vec<(&'static str, Light)>,
    /// The guards.
    pub guards: Vec<Guard>,
    /// The player's path (floor points).
    pub path: Vec<Vec3>,
}

impl Level {
    /// The level as the engine's [`Lighting`]: its occluders, its lights (in order) and its
    /// guards' eyes, with their handles.
    #[must_use]
    pub fn lighting(&self) -> (Lighting, Vec<LightId>, Vec<EyeId>) {
        let mut lighting = Lighting::new();
        for o in &self.scene.occluders {
            lighting.add_occluder(o.clone());
        }
        let lights = self
            .lights
            .iter()
            .map(|(_, l)| lighting.add_light(l.clone()))
            .collect();
        let eyes = self
            .guards
            .iter()
            .map(|g| lighting.add_eye(g.viewer))
            .collect();
        (lighting, lights, eyes)
    }
}

/// Builds the sample level.
#[must_use]
pub fn sample_level() -> Level {
    let mut scene = Scene::default();
    let mut add = |min: [f32; 3], max: [f32; 3]| {
        scene.add(Occluder::cuboid(Vec3::from(min), Vec3::from(max)));
    };
    add([-20.0, -1.0, -20.0], [20.0, 0.0, 20.0]); // floor
    add([-20.0, 0.0, -20.0], [20.0, 4.0, -19.0]); // north wall
    add([-20.0, 0.0, -19.0], [-19.0, 4.0, 20.0]); // west wall
    add([-6.0, 0.0, -2.0], [-1.0, 3.0, -1.0]); // inner wall
    add([4.0, 0.0, 4.0], [6.0, 1.5, 6.0]); // crates
    add([6.5, 0.0, 4.5], [7.5, 1.0, 5.5]);
    add([-12.0, 0.0, 8.0], [-10.0, 2.0, 10.0]);
    for (x, z) in [(-8.0, -10.0), (0.0, -10.0), (8.0, -10.0), (12.0, 2.0)] {
        add([x - 0.5, 0.0, z - 0.5], [x + 0.5, 5.0, z + 0.5]); // pillars
    }
    let lights = vec![
        (
            "sun",
            Light::directional(Vec3::new(0.8, -0.55, 0.45), 0.35).with_resolution(2048),
        ),
        (
            "lamp-east",
            Light::spot(
                Vec3::new(10.0, 6.0, 8.0),
                Vec3::new(-0.3, -1.0, -0.2),
                40f32.to_radians(),
                18.0,
                25.0,
            ),
        ),
        (
            "lamp-west",
            Light::spot(
                Vec3::new(-10.0, 6.0, -6.0),
                Vec3::new(0.2, -1.0, 0.3),
                34.5f32.to_radians(),
                18.0,
                25.0,
            ),
        ),
    ];
    let guards = vec![
        Guard {
            name: "guard-north",
            viewer: Viewer::new(
                Vec3::new(0.0, 1.7, -15.0),
                Vec3::new(0.2, -0.05, 1.0),
                80f32.to_radians(),
                22.0,
            ),
        },
        Guard {
            name: "guard-east",
            viewer: Viewer::new(
                Vec3::new(15.0, 1.7, 12.0),
                Vec3::new(-1.0, -0.05, -0.6),
                70f32.to_radians(),
                22.0,
            ),
        },
    ];
    let waypoints = [
        Vec3::new(-16.0, 0.0, 16.0),
        Vec3::new(-15.0, 0.0, 4.0),
        Vec3::new(-9.0, 0.0, -4.0),
        Vec3::new(-7.0, 0.0, 0.0),
        Vec3::new(-3.0, 0.0, 1.0),
        Vec3::new(3.0, 0.0, 2.0),
        Vec3::new(8.5, 0.0, 3.0),
        Vec3::new(9.0, 0.0, 9.0),
        Vec3::new(16.0, 0.0, 16.0),
    ];
    let mut path = Vec::new();
    for w in waypoints.windows(2) {
        for i in 0..10 {
            path.push(w[0].lerp(w[1], i as f32 / 10.0));
        }
    }
    path.push(waypoints[waypoints.len() - 1]);
    Level {
        scene,
        lights,
        guards,
        path,
    }
}

/// Names of the sample level's occluders, in [`sample_level`]'s order (what `penumbra demo
/// --write-level` names the glTF nodes).
pub const OCCLUDER_NAMES: [&str; 11] = [
    "floor",
    "north wall",
    "west wall",
    "inner wall",
    "crate 1",
    "crate 2",
    "crate 3",
    "pillar 1",
    "pillar 2",
    "pillar 3",
    "pillar 4",
];

/// The sample level's occluders as a binary glTF (one named node each), for
/// `penumbra demo --write-level`.
///
/// # Errors
/// What [`penumbra_core::gltf::write_glb`] refuses (nothing the sample level holds).
pub fn sample_level_glb() -> Result<Vec<u8>, penumbra_core::gltf::GltfError> {
    let level = sample_level();
    let nodes: Vec<(&str, &penumbra_core::raster::Mesh, glam::Mat4)> = level
        .scene
        .occluders
        .iter()
        .zip(OCCLUDER_NAMES)
        .map(|(o, name)| (name, &*o.mesh, o.transform))
        .collect();
    penumbra_core::gltf::write_glb(&nodes)
}
