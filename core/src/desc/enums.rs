//! The small D3D12 enumerations of a sampler description: address mode (R8), comparison function
//! (R11, R79), static border color (R14) and shader visibility (R119), plus the machinery
//! (the `d3d_enum!` macro) that gives every one of them — and [`Filter`](super::Filter) — the same
//! raw-value, name, `FromStr` and serde behaviour.

use serde::Deserialize;

/// Defines a `#[repr(u32)]` enum mirroring a D3D12 enumeration, with `ALL`, `raw`, `from_u32`,
/// `from_raw`, `from_raw_field`, `name`, `Display`, `FromStr`, `TryFrom<u32>` and serde (a name or
/// a number in, a name out).
macro_rules! d3d_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident = $ctype:literal {
            prefix: $prefix:literal,
            field: $field:literal,
            rule: $rule:literal,
            cite: $cite:literal,
            expected: $expected:expr,
        }
        {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value, )+
        }

        impl $name {
            /// Every value, in ascending order of the raw D3D12 value.
            pub const ALL: [Self; [$($text),+].len()] = [$(Self::$variant),+];

            /// The D3D12 type this enum mirrors.
            pub const D3D12_TYPE: &'static str = $ctype;

            /// The prefix of the D3D12 constant names (accepted, not required, by `FromStr`).
            pub const PREFIX: &'static str = $prefix;

            /// The raw D3D12 value.
            #[inline]
            #[must_use]
            pub const fn raw(self) -> u32 {
                self as u32
            }

            /// The value whose raw D3D12 value is `raw`, or `None` if the enumeration has none.
            #[inline]
            #[must_use]
            pub const fn from_u32(raw: u32) -> Option<Self> {
                match raw {
                    $( $value => Some(Self::$variant), )+
                    _ => None,
                }
            }

            #[doc = concat!("Checks a raw value; the error names the field `", $field, "` (SPEC ", $rule, ").")]
            #[inline]
            pub fn from_raw(raw: u32) -> Result<Self, $crate::desc::DescError> {
                Self::from_raw_field(raw, $field)
            }

            /// Checks a raw value; the error names `field` (e.g. `"AddressV"`).
            pub fn from_raw_field(
                raw: u32,
                field: &'static str,
            ) -> Result<Self, $crate::desc::DescError> {
                Self::from_u32(raw).ok_or_else(|| {
                    $crate::desc::DescError::new(
                        field,
                        format!("{raw} (0x{raw:X})"),
                        $rule,
                        format!("not a {} value; expected {}", $ctype, Self::expected()),
                        $cite,
                    )
                })
            }

            /// The D3D12 constant name without its prefix, e.g. `"MIN_MAG_MIP_LINEAR"`.
            #[inline]
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )+
                }
            }

            /// What `FromStr` and `from_raw` accept, for error messages.
            fn expected() -> String {
                let custom: Option<&'static str> = $expected;
                custom.map_or_else(
                    || {
                        let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
                        format!(
                            "one of {} (optionally prefixed {}) or its number",
                            names.join(", "),
                            $prefix
                        )
                    },
                    String::from,
                )
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.pad(self.name())
            }
        }

        impl core::str::FromStr for $name {
            type Err = $crate::desc::ParseEnumError;

            /// Accepts the name with or without the D3D12 prefix (upper case), or a decimal or
            /// `0x` hexadecimal number that is a valid raw value.
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let bare = s.strip_prefix($prefix).unwrap_or(s);
                match bare {
                    $( $text => return Ok(Self::$variant), )+
                    _ => {}
                }
                $crate::desc::enums::parse_number(s)
                    .and_then(Self::from_u32)
                    .ok_or_else(|| $crate::desc::ParseEnumError::new($ctype, s, Self::expected()))
            }
        }

        impl TryFrom<u32> for $name {
            type Error = $crate::desc::DescError;

            #[inline]
            fn try_from(raw: u32) -> Result<Self, Self::Error> {
                Self::from_raw(raw)
            }
        }

        impl From<$name> for u32 {
            #[inline]
            fn from(value: $name) -> u32 {
                value.raw()
            }
        }

        impl serde::Serialize for $name {
            /// A unit variant named like the D3D12 constant: a bare identifier in RON, a string
            /// in JSON.
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let index = Self::ALL.iter().position(|v| v == self).unwrap_or(0);
                serializer.serialize_unit_variant($ctype, index as u32, self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            /// A name (string or RON bare identifier, prefix optional) or a raw number.
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                match $crate::desc::enums::NameOrNumber::deserialize(deserializer)? {
                    $crate::desc::enums::NameOrNumber::Name(name) => {
                        name.parse().map_err(D::Error::custom)
                    }
                    $crate::desc::enums::NameOrNumber::Unsigned(raw) => u32::try_from(raw)
                        .ok()
                        .and_then(Self::from_u32)
                        .ok_or_else(|| {
                            D::Error::custom($crate::desc::ParseEnumError::new(
                                $ctype,
                                &raw.to_string(),
                                Self::expected(),
                            ))
                        }),
                    $crate::desc::enums::NameOrNumber::Signed(raw) => {
                        Err(D::Error::custom($crate::desc::ParseEnumError::new(
                            $ctype,
                            &raw.to_string(),
                            Self::expected(),
                        )))
                    }
                    $crate::desc::enums::NameOrNumber::Other(_) => Err(D::Error::custom(format!(
                        "expected a {} name or number: {}",
                        $ctype,
                        Self::expected()
                    ))),
                }
            }
        }
    };
}
pub(crate) use d3d_enum;

/// What a serialized enum value may look like. Deserialized untagged on purpose: serde buffers
/// the input, and RON then hands a bare identifier (`Filter: ANISOTROPIC`) over as a string,
/// which a plain `deserialize_any` would lose (it reports a unit).
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum NameOrNumber {
    /// A name, quoted or bare.
    Name(String),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer (always invalid, kept for the error message).
    Signed(i64),
    /// Anything else (always invalid).
    Other(serde::de::IgnoredAny),
}

/// Parses `123` or `0x7B` (also `0X`); `None` for anything else.
#[must_use]
pub(crate) fn parse_number(s: &str) -> Option<u32> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(hex, 16).ok()
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

d3d_enum! {
    /// `D3D12_TEXTURE_ADDRESS_MODE`: how a coordinate outside the texture is resolved (SPEC R8,
    /// §2.5; d3d12.h, D3D11.3 FS 7.18.5).
    pub enum AddressMode = "D3D12_TEXTURE_ADDRESS_MODE" {
        prefix: "D3D12_TEXTURE_ADDRESS_MODE_",
        field: "AddressU",
        rule: "R8",
        cite: "d3d12.h D3D12_TEXTURE_ADDRESS_MODE; DXC root-signature validator",
        expected: None,
    }
    {
        /// Tile the texture: the coordinate repeats.
        Wrap = 1 => "WRAP",
        /// Tile with every other repetition mirrored.
        Mirror = 2 => "MIRROR",
        /// Clamp to the edge texel.
        Clamp = 3 => "CLAMP",
        /// Outside the texture, return the border color.
        Border = 4 => "BORDER",
        /// Mirror once around 0, then clamp.
        MirrorOnce = 5 => "MIRROR_ONCE",
    }
}

d3d_enum! {
    /// `D3D12_COMPARISON_FUNC`: the test of a comparison filter, `reference OP texel` (SPEC R11,
    /// R79; d3d12.h, D3D11.3 FS 22.4.19).
    pub enum ComparisonFunc = "D3D12_COMPARISON_FUNC" {
        prefix: "D3D12_COMPARISON_FUNC_",
        field: "ComparisonFunc",
        rule: "R11",
        cite: "d3d12.h D3D12_COMPARISON_FUNC",
        expected: None,
    }
    {
        /// No comparison; invalid with a comparison filter (R11).
        None = 0 => "NONE",
        /// Never passes.
        Never = 1 => "NEVER",
        /// Passes when `reference < texel`.
        Less = 2 => "LESS",
        /// Passes when `reference == texel`.
        Equal = 3 => "EQUAL",
        /// Passes when `reference <= texel`.
        LessEqual = 4 => "LESS_EQUAL",
        /// Passes when `reference > texel`.
        Greater = 5 => "GREATER",
        /// Passes when `reference != texel` (also when either is NaN).
        NotEqual = 6 => "NOT_EQUAL",
        /// Passes when `reference >= texel`.
        GreaterEqual = 7 => "GREATER_EQUAL",
        /// Always passes.
        Always = 8 => "ALWAYS",
    }
}

impl ComparisonFunc {
    /// Whether `reference OP texel` passes (R79, D3D11.3 FS 22.4.19): the reference is on the
    /// left; with a NaN operand only `NOT_EQUAL` and `ALWAYS` pass (FS 3.1.3.1 float rules, §1.4);
    /// `+0 == -0`. `NONE` never passes (it is invalid for comparison filters, R11).
    #[inline]
    #[must_use]
    pub fn passes(self, reference: f32, texel: f32) -> bool {
        match self {
            Self::None | Self::Never => false,
            Self::Less => reference < texel,
            Self::Equal => reference == texel,
            Self::LessEqual => reference <= texel,
            Self::Greater => reference > texel,
            Self::NotEqual => reference != texel,
            Self::GreaterEqual => reference >= texel,
            Self::Always => true,
        }
    }

    /// [`passes`](Self::passes) for quantized values, e.g. a UNORM reference `q` and texel `k`
    /// (R79). `NONE` never passes.
    #[inline]
    #[must_use]
    pub const fn passes_u32(self, q: u32, k: u32) -> bool {
        match self {
            Self::None | Self::Never => false,
            Self::Less => q < k,
            Self::Equal => q == k,
            Self::LessEqual => q <= k,
            Self::Greater => q > k,
            Self::NotEqual => q != k,
            Self::GreaterEqual => q >= k,
            Self::Always => true,
        }
    }
}

d3d_enum! {
    /// `D3D12_STATIC_BORDER_COLOR`: the border of a static sampler (SPEC R14; d3d12.h,
    /// ResourceBinding.md).
    pub enum StaticBorderColor = "D3D12_STATIC_BORDER_COLOR" {
        prefix: "D3D12_STATIC_BORDER_COLOR_",
        field: "BorderColor",
        rule: "R14",
        cite: "d3d12.h D3D12_STATIC_BORDER_COLOR",
        expected: None,
    }
    {
        /// (0, 0, 0, 0).
        TransparentBlack = 0 => "TRANSPARENT_BLACK",
        /// (0, 0, 0, 1).
        OpaqueBlack = 1 => "OPAQUE_BLACK",
        /// (1, 1, 1, 1).
        OpaqueWhite = 2 => "OPAQUE_WHITE",
        /// (0, 0, 0, 1) as integers, for UINT formats.
        OpaqueBlackUint = 3 => "OPAQUE_BLACK_UINT",
        /// (1, 1, 1, 1) as integers, for UINT formats.
        OpaqueWhiteUint = 4 => "OPAQUE_WHITE_UINT",
    }
}

impl StaticBorderColor {
    /// The color's components; for the `_UINT` colors the integers 0/1 as floats (R14).
    #[inline]
    #[must_use]
    pub const fn rgba(self) -> [f32; 4] {
        match self {
            Self::TransparentBlack => [0.0; 4],
            Self::OpaqueBlack | Self::OpaqueBlackUint => [0.0, 0.0, 0.0, 1.0],
            Self::OpaqueWhite | Self::OpaqueWhiteUint => [1.0; 4],
        }
    }

    /// The color's components as integers (meaningful for the `_UINT` colors, R14/R15).
    #[inline]
    #[must_use]
    pub const fn rgba_u32(self) -> [u32; 4] {
        match self {
            Self::TransparentBlack => [0; 4],
            Self::OpaqueBlack | Self::OpaqueBlackUint => [0, 0, 0, 1],
            Self::OpaqueWhite | Self::OpaqueWhiteUint => [1; 4],
        }
    }

    /// Whether this is one of the `_UINT` colors (R14).
    #[inline]
    #[must_use]
    pub const fn is_uint(self) -> bool {
        matches!(self, Self::OpaqueBlackUint | Self::OpaqueWhiteUint)
    }
}

d3d_enum! {
    /// `D3D12_SHADER_VISIBILITY`: which shader stages see a root-signature binding (SPEC R119;
    /// d3d12.h).
    pub enum ShaderVisibility = "D3D12_SHADER_VISIBILITY" {
        prefix: "D3D12_SHADER_VISIBILITY_",
        field: "ShaderVisibility",
        rule: "R119",
        cite: "d3d12.h D3D12_SHADER_VISIBILITY",
        expected: None,
    }
    {
        /// Every stage.
        All = 0 => "ALL",
        /// Vertex shaders.
        Vertex = 1 => "VERTEX",
        /// Hull shaders.
        Hull = 2 => "HULL",
        /// Domain shaders.
        Domain = 3 => "DOMAIN",
        /// Geometry shaders.
        Geometry = 4 => "GEOMETRY",
        /// Pixel shaders.
        Pixel = 5 => "PIXEL",
        /// Amplification shaders.
        Amplification = 6 => "AMPLIFICATION",
        /// Mesh shaders.
        Mesh = 7 => "MESH",
    }
}

impl ShaderVisibility {
    /// Whether two bindings with these visibilities can be seen by one stage: `ALL` overlaps
    /// everything, two single stages only themselves (R119, DXC root-signature validator).
    #[inline]
    #[must_use]
    pub const fn overlaps(self, other: Self) -> bool {
        matches!(self, Self::All) || matches!(other, Self::All) || self as u32 == other as u32
    }

    /// Whether a binding with this visibility is seen by a shader of `stage` (R119): `ALL` is
    /// seen by every stage, a single stage only by itself.
    #[inline]
    #[must_use]
    pub const fn is_visible_to(self, stage: Self) -> bool {
        matches!(self, Self::All) || self as u32 == stage as u32
    }
}
