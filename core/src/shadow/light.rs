//! Lights: kinds, falloff, and the conventions of their shadow maps (depth direction, the
//! comparison sampler, receiver biases, rasterizer state, PCF kernel, optional caller-supplied
//! views) — all data, read by [`ShadowMap::render`](super::ShadowMap::render).

use glam::camera::lh::view;
use glam::{Mat4, Vec3};

use super::Aabb;
use super::kernel::PcfKernel;
use crate::desc::{AddressMode, ComparisonFunc, Filter, StaticBorderColor, StaticSamplerDesc};
use crate::format::Format;
use crate::raster::{CullMode, DepthBias, DepthFunc, RasterState};

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

/// Bias settings against shadow acne: the rasterizer's depth bias when the map is rendered,
/// and the receiver biases of the query, as the parameters of one formula:
///
/// * **depth bias**: the receiver moves `receiver` world units along the unit direction to the
///   light (the same distance in orthographic and perspective maps);
/// * **normal offset**: the receiver moves `normal_offset` along its unit surface normal, in
///   world units or in shadow-map texels ([`OffsetUnits`]; texels measured at the receiver's
///   view depth for perspective maps);
/// * in the [`BiasOrder`] given (the direction to a spot or point light is taken from the
///   point as it is at that step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowBias {
    /// D3D12 rasterizer depth bias (DepthBias, SlopeScaledDepthBias, DepthBiasClamp) used when
    /// rendering the map.
    pub raster: DepthBias,
    /// Moves the receiver this far towards the light before comparing, in world units.
    pub receiver: f32,
    /// Moves the receiver along its normal by this much (normal-offset bias).
    pub normal_offset: f32,
    /// The unit of `normal_offset`.
    pub normal_units: OffsetUnits,
    /// Which receiver bias comes first.
    pub order: BiasOrder,
}

/// The unit of a normal-offset bias.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OffsetUnits {
    /// Shadow-map texels of the receiver's slice (penumbra's default).
    #[default]
    Texels,
    /// World units.
    World,
}

/// The order of the two receiver biases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BiasOrder {
    /// Normal offset, then the depth bias towards the light (penumbra's default).
    #[default]
    NormalFirst,
    /// The depth bias towards the light, then the normal offset.
    DepthFirst,
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
            normal_units: OffsetUnits::Texels,
            order: BiasOrder::NormalFirst,
        }
    }
}

/// Which way depth runs in a map.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DepthConvention {
    /// Near is 0, far is 1: the target is cleared to 1, drawn with LESS, and sampled with
    /// LESS_EQUAL (penumbra's and D3D12 samples' default).
    #[default]
    Forward,
    /// Near is 1, far is 0: cleared to 0, drawn with GREATER, sampled with GREATER_EQUAL; spot
    /// and point lights get an infinite reverse-Z perspective (no far plane), directional
    /// lights a reversed orthographic one. Bevy and most current engines render this way.
    Reverse,
}

impl DepthConvention {
    /// The value the map is cleared to (its "nothing there" depth).
    #[must_use]
    pub fn clear_depth(self) -> f32 {
        match self {
            DepthConvention::Forward => 1.0,
            DepthConvention::Reverse => 0.0,
        }
    }

    /// The rasterizer's depth test.
    #[must_use]
    pub fn depth_func(self) -> DepthFunc {
        match self {
            DepthConvention::Forward => DepthFunc::Less,
            DepthConvention::Reverse => DepthFunc::Greater,
        }
    }

    /// The comparison the sampler makes (`reference OP texel`, R17): lit when the receiver is
    /// at least as near as the occluder.
    #[must_use]
    pub fn comparison(self) -> ComparisonFunc {
        match self {
            DepthConvention::Forward => ComparisonFunc::LessEqual,
            DepthConvention::Reverse => ComparisonFunc::GreaterEqual,
        }
    }

    /// The border colour that reads as "unshadowed" (white for forward depth, black for
    /// reverse).
    #[must_use]
    pub fn unshadowed_border(self) -> StaticBorderColor {
        match self {
            DepthConvention::Forward => StaticBorderColor::OpaqueWhite,
            DepthConvention::Reverse => StaticBorderColor::OpaqueBlack,
        }
    }
}

/// The rasterizer state a map is rendered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RasterConvention {
    /// Which faces are culled (penumbra: none, so open meshes cast from both sides).
    pub cull: CullMode,
    /// Front faces are counter-clockwise on screen (D3D12's `FrontCounterClockwise`).
    pub front_counter_clockwise: bool,
    /// Clip against the near and far planes; off, geometry beyond them is clamped to them
    /// ("pancaking", as directional shadow passes often do).
    pub depth_clip: bool,
}

impl Default for RasterConvention {
    fn default() -> Self {
        RasterConvention {
            cull: CullMode::None,
            front_counter_clockwise: false,
            depth_clip: true,
        }
    }
}

/// How a cube map's faces are addressed by a light-to-point vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CubeLookup {
    /// D3D's: the vector itself selects the face (SPEC R98, R99; penumbra's default). Caller
    /// views must look along the D3D axes with the D3D face orientation.
    #[default]
    Direct,
    /// Bevy's: faces rendered by right-handed views (+X, −X, +Y, −Y, −Z, +Z), sampled at the
    /// vector with z negated (a left-handed cube in a right-handed world).
    MirrorZ,
}

impl CubeLookup {
    /// The cube-map direction of a light-to-point vector.
    #[must_use]
    #[inline(always)]
    pub fn direction(self, d: Vec3) -> Vec3 {
        match self {
            CubeLookup::Direct => d,
            CubeLookup::MirrorZ => Vec3::new(d.x, d.y, -d.z),
        }
    }
}

/// A caller-supplied view and projection of one slice of a map (a cascade, a cube face).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SliceView {
    /// World to view space.
    pub view: Mat4,
    /// View to clip space (D3D clip: depth in [0, w]).
    pub projection: Mat4,
}

impl SliceView {
    /// `projection × view`.
    #[must_use]
    pub fn view_proj(&self) -> Mat4 {
        self.projection * self.view
    }

    /// True when the projection divides by depth (its last row is not (0, 0, 0, 1)).
    #[must_use]
    pub fn is_perspective(&self) -> bool {
        self.projection.row(3) != glam::Vec4::W
    }
}

/// A light with its shadow-map settings: what it is, and the conventions its map follows.
#[derive(Clone, Debug, PartialEq)]
pub struct Light {
    /// Kind and placement.
    pub kind: LightKind,
    /// Intensity (at distance 1 for spot and point lights), finite and ≥ 0.
    pub intensity: f32,
    /// Shadow-map size in texels (per face for point lights).
    pub resolution: u32,
    /// Depth format of the map: `D32Float` (default) or `D16Unorm`.
    pub format: Format,
    /// Which way depth runs (forward by default).
    pub depth: DepthConvention,
    /// Rasterizer depth bias and receiver biases.
    pub bias: ShadowBias,
    /// Cull mode, winding and depth clip of the shadow pass.
    pub raster: RasterConvention,
    /// The static sampler the map is sampled with (R16-style description); its comparison
    /// function should be the depth convention's ([`DepthConvention::comparison`]).
    pub sampler: StaticSamplerDesc,
    /// The PCF kernel of queries.
    pub kernel: PcfKernel,
    /// Caller-supplied view and projection per slice (one for directional and spot lights,
    /// one per cascade, six cube faces in D3D order +X, −X, +Y, −Y, +Z, −Z for point lights);
    /// empty to let penumbra fit them.
    pub views: Vec<SliceView>,
    /// How point lights' cube maps are addressed (D3D's by default).
    pub cube: CubeLookup,
}

/// The sampler engines use for shadow maps: `COMPARISON_MIN_MAG_LINEAR_MIP_POINT`, `BORDER`
/// addressing with `OPAQUE_WHITE` (outside the map is lit), `LESS_EQUAL`.
#[must_use]
pub fn default_shadow_sampler() -> StaticSamplerDesc {
    shadow_sampler(DepthConvention::Forward, AddressMode::Border)
}

/// A comparison sampler for maps of `depth`: bilinear PCF, `address` on u, v and w (`Border`
/// with the border that reads as unshadowed, or `Clamp` as Bevy samples its maps), and the
/// depth convention's comparison.
#[must_use]
pub fn shadow_sampler(depth: DepthConvention, address: AddressMode) -> StaticSamplerDesc {
    StaticSamplerDesc {
        filter: Filter::ComparisonMinMagLinearMipPoint,
        address_u: address,
        address_v: address,
        address_w: address,
        comparison_func: depth.comparison(),
        border_color: depth.unshadowed_border(),
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
            depth: DepthConvention::Forward,
            bias: ShadowBias::default(),
            raster: RasterConvention::default(),
            sampler: default_shadow_sampler(),
            kernel: PcfKernel::HARDWARE_2X2,
            views: Vec::new(),
            cube: CubeLookup::Direct,
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

    /// The same light with another PCF kernel.
    #[must_use]
    pub fn with_kernel(mut self, kernel: PcfKernel) -> Light {
        self.kernel = kernel;
        self
    }

    /// The same light with maps of another depth convention; the sampler's comparison and
    /// border follow it (its address modes stay), and so does the sign of the rasterizer's depth
    /// bias (D3D adds it to the stored depth, so it pushes casters away from the light only
    /// when it points the way depth grows: positive forward, negative reversed).
    #[must_use]
    pub fn with_depth(mut self, depth: DepthConvention) -> Light {
        if depth != self.depth {
            let r = &mut self.bias.raster;
            r.depth_bias = r.depth_bias.saturating_neg();
            r.slope_scaled_depth_bias = -r.slope_scaled_depth_bias;
            r.depth_bias_clamp = -r.depth_bias_clamp;
        }
        self.depth = depth;
        self.sampler.comparison_func = depth.comparison();
        self.sampler.border_color = depth.unshadowed_border();
        self
    }

    /// The same light with another shadow-pass rasterizer state.
    #[must_use]
    pub fn with_raster(mut self, raster: RasterConvention) -> Light {
        self.raster = raster;
        self
    }

    /// The same light rendered through caller-supplied views (see [`Light::views`]).
    #[must_use]
    pub fn with_views(mut self, views: Vec<SliceView>) -> Light {
        self.views = views;
        self
    }

    /// Slices of the map: 6 for point lights, one per cascade, else 1.
    #[must_use]
    pub fn slices(&self) -> usize {
        match &self.kind {
            LightKind::Point { .. } => 6,
            LightKind::Cascaded { radii, .. } => radii.len(),
            _ => 1,
        }
    }

    /// Bytes of the rendered map.
    #[must_use]
    pub fn map_bytes(&self) -> u64 {
        let n = u64::from(self.resolution);
        n * n * self.format.bytes_per_texel() as u64 * self.slices() as u64
    }

    /// The rasterizer state of the shadow pass.
    #[must_use]
    pub fn raster_state(&self) -> RasterState {
        RasterState {
            cull: self.raster.cull,
            front_counter_clockwise: self.raster.front_counter_clockwise,
            depth_bias: self.bias.raster,
            depth_clip: self.raster.depth_clip,
            depth_func: self.depth.depth_func(),
        }
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
    /// reaches 0 at `range`; the cone is a smoothstep from the outer to the inner angle, 0
    /// behind a spot light. 0 at points that are not finite.
    #[must_use]
    pub fn unshadowed(&self, point: Vec3) -> f32 {
        self.falloff().at(point)
    }

    /// [`Light::unshadowed`] with what does not depend on the point worked out once (the
    /// cone's cosines, the unit direction), for many points: the same bits.
    #[must_use]
    pub fn falloff(&self) -> Falloff {
        let kind = match &self.kind {
            LightKind::Directional { .. } | LightKind::Cascaded { .. } => FalloffKind::Constant,
            LightKind::Point { position, range } => FalloffKind::Point {
                position: *position,
                range: *range,
            },
            LightKind::Spot {
                position,
                direction,
                outer_angle,
                inner_angle,
                range,
            } => FalloffKind::Spot {
                position: *position,
                direction: direction.normalize(),
                cos_outer: outer_angle.cos(),
                cos_inner: inner_angle.min(*outer_angle).cos(),
                range: *range,
            },
        };
        Falloff {
            intensity: self.intensity,
            kind,
        }
    }
}

/// A light's unshadowed light as a function of the point ([`Light::falloff`]).
#[derive(Clone, Copy, Debug)]
pub struct Falloff {
    intensity: f32,
    kind: FalloffKind,
}

#[derive(Clone, Copy, Debug)]
enum FalloffKind {
    Constant,
    Point {
        position: Vec3,
        range: f32,
    },
    Spot {
        position: Vec3,
        direction: Vec3,
        cos_outer: f32,
        cos_inner: f32,
        range: f32,
    },
}

impl Falloff {
    /// The light's unshadowed light at `point` ([`Light::unshadowed`]).
    #[must_use]
    #[inline]
    pub fn at(&self, point: Vec3) -> f32 {
        if !point.is_finite() {
            return 0.0;
        }
        let falloff = |d: f32, range: f32| {
            let x = (d / range).powi(4);
            let window = (1.0 - x).clamp(0.0, 1.0);
            window * window / d.max(0.1).powi(2)
        };
        match self.kind {
            FalloffKind::Constant => self.intensity,
            FalloffKind::Point { position, range } => {
                self.intensity * falloff(point.distance(position), range)
            }
            FalloffKind::Spot {
                position,
                direction,
                cos_outer: co,
                cos_inner: ci,
                range,
            } => {
                let to = point - position;
                let d = to.length();
                if d == 0.0 || !d.is_finite() {
                    return 0.0;
                }
                let cos = to.dot(direction) / d;
                let t = if ci > co {
                    ((cos - co) / (ci - co)).clamp(0.0, 1.0)
                } else if cos >= co {
                    1.0
                } else {
                    0.0
                };
                let cone = t * t * (3.0 - 2.0 * t);
                self.intensity * falloff(d, range) * cone
            }
        }
    }
}
