//! The guard bands of SPEC §3.3 (items 4 and 5): inputs so close to a decision boundary that two
//! conformant implementations may decide differently. A case is explained by a band only if its
//! own numbers lie in the band *and* moving the input inside the band (a "nudge") reproduces
//! lavapipe's answer.

use crate::{FilterType, ReductionType};

use super::model::{LOD_STEP, border_sampled, unorm_bits};
use super::{Case, code, cube_face, hex, num};

/// Texel edges, tap edges and LOD decision points: within 2/256.
const BAND: f64 = 2.0 / 256.0;
/// Cube faces: the major component must exceed the others by a factor 1 + 2^-10.
const FACE_BAND: f64 = 1.0 / 1024.0;
/// Array slices: the fraction must be 2^-10 away from 0.5.
const SLICE_BAND: f64 = 1.0 / 1024.0;

/// One way to move a case's input inside a guard band.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Nudge {
    /// Add to the normalized coordinate of an axis: u/v of a 2D view, the face's s/t on a cube.
    Axis(usize, f64),
    /// Add to the array coordinate.
    Slice(f32),
    /// Add to the clamped LOD.
    Lod(f32),
    /// Add to the comparison reference.
    Ref(f32),
    /// Make this direction component, which ties with the major one, the major one.
    Face(usize),
}

/// The nudges of one band, of which at most one is applied.
pub(super) struct Group {
    pub band: &'static str,
    pub options: Vec<Nudge>,
}

/// `|x − n| ≤ band` for an integer n.
fn near_integer(x: f64, band: f64) -> bool {
    let f = x - x.floor();
    f <= band || f >= 1.0 - band
}

/// Some x in `[lo, hi]` lies within `band` of n + ½.
fn near_half(lo: f64, hi: f64, band: f64) -> bool {
    (lo - band - 0.5).ceil() <= (hi + band - 0.5).floor()
}

/// The direction component and sign that carry the face coordinates s and t (R99).
fn face_axes(face: u32) -> [(usize, f32); 2] {
    match face {
        0 => [(2, -1.0), (1, -1.0)],
        1 => [(2, 1.0), (1, -1.0)],
        2 => [(0, 1.0), (2, 1.0)],
        3 => [(0, 1.0), (2, -1.0)],
        4 => [(0, 1.0), (1, -1.0)],
        _ => [(0, -1.0), (1, -1.0)],
    }
}

/// The bands this case's numbers fall into, with the nudges that stay inside them.
pub(super) fn groups(case: &Case) -> Vec<Group> {
    let mut groups = Vec::new();
    let f = case.filter;
    if case.dim.is_cube()
        && let Some((face, _, _)) = cube_face(case.dir())
    {
        let a = case.dir().map(|x| f64::from(x).abs());
        let major = (face / 2) as usize;
        let options: Vec<Nudge> = (0..3)
            .filter(|&i| i != major && a[major] < (1.0 + FACE_BAND) * a[i])
            .map(Nudge::Face)
            .collect();
        if !options.is_empty() {
            groups.push(Group {
                band: "cube-face-tie",
                options,
            });
        }
    }
    if let Some(i) = case.dim.array_coord() {
        let s = f64::from(case.coord[i]);
        if (s - s.floor() - 0.5).abs() <= SLICE_BAND {
            let d = (SLICE_BAND / 2.0) as f32;
            groups.push(Group {
                band: "array-slice",
                options: vec![Nudge::Slice(d), Nudge::Slice(-d)],
            });
        }
    }
    if let Some((lo, hi)) = case.lod_range() {
        let (lo, hi) = (f64::from(lo), f64::from(hi));
        let lod = vec![Nudge::Lod(LOD_STEP), Nudge::Lod(-LOD_STEP)];
        if f.mip_filter() == FilterType::Point && hi > 0.0 && near_half(lo.max(0.0), hi, BAND) {
            groups.push(Group {
                band: "mip-point-lod",
                options: lod,
            });
        } else if f.min_filter() != f.mag_filter() && lo <= BAND && hi >= -BAND {
            groups.push(Group {
                band: "mag-min-switch",
                options: lod,
            });
        }
    }
    let point = !case.op.gathers()
        && (f.min_filter() == FilterType::Point || f.mag_filter() == FilterType::Point);
    // Min/max, gathers and per-tap comparisons depend on which taps are in the footprint.
    let taps_matter =
        case.op.gathers() || case.op.compares() || f.reduction() != ReductionType::Standard;
    let linear = case.op.gathers()
        || (taps_matter
            && (f.min_filter() == FilterType::Linear || f.mag_filter() == FilterType::Linear));
    for axis in 0..2 {
        let mut edge = Vec::new();
        let mut tap = Vec::new();
        for level in case.levels() {
            let Some(st) = case.texel_coords(level) else {
                continue;
            };
            // 1.5/256 texel: inside the band, and not lost in R27's 8-bit snapping.
            let d = 1.5 / 256.0 / f64::from(case.level_size(level)[axis]);
            if point && near_integer(st[axis], BAND) {
                edge.extend([Nudge::Axis(axis, d), Nudge::Axis(axis, -d)]);
            }
            if linear && near_integer(st[axis] - 0.5, BAND) {
                tap.extend([Nudge::Axis(axis, d), Nudge::Axis(axis, -d)]);
            }
        }
        for (band, options) in [("point-texel-edge", edge), ("linear-tap-edge", tap)] {
            if !options.is_empty() {
                groups.push(Group { band, options });
            }
        }
    }
    if case.op.compares()
        && let Some(bits) = unorm_bits(case.format)
    {
        let m = ((1u64 << bits) - 1) as f64;
        let r = f64::from(num(&case.json["ref"])).clamp(0.0, 1.0) * m;
        if (r - r.floor() - 0.5).abs() <= 0.1 {
            let d = (0.2 / m) as f32;
            groups.push(Group {
                band: "compare-ref-rounding",
                options: vec![Nudge::Ref(d), Nudge::Ref(-d)],
            });
        }
        if depths(case, m).into_iter().any(|t| (t - r).abs() < 1.0) {
            let d = (0.9 / m) as f32;
            groups.push(Group {
                band: "compare-ref-near-texel",
                options: vec![Nudge::Ref(d), Nudge::Ref(-d)],
            });
        }
    }
    groups
}

/// The case with one nudge applied.
pub(super) fn apply(case: &Case, nudge: Nudge) -> Case {
    let mut c = case.clone();
    match nudge {
        Nudge::Axis(axis, d) => {
            if let Some((face, _, _)) = case.dim.is_cube().then(|| cube_face(case.dir())).flatten()
            {
                let (i, sign) = face_axes(face)[axis];
                let m = case.coord[(face / 2) as usize].abs();
                c.coord[i] += sign * 2.0 * m * d as f32;
            } else {
                c.coord[axis] += d as f32;
            }
        }
        Nudge::Slice(d) => {
            let i = case.dim.array_coord().expect("an array view");
            c.coord[i] += d;
        }
        Nudge::Lod(d) => c.lod_nudge += d,
        Nudge::Ref(d) => c.json["ref"] = hex(num(&case.json["ref"]) + d),
        Nudge::Face(i) => {
            let major = cube_face(case.dir()).map_or(2, |(f, _, _)| (f / 2) as usize);
            let m = case.coord[major].abs() * (1.0 + (FACE_BAND / 2.0) as f32);
            c.coord[i] = if case.coord[i] < 0.0 { -m } else { m };
        }
    }
    if matches!(nudge, Nudge::Axis(..) | Nudge::Slice(_) | Nudge::Face(_)) {
        c.json["coord"] = c.coord.iter().map(|&x| hex(x)).collect();
        c.refresh_lod();
    }
    c
}

/// A cube sample whose bilinear footprint leaves the face in both axes (SPEC §3.3 item 4: "avoid
/// the corner quadrant or allow R/12", the largest gap between the 3-way and 2-way corner rules).
pub(super) fn at_cube_corner(case: &Case) -> bool {
    let f = case.filter;
    let linear = case.op.gathers()
        || f.min_filter() == FilterType::Linear
        || f.mag_filter() == FilterType::Linear;
    case.dim.is_cube()
        && linear
        && case.levels().any(|level| {
            let n = f64::from(case.level_size(level)[0]);
            case.texel_coords(level).is_some_and(|st| {
                st.iter().all(|&s| {
                    let t0 = (s - 0.5).floor();
                    t0 < 0.0 || t0 + 1.0 > n - 1.0
                })
            })
        })
}

/// Every depth (R) of the levels the case can read (all slices), plus the border's if it can be
/// sampled, in format steps (`value · (2^n − 1)`): the texels a comparison can meet.
fn depths(case: &Case, m: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let ch = case.format.channels();
    let data = case.tex["data"].as_array().expect("data");
    for (sub, values) in data.iter().enumerate() {
        let level = sub as u32 % case.mips;
        if case.levels().contains(&level) {
            let values = values.as_array().expect("a subresource");
            out.extend(values.iter().step_by(ch).map(|v| f64::from(code(v))));
        }
    }
    if border_sampled(case) {
        out.push(f64::from(case.desc.border_color[0]).clamp(0.0, 1.0) * m);
    }
    out
}
