//! The sandbox pieces that differ between Luau and Lua 5.4: which standard libraries a state
//! gets, how a table is made read-only and how the deadline interrupts running code.

use std::rc::Rc;

use mlua::{Lua, LuaOptions, StdLib, Table, Value, VmState};

use crate::context::ScriptContext;
#[cfg(feature = "lua54")]
use crate::error::{ScriptErrorKind, located_error};

/// Globals scripts never get: code loading from strings or files (`require` is replaced by the
/// jailed one).
const REMOVED_GLOBALS: [&str; 8] = [
    "load",
    "loadfile",
    "dofile",
    "loadstring",
    "require",
    "io",
    "package",
    "debug",
];

/// The `os` functions scripts keep: clocks and dates, nothing that touches the process or files.
const KEPT_OS: [&str; 4] = ["clock", "time", "date", "difftime"];

/// A new state with the safe standard libraries of this flavour.
pub(crate) fn new_lua() -> mlua::Result<Lua> {
    #[cfg(feature = "luau")]
    let libs = StdLib::ALL_SAFE;
    #[cfg(feature = "lua54")]
    let libs = StdLib::COROUTINE
        | StdLib::TABLE
        | StdLib::STRING
        | StdLib::UTF8
        | StdLib::MATH
        | StdLib::OS;
    Lua::new_with(libs, LuaOptions::new())
}

/// Replaces `print` with one that writes through Rust's standard output and raises an error
/// when the write fails (the C library's `print` drops such errors silently): a script that
/// prints its report to a full disk fails instead of ending "successfully" with nothing written.
pub(crate) fn install_print(lua: &Lua) -> mlua::Result<()> {
    use std::io::Write;
    let print = lua.create_function(|lua, args: mlua::MultiValue| {
        let mut line = Vec::new();
        for (i, v) in args.iter().enumerate() {
            if i > 0 {
                line.push(b'\t');
            }
            match v {
                Value::String(s) => line.extend_from_slice(&s.as_bytes()),
                // Numbers as writeCsv writes them (a lit fraction of 0.3 prints as 0.3).
                Value::Number(n) => {
                    line.extend_from_slice(crate::api::number_text(*n).as_bytes());
                }
                other => line.extend_from_slice(other.to_string()?.as_bytes()),
            }
        }
        line.push(b'\n');
        let mut out = std::io::stdout().lock();
        out.write_all(&line)
            .and_then(|()| out.flush())
            .map_err(|e| {
                let kind = if e.kind() == std::io::ErrorKind::BrokenPipe {
                    crate::error::ScriptErrorKind::OutputClosed
                } else {
                    crate::error::ScriptErrorKind::Output
                };
                crate::error::located_error(
                    lua,
                    kind,
                    format!("print: cannot write to standard output: {e}"),
                )
            })
    })?;
    lua.globals().raw_set("print", print)
}

/// Removes code loading, `io`, `debug` and the process half of `os` from the globals; Lua 5.4's
/// `collectgarbage` keeps only `"count"` (as Luau's sandbox does).
pub(crate) fn prune_globals(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    for name in REMOVED_GLOBALS {
        globals.raw_set(name, Value::Nil)?;
    }
    let os = lua.create_table()?;
    if let Value::Table(old) = globals.raw_get::<Value>("os")? {
        for name in KEPT_OS {
            os.raw_set(name, old.raw_get::<Value>(name)?)?;
        }
    }
    globals.raw_set("os", read_only(lua, os)?)?;
    #[cfg(feature = "lua54")]
    {
        let collect: mlua::Function = globals.raw_get("collectgarbage")?;
        let count_only =
            lua.create_function(move |lua, option: Option<String>| match option.as_deref() {
                Some("count") => collect.call::<Value>("count"),
                other => Err(located_error(
                    lua,
                    ScriptErrorKind::Runtime,
                    format!(
                        "collectgarbage({}) is not available in the sandbox; only \"count\" is",
                        other.map_or_else(|| "nil".to_owned(), |o| format!("{o:?}"))
                    ),
                )),
            })?;
        globals.raw_set("collectgarbage", count_only)?;
    }
    Ok(())
}

/// Makes `table` read-only: Luau freezes it in place; Lua 5.4 gets a proxy whose metatable
/// reads through to it, refuses writes and hides itself.
pub(crate) fn read_only(lua: &Lua, table: Table) -> mlua::Result<Table> {
    #[cfg(feature = "luau")]
    {
        let _ = lua;
        table.set_readonly(true);
        Ok(table)
    }
    #[cfg(feature = "lua54")]
    {
        let proxy = lua.create_table()?;
        let meta = lua.create_table()?;
        meta.raw_set("__index", table.clone())?;
        meta.raw_set(
            "__newindex",
            lua.create_function(|lua, (_, key): (Value, Value)| -> mlua::Result<()> {
                Err(located_error(
                    lua,
                    ScriptErrorKind::Runtime,
                    format!(
                        "attempt to modify a read-only table (key {})",
                        key.to_string().unwrap_or_else(|_| "?".into())
                    ),
                ))
            })?,
        )?;
        let next: mlua::Function = lua.globals().raw_get("next")?;
        meta.raw_set(
            "__pairs",
            lua.create_function(move |_, _: Value| Ok((next.clone(), table.clone(), Value::Nil)))?,
        )?;
        meta.raw_set("__metatable", "read-only")?;
        proxy.set_metatable(Some(meta))?;
        Ok(proxy)
    }
}

/// The chunk name of the sandbox's own Lua code; error locations skip its frames.
pub(crate) const SANDBOX_CHUNK: &str = "=penumbra sandbox";

/// Wraps `pcall`, `xpcall` and `coroutine.resume` so that a script cannot swallow its timeout:
/// once the deadline has passed, every protected call re-raises the timeout when it returns.
/// (Lua 5.4's count hook may keep firing inside the protected function, and every error it
/// raises there would otherwise be caught.)
pub(crate) fn guard_protected_calls(lua: &Lua, context: Rc<ScriptContext>) -> mlua::Result<()> {
    let globals = lua.globals();
    let check = lua.create_function(move |lua, ()| context.check_timed_out(lua))?;
    let coroutine: Table = globals.raw_get("coroutine")?;
    let wrap = lua
        .load(
            "local pcall, xpcall, resume, check = ...\n\
             local function pass(ok, ...) check() return ok, ... end\n\
             return function(...) return pass(pcall(...)) end,\n\
             function(...) return pass(xpcall(...)) end,\n\
             function(...) return pass(resume(...)) end",
        )
        .set_name(SANDBOX_CHUNK)
        .into_function()?;
    let (pcall, xpcall, resume): (mlua::Function, mlua::Function, mlua::Function) = wrap.call((
        globals.raw_get::<Value>("pcall")?,
        globals.raw_get::<Value>("xpcall")?,
        coroutine.raw_get::<Value>("resume")?,
        check,
    ))?;
    globals.raw_set("pcall", pcall)?;
    globals.raw_set("xpcall", xpcall)?;
    coroutine.raw_set("resume", resume)?;
    Ok(())
}

/// Stops running code once the run.s deadline has passed: Luau's interrupt (called at loop
/// iterations and calls), or a Lua 5.4 hook every 1000 instructions. The hook is global, so
/// coroutines created by the script inherit it.
pub(crate) fn install_deadline(lua: &Lua, context: Rc<ScriptContext>) -> mlua::Result<()> {
    #[cfg(feature = "luau")]
    {
        lua.set_interrupt(move |lua| {
            context.tick(lua)?;
            Ok(VmState::Continue)
        });
        Ok(())
    }
    #[cfg(feature = "lua54")]
    {
        lua.set_global_hook(
            mlua::HookTriggers::new().every_nth_instruction(1000),
            move |lua, _debug| {
                context.tick(lua)?;
                Ok(VmState::Continue)
            },
        )
    }
}
