//! The rasterizer's drawing kernels (the portable one and, where the CPU has them, the SIMD ones)
//! write the same bits, and so do a full draw and tiles drawn alone: random triangles of every
//! size (below a pixel to far past the target), slope and depth range, every cull mode, both
//! depth tests, both formats, with and without depth clip and bias.

use glam::{Mat4, Vec3, Vec4};
use penumbra_core::Format;
use penumbra_core::cpu::CpuExtension;
use penumbra_core::raster::{
    CullMode, DepthBias, DepthFunc, DepthTarget, Instance, InstanceIndex, Mesh, RasterState,
    RasterStats, rasterize_tiles, rasterize_using,
};
use penumbra_testkit::Rng;

/// (pixel x, pixel y, z) straight to the target, as in the rasterizer tests.
fn pixel_space(w: u32, h: u32) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(2.0 / w as f32, 0.0, 0.0, 0.0),
        Vec4::new(0.0, -2.0 / h as f32, 0.0, 0.0),
        Vec4::new(0.0, 0.0, 1.0, 0.0),
        Vec4::new(-1.0, 1.0, 0.0, 1.0),
    )
}

/// A random triangle in pixel space: its size drawn on a log scale from a tenth of a pixel to
/// a thousand times the target, anywhere round it, with depths in and out of [0, 1].
fn triangle(rng: &mut Rng, w: f32, h: f32) -> [Vec3; 3] {
    let size = 10f32.powf(rng.f32_in(-1.0, 3.5));
    let centre = Vec3::new(
        rng.f32_in(-0.2 * w, 1.2 * w),
        rng.f32_in(-0.2 * h, 1.2 * h),
        0.0,
    );
    let z_mid = rng.f32_in(-0.1, 1.1);
    let slope = 10f32.powf(rng.f32_in(-6.0, 0.5));
    std::array::from_fn(|_| {
        let mut p = centre + Vec3::new(rng.f32_in(-1.0, 1.0), rng.f32_in(-1.0, 1.0), 0.0) * size;
        // Some vertices on the 1/256 grid, some on pixel centres, some anywhere.
        match rng.below_mod(3) {
            0 => p = (p * 256.0).round() / 256.0,
            1 => p = p.floor() + Vec3::new(0.5, 0.5, 0.0),
            _ => {}
        }
        p.z = z_mid + rng.f32_in(-1.0, 1.0) * slope;
        p
    })
}

/// `n` random triangles for a `w` × `h` target, as one mesh.
fn soup(rng: &mut Rng, n: usize, w: u32, h: u32) -> Mesh {
    let positions: Vec<Vec3> = (0..n)
        .flat_map(|_| triangle(rng, w as f32, h as f32))
        .collect();
    Mesh::new(positions, (0..3 * n as u32).collect()).unwrap()
}

fn states(rng: &mut Rng) -> RasterState {
    RasterState {
        cull: rng.pick(&[CullMode::None, CullMode::Back, CullMode::Front]),
        front_counter_clockwise: rng.below_mod(2) == 0,
        depth_bias: if rng.below_mod(3) == 0 {
            DepthBias {
                depth_bias: rng.below_mod(2000) as i32 - 1000,
                slope_scaled_depth_bias: rng.f32_in(-3.0, 3.0),
                depth_bias_clamp: rng.pick(&[0.0, 0.01, -0.01]),
            }
        } else {
            DepthBias::default()
        },
        depth_clip: rng.below_mod(2) == 0,
        depth_func: rng.pick(&[DepthFunc::Less, DepthFunc::Greater]),
    }
}

fn raw(t: &DepthTarget) -> Vec<u32> {
    (0..t.height())
        .flat_map(|y| (0..t.width()).map(move |x| (x, y)))
        .map(|(x, y)| t.raw(x, y))
        .collect()
}

#[test]
fn every_kernel_writes_the_portable_kernels_bits() {
    let mut rng = Rng::xorshift64(0x6b65_726e_656c);
    let sizes = [(64, 64), (200, 136), (129, 67), (300, 300)];
    for round in 0..120 {
        let (w, h) = sizes[round % sizes.len()];
        let n = 1 + rng.below_mod(40) as usize;
        let mesh = soup(&mut rng, n, w, h);
        let instances = [Instance::new(&mesh, Mat4::IDENTITY)];
        let state = states(&mut rng);
        let format = if rng.below_mod(3) == 0 {
            Format::D16Unorm
        } else {
            Format::D32Float
        };
        let clear = if state.depth_func == DepthFunc::Greater {
            0.0
        } else {
            1.0
        };
        let draw = |ext: CpuExtension| -> (Vec<u32>, RasterStats) {
            let mut t = DepthTarget::new(w, h, format).unwrap();
            t.clear(clear);
            let stats = rasterize_using(&mut t, pixel_space(w, h), &instances, &state, 1, ext);
            (raw(&t), stats)
        };
        penumbra_core::cpu::check_against_scalar(
            &CpuExtension::ALL,
            &format!("round {round}: {n} triangles, {format}, {state:?}"),
            draw,
        );
    }
}

#[test]
fn tiles_drawn_alone_hold_the_full_draws_bits_for_random_triangles() {
    let mut rng = Rng::xorshift64(0x7469_6c65);
    for round in 0..40 {
        let (w, h) = (200u32, 150u32);
        let n = 1 + rng.below_mod(60) as usize;
        let mesh = soup(&mut rng, n, w, h);
        let instances = [Instance::new(&mesh, Mat4::IDENTITY)];
        let state = states(&mut rng);
        let vp = pixel_space(w, h);
        let mut full = DepthTarget::new(w, h, Format::D32Float).unwrap();
        rasterize_using(
            &mut full,
            vp,
            &instances,
            &state,
            1,
            CpuExtension::default(),
        );
        let index = InstanceIndex::new(&instances);
        let mut tiled = DepthTarget::new(w, h, Format::D32Float).unwrap();
        let all: Vec<(u32, u32)> = (0..3).flat_map(|y| (0..4).map(move |x| (x, y))).collect();
        rasterize_tiles(&mut tiled, vp, &instances, &index, &state, &all, 2);
        assert!(raw(&full) == raw(&tiled), "round {round}: {state:?}");
    }
}
