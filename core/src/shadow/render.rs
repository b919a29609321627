//! Rendering a light's shadow map: validating the light, fitting (or taking) its view and
//! projection matrices, and rasterizing the occluders with the light's conventions.

use glam::camera::lh::{proj::directx as proj, view};
use std::sync::Arc;

use glam::{Mat4, Vec3};

use super::kernel::Anchor;
use super::light::{DepthConvention, Light, LightKind, SliceView, look_to_lh};
use super::map::{MapLayout, ShadowMap};
use super::tiles::{SceneIndex, TileCounters, Tiled};
use super::{Aabb, Scene, ShadowError};
use crate::format::Format;
use crate::raster::DepthTarget;

impl Light {
    pub(crate) fn check(&self) -> Result<(), ShadowError> {
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
        if !(ok && self.intensity.is_finite() && self.intensity >= 0.0) {
            return Err(ShadowError::Light(format!(
                "{:?}, intensity {}",
                self.kind, self.intensity
            )));
        }
        if matches!(self.kind, LightKind::Point { .. }) && self.kernel.anchor() == Anchor::TexelGrid
        {
            return Err(ShadowError::Kernel(format!(
                "{} places its taps on the texel grid, which cube maps (point lights) do not \
                 support; use 2x2, 3x3 or 5x5",
                self.kernel.name()
            )));
        }
        self.check_views()
    }

    /// Caller-supplied views: the right count, finite, and for cube faces the D3D face
    /// orientation (R99), which the cube sampler reads them with.
    fn check_views(&self) -> Result<(), ShadowError> {
        if self.views.is_empty() {
            return Ok(());
        }
        if self.views.len() != self.slices() {
            return Err(ShadowError::Views(format!(
                "{} views given, the light has {} slices",
                self.views.len(),
                self.slices()
            )));
        }
        for (i, v) in self.views.iter().enumerate() {
            if !v.view_proj().is_finite() {
                return Err(ShadowError::Views(format!("view {} is not finite", i + 1)));
            }
        }
        if let LightKind::Point { position, range } = self.kind {
            for (face, v) in self.views.iter().enumerate() {
                let vp = v.view_proj().to_cols_array();
                let (right, up) = crate::sample::cube_face_axes(face as u32);
                let major = right.cross(up);
                // A direction of the cube's lookup space, placed in the world.
                let cube = self.cube;
                let at = |d: Vec3| {
                    super::map::project_cols(&vp, position + cube.direction(d) * (0.5 * range))
                };
                let ok = match (at(major), at(major + right * 0.5), at(major + up * 0.5)) {
                    (Some(c), Some(r), Some(u)) => {
                        (c[0] - 0.5).abs() < 1e-3
                            && (c[1] - 0.5).abs() < 1e-3
                            && r[0] > c[0]
                            && u[1] < c[1]
                    }
                    _ => false,
                };
                if !ok {
                    return Err(ShadowError::Views(format!(
                        "cube face {face} does not look along its D3D axis with the D3D face \
                         orientation (SPEC R99)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The view-projection matrices of the map (one per slice) and its layout; `scene_bounds`
    /// gives the occluders' bounds (asked only by directional and cascaded lights).
    pub(crate) fn projections(
        &self,
        scene_bounds: impl Fn() -> Aabb,
    ) -> Result<(Vec<Mat4>, MapLayout), ShadowError> {
        let layout = match &self.kind {
            LightKind::Point { position, .. } => MapLayout::Cube {
                position: *position,
            },
            LightKind::Cascaded { radii, .. } => MapLayout::Cascades {
                radii: radii.clone(),
            },
            _ => MapLayout::Single,
        };
        if !self.views.is_empty() {
            return Ok((
                self.views.iter().map(SliceView::view_proj).collect(),
                layout,
            ));
        }
        let reverse = self.depth == DepthConvention::Reverse;
        // Orthographic depth runs near → far (forward) or far → near (reverse).
        let ortho = |l: f32, r: f32, b: f32, t: f32, n: f32, f: f32| {
            if reverse {
                proj::orthographic(l, r, b, t, f, n)
            } else {
                proj::orthographic(l, r, b, t, n, f)
            }
        };
        let perspective = |fov: f32, near: f32, far: f32| {
            if reverse {
                proj::perspective_infinite_reverse(fov, 1.0, near)
            } else {
                proj::perspective(fov, 1.0, near, far)
            }
        };
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
            ortho(
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
                let b = bounds.unwrap_or_else(&scene_bounds);
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
                        let sb = scene_bounds();
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
                        ortho(-r, r, -r, r, zlo - 0.01, zhi + 0.01) * view
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
                let near = near_plane(*range);
                let view = look_to_lh(*position, *direction, Vec3::Y);
                (
                    vec![perspective(2.0 * outer_angle, near, *range) * view],
                    MapLayout::Single,
                )
            }
            LightKind::Point { position, range } => {
                let near = near_plane(*range);
                let proj = perspective(std::f32::consts::FRAC_PI_2, near, *range);
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

    /// Renders the light's shadow map from the scene's occluders (the same as
    /// [`ShadowMap::render`] with a copy of the light).
    ///
    /// # Errors
    /// As [`ShadowMap::render`].
    pub fn render(&self, scene: &Scene) -> Result<ShadowMap, ShadowError> {
        ShadowMap::render(self.clone(), scene)
    }
}

/// The near plane of a spot or point light's fitted perspective of this range.
pub(crate) fn near_plane(range: f32) -> f32 {
    (range * 1e-3).max(1e-3)
}

impl ShadowMap {
    /// Renders `light`'s shadow map from the scene's occluders: each slice's target is cleared
    /// to the depth convention's far value and drawn with its depth test, the light's cull
    /// mode, winding, depth clip and depth bias. The map keeps the light.
    ///
    /// # Errors
    /// An invalid light, kernel or views; a directional light with nothing to fit
    /// ([`ShadowError::EmptyScene`]); [`ShadowError::Interrupted`] when the deadline passes.
    pub fn render(light: Light, scene: &Scene) -> Result<ShadowMap, ShadowError> {
        crate::zone!("penumbra::shadow::render");
        light.check()?;
        let (mats, layout) = light.projections(|| scene.bounds())?;
        let state = light.raster_state();
        let instances = scene.instances();
        let threads = scene.thread_count();
        let n = light.resolution;
        let clear = light.depth.clear_depth();
        let mut faces = Vec::with_capacity(mats.len());
        for vp in &mats {
            // A face's target is cleared before anything is drawn: a cube of 4096² faces
            // clears 400 MB, so the deadline is checked before each one too.
            if crate::deadline::expired() {
                return Err(ShadowError::Interrupted);
            }
            let mut target = DepthTarget::new(n, n, light.format).map_err(ShadowError::Raster)?;
            if clear != 1.0 {
                target.clear(clear);
            }
            let _stats = crate::raster::rasterize(&mut target, *vp, &instances, &state, threads);
            crate::plot!("penumbra triangles rasterized", _stats.triangles_drawn);
            if crate::deadline::expired() {
                return Err(ShadowError::Interrupted);
            }
            faces.push(target);
        }
        ShadowMap::from_targets(light, faces, mats, layout)
    }

    /// A map of `light` over the lighting's indexed scene, drawn tile by tile as queries need
    /// it (see [`Tiled`]) on `tile_threads`; a light whose sampler the tiles cannot serve
    /// (address modes other than CLAMP, BORDER and WRAP) is rendered whole now, on
    /// `whole_threads` (0: all cores). `bounds` are the scene's bounds.
    ///
    /// # Errors
    /// As [`ShadowMap::render`].
    pub(crate) fn render_tiled(
        light: Light,
        scene: &Arc<SceneIndex>,
        bounds: Aabb,
        counters: &Arc<TileCounters>,
        tile_threads: usize,
        whole_threads: usize,
    ) -> Result<ShadowMap, ShadowError> {
        light.check()?;
        let (mats, layout) = light.projections(|| bounds)?;
        let sampler = ShadowMap::sampler_of(&light)?;
        let (dimension, _) = ShadowMap::dimension_of(&layout);
        let tiled = Tiled::new(
            &sampler,
            dimension,
            light.format,
            light.resolution,
            mats.clone(),
            light.raster_state(),
            light.depth.clear_depth(),
            Arc::clone(scene),
            Arc::clone(counters),
            tile_threads,
        );
        match tiled {
            Some(tiled) => Ok(ShadowMap::from_tiled(light, sampler, tiled, mats, layout)),
            None => {
                let whole = Scene {
                    occluders: scene.occluders.clone(),
                    threads: whole_threads,
                };
                ShadowMap::render(light, &whole)
            }
        }
    }
}
