//! Bevy's shadow model (`shadow::pbr`): a directional light with up to four cascades, a spot or
//! a point light, from arbitrary (NaN, ±inf, huge, degenerate) parameters, renders a small box
//! scene when the engine accepts it; then every filter's shadow factor at arbitrary points and
//! normals must come back without a panic, not NaN, in [0, 1] (up to 1.000112, the sum of
//! bevy_pbr's cube Gaussian weights).
#![no_main]

use arbitrary::Arbitrary;
use glam::{Mat4, Vec2, Vec3};
use libfuzzer_sys::fuzz_target;
use penumbra_core::shadow::pbr::{
    PbrCascade, PbrDirectional, PbrFilter, PbrPoint, PbrSpot, TemporalPixel,
};
use penumbra_core::shadow::{Occluder, Scene, ShadowMap};
use penumbra_fuzz::Num;

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    a: [Num; 3],
    b: [Num; 3],
    scalars: [Num; 6],
    matrices: Vec<[Num; 16]>,
    resolution: u8,
    boxes: Vec<([Num; 3], [Num; 3])>,
    points: Vec<([Num; 3], [Num; 3], Num)>,
    pixel: ([Num; 2], u32),
}

fn v(n: [Num; 3]) -> Vec3 {
    Vec3::new(n[0].get(), n[1].get(), n[2].get())
}

fuzz_target!(|input: Input| {
    let (a, b) = (v(input.a), v(input.b));
    let s = input.scalars.map(Num::get);
    let resolution = u32::from(input.resolution % 40) + 1;
    let mut scene = Scene::default();
    for (min, max) in input.boxes.iter().take(6) {
        scene.add(Occluder::cuboid(v(*min), v(*max)));
    }
    enum Model {
        D(PbrDirectional),
        S(PbrSpot),
        P(PbrPoint),
    }
    let model = match input.kind % 3 {
        0 => Model::D(PbrDirectional {
            direction_to_light: a,
            depth_bias: s[0],
            normal_bias: s[1],
            overlap_proportion: s[2],
            cascades: input
                .matrices
                .iter()
                .take(4)
                .enumerate()
                .map(|(i, m)| PbrCascade {
                    clip_from_world: Mat4::from_cols_array(&m.map(Num::get)),
                    texel_size: s[3],
                    far_bound: s[4] * (i + 1) as f32,
                })
                .collect(),
            resolution,
        }),
        1 => Model::S(PbrSpot {
            position: a,
            direction: b,
            outer_angle: s[0],
            inner_angle: s[1],
            range: s[2],
            near_z: s[3],
            depth_bias: s[4],
            normal_bias: s[5],
            resolution,
        }),
        _ => Model::P(PbrPoint {
            position: a,
            range: s[0],
            near_z: s[1],
            depth_bias: s[2],
            normal_bias: s[3],
            resolution,
        }),
    };
    let light = match &model {
        Model::D(d) => d.light(1.0),
        Model::S(p) => p.light(1.0),
        Model::P(p) => p.light(1.0),
    };
    let Ok(map) = ShadowMap::render(light, &scene) else {
        return;
    };
    let pixel = TemporalPixel {
        frag_coord: Vec2::new(input.pixel.0[0].get(), input.pixel.0[1].get()),
        frame: input.pixel.1,
    };
    let filters = [
        PbrFilter::Hardware2x2,
        PbrFilter::Gaussian,
        PbrFilter::Temporal(None),
        PbrFilter::Temporal(Some(pixel)),
    ];
    for (p, n, z) in input.points.iter().take(64) {
        let (p, n, z) = (v(*p), v(*n), z.get());
        for filter in filters {
            let f = match &model {
                Model::D(d) => d.shadow_factor(&map, p, n, z, filter),
                Model::S(s) => s.shadow_factor(&map, p, n, filter),
                Model::P(q) => q.shadow_factor(&map, p, n, filter),
            };
            assert!(
                (0.0..=1.000_2).contains(&f),
                "kind {} {s:?} {p} {n} {z} {filter:?}: {f}",
                input.kind % 3
            );
        }
    }
});
