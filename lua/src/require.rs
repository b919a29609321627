//! The jailed `require`: modules are files under the script root, named by paths relative to the
//! requiring file's folder (`require("lib/util")`, `require("./lib/util")`), never with `..` or
//! an absolute path. Each module runs once; later `require`s return its cached result.
//!
//! Candidates, in order: the path as given when it ends in `.luau`/`.lua`; otherwise `NAME.luau`,
//! `NAME.lua`, `NAME/init.luau`, `NAME/init.lua`. The first that exists is canonicalized
//! (symbolic links resolved) and must still lie inside the root.

use std::path::{Path, PathBuf};

use mlua::{Function, Lua, Table, Value};

use crate::api::{Call, FunctionName, function};
use crate::context::ScriptContext;
use crate::error::caller_chunk;
use crate::paths;

/// Registry key of the table of loaded modules (canonical path → result).
const LOADED: &str = "penumbra_lua.loaded";

/// The `require` function for `lua`.
pub(crate) fn require_function(lua: &Lua) -> mlua::Result<Function> {
    lua.set_named_registry_value(LOADED, lua.create_table()?)?;
    function(lua, FunctionName::plain("require"), |call| {
        let name = call.string(0, "name")?;
        require(call, &name)
    })
}

fn require(call: &Call<'_>, name: &str) -> mlua::Result<Value> {
    let lua = call.lua;
    let context = ScriptContext::of(lua);
    let root = context
        .root
        .as_ref()
        .ok_or_else(|| call.error("this Lua state has no script root to load modules from"))?;
    let rel = paths::relative(name).map_err(|e| call.error(format!("name: {e}")))?;
    let root_dir = root.canonical().map_err(|e| call.error(e))?;
    let base = caller_chunk(lua)
        .and_then(|chunk| context.chunk_dirs.borrow().get(&chunk).cloned())
        .unwrap_or(root_dir);
    let candidates: Vec<PathBuf> = if name.ends_with(".luau") || name.ends_with(".lua") {
        vec![rel.clone()]
    } else {
        let with_ext = |ext: &str| {
            let mut p = rel.clone().into_os_string();
            p.push(ext);
            PathBuf::from(p)
        };
        vec![
            with_ext(".luau"),
            with_ext(".lua"),
            rel.join("init.luau"),
            rel.join("init.lua"),
        ]
    };
    let Some(found) = candidates
        .iter()
        .map(|c| base.join(c))
        .find(|p| p.is_file())
    else {
        let tried: Vec<String> = candidates
            .iter()
            .map(|c| root.show(&base.join(c)).display().to_string())
            .collect();
        return Err(call.error(format!(
            "module {name:?} not found (tried {})",
            tried.join(", ")
        )));
    };
    let path = found
        .canonicalize()
        .map_err(|e| call.error(format!("{}: {e}", root.show(&found).display())))?;
    root.check_inside(&path, &rel)
        .map_err(|e| call.error(format!("name: {e}")))?;

    // Noted even when cached: the requiring script depends on it all the same.
    context.note_read(&path);
    let key = path.to_string_lossy().into_owned();
    let loaded: Table = lua.named_registry_value(LOADED)?;
    let cached: Value = loaded.raw_get(key.as_str())?;
    if !cached.is_nil() {
        return Ok(cached);
    }
    let shown = root.show(&path).display().to_string();
    if !context.loading.borrow_mut().insert(path.clone()) {
        return Err(call.error(format!(
            "circular require: {shown} is still loading when it is required again"
        )));
    }
    let chunk = format!("@{shown}");
    if let Some(dir) = path.parent() {
        context
            .chunk_dirs
            .borrow_mut()
            .insert(chunk.clone(), dir.to_path_buf());
    }
    let result = load_module(call, &path, &chunk, &shown);
    context.loading.borrow_mut().remove(&path);
    let value = match result? {
        Value::Nil => Value::Boolean(true),
        v => v,
    };
    loaded.raw_set(key, value.clone())?;
    Ok(value)
}

/// Reads, compiles and runs one module file.
fn load_module(call: &Call<'_>, path: &Path, chunk: &str, shown: &str) -> mlua::Result<Value> {
    let source = crate::runtime::read_source(path, ScriptContext::of(call.lua).max_source_bytes())
        .map_err(|e| call.error(format!("{shown}: {e}")))?;
    crate::runtime::compile(call.lua, &source, chunk, false, |e| {
        call.error(format!("{shown}: {e}"))
    })?
    .call::<Value>(())
}

/// Forgets the cached results of the modules at `paths` (canonical), so that the next
/// `require` of each runs the file again.
pub(crate) fn forget(lua: &Lua, paths: &[std::path::PathBuf]) -> mlua::Result<()> {
    let loaded: Table = lua.named_registry_value(LOADED)?;
    for path in paths {
        loaded.raw_set(path.to_string_lossy().as_ref(), Value::Nil)?;
    }
    Ok(())
}
