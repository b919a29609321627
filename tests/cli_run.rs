//! `penumbra run` as a user runs it: a script prints and writes pictures; a broken script gives
//! one `penumbra: file:line: message` line and exit code 1.

use std::path::{Path, PathBuf};
use std::process::Command;

fn penumbra(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_penumbra"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run penumbra");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh folder for one test with `scripts/NAME` holding `text`.
fn scene(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("penumbra-cli-run-{}", std::process::id()))
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts").join(name), text).unwrap();
    dir
}

#[test]
fn a_script_prints_and_writes_to_the_output_folder() {
    let dir = scene(
        "prints",
        "level1.luau",
        r#"local depth = penumbra.texture({ format = "R32_FLOAT", width = 2, height = 2,
                                          data = { 0.3, 0.6, 0.6, 0.9 } })
local pcf = penumbra.sampler({ filter = "COMPARISON_MIN_MAG_LINEAR_MIP_POINT",
                               comparisonFunc = "LESS_EQUAL" })
print("lit", pcf:sampleCmpLevelZero(depth, { 0.5, 0.5 }, 0.5))
print(depth:save("depth.png"))
"#,
    );
    let (code, stdout, stderr) = penumbra(&dir, &["run", "scripts/level1.luau"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("lit\t0.75"), "{stdout}");
    assert!(stdout.contains("penumbra-out/depth.png"), "{stdout}");
    assert!(dir.join("penumbra-out/depth.png").is_file());
}

#[test]
fn a_syntax_error_gives_file_line_and_exit_1() {
    let dir = scene("syntax", "broken.luau", "local ok = 1\nlocal = 2\n");
    let (code, stdout, stderr) = penumbra(&dir, &["run", "scripts/broken.luau"]);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
    assert!(
        stderr.starts_with("penumbra: scripts/broken.luau:2: "),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_runtime_error_names_the_api_function() {
    let dir = scene(
        "runtime",
        "bad.luau",
        "\n\npenumbra.sampler({ filter = 'LINEAR_PLEASE' })\n",
    );
    let (code, _, stderr) = penumbra(&dir, &["run", "scripts/bad.luau"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("penumbra: scripts/bad.luau:3: penumbra.sampler: desc.filter:"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn limits_and_the_root_come_from_the_command_line() {
    let dir = scene("limits", "spin.luau", "while true do end\n");
    let (code, _, stderr) = penumbra(&dir, &["run", "scripts/spin.luau", "--timeout", "0.2"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("timeout"), "{stderr}");
    let (code, _, stderr) = penumbra(&dir, &["run", "scripts/spin.luau", "--root", "elsewhere"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("penumbra: script root elsewhere"),
        "{stderr}"
    );
    let (code, _, stderr) = penumbra(&dir, &["run", "scripts/spin.luau", "--timeout", "0"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("--timeout"), "{stderr}");
}

/// `print` writes a penumbra answer (an f32) in its shortest form, as `writeCsv` does, and a
/// likely mistake (an upward sun) is a warning on standard error with `file:line`, once, while
/// the script goes on and exits 0.
#[test]
fn print_writes_short_numbers_and_warnings_go_to_stderr() {
    let dir = scene(
        "print-warn",
        "w.luau",
        r#"local t = penumbra.texture({ format = "R32_FLOAT", width = 1, height = 1, data = { 0.3 } })
print(t:get(0, 0), 0.1 + 0.2, 7)
local scene = penumbra.scene()
for i = 1, 2 do
  scene:addLight({ name = "sun" .. i, kind = "directional", direction = { 0, 1, 0 } })
end
print("done")
"#,
    );
    let (code, stdout, stderr) = penumbra(&dir, &["run", "scripts/w.luau"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("0.3\t0.30000000000000004\t7\n"),
        "{stdout}"
    );
    assert!(stdout.contains("done"), "{stdout}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("scripts/w.luau:5: warning: desc.direction: {0, 1, 0} points up"),
        "{stderr}"
    );
}

/// `--watch` runs the script, then again when it (or a module it requires) changes: the second
/// run's output arrives after the edit, in a fresh state. Every wait is bounded.
#[test]
fn watch_reruns_the_script_when_it_or_a_module_changes() {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;
    use std::time::Duration;
    let dir = scene(
        "watch",
        "w.luau",
        "local m = require('./part')\nprint('run', m.value, leaked)\nleaked = 'yes'\n",
    );
    std::fs::write(dir.join("scripts/part.luau"), "return {value = 1}\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_penumbra"))
        .current_dir(&dir)
        .args(["run", "scripts/w.luau", "--watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run penumbra");
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let mut wait_for = |want: &str| -> bool {
        let end = std::time::Instant::now() + Duration::from_secs(30);
        while let Some(left) = end.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.contains(want);
                    seen.push(line);
                    if hit {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    };
    let first = wait_for("run\t1\tnil") && wait_for("ran in");
    // Let the watch start before the edit.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(dir.join("scripts/part.luau"), "return {value = 2}\n").unwrap();
    let second = first && wait_for("run\t2\tnil");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(
        dir.join("scripts/w.luau"),
        "print('edited')\nerror('on purpose')\n",
    )
    .unwrap();
    let third = second && wait_for("edited") && wait_for("failed after");
    let _ = child.kill();
    let _ = child.wait();
    assert!(first, "no first run: {seen:?}");
    assert!(second, "no run after the module changed: {seen:?}");
    assert!(third, "no run after the script changed: {seen:?}");
    assert!(
        seen.iter().any(|l| l.contains("w.luau:2: on purpose")),
        "{seen:?}"
    );
}

/// `penumbra demo --write-level` writes the courtyard as a .glb; `penumbra run --level` gives a
/// script that level as the global `level`, whose rays report the glTF node names.
#[test]
fn the_demo_level_round_trips_through_gltf_into_a_script() {
    let dir = scene(
        "level",
        "probe.luau",
        "local hit = level:raycast({5, 10, 5}, {0, -20, 0})\n\
         print(hit.occluder, hit.position.y, level.occluders, level.triangles)\n\
         local inside, name = level:isInside({0, 2, -10})\n\
         print(inside, name)\n",
    );
    let (code, stdout, stderr) =
        penumbra(&dir, &["demo", "--write-level", "scripts/courtyard.glb"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("wrote scripts/courtyard.glb (11 nodes, 132 triangles)"),
        "{stdout}"
    );
    let (code, stdout, stderr) = penumbra(
        &dir,
        &[
            "run",
            "scripts/probe.luau",
            "--level",
            "scripts/courtyard.glb",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "crate 1\t1.5\t11\t132\ntrue\tpillar 2\n");
    let (code, _, stderr) = penumbra(
        &dir,
        &["run", "scripts/probe.luau", "--level", "scripts/probe.luau"],
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("expected a .gltf, .glb or .obj file"),
        "{stderr}"
    );
}
