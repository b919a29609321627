//! Shadow maps and the queries on them: lit fraction with PCF kernels, scalar and batched.
//!
//! A map owns the [`Light`] it was rendered for, so its queries use the light's sampler,
//! biases and kernel without the caller handing them back.

use std::sync::{Arc, OnceLock, RwLockReadGuard};

use glam::{Mat4, Vec3};

use super::ShadowError;
use super::kernel::{Anchor, PcfKernel, Tap, grid_anchor};
use super::light::{BiasOrder, CubeLookup, DepthConvention, Light, LightKind, OffsetUnits};
use super::tiles::{Needs, Resident, Tiled};
use crate::desc::StaticSamplerDesc;
use crate::raster::DepthTarget;
use crate::sample::address::linear_fixed;
use crate::sample::batch::{BatchPath, CmpBatch};
use crate::sample::cube_face as select_face;
use crate::sample::{Coord, LodMode, Offset, SampleArgs, Sampler, validated};
use crate::texture::{Dimension, Texture, TextureDesc};

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

/// What one query reads, with the tiles it needs drawn.
enum Reader<'a> {
    Full(&'a Texture, &'a [Option<CmpBatch>]),
    Tiled(RwLockReadGuard<'a, Resident>),
}

impl Reader<'_> {
    fn texture(&self) -> &Texture {
        match self {
            Reader::Full(t, _) => t,
            Reader::Tiled(r) => &r.texture,
        }
    }

    fn batch(&self, slice: usize) -> Option<&CmpBatch> {
        match self {
            Reader::Full(_, b) => b.get(slice)?.as_ref(),
            Reader::Tiled(r) => r.batches.get(slice)?.as_ref(),
        }
    }
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

    /// The tiled store, when the map is drawn tile by tile.
    pub(crate) fn tiled(&self) -> Option<&Tiled> {
        match &self.store {
            Store::Tiled(t) => Some(t),
            Store::Full { .. } => None,
        }
    }

    /// The tiled store to change (`None` for a whole map, or one whose tiles a clone shares).
    pub(crate) fn tiled_mut(&mut self) -> Option<&mut Tiled> {
        match &mut self.store {
            Store::Tiled(t) => Arc::get_mut(t),
            Store::Full { .. } => None,
        }
    }

    /// Tiles drawn so far, and tiles in all (`None` for a map drawn whole).
    #[must_use]
    pub fn tiles_drawn(&self) -> Option<(usize, usize)> {
        self.tiled().map(|t| (t.drawn(), t.tile_count()))
    }

    /// This map's tile work since it was made: tiles drawn (again after being forgotten),
    /// tiles forgotten because an occluder change covered them, and the time spent (`None` for
    /// a map drawn whole).
    #[must_use]
    pub fn tile_stats(&self) -> Option<super::TileStats> {
        self.tiled().map(Tiled::stats)
    }

    /// The texels for a scalar query whose taps `fill` marks (a tiled map draws them first).
    fn scalar_reader(&self, fill: impl FnOnce(&Tiled, &mut Needs)) -> Reader<'_> {
        match &self.store {
            Store::Full { texture, .. } => Reader::Full(texture, &[]),
            Store::Tiled(t) => {
                let mut needs = t.needs();
                fill(t, &mut needs);
                Reader::Tiled(t.read_with(&needs))
            }
        }
    }

    /// The texels and batched paths for a batched query whose taps `fill` marks.
    fn batch_reader(&self, fill: impl FnOnce(&Tiled, &mut Needs)) -> Reader<'_> {
        match &self.store {
            Store::Full { texture, batches } => {
                Reader::Full(texture, batches.get_or_init(|| self.build_batches(texture)))
            }
            Store::Tiled(t) => {
                let mut needs = t.needs();
                fill(t, &mut needs);
                Reader::Tiled(t.read_with(&needs))
            }
        }
    }

    /// Which slices have a batched path.
    fn batched_slices(&self) -> Vec<bool> {
        match &self.store {
            Store::Full { texture, batches } => batches
                .get_or_init(|| self.build_batches(texture))
                .iter()
                .map(Option::is_some)
                .collect(),
            Store::Tiled(t) => t.read().batches.iter().map(Option::is_some).collect(),
        }
    }

    /// Marks the tiles of a scalar sample at `coord` (2D slice or cube direction).
    fn need_coord(&self, t: &Tiled, needs: &mut Needs, coord: &Coord) {
        let [x, y, z, _] = coord.0;
        if self.cube {
            t.need_cube(needs, Vec3::new(x, y, z));
            return;
        }
        let slices = self.view_proj.len();
        if slices == 1 {
            t.need_2d(needs, 0, [x, y]);
        } else if z.is_finite() {
            // R43 rounds the array coordinate; both neighbours cover its rounding.
            let lo = z.floor().clamp(0.0, (slices - 1) as f32) as usize;
            let hi = z.ceil().clamp(0.0, (slices - 1) as f32) as usize;
            t.need_2d(needs, lo, [x, y]);
            t.need_2d(needs, hi, [x, y]);
        } else {
            for s in 0..slices {
                t.need_2d(needs, s, [x, y]);
            }
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
    /// each face. For hosts that budget memory.
    #[must_use]
    pub fn batch_bytes(&self) -> u64 {
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
    fn inside(&self, [u, v, z]: [f32; 3]) -> bool {
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
    /// depth range). The receiver biases follow [`ShadowBias`](super::ShadowBias).
    #[inline(always)]
    fn receiver(&self, point: Vec3, normal: Option<Vec3>) -> Option<(usize, Vec3, [f32; 3])> {
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
        let mut taps = [(Coord::default(), 0.0f32); super::MAX_TAPS];
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

    /// [`ShadowMap::lit_fraction`] of many points at once, into `out` (same length), with the
    /// light's kernel and the receivers' `normals`, through the batched SIMD comparison path
    /// where the map allows it (2D maps and cascades; cube maps face by face, with taps whose
    /// footprint crosses a face edge on the scalar sampler). Returns exactly the bits
    /// `lit_fraction` returns for each point.
    ///
    /// # Panics
    /// If `out`, or a per-point `normals` slice, is shorter than `points`.
    pub fn lit_fractions<'n>(
        &self,
        points: &[Vec3],
        normals: impl Into<Normals<'n>>,
        out: &mut [f32],
    ) {
        self.lit_fractions_with(points, normals, &self.light.kernel, out);
    }

    /// [`ShadowMap::lit_fractions`] with another kernel (the bits of
    /// [`ShadowMap::lit_fraction_with`]).
    ///
    /// # Panics
    /// As [`ShadowMap::lit_fractions`].
    pub fn lit_fractions_with<'n>(
        &self,
        points: &[Vec3],
        normals: impl Into<Normals<'n>>,
        kernel: &PcfKernel,
        out: &mut [f32],
    ) {
        crate::zone!("penumbra::shadow::lit_fractions");
        crate::plot!("penumbra lit fractions per call", points.len() as f64);
        let normals = normals.into();
        if let Normals::Each(n) = normals {
            assert!(
                n.len() >= points.len(),
                "{} normals for {} points",
                n.len(),
                points.len()
            );
        }
        let out = &mut out[..points.len()];
        if points.len() <= SCALAR_POINTS {
            // A few points (one query, a small probe): the scalar query gives the same bits,
            // and a map asked only this never builds key images that cost O(map size).
            for (k, (&p, o)) in points.iter().zip(out.iter_mut()).enumerate() {
                *o = self.lit_fraction_with(p, normals.get(k), kernel);
            }
            return;
        }
        let batches = self.batched_slices();
        let batches = &batches[..];
        if let MapLayout::Cube { position } = self.layout {
            self.cube_lit_fractions(position, batches, points, normals, kernel, out);
            return;
        }
        // The tap count as a constant for the common fixed kernels: loops unroll, and one
        // tap's weighted sum folds away.
        match (kernel.anchor(), kernel.len()) {
            // (`planar::<TAPS>` for TAPS > 0 takes only kernels anchored at the sample.)
            (Anchor::Sample, 1) => self.planar::<1>(batches, points, normals, kernel, out),
            (Anchor::Sample, 4) => self.planar::<4>(batches, points, normals, kernel, out),
            (Anchor::Sample, 16) => self.planar::<16>(batches, points, normals, kernel, out),
            _ => self.planar::<0>(batches, points, normals, kernel, out),
        }
    }

    /// [`ShadowMap::lit_fractions`] on 2D maps and cascades, for kernels of `TAPS` taps (0: the
    /// kernel's length, known at run time).
    #[inline(never)]
    fn planar<const TAPS: usize>(
        &self,
        batches: &[bool],
        points: &[Vec3],
        normals: Normals<'_>,
        kernel: &PcfKernel,
        out: &mut [f32],
    ) {
        let taps = if TAPS > 0 { TAPS } else { kernel.len() };
        let texel = 1.0 / self.resolution as f32;
        let size = self.resolution as f32;
        let grid = kernel.anchor() == Anchor::TexelGrid;
        let fixed = kernel.resolve(0.0, 0.0);
        let mut moving = fixed.clone();
        let scale = kernel.scale();
        // For the fixed kernels of TAPS taps: their offsets and weights as arrays.
        let offsets: [[f32; 2]; TAPS] = std::array::from_fn(|j| [fixed[j].du, fixed[j].dv]);
        let weights: [f32; TAPS] = std::array::from_fn(|j| fixed[j].weight);
        let unit = weights.iter().all(|&w| w == 1.0);
        // Points per round: enough lookups per batch run for the kernels' prefetching and to
        // amortize the call, few enough for the scratch to stay in L1/L2.
        const CHUNK: usize = 1024;
        let cap = points.len().min(CHUNK);
        // Per slice: the taps of the points that fall in it, point-major (tap `j` of the
        // slice's `i`-th point at `i·taps + j`), and which point each came from.
        let mut lists: Vec<SliceTaps> = batches
            .iter()
            .map(|&b| SliceTaps::with_capacity(if b { cap } else { 0 }, taps, grid))
            .collect();
        let mut res = vec![0.0f32; cap * taps];
        // One orthographic map lit from a direction, no normal offset (a sun): the receiver
        // bias is one constant shift and the projection one matrix.
        let fast = match (&self.layout, self.source, normals.none_offset()) {
            (MapLayout::Single, LightSource::Direction(d), true) => Some((
                -d * self.light.bias.receiver,
                self.view_proj[0].to_cols_array(),
            )),
            _ => None,
        };
        for (chunk_index, chunk) in points.chunks(CHUNK).enumerate() {
            let base = chunk_index * CHUNK;
            let out = &mut out[base..][..chunk.len()];
            for list in &mut lists {
                list.clear();
            }
            for (k, &p) in chunk.iter().enumerate() {
                let receiver = match &fast {
                    // `receiver` for this case with its constants hoisted: the same operations.
                    Some((shift, cols)) => p
                        .is_finite()
                        .then(|| project_cols(cols, p + *shift))
                        .flatten()
                        .filter(|&uvz| self.inside(uvz))
                        .map(|uvz| (0, p, uvz)),
                    None => self.receiver(p, normals.get(base + k)),
                };
                match receiver {
                    None => out[k] = 1.0,
                    Some((slice, _, [u, v, z])) if batches.get(slice).copied() == Some(true) => {
                        let list = &mut lists[slice];
                        let at = list.points * taps;
                        list.owner[list.points] = base + k;
                        list.points += 1;
                        // The coordinates `lit_fraction_with` gives the sampler, to the bit.
                        if TAPS > 0 {
                            // A fixed kernel: offsets known for the call, loops of TAPS.
                            let uv: &mut [[f32; 2]; TAPS] =
                                (&mut list.uv[at..at + TAPS]).try_into().expect("TAPS");
                            for (c, o) in uv.iter_mut().zip(&offsets) {
                                *c = [u + o[0] * texel, v + o[1] * texel];
                            }
                        } else {
                            let ((au, fu), (av, fv)) = if grid {
                                (grid_anchor(u, size, texel), grid_anchor(v, size, texel))
                            } else {
                                ((u, 0.0), (v, 0.0))
                            };
                            let resolved: &[Tap] = if grid {
                                kernel.resolve_into(fu, fv, &mut moving);
                                &moving
                            } else {
                                &fixed
                            };
                            let uv = &mut list.uv[at..at + taps];
                            for (c, t) in uv.iter_mut().zip(resolved) {
                                *c = [au + t.du * texel, av + t.dv * texel];
                            }
                            if grid {
                                let w = &mut list.weights[at..at + taps];
                                for (w, t) in w.iter_mut().zip(resolved) {
                                    *w = t.weight;
                                }
                            }
                        }
                        list.refs[at..at + taps].fill(z);
                    }
                    Some(_) => out[k] = self.lit_fraction_with(p, normals.get(base + k), kernel),
                }
            }
            let reader = self.batch_reader(|t, needs| {
                for (slice, list) in lists.iter().enumerate() {
                    for &uv in &list.uv[..list.points * taps] {
                        t.need_2d(needs, slice, uv);
                    }
                }
            });
            for (slice, list) in lists.iter().enumerate() {
                let Some(batch) = reader.batch(slice) else {
                    continue;
                };
                if list.points == 0 {
                    continue;
                }
                let n = list.points * taps;
                let res = &mut res[..n];
                if batch.run(&list.uv[..n], &list.refs[..n], res).is_err() {
                    res.fill(1.0);
                }
                if TAPS > 0 {
                    for (&k, results) in list.owner[..list.points]
                        .iter()
                        .zip(res.as_chunks::<TAPS>().0)
                    {
                        // Weighted and summed in tap order, like `lit_fraction_with` (a weight
                        // of 1 multiplies exactly, so unit weights skip it).
                        let sum = if unit {
                            results.iter().fold(0.0f32, |s, &r| s + r)
                        } else {
                            results
                                .iter()
                                .zip(&weights)
                                .fold(0.0f32, |s, (&r, &w)| s + w * r)
                        };
                        out[k - base] = lit_of_sum(sum, scale);
                    }
                    continue;
                }
                for (i, &k) in list.owner[..list.points].iter().enumerate() {
                    let results = &res[i * taps..][..taps];
                    // Weighted and summed in tap order, like `lit_fraction_with`.
                    let sum = if grid {
                        let weights = &list.weights[i * taps..][..taps];
                        results
                            .iter()
                            .zip(weights)
                            .fold(0.0f32, |s, (&r, &w)| s + w * r)
                    } else {
                        results
                            .iter()
                            .zip(&fixed)
                            .fold(0.0f32, |s, (&r, t)| s + t.weight * r)
                    };
                    out[k - base] = lit_of_sum(sum, scale);
                }
            }
        }
    }

    /// The batched comparison path per slice (2D maps and cascades), or per face of a cube map
    /// (each face as a 2D texture of its own); `None` where the kernels cannot take it.
    fn build_batches(&self, texture: &Texture) -> Vec<Option<CmpBatch>> {
        match self.layout {
            MapLayout::Cube { .. } => (0..6)
                .map(|face| {
                    let desc = TextureDesc::new(
                        Dimension::Texture2D,
                        texture.format(),
                        [self.resolution, self.resolution, 1],
                        1,
                    );
                    let face =
                        Texture::from_subresources(desc, &[texture.subresource(0, face)]).ok()?;
                    let batch = self.sampler.cmp_level_zero_batch(&face, 0).ok()?;
                    (batch.path() == BatchPath::Kernel).then_some(batch)
                })
                .collect(),
            _ => (0..self.view_proj.len() as u32)
                .map(|s| self.sampler.cmp_level_zero_batch(texture, s).ok())
                .collect(),
        }
    }

    /// [`ShadowMap::lit_fractions`] on a cube map. Inside one face, R100's seamless filtering is
    /// plain 2D bilinear filtering of that face (R99's face coordinates, R27's taps), so a tap
    /// whose whole 2×2 footprint lies inside a face goes to that face's batch; taps whose
    /// footprint reaches across an edge or a corner (R102–R104) go through the scalar sampler.
    #[inline(never)]
    fn cube_lit_fractions(
        &self,
        position: Vec3,
        batches: &[bool],
        points: &[Vec3],
        normals: Normals<'_>,
        kernel: &PcfKernel,
        out: &mut [f32],
    ) {
        const CHUNK: usize = 256;
        // Cube maps place every kernel's taps around the sample position (f = 0).
        let resolved = kernel.resolve(0.0, 0.0);
        let scale = kernel.scale();
        let taps = resolved.len();
        let texel = 1.0 / self.resolution as f32;
        let size = self.resolution as f32;
        // First-tap indices whose 2×2 footprint stays inside the face.
        let inside = 0..=i64::from(self.resolution) - 2;
        let mut uv: [Vec<[f32; 2]>; 6] = Default::default();
        let mut refs: [Vec<f32>; 6] = Default::default();
        let mut slots: [Vec<usize>; 6] = Default::default();
        let mut res = Vec::with_capacity(CHUNK * taps);
        let mut face_res = Vec::new();
        // Taps whose footprint crosses a face edge: sampled once the tiles are there.
        let mut seams: Vec<(Coord, f32, usize)> = Vec::new();
        for (chunk_index, chunk) in points.chunks(CHUNK).enumerate() {
            let base = chunk_index * CHUNK;
            let out = &mut out[base..][..chunk.len()];
            res.clear();
            res.resize(chunk.len() * taps, 1.0f32);
            for face in 0..6 {
                uv[face].clear();
                refs[face].clear();
                slots[face].clear();
            }
            seams.clear();
            let mut live = [false; CHUNK];
            for (k, &point) in chunk.iter().enumerate() {
                let Some((slice, p, [_, _, z])) = self.receiver(point, normals.get(base + k))
                else {
                    out[k] = 1.0;
                    continue;
                };
                live[k] = true;
                for (j, t) in resolved.iter().enumerate() {
                    let dd = cube_tap(self.light.cube, position, slice, p, [t.du, t.dv], texel);
                    // The sampler flushes denormal coordinates first (SPEC §1.4, R6).
                    let coord = Coord([dd.x, dd.y, dd.z, 0.0]).flushed();
                    let [x, y, z3, _] = coord.0;
                    let fc = crate::sample::face_coord([x, y, z3]);
                    let i0 = first_texel(fc.s * size - 0.5);
                    let j0 = first_texel(fc.t * size - 0.5);
                    let face = fc.face as usize;
                    let batched = select_face([x, y, z3]).is_some()
                        && inside.contains(&i0)
                        && inside.contains(&j0)
                        && batches.get(face).copied() == Some(true);
                    if batched {
                        uv[face].push([fc.s, fc.t]);
                        refs[face].push(z);
                        slots[face].push(k * taps + j);
                    } else {
                        seams.push((coord, z, k * taps + j));
                    }
                }
            }
            let reader = self.batch_reader(|t, needs| {
                for (face, list) in uv.iter().enumerate() {
                    for &c in list {
                        t.need_2d(needs, face, c);
                    }
                }
                for (coord, _, _) in &seams {
                    self.need_coord(t, needs, coord);
                }
            });
            for &(coord, z, slot) in &seams {
                let args = SampleArgs {
                    coord,
                    lod: LodMode::Zero,
                    offset: Offset::default(),
                    clamp: None,
                };
                res[slot] = validated(
                    self.sampler.sample_cmp(Some(reader.texture()), &args, z),
                    1.0,
                );
            }
            for face in 0..6 {
                let Some(batch) = reader.batch(face) else {
                    continue;
                };
                if uv[face].is_empty() {
                    continue;
                }
                face_res.clear();
                face_res.resize(uv[face].len(), 0.0f32);
                if batch.run(&uv[face], &refs[face], &mut face_res).is_err() {
                    face_res.fill(1.0);
                }
                for (&slot, &r) in slots[face].iter().zip(&face_res) {
                    res[slot] = r;
                }
            }
            for (k, o) in out.iter_mut().enumerate() {
                if live[k] {
                    // Weighted and summed in tap order, like `lit_fraction_with`.
                    let sum = res[k * taps..][..taps]
                        .iter()
                        .zip(&resolved)
                        .fold(0.0f32, |s, (&r, t)| s + t.weight * r);
                    *o = lit_of_sum(sum, scale);
                }
            }
        }
    }
}

/// Calls of `lit_fractions` with at most this many points take the scalar query.
const SCALAR_POINTS: usize = 16;

/// The lookups of one slice in a round of `lit_fractions` (sized once, filled by index).
struct SliceTaps {
    uv: Vec<[f32; 2]>,
    refs: Vec<f32>,
    /// Per-lookup weights (texel-grid kernels only; fixed kernels' weights are constants).
    weights: Vec<f32>,
    /// The point (index in the call) of each group of `taps` lookups.
    owner: Vec<usize>,
    /// Points filled so far.
    points: usize,
}

impl SliceTaps {
    fn with_capacity(points: usize, taps: usize, weights: bool) -> Self {
        SliceTaps {
            uv: vec![[0.0; 2]; points * taps],
            refs: vec![0.0; points * taps],
            weights: vec![0.0; if weights { points * taps } else { 0 }],
            owner: vec![0; points],
            points: 0,
        }
    }

    fn clear(&mut self) {
        self.points = 0;
    }
}

/// The lit fraction of a kernel's weighted sum: `sum × scale`, at most 1 (weights such as
/// Castaño's, which sum to 144 only up to rounding, can land a hair above).
#[inline(always)]
fn lit_of_sum(sum: f32, scale: f32) -> f32 {
    (sum * scale).min(1.0)
}

/// True when `normal` gives a normal-offset bias (finite, not zero).
#[inline]
fn has_normal_offset(normal: Option<Vec3>) -> bool {
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

/// `linear_fixed(v) >> 8` (R27's first tap) without a call to libm's `rintf` (baseline x86-64
/// has no rounding instruction, and the call was a tenth of the cube path's time): adding
/// 1.5·2^52 in f64 rounds to the nearest integer, ties to even, as `round_ties_even` does, for
/// the face coordinates' range; NaN and larger values take `linear_fixed` itself.
#[inline(always)]
fn first_texel(v: f32) -> i64 {
    if v.abs() < 4_194_304.0 {
        let fixed = (f64::from(v * 256.0) + 6_755_399_441_055_744.0).to_bits() as u32 as i32;
        i64::from(fixed >> 8)
    } else {
        linear_fixed(v) >> 8
    }
}

/// The direction of one PCF tap of a cube map: the receiver's direction from the light moved
/// within the plane of its face by the tap's texel offset (seamless filtering, R100, does the
/// rest). Shared by the scalar and the batched queries so both sample the same coordinates.
#[inline]
fn cube_tap(
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

#[cfg(test)]
mod tests {
    use super::{first_texel, linear_fixed};

    #[test]
    fn first_texel_is_linear_fixed_shifted() {
        // Every 1/1024 step (ties of the ×256 rounding included) over a 4096-texel face, the
        // edges of the fast range, and values that take the reference way.
        let steps = (-2048..4096 * 1024 + 2048).map(|k| k as f32 / 1024.0 - 0.5);
        let edges = [
            4_194_303.5f32,
            4_194_304.0,
            -4_194_304.0,
            1e9,
            -1e9,
            f32::NAN,
            f32::INFINITY,
        ];
        for v in steps.chain(edges) {
            assert_eq!(first_texel(v), linear_fixed(v) >> 8, "{v}");
        }
    }
}
