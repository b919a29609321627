//! Texel formats, their exact conversion to float, and reference quantization for comparisons.
//!
//! Every format is stored packed, exactly as a D3D12 resource lays it out in memory (components at
//! increasing addresses, each little-endian — D3D11.3 FS 19.1.3.1): a D16 texel is 2 bytes, a D24
//! texel one 32-bit word with the depth in bits 0..23.
//!
//! ```
//! use penumbra_core::format::{Format, CompareRef};
//! // R1: UNORM codes convert exactly, k / (2^n - 1), rounded once.
//! assert_eq!(Format::D16Unorm.load(&32768u16.to_le_bytes())[0], 32768.0 / 65535.0);
//! // R82: a D16 reference is quantized like a depth value before the depth test.
//! assert_eq!(Format::D16Unorm.quantize_reference(0.5), CompareRef::Unorm(32768));
//! ```

use std::fmt;
use std::str::FromStr;

use half::f16;

/// A texel format (the DXGI_FORMAT values penumbra samples).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// `R32_FLOAT`: one f32.
    R32Float,
    /// `D32_FLOAT` (sampled through an R32_FLOAT view): one f32.
    D32Float,
    /// `R32_FLOAT_X8X24_TYPELESS` (the depth of D32_FLOAT_S8X24_UINT): an f32 then 4 unused bytes.
    R32FloatX8X24Typeless,
    /// `R24_UNORM_X8_TYPELESS` (the depth of D24_UNORM_S8_UINT): a u32 word, depth in bits 0..23.
    R24UnormX8Typeless,
    /// `R16_UNORM`: one u16.
    R16Unorm,
    /// `D16_UNORM` (sampled through an R16_UNORM view): one u16.
    D16Unorm,
    /// `R16_FLOAT`: one f16.
    R16Float,
    /// `R8_UNORM`: one u8.
    R8Unorm,
    /// `R8G8B8A8_UNORM`: four u8 in R, G, B, A order.
    R8G8B8A8Unorm,
    /// `R16G16B16A16_FLOAT`: four f16.
    R16G16B16A16Float,
    /// `R32G32B32A32_FLOAT`: four f32.
    R32G32B32A32Float,
}

/// How a format stores its components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentKind {
    /// IEEE f32 components.
    Float32,
    /// IEEE f16 components.
    Float16,
    /// Unsigned normalized integers of the given bit width.
    Unorm(u32),
}

/// A comparison reference after quantization to the texture's format (SPEC R82–R86).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CompareRef {
    /// A UNORM reference, compared as an integer with the stored code.
    Unorm(u32),
    /// A float reference, compared as a float with the (flushed) texel value.
    Float(f32),
}

impl Format {
    /// Every format, in declaration order.
    pub const ALL: [Format; 11] = [
        Format::R32Float,
        Format::D32Float,
        Format::R32FloatX8X24Typeless,
        Format::R24UnormX8Typeless,
        Format::R16Unorm,
        Format::D16Unorm,
        Format::R16Float,
        Format::R8Unorm,
        Format::R8G8B8A8Unorm,
        Format::R16G16B16A16Float,
        Format::R32G32B32A32Float,
    ];

    /// The DXGI name without the `DXGI_FORMAT_` prefix.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Format::R32Float => "R32_FLOAT",
            Format::D32Float => "D32_FLOAT",
            Format::R32FloatX8X24Typeless => "R32_FLOAT_X8X24_TYPELESS",
            Format::R24UnormX8Typeless => "R24_UNORM_X8_TYPELESS",
            Format::R16Unorm => "R16_UNORM",
            Format::D16Unorm => "D16_UNORM",
            Format::R16Float => "R16_FLOAT",
            Format::R8Unorm => "R8_UNORM",
            Format::R8G8B8A8Unorm => "R8G8B8A8_UNORM",
            Format::R16G16B16A16Float => "R16G16B16A16_FLOAT",
            Format::R32G32B32A32Float => "R32G32B32A32_FLOAT",
        }
    }

    /// Bytes one texel takes in storage.
    #[must_use]
    #[inline]
    pub const fn bytes_per_texel(self) -> usize {
        match self {
            Format::R8Unorm => 1,
            Format::R16Unorm | Format::D16Unorm | Format::R16Float => 2,
            Format::R32Float
            | Format::D32Float
            | Format::R24UnormX8Typeless
            | Format::R8G8B8A8Unorm => 4,
            Format::R32FloatX8X24Typeless | Format::R16G16B16A16Float => 8,
            Format::R32G32B32A32Float => 16,
        }
    }

    /// Number of components the format has (missing ones read as G=0, B=0, A=1, FS 19.1.3.3).
    #[must_use]
    #[inline]
    pub const fn channels(self) -> usize {
        match self {
            Format::R8G8B8A8Unorm | Format::R16G16B16A16Float | Format::R32G32B32A32Float => 4,
            _ => 1,
        }
    }

    /// How the components are stored.
    #[must_use]
    #[inline]
    pub const fn kind(self) -> ComponentKind {
        match self {
            Format::R32Float
            | Format::D32Float
            | Format::R32FloatX8X24Typeless
            | Format::R32G32B32A32Float => ComponentKind::Float32,
            Format::R16Float | Format::R16G16B16A16Float => ComponentKind::Float16,
            Format::R24UnormX8Typeless => ComponentKind::Unorm(24),
            Format::R16Unorm | Format::D16Unorm => ComponentKind::Unorm(16),
            Format::R8Unorm | Format::R8G8B8A8Unorm => ComponentKind::Unorm(8),
        }
    }

    /// True for the formats D3D requires `sample_c` to support (R77, FL11 "Shader sample_c"):
    /// R32_FLOAT (and D32), R32_FLOAT_X8X24_TYPELESS, R24_UNORM_X8_TYPELESS, R16_UNORM (and D16).
    #[must_use]
    #[inline]
    pub const fn supports_comparison(self) -> bool {
        matches!(
            self,
            Format::R32Float
                | Format::D32Float
                | Format::R32FloatX8X24Typeless
                | Format::R24UnormX8Typeless
                | Format::R16Unorm
                | Format::D16Unorm
        )
    }

    /// Reads component `c` (0 = R) of the texel at the start of `texel` as its raw code: the UNORM
    /// integer, or the float's bit pattern (f16 bits for the half formats).
    #[must_use]
    #[inline]
    pub fn raw_component(self, texel: &[u8], c: usize) -> u32 {
        match self {
            Format::R8Unorm | Format::R8G8B8A8Unorm => u32::from(texel[c]),
            Format::R16Unorm | Format::D16Unorm | Format::R16Float | Format::R16G16B16A16Float => {
                u32::from(u16::from_le_bytes([texel[2 * c], texel[2 * c + 1]]))
            }
            Format::R24UnormX8Typeless => {
                u32::from_le_bytes([texel[0], texel[1], texel[2], texel[3]]) & 0x00FF_FFFF
            }
            Format::R32Float
            | Format::D32Float
            | Format::R32FloatX8X24Typeless
            | Format::R32G32B32A32Float => u32::from_le_bytes([
                texel[4 * c],
                texel[4 * c + 1],
                texel[4 * c + 2],
                texel[4 * c + 3],
            ]),
        }
    }

    /// Converts one raw component code to float exactly (R1, R2), flushing f32 denormals (R6).
    #[must_use]
    #[inline]
    pub fn decode_component(self, raw: u32) -> f32 {
        match self.kind() {
            ComponentKind::Float32 => flush_denormal(f32::from_bits(raw)),
            ComponentKind::Float16 => f16::from_bits(raw as u16).to_f32(),
            ComponentKind::Unorm(bits) => unorm_to_f32(raw, bits),
        }
    }

    /// Converts one raw component code to float exactly, keeping f32 denormals (gather, R120).
    #[must_use]
    #[inline]
    pub fn decode_component_raw(self, raw: u32) -> f32 {
        match self.kind() {
            ComponentKind::Float32 => f32::from_bits(raw),
            _ => self.decode_component(raw),
        }
    }

    /// Loads a whole texel as RGBA with the missing-component defaults (FS 19.1.3.3) and R6's
    /// denormal flush.
    #[must_use]
    #[inline]
    pub fn load(self, texel: &[u8]) -> [f32; 4] {
        let mut out = [0.0, 0.0, 0.0, 1.0];
        for (c, o) in out.iter_mut().enumerate().take(self.channels()) {
            *o = self.decode_component(self.raw_component(texel, c));
        }
        out
    }

    /// Encodes an RGBA float value into one texel (used to build textures from floats and by mip
    /// generation): UNORM with R3 (NaN → 0, clamp, scale, +0.5, truncate), f16 round to nearest
    /// even, f32 as is. Writes `bytes_per_texel()` bytes.
    pub fn store(self, value: [f32; 4], texel: &mut [u8]) {
        for (c, &v) in value.iter().enumerate().take(self.channels()) {
            self.store_raw_component(texel, c, self.encode_component(v));
        }
        if self == Format::R32FloatX8X24Typeless {
            texel[4..8].fill(0);
        }
    }

    /// Encodes one float as this format's raw code (see [`Format::store`]).
    #[must_use]
    pub fn encode_component(self, v: f32) -> u32 {
        match self.kind() {
            ComponentKind::Float32 => v.to_bits(),
            ComponentKind::Float16 => u32::from(f16::from_f32(v).to_bits()),
            ComponentKind::Unorm(bits) => float_to_unorm(v, bits),
        }
    }

    /// Writes one raw component code (the inverse of [`Format::raw_component`]).
    pub fn store_raw_component(self, texel: &mut [u8], c: usize, raw: u32) {
        match self {
            Format::R8Unorm | Format::R8G8B8A8Unorm => texel[c] = raw as u8,
            Format::R16Unorm | Format::D16Unorm | Format::R16Float | Format::R16G16B16A16Float => {
                texel[2 * c..2 * c + 2].copy_from_slice(&(raw as u16).to_le_bytes());
            }
            Format::R24UnormX8Typeless => {
                texel[0..4].copy_from_slice(&(raw & 0x00FF_FFFF).to_le_bytes());
            }
            Format::R32Float
            | Format::D32Float
            | Format::R32FloatX8X24Typeless
            | Format::R32G32B32A32Float => {
                texel[4 * c..4 * c + 4].copy_from_slice(&raw.to_le_bytes());
            }
        }
    }

    /// Largest valid raw code of a UNORM component (`2^n − 1`), `None` for float formats.
    #[must_use]
    pub const fn unorm_max(self) -> Option<u32> {
        match self.kind() {
            ComponentKind::Unorm(bits) => Some(((1u64 << bits) - 1) as u32),
            _ => None,
        }
    }

    /// Quantizes a comparison reference to this format (R82–R86): UNORM formats quantize exactly
    /// like a depth value before the depth test (NaN → 0, clamp to [0, 1], `trunc(x·(2^n−1) + 0.5)`,
    /// computed exactly — R83); f32 formats use the value as is, without a clamp, denormals flushed
    /// (R82, R85); f16 formats round toward zero to f16 with R4 (`[EXT]`, R86).
    #[must_use]
    pub fn quantize_reference(self, reference: f32) -> CompareRef {
        match self.kind() {
            ComponentKind::Unorm(bits) => CompareRef::Unorm(float_to_unorm(reference, bits)),
            ComponentKind::Float32 => CompareRef::Float(flush_denormal(reference)),
            ComponentKind::Float16 => CompareRef::Float(f32_to_f16_toward_zero(reference)),
        }
    }

    /// The value a border colour component takes in this format before filtering (R35): UNORM
    /// formats clamp to [0, 1] and quantize with R3, so a border compares like a stored code;
    /// float formats use it as given (f32 denormals flushed).
    #[must_use]
    pub fn border_component(self, value: f32) -> BorderValue {
        match self.kind() {
            ComponentKind::Unorm(bits) => {
                let code = float_to_unorm(value, bits);
                BorderValue {
                    value: unorm_to_f32(code, bits),
                    code: Some(code),
                }
            }
            _ => BorderValue {
                value: flush_denormal(value),
                code: None,
            },
        }
    }
}

/// One border-colour component as the filter sees it (R35).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BorderValue {
    /// The float value that is filtered.
    pub value: f32,
    /// For UNORM formats, the integer code comparisons use.
    pub code: Option<u32>,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Format`] name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown format `{0}`: expected one of R32_FLOAT, D32_FLOAT, R32_FLOAT_X8X24_TYPELESS, R24_UNORM_X8_TYPELESS, R16_UNORM, D16_UNORM, R16_FLOAT, R8_UNORM, R8G8B8A8_UNORM, R16G16B16A16_FLOAT, R32G32B32A32_FLOAT"
)]
pub struct ParseFormatError(pub String);

impl FromStr for Format {
    type Err = ParseFormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.strip_prefix("DXGI_FORMAT_").unwrap_or(s);
        let name = match name {
            "D24_UNORM_S8_UINT" => "R24_UNORM_X8_TYPELESS",
            "D32_FLOAT_S8X24_UINT" => "R32_FLOAT_X8X24_TYPELESS",
            other => other,
        };
        Format::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| ParseFormatError(s.to_string()))
    }
}

/// R6: f32 denormals flush to a zero of the same sign.
#[must_use]
#[inline]
pub fn flush_denormal(v: f32) -> f32 {
    if v.is_subnormal() {
        f32::from_bits(v.to_bits() & 0x8000_0000)
    } else {
        v
    }
}

/// R1: `k / (2^n − 1)`, correctly rounded. For n ≤ 24 the f32 division of two exact integers is
/// already the correctly rounded quotient.
#[must_use]
#[inline]
pub fn unorm_to_f32(code: u32, bits: u32) -> f32 {
    let max = ((1u64 << bits) - 1) as u32;
    code as f32 / max as f32
}

/// R3 / R82 / R83: float → n-bit UNORM: NaN → 0, clamp to [0, 1], scale by `2^n − 1`, add 0.5,
/// truncate — computed exactly in integers (an f32 is `m·2^e`, so `x·(2^n−1) + 1/2` has an exact
/// fixed-point form), so D24 never lands one step off as a naive f32 product would (R83).
#[must_use]
pub fn float_to_unorm(v: f32, bits: u32) -> u32 {
    let max = (1u64 << bits) - 1;
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    if v >= 1.0 {
        return max as u32;
    }
    // 0 < v < 1: v = m · 2^-s with m < 2^24 and s ≥ 24.
    let b = v.to_bits();
    let exp = ((b >> 23) & 0xFF) as i32;
    let (m, s) = if exp == 0 {
        (u64::from(b & 0x7F_FFFF), 149)
    } else {
        (u64::from((b & 0x7F_FFFF) | 0x80_0000), 150 - exp)
    };
    let product = m * max; // < 2^48
    let s = s as u32;
    if s >= 64 {
        return 0; // v·max < 2^-15 < 1/2
    }
    ((product + (1u64 << (s - 1))) >> s) as u32
}

/// R4: f32 → f16 rounding toward zero; finite overflow saturates to the largest finite half;
/// NaN and ±inf are kept. Returns the f16 value widened back to f32 (exactly, R2).
#[must_use]
pub fn f32_to_f16_toward_zero(v: f32) -> f32 {
    if v.is_nan() || v.is_infinite() {
        return v;
    }
    let nearest = f16::from_f32(v);
    let mut h = nearest;
    // Step one half-ulp toward zero when round-to-nearest went away from zero.
    if nearest.to_f32().abs() > v.abs() {
        let bits = nearest.to_bits();
        h = f16::from_bits(bits - 1);
    }
    if h.is_infinite() {
        h = if v > 0.0 { f16::MAX } else { f16::MIN };
    }
    h.to_f32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unorm_conversion_is_correctly_rounded_r1() {
        for bits in [8u32, 16] {
            let max = (1u32 << bits) - 1;
            for k in 0..=max {
                let exact = f64::from(k) / f64::from(max);
                assert_eq!(
                    unorm_to_f32(k, bits),
                    exact as f32,
                    "code {k} of {bits} bits"
                );
            }
        }
        for k in [0u32, 1, 12_814_011, 8_388_608, 16_777_215] {
            let exact = f64::from(k) / 16_777_215.0;
            assert_eq!(unorm_to_f32(k, 24), exact as f32);
        }
    }

    #[test]
    fn d24_reference_quantizes_exactly_r83() {
        let r = f32::from_bits(0x3F43_86BC);
        assert_eq!(float_to_unorm(r, 24), 12_814_011);
        assert_eq!(
            Format::R24UnormX8Typeless.quantize_reference(r),
            CompareRef::Unorm(12_814_011)
        );
    }

    #[test]
    fn float_to_unorm_matches_exact_rational_rounding_r3() {
        let mut rng = penumbra_testkit::Rng::xorshift32(0x1234_5678);
        for _ in 0..200_000 {
            let x = rng.next_u32();
            let v = f32::from_bits(0x3000_0000 + x % 0x0F80_0000); // (2^-31, 1)
            for bits in [8u32, 16, 24] {
                let max = (1u64 << bits) - 1;
                // Exact: v·max + 1/2 in rationals; v = m·2^-s exactly representable in f64, and
                // v·max needs at most 48 significant bits.
                let p = f64::from(v) * max as f64;
                let expected = (p + 0.5).floor() as u32;
                let frac = p - p.floor();
                if (frac - 0.5).abs() > 1e-9 {
                    assert_eq!(float_to_unorm(v, bits), expected, "{v} {bits}");
                }
            }
        }
    }

    #[test]
    fn d16_reference_cases_r84() {
        let q = |r: f32| Format::D16Unorm.quantize_reference(r);
        assert_eq!(q(0.5), CompareRef::Unorm(32768));
        assert_eq!(q(f32::NAN), CompareRef::Unorm(0));
        assert_eq!(q(-3.0), CompareRef::Unorm(0));
        assert_eq!(q(7.0), CompareRef::Unorm(65535));
    }

    #[test]
    fn float_reference_is_not_clamped_r82() {
        assert_eq!(
            Format::R32Float.quantize_reference(1.5),
            CompareRef::Float(1.5)
        );
        let den = f32::from_bits(0x8000_0001);
        assert_eq!(
            Format::D32Float.quantize_reference(den),
            CompareRef::Float(-0.0)
        );
    }

    #[test]
    fn f16_reference_rounds_toward_zero_r4_r86() {
        // 1 + 2^-11 lies exactly between two halves: toward zero gives 1.0.
        assert_eq!(f32_to_f16_toward_zero(1.0 + 2f32.powi(-11)), 1.0);
        assert_eq!(f32_to_f16_toward_zero(-(1.0 + 3.0 * 2f32.powi(-12))), -1.0);
        assert_eq!(f32_to_f16_toward_zero(1e9), 65504.0);
        assert_eq!(f32_to_f16_toward_zero(-1e9), -65504.0);
        assert!(f32_to_f16_toward_zero(f32::NAN).is_nan());
        assert_eq!(f32_to_f16_toward_zero(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn missing_components_default_and_denormals_flush_r6() {
        let t = f32::from_bits(1).to_le_bytes();
        assert_eq!(Format::R32Float.load(&t), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(Format::R32Float.load(&t)[0].to_bits(), 0);
        let h = f16::from_bits(1).to_bits().to_le_bytes();
        assert_eq!(Format::R16Float.load(&h)[0], 2f32.powi(-24)); // R2: f16 denormals survive
    }

    #[test]
    fn d24_ignores_the_x8_byte() {
        let word = 0xAB00_0001u32.to_le_bytes();
        assert_eq!(Format::R24UnormX8Typeless.raw_component(&word, 0), 1);
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(format!("DXGI_FORMAT_{f}").parse::<Format>(), Ok(f));
        }
        assert!("R9_UNORM".parse::<Format>().is_err());
    }
}
