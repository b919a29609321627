//! Errors: every failure names the script file and line and says what was wrong in one line,
//! whether Lua, the parser or a `penumbra` function raised it.

mod support;

use penumbra_lua::{Runtime, ScriptErrorKind};
use support::{eval, fails, fails_with, options, runtime, scratch, write};

#[test]
fn runtime_errors_carry_the_script_file_and_line() {
    let dir = scratch("errors-file-line");
    let script = write(
        &dir,
        "root/scripts/level1.luau",
        "local a = 1\nlocal b = 2\nlocal c = nil + a\n",
    );
    let rt = Runtime::new(options(&dir)).unwrap();
    let err = rt.run_file(&script).unwrap_err();
    assert_eq!(err.kind, ScriptErrorKind::Runtime);
    assert_eq!(
        err.file.as_deref(),
        Some(script.display().to_string().as_str())
    );
    assert_eq!(err.line, Some(3));
    assert!(
        err.to_string().starts_with(&format!(
            "{}:3: attempt to perform arithmetic",
            script.display()
        )),
        "{err}"
    );
    assert!(err.traceback.is_some());
}

#[test]
fn syntax_errors_carry_the_script_file_and_line() {
    let (rt, _) = runtime("errors-syntax");
    let err = fails(&rt, "local ok = 1\nlocal broken = = 2\n");
    assert_eq!(err.kind, ScriptErrorKind::Syntax);
    assert_eq!(err.file.as_deref(), Some("test.luau"));
    assert_eq!(err.line, Some(2));
}

#[test]
fn errors_raised_with_error_keep_their_line() {
    let (rt, _) = runtime("errors-error");
    let err = fails(&rt, "\n\nerror('boom')");
    assert_eq!((err.line, err.message.as_str()), (Some(3), "boom"));
}

#[test]
fn api_errors_name_the_function_the_argument_and_the_expectation() {
    let (rt, _) = runtime("errors-api");
    let err = fails(&rt, "local x = 1\npenumbra.texture(5)");
    assert_eq!(err.kind, ScriptErrorKind::Runtime);
    assert_eq!(err.line, Some(2));
    assert_eq!(
        err.message,
        "penumbra.texture: desc: expected a table, got the number 5"
    );
    let err = fails(
        &rt,
        "local s = penumbra.sampler({filter = 'MIN_MAG_MIP_POINT'})\n\
         local t = penumbra.texture({format = 'R8_UNORM', width = 2, height = 2})\n\
         s:sampleLevel(t, {0.5, 0.5}, 'zero')",
    );
    assert_eq!(err.line, Some(3));
    assert_eq!(
        err.message,
        "Sampler:sampleLevel: lod: expected a number, got the string \"zero\""
    );
}

#[test]
fn api_errors_are_one_line() {
    let (rt, _) = runtime("errors-one-line");
    for source in [
        "penumbra.sampler({filter = 'NOPE'})",
        "penumbra.sampler({filter = 'MIN_MAG_MIP_POINT', mipLODBias = 99})",
        "penumbra.texture({format = 'R8_UNORM', width = 0})",
        "penumbra.staticSamplers('(samplers: {')",
    ] {
        let err = fails(&rt, source);
        assert!(!err.to_string().contains('\n'), "{err}");
        assert_eq!(err.line, Some(1), "{err}");
    }
}

#[test]
fn a_method_called_with_a_dot_says_how_to_call_it() {
    let (rt, _) = runtime("errors-dot");
    fails_with(
        &rt,
        "local t = penumbra.texture({format = 'R8_UNORM', width = 2})\nt.get(0, 0)",
        &["test.luau:2: Texture:get: call it as a method, with ':'"],
    );
}

#[test]
fn errors_in_required_modules_point_into_the_module() {
    let (rt, dir) = runtime("errors-module");
    write(&dir, "root/lib/bad.luau", "local x = 1\nreturn x.y.z\n");
    write(&dir, "root/lib/broken.luau", "return function(\n");
    let err = fails(&rt, "require('lib/bad')");
    assert!(
        err.file
            .as_deref()
            .is_some_and(|f| f.ends_with("lib/bad.luau")),
        "{err}"
    );
    assert_eq!(err.line, Some(2));
    let err = fails(&rt, "require('lib/broken')");
    assert_eq!(err.kind, ScriptErrorKind::Syntax);
    assert!(
        err.file
            .as_deref()
            .is_some_and(|f| f.ends_with("lib/broken.luau")),
        "{err}"
    );
}

#[test]
fn errors_in_fill_callbacks_point_at_the_callback() {
    let (rt, _) = runtime("errors-fill");
    let err = fails(
        &rt,
        "local t = penumbra.texture({format = 'R8_UNORM', width = 2})\n\
         t:fill(function(x)\n\
           if x == 1 then error('bad texel') end\n\
           return 0\n\
         end)",
    );
    assert_eq!((err.line, err.message.as_str()), (Some(3), "bad texel"));
}

#[test]
fn scripts_can_catch_api_errors_and_read_the_message() {
    let (rt, _) = runtime("errors-pcall");
    let message: String = eval(
        &rt,
        "local ok, err = pcall(penumbra.sampler, {filter = 'MIN_MAG_MIP_POINT', addressU = 'TILE'})\n\
         return (string.gsub(tostring(err), '\\n.*', ''))",
    );
    assert!(
        message.starts_with("test.luau:1: penumbra.sampler: desc.addressU: \"TILE\" is not a D3D12_TEXTURE_ADDRESS_MODE"),
        "{message}"
    );
    assert!(
        message.contains("WRAP, MIRROR, CLAMP, BORDER, MIRROR_ONCE"),
        "{message}"
    );
}

#[test]
fn a_missing_script_is_an_io_error() {
    let dir = scratch("errors-missing");
    let rt = Runtime::new(options(&dir)).unwrap();
    let err = rt.run_file(dir.join("root/nope.luau")).unwrap_err();
    assert_eq!(err.kind, ScriptErrorKind::Io);
    assert!(err.to_string().contains("nope.luau"), "{err}");
}
