//! The textures: the dimensions and formats the check covers, one texture's shape and texels
//! ([`TexSpec`]) and their random generation.

use half::f16;
use penumbra_core::texture::Dimension;
use penumbra_core::{Format, Texture, TextureDesc};

use crate::rng::Rng;

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

const SIZES: [u32; 14] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24];

pub(super) fn gen_texture(rng: &mut Rng, dim: Dim, fmt: Fmt) -> TexSpec {
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
pub(super) struct Texels {
    /// The sorted distinct R codes.
    pub(super) codes: Vec<u32>,
    /// The texture as penumbra sees it (to find a lookup's footprint).
    pub(super) texture: Texture,
}

/// The sorted distinct R codes of a texture (used to keep D16 references away from texels).
pub(super) fn sorted_codes(tex: &TexSpec) -> Vec<u32> {
    let mut v: Vec<u32> = tex.r_codes().collect();
    v.sort_unstable();
    v.dedup();
    v
}
