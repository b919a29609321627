//! Reading a script's arguments: a [`Call`] holds one call's arguments and names the function in
//! its errors, [`FromArg`] reads one shape of value (a number, a point, a texture, a transform,
//! a light's description) the same way wherever it is passed, and [`Fields`] reads the fields of
//! an options or description table.
//!
//! Every reader keeps the one message a script sees for a wrong value:
//! `Sampler:sampleLevel: coord: expected {u, v} (2 numbers), got a table of 3`, at the calling
//! line.

use std::fmt::Display;

use glam::Vec3;
use mlua::{Function, Lua, MultiValue, Table, Value};

use super::FunctionName;
use crate::error::{ScriptErrorKind, describe, located_error};

/// A value read from an argument or a field, as mlua's `FromLua` reads one, but with the
/// call's messages: `what` names the value in them (`coord`, `desc.position`, `coords[3]`),
/// and is only formatted for one.
pub(crate) trait FromArg: Sized {
    /// Reads `v`, or raises `function: what: expected ..., got ...`.
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self>;
}

/// A number (integers included).
impl FromArg for f64 {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        call.number_of(what, v)
    }
}

/// A number, rounded to the `float` the engine takes.
impl FromArg for f32 {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        Ok(call.number_of(what, v)? as f32)
    }
}

/// A whole number in `0..=u32::MAX` (an index, a size, a mip level).
impl FromArg for u32 {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        call.index_of(what, v)
    }
}

/// A string (valid UTF-8).
impl FromArg for String {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        call.string_of(what, v)
    }
}

/// A table.
impl FromArg for Table {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        call.table_of(what, v)
    }
}

/// A function.
impl FromArg for Function {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        match v {
            Value::Function(f) => Ok(f.clone()),
            other => Err(call.expected(what, "a function", other)),
        }
    }
}

/// A point or direction (see [`Call::vec3_of`]).
impl FromArg for Vec3 {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        call.vec3_of(what, v)
    }
}

/// An optional value: `None` when nil or absent.
impl<T: FromArg> FromArg for Option<T> {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        match v {
            Value::Nil => Ok(None),
            v => T::from_arg(call, what, v).map(Some),
        }
    }
}

/// One call of an API function: its name as scripts write it (`penumbra.sampler`,
/// `Texture:get`) and its arguments (without `self` for methods).
pub(crate) struct Call<'l> {
    pub lua: &'l Lua,
    pub name: FunctionName,
    args: Vec<Value>,
}

impl<'l> Call<'l> {
    /// A call context for a host function's own argument checks (no arguments of its own).
    pub fn for_host(lua: &'l Lua, name: &'static str) -> Self {
        Self::new(lua, FunctionName::plain(name), MultiValue::new())
    }

    pub(super) fn new(lua: &'l Lua, name: FunctionName, args: MultiValue) -> Self {
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

    /// Argument `i` read as a `T` (`Option<T>` where it may be nil), named `what` in errors.
    pub fn get<T: FromArg>(&self, i: usize, what: &str) -> mlua::Result<T> {
        T::from_arg(self, what, self.arg(i))
    }

    /// `v` read as a `T`, named `what` in errors.
    pub fn read<T: FromArg>(&self, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<T> {
        T::from_arg(self, what, v)
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
        self.get(i, what)
    }

    /// Argument `i` as a whole number >= 0.
    pub fn index(&self, i: usize, what: &str) -> mlua::Result<u32> {
        self.get(i, what)
    }

    /// Argument `i` as a string.
    pub fn string(&self, i: usize, what: &str) -> mlua::Result<String> {
        self.get(i, what)
    }

    /// Argument `i` as a point or direction (see [`Call::vec3_of`]).
    pub fn vec3(&self, i: usize, what: &str) -> mlua::Result<Vec3> {
        self.get(i, what)
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
    what: String,
    table: Option<Table>,
}

impl<'c, 'l> Fields<'c, 'l> {
    /// Argument `i`, which may be nil (then every field is absent).
    pub fn optional(call: &'c Call<'l>, i: usize, what: &str, keys: &[&str]) -> mlua::Result<Self> {
        Self::check(call, what, call.get(i, what)?, keys)
    }

    /// `v`, which must be a table.
    pub fn of(
        call: &'c Call<'l>,
        what: &(impl Display + ?Sized),
        v: &Value,
        keys: &[&str],
    ) -> mlua::Result<Self> {
        Self::check(call, what, Some(call.table_of(what, v)?), keys)
    }

    /// `table`, whose keys must be among `keys`.
    pub fn check(
        call: &'c Call<'l>,
        what: &(impl Display + ?Sized),
        table: Option<Table>,
        keys: &[&str],
    ) -> mlua::Result<Self> {
        Self::check_as(call, what, table, keys, "expected")
    }

    /// [`Fields::check`], with `listing` before the keys in the message of an unknown one
    /// (`desc: unknown field "wdith"; a texture desc has format, width, ...`).
    pub fn check_as(
        call: &'c Call<'l>,
        what: &(impl Display + ?Sized),
        table: Option<Table>,
        keys: &[&str],
        listing: &str,
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
                        "{what}: unknown field {}; {listing} {}",
                        describe(&key),
                        keys.join(", ")
                    )));
                }
            }
        }
        Ok(Self {
            call,
            what: what.to_string(),
            table,
        })
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

    /// A field read as a `T`, or `None` when absent.
    pub fn field<T: FromArg>(&self, key: &str) -> mlua::Result<Option<T>> {
        self.read(key, |c, what, v| c.read(what, v))
    }

    /// A finite number.
    pub fn number(&self, key: &str) -> mlua::Result<Option<f64>> {
        self.read(key, |c, what, v| c.finite_of(what, v))
    }

    /// A whole number >= 0.
    pub fn index(&self, key: &str) -> mlua::Result<Option<u32>> {
        self.field(key)
    }

    /// A string.
    pub fn string(&self, key: &str) -> mlua::Result<Option<String>> {
        self.field(key)
    }

    /// A point or direction.
    pub fn vec3(&self, key: &str) -> mlua::Result<Option<Vec3>> {
        self.field(key)
    }
}
