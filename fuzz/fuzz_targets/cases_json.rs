//! The JSON case reader of `penumbra::cases` (the input of `penumbra sample`): any text, valid
//! JSON or not, is parsed and every case is run. No panic, no abort on allocation; penumbra
//! accepts exactly the JSON a conforming parser (serde_json) accepts, less duplicate keys; the
//! output document is JSON, with one result per case.
#![no_main]

use libfuzzer_sys::fuzz_target;
use penumbra::cases::{CaseFile, CaseFileError, JsonError};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // A conforming parser's verdict on the syntax (`RawValue` keeps numbers like 1e999 that
    // serde_json's own `Value` cannot hold).
    let conforming = serde_json::from_str::<&serde_json::value::RawValue>(&text).is_ok();
    match CaseFile::parse(&text) {
        Ok(file) => {
            assert!(conforming, "penumbra accepted text that is not JSON");
            let out = file.run();
            assert_eq!(
                out["results"].as_array().map(Vec::len),
                Some(file.len()),
                "one result per case"
            );
            let mut written = Vec::new();
            let results = file.evaluate_all().expect("no deadline is set");
            results.write(&mut written).expect("results are written");
            let written = String::from_utf8(written).expect("UTF-8 output");
            assert!(
                serde_json::from_str::<&serde_json::value::RawValue>(&written).is_ok(),
                "the output is JSON:\n{written}"
            );
        }
        Err(CaseFileError::Json(JsonError::Syntax(e))) => {
            assert!(!conforming, "penumbra refused valid JSON: {e}");
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
