//! Help for misspelt names: every type's unknown fields and methods, the `penumbra` module's
//! unknown functions and a few unknown globals raise an error with `file:line`, the public type
//! name and a suggestion — a case-insensitive match or a near spelling (edit distance), and
//! hints for names a Roblox scripter reaches for first (`Vector3.new`, `workspace:Raycast`,
//! PascalCase methods).

use mlua::{AnyUserData, Lua, MetaMethod, Table, UserDataMethods, Value};

use crate::api::ScriptType;
use crate::error::{ScriptErrorKind, located_error};

/// The members of one userdata type, as scripts see them.
pub(crate) struct Members {
    /// The public type name (types.d.luau's class).
    pub type_name: &'static str,
    /// Readable fields (all read-only).
    pub fields: &'static [&'static str],
    /// Methods, called with `:`.
    pub methods: &'static [&'static str],
}

/// What scripts can read and call on a `Scene` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static SCENE_MEMBERS: Members = Members {
    type_name: "Scene",
    fields: &["occluders", "triangles"],
    methods: &[
        "addBox",
        "addMesh",
        "loadObj",
        "loadGltf",
        "raycast",
        "raycastBatch",
        "isInside",
        "addLight",
        "addEye",
        "light",
        "eye",
        "bounds",
        "lightAt",
        "lightAtBatch",
        "litFraction",
        "canSee",
        "probePath",
        "tileStats",
        "saveShadowMap",
        "saveDrawnTiles",
        "saveLitMap",
        "saveView",
    ],
};

/// What scripts can read and call on a `Light` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static LIGHT_MEMBERS: Members = Members {
    type_name: "Light",
    fields: &[
        "name",
        "kind",
        "intensity",
        "resolution",
        "kernel",
        "position",
        "direction",
    ],
    methods: &[],
};

/// What scripts can read and call on a `Eye` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static EYE_MEMBERS: Members = Members {
    type_name: "Eye",
    fields: &["name", "position", "direction", "fov", "range"],
    methods: &[],
};

/// What scripts can read and call on a `Texture` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static TEXTURE_MEMBERS: Members = Members {
    type_name: "Texture",
    fields: &[
        "width",
        "height",
        "depth",
        "format",
        "dimension",
        "mipLevels",
        "arraySize",
    ],
    methods: &["get", "set", "fill", "generateMips", "size", "save"],
};

/// What scripts can read and call on a `Sampler` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static SAMPLER_MEMBERS: Members = Members {
    type_name: "Sampler",
    fields: &[],
    methods: &[
        "desc",
        "sampleLevel",
        "sampleGrad",
        "sampleBias",
        "sample",
        "sampleCmp",
        "sampleCmpLevelZero",
        "sampleCmpLevel",
        "gather",
        "gatherCmp",
        "calculateLod",
        "sampleLevelBatch",
        "sampleCmpLevelZeroBatch",
    ],
};

/// What scripts can read and call on a `StaticSamplers` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static STATIC_SAMPLERS_MEMBERS: Members = Members {
    type_name: "StaticSamplers",
    fields: &[],
    methods: &["lookup", "get", "names"],
};

/// What scripts can read and call on a `SadMap` (types.d.luau's class), for the did-you-mean
/// errors of unknown names.
pub(crate) static SAD_MAP_MEMBERS: Members = Members {
    type_name: "SadMap",
    fields: &["width", "height"],
    methods: &["get", "min", "saveHeatmap"],
};

/// Every type's members: `(type, fields, methods)`.
pub(crate) fn member_lists() -> Vec<(
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)> {
    [
        &SCENE_MEMBERS,
        &LIGHT_MEMBERS,
        &EYE_MEMBERS,
        &TEXTURE_MEMBERS,
        &SAMPLER_MEMBERS,
        &STATIC_SAMPLERS_MEMBERS,
        &SAD_MAP_MEMBERS,
    ]
    .iter()
    .map(|m| (m.type_name, m.fields, m.methods))
    .collect()
}

/// Registers `__index` and `__newindex` fallbacks on `T` (mlua calls them only for keys that
/// are neither a field nor a method) that raise the errors described in the module doc.
pub(crate) fn strict<T: ScriptType, M: UserDataMethods<T>>(methods: &mut M) {
    let members = T::MEMBERS;
    methods.add_meta_function(
        MetaMethod::Index,
        move |lua, (_, key): (AnyUserData, Value)| -> mlua::Result<Value> {
            Err(located_error(
                lua,
                ScriptErrorKind::Runtime,
                unknown_member(members, &key_text(&key)),
            ))
        },
    );
    methods.add_meta_function(
        MetaMethod::NewIndex,
        move |lua, (_, key, _): (AnyUserData, Value, Value)| -> mlua::Result<()> {
            let key = key_text(&key);
            let message = if members.fields.contains(&key.as_str()) {
                format!(
                    "{}.{key} is read-only: {}",
                    members.type_name,
                    read_only_hint(members.type_name)
                )
            } else if members.methods.contains(&key.as_str()) {
                format!(
                    "{}:{key} is a method and cannot be replaced",
                    members.type_name
                )
            } else {
                format!(
                    "{} has no field '{key}' to set{}",
                    members.type_name,
                    suggestion(members, &key)
                )
            };
            Err(located_error(lua, ScriptErrorKind::Runtime, message))
        },
    );
}

fn read_only_hint(type_name: &str) -> &'static str {
    match type_name {
        "Light" | "Eye" => {
            "describe it again with scene:addLight or scene:addEye and the same name"
        }
        "Texture" => "make a new texture with penumbra.texture",
        _ => "it describes the object and changes with it",
    }
}

fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.to_string_lossy(),
        other => other
            .to_string()
            .unwrap_or_else(|_| other.type_name().to_owned()),
    }
}

/// "Scene has no field or method 'addbox'; did you mean 'addBox'?"
pub(crate) fn unknown_member(members: &Members, key: &str) -> String {
    unknown_text(members.type_name, key, members.fields, members.methods)
}

fn unknown_text(type_name: &str, key: &str, fields: &[&str], methods: &[&str]) -> String {
    format!(
        "{type_name} has no field or method '{key}'{}",
        suggestion_in(type_name, key, fields, methods)
    )
}

fn suggestion(members: &Members, key: &str) -> String {
    suggestion_in(members.type_name, key, members.fields, members.methods)
}

fn suggestion_in(type_name: &str, key: &str, fields: &[&str], methods: &[&str]) -> String {
    if let Some(hint) = roblox_member_hint(type_name, key) {
        return format!("; {hint}");
    }
    let all = || fields.iter().chain(methods).copied();
    match closest(key, all()) {
        Some(name) if methods.contains(&name) => {
            format!("; did you mean '{name}' (call it as obj:{name}(...))?")
        }
        Some(name) => format!("; did you mean '{name}'?"),
        None if fields.is_empty() && methods.is_empty() => " (it has none)".to_owned(),
        None => {
            let mut names: Vec<&str> = all().collect();
            names.sort_unstable();
            format!(" (it has {})", names.join(", "))
        }
    }
}

/// Hints for the members a Roblox scripter expects.
fn roblox_member_hint(type_name: &str, key: &str) -> Option<String> {
    let hint = match (type_name, key) {
        ("Scene", "Raycast") => "use scene:raycast(origin, direction, params) (camelCase)",
        ("Scene", "FindFirstChild" | "GetChildren" | "WaitForChild") => {
            "occluders are not objects to look up; keep the handle scene:addBox/addMesh/loadObj \
             return, or use the name scene:raycast reports"
        }
        (_, "Position" | "CFrame") if type_name != "Scene" => "use .position (camelCase)",
        (_, "Name") => "use .name (camelCase)",
        (_, "Destroy" | "Remove") => "there is nothing to destroy: drop the reference",
        _ => return None,
    };
    Some(hint.to_owned())
}

/// The best suggestion for `key` among `names`: the same name in another case first, then the
/// nearest spelling within an edit distance of about a third of its length.
pub(crate) fn closest<'a>(key: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let lower = key.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for name in names {
        let d = if name.to_lowercase() == lower {
            0
        } else {
            edit_distance(&lower, &name.to_lowercase())
        };
        if best.is_none_or(|(b, _)| d < b) {
            best = Some((d, name));
        }
    }
    let limit = (key.chars().count() / 3).clamp(1, 3);
    best.filter(|&(d, _)| d <= limit).map(|(_, n)| n)
}

/// Levenshtein distance with adjacent transpositions counting 1 (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Gives `table` a metatable whose `__index` calls `missing(lua, key, names)` for a key the
/// table lacks, `names` being its keys at the time of this call; `missing` gives the error.
fn on_missing_key(
    lua: &Lua,
    table: &Table,
    missing: impl Fn(&Lua, &str, &[&str]) -> mlua::Error + 'static,
) -> mlua::Result<()> {
    let names: Vec<String> = table
        .pairs::<String, Value>()
        .filter_map(|kv| kv.ok().map(|(k, _)| k))
        .collect();
    let meta = lua.create_table()?;
    meta.raw_set(
        "__index",
        lua.create_function(
            move |lua, (_, key): (Value, Value)| -> mlua::Result<Value> {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                Err(missing(lua, &key_text(&key), &names))
            },
        )?,
    )?;
    table.set_metatable(Some(meta))
}

/// Gives the `penumbra` module table a metatable whose `__index` raises the did-you-mean
/// error for a missing function (before the table is made read-only).
pub(crate) fn strict_module(lua: &Lua, module: &Table) -> mlua::Result<()> {
    on_missing_key(lua, module, |lua, key, names| {
        let hint = match key {
            "Scene" | "new" | "Workspace" | "workspace" => {
                Some("; make a scene with penumbra.scene() (camelCase)".to_owned())
            }
            _ => {
                closest(key, names.iter().copied()).map(|n| format!("; did you mean penumbra.{n}?"))
            }
        };
        let hint = hint.unwrap_or_else(|| {
            let mut sorted = names.to_vec();
            sorted.sort_unstable();
            format!(" (it has {})", sorted.join(", "))
        });
        located_error(
            lua,
            ScriptErrorKind::Runtime,
            format!("penumbra has no field or function '{key}'{hint}"),
        )
    })
}

/// Roblox globals and what to use instead.
const ROBLOX_GLOBALS: [(&str, &str); 12] = [
    (
        "Vector3",
        if cfg!(feature = "luau") {
            "Luau's vector type is built in: vector.create(x, y, z) (or a table {x, y, z})"
        } else {
            "points are tables {x, y, z}"
        },
    ),
    (
        "Vector2",
        "use a table {x, y} (texture coordinates are {u, v})",
    ),
    (
        "CFrame",
        "placements are transform tables: {position = p, rotation = {x, y, z} (degrees), \
         scale = s}",
    ),
    (
        "workspace",
        "make a scene with penumbra.scene(); scene:raycast(origin, direction, params) casts rays",
    ),
    ("Workspace", "make a scene with penumbra.scene()"),
    ("game", "make a scene with penumbra.scene()"),
    (
        "Instance",
        "occluders are added with scene:addBox, scene:addMesh, scene:loadObj or scene:loadGltf",
    ),
    (
        "RaycastParams",
        "pass a table: {exclude = {...}, include = {...}, maxDistance = d}",
    ),
    (
        "Color3",
        "colours are tables {r, g, b} with components 0..1",
    ),
    ("Enum", "options are strings, e.g. kind = \"spot\""),
    (
        "wait",
        "scripts run to completion; there is no wait (use penumbra.frameMark for frames)",
    ),
    (
        "task",
        "scripts run to completion; there is no task scheduler",
    ),
];

/// Globals a misspelling is compared with: penumbra's own (a near miss of a standard library
/// name, such as `loadstring` for `tostring`, may be a script testing what exists, so those
/// read as nil).
const SUGGESTED_GLOBALS: [&str; 3] = ["penumbra", "vector", "require"];

/// Gives the globals a metatable whose `__index` raises an error with a hint for a Roblox
/// global (`Vector3`, `workspace`, …) or a near spelling of penumbra's own globals
/// (`penumbr`); any other missing global reads as nil, as Lua defines.
pub(crate) fn strict_globals(lua: &Lua) -> mlua::Result<()> {
    let meta = lua.create_table()?;
    meta.raw_set(
        "__index",
        lua.create_function(|lua, (_, key): (Value, Value)| -> mlua::Result<Value> {
            let Value::String(s) = &key else {
                return Ok(Value::Nil);
            };
            let key = s.to_string_lossy();
            let message = if let Some((_, hint)) = ROBLOX_GLOBALS.iter().find(|(n, _)| *n == key) {
                format!("'{key}' is a Roblox global, not a penumbra one: {hint}")
            } else if key.chars().count() >= 4
                && let Some(n) = closest(&key, SUGGESTED_GLOBALS.into_iter())
            {
                format!("unknown global '{key}'; did you mean '{n}'?")
            } else {
                return Ok(Value::Nil);
            };
            Err(located_error(lua, ScriptErrorKind::Runtime, message))
        })?,
    )?;
    lua.globals().set_metatable(Some(meta))
}

/// The did-you-mean error for `key` on a type named `type_name` with members `names`.
pub(crate) fn unknown_member_error(
    lua: &Lua,
    type_name: &str,
    key: &str,
    names: &[&str],
) -> mlua::Error {
    located_error(
        lua,
        ScriptErrorKind::Runtime,
        unknown_text(type_name, key, names, &[]),
    )
}

/// A metatable on `table` whose `__index` raises the did-you-mean error for a missing key.
pub(crate) fn strict_table(lua: &Lua, table: &Table, type_name: &'static str) -> mlua::Result<()> {
    on_missing_key(lua, table, move |lua, key, names| {
        unknown_member_error(lua, type_name, key, names)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_substitutions_and_swaps() {
        assert_eq!(edit_distance("addbox", "addbox"), 0);
        assert_eq!(edit_distance("adbox", "addbox"), 1);
        assert_eq!(edit_distance("addbxo", "addbox"), 1);
        assert_eq!(edit_distance("addcox", "addbox"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_prefers_a_case_insensitive_match_and_refuses_far_names() {
        let names = ["addBox", "addMesh", "addLight", "lightAt"];
        assert_eq!(closest("AddBox", names.iter().copied()), Some("addBox"));
        assert_eq!(closest("addbox", names.iter().copied()), Some("addBox"));
        assert_eq!(closest("addMsh", names.iter().copied()), Some("addMesh"));
        assert_eq!(closest("lightat", names.iter().copied()), Some("lightAt"));
        assert_eq!(closest("teleport", names.iter().copied()), None);
    }
}
