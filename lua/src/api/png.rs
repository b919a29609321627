//! PNG in and out: `penumbra.loadTexture(path [, options])` reads under the script root,
//! `tex:save(path [, options])` writes under the output folder.
//!
//! Loading: 8-bit gray → `R8_UNORM`, 16-bit gray → `R16_UNORM`, anything else → `R8G8B8A8_UNORM`.
//! Saving: `R8_UNORM` → 8-bit gray and `R8G8B8A8_UNORM` → 8-bit RGBA, byte for byte; every other
//! format writes its red channel as 8-bit gray, mapping `[min, max]` linearly onto `0..255`
//! (rounded, clamped; NaN → 0). `min`/`max` default to the smallest and largest finite red value
//! of the saved level, and a flat level saves as 0.

use std::io::Cursor;

use image::{ExtendedColorType, ImageFormat, ImageReader, Limits};
use mlua::{Lua, Table, UserDataMethods, Value};
use penumbra_core::picture::{gray, png::encode_pixels};
use penumbra_core::{Dimension, Format, Texture, TextureDesc};

use super::texture::{mip_filter, new_texture};
use super::{Call, Fields, LuaTexture, export, method};
use crate::context::ScriptContext;

/// The largest PNG edge: D3D12's 2D limit.
const MAX_EDGE: u32 = penumbra_core::texture::limits::MAX_EDGE_2D;

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "loadTexture", load_texture)?;
    Ok(())
}

pub(super) fn add_save<M: UserDataMethods<LuaTexture>>(methods: &mut M) {
    method(methods, "save", save);
}

/// `penumbra.loadTexture(path [, {mipLevels = n | "full", mipFilter = "average"}])`.
fn load_texture(call: &Call<'_>) -> mlua::Result<LuaTexture> {
    penumbra_core::zone!("penumbra_lua::loadTexture");
    let rel = call.string(0, "path")?;
    let opts = Fields::optional(call, 1, "options", &["mipLevels", "mipFilter"])?;
    let context = ScriptContext::of(call.lua);
    let root = context
        .root
        .as_ref()
        .ok_or_else(|| call.error("this Lua state has no script root, so no file access"))?;
    let path = root
        .read_path(&rel)
        .map_err(|e| call.error(format!("path: {e}")))?;
    let bytes = read_jailed(call, &rel, &path, MAX_PNG_BYTES)?;
    // The decoder allocates on its own: its memory (16-bit RGBA at worst) is charged from the
    // header's size before a pixel is decoded, and held while it works.
    let (w, h) = ImageReader::with_format(Cursor::new(&bytes), ImageFormat::Png)
        .into_dimensions()
        .map_err(|e| call.error(format!("{rel}: not a PNG penumbra can read: {e}")))?;
    if w > MAX_EDGE || h > MAX_EDGE {
        return Err(call.error(format!(
            "{rel}: {w}x{h} is larger than {MAX_EDGE} pixels on a side"
        )));
    }
    let _decoding = ScriptContext::of(call.lua)
        .textures
        .charge_for(
            call.lua,
            u64::from(w) * u64::from(h) * 8,
            "decoding the PNG",
        )
        .map_err(|e| call.error(e))?;
    let mut reader = ImageReader::new(Cursor::new(bytes));
    reader.set_format(ImageFormat::Png);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_EDGE);
    limits.max_image_height = Some(MAX_EDGE);
    reader.limits(limits);
    let image = reader
        .decode()
        .map_err(|e| call.error(format!("{rel}: not a PNG penumbra can read: {e}")))?;
    let (width, height) = (image.width(), image.height());
    let (format, level0): (Format, Vec<u8>) = match image {
        image::DynamicImage::ImageLuma8(gray) => (Format::R8Unorm, gray.into_raw()),
        image::DynamicImage::ImageLuma16(gray) => (
            Format::R16Unorm,
            gray.into_raw()
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect(),
        ),
        other => (Format::R8G8B8A8Unorm, other.into_rgba8().into_raw()),
    };
    let mut desc = TextureDesc::new_2d(format, width, height);
    let mips = match opts.get("mipLevels")? {
        Value::Nil => 1,
        Value::String(s) if s.to_str().is_ok_and(|s| &*s == "full") => desc
            .full_mip_count()
            .min(penumbra_core::texture::limits::MAX_MIP_LEVELS),
        v => call.index_of("options.mipLevels", &v)?,
    };
    let filter = mip_filter(call, "options.mipFilter", &opts.get("mipFilter")?)?;
    desc.mip_levels = mips;
    new_texture(call, desc, || {
        if mips == 1 {
            return Texture::new(desc, level0);
        }
        let mut all = vec![0u8; usize::try_from(desc.total_bytes()).unwrap_or(usize::MAX)];
        all[..level0.len()].copy_from_slice(&level0);
        Texture::new(desc, all)?.generate_mips(filter)
    })
}

/// `tex:save(path [, {mip = 0, slice = 0, min = lo, max = hi}])` → the path written, as shown.
fn save(call: &Call<'_>, this: &LuaTexture) -> mlua::Result<String> {
    penumbra_core::zone!("penumbra_lua::save");
    let rel = call.string(0, "path")?;
    let opts = Fields::optional(call, 1, "options", &["mip", "slice", "min", "max"])?;
    let d = *this.desc();
    let mip = opts.index("mip")?.unwrap_or(0);
    let slice = opts.index("slice")?.unwrap_or(0);
    let [w, h, depth] = this.level_size(call, "options.mip", mip)?;
    let (resource_slice, z) = if d.dimension == Dimension::Texture3D {
        (0, slice)
    } else {
        (slice, 0)
    };
    if resource_slice >= d.array_size || z >= depth {
        return Err(call.error(format!(
            "options.slice = {slice}: the texture has {} slice(s) (depth {depth} at mip {mip})",
            d.array_size
        )));
    }
    let (lo, hi) = (opts.field::<f32>("min")?, opts.field::<f32>("max")?);
    let texture = this.texture().map_err(|e| call.error(e))?;
    let level = texture.subresource(mip, resource_slice);
    let plane = (w as usize) * (h as usize) * d.format.bytes_per_texel();
    let plane = &level[z as usize * plane..(z as usize + 1) * plane];
    let (pixels, color) = match d.format {
        Format::R8Unorm => (plane.to_vec(), ExtendedColorType::L8),
        Format::R8G8B8A8Unorm => (plane.to_vec(), ExtendedColorType::Rgba8),
        f => (gray(f, plane, lo, hi), ExtendedColorType::L8),
    };
    let png = encode_png(call, &rel, &pixels, w, h, color)?;
    write_out(call, &rel, &png)
}

/// Encodes 8-bit pixels as a PNG (`rel` names the file in errors).
pub(super) fn encode_png(
    call: &Call<'_>,
    rel: &str,
    pixels: &[u8],
    width: u32,
    height: u32,
    color: ExtendedColorType,
) -> mlua::Result<Vec<u8>> {
    encode_pixels(pixels, width, height, color).map_err(|e| call.error(format!("{rel}: {e}")))
}

/// Writes `bytes` to `rel` below the output folder; returns the path written, as shown.
pub(super) fn write_out(call: &Call<'_>, rel: &str, bytes: &[u8]) -> mlua::Result<String> {
    let context = ScriptContext::of(call.lua);
    let out = context.out.as_ref().ok_or_else(|| {
        call.error("no output folder: the host did not allow this script to write files")
    })?;
    let path = out
        .write_path(rel)
        .map_err(|e| call.error(format!("path: {e}")))?;
    // Replaced in one step: a failed write leaves the earlier file, and a hard link placed in
    // the output folder is replaced instead of written through.
    penumbra_core::files::write_atomic(&path, bytes)
        .map_err(|e| call.error(format!("{rel}: {e}")))?;
    Ok(out.show(&path).display().to_string())
}

/// The canonical path of the existing file `rel` below the script root.
pub(super) fn root_path(call: &Call<'_>, rel: &str) -> mlua::Result<std::path::PathBuf> {
    let context = ScriptContext::of(call.lua);
    let root = context
        .root
        .as_ref()
        .ok_or_else(|| call.error("this Lua state has no script root, so no file access"))?;
    root.read_path(rel)
        .map_err(|e| call.error(format!("path: {e}")))
}

/// Reads `rel` below the script root, refusing files over `max_bytes`.
pub(super) fn read_root(call: &Call<'_>, rel: &str, max_bytes: u64) -> mlua::Result<Vec<u8>> {
    let path = root_path(call, rel)?;
    read_jailed(call, rel, &path, max_bytes)
}

/// The largest PNG file a script reads.
pub(super) const MAX_PNG_BYTES: u64 = 256 << 20;

/// Reads the resolved file `path` (named `rel` by the script) as the sandbox allows: a plain
/// file with one link (a FIFO or device would block or never end; another name of a hard link
/// may lie outside the root), at most `max_bytes` and never more than the memory budget has
/// left (the bytes are held while the call that reads them works on them).
pub(super) fn read_jailed(
    call: &Call<'_>,
    rel: &str,
    path: &std::path::Path,
    max_bytes: u64,
) -> mlua::Result<Vec<u8>> {
    let context = ScriptContext::of(call.lua);
    context.note_read(path);
    let left = context.textures.left(call.lua) as u64;
    let limits = penumbra_core::files::ReadLimits::sandboxed(max_bytes.min(left));
    penumbra_core::files::read(path, &limits).map_err(|e| call.error(format!("{rel}: {e}")))
}
