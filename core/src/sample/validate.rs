//! Validation of a call against the sampler and the texture: the sampler kind (R17), immediate
//! offsets (R40, R41), NON_NORMALIZED_COORDINATES (R18) and comparison targets (R77).

use super::{Offset, SampleError, Sampler};
use crate::desc::{ReductionType, SamplerFlags};
use crate::texture::{Dimension, Texture};

impl Sampler {
    pub(super) fn check_kind(&self, op: &'static str, comparison: bool) -> Result<(), SampleError> {
        let is_cmp = self.desc.filter.reduction() == ReductionType::Comparison;
        if is_cmp != comparison {
            return Err(SampleError::SamplerKind {
                op,
                filter: self.desc.filter,
                needed: if comparison {
                    "COMPARISON"
                } else {
                    "non-comparison"
                },
            });
        }
        Ok(())
    }

    pub(super) fn check_offset(
        &self,
        tex: &Texture,
        offset: Offset,
    ) -> Result<[i64; 3], SampleError> {
        let dim = tex.dimension();
        let axes = dim.axes();
        let mut out = [0i64; 3];
        if dim.is_cube() {
            if offset.0 != [0; 3] {
                return Err(SampleError::OffsetOnCube {
                    offset: offset.0,
                    dimension: dim,
                });
            }
            return Ok(out);
        }
        for (axis, (out, &o)) in out.iter_mut().zip(&offset.0).take(axes).enumerate() {
            *out = if self.options.lenient_offsets {
                i64::from((o << 28) >> 28)
            } else if (-8..=7).contains(&o) {
                i64::from(o)
            } else {
                return Err(SampleError::OffsetRange { axis, value: o });
            };
        }
        if self.non_normalized() && out != [0; 3] {
            return Err(SampleError::NonNormalized("offsets are not allowed".into()));
        }
        Ok(out)
    }

    #[inline]
    pub(super) fn non_normalized(&self) -> bool {
        self.desc
            .flags
            .contains(SamplerFlags::NON_NORMALIZED_COORDINATES)
    }

    pub(super) fn check_non_normalized(&self, tex: &Texture) -> Result<(), SampleError> {
        if !self.non_normalized() {
            return Ok(());
        }
        let dim = tex.dimension();
        if !matches!(dim, Dimension::Texture1D | Dimension::Texture2D) {
            return Err(SampleError::NonNormalized(format!(
                "the view must be Texture1D or Texture2D, not {dim}"
            )));
        }
        if tex.view().mip_count != 1 {
            return Err(SampleError::NonNormalized(format!(
                "the view must have exactly 1 mip, not {}",
                tex.view().mip_count
            )));
        }
        Ok(())
    }

    pub(super) fn check_compare_target(
        &self,
        op: &'static str,
        tex: &Texture,
    ) -> Result<(), SampleError> {
        let dim = tex.dimension();
        if dim == Dimension::Texture3D {
            return Err(SampleError::Dimension {
                op,
                dimension: dim,
                rule: "R77; D3D11.3 FS 22.4.19",
            });
        }
        let format = tex.format();
        if !format.supports_comparison() && !self.options.extended_comparison_formats {
            return Err(SampleError::ComparisonFormat { format });
        }
        Ok(())
    }
}
