//! Shadow maps and the queries on them: lit fraction with PCF kernels, exposure, line of sight.

use std::sync::{Arc, OnceLock};

use glam::{Mat4, Vec3};

use super::light::Light;
use crate::desc::StaticSamplerDesc;
use crate::format::Format;
use crate::raster::DepthTarget;
use crate::sample::address::linear_fixed;
use crate::sample::batch::{BatchPath, CmpBatch};
use crate::sample::cube_face as select_face;
use crate::sample::{Coord, LodMode, Offset, SampleArgs, Sampler};
use crate::texture::{Dimension, Texture, TextureDesc};

/// How many comparison taps a lit-fraction query takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PcfKernel {
    /// One hardware bilinear PCF tap (`sample_c_lz`): a 2×2 texel footprint.
    #[default]
    Hardware2x2,
    /// 2×2 bilinear taps half a texel apart, averaged: a 3×3 texel tent filter.
    Pcf3x3,
    /// 4×4 bilinear taps one texel apart, averaged: a 5×5 texel tent filter.
    Pcf5x5,
}

impl PcfKernel {
    /// The tap offsets in texels (relative to the sample position).
    #[must_use]
    pub fn offsets(self) -> &'static [[f32; 2]] {
        const K1: [[f32; 2]; 1] = [[0.0, 0.0]];
        const K3: [[f32; 2]; 4] = [[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]];
        const K5: [[f32; 2]; 16] = {
            let o = [-1.5, -0.5, 0.5, 1.5];
            let mut k = [[0.0; 2]; 16];
            let mut i = 0;
            while i < 16 {
                k[i] = [o[i % 4], o[i / 4]];
                i += 1;
            }
            k
        };
        match self {
            PcfKernel::Hardware2x2 => &K1,
            PcfKernel::Pcf3x3 => &K3,
            PcfKernel::Pcf5x5 => &K5,
        }
    }

    /// The kernel's name as settings files write it: `2x2`, `3x3`, `5x5`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            PcfKernel::Hardware2x2 => "2x2",
            PcfKernel::Pcf3x3 => "3x3",
            PcfKernel::Pcf5x5 => "5x5",
        }
    }
}

impl std::str::FromStr for PcfKernel {
    type Err = ShadowError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "2x2" | "hardware" | "Hardware2x2" => Ok(PcfKernel::Hardware2x2),
            "3x3" | "Pcf3x3" => Ok(PcfKernel::Pcf3x3),
            "5x5" | "Pcf5x5" => Ok(PcfKernel::Pcf5x5),
            other => Err(ShadowError::Kernel(other.to_string())),
        }
    }
}

/// Errors of building lights and shadow maps.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ShadowError {
    /// The map size is out of range.
    #[error("shadow-map resolution {0} is outside 1..=16384")]
    Resolution(u32),
    /// The map format is not a depth format penumbra renders.
    #[error("shadow maps are D32_FLOAT or D16_UNORM, not {0}")]
    Format(Format),
    /// A light's placement is not finite or degenerate.
    #[error(
        "invalid light (non-finite position/direction, zero direction, non-positive range or angle): {0}"
    )]
    Light(String),
    /// A directional light has nothing to fit its map to.
    #[error(
        "the scene has no occluders to fit a directional shadow map to; give the light explicit bounds"
    )]
    EmptyScene,
    /// The static sampler is invalid.
    #[error("shadow sampler: {0}")]
    Sampler(String),
    /// The rasterizer refused the target.
    #[error("rasterizer: {0}")]
    Raster(String),
    /// An unknown PCF kernel name.
    #[error("unknown PCF kernel `{0}`: expected 2x2, 3x3 or 5x5")]
    Kernel(String),
    /// The [deadline](crate::deadline) in force passed before the map was rendered.
    #[error("stopped: the deadline passed before the map was rendered")]
    Interrupted,
}

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

/// A rendered shadow map: depth texture, matrices, and the sampler it is read with.
#[derive(Clone, Debug)]
pub struct ShadowMap {
    texture: Texture,
    view_proj: Vec<Mat4>,
    layout: MapLayout,
    sampler_desc: StaticSamplerDesc,
    sampler: Sampler,
    bias: super::ShadowBias,
    kernel: PcfKernel,
    resolution: u32,
    /// World size of one texel at view depth 1 (perspective) or anywhere (orthographic), per slice.
    texel_size: Vec<f32>,
    perspective: bool,
    /// Where the light is: a direction it shines along, or a position.
    source: LightSource,
    /// The batched comparison path per slice (per face of a cube map), built on first use and
    /// shared by clones (`None` for a slice the batch cannot take).
    batches: Arc<OnceLock<Vec<Option<CmpBatch>>>>,
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
        light: &Light,
        targets: Vec<DepthTarget>,
        view_proj: Vec<Mat4>,
        layout: MapLayout,
    ) -> Result<ShadowMap, ShadowError> {
        let sampler = Sampler::new(light.sampler.to_sampler_desc())
            .map_err(|e| ShadowError::Sampler(e.to_string()))?;
        if !light.sampler.filter.is_comparison() {
            return Err(ShadowError::Sampler(format!(
                "Filter {} is not a COMPARISON filter (SPEC R17)",
                light.sampler.filter
            )));
        }
        let n = light.resolution;
        let (dimension, slices) = match layout {
            MapLayout::Single => (Dimension::Texture2D, 1),
            MapLayout::Cube { .. } => (Dimension::TextureCube, 6),
            MapLayout::Cascades { ref radii, .. } => {
                (Dimension::Texture2DArray, radii.len() as u32)
            }
        };
        // Each face is copied out of its tiles, then into the map: checked against the deadline
        // face by face (a 4096² cube copies 800 MB).
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
            other => ShadowError::Raster(other.to_string()),
        })?;
        let perspective = !matches!(layout, MapLayout::Single | MapLayout::Cascades { .. })
            || matches!(light.kind, super::LightKind::Spot { .. });
        let texel_size = view_proj.iter().map(|vp| texel_size(vp, n)).collect();
        let source = match light.kind {
            super::LightKind::Directional { direction, .. }
            | super::LightKind::Cascaded { direction, .. } => {
                LightSource::Direction(direction.normalize_or_zero())
            }
            super::LightKind::Spot { position, .. } | super::LightKind::Point { position, .. } => {
                LightSource::Position(position)
            }
        };
        Ok(ShadowMap {
            batches: Arc::default(),
            source,
            texture,
            view_proj,
            layout,
            sampler_desc: light.sampler,
            sampler,
            bias: light.bias,
            kernel: light.kernel,
            resolution: n,
            texel_size,
            perspective,
        })
    }

    /// The depth texture (2D, cube, or 2D array for cascades).
    #[must_use]
    pub fn texture(&self) -> &Texture {
        &self.texture
    }

    /// The view-projection matrix of each slice (cube faces in D3D order +X, −X, +Y, −Y, +Z, −Z).
    #[must_use]
    pub fn view_proj(&self) -> &[Mat4] {
        &self.view_proj
    }

    /// The static sampler description the map is read with.
    #[must_use]
    pub fn sampler_desc(&self) -> &StaticSamplerDesc {
        &self.sampler_desc
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

    /// The light's default kernel.
    #[must_use]
    pub fn kernel(&self) -> PcfKernel {
        self.kernel
    }

    /// Which slice a point falls in (cube face by R98 for point lights, the first cascade that
    /// contains it for cascades).
    fn slice_for(&self, p: Vec3) -> Option<usize> {
        match &self.layout {
            MapLayout::Single => Some(0),
            MapLayout::Cube { position } => {
                let d = p - *position;
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

    /// The biased receiver position of `point` in the map: (slice, biased point, u, v, depth),
    /// or `None` when the point is unshadowed by definition (non-finite, behind the light,
    /// outside every cascade or outside the map's depth range).
    #[inline(always)]
    fn receiver(&self, point: Vec3, normal: Option<Vec3>) -> Option<(usize, Vec3, [f32; 3])> {
        if !point.is_finite() {
            return None;
        }
        let slice = self.slice_for(point)?;
        let mut p = point;
        if let Some(n) = normal.filter(|&n| has_normal_offset(Some(n))) {
            // Normal-offset bias: a number of texels, measured at the receiver's depth for
            // perspective maps (clip w is the view depth).
            let depth = if self.perspective {
                (self.view_proj[slice] * point.extend(1.0)).w.max(0.0)
            } else {
                1.0
            };
            p += n.normalize() * (self.bias.normal_offset * self.texel_size[slice] * depth);
        }
        // Receiver bias: towards the light, in world units.
        let towards = match self.source {
            LightSource::Direction(d) => -d,
            LightSource::Position(q) => (q - p).normalize_or_zero(),
        };
        p += towards * self.bias.receiver;
        let uvz = self.project(slice, p)?;
        (0.0..=1.0).contains(&uvz[2]).then_some((slice, p, uvz))
    }

    /// How lit `point` is by this map's light, in [0, 1]: 1 in the open, 0 in full shadow,
    /// fractions at PCF-softened edges. `normal` (the receiver's surface normal, if any) enables
    /// normal-offset bias. Points outside the map's depth range, behind the light, or outside
    /// every cascade are unshadowed (1); points outside the map's uv range take the sampler's
    /// border (OPAQUE_WHITE: lit).
    #[must_use]
    pub fn lit_fraction(&self, point: Vec3, normal: Option<Vec3>, kernel: PcfKernel) -> f32 {
        let Some((slice, p, [u, v, z])) = self.receiver(point, normal) else {
            return 1.0;
        };
        let reference = z;
        let offsets = kernel.offsets();
        let texel = 1.0 / self.resolution as f32;
        let mut sum = 0.0f32;
        for o in offsets {
            let coord = match &self.layout {
                MapLayout::Cube { position } => {
                    let dd = cube_tap(*position, slice, p, *o, texel);
                    Coord([dd.x, dd.y, dd.z, 0.0])
                }
                _ => Coord([u + o[0] * texel, v + o[1] * texel, slice as f32, 0.0]),
            };
            let args = SampleArgs {
                coord,
                lod: LodMode::Zero,
                offset: Offset::default(),
                clamp: None,
            };
            sum += self
                .sampler
                .sample_cmp(Some(&self.texture), &args, reference)
                .unwrap_or(1.0);
        }
        sum / offsets.len() as f32
    }

    /// [`ShadowMap::lit_fraction`] of many points at once, into `out` (same length), through the
    /// batched SIMD comparison path where the map allows it (2D maps and cascades; cube maps
    /// face by face, with taps whose footprint crosses a face edge on the scalar sampler).
    /// Returns exactly the bits `lit_fraction` returns for each point.
    ///
    /// # Panics
    /// If `out` is shorter than `points`.
    pub fn lit_fractions(
        &self,
        points: &[Vec3],
        normal: Option<Vec3>,
        kernel: PcfKernel,
        out: &mut [f32],
    ) {
        crate::zone!("penumbra::shadow::lit_fractions");
        crate::plot!("penumbra lit fractions per call", points.len() as f64);
        let out = &mut out[..points.len()];
        let batches = self.batches.get_or_init(|| self.build_batches());
        if let MapLayout::Cube { position } = self.layout {
            self.cube_lit_fractions(position, batches, points, normal, kernel, out);
            return;
        }
        // The tap count as a constant: loops unroll, and one tap's `sum / 1` folds away.
        match kernel.offsets() {
            [o] => self.planar_lit_fractions::<1>(batches, points, normal, kernel, &[*o], out),
            o if o.len() == 4 => {
                let o: &[[f32; 2]; 4] = o.try_into().expect("four taps");
                self.planar_lit_fractions(batches, points, normal, kernel, o, out);
            }
            o => {
                let o: &[[f32; 2]; 16] = o.try_into().expect("sixteen taps");
                self.planar_lit_fractions(batches, points, normal, kernel, o, out);
            }
        }
    }

    /// [`ShadowMap::lit_fractions`] on 2D maps and cascades, for kernels of `TAPS` taps.
    fn planar_lit_fractions<const TAPS: usize>(
        &self,
        batches: &[Option<CmpBatch>],
        points: &[Vec3],
        normal: Option<Vec3>,
        kernel: PcfKernel,
        offsets: &[[f32; 2]; TAPS],
        out: &mut [f32],
    ) {
        let taps = TAPS;
        let texel = 1.0 / self.resolution as f32;
        // Points per round: enough lookups per batch run for the kernels' prefetching and to
        // amortize the call, few enough for the scratch to stay in L1/L2.
        const CHUNK: usize = 1024;
        let cap = points.len().min(CHUNK);
        // Per slice: the taps of the points that fall in it, point-major (tap `j` of the
        // slice's `i`-th point at `i·taps + j`), and which point each came from.
        let mut lists: Vec<SliceTaps> = batches
            .iter()
            .map(|b| SliceTaps::with_capacity(if b.is_some() { cap } else { 0 }, taps))
            .collect();
        let mut res = vec![0.0f32; cap * taps];
        // One orthographic map lit from a direction, no normal offset (a sun): the receiver
        // bias is one constant shift and the projection one matrix.
        let fast = match (&self.layout, self.source, has_normal_offset(normal)) {
            (MapLayout::Single, LightSource::Direction(d), false) => {
                Some((-d * self.bias.receiver, self.view_proj[0].to_cols_array()))
            }
            _ => None,
        };
        for (chunk_index, chunk) in points.chunks(CHUNK).enumerate() {
            let out = &mut out[chunk_index * CHUNK..][..chunk.len()];
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
                        .filter(|uvz| (0.0..=1.0).contains(&uvz[2]))
                        .map(|uvz| (0, p, uvz)),
                    None => self.receiver(p, normal),
                };
                match receiver {
                    None => out[k] = 1.0,
                    Some((slice, _, [u, v, z]))
                        if batches.get(slice).is_some_and(Option::is_some) =>
                    {
                        let list = &mut lists[slice];
                        let at = list.points * taps;
                        list.owner[list.points] = k;
                        list.points += 1;
                        let uv: &mut [[f32; 2]; TAPS] =
                            (&mut list.uv[at..at + TAPS]).try_into().expect("TAPS");
                        for (c, o) in uv.iter_mut().zip(offsets) {
                            // The coordinates `lit_fraction` gives the sampler, to the bit.
                            *c = [u + o[0] * texel, v + o[1] * texel];
                        }
                        list.refs[at..at + TAPS].fill(z);
                    }
                    Some(_) => out[k] = self.lit_fraction(p, normal, kernel),
                }
            }
            for (list, batch) in lists.iter().zip(batches) {
                let Some(batch) = batch else { continue };
                if list.points == 0 {
                    continue;
                }
                let n = list.points * taps;
                let res = &mut res[..n];
                if batch.run(&list.uv[..n], &list.refs[..n], res).is_err() {
                    res.fill(1.0);
                }
                for (&k, results) in list.owner[..list.points]
                    .iter()
                    .zip(res.as_chunks::<TAPS>().0)
                {
                    // Summed in tap order, like `lit_fraction`.
                    let sum = results.iter().fold(0.0f32, |s, &r| s + r);
                    out[k] = sum / TAPS as f32;
                }
            }
        }
    }

    /// The batched comparison path per slice (2D maps and cascades), or per face of a cube map
    /// (each face as a 2D texture of its own); `None` where the kernels cannot take it.
    fn build_batches(&self) -> Vec<Option<CmpBatch>> {
        match self.layout {
            MapLayout::Cube { .. } => (0..6)
                .map(|face| {
                    let desc = TextureDesc::new(
                        Dimension::Texture2D,
                        self.texture.format(),
                        [self.resolution, self.resolution, 1],
                        1,
                    );
                    let face =
                        Texture::from_subresources(desc, &[self.texture.subresource(0, face)])
                            .ok()?;
                    let batch = self.sampler.cmp_level_zero_batch(&face, 0).ok()?;
                    (batch.path() == BatchPath::Kernel).then_some(batch)
                })
                .collect(),
            _ => (0..self.view_proj.len() as u32)
                .map(|s| self.sampler.cmp_level_zero_batch(&self.texture, s).ok())
                .collect(),
        }
    }

    /// [`ShadowMap::lit_fractions`] on a cube map. Inside one face, R100's seamless filtering is
    /// plain 2D bilinear filtering of that face (R99's face coordinates, R27's taps), so a tap
    /// whose whole 2×2 footprint lies inside a face goes to that face's batch; taps whose
    /// footprint reaches across an edge or a corner (R102–R104) go through the scalar sampler.
    fn cube_lit_fractions(
        &self,
        position: Vec3,
        batches: &[Option<CmpBatch>],
        points: &[Vec3],
        normal: Option<Vec3>,
        kernel: PcfKernel,
        out: &mut [f32],
    ) {
        const CHUNK: usize = 256;
        let offsets = kernel.offsets();
        let taps = offsets.len();
        let texel = 1.0 / self.resolution as f32;
        let size = self.resolution as f32;
        // First-tap indices whose 2×2 footprint stays inside the face.
        let inside = 0..=i64::from(self.resolution) - 2;
        let mut uv: [Vec<[f32; 2]>; 6] = Default::default();
        let mut refs: [Vec<f32>; 6] = Default::default();
        let mut slots: [Vec<usize>; 6] = Default::default();
        let mut res = Vec::with_capacity(CHUNK * taps);
        let mut face_res = Vec::new();
        for (chunk_index, chunk) in points.chunks(CHUNK).enumerate() {
            let out = &mut out[chunk_index * CHUNK..][..chunk.len()];
            res.clear();
            res.resize(chunk.len() * taps, 1.0f32);
            for face in 0..6 {
                uv[face].clear();
                refs[face].clear();
                slots[face].clear();
            }
            let mut live = [false; CHUNK];
            for (k, &point) in chunk.iter().enumerate() {
                let Some((slice, p, [_, _, z])) = self.receiver(point, normal) else {
                    out[k] = 1.0;
                    continue;
                };
                live[k] = true;
                for (j, &o) in offsets.iter().enumerate() {
                    let dd = cube_tap(position, slice, p, o, texel);
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
                        && batches.get(face).is_some_and(Option::is_some);
                    if batched {
                        uv[face].push([fc.s, fc.t]);
                        refs[face].push(z);
                        slots[face].push(k * taps + j);
                    } else {
                        let args = SampleArgs {
                            coord,
                            lod: LodMode::Zero,
                            offset: Offset::default(),
                            clamp: None,
                        };
                        res[k * taps + j] = self
                            .sampler
                            .sample_cmp(Some(&self.texture), &args, z)
                            .unwrap_or(1.0);
                    }
                }
            }
            for (face, batch) in batches.iter().enumerate() {
                let Some(batch) = batch else { continue };
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
                    // Summed in tap order, like `lit_fraction`.
                    let sum = res[k * taps..][..taps].iter().fold(0.0f32, |s, &r| s + r);
                    *o = sum / taps as f32;
                }
            }
        }
    }
}

/// The lookups of one slice in a round of `lit_fractions` (sized once, filled by index).
struct SliceTaps {
    uv: Vec<[f32; 2]>,
    refs: Vec<f32>,
    /// The point (index in the round) of each group of `taps` lookups.
    owner: Vec<usize>,
    /// Points filled so far.
    points: usize,
}

impl SliceTaps {
    fn with_capacity(points: usize, taps: usize) -> Self {
        SliceTaps {
            uv: vec![[0.0; 2]; points * taps],
            refs: vec![0.0; points * taps],
            owner: vec![0; points],
            points: 0,
        }
    }

    fn clear(&mut self) {
        self.points = 0;
    }
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
fn project_cols(m: &[f32; 16], p: Vec3) -> Option<[f32; 3]> {
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
fn cube_tap(position: Vec3, face: usize, p: Vec3, o: [f32; 2], texel: f32) -> Vec3 {
    let d = p - position;
    let (right, up) = crate::sample::cube_face_axes(face as u32);
    let m = d.abs().max_element();
    d + (right * o[0] - up * o[1]) * (2.0 * texel * m)
}

/// Sum over lights of intensity × falloff × cone × lit fraction at `point` — how exposed a point
/// (the player) is to all the lights of a level.
#[must_use]
pub fn exposure(lights: &[(Light, ShadowMap)], point: Vec3, normal: Option<Vec3>) -> f32 {
    crate::zone!("penumbra::shadow::exposure");
    lights
        .iter()
        .map(|(light, map)| {
            let unshadowed = light.unshadowed(point);
            if unshadowed == 0.0 {
                0.0
            } else {
                unshadowed * map.lit_fraction(point, normal, light.kernel)
            }
        })
        .sum()
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
