//! Unit tests of the case-file reader and writer.

use super::*;

#[test]
fn decimals_are_rounded_to_f32_once() {
    // Just above the midpoint between 1 and 1 + 2^-23: one rounding goes up; rounding to f64
    // first would land exactly on the midpoint and then tie to even (1.0).
    let v = Json::parse("[1.0000000596046447753906250001, 0.1, -2e-3]").unwrap();
    let v = v.as_array().unwrap();
    assert_eq!(parse_f32(&v[0], "x").unwrap(), 1.0 + f32::EPSILON);
    assert_eq!(parse_f32(&v[1], "x").unwrap(), 0.1f32);
    assert_eq!(parse_f32(&v[2], "x").unwrap(), -2e-3f32);
}

#[test]
fn ids_echo_exactly_and_duplicate_texture_ids_are_refused() {
    let text =
        r#"{"textures": [], "cases": [{"id": 1e999}, {"id": "a\"b"}, {"id": [1, 2.50]}, {}]}"#;
    let file = CaseFile::parse(text).unwrap();
    let mut out = Vec::new();
    file.evaluate_all().unwrap().write(&mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(r#""id": 1e999,"#), "{out}");
    assert!(out.contains(r#""id": "a\"b","#), "{out}");
    assert!(out.contains(r#""id": [1, 2.50],"#), "{out}");
    assert!(out.contains(r#""id": null,"#), "{out}");
    let parsed: serde_json::Value =
        serde_json::from_str(&out.replace("1e999", "\"1e999\"")).unwrap();
    assert_eq!(parsed["summary"]["error"], 4);

    let dup = r#"{"textures": [
        {"id": "d", "dimension": "2D", "format": "R8_UNORM", "data": [[0]]},
        {"id": "d", "dimension": "2D", "format": "R8_UNORM", "data": [[1]]}], "cases": []}"#;
    let err = CaseFile::parse(dup).err().unwrap().to_string();
    assert_eq!(
        err,
        "textures 0 and 1 both have the id \"d\"; ids must be unique"
    );
}
