//! Where a map's texels live and what one query reads: the whole texture or the drawn tiles,
//! and the batched comparison paths built from them.

use std::sync::{Arc, RwLockReadGuard};

use glam::Vec3;

use super::{MapLayout, ShadowMap, Store};
use crate::sample::Coord;
use crate::sample::batch::{BatchPath, CmpBatch};
use crate::shadow::tiles::{Needs, Resident, Tiled};
use crate::texture::{Dimension, Texture, TextureDesc};

/// What one query reads, with the tiles it needs drawn.
pub(super) enum Reader<'a> {
    Full(&'a Texture, &'a [Option<CmpBatch>]),
    Tiled(RwLockReadGuard<'a, Resident>),
}

impl Reader<'_> {
    pub(super) fn texture(&self) -> &Texture {
        match self {
            Reader::Full(t, _) => t,
            Reader::Tiled(r) => &r.texture,
        }
    }

    pub(super) fn batch(&self, slice: usize) -> Option<&CmpBatch> {
        match self {
            Reader::Full(_, b) => b.get(slice)?.as_ref(),
            Reader::Tiled(r) => r.batches.get(slice)?.as_ref(),
        }
    }
}

impl ShadowMap {
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

    /// Rows of tiles drawn now: a tile is drawn on the rows of texels that queries read
    /// (`None` for a map drawn whole). In a scene that did not change since the map was made,
    /// [`TileStats::rows_rendered`](crate::shadow::TileStats::rows_rendered) of
    /// [`ShadowMap::tile_stats`] equals it (no row is drawn twice) until the whole texture is
    /// asked for ([`ShadowMap::texture`] draws again the tiles drawn without their texels).
    #[must_use]
    pub fn tile_rows_drawn(&self) -> Option<u64> {
        self.tiled().map(|t| t.drawn_tiles().tile_rows())
    }

    /// Which rows of which tiles are drawn now: for a map drawn tile by tile, the work the
    /// queries so far made; for a map drawn whole, every row of every tile.
    /// [`picture::drawn_picture`](crate::picture::drawn_picture) draws it.
    #[must_use]
    pub fn drawn_tiles(&self) -> crate::shadow::DrawnTiles {
        match self.tiled() {
            Some(t) => t.drawn_tiles(),
            None => {
                crate::shadow::DrawnTiles::whole(self.resolution(), self.view_proj.len() as u32)
            }
        }
    }

    /// This map's tile work since it was made: tiles drawn (again after being forgotten),
    /// tiles forgotten because an occluder change covered them, and the time spent (`None` for
    /// a map drawn whole).
    #[must_use]
    pub fn tile_stats(&self) -> Option<crate::shadow::TileStats> {
        self.tiled().map(Tiled::stats)
    }

    /// The texels for a scalar query whose taps `fill` marks (a tiled map draws them first).
    pub(super) fn scalar_reader(&self, fill: impl FnOnce(&Tiled, &mut Needs)) -> Reader<'_> {
        match &self.store {
            Store::Full { texture, .. } => Reader::Full(texture, &[]),
            Store::Tiled(t) => {
                let mut needs = t.needs();
                fill(t, &mut needs);
                Reader::Tiled(t.read_with(&needs, true))
            }
        }
    }

    /// The batched paths for a batched query whose taps `fill` marks, and the texels too when
    /// `texels` (some of its lookups take the scalar sampler).
    pub(super) fn batch_reader(
        &self,
        texels: bool,
        fill: impl FnOnce(&Tiled, &mut Needs),
    ) -> Reader<'_> {
        match &self.store {
            Store::Full { texture, batches } => {
                Reader::Full(texture, batches.get_or_init(|| self.build_batches(texture)))
            }
            Store::Tiled(t) => {
                let mut needs = t.needs();
                fill(t, &mut needs);
                Reader::Tiled(t.read_with(&needs, texels))
            }
        }
    }

    /// Which slices have a batched path.
    pub(super) fn batched_slices(&self) -> Vec<bool> {
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
    pub(super) fn need_coord(&self, t: &Tiled, needs: &mut Needs, coord: &Coord) {
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
}
