//! The `penumbra` module table, one file per part of the API, and what they share: every
//! function reads its arguments through a [`Call`] (see `args`), so a wrong argument gives one
//! line naming the function, the argument and what was expected, located at the calling line;
//! [`export`] and [`method`] register functions and methods under the names scripts call them
//! by, a method's `Type:` prefix coming from its userdata's [`ScriptType`].
//!
//! Adding a part of the API means adding a file here and one `register` line in [`module`].

use std::fmt::{self, Display};
use std::panic::{AssertUnwindSafe, catch_unwind};

use glam::Vec3;
use mlua::{
    AnyUserData, Function, IntoLua, IntoLuaMulti, Lua, MultiValue, Table, UserData, UserDataFields,
    UserDataMethods, Value,
};

use crate::context::ScriptContext;
use crate::error::describe;

mod args;
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

pub(crate) use args::{Call, Fields, FromArg, Indexed};
pub(crate) use texture::LuaTexture;

/// Builds the read-only `penumbra` module table for `lua`.
///
/// A [`Runtime`](crate::Runtime) installs it as the global `penumbra`; a host with its own Lua
/// state can install it too. Without a runtime there is no file access (`loadTexture` and
/// `save` raise errors), no deadline and no texture budget beyond the engine's own limits.
pub fn module(lua: &Lua) -> mlua::Result<Table> {
    ScriptContext::of(lua);
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

/// A userdata type scripts see: its public name and members (types.d.luau's class), which name
/// its methods in messages (`Texture:get`), its `typeof` and its did-you-mean errors.
pub(crate) trait ScriptType: UserData + 'static {
    /// What scripts can read and call on it; `MEMBERS.type_name` is its public name.
    const MEMBERS: &'static names::Members;

    /// Declares the type's name (`typeof(tex)` is `"Texture"`); call it first in `add_fields`.
    fn name_field<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_meta_field(mlua::MetaMethod::Type, Self::MEMBERS.type_name);
    }
}

/// The public name of a `penumbra` userdata (`Texture`), or `None` for any other userdata.
pub(crate) fn type_name(ud: &AnyUserData) -> Option<&'static str> {
    fn named<T: ScriptType>(ud: &AnyUserData) -> Option<&'static str> {
        ud.is::<T>().then_some(T::MEMBERS.type_name)
    }
    named::<texture::LuaTexture>(ud)
        .or_else(|| named::<sampler::LuaSampler>(ud))
        .or_else(|| named::<sampler::LuaStaticSamplers>(ud))
        .or_else(|| named::<scene::LuaScene>(ud))
        .or_else(|| named::<scene::LuaLight>(ud))
        .or_else(|| named::<scene::LuaEye>(ud))
        .or_else(|| named::<matching::LuaSadMap>(ud))
}

/// The name of an API function as scripts write it and messages show it: `penumbra.sampler`,
/// `Texture:get`, `require`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FunctionName {
    owner: &'static str,
    separator: &'static str,
    name: &'static str,
}

impl FunctionName {
    /// A global function, or a host's own name (`world.canSee`).
    pub const fn plain(name: &'static str) -> Self {
        Self {
            owner: "",
            separator: "",
            name,
        }
    }

    /// A function of the `penumbra` module: `penumbra.name`.
    pub const fn module(name: &'static str) -> Self {
        Self {
            owner: "penumbra",
            separator: ".",
            name,
        }
    }

    /// A method of `T`: `Type:name`.
    pub fn method<T: ScriptType>(name: &'static str) -> Self {
        Self {
            owner: T::MEMBERS.type_name,
            separator: ":",
            name,
        }
    }
}

impl Display for FunctionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.owner, self.separator, self.name)
    }
}

/// Four results (`r, g, b, a`; a gather's four texels), returned as four values.
pub(crate) struct Four<T>(pub [T; 4]);

impl<T: IntoLua> IntoLuaMulti for Four<T> {
    fn into_lua_multi(self, lua: &Lua) -> mlua::Result<MultiValue> {
        let [a, b, c, d] = self.0;
        (a, b, c, d).into_lua_multi(lua)
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
    let context = ScriptContext::of(call.lua);
    context.check_deadline(call.lua)?;
    let result = penumbra_core::deadline::with_deadline(context.deadline(), || {
        catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(call.error(format!("internal error (please report it): {what}")))
        })
    });
    context.check_deadline(call.lua)?;
    // Charges of objects collected during the call are given back to the Lua heap.
    context.textures.rebalance(call.lua);
    result
}

/// A Lua function named `name` (as scripts see it) running `body` on its arguments.
pub(crate) fn function<R, F>(lua: &Lua, name: FunctionName, body: F) -> mlua::Result<Function>
where
    R: IntoLuaMulti,
    F: Fn(&Call<'_>) -> mlua::Result<R> + 'static,
{
    lua.create_function(move |lua, args: MultiValue| {
        let call = Call::new(lua, name, args);
        guarded(&call, || body(&call))
    })
}

/// Sets `module[name]` to the function `penumbra.name` running `body`.
pub(crate) fn export<R, F>(
    lua: &Lua,
    module: &Table,
    name: &'static str,
    body: F,
) -> mlua::Result<()>
where
    R: IntoLuaMulti,
    F: Fn(&Call<'_>) -> mlua::Result<R> + 'static,
{
    module.raw_set(name, function(lua, FunctionName::module(name), body)?)
}

/// Adds the method `name` to `T`, reported as `Type:name`; `body` gets the borrowed `self` and
/// the other arguments.
pub(crate) fn method<T, M, R, F>(methods: &mut M, name: &'static str, body: F)
where
    T: ScriptType,
    M: UserDataMethods<T>,
    R: IntoLuaMulti,
    F: Fn(&Call<'_>, &T) -> mlua::Result<R> + 'static,
{
    debug_assert!(
        T::MEMBERS.methods.contains(&name),
        "{}:{name} is missing from its members",
        T::MEMBERS.type_name
    );
    let full = FunctionName::method::<T>(name);
    methods.add_function(name, move |lua, mut args: MultiValue| {
        let this = args.pop_front().unwrap_or(Value::Nil);
        let call = Call::new(lua, full, args);
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
