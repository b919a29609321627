//! Image matching: `penumbra.msad4` (HLSL's intrinsic, SPEC §4), `penumbra.loadImage`,
//! `penumbra.findImage` (the best positions of a template by masked SAD) and `penumbra.sadMap`
//! (the SAD at every position, with a heat-map picture).
//!
//! Images are textures of format `R8_UNORM` (one byte a pixel) or `R8G8B8A8_UNORM` (four), from
//! `loadImage` or made by the script. By default an RGBA template's pixels with alpha 0 are
//! "don't care" and every byte of the others counts, black included (`mask = "alpha"`); R8
//! templates, and `mask = "msad4"`, follow the intrinsic's rule: template bytes that are 0 are
//! "don't care" (R115). `penumbra match` has the same default.

use std::fmt::Display;
use std::io::Cursor;

use image::{ImageFormat, ImageReader};
use mlua::{Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, Value};
use penumbra_core::msad4::{
    Channels, Image, Masking, MatchOptions, SadMap, decode_png_template, encode_heatmap_png,
    find_matches, msad4, sad_map_masked,
};
use penumbra_core::{Dimension, Format, Texture, TextureDesc};

use super::names::{self, Members};
use super::png::{root_path, write_out};
use super::{Call, Fields, Four, Indexed, LuaTexture, ScriptType, export, method};
use crate::context::{Charge, ScriptContext};

/// The largest image edge: D3D12's 2D limit.
const MAX_EDGE: u32 = penumbra_core::texture::limits::MAX_EDGE_2D;
/// The most matches `findImage` returns.
const MAX_TOP: u32 = 10_000;
/// The most threads a search may use.
const MAX_THREADS: u32 = 64;

/// `penumbra.sadMap`'s result.
pub(crate) struct LuaSadMap {
    map: SadMap,
    _charge: Charge,
}

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "msad4", msad4_fn)?;
    export(lua, module, "loadImage", load_image)?;
    export(lua, module, "findImage", find_image)?;
    export(lua, module, "sadMap", sad_map_fn)?;
    Ok(())
}

/// A `uint` of HLSL: a whole number in 0..=2^32 − 1.
fn uint_of(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<u32> {
    let n = call.number_of(what, v)?;
    if n.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&n) {
        return Err(call.error(format!(
            "{what} = {n}: expected a whole number in 0..4294967295 (a uint)"
        )));
    }
    Ok(n as u32)
}

/// `n` uints from a table of exactly `n` numbers.
fn uints<const N: usize>(
    call: &Call<'_>,
    what: &str,
    v: &Value,
    shape: &str,
) -> mlua::Result<[u32; N]> {
    let t = match v {
        Value::Table(t) if t.raw_len() == N => t,
        Value::Table(t) => {
            return Err(call.error(format!(
                "{what}: expected {shape}, got a table of {}",
                t.raw_len()
            )));
        }
        other => return Err(call.expected(what, shape, other)),
    };
    let mut out = [0u32; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = uint_of(call, &Indexed(what, i + 1), &t.raw_get(i + 1)?)?;
    }
    Ok(out)
}

/// `penumbra.msad4(ref, {srcX, srcY}, accum)` or `penumbra.msad4(ref, srcX, srcY, accum)`.
fn msad4_fn(call: &Call<'_>) -> mlua::Result<Four<u32>> {
    let reference = uint_of(call, "ref", call.arg(0))?;
    let (source, accum_at) = match call.arg(1) {
        v @ Value::Table(_) => (uints::<2>(call, "src", v, "{x, y}")?, 2),
        v @ (Value::Integer(_) | Value::Number(_)) => (
            [
                uint_of(call, "srcX", v)?,
                uint_of(call, "srcY", call.arg(2))?,
            ],
            3,
        ),
        other => {
            return Err(call.expected("src", "{x, y} or two numbers srcX, srcY", other));
        }
    };
    let accum = match call.arg(accum_at) {
        Value::Nil => [0; 4],
        v => uints::<4>(call, "accum", v, "{a, b, c, d}")?,
    };
    Ok(Four(msad4(reference, source, accum)))
}

/// `penumbra.loadImage(path [, "rgba8" | "r8"])`: a PNG below the root as an `R8G8B8A8_UNORM`
/// (default) or `R8_UNORM` (luma) texture; fully transparent pixels load as 0 (don't care).
fn load_image(call: &Call<'_>) -> mlua::Result<LuaTexture> {
    penumbra_core::zone!("penumbra_lua::loadImage");
    let rel = call.string(0, "path")?;
    let (channels, format) = match call.get::<Option<String>>(1, "channels")?.as_deref() {
        None | Some("rgba8") => (Channels::Rgba8, Format::R8G8B8A8Unorm),
        Some("r8") => (Channels::R8, Format::R8Unorm),
        Some(other) => {
            return Err(call.error(format!(
                "channels: {other:?} is not one of \"rgba8\", \"r8\""
            )));
        }
    };
    let path = root_path(call, &rel)?;
    let head = super::png::read_jailed(call, &rel, &path, super::png::MAX_PNG_BYTES)?;
    let mut reader = ImageReader::new(Cursor::new(&head));
    reader.set_format(ImageFormat::Png);
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| call.error(format!("{rel}: not a PNG penumbra can read: {e}")))?;
    if width > MAX_EDGE || height > MAX_EDGE {
        return Err(call.error(format!(
            "{rel}: {width}x{height} is larger than {MAX_EDGE} pixels on a side"
        )));
    }
    let desc = TextureDesc::new_2d(format, width, height);
    let charge = ScriptContext::of(call.lua)
        .textures
        .charge(call.lua, desc.total_bytes())
        .map_err(|e| call.error(e))?;
    // Decoded from the bytes the jail read (the path is not opened a second time).
    let image = decode_png_template(&head, channels).map_err(|e| match e {
        penumbra_core::msad4::MatchError::Decode { message, .. } => {
            call.error(format!("{rel}: not a PNG penumbra can read: {message}"))
        }
        other => call.error(format!("{rel}: {other}")),
    })?;
    let texture = Texture::new(desc, image.into_data()).map_err(|e| call.error(e))?;
    Ok(LuaTexture::new(texture, charge))
}

/// An image argument: an `R8_UNORM` or `R8G8B8A8_UNORM` 2D texture (its mip 0, slice 0).
fn image_of(call: &Call<'_>, what: &str, v: &Value) -> mlua::Result<Image> {
    let Value::UserData(ud) = v else {
        return Err(call.expected(what, "a texture (from penumbra.loadImage)", v));
    };
    if !ud.is::<LuaTexture>() {
        return Err(call.expected(what, "a texture (from penumbra.loadImage)", v));
    }
    let tex = ud.borrow::<LuaTexture>()?;
    let desc = *tex.desc();
    let channels = match desc.format {
        Format::R8Unorm => Channels::R8,
        Format::R8G8B8A8Unorm => Channels::Rgba8,
        other => {
            return Err(call.error(format!(
                "{what}: images are R8_UNORM or R8G8B8A8_UNORM textures, not {other}"
            )));
        }
    };
    if desc.dimension != Dimension::Texture2D {
        return Err(call.error(format!(
            "{what}: images are 2D textures, not {}",
            desc.dimension
        )));
    }
    let texture = tex.texture().map_err(|e| call.error(e))?;
    Image::new(
        desc.width,
        desc.height,
        channels,
        texture.subresource(0, 0).to_vec(),
    )
    .map_err(|e| call.error(format!("{what}: {e}")))
}

/// The image and template arguments, checked against each other.
fn pair(call: &Call<'_>) -> mlua::Result<(Image, Image)> {
    let image = image_of(call, "image", call.arg(0))?;
    let template = image_of(call, "template", call.arg(1))?;
    if image.channels() != template.channels() {
        return Err(call.error(format!(
            "the image is {} but the template is {}: load both with the same channels",
            image.channels(),
            template.channels()
        )));
    }
    if template.width() > image.width() || template.height() > image.height() {
        return Err(call.error(format!(
            "the template ({}x{}) is larger than the image ({}x{})",
            template.width(),
            template.height(),
            image.width(),
            image.height()
        )));
    }
    Ok((image, template))
}

/// `options.threads`: 1 to [`MAX_THREADS`].
fn threads(call: &Call<'_>, f: &Fields<'_, '_>) -> mlua::Result<usize> {
    let n = f.index("threads")?.unwrap_or(1);
    if !(1..=MAX_THREADS).contains(&n) {
        return Err(call.error(format!(
            "{} = {n}: expected 1 to {MAX_THREADS}",
            f.name("threads")
        )));
    }
    Ok(n as usize)
}

/// `options.mask`: "auto" (the default), "alpha" or "msad4".
fn masking(f: &Fields<'_, '_>) -> mlua::Result<Masking> {
    let m = f.read("mask", |c, what, v| {
        let name = c.string_of(what, v)?;
        Masking::from_name(&name).ok_or_else(|| {
            c.error(format!(
                "{what} = {name:?}: expected \"alpha\" (transparent pixels don't count, black \
                 does), \"msad4\" (0 bytes don't count) or \"auto\""
            ))
        })
    })?;
    Ok(m.unwrap_or_default())
}

/// `penumbra.findImage(image, template [, {top = 1, maxSad = n, threads = 1, radius = r,
/// mask = "auto"}])`.
fn find_image(call: &Call<'_>) -> mlua::Result<Table> {
    penumbra_core::zone!("penumbra_lua::findImage");
    let f = Fields::optional(
        call,
        2,
        "options",
        &["top", "maxSad", "threads", "radius", "mask"],
    )?;
    let top = f.index("top")?.unwrap_or(1);
    if top > MAX_TOP {
        return Err(call.error(format!(
            "{} = {top}: at most {MAX_TOP} matches",
            f.name("top")
        )));
    }
    let max_sad = f.read("maxSad", |c, what, v| {
        let n = c.number_of(what, v)?;
        if n.fract() != 0.0 || !(0.0..=9_007_199_254_740_992.0).contains(&n) {
            return Err(c.error(format!("{what} = {n}: expected a whole number >= 0")));
        }
        Ok(n as u64)
    })?;
    let radius = f.read("radius", |c, what, v| match v {
        Value::Table(_) => {
            let [x, y] = uints::<2>(c, what, v, "{x, y}")?;
            Ok((x, y))
        }
        _ => {
            let r = uint_of(c, what, v)?;
            Ok((r, r))
        }
    })?;
    let threads = threads(call, &f)?;
    let masking = masking(&f)?;
    let (image, template) = pair(call)?;
    let opts = MatchOptions {
        top_k: top as usize,
        max_sad,
        nms_radius: radius,
        threads,
        masking,
        ..MatchOptions::default()
    };
    let found = find_matches(&image, &template, &opts).map_err(|e| call.error(e))?;
    let out = call.lua.create_table_with_capacity(found.len(), 0)?;
    for m in found {
        let row = call.lua.create_table_with_capacity(0, 3)?;
        row.raw_set("x", m.x)?;
        row.raw_set("y", m.y)?;
        row.raw_set("sad", m.sad)?;
        out.raw_push(row)?;
    }
    Ok(out)
}

/// `penumbra.sadMap(image, template [, {threads = 1, mask = "auto"}])`.
fn sad_map_fn(call: &Call<'_>) -> mlua::Result<LuaSadMap> {
    penumbra_core::zone!("penumbra_lua::sadMap");
    let f = Fields::optional(call, 2, "options", &["threads", "mask"])?;
    let threads = threads(call, &f)?;
    let masking = masking(&f)?;
    let (image, template) = pair(call)?;
    let positions = u64::from(image.width() - template.width() + 1)
        * u64::from(image.height() - template.height() + 1);
    let charge = ScriptContext::of(call.lua)
        .textures
        .charge_for(call.lua, 4 * positions, "a SAD map")
        .map_err(|e| call.error(e))?;
    let map = sad_map_masked(&image, &template, masking, threads).map_err(|e| call.error(e))?;
    Ok(LuaSadMap {
        map,
        _charge: charge,
    })
}

impl ScriptType for LuaSadMap {
    const MEMBERS: &'static Members = &names::SAD_MAP_MEMBERS;
}

impl UserData for LuaSadMap {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
        fields.add_field_method_get("width", |_, m| Ok(m.map.width()));
        fields.add_field_method_get("height", |_, m| Ok(m.map.height()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, m, ()| {
            Ok(format!("SadMap({}x{})", m.map.width(), m.map.height()))
        });
        method(methods, "get", |call, this: &Self| {
            let x = call.index(0, "x")?;
            let y = call.index(1, "y")?;
            this.map.get(x, y).ok_or_else(|| {
                call.error(format!(
                    "({x}, {y}) is outside the map (0..{}, 0..{})",
                    this.map.width() - 1,
                    this.map.height() - 1
                ))
            })
        });
        method(methods, "min", |_, this: &Self| {
            // The first smallest SAD in row order: ties go to the smaller (y, x).
            let (at, sad) = this
                .map
                .data()
                .iter()
                .enumerate()
                .min_by_key(|&(i, &sad)| (sad, i))
                .map_or((0, 0), |(i, &sad)| (i, sad));
            let w = this.map.width() as usize;
            Ok(((at % w) as u32, (at / w) as u32, sad))
        });
        method(methods, "saveHeatmap", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::saveHeatmap");
            let rel = call.string(0, "path")?;
            let png = encode_heatmap_png(&this.map).map_err(|e| call.error(e))?;
            write_out(call, &rel, &png)
        });
    }
}
