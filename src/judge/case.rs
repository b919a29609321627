//! What the judge knows of one case: its op, its parsed parts, and the batch that re-evaluates
//! rewritten variants of it with a single parse.

use serde_json::{Value, json};

use super::Profile;
use super::model;
use crate::cases::{CaseFile, Json, parse_f32};
use crate::{Dimension, Filter, Format, SamplerDesc};

/// The operations of the case format that this comparison knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    SampleL,
    SampleGrad,
    SampleCmpLz,
    SampleCmpL,
    SampleCmpGrad,
    Gather,
    GatherCmp,
}

impl Op {
    pub(super) fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "sample_l" => Op::SampleL,
            "sample_grad" | "sample_d" => Op::SampleGrad,
            "sample_c_lz" => Op::SampleCmpLz,
            "sample_c_l" => Op::SampleCmpL,
            "sample_c_grad" | "sample_c_d" => Op::SampleCmpGrad,
            "gather4" => Op::Gather,
            "gather4_c" => Op::GatherCmp,
            _ => return None,
        })
    }

    pub(super) fn compares(self) -> bool {
        matches!(
            self,
            Op::SampleCmpLz | Op::SampleCmpL | Op::SampleCmpGrad | Op::GatherCmp
        )
    }

    pub(super) fn gathers(self) -> bool {
        matches!(self, Op::Gather | Op::GatherCmp)
    }

    pub(super) fn has_gradients(self) -> bool {
        matches!(self, Op::SampleGrad | Op::SampleCmpGrad)
    }

    /// The explicit-LOD op with the same kind of result.
    pub(super) fn explicit(self) -> &'static str {
        if self.compares() {
            "sample_c_l"
        } else {
            "sample_l"
        }
    }
}

/// An f32 written losslessly into a case file.
pub(super) fn hex(x: f32) -> Value {
    Value::String(format!("0x{:08x}", x.to_bits()))
}

/// A number of a case file (JSON number, `"NaN"`, `"0x…"` bits).
pub(super) fn num(v: &Value) -> f32 {
    parse_f32(&Json::from(v), "number").unwrap_or(f32::NAN)
}

/// A UNORM code of a texture's data (integer or `"0x…"`).
pub(super) fn code(v: &Value) -> u32 {
    match v {
        Value::String(s) => u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0),
        other => other.as_u64().unwrap_or(0) as u32,
    }
}

/// Case variants on one texture, evaluated with a single parse.
pub(super) struct Batch {
    pub(super) texture: Value,
    pub(super) cases: Vec<Value>,
}

impl Batch {
    pub(super) fn new(texture: Value) -> Batch {
        Batch {
            texture,
            cases: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, mut case: Value) -> usize {
        case["texture"] = self.texture["id"].clone();
        self.cases.push(case);
        self.cases.len() - 1
    }

    pub(super) fn run(self) -> Result<Vec<Result<Vec<f32>, String>>, String> {
        let doc = json!({"textures": [self.texture], "cases": self.cases});
        let file = CaseFile::parse(&doc.to_string()).map_err(|e| e.to_string())?;
        Ok((0..file.len())
            .map(|i| file.evaluate(i).map_err(|e| e.to_string()))
            .collect())
    }
}

/// One case with what the classification needs.
#[derive(Clone)]
pub(super) struct Case {
    pub(super) json: Value,
    pub(super) tex: Value,
    pub(super) format: Format,
    pub(super) dim: Dimension,
    pub(super) size: [u32; 2],
    pub(super) mips: u32,
    pub(super) op: Op,
    pub(super) desc: SamplerDesc,
    pub(super) filter: Filter,
    pub(super) coord: Vec<f32>,
    /// penumbra's LOD before and after the sampler clamps (R56, R57); `None` for gathers.
    pub(super) lod: Option<(f32, f32)>,
    /// Added to the clamped LOD (a guard-band nudge).
    pub(super) lod_nudge: f32,
    /// Whose LOD errors widen the LOD range.
    pub(super) profile: Profile,
}

impl Case {
    pub(super) fn sampler_clamp(&self, biased: f32) -> f32 {
        biased.min(self.desc.max_lod).max(self.desc.min_lod)
    }

    pub(super) fn level_size(&self, level: u32) -> [u32; 2] {
        [
            (self.size[0] >> level).max(1),
            (self.size[1] >> level).max(1),
        ]
    }

    pub(super) fn dir(&self) -> [f32; 3] {
        [self.coord[0], self.coord[1], self.coord[2]]
    }

    /// Recomputes the LOD from gradients after the coordinate moved (it depends on the cube face).
    pub(super) fn refresh_lod(&mut self) {
        if !self.op.has_gradients() {
            return;
        }
        let mut c = self.json.clone();
        c["op"] = "lod".into();
        let mut b = Batch::new(self.tex.clone());
        b.push(c);
        if let Ok(Ok(v)) = b.run().map(|mut r| r.remove(0)) {
            self.lod = Some((v[1], self.sampler_clamp(v[1])));
        }
    }

    /// The LODs the judged implementation may use: penumbra's clamped LOD, widened for a LOD
    /// from gradients by the profile's documented LOD error.
    pub(super) fn lod_range(&self) -> Option<(f32, f32)> {
        let (biased, clamped) = self.lod?;
        if !self.op.has_gradients() {
            return Some((clamped, clamped));
        }
        let (low, high) = match self.profile {
            Profile::D3d => (clamped, clamped),
            Profile::Lavapipe => (self.sampler_clamp(biased - model::LOG2_SLACK), clamped),
            Profile::Nvidia if self.dim.is_cube() => (
                self.sampler_clamp(f32::NEG_INFINITY),
                self.sampler_clamp(f32::INFINITY),
            ),
            Profile::Nvidia if model::axis_aligned(self) => (
                self.sampler_clamp(biased - model::NV_GRAD_LOD.0),
                self.sampler_clamp(biased + model::NV_GRAD_LOD.1),
            ),
            Profile::Nvidia => (
                self.sampler_clamp(biased - model::FOOTPRINT_LOD),
                self.sampler_clamp(biased + model::FOOTPRINT_LOD),
            ),
        };
        Some((low.min(clamped), high.max(clamped)))
    }

    /// Every view level a LOD in `lod_range` can read (level 0 for gathers).
    pub(super) fn levels(&self) -> std::ops::RangeInclusive<u32> {
        let last = self.mips - 1;
        match self.lod_range() {
            None => 0..=0,
            Some((lo, hi)) => {
                let hi = (hi.max(0.0).ceil() as u32).min(last);
                let lo = (lo.max(0.0).floor() as u32).min(hi);
                lo..=hi
            }
        }
    }

    /// The coordinate of each filtered axis in texels of `level`: (u, v) of a 2D view, the face's
    /// (s, t) on a cube (R98, R99).
    pub(super) fn texel_coords(&self, level: u32) -> Option<[f64; 2]> {
        let [w, h] = self.level_size(level);
        let (s, t) = if self.dim.is_cube() {
            let (_, s, t) = cube_face(self.dir())?;
            (s, t)
        } else {
            (f64::from(self.coord[0]), f64::from(self.coord[1]))
        };
        Some([s * f64::from(w), t * f64::from(h)])
    }
}

/// Face and face coordinates (s, t) of a cube direction (R98 ties Z > Y > X, R99), in f64; `None`
/// for a zero or NaN direction.
pub(super) fn cube_face([x, y, z]: [f32; 3]) -> Option<(u32, f64, f64)> {
    let (x, y, z) = (f64::from(x), f64::from(y), f64::from(z));
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, sc, tc, m) = if az >= ay && az >= ax {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if x >= 0.0 {
        (0, -z, -y, ax)
    } else {
        (1, z, -y, ax)
    };
    if m.is_nan() || m == 0.0 {
        return None;
    }
    Some((face, 0.5 * sc / m + 0.5, 0.5 * tc / m + 0.5))
}

/// Subsets of `items` in order of size, the empty set first if `with_empty`.
pub(super) fn subsets<T: Copy>(items: &[T], with_empty: bool) -> Vec<Vec<T>> {
    let mut masks: Vec<u32> = (u32::from(!with_empty)..1 << items.len()).collect();
    masks.sort_by_key(|m| m.count_ones());
    masks
        .into_iter()
        .map(|m| {
            (0..items.len())
                .filter(|b| m & (1 << b) != 0)
                .map(|b| items[b])
                .collect()
        })
        .collect()
}
