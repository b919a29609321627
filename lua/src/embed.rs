//! Embedding penumbra's Lua: helpers for hosts (programs that embed a
//! [`Runtime`](crate::Runtime)) adding their own functions to its Lua state — the Bevy plugin's
//! `world` table, say —, with arguments read and errors raised the way the `penumbra` module
//! does it, so a script sees the same messages everywhere.

use glam::Vec3;
use mlua::{Lua, Value};

use crate::ScriptErrorKind;
use crate::api::{Call, vector_value};
use crate::error::located_error;

/// Reads a point or direction argument — a Luau vector, `{x, y, z}` or `{x = .., y = .., z = ..}`
/// with finite components — or raises `function: what: expected ...` at the calling line.
///
/// # Errors
/// Any other value, or non-finite components.
pub fn vec3(lua: &Lua, function: &'static str, what: &str, value: &Value) -> mlua::Result<Vec3> {
    Call::for_host(lua, function).vec3_of(what, value)
}

/// Reads a number argument (integers included) or raises `function: what: expected a number`.
///
/// # Errors
/// Any other value.
pub fn number(lua: &Lua, function: &'static str, what: &str, value: &Value) -> mlua::Result<f64> {
    Call::for_host(lua, function).number_of(what, value)
}

/// Reads a string argument or raises `function: what: expected a string`.
///
/// # Errors
/// Any other value, or a string that is not UTF-8.
pub fn string(
    lua: &Lua,
    function: &'static str,
    what: &str,
    value: &Value,
) -> mlua::Result<String> {
    Call::for_host(lua, function).string_of(what, value)
}

/// A runtime error `function: message`, located at the script line that made the call.
#[must_use]
pub fn error(lua: &Lua, function: &str, message: impl std::fmt::Display) -> mlua::Error {
    located_error(
        lua,
        ScriptErrorKind::Runtime,
        format!("{function}: {message}"),
    )
}

/// A position as scripts get it back: a vector in Luau, `{x = .., y = .., z = ..}` in Lua 5.4.
///
/// # Errors
/// Only when Lua runs out of memory.
pub fn vector(lua: &Lua, v: Vec3) -> mlua::Result<Value> {
    vector_value(lua, v)
}

/// How a value is named in messages (`nil`, `a number`, `a Texture`, ...).
#[must_use]
pub fn describe(value: &Value) -> String {
    crate::error::describe(value)
}

/// Gives `table` a metatable whose `__index` raises the did-you-mean error the `penumbra` types
/// raise for an unknown name (`World has no field or method 'Probes'; did you mean 'probes'?`,
/// with the script's line), its keys at the time of the call being what it has. Assigning
/// stays allowed.
pub fn strict_table(lua: &Lua, table: &mlua::Table, type_name: &'static str) -> mlua::Result<()> {
    crate::api::names::strict_table(lua, table, type_name)
}

/// The error of an unknown field or method `key` on a host's own userdata type (its public
/// name `type_name`, its members `names`), as the `penumbra` types raise it.
#[must_use]
pub fn unknown_member(lua: &Lua, type_name: &str, key: &str, names: &[&str]) -> mlua::Error {
    crate::api::names::unknown_member_error(lua, type_name, key, names)
}
