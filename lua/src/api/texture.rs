//! `penumbra.texture(desc)` and the `Texture` userdata: texel reads and writes, `fill`, mip
//! generation.
//!
//! Engine textures are immutable and shared. A script's texture keeps either a shared engine
//! texture or, after a write, its own bytes: the first write copies the texels once, further
//! writes go straight into the bytes, and the next sample turns them back into an engine texture
//! without copying.

use std::cell::RefCell;
use std::rc::Rc;
use std::str::FromStr;

use mlua::{
    Function, Lua, MetaMethod, MultiValue, Table, UserData, UserDataFields, UserDataMethods, Value,
};
use penumbra_core::sample::batch::CmpBatch;
use penumbra_core::texture::MipFilter;
use penumbra_core::{Dimension, Format, Sampler, Texture, TextureDesc, TextureError};

use super::names::{self, Members};
use super::{Call, Fields, Four, Indexed, ScriptType, export, method};
use crate::context::{Charge, ScriptContext};

/// The fields of a texture desc table.
const TEXTURE_KEYS: [&str; 9] = [
    "format",
    "width",
    "height",
    "depth",
    "dimension",
    "mipLevels",
    "arraySize",
    "data",
    "mipFilter",
];

/// Texels `fill` writes between two deadline checks.
const FILL_CHECK_EVERY: u64 = 1024;

/// Prepared comparison batches a texture keeps (one per sampler and slice, newest last).
const CACHED_BATCHES: usize = 4;

/// A script's texture.
pub(crate) struct LuaTexture {
    desc: TextureDesc,
    state: RefCell<State>,
    /// `sampleCmpLevelZeroBatch`'s prepared batches on these texels; dropped by any write.
    batches: RefCell<Vec<CachedBatch>>,
    _charge: Charge,
}

/// A prepared batch, the sampler and slice it was built for, and its key image's bytes.
struct CachedBatch {
    sampler: Sampler,
    slice: u32,
    batch: Rc<CmpBatch>,
    _charge: Charge,
}

enum State {
    /// An engine texture, ready to sample.
    Shared(Texture),
    /// The texels being written, in the engine's layout.
    Editing(Vec<u8>),
}

impl LuaTexture {
    /// Wraps an engine texture whose bytes are charged to the budget.
    pub fn new(texture: Texture, charge: Charge) -> Self {
        Self {
            desc: *texture.desc(),
            state: RefCell::new(State::Shared(texture)),
            batches: RefCell::new(Vec::new()),
            _charge: charge,
        }
    }

    /// The prepared `sample_c_lz` batch of `sampler` on view element `slice`, built on first
    /// use and kept until the texels change. `Ok(None)` when its key image does not fit the
    /// budget (the caller samples one by one instead).
    pub fn cmp_batch(
        &self,
        lua: &Lua,
        sampler: &Sampler,
        slice: u32,
    ) -> Result<Option<Rc<CmpBatch>>, String> {
        if let Some(hit) = self
            .batches
            .borrow()
            .iter()
            .find(|b| b.sampler == *sampler && b.slice == slice)
        {
            return Ok(Some(Rc::clone(&hit.batch)));
        }
        let [w, h, _] = self.desc.level_size(0);
        let keys = 2 * (u64::from(w) + 4) * (u64::from(h) + 3) * 4;
        let Ok(charge) =
            ScriptContext::of(lua)
                .textures
                .charge_for(lua, keys, "a comparison batch")
        else {
            return Ok(None);
        };
        let batch = Rc::new(
            sampler
                .cmp_level_zero_batch(&self.texture()?, slice)
                .map_err(|e| e.to_string())?,
        );
        let mut batches = self.batches.borrow_mut();
        if batches.len() >= CACHED_BATCHES {
            batches.remove(0);
        }
        batches.push(CachedBatch {
            sampler: *sampler,
            slice,
            batch: Rc::clone(&batch),
            _charge: charge,
        });
        Ok(Some(batch))
    }

    /// The resource description.
    pub fn desc(&self) -> &TextureDesc {
        &self.desc
    }

    /// The size of mip level `mip` (the argument `what`), which the texture must have.
    pub fn level_size(&self, call: &Call<'_>, what: &str, mip: u32) -> mlua::Result<[u32; 3]> {
        if mip >= self.desc.mip_levels {
            return Err(call.error(format!(
                "{what} = {mip}: the texture has {} mip level(s)",
                self.desc.mip_levels
            )));
        }
        Ok(self.desc.level_size(mip))
    }

    /// The engine texture (sharing storage; no copy unless writes are pending, and then none
    /// either: the written bytes become the texture).
    pub fn texture(&self) -> Result<Texture, String> {
        let mut state = self
            .state
            .try_borrow_mut()
            .map_err(|_| "the texture is busy (used from inside its own fill callback)")?;
        let texture = match &mut *state {
            State::Shared(t) => return Ok(t.clone()),
            State::Editing(bytes) => {
                Texture::new(self.desc, std::mem::take(bytes)).map_err(|e| e.to_string())?
            }
        };
        *state = State::Shared(texture.clone());
        Ok(texture)
    }

    /// Replaces the texels with those of `texture` (same description).
    fn replace(&self, texture: Texture) -> Result<(), String> {
        let mut state = self
            .state
            .try_borrow_mut()
            .map_err(|_| "the texture is busy (used from inside its own fill callback)")?;
        *state = State::Shared(texture);
        self.batches.borrow_mut().clear();
        Ok(())
    }

    /// Byte offset of a texel in the engine's layout (D3D12 subresource order).
    fn texel_offset(&self, mip: u32, slice: u32, [x, y, z]: [u32; 3]) -> usize {
        let d = &self.desc;
        let per_slice: usize = (0..d.mip_levels).map(|m| d.subresource_bytes(m)).sum();
        let before_mip: usize = (0..mip).map(|m| d.subresource_bytes(m)).sum();
        let [w, h, _] = d.level_size(mip);
        slice as usize * per_slice
            + before_mip
            + ((z as usize * h as usize + y as usize) * w as usize + x as usize)
                * d.format.bytes_per_texel()
    }

    /// Reads a checked texel.
    fn load(&self, at: Texel) -> Result<[f32; 4], String> {
        let state = self
            .state
            .try_borrow()
            .map_err(|_| "the texture is busy".to_string())?;
        match &*state {
            State::Shared(t) => t
                .try_load(at.mip, at.slice, at.xyz)
                .map_err(|e| e.to_string()),
            State::Editing(bytes) => {
                let start = self.texel_offset(at.mip, at.slice, at.xyz);
                let end = start + self.desc.format.bytes_per_texel();
                Ok(self.desc.format.load(&bytes[start..end]))
            }
        }
    }

    /// Writes a checked texel (R3 rounding for UNORM, nearest for f16).
    fn store(&self, at: Texel, value: [f32; 4]) -> Result<(), String> {
        let mut state = self
            .state
            .try_borrow_mut()
            .map_err(|_| "the texture is busy".to_string())?;
        if let State::Shared(t) = &*state {
            let bytes = t.bytes().to_vec();
            *state = State::Editing(bytes);
            self.batches.borrow_mut().clear();
        }
        if let State::Editing(bytes) = &mut *state {
            let start = self.texel_offset(at.mip, at.slice, at.xyz);
            let end = start + self.desc.format.bytes_per_texel();
            self.desc.format.store(value, &mut bytes[start..end]);
        }
        Ok(())
    }
}

/// A texel address checked against the texture.
#[derive(Clone, Copy)]
struct Texel {
    mip: u32,
    slice: u32,
    xyz: [u32; 3],
}

/// Reads `x, y [, mip [, slice]]` from the arguments at positions `at`; `slice` is the depth
/// `z` of a 3D texture.
fn texel_arg(call: &Call<'_>, tex: &LuaTexture, at: [usize; 4]) -> mlua::Result<Texel> {
    let d = tex.desc();
    let x = call.index(at[0], "x")?;
    let y = call.index(at[1], "y")?;
    let mip = call.get::<Option<u32>>(at[2], "mip")?.unwrap_or(0);
    let slice = call.get::<Option<u32>>(at[3], "slice")?.unwrap_or(0);
    if mip >= d.mip_levels {
        return Err(call.error(format!(
            "mip = {mip}: the texture has {} mip level(s), 0..{}",
            d.mip_levels,
            d.mip_levels - 1
        )));
    }
    let [w, h, depth] = d.level_size(mip);
    if x >= w {
        return Err(call.error(format!("x = {x} is outside 0..{} (mip {mip})", w - 1)));
    }
    if y >= h {
        return Err(call.error(format!("y = {y} is outside 0..{} (mip {mip})", h - 1)));
    }
    if d.dimension == Dimension::Texture3D {
        if slice >= depth {
            return Err(call.error(format!(
                "slice = {slice}: a 3D texture's slice is its depth z, 0..{} at mip {mip}",
                depth - 1
            )));
        }
        return Ok(Texel {
            mip,
            slice: 0,
            xyz: [x, y, slice],
        });
    }
    if slice >= d.array_size {
        return Err(call.error(format!(
            "slice = {slice}: the texture has {} slice(s), 0..{}",
            d.array_size,
            d.array_size - 1
        )));
    }
    Ok(Texel {
        mip,
        slice,
        xyz: [x, y, 0],
    })
}

/// A texel value: a number `v` is the gray `{v, v, v, 1}`; an array `{r, g, b, a}` may stop
/// early (missing g and b are 0, a missing a is 1).
fn value_of(call: &Call<'_>, what: &str, v: &Value) -> mlua::Result<[f32; 4]> {
    match v {
        Value::Integer(_) | Value::Number(_) => {
            let g = call.number_of(what, v)? as f32;
            Ok([g, g, g, 1.0])
        }
        Value::Table(t) => {
            let len = t.raw_len();
            if !(1..=4).contains(&len) {
                return Err(call.error(format!(
                    "{what}: expected {{r, g, b, a}} (1 to 4 numbers), got a table of {len}"
                )));
            }
            let mut rgba = [0.0, 0.0, 0.0, 1.0];
            for (k, c) in rgba.iter_mut().take(len).enumerate() {
                *c = call.number_of(what, &t.raw_get::<Value>(k + 1)?)? as f32;
            }
            Ok(rgba)
        }
        #[cfg(feature = "luau")]
        Value::Vector(vec) => Ok([vec.x(), vec.y(), vec.z(), 1.0]),
        other => Err(call.expected(what, "a number or {r, g, b, a}", other)),
    }
}

/// What a `fill` callback returned: one number (gray), 2–4 numbers (r, g, b, a), or a table.
fn fill_value(call: &Call<'_>, out: &MultiValue) -> mlua::Result<[f32; 4]> {
    let numbers = out
        .iter()
        .take_while(|v| matches!(v, Value::Integer(_) | Value::Number(_)))
        .count();
    if numbers >= 2 {
        let mut rgba = [0.0, 0.0, 0.0, 1.0];
        for (c, v) in rgba.iter_mut().zip(out.iter().take(4)) {
            *c = call.number_of("the callback's result", v)? as f32;
        }
        return Ok(rgba);
    }
    value_of(
        call,
        "the callback's result",
        out.front().unwrap_or(&Value::Nil),
    )
}

/// `"average"`, `"min"` or `"max"`.
pub(super) fn mip_filter(call: &Call<'_>, what: &str, v: &Value) -> mlua::Result<MipFilter> {
    match v {
        Value::Nil => Ok(MipFilter::Average),
        _ => match call.string_of(what, v)?.as_str() {
            "average" => Ok(MipFilter::Average),
            "min" => Ok(MipFilter::Min),
            "max" => Ok(MipFilter::Max),
            other => Err(call.error(format!(
                "{what}: {other:?} is not one of \"average\", \"min\", \"max\""
            ))),
        },
    }
}

/// A texture error in the script's words (`desc.mipLevels = 4: ...`).
pub(super) fn texture_error(e: &TextureError) -> String {
    match e {
        TextureError::InvalidDesc {
            field,
            value,
            reason,
        } => {
            let field = match *field {
                "mip_levels" => "mipLevels",
                "array_size" => "arraySize",
                other => other,
            };
            format!("desc.{field} = {value}: {reason}")
        }
        other => other.to_string(),
    }
}

/// Charges `desc`'s bytes to the budget and builds the texture with `make`.
pub(super) fn new_texture(
    call: &Call<'_>,
    desc: TextureDesc,
    make: impl FnOnce() -> Result<Texture, TextureError>,
) -> mlua::Result<LuaTexture> {
    desc.validate().map_err(|e| call.error(texture_error(&e)))?;
    let charge = ScriptContext::of(call.lua)
        .textures
        .charge(call.lua, desc.total_bytes())
        .map_err(|e| call.error(e))?;
    let texture = make().map_err(|e| call.error(texture_error(&e)))?;
    Ok(LuaTexture::new(texture, charge))
}

/// `penumbra.texture(desc)`.
fn create(call: &Call<'_>) -> mlua::Result<LuaTexture> {
    penumbra_core::zone!("penumbra_lua::texture");
    let t = call.table_of("desc", call.arg(0))?;
    let fields = Fields::check_as(call, "desc", Some(t), &TEXTURE_KEYS, "a texture desc has")?;
    let field = |name: &str| fields.get(name);
    let format_name = match field("format")? {
        Value::Nil => {
            return Err(call.error(
                "desc.format is missing: e.g. \"R32_FLOAT\", \"D16_UNORM\", \"R8G8B8A8_UNORM\"",
            ));
        }
        v => call.string_of("desc.format", &v)?,
    };
    let format =
        Format::from_str(&format_name).map_err(|e| call.error(format!("desc.format: {e}")))?;
    let dimension = match field("dimension")? {
        Value::Nil => Dimension::Texture2D,
        v => Dimension::from_str(&call.string_of("desc.dimension", &v)?)
            .map_err(|e| call.error(format!("desc.dimension: {e}")))?,
    };
    let size = |name: &str, default: u32| -> mlua::Result<u32> {
        match field(name)? {
            Value::Nil => Ok(default),
            v => call.index_of(&format!("desc.{name}"), &v),
        }
    };
    let width = match field("width")? {
        Value::Nil => return Err(call.error("desc.width is missing")),
        v => call.index_of("desc.width", &v)?,
    };
    let desc = TextureDesc {
        dimension,
        format,
        width,
        height: size("height", if dimension.is_cube() { width } else { 1 })?,
        depth: size("depth", 1)?,
        array_size: size("arraySize", if dimension.is_cube() { 6 } else { 1 })?,
        mip_levels: size("mipLevels", 1)?,
    };
    let filter = mip_filter(call, "desc.mipFilter", &field("mipFilter")?)?;
    match field("data")? {
        Value::Nil => new_texture(call, desc, || Texture::zeroed(desc)),
        v => {
            let data = call.table_of("desc.data", &v)?;
            desc.validate().map_err(|e| call.error(texture_error(&e)))?;
            let expected = desc.subresource_bytes(0) / format.bytes_per_texel()
                * format.channels()
                * desc.array_size as usize;
            if data.raw_len() != expected {
                return Err(call.error(format!(
                    "desc.data: expected {expected} numbers (mip 0 of {} slice(s), {} per \
                     texel of {format}), got {}",
                    desc.array_size,
                    format.channels(),
                    data.raw_len()
                )));
            }
            let mut values = Vec::with_capacity(data.raw_len());
            for (k, v) in data.sequence_values::<Value>().enumerate() {
                values.push(call.number_of(&Indexed("desc.data", k + 1), &v?)? as f32);
            }
            new_texture(call, desc, || {
                Texture::from_level0_f32(desc, &values, filter)
            })
        }
    }
}

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "texture", create)?;
    Ok(())
}

impl ScriptType for LuaTexture {
    const MEMBERS: &'static Members = &names::TEXTURE_MEMBERS;
}

impl UserData for LuaTexture {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
        fields.add_field_method_get("width", |_, t| Ok(t.desc.width));
        fields.add_field_method_get("height", |_, t| Ok(t.desc.height));
        fields.add_field_method_get("depth", |_, t| Ok(t.desc.depth));
        fields.add_field_method_get("format", |_, t| Ok(t.desc.format.name()));
        fields.add_field_method_get("dimension", |_, t| Ok(t.desc.dimension.name()));
        fields.add_field_method_get("mipLevels", |_, t| Ok(t.desc.mip_levels));
        fields.add_field_method_get("arraySize", |_, t| Ok(t.desc.array_size));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, t, ()| {
            let d = &t.desc;
            Ok(format!(
                "Texture({} {} {}x{}x{}, {} mip(s), {} slice(s))",
                d.format, d.dimension, d.width, d.height, d.depth, d.mip_levels, d.array_size
            ))
        });
        method(methods, "get", |call, this: &Self| {
            let at = texel_arg(call, this, [0, 1, 2, 3])?;
            this.load(at).map(Four).map_err(|e| call.error(e))
        });
        method(methods, "set", |call, this: &Self| {
            let at = texel_arg(call, this, [0, 1, 3, 4])?;
            let value = value_of(call, "value", call.arg(2))?;
            unorm_hint(call, this.desc.format, value);
            this.store(at, value).map_err(|e| call.error(e))
        });
        method(methods, "size", |call, this: &Self| {
            let mip = call.get::<Option<u32>>(0, "mip")?.unwrap_or(0);
            let [w, h, d] = this.level_size(call, "mip", mip)?;
            Ok((w, h, d))
        });
        method(methods, "fill", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::fill");
            let f = call.get::<Function>(0, "fn")?;
            let mip = call.get::<Option<u32>>(1, "mip")?.unwrap_or(0);
            let d = this.desc;
            let [w, h, depth] = this.level_size(call, "mip", mip)?;
            let (layers, is_3d) = if d.dimension == Dimension::Texture3D {
                (depth, true)
            } else {
                (d.array_size, false)
            };
            let context = ScriptContext::of(call.lua);
            let mut count = 0u64;
            for layer in 0..layers {
                for y in 0..h {
                    for x in 0..w {
                        count += 1;
                        if count.is_multiple_of(FILL_CHECK_EVERY) {
                            context.check_deadline(call.lua)?;
                        }
                        let out: MultiValue = f.call((x, y, layer))?;
                        let value = fill_value(call, &out)?;
                        unorm_hint(call, d.format, value);
                        let at = if is_3d {
                            Texel {
                                mip,
                                slice: 0,
                                xyz: [x, y, layer],
                            }
                        } else {
                            Texel {
                                mip,
                                slice: layer,
                                xyz: [x, y, 0],
                            }
                        };
                        this.store(at, value).map_err(|e| call.error(e))?;
                    }
                }
            }
            Ok(())
        });
        method(methods, "generateMips", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::generateMips");
            let filter = mip_filter(call, "filter", call.arg(0))?;
            let texture = this.texture().map_err(|e| call.error(e))?;
            // The copy the mips are made in is held next to the texture until it replaces
            // it.
            let _copy = ScriptContext::of(call.lua)
                .textures
                .charge_for(call.lua, this.desc.total_bytes(), "generating mips")
                .map_err(|e| call.error(e))?;
            let mipped = texture.generate_mips(filter).map_err(|e| call.error(e))?;
            this.replace(mipped).map_err(|e| call.error(e))
        });
        super::png::add_save(methods);
    }
}

/// Warns when a value above 1 goes into a UNORM texture (0–255 colours: `{255, 128, 0}` is
/// stored as `{1, 1, 0}`).
fn unorm_hint(call: &Call<'_>, format: Format, value: [f32; 4]) {
    if format.unorm_max().is_some()
        && let Some(v) = value.iter().find(|v| **v > 1.0 && v.is_finite())
    {
        ScriptContext::of(call.lua).warn(
            call.lua,
            "unorm above 1",
            &format!(
                "{}: a {} texel holds 0..1, so {v} is stored as 1; divide 0-255 colours by 255",
                call.name,
                format.name()
            ),
        );
    }
}
