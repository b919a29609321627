//! The vector transform and set-up against the scalar code, bit for bit.

use glam::{Mat4, Vec3, Vec4};
use penumbra_testkit::Rng;

use super::{Context, Lanes, Tri, Vertex};
use crate::Format;
use crate::cpu::CpuExtension;
use crate::raster::{CullMode, DepthBias, RasterState};

/// A clip-space corner: mostly on or near the target, some outside a clip plane, a few
/// not finite, huge, tiny or on a shared snapped position.
fn corner(rng: &mut Rng, w: f32, h: f32, last: Vec4) -> Vec4 {
    let z = match rng.below_mod(8) {
        0 => 0.0,
        1 => 1.0,
        2 => -rng.f32_unit() * 0.01,
        3 => rng.f32_subnormal(),
        4 => 1.0 + rng.f32_unit() * 0.01,
        _ => rng.f32_unit(),
    };
    match rng.below_mod(40) {
        // The last corner again, or a sub-pixel step from it (slivers, zero areas).
        0..=3 => last,
        4..=7 => {
            last + Vec4::new(
                rng.f32_in(-1.0, 1.0) / w,
                rng.f32_in(-1.0, 1.0) / h,
                0.0,
                0.0,
            )
        }
        8 => Vec4::new(rng.f32_special(), rng.f32_unit(), z, 1.0),
        9 => Vec4::new(
            rng.f32_in(-3.0, 3.0),
            rng.f32_in(-3.0, 3.0),
            z,
            rng.f32_in(-0.5, 2.0),
        ),
        10 => Vec4::new(rng.f32_in(-1e6, 1e6), rng.f32_in(-1e6, 1e6), z, 1.0),
        11 => Vec4::new(
            rng.f32_bits(),
            rng.f32_bits(),
            rng.f32_bits(),
            rng.f32_bits(),
        ),
        12..=15 => {
            // On whole pixels, 63 to 65 pixels from the last corner along x and y (on a
            // power-of-two target these are exact: the compact span's edge).
            let step = |rng: &mut Rng| {
                [-65.0, -64.0, -63.0, 0.0, 63.0, 64.0, 65.0][rng.below_mod(7) as usize]
            };
            let px = ((last.x.clamp(-1.0, 1.0) + 1.0) * w / 2.0).round() + step(rng);
            let py = ((last.y.clamp(-1.0, 1.0) + 1.0) * h / 2.0).round() + step(rng);
            Vec4::new(px * 2.0 / w - 1.0, py * 2.0 / h - 1.0, z, 1.0)
        }
        16..=19 => {
            // Large triangles: anywhere over the target and its guard band.
            Vec4::new(rng.f32_in(-1.2, 1.2), rng.f32_in(-1.2, 1.2), z, 1.0)
        }
        _ => {
            // Small triangles near the last corner (a few pixels to some dozens).
            let r = if rng.below_mod(2) == 0 { 8.0 } else { 160.0 };
            Vec4::new(
                last.x.clamp(-1.2, 1.2) + rng.f32_in(-r, r) / w,
                last.y.clamp(-1.2, 1.2) + rng.f32_in(-r, r) / h,
                z,
                1.0,
            )
        }
    }
}

/// The vector codes this CPU runs (the tests compare each with the scalar code; none when it
/// runs neither).
fn vector_lanes() -> Vec<Lanes> {
    let lanes: Vec<Lanes> = [CpuExtension::Avx2, CpuExtension::Avx512bw]
        .into_iter()
        .map(Lanes::of)
        .filter(|&l| l != Lanes::Scalar)
        .collect();
    if lanes.is_empty() {
        eprintln!("skipped: this build or CPU runs no vector set-up");
    }
    lanes
}

fn assert_same(a: &Tri, b: &Tri, what: &str) {
    let same = a.x == b.x
        && a.y == b.y
        && a.bbox == b.bbox
        && a.zr.to_bits() == b.zr.to_bits()
        && a.dzdx.to_bits() == b.dzdx.to_bits()
        && a.dzdy.to_bits() == b.dzdy.to_bits()
        && a.top_left == b.top_left
        && a.plain == b.plain
        && a.compact == b.compact;
    assert!(same, "{what}: vector {a:?}, scalar {b:?}");
}

/// The scalar set-up follows the rasterization rules (the D3D11.3 FS rasterizer chapter:
/// snapping, culling, the top-left rule, the depth plane); the vector one must push the
/// same records, bit for bit, in the same order, for every outcome: drawn, culled, empty,
/// clipped, not finite.
#[test]
fn setup_simd_matches_scalar() {
    let lanes = vector_lanes();
    if lanes.is_empty() {
        return;
    }
    let mut rng = Rng::xorshift64(0x7365_7475_7073);
    let (mut pushed, mut calls) = (0u64, 0);
    for round in 0..6000 {
        let (w, h) = match round % 3 {
            0 => (2048, 2048),
            1 => (1 + rng.below_mod(300) as u32, 1 + rng.below_mod(300) as u32),
            _ => (
                1 + rng.below_mod(16384) as u32,
                1 + rng.below_mod(16384) as u32,
            ),
        };
        let state = RasterState {
            cull: [CullMode::None, CullMode::Front, CullMode::Back][rng.below_mod(3) as usize],
            front_counter_clockwise: rng.below_mod(2) == 0,
            depth_clip: rng.below_mod(4) != 0,
            depth_bias: if round % 50 == 49 {
                DepthBias {
                    depth_bias: 3,
                    slope_scaled_depth_bias: 1.5,
                    depth_bias_clamp: 0.0,
                }
            } else {
                DepthBias::default()
            },
            ..RasterState::default()
        };
        let format = if round % 7 == 0 {
            Format::D16Unorm
        } else {
            Format::D32Float
        };
        let ctx = Context::new(w, h, format, &state);
        let mut last = Vec4::new(0.0, 0.0, 0.5, 1.0);
        let vertices: Vec<Vertex> = (0..1 + rng.below_mod(40))
            .map(|_| {
                last = corner(&mut rng, w as f32, h as f32, last);
                ctx.vertex(last)
            })
            .collect();
        let n = vertices.len() as u64;
        // Often consecutive corners (strip-like, sharing edges), else any three.
        let indices: Vec<u32> = (0..3 * rng.below_mod(30))
            .map(|i| {
                if rng.below_mod(2) == 0 {
                    ((i / 3 + i % 3) % n) as u32
                } else {
                    rng.below_mod(n) as u32
                }
            })
            .collect();
        let cull = match rng.below_mod(4) {
            0 => Some(CullMode::None),
            1 => Some(CullMode::Front),
            _ => None,
        };
        let mut scalar = Vec::new();
        let b = ctx.triangles(&vertices, &indices, cull, Lanes::Scalar, &mut scalar);
        for &l in &lanes {
            let mut simd = Vec::new();
            let a = ctx.triangles(&vertices, &indices, cull, l, &mut simd);
            let what = format!("{l:?}, round {round}, {w}×{h}, {state:?}, cull {cull:?}");
            assert_eq!((a, simd.len()), (b, scalar.len()), "{what}");
            for (s, t) in simd.iter().zip(&scalar) {
                assert_same(s, t, &what);
            }
        }
        pushed += b;
        calls += 1;
    }
    // The rounds reach the vector path's every outcome often.
    assert!(
        pushed > 20_000,
        "{pushed} triangles pushed in {calls} calls"
    );
}

fn vertex_bits(v: &Vertex) -> ([u32; 4], i32, i32, u32, u16, u16) {
    (
        v.clip.to_array().map(f32::to_bits),
        v.x,
        v.y,
        v.z.to_bits(),
        v.code,
        v.pad,
    )
}

/// The vector transform makes every vertex record of the scalar one, bit for bit: random
/// matrices (some not finite) and positions (some huge, some not finite), 1 to 40 at a
/// time (whole and partial groups of sixteen), on targets of many sizes.
#[test]
fn vertex_transform_simd_matches_scalar() {
    let lanes = vector_lanes();
    if lanes.is_empty() {
        return;
    }
    let mut rng = Rng::xorshift64(0x7665_7274_6578);
    let (mut projected, mut outside, mut bad) = (0, 0, 0);
    for round in 0..4000 {
        let (w, h) = (
            1 + rng.below_mod(16384) as u32,
            1 + rng.below_mod(16384) as u32,
        );
        let state = RasterState {
            depth_clip: rng.below_mod(3) != 0,
            ..RasterState::default()
        };
        let ctx = Context::new(w, h, Format::D32Float, &state);
        let entry = |rng: &mut Rng| match rng.below_mod(200) {
            0 => rng.f32_special(),
            1 => rng.f32_bits(),
            _ => rng.f32_in(-2.0, 2.0),
        };
        let mut m = Mat4::from_cols_array(&std::array::from_fn(|_| entry(&mut rng)));
        if round % 2 == 0 {
            // A projection's last row: w positive over much of the scene.
            m.x_axis.w = 0.0;
            m.y_axis.w = 0.0;
            m.z_axis.w = rng.f32_in(-0.1, 0.1);
            m.w_axis.w = rng.f32_in(0.5, 2.0);
        }
        let n = 1 + rng.below_mod(40) as usize;
        let positions: Vec<Vec3> = (0..n)
            .map(|_| {
                let mut c = || match rng.below_mod(100) {
                    0 | 3 => rng.f32_special(),
                    1 => rng.f32_in(-1e30, 1e30),
                    2 => rng.f32_subnormal(),
                    _ => rng.f32_in(-1.5, 1.5),
                };
                Vec3::new(c(), c(), c())
            })
            .collect();
        let mut scalar = vec![Vertex::default(); n];
        ctx.vertices(&m, &positions, &mut scalar, Lanes::Scalar);
        for &l in &lanes {
            let mut simd = vec![Vertex::default(); n];
            ctx.vertices(&m, &positions, &mut simd, l);
            for (k, (a, b)) in simd.iter().zip(&scalar).enumerate() {
                assert_eq!(
                    vertex_bits(a),
                    vertex_bits(b),
                    "{l:?}, round {round}, vertex {k} of {n}, {w}×{h}: {:?} by {m:?}",
                    positions[k]
                );
            }
        }
        for b in &scalar {
            match b.code {
                c if c & super::NON_FINITE != 0 => bad += 1,
                c if c & ctx.clip_mask != 0 => outside += 1,
                _ => projected += 1,
            }
        }
    }
    assert!(
        projected > 10_000 && outside > 10_000 && bad > 500,
        "{projected} projected, {outside} outside a clip plane, {bad} not finite"
    );
}

/// An index that names no vertex (which a `Mesh` never holds) is not gathered: the batch
/// goes to the scalar set-up, which panics on it as it always did.
#[test]
fn an_index_past_the_vertices_panics_as_in_the_scalar_setup() {
    let ctx = Context::new(64, 64, Format::D32Float, &RasterState::default());
    let vertices: Vec<Vertex> = [(-0.5, -0.5), (0.5, -0.5), (0.0, 0.5)]
        .iter()
        .map(|&(x, y)| ctx.vertex(Vec4::new(x, y, 0.5, 1.0)))
        .collect();
    for bad in [3u32, 1 << 20, u32::MAX] {
        for lanes in [Lanes::Scalar, Lanes::Avx2, Lanes::Avx512] {
            let indices = [0, 1, 2, 0, 2, bad];
            let run = std::panic::catch_unwind(|| {
                let mut out = Vec::new();
                ctx.triangles(&vertices, &indices, Some(CullMode::None), lanes, &mut out)
            });
            assert!(run.is_err(), "index {bad}, {lanes:?}: no panic");
        }
    }
}
