//! Line of sight: a depth map rendered at an eye, sampled with `sample_c_lz` — the same machine
//! as a shadow map, with the eye as the light.

use glam::Vec3;

use super::light::Light;
use super::map::ShadowMap;
use super::{Scene, ShadowError};

/// An eye that looks at the level: a guard, a camera, a turret.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewer {
    /// Eye position.
    pub position: Vec3,
    /// Look direction.
    pub direction: Vec3,
    /// Full field of view in radians; [`Viewer::ALL_AROUND`] (177.6°, twice the widest spot
    /// cone) or more renders a cube map and
    /// sees all around.
    pub fov: f32,
    /// How far the eye sees.
    pub range: f32,
    /// Depth-map size in texels (per face for 360° eyes).
    pub resolution: u32,
}

impl Viewer {
    /// An eye with a field of view (radians), range and a 512² depth map.
    #[must_use]
    pub fn new(position: Vec3, direction: Vec3, fov: f32, range: f32) -> Viewer {
        Viewer {
            position,
            direction,
            fov,
            range,
            resolution: 512,
        }
    }

    /// The field of view from which an eye sees all around (a cube map): 177.6°, just inside
    /// twice the widest spot-light cone (2 × 1.55 rad ≈ 177.62°).
    pub const ALL_AROUND: f32 = 177.6 * std::f32::consts::PI / 180.0;

    /// True when the eye sees all around (its field of view is [`Viewer::ALL_AROUND`] or more).
    #[must_use]
    pub fn all_around(&self) -> bool {
        self.fov >= Self::ALL_AROUND
    }

    /// The light an eye's depth map is rendered as: a spot light with the eye's field of
    /// view, or a point light for 360° eyes; 2×2 kernel, no normal offset, 0.01 receiver bias.
    #[must_use]
    pub fn as_light(&self) -> Light {
        let light = if self.all_around() {
            Light::point(self.position, self.range, 1.0)
        } else {
            Light::spot(
                self.position,
                self.direction,
                0.5 * self.fov,
                self.range,
                1.0,
            )
        };
        let mut light = light.with_resolution(self.resolution);
        // The target is usually in open air: no normal offset; a small receiver bias keeps a
        // target lying on a surface visible.
        light.bias.normal_offset = 0.0;
        light.bias.receiver = 0.01;
        light
    }

    /// Bytes of the eye's depth map.
    #[must_use]
    pub fn map_bytes(&self) -> u64 {
        self.as_light().map_bytes()
    }

    /// Renders the eye's depth map.
    ///
    /// # Errors
    /// As [`ShadowMap::render`].
    pub fn render(&self, scene: &Scene) -> Result<EyeMap, ShadowError> {
        crate::zone!("penumbra::shadow::render_eye");
        Ok(EyeMap {
            viewer: *self,
            map: ShadowMap::render(self.as_light(), scene)?,
        })
    }

    /// True when `target` is inside the eye's range and field of view (ignoring occluders).
    #[must_use]
    pub fn in_view(&self, target: Vec3) -> bool {
        let to = target - self.position;
        let d = to.length();
        if !to.is_finite() || d.is_nan() || d > self.range {
            return false;
        }
        if self.all_around() || d == 0.0 {
            return true;
        }
        to.dot(self.direction.normalize()) / d >= (0.5 * self.fov).cos()
    }
}

/// A rendered eye depth map.
#[derive(Clone, Debug)]
pub struct EyeMap {
    viewer: Viewer,
    map: ShadowMap,
}

impl EyeMap {
    /// The viewer.
    #[must_use]
    pub fn viewer(&self) -> &Viewer {
        &self.viewer
    }

    /// The depth map (a 2D map, or a cube for 360° eyes).
    #[must_use]
    pub fn map(&self) -> &ShadowMap {
        &self.map
    }

    /// The fraction of probe points of a target of radius `radius` around `target` that the eye
    /// sees (five probes: the centre and four points on the disc facing the eye). 0 outside the
    /// field of view or range.
    #[must_use]
    pub fn visible_fraction(&self, target: Vec3, radius: f32) -> f32 {
        crate::zone!("penumbra::shadow::visible_fraction");
        let to = target - self.viewer.position;
        let forward = if to.length_squared() > 0.0 {
            to.normalize()
        } else {
            Vec3::Z
        };
        let side = if forward.cross(Vec3::Y).length_squared() > 1e-6 {
            forward.cross(Vec3::Y).normalize()
        } else {
            Vec3::X
        };
        let up = side.cross(forward);
        let r = radius.max(0.0);
        let probes = [
            target,
            target + side * r,
            target - side * r,
            target + up * r,
            target - up * r,
        ];
        let seen: f32 = probes
            .iter()
            .map(|&p| {
                if self.viewer.in_view(p) {
                    self.map.lit_fraction(p, None)
                } else {
                    0.0
                }
            })
            .sum();
        seen / probes.len() as f32
    }

    /// True when the eye sees at least half of a point-sized target.
    #[must_use]
    pub fn can_see(&self, target: Vec3) -> bool {
        self.visible_fraction(target, 0.0) >= 0.5
    }
}
