//! `penumbra.writeCsv(path, rows [, columns])`: results (probe rows, matches, anything) as a CSV
//! file a spreadsheet opens, written below the output folder.
//!
//! Columns are the row fields to write, in order; a dotted name reaches into nested tables
//! (`"lights.sun"`). A column whose value in the first row is a position (a vector, or a table
//! with numeric `x`, `y`, `z`) becomes three columns, `pos.x`, `pos.y`, `pos.z`. Without
//! `columns`, the first row's fields are used in alphabetical order (nested tables other than
//! positions are left out). Numbers that are exactly 32-bit floats — everything penumbra
//! computes — are written in their shortest 32-bit form (`0.3`, not `0.30000001192092896`).
//! The `csv` crate writes the records: a field with a comma, a quote or a line break is quoted.

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

/// One CSV cell's text (the `csv` crate quotes it where needed).
fn cell(call: &Call<'_>, what: &dyn Fn() -> String, v: &Value) -> mlua::Result<String> {
    Ok(match v {
        Value::Nil => String::new(),
        Value::Boolean(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => number_text(*n),
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(call.error(format!(
                "{}: {} is not a CSV cell; name the fields to write as columns (\"lights.sun\")",
                what(),
                describe(other)
            )));
        }
    })
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
    // Fields with a comma, a quote or a line break are quoted, quotes doubled (RFC 4180).
    let mut out = csv::WriterBuilder::new()
        .flexible(false)
        .from_writer(Vec::new());
    let record = |out: &mut csv::Writer<Vec<u8>>, cells: &[String]| {
        out.write_record(cells)
            .map_err(|e| call.error(format!("{rel}: {e}")))
    };
    record(&mut out, &columns)?;
    let context = ScriptContext::of(call.lua);
    let mut cells = Vec::with_capacity(columns.len());
    for k in 0..n {
        if k % CHECK_EVERY == CHECK_EVERY - 1 {
            context.check_deadline(call.lua)?;
        }
        let r = row(k)?;
        cells.clear();
        for c in &columns {
            let what = || format!("rows[{}].{c}", k + 1);
            cells.push(cell(call, &what, &lookup(&r, c)?)?);
        }
        record(&mut out, &cells)?;
    }
    let text = out
        .into_inner()
        .map_err(|e| call.error(format!("{rel}: {}", e.error())))?;
    write_out(call, &rel, &text)
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
