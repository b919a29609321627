//! The two NVIDIA behaviours that are not a rewrite of the case: the synthesized corner texel of
//! a cube gather, and anisotropic footprints of the GPU's own.

use half::f16;
use serde_json::Value;

use super::model::unorm_bits;
use super::{Batch, Case, Profile, bands};
use crate::format::ComponentKind;

/// The H200's weights for the three real texels at a cube corner, in 1/256: one of them gets
/// 86, the others 85 (so ⅔ = (1 + 1 + 0)/3 comes back as 170/256). D3D: the average of the three,
/// rounded once (R103, R120).
const CORNER_WEIGHTS: [[u32; 3]; 3] = [[86, 85, 85], [85, 86, 85], [85, 85, 86]];

/// `x` rounded to the precision the texture's format returns: f16 for 16-bit floats, the
/// nearest code for UNORM, f32 otherwise.
fn to_format(case: &Case, x: f64, compared: bool) -> f32 {
    if compared {
        return x as f32;
    }
    match case.format.kind() {
        ComponentKind::Float16 => f16::from_f64(x).to_f32(),
        ComponentKind::Unorm(_) => {
            let bits = unorm_bits(case.format).unwrap_or(8);
            let m = ((1u64 << bits) - 1) as f64;
            ((x.clamp(0.0, 1.0) * m).round() / m) as f32
        }
        _ => x as f32,
    }
}

/// The synthesized texel of a gather at a cube corner with the H200's 8-bit weights, for one
/// order of the weights.
pub(super) fn corner_texel(case: &Case, real: [f32; 3], weights: [u32; 3], compared: bool) -> f32 {
    let sum: f64 = real
        .iter()
        .zip(weights)
        .map(|(&v, w)| f64::from(v) * f64::from(w) / 256.0)
        .sum();
    to_format(case, sum, compared)
}

/// A gather at a cube corner whose three real texels equal D3D's bit for bit and whose fourth,
/// synthesized one is the H200's 8-bit weighted sum of them.
pub(super) fn corner_gather(case: &Case, ours: &[f32], theirs: &[f32]) -> bool {
    if !case.op.gathers() || !case.dim.is_cube() || !bands::at_cube_corner(case) {
        return false;
    }
    if ours.len() != 4 || theirs.len() != 4 {
        return false;
    }
    let compared = case.op.compares();
    (0..4).any(|m| {
        let others: Vec<usize> = (0..4).filter(|&c| c != m).collect();
        let real_equal = others
            .iter()
            .all(|&c| ours[c].to_bits() == theirs[c].to_bits());
        let real = [theirs[others[0]], theirs[others[1]], theirs[others[2]]];
        real_equal
            && CORNER_WEIGHTS
                .iter()
                .any(|&w| corner_texel(case, real, w, compared).to_bits() == theirs[m].to_bits())
    })
}

/// Whether an anisotropic footprint of the implementation's own may explain the answer: SPEC
/// §3.3 item 7 for LODs from gradients (every profile); on explicit-LOD ops D3D asks for
/// isotropic filtering (R76), which the H200 does not do.
pub(super) fn aniso_applies(case: &Case, profile: Profile) -> bool {
    case.filter.is_anisotropic()
        && !case.op.gathers()
        && !case.op.compares()
        && (case.op.has_gradients() || profile == Profile::Nvidia)
}

/// R75's invariant: the answer lies within the [min, max] of the texels the footprint reads —
/// the MINIMUM and MAXIMUM reductions of the same filter — widened by one format step.
pub(super) fn aniso_bounds(case: &Case, theirs: &[f32]) -> bool {
    let filter = case.filter.raw();
    let mut batch = Batch::new(case.tex.clone());
    let with = |reduction: u32| {
        let mut c: Value = case.json.clone();
        c["sampler"]["Filter"] = ((filter & !0x180) | reduction << 7).into();
        c
    };
    let lo = batch.push(with(2));
    let hi = batch.push(with(3));
    let Ok(results) = batch.run() else {
        return false;
    };
    let (Ok(lo), Ok(hi)) = (&results[lo], &results[hi]) else {
        return false;
    };
    let step = unorm_bits(case.format).map_or(0.0, |n| 1.0 / ((1u64 << n) - 1) as f64);
    theirs.len() == lo.len()
        && theirs.iter().enumerate().all(|(c, &t)| {
            let (a, b) = (f64::from(lo[c]), f64::from(hi[c]));
            let t = f64::from(t);
            t >= a.min(b) - step && t <= a.max(b) + step
        })
}
