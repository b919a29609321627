//! The `penumbra` module table, one file per part of the API, and the argument handling they
//! share: every function reads its arguments through a [`Call`], so a wrong argument gives one
//! line naming the function, the argument and what was expected, located at the calling line.
//!
//! Adding a part of the API (phase 2: `scene`, `findImage`) means adding a file here and one
//! `register` line in [`module`].

use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};

use mlua::{
    AnyUserData, FromLua, Function, IntoLuaMulti, Lua, MultiValue, Table, UserData,
    UserDataMethods, UserDataRef, Value,
};

use crate::error::{ApiError, ScriptErrorKind};
use crate::host::Host;

mod png;
mod profile;
mod sampler;
mod sampling;
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
    crate::sandbox::read_only(lua, table)
}

/// The first Lua line on the stack (the script line that called into Rust, or the line an
/// interrupt stopped at).
pub(crate) fn caller_location(lua: &Lua) -> Option<(String, u32)> {
    for level in 0..32 {
        let found = lua.inspect_stack(level, |debug| {
            let line = debug.current_line()?;
            let source = debug.source();
            if source.source.as_deref() == Some(crate::sandbox::SANDBOX_CHUNK) {
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

/// The chunk name (`@scripts/a.luau`) of the first Lua function on the stack.
pub(crate) fn caller_chunk(lua: &Lua) -> Option<String> {
    for level in 0..32 {
        let found = lua.inspect_stack(level, |debug| {
            debug.current_line()?;
            let source = debug.source().source?.into_owned();
            (source != crate::sandbox::SANDBOX_CHUNK).then_some(source)
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
    pub fn expected(&self, what: &str, expected: &str, got: &Value) -> mlua::Error {
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

    /// A number.
    pub fn number_of(&self, what: &str, v: &Value) -> mlua::Result<f64> {
        match v {
            Value::Integer(i) => Ok(*i as f64),
            Value::Number(n) => Ok(*n),
            other => Err(self.expected(what, "a number", other)),
        }
    }

    /// A whole number in `0..=u32::MAX`.
    pub fn index_of(&self, what: &str, v: &Value) -> mlua::Result<u32> {
        let n = self.number_of(what, v)?;
        if n.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&n) {
            return Err(self.error(format!("{what} = {n}: expected a whole number >= 0")));
        }
        Ok(n as u32)
    }

    /// A string (valid UTF-8).
    pub fn string_of(&self, what: &str, v: &Value) -> mlua::Result<String> {
        match v {
            Value::String(s) => s
                .to_str()
                .map(|s| s.to_owned())
                .map_err(|_| self.error(format!("{what}: the string is not valid UTF-8"))),
            other => Err(self.expected(what, "a string", other)),
        }
    }

    /// A table.
    pub fn table_of(&self, what: &str, v: &Value) -> mlua::Result<Table> {
        match v {
            Value::Table(t) => Ok(t.clone()),
            other => Err(self.expected(what, "a table", other)),
        }
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
    } else {
        "a userdata"
    }
}

/// Runs an API function body; a Rust panic becomes a Lua error instead of crossing into Lua.
fn guarded<R>(call: &Call<'_>, body: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(call.error(format!("internal error (please report it): {what}")))
    })
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
            let this: UserDataRef<T> = match &this {
                Value::UserData(ud) if ud.is::<T>() => UserDataRef::from_lua(this.clone(), lua)?,
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
