use super::traversal::{BoxRay, MISS};
use super::*;
use crate::raster::index::{Node, Quad};

#[test]
fn shared_edge_functions_are_exact_negations() {
    // Two triangles sharing the edge (p, q), the ray aimed at a point of it.
    let (p, q) = (Vec3::new(0.1, 0.0, 1.0), Vec3::new(0.3, 1.0, 1.7));
    let (r, s) = (Vec3::new(-1.0, 0.5, 1.2), Vec3::new(1.0, 0.4, 1.3));
    let mut hits = 0;
    for k in 0..1000 {
        let f = k as f32 / 999.0;
        let target = p + (q - p) * f;
        let ray = TriangleRay::new(
            Vec3::new(0.01, -0.02, -3.0),
            target - Vec3::new(0.01, -0.02, -3.0),
        )
        .expect("valid ray");
        let one = ray.intersect(p, q, r).is_some();
        let two = ray.intersect(q, p, s).is_some();
        assert!(one || two, "the ray at f = {f} slipped through the edge");
        hits += usize::from(one) + usize::from(two);
    }
    assert!(hits >= 1000);
}

#[test]
fn box_tests_keep_a_ray_along_a_face_plane_and_agree_on_quads() {
    let n = Node {
        lo: [0.0, 0.0, 0.0],
        hi: [1.0, 1.0, 1.0],
        first: 0,
        count: 1,
    };
    let far = Node {
        lo: [0.0, 0.0, 5.0],
        hi: [1.0, 1.0, 6.0],
        first: 0,
        count: 1,
    };
    let mut quad = Quad::default();
    for (lane, b) in [n, far].iter().enumerate() {
        for a in 0..3 {
            quad.lo[a][lane] = b.lo[a];
            quad.hi[a][lane] = b.hi[a];
        }
    }
    // Along the planes x = 0 and y = 1 (a zero direction component of either sign): the
    // widened boxes keep the ray; the empty lanes are never entered.
    for d in [
        Vec3::Z,
        Vec3::new(-0.0, 0.0, 1.0),
        Vec3::new(0.0, -0.0, 1.0),
    ] {
        let r = BoxRay::new(Vec3::new(0.0, 1.0, -1.0), d.recip(), 1e-6);
        let t = r.enter(&n, f32::INFINITY);
        assert!(t > 0.99 && t <= 1.0, "{t}");
        let (ts, mask) = r.enter_quad(&quad, f32::INFINITY);
        assert_eq!(
            (mask, ts[0], ts[1]),
            (0b11, t, r.enter(&far, f32::INFINITY))
        );
        assert!(ts[1] > 5.9 && ts[1] <= 6.0, "{ts:?}");
        // A cut-off before the far box drops it.
        assert_eq!(r.enter_quad(&quad, 3.0).1, 0b01);
    }
    for o in [Vec3::new(1.5, 0.5, -1.0), Vec3::new(0.5, -0.001, -1.0)] {
        for d in [Vec3::Z, Vec3::NEG_Z, Vec3::new(1e-30, -1e-30, 1.0)] {
            let r = BoxRay::new(o, d.recip(), 1e-6);
            assert_eq!(r.enter(&n, f32::INFINITY), MISS);
            assert_eq!(r.enter_quad(&quad, f32::INFINITY).1, 0);
        }
    }
    // Going away: behind the origin is not a hit; a huge pad keeps every real box and no
    // empty lane.
    let r = BoxRay::new(Vec3::new(0.5, 0.5, 2.0), Vec3::Z.recip(), 0.0);
    assert_eq!(r.enter_quad(&quad, f32::INFINITY).1, 0b10);
    let r = BoxRay::new(Vec3::new(0.5, 0.5, 2.0), Vec3::Z.recip(), f32::MAX);
    let (ts, mask) = r.enter_quad(&quad, f32::INFINITY);
    assert_eq!((mask, ts[0]), (0b11, 0.0));
}

#[test]
fn four_wide_triangle_test_gives_the_scalar_bits() {
    use super::triangle::Leaf4;
    // A fixed LCG (Knuth's MMIX constants): the same triangles every run.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // A small grid of values, so that rays often run exactly through edges and vertices
        // (edge functions of 0, the f64 path).
        ((state >> 40) % 9) as f32 * 0.25 - 1.0
    };
    let (mut hits, mut lanes_seen) = (0, 0);
    for _ in 0..20_000 {
        let mut v = || Vec3::new(next(), next(), next());
        let ray = TriangleRay::new(v(), v());
        let tris: [[Vec3; 3]; 4] = std::array::from_fn(|_| [v(), v(), v()]);
        let Some(ray) = ray else {
            continue;
        };
        let mut leaf = Leaf4::default();
        for (lane, &t) in tris.iter().enumerate() {
            leaf.set(lane, t);
        }
        for lanes in 1..=4u32 {
            let (ts, mask) = ray.intersect4(&leaf, lanes);
            assert_eq!(mask >> lanes, 0, "a lane past the count");
            for (lane, &[a, b, c]) in tris.iter().enumerate().take(lanes as usize) {
                let want = ray.intersect(a, b, c);
                let got = (mask & (1 << lane) != 0).then_some(ts[lane]);
                assert_eq!(
                    got.map(f32::to_bits),
                    want.map(f32::to_bits),
                    "lane {lane} of {tris:?}"
                );
                hits += usize::from(want.is_some());
                lanes_seen += 1;
            }
        }
    }
    assert!(hits > lanes_seen / 50, "{hits} of {lanes_seen}");
}
