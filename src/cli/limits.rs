//! The limits the subcommands share: `--timeout` (every command that does work of a size the
//! input decides) and `--max-memory`.

use std::time::{Duration, Instant};

/// A `--timeout`: seconds, or none (`inf`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeout(pub Option<Duration>);

impl Timeout {
    /// Runs `f` under the deadline (see `penumbra_core::deadline`).
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        let deadline = self.0.and_then(|t| Instant::now().checked_add(t));
        penumbra_core::deadline::with_deadline(deadline, f)
    }

    /// The message of a command stopped by its deadline.
    pub fn exceeded(self) -> String {
        match self.0 {
            Some(t) => format!(
                "stopped after --timeout {} s (raise it, or pass --timeout inf for no limit)",
                t.as_secs_f64()
            ),
            None => "stopped".into(),
        }
    }
}

/// Parses `--timeout`: a number of seconds > 0, as large as you like (`1e300` means no limit
/// in practice), or `inf`/`none` for no limit.
pub fn parse_timeout(text: &str) -> Result<Timeout, String> {
    if matches!(text, "inf" | "infinity" | "none") {
        return Ok(Timeout(None));
    }
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds (or \"inf\")"))?;
    if secs.is_nan() || secs <= 0.0 {
        return Err(format!(
            "{text}: expected a number of seconds > 0 (or \"inf\" for no limit)"
        ));
    }
    // Past what a Duration holds (about 585 billion years) is no limit.
    Ok(Timeout(Duration::try_from_secs_f64(secs).ok()))
}

/// Parses `--max-memory`: megabytes > 0; more than the address space means no limit of ours.
pub fn parse_megabytes(text: &str) -> Result<usize, String> {
    let mb: u64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number of megabytes"))?;
    if mb == 0 {
        return Err("expected a number of megabytes > 0".into());
    }
    Ok(usize::try_from(mb)
        .ok()
        .and_then(|mb| mb.checked_mul(1 << 20))
        .unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_take_huge_and_infinite_values_and_refuse_the_rest() {
        assert_eq!(
            parse_timeout("2.5").unwrap(),
            Timeout(Some(Duration::from_millis(2500)))
        );
        assert_eq!(parse_timeout("inf").unwrap(), Timeout(None));
        assert_eq!(parse_timeout("1e300").unwrap(), Timeout(None));
        for bad in ["0", "-1", "NaN", "soon", ""] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_megabytes("16").unwrap(), 16 << 20);
        assert_eq!(parse_megabytes("18446744073709551615").unwrap(), usize::MAX);
        assert!(parse_megabytes("0").is_err());
    }
}
