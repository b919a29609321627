//! `Gather*` and `GatherCmp*` (R120): the four texels of the bilinear footprint, or their
//! per-tap comparisons.

use super::address::{self, Addressed};
use super::combine::{Border, Combiner, Reduce};
use super::{Coord, Offset, SampleError, Sampler, accum, cube};
use crate::format::{CompareRef, Format};
use crate::texture::{Dimension, Texture};

impl Sampler {
    /// `Gather*` / `gather4`: the four texels of the bilinear footprint on view mip 0, component
    /// `component` of each, in the order (i0,j1), (i1,j1), (i1,j0), (i0,j0) (R120).
    pub fn gather(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        component: u32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.check_kind("gather4", false)?;
        if component > 3 {
            return Err(SampleError::GatherComponent(component));
        }
        let Some(tex) = tex else { return Ok([0.0; 4]) };
        self.gather_impl(tex, coord.into(), offset.into(), None, component as usize)
    }

    /// `GatherCmp*` / `gather4_c`: the four per-tap comparison results (R120, R79, R82).
    pub fn gather_cmp(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.check_kind("gather4_c", true)?;
        let Some(tex) = tex else { return Ok([0.0; 4]) };
        self.check_compare_target("gather4_c", tex)?;
        self.gather_impl(tex, coord.into(), offset.into(), Some(reference), 0)
    }

    fn gather_impl(
        &self,
        tex: &Texture,
        coord: Coord,
        offset: Offset,
        reference: Option<f32>,
        component: usize,
    ) -> Result<[f32; 4], SampleError> {
        let coord = coord.flushed();
        let dim = tex.dimension();
        if !matches!(
            dim,
            Dimension::Texture2D
                | Dimension::Texture2DArray
                | Dimension::TextureCube
                | Dimension::TextureCubeArray
        ) {
            return Err(SampleError::Dimension {
                op: if reference.is_some() {
                    "gather4_c"
                } else {
                    "gather4"
                },
                dimension: dim,
                rule: "R120; D3D11.3 FS 22.4.2",
            });
        }
        self.check_non_normalized(tex)?;
        let offset = self.check_offset(tex, offset)?;
        let src = Self::source(tex, &coord);
        let format = src.format;
        let border = Border::new(self.desc.border_color, format);
        let cmp = reference.map(|r| (self.desc.comparison_func, format.quantize_reference(r)));
        let view = tex.view();
        // R120 + R62: a resource clamp that removes view mip 0 gives the out-of-bounds value.
        if view.resource_min_lod_clamp - view.most_detailed_mip as f32 > 0.0 {
            let oob = match cmp {
                Some((func, r)) => Self::out_of_bounds(format, Reduce::Compare(func, r)),
                None => {
                    let v = if component < format.channels() {
                        0.0
                    } else if component == 3 {
                        1.0
                    } else {
                        0.0
                    };
                    [v; 4]
                }
            };
            return Ok(oob);
        }
        // The four taps in D3D order: (i0,j1), (i1,j1), (i1,j0), (i0,j0).
        let taps: [Tap<'_>; 4] = if dim.is_cube() {
            cube::gather_taps(&src, &coord)
        } else {
            let mip = view.most_detailed_mip;
            let size = tex.level_size(mip);
            let params = self.axis_params(size, 2, offset);
            let fu = params[0].linear_position(coord.0[0]);
            let fv = params[1].linear_position(coord.0[1]);
            let (i0, j0) = (fu >> 8, fv >> 8);
            let data = tex.subresource(mip, src.slice);
            let bpt = format.bytes_per_texel();
            let tap = |i: i64, j: i64| match (
                address::address(i, size[0], params[0].mode),
                address::address(j, size[1], params[1].mode),
            ) {
                (Addressed::Texel(x), Addressed::Texel(y)) => {
                    let at = (y as usize * size[0] as usize + x as usize) * bpt;
                    Tap::Texel(&data[at..at + bpt])
                }
                _ => Tap::Border,
            };
            [
                tap(i0, j0 + 1),
                tap(i0 + 1, j0 + 1),
                tap(i0 + 1, j0),
                tap(i0, j0),
            ]
        };
        Ok(taps.map(|t| t.gather_value(format, &border, cmp, component)))
    }
}

/// One gather tap.
#[derive(Clone, Copy)]
pub(super) enum Tap<'a> {
    Texel(&'a [u8]),
    Border,
    /// A cube corner: the average of the three real texels (R120, FS 22.4.2).
    Corner([&'a [u8]; 3]),
}

impl Tap<'_> {
    fn gather_value(
        &self,
        format: Format,
        border: &Border,
        cmp: Option<(crate::desc::ComparisonFunc, CompareRef)>,
        c: usize,
    ) -> f32 {
        let one = |t: &[u8]| -> f32 {
            match cmp {
                Some((func, r)) => f32::from(u8::from(Combiner::compare_texel(format, func, r, t))),
                None if c < format.channels() => {
                    format.decode_component_raw(format.raw_component(t, c))
                }
                None => {
                    if c == 3 {
                        1.0
                    } else {
                        0.0
                    }
                }
            }
        };
        match self {
            Tap::Texel(t) => one(t),
            Tap::Border => match cmp {
                Some((func, r)) => f32::from(u8::from(Combiner::compare_border(border, func, r))),
                None => border.rgba[c],
            },
            // R103, R120: the average of the three real texels, rounded once.
            Tap::Corner(ts) => accum::third_of_sum(ts.map(one)),
        }
    }
}
