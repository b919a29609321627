//! Shadow maps against exact ray casts, and the exposure and line-of-sight queries.

use glam::Vec3;
use penumbra_core::Format;
use penumbra_core::shadow::{Aabb, Light, Occluder, PcfKernel, Scene, ShadowMap, Viewer, exposure};
use penumbra_testkit::Rng;

/// Slab test: does the segment from `a` to `b` (excluding its ends) hit the box?
fn segment_hits(a: Vec3, b: Vec3, bx: &Aabb) -> bool {
    let d = b - a;
    let (mut t0, mut t1) = (1e-4f32, 1.0f32 - 1e-4);
    for i in 0..3 {
        if d[i].abs() < 1e-12 {
            if a[i] < bx.min[i] || a[i] > bx.max[i] {
                return false;
            }
        } else {
            let (mut ta, mut tb) = ((bx.min[i] - a[i]) / d[i], (bx.max[i] - a[i]) / d[i]);
            if ta > tb {
                std::mem::swap(&mut ta, &mut tb);
            }
            t0 = t0.max(ta);
            t1 = t1.min(tb);
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

struct BoxScene {
    scene: Scene,
    boxes: Vec<Aabb>,
}

fn random_boxes(seed: u64, count: usize) -> BoxScene {
    let mut rng = Rng::xorshift64(seed);
    let mut scene = Scene::default();
    let mut boxes = Vec::new();
    let floor = Aabb {
        min: Vec3::new(-20.0, -1.0, -20.0),
        max: Vec3::new(20.0, 0.0, 20.0),
    };
    scene.add(Occluder::cuboid(floor.min, floor.max));
    for _ in 0..count {
        let c = Vec3::new(rng.f32_in(-15.0, 15.0), 0.0, rng.f32_in(-15.0, 15.0));
        let h = Vec3::new(
            rng.f32_in(0.3, 2.0),
            rng.f32_in(0.5, 4.0),
            rng.f32_in(0.3, 2.0),
        );
        let b = Aabb {
            min: Vec3::new(c.x - h.x, rng.f32_in(0.0, 2.0), c.z - h.z),
            max: Vec3::new(c.x + h.x, h.y + 2.0, c.z + h.z),
        };
        scene.add(Occluder::cuboid(b.min, b.max));
        boxes.push(b);
    }
    BoxScene { scene, boxes }
}

/// Is `p` shadowed from a light at `light_pos` (or infinitely far along −`dir`)?
fn ray_shadowed(boxes: &[Aabb], p: Vec3, towards_light: impl Fn(Vec3) -> Vec3) -> bool {
    let l = towards_light(p);
    boxes.iter().any(|b| segment_hits(p, l, b))
}

/// Checks lit/unlit against ray casts for points away from shadow edges; returns (agree, total).
fn agreement(
    bs: &BoxScene,
    light: &Light,
    towards_light: &dyn Fn(Vec3) -> Vec3,
    edge_margin: f32,
    seed: u64,
) -> (usize, usize) {
    let map = light.render(&bs.scene).unwrap();
    let mut rng = Rng::xorshift64(seed);
    let (mut agree, mut total) = (0, 0);
    for _ in 0..6000 {
        let on_floor = rng.f32_unit() < 0.5;
        let p = Vec3::new(
            rng.f32_in(-14.0, 14.0),
            if on_floor { 0.0 } else { rng.f32_in(0.1, 6.0) },
            rng.f32_in(-14.0, 14.0),
        );
        if bs.boxes.iter().any(|b| {
            p.cmpge(b.min - Vec3::splat(0.05)).all() && p.cmple(b.max + Vec3::splat(0.05)).all()
        }) {
            continue; // inside (or on) an occluder
        }
        let shadowed = ray_shadowed(&bs.boxes, p, towards_light);
        // Away from shadow edges: every point within the margin gets the same ray-cast answer.
        let near_edge = (0..16).any(|k| {
            let a = k as f32 * std::f32::consts::TAU / 16.0;
            let q = p + Vec3::new(a.cos(), if k % 2 == 0 { 0.0 } else { a.sin() }, a.sin())
                * edge_margin;
            ray_shadowed(&bs.boxes, q, towards_light) != shadowed
        });
        if near_edge {
            continue;
        }
        let normal = on_floor.then_some(Vec3::Y);
        let lit = map.lit_fraction_with(p, normal, &PcfKernel::HARDWARE_2X2);
        total += 1;
        if (lit >= 0.5) != shadowed {
            agree += 1;
        } else if std::env::var("SHADOW_DEBUG").is_ok() {
            eprintln!("disagree at {p} floor={on_floor} lit={lit} shadowed={shadowed}");
        }
    }
    println!(
        "{:?}: {agree} of {total} points away from shadow edges agree with ray casts",
        light.kind
    );
    (agree, total)
}

#[test]
fn directional_shadows_agree_with_ray_casts() {
    let bs = random_boxes(7, 25);
    let dir = Vec3::new(0.4, -1.0, 0.3).normalize();
    let light = Light::directional(dir, 1.0).with_resolution(2048);
    // Map texel ≈ 40 m / 2048; two texels ≈ 0.04 m, plus slack for the slanted projection.
    let (agree, total) = agreement(&bs, &light, &|p| p - dir * 100.0, 0.15, 11);
    assert!(total > 3000, "{total}");
    assert!(
        agree as f64 >= 0.999 * total as f64,
        "{agree} of {total} agree"
    );
}

#[test]
fn spot_shadows_agree_with_ray_casts() {
    let bs = random_boxes(8, 20);
    let pos = Vec3::new(2.0, 14.0, -3.0);
    let light =
        Light::spot(pos, Vec3::new(-0.1, -1.0, 0.1), 1.2, 60.0, 100.0).with_resolution(2048);
    let (agree, total) = agreement(&bs, &light, &|_| pos, 0.15, 12);
    assert!(total > 2000, "{total}");
    assert!(
        agree as f64 >= 0.999 * total as f64,
        "{agree} of {total} agree"
    );
}

#[test]
fn point_light_cube_shadows_agree_with_ray_casts() {
    let bs = random_boxes(9, 20);
    let pos = Vec3::new(0.5, 5.0, 0.5);
    let light = Light::point(pos, 80.0, 100.0).with_resolution(1024);
    let (agree, total) = agreement(&bs, &light, &|_| pos, 0.2, 13);
    assert!(total > 2000, "{total}");
    assert!(
        agree as f64 >= 0.999 * total as f64,
        "{agree} of {total} agree"
    );
}

#[test]
fn d16_maps_and_cascades_agree_with_ray_casts() {
    let bs = random_boxes(10, 20);
    let dir = Vec3::new(-0.3, -1.0, 0.2).normalize();
    let light = Light::directional(dir, 1.0)
        .with_resolution(2048)
        .with_format(Format::D16Unorm);
    let (agree, total) = agreement(&bs, &light, &|p| p - dir * 100.0, 0.15, 14);
    assert!(
        agree as f64 >= 0.999 * total as f64,
        "D16: {agree} of {total} agree"
    );
    let cascades = Light::cascaded(dir, Vec3::ZERO, vec![6.0, 24.0], 1.0).with_resolution(1024);
    let (agree, total) = agreement(&bs, &cascades, &|p| p - dir * 100.0, 0.15, 15);
    assert!(total > 2000, "{total}");
    assert!(
        agree as f64 >= 0.999 * total as f64,
        "cascades: {agree} of {total} agree"
    );
}

#[test]
fn pcf_kernels_soften_edges_but_agree_in_the_open_and_in_full_shadow() {
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    scene.add(Occluder::cuboid(
        Vec3::new(-1.0, 2.0, -1.0),
        Vec3::new(1.0, 2.5, 1.0),
    ));
    let map = Light::directional(Vec3::NEG_Y, 1.0)
        .with_resolution(512)
        .render(&scene)
        .unwrap();
    for k in [
        PcfKernel::HARDWARE_2X2,
        PcfKernel::PCF_3X3,
        PcfKernel::PCF_5X5,
    ] {
        assert_eq!(
            map.lit_fraction_with(Vec3::new(0.0, 0.0, 0.0), Some(Vec3::Y), &k),
            0.0,
            "{k:?}"
        );
        assert_eq!(
            map.lit_fraction_with(Vec3::new(6.0, 0.0, 6.0), Some(Vec3::Y), &k),
            1.0,
            "{k:?}"
        );
    }
    // Right at the shadow edge (x = 1) the wide kernels see both sides.
    let edge = map.lit_fraction_with(Vec3::new(1.0, 0.0, 0.0), Some(Vec3::Y), &PcfKernel::PCF_5X5);
    assert!(edge > 0.0 && edge < 1.0, "{edge}");
}

#[test]
fn exposure_sums_lights_with_falloff_and_cone() {
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    scene.add(Occluder::cuboid(
        Vec3::new(2.0, 0.0, -1.0),
        Vec3::new(3.0, 3.0, 1.0),
    )); // a wall
    let sun = Light::directional(Vec3::new(1.0, -1.0, 0.0), 0.5);
    let spot = Light::spot(Vec3::new(0.0, 4.0, 0.0), Vec3::NEG_Y, 0.6, 20.0, 16.0);
    let lights: Vec<_> = [sun.clone(), spot.clone()]
        .into_iter()
        .map(|l| ShadowMap::render(l, &scene).unwrap())
        .collect();
    let under_spot = exposure(&lights, Vec3::new(0.0, 0.0, 0.0), Some(Vec3::Y));
    assert!(
        (under_spot - (0.5 + spot.unshadowed(Vec3::ZERO))).abs() < 1e-5,
        "{under_spot}"
    );
    // Behind the wall from the sun, outside the spot cone: dark.
    let hidden = exposure(&lights, Vec3::new(3.5, 0.0, 0.0), Some(Vec3::Y));
    assert_eq!(hidden, 0.0);
    assert_eq!(spot.unshadowed(Vec3::new(8.0, 0.0, 0.0)), 0.0); // outside the cone
    assert!(
        spot.unshadowed(Vec3::new(0.0, 0.0, 0.0))
            > spot.unshadowed(Vec3::new(0.0, -0.5, 0.0)) * 0.0
    );
}

#[test]
fn guards_see_through_open_space_but_not_through_walls() {
    let mut scene = Scene::default();
    scene.add(Occluder::cuboid(
        Vec3::new(-10.0, -1.0, -10.0),
        Vec3::new(10.0, 0.0, 10.0),
    ));
    scene.add(Occluder::cuboid(
        Vec3::new(-1.0, 0.0, 4.0),
        Vec3::new(1.0, 3.0, 4.5),
    )); // wall ahead
    let guard = Viewer::new(Vec3::new(0.0, 1.7, 0.0), Vec3::Z, 90f32.to_radians(), 15.0);
    let eye = guard.render(&scene).unwrap();
    assert!(eye.can_see(Vec3::new(3.0, 1.0, 6.0)));
    assert!(!eye.can_see(Vec3::new(0.0, 1.0, 6.0))); // behind the wall
    assert!(!eye.can_see(Vec3::new(0.0, 1.0, -5.0))); // behind the guard
    assert!(!eye.can_see(Vec3::new(3.0, 1.0, 30.0))); // out of range
    let half = eye.visible_fraction(Vec3::new(1.0, 1.0, 6.0), 0.5);
    assert!(half > 0.0 && half < 1.0, "{half}");
    // A 360° eye sees behind itself.
    let all = Viewer::new(
        Vec3::new(0.0, 1.7, 0.0),
        Vec3::Z,
        std::f32::consts::TAU,
        15.0,
    )
    .render(&scene)
    .unwrap();
    assert!(all.can_see(Vec3::new(0.0, 1.0, -5.0)));
    assert!(!all.can_see(Vec3::new(0.0, 1.0, 6.0)));
}

#[test]
fn invalid_lights_are_errors_not_panics() {
    let scene = Scene::default();
    assert!(
        Light::directional(Vec3::new(0.0, -1.0, 0.0), 1.0)
            .render(&scene)
            .is_err()
    ); // nothing to fit
    assert!(
        Light::spot(Vec3::NAN, Vec3::Y, 0.5, 10.0, 1.0)
            .render(&scene)
            .is_err()
    );
    assert!(Light::point(Vec3::ZERO, -1.0, 1.0).render(&scene).is_err());
    assert!(
        Light::point(Vec3::ZERO, 1.0, 1.0)
            .with_resolution(0)
            .render(&scene)
            .is_err()
    );
    assert!(
        Light::point(Vec3::ZERO, 1.0, 1.0)
            .with_format(Format::R8Unorm)
            .render(&scene)
            .is_err()
    );
}

#[test]
fn batched_lit_fractions_equal_the_scalar_query_bit_for_bit() {
    let bs = random_boxes(21, 15);
    let dir = Vec3::new(0.3, -1.0, 0.2).normalize();
    let lights = [
        Light::directional(dir, 1.0).with_resolution(512),
        Light::directional(dir, 1.0)
            .with_resolution(256)
            .with_format(Format::D16Unorm),
        Light::spot(Vec3::new(1.0, 12.0, 2.0), Vec3::NEG_Y, 1.0, 40.0, 10.0).with_resolution(512),
        Light::point(Vec3::new(0.0, 4.0, 0.0), 40.0, 10.0).with_resolution(128),
        Light::cascaded(dir, Vec3::ZERO, vec![5.0, 25.0], 1.0).with_resolution(256),
        // Small cube maps: many footprints cross a face edge or a corner (R102–R104), where the
        // batched path hands the tap to the scalar sampler.
        Light::point(Vec3::new(0.0, 4.0, 0.0), 40.0, 10.0).with_resolution(8),
        Light::point(Vec3::new(0.5, 3.0, -1.0), 40.0, 10.0)
            .with_resolution(32)
            .with_format(Format::D16Unorm),
    ];
    let mut rng = Rng::xorshift64(99);
    let mut points: Vec<Vec3> = (0..300)
        .map(|i| match i % 10 {
            0 => Vec3::NAN,
            1 => Vec3::new(1e30, 0.0, 0.0),
            _ => Vec3::new(
                rng.f32_in(-30.0, 30.0),
                rng.f32_in(-1.0, 8.0),
                rng.f32_in(-30.0, 30.0),
            ),
        })
        .collect();
    // Around the point lights: near the cube's edges and corners, and at the light itself.
    for centre in [Vec3::new(0.0, 4.0, 0.0), Vec3::new(0.5, 3.0, -1.0)] {
        points.push(centre);
        points.push(centre + Vec3::new(1e-40, 0.0, 0.0));
        for _ in 0..100 {
            let signs = Vec3::new(
                rng.f32_in(-1.0, 1.0),
                rng.f32_in(-1.0, 1.0),
                rng.f32_in(-1.0, 1.0),
            )
            .signum();
            let near_diagonal = signs
                + Vec3::new(
                    rng.f32_in(-0.1, 0.1),
                    rng.f32_in(-0.1, 0.1),
                    rng.f32_in(-0.1, 0.1),
                );
            let mut along_edge = near_diagonal;
            along_edge[(rng.f32_in(0.0, 2.99)) as usize] *= rng.f32_in(0.0, 1.0);
            let r = rng.f32_in(0.5, 4.0);
            points.push(centre + near_diagonal * r);
            points.push(centre + along_edge * r);
        }
    }
    for light in &lights {
        let map = light.render(&bs.scene).unwrap();
        for kernel in [
            PcfKernel::HARDWARE_2X2,
            PcfKernel::PCF_3X3,
            PcfKernel::PCF_5X5,
        ] {
            for normal in [None, Some(Vec3::Y)] {
                let mut out = vec![0.0; points.len()];
                map.lit_fractions_with(&points, normal, &kernel, &mut out);
                for (p, o) in points.iter().zip(&out) {
                    assert_eq!(
                        o.to_bits(),
                        map.lit_fraction_with(*p, normal, &kernel).to_bits(),
                        "{:?} {kernel:?} {p}",
                        light.kind
                    );
                }
            }
        }
    }
}
