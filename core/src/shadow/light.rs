//! Lights: kinds, falloff, shadow-map settings, and rendering their shadow maps.

use glam::camera::lh::{proj::directx as proj, view};
use glam::{Mat4, Vec3};

use super::map::{MapLayout, PcfKernel, ShadowError, ShadowMap};
use super::{Aabb, Scene};
use crate::desc::{AddressMode, ComparisonFunc, Filter, StaticBorderColor, StaticSamplerDesc};
use crate::format::Format;
use crate::raster::{CullMode, DepthBias, DepthTarget, RasterState};

/// What kind of light, and where.
#[derive(Clone, Debug, PartialEq)]
pub enum LightKind {
    /// A light infinitely far away shining along `direction` (the sun). Its shadow map is an
    /// orthographic projection fitted to `bounds` (or to the scene's bounds when `None`).
    Directional {
        /// Direction the light travels (need not be normalized).
        direction: Vec3,
        /// The box the map covers; `None` fits the scene.
        bounds: Option<Aabb>,
    },
    /// Cascaded directional light: one orthographic map per cascade, stored as a Texture2DArray;
    /// cascade `i` covers a sphere of `radii[i]` around `center` (typically the camera or
    /// player), nearest first.
    Cascaded {
        /// Direction the light travels.
        direction: Vec3,
        /// Centre of the cascades.
        center: Vec3,
        /// Radius of each cascade, increasing.
        radii: Vec<f32>,
    },
    /// A spot light: a perspective map with the cone as its field of view.
    Spot {
        /// Position.
        position: Vec3,
        /// Direction of the cone's axis.
        direction: Vec3,
        /// Half-angle of the cone, radians (full intensity inside `inner_angle`).
        outer_angle: f32,
        /// Half-angle of the full-intensity core, radians.
        inner_angle: f32,
        /// Distance where the light fades to zero and the map's far plane.
        range: f32,
    },
    /// A point light: a cube shadow map of six 90° faces, sampled as a TextureCube.
    Point {
        /// Position.
        position: Vec3,
        /// Distance where the light fades to zero and the map's far plane.
        range: f32,
    },
}

/// Bias settings against shadow acne.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowBias {
    /// D3D12 rasterizer depth bias (DepthBias, SlopeScaledDepthBias, DepthBiasClamp) used when
    /// rendering the map.
    pub raster: DepthBias,
    /// Moves the receiver this far towards the light before comparing, in world units (a
    /// receiver-plane bias that means the same distance in orthographic and perspective maps).
    pub receiver: f32,
    /// Moves the receiver along its normal by this many shadow-map texels (normal-offset bias).
    pub normal_offset: f32,
}

impl Default for ShadowBias {
    fn default() -> Self {
        ShadowBias {
            raster: DepthBias {
                depth_bias: 0,
                slope_scaled_depth_bias: 1.0,
                depth_bias_clamp: 0.0,
            },
            receiver: 0.02,
            normal_offset: 1.5,
        }
    }
}

/// A light with its shadow-map settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Light {
    /// Kind and placement.
    pub kind: LightKind,
    /// Intensity (at distance 1 for spot and point lights).
    pub intensity: f32,
    /// Shadow-map size in texels (per face for point lights).
    pub resolution: u32,
    /// Depth format of the map: `D32Float` (default) or `D16Unorm`.
    pub format: Format,
    /// Bias settings.
    pub bias: ShadowBias,
    /// The static sampler the map is sampled with (R16-style description).
    pub sampler: StaticSamplerDesc,
    /// Default PCF kernel for queries.
    pub kernel: PcfKernel,
}

/// The sampler engines use for shadow maps: `COMPARISON_MIN_MAG_LINEAR_MIP_POINT`, `BORDER`
/// addressing with `OPAQUE_WHITE` (outside the map is lit), `LESS_EQUAL`.
#[must_use]
pub fn default_shadow_sampler() -> StaticSamplerDesc {
    StaticSamplerDesc {
        filter: Filter::ComparisonMinMagLinearMipPoint,
        address_u: AddressMode::Border,
        address_v: AddressMode::Border,
        address_w: AddressMode::Border,
        comparison_func: ComparisonFunc::LessEqual,
        border_color: StaticBorderColor::OpaqueWhite,
        max_anisotropy: 1,
        ..StaticSamplerDesc::default()
    }
}

fn any_perpendicular(d: Vec3) -> Vec3 {
    if d.x.abs() < 0.9 {
        Vec3::X.cross(d).normalize()
    } else {
        Vec3::Y.cross(d).normalize()
    }
}

/// A left-handed view matrix looking along `forward` with the given `up` hint.
pub(crate) fn look_to_lh(eye: Vec3, forward: Vec3, up_hint: Vec3) -> Mat4 {
    let f = forward.normalize();
    let up = if up_hint.cross(f).length_squared() < 1e-12 {
        any_perpendicular(f)
    } else {
        up_hint
    };
    view::look_to_mat4(eye, f, up)
}

impl Light {
    fn new(kind: LightKind, intensity: f32, resolution: u32) -> Light {
        Light {
            kind,
            intensity,
            resolution,
            format: Format::D32Float,
            bias: ShadowBias::default(),
            sampler: default_shadow_sampler(),
            kernel: PcfKernel::Hardware2x2,
        }
    }

    /// A directional light (the sun) whose map fits the scene.
    #[must_use]
    pub fn directional(direction: Vec3, intensity: f32) -> Light {
        Light::new(
            LightKind::Directional {
                direction,
                bounds: None,
            },
            intensity,
            2048,
        )
    }

    /// A spot light; `angle` is the cone's half-angle in radians.
    #[must_use]
    pub fn spot(position: Vec3, direction: Vec3, angle: f32, range: f32, intensity: f32) -> Light {
        Light::new(
            LightKind::Spot {
                position,
                direction,
                outer_angle: angle,
                inner_angle: angle * 0.8,
                range,
            },
            intensity,
            1024,
        )
    }

    /// A point light with a cube shadow map.
    #[must_use]
    pub fn point(position: Vec3, range: f32, intensity: f32) -> Light {
        Light::new(LightKind::Point { position, range }, intensity, 512)
    }

    /// A cascaded directional light.
    #[must_use]
    pub fn cascaded(direction: Vec3, center: Vec3, radii: Vec<f32>, intensity: f32) -> Light {
        Light::new(
            LightKind::Cascaded {
                direction,
                center,
                radii,
            },
            intensity,
            1024,
        )
    }

    /// The same light with another map resolution.
    #[must_use]
    pub fn with_resolution(mut self, resolution: u32) -> Light {
        self.resolution = resolution;
        self
    }

    /// The same light with another depth format.
    #[must_use]
    pub fn with_format(mut self, format: Format) -> Light {
        self.format = format;
        self
    }

    /// The same light with another bias.
    #[must_use]
    pub fn with_bias(mut self, bias: ShadowBias) -> Light {
        self.bias = bias;
        self
    }

    /// The same light with another sampler.
    #[must_use]
    pub fn with_sampler(mut self, sampler: StaticSamplerDesc) -> Light {
        self.sampler = sampler;
        self
    }

    /// The same light with another default PCF kernel.
    #[must_use]
    pub fn with_kernel(mut self, kernel: PcfKernel) -> Light {
        self.kernel = kernel;
        self
    }

    /// The unit vector from `point` towards the light.
    #[must_use]
    pub fn towards_light(&self, point: Vec3) -> Vec3 {
        match &self.kind {
            LightKind::Directional { direction, .. } | LightKind::Cascaded { direction, .. } => {
                -direction.normalize_or_zero()
            }
            LightKind::Spot { position, .. } | LightKind::Point { position, .. } => {
                (*position - point).normalize_or_zero()
            }
        }
    }

    /// Light arriving at `point` ignoring shadows: intensity × distance falloff × spot cone.
    /// The falloff is inverse-square (distance clamped to ≥ 0.1) times a smooth window that
    /// reaches 0 at `range`; the cone is a smoothstep from the outer to the inner angle.
    #[must_use]
    pub fn unshadowed(&self, point: Vec3) -> f32 {
        let falloff = |d: f32, range: f32| {
            let x = (d / range).powi(4);
            let window = (1.0 - x).clamp(0.0, 1.0);
            window * window / d.max(0.1).powi(2)
        };
        match &self.kind {
            LightKind::Directional { .. } | LightKind::Cascaded { .. } => self.intensity,
            LightKind::Point { position, range } => {
                self.intensity * falloff(point.distance(*position), *range)
            }
            LightKind::Spot {
                position,
                direction,
                outer_angle,
                inner_angle,
                range,
            } => {
                let to = point - *position;
                let d = to.length();
                if d == 0.0 || !d.is_finite() {
                    return 0.0;
                }
                let cos = to.dot(direction.normalize()) / d;
                let (co, ci) = (outer_angle.cos(), inner_angle.min(*outer_angle).cos());
                let t = if ci > co {
                    ((cos - co) / (ci - co)).clamp(0.0, 1.0)
                } else if cos >= co {
                    1.0
                } else {
                    0.0
                };
                let cone = t * t * (3.0 - 2.0 * t);
                self.intensity * falloff(d, *range) * cone
            }
        }
    }

    fn check(&self) -> Result<(), ShadowError> {
        if !(1..=crate::texture::limits::MAX_EDGE_2D).contains(&self.resolution) {
            return Err(ShadowError::Resolution(self.resolution));
        }
        if !matches!(self.format, Format::D32Float | Format::D16Unorm) {
            return Err(ShadowError::Format(self.format));
        }
        let finite = |v: Vec3| v.is_finite();
        let ok = match &self.kind {
            LightKind::Directional { direction, .. } => {
                finite(*direction) && direction.length_squared() > 0.0
            }
            LightKind::Cascaded {
                direction,
                center,
                radii,
            } => {
                finite(*direction)
                    && direction.length_squared() > 0.0
                    && finite(*center)
                    && !radii.is_empty()
                    && radii.iter().all(|r| r.is_finite() && *r > 0.0)
                    && radii.len() <= 2048
            }
            LightKind::Spot {
                position,
                direction,
                outer_angle,
                range,
                ..
            } => {
                finite(*position)
                    && finite(*direction)
                    && direction.length_squared() > 0.0
                    && *outer_angle > 0.0
                    && *outer_angle < 1.55
                    && range.is_finite()
                    && *range > 0.0
            }
            LightKind::Point { position, range } => {
                finite(*position) && range.is_finite() && *range > 0.0
            }
        };
        if ok {
            Ok(())
        } else {
            Err(ShadowError::Light(format!("{:?}", self.kind)))
        }
    }

    /// The view-projection matrices of the map (one per slice) and its layout.
    fn projections(&self, scene: &Scene) -> Result<(Vec<Mat4>, MapLayout), ShadowError> {
        let ortho_fit = |direction: Vec3, bounds: Aabb| -> Mat4 {
            let center = bounds.center();
            let view = look_to_lh(center, direction, Vec3::Y);
            let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for c in bounds.corners() {
                let p = view.transform_point3(c);
                lo = lo.min(p);
                hi = hi.max(p);
            }
            // A little margin so geometry on the box faces is inside, not on the clip planes.
            let pad = (hi - lo).max_element().max(1e-3) * 0.01;
            proj::orthographic(
                lo.x - pad,
                hi.x + pad,
                lo.y - pad,
                hi.y + pad,
                lo.z - pad,
                hi.z + pad,
            ) * view
        };
        Ok(match &self.kind {
            LightKind::Directional { direction, bounds } => {
                let b = bounds.unwrap_or_else(|| scene.bounds());
                if b.is_empty() {
                    return Err(ShadowError::EmptyScene);
                }
                (vec![ortho_fit(*direction, b)], MapLayout::Single)
            }
            LightKind::Cascaded {
                direction,
                center,
                radii,
            } => {
                let mats = radii
                    .iter()
                    .map(|&r| {
                        // Depth covers the whole scene along the light so distant casters still cast.
                        let mut b = Aabb {
                            min: *center - Vec3::splat(r),
                            max: *center + Vec3::splat(r),
                        };
                        let sb = scene.bounds();
                        if !sb.is_empty() {
                            b.include(sb.min.max(b.min - Vec3::splat(4.0 * r)));
                            b.include(sb.max.min(b.max + Vec3::splat(4.0 * r)));
                        }
                        let view = look_to_lh(*center, *direction, Vec3::Y);
                        let (mut zlo, mut zhi) = (f32::INFINITY, f32::NEG_INFINITY);
                        for c in b.corners() {
                            let z = view.transform_point3(c).z;
                            zlo = zlo.min(z);
                            zhi = zhi.max(z);
                        }
                        proj::orthographic(-r, r, -r, r, zlo - 0.01, zhi + 0.01) * view
                    })
                    .collect();
                (
                    mats,
                    MapLayout::Cascades {
                        radii: radii.clone(),
                    },
                )
            }
            LightKind::Spot {
                position,
                direction,
                outer_angle,
                range,
                ..
            } => {
                let near = (range * 1e-3).max(1e-3);
                let view = look_to_lh(*position, *direction, Vec3::Y);
                (
                    vec![proj::perspective(2.0 * outer_angle, 1.0, near, *range) * view],
                    MapLayout::Single,
                )
            }
            LightKind::Point { position, range } => {
                let near = (range * 1e-3).max(1e-3);
                let proj = proj::perspective(std::f32::consts::FRAC_PI_2, 1.0, near, *range);
                // R99: face k's texel (x, y) maps to s = right, t = −up; so right = +sc, up = −tc.
                let faces: [(Vec3, Vec3); 6] = [
                    (Vec3::X, Vec3::Y),
                    (Vec3::NEG_X, Vec3::Y),
                    (Vec3::Y, Vec3::NEG_Z),
                    (Vec3::NEG_Y, Vec3::Z),
                    (Vec3::Z, Vec3::Y),
                    (Vec3::NEG_Z, Vec3::Y),
                ];
                let mats = faces
                    .iter()
                    .map(|&(f, up)| proj * view::look_to_mat4(*position, f, up))
                    .collect();
                (
                    mats,
                    MapLayout::Cube {
                        position: *position,
                    },
                )
            }
        })
    }

    /// Renders the light's shadow map from the scene's occluders.
    pub fn render(&self, scene: &Scene) -> Result<ShadowMap, ShadowError> {
        crate::zone!("penumbra::shadow::render");
        self.check()?;
        let (mats, layout) = self.projections(scene)?;
        let state = RasterState {
            cull: CullMode::None,
            depth_bias: self.bias.raster,
            ..RasterState::default()
        };
        let instances = scene.instances();
        let threads = scene.thread_count();
        let n = self.resolution;
        let mut faces = Vec::with_capacity(mats.len());
        for vp in &mats {
            // A face's target is cleared before anything is drawn: a cube of 4096² faces
            // clears 400 MB, so the deadline is checked before each one too.
            if crate::deadline::expired() {
                return Err(ShadowError::Interrupted);
            }
            let mut target = DepthTarget::new(n, n, self.format)
                .map_err(|e| ShadowError::Raster(e.to_string()))?;
            let _stats = crate::raster::rasterize(&mut target, *vp, &instances, &state, threads);
            crate::plot!("penumbra triangles rasterized", _stats.triangles_drawn);
            if crate::deadline::expired() {
                return Err(ShadowError::Interrupted);
            }
            faces.push(target);
        }
        ShadowMap::from_targets(self, faces, mats, layout)
    }
}
