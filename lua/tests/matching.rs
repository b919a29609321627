//! Image matching from Lua — `penumbra.msad4`, `loadImage`, `findImage`, `sadMap` — checked
//! against the engine called directly, with their argument errors; and the batched
//! `sampleCmpLevelZeroBatch` path against the one-by-one reference.

mod support;

use penumbra_core::msad4::{Image, MatchOptions, find_matches, msad4, sad_map};
use penumbra_core::{
    ComparisonFunc, Dimension, Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc,
};
use support::{eval, fails_with, runtime, write};

/// A 24×16 R8 image of noise (bytes 1..=251) with a 4×3 sprite planted at (13, 7) whose
/// second byte is transparent (0), in Lua; the Rust twin is [`image`].
const IMAGE: &str = "local img = penumbra.texture({format = 'R8_UNORM', width = 24, height = 16})\n\
    img:fill(function(x, y) return ((x * 37 + y * 101) % 251 + 1) / 255 end)\n\
    local sprite = {200, 0, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210}\n\
    local tpl = penumbra.texture({format = 'R8_UNORM', width = 4, height = 3})\n\
    tpl:fill(function(x, y) return sprite[y * 4 + x + 1] / 255 end)\n\
    for y = 0, 2 do for x = 0, 3 do\n\
      local v = sprite[y * 4 + x + 1]\n\
      if v > 0 then img:set(13 + x, 7 + y, v / 255) end\n\
    end end\n";

fn image() -> (Image, Image) {
    let sprite = [200u8, 0, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210];
    let mut pixels: Vec<u8> = (0..24 * 16)
        .map(|i| ((i % 24 * 37 + i / 24 * 101) % 251 + 1) as u8)
        .collect();
    for (i, &b) in sprite.iter().enumerate() {
        if b != 0 {
            pixels[(7 + i / 4) * 24 + 13 + i % 4] = b;
        }
    }
    (
        Image::r8(24, 16, pixels).unwrap(),
        Image::r8(4, 3, sprite.to_vec()).unwrap(),
    )
}

// ---- msad4 ----------------------------------------------------------------------------------

#[test]
fn msad4_gives_hlsls_answer_in_both_argument_forms() {
    let (rt, _) = runtime("match-msad4");
    let (a, b): (Vec<u32>, Vec<u32>) = eval(
        &rt,
        "local a = {penumbra.msad4(0xA100B2C3, {0xD7B0C372, 0x4F57C2A3}, {1, 2, 3, 4})}\n\
         local b = {penumbra.msad4(0xA100B2C3, 0xD7B0C372, 0x4F57C2A3)}\n\
         return a, b",
    );
    // The HLSL documentation's example (SPEC §4.2).
    assert_eq!(a, [153, 6, 92, 113]);
    assert_eq!(
        b,
        msad4(0xA100_B2C3, [0xD7B0_C372, 0x4F57_C2A3], [0; 4]).to_vec()
    );
    let saturated: Vec<u32> = eval(
        &rt,
        "return {penumbra.msad4(0xFFFFFFFF, {0, 0}, {4294967295, 0, 0, 0})}",
    );
    assert_eq!(saturated, [u32::MAX, 1020, 1020, 1020]);
}

#[test]
fn msad4_arguments_must_be_uints() {
    let (rt, _) = runtime("match-msad4-errors");
    let cases: [(&str, &[&str]); 8] = [
        (
            "penumbra.msad4(-1, {0, 0})",
            &["penumbra.msad4: ref = -1: expected a whole number in 0..4294967295 (a uint)"],
        ),
        (
            "penumbra.msad4(0.5, {0, 0})",
            &["ref = 0.5: expected a whole number"],
        ),
        (
            "penumbra.msad4(4294967296, {0, 0})",
            &["ref = 4294967296: expected a whole number in 0..4294967295"],
        ),
        (
            "penumbra.msad4('a', {0, 0})",
            &["penumbra.msad4: ref: expected a number, got the string \"a\""],
        ),
        (
            "penumbra.msad4(1, {0})",
            &["penumbra.msad4: src: expected {x, y}, got a table of 1"],
        ),
        (
            "penumbra.msad4(1, 2)",
            &["penumbra.msad4: srcY: expected a number, got nil"],
        ),
        (
            "penumbra.msad4(1, {0, 0}, {1, 2, 3})",
            &["penumbra.msad4: accum: expected {a, b, c, d}, got a table of 3"],
        ),
        (
            "penumbra.msad4(1, {0, 0}, {1, 2, 3, -4})",
            &["penumbra.msad4: accum[4] = -4"],
        ),
    ];
    for (source, parts) in cases {
        fails_with(&rt, source, parts);
    }
    fails_with(
        &rt,
        "penumbra.msad4(1, true)",
        &["penumbra.msad4: src: expected {x, y} or two numbers srcX, srcY, got the boolean true"],
    );
}

// ---- findImage and sadMap -------------------------------------------------------------------

#[test]
fn find_image_finds_the_planted_sprite_like_the_engine() {
    let (rt, _) = runtime("match-find");
    let (image, template) = image();
    let rows: Vec<Vec<u64>> = eval(
        &rt,
        &format!(
            "{IMAGE}local out = {{}}\n\
             for i, m in ipairs(penumbra.findImage(img, tpl, {{top = 4, radius = {{1, 1}}}})) do\n\
               out[i] = {{m.x, m.y, m.sad}}\n\
             end\n\
             return out"
        ),
    );
    let opts = MatchOptions {
        top_k: 4,
        nms_radius: Some((1, 1)),
        ..MatchOptions::default()
    };
    let want: Vec<Vec<u64>> = find_matches(&image, &template, &opts)
        .unwrap()
        .iter()
        .map(|m| vec![u64::from(m.x), u64::from(m.y), m.sad])
        .collect();
    assert_eq!(rows, want);
    assert_eq!(rows[0], [13, 7, 0]);
    let (n, best): (usize, u64) = eval(
        &rt,
        &format!(
            "{IMAGE}local one = penumbra.findImage(img, tpl)\n\
             local none = penumbra.findImage(img, tpl, {{top = 3, maxSad = 0, threads = 2, radius = 0}})\n\
             assert(#penumbra.findImage(img, tpl, {{top = 0}}) == 0)\n\
             return #none, one[1].sad"
        ),
    );
    assert_eq!((n, best), (1, 0));
}

#[test]
fn sad_maps_match_the_engine_and_save_as_heat_maps() {
    let (rt, dir) = runtime("match-sad-map");
    let (image, template) = image();
    let want = sad_map(&image, &template, 1).unwrap();
    let (w, h, values, min, text): (u32, u32, Vec<u32>, Vec<u32>, String) = eval(
        &rt,
        &format!(
            "{IMAGE}local map = penumbra.sadMap(img, tpl, {{threads = 2}})\n\
             local values = {{}}\n\
             for y = 0, map.height - 1 do for x = 0, map.width - 1 do\n\
               values[#values + 1] = map:get(x, y)\n\
             end end\n\
             assert(map:saveHeatmap('heat.png') == '{out}/heat.png')\n\
             return map.width, map.height, values, {{map:min()}}, tostring(map)",
            out = dir.join("out").display()
        ),
    );
    assert_eq!((w, h), (want.width(), want.height()));
    assert_eq!(values, want.data());
    assert_eq!(min, [13, 7, 0]);
    assert_eq!(text, "SadMap(21x14)");
    let png = std::fs::read(dir.join("out/heat.png")).unwrap();
    let heat = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
    assert_eq!((heat.width(), heat.height()), (21, 14));
    fails_with(
        &rt,
        &format!("{IMAGE}penumbra.sadMap(img, tpl):get(21, 0)"),
        &["SadMap:get: (21, 0) is outside the map (0..20, 0..13)"],
    );
}

#[test]
fn matching_arguments_are_checked() {
    let (rt, _) = runtime("match-errors");
    let cases: [(&str, &[&str]); 11] = [
        (
            "penumbra.findImage(img, 5)",
            &[
                "penumbra.findImage: template: expected a texture (from penumbra.loadImage), got the number 5",
            ],
        ),
        (
            "penumbra.findImage(tpl, img)",
            &["penumbra.findImage: the template (24x16) is larger than the image (4x3)"],
        ),
        (
            "penumbra.findImage(img, penumbra.texture({format = 'R32_FLOAT', width = 2, height = 2}))",
            &["template: images are R8_UNORM or R8G8B8A8_UNORM textures, not R32_FLOAT"],
        ),
        (
            "penumbra.findImage(img, penumbra.texture({format = 'R8G8B8A8_UNORM', width = 2, height = 2}))",
            &["the image is R8 but the template is RGBA8"],
        ),
        (
            "penumbra.findImage(img, penumbra.texture({format = 'R8_UNORM', width = 2, dimension = '1D'}))",
            &["template: images are 2D textures, not 1D"],
        ),
        (
            "penumbra.findImage(img, tpl, {top = 100000})",
            &["penumbra.findImage: options.top = 100000: at most 10000 matches"],
        ),
        (
            "penumbra.findImage(img, tpl, {top = -1})",
            &["options.top = -1: expected a whole number >= 0"],
        ),
        (
            "penumbra.findImage(img, tpl, {maxSad = 0.5})",
            &["options.maxSad = 0.5: expected a whole number >= 0"],
        ),
        (
            "penumbra.findImage(img, tpl, {threads = 0})",
            &["options.threads = 0: expected 1 to 64"],
        ),
        (
            "penumbra.findImage(img, tpl, {best = 1})",
            &["penumbra.findImage: options: unknown field the string \"best\""],
        ),
        (
            "penumbra.sadMap(img, tpl, {top = 1})",
            &["penumbra.sadMap: options: unknown field the string \"top\""],
        ),
    ];
    for (source, parts) in cases {
        fails_with(&rt, &format!("{IMAGE}{source}"), parts);
    }
}

// ---- loadImage ------------------------------------------------------------------------------

fn write_png(path: &std::path::Path, img: &image::DynamicImage) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    img.save_with_format(path, image::ImageFormat::Png).unwrap();
}

#[test]
fn load_image_reads_rgba_or_luma_and_clears_transparent_pixels() {
    let (rt, dir) = runtime("match-load");
    // A 3×2 RGBA sprite: one fully transparent pixel with colour bytes under it.
    let sprite = image::RgbaImage::from_raw(
        3,
        2,
        vec![
            10, 20, 30, 255, 40, 50, 60, 0, 70, 80, 90, 128, //
            1, 2, 3, 255, 4, 5, 6, 255, 7, 8, 9, 255,
        ],
    )
    .unwrap();
    write_png(
        &dir.join("root/art/sprite.png"),
        &image::DynamicImage::ImageRgba8(sprite),
    );
    let (format, clear, half, luma_format, luma_clear, luma): (
        String,
        Vec<f32>,
        Vec<f32>,
        String,
        f32,
        f32,
    ) = eval(
        &rt,
        "local rgba = penumbra.loadImage('art/sprite.png')\n\
         local luma = penumbra.loadImage('art/sprite.png', 'r8')\n\
         return rgba.format, {rgba:get(1, 0)}, {rgba:get(2, 0)}, luma.format, luma:get(1, 0), \
                luma:get(0, 1)",
    );
    assert_eq!(format, "R8G8B8A8_UNORM");
    assert_eq!(clear, [0.0; 4]);
    assert_eq!(
        half,
        [70.0 / 255.0, 80.0 / 255.0, 90.0 / 255.0, 128.0 / 255.0]
    );
    assert_eq!((luma_format.as_str(), luma_clear), ("R8_UNORM", 0.0));
    assert!(luma > 0.0);
}

#[test]
fn a_sprite_with_transparent_pixels_is_found_in_a_png_screenshot() {
    let (rt, dir) = runtime("match-png");
    let mut shot = image::RgbaImage::from_fn(64, 40, |x, y| {
        image::Rgba([(x * 7 % 200) as u8 + 20, (y * 13 % 200) as u8 + 20, 90, 255])
    });
    let sprite = image::RgbaImage::from_fn(6, 6, |x, y| {
        let edge = (x == 0 || x == 5) && (y == 0 || y == 5);
        if edge {
            image::Rgba([0, 0, 0, 0])
        } else {
            image::Rgba([250, 30 + 20 * x as u8, 40 + 30 * y as u8, 255])
        }
    });
    for (x, y, p) in sprite.enumerate_pixels() {
        if p.0[3] == 255 {
            shot.put_pixel(37 + x, 21 + y, *p);
        }
    }
    write_png(
        &dir.join("root/shot.png"),
        &image::DynamicImage::ImageRgba8(shot),
    );
    write_png(
        &dir.join("root/sprite.png"),
        &image::DynamicImage::ImageRgba8(sprite),
    );
    let (x, y, sad): (u32, u32, u64) = eval(
        &rt,
        "local m = penumbra.findImage(penumbra.loadImage('shot.png'), penumbra.loadImage('sprite.png'))\n\
         return m[1].x, m[1].y, m[1].sad",
    );
    assert_eq!((x, y, sad), (37, 21, 0));
}

#[test]
fn load_image_arguments_and_files_are_checked() {
    let (rt, dir) = runtime("match-load-errors");
    write(&dir, "root/not.png", "hello");
    let cases: [(&str, &[&str]); 5] = [
        (
            "penumbra.loadImage('missing.png')",
            &["penumbra.loadImage: path:", "missing.png: No such file"],
        ),
        (
            "penumbra.loadImage('not.png')",
            &["penumbra.loadImage: not.png: not a PNG penumbra can read"],
        ),
        (
            "penumbra.loadImage('/etc/passwd')",
            &["penumbra.loadImage: path:", "is absolute"],
        ),
        (
            "penumbra.loadImage('not.png', 'rgb8')",
            &["penumbra.loadImage: channels: \"rgb8\" is not one of \"rgba8\", \"r8\""],
        ),
        (
            "penumbra.loadImage(7)",
            &["penumbra.loadImage: path: expected a string, got the number 7"],
        ),
    ];
    for (source, parts) in cases {
        fails_with(&rt, source, parts);
    }
}

// ---- the batched PCF path -------------------------------------------------------------------

/// A deterministic depth level: scattered depths with a few infinities and exact ties.
fn depth_values(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 97 {
            13 => 1.0,
            29 => f32::INFINITY,
            31 => 0.5,
            _ => ((i * 7919) % 1000) as f32 / 1000.0,
        })
        .collect()
}

#[test]
fn comparison_batches_give_the_reference_bits() {
    let (rt, _) = runtime("match-batch");
    // 16×16 2D and a 3-slice array; coordinates past the edges, references on exact ties.
    let n = 16usize;
    let values = depth_values(n * n * 3);
    let lua_values: Vec<String> = values
        .iter()
        .map(|v| {
            if v.is_infinite() {
                "math.huge".into()
            } else {
                format!("{v}")
            }
        })
        .collect();
    let coords: Vec<[f32; 2]> = (0..600)
        .map(|i| {
            let t = i as f32;
            [(t * 0.37).sin() * 0.7 + 0.5, (t * 0.73).cos() * 0.7 + 0.5]
        })
        .collect();
    let refs: Vec<f32> = (0..600).map(|i| [0.5, 0.25, 0.999, 0.0][i % 4]).collect();
    let flat: Vec<String> = coords
        .iter()
        .map(|c| format!("{}, {}", c[0], c[1]))
        .collect();
    let flat3: Vec<String> = coords
        .iter()
        .map(|c| format!("{}, {}, 2", c[0], c[1]))
        .collect();
    let lua_refs: Vec<String> = refs.iter().map(|r| r.to_string()).collect();
    let (plain, array, offset): (Vec<f32>, Vec<f32>, Vec<f32>) = eval(
        &rt,
        &format!(
            "local values = {{{values}}}\n\
             local d2 = penumbra.texture({{format = 'R32_FLOAT', width = 16, height = 16, \
                                          data = table.move(values, 1, 256, 1, {{}})}})\n\
             local arr = penumbra.texture({{format = 'R32_FLOAT', width = 16, height = 16, \
                                           dimension = '2DArray', arraySize = 3, data = values}})\n\
             local pcf = penumbra.sampler({{filter = 'COMPARISON_MIN_MAG_LINEAR_MIP_POINT', \
                                            comparisonFunc = 'LESS_EQUAL', addressU = 'WRAP', \
                                            addressV = 'BORDER', borderColor = 'OPAQUE_WHITE'}})\n\
             local refs = {{{refs}}}\n\
             return pcf:sampleCmpLevelZeroBatch(d2, {{{flat}}}, refs), \
                    pcf:sampleCmpLevelZeroBatch(arr, {{{flat3}}}, refs), \
                    pcf:sampleCmpLevelZeroBatch(d2, {{{flat}}}, refs, {{1, -2}})",
            values = lua_values.join(", "),
            refs = lua_refs.join(", "),
            flat = flat.join(", "),
            flat3 = flat3.join(", "),
        ),
    );
    let mut desc = SamplerDesc::comparison(
        Filter::ComparisonMinMagLinearMipPoint,
        ComparisonFunc::LessEqual,
    );
    desc.address_u = penumbra_core::AddressMode::Wrap;
    desc.address_v = penumbra_core::AddressMode::Border;
    desc.border_color = [1.0; 4];
    let sampler = Sampler::new(desc).unwrap();
    let d2 = Texture::from_f32(
        TextureDesc::new_2d(Format::R32Float, 16, 16),
        &values[..256],
    )
    .unwrap();
    let arr = Texture::from_f32(
        TextureDesc::new(Dimension::Texture2DArray, Format::R32Float, [16, 16, 1], 3),
        &values,
    )
    .unwrap();
    for (i, (c, r)) in coords.iter().zip(&refs).enumerate() {
        let want = sampler
            .sample_cmp_level_zero(Some(&d2), *c, *r, ())
            .unwrap();
        assert_eq!(plain[i].to_bits(), want.to_bits(), "2D {c:?} {r}");
        let want = sampler
            .sample_cmp_level_zero(Some(&arr), [c[0], c[1], 2.0], *r, ())
            .unwrap();
        assert_eq!(array[i].to_bits(), want.to_bits(), "array {c:?} {r}");
        let want = sampler
            .sample_cmp_level_zero(Some(&d2), *c, *r, [1, -2])
            .unwrap();
        assert_eq!(offset[i].to_bits(), want.to_bits(), "offset {c:?} {r}");
    }
    // The batch reports a sampler that cannot compare as the one-by-one path does.
    let many = vec!["0.5, 0.5"; 40].join(", ");
    fails_with(
        &rt,
        &format!(
            "local t = penumbra.texture({{format = 'R32_FLOAT', width = 2, height = 2}})\n\
             penumbra.sampler({{filter = 'MIN_MAG_MIP_POINT'}}):sampleCmpLevelZeroBatch(t, {{{many}}}, 0.5)"
        ),
        &["Sampler:sampleCmpLevelZeroBatch: coords[1]:"],
    );
}

// ---- alpha masking (issue 17) -----------------------------------------------------------------

/// A 6×6 sprite: a transparent corner, an opaque black outline, a red inside; and a 32×20 grey
/// screen holding a look-alike with a white outline at (2, 3) and the true sprite at (20, 10).
fn outline_pngs(dir: &std::path::Path) {
    use penumbra_core::msad4::encode_png;
    let px = |x: u32, y: u32, outline: u8| -> [u8; 4] {
        if x == 0 && y == 0 {
            [0, 0, 0, 0]
        } else if x == 0 || y == 0 || x == 5 || y == 5 {
            [outline, outline, outline, 255]
        } else {
            [200, 30, 40, 255]
        }
    };
    let sprite: Vec<u8> = (0..36).flat_map(|i| px(i % 6, i / 6, 0)).collect();
    let mut screen = vec![90u8; 32 * 20 * 4];
    for (ox, oy, outline) in [(2u32, 3u32, 255u8), (20, 10, 0)] {
        for i in 0..36u32 {
            let p = px(i % 6, i / 6, outline);
            let at = (((oy + i / 6) * 32 + ox + i % 6) * 4) as usize;
            if p[3] != 0 {
                screen[at..at + 4].copy_from_slice(&p);
            }
        }
    }
    let png = |w, h, data| encode_png(&Image::rgba8(w, h, data).unwrap()).unwrap();
    std::fs::write(dir.join("sprite.png"), png(6, 6, sprite)).unwrap();
    std::fs::write(dir.join("screen.png"), png(32, 20, screen)).unwrap();
}

#[test]
fn find_image_counts_a_sprites_black_outline_by_default() {
    let (rt, dir) = runtime("match-alpha");
    outline_pngs(&dir.join("root"));
    let load = "local img = penumbra.loadImage('screen.png')\n\
                local tpl = penumbra.loadImage('sprite.png')\n";
    // The default (alpha masking for RGBA): the true sprite first, at SAD 0.
    let best: Vec<u64> = eval(
        &rt,
        &format!("{load}local m = penumbra.findImage(img, tpl)[1] return {{m.x, m.y, m.sad}}"),
    );
    assert_eq!(best, [20, 10, 0]);
    // "alpha" by name is the same; the look-alike's SAD counts its 19 white outline pixels.
    let sads: Vec<u64> = eval(
        &rt,
        &format!(
            "{load}local a = penumbra.sadMap(img, tpl, {{mask = 'alpha'}})\n\
             local d = penumbra.sadMap(img, tpl)\n\
             local r = penumbra.sadMap(img, tpl, {{mask = 'msad4'}})\n\
             return {{a:get(2, 3), d:get(2, 3), a:get(20, 10), r:get(2, 3), r:get(20, 10)}}"
        ),
    );
    assert_eq!(sads, [19 * 3 * 255, 19 * 3 * 255, 0, 0, 0]);
    // msad4's rule by name: the outline does not count, both score 0, the look-alike ranks
    // first (the smaller row).
    let raw: Vec<u64> = eval(
        &rt,
        &format!(
            "{load}local m = penumbra.findImage(img, tpl, {{mask = 'msad4'}})[1]\n\
             return {{m.x, m.y, m.sad}}"
        ),
    );
    assert_eq!(raw, [2, 3, 0]);
    fails_with(
        &rt,
        &format!("{load}penumbra.findImage(img, tpl, {{mask = 'Alpha'}})"),
        &[
            "penumbra.findImage: options.mask = \"Alpha\": expected \"alpha\"",
            "\"msad4\"",
        ],
    );
    fails_with(
        &rt,
        "local g = penumbra.texture({format = 'R8_UNORM', width = 4, height = 4})\n\
         local t = penumbra.texture({format = 'R8_UNORM', width = 2, height = 2})\n\
         penumbra.findImage(g, t, {mask = 'alpha'})",
        &["penumbra.findImage: alpha masking needs an RGBA8 template"],
    );
}
