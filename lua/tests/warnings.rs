//! Silent traps get warnings (issue 17): printed once per script line with `file:line`, kept
//! by the runtime, never fatal; and `print` writes numbers as `writeCsv` does.

mod support;

use support::{eval, run, runtime};

#[test]
fn an_upward_sun_warns_once_with_its_line_and_the_script_goes_on() {
    let (rt, _) = runtime("warn-sun");
    rt.set_print_warnings(false);
    let lit: f64 = eval(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addBox({-1, -1, -1}, {1, 0, 1})\n\
         for i = 1, 3 do\n\
           scene:addLight({name = 'sun' .. i, kind = 'directional', direction = {0.2, 1, 0}})\n\
         end\n\
         return scene:litFraction('sun1', {0, 0, 0})",
    );
    // The script ran to the end.
    assert!(lit.is_finite());
    let w = rt.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("test.luau:4: warning: desc.direction: {0.2, 1, 0} points up"),
        "{w:?}"
    );
    assert!(w[0].contains("{0, -1, 0}"), "{w:?}");
}

#[test]
fn angles_that_look_like_radians_warn() {
    let (rt, _) = runtime("warn-radians");
    rt.set_print_warnings(false);
    run(
        &rt,
        "local scene = penumbra.scene()\n\
         scene:addLight({kind = 'spot', position = {0, 5, 0}, direction = {0, -1, 0}, angle = math.rad(60)})\n\
         scene:addLight({kind = 'spot', position = {0, 5, 0}, direction = {0, -1, 0}, angle = 2})\n\
         scene:addEye({position = {0, 1, 0}, direction = {1, 0, 0}, fov = 1.5})\n",
    );
    let w = rt.warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with(
            "test.luau:2: warning: desc.angle = 1.0471975511965976 looks like radians (60°)"
        ),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("test.luau:4: warning: desc.fov = 1.5 looks like radians (86°)"),
        "{w:?}"
    );
}

#[test]
fn colours_above_1_in_a_unorm_texture_warn() {
    let (rt, _) = runtime("warn-unorm");
    rt.set_print_warnings(false);
    let stored: f64 = eval(
        &rt,
        "local t = penumbra.texture({format = 'R8G8B8A8_UNORM', width = 2, height = 2})\n\
         t:set(0, 0, {255, 128, 0})\n\
         t:fill(function(x, y) return 200, 0, 0, 1 end)\n\
         local f = penumbra.texture({format = 'R32G32B32A32_FLOAT', width = 1, height = 1})\n\
         f:set(0, 0, {255, 128, 0})\n\
         return (t:get(0, 0))",
    );
    assert_eq!(stored, 1.0);
    let w = rt.warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with("test.luau:2: warning: Texture:set: a R8G8B8A8_UNORM texel holds 0..1, so 255 is stored as 1"), "{w:?}");
    assert!(
        w[1].starts_with("test.luau:3: warning: Texture:fill:"),
        "{w:?}"
    );
}

#[test]
fn write_csv_and_print_share_the_shortest_f32_form() {
    let (rt, dir) = runtime("print-numbers");
    // A value stored as f32 (a texel), as penumbra's answers are.
    let text: String = eval(
        &rt,
        "local t = penumbra.texture({format = 'R32_FLOAT', width = 1, height = 1})\n\
         t:set(0, 0, 0.3)\n\
         local v = t:get(0, 0)\n\
         penumbra.writeCsv('v.csv', {{v = v}})\n\
         return tostring(v)",
    );
    let csv = std::fs::read_to_string(dir.join("out/v.csv")).unwrap();
    assert_eq!(csv.lines().nth(1), Some("0.3"));
    // Lua's own tostring writes all the f64 digits; `print` (checked end to end in the CLI's
    // tests) writes the CSV form.
    // (Luau: 0.30000001192092896; Lua 5.4's %.14g: 0.30000001192093.)
    assert!(text.starts_with("0.300000011920"), "{text}");
}
