//! `Lighting::raycast`, `raycast_many` and `is_inside`: hand-computed hits on boxes, the
//! distance cut-off and filters, watertightness at the shared edges and vertices of closed
//! meshes, bit-for-bit agreement with a brute-force loop over every triangle (through the same
//! public triangle test), degenerate input, inside tests, and moving occluders.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Quat, Vec3, Vec4};
use penumbra_core::raster::{
    Instance, InstanceIndex, Mesh, RayHit, TriangleRay, ray_inverse, unit_direction,
};
use penumbra_core::shadow::{Lighting, Occluder, OccluderId};
use penumbra_testkit::{NON_FINITE_F32, Rng};

const ALL: &dyn Fn(OccluderId) -> bool = &|_| true;

fn close(a: Vec3, b: Vec3, tol: f32) -> bool {
    (a - b).abs().max_element() <= tol
}

fn assert_hit(hit: Option<RayHit<OccluderId>>, position: Vec3, normal: Vec3, distance: f32) {
    let hit = hit.expect("a hit");
    assert!(
        close(hit.position, position, 1e-5),
        "position {} != {position}",
        hit.position
    );
    assert!(
        close(hit.normal, normal, 1e-5),
        "normal {} != {normal}",
        hit.normal
    );
    assert!(
        (hit.distance - distance).abs() <= 1e-5 * distance.max(1.0),
        "distance {} != {distance}",
        hit.distance
    );
    assert!((hit.normal.length() - 1.0).abs() < 1e-6);
}

/// A unit icosahedron subdivided `levels` times onto the unit sphere: closed, vertices
/// shared, every triangle wound outwards.
fn icosphere(levels: u32) -> Mesh {
    let t = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut p: Vec<Vec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Vec3::new(x, y, z).normalize())
    .collect();
    let mut tris: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
        let mut split = |a: u32, b: u32, p: &mut Vec<Vec3>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                p.push(((p[a as usize] + p[b as usize]) * 0.5).normalize());
                p.len() as u32 - 1
            })
        };
        let mut next = Vec::with_capacity(tris.len() * 4);
        for [a, b, c] in tris {
            let (ab, bc, ca) = (
                split(a, b, &mut p),
                split(b, c, &mut p),
                split(c, a, &mut p),
            );
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        tris = next;
    }
    let mesh = Mesh::new(p, tris.into_iter().flatten().collect()).expect("valid sphere");
    // Wound outwards (the tests below rely on closedness only, but check the builder).
    let (p, i) = (mesh.positions(), mesh.indices());
    for t in i.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|k| p[k as usize]);
        assert!((b - a).cross(c - a).dot(a + b + c) > 0.0);
    }
    mesh
}

/// The unique edges of a mesh (pairs of vertex indices).
fn edges(mesh: &Mesh) -> Vec<(u32, u32)> {
    let mut e: Vec<(u32, u32)> = mesh
        .indices()
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    e.sort_unstable();
    e.dedup();
    e
}

#[test]
fn axis_aligned_box_by_hand() {
    let mut lighting = Lighting::new();
    let id = lighting.add_occluder(Occluder::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
    // Straight at the -z face, with a direction of length 2.
    let hit = lighting.raycast(
        Vec3::new(0.25, 0.5, -5.0),
        Vec3::new(0.0, 0.0, 2.0),
        100.0,
        ALL,
    );
    assert_hit(hit, Vec3::new(0.25, 0.5, -1.0), Vec3::NEG_Z, 4.0);
    assert_eq!(hit.map(|h| h.occluder), Some(id));
    // Obliquely at the +x face: from (4, 0, 0) towards (1, 0.3, -0.6).
    let origin = Vec3::new(4.0, 0.0, 0.0);
    let target = Vec3::new(1.0, 0.3, -0.6);
    let hit = lighting.raycast(origin, target - origin, 100.0, ALL);
    assert_hit(hit, target, Vec3::X, (target - origin).length());
    // From inside: the far wall, its normal turned towards the origin.
    let hit = lighting.raycast(
        Vec3::new(0.2, 0.1, 0.0),
        Vec3::new(0.0, 0.5, 0.0),
        100.0,
        ALL,
    );
    assert_hit(hit, Vec3::new(0.2, 1.0, 0.0), Vec3::NEG_Y, 0.9);
    // Going away, or beside it: nothing.
    assert!(
        lighting
            .raycast(Vec3::new(0.0, 0.0, -5.0), Vec3::NEG_Z, 100.0, ALL)
            .is_none()
    );
    assert!(
        lighting
            .raycast(Vec3::new(1.5, 0.0, -5.0), Vec3::Z, 100.0, ALL)
            .is_none()
    );
    // The triangle is one of the two of the -z face: Mesh::cuboid's faces are x-, x+, y-, y+,
    // z-, z+, two triangles each.
    let hit = lighting
        .raycast(Vec3::new(0.25, 0.5, -5.0), Vec3::Z, 100.0, ALL)
        .expect("a hit");
    assert!((8..10).contains(&hit.triangle), "{}", hit.triangle);
}

#[test]
fn rays_along_a_face_plane_hit_its_edge() {
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
    // In the plane x = 1 of the +x face (whose triangles are edge-on: missed), the ray meets
    // the -z face's edge, then runs along the face; likewise along y = -1 and both at once.
    for (origin, position) in [
        (Vec3::new(1.0, 0.3, -5.0), Vec3::new(1.0, 0.3, -1.0)),
        (Vec3::new(0.2, -1.0, -5.0), Vec3::new(0.2, -1.0, -1.0)),
        (Vec3::new(1.0, -1.0, -5.0), Vec3::new(1.0, -1.0, -1.0)),
    ] {
        let hit = lighting.raycast(origin, Vec3::Z, 10.0, ALL).expect("a hit");
        assert_eq!((hit.position, hit.distance), (position, 4.0));
        assert_eq!(hit.normal, Vec3::NEG_Z);
    }
    assert!(
        lighting
            .raycast(Vec3::new(1.0f32.next_up(), 0.3, -5.0), Vec3::Z, 10.0, ALL)
            .is_none()
    );
}

#[test]
fn edges_that_f32_cannot_decide_are_decided_in_f64() {
    // Seen along +z from the origin, the edge from b to c passes 2⁻⁴⁵ from the ray: f32
    // rounds `c.x·b.y − c.y·b.x` to 0, the exact value is −2⁻⁴⁵. The triangle (a, b, c) lies on
    // the far side of the edge and misses; its neighbour (c, b, d) across it hits.
    let e = f32::EPSILON;
    let (a, b, c, d) = (
        Vec3::new(1.0, -1.0, 1.0),
        Vec3::new(-(1.0 + 3.0 * e), -(1.0 + e), 1.0),
        Vec3::new(1.0 + 2.0 * e, 1.0, 1.0),
        Vec3::new(-1.0, 1.0, 1.0),
    );
    assert_eq!(c.x * b.y - c.y * b.x, 0.0);
    let ray = TriangleRay::new(Vec3::ZERO, Vec3::Z).expect("valid ray");
    assert_eq!(ray.intersect(a, b, c), None);
    assert_eq!(ray.intersect(c, b, d), Some(1.0));
    // The same pair from the other side (direction −z swaps the shear's axes).
    let ray = TriangleRay::new(Vec3::new(0.0, 0.0, 2.0), Vec3::NEG_Z).expect("valid ray");
    assert_eq!(ray.intersect(a, b, c), None);
    assert_eq!(ray.intersect(c, b, d), Some(1.0));
}

#[test]
fn rotated_and_scaled_box_by_hand() {
    // Half-extents (1, 0.5, 2), turned 30° round y, centred at (3, 1, -2).
    let centre = Vec3::new(3.0, 1.0, -2.0);
    let turn = Quat::from_rotation_y(30f32.to_radians());
    let transform = Mat4::from_translation(centre)
        * Mat4::from_quat(turn)
        * Mat4::from_scale(Vec3::new(2.0, 1.0, 4.0));
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::mesh(
        Arc::new(Mesh::cuboid(Vec3::splat(-0.5), Vec3::splat(0.5))),
        transform,
    ));
    let world = |q: Vec3| centre + turn * q;
    // Along the box's own -x axis onto its +x face (direction of length 3).
    let hit = lighting.raycast(
        world(Vec3::new(5.0, 0.1, 0.3)),
        turn * Vec3::NEG_X * 3.0,
        50.0,
        ALL,
    );
    assert_hit(hit, world(Vec3::new(1.0, 0.1, 0.3)), turn * Vec3::X, 4.0);
    // Obliquely onto the +y face: from box coordinates (0.2, 3, 1) to (0.6, 0.5, -1.5).
    let (from, to) = (Vec3::new(0.2, 3.0, 1.0), Vec3::new(0.6, 0.5, -1.5));
    let hit = lighting.raycast(world(from), world(to) - world(from), 50.0, ALL);
    assert_hit(hit, world(to), Vec3::Y, (to - from).length());
    // Onto the -z face, which is 2 away from the centre along the box's z.
    let hit = lighting.raycast(world(Vec3::new(-0.4, 0.2, -6.0)), turn * Vec3::Z, 50.0, ALL);
    assert_hit(
        hit,
        world(Vec3::new(-0.4, 0.2, -2.0)),
        turn * Vec3::NEG_Z,
        4.0,
    );
    // Just beside the +x face: a miss.
    assert!(
        lighting
            .raycast(world(Vec3::new(1.01, 0.0, -6.0)), turn * Vec3::Z, 50.0, ALL)
            .is_none()
    );
}

#[test]
fn max_distance_cuts_off_and_filters_skip_occluders() {
    let mut lighting = Lighting::new();
    let near = lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-1.0, -1.0, 2.0),
        Vec3::new(1.0, 1.0, 3.0),
    ));
    let far = lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-1.0, -1.0, 6.0),
        Vec3::new(1.0, 1.0, 7.0),
    ));
    let (o, d) = (Vec3::new(0.1, 0.2, 0.0), Vec3::Z);
    let hit = lighting.raycast(o, d, 100.0, ALL).expect("a hit");
    assert_eq!((hit.occluder, hit.distance), (near, 2.0));
    // Hits at exactly max_distance count; below it, nothing.
    assert_eq!(
        lighting.raycast(o, d, 2.0, ALL).map(|h| h.occluder),
        Some(near)
    );
    assert!(lighting.raycast(o, d, 2.0f32.next_down(), ALL).is_none());
    assert!(lighting.raycast(o, d, 0.0, ALL).is_none());
    // The filter excludes the near box: the far one.
    let not_near = |id: OccluderId| id != near;
    let hit = lighting.raycast(o, d, 100.0, &not_near).expect("a hit");
    assert_eq!((hit.occluder, hit.distance), (far, 6.0));
    assert!(lighting.raycast(o, d, 5.0, &not_near).is_none());
    assert!(lighting.raycast(o, d, 100.0, &|_| false).is_none());
    // Two occluders in the same place: the first handle wins the tie.
    let twin = lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-1.0, -1.0, 2.0),
        Vec3::new(1.0, 1.0, 3.0),
    ));
    assert!(twin > near);
    assert_eq!(
        lighting.raycast(o, d, 100.0, ALL).map(|h| h.occluder),
        Some(near)
    );
    assert_eq!(
        lighting.raycast(o, d, 100.0, &not_near).map(|h| h.occluder),
        Some(twin)
    );
}

/// Casts `rays` rays at the shared edges and vertices of `mesh` placed by `transform`, half
/// from inside, half from outside through the point into the solid, and checks that each hits
/// at the aimed point.
fn watertight(mesh: Mesh, transform: Mat4, rays: usize, seed: u64) {
    let mut rng = Rng::lcg64(seed);
    let mut lighting = Lighting::new();
    let (lo, hi) = mesh.bounds().expect("bounds");
    let centre = (lo + hi) * 0.5;
    let half = (hi - lo) * 0.5;
    let positions = mesh.positions().to_vec();
    let edges = edges(&mesh);
    lighting.add_occluder(Occluder::mesh(Arc::new(mesh), transform));
    let mut misses = Vec::new();
    for r in 0..rays {
        // Every fifth target a vertex, the others points of the edges on a grid of 1/16.
        let target = if r % 5 == 0 {
            positions[r / 5 % positions.len()]
        } else {
            let (a, b) = edges[r % edges.len()];
            let s = ((r / edges.len()) % 15 + 1) as f32 / 16.0;
            let (a, b) = (positions[a as usize], positions[b as usize]);
            a + (b - a) * s
        };
        let (origin, expect) = if r % 2 == 0 {
            // From inside: the aimed point is where it leaves (or an earlier wall, never
            // nothing).
            (
                centre
                    + half
                        * 0.3
                        * Vec3::new(
                            rng.f32_in(-1.0, 1.0),
                            rng.f32_in(-1.0, 1.0),
                            rng.f32_in(-1.0, 1.0),
                        ),
                None,
            )
        } else {
            // From outside, roughly along the line through the centre: it enters at the point.
            let out = centre
                + (target - centre) * rng.f32_in(2.0, 4.0)
                + half
                    * 0.05
                    * Vec3::new(
                        rng.f32_in(-1.0, 1.0),
                        rng.f32_in(-1.0, 1.0),
                        rng.f32_in(-1.0, 1.0),
                    );
            (out, Some(target))
        };
        let (wo, wt) = (
            transform.transform_point3(origin),
            transform.transform_point3(target),
        );
        match lighting.raycast(wo, wt - wo, 1e3, ALL) {
            None => misses.push((r, origin, target)),
            Some(hit) => {
                if expect.is_some() {
                    let tol = 1e-4 * (wt - wo).length();
                    assert!(
                        close(hit.position, wt, tol),
                        "ray {r}: hit {} for {wt}",
                        hit.position
                    );
                }
            }
        }
    }
    assert!(
        misses.is_empty(),
        "{} of {rays} rays slipped through: {:?}",
        misses.len(),
        &misses[..misses.len().min(5)]
    );
}

#[test]
fn rays_at_shared_edges_and_vertices_never_slip_through() {
    let cube = || Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0));
    watertight(cube(), Mat4::IDENTITY, 10_000, 1);
    watertight(
        cube(),
        Mat4::from_scale_rotation_translation(
            Vec3::new(0.7, 2.3, 1.1),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, 1.1, -0.4),
            Vec3::new(10.0, -3.0, 7.5),
        ),
        10_000,
        2,
    );
    watertight(icosphere(3), Mat4::IDENTITY, 10_000, 3);
    watertight(
        icosphere(3),
        Mat4::from_scale_rotation_translation(
            Vec3::new(3.0, 1.0, 2.0),
            Quat::from_rotation_z(0.7),
            Vec3::new(-4.0, 2.0, 30.0),
        ),
        10_000,
        4,
    );
}

/// The reference: every triangle of every occluder (handle order), through the same inverse
/// and triangle test, the lexicographic minimum of (distance, occluder, triangle).
fn brute_force(
    lighting: &Lighting,
    origin: Vec3,
    direction: Vec3,
    max_distance: f32,
    filter: &dyn Fn(OccluderId) -> bool,
) -> Option<(f32, OccluderId, u32)> {
    let d = unit_direction(direction)?;
    if max_distance.is_nan() || max_distance < 0.0 || !origin.is_finite() {
        return None;
    }
    let mut best: Option<(f32, OccluderId, u32)> = None;
    for (id, o) in lighting.occluders() {
        if !filter(id) {
            continue;
        }
        let Some(inverse) = ray_inverse(&o.transform) else {
            continue;
        };
        let Some(ray) = TriangleRay::through(&inverse, origin, d) else {
            continue;
        };
        let (p, idx) = (o.mesh.positions(), o.mesh.indices());
        for (k, t) in idx.chunks_exact(3).enumerate() {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| p[i as usize]);
            if let Some(t) = ray.intersect(a, b, c)
                && t <= max_distance
            {
                let key = (t, id, k as u32);
                if best.is_none_or(|b| key.0 < b.0 || (key.0 == b.0 && (key.1, key.2) < (b.1, b.2)))
                {
                    best = Some(key);
                }
            }
        }
    }
    best
}

/// A random level: a ground grid, shared boxes and spheres with random turns, scales and
/// translations (a few sharing a place exactly, for ties).
fn random_scene(rng: &mut Rng) -> Lighting {
    let mut lighting = Lighting::new();
    let (n, size) = (24u32, 1.0f32);
    let mut p = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (
                (i as f32 - n as f32 / 2.0) * size,
                (j as f32 - n as f32 / 2.0) * size,
            );
            p.push(Vec3::new(x, 0.3 * (x * 0.7).sin() * (z * 0.4).cos(), z));
        }
    }
    let mut idx = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i;
            idx.extend_from_slice(&[a, a + n + 1, a + n + 2, a, a + n + 2, a + 1]);
        }
    }
    lighting.add_occluder(Occluder::mesh(
        Arc::new(Mesh::new(p, idx).expect("ground")),
        Mat4::IDENTITY,
    ));
    let cube = Arc::new(Mesh::cuboid(
        Vec3::new(-0.5, 0.0, -0.5),
        Vec3::new(0.5, 1.0, 0.5),
    ));
    let ball = Arc::new(icosphere(2));
    let (mut last, mut last_mesh) = (Mat4::IDENTITY, &cube);
    for k in 0..60 {
        let mut mesh = if k % 4 == 3 { &ball } else { &cube };
        let transform = if k % 13 == 12 {
            mesh = last_mesh;
            last
        } else {
            Mat4::from_scale_rotation_translation(
                Vec3::new(
                    rng.f32_in(0.3, 3.0),
                    rng.f32_in(0.3, 3.0),
                    rng.f32_in(0.3, 3.0),
                ),
                Quat::from_euler(
                    glam::EulerRot::YXZ,
                    rng.f32_in(0.0, 6.3),
                    rng.f32_in(-0.5, 0.5),
                    rng.f32_in(-0.5, 0.5),
                ),
                rng.point(Vec3::new(-11.0, -0.5, -11.0), Vec3::new(11.0, 2.0, 11.0)),
            )
        };
        (last, last_mesh) = (transform, mesh);
        lighting.add_occluder(Occluder::mesh(Arc::clone(mesh), transform));
    }
    lighting
}

/// Random rays over the scene: origins above and within it, directions anywhere (a third aimed
/// exactly at a vertex or an edge point of some occluder, where the hierarchy's box tests are
/// tightest), random lengths and cut-offs.
fn random_rays(rng: &mut Rng, lighting: &Lighting, count: usize) -> Vec<(Vec3, Vec3, f32)> {
    let occluders: Vec<&Occluder> = lighting.occluders().map(|(_, o)| o).collect();
    (0..count)
        .map(|k| {
            let mut origin = rng.point(Vec3::new(-14.0, -1.0, -14.0), Vec3::new(14.0, 8.0, 14.0));
            if k % 7 == 1 {
                // From a vertex of the ground (untransformed): hits at distance 0 on every
                // triangle round it, in several leaves; the smallest index must win.
                let ground = occluders[0];
                let p = ground.mesh.positions();
                origin = p[rng.below_f32(p.len() as u32) as usize];
            }
            let direction = if k % 3 == 0 {
                let o = occluders[rng.below_f32(occluders.len() as u32) as usize];
                let (p, idx) = (o.mesh.positions(), o.mesh.indices());
                let t = rng.below_f32(idx.len() as u32 / 3) as usize;
                let (a, b) = (p[idx[3 * t] as usize], p[idx[3 * t + 1] as usize]);
                let s = if k % 2 == 0 { 0.0 } else { rng.f32_unit() };
                o.transform.transform_point3(a + (b - a) * s) - origin
            } else {
                Vec3::new(
                    rng.f32_in(-1.0, 1.0),
                    rng.f32_in(-1.0, 1.0),
                    rng.f32_in(-1.0, 1.0),
                ) * rng.f32_in(0.1, 10.0)
            };
            let max = if k % 4 == 0 {
                f32::INFINITY
            } else {
                rng.f32_in(0.0, 40.0)
            };
            (origin, direction, max)
        })
        .collect()
}

#[test]
fn random_rays_agree_bit_for_bit_with_brute_force() {
    let mut rng = Rng::lcg64(0x5ca1e);
    for scene in 0..3 {
        let lighting = random_scene(&mut rng);
        let rays = random_rays(&mut rng, &lighting, 3000);
        let ids: Vec<OccluderId> = lighting.occluders().map(|(id, _)| id).collect();
        let excluded = ids[rng.below_f32(ids.len() as u32) as usize];
        let some = move |id: OccluderId| id != excluded && id.0 % 5 != 2;
        let mut hits = 0;
        for (k, &(o, d, max)) in rays.iter().enumerate() {
            let filter: &dyn Fn(OccluderId) -> bool = if k % 2 == 0 { ALL } else { &some };
            let got = lighting
                .raycast(o, d, max, filter)
                .map(|h| (h.distance.to_bits(), h.occluder, h.triangle));
            let want = brute_force(&lighting, o, d, max, filter)
                .map(|(t, id, tri)| (t.to_bits(), id, tri));
            assert_eq!(got, want, "scene {scene} ray {k}: {o} {d} {max}");
            hits += usize::from(got.is_some());
        }
        assert!(hits > 1000, "only {hits} hits");
    }
}

#[test]
fn raycast_many_gives_the_bits_of_raycast() {
    let mut rng = Rng::lcg64(0xba7c);
    let lighting = random_scene(&mut rng);
    let rays = random_rays(&mut rng, &lighting, 2000);
    let mut pairs: Vec<(Vec3, Vec3)> = rays.iter().map(|&(o, d, _)| (o, d)).collect();
    // Broken rays among them: large batches are cast in an order of their own (along a curve
    // through the origins), where a non-finite origin sorts last.
    for (k, bad) in [
        (Vec3::NAN, Vec3::Y),
        (Vec3::splat(f32::INFINITY), Vec3::Y),
        (Vec3::new(1.0, 2.0, 3.0), Vec3::ZERO),
        (Vec3::new(-1.0, 4.0, 2.0), Vec3::NAN),
    ]
    .into_iter()
    .enumerate()
    {
        pairs.insert(k * 397, bad);
    }
    // A second batch with origins a whole f32 range apart (every other ray then shares one
    // cell of the curve).
    let mut wide = pairs.clone();
    wide.insert(5, (Vec3::splat(f32::MAX), Vec3::NEG_Y));
    wide.insert(900, (Vec3::splat(-f32::MAX), Vec3::X));
    let filter = |id: OccluderId| id.0 % 7 != 3;
    for (pairs, threads) in [
        (&pairs, 0),
        (&pairs, 1),
        (&pairs, 2),
        (&pairs, 3),
        (&wide, 2),
    ] {
        let one: Vec<_> = pairs
            .iter()
            .map(|&(o, d)| lighting.raycast(o, d, 25.0, &filter))
            .collect();
        assert!(one.iter().filter(|h| h.is_some()).count() > 500);
        let many = lighting.raycast_many(pairs, 25.0, &filter, threads);
        assert_eq!(many.len(), one.len());
        for (k, (a, b)) in many.iter().zip(&one).enumerate() {
            let bits = |h: &Option<RayHit<OccluderId>>| {
                h.map(|h| {
                    (
                        h.position.to_array().map(f32::to_bits),
                        h.normal.to_array().map(f32::to_bits),
                        h.distance.to_bits(),
                        h.occluder,
                        h.triangle,
                    )
                })
            };
            assert_eq!(bits(a), bits(b), "ray {k}, {threads} threads");
        }
    }
    assert!(lighting.raycast_many(&[], 1.0, &filter, 2).is_empty());
}

#[test]
fn degenerate_input_never_panics_and_misses() {
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
    // Occluders that can never be hit: a flat scale, a NaN transform, a projective one.
    let cube = Arc::new(Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
    lighting.add_occluder(Occluder::mesh(
        Arc::clone(&cube),
        Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0)),
    ));
    lighting.add_occluder(Occluder::mesh(
        Arc::clone(&cube),
        Mat4::from_translation(Vec3::NAN),
    ));
    let mut projective = Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0));
    projective.w_axis = Vec4::new(0.0, 0.0, 5.0, 2.0);
    projective.x_axis.w = 0.5;
    lighting.add_occluder(Occluder::mesh(Arc::clone(&cube), projective));
    // A mesh with a NaN vertex and an infinite one, and one with nothing in it.
    let broken = Mesh::new(
        vec![
            Vec3::new(0.0, 0.0, 3.0),
            Vec3::new(f32::NAN, 1.0, 3.0),
            Vec3::new(1.0, f32::INFINITY, 3.0),
            Vec3::new(1.0, 0.0, 3.0),
        ],
        vec![0, 1, 3, 0, 2, 3],
    )
    .expect("valid indices");
    lighting.add_occluder(Occluder::mesh(Arc::new(broken), Mat4::IDENTITY));
    lighting.add_occluder(Occluder::mesh(Arc::new(Mesh::default()), Mat4::IDENTITY));
    for x in NON_FINITE_F32 {
        for v in [
            Vec3::new(x, 0.0, 0.0),
            Vec3::new(0.0, x, 0.0),
            Vec3::new(0.0, 0.0, x),
        ] {
            assert!(lighting.raycast(v, Vec3::Z, 10.0, ALL).is_none());
            assert!(
                lighting
                    .raycast(Vec3::new(0.0, 0.0, -5.0), v, 10.0, ALL)
                    .is_none()
            );
            assert!(lighting.is_inside(v).is_none());
        }
    }
    let o = Vec3::new(0.0, 0.0, -5.0);
    assert!(lighting.raycast(o, Vec3::ZERO, 10.0, ALL).is_none());
    assert!(
        lighting
            .raycast(o, Vec3::new(0.0, -0.0, 0.0), 10.0, ALL)
            .is_none()
    );
    assert!(lighting.raycast(o, Vec3::Z, f32::NAN, ALL).is_none());
    assert!(lighting.raycast(o, Vec3::Z, -1.0, ALL).is_none());
    // Huge and tiny directions normalize.
    for scale in [1e30, 1e-30, 1e-42, f32::MAX] {
        let hit = lighting
            .raycast(o, Vec3::Z * scale, f32::INFINITY, ALL)
            .expect("a hit");
        assert_eq!(hit.distance, 4.0, "direction scaled by {scale}");
    }
    // Only the healthy box is ever hit (the projective one would sit at z = 2.5 round the
    // axis, the flat one is inside the healthy one).
    let mut rng = Rng::lcg64(7);
    for _ in 0..2000 {
        let o = rng.point(Vec3::splat(-6.0), Vec3::splat(6.0));
        let d = rng.point(Vec3::splat(-1.0), Vec3::splat(1.0));
        if let Some(h) = lighting.raycast(o, d, f32::INFINITY, ALL) {
            assert_eq!(h.occluder, OccluderId(0));
            assert!(h.distance.is_finite() && h.normal.is_finite() && h.position.is_finite());
        }
        let _ = lighting.is_inside(o);
    }
    let many = lighting.raycast_many(
        &[(Vec3::NAN, Vec3::Z), (o, Vec3::ZERO), (o, Vec3::INFINITY)],
        1.0,
        &|_| true,
        2,
    );
    assert_eq!(many, vec![None; 3]);
    // The raster-level cast: a non-invertible instance is skipped there too.
    let flat = [Instance::new(&cube, Mat4::from_scale(Vec3::ZERO))];
    assert!(
        InstanceIndex::new(&flat)
            .raycast(&flat, o, Vec3::Z, 10.0)
            .is_none()
    );
}

#[test]
fn is_inside_boxes_rotated_boxes_and_spheres() {
    let mut lighting = Lighting::new();
    let a = lighting.add_occluder(Occluder::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0)));
    let turn = Quat::from_euler(glam::EulerRot::XYZ, 0.4, 0.9, -0.2);
    let rotated = Mat4::from_scale_rotation_translation(
        Vec3::new(1.0, 2.0, 0.5),
        turn,
        Vec3::new(6.0, 0.0, 0.0),
    );
    let b = lighting.add_occluder(Occluder::mesh(
        Arc::new(Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0))),
        rotated,
    ));
    let sphere = Arc::new(icosphere(4)); // 5,120 triangles
    assert_eq!(sphere.triangle_count(), 5120);
    let c = lighting.add_occluder(Occluder::mesh(
        Arc::clone(&sphere),
        Mat4::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::IDENTITY,
            Vec3::new(0.0, 0.0, 8.0),
        ),
    ));
    assert_eq!(lighting.is_inside(Vec3::ZERO), Some(a));
    assert_eq!(lighting.is_inside(Vec3::new(0.99, -0.99, 0.5)), Some(a));
    assert_eq!(lighting.is_inside(Vec3::new(1.01, 0.0, 0.0)), None);
    assert_eq!(lighting.is_inside(Vec3::new(0.0, 3.0, 0.0)), None);
    let mut rng = Rng::lcg64(11);
    for _ in 0..3000 {
        // The rotated box: in its own coordinates inside iff every |q| < 1.
        let q = rng.point(Vec3::splat(-1.3), Vec3::splat(1.3));
        let margin = (q.abs().max_element() - 1.0).abs();
        if margin > 1e-3 {
            let want = (q.abs().max_element() < 1.0).then_some(b);
            assert_eq!(lighting.is_inside(rotated.transform_point3(q)), want, "{q}");
        }
        // The sphere (radius 2 round (0, 0, 8)): its polyhedron lies between radius 1.99 and 2.
        let dir = unit_direction(rng.point(Vec3::splat(-1.0), Vec3::splat(1.0))).unwrap_or(Vec3::X);
        let r = rng.f32_in(0.0, 2.6);
        let p = Vec3::new(0.0, 0.0, 8.0) + dir * r;
        if r < 1.98 {
            assert_eq!(lighting.is_inside(p), Some(c), "r = {r}");
        } else if r > 2.0001 {
            assert_eq!(lighting.is_inside(p), None, "r = {r}");
        }
        // The axis-aligned box.
        let p = rng.point(Vec3::splat(-1.5), Vec3::splat(1.5));
        if (p.abs().max_element() - 1.0).abs() > 1e-4 {
            assert_eq!(
                lighting.is_inside(p),
                (p.abs().max_element() < 1.0).then_some(a),
                "{p}"
            );
        }
    }
    // Overlaps: the first handle. Points on the surface: the same answer every time, and the
    // vertices (where a ray meets a triangle at distance 0) inside.
    let d = lighting.add_occluder(Occluder::cuboid(Vec3::splat(-0.5), Vec3::splat(3.0)));
    assert_eq!(lighting.is_inside(Vec3::splat(0.2)), Some(a));
    assert_eq!(lighting.is_inside(Vec3::splat(2.0)), Some(d));
    for p in [
        Vec3::new(1.0, 0.3, 0.2),
        Vec3::new(-1.0, -1.0, 0.25),
        Vec3::new(0.3, 1.0, -1.0),
    ] {
        let first = lighting.is_inside(p);
        for _ in 0..3 {
            assert_eq!(lighting.is_inside(p), first);
        }
    }
    assert_eq!(lighting.is_inside(Vec3::splat(-1.0)), Some(a));
    assert_eq!(lighting.is_inside(Vec3::new(1.0, -1.0, 1.0)), Some(a));
}

#[test]
fn rays_see_an_occluder_where_set_occluder_moved_it() {
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::cuboid(
        Vec3::new(-20.0, -1.0, -20.0),
        Vec3::new(20.0, 0.0, 20.0),
    ));
    let cube = Arc::new(Mesh::cuboid(Vec3::splat(-0.5), Vec3::splat(0.5)));
    let at = |p: Vec3, angle: f32| {
        Occluder::mesh(
            Arc::clone(&cube),
            Mat4::from_translation(p) * Mat4::from_rotation_y(angle),
        )
    };
    let id = lighting.add_occluder(at(Vec3::new(0.0, 0.5, 0.0), 0.0));
    let down = |x: f32, z: f32| lighting_hit(&lighting, Vec3::new(x, 10.0, z));
    fn lighting_hit(l: &Lighting, o: Vec3) -> Option<(OccluderId, f32)> {
        l.raycast(o, Vec3::NEG_Y, 100.0, ALL)
            .map(|h| (h.occluder, h.distance))
    }
    assert_eq!(down(0.0, 0.0), Some((id, 9.0)));
    assert_eq!(down(5.0, 0.0).map(|h| h.1), Some(10.0));
    // The index is built now; moves refit it (and its cached inverses) in place.
    for (k, x) in [5.0f32, -3.0, 12.5].into_iter().enumerate() {
        assert!(lighting.set_occluder(id, at(Vec3::new(x, 2.5, 1.0), 0.3 * k as f32)));
        assert_eq!(
            lighting
                .raycast(Vec3::new(x, 10.0, 1.0), Vec3::NEG_Y, 100.0, ALL)
                .map(|h| (h.occluder, h.distance)),
            Some((id, 7.0))
        );
        assert_eq!(
            lighting_hit(&lighting, Vec3::new(0.0, 10.0, 0.0)).map(|h| h.1),
            Some(10.0)
        );
        assert!(lighting.is_inside(Vec3::new(x, 2.5, 1.0)) == Some(id));
    }
    // A removal rebuilds the index: the cube is gone.
    lighting.remove_occluder(id);
    assert_eq!(
        lighting_hit(&lighting, Vec3::new(12.5, 10.0, 1.0)).map(|h| h.1),
        Some(10.0)
    );
    assert_eq!(lighting.is_inside(Vec3::new(12.5, 2.5, 1.0)), None);
}

#[test]
fn the_raster_level_cast_agrees_with_the_lighting() {
    let mut rng = Rng::lcg64(0xabc);
    let lighting = random_scene(&mut rng);
    let occluders: Vec<Occluder> = lighting.occluders().map(|(_, o)| o.clone()).collect();
    let instances: Vec<Instance> = occluders
        .iter()
        .map(|o| Instance::new(&o.mesh, o.transform))
        .collect();
    let index = InstanceIndex::new(&instances);
    for (o, d, max) in random_rays(&mut rng, &lighting, 500) {
        let a = index.raycast(&instances, o, d, max);
        let b = lighting.raycast(o, d, max, ALL);
        assert_eq!(a.map(|h| h.map_id(|i| OccluderId(u64::from(i)))), b);
    }
}

/// Points outside a sphere but inside its bounds, each placed so that one of the inside
/// test's rays passes exactly through an edge of the mesh (where it may count a crossing twice,
/// or graze it): the other two rays outvote it. (With "any odd ray means inside" instead of the
/// majority, about 1% of these points came out inside.)
#[test]
fn is_inside_outvotes_a_ray_through_an_edge() {
    /// The directions of the inside test (object space), as `raster::ray` fixes them.
    const DIRECTIONS: [Vec3; 3] = [
        Vec3::new(0.5773, 0.6118, 0.5407),
        Vec3::new(-0.7072, 0.3090, 0.6360),
        Vec3::new(0.2588, -0.8660, 0.4280),
    ];
    let ball = icosphere(2);
    let p = ball.positions().to_vec();
    let edges = edges(&ball);
    let mut lighting = Lighting::new();
    lighting.add_occluder(Occluder::mesh(Arc::new(ball), Mat4::IDENTITY));
    let mut points = 0;
    for (a, b) in edges {
        for k in 1..16 {
            let (a, b) = (p[a as usize], p[b as usize]);
            let target = a + (b - a) * (k as f32 / 16.0);
            for d in DIRECTIONS {
                for s in [0.05f32, 0.1, 0.2, 0.3] {
                    let q = target - d * s;
                    if q.length() > 1.0 && q.abs().max_element() < 0.99 {
                        points += 1;
                        assert_eq!(lighting.is_inside(q), None, "{q}");
                    }
                }
            }
        }
    }
    assert!(points > 30_000, "{points}");
}
