//! The sampling methods of a `Sampler`, one per engine operation, plus batch forms.
//!
//! Coordinates, derivatives and offsets are Lua arrays (`{u, v}`) or, in Luau, vectors
//! (`vector.create(u, v, 0)`); a single number serves 1D. Their length follows the texture's
//! dimension. A nil texture is an unbound slot and samples 0 (R107).

use std::fmt::Display;

use mlua::{AnyUserData, IntoLuaMulti, Table, UserDataMethods, Value};
use penumbra_core::sample::quad::Quad;
use penumbra_core::{Coord, Dimension, Offset, Sampler, Texture};

use super::sampler::LuaSampler;
use super::{Call, Four, FromArg, Indexed, LuaTexture, method};
use crate::context::ScriptContext;
use crate::error::describe;

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

/// The texture argument every sampling method starts with: a `Texture`, or nil for an unbound
/// slot. Read once per call; the coordinates, derivatives and offsets after it are read against
/// its dimension (any length of 1 to 4 for an unbound slot).
struct Bound {
    tex: Option<Texture>,
    /// The script's texture, for the batches it keeps.
    ud: Option<AnyUserData>,
}

impl FromArg for Bound {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        match v {
            Value::Nil => Ok(Bound {
                tex: None,
                ud: None,
            }),
            Value::UserData(ud) if ud.is::<LuaTexture>() => {
                let tex = ud.borrow::<LuaTexture>()?;
                Ok(Bound {
                    tex: Some(tex.texture().map_err(|e| call.error(e))?),
                    ud: Some(ud.clone()),
                })
            }
            other => Err(call.expected(what, "a Texture (or nil for an unbound slot)", other)),
        }
    }
}

impl Bound {
    fn tex(&self) -> Option<&Texture> {
        self.tex.as_ref()
    }

    /// A sample coordinate.
    fn coord(
        &self,
        call: &Call<'_>,
        what: &(impl Display + ?Sized),
        v: &Value,
    ) -> mlua::Result<Coord> {
        let dim = self.tex.as_ref().map(Texture::dimension);
        let c = components(
            call,
            what,
            v,
            dim.map(Dimension::coord_len),
            dim.map_or("{u, v, ...}", coord_shape),
        )?;
        Ok(Coord(c))
    }

    /// The derivatives `ddx` and `ddy` at arguments `i` and `i + 1`.
    fn derivatives(&self, call: &Call<'_>, i: usize) -> mlua::Result<([f32; 3], [f32; 3])> {
        let n = self.tex.as_ref().map(|t| t.dimension().gradient_axes());
        let shape = axes_shape(n.unwrap_or(3));
        let ddx = components(call, "ddx", call.arg(i), n, shape)?;
        let ddy = components(call, "ddy", call.arg(i + 1), n, shape)?;
        Ok(([ddx[0], ddx[1], ddx[2]], [ddy[0], ddy[1], ddy[2]]))
    }

    /// The optional immediate texel offset at argument `i`: whole numbers, one per filtered
    /// axis.
    fn offset(&self, call: &Call<'_>, i: usize) -> mlua::Result<Offset> {
        let v = call.arg(i);
        if let Value::Nil = v {
            return Ok(Offset::default());
        }
        let n = self.tex.as_ref().map(|t| t.dimension().axes());
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

    /// The coordinates of a batch at argument `i`: an array of coordinates, or a flat array of
    /// numbers with the texture's coordinate length as stride.
    fn coords(&self, call: &Call<'_>, i: usize) -> mlua::Result<Vec<Coord>> {
        let t = call.table_of("coords", call.arg(i))?;
        let values = call.sequence(&t)?;
        let len = values.len();
        if len == 0 {
            return Ok(Vec::new());
        }
        if matches!(values[0], Value::Integer(_) | Value::Number(_)) {
            let Some(tex) = &self.tex else {
                return Err(call.error(
                    "coords: a flat array of numbers needs a bound texture (its dimension gives \
                     the stride); pass an array of coordinates instead",
                ));
            };
            let stride = tex.dimension().coord_len();
            if !len.is_multiple_of(stride) {
                return Err(call.error(format!(
                    "coords: a flat array for a {} texture holds {stride} numbers per \
                     coordinate, but has {len}",
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
            out.push(self.coord(call, &Indexed("coords", k + 1), v)?);
        }
        Ok(out)
    }
}

/// A gather's component: a whole number 0..=3 or a channel letter (nil: red).
struct Component(u32);

impl FromArg for Component {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        match v {
            Value::Nil => Ok(Component(0)),
            Value::String(_) => match call.string_of(what, v)?.as_str() {
                "r" | "R" => Ok(Component(0)),
                "g" | "G" => Ok(Component(1)),
                "b" | "B" => Ok(Component(2)),
                "a" | "A" => Ok(Component(3)),
                other => Err(call.error(format!(
                    "{what}: {other:?} is not one of \"r\", \"g\", \"b\", \"a\" (or 0..3)"
                ))),
            },
            _ => call.index_of(what, v).map(Component),
        }
    }
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

/// Adds a sampling method: `body` gets the sampler and the texture argument (0), read once.
fn sampling<R, F>(methods: &mut impl UserDataMethods<LuaSampler>, name: &'static str, body: F)
where
    R: IntoLuaMulti,
    F: Fn(&Call<'_>, &Sampler, &Bound) -> mlua::Result<R> + 'static,
{
    method(methods, name, move |call, this: &LuaSampler| {
        let bound = call.get(0, "tex")?;
        body(call, &this.0, &bound)
    });
}

/// Adds a sampling method of one lookup: `body` also gets the coordinate (argument 1), and
/// returns the engine's answer, whose error becomes the call's.
fn lookup<R, E, F>(methods: &mut impl UserDataMethods<LuaSampler>, name: &'static str, body: F)
where
    R: IntoLuaMulti,
    E: Display,
    F: Fn(&Call<'_>, &Sampler, &Bound, Coord) -> mlua::Result<Result<R, E>> + 'static,
{
    sampling(methods, name, move |call, sampler, bound| {
        let c = bound.coord(call, "coord", call.arg(1))?;
        body(call, sampler, bound, c)?.map_err(|e| call.error(e))
    });
}

pub(super) fn add_methods<M: UserDataMethods<LuaSampler>>(methods: &mut M) {
    lookup(methods, "sampleLevel", |call, s, b, c| {
        let (lod, o) = (call.get(2, "lod")?, b.offset(call, 3)?);
        Ok(s.sample_level(b.tex(), c, lod, o).map(Four))
    });
    lookup(methods, "sampleGrad", |call, s, b, c| {
        let ((ddx, ddy), o) = (b.derivatives(call, 2)?, b.offset(call, 4)?);
        Ok(s.sample_grad(b.tex(), c, ddx, ddy, o).map(Four))
    });
    lookup(methods, "sampleBias", |call, s, b, c| {
        let (ddx, ddy) = b.derivatives(call, 2)?;
        let bias = call.get(4, "bias")?;
        let o = b.offset(call, 5)?;
        Ok(s.sample_bias(b.tex(), c, ddx, ddy, bias, o).map(Four))
    });
    sampling(methods, "sample", |call, s, b| {
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
            *q = b.coord(call, &Indexed("quad", k + 1), &v)?;
        }
        let bias = call.get::<Option<f32>>(2, "bias")?.unwrap_or(0.0);
        let o = b.offset(call, 3)?;
        let pixels = s
            .sample_quad(b.tex(), &quad, bias, o)
            .map_err(|e| call.error(e))?;
        let out = call.lua.create_table_with_capacity(4, 0)?;
        for rgba in pixels {
            out.raw_push(rgba_table(call, rgba)?)?;
        }
        Ok(out)
    });
    lookup(methods, "sampleCmp", |call, s, b, c| {
        let reference = call.get(2, "ref")?;
        let (ddx, ddy) = b.derivatives(call, 3)?;
        let o = b.offset(call, 5)?;
        Ok(s.sample_cmp_grad(b.tex(), c, reference, ddx, ddy, o))
    });
    lookup(methods, "sampleCmpLevelZero", |call, s, b, c| {
        let reference = call.get(2, "ref")?;
        Ok(s.sample_cmp_level_zero(b.tex(), c, reference, b.offset(call, 3)?))
    });
    lookup(methods, "sampleCmpLevel", |call, s, b, c| {
        let (reference, lod) = (call.get(2, "ref")?, call.get(3, "lod")?);
        Ok(s.sample_cmp_level(b.tex(), c, reference, lod, b.offset(call, 4)?))
    });
    lookup(methods, "gather", |call, s, b, c| {
        let Component(comp) = call.get(2, "component")?;
        Ok(s.gather(b.tex(), c, comp, b.offset(call, 3)?).map(Four))
    });
    lookup(methods, "gatherCmp", |call, s, b, c| {
        let (reference, o) = (call.get(2, "ref")?, b.offset(call, 3)?);
        Ok(s.gather_cmp(b.tex(), c, reference, o).map(Four))
    });
    lookup(methods, "calculateLod", |call, s, b, c| {
        let (ddx, ddy) = b.derivatives(call, 2)?;
        let lod = s.calculate_lod(b.tex(), c, ddx, ddy);
        Ok(lod.map(|[clamped, unclamped]| (clamped, unclamped)))
    });
    sampling(methods, "sampleLevelBatch", |call, s, b| {
        penumbra_core::zone!("penumbra_lua::sampleLevelBatch");
        let coords = b.coords(call, 1)?;
        let lod = call.get(2, "lod")?;
        let o = b.offset(call, 3)?;
        let context = ScriptContext::of(call.lua);
        let out = call.lua.create_table_with_capacity(coords.len(), 0)?;
        for (k, &c) in coords.iter().enumerate() {
            if k % BATCH_CHECK_EVERY == BATCH_CHECK_EVERY - 1 {
                context.check_deadline(call.lua)?;
            }
            let rgba = s
                .sample_level(b.tex(), c, lod, o)
                .map_err(|e| call.error(format!("coords[{}]: {e}", k + 1)))?;
            out.raw_push(rgba_table(call, rgba)?)?;
        }
        Ok(out)
    });
    sampling(methods, "sampleCmpLevelZeroBatch", |call, s, b| {
        penumbra_core::zone!("penumbra_lua::sampleCmpLevelZeroBatch");
        let coords = b.coords(call, 1)?;
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
                    refs.push(call.read(&Indexed("refs", k + 1), v)?);
                }
                refs
            }
            v => vec![call.read("refs", v)?; coords.len()],
        };
        let o = b.offset(call, 3)?;
        let context = ScriptContext::of(call.lua);
        if let (Some(tex), Some(ud)) = (b.tex(), &b.ud)
            && let Some(slice) = batch_slice(tex, &coords, o)
        {
            // The first lookup reports what is wrong with the sampler or texture exactly as
            // the one-by-one path does; the batch then returns the same bits for all.
            s.sample_cmp_level_zero(b.tex(), coords[0], refs[0], o)
                .map_err(|e| call.error(format!("coords[1]: {e}")))?;
            let batch = ud
                .borrow::<LuaTexture>()?
                .cmp_batch(call.lua, s, slice)
                .map_err(|e| call.error(e))?;
            if let Some(batch) = batch {
                let uv: Vec<[f32; 2]> = coords.iter().map(|c| [c.0[0], c.0[1]]).collect();
                let mut lit = vec![0.0f32; uv.len()];
                for ((uv, refs), out) in uv
                    .chunks(BATCH_CHECK_EVERY)
                    .zip(refs.chunks(BATCH_CHECK_EVERY))
                    .zip(lit.chunks_mut(BATCH_CHECK_EVERY))
                {
                    context.check_deadline(call.lua)?;
                    batch.run(uv, refs, out).map_err(|e| call.error(e))?;
                }
                return call.lua.create_sequence_from(lit);
            }
        }
        let mut lit = Vec::with_capacity(coords.len());
        for (k, (&c, &r)) in coords.iter().zip(&refs).enumerate() {
            if k % BATCH_CHECK_EVERY == BATCH_CHECK_EVERY - 1 {
                context.check_deadline(call.lua)?;
            }
            lit.push(
                s.sample_cmp_level_zero(b.tex(), c, r, o)
                    .map_err(|e| call.error(format!("coords[{}]: {e}", k + 1)))?,
            );
        }
        call.lua.create_sequence_from(lit)
    });
}
