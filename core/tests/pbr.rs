//! Bevy's shadow model (`shadow::pbr`) on hand-built scenes: cascade choice and the blend band,
//! spot and point maps, the filters, and hostile points. Parity with Bevy's real renderer is
//! `bevy_plugin/tests/parity.rs`.

use glam::{Mat4, Vec2, Vec3};
use penumbra_core::shadow::pbr::{
    PbrCascade, PbrDirectional, PbrFilter, PbrPoint, PbrSpot, TemporalPixel,
};
use penumbra_core::shadow::{Occluder, Scene, ShadowMap};

/// A 40 m floor (top at y = 0) and a 2 m crate on it at the origin.
fn scene() -> Scene {
    let mut s = Scene::default();
    s.add(Occluder::cuboid(
        Vec3::new(-20.0, -1.0, -20.0),
        Vec3::new(20.0, 0.0, 20.0),
    ));
    s.add(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, -1.0),
        Vec3::new(1.0, 2.0, 1.0),
    ));
    s
}

/// Bevy's cascade matrix for a sun straight down: an orthographic reverse-Z box of half-width
/// `half` around the origin (near plane 50 m above, far 50 m below).
fn cascade(half: f32, far_bound: f32, resolution: u32) -> PbrCascade {
    let view =
        glam::camera::rh::view::look_to_mat4(Vec3::new(0.0, 50.0, 0.0), Vec3::NEG_Y, Vec3::Z);
    // Reverse Z: near (50 m from the eye... the top) maps to 1, far to 0.
    let proj = glam::camera::rh::proj::directx::orthographic(-half, half, -half, half, 100.0, 0.0);
    PbrCascade {
        clip_from_world: proj * view,
        texel_size: 2.0 * half / resolution as f32,
        far_bound,
    }
}

fn sun(cascades: Vec<PbrCascade>) -> PbrDirectional {
    PbrDirectional {
        direction_to_light: Vec3::Y,
        depth_bias: 0.02,
        normal_bias: 1.8,
        overlap_proportion: 0.2,
        cascades,
        resolution: 512,
    }
}

/// A spot light left of the crate, pointing down past it.
fn spot_over_the_crate(resolution: u32) -> PbrSpot {
    PbrSpot {
        position: Vec3::new(-6.0, 4.0, 0.0),
        direction: Vec3::new(1.0, -0.6, 0.0).normalize(),
        outer_angle: 0.8,
        inner_angle: 0.6,
        range: 30.0,
        near_z: 0.1,
        depth_bias: 0.02,
        normal_bias: 1.8,
        resolution,
    }
}

#[test]
fn a_cascade_shadows_under_the_crate_and_lights_the_open_floor() {
    let d = sun(vec![cascade(8.0, 10.0, 512), cascade(16.0, 30.0, 512)]);
    let map = ShadowMap::render(d.light(1.0), &scene()).unwrap();
    for filter in [
        PbrFilter::Hardware2x2,
        PbrFilter::Gaussian,
        PbrFilter::Temporal(None),
    ] {
        // The top of the crate is lit, the floor beside it too; the floor under it (inside the
        // crate) is in shadow.
        assert_eq!(
            d.shadow_factor(&map, Vec3::new(0.0, 2.0, 0.0), Vec3::Y, -5.0, filter),
            1.0
        );
        assert_eq!(
            d.shadow_factor(&map, Vec3::new(4.0, 0.0, 0.0), Vec3::Y, -5.0, filter),
            1.0
        );
        assert_eq!(
            d.shadow_factor(&map, Vec3::new(0.0, 0.0, 0.0), Vec3::Y, -5.0, filter),
            0.0
        );
    }
}

#[test]
fn past_the_last_cascade_and_outside_its_box_is_lit() {
    let d = sun(vec![cascade(8.0, 10.0, 512)]);
    let map = ShadowMap::render(d.light(1.0), &scene()).unwrap();
    let under = Vec3::ZERO;
    assert_eq!(
        d.shadow_factor(&map, under, Vec3::Y, -5.0, PbrFilter::Hardware2x2),
        0.0
    );
    // View depth 10 is the far bound: no cascade.
    assert_eq!(
        d.shadow_factor(&map, under, Vec3::Y, -10.0, PbrFilter::Hardware2x2),
        1.0
    );
    // Outside the 16 m box.
    let far = Vec3::new(12.0, 0.0, 0.0);
    assert_eq!(
        d.shadow_factor(&map, far, Vec3::Y, -5.0, PbrFilter::Hardware2x2),
        1.0
    );
}

#[test]
fn the_overlap_band_blends_the_two_cascades_linearly() {
    // Cascade 0 sees the crate, cascade 1's box is elsewhere (shifted 100 m): in the band of
    // 8..10 m view depth the factor ramps from cascade 0's 0 to cascade 1's 1.
    let mut shifted = cascade(8.0, 30.0, 512);
    shifted.clip_from_world *= Mat4::from_translation(Vec3::new(-100.0, 0.0, 0.0));
    let d = sun(vec![cascade(8.0, 10.0, 512), shifted]);
    let map = ShadowMap::render(d.light(1.0), &scene()).unwrap();
    let f = |depth: f32| d.shadow_factor(&map, Vec3::ZERO, Vec3::Y, -depth, PbrFilter::Hardware2x2);
    assert_eq!(f(7.9), 0.0);
    assert_eq!(f(8.0), 0.0, "the band starts at (1 - 0.2) x 10");
    assert_eq!(f(9.0), 0.5);
    assert!((f(9.5) - 0.75).abs() < 1e-6);
    assert_eq!(f(10.5), 1.0, "cascade 1 alone: outside its box");
}

#[test]
fn spot_and_point_lights_shadow_behind_the_crate() {
    let scene = scene();
    let spot = spot_over_the_crate(512);
    let point = PbrPoint {
        position: Vec3::new(-6.0, 4.0, 0.0),
        range: 30.0,
        near_z: 0.1,
        depth_bias: 0.08,
        normal_bias: 0.6,
        resolution: 512,
    };
    let spot_map = ShadowMap::render(spot.light(1.0), &scene).unwrap();
    let point_map = ShadowMap::render(point.light(1.0), &scene).unwrap();
    // The floor just past the crate, away from the light, is in its shadow; the floor in front
    // of the crate is lit.
    let behind = Vec3::new(2.0, 0.0, 0.0);
    let front = Vec3::new(-3.0, 0.0, 0.0);
    for filter in [
        PbrFilter::Hardware2x2,
        PbrFilter::Gaussian,
        PbrFilter::Temporal(None),
    ] {
        assert_eq!(
            spot.shadow_factor(&spot_map, behind, Vec3::Y, filter),
            0.0,
            "{filter:?}"
        );
        assert_eq!(
            spot.shadow_factor(&spot_map, front, Vec3::Y, filter),
            1.0,
            "{filter:?}"
        );
        assert!(
            point.shadow_factor(&point_map, behind, Vec3::Y, filter) < 0.01,
            "{filter:?}"
        );
        assert!(
            point.shadow_factor(&point_map, front, Vec3::Y, filter) > 0.99,
            "{filter:?}"
        );
        // Every face of the cube: points in all six directions from the light see open floor or
        // walls of nothing, so they are lit.
        for d in [Vec3::X, Vec3::NEG_X, Vec3::Y, Vec3::Z, Vec3::NEG_Z] {
            let p = point.position + d * 3.0;
            assert!(
                point.shadow_factor(&point_map, p, -d, filter) > 0.99,
                "{d} {filter:?}"
            );
        }
    }
    assert!(spot.cone(behind) > 0.0);
    assert_eq!(
        spot.cone(Vec3::new(-12.0, 0.0, 0.0)),
        0.0,
        "behind the spot"
    );
}

#[test]
fn temporal_with_a_pixel_is_one_rotation_of_the_mean() {
    let d = sun(vec![cascade(8.0, 10.0, 512)]);
    let map = ShadowMap::render(d.light(1.0), &scene()).unwrap();
    // On the crate's shadow edge (x = 1 m).
    let edge = Vec3::new(1.0, 0.0, 0.3);
    let mean = d.shadow_factor(&map, edge, Vec3::Y, -5.0, PbrFilter::Temporal(None));
    let mut sum = 0.0;
    let n = 64;
    for k in 0..n {
        let pixel = TemporalPixel {
            frag_coord: Vec2::new(0.5 + k as f32, 0.5),
            frame: 0,
        };
        let f = d.shadow_factor(&map, edge, Vec3::Y, -5.0, PbrFilter::Temporal(Some(pixel)));
        assert!((0.0..=1.0).contains(&f), "{f}");
        sum += f;
    }
    assert!(mean > 0.1 && mean < 0.9, "a soft edge: {mean}");
    assert!(
        (sum / n as f32 - mean).abs() < 0.1,
        "pixels average to about the mean"
    );
}

#[test]
fn hostile_points_give_a_factor_in_zero_one() {
    let d = sun(vec![cascade(8.0, 10.0, 512), cascade(16.0, 30.0, 512)]);
    let map = ShadowMap::render(d.light(1.0), &scene()).unwrap();
    let point = PbrPoint {
        position: Vec3::new(0.0, 4.0, 0.0),
        range: 30.0,
        near_z: 0.1,
        depth_bias: 0.08,
        normal_bias: 0.6,
        resolution: 64,
    };
    let cube = ShadowMap::render(point.light(1.0), &scene()).unwrap();
    let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30, 0.0];
    for &a in &bad {
        for &b in &bad {
            let p = Vec3::new(a, b, 0.5);
            for n in [Vec3::Y, Vec3::ZERO, Vec3::splat(f32::NAN)] {
                for filter in [PbrFilter::Hardware2x2, PbrFilter::Gaussian] {
                    let f = d.shadow_factor(&map, p, n, b, filter);
                    assert!((0.0..=1.0).contains(&f), "{p} {n} {f}");
                    let f = point.shadow_factor(&cube, p, n, filter);
                    // The cube Gaussian's weights sum to 1.000112, as in bevy_pbr.
                    assert!((0.0..=1.000_2).contains(&f), "{p} {n} {f}");
                }
            }
        }
    }
}

#[test]
fn a_bevy_cube_map_answers_every_face_through_the_generic_queries_too() {
    // A box on each side of the light: every face of the z-mirrored cube holds one. The generic
    // `lit_fraction` (face choice and taps through `CubeLookup::MirrorZ`) and the Bevy factor
    // agree on what is shadowed.
    let position = Vec3::new(0.0, 10.0, 0.0);
    let mut scene = Scene::default();
    let dirs = [
        Vec3::X,
        Vec3::NEG_X,
        Vec3::Y,
        Vec3::NEG_Y,
        Vec3::Z,
        Vec3::NEG_Z,
    ];
    for d in dirs {
        let c = position + d * 3.0;
        scene.add(Occluder::cuboid(c - Vec3::splat(0.5), c + Vec3::splat(0.5)));
    }
    let point = PbrPoint {
        position,
        range: 30.0,
        near_z: 0.1,
        depth_bias: 0.08,
        normal_bias: 0.6,
        resolution: 128,
    };
    let map = ShadowMap::render(point.light(1.0), &scene).unwrap();
    for d in dirs {
        let behind = position + d * 6.0;
        // Beside the box, off the axis: nothing in the way.
        let side = position + (d * 6.0 + d.any_orthonormal_vector() * 4.0);
        assert_eq!(map.lit_fraction(behind, None), 0.0, "{d}");
        assert_eq!(map.lit_fraction(side, None), 1.0, "{d}");
        let f = point.shadow_factor(&map, behind, -d, PbrFilter::Hardware2x2);
        assert_eq!(f, 0.0, "{d}");
        let f = point.shadow_factor(&map, side, -d, PbrFilter::Hardware2x2);
        assert_eq!(f, 1.0, "{d}");
    }
}

#[test]
fn an_occluder_keeps_its_own_cull_mode_whatever_the_light_culls() {
    use penumbra_core::raster::{CullMode, Mesh};
    use std::sync::Arc;
    // A one-sided quad 3 m up whose counter-clockwise front faces down, away from the sun.
    let quad = Mesh::new(
        vec![
            Vec3::new(-2.0, 3.0, -2.0),
            Vec3::new(-2.0, 3.0, 2.0),
            Vec3::new(2.0, 3.0, 2.0),
            Vec3::new(2.0, 3.0, -2.0),
        ],
        vec![0, 2, 1, 0, 3, 2],
    )
    .unwrap();
    let quad = Arc::new(quad);
    let d = sun(vec![cascade(8.0, 10.0, 256)]);
    let at = |cull: Option<CullMode>| {
        let mut scene = scene();
        scene.add(Occluder::mesh(quad.clone(), Mat4::IDENTITY).with_cull(cull));
        let map = ShadowMap::render(d.light(1.0), &scene).unwrap();
        d.shadow_factor(
            &map,
            Vec3::new(0.0, 2.0, 1.5),
            Vec3::Y,
            -5.0,
            PbrFilter::Hardware2x2,
        )
    };
    assert_eq!(
        at(None),
        1.0,
        "the light culls back faces: the sun sees the quad's back"
    );
    assert_eq!(at(Some(CullMode::None)), 0.0, "double-sided");
    assert_eq!(at(Some(CullMode::Front)), 0.0, "front faces culled");
    assert_eq!(at(Some(CullMode::Back)), 1.0);
}

/// The batched factors (`shadow_factors`) are, receiver by receiver, the bits of
/// `shadow_factor`: every light kind and filter, on whole maps and on maps a `Lighting` draws
/// tile by tile, for points on and off the maps, in cascade overlap bands, past the last
/// cascade, with odd normals and non-finite values.
#[test]
fn batched_factors_are_the_single_factors_bits() {
    use penumbra_core::shadow::Lighting;
    use penumbra_core::shadow::pbr::PbrReceiver;
    let scene = scene();
    let d = sun(vec![cascade(8.0, 10.0, 256), cascade(16.0, 30.0, 256)]);
    let spot = spot_over_the_crate(256);
    let point = PbrPoint {
        position: Vec3::new(-3.0, 3.0, 1.0),
        range: 30.0,
        near_z: 0.1,
        depth_bias: 0.08,
        normal_bias: 0.6,
        resolution: 64,
    };
    let mut rng = penumbra_testkit::Rng::lcg64(0xba7c);
    // Enough receivers that a tiled map splits them between its two threads.
    let mut receivers: Vec<PbrReceiver> = (0..1500)
        .map(|k| PbrReceiver {
            point: rng.point(Vec3::new(-22.0, -0.5, -22.0), Vec3::new(22.0, 3.0, 22.0)),
            normal: if k % 3 == 0 {
                Vec3::Y
            } else {
                rng.point(Vec3::splat(-1.0), Vec3::splat(1.0)).normalize()
            },
            // Across both cascades, their overlap band (8–10 m) and past the last.
            view_z: -rng.f32_in(0.0, 35.0),
        })
        .collect();
    receivers.extend([
        PbrReceiver {
            point: Vec3::NAN,
            normal: Vec3::Y,
            view_z: -1.0,
        },
        PbrReceiver {
            point: Vec3::ZERO,
            normal: Vec3::INFINITY,
            view_z: f32::NAN,
        },
        PbrReceiver {
            point: Vec3::new(1e30, 0.0, 0.0),
            normal: Vec3::Y,
            view_z: -5.0,
        },
    ]);
    let filters = [
        PbrFilter::Hardware2x2,
        PbrFilter::Gaussian,
        PbrFilter::Temporal(None),
        PbrFilter::Temporal(Some(TemporalPixel {
            frag_coord: Vec2::new(10.5, 3.5),
            frame: 7,
        })),
    ];
    let mut lighting = Lighting::new();
    lighting.set_threads(2);
    for o in &scene.occluders {
        lighting.add_occluder(o.clone());
    }
    let ids = [
        lighting.add_light(d.light(1.0)),
        lighting.add_light(spot.light(1.0)),
        lighting.add_light(point.light(1.0)),
    ];
    for (kind, id) in ids.iter().enumerate() {
        let whole = ShadowMap::render(lighting.light(*id).unwrap().clone(), &scene).unwrap();
        let tiled = lighting.map(*id).unwrap();
        assert!(tiled.tiles_drawn().is_some(), "light {kind} is tiled");
        for map in [&whole, tiled] {
            for filter in filters {
                let one = |r: &PbrReceiver| match kind {
                    0 => d.shadow_factor(map, r.point, r.normal, r.view_z, filter),
                    1 => spot.shadow_factor(map, r.point, r.normal, filter),
                    _ => point.shadow_factor(map, r.point, r.normal, filter),
                };
                let mut many = vec![0.0; receivers.len()];
                match kind {
                    0 => d.shadow_factors(map, &receivers, filter, &mut many),
                    1 => spot.shadow_factors(map, &receivers, filter, &mut many),
                    _ => point.shadow_factors(map, &receivers, filter, &mut many),
                }
                let mut shadowed = 0;
                for (r, m) in receivers.iter().zip(&many) {
                    assert_eq!(
                        m.to_bits(),
                        one(r).to_bits(),
                        "light {kind}, {filter:?}, {r:?}"
                    );
                    shadowed += usize::from(*m < 0.5);
                }
                assert!(shadowed > 0, "light {kind}, {filter:?}: some are in shadow");
            }
        }
    }
}
