//! The lavapipe-sample case file (810 cases over 2D, 2D arrays and cubes of six formats) against
//! the answers of an independent D3D12 model written from SPEC.md: every result must agree bit for
//! bit (SPEC §3.2). The data is a copy of `conformance/lavapipe-sample/` from the project's
//! shared folder, kept under `tests/data/`.

mod support;

use serde_json::Value;

fn load(name: &str) -> Value {
    support::data_json(&format!("lavapipe-sample/{name}"))
}

#[test]
fn every_case_matches_the_independent_d3d_model_bit_for_bit() {
    let cases = load("cases.json");
    let expected = load("d3d-expected.json");
    let file = penumbra::cases::CaseFile::parse(&cases.to_string()).expect("case file parses");
    let got = file.run();
    let (got, expected) = (
        got["results"].as_array().unwrap(),
        expected["results"].as_array().unwrap(),
    );
    assert_eq!(got.len(), expected.len());
    let mut mismatches = Vec::new();
    for (g, e) in got.iter().zip(expected) {
        if g["status"] != e["status"] || g["bits"] != e["bits"] {
            mismatches.push(format!(
                "case {} ({}): expected {} {}, got {} {}",
                e["index"],
                e["id"],
                e["result"],
                e["bits"],
                g["result"],
                g.get("bits").or(g.get("reason")).unwrap_or(&Value::Null)
            ));
        }
    }
    println!(
        "d3d model: {} of {} cases bit-exact",
        got.len() - mismatches.len(),
        got.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
