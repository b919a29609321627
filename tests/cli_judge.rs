//! `penumbra judge` as a tools programmer runs it on results dumped from their GPU: a conformant
//! file exits 0, one planted wrong answer exits non-zero and names the case, malformed input is
//! one line on standard error.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::penumbra;

fn data(name: &str) -> String {
    support::data_path(&format!("lavapipe-sample/{name}"))
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("penumbra-cli-judge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(name: &str) -> Value {
    support::data_json(&format!("lavapipe-sample/{name}"))
}

/// The last line of standard output: the totals.
fn totals(stdout: &str) -> &str {
    stdout.lines().last().unwrap_or("")
}

#[test]
fn the_h200s_answers_are_conformant_under_its_profile() {
    let out = temp_file("verdicts.json", "");
    let (ok, stdout, stderr) = penumbra(&[
        "judge",
        &data("cases.json"),
        &data("nvidia-results.json"),
        "--profile",
        "nvidia",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.lines().count(),
        811,
        "a line per case and the totals"
    );
    assert!(
        totals(&stdout)
            .starts_with("810 cases, profile nvidia: 726 exact, 71 within tolerance, 13 explained"),
        "{}",
        totals(&stdout)
    );
    assert!(totals(&stdout).ends_with("0 not compared, 0 non-conformant"));
    let verdicts: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(verdicts["summary"]["non_conformant"], 0);
    assert_eq!(verdicts["summary"]["explained"]["nv-cube-lod"], 3);
    assert_eq!(verdicts["cases"].as_array().unwrap().len(), 810);
    assert_eq!(
        verdicts["cases"][660]["reason"],
        "nv-cube-corner-gather-8bit"
    );
}

#[test]
fn the_d3d_models_answers_are_exact_and_lavapipes_explained() {
    let (ok, stdout, stderr) = penumbra(&[
        "judge",
        &data("cases.json"),
        &data("d3d-expected.json"),
        "--summary",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout,
        "810 cases, profile d3d: 810 exact, 0 within tolerance, 0 explained, 0 not compared, 0 non-conformant\n"
    );
    let (ok, stdout, stderr) = penumbra(&[
        "judge",
        &data("cases.json"),
        &data("lavapipe-results.json"),
        "--profile",
        "lavapipe",
        "--summary",
    ]);
    assert!(ok, "{stderr}");
    assert!(totals(&stdout).ends_with(" 0 non-conformant"), "{stdout}");
}

#[test]
fn one_planted_wrong_answer_fails_and_is_named() {
    let mut results = load("d3d-expected.json");
    // Case 20: 4096 ulps more in its first component (well past SPEC §3.3's f32 slack).
    let bits = results["results"][20]["bits"][0].as_str().unwrap();
    let x = u32::from_str_radix(&bits[2..], 16).unwrap() + 4096;
    results["results"][20]["bits"][0] = format!("0x{x:08x}").into();
    results["results"][20]["result"][0] = f64::from(f32::from_bits(x)).into();
    let planted = temp_file("planted.json", &results.to_string());
    let (ok, stdout, stderr) = penumbra(&[
        "judge",
        &data("cases.json"),
        planted.to_str().unwrap(),
        "--summary",
    ]);
    assert!(!ok);
    let id = results["results"][20]["id"].as_str().unwrap();
    assert!(
        stdout.contains(&format!("20 {id}: NON-CONFORMANT")),
        "{stdout}"
    );
    assert!(stdout.contains("ulps     [4096, 0, 0, 0]"), "{stdout}");
    assert!(stdout.contains("rule     SPEC §3.3"), "{stdout}");
    assert!(totals(&stdout).ends_with(" 1 non-conformant"));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("case 20 ({id})")), "{stderr}");
}

#[test]
fn malformed_input_is_one_line_on_stderr() {
    let cases = data("cases.json");
    let mut short = load("d3d-expected.json");
    short["results"].as_array_mut().unwrap().pop();
    let mut bad_bits = load("d3d-expected.json");
    bad_bits["results"][3]["bits"][0] = "0xZZ".into();
    let files = [
        ("not JSON", temp_file("broken.json", "{\"results\": [")),
        ("results for", temp_file("short.json", &short.to_string())),
        (
            "bits \"0xZZ\"",
            temp_file("bits.json", &bad_bits.to_string()),
        ),
        ("no \"results\" array", temp_file("empty.json", "{}")),
    ];
    for (what, path) in &files {
        let (ok, stdout, stderr) = penumbra(&["judge", &cases, path.to_str().unwrap()]);
        assert!(!ok, "{what}");
        assert!(stdout.is_empty(), "{what}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
        assert!(
            stderr.starts_with("penumbra: ") && stderr.contains(what),
            "{what}: {stderr}"
        );
    }
    let (ok, _, stderr) = penumbra(&["judge", &cases, &cases, "--profile", "amd"]);
    assert!(!ok);
    assert!(
        stderr.contains("expected d3d, lavapipe or nvidia"),
        "{stderr}"
    );
    let (ok, _, stderr) = penumbra(&["judge", "/nonexistent.json", &cases]);
    assert!(
        !ok && stderr.contains("cannot read /nonexistent.json"),
        "{stderr}"
    );
}
