//! Indexed triangle meshes, validated once so that rasterization never checks an index again.

use std::sync::{Arc, OnceLock};

use glam::Vec3;

use super::RasterError;
use super::index::MeshIndex;

/// An indexed triangle list: every three indices make one triangle.
///
/// A `Mesh` is validated when it is built ([`Mesh::new`]): the index count is a multiple of three
/// and every index names a position. Positions may hold any values — NaN, infinite or huge ones
/// only make the triangles that use them disappear at rasterization.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    positions: Vec<Vec3>,
    indices: Vec<u32>,
    /// The hierarchy over the triangles for tile-by-tile drawing, built on first need and
    /// shared by clones.
    index: OnceLock<Arc<MeshIndex>>,
}

impl PartialEq for Mesh {
    /// Meshes are equal when their positions and indices are.
    fn eq(&self, other: &Mesh) -> bool {
        self.positions == other.positions && self.indices == other.indices
    }
}

impl Mesh {
    /// A mesh from positions and a triangle list of indices into them.
    ///
    /// # Errors
    /// [`RasterError::IndexCount`] when `indices.len()` is not a multiple of three,
    /// [`RasterError::IndexOutOfRange`] for the first index that does not name a position.
    pub fn new(positions: Vec<Vec3>, indices: Vec<u32>) -> Result<Mesh, RasterError> {
        crate::zone!("penumbra::raster::Mesh::new");
        if !indices.len().is_multiple_of(3) {
            return Err(RasterError::IndexCount { len: indices.len() });
        }
        let count = positions.len();
        if let Some((at, &index)) = indices
            .iter()
            .enumerate()
            .find(|&(_, &i)| i as usize >= count)
        {
            return Err(RasterError::IndexOutOfRange {
                at,
                index,
                vertex_count: count,
            });
        }
        Ok(Mesh {
            positions,
            indices,
            index: OnceLock::new(),
        })
    }

    /// The axis-aligned box spanned by `min` and `max` (the corners are sorted per axis first):
    /// 8 positions and 12 triangles, two per face.
    ///
    /// Every triangle `(a, b, c)` is wound so that `(b − a) × (c − a)` points out of the box.
    /// Seen from outside through a left-handed view and projection (`glam::camera::lh`, D3D's
    /// own convention) the outer faces are therefore clockwise on
    /// screen, i.e. front faces under the default [`RasterState`](super::RasterState); with
    /// right-handed matrices they are counter-clockwise: set `front_counter_clockwise`.
    #[must_use]
    pub fn cuboid(min: Vec3, max: Vec3) -> Mesh {
        crate::zone!("penumbra::raster::Mesh::cuboid");
        let (lo, hi) = (min.min(max), min.max(max));
        // Corner k has bit a set when its coordinate on axis a is the maximum.
        let positions = (0..8u32)
            .map(|k| {
                Vec3::new(
                    if k & 1 != 0 { hi.x } else { lo.x },
                    if k & 2 != 0 { hi.y } else { lo.y },
                    if k & 4 != 0 { hi.z } else { lo.z },
                )
            })
            .collect();
        let mut indices = Vec::with_capacity(36);
        for axis in 0..3 {
            // (axis, u, v) is a cyclic permutation of (x, y, z), so e_u × e_v = e_axis.
            let (u, v) = (1u32 << ((axis + 1) % 3), 1u32 << ((axis + 2) % 3));
            for side in [0u32, 1] {
                let base = side << axis;
                // Walking base → +u → +u+v → +v turns around +e_axis; reverse it on the min side.
                let quad = if side == 1 {
                    [base, base | u, base | u | v, base | v]
                } else {
                    [base, base | v, base | u | v, base | u]
                };
                indices.extend_from_slice(&[quad[0], quad[1], quad[2], quad[0], quad[2], quad[3]]);
            }
        }
        Mesh {
            positions,
            indices,
            index: OnceLock::new(),
        }
    }

    /// The positions.
    #[must_use]
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// The indices, three per triangle.
    #[must_use]
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The triangle hierarchy (built on first use: O(n log n)).
    pub(crate) fn index(&self) -> &MeshIndex {
        self.index.get_or_init(|| Arc::new(MeshIndex::new(self)))
    }

    /// Asks for the first records a walk of the mesh reads (its hierarchy's top nodes, the
    /// first vertices and indices) to be brought into the cache: a hint, for a caller about
    /// to draw it.
    #[inline]
    pub(crate) fn prefetch(&self) {
        const AHEAD: usize = 256;
        let bytes = |n: usize, size: usize| (n * size).min(AHEAD);
        crate::cpu::prefetch_range(
            self.positions.as_ptr().cast(),
            bytes(self.positions.len(), std::mem::size_of::<Vec3>()),
        );
        crate::cpu::prefetch_range(self.indices.as_ptr().cast(), bytes(self.indices.len(), 4));
        if let Some(index) = self.index.get() {
            index.prefetch(AHEAD);
        }
    }

    /// Number of triangles (`indices().len() / 3`).
    #[must_use]
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// The axis-aligned bounds `(min, max)` of all positions (NaN components are ignored), or
    /// `None` for a mesh without positions.
    #[must_use]
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let first = *self.positions.first()?;
        Some(
            self.positions
                .iter()
                .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))),
        )
    }
}
