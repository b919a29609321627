//! The samplers: a wgpu sampler description with its D3D12 equivalent ([`SamplerSpec`]) and
//! their random generation.

use penumbra_core::{AddressMode, ComparisonFunc, Filter, FilterType, ReductionType, SamplerDesc};

use super::TexSpec;
use crate::rng::Rng;

/// A wgpu sampler description (what the check can express through wgpu).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerSpec {
    /// U, V, W address modes.
    pub address: [wgpu::AddressMode; 3],
    /// Magnification filter.
    pub mag: wgpu::FilterMode,
    /// Minification filter.
    pub min: wgpu::FilterMode,
    /// Mip filter.
    pub mip: wgpu::MipmapFilterMode,
    /// `lod_min_clamp` (D3D MinLOD).
    pub lod_min: f32,
    /// `lod_max_clamp` (D3D MaxLOD).
    pub lod_max: f32,
    /// Comparison function for comparison samplers.
    pub compare: Option<wgpu::CompareFunction>,
    /// Border colour, when an address mode is ClampToBorder.
    pub border: Option<wgpu::SamplerBorderColor>,
}

fn filter_type(f: wgpu::FilterMode) -> FilterType {
    match f {
        wgpu::FilterMode::Nearest => FilterType::Point,
        wgpu::FilterMode::Linear => FilterType::Linear,
    }
}

impl SamplerSpec {
    /// The wgpu descriptor (no anisotropy; wgpu has no LOD bias).
    #[must_use]
    pub fn wgpu(&self) -> wgpu::SamplerDescriptor<'static> {
        wgpu::SamplerDescriptor {
            label: None,
            address_mode_u: self.address[0],
            address_mode_v: self.address[1],
            address_mode_w: self.address[2],
            mag_filter: self.mag,
            min_filter: self.min,
            mipmap_filter: self.mip,
            lod_min_clamp: self.lod_min,
            lod_max_clamp: self.lod_max,
            compare: self.compare,
            anisotropy_clamp: 1,
            border_color: self.border,
        }
    }

    /// The D3D12 filter for this sampler with `reduction`: mag/min/mip types map one to one.
    #[must_use]
    pub fn filter(&self, reduction: ReductionType) -> Filter {
        let mip = match self.mip {
            wgpu::MipmapFilterMode::Nearest => FilterType::Point,
            wgpu::MipmapFilterMode::Linear => FilterType::Linear,
        };
        Filter::encode_basic(filter_type(self.min), filter_type(self.mag), mip, reduction)
    }

    /// The equivalent D3D12_SAMPLER_DESC: Repeat → WRAP, MirrorRepeat → MIRROR, ClampToEdge →
    /// CLAMP, ClampToBorder → BORDER with the colour; `compare` → a COMPARISON_ filter with that
    /// ComparisonFunc; lod clamps → MinLOD/MaxLOD; MipLODBias 0; MaxAnisotropy 1.
    #[must_use]
    pub fn d3d(&self) -> SamplerDesc {
        let reduction = if self.compare.is_some() {
            ReductionType::Comparison
        } else {
            ReductionType::Standard
        };
        let mut desc = SamplerDesc::new(self.filter(reduction));
        [desc.address_u, desc.address_v, desc.address_w] = self.address.map(|a| match a {
            wgpu::AddressMode::Repeat => AddressMode::Wrap,
            wgpu::AddressMode::MirrorRepeat => AddressMode::Mirror,
            wgpu::AddressMode::ClampToEdge => AddressMode::Clamp,
            wgpu::AddressMode::ClampToBorder => AddressMode::Border,
        });
        desc.border_color = match self.border {
            // wgpu-hal maps Zero to FLOAT_TRANSPARENT_BLACK on Vulkan.
            None
            | Some(wgpu::SamplerBorderColor::TransparentBlack | wgpu::SamplerBorderColor::Zero) => {
                [0.0; 4]
            }
            Some(wgpu::SamplerBorderColor::OpaqueBlack) => [0.0, 0.0, 0.0, 1.0],
            Some(wgpu::SamplerBorderColor::OpaqueWhite) => [1.0; 4],
        };
        desc.min_lod = self.lod_min;
        desc.max_lod = self.lod_max;
        if let Some(c) = self.compare {
            desc.comparison_func = match c {
                wgpu::CompareFunction::Never => ComparisonFunc::Never,
                wgpu::CompareFunction::Less => ComparisonFunc::Less,
                wgpu::CompareFunction::Equal => ComparisonFunc::Equal,
                wgpu::CompareFunction::LessEqual => ComparisonFunc::LessEqual,
                wgpu::CompareFunction::Greater => ComparisonFunc::Greater,
                wgpu::CompareFunction::NotEqual => ComparisonFunc::NotEqual,
                wgpu::CompareFunction::GreaterEqual => ComparisonFunc::GreaterEqual,
                wgpu::CompareFunction::Always => ComparisonFunc::Always,
            };
        }
        desc
    }

    /// Whether any axis uses the border.
    #[must_use]
    pub fn uses_border(&self) -> bool {
        self.address.contains(&wgpu::AddressMode::ClampToBorder)
    }

    /// A short description for reports.
    #[must_use]
    pub fn describe(&self) -> String {
        let d = self.d3d();
        let border = if self.uses_border() {
            format!(
                " border {:?}",
                self.border.unwrap_or(wgpu::SamplerBorderColor::Zero)
            )
        } else {
            String::new()
        };
        let cmp = match self.compare {
            Some(_) => format!(" {}", d.comparison_func.name()),
            None => String::new(),
        };
        format!(
            "{}{} address {}/{}/{}{} MinLOD {} MaxLOD {}",
            d.filter.name(),
            cmp,
            d.address_u.name(),
            d.address_v.name(),
            d.address_w.name(),
            border,
            d.min_lod,
            d.max_lod
        )
    }
}

/// The round-robin counters of [`generate`](super::generate).
#[derive(Default)]
pub(super) struct RoundRobin {
    compare: usize,
    address: usize,
    border: usize,
}

const ADDRESS: [wgpu::AddressMode; 4] = [
    wgpu::AddressMode::Repeat,
    wgpu::AddressMode::MirrorRepeat,
    wgpu::AddressMode::ClampToEdge,
    wgpu::AddressMode::ClampToBorder,
];

const BORDERS: [wgpu::SamplerBorderColor; 4] = [
    wgpu::SamplerBorderColor::TransparentBlack,
    wgpu::SamplerBorderColor::OpaqueBlack,
    wgpu::SamplerBorderColor::OpaqueWhite,
    wgpu::SamplerBorderColor::Zero,
];

const COMPARE: [wgpu::CompareFunction; 8] = [
    wgpu::CompareFunction::Never,
    wgpu::CompareFunction::Less,
    wgpu::CompareFunction::Equal,
    wgpu::CompareFunction::LessEqual,
    wgpu::CompareFunction::Greater,
    wgpu::CompareFunction::NotEqual,
    wgpu::CompareFunction::GreaterEqual,
    wgpu::CompareFunction::Always,
];

fn gen_filter(rng: &mut Rng) -> wgpu::FilterMode {
    if rng.chance(0.5) {
        wgpu::FilterMode::Linear
    } else {
        wgpu::FilterMode::Nearest
    }
}

pub(super) fn gen_sampler(rng: &mut Rng, rr: &mut RoundRobin, tex: &TexSpec) -> SamplerSpec {
    let mut address = [ADDRESS[0]; 3];
    for a in &mut address {
        *a = ADDRESS[rr.address % 4];
        rr.address += 1 + rng.below(2) as usize;
    }
    let uses_border = address.contains(&wgpu::AddressMode::ClampToBorder);
    let border = if uses_border {
        rr.border += 1;
        Some(BORDERS[rr.border % 4])
    } else {
        None
    };
    let compare = if tex.fmt.is_depth() && rng.chance(0.6) {
        rr.compare += 1;
        Some(COMPARE[rr.compare % 8])
    } else {
        None
    };
    // LOD clamps (wgpu has no LOD bias): fractions away from .5 so mip-point choices stay clear.
    let (lod_min, lod_max) = if rng.chance(0.6) {
        (0.0, 32.0)
    } else {
        let lo = rng.pick(&[0.0f32, 0.0, 0.25, 0.75, 1.0, 1.25, 2.0]);
        let mut hi = lo + rng.pick(&[0.0f32, 0.25, 1.0, 1.75, 3.0, 32.0]);
        if hi.fract() == 0.5 {
            hi += 0.25;
        }
        (lo, hi)
    };
    SamplerSpec {
        address,
        mag: gen_filter(rng),
        min: gen_filter(rng),
        mip: if rng.chance(0.5) {
            wgpu::MipmapFilterMode::Linear
        } else {
            wgpu::MipmapFilterMode::Nearest
        },
        lod_min,
        lod_max,
        compare,
        border,
    }
}
