//! The cases: random textures, wgpu samplers with their D3D12 equivalents, and lookups whose inputs
//! stay out of SPEC §3.3's guard bands (item 4) — except a few deliberate boundary probes that
//! exercise the documented Vulkan-vs-D3D differences (conformance/SCHEMA.md).
//!
//! The textures are in `texture`, the samplers in `sampler`, the guard bands in `bands` and the
//! lookups' generation in `lookup`; this module holds the scenario and [`generate`].

use penumbra_core::Coord;

use crate::rng::Rng;

mod bands;
mod lookup;
mod sampler;
mod texture;

pub use bands::{clamp_lod, clear_position, cube_corner, cube_face, face_position};
pub use sampler::SamplerSpec;
pub use texture::{Dim, Fmt, TexSpec, lavapipe_unorm};

use lookup::gen_lookup;
use sampler::{RoundRobin, gen_sampler};
use texture::{Texels, gen_texture, sorted_codes};

/// SPEC §3.3 item 4: the width of every guard band, in texels (or LOD units).
pub const BAND: f64 = 2.0 / 256.0;

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

#[cfg(test)]
mod tests;
