//! Every sampling operation of `core/src/sample` (`mod.rs` and `quad.rs`) with arbitrary sampler
//! descriptions, texture shapes, texel bytes, views and f32 arguments.
//!
//! Checks: no panic; errors only as `Err`; and the invariants SPEC §3.1 promises for any input —
//! comparison results in [0, 1] (never NaN), gather_cmp lanes in {0, 1/3, 2/3, 1}, and for a
//! texture of finite texels and a finite border: finite results, in [0, 1] for UNORM formats.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use penumbra_core::sample::quad::Quad;
use penumbra_core::{Coord, LodMode, Offset, SampleArgs, Sampler, Texture};
use penumbra_fuzz::{Num, SamplerIn, TextureIn, all_finite, is_unorm};

#[derive(Arbitrary, Debug)]
struct Input {
    sampler: SamplerIn,
    texture: TextureIn,
    /// Sample with no texture bound (R107).
    unbound: bool,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Lod {
    Zero,
    Level(Num),
    Grad([Num; 3], [Num; 3], Num),
}

impl Lod {
    fn get(self) -> LodMode {
        match self {
            Lod::Zero => LodMode::Zero,
            Lod::Level(l) => LodMode::Level(l.get()),
            Lod::Grad(x, y, b) => LodMode::Grad {
                ddx: x.map(Num::get),
                ddy: y.map(Num::get),
                bias: b.get(),
            },
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Sample([Num; 4], Lod, [i8; 3], Option<Num>),
    SampleLevel([Num; 4], Num, [i8; 3]),
    SampleGrad([Num; 4], [Num; 3], [Num; 3], [i8; 3]),
    SampleBias([Num; 4], [Num; 3], [Num; 3], Num, [i8; 3]),
    SampleCmp([Num; 4], Lod, [i8; 3], Option<Num>, Num),
    SampleCmpGrad([Num; 4], Num, [Num; 3], [Num; 3], [i8; 3]),
    SampleCmpLevelZero([Num; 4], Num, [i8; 3]),
    SampleCmpLevel([Num; 4], Num, Num, [i8; 3]),
    Gather([Num; 4], u8, [i8; 3]),
    GatherCmp([Num; 4], Num, [i8; 3]),
    CalculateLod([Num; 4], [Num; 3], [Num; 3]),
    SampleQuad([[Num; 4]; 4], Num, [i8; 3]),
    SampleCmpQuad([[Num; 4]; 4], [Num; 4], [i8; 3]),
    CalculateLodQuad([[Num; 4]; 4]),
    CubeFace([Num; 3]),
}

fn coord(c: [Num; 4]) -> Coord {
    Coord(c.map(Num::get))
}

fn offset(o: [i8; 3]) -> Offset {
    // Mostly inside [-8, 7]; the high bit of each byte asks for a wide value (an error in strict
    // mode, the low 4 bits in lenient mode).
    Offset(o.map(|v| {
        if v < -64 {
            i32::from(v) * 1000
        } else {
            i32::from(v % 9)
        }
    }))
}

fn quad(q: [[Num; 4]; 4]) -> Quad {
    Quad(q.map(coord))
}

struct Check {
    finite: bool,
    unorm: bool,
}

impl Check {
    fn colour(&self, what: &str, v: [f32; 4]) {
        if self.finite {
            assert!(
                v.iter().all(|c| c.is_finite()),
                "{what}: finite texture and border gave {v:?}"
            );
        }
        if self.finite && self.unorm {
            assert!(
                v.iter().all(|c| (0.0..=1.0).contains(c)),
                "{what}: UNORM texture gave {v:?}"
            );
        }
    }

    fn fraction(&self, what: &str, v: f32) {
        assert!(
            (0.0..=1.0).contains(&v),
            "{what}: comparison result {v} outside [0, 1]"
        );
    }
}

fn gather_cmp_lane(v: f32) -> bool {
    let third = 1.0f64 / 3.0;
    [0.0, 1.0, third as f32, (third + third) as f32]
        .iter()
        .any(|&k| (v - k).abs() <= 1e-6)
}

fuzz_target!(|input: Input| {
    let Some(desc) = input.sampler.desc() else {
        return;
    };
    let sampler = match Sampler::with_options(desc, input.sampler.options()) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let Some(texture) = input.texture.build() else {
        return;
    };
    let tex: Option<&Texture> = (!input.unbound).then_some(&texture);
    let check = Check {
        finite: all_finite(&texture) && desc.border_color.iter().all(|c| c.is_finite()),
        unorm: is_unorm(texture.format()),
    };
    for op in input.ops.iter().take(64) {
        match *op {
            Op::Sample(c, lod, o, clamp) => {
                let args = SampleArgs {
                    coord: coord(c),
                    lod: lod.get(),
                    offset: offset(o),
                    clamp: clamp.map(Num::get),
                };
                if let Ok(v) = sampler.sample(tex, &args) {
                    check.colour("sample", v);
                }
            }
            Op::SampleLevel(c, lod, o) => {
                if let Ok(v) = sampler.sample_level(tex, coord(c), lod.get(), offset(o)) {
                    check.colour("sample_level", v);
                }
            }
            Op::SampleGrad(c, dx, dy, o) => {
                let r = sampler.sample_grad(
                    tex,
                    coord(c),
                    dx.map(Num::get),
                    dy.map(Num::get),
                    offset(o),
                );
                if let Ok(v) = r {
                    check.colour("sample_grad", v);
                }
            }
            Op::SampleBias(c, dx, dy, b, o) => {
                let r = sampler.sample_bias(
                    tex,
                    coord(c),
                    dx.map(Num::get),
                    dy.map(Num::get),
                    b.get(),
                    offset(o),
                );
                if let Ok(v) = r {
                    check.colour("sample_bias", v);
                }
            }
            Op::SampleCmp(c, lod, o, clamp, r) => {
                let args = SampleArgs {
                    coord: coord(c),
                    lod: lod.get(),
                    offset: offset(o),
                    clamp: clamp.map(Num::get),
                };
                if let Ok(v) = sampler.sample_cmp(tex, &args, r.get()) {
                    check.fraction("sample_cmp", v);
                }
            }
            Op::SampleCmpGrad(c, r, dx, dy, o) => {
                let res = sampler.sample_cmp_grad(
                    tex,
                    coord(c),
                    r.get(),
                    dx.map(Num::get),
                    dy.map(Num::get),
                    offset(o),
                );
                if let Ok(v) = res {
                    check.fraction("sample_cmp_grad", v);
                }
            }
            Op::SampleCmpLevelZero(c, r, o) => {
                if let Ok(v) = sampler.sample_cmp_level_zero(tex, coord(c), r.get(), offset(o)) {
                    check.fraction("sample_cmp_level_zero", v);
                }
            }
            Op::SampleCmpLevel(c, r, lod, o) => {
                if let Ok(v) =
                    sampler.sample_cmp_level(tex, coord(c), r.get(), lod.get(), offset(o))
                {
                    check.fraction("sample_cmp_level", v);
                }
            }
            Op::Gather(c, component, o) => {
                let component = if component >= 0xf0 {
                    u32::from(component)
                } else {
                    u32::from(component % 4)
                };
                if let Ok(v) = sampler.gather(tex, coord(c), component, offset(o)) {
                    check.colour("gather", v);
                }
            }
            Op::GatherCmp(c, r, o) => {
                if let Ok(v) = sampler.gather_cmp(tex, coord(c), r.get(), offset(o)) {
                    assert!(
                        v.iter().all(|&l| gather_cmp_lane(l)),
                        "gather_cmp gave {v:?}"
                    );
                }
            }
            Op::CalculateLod(c, dx, dy) => {
                let _ = sampler.calculate_lod(tex, coord(c), dx.map(Num::get), dy.map(Num::get));
            }
            Op::SampleQuad(q, bias, o) => {
                if let Ok(px) = sampler.sample_quad(tex, &quad(q), bias.get(), offset(o)) {
                    for v in px {
                        check.colour("sample_quad", v);
                    }
                }
            }
            Op::SampleCmpQuad(q, refs, o) => {
                if let Ok(v) = sampler.sample_cmp_quad(tex, &quad(q), refs.map(Num::get), offset(o))
                {
                    for l in v {
                        check.fraction("sample_cmp_quad", l);
                    }
                }
            }
            Op::CalculateLodQuad(q) => {
                let _ = sampler.calculate_lod_quad(tex, &quad(q));
            }
            Op::CubeFace(d) => {
                if let Some(face) = penumbra_core::sample::cube_face(d.map(Num::get)) {
                    assert!(face < 6);
                    let _ = penumbra_core::sample::cube_face_axes(face);
                }
            }
        }
    }
});
