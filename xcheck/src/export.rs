//! Export: a [`Scenario`] as a case file of `penumbra sample` (docs/case-format.md), and the
//! GPU's answers to it in the case format's result form, so that the root crate's case-file
//! machinery (`penumbra::cases`, the results judge) can evaluate and judge them instead of
//! [`judge`](crate::judge).
//!
//! Everything is written losslessly: every f32 (coordinates, LODs, derivatives, references, the
//! sampler's MinLOD/MaxLOD/MipLODBias/BorderColor, float texels) as its raw bits `"0x…"`
//! (8 hex digits; R16_FLOAT texels as 4), UNORM texels as their integer codes, and enumerations
//! (Filter, AddressU/V/W, ComparisonFunc) as their D3D12 numbers.
//!
//! # Case order and ids
//!
//! Case `i` of the file is the `i`-th entry of the list [`case_file`] returns: groups in order,
//! each group's lookups in order (the order of [`Group::lookups`](crate::case::Group), which is
//! also how `gpu.run` with [`natural_order`](crate::gpu::natural_order) and
//! [`judge`](crate::judge::judge)'s `first` index answers). A case's `id` is
//! `"g{group}/l{lookup}"`; texture `t` of [`Scenario::textures`] has the id `"t{t}"`.
//!
//! # Op mapping
//!
//! | [`Op`] | case `op` | fields |
//! | --- | --- | --- |
//! | `SampleLevel` (`textureSampleLevel`) | `sample_l` | `lod` = [`Lookup::level`] |
//! | `SampleGrad` (`textureSampleGrad`) | `sample_grad` | `ddx`, `ddy` (3 each) |
//! | `SampleCompareLevel` (`textureSampleCompareLevel`) | `sample_c_lz` | `ref` = [`Lookup::dref`] |
//! | `Gather(c)` (`textureGather(c, …)`) | `gather4` | `component` = `c` |
//! | `GatherCompare` (`textureGatherCompare`) | `gather4_c` | `ref` |
//!
//! `coord` is what penumbra samples ([`Lookup::penumbra_coord`]): `[u, v]` for 2D, `[u, v, slice]`
//! for 2D arrays — the D3D slice coordinate [`Lookup::slice`] (the WGSL integer `layer` plus a
//! fraction R43's rounding removes), not `layer` — and the direction `[x, y, z]` for cubes. No
//! lookup has an offset, so none is written. The sampler is [`SamplerSpec::d3d`] of the group,
//! the description [`judge`](crate::judge) gives penumbra.
//!
//! Every op the generator produces has a case-format equivalent, so today nothing is skipped;
//! [`case_file`] still returns the (group, lookup) list of what it exported, which
//! [`results`] takes to match answers to cases, so that an op without an equivalent could be
//! left out later without renumbering anything downstream.

use serde_json::{Value, json};

use crate::case::{Dim, Fmt, Lookup, Op, SamplerSpec, Scenario, TexSpec};

/// The case-format op of a lookup, or `None` for one the case format cannot express (none
/// today; see the [module docs](self)).
#[must_use]
pub const fn case_op(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::SampleLevel => "sample_l",
        Op::SampleGrad => "sample_grad",
        Op::SampleCompareLevel => "sample_c_lz",
        Op::Gather(_) => "gather4",
        Op::GatherCompare => "gather4_c",
    })
}

/// An f32 as its raw bits, `"0x3f800000"`.
fn hex(v: f32) -> Value {
    Value::String(format!("0x{:08x}", v.to_bits()))
}

/// The case id of lookup `l` of group `g`.
#[must_use]
pub fn case_id(g: usize, l: usize) -> String {
    format!("g{g}/l{l}")
}

/// The id of texture `t`.
#[must_use]
pub fn texture_id(t: usize) -> String {
    format!("t{t}")
}

/// One texture entry: shape, and every subresource in D3D12 order (`mip + slice · mip_levels`,
/// as [`TexSpec::subresources`] stores them), row 0 first, components interleaved.
fn texture(index: usize, spec: &TexSpec) -> Value {
    let format = spec.fmt.penumbra();
    let bpt = spec.fmt.bytes();
    let channels = spec.fmt.channels();
    let data: Vec<Value> = spec
        .subresources
        .iter()
        .map(|sub| {
            sub.chunks_exact(bpt)
                .flat_map(|t| (0..channels).map(move |c| format.raw_component(t, c)))
                .map(|code| match spec.fmt {
                    Fmt::D16 | Fmt::R8 | Fmt::Rgba8 => Value::from(code),
                    Fmt::R16F => Value::String(format!("0x{code:04x}")),
                    Fmt::D32 | Fmt::R32F => Value::String(format!("0x{code:08x}")),
                })
                .collect()
        })
        .collect();
    json!({
        "id": texture_id(index),
        "dimension": spec.dim.name(),
        "format": spec.fmt.name(),
        "width": spec.width,
        "height": spec.height,
        "array_size": spec.layers,
        "mip_levels": spec.mips,
        "data": data,
    })
}

/// A group's D3D12_SAMPLER_DESC ([`SamplerSpec::d3d`]), every field written out.
fn sampler(spec: &SamplerSpec) -> Value {
    let d = spec.d3d();
    json!({
        "Filter": d.filter.raw(),
        "AddressU": d.address_u.raw(),
        "AddressV": d.address_v.raw(),
        "AddressW": d.address_w.raw(),
        "MipLODBias": hex(d.mip_lod_bias),
        "MaxAnisotropy": d.max_anisotropy,
        "ComparisonFunc": d.comparison_func.raw(),
        "BorderColor": d.border_color.map(hex).to_vec(),
        "MinLOD": hex(d.min_lod),
        "MaxLOD": hex(d.max_lod),
        "Flags": d.flags.0,
    })
}

/// The coordinate of a lookup on a `dim` texture, as many components as the dimension takes.
fn coord(dim: Dim, lk: &Lookup) -> Vec<Value> {
    let c = lk.penumbra_coord(dim).0;
    let n = dim.penumbra().coord_len();
    c[..n].iter().map(|&x| hex(x)).collect()
}

/// The scenario as a case file (docs/case-format.md): one texture per [`TexSpec`] and one case
/// per exportable lookup, groups in order and lookups in order within each (see the
/// [module docs](self) for ids and the op mapping).
///
/// Returns the document and, for case `i`, `exported[i] = (group, lookup)`. Lookups whose op has
/// no case-format equivalent ([`case_op`] is `None`) are skipped — none are today, so
/// `exported` lists every lookup.
#[must_use]
pub fn case_file(scenario: &Scenario) -> (Value, Vec<(usize, usize)>) {
    let textures: Vec<Value> = scenario
        .textures
        .iter()
        .enumerate()
        .map(|(i, t)| texture(i, t))
        .collect();
    let mut cases = Vec::with_capacity(scenario.lookup_count());
    let mut exported = Vec::with_capacity(scenario.lookup_count());
    for (g, group) in scenario.groups.iter().enumerate() {
        let dim = scenario.textures[group.texture].dim;
        let desc = sampler(&group.sampler);
        for (l, lk) in group.lookups.iter().enumerate() {
            let Some(op) = case_op(lk.op) else { continue };
            let mut case = json!({
                "id": case_id(g, l),
                "texture": texture_id(group.texture),
                "sampler": desc.clone(),
                "op": op,
                "coord": coord(dim, lk),
            });
            match lk.op {
                Op::SampleLevel => case["lod"] = hex(lk.level),
                Op::SampleGrad => {
                    case["ddx"] = lk.ddx.map(hex).to_vec().into();
                    case["ddy"] = lk.ddy.map(hex).to_vec().into();
                }
                Op::SampleCompareLevel | Op::GatherCompare => case["ref"] = hex(lk.dref),
                Op::Gather(c) => case["component"] = c.into(),
            }
            cases.push(case);
            exported.push((g, l));
        }
    }
    (json!({"textures": textures, "cases": cases}), exported)
}

/// The values a case of `lk`'s op reports, from one GPU answer (a `vec4` as `gpu.run` returns
/// it): 4 for sample and gather ops, 1 (component 0; the shader splats it) for
/// `sample_c_lz`.
///
/// `textureSampleLevel` on a depth texture returns one f32, which the shader stores as
/// `(d, 0, 0, 0)`; D3D reads a one-channel format as `(R, 0, 0, 1)` (FS 19.1.3.3), so for
/// `sample_l` on D32/D16 only component 0 is the GPU's and components 1..3 are written as the
/// D3D defaults `0, 0, 1` (judge.rs compares only component 0 of those too).
#[must_use]
pub fn answer_values(fmt: Fmt, op: Op, answer: &[f32; 4]) -> Vec<f32> {
    match op {
        Op::SampleCompareLevel => vec![answer[0]],
        Op::SampleLevel if fmt.is_depth() => vec![answer[0], 0.0, 0.0, 1.0],
        _ => answer.to_vec(),
    }
}

/// An f32 as the result form writes a number: its exact value, or `"NaN"`, `"Inf"`, `"-Inf"`.
fn number(v: f32) -> Value {
    if v.is_nan() {
        Value::from("NaN")
    } else if v.is_infinite() {
        Value::from(if v > 0.0 { "Inf" } else { "-Inf" })
    } else {
        Value::from(f64::from(v))
    }
}

/// GPU answers in the case format's result form, one `"ok"` result per exported case:
/// `{"engine": …, "summary": {"ok": n, "error": 0}, "results": [{"index": i, "id":
/// "g…/l…", "status": "ok", "result": [...], "bits": ["0x…", ...]}, ...]}`.
///
/// `exported` is the list [`case_file`] returned; `answers[g][l]` is lookup `l` of group `g` as
/// `gpu.run` returns it (indexed like judge.rs's `first`, i.e. in each group's own order,
/// whatever order the dispatch ran in). Values per case: see [`answer_values`].
///
/// # Panics
/// If `exported` names a group or lookup that `scenario` or `answers` does not have.
#[must_use]
pub fn results(
    scenario: &Scenario,
    exported: &[(usize, usize)],
    answers: &[Vec<[f32; 4]>],
) -> Value {
    let list: Vec<Value> = exported
        .iter()
        .enumerate()
        .map(|(i, &(g, l))| {
            let group = &scenario.groups[g];
            let fmt = scenario.textures[group.texture].fmt;
            let values = answer_values(fmt, group.lookups[l].op, &answers[g][l]);
            json!({
                "index": i,
                "id": case_id(g, l),
                "status": "ok",
                "result": values.iter().map(|&v| number(v)).collect::<Vec<_>>(),
                "bits": values.iter().map(|v| format!("0x{:08x}", v.to_bits())).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "engine": {"name": "wgpu-vulkan", "via": "penumbra_xcheck"},
        "summary": {"ok": list.len(), "error": 0},
        "results": list,
    })
}

#[cfg(test)]
mod tests {
    use penumbra::cases::CaseFile;
    use penumbra_core::{Sampler, Texture};

    use super::*;
    use crate::case::{Config, generate};
    use crate::judge::judge;

    /// penumbra's answer to a lookup the way judge.rs's `eval` gives it (main sampler, the
    /// texture itself, the lookup's own LOD and reference).
    fn penumbra_eval(s: &Sampler, tex: &Texture, dim: Dim, lk: &Lookup) -> [f32; 4] {
        let c = lk.penumbra_coord(dim);
        let t = Some(tex);
        match lk.op {
            Op::SampleLevel => s.sample_level(t, c, lk.level, ()),
            Op::SampleGrad => s.sample_grad(t, c, lk.ddx, lk.ddy, ()),
            Op::SampleCompareLevel => s.sample_cmp_level_zero(t, c, lk.dref, ()).map(|v| [v; 4]),
            Op::Gather(comp) => s.gather(t, c, comp, ()),
            Op::GatherCompare => s.gather_cmp(t, c, lk.dref, ()),
        }
        .expect("every generated lookup is valid for penumbra")
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    fn check(seed: u64, config: &Config) {
        let scenario = generate(seed, config);
        let (doc, exported) = case_file(&scenario);
        assert_eq!(
            exported.len(),
            scenario.lookup_count(),
            "nothing is skipped"
        );
        let text = serde_json::to_string(&doc).unwrap();
        let file = CaseFile::parse(&text).expect("the exported case file parses");
        assert_eq!(file.len(), exported.len());

        let textures: Vec<Texture> = scenario.textures.iter().map(TexSpec::penumbra).collect();
        let samplers: Vec<Sampler> = scenario
            .groups
            .iter()
            .map(|g| Sampler::new(g.sampler.d3d()).unwrap())
            .collect();
        // The case file's answers, laid out like gpu.run's (a comparison splatted, as the shader
        // does; a depth sample_l with components 1..3 as the shader leaves them).
        let mut as_gpu: Vec<Vec<[f32; 4]>> = scenario
            .groups
            .iter()
            .map(|g| vec![[0.0; 4]; g.lookups.len()])
            .collect();
        for (i, &(g, l)) in exported.iter().enumerate() {
            let group = &scenario.groups[g];
            let spec = &scenario.textures[group.texture];
            let lk = &group.lookups[l];
            let got = file
                .evaluate(i)
                .unwrap_or_else(|e| panic!("case {i} ({}): {e}", case_id(g, l)));
            let want = penumbra_eval(&samplers[g], &textures[group.texture], spec.dim, lk);
            let n = if lk.op == Op::SampleCompareLevel {
                1
            } else {
                4
            };
            assert_eq!(got.len(), n, "case {i} ({})", case_id(g, l));
            assert_eq!(
                bits(&got),
                bits(&want[..n]),
                "case {i} ({}): {lk:?} on {} {}",
                case_id(g, l),
                spec.dim.name(),
                spec.fmt.name()
            );
            as_gpu[g][l] = match lk.op {
                Op::SampleCompareLevel => [got[0]; 4],
                Op::SampleLevel if spec.fmt.is_depth() => {
                    // D3D's defaults for the missing components, which results() writes back.
                    assert_eq!(bits(&got[1..]), bits(&[0.0, 0.0, 1.0]), "case {i}");
                    [got[0], 0.0, 0.0, 0.0]
                }
                _ => [got[0], got[1], got[2], got[3]],
            };
        }

        // The judge finds the case file's answers exact.
        let report = judge(&scenario, &as_gpu, &as_gpu, penumbra::judge::Profile::D3d);
        assert!(report.mismatches.is_empty(), "{}", report.mismatches[0]);
        assert_eq!(report.total, exported.len());
        let exact: usize = report
            .counts
            .iter()
            .filter(|((_, c), _)| *c == "exact")
            .map(|(_, n)| n)
            .sum();
        assert_eq!(exact, report.total, "{}", report.summary());

        // results() of those answers is what `penumbra sample` writes for the file.
        let ours = results(&scenario, &exported, &as_gpu);
        let theirs = file.run();
        assert_eq!(ours["summary"], theirs["summary"]);
        let (ours, theirs) = (
            ours["results"].as_array().unwrap(),
            theirs["results"].as_array().unwrap(),
        );
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(theirs) {
            for key in ["index", "id", "status", "bits"] {
                assert_eq!(a[key], b[key], "{key} of {a} vs {b}");
            }
            // Compared as text: serde_json's f64 keeps the exact value either way.
            assert_eq!(a["result"].to_string(), b["result"].to_string());
        }
    }

    #[test]
    fn exported_cases_evaluate_as_judge_evaluates_them() {
        check(crate::DEFAULT_SEED, &Config::default());
        let small = Config {
            textures_per_kind: 1,
            samplers_per_texture: 3,
            lookups_per_sampler: 12,
        };
        for seed in [1, 0xD3D1_2000] {
            check(seed, &small);
        }
    }

    #[test]
    fn results_write_bits_and_one_value_for_sample_c() {
        let scenario = generate(
            3,
            &Config {
                textures_per_kind: 1,
                samplers_per_texture: 2,
                lookups_per_sampler: 6,
            },
        );
        let (_, exported) = case_file(&scenario);
        let answers: Vec<Vec<[f32; 4]>> = scenario
            .groups
            .iter()
            .map(|g| vec![[0.25, f32::NAN, f32::NEG_INFINITY, -0.0]; g.lookups.len()])
            .collect();
        let doc = results(&scenario, &exported, &answers);
        for (i, r) in doc["results"].as_array().unwrap().iter().enumerate() {
            let (g, l) = exported[i];
            let group = &scenario.groups[g];
            let op = group.lookups[l].op;
            assert_eq!(r["index"], i);
            assert_eq!(r["id"], case_id(g, l));
            let n = r["bits"].as_array().unwrap().len();
            match op {
                Op::SampleCompareLevel => assert_eq!(r["bits"], json!(["0x3e800000"])),
                Op::SampleLevel if scenario.textures[group.texture].fmt.is_depth() => {
                    assert_eq!(r["result"], json!([0.25, 0.0, 0.0, 1.0]));
                }
                _ => {
                    assert_eq!(n, 4);
                    assert_eq!(r["result"], json!([0.25, "NaN", "-Inf", -0.0]));
                    assert_eq!(r["bits"][3], "0x80000000");
                }
            }
        }
    }
}
