//! The JSON case reader of `penumbra::cases` (the input of `penumbra sample`): any text, valid
//! JSON or not, is parsed and every case is run. No panic, no abort on allocation; the output
//! document always serializes, and it has one result per case.
#![no_main]

use libfuzzer_sys::fuzz_target;
use penumbra::cases::{CaseFile, quote_numbers};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = quote_numbers(&text);
    match CaseFile::parse(&text) {
        Ok(file) => {
            let out = file.run();
            assert_eq!(
                out["results"].as_array().map(Vec::len),
                Some(file.len()),
                "one result per case"
            );
            let printed = serde_json::to_string(&out).expect("the output serializes");
            assert!(!printed.is_empty());
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
