//! The scalar queries of a map: one comparison, the receiver biases, and the lit fraction of
//! one point with a PCF kernel.

use glam::Vec3;

use super::{LightSource, MapLayout, ShadowMap};
use crate::sample::{Coord, LodMode, Offset, SampleArgs, validated};
use crate::shadow::kernel::{Anchor, PcfKernel, grid_anchor};
use crate::shadow::light::{BiasOrder, CubeLookup, OffsetUnits};

impl ShadowMap {
    /// One `sample_c_lz` of the map with its sampler: at (u, v, slice) for 2D maps and
    /// cascades, at a cube-map direction (already in the map's [`CubeLookup`] space) for
    /// point lights; `reference` is the receiver depth. 1 when the sampler refuses the
    /// coordinates (never for finite ones).
    #[must_use]
    pub fn compare(&self, coord: Vec3, reference: f32) -> f32 {
        let args = SampleArgs {
            coord: Coord([coord.x, coord.y, coord.z, 0.0]),
            lod: LodMode::Zero,
            offset: Offset::default(),
            clamp: None,
        };
        let reader = self.scalar_reader(|t, needs| self.need_coord(t, needs, &args.coord));
        validated(
            self.sampler
                .sample_cmp(Some(reader.texture()), &args, reference),
            1.0,
        )
    }

    /// [`ShadowMap::compare`] at each of `coords` with one `reference`, into `out` (the same
    /// bits as one call per coordinate; a tiled map draws the tiles they read once).
    ///
    /// # Panics
    /// If `out` is shorter than `coords`.
    pub fn compare_many(&self, coords: &[Vec3], reference: f32, out: &mut [f32]) {
        let coord = |c: &Vec3| Coord([c.x, c.y, c.z, 0.0]);
        let reader = self.scalar_reader(|t, needs| {
            for c in coords {
                self.need_coord(t, needs, &coord(c));
            }
        });
        for (c, o) in coords.iter().zip(&mut out[..coords.len()]) {
            let args = SampleArgs {
                coord: coord(c),
                lod: LodMode::Zero,
                offset: Offset::default(),
                clamp: None,
            };
            *o = validated(
                self.sampler
                    .sample_cmp(Some(reader.texture()), &args, reference),
                1.0,
            );
        }
    }

    /// Which slice a point falls in (cube face by R98 for point lights, the first cascade that
    /// contains it for cascades).
    fn slice_for(&self, p: Vec3) -> Option<usize> {
        match &self.layout {
            MapLayout::Single => Some(0),
            MapLayout::Cube { position } => {
                let d = self.light.cube.direction(p - *position);
                crate::sample::cube_face([d.x, d.y, d.z]).map(|f| f as usize)
            }
            // The first cascade whose map holds the point with a margin of a few texels for
            // the PCF footprint.
            MapLayout::Cascades { .. } => {
                let margin = 4.0 / self.resolution as f32;
                (0..self.view_proj.len()).find(|&i| {
                    self.project(i, p).is_some_and(|[u, v, z]| {
                        (margin..=1.0 - margin).contains(&u)
                            && (margin..=1.0 - margin).contains(&v)
                            && (0.0..=1.0).contains(&z)
                    })
                })
            }
        }
    }

    /// Projects a world point into slice `slice`: (u, v, depth), or `None` behind the light.
    #[must_use]
    #[inline]
    pub fn project(&self, slice: usize, p: Vec3) -> Option<[f32; 3]> {
        project_cols(&self.view_proj.get(slice)?.to_cols_array(), p)
    }

    /// True when the biased receiver `uvz` lies inside the map: depth in [0, 1] (from the depth
    /// of the light's range for reverse-Z spot and point maps) and, except on cube maps (which
    /// cover every direction), u and v in [0, 1].
    #[inline(always)]
    pub(super) fn inside(&self, [u, v, z]: [f32; 3]) -> bool {
        // `&` rather than `&&`: one branch instead of five in the batched loops.
        let square = (0.0..=1.0).contains(&u) & (0.0..=1.0).contains(&v);
        (self.depth_floor..=1.0).contains(&z) & (square | self.cube)
    }

    /// The normal-offset shift of the receiver `point` (in `slice`) along the nonzero `normal`.
    #[inline(always)]
    fn normal_shift(&self, slice: usize, point: Vec3, normal: Vec3) -> Vec3 {
        let bias = &self.light.bias;
        let amount = match bias.normal_units {
            // A number of texels, measured at the receiver's depth for perspective maps (clip w
            // is the view depth).
            OffsetUnits::Texels => {
                let depth = if self.perspective {
                    (self.view_proj[slice] * point.extend(1.0)).w.max(0.0)
                } else {
                    1.0
                };
                bias.normal_offset * self.texel_size[slice] * depth
            }
            OffsetUnits::World => bias.normal_offset,
        };
        normal.normalize() * amount
    }

    /// The unit direction from `p` towards the light.
    #[inline(always)]
    fn towards_light(&self, p: Vec3) -> Vec3 {
        match self.source {
            LightSource::Direction(d) => -d,
            LightSource::Position(q) => (q - p).normalize_or_zero(),
        }
    }

    /// The biased receiver position of `point` in the map: (slice, biased point, u, v, depth),
    /// or `None` when the point is outside the map and so unshadowed by definition
    /// (non-finite, behind the light, outside every cascade, outside the map's square or
    /// depth range). The receiver biases follow [`ShadowBias`](crate::shadow::ShadowBias).
    #[inline(always)]
    pub(super) fn receiver(
        &self,
        point: Vec3,
        normal: Option<Vec3>,
    ) -> Option<(usize, Vec3, [f32; 3])> {
        if !point.is_finite() {
            return None;
        }
        let slice = self.slice_for(point)?;
        let bias = &self.light.bias;
        let normal = normal.filter(|&n| has_normal_offset(Some(n)));
        // (Plain code, no closures: a closure here was not inlined, and the call per point
        // cost half of a spot light's batched query.)
        let p = match bias.order {
            BiasOrder::NormalFirst => {
                let q = match normal {
                    Some(n) => point + self.normal_shift(slice, point, n),
                    None => point,
                };
                q + self.towards_light(q) * bias.receiver
            }
            BiasOrder::DepthFirst => {
                let q = point + self.towards_light(point) * bias.receiver;
                match normal {
                    Some(n) => q + self.normal_shift(slice, point, n),
                    None => q,
                }
            }
        };
        let uvz = self.project(slice, p)?;
        self.inside(uvz).then_some((slice, p, uvz))
    }

    /// Where `point` (with surface `normal`) is compared in the map after the receiver biases:
    /// the slice, the biased world position and its (u, v, depth); `None` when the point is
    /// outside the map and so unshadowed. For tools that draw what the bias does.
    #[must_use]
    pub fn receiver_of(
        &self,
        point: Vec3,
        normal: Option<Vec3>,
    ) -> Option<(usize, Vec3, [f32; 3])> {
        self.receiver(point, normal)
    }

    /// How lit `point` is by this map's light with the light's kernel, in [0, 1]: 1 in the
    /// open, 0 in full shadow, fractions at PCF-softened edges. `normal` (the receiver's
    /// surface normal, if any) enables normal-offset bias. A point outside the map — behind the
    /// light, outside every cascade, outside the map's square or depth range — is unshadowed
    /// (1) whatever the sampler's address mode; inside, PCF taps reaching past the edge read
    /// the sampler's border or clamp.
    #[must_use]
    pub fn lit_fraction(&self, point: Vec3, normal: Option<Vec3>) -> f32 {
        self.lit_fraction_with(point, normal, &self.light.kernel)
    }

    /// [`ShadowMap::lit_fraction`] with another kernel. On cube maps a texel-grid kernel's taps
    /// are placed around the sample position (f = 0).
    #[must_use]
    pub fn lit_fraction_with(&self, point: Vec3, normal: Option<Vec3>, kernel: &PcfKernel) -> f32 {
        let Some((slice, p, [u, v, z])) = self.receiver(point, normal) else {
            return 1.0;
        };
        let reference = z;
        let texel = 1.0 / self.resolution as f32;
        let size = self.resolution as f32;
        let cube = matches!(self.layout, MapLayout::Cube { .. });
        // Where the taps are measured from, and the sub-texel position the kernel sees.
        let ((au, fu), (av, fv)) = if kernel.anchor() == Anchor::TexelGrid && !cube {
            (grid_anchor(u, size, texel), grid_anchor(v, size, texel))
        } else {
            ((u, 0.0), (v, 0.0))
        };
        // The taps' coordinates and weights first (a tiled map draws the tiles they read),
        // then the samples, summed in tap order.
        let mut taps = [(Coord::default(), 0.0f32); crate::shadow::MAX_TAPS];
        let mut count = 0;
        for (t, slot) in kernel.taps().iter().zip(taps.iter_mut()) {
            let (wu, du) = t.u.at(fu);
            let (wv, dv) = t.v.at(fv);
            let coord = match &self.layout {
                MapLayout::Cube { position } => {
                    let dd = cube_tap(self.light.cube, *position, slice, p, [du, dv], texel);
                    Coord([dd.x, dd.y, dd.z, 0.0])
                }
                _ => Coord([au + du * texel, av + dv * texel, slice as f32, 0.0]),
            };
            *slot = (coord, wu * wv);
            count += 1;
        }
        let taps = &taps[..count];
        let reader = self.scalar_reader(|t, needs| {
            for (coord, _) in taps {
                self.need_coord(t, needs, coord);
            }
        });
        let mut sum = 0.0f32;
        for &(coord, weight) in taps {
            let args = SampleArgs {
                coord,
                lod: LodMode::Zero,
                offset: Offset::default(),
                clamp: None,
            };
            let r = validated(
                self.sampler
                    .sample_cmp(Some(reader.texture()), &args, reference),
                1.0,
            );
            sum += weight * r;
        }
        lit_of_sum(sum, kernel.scale())
    }
}

/// The lit fraction of a kernel's weighted sum: `sum × scale`, at most 1 (weights such as
/// Castaño's, which sum to 144 only up to rounding, can land a hair above).
#[inline(always)]
pub(super) fn lit_of_sum(sum: f32, scale: f32) -> f32 {
    (sum * scale).min(1.0)
}

/// True when `normal` gives a normal-offset bias (finite, not zero).
#[inline]
pub(super) fn has_normal_offset(normal: Option<Vec3>) -> bool {
    normal.is_some_and(|n| n.is_finite() && n.length_squared() > 0.0)
}

/// Projects `p` with the column-major matrix `m` into (u, v, depth), or `None` when the clip w
/// is NaN or not positive (behind the light). Every operation is a plain f32 operation in a
/// fixed order — `((m0·x + m1·y) + m2·z) + m3` per clip component, then `/ w` — so the scalar
/// query and the batched one project to the same bits on every platform.
#[inline(always)]
pub(crate) fn project_cols(m: &[f32; 16], p: Vec3) -> Option<[f32; 3]> {
    let clip = |r: usize| ((m[r] * p.x + m[4 + r] * p.y) + m[8 + r] * p.z) + m[12 + r];
    let w = clip(3);
    if w.is_nan() || w <= 0.0 {
        return None;
    }
    let (x, y, z) = (clip(0) / w, clip(1) / w, clip(2) / w);
    Some([0.5 * x + 0.5, 0.5 - 0.5 * y, z])
}

/// The direction of one PCF tap of a cube map: the receiver's direction from the light moved
/// within the plane of its face by the tap's texel offset (seamless filtering, R100, does the
/// rest). Shared by the scalar and the batched queries so both sample the same coordinates.
#[inline]
pub(super) fn cube_tap(
    lookup: CubeLookup,
    position: Vec3,
    face: usize,
    p: Vec3,
    o: [f32; 2],
    texel: f32,
) -> Vec3 {
    let d = lookup.direction(p - position);
    let (right, up) = crate::sample::cube_face_axes(face as u32);
    let m = d.abs().max_element();
    d + (right * o[0] - up * o[1]) * (2.0 * texel * m)
}
