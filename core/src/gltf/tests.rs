use super::buffer::{decode_base64, has_scheme, percent_decode};
use super::*;

#[test]
fn base64_decodes_with_and_without_padding() {
    assert_eq!(decode_base64(b"aGVsbG8=").unwrap(), b"hello");
    assert_eq!(decode_base64(b"aGVsbG8").unwrap(), b"hello");
    assert_eq!(decode_base64(b"aGVsbA==").unwrap(), b"hell");
    assert_eq!(decode_base64(b"").unwrap(), b"");
    assert_eq!(decode_base64(b"_-8=").unwrap(), [0xff, 0xef]);
    assert!(decode_base64(b"aGV").is_ok());
    assert!(
        decode_base64(b"aGVsb")
            .unwrap_err()
            .contains("one too many")
    );
    assert!(decode_base64(b"aG*s").unwrap_err().contains("byte 2"));
}

#[test]
fn uris_with_a_scheme_and_escapes() {
    assert!(has_scheme("http://example.com/a.bin"));
    assert!(has_scheme("file:a.bin"));
    assert!(!has_scheme("C:/levels/a.bin"));
    assert!(!has_scheme("a.bin"));
    assert!(!has_scheme("dir/a:b.bin"));
    assert_eq!(percent_decode("my%20level.bin").unwrap(), "my level.bin");
    assert!(percent_decode("bad%2").is_err());
    assert!(percent_decode("bad%ff").is_err());
}

#[test]
fn names_in_messages_are_shortened() {
    let long = "x".repeat(100);
    let shown = label("mesh", 2, Some(&long));
    assert!(shown.starts_with("mesh 2 \"xxx"));
    assert!(shown.ends_with("…\""));
    assert!(shown.chars().count() < 70);
    assert_eq!(label("node", 1, None), "node 1");
}
