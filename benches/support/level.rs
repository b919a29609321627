//! The 100,000-triangle level shared by the benches, the peers example and the profiling
//! example: a 200 × 130 m height field (one vertex per metre, 52,000 triangles) and 4,000
//! cuboids of 0.5 to 3.5 m standing on it (48,000 triangles), always the same (a fixed
//! seed of `penumbra_testkit::Rng::lcg64`),
//! and a sun 50° above the horizon whose orthographic box covers the whole ground.
//!
//! Included with `#[path = ".../benches/support/level.rs"] mod level;` (each user takes the
//! parts it needs; its crate dev-depends on `penumbra_testkit`).
#![allow(dead_code)]

use glam::camera::lh;
use glam::{Mat4, Vec3};
use penumbra_core::raster::Mesh;
use penumbra_testkit::Rng;

/// Ground quads along x and z: 200 × 130 quads = 52,000 triangles.
pub const GROUND: (u32, u32) = (200, 130);
/// Cuboids: 4,000 × 12 = 48,000 triangles.
pub const CUBOIDS: u32 = 4000;

/// The ground's height at (x, z).
pub fn height(x: f32, z: f32) -> f32 {
    0.6 * (x * 0.11).sin() * (z * 0.07).cos()
}

/// The direction the sun shines along.
pub fn sun() -> Vec3 {
    Vec3::new(-0.45, -0.77, 0.45).normalize()
}

/// The ground mesh and the cuboids' transforms (one unit cube mesh, `cube()`, placed 4,000
/// times).
pub fn level() -> (Mesh, Vec<Mat4>) {
    let (positions, indices) = ground_grid();
    let positions = positions.into_iter().map(Vec3::from).collect();
    let ground = Mesh::new(positions, indices).expect("valid ground");
    let transforms = cuboids()
        .into_iter()
        .map(|c| {
            Mat4::from_translation(Vec3::new(c.x, height(c.x, c.z) - 0.1, c.z))
                * Mat4::from_rotation_y(c.angle)
                * Mat4::from_scale(c.size)
        })
        .collect();
    (ground, transforms)
}

/// The unit cube the cuboids are made of (a metre wide, standing on y = 0).
pub fn cube() -> Mesh {
    Mesh::cuboid(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5))
}

/// The sun's view-projection: its orthographic box covers the whole ground.
pub fn sun_view_proj() -> Mat4 {
    let dir = sun();
    let view = lh::view::look_at_mat4(-dir * 200.0, Vec3::ZERO, Vec3::Y);
    let proj = lh::proj::directx::orthographic(-120.0, 120.0, -120.0, 120.0, 50.0, 350.0);
    proj * view
}

/// The whole level baked into one world-space mesh (one vertex and index buffer, as a GPU
/// draw call would take it).
pub fn baked() -> Mesh {
    let (ground, transforms) = level();
    let cube = cube();
    let mut positions = ground.positions().to_vec();
    let mut indices = ground.indices().to_vec();
    for m in &transforms {
        let base = positions.len() as u32;
        positions.extend(cube.positions().iter().map(|&p| m.transform_point3(p)));
        indices.extend(cube.indices().iter().map(|&i| base + i));
    }
    Mesh::new(positions, indices).expect("valid level")
}

/// The height field's vertices (one per metre) and triangles, counter-clockwise seen from above
/// (the faces Bevy keeps).
pub fn ground_grid() -> (Vec<[f32; 3]>, Vec<u32>) {
    let (nx, nz) = GROUND;
    let mut positions = Vec::new();
    for j in 0..=nz {
        for i in 0..=nx {
            let (x, z) = (i as f32 - nx as f32 / 2.0, j as f32 - nz as f32 / 2.0);
            positions.push([x, height(x, z), z]);
        }
    }
    let mut indices = Vec::new();
    for j in 0..nz {
        for i in 0..nx {
            let a = j * (nx + 1) + i;
            let (b, c, d) = (a + 1, a + nx + 2, a + nx + 1);
            indices.extend_from_slice(&[a, d, c, a, c, b]);
        }
    }
    (positions, indices)
}

/// Where a cuboid stands: its centre's x and z on the ground, its size and its turn about y.
pub struct Cuboid {
    pub x: f32,
    pub z: f32,
    pub size: Vec3,
    pub angle: f32,
}

/// The 4,000 cuboids, always the same (`Rng::lcg64(0x5eed)`), 2 m or more inside the ground's
/// edges.
pub fn cuboids() -> Vec<Cuboid> {
    let (nx, nz) = GROUND;
    let mut rng = Rng::lcg64(0x5eed);
    (0..CUBOIDS)
        .map(|_| {
            let x = (rng.f32_unit() - 0.5) * (nx as f32 - 4.0);
            let z = (rng.f32_unit() - 0.5) * (nz as f32 - 4.0);
            let size = Vec3::new(
                0.5 + 3.0 * rng.f32_unit(),
                0.5 + 3.0 * rng.f32_unit(),
                0.5 + 3.0 * rng.f32_unit(),
            );
            let angle = rng.f32_unit() * std::f32::consts::TAU;
            Cuboid { x, z, size, angle }
        })
        .collect()
}
