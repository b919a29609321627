//! `D3D12_FILTER`: the 40 enumerated filters (SPEC R7, R20), their bit fields (R19) and the
//! d3d12.h encode/decode macros on raw values ([`raw`]).
//!
//! Bit layout (d3d12.h, D3D11.3 FS 7.18.3): bits 1:0 mip type, 3:2 mag type, 5:4 min type
//! (0 point, 1 linear), bit 6 anisotropic, bits 8:7 reduction.

use super::enums::d3d_enum;

/// A min/mag/mip filter type, `D3D12_FILTER_TYPE` (d3d12.h). Values 2 and 3 do not exist (R7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FilterType {
    /// Nearest texel / nearest mip.
    Point = 0,
    /// Linear interpolation.
    Linear = 1,
}

impl FilterType {
    /// The raw D3D12 value.
    #[inline]
    #[must_use]
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// How the taps of a filter are combined, `D3D12_FILTER_REDUCTION_TYPE` (d3d12.h; R21).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReductionType {
    /// Weighted average of the texels.
    Standard = 0,
    /// Weighted average of per-tap comparison results (R79, R80).
    Comparison = 1,
    /// Component-wise minimum of the taps with non-zero weight (R21).
    Minimum = 2,
    /// Component-wise maximum of the taps with non-zero weight (R21).
    Maximum = 3,
}

impl ReductionType {
    /// The raw D3D12 value.
    #[inline]
    #[must_use]
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// All four, in raw-value order.
    pub const ALL: [Self; 4] = [
        Self::Standard,
        Self::Comparison,
        Self::Minimum,
        Self::Maximum,
    ];
}

d3d_enum! {
    /// `D3D12_FILTER`: one of the 40 enumerated values (SPEC R20; d3d12.h, D3D11.3 FS 7.18.3).
    /// Any other bit pattern is rejected by [`Filter::from_raw`] (R7).
    ///
    /// ```
    /// use penumbra_core::{Filter, FilterType, ReductionType};
    /// let f: Filter = "D3D12_FILTER_COMPARISON_MIN_MAG_LINEAR_MIP_POINT".parse().unwrap();
    /// assert_eq!(f.raw(), 148);
    /// assert!(f.is_comparison());
    /// assert_eq!(f.mip_filter(), FilterType::Point);
    /// assert_eq!(Filter::encode_anisotropic(ReductionType::Maximum).raw(), 469);
    /// assert!(Filter::from_raw(0x40).is_err()); // aniso bit without min = mag = LINEAR
    /// ```
    pub enum Filter = "D3D12_FILTER" {
        prefix: "D3D12_FILTER_",
        field: "Filter",
        rule: "R7",
        cite: "d3d12.h D3D12_FILTER; DXC root-signature validator",
        expected: Some(
            "one of the 40 D3D12_FILTER names (optionally prefixed D3D12_FILTER_), e.g. \
             MIN_MAG_MIP_LINEAR, COMPARISON_MIN_MAG_LINEAR_MIP_POINT, or its number"
        ),
    }
    {
        /// Point sampling for minification, magnification and mip selection.
        MinMagMipPoint = 0x000 => "MIN_MAG_MIP_POINT",
        /// Point minification and magnification, linear between mips.
        MinMagPointMipLinear = 0x001 => "MIN_MAG_POINT_MIP_LINEAR",
        /// Point minification, linear magnification, nearest mip.
        MinPointMagLinearMipPoint = 0x004 => "MIN_POINT_MAG_LINEAR_MIP_POINT",
        /// Point minification, linear magnification and mips.
        MinPointMagMipLinear = 0x005 => "MIN_POINT_MAG_MIP_LINEAR",
        /// Linear minification, point magnification, nearest mip.
        MinLinearMagMipPoint = 0x010 => "MIN_LINEAR_MAG_MIP_POINT",
        /// Linear minification, point magnification, linear between mips.
        MinLinearMagPointMipLinear = 0x011 => "MIN_LINEAR_MAG_POINT_MIP_LINEAR",
        /// Bilinear within a level, nearest mip.
        MinMagLinearMipPoint = 0x014 => "MIN_MAG_LINEAR_MIP_POINT",
        /// Trilinear.
        MinMagMipLinear = 0x015 => "MIN_MAG_MIP_LINEAR",
        /// Anisotropic within a level, nearest mip (R7: needs `AnisoFilterWithPointMipSupported`, which penumbra reports).
        MinMagAnisotropicMipPoint = 0x054 => "MIN_MAG_ANISOTROPIC_MIP_POINT",
        /// Anisotropic within a level, linear between mips.
        Anisotropic = 0x055 => "ANISOTROPIC",
        /// Point sampling for minification, magnification and mip selection. Comparison reduction (R11, R79).
        ComparisonMinMagMipPoint = 0x080 => "COMPARISON_MIN_MAG_MIP_POINT",
        /// Point minification and magnification, linear between mips. Comparison reduction (R11, R79).
        ComparisonMinMagPointMipLinear = 0x081 => "COMPARISON_MIN_MAG_POINT_MIP_LINEAR",
        /// Point minification, linear magnification, nearest mip. Comparison reduction (R11, R79).
        ComparisonMinPointMagLinearMipPoint = 0x084 => "COMPARISON_MIN_POINT_MAG_LINEAR_MIP_POINT",
        /// Point minification, linear magnification and mips. Comparison reduction (R11, R79).
        ComparisonMinPointMagMipLinear = 0x085 => "COMPARISON_MIN_POINT_MAG_MIP_LINEAR",
        /// Linear minification, point magnification, nearest mip. Comparison reduction (R11, R79).
        ComparisonMinLinearMagMipPoint = 0x090 => "COMPARISON_MIN_LINEAR_MAG_MIP_POINT",
        /// Linear minification, point magnification, linear between mips. Comparison reduction (R11, R79).
        ComparisonMinLinearMagPointMipLinear = 0x091 => "COMPARISON_MIN_LINEAR_MAG_POINT_MIP_LINEAR",
        /// Bilinear within a level, nearest mip. Comparison reduction (R11, R79).
        ComparisonMinMagLinearMipPoint = 0x094 => "COMPARISON_MIN_MAG_LINEAR_MIP_POINT",
        /// Trilinear. Comparison reduction (R11, R79).
        ComparisonMinMagMipLinear = 0x095 => "COMPARISON_MIN_MAG_MIP_LINEAR",
        /// Anisotropic within a level, nearest mip (R7: needs `AnisoFilterWithPointMipSupported`, which penumbra reports). Comparison reduction (R11, R79).
        ComparisonMinMagAnisotropicMipPoint = 0x0D4 => "COMPARISON_MIN_MAG_ANISOTROPIC_MIP_POINT",
        /// Anisotropic within a level, linear between mips. Comparison reduction (R11, R79).
        ComparisonAnisotropic = 0x0D5 => "COMPARISON_ANISOTROPIC",
        /// Point sampling for minification, magnification and mip selection. Minimum reduction (R21).
        MinimumMinMagMipPoint = 0x100 => "MINIMUM_MIN_MAG_MIP_POINT",
        /// Point minification and magnification, linear between mips. Minimum reduction (R21).
        MinimumMinMagPointMipLinear = 0x101 => "MINIMUM_MIN_MAG_POINT_MIP_LINEAR",
        /// Point minification, linear magnification, nearest mip. Minimum reduction (R21).
        MinimumMinPointMagLinearMipPoint = 0x104 => "MINIMUM_MIN_POINT_MAG_LINEAR_MIP_POINT",
        /// Point minification, linear magnification and mips. Minimum reduction (R21).
        MinimumMinPointMagMipLinear = 0x105 => "MINIMUM_MIN_POINT_MAG_MIP_LINEAR",
        /// Linear minification, point magnification, nearest mip. Minimum reduction (R21).
        MinimumMinLinearMagMipPoint = 0x110 => "MINIMUM_MIN_LINEAR_MAG_MIP_POINT",
        /// Linear minification, point magnification, linear between mips. Minimum reduction (R21).
        MinimumMinLinearMagPointMipLinear = 0x111 => "MINIMUM_MIN_LINEAR_MAG_POINT_MIP_LINEAR",
        /// Bilinear within a level, nearest mip. Minimum reduction (R21).
        MinimumMinMagLinearMipPoint = 0x114 => "MINIMUM_MIN_MAG_LINEAR_MIP_POINT",
        /// Trilinear. Minimum reduction (R21).
        MinimumMinMagMipLinear = 0x115 => "MINIMUM_MIN_MAG_MIP_LINEAR",
        /// Anisotropic within a level, nearest mip (R7: needs `AnisoFilterWithPointMipSupported`, which penumbra reports). Minimum reduction (R21).
        MinimumMinMagAnisotropicMipPoint = 0x154 => "MINIMUM_MIN_MAG_ANISOTROPIC_MIP_POINT",
        /// Anisotropic within a level, linear between mips. Minimum reduction (R21).
        MinimumAnisotropic = 0x155 => "MINIMUM_ANISOTROPIC",
        /// Point sampling for minification, magnification and mip selection. Maximum reduction (R21).
        MaximumMinMagMipPoint = 0x180 => "MAXIMUM_MIN_MAG_MIP_POINT",
        /// Point minification and magnification, linear between mips. Maximum reduction (R21).
        MaximumMinMagPointMipLinear = 0x181 => "MAXIMUM_MIN_MAG_POINT_MIP_LINEAR",
        /// Point minification, linear magnification, nearest mip. Maximum reduction (R21).
        MaximumMinPointMagLinearMipPoint = 0x184 => "MAXIMUM_MIN_POINT_MAG_LINEAR_MIP_POINT",
        /// Point minification, linear magnification and mips. Maximum reduction (R21).
        MaximumMinPointMagMipLinear = 0x185 => "MAXIMUM_MIN_POINT_MAG_MIP_LINEAR",
        /// Linear minification, point magnification, nearest mip. Maximum reduction (R21).
        MaximumMinLinearMagMipPoint = 0x190 => "MAXIMUM_MIN_LINEAR_MAG_MIP_POINT",
        /// Linear minification, point magnification, linear between mips. Maximum reduction (R21).
        MaximumMinLinearMagPointMipLinear = 0x191 => "MAXIMUM_MIN_LINEAR_MAG_POINT_MIP_LINEAR",
        /// Bilinear within a level, nearest mip. Maximum reduction (R21).
        MaximumMinMagLinearMipPoint = 0x194 => "MAXIMUM_MIN_MAG_LINEAR_MIP_POINT",
        /// Trilinear. Maximum reduction (R21).
        MaximumMinMagMipLinear = 0x195 => "MAXIMUM_MIN_MAG_MIP_LINEAR",
        /// Anisotropic within a level, nearest mip (R7: needs `AnisoFilterWithPointMipSupported`, which penumbra reports). Maximum reduction (R21).
        MaximumMinMagAnisotropicMipPoint = 0x1D4 => "MAXIMUM_MIN_MAG_ANISOTROPIC_MIP_POINT",
        /// Anisotropic within a level, linear between mips. Maximum reduction (R21).
        MaximumAnisotropic = 0x1D5 => "MAXIMUM_ANISOTROPIC",
    }
}

impl Filter {
    /// The filter type for minification (R19).
    #[inline]
    #[must_use]
    pub const fn min_filter(self) -> FilterType {
        type_of(raw::decode_min_filter(self.raw()))
    }

    /// The filter type for magnification (R19).
    #[inline]
    #[must_use]
    pub const fn mag_filter(self) -> FilterType {
        type_of(raw::decode_mag_filter(self.raw()))
    }

    /// The filter type between mip levels (R19).
    #[inline]
    #[must_use]
    pub const fn mip_filter(self) -> FilterType {
        type_of(raw::decode_mip_filter(self.raw()))
    }

    /// Whether the filter is anisotropic (0x54 or 0x55 plus a reduction; R19).
    #[inline]
    #[must_use]
    pub const fn is_anisotropic(self) -> bool {
        raw::decode_is_anisotropic_filter(self.raw())
    }

    /// The reduction type (R19).
    #[inline]
    #[must_use]
    pub const fn reduction(self) -> ReductionType {
        match raw::decode_filter_reduction(self.raw()) {
            0 => ReductionType::Standard,
            1 => ReductionType::Comparison,
            2 => ReductionType::Minimum,
            _ => ReductionType::Maximum,
        }
    }

    /// Whether this is a comparison filter, for `sample_c*` / `gather4_c*` (R11, R17).
    #[inline]
    #[must_use]
    pub const fn is_comparison(self) -> bool {
        raw::decode_is_comparison_filter(self.raw())
    }

    /// The filter with these types and reduction (`D3D12_ENCODE_BASIC_FILTER`, R19).
    #[inline]
    #[must_use]
    pub const fn encode_basic(
        min: FilterType,
        mag: FilterType,
        mip: FilterType,
        reduction: ReductionType,
    ) -> Filter {
        from_valid(raw::encode_basic_filter(
            min.raw(),
            mag.raw(),
            mip.raw(),
            reduction.raw(),
        ))
    }

    /// `ANISOTROPIC` with this reduction (`D3D12_ENCODE_ANISOTROPIC_FILTER`, R19).
    #[inline]
    #[must_use]
    pub const fn encode_anisotropic(reduction: ReductionType) -> Filter {
        from_valid(raw::encode_anisotropic_filter(reduction.raw()))
    }

    /// `MIN_MAG_ANISOTROPIC_MIP_POINT` with this reduction
    /// (`D3D12_ENCODE_MIN_MAG_ANISOTROPIC_MIP_POINT_FILTER`, R19).
    #[inline]
    #[must_use]
    pub const fn encode_min_mag_anisotropic_mip_point(reduction: ReductionType) -> Filter {
        from_valid(raw::encode_min_mag_anisotropic_mip_point_filter(
            reduction.raw(),
        ))
    }

    /// The isotropic counterpart used where anisotropy does not apply (R22, D3D11.3 FS 7.18.11):
    /// `ANISOTROPIC` → `MIN_MAG_MIP_LINEAR`, `MIN_MAG_ANISOTROPIC_MIP_POINT` →
    /// `MIN_MAG_LINEAR_MIP_POINT`, same reduction; other filters are returned unchanged.
    #[inline]
    #[must_use]
    pub const fn isotropic(self) -> Filter {
        if self.is_anisotropic() {
            from_valid(self.raw() & !raw::ANISOTROPIC_FILTERING_BIT)
        } else {
            self
        }
    }
}

/// A decoded 2-bit type field of an enumerated filter (always 0 or 1).
const fn type_of(bits: u32) -> FilterType {
    if bits == 0 {
        FilterType::Point
    } else {
        FilterType::Linear
    }
}

/// A raw value the callers have built from valid fields.
const fn from_valid(raw: u32) -> Filter {
    match Filter::from_u32(raw) {
        Some(filter) => filter,
        None => panic!("encoded filter is not enumerated"),
    }
}

/// The d3d12.h `D3D12_ENCODE_*` / `D3D12_DECODE_*` filter macros on raw `u32` values (SPEC R19).
///
/// They work on any bit pattern, valid or not; use [`Filter::from_raw`] to validate (R7).
pub mod raw {
    /// `D3D12_FILTER_TYPE_MASK`: width mask of a type or reduction field.
    pub const FILTER_TYPE_MASK: u32 = 0x3;
    /// `D3D12_FILTER_REDUCTION_TYPE_MASK`.
    pub const FILTER_REDUCTION_TYPE_MASK: u32 = 0x3;
    /// `D3D12_MIN_FILTER_SHIFT`.
    pub const MIN_FILTER_SHIFT: u32 = 4;
    /// `D3D12_MAG_FILTER_SHIFT`.
    pub const MAG_FILTER_SHIFT: u32 = 2;
    /// `D3D12_MIP_FILTER_SHIFT`.
    pub const MIP_FILTER_SHIFT: u32 = 0;
    /// `D3D12_FILTER_REDUCTION_TYPE_SHIFT`.
    pub const FILTER_REDUCTION_TYPE_SHIFT: u32 = 7;
    /// `D3D12_ANISOTROPIC_FILTERING_BIT`.
    pub const ANISOTROPIC_FILTERING_BIT: u32 = 0x40;

    /// `D3D12_ENCODE_BASIC_FILTER(min, mag, mip, reduction)`; each field is masked to 2 bits.
    #[inline]
    #[must_use]
    pub const fn encode_basic_filter(min: u32, mag: u32, mip: u32, reduction: u32) -> u32 {
        ((min & FILTER_TYPE_MASK) << MIN_FILTER_SHIFT)
            | ((mag & FILTER_TYPE_MASK) << MAG_FILTER_SHIFT)
            | ((mip & FILTER_TYPE_MASK) << MIP_FILTER_SHIFT)
            | ((reduction & FILTER_REDUCTION_TYPE_MASK) << FILTER_REDUCTION_TYPE_SHIFT)
    }

    /// `D3D12_ENCODE_ANISOTROPIC_FILTER(reduction)`: linear min/mag/mip plus the aniso bit.
    #[inline]
    #[must_use]
    pub const fn encode_anisotropic_filter(reduction: u32) -> u32 {
        ANISOTROPIC_FILTERING_BIT | encode_basic_filter(1, 1, 1, reduction)
    }

    /// `D3D12_ENCODE_MIN_MAG_ANISOTROPIC_MIP_POINT_FILTER(reduction)`: linear min/mag, point
    /// mip, plus the aniso bit.
    #[inline]
    #[must_use]
    pub const fn encode_min_mag_anisotropic_mip_point_filter(reduction: u32) -> u32 {
        ANISOTROPIC_FILTERING_BIT | encode_basic_filter(1, 1, 0, reduction)
    }

    /// `D3D12_DECODE_MIN_FILTER`.
    #[inline]
    #[must_use]
    pub const fn decode_min_filter(filter: u32) -> u32 {
        (filter >> MIN_FILTER_SHIFT) & FILTER_TYPE_MASK
    }

    /// `D3D12_DECODE_MAG_FILTER`.
    #[inline]
    #[must_use]
    pub const fn decode_mag_filter(filter: u32) -> u32 {
        (filter >> MAG_FILTER_SHIFT) & FILTER_TYPE_MASK
    }

    /// `D3D12_DECODE_MIP_FILTER`.
    #[inline]
    #[must_use]
    pub const fn decode_mip_filter(filter: u32) -> u32 {
        (filter >> MIP_FILTER_SHIFT) & FILTER_TYPE_MASK
    }

    /// `D3D12_DECODE_FILTER_REDUCTION`.
    #[inline]
    #[must_use]
    pub const fn decode_filter_reduction(filter: u32) -> u32 {
        (filter >> FILTER_REDUCTION_TYPE_SHIFT) & FILTER_REDUCTION_TYPE_MASK
    }

    /// `D3D12_DECODE_IS_COMPARISON_FILTER`: reduction = COMPARISON.
    #[inline]
    #[must_use]
    pub const fn decode_is_comparison_filter(filter: u32) -> bool {
        decode_filter_reduction(filter) == 1
    }

    /// `D3D12_DECODE_IS_ANISOTROPIC_FILTER`, current header form (R19): the aniso bit set and
    /// min = mag = LINEAR; the mip type may be POINT. (The older form in the FILTER docs also
    /// required mip = LINEAR.)
    #[inline]
    #[must_use]
    pub const fn decode_is_anisotropic_filter(filter: u32) -> bool {
        (filter & ANISOTROPIC_FILTERING_BIT) != 0
            && decode_min_filter(filter) == 1
            && decode_mag_filter(filter) == 1
    }
}
