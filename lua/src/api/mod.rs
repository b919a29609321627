//! The `penumbra` module table, one file per part of the API, and the argument handling they
//! share: every function reads its arguments through a [`Call`], so a wrong argument gives one
//! line naming the function, the argument and what was expected, located at the calling line.
//!
//! Adding a part of the API means adding a file here and one `register` line in [`module`].

use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};

use glam::Vec3;
use mlua::{
    AnyUserData, Function, IntoLuaMulti, Lua, MultiValue, Table, UserData, UserDataMethods, Value,
};

use crate::error::{ApiError, ScriptErrorKind};
use crate::host::Host;

mod csv;
mod matching;
pub(crate) mod names;
pub(crate) use csv::number_text;
mod obj;
mod png;
mod profile;
mod sampler;
mod sampling;
mod scene;
mod texture;

pub(crate) use texture::LuaTexture;

/// Builds the read-only `penumbra` module table for `lua`.
///
/// A [`Runtime`](crate::Runtime) installs it as the global `penumbra`; a host with its own Lua
/// state can install it too. Without a runtime there is no file access (`loadTexture` and
/// `save` raise errors), no deadline and no texture budget beyond the engine's own limits.
pub fn module(lua: &Lua) -> mlua::Result<Table> {
    Host::of(lua);
    let table = lua.create_table()?;
    table.raw_set("version", env!("CARGO_PKG_VERSION"))?;
    table.raw_set("flavour", crate::FLAVOUR)?;
    sampler::register(lua, &table)?;
    texture::register(lua, &table)?;
    png::register(lua, &table)?;
    profile::register(lua, &table)?;
    scene::register(lua, &table)?;
    matching::register(lua, &table)?;
    csv::register(lua, &table)?;
    names::strict_module(lua, &table)?;
    crate::sandbox::read_only(lua, table)
}

/// The first Lua line on the stack (the script line that called into Rust, or the line an
/// interrupt stopped at).
pub(crate) fn caller_location(lua: &Lua) -> Option<(String, u32)> {
    for level in 0..32 {
        let found = lua.inspect_stack(level, |debug| {
            let line = debug.current_line()?;
            let source = debug.source();
            if is_internal_chunk(source.source.as_deref()) {
                return None;
            }
            // The full chunk name: `short_src` is cut to 60 bytes by Lua 5.4.
            let file = match source.source.as_deref().and_then(|s| s.strip_prefix('@')) {
                Some(file) => file.to_owned(),
                None => source.short_src?.into_owned(),
            };
            Some((file, u32::try_from(line).unwrap_or(u32::MAX)))
        })?;
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Chunks that are not the script's: the sandbox's own Lua code and mlua's generated
/// `__index`/`__newindex` dispatchers (through which the did-you-mean errors are raised).
fn is_internal_chunk(source: Option<&str>) -> bool {
    source.is_some_and(|s| s == crate::sandbox::SANDBOX_CHUNK || s.starts_with("=__mlua"))
}

/// The chunk name (`@scripts/a.luau`) of the first Lua function on the stack.
pub(crate) fn caller_chunk(lua: &Lua) -> Option<String> {
    for level in 0..32 {
        let found = lua.inspect_stack(level, |debug| {
            debug.current_line()?;
            let source = debug.source().source?.into_owned();
            (!is_internal_chunk(Some(&source))).then_some(source)
        })?;
        if found.is_some() {
            return found;
        }
    }
    None
}

/// An error raised into Lua at the calling script line.
pub(crate) fn located_error(lua: &Lua, kind: ScriptErrorKind, message: String) -> mlua::Error {
    let (file, line) = caller_location(lua).unzip();
    mlua::Error::external(ApiError {
        kind,
        file,
        line,
        message,
    })
}

/// One call of an API function: its name as scripts write it (`penumbra.sampler`,
/// `Texture:get`) and its arguments (without `self` for methods).
pub(crate) struct Call<'l> {
    pub lua: &'l Lua,
    pub name: &'static str,
    args: Vec<Value>,
}

impl<'l> Call<'l> {
    /// A call context for a host function's own argument checks (no arguments of its own).
    pub fn for_host(lua: &'l Lua, name: &'static str) -> Self {
        Self {
            lua,
            name,
            args: Vec::new(),
        }
    }

    fn new(lua: &'l Lua, name: &'static str, args: MultiValue) -> Self {
        Self {
            lua,
            name,
            args: args.into_iter().collect(),
        }
    }

    /// `name: message`, raised at the calling line.
    pub fn error(&self, message: impl Display) -> mlua::Error {
        located_error(
            self.lua,
            ScriptErrorKind::Runtime,
            format!("{}: {message}", self.name),
        )
    }

    /// `what: expected ..., got ...`.
    pub fn expected(
        &self,
        what: &(impl Display + ?Sized),
        expected: &str,
        got: &Value,
    ) -> mlua::Error {
        self.error(format!(
            "{what}: expected {expected}, got {}",
            describe(got)
        ))
    }

    /// Argument `i` (0-based, `self` not counted); nil when absent.
    pub fn arg(&self, i: usize) -> &Value {
        self.args.get(i).unwrap_or(&Value::Nil)
    }

    /// The arguments from `i` on.
    pub fn rest(&self, i: usize) -> MultiValue {
        self.args.iter().skip(i).cloned().collect()
    }

    /// A number (`what` names it in errors, and is only formatted for one).
    pub fn number_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<f64> {
        match v {
            Value::Integer(i) => Ok(*i as f64),
            Value::Number(n) => Ok(*n),
            other => Err(self.expected(what, "a number", other)),
        }
    }

    /// A whole number in `0..=u32::MAX`.
    pub fn index_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<u32> {
        let n = self.number_of(what, v)?;
        if n.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&n) {
            return Err(self.error(format!("{what} = {n}: expected a whole number >= 0")));
        }
        Ok(n as u32)
    }

    /// A string (valid UTF-8).
    pub fn string_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<String> {
        match v {
            Value::String(s) => s
                .to_str()
                .map(|s| s.to_owned())
                .map_err(|_| self.error(format!("{what}: the string is not valid UTF-8"))),
            other => Err(self.expected(what, "a string", other)),
        }
    }

    /// A table.
    pub fn table_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Table> {
        match v {
            Value::Table(t) => Ok(t.clone()),
            other => Err(self.expected(what, "a table", other)),
        }
    }

    /// A finite number.
    pub fn finite_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<f64> {
        let n = self.number_of(what, v)?;
        if !n.is_finite() {
            return Err(self.error(format!("{what} = {n}: expected a finite number")));
        }
        Ok(n)
    }

    /// A point or direction: a Luau vector, `{x, y, z}` or `{x = .., y = .., z = ..}`, with
    /// finite components.
    pub fn vec3_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Vec3> {
        let shape = "a vector, {x, y, z} or {x = .., y = .., z = ..}";
        let xyz: [f64; 3] = match v {
            #[cfg(feature = "luau")]
            Value::Vector(vec) => [vec.x().into(), vec.y().into(), vec.z().into()],
            Value::Table(t) => {
                let len = t.raw_len();
                let mut xyz = [0.0; 3];
                if len == 3 {
                    for (i, c) in xyz.iter_mut().enumerate() {
                        *c = self.number_of(&Indexed(what, i + 1), &t.raw_get(i + 1)?)?;
                    }
                } else if len == 0 {
                    for (c, key) in xyz.iter_mut().zip(["x", "y", "z"]) {
                        *c = match t.raw_get::<Value>(key)? {
                            Value::Nil => {
                                return Err(self.error(format!(
                                    "{what}: expected {shape}, got a table without `{key}`"
                                )));
                            }
                            n => self.number_of(&format!("{what}.{key}"), &n)?,
                        };
                    }
                } else {
                    return Err(
                        self.error(format!("{what}: expected {shape}, got a table of {len}"))
                    );
                }
                xyz
            }
            other => return Err(self.expected(what, shape, other)),
        };
        let p = Vec3::new(xyz[0] as f32, xyz[1] as f32, xyz[2] as f32);
        if !p.is_finite() {
            return Err(self.error(format!(
                "{what} = ({}, {}, {}): expected finite coordinates",
                xyz[0], xyz[1], xyz[2]
            )));
        }
        Ok(p)
    }

    /// Argument `i` as a point or direction (see [`Call::vec3_of`]).
    pub fn vec3(&self, i: usize, what: &str) -> mlua::Result<Vec3> {
        self.vec3_of(what, self.arg(i))
    }

    /// The values of a table's sequence part, `t[1]` up to the first nil, read in one pass
    /// (much cheaper than one `raw_get` each for the thousands of numbers of a batch).
    pub fn sequence(&self, t: &Table) -> mlua::Result<Vec<Value>> {
        let mut values = Vec::with_capacity(t.raw_len());
        t.for_each_value(|v: Value| {
            values.push(v);
            Ok(())
        })?;
        Ok(values)
    }

    /// Points: an array of points, or a flat array of numbers, three per point.
    pub fn points_of(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Vec<Vec3>> {
        let t = self.table_of(what, v)?;
        let values = self.sequence(&t)?;
        let len = values.len();
        if matches!(values.first(), Some(Value::Integer(_) | Value::Number(_))) {
            if !len.is_multiple_of(3) {
                return Err(self.error(format!(
                    "{what}: a flat array holds three numbers per point, but has {len}"
                )));
            }
            let mut out = Vec::with_capacity(len / 3);
            for (k, xyz) in values.chunks_exact(3).enumerate() {
                let mut p = [0.0f32; 3];
                for (i, (c, v)) in p.iter_mut().zip(xyz).enumerate() {
                    *c = self.finite_of(&Indexed(what, 3 * k + i + 1), v)? as f32;
                }
                out.push(Vec3::from(p));
            }
            return Ok(out);
        }
        let mut out = Vec::with_capacity(len);
        for (k, v) in values.iter().enumerate() {
            out.push(self.vec3_of(&Indexed(what, k + 1), v)?);
        }
        Ok(out)
    }

    /// Argument `i` as a number.
    pub fn number(&self, i: usize, what: &str) -> mlua::Result<f64> {
        self.number_of(what, self.arg(i))
    }

    /// Argument `i` as a whole number >= 0.
    pub fn index(&self, i: usize, what: &str) -> mlua::Result<u32> {
        self.index_of(what, self.arg(i))
    }

    /// Argument `i` as a string.
    pub fn string(&self, i: usize, what: &str) -> mlua::Result<String> {
        self.string_of(what, self.arg(i))
    }

    /// Argument `i` as a function.
    pub fn function(&self, i: usize, what: &str) -> mlua::Result<Function> {
        match self.arg(i) {
            Value::Function(f) => Ok(f.clone()),
            other => Err(self.expected(what, "a function", other)),
        }
    }

    /// Argument `i` read by `read`, or `None` when it is nil or absent.
    pub fn opt<T>(
        &self,
        i: usize,
        read: impl FnOnce(&Value) -> mlua::Result<T>,
    ) -> mlua::Result<Option<T>> {
        match self.arg(i) {
            Value::Nil => Ok(None),
            v => read(v).map(Some),
        }
    }
}

/// An element's name, `what[i]`, formatted only when an error needs it (batch loops read
/// thousands of numbers).
pub(crate) struct Indexed<W>(pub W, pub usize);

impl<W: Display> Display for Indexed<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// The fields of an options or description table: unknown keys are refused when it is read,
/// and each getter names the field (`options.width`) in its errors.
pub(crate) struct Fields<'c, 'l> {
    call: &'c Call<'l>,
    what: &'static str,
    table: Option<Table>,
}

impl<'c, 'l> Fields<'c, 'l> {
    /// Argument `i`, which may be nil (then every field is absent).
    pub fn optional(
        call: &'c Call<'l>,
        i: usize,
        what: &'static str,
        keys: &[&str],
    ) -> mlua::Result<Self> {
        let table = call.opt(i, |v| call.table_of(what, v))?;
        Self::check(call, what, table, keys)
    }

    /// Argument `i`, which must be a table.
    pub fn required(
        call: &'c Call<'l>,
        i: usize,
        what: &'static str,
        keys: &[&str],
    ) -> mlua::Result<Self> {
        let table = call.table_of(what, call.arg(i))?;
        Self::check(call, what, Some(table), keys)
    }

    /// `table`, whose keys must be among `keys`.
    pub fn check(
        call: &'c Call<'l>,
        what: &'static str,
        table: Option<Table>,
        keys: &[&str],
    ) -> mlua::Result<Self> {
        if let Some(t) = &table {
            for pair in t.pairs::<Value, Value>() {
                let (key, _) = pair?;
                let known = match &key {
                    Value::String(s) => s.to_str().is_ok_and(|s| keys.contains(&&*s)),
                    _ => false,
                };
                if !known {
                    return Err(call.error(format!(
                        "{what}: unknown field {}; expected {}",
                        describe(&key),
                        keys.join(", ")
                    )));
                }
            }
        }
        Ok(Self { call, what, table })
    }

    /// The field's name in messages: `options.width`.
    pub fn name(&self, key: &str) -> String {
        format!("{}.{key}", self.what)
    }

    /// A field's value (nil when absent).
    pub fn get(&self, key: &str) -> mlua::Result<Value> {
        match &self.table {
            Some(t) => t.raw_get(key),
            None => Ok(Value::Nil),
        }
    }

    /// Whether the field is present.
    pub fn has(&self, key: &str) -> mlua::Result<bool> {
        Ok(!self.get(key)?.is_nil())
    }

    /// A field read by `read`, or `None` when absent.
    pub fn read<T>(
        &self,
        key: &str,
        read: impl FnOnce(&Call<'l>, &str, &Value) -> mlua::Result<T>,
    ) -> mlua::Result<Option<T>> {
        match self.get(key)? {
            Value::Nil => Ok(None),
            v => read(self.call, &self.name(key), &v).map(Some),
        }
    }

    /// A finite number.
    pub fn number(&self, key: &str) -> mlua::Result<Option<f64>> {
        self.read(key, |c, what, v| c.finite_of(what, v))
    }

    /// A whole number >= 0.
    pub fn index(&self, key: &str) -> mlua::Result<Option<u32>> {
        self.read(key, |c, what, v| c.index_of(what, v))
    }

    /// A string.
    pub fn string(&self, key: &str) -> mlua::Result<Option<String>> {
        self.read(key, |c, what, v| c.string_of(what, v))
    }

    /// A point or direction.
    pub fn vec3(&self, key: &str) -> mlua::Result<Option<Vec3>> {
        self.read(key, |c, what, v| c.vec3_of(what, v))
    }
}

/// A position or direction as scripts get it back: a vector in Luau, `{x = .., y = .., z = ..}`
/// in Lua 5.4 (so `p.x` works in both).
pub(crate) fn vector_value(lua: &Lua, v: Vec3) -> mlua::Result<Value> {
    #[cfg(feature = "luau")]
    {
        let _ = lua;
        Ok(Value::Vector(mlua::Vector::new(v.x, v.y, v.z)))
    }
    #[cfg(feature = "lua54")]
    {
        let t = lua.create_table_with_capacity(0, 3)?;
        t.raw_set("x", v.x)?;
        t.raw_set("y", v.y)?;
        t.raw_set("z", v.z)?;
        Ok(Value::Table(t))
    }
}

/// How a value is named in messages: `nil`, `a number`, `a Texture`, ...
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Integer(i) => format!("the number {i}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => match s.to_str() {
            Ok(s) if s.len() <= 40 => format!("the string {:?}", &*s),
            _ => "a string".into(),
        },
        Value::Table(_) => "a table".into(),
        Value::Function(_) => "a function".into(),
        Value::UserData(ud) => userdata_name(ud).into(),
        #[cfg(feature = "luau")]
        Value::Vector(_) => "a vector".into(),
        other => format!("a {}", other.type_name()),
    }
}

fn userdata_name(ud: &AnyUserData) -> &'static str {
    if ud.is::<texture::LuaTexture>() {
        "a Texture"
    } else if ud.is::<sampler::LuaSampler>() {
        "a Sampler"
    } else if ud.is::<sampler::LuaStaticSamplers>() {
        "a StaticSamplers"
    } else if ud.is::<scene::LuaScene>() {
        "a Scene"
    } else if ud.is::<scene::LuaLight>() {
        "a Light"
    } else if ud.is::<scene::LuaEye>() {
        "an Eye"
    } else if ud.is::<matching::LuaSadMap>() {
        "a SadMap"
    } else {
        "a userdata"
    }
}

/// Runs an API function body under the run's deadline; a Rust panic becomes a Lua error
/// instead of crossing into Lua.
///
/// The deadline is checked (with a clock read) before and after every call, so a script making
/// a few slow calls is stopped as surely as one making many fast ones, and the engine's long
/// loops (raster tiles, search rows, mip rows) see it through
/// [`penumbra_core::deadline`]. Whatever a call returns once the deadline has passed — an
/// engine `Interrupted` error, or a finished answer — becomes the timeout error.
fn guarded<R>(call: &Call<'_>, body: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    let host = Host::of(call.lua);
    host.check_deadline(call.lua)?;
    let result = penumbra_core::deadline::with_deadline(host.deadline(), || {
        catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(call.error(format!("internal error (please report it): {what}")))
        })
    });
    host.check_deadline(call.lua)?;
    // Charges of objects collected during the call are given back to the Lua heap.
    host.textures.rebalance(call.lua);
    result
}

/// A Lua function named `name` (as scripts see it) running `body` on its arguments.
pub(crate) fn function<R, F>(lua: &Lua, name: &'static str, body: F) -> mlua::Result<Function>
where
    R: IntoLuaMulti,
    F: Fn(&Call<'_>) -> mlua::Result<R> + 'static,
{
    lua.create_function(move |lua, args: MultiValue| {
        let call = Call::new(lua, name, args);
        guarded(&call, || body(&call))
    })
}

/// Adds method `method` to userdata `T`, reported as `name` (`Texture:get`); `body` gets the
/// borrowed `self` and the other arguments.
pub(crate) fn method<T, M, R, F>(methods: &mut M, method: &'static str, name: &'static str, body: F)
where
    T: UserData + 'static,
    M: UserDataMethods<T>,
    R: IntoLuaMulti,
    F: Fn(&Call<'_>, &T) -> mlua::Result<R> + 'static,
{
    methods.add_function(method, move |lua, mut args: MultiValue| {
        let this = args.pop_front().unwrap_or(Value::Nil);
        let call = Call::new(lua, name, args);
        guarded(&call, || {
            let this = match &this {
                Value::UserData(ud) if ud.is::<T>() => ud.borrow::<T>()?,
                other => {
                    return Err(call.error(format!(
                        "call it as a method, with ':' (self is {})",
                        describe(other)
                    )));
                }
            };
            body(&call, &this)
        })
    });
}
