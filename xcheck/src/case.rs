//! The cases: random textures, wgpu samplers with their D3D12 equivalents, and lookups whose inputs
//! stay out of SPEC §3.3's guard bands (item 4) — except a few deliberate boundary probes that
//! exercise the documented Vulkan-vs-D3D differences (conformance/SCHEMA.md).

use half::f16;
use penumbra_core::texture::Dimension;
use penumbra_core::{
    AddressMode, ComparisonFunc, Coord, Filter, FilterType, Format, ReductionType, Sampler,
    SamplerDesc, Texture, TextureDesc,
};

use crate::rng::Rng;

/// SPEC §3.3 item 4: the width of every guard band, in texels (or LOD units).
pub const BAND: f64 = 2.0 / 256.0;

/// The texture dimensions the check covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `texture_2d` / Texture2D.
    D2,
    /// `texture_2d_array` / Texture2DArray.
    D2Array,
    /// `texture_cube` / TextureCube (faces +X, −X, +Y, −Y, +Z, −Z in both APIs).
    Cube,
}

impl Dim {
    /// Every dimension.
    pub const ALL: [Dim; 3] = [Dim::D2, Dim::D2Array, Dim::Cube];

    /// The D3D12 dimension penumbra samples.
    #[must_use]
    pub const fn penumbra(self) -> Dimension {
        match self {
            Dim::D2 => Dimension::Texture2D,
            Dim::D2Array => Dimension::Texture2DArray,
            Dim::Cube => Dimension::TextureCube,
        }
    }

    /// The wgpu view dimension.
    #[must_use]
    pub const fn view(self) -> wgpu::TextureViewDimension {
        match self {
            Dim::D2 => wgpu::TextureViewDimension::D2,
            Dim::D2Array => wgpu::TextureViewDimension::D2Array,
            Dim::Cube => wgpu::TextureViewDimension::Cube,
        }
    }

    /// A short name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Dim::D2 => "2D",
            Dim::D2Array => "2DArray",
            Dim::Cube => "Cube",
        }
    }
}

/// The texel formats the check covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fmt {
    /// Depth32Float / D32_FLOAT, filled by a depth-only render pass (WGPU.md).
    D32,
    /// Depth16Unorm / D16_UNORM, filled by `write_texture`.
    D16,
    /// R32Float / R32_FLOAT.
    R32F,
    /// R16Float / R16_FLOAT.
    R16F,
    /// R8Unorm / R8_UNORM.
    R8,
    /// Rgba8Unorm / R8G8B8A8_UNORM.
    Rgba8,
}

impl Fmt {
    /// Every format.
    pub const ALL: [Fmt; 6] = [
        Fmt::D32,
        Fmt::D16,
        Fmt::R32F,
        Fmt::R16F,
        Fmt::R8,
        Fmt::Rgba8,
    ];

    /// The DXGI format penumbra samples.
    #[must_use]
    pub const fn penumbra(self) -> Format {
        match self {
            Fmt::D32 => Format::D32Float,
            Fmt::D16 => Format::D16Unorm,
            Fmt::R32F => Format::R32Float,
            Fmt::R16F => Format::R16Float,
            Fmt::R8 => Format::R8Unorm,
            Fmt::Rgba8 => Format::R8G8B8A8Unorm,
        }
    }

    /// The wgpu format.
    #[must_use]
    pub const fn wgpu(self) -> wgpu::TextureFormat {
        match self {
            Fmt::D32 => wgpu::TextureFormat::Depth32Float,
            Fmt::D16 => wgpu::TextureFormat::Depth16Unorm,
            Fmt::R32F => wgpu::TextureFormat::R32Float,
            Fmt::R16F => wgpu::TextureFormat::R16Float,
            Fmt::R8 => wgpu::TextureFormat::R8Unorm,
            Fmt::Rgba8 => wgpu::TextureFormat::Rgba8Unorm,
        }
    }

    /// True for the depth formats (WGSL `texture_depth_*`, the only ones WGSL compares).
    #[must_use]
    pub const fn is_depth(self) -> bool {
        matches!(self, Fmt::D32 | Fmt::D16)
    }

    /// Bytes per texel.
    #[must_use]
    pub const fn bytes(self) -> usize {
        match self {
            Fmt::R8 => 1,
            Fmt::D16 | Fmt::R16F => 2,
            Fmt::D32 | Fmt::R32F | Fmt::Rgba8 => 4,
        }
    }

    /// Number of stored components.
    #[must_use]
    pub const fn channels(self) -> usize {
        match self {
            Fmt::Rgba8 => 4,
            _ => 1,
        }
    }

    /// The UNORM bit width, if the format is UNORM.
    #[must_use]
    pub const fn unorm_bits(self) -> Option<u32> {
        match self {
            Fmt::D16 => Some(16),
            Fmt::R8 | Fmt::Rgba8 => Some(8),
            _ => None,
        }
    }

    /// The D3D12 name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.penumbra().name()
    }
}

/// lavapipe's UNORM → float conversion: the code times an f32 reciprocal (SCHEMA.md), which is
/// 1 ulp off the correctly rounded `k / (2^n − 1)` (R1) for some codes.
#[must_use]
pub fn lavapipe_unorm(code: u32, bits: u32) -> f32 {
    let max = ((1u64 << bits) - 1) as f32;
    code as f32 * (1.0 / max)
}

/// One texture: its shape and texels, shared by both sides.
#[derive(Clone, Debug)]
pub struct TexSpec {
    /// Dimension.
    pub dim: Dim,
    /// Format.
    pub fmt: Fmt,
    /// Width of mip 0.
    pub width: u32,
    /// Height of mip 0.
    pub height: u32,
    /// 2D slices (6 for a cube).
    pub layers: u32,
    /// Mip levels.
    pub mips: u32,
    /// Packed texels per subresource in D3D12 order (`mip + layer·mips`), rows from v = 0.
    pub subresources: Vec<Vec<u8>>,
}

impl TexSpec {
    /// Size of mip `mip`.
    #[must_use]
    pub fn level_size(&self, mip: u32) -> [u32; 2] {
        [(self.width >> mip).max(1), (self.height >> mip).max(1)]
    }

    /// The texels of (`mip`, `layer`).
    #[must_use]
    pub fn subresource(&self, mip: u32, layer: u32) -> &[u8] {
        &self.subresources[(mip + layer * self.mips) as usize]
    }

    fn desc(&self, format: Format) -> TextureDesc {
        TextureDesc::new(
            self.dim.penumbra(),
            format,
            [self.width, self.height, 1],
            self.layers,
        )
        .with_mip_levels(self.mips)
    }

    /// The penumbra texture.
    ///
    /// # Panics
    /// If the generated texture is not valid for penumbra (a generator bug).
    #[must_use]
    pub fn penumbra(&self) -> Texture {
        Texture::new(self.desc(self.fmt.penumbra()), self.subresources.concat())
            .expect("generated textures are valid")
    }

    /// Every stored R component as its raw code (UNORM integer or float bits), all subresources.
    pub fn r_codes(&self) -> impl Iterator<Item = u32> + '_ {
        let f = self.fmt.penumbra();
        let bpt = self.fmt.bytes();
        self.subresources
            .iter()
            .flat_map(move |s| s.chunks_exact(bpt).map(move |t| f.raw_component(t, 0)))
    }

    /// For UNORM formats: the same texels as float values decoded the way lavapipe decodes them
    /// ([`lavapipe_unorm`]) — D16 as D32_FLOAT (so comparisons work on it), R8 as R32_FLOAT, RGBA8 as
    /// R32G32B32A32_FLOAT. The alternate model for lavapipe's 1-ulp conversion difference.
    #[must_use]
    pub fn lavapipe_decoded(&self) -> Option<Texture> {
        let bits = self.fmt.unorm_bits()?;
        let (format, channels) = match self.fmt {
            Fmt::D16 => (Format::D32Float, 1),
            Fmt::Rgba8 => (Format::R32G32B32A32Float, 4),
            _ => (Format::R32Float, 1),
        };
        let f = self.fmt.penumbra();
        let bpt = self.fmt.bytes();
        let bytes: Vec<u8> = self
            .subresources
            .iter()
            .flat_map(|s| s.chunks_exact(bpt))
            .flat_map(|t| {
                (0..channels).flat_map(move |c| {
                    lavapipe_unorm(f.raw_component(t, c), bits)
                        .to_le_bytes()
                        .into_iter()
                })
            })
            .collect();
        Texture::new(self.desc(format), bytes).ok()
    }
}

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

/// The WGSL call of a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `textureSampleLevel` → `SampleLevel` (sample_l).
    SampleLevel,
    /// `textureSampleGrad` → `SampleGrad` (sample_d).
    SampleGrad,
    /// `textureSampleCompareLevel` (Bevy's shadow lookup) → `SampleCmpLevelZero` (sample_c_lz).
    SampleCompareLevel,
    /// `textureGather(component, …)` → `Gather{Red,Green,Blue,Alpha}` (gather4).
    Gather(u32),
    /// `textureGatherCompare` → `GatherCmp` (gather4_c).
    GatherCompare,
}

impl Op {
    /// The five ops, for reports (gathers of every component count as one).
    pub const REPORTED: [Op; 5] = [
        Op::SampleLevel,
        Op::SampleGrad,
        Op::SampleCompareLevel,
        Op::Gather(0),
        Op::GatherCompare,
    ];

    /// The op code the compute shader switches on.
    #[must_use]
    pub const fn code(self) -> u32 {
        match self {
            Op::SampleLevel => 0,
            Op::SampleGrad => 1,
            Op::Gather(c) => 2 + c,
            Op::SampleCompareLevel => 6,
            Op::GatherCompare => 7,
        }
    }

    /// The WGSL function.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Op::SampleLevel => "textureSampleLevel",
            Op::SampleGrad => "textureSampleGrad",
            Op::SampleCompareLevel => "textureSampleCompareLevel",
            Op::Gather(_) => "textureGather",
            Op::GatherCompare => "textureGatherCompare",
        }
    }

    /// True for the comparison ops.
    #[must_use]
    pub const fn is_compare(self) -> bool {
        matches!(self, Op::SampleCompareLevel | Op::GatherCompare)
    }
}

/// Which deliberate boundary probe a lookup is (most are `Plain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Probe {
    /// Inputs kept out of every guard band.
    Plain,
    /// D16 reference exactly on a texel's value `fl(c/65535)`: D3D quantizes it to `c` (R82);
    /// lavapipe compares it with its own decode of `c`.
    RefOnCode,
    /// D16 reference within half a step of a texel code: D3D quantizes it onto the code (R82),
    /// lavapipe compares the unquantized value (SCHEMA.md).
    RefNearCode,
    /// MIP POINT at an explicit LOD of exactly x.5: D3D rounds up (R60), lavapipe to even.
    MipHalf,
}

/// One lookup, in the terms of both APIs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lookup {
    /// The call.
    pub op: Op,
    /// 2D: `[u, v, _]`; cube: the direction.
    pub coord: [f32; 3],
    /// The array layer the shader passes (WGSL takes an integer).
    pub layer: i32,
    /// The D3D slice coordinate given to penumbra: `layer` plus a fraction R43's rounding removes.
    pub slice: f32,
    /// Explicit LOD (`textureSampleLevel`; an integer for depth textures).
    pub level: f32,
    /// d(coord)/dx for `textureSampleGrad`.
    pub ddx: [f32; 3],
    /// d(coord)/dy for `textureSampleGrad`.
    pub ddy: [f32; 3],
    /// Comparison reference.
    pub dref: f32,
    /// Which probe this is.
    pub probe: Probe,
    /// For gradient lookups: whether the footprint is axis-aligned (SPEC §3.3 item 6).
    pub axis_aligned: bool,
}

impl Lookup {
    /// The coordinate penumbra takes for this lookup on a `dim` texture.
    #[must_use]
    pub fn penumbra_coord(&self, dim: Dim) -> Coord {
        match dim {
            Dim::D2 => Coord([self.coord[0], self.coord[1], 0.0, 0.0]),
            Dim::D2Array => Coord([self.coord[0], self.coord[1], self.slice, 0.0]),
            Dim::Cube => Coord([self.coord[0], self.coord[1], self.coord[2], 0.0]),
        }
    }
}

/// One texture with one sampler and its lookups: one dispatch.
#[derive(Clone, Debug)]
pub struct Group {
    /// Index into [`Scenario::textures`].
    pub texture: usize,
    /// The sampler.
    pub sampler: SamplerSpec,
    /// The lookups.
    pub lookups: Vec<Lookup>,
}

/// Everything one run checks.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The seed it was generated from.
    pub seed: u64,
    /// The textures.
    pub textures: Vec<TexSpec>,
    /// The dispatches.
    pub groups: Vec<Group>,
}

impl Scenario {
    /// Number of lookups.
    #[must_use]
    pub fn lookup_count(&self) -> usize {
        self.groups.iter().map(|g| g.lookups.len()).sum()
    }
}

/// How much to generate.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Textures per (dimension, format) pair.
    pub textures_per_kind: u32,
    /// Samplers per texture.
    pub samplers_per_texture: u32,
    /// Lookups per sampler.
    pub lookups_per_sampler: u32,
}

impl Default for Config {
    /// 4 × 18 textures × 4 samplers × 28 lookups = 8064 lookups.
    fn default() -> Self {
        Config {
            textures_per_kind: 4,
            samplers_per_texture: 4,
            lookups_per_sampler: 28,
        }
    }
}

/// Generates a scenario from `seed`.
#[must_use]
pub fn generate(seed: u64, config: &Config) -> Scenario {
    let mut rng = Rng::new(seed);
    let mut textures = Vec::new();
    let mut groups = Vec::new();
    // Round-robin counters so every compare function, address mode and border colour is covered.
    let mut rr = RoundRobin::default();
    for _ in 0..config.textures_per_kind {
        for fmt in Fmt::ALL {
            for dim in Dim::ALL {
                let tex = gen_texture(&mut rng, dim, fmt);
                let texels = Texels {
                    codes: sorted_codes(&tex),
                    texture: tex.penumbra(),
                };
                for _ in 0..config.samplers_per_texture {
                    let sampler = gen_sampler(&mut rng, &mut rr, &tex);
                    let lookups = (0..config.lookups_per_sampler)
                        .map(|_| gen_lookup(&mut rng, &tex, &sampler, &texels))
                        .collect();
                    groups.push(Group {
                        texture: textures.len(),
                        sampler,
                        lookups,
                    });
                }
                textures.push(tex);
            }
        }
    }
    Scenario {
        seed,
        textures,
        groups,
    }
}

#[derive(Default)]
struct RoundRobin {
    compare: usize,
    address: usize,
    border: usize,
}

const SIZES: [u32; 14] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24];

fn gen_texture(rng: &mut Rng, dim: Dim, fmt: Fmt) -> TexSpec {
    let width = rng.pick(&SIZES);
    let height = if dim == Dim::Cube {
        width
    } else {
        rng.pick(&SIZES)
    };
    let layers = match dim {
        Dim::D2 => 1,
        Dim::D2Array => rng.range_i32(1, 4) as u32,
        Dim::Cube => 6,
    };
    let full = 32 - width.max(height).leading_zeros();
    let mips = if rng.chance(0.5) {
        full
    } else {
        rng.range_i32(1, full as i32) as u32
    };
    // Per-texture value distribution.
    let scale = rng.pick(&[1.0f32, 4.0, 300.0]);
    let mut subresources = Vec::new();
    for _layer in 0..layers {
        for mip in 0..mips {
            let w = (width >> mip).max(1);
            let h = (height >> mip).max(1);
            let mut bytes = Vec::with_capacity((w * h) as usize * fmt.bytes());
            for _ in 0..w * h {
                gen_texel(rng, fmt, scale, &mut bytes);
            }
            subresources.push(bytes);
        }
    }
    TexSpec {
        dim,
        fmt,
        width,
        height,
        layers,
        mips,
        subresources,
    }
}

fn gen_texel(rng: &mut Rng, fmt: Fmt, scale: f32, out: &mut Vec<u8>) {
    match fmt {
        Fmt::D32 => {
            // Depth is written through frag_depth, so it stays in [0, 1]; coarse values make ties.
            let v = match rng.below(10) {
                0 => 0.0,
                1 => 1.0,
                2..=4 => rng.below(33) as f32 / 32.0,
                _ => rng.range_f32(0.0, 1.0),
            };
            out.extend_from_slice(&v.to_le_bytes());
        }
        Fmt::D16 => {
            let v: u16 = match rng.below(10) {
                0 => 0,
                1 => 65535,
                2 => (rng.below(17) * 4096).min(65535) as u16,
                _ => rng.below(65536) as u16,
            };
            out.extend_from_slice(&v.to_le_bytes());
        }
        Fmt::R32F => {
            let v = if rng.chance(0.15) {
                rng.range_i32(-8, 8) as f32 / 8.0 * scale
            } else if scale == 1.0 {
                rng.range_f32(0.0, 1.0)
            } else {
                rng.range_f32(-scale, scale)
            };
            out.extend_from_slice(&v.to_le_bytes());
        }
        Fmt::R16F => {
            let v = if rng.chance(0.15) {
                rng.range_i32(-6, 6) as f32
            } else {
                rng.range_f32(-6.0, 6.0)
            };
            out.extend_from_slice(&f16::from_f32(v).to_bits().to_le_bytes());
        }
        Fmt::R8 => out.push(rng.below(256) as u8),
        Fmt::Rgba8 => {
            for _ in 0..4 {
                out.push(rng.below(256) as u8);
            }
        }
    }
}

/// What reference generation knows about a texture's texels.
struct Texels {
    /// The sorted distinct R codes.
    codes: Vec<u32>,
    /// The texture as penumbra sees it (to find a lookup's footprint).
    texture: Texture,
}

/// The sorted distinct R codes of a texture (used to keep D16 references away from texels).
fn sorted_codes(tex: &TexSpec) -> Vec<u32> {
    let mut v: Vec<u32> = tex.r_codes().collect();
    v.sort_unstable();
    v.dedup();
    v
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

fn gen_sampler(rng: &mut Rng, rr: &mut RoundRobin, tex: &TexSpec) -> SamplerSpec {
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

fn frac(x: f64) -> f64 {
    x - x.floor()
}

/// SPEC §3.3 item 4 on one texel-space position `x` of one axis and level: away from point-sampling
/// boundaries (`frac(x)` near 0) and from linear zero-weight / footprint boundaries
/// (`frac(x − 0.5)` near 0).
#[must_use]
pub fn clear_position(x: f64) -> bool {
    let p = frac(x);
    let l = frac(x - 0.5);
    (BAND..1.0 - BAND).contains(&p) && (BAND..=1.0 - BAND).contains(&l)
}

/// R98/R99 as penumbra computes them in f32: the face (+X, −X, +Y, −Y, +Z, −Z) and (s, t).
#[must_use]
pub fn cube_face(d: [f32; 3]) -> (u32, f32, f32) {
    let [x, y, z] = d;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let face = if az >= ax && az >= ay {
        if z >= 0.0 { 4 } else { 5 }
    } else if ay >= ax {
        if y >= 0.0 { 2 } else { 3 }
    } else if x >= 0.0 {
        0
    } else {
        1
    };
    let (sc, tc, m) = match face {
        0 => (-z, -y, x),
        1 => (z, -y, x),
        2 => (x, z, y),
        3 => (x, -z, y),
        4 => (x, -y, z),
        _ => (-x, -y, z),
    };
    let am = m.abs();
    (face, 0.5 * (sc / am) + 0.5, 0.5 * (tc / am) + 0.5)
}

/// The 2D sampling position of a lookup's coordinate: (u, v) or the cube face's (s, t).
#[must_use]
pub fn face_position(dim: Dim, coord: [f32; 3]) -> [f32; 2] {
    match dim {
        Dim::Cube => {
            let (_, s, t) = cube_face(coord);
            [s, t]
        }
        _ => [coord[0], coord[1]],
    }
}

/// Whether a coordinate respects the guard bands on every level of the texture (and, for cubes,
/// the face-tie band: major ≥ (1 + 2^-10)·others).
fn coord_clear(tex: &TexSpec, coord: [f32; 3]) -> bool {
    if tex.dim == Dim::Cube {
        let mut a = coord.map(f32::abs);
        a.sort_by(f32::total_cmp);
        if f64::from(a[2]) < (1.0 + 1.0 / 1024.0) * f64::from(a[1]) {
            return false;
        }
    }
    let [s, t] = face_position(tex.dim, coord);
    (0..tex.mips).all(|m| {
        let [w, h] = tex.level_size(m);
        clear_position(f64::from(s) * f64::from(w)) && clear_position(f64::from(t) * f64::from(h))
    })
}

/// Whether a bilinear footprint on some level of a cube can reach a corner (both axes off the
/// face), where the 3-texel rule of R103 applies.
#[must_use]
pub fn cube_corner(tex: &TexSpec, coord: [f32; 3], levels: std::ops::Range<u32>) -> bool {
    if tex.dim != Dim::Cube {
        return false;
    }
    let [s, t] = face_position(tex.dim, coord);
    levels.into_iter().any(|m| {
        let n = tex.level_size(m)[0];
        let off = |x: f32| {
            let i0 = (f64::from(x) * f64::from(n) - 0.5).floor();
            i0 < 0.0 || i0 + 1.0 > f64::from(n) - 1.0
        };
        off(s) && off(t)
    })
}

fn gen_coord(rng: &mut Rng, tex: &TexSpec) -> [f32; 3] {
    for _ in 0..1000 {
        let c = match tex.dim {
            Dim::Cube => {
                let d = [
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                    rng.range_f32(-1.0, 1.0),
                ];
                let s = rng.range_f32(0.3, 4.0);
                d.map(|x| x * s)
            }
            _ => {
                let (lo, hi) = if rng.chance(0.6) {
                    (0.0, 1.0)
                } else {
                    (-1.25, 2.25)
                };
                [rng.range_f32(lo, hi), rng.range_f32(lo, hi), 0.0]
            }
        };
        if c.iter().any(|x| x.abs() > 0.05) && coord_clear(tex, c) {
            return c;
        }
    }
    unreachable!("no coordinate clear of the guard bands in 1000 tries")
}

/// The clamped LOD of R57 (MinLOD wins over MaxLOD).
#[must_use]
pub fn clamp_lod(lod: f32, s: &SamplerSpec) -> f32 {
    lod.min(s.lod_max).max(s.lod_min)
}

/// Whether an explicit LOD is clear of the mip-point, mag/min and mip-weight guard bands once
/// clamped (exact integers are clear: both sides agree there).
fn lod_clear(lod: f32, s: &SamplerSpec) -> bool {
    let c = f64::from(clamp_lod(lod, s));
    if c == c.floor() {
        return true;
    }
    if s.mag != s.min && c.abs() <= BAND {
        return false;
    }
    let f = frac(c);
    match s.mip {
        wgpu::MipmapFilterMode::Nearest => (f - 0.5).abs() >= BAND,
        wgpu::MipmapFilterMode::Linear => (BAND..=1.0 - BAND).contains(&f),
    }
}

fn gen_lookup(rng: &mut Rng, tex: &TexSpec, s: &SamplerSpec, texels: &Texels) -> Lookup {
    let op = pick_op(rng, tex, s);
    let coord = gen_coord(rng, tex);
    let (layer, slice) = if tex.dim == Dim::D2Array {
        let n = tex.layers as i32;
        let layer = if rng.chance(0.1) {
            rng.pick(&[-1, n])
        } else {
            rng.range_i32(0, n - 1)
        };
        // R43 rounds the D3D slice to the nearest integer: a fraction within ±0.45 (clear of the
        // 2^-10 band around .5) lands on `layer`.
        let jitter = rng.range_f32(-0.45, 0.45);
        (layer, layer as f32 + jitter)
    } else {
        (0, 0.0)
    };
    let mut lk = Lookup {
        op,
        coord,
        layer,
        slice,
        level: 0.0,
        ddx: [0.0; 3],
        ddy: [0.0; 3],
        dref: 0.0,
        probe: Probe::Plain,
        axis_aligned: false,
    };
    match op {
        Op::SampleLevel => gen_level(rng, tex, s, &mut lk),
        Op::SampleGrad => gen_grad(rng, tex, &mut lk),
        Op::SampleCompareLevel | Op::GatherCompare => {
            let near = footprint_codes(tex, s, texels, &lk);
            gen_ref(rng, tex, &texels.codes, &near, &mut lk);
        }
        Op::Gather(_) => {}
    }
    lk
}

fn pick_op(rng: &mut Rng, tex: &TexSpec, s: &SamplerSpec) -> Op {
    if s.compare.is_some() {
        return if rng.chance(0.6) {
            Op::SampleCompareLevel
        } else {
            Op::GatherCompare
        };
    }
    let r = rng.unit();
    if tex.fmt.is_depth() {
        // WGSL has no textureSampleGrad for depth textures.
        if r < 0.6 {
            Op::SampleLevel
        } else {
            Op::Gather(0)
        }
    } else if r < 0.4 {
        Op::SampleLevel
    } else if r < 0.75 {
        Op::SampleGrad
    } else {
        // Components beyond R on one-channel formats read the defaults (0, 0, 1).
        Op::Gather(match tex.fmt {
            Fmt::Rgba8 => rng.below(4),
            _ if rng.chance(0.15) => 1 + rng.below(3),
            _ => 0,
        })
    }
}

fn gen_level(rng: &mut Rng, tex: &TexSpec, s: &SamplerSpec, lk: &mut Lookup) {
    let top = tex.mips as i32;
    if tex.fmt.is_depth() {
        // WGSL takes an integer level on depth textures.
        lk.level = rng.range_i32(-1, top) as f32;
        return;
    }
    if s.mip == wgpu::MipmapFilterMode::Nearest && top > 1 && rng.chance(0.05) {
        let l = rng.range_i32(0, top - 2) as f32 + 0.5;
        if clamp_lod(l, s) == l {
            lk.level = l;
            lk.probe = Probe::MipHalf;
            return;
        }
    }
    for _ in 0..1000 {
        let l = if rng.chance(0.25) {
            rng.range_i32(-1, top) as f32
        } else {
            rng.range_f32(-1.0, top as f32 + 0.5)
        };
        if lod_clear(l, s) {
            lk.level = l;
            return;
        }
    }
    unreachable!("no LOD clear of the guard bands in 1000 tries")
}

fn gen_grad(rng: &mut Rng, tex: &TexSpec, lk: &mut Lookup) {
    let target = rng.range_f32(-1.5, tex.mips as f32 + 0.5);
    let len = 2f64.powf(f64::from(target));
    let (w, h) = (f64::from(tex.width), f64::from(tex.height));
    let sign = |rng: &mut Rng| if rng.chance(0.5) { 1.0 } else { -1.0 };
    if tex.dim == Dim::Cube {
        // A direction's derivative maps to face texels as |d|/|m| · N/2 (R101).
        let m = lk.coord.iter().fold(0f32, |a, &x| a.max(x.abs()));
        let scale = len * f64::from(m) * 2.0 / w;
        let mut v = || [0; 3].map(|_| (f64::from(rng.range_f32(-1.0, 1.0)) * scale) as f32);
        lk.ddx = v();
        lk.ddy = v();
        lk.axis_aligned = false;
        return;
    }
    let minor = len * f64::from(rng.range_f32(0.25, 1.0));
    if rng.chance(0.5) {
        // Axis-aligned: one derivative along u, the other along v (SPEC §3.3 item 6).
        let (a, b) = if rng.chance(0.5) {
            (len, minor)
        } else {
            (minor, len)
        };
        let du = (sign(rng) * a / w) as f32;
        let dv = (sign(rng) * b / h) as f32;
        if rng.chance(0.5) {
            lk.ddx = [du, 0.0, 0.0];
            lk.ddy = [0.0, dv, 0.0];
        } else {
            lk.ddx = [0.0, dv, 0.0];
            lk.ddy = [du, 0.0, 0.0];
        }
        lk.axis_aligned = true;
    } else {
        let t = rng.unit() * std::f64::consts::TAU;
        let p = t + rng.unit() * std::f64::consts::PI;
        lk.ddx = [(len * t.cos() / w) as f32, (len * t.sin() / h) as f32, 0.0];
        lk.ddy = [
            (minor * p.cos() / w) as f32,
            (minor * p.sin() / h) as f32,
            0.0,
        ];
        lk.axis_aligned = false;
    }
}

/// The raw R codes of the level-0 bilinear footprint of a lookup (penumbra's gather with the
/// same addressing; border taps give the border's code), so that boundary references meet a
/// texel they are compared with.
fn footprint_codes(tex: &TexSpec, s: &SamplerSpec, texels: &Texels, lk: &Lookup) -> Vec<u32> {
    let mut desc = s.d3d();
    desc.filter = s.filter(ReductionType::Standard);
    desc.comparison_func = ComparisonFunc::None;
    let sampler = Sampler::new(desc).expect("mapped sampler descriptions are valid");
    let v = sampler
        .gather(Some(&texels.texture), lk.penumbra_coord(tex.dim), 0, ())
        .expect("valid gather");
    v.iter()
        .map(|&x| match tex.fmt {
            Fmt::D16 => (f64::from(x) * 65535.0).round() as u32,
            _ => x.to_bits(),
        })
        .collect()
}

fn gen_ref(rng: &mut Rng, tex: &TexSpec, codes: &[u32], near: &[u32], lk: &mut Lookup) {
    let pick = |rng: &mut Rng, from: &[u32]| from[rng.below(from.len() as u32) as usize];
    match tex.fmt {
        Fmt::D16 => {
            let r = rng.unit();
            if r < 0.12 {
                let c = pick(rng, near);
                lk.dref = c as f32 / 65535.0;
                lk.probe = Probe::RefOnCode;
            } else if r < 0.24 {
                let c = pick(rng, near);
                let f = rng.range_f32(0.15, 0.4) * if rng.chance(0.5) { 1.0 } else { -1.0 };
                lk.dref = ((f64::from(c) + f64::from(f)) / 65535.0) as f32;
                lk.probe = Probe::RefNearCode;
            } else if r < 0.32 {
                lk.dref = rng.pick(&[-0.5f32, 0.0, 1.0, 1.5]);
            } else {
                // SPEC §3.3 item 5: at least one format step from every texel (and the borders
                // 0 and 1), and away from the quantization midpoints.
                loop {
                    let k = rng.below(65534);
                    let taken = |c: u32| codes.binary_search(&c).is_ok() || c == 0 || c == 65535;
                    if taken(k) || taken(k + 1) {
                        continue;
                    }
                    let f = rng.range_f32(0.2, 0.8);
                    if (f - 0.5).abs() < 0.1 {
                        continue;
                    }
                    lk.dref = ((f64::from(k) + f64::from(f)) / 65535.0) as f32;
                    break;
                }
            }
        }
        _ => {
            // D32: comparisons are exact in both; equal references test EQUAL and the ties.
            let r = rng.unit();
            lk.dref = if r < 0.3 {
                f32::from_bits(pick(rng, near))
            } else if r < 0.4 {
                f32::from_bits(pick(rng, codes))
            } else if r < 0.55 {
                rng.pick(&[-0.25f32, 0.0, 1.0, 1.25])
            } else {
                rng.range_f32(0.0, 1.0)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lavapipe_unorm_is_off_for_the_documented_code_counts() {
        // SCHEMA.md: 126 of 256 R8 codes and 512 of 65536 D16 codes are 1 ulp off R1.
        let off = |bits: u32| {
            let max = (1u32 << bits) - 1;
            (0..=max)
                .filter(|&k| lavapipe_unorm(k, bits) != k as f32 / max as f32)
                .count()
        };
        assert_eq!(off(8), 126);
        assert_eq!(off(16), 512);
    }

    #[test]
    fn sampler_maps_to_the_d3d12_equivalent() {
        let s = SamplerSpec {
            address: [
                wgpu::AddressMode::Repeat,
                wgpu::AddressMode::MirrorRepeat,
                wgpu::AddressMode::ClampToBorder,
            ],
            mag: wgpu::FilterMode::Linear,
            min: wgpu::FilterMode::Nearest,
            mip: wgpu::MipmapFilterMode::Linear,
            lod_min: 0.25,
            lod_max: 3.0,
            compare: Some(wgpu::CompareFunction::GreaterEqual),
            border: Some(wgpu::SamplerBorderColor::OpaqueBlack),
        };
        let d = s.d3d();
        assert_eq!(d.filter, Filter::ComparisonMinPointMagMipLinear);
        assert_eq!(
            [d.address_u, d.address_v, d.address_w],
            [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border]
        );
        assert_eq!(d.border_color, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(d.comparison_func, ComparisonFunc::GreaterEqual);
        assert_eq!((d.min_lod, d.max_lod, d.mip_lod_bias), (0.25, 3.0, 0.0));
        assert_eq!(d.max_anisotropy, 1);
        let plain = SamplerSpec {
            compare: None,
            address: [wgpu::AddressMode::ClampToEdge; 3],
            ..s
        };
        assert_eq!(plain.d3d().filter, Filter::MinPointMagMipLinear);
        assert_eq!(plain.d3d().address_u, AddressMode::Clamp);
    }

    #[test]
    fn guard_bands_reject_texel_edges_and_centres() {
        assert!(clear_position(2.25));
        assert!(!clear_position(3.0)); // point-sampling boundary
        assert!(!clear_position(2.999)); // within 2/256 below it
        assert!(!clear_position(2.5)); // texel centre: zero linear weight
        assert!(!clear_position(2.503));
    }

    #[test]
    fn cube_face_follows_r99() {
        // SPEC R99's example: (1, 0.5, −0.25) → +X, (s, t) = (0.625, 0.25).
        assert_eq!(cube_face([1.0, 0.5, -0.25]), (0, 0.625, 0.25));
    }

    #[test]
    fn generation_is_deterministic_and_large_enough() {
        let a = generate(7, &Config::default());
        let b = generate(7, &Config::default());
        assert!(a.lookup_count() >= 5000);
        assert_eq!(a.groups.len(), b.groups.len());
        for (ga, gb) in a.groups.iter().zip(&b.groups) {
            assert_eq!(ga.lookups, gb.lookups);
            assert_eq!(ga.sampler, gb.sampler);
        }
    }
}
