//! `penumbra.writeCsv(path, rows [, columns])`: results (probe rows, matches, anything) as a CSV
//! file a spreadsheet opens, written below the output folder.
//!
//! Columns are the row fields to write, in order; a dotted name reaches into nested tables
//! (`"lights.sun"`). A column whose value in the first row is a position (a vector, or a table
//! with numeric `x`, `y`, `z`) becomes three columns, `pos.x`, `pos.y`, `pos.z`. Without
//! `columns`, the first row's fields are used in alphabetical order (nested tables other than
//! positions are left out). Numbers that are exactly 32-bit floats — everything penumbra
//! computes — are written in their shortest 32-bit form (`0.3`, not `0.30000001192092896`).

use std::fmt::Write as _;

use mlua::{Lua, Table, Value};

use super::png::write_out;
use super::scene::CHECK_EVERY;
use super::{Call, export};
use crate::context::ScriptContext;
use crate::error::describe;

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "writeCsv", write_csv)?;
    Ok(())
}

/// Whether `v` is a position: a Luau vector or a table with numeric `x`, `y`, `z`.
fn is_position(v: &Value) -> mlua::Result<bool> {
    Ok(match v {
        #[cfg(feature = "luau")]
        Value::Vector(_) => true,
        Value::Table(t) => {
            let mut all = true;
            for key in ["x", "y", "z"] {
                all &= matches!(
                    t.raw_get::<Value>(key)?,
                    Value::Integer(_) | Value::Number(_)
                );
            }
            all
        }
        _ => false,
    })
}

/// The value at a dotted `column` of `row` (nil where a step is missing).
fn lookup(row: &Table, column: &str) -> mlua::Result<Value> {
    let mut at = Value::Table(row.clone());
    for part in column.split('.') {
        at = match &at {
            Value::Table(t) => t.raw_get(part)?,
            #[cfg(feature = "luau")]
            Value::Vector(v) => match part {
                "x" => Value::Number(v.x().into()),
                "y" => Value::Number(v.y().into()),
                "z" => Value::Number(v.z().into()),
                _ => Value::Nil,
            },
            _ => Value::Nil,
        };
    }
    Ok(at)
}

/// One CSV cell.
fn cell(
    call: &Call<'_>,
    what: &dyn Fn() -> String,
    v: &Value,
    out: &mut String,
) -> mlua::Result<()> {
    match v {
        Value::Nil => {}
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Number(n) => out.push_str(&number_text(*n)),
        Value::String(s) => {
            let text = s.to_string_lossy();
            if text.contains([',', '"', '\n', '\r']) {
                out.push('"');
                out.push_str(&text.replace('"', "\"\""));
                out.push('"');
            } else {
                out.push_str(&text);
            }
        }
        other => {
            return Err(call.error(format!(
                "{}: {} is not a CSV cell; name the fields to write as columns (\"lights.sun\")",
                what(),
                describe(other)
            )));
        }
    }
    Ok(())
}

/// `penumbra.writeCsv(path, rows [, columns])` → the path written.
fn write_csv(call: &Call<'_>) -> mlua::Result<String> {
    penumbra_core::zone!("penumbra_lua::writeCsv");
    let rel = call.string(0, "path")?;
    let rows = call.table_of("rows", call.arg(1))?;
    let n = rows.raw_len();
    let row = |k: usize| -> mlua::Result<Table> {
        match rows.raw_get::<Value>(k + 1)? {
            Value::Table(t) => Ok(t),
            other => Err(call.expected(&format!("rows[{}]", k + 1), "a table", &other)),
        }
    };
    let first = if n > 0 { Some(row(0)?) } else { None };
    let named: Vec<String> = match call.arg(2) {
        Value::Nil => {
            let mut keys = Vec::new();
            if let Some(first) = &first {
                for pair in first.pairs::<Value, Value>() {
                    let (key, value) = pair?;
                    if let Value::String(s) = key
                        && (!matches!(value, Value::Table(_)) || is_position(&value)?)
                    {
                        keys.push(s.to_string_lossy());
                    }
                }
            }
            keys.sort();
            keys
        }
        v => {
            let t = call.table_of("columns", v)?;
            let mut keys = Vec::with_capacity(t.raw_len());
            for k in 0..t.raw_len() {
                keys.push(call.string_of(&format!("columns[{}]", k + 1), &t.raw_get(k + 1)?)?);
            }
            keys
        }
    };
    if named.is_empty() {
        return Err(call.error("no columns: pass rows with fields, or name the columns"));
    }
    let mut columns = Vec::with_capacity(named.len());
    for name in named {
        let position = match &first {
            Some(first) => is_position(&lookup(first, &name)?)?,
            None => false,
        };
        if position {
            columns.extend(["x", "y", "z"].map(|axis| format!("{name}.{axis}")));
        } else {
            columns.push(name);
        }
    }
    let mut text = String::new();
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        cell(
            call,
            &String::new,
            &Value::String(call.lua.create_string(c)?),
            &mut text,
        )?;
    }
    text.push('\n');
    let context = ScriptContext::of(call.lua);
    for k in 0..n {
        if k % CHECK_EVERY == CHECK_EVERY - 1 {
            context.check_deadline(call.lua)?;
        }
        let r = row(k)?;
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let what = || format!("rows[{}].{c}", k + 1);
            cell(call, &what, &lookup(&r, c)?, &mut text)?;
        }
        text.push('\n');
    }
    write_out(call, &rel, text.as_bytes())
}

/// A number as `writeCsv` and `print` write it: one that is exactly a 32-bit float (everything
/// penumbra computes) in its shortest 32-bit form (`0.3`, not `0.30000001192092896`), others
/// in their shortest 64-bit form.
pub(crate) fn number_text(n: f64) -> String {
    let single = n as f32;
    if f64::from(single) == n {
        format!("{single}")
    } else {
        format!("{n}")
    }
}
