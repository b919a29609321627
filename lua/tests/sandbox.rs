//! The sandbox: deadlines, memory limits, missing dangerous globals, the jailed `require` and
//! file access confined to the root (reads) and the output folder (writes). Runs under both
//! flavours (`cargo test -p penumbra_lua --no-default-features --features lua54`).

mod support;

use std::time::{Duration, Instant};

use penumbra_lua::{LuaSetupError, Runtime, RuntimeOptions, ScriptErrorKind};
use support::{eval, fails, fails_with, options, run, runtime, scratch, write};

fn short_timeout(test: &str) -> Runtime {
    let dir = scratch(test);
    Runtime::new(options(&dir).timeout(Duration::from_millis(300))).unwrap()
}

#[test]
fn runaway_loop_stops_at_the_deadline_with_a_timeout_error() {
    let rt = short_timeout("runaway");
    let start = Instant::now();
    let err = fails(&rt, "local n = 0\nwhile true do n = n + 1 end");
    assert_eq!(err.kind, ScriptErrorKind::Timeout, "{err}");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(err.file.as_deref(), Some("test.luau"));
    assert_eq!(err.line, Some(2));
    assert!(err.to_string().contains("timeout"), "{err}");
}

#[test]
fn runaway_loop_in_a_coroutine_stops_too() {
    let rt = short_timeout("runaway-coroutine");
    let err = fails(
        &rt,
        "local co = coroutine.wrap(function() while true do end end)\nco()",
    );
    assert_eq!(err.kind, ScriptErrorKind::Timeout, "{err}");
}

#[test]
fn catching_the_timeout_with_pcall_does_not_keep_a_script_alive() {
    let rt = short_timeout("runaway-pcall");
    for source in [
        "while true do pcall(function() while true do end end) end",
        "local function spin() while true do end end\n\
         while true do xpcall(spin, function(e) return e end) end",
        "while true do\n\
           coroutine.resume(coroutine.create(function() while true do end end))\n\
         end",
    ] {
        let err = fails(&rt, source);
        assert_eq!(err.kind, ScriptErrorKind::Timeout, "{err}");
    }
}

#[test]
fn a_slow_callback_loop_in_rust_is_stopped_by_the_deadline() {
    let rt = short_timeout("runaway-fill");
    // Each fill calls back into a C function, so only the API's own deadline checks stop it.
    let err = fails(
        &rt,
        "local t = penumbra.texture({format = 'R8_UNORM', width = 4096, height = 4096})\n\
         while true do t:fill(string.len) end",
    );
    assert_eq!(err.kind, ScriptErrorKind::Timeout, "{err}");
}

#[test]
fn every_run_gets_a_fresh_deadline() {
    let rt = short_timeout("fresh-deadline");
    assert_eq!(
        fails(&rt, "while true do end").kind,
        ScriptErrorKind::Timeout
    );
    run(&rt, "local x = 0 for i = 1, 1000 do x = x + i end");
}

#[test]
fn memory_bomb_fails_with_a_memory_error() {
    let (rt, _) = runtime("memory-bomb");
    // Distinct contents: Luau interns strings, so copies of one string cost nothing.
    let err = fails(
        &rt,
        "local t = {}\nwhile true do t[#t + 1] = string.rep('x', 1e6) .. #t end",
    );
    assert_eq!(err.kind, ScriptErrorKind::Memory, "{err}");
    assert!(err.to_string().contains("64 MB"), "{err}");
    run(&rt, "local ok = 1 + 1");
}

#[test]
fn the_classic_string_rep_bomb_is_stopped() {
    let rt = short_timeout("classic-bomb");
    let err = fails(
        &rt,
        "local t = {} while true do t[#t+1] = string.rep(\"x\", 1e6) end",
    );
    // Lua 5.4 runs out of memory; Luau shares the one interned string and hits the deadline.
    assert!(
        matches!(err.kind, ScriptErrorKind::Memory | ScriptErrorKind::Timeout),
        "{err}"
    );
}

#[test]
fn growing_a_table_forever_fails_with_a_memory_error() {
    let (rt, _) = runtime("table-bomb");
    let err = fails(
        &rt,
        "local t = {} local i = 0 while true do i = i + 1 t[i] = i end",
    );
    assert_eq!(err.kind, ScriptErrorKind::Memory, "{err}");
}

#[test]
fn textures_have_a_budget_that_dropped_textures_give_back() {
    let (rt, _) = runtime("texture-budget");
    fails_with(
        &rt,
        "penumbra.texture({format = 'R32G32B32A32_FLOAT', width = 4096, height = 4096})",
        &["penumbra.texture", "does not fit", "64 MB"],
    );
    // 16 MB each, 40 of them: only possible because unreachable ones are collected.
    run(
        &rt,
        "for i = 1, 40 do penumbra.texture({format = 'R32_FLOAT', width = 2048, height = 2048}) end",
    );
}

#[test]
fn dangerous_globals_are_absent() {
    let (rt, _) = runtime("globals");
    let absent: bool = eval(
        &rt,
        "return io == nil and load == nil and loadstring == nil and dofile == nil \
         and loadfile == nil and package == nil and debug == nil and os.execute == nil \
         and os.exit == nil and os.getenv == nil and os.remove == nil and os.rename == nil",
    );
    assert!(absent);
    let kept: bool = eval(
        &rt,
        "return type(os.clock()) == 'number' and type(os.time()) == 'number' \
         and type(require) == 'function' and type(penumbra) == 'table'",
    );
    assert!(kept);
}

#[test]
fn the_module_table_is_read_only() {
    let (rt, _) = runtime("read-only");
    fails_with(&rt, "penumbra.sampler = nil", &["test.luau", "read"]);
    fails_with(&rt, "penumbra.extra = 1", &["read"]);
    let still: bool = eval(&rt, "return type(penumbra.sampler) == 'function'");
    assert!(still);
}

#[test]
fn the_os_table_is_read_only() {
    let (rt, _) = runtime("os-read-only");
    fails(&rt, "os.execute = function() end");
}

#[test]
fn require_loads_modules_under_the_root_once() {
    let (rt, dir) = runtime("require");
    write(
        &dir,
        "root/lib/util.luau",
        "loads = (loads or 0) + 1\nlocal helper = require('./helper')\nreturn { twice = function(x) return helper.double(x) end }",
    );
    write(
        &dir,
        "root/lib/helper.lua",
        "return { double = function(x) return 2 * x end }",
    );
    write(&dir, "root/pkg/init.luau", "return 'package'");
    let (a, b, c, pkg): (f64, bool, f64, String) = eval(
        &rt,
        "local a = require('lib/util')\nlocal b = require('./lib/util')\n\
         return a.twice(21), a == b, loads, require('pkg')",
    );
    assert_eq!((a, b, c, pkg.as_str()), (42.0, true, 1.0, "package"));
}

#[test]
fn require_resolves_relative_to_the_requiring_file() {
    let dir = scratch("require-relative");
    write(
        &dir,
        "root/scripts/main.luau",
        "return require('./lib/x').name",
    );
    write(
        &dir,
        "root/scripts/lib/x.luau",
        "return { name = require('y') }",
    );
    write(&dir, "root/scripts/lib/y.luau", "return 'y in lib'");
    let rt = Runtime::new(options(&dir)).unwrap();
    rt.run_file(dir.join("root/scripts/main.luau")).unwrap();
}

#[test]
fn require_refuses_parent_folders_and_absolute_paths() {
    let dir = scratch("require-escape");
    write(&dir, "secret.luau", "return 'secret'");
    let rt = Runtime::new(options(&dir)).unwrap();
    fails_with(&rt, "require('../secret')", &["require", "'..'"]);
    fails_with(&rt, "require('lib/../../secret')", &["'..'"]);
    let absolute = dir.join("secret.luau");
    fails_with(
        &rt,
        &format!("require({:?})", absolute.display().to_string()),
        &["absolute"],
    );
    fails_with(&rt, "require('missing')", &["not found", "missing.luau"]);
}

#[cfg(unix)]
#[test]
fn require_refuses_links_that_leave_the_root() {
    let dir = scratch("require-link");
    write(&dir, "secret.luau", "return 'secret'");
    std::os::unix::fs::symlink(dir.join("secret.luau"), dir.join("root/sneaky.luau")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("root/up")).unwrap();
    let rt = Runtime::new(options(&dir)).unwrap();
    fails_with(&rt, "require('sneaky')", &["outside"]);
    fails_with(&rt, "require('up/secret')", &["outside"]);
}

#[test]
fn circular_requires_are_reported() {
    let (rt, dir) = runtime("require-cycle");
    write(&dir, "root/a.luau", "return require('b')");
    write(&dir, "root/b.luau", "return require('a')");
    fails_with(&rt, "require('a')", &["circular require"]);
}

#[test]
fn reads_outside_the_root_fail() {
    let dir = scratch("read-escape");
    write(&dir, "outside.png", "not really a png");
    let rt = Runtime::new(options(&dir)).unwrap();
    fails_with(
        &rt,
        "penumbra.loadTexture('../outside.png')",
        &["penumbra.loadTexture", "'..'"],
    );
    let absolute = dir.join("outside.png").display().to_string();
    fails_with(
        &rt,
        &format!("penumbra.loadTexture({absolute:?})"),
        &["absolute"],
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("outside.png"), dir.join("root/in.png")).unwrap();
        fails_with(&rt, "penumbra.loadTexture('in.png')", &["outside"]);
    }
}

#[test]
fn writes_stay_in_the_output_folder() {
    let dir = scratch("write-escape");
    let rt = Runtime::new(options(&dir)).unwrap();
    let tex = "local t = penumbra.texture({format = 'R8_UNORM', width = 2, height = 2})\n";
    fails_with(
        &rt,
        &format!("{tex}t:save('../x.png')"),
        &["Texture:save", "'..'"],
    );
    fails_with(&rt, &format!("{tex}t:save('/tmp/x.png')"), &["absolute"]);
    let shown: String = eval(&rt, &format!("{tex}return t:save('maps/a.png')"));
    assert!(shown.ends_with("out/maps/a.png"), "{shown}");
    assert!(dir.join("out/maps/a.png").is_file());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("root"), dir.join("out/link")).unwrap();
        fails_with(&rt, &format!("{tex}t:save('link/x.png')"), &["outside"]);
        std::os::unix::fs::symlink(dir.join("root/target.png"), dir.join("out/file.png")).unwrap();
        fails_with(&rt, &format!("{tex}t:save('file.png')"), &["symbolic link"]);
        assert!(!dir.join("root/target.png").exists());
    }
}

#[test]
fn without_an_output_folder_nothing_is_written() {
    let dir = scratch("no-out");
    let rt = Runtime::new(RuntimeOptions::new(dir.join("root"))).unwrap();
    fails_with(
        &rt,
        "penumbra.texture({format = 'R8_UNORM', width = 1}):save('a.png')",
        &["no output folder"],
    );
}

#[test]
fn a_script_outside_the_root_is_not_run() {
    let dir = scratch("script-outside");
    let outside = write(&dir, "elsewhere.luau", "print('should not run')");
    let rt = Runtime::new(options(&dir)).unwrap();
    let err = rt.run_file(&outside).unwrap_err();
    assert_eq!(err.kind, ScriptErrorKind::Io);
    assert!(err.to_string().contains("outside its root"), "{err}");
}

#[test]
fn unusable_setups_are_refused() {
    let dir = scratch("setup");
    assert!(matches!(
        Runtime::new(RuntimeOptions::new(dir.join("missing"))),
        Err(LuaSetupError::Root { .. })
    ));
    let file = write(&dir, "file.txt", "x");
    assert!(matches!(
        Runtime::new(RuntimeOptions::new(file)),
        Err(LuaSetupError::RootNotFolder(_))
    ));
    assert!(matches!(
        Runtime::new(RuntimeOptions::new(dir.join("root")).timeout(Duration::ZERO)),
        Err(LuaSetupError::Limit(_))
    ));
    assert!(matches!(
        Runtime::new(RuntimeOptions::new(dir.join("root")).max_memory(1024)),
        Err(LuaSetupError::Limit(_))
    ));
}
