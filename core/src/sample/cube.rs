//! Cube maps (SPEC §2.16, D3D11.3 FS 7.18.7, 7.18.11, 7.18.12): face selection with the Z > Y > X
//! tie order (R98), face coordinates (R99), seamless filtering across edges (R100, R102), the
//! three-way corner rule (R103, R104), cube LOD (R51, R101) and gathers across faces (R120).

use super::combine::Combiner;
use super::{Coord, Source, Tap};

/// A texel of a cube: (face, x, y).
type CubeTexel = (u32, u32, u32);

/// A face and the 2D coordinate on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceCoord {
    /// Face index in D3D order +X, −X, +Y, −Y, +Z, −Z.
    pub face: u32,
    /// s in [0, 1].
    pub s: f32,
    /// t in [0, 1].
    pub t: f32,
}

/// (sc, tc, m) of a direction for a face, per R99's table.
#[inline]
fn face_axes(face: u32, [x, y, z]: [f32; 3]) -> (f32, f32, f32) {
    match face {
        0 => (-z, -y, x),
        1 => (z, -y, x),
        2 => (x, z, y),
        3 => (x, -z, y),
        4 => (x, -y, z),
        _ => (-x, -y, z),
    }
}

/// R98: the major axis (ties Z, then Y, then X) and its sign (≥ 0, −0 included, is positive).
/// `None` for an all-zero or NaN direction.
#[must_use]
pub fn select_face([x, y, z]: [f32; 3]) -> Option<u32> {
    if x.is_nan() || y.is_nan() || z.is_nan() || (x == 0.0 && y == 0.0 && z == 0.0) {
        return None;
    }
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    Some(if az >= ax && az >= ay {
        if z >= 0.0 { 4 } else { 5 }
    } else if ay >= ax {
        if y >= 0.0 { 2 } else { 3 }
    } else if x >= 0.0 {
        0
    } else {
        1
    })
}

/// R98/R99: face and face coordinates `fl(0.5·fl(sc/|m|) + 0.5)`. A zero or NaN direction samples
/// +Z at its centre ([CHOICE] R98).
#[must_use]
pub fn face_coord(dir: [f32; 3]) -> FaceCoord {
    let Some(face) = select_face(dir) else {
        return FaceCoord {
            face: 4,
            s: 0.5,
            t: 0.5,
        };
    };
    let (sc, tc, m) = face_axes(face, dir);
    let am = m.abs();
    FaceCoord {
        face,
        s: 0.5 * (sc / am) + 0.5,
        t: 0.5 * (tc / am) + 0.5,
    }
}

/// The direction through texel (i, j) of face `face` on the extended face plane (R102): the
/// inverse of R99 with |m| = 1, in f64.
fn texel_direction(face: u32, i: i64, j: i64, n: u32) -> [f64; 3] {
    let n = f64::from(n);
    let a = 2.0 * (i as f64 + 0.5) / n - 1.0;
    let b = 2.0 * (j as f64 + 0.5) / n - 1.0;
    match face {
        0 => [1.0, -b, -a],
        1 => [-1.0, -b, a],
        2 => [a, 1.0, b],
        3 => [a, -1.0, -b],
        4 => [a, -b, 1.0],
        _ => [-a, -b, -1.0],
    }
}

/// R102: resolves texel (i, j) of face `face`, where at most one index may be off the face, to
/// (face, x, y) on the cube; `None` at a corner (both off, R103).
#[must_use]
pub fn resolve_texel(face: u32, i: i64, j: i64, n: u32) -> Option<(u32, u32, u32)> {
    let ni = i64::from(n);
    let off_i = !(0..ni).contains(&i);
    let off_j = !(0..ni).contains(&j);
    match (off_i, off_j) {
        (false, false) => Some((face, i as u32, j as u32)),
        (true, true) => None,
        _ => {
            let d = texel_direction(face, i, j, n);
            let (ax, ay, az) = (d[0].abs(), d[1].abs(), d[2].abs());
            let f = if az >= ax && az >= ay {
                if d[2] >= 0.0 { 4 } else { 5 }
            } else if ay >= ax {
                if d[1] >= 0.0 { 2 } else { 3 }
            } else if d[0] >= 0.0 {
                0
            } else {
                1
            };
            let (sc, tc, m) = match f {
                0 => (-d[2], -d[1], d[0]),
                1 => (d[2], -d[1], d[0]),
                2 => (d[0], d[2], d[1]),
                3 => (d[0], -d[2], d[1]),
                4 => (d[0], -d[1], d[2]),
                _ => (-d[0], -d[1], d[2]),
            };
            let am = m.abs();
            let nf = f64::from(n);
            let x = ((0.5 * sc / am + 0.5) * nf).floor().clamp(0.0, nf - 1.0) as u32;
            let y = ((0.5 * tc / am + 0.5) * nf).floor().clamp(0.0, nf - 1.0) as u32;
            Some((f, x, y))
        }
    }
}

/// R51/R101: the cube LOD: derivatives mapped onto the selected face with the quotient rule
/// (`dM = sign(m)·d_m`, [CHOICE]), scaled by `0.5·N0`, then R47 — in f64, rounded once.
#[must_use]
pub fn cube_lod(coord: &Coord, ddx: [f32; 3], ddy: [f32; 3], n0: u32) -> f32 {
    let dir = [coord.0[0], coord.0[1], coord.0[2]];
    let face = select_face(dir).unwrap_or(4);
    let wide = |v: [f32; 3]| v.map(f64::from);
    let (sc, tc, m) = {
        let (a, b, c) = face_axes(face, dir);
        (f64::from(a), f64::from(b), f64::from(c))
    };
    let am = m.abs();
    let sign = if m >= 0.0 { 1.0 } else { -1.0 };
    let scale = 0.5 * f64::from(n0);
    let map = |d: [f64; 3]| -> f64 {
        let (dsc, dtc, dm) = match face {
            0 => (-d[2], -d[1], d[0]),
            1 => (d[2], -d[1], d[0]),
            2 => (d[0], d[2], d[1]),
            3 => (d[0], -d[2], d[1]),
            4 => (d[0], -d[1], d[2]),
            _ => (-d[0], -d[1], d[2]),
        };
        let dabs = sign * dm;
        let du = (am * dsc - sc * dabs) / (am * am) * scale;
        let dv = (am * dtc - tc * dabs) / (am * am) * scale;
        (du * du + dv * dv).sqrt()
    };
    map(wide(ddx)).max(map(wide(ddy))).log2() as f32
}

/// One level of a cube: point sampling clamps on the face; bilinear crosses edges seamlessly and
/// gives a missing corner's weight to the three real texels in equal parts (R100–R104).
pub(super) fn filter_cube_level(
    src: &Source<'_>,
    coord: &Coord,
    level: u32,
    linear: bool,
    weight: f64,
    acc: &mut Combiner,
) {
    let tex = src.tex;
    let mip = tex.view().most_detailed_mip + level;
    let n = tex.level_size(mip)[0];
    let fc = face_coord([coord.0[0], coord.0[1], coord.0[2]]);
    let bpt = src.format.bytes_per_texel();
    let texel = |face: u32, x: u32, y: u32| {
        let data = tex.subresource(mip, src.slice + face);
        let at = (y as usize * n as usize + x as usize) * bpt;
        &data[at..at + bpt]
    };
    let nf = n as f32;
    if !linear {
        let x = ((fc.s * nf).floor().max(0.0) as u32).min(n - 1);
        let y = ((fc.t * nf).floor().max(0.0) as u32).min(n - 1);
        acc.texel(texel(fc.face, x, y), weight);
        return;
    }
    let fu = super::address::linear_fixed(fc.s * nf - 0.5);
    let fv = super::address::linear_fixed(fc.t * nf - 0.5);
    let (i0, j0) = (fu >> 8, fv >> 8);
    let (wi1, wj1) = ((fu & 255) as u32, (fv & 255) as u32);
    let wi = [256 - wi1, wi1];
    let wj = [256 - wj1, wj1];
    let mut taps: [(Option<CubeTexel>, u32); 4] = [(None, 0); 4];
    let mut k = 0;
    for (dj, &wy) in wj.iter().enumerate() {
        for (di, &wx) in wi.iter().enumerate() {
            taps[k] = (
                resolve_texel(fc.face, i0 + di as i64, j0 + dj as i64, n),
                wx * wy,
            );
            k += 1;
        }
    }
    // R103: a corner's weight goes to the other three texels, one third each.
    let missing: u32 = taps.iter().filter(|t| t.0.is_none()).map(|t| t.1).sum();
    let extra = f64::from(missing) / 3.0;
    for (t, w) in taps {
        let Some((face, x, y)) = t else { continue };
        let w = f64::from(w) + extra;
        if w != 0.0 {
            acc.texel(texel(face, x, y), weight * w / 65536.0);
        }
    }
}

/// R120 on cubes: the four gather taps on view mip 0, crossing faces like R102; a corner is the
/// average of the three real texels (FS 22.4.2).
pub(super) fn gather_taps<'a>(src: &Source<'a>, coord: &Coord) -> [Tap<'a>; 4] {
    let tex = src.tex;
    let mip = tex.view().most_detailed_mip;
    let n = tex.level_size(mip)[0];
    let fc = face_coord([coord.0[0], coord.0[1], coord.0[2]]);
    let nf = n as f32;
    let fu = super::address::linear_fixed(fc.s * nf - 0.5);
    let fv = super::address::linear_fixed(fc.t * nf - 0.5);
    let (i0, j0) = (fu >> 8, fv >> 8);
    let bpt = src.format.bytes_per_texel();
    let slice = src.slice;
    let texel = move |face: u32, x: u32, y: u32| -> &'a [u8] {
        let data = tex.subresource(mip, slice + face);
        let at = (y as usize * n as usize + x as usize) * bpt;
        &data[at..at + bpt]
    };
    let resolved = [(i0, j0 + 1), (i0 + 1, j0 + 1), (i0 + 1, j0), (i0, j0)]
        .map(|(i, j)| resolve_texel(fc.face, i, j, n));
    let real: Vec<&'a [u8]> = resolved
        .iter()
        .flatten()
        .map(|&(f, x, y)| texel(f, x, y))
        .collect();
    resolved.map(|r| match r {
        Some((f, x, y)) => Tap::Texel(texel(f, x, y)),
        None if real.len() == 3 => Tap::Corner([real[0], real[1], real[2]]),
        None => Tap::Border,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_coordinates_example_r99() {
        assert_eq!(
            face_coord([1.0, 0.5, -0.25]),
            FaceCoord {
                face: 0,
                s: 0.625,
                t: 0.25
            }
        );
    }

    #[test]
    fn ties_go_to_z_then_y_then_x_r98() {
        assert_eq!(select_face([1.0, 1.0, 1.0]), Some(4));
        assert_eq!(select_face([1.0, -1.0, 0.5]), Some(3));
        assert_eq!(select_face([-1.0, 0.5, 0.5]), Some(1));
        assert_eq!(select_face([0.0, 0.0, -0.0]), None);
        assert_eq!(select_face([0.5, 0.0, -0.0]), Some(0));
        assert_eq!(select_face([0.0, 0.0, -1.0]), Some(5));
        assert_eq!(
            face_coord([0.0, f32::NAN, 1.0]),
            FaceCoord {
                face: 4,
                s: 0.5,
                t: 0.5
            }
        );
    }

    #[test]
    fn off_face_texels_land_on_the_adjacent_edge_r102() {
        // Right of +Z (x beyond +1) is +X; +Z's right column meets +X's left column (s = 0).
        let n = 4;
        for j in 0..n {
            let (f, x, y) = resolve_texel(4, i64::from(n), i64::from(j), n).unwrap();
            assert_eq!((f, x, y), (0, 0, j));
        }
        // Above +Z (t < 0, y up) is +Y, whose bottom row (t = 1) touches +Z.
        let (f, _, y) = resolve_texel(4, 1, -1, n).unwrap();
        assert_eq!((f, y), (2, n - 1));
        assert_eq!(resolve_texel(4, -1, -1, n), None);
    }

    #[test]
    fn every_edge_neighbour_is_mutual_r102() {
        // Walking off a face and back must return to the start texel, for every edge and size.
        for n in 1..=8u32 {
            for face in 0..6 {
                for k in 0..i64::from(n) {
                    for (i, j) in [(-1, k), (i64::from(n), k), (k, -1), (k, i64::from(n))] {
                        let (f2, x2, y2) = resolve_texel(face, i, j, n).unwrap();
                        assert_ne!(f2, face);
                        // The start texel is a neighbour of the landing texel across its edge.
                        let back =
                            [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)]
                                .iter()
                                .any(|&(dx, dy)| {
                                    resolve_texel(f2, i64::from(x2) + dx, i64::from(y2) + dy, n)
                                        .is_some_and(|(f3, x3, y3)| {
                                            let (si, sj) = (
                                                i.clamp(0, i64::from(n) - 1),
                                                j.clamp(0, i64::from(n) - 1),
                                            );
                                            f3 == face && i64::from(x3) == si && i64::from(y3) == sj
                                        })
                                });
                        assert!(back, "n {n} face {face} ({i},{j}) -> {f2} ({x2},{y2})");
                    }
                }
            }
        }
    }
}
