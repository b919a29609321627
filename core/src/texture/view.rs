//! Shader-resource views: which mips and slices of a texture sampling sees, and their validation
//! against the resource.

use std::sync::Arc;

use super::{Dimension, Texture, TextureError};

/// A shader-resource view (SRV) of a texture: which mips and slices sampling sees (SPEC §1.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureView {
    /// The resource mip that is view LOD 0 (`MostDetailedMip`).
    pub most_detailed_mip: u32,
    /// Number of mips in the view; `None` means all from `most_detailed_mip` on (D3D12's −1).
    pub mip_levels: Option<u32>,
    /// First 2D slice of the view (`FirstArraySlice`, or `First2DArrayFace` for cube arrays).
    pub first_array_slice: u32,
    /// Number of array elements: slices for 1D/2D arrays, cubes for cube arrays; `None` = all
    /// from `first_array_slice` on.
    pub array_size: Option<u32>,
    /// `ResourceMinLODClamp`, in resource mip space (R58).
    pub resource_min_lod_clamp: f32,
}

impl Default for TextureView {
    fn default() -> Self {
        TextureView {
            most_detailed_mip: 0,
            mip_levels: None,
            first_array_slice: 0,
            array_size: None,
            resource_min_lod_clamp: 0.0,
        }
    }
}

/// A view after validation against its texture: every count resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResolvedView {
    /// The resource mip that is view LOD 0.
    pub most_detailed_mip: u32,
    /// Number of mips in the view (≥ 1).
    pub mip_count: u32,
    /// First 2D slice.
    pub first_slice: u32,
    /// Number of array elements (slices, or cubes for cube dimensions).
    pub element_count: u32,
    /// `ResourceMinLODClamp` (resource mip space).
    pub resource_min_lod_clamp: f32,
}

impl Texture {
    /// The same storage seen through another view (validated against the resource).
    pub fn with_view(&self, view: TextureView) -> Result<Texture, TextureError> {
        let desc = &self.storage.desc;
        let bad = |field: &'static str, value: String, reason: String| {
            Err(TextureError::InvalidView {
                field,
                value,
                reason,
            })
        };
        if view.most_detailed_mip >= desc.mip_levels {
            return bad(
                "most_detailed_mip",
                view.most_detailed_mip.to_string(),
                format!("the texture has {} mips", desc.mip_levels),
            );
        }
        let left = desc.mip_levels - view.most_detailed_mip;
        let mip_count = view.mip_levels.unwrap_or(left);
        if mip_count == 0 || mip_count > left {
            return bad(
                "mip_levels",
                mip_count.to_string(),
                format!("must be in 1..={left} from mip {}", view.most_detailed_mip),
            );
        }
        if view.resource_min_lod_clamp.is_nan() {
            return bad(
                "resource_min_lod_clamp",
                "NaN".into(),
                "must be a number".into(),
            );
        }
        let per = if desc.dimension.is_cube() { 6 } else { 1 };
        if view.first_array_slice >= desc.array_size
            || (desc.dimension == Dimension::TextureCube && view.first_array_slice != 0)
        {
            return bad(
                "first_array_slice",
                view.first_array_slice.to_string(),
                format!("the texture has {} slices", desc.array_size),
            );
        }
        let slices_left = desc.array_size - view.first_array_slice;
        let element_count = view.array_size.unwrap_or(slices_left / per);
        if element_count == 0 || element_count * per > slices_left {
            return bad(
                "array_size",
                element_count.to_string(),
                format!(
                    "only {} {} remain from slice {}",
                    slices_left / per,
                    if per == 6 { "cubes" } else { "slices" },
                    view.first_array_slice
                ),
            );
        }
        if !desc.dimension.is_array() && element_count != 1 {
            return bad(
                "array_size",
                element_count.to_string(),
                format!("a {} view has one element", desc.dimension),
            );
        }
        Ok(Texture {
            storage: Arc::clone(&self.storage),
            view: ResolvedView {
                most_detailed_mip: view.most_detailed_mip,
                mip_count,
                first_slice: view.first_array_slice,
                element_count,
                resource_min_lod_clamp: view.resource_min_lod_clamp,
            },
        })
    }
}
