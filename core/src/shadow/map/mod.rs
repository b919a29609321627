//! Shadow maps and the queries on them: lit fraction with PCF kernels, scalar and batched.
//!
//! A map owns the [`Light`] it was rendered for, so its queries use the light's sampler,
//! biases and kernel without the caller handing them back.

mod batched;
mod query;
mod store;

use std::sync::{Arc, OnceLock};

use glam::{Mat4, Vec3};

use super::ShadowError;
use super::kernel::PcfKernel;
use super::light::{DepthConvention, Light, LightKind};
use super::tiles::Tiled;
use crate::desc::StaticSamplerDesc;
use crate::raster::DepthTarget;
use crate::sample::Sampler;
use crate::sample::batch::CmpBatch;
use crate::texture::{Dimension, Texture, TextureDesc};

pub(crate) use batched::{Answers, Sorted};
use query::has_normal_offset;
pub(crate) use query::project_cols;

/// How the slices of a map are laid out.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MapLayout {
    /// One 2D map.
    Single,
    /// Six faces of a cube around a point light.
    Cube { position: Vec3 },
    /// Cascades around a centre.
    Cascades { radii: Vec<f32> },
}

/// The surface normals of the receivers of a batched query.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Normals<'a> {
    /// No normals: no normal-offset bias.
    #[default]
    None,
    /// One normal for every point.
    Shared(Vec3),
    /// One normal per point (a zero or non-finite normal means none for that point).
    Each(&'a [Vec3]),
}

impl Normals<'_> {
    /// The normal of point `k`.
    #[inline(always)]
    #[must_use]
    pub fn get(&self, k: usize) -> Option<Vec3> {
        match self {
            Normals::None => None,
            Normals::Shared(n) => Some(*n),
            Normals::Each(n) => n.get(k).copied(),
        }
    }

    /// True when no point gets a normal offset.
    fn none_offset(&self) -> bool {
        match self {
            Normals::None => true,
            Normals::Shared(n) => !has_normal_offset(Some(*n)),
            Normals::Each(_) => false,
        }
    }
}

impl From<Option<Vec3>> for Normals<'_> {
    fn from(n: Option<Vec3>) -> Self {
        n.map_or(Normals::None, Normals::Shared)
    }
}

impl From<Vec3> for Normals<'_> {
    fn from(n: Vec3) -> Self {
        Normals::Shared(n)
    }
}

impl<'a> From<&'a [Vec3]> for Normals<'a> {
    fn from(n: &'a [Vec3]) -> Self {
        Normals::Each(n)
    }
}

/// A rendered shadow map: depth texture, matrices, and the light (with its sampler, biases and
/// kernel) it was rendered for.
///
/// A map from [`ShadowMap::render`] is drawn whole. The maps a [`Lighting`](super::Lighting)
/// keeps are drawn tile by tile as queries need them (see the [`Lighting`](super::Lighting)
/// docs); every answer is the same bits either way, and [`ShadowMap::texture`] draws what is
/// missing before it returns. Under a [deadline](crate::deadline) that passes while a query
/// draws tiles, the tiles not drawn yet are left for a later call and that query's answer is
/// not the map's: a caller that sets a deadline asks
/// [`deadline::expired`](crate::deadline::expired) afterwards (the `Lighting` queries return
/// [`ShadowError::Interrupted`] then).
#[derive(Clone, Debug)]
pub struct ShadowMap {
    light: Light,
    store: Store,
    view_proj: Vec<Mat4>,
    layout: MapLayout,
    sampler: Sampler,
    resolution: u32,
    /// The smallest receiver depth inside the map: 0, or for a fitted infinite reverse-Z
    /// perspective the depth of the light's range (near / range), so a receiver past the range
    /// is outside the map as it is past a forward map's far plane.
    depth_floor: f32,
    /// The layout is a cube (every direction is inside).
    cube: bool,
    /// World size of one texel at view depth 1 (perspective) or anywhere (orthographic), per slice.
    texel_size: Vec<f32>,
    perspective: bool,
    /// Where the light is: a direction it shines along, or a position.
    source: LightSource,
}

/// Where a map's texels live.
#[derive(Clone, Debug)]
enum Store {
    /// Drawn whole: the texture and the batched comparison path per slice (per face of a cube
    /// map), built on first use and shared by clones (`None` for a slice the batch cannot take).
    Full {
        texture: Texture,
        batches: Arc<OnceLock<Vec<Option<CmpBatch>>>>,
    },
    /// Drawn tile by tile on demand; clones share the drawn tiles.
    Tiled(Arc<Tiled>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum LightSource {
    Direction(Vec3),
    Position(Vec3),
}

/// The world-space size of one texel of a map with this view-projection: orthographic maps
/// everywhere, perspective maps at view depth 1 (multiply by the depth). The first row of the
/// matrix is the projection's x scale times the view's right axis, so its length gives the
/// world width the map covers.
fn texel_size(vp: &Mat4, resolution: u32) -> f32 {
    let row0 = vp.row(0).truncate().length();
    if row0 > 0.0 {
        2.0 / (resolution as f32 * row0)
    } else {
        0.0
    }
}

impl ShadowMap {
    pub(crate) fn from_targets(
        light: Light,
        targets: Vec<DepthTarget>,
        view_proj: Vec<Mat4>,
        layout: MapLayout,
    ) -> Result<ShadowMap, ShadowError> {
        let n = light.resolution;
        let (dimension, slices) = Self::dimension_of(&layout);
        // Each face is copied out of its tiles, then into the map: checked against the deadline
        // face by face (a 4096² cube copies 800 MB).
        let sampler = Self::sampler_of(&light)?;
        let mut textures: Vec<Texture> = Vec::with_capacity(targets.len());
        for target in &targets {
            crate::deadline::check().map_err(|_| ShadowError::Interrupted)?;
            textures.push(target.to_texture());
        }
        drop(targets);
        crate::deadline::check().map_err(|_| ShadowError::Interrupted)?;
        let subs: Vec<&[u8]> = textures.iter().map(|t| t.subresource(0, 0)).collect();
        let texture = Texture::from_subresources(
            TextureDesc::new(dimension, light.format, [n, n, 1], slices),
            &subs,
        )
        .map_err(|e| match e {
            crate::TextureError::Interrupted => ShadowError::Interrupted,
            other => ShadowError::Texture(other),
        })?;
        let store = Store::Full {
            texture,
            batches: Arc::default(),
        };
        Ok(Self::assemble(light, sampler, store, view_proj, layout))
    }

    /// The light's comparison sampler.
    pub(crate) fn sampler_of(light: &Light) -> Result<Sampler, ShadowError> {
        let sampler =
            Sampler::new(light.sampler.to_sampler_desc()).map_err(ShadowError::Sampler)?;
        if !light.sampler.filter.is_comparison() {
            return Err(ShadowError::NotComparison(light.sampler.filter));
        }
        Ok(sampler)
    }

    /// The texture dimension and slice count of a layout.
    pub(crate) fn dimension_of(layout: &MapLayout) -> (Dimension, u32) {
        match layout {
            MapLayout::Single => (Dimension::Texture2D, 1),
            MapLayout::Cube { .. } => (Dimension::TextureCube, 6),
            MapLayout::Cascades { radii, .. } => (Dimension::Texture2DArray, radii.len() as u32),
        }
    }

    /// A map drawn tile by tile.
    pub(crate) fn from_tiled(
        light: Light,
        sampler: Sampler,
        tiled: Tiled,
        view_proj: Vec<Mat4>,
        layout: MapLayout,
    ) -> ShadowMap {
        Self::assemble(
            light,
            sampler,
            Store::Tiled(Arc::new(tiled)),
            view_proj,
            layout,
        )
    }

    fn assemble(
        light: Light,
        sampler: Sampler,
        store: Store,
        view_proj: Vec<Mat4>,
        layout: MapLayout,
    ) -> ShadowMap {
        let n = light.resolution;
        let perspective = match light.views.first() {
            Some(v) => v.is_perspective(),
            None => {
                matches!(layout, MapLayout::Cube { .. })
                    || matches!(light.kind, LightKind::Spot { .. })
            }
        };
        let texel_size = view_proj.iter().map(|vp| texel_size(vp, n)).collect();
        let source = match light.kind {
            LightKind::Directional { direction, .. } | LightKind::Cascaded { direction, .. } => {
                LightSource::Direction(direction.normalize_or_zero())
            }
            LightKind::Spot { position, .. } | LightKind::Point { position, .. } => {
                LightSource::Position(position)
            }
        };
        let depth_floor = match light.kind {
            LightKind::Spot { range, .. } | LightKind::Point { range, .. }
                if light.depth == DepthConvention::Reverse && light.views.is_empty() =>
            {
                super::render::near_plane(range) / range
            }
            _ => 0.0,
        };
        ShadowMap {
            cube: matches!(layout, MapLayout::Cube { .. }),
            depth_floor,
            source,
            store,
            view_proj,
            layout,
            sampler,
            light,
            resolution: n,
            texel_size,
            perspective,
        }
    }

    /// The light the map was rendered for (placement, conventions, kernel).
    #[must_use]
    pub fn light(&self) -> &Light {
        &self.light
    }

    /// The depth texture (2D, cube, or 2D array for cascades). A map drawn tile by tile draws
    /// every tile it has not drawn yet first.
    #[must_use]
    pub fn texture(&self) -> &Texture {
        match &self.store {
            Store::Full { texture, .. } => texture,
            Store::Tiled(t) => t.texture(),
        }
    }

    /// The view-projection matrix of each slice (cube faces in D3D order +X, −X, +Y, −Y, +Z, −Z).
    #[must_use]
    pub fn view_proj(&self) -> &[Mat4] {
        &self.view_proj
    }

    /// The static sampler description the map is read with.
    #[must_use]
    pub fn sampler_desc(&self) -> &StaticSamplerDesc {
        &self.light.sampler
    }

    /// The sampler built from it.
    #[must_use]
    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }

    /// Map size in texels.
    #[must_use]
    pub fn resolution(&self) -> u32 {
        self.resolution
    }

    /// The light's kernel.
    #[must_use]
    pub fn kernel(&self) -> &PcfKernel {
        &self.light.kernel
    }

    /// Bytes the batched query path of the map holds once a batched query has built it: a key
    /// image per slice (two halves of `(n + 4) × (n + 3)` keys) and, for cube maps, a copy of
    /// each face; for a map drawn tile by tile, also the tiles kept for redraws under moving
    /// occluders (at most a quarter of its texels). For hosts that budget memory.
    #[must_use]
    pub fn batch_bytes(&self) -> u64 {
        let layers = if self.tiled().is_some() {
            self.bytes() / super::tiles::LAYER_SHARE as u64
        } else {
            0
        };
        self.batch_bytes_untiled() + layers
    }

    /// [`ShadowMap::batch_bytes`] without the kept tiles.
    fn batch_bytes_untiled(&self) -> u64 {
        let n = u64::from(self.resolution);
        let texel = self.light.format.bytes_per_texel() as u64;
        let key = if self.light.format == crate::Format::D16Unorm {
            2
        } else {
            4
        };
        let image = 2 * (n + 4) * (n + 3) * key;
        match self.layout {
            MapLayout::Cube { .. } => 6 * (image + n * n * texel),
            _ => self.view_proj.len() as u64 * image,
        }
    }

    /// Bytes the map holds (its depth texture).
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.light.map_bytes()
    }
}
