//! `penumbra sample` as a user runs it: results per case, per-case errors that name the rule, and
//! one clear line plus a non-zero exit for a file that cannot be read.

mod support;

use support::penumbra;

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("penumbra-cli-sample-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const CASES: &str = r#"{
  "textures": [{"id": "d", "dimension": "2D", "format": "D16_UNORM", "width": 2, "height": 2,
                "data": [[0, 32768, "0x8000", 65535]]}],
  "cases": [
    {"id": "pcf", "texture": "d", "op": "sample_c_lz", "coord": [0.5, 0.5], "ref": 0.5,
     "sampler": {"Filter": 148, "ComparisonFunc": "EQUAL"}},
    {"id": "bad-filter", "texture": "d", "op": "sample_c_lz", "coord": [0.5, 0.5], "ref": 0.5,
     "sampler": {"Filter": 2, "ComparisonFunc": 4}},
    {"id": "pairing", "texture": "d", "op": "sample_l", "coord": [0.5, 0.5], "lod": 0,
     "sampler": {"Filter": "COMPARISON_MIN_MAG_MIP_POINT", "ComparisonFunc": 4}},
    {"id": "unbound", "texture": null, "op": "sample_l", "coord": [0.5, 0.5], "lod": 0,
     "sampler": {"Filter": "MIN_MAG_MIP_POINT"}},
    {"id": "nan", "texture": "d", "op": "sample_c_lz", "coord": ["NaN", "-Inf"], "ref": "NaN",
     "sampler": {"Filter": "COMPARISON_MIN_MAG_MIP_POINT", "ComparisonFunc": "LESS_EQUAL"}}
  ]
}"#;

#[test]
fn sample_writes_one_result_per_case_and_names_rules_in_errors() {
    let input = temp_file("cases.json", CASES);
    let output = input.with_file_name("results.json");
    let (ok, _, stderr) = penumbra(&[
        "sample",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let out: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let r = &out["results"];
    assert_eq!(out["summary"]["ok"], 3);
    assert_eq!(out["summary"]["error"], 2);
    // R84: 32768 codes equal the quantized reference 0.5 (two of the four texels).
    assert_eq!(r[0]["result"][0], 0.5);
    assert_eq!(r[0]["bits"][0], "0x3f000000");
    assert!(r[1]["reason"].as_str().unwrap().contains("R7"), "{}", r[1]);
    assert!(r[2]["reason"].as_str().unwrap().contains("R17"), "{}", r[2]);
    assert_eq!(r[3]["result"], serde_json::json!([0.0, 0.0, 0.0, 0.0])); // R107
    // R84, R110: a NaN D16 reference quantizes to 0 and passes LESS_EQUAL; NaN coordinates read texel 0.
    assert_eq!(r[4]["result"][0], 1.0);
}

#[test]
fn sample_prints_to_stdout_without_an_output_file() {
    let input = temp_file("stdout.json", CASES);
    let (ok, stdout, _) = penumbra(&["sample", input.to_str().unwrap()]);
    assert!(ok);
    assert!(stdout.contains("\"engine\""));
}

#[test]
fn malformed_files_are_one_clear_line_and_a_failure() {
    for (name, text, needle) in [
        ("broken.json", "{ \"textures\": [", "not valid JSON"),
        ("shape.json", "[1, 2]", "top level"),
        (
            "short.json",
            r#"{"textures": [{"dimension": "2D", "format": "R8_UNORM", "width": 2, "height": 2, "data": [[1, 2, 3]]}], "cases": []}"#,
            "has 3 values",
        ),
    ] {
        let path = temp_file(name, text);
        let (ok, _, stderr) = penumbra(&["sample", path.to_str().unwrap()]);
        assert!(!ok, "{name} should fail");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let (ok, _, stderr) = penumbra(&["sample", "/nonexistent/cases.json"]);
    assert!(!ok);
    assert!(stderr.contains("cannot read"), "{stderr}");
}
