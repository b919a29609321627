//! The `penumbra` module from Lua: every function on its happy path (checked against the engine
//! called directly) and with wrong-type or out-of-range arguments (a clear Lua error).

mod support;

use penumbra_core::sample::quad::Quad;
use penumbra_core::texture::MipFilter;
use penumbra_core::{ComparisonFunc, Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc};
use support::{eval, fails_with, run, runtime};

/// The 2×2 depth map of SPEC R80's PCF example, in Lua and in Rust.
const DEPTH: &str = "local depth = penumbra.texture({format = 'R32_FLOAT', width = 2, height = 2, \
                     data = {0.3, 0.6, 0.6, 0.9}})\n";
const PCF: &str = "local pcf = penumbra.sampler({filter = 'COMPARISON_MIN_MAG_LINEAR_MIP_POINT', \
                   comparisonFunc = 'LESS_EQUAL'})\n";
const LINEAR: &str = "local lin = penumbra.sampler({filter = 'MIN_MAG_MIP_LINEAR', \
                      addressU = 'WRAP', addressV = 'WRAP'})\n";
/// An 8×8 R32_FLOAT ramp with a full average mip chain.
const RAMP: &str = "local ramp = penumbra.texture({format = 'R32_FLOAT', width = 8, height = 8, \
                    mipLevels = 4})\n\
                    ramp:fill(function(x, y) return x + 8 * y end)\n\
                    ramp:generateMips('average')\n";

fn depth() -> Texture {
    Texture::from_f32(
        TextureDesc::new_2d(Format::R32Float, 2, 2),
        &[0.3, 0.6, 0.6, 0.9],
    )
    .unwrap()
}

fn pcf() -> Sampler {
    Sampler::new(SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
    ))
    .unwrap()
}

fn linear() -> Sampler {
    let mut desc = SamplerDesc::new(Filter::MinMagMipLinear);
    desc.address_u = penumbra_core::AddressMode::Wrap;
    desc.address_v = penumbra_core::AddressMode::Wrap;
    Sampler::new(desc).unwrap()
}

fn ramp() -> Texture {
    let level0: Vec<f32> = (0..64).map(|i| i as f32).collect();
    Texture::from_level0_f32(
        TextureDesc::new_2d(Format::R32Float, 8, 8).with_mip_levels(4),
        &level0,
        MipFilter::Average,
    )
    .unwrap()
}

/// An RGBA result as the Lua tests return it (a packed table).
type Rgba = Vec<f32>;

fn rgba(v: [f32; 4]) -> Rgba {
    v.to_vec()
}

// ---- samplers -------------------------------------------------------------------------------

#[test]
fn sampler_from_a_table_of_d3d12_names_round_trips_through_desc() {
    let (rt, _) = runtime("api-sampler-table");
    let (filter, address, bias, aniso, func, border_a, max_lod, flags, text): (
        String,
        String,
        f32,
        u32,
        String,
        f32,
        f32,
        String,
        String,
    ) = eval(
        &rt,
        "local s = penumbra.sampler({filter = 'D3D12_FILTER_COMPARISON_MIN_MAG_LINEAR_MIP_POINT', \
         addressU = 'BORDER', addressV = 'MIRROR', addressW = 3, mipLODBias = -1.5, \
         maxAnisotropy = 4, comparisonFunc = 'GREATER', borderColor = {0, 0, 0, 1}, \
         minLOD = 0, maxLOD = 2, flags = 'NONE'})\n\
         local d = s:desc()\n\
         local again = penumbra.sampler(d)\n\
         assert(tostring(again) == tostring(s))\n\
         return d.filter, d.addressU .. d.addressV .. d.addressW, d.mipLODBias, d.maxAnisotropy, \
                d.comparisonFunc, d.borderColor[4], d.maxLOD, d.flags, tostring(s)",
    );
    assert_eq!(filter, "COMPARISON_MIN_MAG_LINEAR_MIP_POINT");
    assert_eq!(address, "BORDERMIRRORCLAMP");
    assert_eq!((bias, aniso, border_a, max_lod), (-1.5, 4, 1.0, 2.0));
    assert_eq!((func.as_str(), flags.as_str()), ("GREATER", "NONE"));
    assert_eq!(
        text,
        "Sampler(COMPARISON_MIN_MAG_LINEAR_MIP_POINT, GREATER, BORDER MIRROR CLAMP)"
    );
}

#[test]
fn sampler_border_colors_and_flags_take_names() {
    let (rt, _) = runtime("api-sampler-border");
    let (a, flags): (f32, String) = eval(
        &rt,
        "local d = penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', borderColor = 'OPAQUE_WHITE', \
         flags = {'NON_NORMALIZED_COORDINATES'}, maxLOD = 0}):desc()\n\
         return d.borderColor[4], d.flags",
    );
    assert_eq!((a, flags.as_str()), (1.0, "NON_NORMALIZED_COORDINATES"));
}

#[test]
fn sampler_from_ron_reads_heap_and_static_descriptions() {
    let (rt, _) = runtime("api-sampler-ron");
    let (heap, stat): (String, String) = eval(
        &rt,
        "local heap = penumbra.sampler('(Filter: MIN_MAG_MIP_POINT, AddressU: WRAP)'):desc()\n\
         local stat = penumbra.sampler('(Filter: COMPARISON_MIN_MAG_MIP_LINEAR, ShaderRegister: 2)'):desc()\n\
         return heap.addressU .. heap.addressV, stat.addressU .. stat.comparisonFunc",
    );
    // Heap defaults clamp; static defaults wrap and compare LESS_EQUAL (R16).
    assert_eq!(heap, "WRAPCLAMP");
    assert_eq!(stat, "WRAPLESS_EQUAL");
    fails_with(
        &rt,
        "penumbra.sampler('(Filter: NOPE)')",
        &["penumbra.sampler: RON SamplerDesc"],
    );
    fails_with(
        &rt,
        "penumbra.sampler('(Filter: ANISOTROPIC, RegisterSpace: 4294967295)')",
        &["desc.registerSpace", "R119"],
    );
}

#[test]
fn sampler_rejects_bad_fields_naming_them_and_the_allowed_values() {
    let (rt, _) = runtime("api-sampler-bad");
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', addressV = 'SIDEWAYS'})",
        &[
            "penumbra.sampler: desc.addressV",
            "SIDEWAYS",
            "WRAP, MIRROR, CLAMP, BORDER, MIRROR_ONCE",
        ],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', comparisonFunc = 'SOMETIMES'})",
        &["desc.comparisonFunc", "LESS_EQUAL"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', magFilter = 'LINEAR'})",
        &["desc.magFilter: unknown field", "filter, addressU"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({addressU = 'WRAP'})",
        &["desc.filter is missing"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', maxAnisotropy = 32})",
        &["desc.maxAnisotropy = 32", "at most 16", "R10"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', maxAnisotropy = 1.5})",
        &["desc.maxAnisotropy = 1.5: expected a whole number"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', mipLODBias = 'big'})",
        &["desc.mipLODBias: expected a number, got the string \"big\""],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'COMPARISON_MIN_MAG_MIP_POINT'})",
        &["desc.comparisonFunc = NONE", "R11"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', borderColor = {1, 1}})",
        &["desc.borderColor: expected {r, g, b, a} (4 numbers), got a table of 2"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', flags = 'SHINY'})",
        &["desc.flags", "SHINY"],
    );
    fails_with(
        &rt,
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', [1] = 2})",
        &["desc: keys are field names"],
    );
    fails_with(
        &rt,
        "penumbra.sampler(true)",
        &["desc: expected a table of D3D12 names or a RON"],
    );
}

#[test]
fn static_samplers_look_up_by_binding_and_by_name() {
    let (rt, _) = runtime("api-static");
    let (n, filter, missing, by_name, names, text): (u32, String, bool, String, String, String) =
        eval(
            &rt,
            r#"local table = penumbra.staticSamplers([[(samplers: {
                 "shadow": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: LESS_EQUAL,
                            AddressU: BORDER, ShaderRegister: 2, RegisterSpace: 3, ShaderVisibility: PIXEL),
                 "linear": (Filter: MIN_MAG_MIP_LINEAR),
               })]])
               local s = table:lookup(3, 2, "PIXEL")
               return #table, s:desc().filter, table:lookup(3, 2, "VERTEX") == nil,
                      tostring(table:get("linear")), table.names(table)[1] .. table:names()[2],
                      tostring(table)"#,
        );
    assert_eq!(n, 2);
    assert_eq!(filter, "COMPARISON_MIN_MAG_LINEAR_MIP_POINT");
    assert!(missing);
    assert_eq!(by_name, "Sampler(MIN_MAG_MIP_LINEAR, WRAP WRAP WRAP)");
    assert_eq!(names, "shadowlinear");
    assert_eq!(text, "StaticSamplers(2 samplers)");
    let absent: bool = eval(&rt, "return penumbra.staticSamplers('[]'):get('x') == nil");
    assert!(absent);
}

#[test]
fn static_samplers_refuse_bad_tables_and_arguments() {
    let (rt, _) = runtime("api-static-bad");
    fails_with(
        &rt,
        "penumbra.staticSamplers('[(ShaderRegister: 1), (ShaderRegister: 1)]')",
        &["penumbra.staticSamplers:", "both bind s1, space0", "R119"],
    );
    fails_with(
        &rt,
        "penumbra.staticSamplers({})",
        &["ron: expected a string, got a table"],
    );
    fails_with(
        &rt,
        "penumbra.staticSamplers('[()]'):lookup(0, 0, 'FRAGMENT')",
        &["StaticSamplers:lookup: stage:", "FRAGMENT", "PIXEL"],
    );
    fails_with(
        &rt,
        "penumbra.staticSamplers('[()]'):lookup(-1, 0, 'PIXEL')",
        &["space = -1: expected a whole number >= 0"],
    );
}

// ---- textures -------------------------------------------------------------------------------

#[test]
fn textures_expose_their_description() {
    let (rt, _) = runtime("api-texture-fields");
    let (w, h, d, format, dim, mips, slices, text): (
        u32,
        u32,
        u32,
        String,
        String,
        u32,
        u32,
        String,
    ) = eval(
        &rt,
        "local t = penumbra.texture({format = 'D16_UNORM', width = 8, height = 4, \
             dimension = '2DArray', arraySize = 3, mipLevels = 2})\n\
             return t.width, t.height, t.depth, t.format, t.dimension, t.mipLevels, t.arraySize, \
                    tostring(t)",
    );
    assert_eq!((w, h, d, mips, slices), (8, 4, 1, 2, 3));
    assert_eq!((format.as_str(), dim.as_str()), ("D16_UNORM", "2DArray"));
    assert_eq!(
        text,
        "Texture(D16_UNORM 2DArray 8x4x1, 2 mip(s), 3 slice(s))"
    );
    let size: (u32, u32, u32) = eval(
        &rt,
        "return penumbra.texture({format = 'R8_UNORM', width = 8, height = 4, mipLevels = 3}):size(2)",
    );
    assert_eq!(size, (2, 1, 1));
    let cube: (u32, u32) = eval(
        &rt,
        "local c = penumbra.texture({format = 'R32_FLOAT', width = 4, dimension = 'Cube'})\n\
         return c.height, c.arraySize",
    );
    assert_eq!(cube, (4, 6));
}

#[test]
fn texels_are_written_and_read_back_in_the_texture_format() {
    let (rt, _) = runtime("api-texture-texels");
    let (gray, red, alpha, unorm, slice): (f32, f32, f32, f32, f32) = eval(
        &rt,
        "local t = penumbra.texture({format = 'R32G32B32A32_FLOAT', width = 2, height = 2})\n\
         t:set(1, 1, 0.25)\n\
         t:set(0, 1, {0.5, 0.1})\n\
         local g = t:get(1, 1)\n\
         local r, _, _, a = t:get(0, 1)\n\
         local u = penumbra.texture({format = 'R8_UNORM', width = 2, height = 2})\n\
         u:set(0, 0, 0.5)\n\
         local arr = penumbra.texture({format = 'R32_FLOAT', width = 2, dimension = '2DArray', \
                                       height = 2, arraySize = 2, mipLevels = 2})\n\
         arr:set(0, 0, 7, 1, 1)\n\
         return g, r, a, u:get(0, 0), arr:get(0, 0, 1, 1)",
    );
    assert_eq!((gray, red, alpha, slice), (0.25, 0.5, 1.0, 7.0));
    assert_eq!(unorm, 128.0 / 255.0); // R3: trunc(0.5 * 255 + 0.5)
}

#[test]
fn texel_access_checks_coordinates_and_values() {
    let (rt, _) = runtime("api-texture-bad-texels");
    let t =
        "local t = penumbra.texture({format = 'R8_UNORM', width = 4, height = 2, mipLevels = 2})\n";
    fails_with(
        &rt,
        &format!("{t}t:get(4, 0)"),
        &["Texture:get: x = 4 is outside 0..3 (mip 0)"],
    );
    fails_with(
        &rt,
        &format!("{t}t:get(0, 1, 1)"),
        &["y = 1 is outside 0..0 (mip 1)"],
    );
    fails_with(
        &rt,
        &format!("{t}t:get(0, 0, 2)"),
        &["mip = 2: the texture has 2 mip level(s)"],
    );
    fails_with(
        &rt,
        &format!("{t}t:get(0, 0, 0, 1)"),
        &["slice = 1: the texture has 1 slice(s)"],
    );
    fails_with(
        &rt,
        &format!("{t}t:get(0.5, 0)"),
        &["x = 0.5: expected a whole number"],
    );
    fails_with(
        &rt,
        &format!("{t}t:get('a', 0)"),
        &["x: expected a number, got the string \"a\""],
    );
    fails_with(
        &rt,
        &format!("{t}t:set(0, 0, 'white')"),
        &["Texture:set: value: expected a number or {r, g, b, a}"],
    );
    fails_with(
        &rt,
        &format!("{t}t:set(0, 0, {{1, 2, 3, 4, 5}})"),
        &["value: expected {r, g, b, a} (1 to 4 numbers)"],
    );
    fails_with(
        &rt,
        &format!("{t}t:fill(5)"),
        &["Texture:fill: fn: expected a function"],
    );
    fails_with(
        &rt,
        &format!("{t}t:fill(function() return 'x' end)"),
        &["the callback's result"],
    );
    fails_with(
        &rt,
        &format!("{t}t:generateMips('median')"),
        &["Texture:generateMips: filter: \"median\""],
    );
}

#[test]
fn fill_visits_every_texel_of_every_slice() {
    let (rt, _) = runtime("api-texture-fill");
    let (a, b, c, d): (f32, f32, f32, f32) = eval(
        &rt,
        "local t = penumbra.texture({format = 'R32G32B32A32_FLOAT', width = 3, height = 2, \
                                     dimension = '2DArray', arraySize = 2})\n\
         t:fill(function(x, y, slice) return x, y, slice end)\n\
         local _, g = t:get(2, 1, 0, 1)\n\
         local r, _, b, a = t:get(2, 1, 0, 1)\n\
         return r, g, b, a",
    );
    assert_eq!((a, b, c, d), (2.0, 1.0, 1.0, 1.0));
    let volume: f32 = eval(
        &rt,
        "local v = penumbra.texture({format = 'R32_FLOAT', width = 2, height = 2, depth = 3, \
                                     dimension = '3D'})\n\
         v:fill(function(x, y, z) return z end)\n\
         return (v:get(1, 1, 0, 2))",
    );
    assert_eq!(volume, 2.0);
}

#[test]
fn generated_mips_match_the_engine() {
    let (rt, _) = runtime("api-texture-mips");
    let lua: (f32, f32) = eval(
        &rt,
        &format!(
            "{RAMP}local m = penumbra.texture({{format = 'R32_FLOAT', width = 8, height = 8, \
             mipLevels = 4}})\n\
             m:fill(function(x, y) return x + 8 * y end)\n\
             m:generateMips('min')\n\
             return (ramp:get(0, 0, 3)), (m:get(1, 1, 1))"
        ),
    );
    let tex = ramp();
    let min = tex.generate_mips(MipFilter::Min).unwrap();
    assert_eq!(
        lua,
        (tex.load(3, 0, [0, 0, 0])[0], min.load(1, 0, [1, 1, 0])[0])
    );
}

#[test]
fn texture_descriptions_are_checked() {
    let (rt, _) = runtime("api-texture-bad");
    fails_with(
        &rt,
        "penumbra.texture({format = 'R9_UNORM', width = 4})",
        &[
            "penumbra.texture: desc.format: unknown format `R9_UNORM`",
            "R32_FLOAT",
        ],
    );
    fails_with(
        &rt,
        "penumbra.texture({width = 4})",
        &["desc.format is missing"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM'})",
        &["desc.width is missing"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 0})",
        &["desc.width = 0: must be at least 1"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 4, height = 4, mipLevels = 9})",
        &["desc.mipLevels = 9"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 4, dimension = '4D'})",
        &["desc.dimension", "4D"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 4, colour = 1})",
        &["desc: unknown field the string \"colour\""],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 2, data = {1, 2, 3}})",
        &["desc.data: expected 2 numbers", "got 3"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 2, data = {1, 'x'}})",
        &["desc.data[2]: expected a number"],
    );
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 2, data = {1, 2}, mipFilter = 'mode'})",
        &["desc.mipFilter"],
    );
}

// ---- sampling -------------------------------------------------------------------------------

#[test]
fn comparison_sampling_matches_the_engine() {
    let (rt, _) = runtime("api-sample-cmp");
    let (lz, cmp, level, lz_offset): (f32, f32, f32, f32) = eval(
        &rt,
        &format!(
            "{DEPTH}{PCF}return pcf:sampleCmpLevelZero(depth, {{0.5, 0.5}}, 0.5), \
             pcf:sampleCmp(depth, {{0.4, 0.6}}, 0.5, {{0.5, 0}}, {{0, 0.5}}), \
             pcf:sampleCmpLevel(depth, {{0.5, 0.5}}, 0.7, 0), \
             pcf:sampleCmpLevelZero(depth, {{0.5, 0.5}}, 0.5, {{1, 0}})"
        ),
    );
    let (t, s) = (depth(), pcf());
    assert_eq!(lz, 0.75);
    assert_eq!(
        lz,
        s.sample_cmp_level_zero(Some(&t), [0.5, 0.5], 0.5, ())
            .unwrap()
    );
    assert_eq!(
        cmp,
        s.sample_cmp_grad(
            Some(&t),
            [0.4, 0.6],
            0.5,
            [0.5, 0.0, 0.0],
            [0.0, 0.5, 0.0],
            ()
        )
        .unwrap()
    );
    assert_eq!(
        level,
        s.sample_cmp_level(Some(&t), [0.5, 0.5], 0.7, 0.0, ())
            .unwrap()
    );
    assert_eq!(
        lz_offset,
        s.sample_cmp_level_zero(Some(&t), [0.5, 0.5], 0.5, [1, 0])
            .unwrap()
    );
}

#[test]
fn filtered_sampling_matches_the_engine() {
    let (rt, _) = runtime("api-sample");
    let (level, grad, bias): (Rgba, Rgba, Rgba) = eval(
        &rt,
        &format!(
            "{RAMP}{LINEAR}local function pack(...) return {{...}} end\n\
             local l = pack(lin:sampleLevel(ramp, {{0.3, 0.7}}, 1.25))\n\
             local g = pack(lin:sampleGrad(ramp, {{0.3, 0.7}}, {{0.25, 0}}, {{0, 0.25}}, {{-1, 2}}))\n\
             local b = pack(lin:sampleBias(ramp, {{0.3, 0.7}}, {{0.25, 0}}, {{0, 0.25}}, -0.5))\n\
             return l, g, b"
        ),
    );
    let (t, s) = (ramp(), linear());
    assert_eq!(
        level,
        rgba(s.sample_level(Some(&t), [0.3, 0.7], 1.25, ()).unwrap())
    );
    assert_eq!(
        grad,
        rgba(
            s.sample_grad(
                Some(&t),
                [0.3, 0.7],
                [0.25, 0.0, 0.0],
                [0.0, 0.25, 0.0],
                [-1, 2]
            )
            .unwrap()
        )
    );
    assert_eq!(
        bias,
        rgba(
            s.sample_bias(
                Some(&t),
                [0.3, 0.7],
                [0.25, 0.0, 0.0],
                [0.0, 0.25, 0.0],
                -0.5,
                ()
            )
            .unwrap()
        )
    );
}

#[test]
fn sample_takes_a_pixel_quad_like_a_pixel_shader() {
    let (rt, _) = runtime("api-sample-quad");
    let pixels: Vec<Vec<f32>> = eval(
        &rt,
        &format!(
            "{RAMP}{LINEAR}return lin:sample(ramp, {{{{0.25, 0.25}}, {{0.5, 0.25}}, \
             {{0.25, 0.5}}, {{0.5, 0.5}}}}, 0.5)"
        ),
    );
    let quad = Quad::from_origin([0.25, 0.25], [0.25, 0.0], [0.0, 0.25]);
    let expected = linear().sample_quad(Some(&ramp()), &quad, 0.5, ()).unwrap();
    assert_eq!(pixels.len(), 4);
    for (got, want) in pixels.iter().zip(expected) {
        assert_eq!(got.as_slice(), want.as_slice());
    }
}

#[test]
fn gathers_and_lod_match_the_engine() {
    let (rt, _) = runtime("api-gather");
    let (gather, gather_g, gather_cmp, lod): (Rgba, f32, Rgba, Vec<f32>) = eval(
        &rt,
        &format!(
            "{DEPTH}{PCF}{RAMP}{LINEAR}\
             local point = penumbra.sampler({{filter = 'MIN_MAG_MIP_POINT'}})\n\
             local function pack(...) return {{...}} end\n\
             local g = pack(point:gather(depth, {{0.5, 0.5}}))\n\
             local green = point:gather(depth, {{0.5, 0.5}}, 'g')\n\
             local c = pack(pcf:gatherCmp(depth, {{0.5, 0.5}}, 0.6))\n\
             return g, green, c, pack(lin:calculateLod(ramp, {{0.5, 0.5}}, {{0.5, 0}}, {{0, 0.5}}))"
        ),
    );
    let point = Sampler::new(SamplerDesc::new(Filter::MinMagMipPoint)).unwrap();
    let t = depth();
    assert_eq!(
        gather,
        rgba(point.gather(Some(&t), [0.5, 0.5], 0, ()).unwrap())
    );
    assert_eq!(gather_g, 0.0); // R32_FLOAT has no green: every tap reads 0
    assert_eq!(
        gather_cmp,
        rgba(pcf().gather_cmp(Some(&t), [0.5, 0.5], 0.6, ()).unwrap())
    );
    let [clamped, unclamped] = linear()
        .calculate_lod(Some(&ramp()), [0.5, 0.5], [0.5, 0.0, 0.0], [0.0, 0.5, 0.0])
        .unwrap();
    assert_eq!(lod, [clamped, unclamped]);
}

#[test]
fn batches_match_single_samples_for_nested_and_flat_coordinates() {
    let (rt, _) = runtime("api-batch");
    let (lit, lit_flat, colours): (Vec<f32>, Vec<f32>, Vec<Vec<f32>>) = eval(
        &rt,
        &format!(
            "{DEPTH}{PCF}{RAMP}{LINEAR}\
             local lit = pcf:sampleCmpLevelZeroBatch(depth, {{{{0.5, 0.5}}, {{0.1, 0.1}}, {{0.9, 0.9}}}}, \
                                                      {{0.5, 0.5, 0.95}})\n\
             local flat = pcf:sampleCmpLevelZeroBatch(depth, {{0.5, 0.5, 0.1, 0.1}}, 0.5)\n\
             local colours = lin:sampleLevelBatch(ramp, {{{{0.3, 0.7}}, {{0.9, 0.1}}}}, 1)\n\
             assert(#pcf:sampleCmpLevelZeroBatch(depth, {{}}, 0.5) == 0)\n\
             return lit, flat, colours"
        ),
    );
    let (t, s) = (depth(), pcf());
    let one = |c: [f32; 2], r: f32| s.sample_cmp_level_zero(Some(&t), c, r, ()).unwrap();
    assert_eq!(
        lit,
        [
            one([0.5, 0.5], 0.5),
            one([0.1, 0.1], 0.5),
            one([0.9, 0.9], 0.95)
        ]
    );
    assert_eq!(lit_flat, [one([0.5, 0.5], 0.5), one([0.1, 0.1], 0.5)]);
    let (r, l) = (ramp(), linear());
    assert_eq!(
        colours[0],
        l.sample_level(Some(&r), [0.3, 0.7], 1.0, ()).unwrap()
    );
    assert_eq!(
        colours[1],
        l.sample_level(Some(&r), [0.9, 0.1], 1.0, ()).unwrap()
    );
}

#[test]
fn an_unbound_texture_samples_zero() {
    let (rt, _) = runtime("api-unbound");
    let (rgba, lit): (Rgba, f32) = eval(
        &rt,
        &format!(
            "{PCF}local function pack(...) return {{...}} end\n\
             local s = penumbra.sampler({{filter = 'MIN_MAG_MIP_LINEAR'}})\n\
             return pack(s:sampleLevel(nil, {{0.5, 0.5}}, 0)), pcf:sampleCmpLevelZero(nil, {{0.5, 0.5}}, 0.5)"
        ),
    );
    assert_eq!((rgba, lit), (vec![0.0; 4], 0.0));
}

#[cfg(feature = "luau")]
#[test]
fn luau_vectors_serve_as_coordinates_and_derivatives() {
    let (rt, _) = runtime("api-vectors");
    let (a, b): (f32, f32) = eval(
        &rt,
        &format!(
            "{DEPTH}{PCF}return pcf:sampleCmpLevelZero(depth, vector.create(0.5, 0.5, 0), 0.5), \
             pcf:sampleCmp(depth, vector.create(0.5, 0.5, 0), 0.5, vector.create(0.5, 0, 0), \
                           vector.create(0, 0.5, 0))"
        ),
    );
    assert_eq!((a, b), (0.75, 0.75));
}

#[test]
fn sampling_arguments_are_checked() {
    let (rt, _) = runtime("api-sample-bad");
    let setup = format!("{DEPTH}{PCF}{LINEAR}");
    let cases: [(&str, &[&str]); 12] = [
        (
            "lin:sampleLevel(depth, {0.5}, 0)",
            &["Sampler:sampleLevel: coord: expected {u, v} (2 numbers), got a table of 1"],
        ),
        (
            "lin:sampleLevel(depth, {0.5, 'x'}, 0)",
            &["coord[2]: expected a number"],
        ),
        (
            "lin:sampleLevel(5, {0.5, 0.5}, 0)",
            &["tex: expected a Texture (or nil for an unbound slot), got the number 5"],
        ),
        ("lin:sampleLevel(lin, {0.5, 0.5}, 0)", &["got a Sampler"]),
        (
            "lin:sampleLevel(depth, {0.5, 0.5}, 0, {9, 0})",
            &["offset 9 on axis 0 is outside [-8, 7]", "R41"],
        ),
        (
            "lin:sampleLevel(depth, {0.5, 0.5}, 0, {0.5, 0})",
            &["offset: 0.5 is not a whole number"],
        ),
        (
            "pcf:sampleLevel(depth, {0.5, 0.5}, 0)",
            &["needs a non-comparison sampler", "R17"],
        ),
        (
            "lin:sampleCmpLevelZero(depth, {0.5, 0.5}, 0.5)",
            &["Sampler:sampleCmpLevelZero", "needs a COMPARISON sampler"],
        ),
        (
            "lin:sampleGrad(depth, {0.5, 0.5}, {1}, {0, 1})",
            &["ddx: expected {du, dv} (2 numbers)"],
        ),
        ("lin:gather(depth, {0.5, 0.5}, 7)", &["gather component 7"]),
        (
            "lin:sample(depth, {{0.5, 0.5}})",
            &["quad: expected the 4 coordinates of a 2x2 pixel quad"],
        ),
        (
            "pcf:sampleCmpLevelZeroBatch(depth, {{0.5, 0.5}}, {0.1, 0.2})",
            &["refs: expected one reference per coordinate (1), got 2"],
        ),
    ];
    for (call, parts) in cases {
        fails_with(&rt, &format!("{setup}{call}"), parts);
    }
    fails_with(
        &rt,
        &format!("{setup}pcf:sampleCmpLevelZeroBatch(depth, {{0.5, 0.5, 0.1}}, 0.5)"),
        &["coords: a flat array for a 2D texture holds 2 numbers per coordinate, but has 3"],
    );
    fails_with(
        &rt,
        &format!("{setup}pcf:sampleCmpLevelZeroBatch(nil, {{0.5, 0.5}}, 0.5)"),
        &["needs a bound texture"],
    );
}

// ---- PNG --------------------------------------------------------------------------------------

#[test]
fn png_round_trips_gray_and_rgba_textures() {
    let (rt, dir) = runtime("api-png");
    let shown: String = eval(
        &rt,
        "local g = penumbra.texture({format = 'R8_UNORM', width = 3, height = 2})\n\
         g:fill(function(x, y) return (x + 3 * y) / 255 end)\n\
         local c = penumbra.texture({format = 'R8G8B8A8_UNORM', width = 2, height = 2})\n\
         c:set(1, 0, {1, 0, 0.5, 1})\n\
         c:save('color.png')\n\
         return g:save('gray/ramp.png')",
    );
    assert!(shown.ends_with("gray/ramp.png"), "{shown}");
    // Read them back from the root: copy the output there.
    std::fs::create_dir_all(dir.join("root/in")).unwrap();
    std::fs::copy(dir.join("out/gray/ramp.png"), dir.join("root/in/ramp.png")).unwrap();
    std::fs::copy(dir.join("out/color.png"), dir.join("root/in/color.png")).unwrap();
    let (format, texel, rgba_format, blue, mips): (String, f32, String, f32, u32) = eval(
        &rt,
        "local g = penumbra.loadTexture('in/ramp.png')\n\
         local c = penumbra.loadTexture('in/color.png', {mipLevels = 'full'})\n\
         local _, _, b = c:get(1, 0)\n\
         return g.format, g:get(2, 1), c.format, b, c.mipLevels",
    );
    assert_eq!(format, "R8_UNORM");
    assert_eq!(texel, 5.0 / 255.0);
    assert_eq!(rgba_format, "R8G8B8A8_UNORM");
    assert_eq!(blue, 128.0 / 255.0);
    assert_eq!(mips, 2);
}

#[test]
fn float_textures_save_as_gray_with_a_min_max_mapping() {
    let (rt, dir) = runtime("api-png-float");
    run(
        &rt,
        &format!(
            "{DEPTH}depth:save('auto.png')\n\
             depth:save('fixed.png', {{min = 0, max = 1}})"
        ),
    );
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::copy(dir.join("out/auto.png"), dir.join("root/auto.png")).unwrap();
    std::fs::copy(dir.join("out/fixed.png"), dir.join("root/fixed.png")).unwrap();
    let texels: (f32, f32, f32, f32) = eval(
        &rt,
        "local a = penumbra.loadTexture('auto.png')\n\
         local f = penumbra.loadTexture('fixed.png')\n\
         return a:get(0, 0), a:get(1, 1), (a:get(1, 0)), (f:get(1, 1))",
    );
    // 0.3 → 0, 0.9 → 255, 0.6 → round(127.5) = 128; fixed: the f32 0.9 is 0.89999998, which
    // maps to 229.49999 and rounds to 229.
    assert_eq!(texels, (0.0, 1.0, 128.0 / 255.0, 229.0 / 255.0));
}

#[test]
fn png_arguments_and_files_are_checked() {
    let (rt, dir) = runtime("api-png-bad");
    write_bytes(&dir.join("root/not.png"), b"definitely not a png");
    fails_with(
        &rt,
        "penumbra.loadTexture('not.png')",
        &["penumbra.loadTexture: not.png: not a PNG"],
    );
    fails_with(
        &rt,
        "penumbra.loadTexture('missing.png')",
        &["penumbra.loadTexture: path:", "missing.png"],
    );
    fails_with(&rt, "penumbra.loadTexture(3)", &["path: expected a string"]);
    fails_with(
        &rt,
        "penumbra.loadTexture('not.png', {mips = 2})",
        &["options: unknown field"],
    );
    let t = "local t = penumbra.texture({format = 'R8_UNORM', width = 2})\n";
    fails_with(
        &rt,
        &format!("{t}t:save('a.png', {{mip = 1}})"),
        &["Texture:save: options.mip = 1"],
    );
    fails_with(
        &rt,
        &format!("{t}t:save('a.png', {{min = 'low'}})"),
        &["options.min: expected a number"],
    );
}

fn write_bytes(path: &std::path::Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

// ---- profiling ------------------------------------------------------------------------------

#[test]
fn zone_calls_its_function_with_the_extra_arguments() {
    let (rt, _) = runtime("api-zone");
    let (sum, twice): (f64, f64) = eval(
        &rt,
        "penumbra.plot('probes lit', 3)\n\
         return penumbra.zone('sum', function(a, b) return a + b, 2 * (a + b) end, 2, 3)",
    );
    assert_eq!((sum, twice), (5.0, 10.0));
    fails_with(
        &rt,
        "penumbra.zone('z')",
        &["penumbra.zone: fn: expected a function, got nil"],
    );
    fails_with(
        &rt,
        "penumbra.zone(1, print)",
        &["penumbra.zone: name: expected a string"],
    );
    fails_with(
        &rt,
        "penumbra.plot('p', 'x')",
        &["penumbra.plot: value: expected a number"],
    );
}

#[test]
fn the_module_reports_its_version_and_flavour() {
    let (rt, _) = runtime("api-version");
    let (version, flavour): (String, String) =
        eval(&rt, "return penumbra.version, penumbra.flavour");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert_eq!(flavour, penumbra_lua::FLAVOUR);
}
