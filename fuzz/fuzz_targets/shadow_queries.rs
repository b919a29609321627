//! Shadow-map queries of `core/src/shadow`: a light of every kind (directional, spot, point with
//! a cube map, cascades) renders a small box scene, then `ShadowMap::lit_fractions` — the batched
//! path, with its cube-face batching, its fast path for a sun, and its rounds of points — must
//! return for every point exactly the bits of the scalar `lit_fraction`, whatever the points
//! (NaN, ±inf, huge, at the light, on face edges), normals and kernels; every value in [0, 1].
#![no_main]

use arbitrary::Arbitrary;
use glam::Vec3;
use libfuzzer_sys::fuzz_target;
use penumbra_core::Format;
use penumbra_core::shadow::{Light, Occluder, PcfKernel, Scene, ShadowBias};
use penumbra_fuzz::Num;

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    a: [Num; 3],
    b: [Num; 3],
    scalars: [Num; 3],
    resolution: u8,
    d16: bool,
    bias: [Num; 2],
    boxes: Vec<([Num; 3], [Num; 3])>,
    kernel: u8,
    normal: Option<[Num; 3]>,
    points: Vec<[Num; 3]>,
    /// Points on a grid around the light's position (cube edges and corners).
    grid: u8,
}

fn v(n: [Num; 3]) -> Vec3 {
    Vec3::new(n[0].get(), n[1].get(), n[2].get())
}

fuzz_target!(|input: Input| {
    let (a, b) = (v(input.a), v(input.b));
    let [s0, s1, s2] = input.scalars.map(Num::get);
    let light = match input.kind % 4 {
        0 => Light::directional(a, 1.0),
        1 => Light::spot(a, b, s0, s1, 1.0),
        2 => Light::point(a, s0, 1.0),
        _ => Light::cascaded(a, b, vec![s0.abs(), s0.abs() + s1.abs(), s2], 1.0),
    };
    let bias = ShadowBias {
        receiver: input.bias[0].get(),
        normal_offset: input.bias[1].get(),
        ..ShadowBias::default()
    };
    let light = light
        .with_resolution(u32::from(input.resolution % 48) + 1)
        .with_format(if input.d16 { Format::D16Unorm } else { Format::D32Float })
        .with_bias(bias);
    let mut scene = Scene::default();
    for (min, max) in input.boxes.iter().take(8) {
        scene.add(Occluder::cuboid(v(*min), v(*max)));
    }
    let Ok(map) = light.render(&scene) else { return };
    let kernel = [PcfKernel::HARDWARE_2X2, PcfKernel::PCF_3X3, PcfKernel::PCF_5X5, PcfKernel::CASTANO_13][input.kernel as usize % 4].clone();
    let normal = input.normal.map(v);
    let mut points: Vec<Vec3> = input.points.iter().take(2000).map(|p| v(*p)).collect();
    let g = i32::from(input.grid % 6);
    for x in -g..=g {
        for y in -g..=g {
            for z in -g..=g {
                points.push(a + Vec3::new(x as f32, y as f32, z as f32) * 0.37);
            }
        }
    }
    let mut out = vec![0.0; points.len()];
    map.lit_fractions_with(&points, normal, &kernel, &mut out);
    for (p, &lit) in points.iter().zip(&out) {
        let one = map.lit_fraction_with(*p, normal, &kernel);
        assert_eq!(lit.to_bits(), one.to_bits(), "{p} {kernel:?}: batched {lit}, scalar {one}");
        assert!((0.0..=1.0).contains(&lit), "{p}: {lit}");
    }
});
