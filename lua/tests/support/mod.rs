//! Shared fixtures: a fresh script root (and output folder) per test, and runtimes on it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use penumbra_lua::{Runtime, RuntimeOptions, ScriptError};

/// A fresh, empty folder for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("penumbra-lua-tests-{}", std::process::id()))
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("root")).unwrap();
    dir
}

/// Writes `text` to `dir/rel`, creating folders.
pub fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// Options on `dir/root` with output folder `dir/out` and short limits for tests. The timeout
/// is only a safety cap (the timeout tests set their own): 5 s, so that a busy CI machine that
/// stalls a tiny script for half a second does not fail it.
pub fn options(dir: &Path) -> RuntimeOptions {
    RuntimeOptions::new(dir.join("root"))
        .out_dir(dir.join("out"))
        .max_memory(64 << 20)
        .timeout(Duration::from_secs(5))
}

/// A runtime on a fresh root for `test`.
pub fn runtime(test: &str) -> (Runtime, PathBuf) {
    let dir = scratch(test);
    (Runtime::new(options(&dir)).unwrap(), dir)
}

/// Runs `source` and returns its error, failing the test if it succeeds.
pub fn fails(runtime: &Runtime, source: &str) -> ScriptError {
    match runtime.run_str(source, "test.luau") {
        Ok(()) => panic!("the script should fail:\n{source}"),
        Err(e) => e,
    }
}

/// Asserts that `source` fails with a message containing every one of `parts`.
#[track_caller]
pub fn fails_with(runtime: &Runtime, source: &str, parts: &[&str]) -> ScriptError {
    let err = fails(runtime, source);
    let text = err.to_string();
    for part in parts {
        assert!(text.contains(part), "{text:?} should contain {part:?}");
    }
    err
}

/// Evaluates `source`, failing the test on a script error.
#[track_caller]
pub fn eval<R: penumbra_lua::mlua::FromLuaMulti>(runtime: &Runtime, source: &str) -> R {
    match runtime.eval(source, "test.luau") {
        Ok(value) => value,
        Err(e) => panic!("script failed: {e}\n{source}"),
    }
}

/// Runs `source`, failing the test on a script error.
#[track_caller]
pub fn run(runtime: &Runtime, source: &str) {
    if let Err(e) = runtime.run_str(source, "test.luau") {
        panic!("script failed: {e}\n{source}");
    }
}
