//! Shared pieces of the penumbra fuzz targets: structured inputs (derived with `arbitrary`) that
//! turn fuzzer bytes into samplers, textures and numbers that reach deep into the engine, plus
//! the invariants several targets check.
//!
//! Every structure is *permissive*: it can express invalid values (raw enum numbers that D3D12
//! does not define, sizes past the limits, NaN LOD ranges, ...) so that the validation paths are
//! fuzzed too, but it leans towards valid ones so that most inputs get past validation.

use arbitrary::Arbitrary;
use penumbra_core::{
    AddressMode, ComparisonFunc, Dimension, Filter, Format, SamplerDesc, SamplerFlags,
    SamplerOptions, Texture, TextureDesc, TextureView,
};

/// An f32 that is often one of the values that break arithmetic.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Num {
    /// A small multiple of 1/16 (most coordinates, LODs and references that matter).
    Small(i16),
    /// One of [`SPECIALS`].
    Special(u8),
    /// Any bit pattern.
    Bits(u32),
}

/// Values that break arithmetic: NaN, infinities, huge and tiny numbers, signed zeros, denormals,
/// boundaries of the fixed-point conversion.
pub const SPECIALS: [f32; 24] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e30,
    -1e30,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
    1e-45,
    -1e-45,
    1e-40,
    16777216.0,
    8388608.5,
    0.99999994,
    1.0000001,
    -10.0,
    10.0,
    65536.0,
    -0.5,
];

impl Num {
    /// The value.
    #[must_use]
    pub fn get(self) -> f32 {
        match self {
            Num::Small(i) => f32::from(i) / 16.0,
            Num::Special(i) => SPECIALS[usize::from(i) % SPECIALS.len()],
            Num::Bits(b) => f32::from_bits(b),
        }
    }
}

/// A raw D3D12 enum value: usually a defined one, sometimes any number (validation must refuse
/// it with an error, never panic).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Raw {
    /// Index into the defined values.
    Known(u8),
    /// Any raw number.
    Any(u32),
}

impl Raw {
    fn pick<T: Copy>(
        self,
        all: &[T],
        from_raw: impl Fn(u32) -> Result<T, penumbra_core::DescError>,
    ) -> Option<T> {
        match self {
            Raw::Known(i) => Some(all[usize::from(i) % all.len()]),
            Raw::Any(raw) => match from_raw(raw) {
                Ok(v) => Some(v),
                Err(e) => {
                    // The error names the field and the rule.
                    let text = e.to_string();
                    assert!(!text.is_empty());
                    None
                }
            },
        }
    }
}

/// Comparison filters only (the batch and comparison ops want these most of the time).
pub const COMPARISON_FILTERS: [Filter; 10] = [
    Filter::ComparisonMinMagMipPoint,
    Filter::ComparisonMinMagPointMipLinear,
    Filter::ComparisonMinPointMagLinearMipPoint,
    Filter::ComparisonMinPointMagMipLinear,
    Filter::ComparisonMinLinearMagMipPoint,
    Filter::ComparisonMinLinearMagPointMipLinear,
    Filter::ComparisonMinMagLinearMipPoint,
    Filter::ComparisonMinMagMipLinear,
    Filter::ComparisonMinMagAnisotropicMipPoint,
    Filter::ComparisonAnisotropic,
];

/// A `D3D12_SAMPLER_DESC` plus penumbra's options, every field free.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct SamplerIn {
    /// Filter.
    pub filter: Raw,
    /// Prefer comparison filters (index into [`COMPARISON_FILTERS`]) when `filter` is known.
    pub comparison: bool,
    /// AddressU/V/W.
    pub address: [Raw; 3],
    /// MipLODBias.
    pub mip_lod_bias: Option<Num>,
    /// MaxAnisotropy.
    pub max_anisotropy: u8,
    /// ComparisonFunc.
    pub func: Raw,
    /// BorderColor.
    pub border: [Num; 4],
    /// MinLOD, MaxLOD (None: the defaults 0 and FLT_MAX).
    pub lod_range: Option<(Num, Num)>,
    /// Flags (any bits).
    pub flags: u8,
    /// SamplerOptions.
    pub extended_comparison_formats: bool,
    /// SamplerOptions.
    pub lenient_offsets: bool,
    /// SamplerOptions.
    pub legacy_point_rounding: bool,
}

impl SamplerIn {
    /// The description, or `None` when a raw enum value is not a D3D12 value.
    #[must_use]
    pub fn desc(&self) -> Option<SamplerDesc> {
        let filter = match (self.filter, self.comparison) {
            (Raw::Known(i), true) => COMPARISON_FILTERS[usize::from(i) % COMPARISON_FILTERS.len()],
            (raw, _) => raw.pick(&Filter::ALL, Filter::from_raw)?,
        };
        let mut desc = SamplerDesc::new(filter);
        let [u, v, w] = self.address;
        desc.address_u = u.pick(&AddressMode::ALL, AddressMode::from_raw)?;
        desc.address_v = v.pick(&AddressMode::ALL, AddressMode::from_raw)?;
        desc.address_w = w.pick(&AddressMode::ALL, AddressMode::from_raw)?;
        if let Some(b) = self.mip_lod_bias {
            desc.mip_lod_bias = b.get();
        }
        desc.max_anisotropy = u32::from(self.max_anisotropy);
        desc.comparison_func = match self.func {
            // NONE is only for non-comparison filters; prefer a real function.
            Raw::Known(i) => ComparisonFunc::ALL[usize::from(i) % ComparisonFunc::ALL.len()],
            raw => raw.pick(&ComparisonFunc::ALL, ComparisonFunc::from_raw)?,
        };
        if !filter.is_comparison() && matches!(self.func, Raw::Known(i) if i & 0x80 == 0) {
            desc.comparison_func = ComparisonFunc::None;
        }
        desc.border_color = self.border.map(Num::get);
        if let Some((lo, hi)) = self.lod_range {
            desc.min_lod = lo.get();
            desc.max_lod = hi.get();
        }
        desc.flags = SamplerFlags(u32::from(self.flags & 0x7));
        Some(desc)
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> SamplerOptions {
        SamplerOptions {
            extended_comparison_formats: self.extended_comparison_formats,
            lenient_offsets: self.lenient_offsets,
            legacy_point_rounding: self.legacy_point_rounding,
        }
    }
}

/// A small texture of any dimension and format, with texel bytes from the input, and a view.
#[derive(Arbitrary, Clone, Debug)]
pub struct TextureIn {
    /// Index into `Dimension::ALL`.
    pub dimension: u8,
    /// Index into `Format::ALL`.
    pub format: u8,
    /// Width, height, depth (used modulo 16, plus 1).
    pub size: [u8; 3],
    /// Array elements (modulo 4, plus 1; cubes count cubes).
    pub elements: u8,
    /// Mip levels (modulo 4, plus 1, capped to the full chain).
    pub mips: u8,
    /// Take the fields as given instead of making them consistent (validation is then fuzzed).
    pub raw_desc: bool,
    /// Texel bytes, repeated to fill the texture.
    pub bytes: Vec<u8>,
    /// A view: most detailed mip, mip count, first slice, element count, resource clamp.
    pub view: Option<(u8, Option<u8>, u8, Option<u8>, Num)>,
}

impl TextureIn {
    /// The description (maybe invalid when `raw_desc`).
    #[must_use]
    pub fn desc(&self) -> TextureDesc {
        let dimension = Dimension::ALL[usize::from(self.dimension) % Dimension::ALL.len()];
        let format = Format::ALL[usize::from(self.format) % Format::ALL.len()];
        if self.raw_desc {
            let [w, h, d] = self.size.map(u32::from);
            return TextureDesc {
                dimension,
                format,
                width: w,
                height: h,
                depth: d,
                array_size: u32::from(self.elements),
                mip_levels: u32::from(self.mips),
            };
        }
        let [w, mut h, mut d] = self.size.map(|s| u32::from(s % 16) + 1);
        let n = u32::from(self.elements % 4) + 1;
        let array_size = match dimension {
            Dimension::Texture1D | Dimension::Texture2D | Dimension::Texture3D => 1,
            Dimension::Texture1DArray | Dimension::Texture2DArray => n,
            Dimension::TextureCube => 6,
            Dimension::TextureCubeArray => 6 * n,
        };
        if matches!(dimension, Dimension::Texture1D | Dimension::Texture1DArray) {
            h = 1;
        }
        if dimension != Dimension::Texture3D {
            d = 1;
        }
        if dimension.is_cube() {
            h = w;
        }
        let mut desc = TextureDesc {
            dimension,
            format,
            width: w,
            height: h,
            depth: d,
            array_size,
            mip_levels: 1,
        };
        desc.mip_levels = (u32::from(self.mips % 4) + 1).min(desc.full_mip_count());
        desc
    }

    /// The texture with its view, or `None` when the description or view is refused (the error
    /// must then be a clear one, which is all there is to check).
    #[must_use]
    pub fn build(&self) -> Option<Texture> {
        let desc = self.desc();
        if let Err(e) = desc.validate() {
            assert!(!e.to_string().is_empty());
            return None;
        }
        let total = usize::try_from(desc.total_bytes()).ok()?;
        // Raw descriptions stay small too: at most 255³ R8... refuse anything past 4 MiB here.
        if total > 4 << 20 {
            return None;
        }
        let mut data = vec![0u8; total];
        if !self.bytes.is_empty() {
            for (d, s) in data.iter_mut().zip(self.bytes.iter().cycle()) {
                *d = *s;
            }
        }
        let tex = Texture::new(desc, data).expect("a validated description with the right length");
        match self.view {
            None => Some(tex),
            Some((most, mips, first, elements, clamp)) => {
                let view = TextureView {
                    most_detailed_mip: u32::from(most % 5),
                    mip_levels: mips.map(|m| u32::from(m % 5)),
                    first_array_slice: u32::from(first % 8),
                    array_size: elements.map(|e| u32::from(e % 5)),
                    resource_min_lod_clamp: clamp.get(),
                };
                match tex.with_view(view) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        assert!(!e.to_string().is_empty());
                        Some(tex)
                    }
                }
            }
        }
    }
}

/// Whether every stored component of every texel of `tex` is finite (the invariants on results
/// only hold for finite inputs: a texture holding infinities can give infinities and NaN).
#[must_use]
pub fn all_finite(tex: &Texture) -> bool {
    let f = tex.format();
    let bpt = f.bytes_per_texel();
    tex.bytes()
        .chunks_exact(bpt)
        .all(|t| f.load(t).iter().all(|v| v.is_finite()))
}

/// Whether `format` holds UNORM values (every result of a non-comparison sample is in [0, 1]).
#[must_use]
pub fn is_unorm(format: Format) -> bool {
    matches!(
        format.kind(),
        penumbra_core::format::ComponentKind::Unorm(_)
    )
}
