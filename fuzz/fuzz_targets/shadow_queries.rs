//! Shadow-map queries of `core/src/shadow`: a light of every kind (directional, spot, point with
//! a cube map, cascades) renders a small box scene, then `ShadowMap::lit_fractions` — the batched
//! path, with its cube-face batching, its fast path for a sun, and its rounds of points — must
//! return for every point exactly the bits of the scalar `lit_fraction`, whatever the points
//! (NaN, ±inf, huge, at the light, on face edges), normals (none, one, one per point), kernels
//! (2×2, 3×3, 5×5, Castaño's 13) and conventions (forward or reverse depth, BORDER or CLAMP,
//! normal offset in texels or world units, either bias order, any cull mode and winding);
//! every value in [0, 1].
#![no_main]

use arbitrary::Arbitrary;
use glam::Vec3;
use libfuzzer_sys::fuzz_target;
use penumbra_core::raster::CullMode;
use penumbra_core::shadow::{
    BiasOrder, DepthConvention, Light, Normals, Occluder, OffsetUnits, PcfKernel, RasterConvention,
    Scene, ShadowBias, shadow_sampler,
};
use penumbra_core::{AddressMode, Format};
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
    /// Conventions: bit 0 reverse depth, 1 CLAMP, 2 world-unit normal offset, 3 depth bias
    /// first, 4–5 cull mode, 6 counter-clockwise fronts, 7 one normal per point.
    conventions: u8,
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
    let c = input.conventions;
    let bit = |i: u8| c & (1 << i) != 0;
    let depth = if bit(0) {
        DepthConvention::Reverse
    } else {
        DepthConvention::Forward
    };
    let address = if bit(1) {
        AddressMode::Clamp
    } else {
        AddressMode::Border
    };
    let bias = ShadowBias {
        receiver: input.bias[0].get(),
        normal_offset: input.bias[1].get(),
        normal_units: if bit(2) {
            OffsetUnits::World
        } else {
            OffsetUnits::Texels
        },
        order: if bit(3) {
            BiasOrder::DepthFirst
        } else {
            BiasOrder::NormalFirst
        },
        ..ShadowBias::default()
    };
    let light = light
        .with_resolution(u32::from(input.resolution % 48) + 1)
        .with_format(if input.d16 {
            Format::D16Unorm
        } else {
            Format::D32Float
        })
        .with_bias(bias)
        .with_depth(depth)
        .with_sampler(shadow_sampler(depth, address))
        .with_raster(RasterConvention {
            cull: [CullMode::None, CullMode::Front, CullMode::Back][usize::from((c >> 4) & 3) % 3],
            front_counter_clockwise: bit(6),
            depth_clip: true,
        });
    let mut scene = Scene::default();
    for (min, max) in input.boxes.iter().take(8) {
        scene.add(Occluder::cuboid(v(*min), v(*max)));
    }
    let Ok(map) = light.render(&scene) else {
        return;
    };
    let kernel = [
        PcfKernel::HARDWARE_2X2,
        PcfKernel::PCF_3X3,
        PcfKernel::PCF_5X5,
        PcfKernel::CASTANO_13,
    ][input.kernel as usize % 4]
        .clone();
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
    // One normal per point: the given one turned a little further at each point.
    let each: Vec<Vec3> = (0..points.len())
        .map(|i| normal.unwrap_or(Vec3::Y) + Vec3::new(0.0, 0.0, i as f32 * 0.01))
        .collect();
    let normals = match (bit(7), normal) {
        (true, _) => Normals::Each(&each),
        (false, n) => Normals::from(n),
    };
    let mut out = vec![0.0; points.len()];
    map.lit_fractions_with(&points, normals, &kernel, &mut out);
    for (k, (p, &lit)) in points.iter().zip(&out).enumerate() {
        let one = map.lit_fraction_with(*p, normals.get(k), &kernel);
        assert_eq!(
            lit.to_bits(),
            one.to_bits(),
            "{p} {kernel:?}: batched {lit}, scalar {one}"
        );
        assert!((0.0..=1.0).contains(&lit), "{p}: {lit}");
    }
});
