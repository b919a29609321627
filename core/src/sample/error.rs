//! What a sampling call refuses (SPEC R109), and the one policy for an error that validation
//! has already ruled out.

use crate::desc::Filter;
use crate::format::Format;
use crate::texture::Dimension;

/// Errors of a sampling call: a pairing or argument that D3D leaves undefined (SPEC R109), which
/// penumbra refuses instead of guessing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// R17: comparison ops need a COMPARISON filter, the others a non-comparison one.
    #[error("{op} needs a {needed} sampler, but Filter is {filter} (SPEC R17; D3D11.3 FS 22.3.34)")]
    SamplerKind {
        /// The operation.
        op: &'static str,
        /// The sampler's filter.
        filter: Filter,
        /// "COMPARISON" or "non-comparison".
        needed: &'static str,
    },
    /// R40: offsets are undefined on cubes.
    #[error(
        "offset {offset:?} on a {dimension} texture: offsets are not allowed on cubes (SPEC R40; D3D11.3 FS 22.4.15)"
    )]
    OffsetOnCube {
        /// The offset given.
        offset: [i32; 3],
        /// The texture's dimension.
        dimension: Dimension,
    },
    /// R41: an immediate offset outside [−8, 7].
    #[error("offset {value} on axis {axis} is outside [-8, 7] (SPEC R41; D3D11.3 FS 22.4.15)")]
    OffsetRange {
        /// 0 = u, 1 = v, 2 = w.
        axis: usize,
        /// The value.
        value: i32,
    },
    /// The operation does not exist for this dimension (R77 for comparisons on 3D, R120 gathers).
    #[error("{op} is not defined on {dimension} textures (SPEC {rule})")]
    Dimension {
        /// The operation.
        op: &'static str,
        /// The texture's dimension.
        dimension: Dimension,
        /// The rule.
        rule: &'static str,
    },
    /// R77: a comparison on a format D3D does not require to support it.
    #[error(
        "comparison sampling of {format} is not required by D3D (SPEC R77; FL11 \"Shader sample_c\"); enable SamplerOptions::extended_comparison_formats for the [EXT] behaviour of R86"
    )]
    ComparisonFormat {
        /// The texture's format.
        format: Format,
    },
    /// R120: the gather component must be 0..=3.
    #[error("gather component {0} is not one of 0 (R), 1 (G), 2 (B), 3 (A) (SPEC R120)")]
    GatherComponent(u32),
    /// R18: a constraint of NON_NORMALIZED_COORDINATES on the view or the call.
    #[error("NON_NORMALIZED_COORDINATES: {0} (SPEC R18; VulkanOn12)")]
    NonNormalized(String),
}

/// The one policy for an error that validation has already ruled out (a sampler and texture
/// checked when a shadow map or a batch was built, arguments built by the caller itself): never a
/// panic in a game. `debug_assert!` makes the broken invariant fail every test; a release build
/// returns `fallback`, which each caller names (a shadow map: 1.0, nothing in the way; a batch:
/// 0.0, the answer of an empty slot, R88/R107).
#[inline]
pub(crate) fn validated<T: std::fmt::Debug>(r: Result<T, SampleError>, fallback: T) -> T {
    debug_assert!(r.is_ok(), "an error validation ruled out: {r:?}");
    r.unwrap_or(fallback)
}
