//! The sampling methods of a `Sampler`, one per engine operation, plus batch forms.
//!
//! Coordinates, derivatives and offsets are Lua arrays (`{u, v}`) or, in Luau, vectors
//! (`vector.create(u, v, 0)`); a single number serves 1D. Their length follows the texture's
//! dimension. A nil texture is an unbound slot and samples 0 (R107).

use std::fmt::Display;

use mlua::{Table, UserDataMethods, Value};
use penumbra_core::sample::quad::Quad;
use penumbra_core::{Coord, Dimension, Offset, Texture};

use super::sampler::LuaSampler;
use super::{Call, Indexed, LuaTexture, describe, method};
use crate::host::Host;

/// Items a batch handles between two deadline checks.
const BATCH_CHECK_EVERY: usize = 4096;

/// The fewest lookups `sampleCmpLevelZeroBatch` prepares a batch for (once per texture,
/// sampler and slice; later calls reuse it).
const MIN_BATCH: usize = 16;

/// The shape of a coordinate for messages.
fn coord_shape(dim: Dimension) -> &'static str {
    match dim {
        Dimension::Texture1D => "{u}",
        Dimension::Texture1DArray => "{u, slice}",
        Dimension::Texture2D => "{u, v}",
        Dimension::Texture2DArray => "{u, v, slice}",
        Dimension::Texture3D => "{u, v, w}",
        Dimension::TextureCube => "{x, y, z}",
        Dimension::TextureCubeArray => "{x, y, z, cube}",
    }
}

/// The shape of a derivative or offset with `n` components.
fn axes_shape(n: usize) -> &'static str {
    match n {
        1 => "{du}",
        2 => "{du, dv}",
        _ => "{du, dv, dw}",
    }
}

/// Up to four numbers from a number (one component), an array or a Luau vector. `want` is the
/// exact count (`None`: any of 1..=4, for an unbound texture).
fn components(
    call: &Call<'_>,
    what: &(impl Display + ?Sized),
    v: &Value,
    want: Option<usize>,
    shape: &str,
) -> mlua::Result<[f32; 4]> {
    let mut out = [0.0; 4];
    let expected = |detail: String| {
        call.error(format!(
            "{what}: expected {shape}{}, got {detail}",
            want.map_or_else(String::new, |n| format!(" ({n} numbers)"))
        ))
    };
    match v {
        Value::Integer(_) | Value::Number(_) if want.is_none_or(|n| n == 1) => {
            out[0] = call.number_of(what, v)? as f32;
        }
        Value::Table(t) => {
            let len = t.raw_len();
            if want.map_or(!(1..=4).contains(&len), |n| n != len) {
                return Err(expected(format!("a table of {len}")));
            }
            for (i, c) in out.iter_mut().take(len).enumerate() {
                *c = call.number_of(&Indexed(what, i + 1), &t.raw_get::<Value>(i + 1)?)? as f32;
            }
        }
        #[cfg(feature = "luau")]
        Value::Vector(vec) if want.is_none_or(|n| n <= 3) => {
            out[..3].copy_from_slice(&[vec.x(), vec.y(), vec.z()]);
        }
        other => return Err(expected(describe(other))),
    }
    Ok(out)
}

/// A sample coordinate for `tex`.
fn coord(
    call: &Call<'_>,
    what: &(impl Display + ?Sized),
    v: &Value,
    tex: Option<&Texture>,
) -> mlua::Result<Coord> {
    let dim = tex.map(Texture::dimension);
    let c = components(
        call,
        what,
        v,
        dim.map(Dimension::coord_len),
        dim.map_or("{u, v, ...}", coord_shape),
    )?;
    Ok(Coord(c))
}

/// A derivative (`ddx`, `ddy`) for `tex`.
fn derivative(
    call: &Call<'_>,
    what: &str,
    v: &Value,
    tex: Option<&Texture>,
) -> mlua::Result<[f32; 3]> {
    let n = tex.map(|t| t.dimension().gradient_axes());
    let c = components(call, what, v, n, axes_shape(n.unwrap_or(3)))?;
    Ok([c[0], c[1], c[2]])
}

/// An optional immediate texel offset: whole numbers, one per filtered axis.
fn offset(call: &Call<'_>, i: usize, tex: Option<&Texture>) -> mlua::Result<Offset> {
    let v = call.arg(i);
    if let Value::Nil = v {
        return Ok(Offset::default());
    }
    let n = tex.map(|t| t.dimension().axes());
    let c = components(call, "offset", v, n, axes_shape(n.unwrap_or(3)))?;
    let mut out = [0; 3];
    for (o, &x) in out.iter_mut().zip(&c) {
        if x.fract() != 0.0 || !(-2_147_483_648.0..=2_147_483_647.0).contains(&x) {
            return Err(call.error(format!("offset: {x} is not a whole number")));
        }
        *o = x as i32;
    }
    Ok(Offset(out))
}

/// The texture argument: a `Texture`, or nil for an unbound slot.
fn texture(call: &Call<'_>, i: usize) -> mlua::Result<Option<Texture>> {
    match call.arg(i) {
        Value::Nil => Ok(None),
        Value::UserData(ud) if ud.is::<LuaTexture>() => {
            let tex = ud.borrow::<LuaTexture>()?;
            tex.texture().map(Some).map_err(|e| call.error(e))
        }
        other => Err(call.expected("tex", "a Texture (or nil for an unbound slot)", other)),
    }
}

/// A whole-number gather component 0..=3 or a channel letter.
fn component(call: &Call<'_>, i: usize) -> mlua::Result<u32> {
    match call.arg(i) {
        Value::Nil => Ok(0),
        Value::String(_) => match call.string(i, "component")?.as_str() {
            "r" | "R" => Ok(0),
            "g" | "G" => Ok(1),
            "b" | "B" => Ok(2),
            "a" | "A" => Ok(3),
            other => Err(call.error(format!(
                "component: {other:?} is not one of \"r\", \"g\", \"b\", \"a\" (or 0..3)"
            ))),
        },
        _ => call.index(i, "component"),
    }
}

/// The coordinates of a batch: an array of coordinates, or a flat array of numbers with the
/// texture's coordinate length as stride.
fn batch_coords(call: &Call<'_>, i: usize, tex: Option<&Texture>) -> mlua::Result<Vec<Coord>> {
    let t = call.table_of("coords", call.arg(i))?;
    let values = call.sequence(&t)?;
    let len = values.len();
    if len == 0 {
        return Ok(Vec::new());
    }
    if matches!(values[0], Value::Integer(_) | Value::Number(_)) {
        let Some(tex) = tex else {
            return Err(call.error(
                "coords: a flat array of numbers needs a bound texture (its dimension gives the \
                 stride); pass an array of coordinates instead",
            ));
        };
        let stride = tex.dimension().coord_len();
        if !len.is_multiple_of(stride) {
            return Err(call.error(format!(
                "coords: a flat array for a {} texture holds {stride} numbers per coordinate, \
                 but has {len}",
                tex.dimension()
            )));
        }
        let mut out = Vec::with_capacity(len / stride);
        let mut c = [0.0; 4];
        for (k, v) in values.iter().enumerate() {
            c[k % stride] = call.number_of(&Indexed("coords", k + 1), v)? as f32;
            if k % stride == stride - 1 {
                out.push(Coord(c));
            }
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(len);
    for (k, v) in values.iter().enumerate() {
        out.push(coord(call, &Indexed("coords", k + 1), v, tex)?);
    }
    Ok(out)
}

/// The view element a batch of `sample_c_lz` lookups can be prepared for: always 0 for a 2D
/// texture, and for a 2D array the slice every coordinate names as a whole number in range
/// (then R43's rounding and clamping leave it as is). `None` where the lookups go one by one:
/// other dimensions, an offset, mixed or fractional slices, or fewer than [`MIN_BATCH`] lookups
/// (the answers are the same bits either way).
fn batch_slice(tex: &Texture, coords: &[Coord], offset: Offset) -> Option<u32> {
    if coords.len() < MIN_BATCH || offset != Offset::default() {
        return None;
    }
    match tex.dimension() {
        Dimension::Texture2D => Some(0),
        Dimension::Texture2DArray => {
            let slice = coords[0].0[2];
            let whole =
                slice.fract() == 0.0 && slice >= 0.0 && slice < tex.desc().array_size as f32;
            (whole && coords.iter().all(|c| c.0[2].to_bits() == slice.to_bits()))
                .then_some(slice as u32)
        }
        _ => None,
    }
}

/// An RGBA result as a Lua array.
fn rgba_table(call: &Call<'_>, rgba: [f32; 4]) -> mlua::Result<Table> {
    call.lua.create_sequence_from(rgba)
}

pub(super) fn add_methods<M: UserDataMethods<LuaSampler>>(methods: &mut M) {
    method(
        methods,
        "sampleLevel",
        "Sampler:sampleLevel",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let lod = call.number(2, "lod")? as f32;
            let o = offset(call, 3, t)?;
            let [r, g, b, a] = this
                .0
                .sample_level(t, c, lod, o)
                .map_err(|e| call.error(e))?;
            Ok((r, g, b, a))
        },
    );
    method(
        methods,
        "sampleGrad",
        "Sampler:sampleGrad",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let ddx = derivative(call, "ddx", call.arg(2), t)?;
            let ddy = derivative(call, "ddy", call.arg(3), t)?;
            let o = offset(call, 4, t)?;
            let [r, g, b, a] = this
                .0
                .sample_grad(t, c, ddx, ddy, o)
                .map_err(|e| call.error(e))?;
            Ok((r, g, b, a))
        },
    );
    method(
        methods,
        "sampleBias",
        "Sampler:sampleBias",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let ddx = derivative(call, "ddx", call.arg(2), t)?;
            let ddy = derivative(call, "ddy", call.arg(3), t)?;
            let bias = call.number(4, "bias")? as f32;
            let o = offset(call, 5, t)?;
            let [r, g, b, a] = this
                .0
                .sample_bias(t, c, ddx, ddy, bias, o)
                .map_err(|e| call.error(e))?;
            Ok((r, g, b, a))
        },
    );
    method(
        methods,
        "sample",
        "Sampler:sample",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let quad_table = call.table_of("quad", call.arg(1))?;
            if quad_table.raw_len() != 4 {
                return Err(call.error(format!(
                    "quad: expected the 4 coordinates of a 2x2 pixel quad (top-left, top-right, \
                     bottom-left, bottom-right), got a table of {}",
                    quad_table.raw_len()
                )));
            }
            let mut quad = Quad::default();
            for (k, q) in quad.0.iter_mut().enumerate() {
                let v: Value = quad_table.raw_get(k + 1)?;
                *q = coord(call, &format!("quad[{}]", k + 1), &v, t)?;
            }
            let bias = call.opt(2, |v| call.number_of("bias", v))?.unwrap_or(0.0) as f32;
            let o = offset(call, 3, t)?;
            let pixels = this
                .0
                .sample_quad(t, &quad, bias, o)
                .map_err(|e| call.error(e))?;
            let out = call.lua.create_table_with_capacity(4, 0)?;
            for rgba in pixels {
                out.raw_push(rgba_table(call, rgba)?)?;
            }
            Ok(out)
        },
    );
    method(
        methods,
        "sampleCmp",
        "Sampler:sampleCmp",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let reference = call.number(2, "ref")? as f32;
            let ddx = derivative(call, "ddx", call.arg(3), t)?;
            let ddy = derivative(call, "ddy", call.arg(4), t)?;
            let o = offset(call, 5, t)?;
            this.0
                .sample_cmp_grad(t, c, reference, ddx, ddy, o)
                .map_err(|e| call.error(e))
        },
    );
    method(
        methods,
        "sampleCmpLevelZero",
        "Sampler:sampleCmpLevelZero",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let reference = call.number(2, "ref")? as f32;
            let o = offset(call, 3, t)?;
            this.0
                .sample_cmp_level_zero(t, c, reference, o)
                .map_err(|e| call.error(e))
        },
    );
    method(
        methods,
        "sampleCmpLevel",
        "Sampler:sampleCmpLevel",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let reference = call.number(2, "ref")? as f32;
            let lod = call.number(3, "lod")? as f32;
            let o = offset(call, 4, t)?;
            this.0
                .sample_cmp_level(t, c, reference, lod, o)
                .map_err(|e| call.error(e))
        },
    );
    method(
        methods,
        "gather",
        "Sampler:gather",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let comp = component(call, 2)?;
            let o = offset(call, 3, t)?;
            let [a, b, c2, d] = this.0.gather(t, c, comp, o).map_err(|e| call.error(e))?;
            Ok((a, b, c2, d))
        },
    );
    method(
        methods,
        "gatherCmp",
        "Sampler:gatherCmp",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let reference = call.number(2, "ref")? as f32;
            let o = offset(call, 3, t)?;
            let [a, b, c2, d] = this
                .0
                .gather_cmp(t, c, reference, o)
                .map_err(|e| call.error(e))?;
            Ok((a, b, c2, d))
        },
    );
    method(
        methods,
        "calculateLod",
        "Sampler:calculateLod",
        |call, this: &LuaSampler| {
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let c = coord(call, "coord", call.arg(1), t)?;
            let ddx = derivative(call, "ddx", call.arg(2), t)?;
            let ddy = derivative(call, "ddy", call.arg(3), t)?;
            let [clamped, unclamped] = this
                .0
                .calculate_lod(t, c, ddx, ddy)
                .map_err(|e| call.error(e))?;
            Ok((clamped, unclamped))
        },
    );
    method(
        methods,
        "sampleLevelBatch",
        "Sampler:sampleLevelBatch",
        |call, this: &LuaSampler| {
            penumbra_core::zone!("penumbra_lua::sampleLevelBatch");
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let coords = batch_coords(call, 1, t)?;
            let lod = call.number(2, "lod")? as f32;
            let o = offset(call, 3, t)?;
            let host = Host::of(call.lua);
            let out = call.lua.create_table_with_capacity(coords.len(), 0)?;
            for (k, &c) in coords.iter().enumerate() {
                if k % BATCH_CHECK_EVERY == BATCH_CHECK_EVERY - 1 {
                    host.check_deadline(call.lua)?;
                }
                let rgba = this
                    .0
                    .sample_level(t, c, lod, o)
                    .map_err(|e| call.error(format!("coords[{}]: {e}", k + 1)))?;
                out.raw_push(rgba_table(call, rgba)?)?;
            }
            Ok(out)
        },
    );
    method(
        methods,
        "sampleCmpLevelZeroBatch",
        "Sampler:sampleCmpLevelZeroBatch",
        |call, this: &LuaSampler| {
            penumbra_core::zone!("penumbra_lua::sampleCmpLevelZeroBatch");
            let tex = texture(call, 0)?;
            let t = tex.as_ref();
            let coords = batch_coords(call, 1, t)?;
            let refs = match call.arg(2) {
                Value::Table(r) => {
                    let values = call.sequence(r)?;
                    if values.len() != coords.len() {
                        return Err(call.error(format!(
                            "refs: expected one reference per coordinate ({}), got {}",
                            coords.len(),
                            values.len()
                        )));
                    }
                    let mut refs = Vec::with_capacity(coords.len());
                    for (k, v) in values.iter().enumerate() {
                        refs.push(call.number_of(&Indexed("refs", k + 1), v)? as f32);
                    }
                    refs
                }
                v => vec![call.number_of("refs", v)? as f32; coords.len()],
            };
            let o = offset(call, 3, t)?;
            let host = Host::of(call.lua);
            if let Some(tex) = t
                && let Some(slice) = batch_slice(tex, &coords, o)
                && let Value::UserData(ud) = call.arg(0)
            {
                // The first lookup reports what is wrong with the sampler or texture exactly as
                // the one-by-one path does; the batch then returns the same bits for all.
                this.0
                    .sample_cmp_level_zero(t, coords[0], refs[0], o)
                    .map_err(|e| call.error(format!("coords[1]: {e}")))?;
                let batch = ud
                    .borrow::<LuaTexture>()?
                    .cmp_batch(call.lua, &this.0, slice)
                    .map_err(|e| call.error(e))?;
                if let Some(batch) = batch {
                    let uv: Vec<[f32; 2]> = coords.iter().map(|c| [c.0[0], c.0[1]]).collect();
                    let mut lit = vec![0.0f32; uv.len()];
                    for ((uv, refs), out) in uv
                        .chunks(BATCH_CHECK_EVERY)
                        .zip(refs.chunks(BATCH_CHECK_EVERY))
                        .zip(lit.chunks_mut(BATCH_CHECK_EVERY))
                    {
                        host.check_deadline(call.lua)?;
                        batch.run(uv, refs, out).map_err(|e| call.error(e))?;
                    }
                    return call.lua.create_sequence_from(lit);
                }
            }
            let mut lit = Vec::with_capacity(coords.len());
            for (k, (&c, &r)) in coords.iter().zip(&refs).enumerate() {
                if k % BATCH_CHECK_EVERY == BATCH_CHECK_EVERY - 1 {
                    host.check_deadline(call.lua)?;
                }
                lit.push(
                    this.0
                        .sample_cmp_level_zero(t, c, r, o)
                        .map_err(|e| call.error(format!("coords[{}]: {e}", k + 1)))?,
                );
            }
            call.lua.create_sequence_from(lit)
        },
    );
}
