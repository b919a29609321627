//! SPEC §3.3's guard bands (item 4): which texel positions, cube directions and LODs are clear
//! of the boundaries where a 2^-8-texel difference may change the answer.

use super::{BAND, Dim, SamplerSpec, TexSpec};

fn frac(x: f64) -> f64 {
    x - x.floor()
}

/// SPEC §3.3 item 4 on one texel-space position `x` of one axis and level: away from point-sampling
/// boundaries (`frac(x)` near 0) and from linear zero-weight / footprint boundaries
/// (`frac(x − 0.5)` near 0).
#[must_use]
pub fn clear_position(x: f64) -> bool {
    let p = frac(x);
    let l = frac(x - 0.5);
    (BAND..1.0 - BAND).contains(&p) && (BAND..=1.0 - BAND).contains(&l)
}

/// R98/R99 as penumbra computes them in f32: the face (+X, −X, +Y, −Y, +Z, −Z) and (s, t).
#[must_use]
pub fn cube_face(d: [f32; 3]) -> (u32, f32, f32) {
    let [x, y, z] = d;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let face = if az >= ax && az >= ay {
        if z >= 0.0 { 4 } else { 5 }
    } else if ay >= ax {
        if y >= 0.0 { 2 } else { 3 }
    } else if x >= 0.0 {
        0
    } else {
        1
    };
    let (sc, tc, m) = match face {
        0 => (-z, -y, x),
        1 => (z, -y, x),
        2 => (x, z, y),
        3 => (x, -z, y),
        4 => (x, -y, z),
        _ => (-x, -y, z),
    };
    let am = m.abs();
    (face, 0.5 * (sc / am) + 0.5, 0.5 * (tc / am) + 0.5)
}

/// The 2D sampling position of a lookup's coordinate: (u, v) or the cube face's (s, t).
#[must_use]
pub fn face_position(dim: Dim, coord: [f32; 3]) -> [f32; 2] {
    match dim {
        Dim::Cube => {
            let (_, s, t) = cube_face(coord);
            [s, t]
        }
        _ => [coord[0], coord[1]],
    }
}

/// Whether a coordinate respects the guard bands on every level of the texture (and, for cubes,
/// the face-tie band: major ≥ (1 + 2^-10)·others).
pub(super) fn coord_clear(tex: &TexSpec, coord: [f32; 3]) -> bool {
    if tex.dim == Dim::Cube {
        let mut a = coord.map(f32::abs);
        a.sort_by(f32::total_cmp);
        if f64::from(a[2]) < (1.0 + 1.0 / 1024.0) * f64::from(a[1]) {
            return false;
        }
    }
    let [s, t] = face_position(tex.dim, coord);
    (0..tex.mips).all(|m| {
        let [w, h] = tex.level_size(m);
        clear_position(f64::from(s) * f64::from(w)) && clear_position(f64::from(t) * f64::from(h))
    })
}

/// Whether a bilinear footprint on some level of a cube can reach a corner (both axes off the
/// face), where the 3-texel rule of R103 applies.
#[must_use]
pub fn cube_corner(tex: &TexSpec, coord: [f32; 3], levels: std::ops::Range<u32>) -> bool {
    if tex.dim != Dim::Cube {
        return false;
    }
    let [s, t] = face_position(tex.dim, coord);
    levels.into_iter().any(|m| {
        let n = tex.level_size(m)[0];
        let off = |x: f32| {
            let i0 = (f64::from(x) * f64::from(n) - 0.5).floor();
            i0 < 0.0 || i0 + 1.0 > f64::from(n) - 1.0
        };
        off(s) && off(t)
    })
}

/// The clamped LOD of R57 (MinLOD wins over MaxLOD).
#[must_use]
pub fn clamp_lod(lod: f32, s: &SamplerSpec) -> f32 {
    lod.min(s.lod_max).max(s.lod_min)
}

/// Whether an explicit LOD is clear of the mip-point, mag/min and mip-weight guard bands once
/// clamped (exact integers are clear: both sides agree there).
pub(super) fn lod_clear(lod: f32, s: &SamplerSpec) -> bool {
    let c = f64::from(clamp_lod(lod, s));
    if c == c.floor() {
        return true;
    }
    if s.mag != s.min && c.abs() <= BAND {
        return false;
    }
    let f = frac(c);
    match s.mip {
        wgpu::MipmapFilterMode::Nearest => (f - 0.5).abs() >= BAND,
        wgpu::MipmapFilterMode::Linear => (BAND..=1.0 - BAND).contains(&f),
    }
}
