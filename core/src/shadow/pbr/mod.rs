//! Bevy's shadow model: the maps bevy_pbr renders and the shadow factor its fragment shader
//! computes from them, on penumbra's rasterizer and D3D12 sampler.
//!
//! bevy_pbr (0.19 and 0.20 share this code) renders its shadow maps with reverse-Z depth
//! (cleared to 0, drawn with GREATER_EQUAL), no rasterizer depth bias, back faces culled with
//! counter-clockwise fronts (StandardMaterial's default), and unclipped (clamped) depth for
//! directional cascades. It samples them with one comparison sampler: bilinear, clamp to edge,
//! GREATER_EQUAL — penumbra's `COMPARISON_MIN_MAG_LINEAR_MIP_POINT` with `CLAMP` and
//! `GREATER_EQUAL` (SPEC R22–R27 for the bilinear footprint, R80–R84 for the comparison). The
//! receiver side — biases, projection, cascade choice, filter kernels — is the shader code of
//! `bevy_pbr::shadows` and `bevy_pbr::shadow_sampling`, followed here line for line in f32:
//!
//! * [`PbrDirectional`]: the cascades Bevy computed for one camera; depth bias along the
//!   direction to the light, normal bias × √2 × the cascade's texel size; a point outside a
//!   cascade's box is lit by it; the cascade is the first whose far bound exceeds the view
//!   depth, blended linearly with the next one in the overlap band; past the last, lit.
//! * [`PbrSpot`]: the light's own basis (`orthonormalize` of its back vector), the infinite
//!   reverse-Z perspective of twice the outer angle, normal bias × √2 × its texel size
//!   (2·tan(outer) / map size) × the distance along the axis.
//! * [`PbrPoint`]: a cube of six 90° infinite reverse-Z faces looking along Bevy's
//!   `CUBE_MAP_FACES`, sampled at the light-to-point vector with z mirrored
//!   ([`CubeLookup::MirrorZ`]); normal bias × √2 × 2 / face size × the major axis.
//!
//! Filters ([`PbrFilter`]): `Hardware2x2` is one bilinear comparison; `Gaussian` is Castaño's
//! 13-tap kernel (nine bilinear comparisons) on 2D maps and eight taps on the D3D 8× MSAA pattern
//! with Gaussian weights on cube maps; `Temporal` is the Jimenez '14 spiral of eight taps
//! rotated per pixel and frame by interleaved gradient noise — exact when the pixel and frame
//! are given, otherwise the mean over [`TEMPORAL_MEAN_ROTATIONS`] evenly spaced rotations.
//!
//! Falloff ([`point_attenuation`], [`spot_attenuation`]) is Bevy's: the windowed inverse
//! square `(1 − (d²/r²)²)²₊ / max(d², 10⁻⁴)` and the spot's `saturate(cos·scale + offset)²`.

use std::f32::consts::{FRAC_PI_2, PI, SQRT_2};

use glam::{Mat3, Mat4, Vec2, Vec3, Vec4};

use super::light::{CubeLookup, DepthConvention, Light, LightKind, RasterConvention, SliceView};
use super::map::ShadowMap;
use crate::desc::AddressMode;
use crate::raster::{CullMode, DepthBias};

mod filters;
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod lanes;

use filters::*;

/// The shadow filter of a Bevy camera (`ShadowFilteringMethod`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum PbrFilter {
    /// One bilinear comparison (2×2 PCF in hardware).
    Hardware2x2,
    /// Castaño's 13-tap Gaussian (2D maps); eight Gaussian-weighted taps (cube maps). Bevy's
    /// default.
    #[default]
    Gaussian,
    /// Jimenez '14: eight spiral taps rotated by interleaved gradient noise of the pixel and
    /// frame; `None` takes the mean over [`TEMPORAL_MEAN_ROTATIONS`] rotations.
    Temporal(Option<TemporalPixel>),
}

/// The pixel and frame a temporal filter's rotation comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemporalPixel {
    /// The fragment's window position (`frag_coord.xy`: pixel centres at .5).
    pub frag_coord: Vec2,
    /// Bevy's `globals.frame_count`.
    pub frame: u32,
}

/// Rotations averaged by [`PbrFilter::Temporal`] without a pixel: evenly spaced over a turn.
pub const TEMPORAL_MEAN_ROTATIONS: u32 = 16;

/// bevy_pbr's spot-light texel size for the temporal filter's scale (a constant there).
// The shader's literals as written (f32 rounds them as WGSL does).
#[allow(clippy::excessive_precision)]
const SPOT_SHADOW_TEXEL_SIZE: f32 = 0.013_427_734_5;
/// bevy_pbr's scale of the cube-map filters, per unit of distance.
const POINT_SHADOW_SCALE: f32 = 0.003;
/// bevy_pbr's scale of the temporal cube-map spiral.
const POINT_SHADOW_TEMPORAL_OFFSET_SCALE: f32 = 0.5;

/// The D3D standard 8× MSAA sample positions, as bevy_pbr's cube-map Gaussian uses them.
const D3D_SAMPLE_POINTS: [[f32; 2]; 8] = [
    [0.125, -0.375],
    [-0.125, 0.375],
    [0.625, 0.125],
    [-0.375, -0.625],
    [-0.625, 0.625],
    [-0.875, -0.125],
    [0.375, 0.875],
    [0.875, -0.875],
];

/// The Gaussian weights of those positions (they sum to 1.000112, as in bevy_pbr).
const D3D_SAMPLE_WEIGHTS: [f32; 8] = [
    0.157_112, 0.157_112, 0.138_651, 0.130_251, 0.114_946, 0.114_946, 0.107_982, 0.079_001,
];

/// The Jimenez '14 spiral, as in `bevy_pbr::utils` (its four-digit values, not 1/√2).
#[allow(clippy::approx_constant)]
const SPIRAL: [[f32; 2]; 8] = [
    [-0.7071, 0.7071],
    [-0.0000, -0.8750],
    [0.5303, 0.5303],
    [-0.6250, -0.0000],
    [0.3536, -0.3536],
    [-0.0000, 0.3750],
    [-0.1768, -0.1768],
    [0.1250, 0.0000],
];

/// The basis bevy_render's `orthonormalize` (and glam's `any_orthonormal_pair`) builds around
/// the unit vector `z`: columns x, y, z.
#[must_use]
pub fn orthonormalize(z: Vec3) -> Mat3 {
    let sign = 1.0f32.copysign(z.z);
    let a = -1.0 / (sign + z.z);
    let b = z.x * z.y * a;
    let x = Vec3::new(1.0 + sign * z.x * z.x * a, sign * b, -sign * z.x);
    let y = Vec3::new(b, sign + z.y * z.y * a, -z.y);
    Mat3::from_cols(x, y, z)
}

/// Bevy's infinite reverse-Z right-handed perspective (glam's `perspective_infinite_reverse_rh`).
fn perspective_infinite_reverse_rh(fov_y: f32, aspect: f32, near: f32) -> Mat4 {
    glam::camera::rh::proj::directx::perspective_infinite_reverse(fov_y, aspect, near)
}

/// The conventions every bevy_pbr shadow map is rendered with; `depth_clip` off for
/// directional cascades (unclipped depth).
fn pbr_light(kind: LightKind, intensity: f32, resolution: u32, depth_clip: bool) -> Light {
    let mut light = Light {
        kind,
        intensity,
        resolution,
        ..Light::directional(Vec3::NEG_Y, intensity)
    }
    .with_depth(DepthConvention::Reverse)
    .with_raster(RasterConvention {
        cull: CullMode::Back,
        front_counter_clockwise: true,
        depth_clip,
    });
    light.bias.raster = DepthBias {
        depth_bias: 0,
        slope_scaled_depth_bias: 0.0,
        depth_bias_clamp: 0.0,
    };
    light.bias.receiver = 0.0;
    light.bias.normal_offset = 0.0;
    light.sampler = super::light::shadow_sampler(DepthConvention::Reverse, AddressMode::Clamp);
    light
}

/// One cascade of a directional light for one camera, as Bevy computed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbrCascade {
    /// World to the cascade's clip space (`Cascade::clip_from_world`).
    pub clip_from_world: Mat4,
    /// World size of one texel (`Cascade::texel_size`).
    pub texel_size: f32,
    /// View depth where the cascade ends (`CascadeShadowConfig::bounds[i]`).
    pub far_bound: f32,
}

/// A directional light's cascades for one camera, with its biases.
#[derive(Clone, Debug, PartialEq)]
pub struct PbrDirectional {
    /// Unit direction from the scene to the light (the light's `back()`).
    pub direction_to_light: Vec3,
    /// `DirectionalLight::shadow_depth_bias` (world units).
    pub depth_bias: f32,
    /// `DirectionalLight::shadow_normal_bias` (texels; the shader gets it × √2).
    pub normal_bias: f32,
    /// `CascadeShadowConfig::overlap_proportion`.
    pub overlap_proportion: f32,
    /// The cascades, nearest first.
    pub cascades: Vec<PbrCascade>,
    /// `DirectionalLightShadowMap::size`.
    pub resolution: u32,
}

impl PbrDirectional {
    /// The penumbra light that renders Bevy's cascade maps (a Texture2DArray, one slice per
    /// cascade, through the cascades' own matrices).
    #[must_use]
    pub fn light(&self, intensity: f32) -> Light {
        let mut light = pbr_light(
            LightKind::Cascaded {
                direction: -self.direction_to_light,
                center: Vec3::ZERO,
                radii: self.cascades.iter().map(|c| c.far_bound).collect(),
            },
            intensity,
            self.resolution,
            false,
        );
        light.views = self
            .cascades
            .iter()
            .map(|c| SliceView {
                view: Mat4::IDENTITY,
                projection: c.clip_from_world,
            })
            .collect();
        light
    }

    /// `fetch_directional_shadow`: the shadow factor at `point` with unit `normal`, seen at view
    /// depth `view_z` (negative in front of the camera), from `map` (rendered from
    /// [`PbrDirectional::light`]); 1 at a non-finite point, no normal bias for a non-finite
    /// normal.
    #[must_use]
    pub fn shadow_factor(
        &self,
        map: &ShadowMap,
        point: Vec3,
        normal: Vec3,
        view_z: f32,
        filter: PbrFilter,
    ) -> f32 {
        let r = PbrReceiver {
            point,
            normal,
            view_z,
        };
        self.factor(&mut Now, map, &r, filter)
    }

    /// [`PbrDirectional::shadow_factor`] of many receivers, into `out`: the same bits, with
    /// every comparison through the map's batched path in one go (a tiled map draws every tile
    /// they read at once).
    ///
    /// # Panics
    /// If `out` is shorter than `receivers`.
    pub fn shadow_factors(
        &self,
        map: &ShadowMap,
        receivers: &[PbrReceiver],
        filter: PbrFilter,
        out: &mut [f32],
    ) {
        crate::zone!("penumbra::PbrDirectional::shadow_factors");
        let factors = Factors {
            light: self,
            map,
            filter,
        };
        batched(map, receivers, &mut out[..receivers.len()], &factors);
    }

    fn factor(
        &self,
        lookups: &mut impl Lookups,
        map: &ShadowMap,
        r: &PbrReceiver,
        filter: PbrFilter,
    ) -> f32 {
        let Some((normal, index)) = self.pick(r) else {
            return 1.0;
        };
        let shadow = self.cascade_factor(lookups, map, index, r.point, normal, filter);
        match self.blend_of(r.view_z, index) {
            Some(t) => {
                let next = self.cascade_factor(lookups, map, index + 1, r.point, normal, filter);
                mix(shadow, next, t)
            }
            None => shadow,
        }
    }

    /// A receiver's normal (`Vec3::ZERO` where not finite: no normal bias) and the cascade its
    /// view depth picks; `None` (a factor of 1) at a non-finite point or past the last cascade.
    #[inline]
    fn pick(&self, r: &PbrReceiver) -> Option<(Vec3, usize)> {
        let normal = receiver(r.point, r.normal)?;
        let index = self.cascades.iter().position(|c| -r.view_z < c.far_bound)?;
        Some((normal, index))
    }

    /// In the band where cascade `index` blends into the next, the next one's weight.
    #[inline]
    fn blend_of(&self, view_z: f32, index: usize) -> Option<f32> {
        if index + 1 >= self.cascades.len() {
            return None;
        }
        let this_far = self.cascades[index].far_bound;
        let next_near = (1.0 - self.overlap_proportion) * this_far;
        (-view_z >= next_near).then(|| {
            let t = (-view_z - next_near) / (this_far - next_near);
            // In [0, 1) for any sane configuration; an overlap of ±inf or NaN makes it NaN,
            // which a GPU would pass on: here the nearer cascade stands.
            if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) }
        })
    }

    /// `sample_directional_cascade`.
    fn cascade_factor(
        &self,
        lookups: &mut impl Lookups,
        map: &ShadowMap,
        index: usize,
        point: Vec3,
        normal: Vec3,
        filter: PbrFilter,
    ) -> f32 {
        let cascade = &self.cascades[index];
        let normal_offset = (self.normal_bias * SQRT_2) * cascade.texel_size * normal;
        let depth_offset = self.depth_bias * self.direction_to_light;
        let offset = point + normal_offset + depth_offset;
        let clip = cascade.clip_from_world * offset.extend(1.0);
        if clip.w <= 0.0 {
            return 1.0;
        }
        let ndc = clip.truncate() / clip.w;
        if ndc.x < -1.0 || ndc.y < -1.0 || ndc.z < 0.0 || ndc.x > 1.0 || ndc.y > 1.0 || ndc.z > 1.0
        {
            return 1.0;
        }
        let uv = Vec2::new(ndc.x * 0.5 + 0.5, ndc.y * -0.5 + 0.5);
        sample_2d(lookups, map, index, uv, ndc.z, cascade.texel_size, filter)
    }
}

impl Factor<PbrReceiver> for Factors<'_, PbrDirectional> {
    fn factor(&self, lookups: &mut impl Lookups, r: &PbrReceiver) -> f32 {
        self.light.factor(lookups, self.map, r, self.filter)
    }

    /// The Castaño filter's first pass sixteen receivers at a time where the CPU has AVX-512
    /// ([`lanes`]); the same lookups and factors as one at a time.
    fn record_part(
        &self,
        record: &mut Record,
        part: &[PbrReceiver],
        out: &mut [f32],
        ends: &mut Vec<(u32, u32)>,
    ) {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if self.filter == PbrFilter::Gaussian
            && lanes::record_part(self.light, self.map, record, part, out, ends)
        {
            return;
        }
        record_each(self, record, part, out, ends);
    }
}

/// A receiver of [`PbrDirectional::shadow_factors`] (and, without `view_z`, of the spot and
/// point lights' batched factors): a point, its unit normal, and its view depth (negative in
/// front of the camera).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PbrReceiver {
    /// The point.
    pub point: Vec3,
    /// Its unit normal (a non-finite one: no normal bias).
    pub normal: Vec3,
    /// Its depth in the camera's view space (directional lights pick the cascade by it).
    pub view_z: f32,
}

/// A spot light with its biases.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbrSpot {
    /// Position.
    pub position: Vec3,
    /// Unit direction the cone points (the light's `forward()`).
    pub direction: Vec3,
    /// `SpotLight::outer_angle` (radians).
    pub outer_angle: f32,
    /// `SpotLight::inner_angle` (radians).
    pub inner_angle: f32,
    /// `SpotLight::range`.
    pub range: f32,
    /// `SpotLight::shadow_map_near_z`.
    pub near_z: f32,
    /// `SpotLight::shadow_depth_bias` (world units).
    pub depth_bias: f32,
    /// `SpotLight::shadow_normal_bias` (texels; the shader gets it × √2 × the texel size).
    pub normal_bias: f32,
    /// `DirectionalLightShadowMap::size` (spot maps share the directional maps' size).
    pub resolution: u32,
}

impl PbrSpot {
    /// The cone's axis as the shader rebuilds it: x and z from the uniform, y from their
    /// complement with the sign flag.
    fn axis(&self) -> Vec3 {
        let d = self.direction;
        let y = (1.0 - d.x * d.x - d.z * d.z).max(0.0).sqrt();
        Vec3::new(d.x, if d.y.is_sign_negative() { -y } else { y }, d.z)
    }

    /// `spot_light_world_from_view`: the light's basis around its back vector, at its position.
    #[must_use]
    pub fn world_from_view(&self) -> Mat4 {
        let basis = orthonormalize(-self.direction);
        Mat4::from_cols(
            basis.x_axis.extend(0.0),
            basis.y_axis.extend(0.0),
            basis.z_axis.extend(0.0),
            self.position.extend(1.0),
        )
    }

    /// The penumbra light that renders Bevy's spot map.
    #[must_use]
    pub fn light(&self, intensity: f32) -> Light {
        let mut light = pbr_light(
            // The map's projection is the caller view below (Bevy allows cones up to
            // π/2 − 10⁻⁴); the kind's angle only describes the cone, kept inside what penumbra's
            // own spot lights accept.
            LightKind::Spot {
                position: self.position,
                direction: self.direction,
                outer_angle: self.outer_angle.min(1.5),
                inner_angle: self.inner_angle.min(1.5),
                range: self.range,
            },
            intensity,
            self.resolution,
            true,
        );
        light.views = vec![SliceView {
            view: self.world_from_view().inverse(),
            projection: perspective_infinite_reverse_rh(self.outer_angle * 2.0, 1.0, self.near_z),
        }];
        light
    }

    fn factor(
        &self,
        lookups: &mut impl Lookups,
        map: &ShadowMap,
        point: Vec3,
        normal: Vec3,
        filter: PbrFilter,
    ) -> f32 {
        let Some(normal) = receiver(point, normal) else {
            return 1.0;
        };
        let texel_size = 2.0 * self.outer_angle.tan() / self.resolution as f32;
        let normal_bias = self.normal_bias * texel_size * SQRT_2;
        let surface_to_light = self.position - point;
        let fwd = -self.axis();
        let distance_to_light = fwd.dot(surface_to_light);
        let offset = -surface_to_light
            + self.depth_bias * surface_to_light.normalize()
            + (normal * normal_bias) * distance_to_light;
        let basis = orthonormalize(fwd);
        // `offset * basis`: a row vector times the matrix.
        let projected = Vec3::new(
            offset.dot(basis.x_axis),
            offset.dot(basis.y_axis),
            offset.dot(basis.z_axis),
        );
        let f_div_minus_z = 1.0 / (self.outer_angle.tan() * -projected.z);
        let ndc = Vec2::new(projected.x, projected.y) * f_div_minus_z;
        let uv = ndc * Vec2::new(0.5, -0.5) + Vec2::splat(0.5);
        let depth = self.near_z / -projected.z;
        sample_2d(lookups, map, 0, uv, depth, SPOT_SHADOW_TEXEL_SIZE, filter)
    }

    /// Bevy's spot attenuation at `point`: `saturate(cos · scale + offset)²` with
    /// `scale = 1 / max(cos(inner) − cos(outer), 10⁻⁴)` and `offset = −cos(outer) · scale`.
    #[must_use]
    pub fn cone(&self, point: Vec3) -> f32 {
        spot_attenuation(
            self.axis(),
            self.position,
            self.inner_angle,
            self.outer_angle,
            point,
        )
    }
}

/// A point light with its biases.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbrPoint {
    /// Position.
    pub position: Vec3,
    /// `PointLight::range`.
    pub range: f32,
    /// `PointLight::shadow_map_near_z`.
    pub near_z: f32,
    /// `PointLight::shadow_depth_bias` (world units).
    pub depth_bias: f32,
    /// `PointLight::shadow_normal_bias` (texels at distance 1; the shader gets it × √2 × 2 /
    /// face size).
    pub normal_bias: f32,
    /// `PointLightShadowMap::size` (per face).
    pub resolution: u32,
}

/// Bevy's `CUBE_MAP_FACES`: where each face looks and its up vector, in D3D face order once the
/// lookup mirrors z.
const CUBE_FACES: [(Vec3, Vec3); 6] = [
    (Vec3::X, Vec3::Y),
    (Vec3::NEG_X, Vec3::Y),
    (Vec3::Y, Vec3::Z),
    (Vec3::NEG_Y, Vec3::NEG_Z),
    (Vec3::NEG_Z, Vec3::Y),
    (Vec3::Z, Vec3::Y),
];

impl PbrPoint {
    /// The penumbra light that renders Bevy's six cube faces (right-handed views along
    /// `CUBE_MAP_FACES`, sampled with z mirrored).
    #[must_use]
    pub fn light(&self, intensity: f32) -> Light {
        let mut light = pbr_light(
            LightKind::Point {
                position: self.position,
                range: self.range,
            },
            intensity,
            self.resolution,
            true,
        );
        let projection = perspective_infinite_reverse_rh(FRAC_PI_2, 1.0, self.near_z);
        light.views = CUBE_FACES
            .iter()
            .map(|&(target, up)| SliceView {
                view: glam::camera::rh::view::look_to_mat4(self.position, target, up),
                projection,
            })
            .collect();
        light.cube = CubeLookup::MirrorZ;
        light
    }

    fn factor(
        &self,
        lookups: &mut impl Lookups,
        map: &ShadowMap,
        point: Vec3,
        normal: Vec3,
        filter: PbrFilter,
    ) -> f32 {
        let Some(normal) = receiver(point, normal) else {
            return 1.0;
        };
        let normal_bias = self.normal_bias * (2.0 / self.resolution as f32) * SQRT_2;
        let surface_to_light = self.position - point;
        let distance_to_light = surface_to_light.abs().max_element();
        let normal_offset = normal_bias * distance_to_light * normal;
        let depth_offset = self.depth_bias * surface_to_light.normalize();
        let offset = point + normal_offset + depth_offset;
        let frag_ls = offset - self.position;
        let major = frag_ls.abs().max_element();
        // The projection's lower-right 2×2 (z_axis.zw, w_axis.zw) of the infinite reverse-Z
        // perspective: (0, −1, near, 0).
        let projection = perspective_infinite_reverse_rh(FRAC_PI_2, 1.0, self.near_z);
        let custom = Vec4::new(
            projection.z_axis.z,
            projection.z_axis.w,
            projection.w_axis.z,
            projection.w_axis.w,
        );
        let zw = -major * Vec2::new(custom.x, custom.y) + Vec2::new(custom.z, custom.w);
        let depth = zw.x / zw.y;
        let local = frag_ls * Vec3::new(1.0, 1.0, -1.0);
        sample_cube(lookups, map, local, distance_to_light, depth, filter)
    }

    /// Bevy's windowed inverse-square falloff at `point` (see [`point_attenuation`]).
    #[must_use]
    pub fn falloff(&self, point: Vec3) -> f32 {
        point_attenuation((point - self.position).length_squared(), self.range)
    }
}

/// `getDistanceAttenuation`: `saturate(1 − (d²/r²)²)² / max(d², 10⁻⁴)`.
#[must_use]
pub fn point_attenuation(distance_squared: f32, range: f32) -> f32 {
    let factor = distance_squared / (range * range);
    let smooth = (1.0 - factor * factor).clamp(0.0, 1.0);
    smooth * smooth / distance_squared.max(0.0001)
}

/// The spot cone's attenuation (see [`PbrSpot::cone`]); `axis` is the unit cone direction.
#[must_use]
pub fn spot_attenuation(axis: Vec3, position: Vec3, inner: f32, outer: f32, point: Vec3) -> f32 {
    let cos_outer = outer.cos();
    let scale = 1.0 / (inner.cos() - cos_outer).max(1e-4);
    let offset = -cos_outer * scale;
    let cd = (-axis).dot((position - point).normalize_or_zero());
    let a = (cd * scale + offset).clamp(0.0, 1.0);
    a * a
}

/// The two public entry points of a spot or a point light over its own `factor`: one receiver
/// at a time (`shadow_factor`), or many through the map's batched path (`shadow_factors`, the
/// same bits).
macro_rules! factor_entry_points {
    ($ty:ident, $zone:literal, $doc:literal) => {
        impl $ty {
            #[doc = $doc]
            #[must_use]
            pub fn shadow_factor(
                &self,
                map: &ShadowMap,
                point: Vec3,
                normal: Vec3,
                filter: PbrFilter,
            ) -> f32 {
                self.factor(&mut Now, map, point, normal, filter)
            }

            #[doc = concat!("[`", stringify!($ty), "::shadow_factor`] of many receivers (their ",
                "`view_z` unused), into `out`: the same bits, with every comparison through the ",
                "map's batched path in one go.\n\n# Panics\nIf `out` is shorter than `receivers`.")]
            pub fn shadow_factors(
                &self,
                map: &ShadowMap,
                receivers: &[PbrReceiver],
                filter: PbrFilter,
                out: &mut [f32],
            ) {
                crate::zone!($zone);
                let factors = Factors {
                    light: self,
                    map,
                    filter,
                };
                batched(map, receivers, &mut out[..receivers.len()], &factors);
            }
        }

        impl Factor<PbrReceiver> for Factors<'_, $ty> {
            fn factor(&self, lookups: &mut impl Lookups, r: &PbrReceiver) -> f32 {
                self.light.factor(lookups, self.map, r.point, r.normal, self.filter)
            }
        }
    };
}

factor_entry_points!(
    PbrSpot,
    "penumbra::PbrSpot::shadow_factors",
    "`fetch_spot_shadow`: the shadow factor at `point` with unit `normal` (1 at a non-finite \
     point; a non-finite normal gives no normal bias)."
);
factor_entry_points!(
    PbrPoint,
    "penumbra::PbrPoint::shadow_factors",
    "`fetch_point_shadow`: the shadow factor at `point` with unit `normal` (1 at a non-finite \
     point; a non-finite normal gives no normal bias). Lit is 1.000112 with `Gaussian`: the \
     weights bevy_pbr uses sum to that."
);

/// The receiver's normal, or `None` for a non-finite point (unshadowed, as every penumbra
/// query answers); a non-finite normal gives no normal bias.
fn receiver(point: Vec3, normal: Vec3) -> Option<Vec3> {
    point.is_finite().then(|| {
        if normal.is_finite() {
            normal
        } else {
            Vec3::ZERO
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orthonormalize_builds_a_right_handed_basis_around_z() {
        for z in [
            Vec3::X,
            Vec3::NEG_Y,
            Vec3::new(0.3, -0.5, 0.81).normalize(),
            Vec3::NEG_Z,
        ] {
            let m = orthonormalize(z);
            assert!((m.x_axis.cross(m.y_axis) - z).length() < 1e-5, "{z}");
            assert!(m.x_axis.dot(m.y_axis).abs() < 1e-6);
            assert!((m.x_axis.length() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn point_falloff_is_the_windowed_inverse_square() {
        // At a quarter of the range: (1 − 1/256)² / d².
        let a = point_attenuation(4.0, 8.0);
        assert!((a - (1.0f32 - 1.0 / 256.0).powi(2) / 4.0).abs() < 1e-7);
        assert_eq!(point_attenuation(64.0, 8.0), 0.0);
        assert_eq!(point_attenuation(100.0, 8.0), 0.0);
        // The 10⁻⁴ floor at the light.
        assert_eq!(point_attenuation(0.0, 8.0), 1.0 / 0.0001);
    }

    #[test]
    fn spot_cone_is_one_inside_the_core_and_zero_outside_the_cone() {
        let axis = Vec3::NEG_Y;
        let at = |deg: f32| {
            let d = Vec3::new(deg.to_radians().sin(), -deg.to_radians().cos(), 0.0);
            spot_attenuation(axis, Vec3::ZERO, 0.4, 0.6, d * 3.0)
        };
        assert_eq!(at(0.0), 1.0);
        assert_eq!(at(20.0), 1.0);
        assert_eq!(at(35.0), 0.0);
        let mid = at(28.6);
        assert!(mid > 0.0 && mid < 1.0, "{mid}");
    }

    /// The Castaño filter's nine taps are the shader's offsets bit for bit, and form the grid
    /// `ShadowMap::sort_grid` takes: three rows
    /// of the same three u, the same three v down each column, both growing, neighbours
    /// less than two texels apart (their 2×2 footprints meet) — for fractions from 0 to just
    /// under 1 and texel-grid bases over a 2048² map and off it.
    #[test]
    fn castano_taps_form_a_grid_whose_footprints_meet() {
        let mut rng = penumbra_testkit::Rng::xorshift64(0x6361_7374);
        for size in [32.0f32, 2048.0] {
            let inv = 1.0 / size;
            for round in 0..2000 {
                let fraction = |rng: &mut penumbra_testkit::Rng| match rng.below_mod(4) {
                    0 => 0.0,
                    1 => 1.0 - f32::EPSILON / 2.0,
                    _ => rng.f32_unit(),
                };
                let (s, t) = (fraction(&mut rng), fraction(&mut rng));
                let base = Vec2::new(
                    (rng.f32_in(-4.0, size + 4.0).floor() - 0.5) * inv,
                    (rng.f32_in(-4.0, size + 4.0).floor() - 0.5) * inv,
                );
                let (uw, vw) = (filters::castano_weights(s), filters::castano_weights(t));
                let taps = filters::castano_taps(base, inv, 1, [s, t], uw, vw);
                // The shader's offsets, one scalar division each: the same bits.
                let axis = |f: f32, w: [f32; 3]| {
                    [
                        (3.0 - 2.0 * f) / w[0] - 2.0,
                        (3.0 + f) / w[1],
                        f / w[2] + 2.0,
                    ]
                };
                let (u, v) = (axis(s, uw), axis(t, vw));
                for k in 0..9 {
                    let shader = base + Vec2::new(u[k % 3], v[k / 3]) * inv;
                    assert_eq!(
                        taps[k].truncate().to_array().map(f32::to_bits),
                        shader.to_array().map(f32::to_bits),
                        "round {round}: tap {k}"
                    );
                    let (i, j) = (k % 3, k / 3);
                    assert_eq!(taps[k].x, taps[i].x, "round {round}: column {i}");
                    assert_eq!(taps[k].y, taps[3 * j].y, "round {round}: row {j}");
                    if i > 0 {
                        let gap = (taps[k].x - taps[k - 1].x) * size;
                        assert!((0.0..2.0).contains(&gap), "round {round}: u gap {gap}");
                    }
                    if j > 0 {
                        let gap = (taps[k].y - taps[k - 3].y) * size;
                        assert!((0.0..2.0).contains(&gap), "round {round}: v gap {gap}");
                    }
                }
            }
        }
    }

    /// The batched factors' parts cover the receivers in order, largest first, with none
    /// empty and no more than the even split's eight per thread (plus a remainder).
    #[test]
    fn batched_parts_shrink_and_cover_every_receiver() {
        for threads in 1..6 {
            for n in (0..3000).chain([10_000, 65_537]) {
                let lens = filters::part_lengths(n, threads);
                assert_eq!(lens.iter().sum::<usize>(), n, "{n} on {threads}");
                assert!(lens.iter().all(|&l| l > 0), "{n} on {threads}: {lens:?}");
                assert!(
                    lens.is_sorted_by(|a, b| a >= b),
                    "{n} on {threads}: {lens:?}"
                );
                assert!(lens.len() <= 8 * threads + 1, "{n} on {threads}: {lens:?}");
            }
        }
        assert_eq!(
            filters::part_lengths(10_000, 2),
            [2500, 1875, 1406, 1054, 791, 625, 625, 625, 499]
        );
    }

    #[test]
    fn temporal_rotation_follows_the_shader_matrix() {
        // mat2x2(m.y, −m.x, m.x, m.y) has columns (cos, −sin) and (sin, cos).
        let r = rotate(FRAC_PI_2, [1.0, 0.0]);
        assert!((r - Vec2::new(0.0, -1.0)).length() < 1e-6, "{r}");
        let noise = interleaved_gradient_noise(Vec2::new(10.5, 3.5), 7);
        assert!((0.0..1.0).contains(&noise));
    }
}
