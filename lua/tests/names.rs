//! Misspelt names (issue 17): unknown fields and methods of every type, unknown `penumbra`
//! functions and Roblox globals raise an error with `file:line`, the public type name and a
//! suggestion; read-only fields say so; every name the lists hold exists, and every member
//! types.d.luau declares is in them.

mod support;

use support::{eval, fails_with, runtime};

/// One object of each type, built at line 1–7 so errors below point at later lines.
const OBJECTS: &str = "local scene = penumbra.scene()\n\
    local sun = scene:addLight({name = 'sun', kind = 'directional', direction = {0, -1, 0}})\n\
    local eye = scene:addEye({name = 'guard', position = {0, 2, 0}})\n\
    local tex = penumbra.texture({format = 'R8G8B8A8_UNORM', width = 4, height = 4})\n\
    local pcf = penumbra.sampler({filter = 'COMPARISON_MIN_MAG_LINEAR_MIP_POINT', comparisonFunc = 'LESS_EQUAL'})\n\
    local set = penumbra.staticSamplers('(samplers: {\"s\": (Filter: MIN_MAG_MIP_POINT)})')\n\
    local map = penumbra.sadMap(tex, tex)\n";

#[test]
fn misspelt_methods_get_a_suggestion_with_the_public_type_and_line() {
    let (rt, _) = runtime("names-methods");
    let cases: [(&str, &[&str]); 8] = [
        (
            "scene:addbox({0, 0, 0}, {1, 1, 1})",
            &[
                "test.luau:8:",
                "Scene has no field or method 'addbox'; did you mean 'addBox'",
            ],
        ),
        (
            "scene:AddBox({0, 0, 0}, {1, 1, 1})",
            &["test.luau:8:", "did you mean 'addBox'"],
        ),
        (
            "scene:LightAt({0, 0, 0})",
            &["Scene has no field or method 'LightAt'; did you mean 'lightAt'"],
        ),
        (
            "tex:Fill(function() return 0 end)",
            &["Texture has no field or method 'Fill'; did you mean 'fill'"],
        ),
        (
            "pcf:sampleCmpLevelzero(tex, {0, 0}, 0.5)",
            &[
                "Sampler has no field or method 'sampleCmpLevelzero'; did you mean 'sampleCmpLevelZero'",
            ],
        ),
        (
            "set:Lookup(0, 0, 'ALL')",
            &["StaticSamplers has no field or method 'Lookup'; did you mean 'lookup'"],
        ),
        (
            "map:Min()",
            &["SadMap has no field or method 'Min'; did you mean 'min'"],
        ),
        (
            "scene:Raycast({0, 0, 0}, {0, -1, 0})",
            &["Scene has no field or method 'Raycast'; use scene:raycast"],
        ),
    ];
    for (line, parts) in cases {
        fails_with(&rt, &format!("{OBJECTS}{line}"), parts);
    }
    // Far from every name: the list of what there is.
    fails_with(
        &rt,
        &format!("{OBJECTS}scene:teleport()"),
        &["Scene has no field or method 'teleport' (it has addBox, addEye,"],
    );
}

#[test]
fn unknown_fields_error_on_every_type_with_a_line() {
    let (rt, _) = runtime("names-fields");
    let cases: [(&str, &str); 8] = [
        (
            "scene.Occluders",
            "Scene has no field or method 'Occluders'; did you mean 'occluders'",
        ),
        (
            "tex.Width",
            "Texture has no field or method 'Width'; did you mean 'width'",
        ),
        ("pcf.filter", "Sampler has no field or method 'filter'"),
        (
            "sun.Position",
            "Light has no field or method 'Position'; use .position (camelCase)",
        ),
        (
            "sun.Name",
            "Light has no field or method 'Name'; use .name (camelCase)",
        ),
        (
            "eye.fieldOfView",
            "Eye has no field or method 'fieldOfView'",
        ),
        (
            "map.widht",
            "SadMap has no field or method 'widht'; did you mean 'width'",
        ),
        ("set.count", "StaticSamplers has no field or method 'count'"),
    ];
    for (expr, message) in cases {
        fails_with(
            &rt,
            &format!("{OBJECTS}local x = {expr}"),
            &["test.luau:8:", message],
        );
    }
}

#[test]
fn assigning_a_field_says_read_only_or_unknown() {
    let (rt, _) = runtime("names-assign");
    fails_with(
        &rt,
        &format!("{OBJECTS}sun.intensity = 2"),
        &["test.luau:8:", "Light.intensity is read-only"],
    );
    fails_with(
        &rt,
        &format!("{OBJECTS}tex.width = 8"),
        &["Texture.width is read-only"],
    );
    fails_with(
        &rt,
        &format!("{OBJECTS}scene.addBox = nil"),
        &["Scene:addBox is a method and cannot be replaced"],
    );
    fails_with(
        &rt,
        &format!("{OBJECTS}eye.fov2 = 90"),
        &["Eye has no field 'fov2' to set; did you mean 'fov'"],
    );
}

#[test]
fn module_functions_and_roblox_globals_get_hints() {
    let (rt, _) = runtime("names-module");
    fails_with(
        &rt,
        "local s = penumbra.Scene()",
        &[
            "test.luau:1:",
            "penumbra has no field or function 'Scene'; make a scene with penumbra.scene()",
        ],
    );
    fails_with(
        &rt,
        "local t = penumbra.loadimage('a.png')",
        &["penumbra has no field or function 'loadimage'; did you mean penumbra.loadImage?"],
    );
    fails_with(
        &rt,
        "local v = Vector3.new(1, 2, 3)",
        &[
            "test.luau:1:",
            if cfg!(feature = "luau") {
                "'Vector3' is a Roblox global, not a penumbra one: Luau's vector type is built in: vector.create(x, y, z)"
            } else {
                "'Vector3' is a Roblox global, not a penumbra one: points are tables {x, y, z}"
            },
        ],
    );
    fails_with(
        &rt,
        "local r = workspace:Raycast(vector.create(0, 0, 0), vector.create(0, -1, 0))",
        &["'workspace' is a Roblox global", "scene:raycast"],
    );
    fails_with(
        &rt,
        "local s = penumbr.scene()",
        &[
            "test.luau:1:",
            "unknown global 'penumbr'; did you mean 'penumbra'?",
        ],
    );
    // Other missing globals read as nil, as Lua defines.
    let missing: bool = eval(&rt, "return myOwnFlag == nil and x == nil");
    assert!(missing);
}

#[test]
fn typeof_and_errors_use_the_public_type_names() {
    let (rt, _) = runtime("names-typeof");
    #[cfg(feature = "luau")]
    {
        let names: Vec<String> = eval(
            &rt,
            &format!(
                "{OBJECTS}return {{typeof(scene), typeof(sun), typeof(eye), typeof(tex), \
                 typeof(pcf), typeof(set), typeof(map)}}"
            ),
        );
        assert_eq!(
            names,
            [
                "Scene",
                "Light",
                "Eye",
                "Texture",
                "Sampler",
                "StaticSamplers",
                "SadMap"
            ]
        );
    }
    let err = support::fails(&rt, &format!("{OBJECTS}local x = scene + 1"));
    assert!(!err.to_string().contains("LuaScene"), "{err}");
}

/// Every listed name resolves (fields to a value or nil, methods to functions), and every
/// member types.d.luau declares for a class is listed: the lists and the types agree.
#[test]
fn member_lists_match_the_objects_and_types_d_luau() {
    let (rt, _) = runtime("names-lists");
    let listed: Vec<(String, Vec<String>, Vec<String>)> = penumbra_lua::member_lists()
        .iter()
        .map(|(t, f, m)| {
            (
                t.to_string(),
                f.iter().map(|s| s.to_string()).collect(),
                m.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect();
    let objects = [
        ("Scene", "scene"),
        ("Light", "sun"),
        ("Eye", "eye"),
        ("Texture", "tex"),
        ("Sampler", "pcf"),
        ("StaticSamplers", "set"),
        ("SadMap", "map"),
    ];
    for (ty, var) in objects {
        let (_, fields, methods) = listed.iter().find(|(t, ..)| t == ty).expect(ty);
        for m in methods {
            let kind: String = eval(&rt, &format!("{OBJECTS}return type({var}.{m})"));
            assert_eq!(kind, "function", "{ty}:{m}");
        }
        for f in fields {
            // Reading a listed field never raises the unknown-member error.
            let _: penumbra_lua::mlua::Value = eval(&rt, &format!("{OBJECTS}return {var}.{f}"));
        }
    }
    let types = include_str!("../types.d.luau");
    for (ty, fields, methods) in &listed {
        let body = types
            .split(&format!("declare class {ty}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("types.d.luau declares no class {ty}"));
        let body = &body[..body.find("\nend").unwrap()];
        let mut declared_fields = Vec::new();
        let mut declared_methods = Vec::new();
        for line in body.lines().map(str::trim) {
            if line.starts_with("--") || line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("function ") {
                declared_methods.push(rest[..rest.find('(').unwrap()].to_owned());
            } else if let Some(i) = line.find(':') {
                declared_fields.push(line[..i].to_owned());
            }
        }
        let mut a = fields.clone();
        a.sort();
        declared_fields.sort();
        assert_eq!(a, declared_fields, "{ty} fields");
        let mut b = methods.clone();
        b.sort();
        declared_methods.sort();
        assert_eq!(b, declared_methods, "{ty} methods");
    }
}

#[test]
fn can_see_takes_an_eyes_name_as_lit_fraction_takes_a_lights() {
    let (rt, _) = runtime("names-eye-name");
    let same: bool = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addBox({-1, 0, 3}, {1, 3, 4})\n\
         local eye = scene:addEye({name = 'guard', position = {0, 1.5, 0}, direction = {0, 0, 1}})\n\
         local a, fa = scene:canSee(eye, {0, 1, 8})\n\
         local b, fb = scene:canSee('guard', {0, 1, 8})\n\
         local c, fc = scene:canSee('guard', {0.3, 1, 2})\n\
         return a == b and fa == fb and not a and c",
    );
    assert!(same);
    fails_with(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addEye({name = 'guard', position = {0, 1.5, 0}})\n\
         scene:canSee('gaurd', {0, 1, 8})",
        &[
            "test.luau:3:",
            "Scene:canSee: eye: the scene has no eye named \"gaurd\" (it has \"guard\")",
        ],
    );
}
