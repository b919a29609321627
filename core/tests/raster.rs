//! The depth rasterizer (`penumbra_core::raster`): D3D12's rasterization rules — the top-left
//! fill rule, pixel centres, depth interpolation, clipping, culling, depth bias — and the
//! guarantees of the implementation (thread-count independence, no panics on bad input).

use glam::camera::{lh, rh};
use glam::{Mat4, Vec3, Vec4};
use penumbra_core::Format;
use penumbra_core::format::float_to_unorm;
use penumbra_core::raster::{
    CullMode, DepthBias, DepthTarget, Instance, Mesh, RasterError, RasterState, RasterStats,
    TILE_SIZE, rasterize,
};

// ---------------------------------------------------------------------------------------------
// Helpers

/// A view-projection that maps (pixel x, pixel y, z) straight to the target: x right, y down,
/// z unchanged, w = 1. For power-of-two targets it is exact for positions on the 1/256 grid.
fn pixel_space(w: u32, h: u32) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(2.0 / w as f32, 0.0, 0.0, 0.0),
        Vec4::new(0.0, -2.0 / h as f32, 0.0, 0.0),
        Vec4::new(0.0, 0.0, 1.0, 0.0),
        Vec4::new(-1.0, 1.0, 0.0, 1.0),
    )
}

/// A mesh of independent triangles.
fn soup(tris: &[[Vec3; 3]]) -> Mesh {
    let positions: Vec<Vec3> = tris.iter().flatten().copied().collect();
    let indices = (0..positions.len() as u32).collect();
    Mesh::new(positions, indices).unwrap()
}

fn no_cull() -> RasterState {
    RasterState {
        cull: CullMode::None,
        ..RasterState::default()
    }
}

/// Draws triangles given in pixel space into `target`.
fn draw_pixels(target: &mut DepthTarget, tris: &[[Vec3; 3]], state: &RasterState) -> RasterStats {
    let mesh = soup(tris);
    let vp = pixel_space(target.width(), target.height());
    rasterize(
        target,
        vp,
        &[Instance::new(&mesh, Mat4::IDENTITY)],
        state,
        1,
    )
}

/// Pixels whose depth was written (below the 1.0 of a fresh target).
fn covered(target: &DepthTarget) -> Vec<bool> {
    target.depths().iter().map(|&d| d < 1.0).collect()
}

/// Pixel centres inside the convex polygon `poly` (pixel coordinates, y down), with D3D's
/// top-left rule for centres exactly on its boundary. Exact for coordinates on the 1/256 grid.
fn analytic_coverage(poly: &[(f64, f64)], w: u32, h: u32) -> Vec<bool> {
    let mut poly = poly.to_vec();
    let area: f64 = (0..poly.len())
        .map(|i| {
            let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
            a.0 * b.1 - b.0 * a.1
        })
        .sum();
    if area < 0.0 {
        poly.reverse(); // clockwise on screen (positive area with y down)
    }
    let mut out = vec![false; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let (cx, cy) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
            out[(y * w + x) as usize] = (0..poly.len()).all(|i| {
                let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
                let side = (b.0 - a.0) * (cy - a.1) - (b.1 - a.1) * (cx - a.0);
                let top = a.1 == b.1 && b.0 > a.0;
                let left = b.1 < a.1;
                side > 0.0 || (side == 0.0 && (top || left))
            });
        }
    }
    out
}

/// Renders each triangle alone and checks that the coverage masks are pairwise disjoint and
/// that their union is `expected`; also renders them together with decreasing depths and checks
/// that no pixel was written twice.
fn assert_exact_partition(tris: &[[Vec3; 3]], expected: &[bool], w: u32, h: u32, what: &str) {
    let mut owner: Vec<Option<usize>> = vec![None; (w * h) as usize];
    for (i, tri) in tris.iter().enumerate() {
        let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
        draw_pixels(&mut t, &[*tri], &no_cull());
        for (p, c) in covered(&t).into_iter().enumerate() {
            if c {
                if let Some(j) = owner[p] {
                    panic!(
                        "{what}: pixel ({}, {}) covered by triangles {j} and {i}",
                        p as u32 % w,
                        p as u32 / w
                    );
                }
                owner[p] = Some(i);
            }
        }
    }
    for (p, (&o, &e)) in owner.iter().zip(expected).enumerate() {
        assert_eq!(
            o.is_some(),
            e,
            "{what}: pixel ({}, {}) covered {:?}, expected {e}",
            p as u32 % w,
            p as u32 / w,
            o
        );
    }
    // Together, each triangle nearer than the previous: a double cover would write twice.
    let layered: Vec<[Vec3; 3]> = tris
        .iter()
        .enumerate()
        .map(|(i, t)| t.map(|v| Vec3::new(v.x, v.y, 0.9 - 0.001 * i as f32)))
        .collect();
    let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
    let stats = draw_pixels(&mut t, &layered, &no_cull());
    let distinct = covered(&t).iter().filter(|&&c| c).count() as u64;
    assert_eq!(
        stats.pixels_written, distinct,
        "{what}: a pixel was written twice"
    );
}

/// Rounds to the 1/256 pixel grid.
fn grid(v: f64) -> f64 {
    (v * 256.0).round() / 256.0
}

fn v3(x: f64, y: f64, z: f32) -> Vec3 {
    Vec3::new(x as f32, y as f32, z)
}

/// Sub-pixel offsets (in 1/256 pixel) that put vertices and edges on, just off and between
/// pixel centres.
const OFFSETS: [i32; 7] = [0, 1, 37, 127, 128, 129, 255];

// ---------------------------------------------------------------------------------------------
// Top-left rule, pixel centres

#[test]
fn quad_of_two_triangles_covers_every_pixel_exactly_once_at_many_subpixel_offsets() {
    let (w, h) = (64, 64);
    // Corners on pixel centres (so edges run through centres), axis-aligned and skewed quads.
    let quads: [[(f64, f64); 4]; 3] = [
        [(2.5, 3.5), (20.5, 3.5), (20.5, 17.5), (2.5, 17.5)],
        [(4.5, 2.5), (28.5, 10.5), (20.5, 30.5), (2.5, 20.5)],
        [(10.0, 1.0), (40.0, 12.0), (33.0, 41.0), (1.0, 30.0)],
    ];
    for quad in quads {
        for ox in OFFSETS {
            for oy in [0, 128, 129, 255] {
                let q: Vec<(f64, f64)> = quad
                    .iter()
                    .map(|&(x, y)| (x + f64::from(ox) / 256.0, y + f64::from(oy) / 256.0))
                    .collect();
                let p: Vec<Vec3> = q.iter().map(|&(x, y)| v3(x, y, 0.5)).collect();
                let tris = [[p[0], p[1], p[2]], [p[0], p[2], p[3]]];
                let expected = analytic_coverage(&q, w, h);
                assert!(expected.iter().any(|&c| c));
                assert_exact_partition(&tris, &expected, w, h, &format!("quad {q:?}"));
            }
        }
    }
}

#[test]
fn fan_around_a_vertex_covers_every_pixel_exactly_once_at_many_subpixel_offsets() {
    let (w, h) = (64, 64);
    for n in [7, 12, 32] {
        for ox in OFFSETS {
            for oy in OFFSETS {
                let (cx, cy) = (30.5 + f64::from(ox) / 256.0, 29.0 + f64::from(oy) / 256.0);
                let ring: Vec<(f64, f64)> = (0..n)
                    .map(|i| {
                        let a = std::f64::consts::TAU * f64::from(i) / f64::from(n) + 0.1;
                        (grid(cx + 20.0 * a.cos()), grid(cy + 20.0 * a.sin()))
                    })
                    .collect();
                let c = v3(cx, cy, 0.5);
                let tris: Vec<[Vec3; 3]> = (0..ring.len())
                    .map(|i| {
                        let a = v3(ring[i].0, ring[i].1, 0.5);
                        let j = (i + 1) % ring.len();
                        let b = v3(ring[j].0, ring[j].1, 0.5);
                        // Mixed windings: the fill rule must not depend on vertex order.
                        if i % 2 == 0 { [c, a, b] } else { [b, a, c] }
                    })
                    .collect();
                let expected = analytic_coverage(&ring, w, h);
                assert_exact_partition(&tris, &expected, w, h, &format!("fan n={n} at {cx},{cy}"));
            }
        }
    }
}

/// A fan of thin wedges round (x, y), at sub-pixel offsets from it, on a `w` × `h` target:
/// every pixel is covered exactly once where the fan's polygon covers it. The wedges are thin
/// enough that some rows of a wedge hold no pixel centre.
fn assert_thin_wedge_fans_partition((x, y): (f64, f64), w: u32, h: u32) {
    for n in [48, 97] {
        for ox in [0, 1, 128, 255] {
            for oy in [0, 127, 128, 200] {
                let (cx, cy) = (x + f64::from(ox) / 256.0, y + f64::from(oy) / 256.0);
                let ring: Vec<(f64, f64)> = (0..n)
                    .map(|i| {
                        let a = std::f64::consts::TAU * f64::from(i) / f64::from(n) + 0.05;
                        (grid(cx + 60.0 * a.cos()), grid(cy + 58.0 * a.sin()))
                    })
                    .collect();
                let c = v3(cx, cy, 0.5);
                let tris: Vec<[Vec3; 3]> = (0..ring.len())
                    .map(|i| {
                        let j = (i + 1) % ring.len();
                        [
                            c,
                            v3(ring[i].0, ring[i].1, 0.5),
                            v3(ring[j].0, ring[j].1, 0.5),
                        ]
                    })
                    .collect();
                let expected = analytic_coverage(&ring, w, h);
                assert_exact_partition(&tris, &expected, w, h, &format!("fan n={n} at {cx},{cy}"));
            }
        }
    }
}

#[test]
fn fan_of_thin_wedges_across_tile_boundaries_covers_every_pixel_exactly_once() {
    // 3 × 3 tiles of 64²; the fan's centre sits near the corner shared by four tiles.
    assert_thin_wedge_fans_partition((64.0, 63.5), 160, 150);
}

#[test]
fn fan_of_thin_wedges_round_a_corner_of_four_tiles_covers_every_pixel_exactly_once() {
    // The test above, round the corner shared by the first four tiles of the rasterizer's
    // tiled storage, whatever `TILE_SIZE` is (the test above was written for 64² tiles).
    let t = TILE_SIZE;
    assert_thin_wedge_fans_partition((f64::from(t), f64::from(t) - 0.5), t + 96, t + 86);
}

#[test]
fn long_slivers_across_many_tiles_match_the_analytic_coverage() {
    // Needle-thin triangles spanning several tiles, at shallow and steep angles.
    let (w, h) = (300, 200);
    let slivers = [
        [(1.25, 3.5), (298.75, 190.25), (297.5, 191.0)],
        [(5.0, 198.0), (290.0, 2.0), (290.6, 2.9)],
        [(150.2, 0.5), (151.5, 199.5), (150.75, 199.5)],
        [(0.0, 100.3), (300.0, 100.5), (0.0, 100.6)],
    ];
    for sliver in slivers {
        let sliver = sliver.map(|(x, y)| (grid(x), grid(y)));
        let tri = sliver.map(|(x, y)| v3(x, y, 0.5));
        let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
        draw_pixels(&mut t, &[tri], &no_cull());
        let expected = analytic_coverage(&sliver, w, h);
        let got = covered(&t);
        assert!(expected.iter().any(|&c| c), "{sliver:?} covers some centre");
        for (p, (&g, &e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(
                g,
                e,
                "{sliver:?}: pixel ({}, {})",
                p as u32 % w,
                p as u32 / w
            );
        }
    }
}

#[test]
fn grid_of_triangles_shares_every_edge_without_gaps_or_overlaps() {
    // A 6×6 grid of quads with jittered interior vertices: every interior edge is shared.
    let (w, h) = (64, 64);
    let n = 6;
    let vert = |i: i32, j: i32| -> (f64, f64) {
        let jitter = |k: i32| f64::from((k * 7919) % 97 - 48) / 40.0;
        let inner = |k: i32| k > 0 && k < n;
        let dx = if inner(i) { jitter(i * 31 + j) } else { 0.0 };
        let dy = if inner(j) {
            jitter(j * 17 + i * 5)
        } else {
            0.0
        };
        (
            grid(3.25 + f64::from(i) * 9.5 + dx),
            grid(2.5 + f64::from(j) * 9.75 + dy),
        )
    };
    let mut tris = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let [a, b, c, d] = [
                vert(i, j),
                vert(i + 1, j),
                vert(i + 1, j + 1),
                vert(i, j + 1),
            ];
            let [a, b, c, d] = [a, b, c, d].map(|(x, y)| v3(x, y, 0.5));
            if (i + j) % 2 == 0 {
                tris.push([a, b, c]);
                tris.push([a, c, d]);
            } else {
                tris.push([a, b, d]);
                tris.push([b, c, d]);
            }
        }
    }
    let outline = [vert(0, 0), vert(n, 0), vert(n, n), vert(0, n)];
    let expected = analytic_coverage(&outline, w, h);
    assert_exact_partition(&tris, &expected, w, h, "jittered grid");
}

#[test]
fn pixel_centre_on_edge_is_covered_only_for_top_and_left_edges() {
    let (w, h) = (16, 16);
    // Right triangle with centres on all three edges (legs and hypotenuse through centres).
    let tri = [v3(2.5, 2.5, 0.5), v3(10.5, 2.5, 0.5), v3(2.5, 10.5, 0.5)];
    let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
    draw_pixels(&mut t, &[tri], &no_cull());
    let c = covered(&t);
    let at = |x: u32, y: u32| c[(y * w + x) as usize];
    assert!(at(2, 2), "corner of the top and left edges");
    assert!(at(5, 2), "on the top edge");
    assert!(at(2, 6), "on the left edge");
    assert!(!at(6, 6), "on the hypotenuse (a right edge)");
    assert!(at(5, 5), "inside");
    assert!(
        !at(10, 2) && !at(2, 10),
        "the other corners lie on the right edge"
    );
    // Flipped upside down: the horizontal edge is now a bottom edge, the vertical one a right.
    let tri = [v3(10.5, 10.5, 0.5), v3(2.5, 10.5, 0.5), v3(10.5, 2.5, 0.5)];
    let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
    draw_pixels(&mut t, &[tri], &no_cull());
    let c = covered(&t);
    let at = |x: u32, y: u32| c[(y * w + x) as usize];
    assert!(!at(6, 10), "on the bottom edge");
    assert!(!at(10, 6), "on the right edge");
    assert!(at(6, 6), "on the hypotenuse, now a left edge");
    assert!(at(9, 9), "inside");
}

#[test]
fn pixel_centres_are_at_half_integers_and_ndc_plus_one_is_row_zero() {
    let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
    // A clip-space triangle over the top-left quarter of the target.
    let mesh = soup(&[[
        Vec3::new(-1.0, 1.0, 0.25),
        Vec3::new(0.0, 1.0, 0.25),
        Vec3::new(-1.0, 0.0, 0.25),
    ]]);
    let stats = rasterize(
        &mut t,
        Mat4::IDENTITY,
        &[Instance::new(&mesh, Mat4::IDENTITY)],
        &RasterState::default(),
        1,
    );
    assert_eq!(
        stats.triangles_drawn, 1,
        "clockwise on screen is front-facing"
    );
    // Screen (0, 0), (4, 0), (0, 4): the hypotenuse x + y = 4 is a right edge.
    assert_eq!(t.depth(0, 0), 0.25);
    assert_eq!(t.depth(2, 0), 0.25);
    assert_eq!(t.depth(0, 2), 0.25);
    assert_eq!(t.depth(1, 1), 0.25);
    assert_eq!(t.depth(3, 0), 1.0, "centre (3.5, 0.5) is on the hypotenuse");
    assert_eq!(t.depth(0, 3), 1.0, "centre (0.5, 3.5) is on the hypotenuse");
    assert_eq!(t.depth(2, 1), 1.0, "centre (2.5, 1.5) is on the hypotenuse");
    assert_eq!(t.depth(7, 7), 1.0);
    // One pixel to the right, pixel 4's centre (4.5, 0.5) is exactly on the hypotenuse: not
    // covered; 1/256 pixel further it is.
    for (shift, covers) in [(1.0, false), (1.0 + 1.0 / 256.0, true)] {
        let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
        let d = shift / 4.0; // pixels → NDC on an 8-pixel target
        let mesh = soup(&[[
            Vec3::new(-1.0 + d, 1.0, 0.25),
            Vec3::new(0.0 + d, 1.0, 0.25),
            Vec3::new(-1.0 + d, 0.0, 0.25),
        ]]);
        rasterize(
            &mut t,
            Mat4::IDENTITY,
            &[Instance::new(&mesh, Mat4::IDENTITY)],
            &RasterState::default(),
            1,
        );
        assert_eq!(t.depth(4, 0) < 1.0, covers, "shift {shift}");
        assert_eq!(
            t.depth(0, 0),
            1.0,
            "centre 0.5 is left of the left edge at x = 1"
        );
        assert_eq!(t.depth(1, 0), 0.25, "centre 1.5 is inside");
    }
}

#[test]
fn tiny_triangles_between_pixel_centres_draw_nothing_and_do_not_panic() {
    let mut t = DepthTarget::new(16, 16, Format::D32Float).unwrap();
    let tris = [
        [v3(3.6, 3.6, 0.5), v3(3.9, 3.6, 0.5), v3(3.6, 3.9, 0.5)],
        [v3(5.0, 5.0, 0.5), v3(5.0, 5.0, 0.5), v3(9.0, 9.0, 0.5)], // zero area
        [v3(1.0, 1.0, 0.5), v3(5.0, 5.0, 0.5), v3(9.0, 9.0, 0.5)], // collinear
    ];
    let stats = draw_pixels(&mut t, &tris, &no_cull());
    assert_eq!(
        stats.triangles_drawn, 0,
        "the sliver has area but no pixel centre in its bounds"
    );
    assert_eq!(stats.pixels_written, 0);
}

// ---------------------------------------------------------------------------------------------
// Depth interpolation

#[test]
fn depth_at_pixel_centres_matches_the_plane_through_the_vertices() {
    let (w, h) = (64, 64);
    let verts = [(3.25, 5.5, 0.2f32), (60.0, 12.75, 0.7), (20.5, 58.0, 0.45)];
    let tri = verts.map(|(x, y, z)| v3(x, y, z));
    for format in [Format::D32Float, Format::D16Unorm] {
        let mut t = DepthTarget::new(w, h, format).unwrap();
        draw_pixels(&mut t, &[tri], &no_cull());
        let [(x0, y0, z0), (x1, y1, z1), (x2, y2, z2)] =
            verts.map(|(x, y, z)| (x, y, f64::from(z)));
        let area = (x1 - x0) * (y2 - y0) - (y1 - y0) * (x2 - x0);
        let mut checked = 0;
        for y in 0..h {
            for x in 0..w {
                let (px, py) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
                let b1 = ((px - x0) * (y2 - y0) - (py - y0) * (x2 - x0)) / area;
                let b2 = ((x1 - x0) * (py - y0) - (y1 - y0) * (px - x0)) / area;
                let b0 = 1.0 - b1 - b2;
                if b0.min(b1).min(b2) < 1e-9 {
                    continue; // on or outside an edge
                }
                let z = b0 * z0 + b1 * z1 + b2 * z2;
                let got = t.depth(x, y);
                match format {
                    Format::D32Float => {
                        let ulp = f64::from(f32::EPSILON) * z;
                        assert!(
                            (f64::from(got) - z).abs() <= 2.0 * ulp,
                            "({x}, {y}): {got} vs {z}"
                        );
                    }
                    _ => {
                        let code = (z * 65535.0 + 0.5).floor() as u32;
                        assert!(
                            t.raw(x, y).abs_diff(code) <= 1,
                            "({x}, {y}): code {} vs {code}",
                            t.raw(x, y)
                        );
                    }
                }
                checked += 1;
            }
        }
        assert!(checked > 1000);
    }
}

#[test]
fn d16_target_stores_float_to_unorm_of_the_depth() {
    let mut t = DepthTarget::new(8, 8, Format::D16Unorm).unwrap();
    let z = 0.123_456_7f32;
    draw_pixels(
        &mut t,
        &[[v3(0.0, 0.0, z), v3(8.0, 0.0, z), v3(0.0, 8.0, z)]],
        &no_cull(),
    );
    assert_eq!(t.raw(1, 1), float_to_unorm(z, 16));
    assert_eq!(t.raw(7, 7), 65535, "cleared to 1.0");
    assert_eq!(t.depth(1, 1), float_to_unorm(z, 16) as f32 / 65535.0);
}

#[test]
fn depth_test_is_less_and_keeps_the_nearest() {
    let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
    let full = |z: f32| [v3(0.0, 0.0, z), v3(16.0, 0.0, z), v3(0.0, 16.0, z)];
    let s = draw_pixels(
        &mut t,
        &[full(0.5), full(0.7), full(0.5), full(0.3)],
        &no_cull(),
    );
    assert_eq!(t.depth(3, 3), 0.3);
    assert_eq!(
        s.pixels_written, 128,
        "0.5 and 0.3 write; 0.7 and the equal 0.5 fail LESS"
    );
    let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
    t.clear(0.4);
    let s = draw_pixels(&mut t, &[full(0.5)], &no_cull());
    assert_eq!(s.pixels_written, 0);
    assert_eq!(t.depth(0, 0), 0.4);
}

#[test]
fn depth_outside_zero_one_is_clamped_when_depth_clip_is_off() {
    let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
    let tri = [v3(0.0, 0.0, -0.5), v3(16.0, 0.0, -0.5), v3(0.0, 16.0, -0.5)];
    let s = draw_pixels(&mut t, &[tri], &no_cull());
    assert_eq!(
        s.triangles_drawn, 0,
        "in front of the near plane: clipped away"
    );
    let state = RasterState {
        depth_clip: false,
        ..no_cull()
    };
    let s = draw_pixels(&mut t, &[tri], &state);
    assert_eq!(s.triangles_drawn, 1);
    assert_eq!(t.depth(2, 2), 0.0, "pancaked to the near plane");
}

#[test]
fn steep_and_tiny_depths_stay_in_zero_one_without_subnormals_or_negative_zero() {
    let tris = [
        // Depth 0 → 1 within 1/256 pixel along y at the top: slopes of 256 per pixel.
        [
            v3(0.0, 0.0, 0.0),
            v3(32.0, 1.0 / 256.0, 1.0),
            v3(0.0, 32.0, 1e-30),
        ],
        [
            v3(0.0, 0.0, 1.0),
            v3(32.0, 0.0, 1.0),
            v3(0.0, 32.0, 0.999_999),
        ],
        // Depths around the smallest normal f32 and below it.
        [
            v3(1.0, 1.0, 1e-38),
            v3(30.0, 2.0, 2e-37),
            v3(3.0, 30.0, 0.0),
        ],
        [
            v3(2.0, 1.0, -1e-39),
            v3(31.0, 3.0, 1e-39),
            v3(4.0, 31.0, 1e-45),
        ],
    ];
    for format in [Format::D32Float, Format::D16Unorm] {
        for depth_clip in [true, false] {
            for tri in tris {
                let mut t = DepthTarget::new(32, 32, format).unwrap();
                let state = RasterState {
                    depth_clip,
                    ..no_cull()
                };
                draw_pixels(&mut t, &[tri], &state);
                for d in t.depths() {
                    assert!((0.0..=1.0).contains(&d), "{d}");
                    assert!(!d.is_subnormal() && d.to_bits() >> 31 == 0, "{d:e}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Clipping

#[test]
fn triangle_crossing_the_near_plane_renders_only_the_part_in_front() {
    let (w, h) = (64, 64);
    let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
    // Clip space, w = 1: z = x/2, so the left half (z < 0) is in front of the near plane.
    let z = |x: f32| 0.5 * x;
    let quad = [
        Vec3::new(-1.0, 1.0, z(-1.0)),
        Vec3::new(1.0, 1.0, z(1.0)),
        Vec3::new(1.0, -1.0, z(1.0)),
        Vec3::new(-1.0, -1.0, z(-1.0)),
    ];
    let mesh = soup(&[[quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]]);
    let stats = rasterize(
        &mut t,
        Mat4::IDENTITY,
        &[Instance::new(&mesh, Mat4::IDENTITY)],
        &RasterState::default(),
        1,
    );
    assert_eq!(stats.triangles_drawn, 2);
    assert_eq!(stats.pixels_written, u64::from(w * h / 2));
    for y in 0..h {
        for x in 0..w {
            let ndc = (f64::from(x) + 0.5) / f64::from(w) * 2.0 - 1.0;
            let got = t.depth(x, y);
            if x < w / 2 {
                assert_eq!(got, 1.0, "({x}, {y}) is behind z = 0");
            } else {
                let want = 0.5 * ndc;
                assert!(
                    (f64::from(got) - want).abs() < 1e-6,
                    "({x}, {y}): {got} vs {want}"
                );
            }
        }
    }
}

/// Camera at (0, 1, 0) looking down +z, left-handed, D3D depth range.
fn ground_camera(near: f32, far: f32) -> (Mat4, Mat4) {
    let view = lh::view::look_at_mat4(Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 1.0), Vec3::Y);
    let proj = lh::proj::directx::perspective(1.2, 1.0, near, far);
    (view, proj)
}

#[test]
fn ground_plane_reaching_behind_the_camera_is_clipped_and_interpolated_correctly() {
    let (w, h) = (96, 96);
    let (view, proj) = ground_camera(0.25, 400.0);
    let vp = proj * view;
    // x in ±s, z from −10 (behind the eye) to `far_z`; both halves reach into the view.
    let (s, far_z) = (100.0, 190.0);
    let ground = Mesh::new(
        vec![
            Vec3::new(-s, 0.0, -10.0),
            Vec3::new(s, 0.0, -10.0),
            Vec3::new(s, 0.0, far_z),
            Vec3::new(-s, 0.0, far_z),
        ],
        vec![0, 3, 2, 0, 2, 1], // clockwise seen from above (left-handed)
    )
    .unwrap();
    for threads in [1, 2] {
        let mut t = DepthTarget::new(w, h, Format::D32Float).unwrap();
        let stats = rasterize(
            &mut t,
            vp,
            &[Instance::new(&ground, Mat4::IDENTITY)],
            &RasterState::default(),
            threads,
        );
        assert_eq!(stats.triangles_drawn, 2);
        let (p00, p11) = (proj.x_axis.x, proj.y_axis.y);
        let mut checked = 0;
        for y in 0..h {
            for x in 0..w {
                let xn = (f32::from(x as u16) + 0.5) / w as f32 * 2.0 - 1.0;
                let yn = 1.0 - (f32::from(y as u16) + 0.5) / h as f32 * 2.0;
                let got = t.depth(x, y);
                if yn > -1e-3 {
                    assert_eq!(got, 1.0, "({x}, {y}) is above the horizon");
                    continue;
                }
                // View ray (xn/p00, yn/p11, 1)·dist hits y = 0 at dist = p11 / -yn.
                let dist = p11 / -yn;
                let hit = Vec3::new(xn / p00 * dist, 0.0, dist);
                if hit.z > far_z * 1.01 || hit.x.abs() > s * 1.01 {
                    assert_eq!(got, 1.0, "({x}, {y}) is past the ground");
                    continue;
                }
                if hit.z > far_z * 0.99 || hit.x.abs() > s * 0.99 {
                    continue;
                }
                let c = vp * hit.extend(1.0);
                let want = c.z / c.w;
                assert!((got - want).abs() < 1e-5, "({x}, {y}): {got} vs {want}");
                checked += 1;
            }
        }
        assert!(checked > w * h / 3, "{checked}");
    }
}

#[test]
fn triangle_entirely_behind_the_camera_renders_nothing() {
    let (view, proj) = ground_camera(0.25, 400.0);
    // Behind the eye (z < 0), where w < 0 would mirror it onto the screen if not clipped.
    let behind = soup(&[
        [
            Vec3::new(-5.0, -3.0, -4.0),
            Vec3::new(5.0, -3.0, -4.0),
            Vec3::new(0.0, 5.0, -4.0),
        ],
        [
            Vec3::new(-5.0, -3.0, -4.0),
            Vec3::new(0.0, 5.0, -4.0),
            Vec3::new(5.0, -3.0, -4.0),
        ],
        [
            Vec3::new(-5.0, 1.0, -0.1),
            Vec3::new(5.0, 1.0, -0.1),
            Vec3::new(0.0, 2.0, -0.2),
        ],
    ]);
    for depth_clip in [true, false] {
        let mut t = DepthTarget::new(32, 32, Format::D32Float).unwrap();
        let state = RasterState {
            depth_clip,
            ..no_cull()
        };
        let stats = rasterize(
            &mut t,
            proj * view,
            &[Instance::new(&behind, Mat4::IDENTITY)],
            &state,
            1,
        );
        assert_eq!(stats.triangles_drawn, 0, "depth_clip {depth_clip}");
        assert_eq!(stats.pixels_written, 0);
    }
}

#[test]
fn triangle_past_the_far_plane_renders_nothing_and_one_crossing_it_is_cut() {
    let (view, proj) = ground_camera(0.5, 50.0);
    let far_wall = soup(&[[
        Vec3::new(-50.0, -50.0, 80.0),
        Vec3::new(0.0, 50.0, 80.0),
        Vec3::new(50.0, -50.0, 80.0),
    ]]);
    let mut t = DepthTarget::new(32, 32, Format::D32Float).unwrap();
    fn one(m: &Mesh) -> [Instance<'_>; 1] {
        [Instance::new(m, Mat4::IDENTITY)]
    }
    let s = rasterize(&mut t, proj * view, &one(&far_wall), &no_cull(), 1);
    assert_eq!(s.triangles_drawn, 0);
    let state = RasterState {
        depth_clip: false,
        ..no_cull()
    };
    let s = rasterize(&mut t, proj * view, &one(&far_wall), &state, 1);
    assert_eq!(s.triangles_drawn, 1);
    assert_eq!(
        t.depth(16, 16),
        1.0,
        "clamped to the far plane, fails LESS against 1.0"
    );
    assert_eq!(s.pixels_written, 0);
    // A wall leaning from z = 10 (bottom) to z = 90 (top): only the part nearer than 50 draws.
    let leaning = soup(&[[
        Vec3::new(-200.0, -20.0, 10.0),
        Vec3::new(0.0, 20.0, 90.0),
        Vec3::new(200.0, -20.0, 10.0),
    ]]);
    let mut t = DepthTarget::new(32, 32, Format::D32Float).unwrap();
    let s = rasterize(&mut t, proj * view, &one(&leaning), &no_cull(), 1);
    assert_eq!(s.triangles_drawn, 1);
    assert!(t.depth(16, 31) < 1.0, "the near bottom is drawn");
    assert!(t.depths().iter().all(|&d| d <= 1.0));
    let written = t.depths().iter().filter(|&&d| d < 1.0).count();
    assert!(written > 0 && written < 32 * 32, "{written}");
}

#[test]
fn huge_triangle_far_outside_the_viewport_is_cut_by_the_guard_band_and_fills_the_target() {
    let mut t = DepthTarget::new(32, 32, Format::D32Float).unwrap();
    // Clip space, w = 1, spanning ±1e6 NDC, with depth varying in x and y.
    let plane = |x: f32, y: f32| 0.5 + 1e-7 * x + 2e-7 * y;
    let big = 1.0e6;
    let mesh = soup(&[[
        Vec3::new(-big, big, plane(-big, big)),
        Vec3::new(big, big, plane(big, big)),
        Vec3::new(0.0, -big, plane(0.0, -big)),
    ]]);
    let s = rasterize(
        &mut t,
        Mat4::IDENTITY,
        &[Instance::new(&mesh, Mat4::IDENTITY)],
        &no_cull(),
        1,
    );
    assert_eq!(s.pixels_written, 32 * 32);
    for (y, x) in [(0, 0), (31, 31), (5, 20)] {
        let xn = (x as f32 + 0.5) / 16.0 - 1.0;
        let yn = 1.0 - (y as f32 + 0.5) / 16.0;
        let got = t.depth(x, y);
        assert!((got - plane(xn, yn)).abs() < 1e-6, "({x}, {y}): {got}");
    }
}

// ---------------------------------------------------------------------------------------------
// Culling

/// The unit cube seen from z = −5 (left-handed, looking at +z): the near face is at z = −1, the
/// far one at z = +1; returns (target, depth of the near face, depth of the far face).
fn cube_view(state: &RasterState, view_proj: Mat4) -> (DepthTarget, RasterStats) {
    let cube = Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0));
    let mut t = DepthTarget::new(64, 64, Format::D32Float).unwrap();
    let s = rasterize(
        &mut t,
        view_proj,
        &[Instance::new(&cube, Mat4::IDENTITY)],
        state,
        1,
    );
    (t, s)
}

fn ndc_z(vp: Mat4, p: Vec3) -> f32 {
    let c = vp * p.extend(1.0);
    c.z / c.w
}

fn assert_close(got: f32, want: f32, what: &str) {
    assert!(
        (got - want).abs() <= 2.0 * f32::EPSILON * want.abs(),
        "{what}: {got} vs {want}"
    );
}

#[test]
fn cull_modes_select_front_or_back_faces_of_a_cuboid() {
    let view = lh::view::look_at_mat4(Vec3::new(0.0, 0.0, -5.0), Vec3::ZERO, Vec3::Y);
    let vp = lh::proj::directx::perspective(0.9, 1.0, 1.0, 10.0) * view;
    let near = ndc_z(vp, Vec3::new(0.0, 0.0, -1.0));
    let far = ndc_z(vp, Vec3::new(0.0, 0.0, 1.0));
    let state = |cull, ccw| RasterState {
        cull,
        front_counter_clockwise: ccw,
        ..RasterState::default()
    };
    let (t, s) = cube_view(&state(CullMode::Back, false), vp);
    assert_eq!((s.triangles_in, s.triangles_drawn), (12, 2));
    assert_close(t.depth(32, 32), near, "back culled: the near face shows");
    let (t, s) = cube_view(&state(CullMode::Front, false), vp);
    assert_eq!(
        s.triangles_drawn, 10,
        "the far face and the four sides face away"
    );
    assert_close(
        t.depth(32, 32),
        far,
        "front culled: the inside of the far face shows",
    );
    let (t, s) = cube_view(&state(CullMode::None, false), vp);
    assert_eq!(s.triangles_drawn, 12);
    assert_close(t.depth(32, 32), near, "near");
    // Counter-clockwise front faces swap the roles.
    let (t, _) = cube_view(&state(CullMode::Back, true), vp);
    assert_close(t.depth(32, 32), far, "far");
    let (t, _) = cube_view(&state(CullMode::Front, true), vp);
    assert_close(t.depth(32, 32), near, "near");
    // A right-handed camera mirrors the picture, so the cuboid's outer faces turn
    // counter-clockwise on screen.
    let view_rh = rh::view::look_at_mat4(Vec3::new(0.0, 0.0, -5.0), Vec3::ZERO, Vec3::Y);
    let vp_rh = rh::proj::directx::perspective(0.9, 1.0, 1.0, 10.0) * view_rh;
    let (t, _) = cube_view(&state(CullMode::Back, true), vp_rh);
    assert_close(
        t.depth(32, 32),
        ndc_z(vp_rh, Vec3::new(0.0, 0.0, -1.0)),
        "rh",
    );
}

#[test]
fn winding_on_screen_decides_facing() {
    let cw = [v3(1.0, 1.0, 0.5), v3(7.0, 1.0, 0.5), v3(1.0, 7.0, 0.5)];
    let ccw = [cw[0], cw[2], cw[1]];
    for (tri, clockwise) in [(cw, true), (ccw, false)] {
        for front_ccw in [false, true] {
            for cull in [CullMode::None, CullMode::Front, CullMode::Back] {
                let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
                let state = RasterState {
                    cull,
                    front_counter_clockwise: front_ccw,
                    ..RasterState::default()
                };
                let s = draw_pixels(&mut t, &[tri], &state);
                let front = clockwise != front_ccw;
                let drawn = match cull {
                    CullMode::None => true,
                    CullMode::Front => !front,
                    CullMode::Back => front,
                };
                assert_eq!(
                    s.triangles_drawn == 1,
                    drawn,
                    "{cull:?} ccw={front_ccw} cw={clockwise}"
                );
                assert_eq!(t.depth(2, 2) < 1.0, drawn);
            }
        }
    }
}

#[test]
fn cuboid_has_12_outward_triangles_and_bounds() {
    let (lo, hi) = (Vec3::new(-1.0, 2.0, -3.0), Vec3::new(4.0, 5.0, 6.0));
    let m = Mesh::cuboid(hi, lo); // corners in any order
    assert_eq!(m.triangle_count(), 12);
    assert_eq!(m.positions().len(), 8);
    assert_eq!(m.bounds(), Some((lo, hi)));
    let centre = (lo + hi) * 0.5;
    for tri in m.indices().chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|k| m.positions()[tri[k] as usize]);
        let n = (b - a).cross(c - a);
        assert!(n.length() > 0.0);
        assert!(n.dot((a + b + c) / 3.0 - centre) > 0.0, "normal points out");
    }
    assert_eq!(Mesh::default().bounds(), None);
}

// ---------------------------------------------------------------------------------------------
// Depth bias

fn biased(bias: DepthBias) -> RasterState {
    RasterState {
        depth_bias: bias,
        ..no_cull()
    }
}

fn flat(z: f32) -> [Vec3; 3] {
    [v3(0.0, 0.0, z), v3(32.0, 0.0, z), v3(0.0, 32.0, z)]
}

/// z = 0.25 + x/256: ∂z/∂x = 2⁻⁸ per pixel, ∂z/∂y = 0.
fn sloped() -> [Vec3; 3] {
    [
        v3(0.0, 0.0, 0.25),
        v3(16.0, 0.0, 0.3125),
        v3(0.0, 16.0, 0.25),
    ]
}

fn bias(depth_bias: i32, slope: f32, clamp: f32) -> DepthBias {
    DepthBias {
        depth_bias,
        slope_scaled_depth_bias: slope,
        depth_bias_clamp: clamp,
    }
}

#[test]
fn d32_constant_bias_is_depth_bias_times_two_to_the_exponent_of_max_z_minus_23() {
    for (z, unit) in [
        (0.5f32, 2f32.powi(-24)),
        (0.75, 2f32.powi(-24)),
        (0.25, 2f32.powi(-25)),
    ] {
        let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
        draw_pixels(&mut t, &[flat(z)], &biased(bias(100, 0.0, 0.0)));
        assert_eq!(t.depth(1, 1), z + 100.0 * unit, "z = {z}");
        let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
        draw_pixels(&mut t, &[flat(z)], &biased(bias(-7, 0.0, 0.0)));
        assert_eq!(t.depth(1, 1), z - 7.0 * unit, "z = {z}");
    }
    // The exponent is that of the largest z of the triangle: 0.6 → 2⁻¹, so 2⁻²⁴ per unit
    // even where the depth is 0.3.
    let tri = [v3(0.0, 0.0, 0.3), v3(32.0, 0.0, 0.6), v3(0.0, 32.0, 0.3)];
    let mut plain = DepthTarget::new(16, 16, Format::D32Float).unwrap();
    draw_pixels(&mut plain, &[tri], &no_cull());
    let mut t = DepthTarget::new(16, 16, Format::D32Float).unwrap();
    draw_pixels(&mut t, &[tri], &biased(bias(16, 0.0, 0.0)));
    let d = t.depth(1, 1) - plain.depth(1, 1);
    assert!((d - 2f32.powi(-20)).abs() <= 2f32.powi(-25), "{d}");
}

#[test]
fn slope_scaled_bias_uses_the_largest_screen_space_depth_slope() {
    for format in [Format::D32Float, Format::D16Unorm] {
        let mut t = DepthTarget::new(16, 16, format).unwrap();
        draw_pixels(&mut t, &[sloped()], &biased(bias(0, 2.0, 0.0)));
        for x in [0u32, 3, 9] {
            // MaxDepthSlope = 2⁻⁸, times 2 → 2⁻⁷.
            let z = 0.25 + (f64::from(x) + 0.5) / 256.0 + 2f64.powi(-7);
            match format {
                Format::D32Float => assert_eq!(f64::from(t.depth(x, 2)), z, "x = {x}"),
                _ => assert_eq!(t.raw(x, 2), (z * 65535.0 + 0.5).floor() as u32, "x = {x}"),
            }
        }
    }
    // The same slope along y.
    let tri = [
        v3(0.0, 0.0, 0.25),
        v3(16.0, 0.0, 0.25),
        v3(0.0, 16.0, 0.3125),
    ];
    let mut t = DepthTarget::new(16, 16, Format::D32Float).unwrap();
    draw_pixels(&mut t, &[tri], &biased(bias(0, -1.0, 0.0)));
    let z = 0.25 + 2.5 / 256.0 - 2f64.powi(-8);
    assert_eq!(f64::from(t.depth(1, 2)), z);
}

#[test]
fn d16_constant_bias_is_depth_bias_over_two_to_the_16() {
    // 0.5 + 3/65536 → 0.5·65535 + 3·65535/65536 = 32770.49995… → code 32770 (unbiased: 32768).
    let mut t = DepthTarget::new(8, 8, Format::D16Unorm).unwrap();
    draw_pixels(&mut t, &[flat(0.5)], &no_cull());
    assert_eq!(t.raw(1, 1), 32768);
    let mut t = DepthTarget::new(8, 8, Format::D16Unorm).unwrap();
    draw_pixels(&mut t, &[flat(0.5)], &biased(bias(3, 0.0, 0.0)));
    assert_eq!(t.raw(1, 1), 32770);
    let mut t = DepthTarget::new(8, 8, Format::D16Unorm).unwrap();
    draw_pixels(&mut t, &[flat(0.5)], &biased(bias(-100, 0.0, 0.0)));
    // 32767.5 − 100·65535/65536 = 32667.5015… → 32668.
    assert_eq!(t.raw(1, 1), 32668);
}

#[test]
fn depth_bias_clamp_limits_the_bias_by_sign() {
    let unit = 2f32.powi(-24); // D32 at z = 0.5
    let cases = [
        // (DepthBias, clamp, expected bias)
        (1000, 1e-5f32, 1e-5f32),      // positive clamp caps a positive bias
        (1000, 1.0, 1000.0 * unit),    // a loose clamp changes nothing
        (-1000, 1e-5, -1000.0 * unit), // a positive clamp leaves a negative bias alone
        (-1000, -1e-5, -1e-5),         // a negative clamp caps a negative bias
        (1000, -1e-5, 1000.0 * unit),  // … and leaves a positive one alone
        (1000, 0.0, 1000.0 * unit),    // 0: no clamp
    ];
    for (db, clamp, want) in cases {
        let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
        draw_pixels(&mut t, &[flat(0.5)], &biased(bias(db, 0.0, clamp)));
        assert_eq!(
            t.depth(1, 1),
            (0.5 + f64::from(want)) as f32,
            "{db} {clamp}"
        );
    }
    // Slope bias is clamped together with the constant one: 2·2⁻⁸ + 0 capped at 2⁻¹⁰.
    let mut t = DepthTarget::new(16, 16, Format::D32Float).unwrap();
    draw_pixels(&mut t, &[sloped()], &biased(bias(0, 2.0, 2f32.powi(-10))));
    assert_eq!(
        f64::from(t.depth(3, 2)),
        0.25 + 3.5 / 256.0 + 2f64.powi(-10)
    );
    // D16: 100/65536 capped at 0.001.
    let mut t = DepthTarget::new(8, 8, Format::D16Unorm).unwrap();
    draw_pixels(&mut t, &[flat(0.5)], &biased(bias(100, 0.0, 0.001)));
    let z = (0.5 + f64::from(0.001f32)) as f32;
    assert_eq!(t.raw(1, 1), (f64::from(z) * 65535.0 + 0.5).floor() as u32);
}

#[test]
fn biased_depth_is_clamped_to_zero_one() {
    let mut t = DepthTarget::new(8, 8, Format::D32Float).unwrap();
    t.clear(1.0);
    draw_pixels(
        &mut t,
        &[flat(0.001)],
        &biased(bias(-100_000_000, 0.0, 0.0)),
    );
    assert_eq!(t.depth(1, 1), 0.0);
    let mut t = DepthTarget::new(8, 8, Format::D16Unorm).unwrap();
    let s = draw_pixels(&mut t, &[flat(0.999)], &biased(bias(1_000_000, 0.0, 0.0)));
    assert_eq!(
        s.pixels_written, 0,
        "clamped to 1.0, which fails LESS against the clear"
    );
    assert_eq!(t.raw(1, 1), 65535);
}

// ---------------------------------------------------------------------------------------------
// Threads, tiles, robustness, API

/// A scene of many cuboids on a tessellated ground, seen obliquely through a perspective.
fn busy_scene() -> (Vec<Mesh>, Vec<Mat4>, Mat4) {
    // 61² ground vertices and 600 cuboids: enough vertices and triangles that every stage
    // (vertex transform, setup, tiles) takes its parallel path.
    let n = 60;
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let h = ((i * 7 + j * 13) % 5) as f32 * 0.05;
            positions.push(Vec3::new(i as f32 * 0.7 - 21.0, h, j as f32 * 0.7 - 5.0));
        }
    }
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i;
            let (b, c, d) = (a + 1, a + n + 2, a + n + 1);
            indices.extend_from_slice(&[a, d, c, a, c, b]);
        }
    }
    let ground = Mesh::new(positions, indices).unwrap();
    let cube = Mesh::cuboid(Vec3::splat(-0.5), Vec3::splat(0.5));
    let mut meshes = vec![ground];
    let mut transforms = vec![Mat4::IDENTITY];
    for k in 0..600u32 {
        let (x, z) = ((k * 37 % 41) as f32 - 20.0, (k * 53 % 47) as f32 - 8.0);
        let s = 0.3 + (k % 7) as f32 * 0.2;
        transforms.push(
            Mat4::from_translation(Vec3::new(x, s * 0.5, z))
                * Mat4::from_rotation_y(k as f32 * 0.7)
                * Mat4::from_scale(Vec3::splat(s)),
        );
        meshes.push(cube.clone());
    }
    let view = lh::view::look_at_mat4(
        Vec3::new(0.0, 6.0, -12.0),
        Vec3::new(0.0, 0.0, 8.0),
        Vec3::Y,
    );
    let proj = lh::proj::directx::perspective(1.0, 1.25, 0.5, 100.0);
    (meshes, transforms, proj * view)
}

#[test]
fn results_are_bit_identical_for_1_2_and_4_threads() {
    let (meshes, transforms, vp) = busy_scene();
    let instances: Vec<Instance> = meshes
        .iter()
        .zip(&transforms)
        .map(|(m, &t)| Instance::new(m, t))
        .collect();
    let states = [
        RasterState::default(),
        RasterState {
            cull: CullMode::None,
            depth_bias: bias(5, 1.5, 0.0),
            ..RasterState::default()
        },
    ];
    for format in [Format::D32Float, Format::D16Unorm] {
        for state in &states {
            let mut reference: Option<(Vec<u32>, RasterStats)> = None;
            for threads in [1, 2, 4] {
                let mut t = DepthTarget::new(300, 240, format).unwrap();
                let stats = rasterize(&mut t, vp, &instances, state, threads);
                assert!(stats.triangles_in > 5000);
                let raw: Vec<u32> = (0..240)
                    .flat_map(|y| (0..300).map(move |x| (x, y)))
                    .map(|(x, y)| t.raw(x, y))
                    .collect();
                match &reference {
                    None => {
                        assert!(stats.pixels_written > 20_000, "{stats:?}");
                        reference = Some((raw, stats));
                    }
                    Some((r, s)) => {
                        assert_eq!(&stats, s, "{format} {threads} threads");
                        assert!(raw == *r, "{format}: {threads} threads differ from 1");
                    }
                }
            }
        }
    }
}

#[test]
fn nan_infinite_and_huge_vertices_do_not_panic_and_spare_other_triangles() {
    let bad = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -f32::MAX,
        1e30,
        -1e30,
        1e-30,
        0.0,
    ];
    let mut positions = vec![
        Vec3::new(0.0, 0.0, 0.5),
        Vec3::new(8.0, 0.0, 0.5),
        Vec3::new(0.0, 8.0, 0.5),
    ];
    let mut indices = vec![0, 1, 2];
    for &a in &bad {
        for &b in &bad {
            let base = positions.len() as u32;
            positions.extend([
                Vec3::new(a, b, 0.5),
                Vec3::new(4.0, a, b),
                Vec3::new(b, 3.0, a),
            ]);
            indices.extend([base, base + 1, base + 2, base, 0, 1, 2, base + 1, base + 2]);
        }
    }
    let mesh = Mesh::new(positions, indices).unwrap();
    for format in [Format::D32Float, Format::D16Unorm] {
        for depth_clip in [true, false] {
            let state = RasterState {
                depth_clip,
                ..no_cull()
            };
            let mut t = DepthTarget::new(16, 16, format).unwrap();
            let vp = pixel_space(16, 16);
            let s = rasterize(
                &mut t,
                vp,
                &[Instance::new(&mesh, Mat4::IDENTITY)],
                &state,
                2,
            );
            assert!(s.triangles_drawn >= 1);
            assert!(t.depth(1, 1) <= 0.5 + 1e-4, "the good triangle is drawn");
            assert!(t.depths().iter().all(|d| (0.0..=1.0).contains(d)));
            // Degenerate matrices.
            for m in [
                Mat4::ZERO,
                Mat4::from_diagonal(Vec4::splat(f32::NAN)),
                Mat4::from_scale(Vec3::splat(1e30)),
            ] {
                rasterize(
                    &mut t,
                    m,
                    &[Instance::new(&mesh, Mat4::IDENTITY)],
                    &state,
                    1,
                );
            }
        }
    }
}

#[test]
fn perspective_camera_inside_geometry_does_not_panic() {
    // Camera inside a box and on its faces: triangles through the eye point.
    let cube = Mesh::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0));
    for eye in [
        Vec3::ZERO,
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.0, 1.0, 1.0),
    ] {
        let view = lh::view::look_at_mat4(eye, eye + Vec3::new(0.3, 0.1, 1.0), Vec3::Y);
        let proj = lh::proj::directx::perspective(1.5, 1.0, 1e-4, 10.0);
        for depth_clip in [true, false] {
            let mut t = DepthTarget::new(33, 17, Format::D32Float).unwrap();
            let state = RasterState {
                depth_clip,
                ..no_cull()
            };
            rasterize(
                &mut t,
                proj * view,
                &[Instance::new(&cube, Mat4::IDENTITY)],
                &state,
                2,
            );
            assert!(t.depths().iter().all(|d| (0.0..=1.0).contains(d)));
        }
    }
}

#[test]
fn mesh_validation_reports_typed_errors() {
    let p = vec![Vec3::ZERO; 3];
    assert_eq!(
        Mesh::new(p.clone(), vec![0, 1]),
        Err(RasterError::IndexCount { len: 2 })
    );
    assert_eq!(
        Mesh::new(p.clone(), vec![0, 1, 2, 2, 3, 0]),
        Err(RasterError::IndexOutOfRange {
            at: 4,
            index: 3,
            vertex_count: 3
        })
    );
    assert!(Mesh::new(p, vec![0, 1, 2]).is_ok());
    assert!(Mesh::new(Vec::new(), Vec::new()).is_ok());
}

#[test]
fn depth_target_rejects_bad_sizes_and_formats() {
    assert!(matches!(
        DepthTarget::new(0, 4, Format::D32Float),
        Err(RasterError::InvalidSize {
            width: 0,
            height: 4
        })
    ));
    assert!(matches!(
        DepthTarget::new(4, 16385, Format::D16Unorm),
        Err(RasterError::InvalidSize { .. })
    ));
    assert_eq!(
        DepthTarget::new(4, 4, Format::R32Float),
        Err(RasterError::UnsupportedFormat(Format::R32Float))
    );
    let e = DepthTarget::new(4, 4, Format::R8Unorm).unwrap_err();
    assert!(e.to_string().contains("R8_UNORM"), "{e}");
}

#[test]
fn depth_target_clears_and_converts_to_a_texture() {
    for format in [Format::D32Float, Format::D16Unorm] {
        // Not a multiple of the tile size, to exercise partial tiles.
        let (w, h) = (70, 67);
        let mut t = DepthTarget::new(w, h, format).unwrap();
        assert_eq!(t.depth(69, 66), 1.0, "new targets are cleared to 1");
        t.clear(0.75);
        let stored = if format == Format::D32Float {
            0.75f32.to_bits()
        } else {
            float_to_unorm(0.75, 16)
        };
        assert_eq!(t.raw(0, 0), stored);
        t.clear(2.0);
        assert_eq!(t.depth(5, 5), 1.0, "clear values are clamped");
        let tri = [v3(0.0, 0.0, 0.2), v3(140.0, 0.0, 0.4), v3(0.0, 134.0, 0.9)];
        let s = rasterize(
            &mut t,
            pixel_space(w, h),
            &[Instance::new(&soup(&[tri]), Mat4::IDENTITY)],
            &no_cull(),
            1,
        );
        assert!(s.pixels_written > 0);
        let tex = t.to_texture();
        assert_eq!(*tex.desc(), t.to_texture_desc());
        assert_eq!(
            (tex.desc().width, tex.desc().height, tex.desc().format),
            (w, h, format)
        );
        assert_eq!(tex.desc().mip_levels, 1);
        for (x, y) in [(0, 0), (64, 3), (69, 66), (3, 64), (20, 20), (66, 1)] {
            assert_eq!(tex.load(0, 0, [x, y, 0])[0], t.depth(x, y), "({x}, {y})");
        }
        assert_eq!(t.depths().len(), (w * h) as usize);
    }
}

/// A clear is recorded, and written into a tile's memory only when a draw reaches the tile
/// (`DepthTarget`'s docs): every reader, `==` included, must see the same values as if the
/// whole target had been written at once.
#[test]
fn a_pending_clear_reads_as_written() {
    for format in [Format::D32Float, Format::D16Unorm] {
        // Three tiles by two, the last column and row partial.
        let (w, h) = (150, 70);
        let draw = |t: &mut DepthTarget, tri: [Vec3; 3]| {
            rasterize(
                t,
                pixel_space(w, h),
                &[Instance::new(&soup(&[tri]), Mat4::IDENTITY)],
                &no_cull(),
                1,
            )
        };
        // A small triangle in the first tile only, in front of the clear.
        let small = [v3(2.0, 2.0, 0.1), v3(40.0, 2.0, 0.1), v3(2.0, 30.0, 0.1)];
        // A triangle over every tile, behind the clear: it reaches every tile and writes nothing.
        let behind = [
            v3(-10.0, -10.0, 0.9),
            v3(400.0, -10.0, 0.9),
            v3(-10.0, 300.0, 0.9),
        ];
        let code = |d: f32| {
            if format == Format::D32Float {
                d.to_bits()
            } else {
                float_to_unorm(d, 16)
            }
        };

        let mut lazy = DepthTarget::new(w, h, format).unwrap();
        lazy.clear(0.25);
        let drawn = draw(&mut lazy, small).pixels_written;
        assert!(drawn > 0);
        let mut written = DepthTarget::new(w, h, format).unwrap();
        written.clear(0.25);
        assert_eq!(draw(&mut written, behind).pixels_written, 0);
        assert_eq!(draw(&mut written, small).pixels_written, drawn);

        for (x, y) in [(149, 69), (64, 0), (128, 64), (0, 69), (100, 30)] {
            assert_eq!(lazy.raw(x, y), code(0.25), "untouched pixel ({x}, {y})");
            assert_eq!(written.raw(x, y), code(0.25), "({x}, {y})");
        }
        assert_eq!(lazy.raw(3, 3), code(0.1));
        assert!(
            lazy == written,
            "{format:?}: a pending clear equals a written one"
        );
        assert!(lazy.clone() == written);
        assert_eq!(lazy.depths(), written.depths());
        assert_eq!(lazy.to_texture().bytes(), written.to_texture().bytes());
        let tex = lazy.to_texture();
        assert_eq!(tex.load(0, 0, [149, 69, 0])[0], lazy.depth(149, 69));

        let mut other = DepthTarget::new(w, h, format).unwrap();
        other.clear(0.5);
        draw(&mut other, small);
        assert!(other != lazy, "a different clear value differs");

        // A clear after drawing hides what was drawn, in drawn tiles and in the others.
        written.clear(0.75);
        assert_eq!(written.raw(3, 3), code(0.75));
        assert_eq!(written.raw(149, 69), code(0.75));
        let mut fresh = DepthTarget::new(w, h, format).unwrap();
        fresh.clear(0.75);
        assert!(written == fresh);
        assert!(DepthTarget::new(w, h, format).unwrap() != fresh);
    }
}

#[test]
fn stats_count_submitted_drawn_and_written() {
    let mut t = DepthTarget::new(16, 16, Format::D32Float).unwrap();
    let tris = [
        [v3(0.0, 0.0, 0.5), v3(16.0, 0.0, 0.5), v3(0.0, 16.0, 0.5)], // front, half the target
        [v3(0.0, 0.0, 0.5), v3(0.0, 16.0, 0.5), v3(16.0, 0.0, 0.5)], // back-facing
        [v3(20.0, 0.0, 0.5), v3(30.0, 0.0, 0.5), v3(20.0, 9.0, 0.5)], // off to the right
    ];
    let s = draw_pixels(&mut t, &tris, &RasterState::default());
    assert_eq!(
        s,
        RasterStats {
            triangles_in: 3,
            triangles_drawn: 1,
            pixels_written: 120 // 15·16/2: the diagonal's centres go to neither side
        }
    );
}

#[test]
fn instances_place_meshes_with_their_transforms() {
    let mut t = DepthTarget::new(32, 32, Format::D32Float).unwrap();
    let tri = soup(&[[v3(0.0, 0.0, 0.0), v3(4.0, 0.0, 0.0), v3(0.0, 4.0, 0.0)]]);
    let instances: Vec<Instance> = (0..4)
        .map(|k| {
            (
                &tri,
                Mat4::from_translation(Vec3::new(8.0 * k as f32, 8.0, 0.1 * (k + 1) as f32)),
            )
                .into()
        })
        .collect();
    let s = rasterize(&mut t, pixel_space(32, 32), &instances, &no_cull(), 1);
    assert_eq!(s.triangles_in, 4);
    assert_eq!(s.triangles_drawn, 4);
    for k in 0..4u32 {
        assert_eq!(t.depth(8 * k + 1, 9), 0.1 * (k + 1) as f32);
    }
    assert_eq!(t.depth(5, 5), 1.0);
}
