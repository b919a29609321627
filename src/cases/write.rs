//! Writing the output document of the case format: as a `serde_json` value
//! ([`CaseFile::run`]) or streamed, one line per result ([`Results::write`]).

use std::io::{self, Write};

use super::{CaseFile, CaseFileError, Outcome};

impl CaseFile {
    /// Evaluates every case into the output document of the case format.
    #[must_use]
    pub fn run(&self) -> serde_json::Value {
        let mut results = Vec::new();
        let (mut ok, mut errors) = (0, 0);
        let _ = self.for_each_outcome(|i, id, outcome| -> Result<(), ()> {
            // An id that serde_json cannot hold exactly (1e999) comes back as its text.
            let id: serde_json::Value = serde_json::from_str(id)
                .ok()
                .filter(|v: &serde_json::Value| !v.is_null() || id == "null")
                .unwrap_or_else(|| serde_json::Value::String(id.to_owned()));
            results.push(match outcome {
                Outcome::Ok(values) => {
                    ok += 1;
                    serde_json::json!({
                        "index": i, "id": id, "status": "ok",
                        "result": values.iter().map(|&v| number_value(v)).collect::<Vec<_>>(),
                        "bits": values.iter().map(|v| format!("0x{:08x}", v.to_bits())).collect::<Vec<_>>(),
                    })
                }
                Outcome::Error(reason) => {
                    errors += 1;
                    let reason = reason.to_string();
                    serde_json::json!({"index": i, "id": id, "status": "error", "reason": reason})
                }
            });
            Ok(())
        });
        serde_json::json!({
            "engine": {"name": "penumbra", "version": env!("CARGO_PKG_VERSION")},
            "summary": {"ok": ok, "error": errors},
            "results": results,
        })
    }
}

/// Every case's outcome, in file order, with its id as written ([`CaseFile::evaluate_all`]).
pub struct Results {
    pub(super) outcomes: Vec<(String, Outcome)>,
}

impl Results {
    /// The numbers of ok and error cases.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        let ok = self
            .outcomes
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Ok(_)))
            .count();
        (ok, self.outcomes.len() - ok)
    }

    /// Writes the output document of the case format, one line per result (ids echoed as
    /// written).
    ///
    /// # Errors
    /// A write to `out` failed.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let (ok, errors) = self.counts();
        writeln!(
            out,
            "{{\n  \"engine\": {{\"name\": \"penumbra\", \"version\": \"{}\"}},\n  \"summary\": {{\"ok\": {ok}, \"error\": {errors}}},\n  \"results\": [",
            env!("CARGO_PKG_VERSION")
        )?;
        let n = self.outcomes.len();
        for (i, (id, outcome)) in self.outcomes.iter().enumerate() {
            write!(out, "    {{\"index\": {i}, \"id\": {id}, ")?;
            match outcome {
                Outcome::Ok(values) => {
                    let result: Vec<String> = values
                        .iter()
                        .map(|&v| number_value(v).to_string())
                        .collect();
                    let bits: Vec<String> = values
                        .iter()
                        .map(|v| format!("\"0x{:08x}\"", v.to_bits()))
                        .collect();
                    write!(
                        out,
                        "\"status\": \"ok\", \"result\": [{}], \"bits\": [{}]}}",
                        result.join(", "),
                        bits.join(", ")
                    )?;
                }
                Outcome::Error(reason) => {
                    let reason =
                        serde_json::to_string(&reason.to_string()).map_err(io::Error::other)?;
                    write!(out, "\"status\": \"error\", \"reason\": {reason}}}")?;
                }
            }
            writeln!(out, "{}", if i + 1 < n { "," } else { "" })?;
        }
        writeln!(out, "  ]\n}}")
    }
}

/// An f32 as the output format writes it: the exact decimal (shortest round trip of the widened
/// f64), or `"NaN"`, `"Inf"`, `"-Inf"`.
#[must_use]
pub fn number_value(v: f32) -> serde_json::Value {
    if v.is_nan() {
        serde_json::Value::from("NaN")
    } else if v.is_infinite() {
        serde_json::Value::from(if v > 0.0 { "Inf" } else { "-Inf" })
    } else {
        serde_json::Value::from(f64::from(v))
    }
}

/// Parses and runs a whole case file.
pub fn run_text(text: &str) -> Result<serde_json::Value, CaseFileError> {
    Ok(CaseFile::parse(text)?.run())
}
