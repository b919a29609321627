//! The depth rasterizer of `core/src/raster` with arbitrary triangles (NaN, infinite, huge,
//! degenerate, behind the camera, crossing the near plane), matrices, targets and states.
//!
//! Checks: no panic; the result does not depend on the thread count (1 vs 2 threads, bit for
//! bit, stats included); every depth stays in [0, 1]; the LESS test never raises a depth; the
//! pixels that changed are at most `pixels_written`; `to_texture` holds the same values; every
//! tile drawn alone with `rasterize_tiles` (through an `InstanceIndex`, after an instance was
//! moved and the index refitted) holds the full draw's bits, and the tiles not asked for are
//! untouched.
#![no_main]

use arbitrary::Arbitrary;
use glam::{Mat4, Vec3};
use libfuzzer_sys::fuzz_target;
use penumbra_core::Format;
use penumbra_core::raster::{
    CullMode, DepthBias, DepthFunc, DepthTarget, Instance, InstanceIndex, Mesh, RasterState,
    TILE_SIZE, rasterize, rasterize_tiles,
};
use penumbra_fuzz::Num;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Target width, height (modulo 300, plus 1) and D16 instead of D32.
    size: (u16, u16),
    d16: bool,
    /// Ask for an unsupported format or an invalid size instead (must be an error).
    bad_target: Option<(u32, u32, u8)>,
    clear: Option<Num>,
    view_proj: MatrixIn,
    meshes: Vec<MeshIn>,
    instances: Vec<(u8, MatrixIn)>,
    cull: u8,
    ccw: bool,
    depth_clip: bool,
    /// The GREATER depth test (reverse depth) instead of LESS.
    greater: bool,
    bias: Option<(i32, Num, Num)>,
    /// Tiles to draw alone (column, row, taken modulo the grid), and an instance to move
    /// before the index is built (its index, the matrix it had first).
    tiles: Vec<(u8, u8)>,
    moved: Option<(u8, MatrixIn)>,
}

#[derive(Arbitrary, Debug)]
struct MeshIn {
    positions: Vec<[Num; 3]>,
    /// Indices (taken modulo the position count unless `raw_indices`).
    indices: Vec<u16>,
    raw_indices: bool,
    /// Repeat the triangle list (to reach the parallel setup paths of big submissions).
    repeat: u8,
}

#[derive(Arbitrary, Debug)]
enum MatrixIn {
    Identity,
    /// A perspective camera at a small integer position looking at the origin.
    Camera([i8; 3], u8, u8),
    Ortho(u8),
    Any([Num; 16]),
}

impl MatrixIn {
    fn get(&self) -> Mat4 {
        match self {
            MatrixIn::Identity => Mat4::IDENTITY,
            MatrixIn::Camera([x, y, z], fov, near) => {
                let eye = Vec3::new(f32::from(*x), f32::from(*y), f32::from(*z)) / 8.0;
                let eye = if eye.length_squared() == 0.0 {
                    Vec3::new(0.0, 0.0, -3.0)
                } else {
                    eye
                };
                let up = if eye.x == 0.0 && eye.z == 0.0 {
                    Vec3::Z
                } else {
                    Vec3::Y
                };
                let view = glam::camera::lh::view::look_at_mat4(eye, Vec3::ZERO, up);
                let fov = 0.1 + f32::from(*fov) / 255.0 * 2.9;
                let near = 0.01 + f32::from(*near) / 64.0;
                glam::camera::lh::proj::directx::perspective(fov, 1.0, near, near + 20.0) * view
            }
            MatrixIn::Ortho(s) => {
                let s = 0.5 + f32::from(*s) / 32.0;
                glam::camera::lh::proj::directx::orthographic(-s, s, -s, s, -s, s)
            }
            MatrixIn::Any(v) => Mat4::from_cols_array(&v.map(Num::get)),
        }
    }
}

fn depths(t: &DepthTarget) -> Vec<u32> {
    let mut out = Vec::with_capacity((t.width() * t.height()) as usize);
    for y in 0..t.height() {
        for x in 0..t.width() {
            out.push(t.raw(x, y));
        }
    }
    out
}

fuzz_target!(|input: Input| {
    if let Some((w, h, f)) = input.bad_target {
        let format = Format::ALL[usize::from(f) % Format::ALL.len()];
        let valid = (1..=16384).contains(&w)
            && (1..=16384).contains(&h)
            && matches!(format, Format::D32Float | Format::D16Unorm);
        // Valid targets allocate: only build the small ones. Invalid ones must be refused.
        if !valid || u64::from(w) * u64::from(h) <= 1 << 20 {
            match DepthTarget::new(w, h, format) {
                Ok(_) => assert!(valid, "{w}x{h} {format} accepted"),
                Err(e) => {
                    assert!(!valid, "{w}x{h} {format} refused: {e}");
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
    let (w, h) = (
        u32::from(input.size.0 % 300) + 1,
        u32::from(input.size.1 % 300) + 1,
    );
    let format = if input.d16 {
        Format::D16Unorm
    } else {
        Format::D32Float
    };
    let mut base = DepthTarget::new(w, h, format).expect("a valid target");
    if let Some(c) = input.clear {
        base.clear(c.get());
    }
    let mut meshes = Vec::new();
    for m in input.meshes.iter().take(4) {
        let positions: Vec<Vec3> = m
            .positions
            .iter()
            .take(64)
            .map(|p| Vec3::from_array(p.map(Num::get)))
            .collect();
        let n = positions.len();
        let mut indices: Vec<u32> = m
            .indices
            .iter()
            .take(192)
            .map(|&i| {
                if m.raw_indices || n == 0 {
                    u32::from(i)
                } else {
                    u32::from(i) % n as u32
                }
            })
            .collect();
        let once = indices.clone();
        for _ in 0..(m.repeat % 16) * 8 {
            indices.extend_from_slice(&once);
        }
        match Mesh::new(positions, indices) {
            Ok(mesh) => meshes.push(mesh),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    if meshes.is_empty() {
        return;
    }
    let instances: Vec<Instance<'_>> = input
        .instances
        .iter()
        .take(4)
        .map(|(i, m)| Instance::new(&meshes[usize::from(*i) % meshes.len()], m.get()))
        .collect();
    let state = RasterState {
        cull: match input.cull % 3 {
            0 => CullMode::None,
            1 => CullMode::Front,
            _ => CullMode::Back,
        },
        front_counter_clockwise: input.ccw,
        depth_bias: input
            .bias
            .map(|(b, s, c)| DepthBias {
                depth_bias: b,
                slope_scaled_depth_bias: s.get(),
                depth_bias_clamp: c.get(),
            })
            .unwrap_or_default(),
        depth_clip: input.depth_clip,
        depth_func: if input.greater {
            DepthFunc::Greater
        } else {
            DepthFunc::Less
        },
    };
    let view_proj = input.view_proj.get();

    // Tile by tile: an index built for an earlier placement, refitted after the move.
    let (tx, ty) = (w.div_ceil(TILE_SIZE), h.div_ceil(TILE_SIZE));
    let tiles: Vec<(u32, u32)> = input
        .tiles
        .iter()
        .take(8)
        .map(|&(x, y)| (u32::from(x) % tx, u32::from(y) % ty))
        .collect();
    let index = match &input.moved {
        Some((k, first)) if !instances.is_empty() => {
            let k = usize::from(*k) % instances.len();
            let mut earlier = instances.clone();
            earlier[k].transform = first.get();
            let mut index = InstanceIndex::new(&earlier);
            index.update(k, &instances);
            index
        }
        _ => InstanceIndex::new(&instances),
    };
    let mut tiled = base.clone();
    rasterize_tiles(&mut tiled, view_proj, &instances, &index, &state, &tiles, 2);
    let mut full = base.clone();
    rasterize(&mut full, view_proj, &instances, &state, 1);
    for y in 0..h {
        for x in 0..w {
            let want = if tiles.contains(&(x / TILE_SIZE, y / TILE_SIZE)) {
                full.raw(x, y)
            } else {
                base.raw(x, y)
            };
            assert_eq!(tiled.raw(x, y), want, "tile-drawn pixel ({x}, {y})");
        }
    }

    let mut one = base.clone();
    let stats1 = rasterize(&mut one, view_proj, &instances, &state, 1);
    let mut two = base.clone();
    let stats2 = rasterize(&mut two, view_proj, &instances, &state, 2);
    assert_eq!(stats1, stats2, "stats depend on the thread count");
    let (d1, d2) = (depths(&one), depths(&two));
    assert!(d1 == d2, "depths depend on the thread count");

    let submitted: u64 = instances
        .iter()
        .map(|i| i.mesh.triangle_count() as u64)
        .sum();
    assert_eq!(stats1.triangles_in, submitted);
    let mut changed = 0u64;
    for y in 0..h {
        for x in 0..w {
            let (before, after) = (base.depth(x, y), one.depth(x, y));
            assert!((0.0..=1.0).contains(&after), "depth {after} at ({x}, {y})");
            assert!(
                after <= before,
                "LESS raised ({x}, {y}) from {before} to {after}"
            );
            if one.raw(x, y) != base.raw(x, y) {
                changed += 1;
            }
        }
    }
    assert!(
        changed <= stats1.pixels_written,
        "{changed} pixels changed, {} written",
        stats1.pixels_written
    );
    let tex = one.to_texture();
    for y in (0..h).step_by(7) {
        for x in (0..w).step_by(5) {
            assert_eq!(
                tex.load(0, 0, [x, y, 0])[0].to_bits(),
                one.depth(x, y).to_bits()
            );
        }
    }
});
