//! Tile-by-tile drawing (`rasterize_tiles`) against the full rasterizer: every tile drawn holds
//! the full draw's bits, tiles not asked for are untouched, and an index refitted after
//! instances move draws what a fresh full draw of the moved scene draws.

use glam::camera::lh;
use glam::{Mat4, Quat, Vec3};
use penumbra_core::Format;
use penumbra_core::raster::{
    CullMode, DepthBias, DepthFunc, DepthTarget, Instance, InstanceIndex, Mesh, RasterState,
    TILE_SIZE, rasterize, rasterize_tiles,
};
use penumbra_testkit::Rng;

/// Cuboids, a ground of many small triangles and a few long slivers and huge triangles that
/// cross many tiles and the camera plane.
fn scene(rng: &mut Rng) -> (Vec<Mesh>, Vec<Mat4>) {
    let mut meshes = Vec::new();
    let mut transforms = Vec::new();
    let n = 12;
    let mut positions = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (i as f32 - n as f32 / 2.0, j as f32 - n as f32 / 2.0);
            positions.push(Vec3::new(x, 0.3 * (x * 0.7).sin() * (z * 0.4).cos(), z));
        }
    }
    let mut indices = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i;
            indices.extend_from_slice(&[a, a + n + 1, a + n + 2, a, a + n + 2, a + 1]);
        }
    }
    meshes.push(Mesh::new(positions, indices).unwrap());
    transforms.push(Mat4::IDENTITY);
    let cube = Mesh::cuboid(Vec3::splat(-0.5), Vec3::splat(0.5));
    for _ in 0..30 {
        meshes.push(cube.clone());
        transforms.push(Mat4::from_scale_rotation_translation(
            Vec3::new(
                rng.f32_in(0.2, 2.0),
                rng.f32_in(0.2, 3.0),
                rng.f32_in(0.2, 2.0),
            ),
            Quat::from_euler(
                glam::EulerRot::YXZ,
                rng.f32_in(0.0, 6.3),
                rng.f32_in(-0.5, 0.5),
                0.0,
            ),
            Vec3::new(
                rng.f32_in(-6.0, 6.0),
                rng.f32_in(0.0, 2.0),
                rng.f32_in(-6.0, 6.0),
            ),
        ));
    }
    // Slivers and giant triangles (some reaching behind a perspective camera).
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for k in 0..8 {
        let a = Vec3::new(
            rng.f32_in(-30.0, 30.0),
            rng.f32_in(-2.0, 6.0),
            rng.f32_in(-30.0, 30.0),
        );
        let b = Vec3::new(
            rng.f32_in(-30.0, 30.0),
            rng.f32_in(-2.0, 6.0),
            rng.f32_in(-30.0, 30.0),
        );
        let c = a + Vec3::new(rng.f32_in(-0.1, 0.1), 0.05, rng.f32_in(-0.1, 0.1));
        positions.extend_from_slice(&[a, b, c]);
        indices.extend_from_slice(&[3 * k, 3 * k + 1, 3 * k + 2]);
    }
    // One triangle with a NaN vertex, one with a huge one.
    positions.extend_from_slice(&[
        Vec3::new(f32::NAN, 0.0, 0.0),
        Vec3::ZERO,
        Vec3::X,
        Vec3::new(1e30, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(0.0, 0.0, 1.0),
    ]);
    indices.extend_from_slice(&[24, 25, 26, 27, 28, 29]);
    meshes.push(Mesh::new(positions, indices).unwrap());
    transforms.push(Mat4::IDENTITY);
    (meshes, transforms)
}

fn views(rng: &mut Rng) -> Vec<(Mat4, &'static str)> {
    let sun = Vec3::new(rng.f32_in(-0.5, 0.5), -1.0, rng.f32_in(-0.5, 0.5)).normalize();
    let ortho = lh::proj::directx::orthographic(-9.0, 9.0, -9.0, 9.0, -20.0, 20.0)
        * lh::view::look_to_mat4(Vec3::ZERO, sun, Vec3::Z);
    let eye = Vec3::new(
        rng.f32_in(-3.0, 3.0),
        rng.f32_in(1.0, 4.0),
        rng.f32_in(-3.0, 3.0),
    );
    let persp = lh::proj::directx::perspective(1.4, 1.0, 0.1, 40.0)
        * lh::view::look_at_mat4(eye, Vec3::new(0.0, 0.5, 0.0), Vec3::Y);
    let reverse = lh::proj::directx::perspective_infinite_reverse(1.2, 1.0, 0.05)
        * lh::view::look_at_mat4(eye + Vec3::Y, Vec3::ZERO, Vec3::Y);
    vec![
        (ortho, "ortho"),
        (persp, "perspective"),
        (reverse, "reverse-z"),
    ]
}

fn states(rng: &mut Rng) -> Vec<RasterState> {
    let mut out = Vec::new();
    for (cull, clip, func) in [
        (CullMode::Back, true, DepthFunc::Less),
        (CullMode::None, false, DepthFunc::Less),
        (CullMode::Front, true, DepthFunc::Greater),
    ] {
        out.push(RasterState {
            cull,
            front_counter_clockwise: rng.f32_unit() < 0.5,
            depth_bias: DepthBias {
                depth_bias: rng.below_f32(50) as i32 - 10,
                slope_scaled_depth_bias: rng.f32_in(-1.0, 2.0),
                depth_bias_clamp: 0.0,
            },
            depth_clip: clip,
            depth_func: func,
        });
    }
    out
}

fn instances<'a>(meshes: &'a [Mesh], transforms: &[Mat4]) -> Vec<Instance<'a>> {
    meshes
        .iter()
        .zip(transforms)
        .enumerate()
        .map(|(k, (m, &t))| {
            let i = Instance::new(m, t);
            if k % 7 == 3 {
                i.with_cull(CullMode::None)
            } else {
                i
            }
        })
        .collect()
}

fn clear_for(state: &RasterState) -> f32 {
    if state.depth_func == DepthFunc::Greater {
        0.0
    } else {
        1.0
    }
}

fn target(size: (u32, u32), format: Format, state: &RasterState) -> DepthTarget {
    let mut t = DepthTarget::new(size.0, size.1, format).unwrap();
    t.clear(clear_for(state));
    t
}

fn assert_tiles_match(
    full: &DepthTarget,
    tiled: &DepthTarget,
    drawn: &[(u32, u32)],
    clear: f32,
    what: &str,
) {
    let clear_bits = {
        let mut c = DepthTarget::new(1, 1, full.format()).unwrap();
        c.clear(clear);
        c.raw(0, 0)
    };
    for y in 0..full.height() {
        for x in 0..full.width() {
            let in_drawn = drawn.contains(&(x / TILE_SIZE, y / TILE_SIZE));
            let want = if in_drawn { full.raw(x, y) } else { clear_bits };
            assert_eq!(tiled.raw(x, y), want, "{what}: pixel ({x}, {y})");
        }
    }
}

#[test]
fn every_tile_drawn_alone_holds_the_full_draws_bits() {
    let mut rng = Rng::lcg64(0x7117);
    for round in 0..3 {
        let (meshes, transforms) = scene(&mut rng);
        let inst = instances(&meshes, &transforms);
        let index = InstanceIndex::new(&inst);
        for (vp, name) in views(&mut rng) {
            for state in states(&mut rng) {
                for (format, size) in [
                    (Format::D32Float, (200, 136)),
                    (Format::D16Unorm, (130, 70)),
                ] {
                    let what = format!("round {round}, {name}, {format:?}, {state:?}");
                    let mut full = target(size, format, &state);
                    let drawn = rasterize(&mut full, vp, &inst, &state, 1);
                    assert!(drawn.pixels_written > 500, "{what}: {drawn:?}");
                    // Every tile, one call per tile (the order does not matter).
                    let (tx, ty) = (size.0.div_ceil(TILE_SIZE), size.1.div_ceil(TILE_SIZE));
                    let all: Vec<(u32, u32)> =
                        (0..ty).flat_map(|y| (0..tx).map(move |x| (x, y))).collect();
                    let mut tiled = target(size, format, &state);
                    for &t in all.iter().rev() {
                        rasterize_tiles(&mut tiled, vp, &inst, &index, &state, &[t], 1);
                    }
                    assert_tiles_match(&full, &tiled, &all, clear_for(&state), &what);
                    // A random subset on two threads.
                    let some: Vec<(u32, u32)> = all
                        .iter()
                        .copied()
                        .filter(|_| rng.f32_unit() < 0.4)
                        .collect();
                    let mut part = target(size, format, &state);
                    rasterize_tiles(&mut part, vp, &inst, &index, &state, &some, 2);
                    assert_tiles_match(&full, &part, &some, clear_for(&state), &what);
                }
            }
        }
    }
}

#[test]
fn a_refitted_index_draws_what_a_fresh_full_draw_of_the_moved_scene_draws() {
    let mut rng = Rng::lcg64(0xd00f);
    let (meshes, mut transforms) = scene(&mut rng);
    let inst = instances(&meshes, &transforms);
    let mut index = InstanceIndex::new(&inst);
    drop(inst);
    let state = RasterState::default();
    let (vp, _) = views(&mut rng)[0];
    for step in 0..20 {
        // Move a few instances, some far across the map, one out of it and back.
        for _ in 0..3 {
            let k = 1 + rng.below_f32(meshes.len() as u32 - 2) as usize;
            transforms[k] = Mat4::from_translation(Vec3::new(
                rng.f32_in(-8.0, 8.0),
                rng.f32_in(0.0, 3.0),
                rng.f32_in(-8.0, 8.0),
            )) * Mat4::from_rotation_y(rng.f32_in(0.0, 6.0));
            if step == 7 {
                transforms[k] = Mat4::from_translation(Vec3::splat(1e4));
            }
            let inst = instances(&meshes, &transforms);
            index.update(k, &inst);
        }
        let inst = instances(&meshes, &transforms);
        let size = (256, 192);
        let mut full = target(size, Format::D32Float, &state);
        rasterize(&mut full, vp, &inst, &state, 1);
        let all: Vec<(u32, u32)> = (0..3).flat_map(|y| (0..4).map(move |x| (x, y))).collect();
        let mut tiled = target(size, Format::D32Float, &state);
        rasterize_tiles(&mut tiled, vp, &inst, &index, &state, &all, 2);
        assert_tiles_match(&full, &tiled, &all, 1.0, &format!("step {step}"));
    }
}

#[test]
fn tiles_outside_the_grid_are_ignored_and_an_empty_submission_draws_nothing() {
    let state = RasterState::default();
    let mut t = DepthTarget::new(64, 64, Format::D32Float).unwrap();
    let index = InstanceIndex::new(&[]);
    let stats = rasterize_tiles(
        &mut t,
        Mat4::IDENTITY,
        &[],
        &index,
        &state,
        &[(0, 0), (9, 9)],
        1,
    );
    assert_eq!(stats.pixels_written, 0);
    assert!((0..64).all(|y| (0..64).all(|x| t.depth(x, y) == 1.0)));
}
