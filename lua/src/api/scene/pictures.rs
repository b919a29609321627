//! The pictures of a scene: `scene:saveShadowMap`, `scene:saveDrawnTiles` (what the queries drew
//! of a light's map), `scene:saveLitMap` (a top-down map of how lit a level is) and
//! `scene:saveView` (what an eye sees, from above, or its depth map). All are PNGs written below
//! the output folder.

use glam::{Vec2, Vec3};
use image::{ExtendedColorType, GrayImage, Rgb, RgbImage};
use mlua::{UserDataMethods, Value};
use penumbra_core::Dimension;
use penumbra_core::picture::{TopDown, depth_image, depth_strip, drawn_picture, ramp};
use penumbra_core::shadow::{Aabb, LightKind, PcfKernel, Scene, ShadowMap};

use super::{EYE_PARAM_KEYS, LuaScene, eye_arg, light_index};
use crate::api::png::{encode_png, write_out};
use crate::api::{Call, Fields, method};
use crate::context::ScriptContext;

/// The most pixels a top-down picture may have.
const MAX_PIXELS: u64 = 1 << 22;
/// The widest top-down picture.
const MAX_WIDTH: u32 = 4096;
/// Picture rows computed at a time.
const ROWS_PER_CHUNK: u32 = 32;

const LIT_MAP_KEYS: [&str; 9] = [
    "min",
    "max",
    "height",
    "width",
    "normal",
    "probes",
    "threshold",
    "peak",
    "joined",
];
const VIEW_KEYS: [&str; 7] = ["min", "max", "height", "width", "targets", "radius", "mode"];

/// Occluder outlines.
const OUTLINE: Rgb<u8> = Rgb([80, 200, 255]);
const WHITE: Rgb<u8> = Rgb([255, 255, 255]);
const BLACK: Rgb<u8> = Rgb([0, 0, 0]);
/// Probes at or above the threshold, and below it.
const LIT: Rgb<u8> = Rgb([255, 226, 70]);
const DARK: Rgb<u8> = Rgb([70, 120, 255]);
/// Saw / did not see a target.
const SEEN: Rgb<u8> = Rgb([60, 230, 110]);
const UNSEEN: Rgb<u8> = Rgb([240, 70, 70]);
/// The view map: outside the cone, inside but hidden, and fully visible.
const OUT_OF_VIEW: Rgb<u8> = Rgb([24, 24, 30]);
const HIDDEN: Rgb<u8> = Rgb([52, 60, 84]);
const VISIBLE: Rgb<u8> = Rgb([250, 214, 120]);

pub(super) fn add_methods<M: UserDataMethods<LuaScene>>(methods: &mut M) {
    method(methods, "saveShadowMap", save_shadow_map);
    method(methods, "saveDrawnTiles", save_drawn_tiles);
    method(methods, "saveLitMap", save_lit_map);
    method(methods, "saveView", save_view);
}

/// Writes a gray picture.
fn write_gray(call: &Call<'_>, rel: &str, img: &GrayImage) -> mlua::Result<String> {
    let png = encode_png(
        call,
        rel,
        img.as_raw(),
        img.width(),
        img.height(),
        ExtendedColorType::L8,
    )?;
    write_out(call, rel, &png)
}

/// Writes a colour picture.
fn write_rgb(call: &Call<'_>, rel: &str, img: &RgbImage) -> mlua::Result<String> {
    let png = encode_png(
        call,
        rel,
        img.as_raw(),
        img.width(),
        img.height(),
        ExtendedColorType::Rgb8,
    )?;
    write_out(call, rel, &png)
}

/// A depth map as gray (near dark, far light), its faces side by side for cubes.
fn depth_picture(map: &ShadowMap) -> GrayImage {
    let tex = map.texture();
    if tex.dimension() == Dimension::Texture2D {
        depth_image(tex, 0)
    } else {
        depth_strip(tex)
    }
}

/// The xz rectangle a top-down picture shows (`min`/`max`, or the scene's bounds) and its size.
fn region(call: &Call<'_>, f: &Fields<'_, '_>, scene: &Scene) -> mlua::Result<TopDown> {
    let width = f.index("width")?.unwrap_or(800);
    if !(16..=MAX_WIDTH).contains(&width) {
        return Err(call.error(format!(
            "{} = {width}: expected 16 to {MAX_WIDTH} pixels",
            f.name("width")
        )));
    }
    let bounds = match (f.vec3("min")?, f.vec3("max")?) {
        (Some(a), Some(b)) => Aabb {
            min: a.min(b),
            max: a.max(b),
        },
        (None, None) => {
            let b = scene.bounds();
            if b.is_empty() {
                return Err(call
                    .error("the scene has no occluders: give the picture's min and max corners"));
            }
            b
        }
        _ => {
            return Err(call.error(format!(
                "{} and {} go together (or leave both out for the scene's bounds)",
                f.name("min"),
                f.name("max")
            )));
        }
    };
    if bounds.max.x <= bounds.min.x || bounds.max.z <= bounds.min.z {
        return Err(call.error(format!(
            "the region from ({}, {}) to ({}, {}) in x and z is empty",
            bounds.min.x, bounds.min.z, bounds.max.x, bounds.max.z
        )));
    }
    let view = TopDown::fit(&bounds, width);
    if u64::from(view.width) * u64::from(view.height) > MAX_PIXELS {
        return Err(call.error(format!(
            "the picture would be {}x{} pixels; at most {MAX_PIXELS} (make it narrower or the \
             region squarer)",
            view.width, view.height
        )));
    }
    Ok(view)
}

/// The world points at height `y` under rows `rows` of a top-down picture.
fn row_points(view: &TopDown, rows: std::ops::Range<u32>, y: f32) -> Vec<Vec3> {
    rows.flat_map(|py| (0..view.width).map(move |px| (px, py)))
        .map(|(px, py)| {
            let w = view.world(px, py);
            Vec3::new(w.x, y, w.y)
        })
        .collect()
}

/// Markers to draw: positions, or rows with a `pos` (and maybe an `exposure`).
fn markers(
    call: &Call<'_>,
    f: &Fields<'_, '_>,
    key: &str,
) -> mlua::Result<Vec<(Vec3, Option<f64>)>> {
    let Some(list) = f.read(key, |c, what, v| c.table_of(what, v))? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(list.raw_len());
    for k in 0..list.raw_len() {
        let what = format!("{}[{}]", f.name(key), k + 1);
        let item: Value = list.raw_get(k + 1)?;
        let row = match &item {
            Value::Table(t) => Some(t.clone()),
            _ => None,
        };
        match row.map(|t| t.raw_get::<Value>("pos")).transpose()? {
            Some(pos) if !pos.is_nil() => {
                let p = call.vec3_of(&format!("{what}.pos"), &pos)?;
                let exposure = match &item {
                    Value::Table(t) => match t.raw_get::<Value>("exposure")? {
                        Value::Nil => None,
                        e => Some(call.number_of(&format!("{what}.exposure"), &e)?),
                    },
                    _ => None,
                };
                out.push((p, exposure));
            }
            _ => out.push((call.vec3_of(&what, &item)?, None)),
        }
    }
    Ok(out)
}

/// A dot with a dark ring, so it shows on any background.
fn marker(view: &TopDown, img: &mut RgbImage, p: Vec3, r: i64, color: Rgb<u8>) {
    let at = Vec2::new(p.x, p.z);
    view.dot(img, at, r + 1, BLACK);
    view.dot(img, at, r, color);
}

/// `scene:saveShadowMap(light, path)`.
fn save_shadow_map(call: &Call<'_>, this: &LuaScene) -> mlua::Result<String> {
    penumbra_core::zone!("penumbra_lua::saveShadowMap");
    // The depths as f32s, a gray slice and the strip, the PNG: 7 bytes a texel.
    save_map_picture(call, this, 7, "the shadow-map picture", |rel, map| {
        write_gray(call, rel, &depth_picture(map))
    })
}

/// `scene:saveDrawnTiles(light, path)`.
fn save_drawn_tiles(call: &Call<'_>, this: &LuaScene) -> mlua::Result<String> {
    penumbra_core::zone!("penumbra_lua::saveDrawnTiles");
    // The depths as f32s, a gray slice and the strip, the RGB picture, the PNG: 12 bytes a
    // texel.
    save_map_picture(call, this, 12, "the drawn-tiles picture", |rel, map| {
        write_rgb(call, rel, &drawn_picture(map))
    })
}

/// A picture of the map of the light given as argument 0, written by `write` to the path of
/// argument 1, with `per_texel` bytes a texel charged while it is made (`what` names them).
fn save_map_picture(
    call: &Call<'_>,
    this: &LuaScene,
    per_texel: u64,
    what: &str,
    write: impl FnOnce(&str, &ShadowMap) -> mlua::Result<String>,
) -> mlua::Result<String> {
    let rel = call.string(1, "path")?;
    let mut state = this.state(call)?;
    let i = light_index(call, &state, this, call.arg(0))?;
    let map = state.light_map(call, i)?;
    let _picture = picture_charge(call, map, per_texel, what)?;
    write(&rel, map)
}

/// Charges, while a picture of every texel of `map` is made, `per_texel` bytes a texel.
fn picture_charge(
    call: &Call<'_>,
    map: &ShadowMap,
    per_texel: u64,
    what: &str,
) -> mlua::Result<crate::context::Charge> {
    let n = u64::from(map.resolution());
    let texels = n * n * map.view_proj().len() as u64;
    ScriptContext::of(call.lua)
        .textures
        .charge_for(call.lua, texels * per_texel, what)
        .map_err(|e| call.error(e))
}

/// `scene:saveLitMap(path [, options])`.
fn save_lit_map(call: &Call<'_>, this: &LuaScene) -> mlua::Result<String> {
    penumbra_core::zone!("penumbra_lua::saveLitMap");
    let rel = call.string(0, "path")?;
    let f = Fields::optional(call, 1, "options", &LIT_MAP_KEYS)?;
    let mut state = this.state(call)?;
    let view = region(call, &f, state.scene())?;
    let height = f.number("height")?.unwrap_or(0.0) as f32;
    let normal = match f.get("normal")? {
        Value::Nil => Some(Vec3::Y),
        Value::Boolean(false) => None,
        v => Some(call.vec3_of(&f.name("normal"), &v)?),
    };
    let probes = markers(call, &f, "probes")?;
    let joined = f.read("joined", |c, what, v| match v {
        Value::Boolean(b) => Ok(*b),
        other => Err(c.expected(what, "true or false", other)),
    })?;
    let threshold = f.number("threshold")?;
    let mut values = Vec::with_capacity(view.width as usize * view.height as usize);
    for y0 in (0..view.height).step_by(ROWS_PER_CHUNK as usize) {
        let rows = y0..(y0 + ROWS_PER_CHUNK).min(view.height);
        let points = row_points(&view, rows, height);
        values.extend(state.exposures(call, &points, normal)?);
    }
    let peak = match f.number("peak")? {
        Some(p) if p > 0.0 => p as f32,
        Some(p) => {
            return Err(call.error(format!(
                "{} = {p}: expected an exposure > 0",
                f.name("peak")
            )));
        }
        None => values.iter().copied().fold(0.0f32, f32::max),
    };
    let peak = if peak > 0.0 { peak } else { 1.0 };
    let mut img = RgbImage::from_fn(view.width, view.height, |x, y| {
        let v = values[(y * view.width + x) as usize];
        ramp((v / peak).sqrt())
    });
    view.outline_occluders(&mut img, state.scene(), height, OUTLINE);
    for i in 0..state.light_count() {
        if let LightKind::Spot { position, .. } | LightKind::Point { position, .. } =
            state.light(i).1.kind
        {
            marker(&view, &mut img, position, 4, Rgb([255, 250, 220]));
        }
    }
    // A path (probePath's rows) is joined by default; `joined = false` draws points only
    // (a grid of dark spots).
    if joined.unwrap_or(true) {
        for pair in probes.windows(2) {
            let (a, b) = (pair[0].0, pair[1].0);
            view.line(&mut img, Vec2::new(a.x, a.z), Vec2::new(b.x, b.z), WHITE);
        }
    }
    for &(p, exposure) in &probes {
        let color = match (threshold, exposure) {
            (Some(t), Some(e)) if e >= t => LIT,
            (Some(_), Some(_)) => DARK,
            _ => WHITE,
        };
        marker(&view, &mut img, p, 3, color);
    }
    write_rgb(call, &rel, &img)
}

/// `scene:saveView(eye, path [, options])`.
fn save_view(call: &Call<'_>, this: &LuaScene) -> mlua::Result<String> {
    penumbra_core::zone!("penumbra_lua::saveView");
    let rel = call.string(1, "path")?;
    let mut keys = EYE_PARAM_KEYS.to_vec();
    keys.extend(VIEW_KEYS);
    let f = Fields::optional(call, 2, "options", &keys)?;
    let eye = eye_arg(call, this, call.arg(0), &f)?;
    let mode = f.string("mode")?.unwrap_or_else(|| "map".into());
    if !matches!(mode.as_str(), "map" | "depth") {
        return Err(call.error(format!(
            "options.mode: {mode:?} is not one of \"map\", \"depth\""
        )));
    }
    let mut state = this.state(call)?;
    // The top-down picture takes the batched query (charged here); the depth picture does not.
    state.eye_map(call, &eye, mode == "map")?;
    let state = &*state;
    let rendered = state
        .rendered_eye(&eye)
        .ok_or_else(|| call.error("internal error: the eye's map was dropped"))?;
    if mode == "depth" {
        return write_gray(call, &rel, &depth_picture(rendered.map()));
    }
    let view = region(call, &f, state.scene())?;
    let height = f.number("height")?.unwrap_or(1.0) as f32;
    let radius = f.number("radius")?.unwrap_or(0.0).max(0.0) as f32;
    let targets = markers(call, &f, "targets")?;
    let params = state.eye_params(&eye);
    let batch = rendered.map();
    let viewer = rendered.viewer();
    let context = ScriptContext::of(call.lua);
    let mut seen = Vec::with_capacity(view.width as usize * view.height as usize);
    let (mut inside, mut at, mut lit) = (Vec::new(), Vec::new(), Vec::new());
    for y0 in (0..view.height).step_by(ROWS_PER_CHUNK as usize) {
        context.check_deadline(call.lua)?;
        let rows = y0..(y0 + ROWS_PER_CHUNK).min(view.height);
        let points = row_points(&view, rows, height);
        inside.clear();
        at.clear();
        for (k, p) in points.iter().enumerate() {
            if viewer.in_view(*p) {
                inside.push(*p);
                at.push(k);
            }
        }
        lit.clear();
        lit.resize(inside.len(), 0.0f32);
        batch.lit_fractions_with(&inside, None, &PcfKernel::HARDWARE_2X2, &mut lit);
        let start = seen.len();
        seen.resize(start + points.len(), None);
        for (&k, &f) in at.iter().zip(&lit) {
            seen[start + k] = Some(f);
        }
    }
    let mix = |t: f32| {
        let c: [u8; 3] = std::array::from_fn(|i| {
            let (a, b) = (f32::from(HIDDEN.0[i]), f32::from(VISIBLE.0[i]));
            (a + (b - a) * t.clamp(0.0, 1.0)).round() as u8
        });
        Rgb(c)
    };
    let mut img = RgbImage::from_fn(view.width, view.height, |x, y| {
        match seen[(y * view.width + x) as usize] {
            Some(f) => mix(f),
            None => OUT_OF_VIEW,
        }
    });
    view.outline_occluders(&mut img, state.scene(), height, OUTLINE);
    let apex = Vec2::new(params.position.x, params.position.z);
    let flat = params
        .direction
        .map(|d| Vec2::new(d.x, d.z))
        .filter(|d| d.length_squared() > 1e-6);
    match flat {
        Some(dir) if !params.all_around() => view.cone(
            &mut img,
            apex,
            dir,
            (0.5 * params.fov).to_radians(),
            params.range,
            WHITE,
        ),
        _ => view.circle(&mut img, apex, params.range, WHITE),
    }
    for &(p, _) in &targets {
        let color = if rendered.visible_fraction(p, radius) >= 0.5 {
            SEEN
        } else {
            UNSEEN
        };
        marker(&view, &mut img, p, 3, color);
    }
    marker(&view, &mut img, params.position, 4, Rgb([255, 80, 200]));
    write_rgb(call, &rel, &img)
}
