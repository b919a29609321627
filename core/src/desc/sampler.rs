//! Heap and static sampler descriptions and their validation (SPEC R9–R18, R119).
//!
//! Validation happens once, here; the sampler trusts a validated description. Serde does not
//! validate: call `validate` (or build a [`StaticSamplerTable`](super::StaticSamplerTable)) after
//! deserializing.

use serde::{Deserialize, Serialize};

use super::enums::{
    AddressMode, ComparisonFunc, NameOrNumber, ShaderVisibility, StaticBorderColor,
};
use super::error::{DescError, ParseEnumError};
use super::filter::Filter;

/// `D3D12_MIP_LOD_BIAS_MIN` (d3d12.h; R9).
pub const MIP_LOD_BIAS_MIN: f32 = -16.0;
/// `D3D12_MIP_LOD_BIAS_MAX` (d3d12.h; R9).
pub const MIP_LOD_BIAS_MAX: f32 = 15.99;
/// `D3D12_MAX_MAXANISOTROPY` (d3d12.h; R10).
pub const MAX_MAXANISOTROPY: u32 = 16;
/// `D3D12_FLOAT32_MAX`, the usual "no limit" `MaxLOD` (d3d12.h; R12).
pub const FLOAT32_MAX: f32 = f32::MAX; // 3.402823466e+38 rounds to exactly this
/// `D3D12_DRIVER_RESERVED_REGISTER_SPACE_VALUES_START` (d3d12.h; R119).
pub const DRIVER_RESERVED_REGISTER_SPACE_START: u32 = 0xFFFF_FFF0;
/// `D3D12_MAX_LIVE_STATIC_SAMPLERS` (d3d12.h; R119).
pub const MAX_LIVE_STATIC_SAMPLERS: usize = 2032;

/// `D3D12_SAMPLER_FLAGS` (d3d12.h; R14, R15, R18).
///
/// Serialized as a list of names (`[UINT_BORDER_COLOR]`); deserialized from such a list, a single
/// name, or an integer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SamplerFlags(pub u32);

impl SamplerFlags {
    /// No flags.
    pub const NONE: Self = Self(0);
    /// `D3D12_SAMPLER_FLAG_UINT_BORDER_COLOR`: the border color is integer (R14, R15).
    pub const UINT_BORDER_COLOR: Self = Self(1);
    /// `D3D12_SAMPLER_FLAG_NON_NORMALIZED_COORDINATES`: coordinates are in texels (R18).
    pub const NON_NORMALIZED_COORDINATES: Self = Self(2);
    /// Every defined flag; other bits are invalid (R14).
    pub const KNOWN: Self = Self(3);

    /// The named flags, in bit order.
    const NAMES: [(Self, &'static str); 2] = [
        (Self::UINT_BORDER_COLOR, "UINT_BORDER_COLOR"),
        (
            Self::NON_NORMALIZED_COORDINATES,
            "NON_NORMALIZED_COORDINATES",
        ),
    ];

    /// The raw bits.
    #[inline]
    #[must_use]
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every bit of `other` is set in `self`.
    #[inline]
    #[must_use]
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits of both.
    #[inline]
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether no bit is set.
    #[inline]
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether only defined bits are set (R14).
    #[inline]
    #[must_use]
    pub const fn is_known(self) -> bool {
        self.0 & !Self::KNOWN.0 == 0
    }

    /// Parses one flag name (prefix `D3D12_SAMPLER_FLAG_` optional; `NONE` is 0) or a number.
    fn parse_one(s: &str) -> Result<Self, ParseEnumError> {
        let bare = s.strip_prefix("D3D12_SAMPLER_FLAG_").unwrap_or(s);
        if bare == "NONE" {
            return Ok(Self::NONE);
        }
        Self::NAMES
            .iter()
            .find(|(_, name)| *name == bare)
            .map(|(flag, _)| *flag)
            .or_else(|| super::enums::parse_number(s).map(Self))
            .ok_or_else(|| {
                ParseEnumError::new(
                    "D3D12_SAMPLER_FLAGS",
                    s,
                    "UINT_BORDER_COLOR, NON_NORMALIZED_COORDINATES or NONE (optionally prefixed \
                     D3D12_SAMPLER_FLAG_), or a number",
                )
            })
    }
}

impl core::ops::BitOr for SamplerFlags {
    type Output = Self;

    #[inline]
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

impl core::ops::BitOrAssign for SamplerFlags {
    #[inline]
    fn bitor_assign(&mut self, rhs: Self) {
        *self = self.union(rhs);
    }
}

impl core::fmt::Display for SamplerFlags {
    /// `NONE`, `UINT_BORDER_COLOR | NON_NORMALIZED_COORDINATES`, or a hex number when unknown bits
    /// are set.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.is_empty() {
            return f.write_str("NONE");
        }
        if !self.is_known() {
            return write!(f, "{:#X}", self.0);
        }
        let names: Vec<&str> = Self::NAMES
            .iter()
            .filter(|(flag, _)| self.contains(*flag))
            .map(|(_, name)| *name)
            .collect();
        f.write_str(&names.join(" | "))
    }
}

impl core::str::FromStr for SamplerFlags {
    type Err = ParseEnumError;

    /// Accepts what `Display` prints: names joined by `|`, `NONE`, or a number.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.split('|')
            .map(|part| Self::parse_one(part.trim()))
            .try_fold(Self::NONE, |acc, flag| Ok(acc | flag?))
    }
}

/// One element of a serialized flag list.
struct FlagName(u32, &'static str);

impl Serialize for FlagName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit_variant("D3D12_SAMPLER_FLAGS", self.0, self.1)
    }
}

impl Serialize for SamplerFlags {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !self.is_known() {
            return serializer.serialize_u32(self.0);
        }
        serializer.collect_seq(
            Self::NAMES
                .iter()
                .enumerate()
                .filter(|(_, (flag, _))| self.contains(*flag))
                .map(|(index, (_, name))| FlagName(index as u32, name)),
        )
    }
}

/// A serialized flag set: a list of names/numbers, or one of them.
#[derive(Deserialize)]
#[serde(untagged)]
enum FlagsRepr {
    List(Vec<NameOrNumber>),
    One(NameOrNumber),
}

fn flag_item<E: serde::de::Error>(item: NameOrNumber) -> Result<SamplerFlags, E> {
    match item {
        NameOrNumber::Name(name) => SamplerFlags::parse_one(&name).map_err(E::custom),
        NameOrNumber::Unsigned(raw) => u32::try_from(raw)
            .map(SamplerFlags)
            .map_err(|_| E::custom(format!("Flags = {raw} does not fit in 32 bits"))),
        NameOrNumber::Signed(raw) => Err(E::custom(format!("Flags = {raw} is negative"))),
        NameOrNumber::Other(_) => Err(E::custom(
            "expected D3D12_SAMPLER_FLAGS names (a list) or a number",
        )),
    }
}

impl<'de> Deserialize<'de> for SamplerFlags {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match FlagsRepr::deserialize(deserializer)? {
            FlagsRepr::List(items) => items
                .into_iter()
                .try_fold(Self::NONE, |acc, item| Ok(acc | flag_item(item)?)),
            FlagsRepr::One(item) => flag_item(item),
        }
    }
}

/// A heap sampler: `D3D12_SAMPLER_DESC` with its float border, plus the `Flags` of
/// `D3D12_SAMPLER_DESC2` (d3d12.h; SPEC §2.1).
///
/// With [`SamplerFlags::UINT_BORDER_COLOR`] the border is integer (R15): `border_color` then
/// holds whole numbers, read by [`uint_border_color`](Self::uint_border_color).
///
/// Serde uses the D3D12 field names; every field but `Filter` is optional (defaults of
/// [`SamplerDesc::default`]); `BorderColor` is four numbers or a [`StaticBorderColor`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplerDesc {
    /// `Filter` (R7, R19, R20).
    #[serde(rename = "Filter")]
    pub filter: Filter,
    /// `AddressU` (R8).
    #[serde(rename = "AddressU", default = "defaults::clamp")]
    pub address_u: AddressMode,
    /// `AddressV` (R8).
    #[serde(rename = "AddressV", default = "defaults::clamp")]
    pub address_v: AddressMode,
    /// `AddressW` (R8).
    #[serde(rename = "AddressW", default = "defaults::clamp")]
    pub address_w: AddressMode,
    /// `MipLODBias`, in [-16, 15.99] (R9).
    #[serde(rename = "MipLODBias", default)]
    pub mip_lod_bias: f32,
    /// `MaxAnisotropy`, at most 16 (R10).
    #[serde(rename = "MaxAnisotropy", default = "defaults::one")]
    pub max_anisotropy: u32,
    /// `ComparisonFunc`, used by comparison filters only (R11).
    #[serde(rename = "ComparisonFunc", default = "defaults::func_none")]
    pub comparison_func: ComparisonFunc,
    /// `BorderColor` (`FloatBorderColor`, or `UintBorderColor` with the UINT flag; R13, R15).
    #[serde(rename = "BorderColor", default, with = "border_serde")]
    pub border_color: [f32; 4],
    /// `MinLOD` (R12).
    #[serde(rename = "MinLOD", default)]
    pub min_lod: f32,
    /// `MaxLOD` (R12).
    #[serde(rename = "MaxLOD", default = "defaults::float32_max")]
    pub max_lod: f32,
    /// `Flags` (R14, R15, R18).
    #[serde(rename = "Flags", default, skip_serializing_if = "no_flags")]
    pub flags: SamplerFlags,
}

impl Default for SamplerDesc {
    /// `MIN_MAG_MIP_LINEAR`, `CLAMP` ×3, bias 0, `MaxAnisotropy` 1, `ComparisonFunc` `NONE`,
    /// border (0, 0, 0, 0), LOD range [0, `D3D12_FLOAT32_MAX`], no flags.
    fn default() -> Self {
        Self::new(Filter::MinMagMipLinear)
    }
}

impl SamplerDesc {
    /// The [default](Self::default) description with another filter.
    #[inline]
    #[must_use]
    pub const fn new(filter: Filter) -> Self {
        Self {
            filter,
            address_u: AddressMode::Clamp,
            address_v: AddressMode::Clamp,
            address_w: AddressMode::Clamp,
            mip_lod_bias: 0.0,
            max_anisotropy: 1,
            comparison_func: ComparisonFunc::None,
            border_color: [0.0; 4],
            min_lod: 0.0,
            max_lod: FLOAT32_MAX,
            flags: SamplerFlags::NONE,
        }
    }

    /// A typical shadow-map sampler: `filter` with `func`, everything else
    /// [default](Self::default) (clamped addressing).
    #[inline]
    #[must_use]
    pub const fn comparison(filter: Filter, func: ComparisonFunc) -> Self {
        let mut desc = Self::new(filter);
        desc.comparison_func = func;
        desc
    }

    /// The integer border used with [`SamplerFlags::UINT_BORDER_COLOR`] (R15): each component
    /// converted to `u32` (validation makes sure they are whole numbers in range).
    #[inline]
    #[must_use]
    pub fn uint_border_color(&self) -> [u32; 4] {
        self.border_color.map(|c| c as u32)
    }

    /// Checks R9–R12, R14/R15 (flags) and the descriptor part of R18. Filter, address modes and
    /// comparison function are valid by construction (R7, R8, R11 on raw values happen in
    /// `from_raw`). The view-dependent parts of R18 are the sampler's to check.
    pub fn validate(&self) -> Result<(), DescError> {
        validate_common(&Common {
            filter: self.filter,
            address: [self.address_u, self.address_v, self.address_w],
            mip_lod_bias: self.mip_lod_bias,
            max_anisotropy: self.max_anisotropy,
            comparison_func: self.comparison_func,
            min_lod: self.min_lod,
            max_lod: self.max_lod,
            flags: self.flags,
        })?;
        if self.flags.contains(SamplerFlags::UINT_BORDER_COLOR) {
            // R15 [CHOICE]: the integer border lives in the float array as whole numbers.
            for (c, name) in self.border_color.iter().zip(["r", "g", "b", "a"]) {
                if !(c.fract() == 0.0 && (0.0..=u32::MAX as f32).contains(c)) {
                    return Err(DescError::new(
                        "BorderColor",
                        format!("{:?}", self.border_color),
                        "R15",
                        format!(
                            "with UINT_BORDER_COLOR every component must be a whole number in \
                             [0, 2^32); {name} is {c}"
                        ),
                        "SM 6.7 Advanced Texture Ops, D3D12_SAMPLER_DESC2",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The fields heap and static samplers share.
struct Common {
    filter: Filter,
    address: [AddressMode; 3],
    mip_lod_bias: f32,
    max_anisotropy: u32,
    comparison_func: ComparisonFunc,
    min_lod: f32,
    max_lod: f32,
    flags: SamplerFlags,
}

/// Filters allowed with non-normalized coordinates (R18, VulkanOn12.md).
const NON_NORMALIZED_FILTERS: [Filter; 6] = [
    Filter::MinMagMipPoint,
    Filter::MinMagLinearMipPoint,
    Filter::MinimumMinMagMipPoint,
    Filter::MinimumMinMagLinearMipPoint,
    Filter::MaximumMinMagMipPoint,
    Filter::MaximumMinMagLinearMipPoint,
];

fn validate_common(d: &Common) -> Result<(), DescError> {
    const RSV: &str = "DXC root-signature validator";
    // R9: the negated range test also catches NaN.
    if !(d.mip_lod_bias >= MIP_LOD_BIAS_MIN && d.mip_lod_bias <= MIP_LOD_BIAS_MAX) {
        return Err(DescError::new(
            "MipLODBias",
            d.mip_lod_bias.to_string(),
            "R9",
            "must be a number in [-16, 15.99]",
            "D3D12_MIP_LOD_BIAS_MIN/MAX; DXC root-signature validator",
        ));
    }
    // R10: only the upper bound is enforced; 0 is legal (D3D12_MIN_MAXANISOTROPY = 0).
    if d.max_anisotropy > MAX_MAXANISOTROPY {
        return Err(DescError::new(
            "MaxAnisotropy",
            d.max_anisotropy.to_string(),
            "R10",
            "must be at most 16",
            "D3D12_MAX_MAXANISOTROPY; DXC root-signature validator",
        ));
    }
    // R11: checked only for comparison filters, where NONE is the one invalid enumerant left.
    if d.filter.is_comparison() && d.comparison_func == ComparisonFunc::None {
        return Err(DescError::new(
            "ComparisonFunc",
            "NONE",
            "R11",
            format!("comparison filter {} needs NEVER..ALWAYS (1..8)", d.filter),
            RSV,
        ));
    }
    // R12: NaN only; infinities and MinLOD > MaxLOD are legal.
    for (field, value) in [("MinLOD", d.min_lod), ("MaxLOD", d.max_lod)] {
        if value.is_nan() {
            return Err(DescError::new(
                field,
                "NaN",
                "R12",
                "must not be NaN",
                "D3D11.3 FS 7.18.11; DXC root-signature validator",
            ));
        }
    }
    // R14: only the two defined flag bits.
    if !d.flags.is_known() {
        return Err(DescError::new(
            "Flags",
            format!("{:#X}", d.flags.bits()),
            "R14",
            "only UINT_BORDER_COLOR (1) and NON_NORMALIZED_COORDINATES (2) are defined",
            "d3d12.h D3D12_SAMPLER_FLAGS",
        ));
    }
    if d.flags.contains(SamplerFlags::NON_NORMALIZED_COORDINATES) {
        validate_non_normalized(d)?;
    }
    Ok(())
}

/// R18: the descriptor half of the non-normalized-coordinates rules.
fn validate_non_normalized(d: &Common) -> Result<(), DescError> {
    const CITE: &str = "VulkanOn12.md, D3D12_SAMPLER_FLAG_NON_NORMALIZED_COORDINATES";
    if !NON_NORMALIZED_FILTERS.contains(&d.filter) {
        return Err(DescError::new(
            "Filter",
            d.filter.name(),
            "R18",
            "with NON_NORMALIZED_COORDINATES the filter must be MIN_MAG_MIP_POINT or \
             MIN_MAG_LINEAR_MIP_POINT (or their MINIMUM_/MAXIMUM_ forms)",
            CITE,
        ));
    }
    for (field, value) in [("MinLOD", d.min_lod), ("MaxLOD", d.max_lod)] {
        if value != 0.0 {
            return Err(DescError::new(
                field,
                value.to_string(),
                "R18",
                "with NON_NORMALIZED_COORDINATES MinLOD and MaxLOD must be 0",
                CITE,
            ));
        }
    }
    for (field, mode) in [("AddressU", d.address[0]), ("AddressV", d.address[1])] {
        if !matches!(mode, AddressMode::Clamp | AddressMode::Border) {
            return Err(DescError::new(
                field,
                mode.name(),
                "R18",
                "with NON_NORMALIZED_COORDINATES AddressU/V must be CLAMP or BORDER",
                CITE,
            ));
        }
    }
    Ok(())
}

/// A root-signature static sampler: all 13 fields of `D3D12_STATIC_SAMPLER_DESC` plus the `Flags`
/// of `D3D12_STATIC_SAMPLER_DESC1` (d3d12.h; SPEC R14, R16, R119).
///
/// Serde uses the D3D12 field names, all optional with the [defaults](Self::default) of HLSL's
/// `StaticSampler()` (R16).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StaticSamplerDesc {
    /// `Filter` (R7, R19, R20).
    #[serde(rename = "Filter")]
    pub filter: Filter,
    /// `AddressU` (R8).
    #[serde(rename = "AddressU")]
    pub address_u: AddressMode,
    /// `AddressV` (R8).
    #[serde(rename = "AddressV")]
    pub address_v: AddressMode,
    /// `AddressW` (R8).
    #[serde(rename = "AddressW")]
    pub address_w: AddressMode,
    /// `MipLODBias`, in [-16, 15.99] (R9).
    #[serde(rename = "MipLODBias")]
    pub mip_lod_bias: f32,
    /// `MaxAnisotropy`, at most 16 (R10).
    #[serde(rename = "MaxAnisotropy")]
    pub max_anisotropy: u32,
    /// `ComparisonFunc`, used by comparison filters only (R11).
    #[serde(rename = "ComparisonFunc")]
    pub comparison_func: ComparisonFunc,
    /// `BorderColor` (R14).
    #[serde(rename = "BorderColor")]
    pub border_color: StaticBorderColor,
    /// `MinLOD` (R12).
    #[serde(rename = "MinLOD")]
    pub min_lod: f32,
    /// `MaxLOD` (R12).
    #[serde(rename = "MaxLOD")]
    pub max_lod: f32,
    /// `ShaderRegister`: the `N` of `register(sN, spaceM)` (R119).
    #[serde(rename = "ShaderRegister")]
    pub shader_register: u32,
    /// `RegisterSpace`: the `M` of `register(sN, spaceM)`; not in 0xFFFFFFF0.. (R119).
    #[serde(rename = "RegisterSpace")]
    pub register_space: u32,
    /// `ShaderVisibility` (R119).
    #[serde(rename = "ShaderVisibility")]
    pub shader_visibility: ShaderVisibility,
    /// `Flags` of `D3D12_STATIC_SAMPLER_DESC1` (R14, R18).
    #[serde(rename = "Flags", skip_serializing_if = "no_flags")]
    pub flags: SamplerFlags,
}

impl Default for StaticSamplerDesc {
    /// HLSL root-signature `StaticSampler()` defaults (R16, ResourceBinding.md; same as
    /// `CD3DX12_STATIC_SAMPLER_DESC`): `ANISOTROPIC`, `WRAP` ×3, bias 0, `MaxAnisotropy` 16,
    /// `LESS_EQUAL`, `OPAQUE_WHITE`, LOD range [0, 3.402823466e+38], `s0`, `space0`, `ALL`.
    fn default() -> Self {
        Self::new(0, 0)
    }
}

impl StaticSamplerDesc {
    /// The [default](Self::default) static sampler bound at `register(s{register}, space{space})`.
    #[inline]
    #[must_use]
    pub const fn new(register: u32, space: u32) -> Self {
        Self {
            filter: Filter::Anisotropic,
            address_u: AddressMode::Wrap,
            address_v: AddressMode::Wrap,
            address_w: AddressMode::Wrap,
            mip_lod_bias: 0.0,
            max_anisotropy: 16,
            comparison_func: ComparisonFunc::LessEqual,
            border_color: StaticBorderColor::OpaqueWhite,
            min_lod: 0.0,
            max_lod: FLOAT32_MAX,
            shader_register: register,
            register_space: space,
            shader_visibility: ShaderVisibility::All,
            flags: SamplerFlags::NONE,
        }
    }

    /// Everything [`SamplerDesc::validate`] checks, plus R14 (`UINT_BORDER_COLOR` with a float
    /// static border is an error) and R119 (reserved register spaces).
    pub fn validate(&self) -> Result<(), DescError> {
        validate_common(&Common {
            filter: self.filter,
            address: [self.address_u, self.address_v, self.address_w],
            mip_lod_bias: self.mip_lod_bias,
            max_anisotropy: self.max_anisotropy,
            comparison_func: self.comparison_func,
            min_lod: self.min_lod,
            max_lod: self.max_lod,
            flags: self.flags,
        })?;
        // R14: the UINT flag needs a _UINT static border (with one it is merely redundant).
        if self.flags.contains(SamplerFlags::UINT_BORDER_COLOR) && !self.border_color.is_uint() {
            return Err(DescError::new(
                "BorderColor",
                self.border_color.name(),
                "R14",
                "UINT_BORDER_COLOR needs OPAQUE_BLACK_UINT or OPAQUE_WHITE_UINT",
                "VulkanOn12.md; SM 6.7 Advanced Texture Ops",
            ));
        }
        // R119: the top 16 register spaces belong to drivers.
        if self.register_space >= DRIVER_RESERVED_REGISTER_SPACE_START {
            return Err(DescError::new(
                "RegisterSpace",
                format!("{:#X}", self.register_space),
                "R119",
                "0xFFFFFFF0..=0xFFFFFFFF are reserved for drivers",
                "D3D12_DRIVER_RESERVED_REGISTER_SPACE_VALUES_START/END",
            ));
        }
        Ok(())
    }

    /// The equivalent heap sampler. The border comes from [`StaticBorderColor::rgba`]; a `_UINT`
    /// border also sets [`SamplerFlags::UINT_BORDER_COLOR`] (its 0/1 components serve as float
    /// or integer; the R14 choice).
    #[must_use]
    pub fn to_sampler_desc(&self) -> SamplerDesc {
        let mut flags = self.flags;
        if self.border_color.is_uint() {
            flags |= SamplerFlags::UINT_BORDER_COLOR;
        }
        SamplerDesc {
            filter: self.filter,
            address_u: self.address_u,
            address_v: self.address_v,
            address_w: self.address_w,
            mip_lod_bias: self.mip_lod_bias,
            max_anisotropy: self.max_anisotropy,
            comparison_func: self.comparison_func,
            border_color: self.border_color.rgba(),
            min_lod: self.min_lod,
            max_lod: self.max_lod,
            flags,
        }
    }
}

/// Serde default values of [`SamplerDesc`].
mod defaults {
    use super::{AddressMode, ComparisonFunc, FLOAT32_MAX};

    pub(super) const fn clamp() -> AddressMode {
        AddressMode::Clamp
    }
    pub(super) const fn one() -> u32 {
        1
    }
    pub(super) const fn func_none() -> ComparisonFunc {
        ComparisonFunc::None
    }
    pub(super) const fn float32_max() -> f32 {
        FLOAT32_MAX
    }
}

/// `BorderColor` of a heap sampler: written as four numbers, read from four numbers or a
/// [`StaticBorderColor`].
mod border_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::StaticBorderColor;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum BorderRepr {
        Rgba([f32; 4]),
        Static(StaticBorderColor),
    }

    pub(super) fn serialize<S: Serializer>(
        color: &[f32; 4],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        color.serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<[f32; 4], D::Error> {
        Ok(match BorderRepr::deserialize(deserializer)? {
            BorderRepr::Rgba(rgba) => rgba,
            BorderRepr::Static(color) => color.rgba(),
        })
    }
}

/// Serde's `skip_serializing_if` for `Flags`.
fn no_flags(flags: &SamplerFlags) -> bool {
    flags.is_empty()
}
