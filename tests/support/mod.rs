//! What the root crate's integration tests share: running the `penumbra` binary and reading the
//! JSON files of `tests/data/`. Each test file uses part of it.
#![allow(dead_code)]

use std::process::Command;

use serde_json::Value;

/// Runs `penumbra ARGS`: (success, stdout, stderr).
pub fn penumbra(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_penumbra"))
        .args(args)
        .output()
        .expect("run penumbra");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The path of `tests/data/REL`.
pub fn data_path(rel: &str) -> String {
    format!("{}/tests/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// `tests/data/REL` parsed as JSON (a failure names the file).
pub fn data_json(rel: &str) -> Value {
    let path = data_path(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}
