//! The first pass of a sun's Castaño factors sixteen receivers at a time: the arithmetic of
//! `sample_directional_cascade` and of `sample_shadow_map_castano_thirteen` up to the taps
//! (offsets, the cascade's matrix, the divide, the texel grid, the weights and the six
//! quotients) in AVX-512 lanes; then, receiver by receiver in order, each grid of nine taps
//! recorded at once ([`ShadowMap::sort_grid_3x3`], what `sort_grid` of the nine taps records)
//! and the factor with every answer +0 ([`castano_weighted`], as the scalar pass computes it).
//!
//! Every lane does the scalar path's IEEE operations in its order (glam's `Mat4 * Vec4` adds
//! the columns' products x, y, z, w in turn; no operation is fused), so a lane's taps, depth
//! and weights are the scalar path's bits. A receiver any lane cannot follow (a texel
//! coordinate that is not finite, where the filter falls back to one bilinear comparison) is
//! recorded by the scalar path whole. In the 10,000-probe flight the first pass and its
//! recording had been 12 % of the frame's CPU time; with the lanes the frame's CPU time is
//! 4–6 % lower, its wall time 5 % (benches/README.md).

use std::arch::x86_64::*;

use super::filters::{Record, castano_weighted, recorded};
use super::{PbrDirectional, PbrReceiver, mix};
use crate::shadow::map::ShadowMap;

/// Lanes of a step.
const LANES: usize = 16;

/// What a cascade gives one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Nine taps: the filter records them.
    Taps,
    /// A factor of 1 and nothing recorded (behind the cascade's projection or outside its box).
    One,
    /// The scalar path's case: the receiver is recorded one at a time.
    Scalar,
}

/// A cascade's results for sixteen receivers: per lane, its kind and, for taps, the tap
/// grid's three u and three v, the reference depth and the weights.
struct CascadeLanes {
    kind: [Kind; LANES],
    u: [[f32; LANES]; 3],
    v: [[f32; LANES]; 3],
    depth: [f32; LANES],
    uw: [[f32; LANES]; 3],
    vw: [[f32; LANES]; 3],
}

impl CascadeLanes {
    /// Lane `j`'s factor from this cascade (slice `slice`), its taps recorded through `record`.
    #[inline]
    fn factor(&self, record: &mut Record, map: &ShadowMap, j: usize, slice: usize) -> f32 {
        if self.kind[j] == Kind::One {
            return 1.0;
        }
        let (u, v) = (
            [0, 1, 2].map(|i| self.u[i][j]),
            [0, 1, 2].map(|i| self.v[i][j]),
        );
        // `Record::compare_grid` of the nine taps: their recording, and every answer +0.
        map.sort_grid_3x3(&mut record.0, slice as f32, u, v, self.depth[j]);
        let uw = [self.uw[0][j], self.uw[1][j], self.uw[2][j]];
        let vw = [self.vw[0][j], self.vw[1][j], self.vw[2][j]];
        castano_weighted(uw, vw, &[0.0; 9])
    }
}

/// The light's cascades as lane tables: each cascade's texel size, and each element of its
/// matrix (column-major), indexed by cascade.
struct Tables {
    texel: [f32; LANES],
    matrix: [[f32; LANES]; 16],
}

/// [`Factor::record_part`](super::filters::Factor::record_part) of a sun's Castaño factors,
/// sixteen receivers at a time; false (nothing recorded) where the CPU lacks AVX-512 or the
/// sun has more cascades than lanes.
pub(super) fn record_part(
    light: &PbrDirectional,
    map: &ShadowMap,
    record: &mut Record,
    part: &[PbrReceiver],
    out: &mut [f32],
    ends: &mut Vec<(u32, u32)>,
) -> bool {
    if !crate::cpu::CpuExtension::Avx512bw.is_supported() || light.cascades.len() > LANES {
        return false;
    }
    let mut tables = Tables {
        texel: [0.0; LANES],
        matrix: [[0.0; LANES]; 16],
    };
    for (c, cascade) in light.cascades.iter().enumerate() {
        tables.texel[c] = cascade.texel_size;
        for (e, &m) in cascade.clip_from_world.to_cols_array().iter().enumerate() {
            tables.matrix[e][c] = m;
        }
    }
    let mut k = 0;
    for (chunk, out) in part.chunks(LANES).zip(out.chunks_mut(LANES)) {
        // The scalar path's choices: each receiver's normal and cascade, and whether it blends
        // into the next.
        let mut picks = [None; LANES];
        let mut points = [[0.0; LANES]; 3];
        let mut normals = [[0.0; LANES]; 3];
        let (mut near, mut next) = ([0i32; LANES], [0i32; LANES]);
        let mut blends = false;
        for (j, r) in chunk.iter().enumerate() {
            let Some((normal, index)) = light.pick(r) else {
                continue;
            };
            let blend = light.blend_of(r.view_z, index);
            picks[j] = Some((index, blend));
            for a in 0..3 {
                points[a][j] = r.point[a];
                normals[a][j] = normal[a];
            }
            near[j] = index as i32;
            next[j] = (index + usize::from(blend.is_some())) as i32;
            blends |= blend.is_some();
        }
        // SAFETY: AVX-512 F is present (checked above).
        let lanes = |cascades: &[i32; LANES]| unsafe {
            cascade_lanes(light, &tables, map, &points, &normals, cascades)
        };
        let nearer = lanes(&near);
        let farther = if blends { Some(lanes(&next)) } else { None };
        for (j, (r, o)) in chunk.iter().zip(out.iter_mut()).enumerate() {
            *o = match picks[j] {
                None => 1.0,
                Some((index, blend)) => {
                    // `farther` is there for every lane that blends.
                    let far = blend.zip(farther.as_ref());
                    if nearer.kind[j] == Kind::Scalar
                        || far.is_some_and(|(_, f)| f.kind[j] == Kind::Scalar)
                    {
                        light.factor(record, map, r, super::PbrFilter::Gaussian)
                    } else {
                        let shadow = nearer.factor(record, map, j, index);
                        match far {
                            Some((t, f)) => mix(shadow, f.factor(record, map, j, index + 1), t),
                            None => shadow,
                        }
                    }
                }
            };
            recorded(record, ends, k, part.len());
            k += 1;
        }
    }
    true
}

/// The cascade arithmetic of sixteen receivers (`points`, `normals` by axis), each in cascade
/// `cascades[j]`: `sample_directional_cascade` up to the filter, then the Castaño filter up to
/// its taps.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[target_feature(enable = "avx512f")]
unsafe fn cascade_lanes(
    light: &PbrDirectional,
    tables: &Tables,
    map: &ShadowMap,
    points: &[[f32; LANES]; 3],
    normals: &[[f32; LANES]; 3],
    cascades: &[i32; LANES],
) -> CascadeLanes {
    let load = |a: &[f32; LANES]| unsafe { _mm512_loadu_ps(a.as_ptr()) };
    let splat = |v: f32| _mm512_set1_ps(v);
    let (add, sub, mul, div) = (
        |a, b| _mm512_add_ps(a, b),
        |a, b| _mm512_sub_ps(a, b),
        |a, b| _mm512_mul_ps(a, b),
        |a, b| _mm512_div_ps(a, b),
    );
    // SAFETY: 16 lanes from 16 values.
    let index = unsafe { _mm512_loadu_si512(cascades.as_ptr().cast()) };
    let of_cascade = |table: &[f32; LANES]| _mm512_permutexvar_ps(index, load(table));
    // normal_offset = (normal_bias · √2) · texel_size · normal; depth_offset = depth_bias ·
    // direction_to_light; offset = point + normal_offset + depth_offset.
    let k = mul(
        splat(light.normal_bias * std::f32::consts::SQRT_2),
        of_cascade(&tables.texel),
    );
    let depth_offset = light.depth_bias * light.direction_to_light;
    let offset: [__m512; 3] = std::array::from_fn(|a| {
        add(
            add(load(&points[a]), mul(k, load(&normals[a]))),
            splat(depth_offset[a]),
        )
    });
    // clip = clip_from_world · (offset, 1): column by column, as glam adds them.
    let clip: [__m512; 4] = std::array::from_fn(|row| {
        let m = |col: usize| of_cascade(&tables.matrix[4 * col + row]);
        let xy = add(mul(m(0), offset[0]), mul(m(1), offset[1]));
        add(add(xy, mul(m(2), offset[2])), mul(m(3), splat(1.0)))
    });
    let behind = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(clip[3], splat(0.0));
    let ndc: [__m512; 3] = std::array::from_fn(|a| div(clip[a], clip[3]));
    let (one, zero) = (splat(1.0), splat(0.0));
    let outside = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(ndc[0], splat(-1.0))
        | _mm512_cmp_ps_mask::<_CMP_LT_OQ>(ndc[1], splat(-1.0))
        | _mm512_cmp_ps_mask::<_CMP_LT_OQ>(ndc[2], zero)
        | _mm512_cmp_ps_mask::<_CMP_GT_OQ>(ndc[0], one)
        | _mm512_cmp_ps_mask::<_CMP_GT_OQ>(ndc[1], one)
        | _mm512_cmp_ps_mask::<_CMP_GT_OQ>(ndc[2], one);
    // The Castaño filter: the texel-space position, its grid and fractions, the weights.
    let half = splat(0.5);
    let size = map.resolution() as f32;
    let inv = splat(1.0 / size);
    let uv = [
        mul(add(mul(ndc[0], half), half), splat(size)),
        mul(add(mul(ndc[1], splat(-0.5)), half), splat(size)),
    ];
    let infinity = splat(f32::INFINITY);
    let finite = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_abs_ps(uv[0]), infinity)
        & _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_abs_ps(uv[1]), infinity);
    let floor = |v| _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(v);
    let mut out = CascadeLanes {
        kind: [Kind::Taps; LANES],
        u: [[0.0; LANES]; 3],
        v: [[0.0; LANES]; 3],
        depth: [0.0; LANES],
        uw: [[0.0; LANES]; 3],
        vw: [[0.0; LANES]; 3],
    };
    let store = |to: &mut [f32; LANES], v: __m512| unsafe { _mm512_storeu_ps(to.as_mut_ptr(), v) };
    let (two, three) = (splat(2.0), splat(3.0));
    for (axis, c) in uv.into_iter().enumerate() {
        let shifted = add(c, half);
        let grid = floor(shifted);
        let f = sub(shifted, grid);
        let base = mul(sub(grid, half), inv);
        let w = [
            sub(splat(4.0), mul(three, f)),
            splat(7.0),
            add(one, mul(three, f)),
        ];
        let q = [
            div(sub(three, mul(two, f)), w[0]),
            div(add(three, f), w[1]),
            div(f, w[2]),
        ];
        let offsets = [sub(q[0], two), q[1], add(q[2], two)];
        let (taps, weights) = if axis == 0 {
            (&mut out.u, &mut out.uw)
        } else {
            (&mut out.v, &mut out.vw)
        };
        for i in 0..3 {
            store(&mut taps[i], add(base, mul(offsets[i], inv)));
            store(&mut weights[i], w[i]);
        }
    }
    store(&mut out.depth, ndc[2]);
    for j in 0..LANES {
        let bit = 1 << j;
        out.kind[j] = if (behind | outside) & bit != 0 {
            Kind::One
        } else if finite & bit == 0 {
            Kind::Scalar
        } else {
            Kind::Taps
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::super::filters::{Factor, Record, record_each};
    use super::super::{Factors, PbrCascade, PbrDirectional, PbrFilter, PbrReceiver};
    use crate::shadow::{Occluder, Scene, ShadowMap};

    /// Bevy's cascade for a sun slanting down (every element of the matrix non-zero, so the
    /// order of its sums shows): a reverse-Z orthographic box of half-width `half` round
    /// (`x`, `z`).
    fn cascade(half: f32, x: f32, z: f32, far_bound: f32) -> PbrCascade {
        let down = Vec3::new(0.3, -1.0, 0.2).normalize();
        let view = glam::camera::rh::view::look_to_mat4(Vec3::new(x, 50.0, z), down, Vec3::Z);
        let proj =
            glam::camera::rh::proj::directx::orthographic(-half, half, -half, half, 100.0, 0.0);
        PbrCascade {
            clip_from_world: proj * view,
            texel_size: 2.0 * half / 64.0,
            far_bound,
        }
    }

    /// The sixteen-lane first pass records what one receiver at a time records, bit for bit:
    /// the same lookups, grids, corners and routes, the same first-pass factors and the same
    /// ends, for parts of every length up to three steps and past them. The receivers cover
    /// every cascade, the blend bands between them, past the last, points outside the boxes,
    /// behind a perspective cascade (w ≤ 0), a cascade whose matrix overflows (texel
    /// coordinates that are not finite: the scalar fallback), denormal and signed-zero coordinates, and non-finite points, normals and
    /// depths.
    #[test]
    fn lanes_record_what_one_receiver_at_a_time_records() {
        if !crate::cpu::CpuExtension::Avx512bw.is_supported() {
            eprintln!("no AVX-512 here: the lanes are not used, nothing to compare");
            return;
        }
        let mut scene = Scene::default();
        scene.add(Occluder::cuboid(
            Vec3::new(-20.0, -1.0, -20.0),
            Vec3::new(20.0, 0.0, 20.0),
        ));
        scene.add(Occluder::cuboid(
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.0, 2.0, 1.0),
        ));
        let perspective = PbrCascade {
            clip_from_world: glam::camera::rh::proj::directx::perspective(1.2, 1.0, 0.5, 60.0)
                * glam::camera::rh::view::look_to_mat4(Vec3::new(0.0, 10.0, 0.0), Vec3::X, Vec3::Y),
            texel_size: 0.3,
            far_bound: 80.0,
        };
        let sun = PbrDirectional {
            direction_to_light: Vec3::new(0.1, 1.0, -0.2).normalize(),
            depth_bias: 0.02,
            normal_bias: 1.8,
            overlap_proportion: 0.2,
            cascades: vec![
                cascade(4.0, 0.5, -0.25, 5.0),
                cascade(8.0, 0.0, 0.0, 10.0),
                cascade(16.0, -3.0, 2.0, 30.0),
                perspective,
                // Every product overflows: clip is ±inf, the divide NaN, and the filter takes
                // its one bilinear comparison (the scalar fallback).
                PbrCascade {
                    clip_from_world: glam::Mat4::from_cols_array(&[1e38; 16]),
                    texel_size: 0.1,
                    far_bound: 100.0,
                },
            ],
            resolution: 64,
        };
        let map = ShadowMap::render(sun.light(1.0), &scene).unwrap();
        let mut rng = penumbra_testkit::Rng::lcg64(0x1a9e5);
        let odd = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            3e38,
            -3e38,
            f32::MIN_POSITIVE / 4.0,
            -0.0,
            0.0,
        ];
        let pick = |rng: &mut penumbra_testkit::Rng, k: usize| -> f32 {
            odd[k % odd.len()] * if rng.below_mod(2) == 0 { 1.0 } else { -1.0 }
        };
        let receivers: Vec<PbrReceiver> = (0..3000)
            .map(|k| {
                let mut point =
                    rng.point(Vec3::new(-18.0, -0.5, -18.0), Vec3::new(18.0, 3.0, 18.0));
                let mut normal = rng.point(Vec3::splat(-1.0), Vec3::splat(1.0)).normalize();
                let mut view_z = -rng.f32_in(-1.0, 110.0);
                match rng.below_mod(12) {
                    0 => point[rng.below_mod(3) as usize] = pick(&mut rng, k),
                    1 => normal[rng.below_mod(3) as usize] = pick(&mut rng, k),
                    2 => view_z = pick(&mut rng, k),
                    // On the blend bands' edges.
                    3 => view_z = -[4.0, 5.0, 8.0, 10.0, 24.0, 30.0][k % 6],
                    _ => {}
                }
                PbrReceiver {
                    point,
                    normal,
                    view_z,
                }
            })
            .collect();
        let factors = Factors {
            light: &sun,
            map: &map,
            filter: PbrFilter::Gaussian,
        };
        let (mut scalar_seen, mut lanes_seen) = (0, 0);
        let mut start = 0;
        for len in (0..50).chain([200, 777]).cycle() {
            if start + len > receivers.len() {
                break;
            }
            let part = &receivers[start..start + len];
            start += len;
            let (mut one, mut many) = (Record(map.sorted()), Record(map.sorted()));
            let (mut out_one, mut out_many) = (vec![-1.0; len], vec![-1.0; len]);
            let (mut ends_one, mut ends_many) = (Vec::new(), Vec::new());
            record_each(&factors, &mut one, part, &mut out_one, &mut ends_one);
            factors.record_part(&mut many, part, &mut out_many, &mut ends_many);
            let bits = one.0.bits();
            assert_eq!(bits, many.0.bits(), "part of {len} from {}", start - len);
            assert_eq!(
                out_one.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                out_many.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                "part of {len}"
            );
            assert_eq!(ends_one, ends_many, "part of {len}");
            scalar_seen += bits.2.len();
            lanes_seen += bits.3.len();
        }
        // Both kinds of lookups were recorded: grids from the lanes, and the scalar
        // fallback's single comparisons (routed one by one).
        assert!(
            lanes_seen > 500 && scalar_seen > 10,
            "{lanes_seen} grids, {scalar_seen} scalar"
        );
    }
}
