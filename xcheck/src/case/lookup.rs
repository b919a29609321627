//! The lookups' generation: coordinates clear of the guard bands, the op, its LOD or gradients
//! and comparison references, with the deliberate boundary probes.

use penumbra_core::{ComparisonFunc, ReductionType, Sampler};

use super::bands::{clamp_lod, coord_clear, lod_clear};
use super::texture::Texels;
use super::{Dim, Fmt, Lookup, Op, Probe, SamplerSpec, TexSpec};
use crate::rng::Rng;

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

pub(super) fn gen_lookup(rng: &mut Rng, tex: &TexSpec, s: &SamplerSpec, texels: &Texels) -> Lookup {
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
