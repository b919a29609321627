//! The crate's errors: [`LuaSetupError`] when a runtime cannot be built, [`ScriptError`] when a
//! script fails, and the internal [`ApiError`] an API function raises into Lua — located at the
//! calling script line ([`located_error`], [`caller_location`]) and naming the values it got
//! ([`describe`]).

use std::fmt;
use std::path::PathBuf;

use mlua::{Lua, Value};

/// Why a [`Runtime`](crate::Runtime) could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LuaSetupError {
    /// The script root does not exist or cannot be resolved.
    #[error("script root {}: {source}", path.display())]
    Root {
        /// The root as given.
        path: PathBuf,
        /// Why it cannot be resolved.
        source: std::io::Error,
    },
    /// The script root is not a folder.
    #[error("script root {} is not a folder", .0.display())]
    RootNotFolder(PathBuf),
    /// A limit is unusable (a zero timeout, a memory limit smaller than a bare Lua state).
    #[error("{0}")]
    Limit(String),
    /// mlua refused a setup step.
    #[error("setting up the Lua state failed: {0}")]
    Lua(String),
}

/// What kind of failure ended a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScriptErrorKind {
    /// The script (or a module it requires) does not parse.
    Syntax,
    /// A Lua error: raised by the script, by Lua itself or by a `penumbra` function.
    Runtime,
    /// The script ran past its deadline.
    Timeout,
    /// The script's Lua heap reached its memory limit.
    Memory,
    /// The script file itself could not be read (or lies outside the root).
    Io,
    /// The script's `print` could not write to standard output (a full disk, say).
    Output,
    /// Standard output was closed under the script's `print` (the reader of a pipe went away).
    OutputClosed,
}

/// A script that failed: what kind of failure, where (file and line when known) and why, in one
/// line. `Display` prints `file:line: message`, the form the `penumbra run` command reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScriptError {
    /// The kind of failure.
    pub kind: ScriptErrorKind,
    /// The script file the error points at, as its chunk is named (`scripts/level1.luau`).
    pub file: Option<String>,
    /// The line in `file`.
    pub line: Option<u32>,
    /// What went wrong, one line, without the location.
    pub message: String,
    /// The Lua stack traceback, when Lua produced one.
    pub traceback: Option<String>,
}

impl ScriptError {
    /// An error without Lua involvement (the script file cannot be read).
    pub(crate) fn io(file: &str, message: impl Into<String>) -> Self {
        Self {
            kind: ScriptErrorKind::Io,
            file: Some(file.to_owned()),
            line: None,
            message: message.into(),
            traceback: None,
        }
    }

    /// Classifies an mlua error of the script whose chunk is named `script` (used as the file
    /// when the error itself carries no location); `max_memory` is named in memory errors.
    pub(crate) fn from_lua(err: &mlua::Error, script: &str, max_memory: usize) -> Self {
        let mut cause = err;
        let mut traceback = None;
        loop {
            match cause {
                mlua::Error::CallbackError {
                    cause: inner,
                    traceback: tb,
                } => {
                    if traceback.is_none() && !tb.is_empty() {
                        traceback = Some(tb.clone());
                    }
                    cause = inner;
                }
                mlua::Error::WithContext { cause: inner, .. } => cause = inner,
                _ => break,
            }
        }
        if let Some(api) = cause.downcast_ref::<ApiError>() {
            return Self {
                kind: api.kind,
                file: api.file.clone().or_else(|| Some(script.to_owned())),
                line: api.line,
                message: api.message.clone(),
                traceback,
            };
        }
        let (kind, text) = match cause {
            mlua::Error::SyntaxError { message, .. } => (ScriptErrorKind::Syntax, message.clone()),
            mlua::Error::RuntimeError(message) => (ScriptErrorKind::Runtime, message.clone()),
            mlua::Error::MemoryError(message) => {
                return Self {
                    kind: ScriptErrorKind::Memory,
                    file: Some(script.to_owned()),
                    line: None,
                    message: format!(
                        "{}: the script needs more than its memory limit of {}",
                        first_line(message),
                        megabytes(max_memory)
                    ),
                    traceback,
                };
            }
            other => (ScriptErrorKind::Runtime, other.to_string()),
        };
        let (head, rest) = text.split_once('\n').unwrap_or((&text, ""));
        if traceback.is_none() && rest.contains("stack traceback") {
            traceback = Some(rest.trim().to_owned());
        }
        let (file, line, message) = split_location(head);
        Self {
            kind,
            file: file.or_else(|| Some(script.to_owned())),
            line,
            message,
            traceback,
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ScriptError {}

/// An error a `penumbra` function raises into Lua: already located at the calling script line,
/// already prefixed with the function's name. Its `Display` is the one line a script sees.
#[derive(Clone, Debug)]
pub(crate) struct ApiError {
    pub kind: ScriptErrorKind,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub message: String,
}

impl ApiError {
    /// A runtime error of `file` with no line (raised before its code runs).
    pub(crate) fn at(file: &str, message: String) -> Self {
        Self {
            kind: ScriptErrorKind::Runtime,
            file: Some(file.to_owned()),
            line: None,
            message,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ApiError {}

/// An error raised into Lua at the calling script line.
pub(crate) fn located_error(lua: &Lua, kind: ScriptErrorKind, message: String) -> mlua::Error {
    let (file, line) = caller_location(lua).unzip();
    mlua::Error::external(ApiError {
        kind,
        file,
        line,
        message,
    })
}

/// The first Lua line on the stack (the script line that called into Rust, or the line an
/// interrupt stopped at).
pub(crate) fn caller_location(lua: &Lua) -> Option<(String, u32)> {
    for level in 0..32 {
        let found = lua.inspect_stack(level, |debug| {
            let line = debug.current_line()?;
            let source = debug.source();
            if is_internal_chunk(source.source.as_deref()) {
                return None;
            }
            // The full chunk name: `short_src` is cut to 60 bytes by Lua 5.4.
            let file = match source.source.as_deref().and_then(|s| s.strip_prefix('@')) {
                Some(file) => file.to_owned(),
                None => source.short_src?.into_owned(),
            };
            Some((file, u32::try_from(line).unwrap_or(u32::MAX)))
        })?;
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The chunk name (`@scripts/a.luau`) of the first Lua function on the stack.
pub(crate) fn caller_chunk(lua: &Lua) -> Option<String> {
    for level in 0..32 {
        let found = lua.inspect_stack(level, |debug| {
            debug.current_line()?;
            let source = debug.source().source?.into_owned();
            (!is_internal_chunk(Some(&source))).then_some(source)
        })?;
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Chunks that are not the script's: the sandbox's own Lua code and mlua's generated
/// `__index`/`__newindex` dispatchers (through which the did-you-mean errors are raised).
fn is_internal_chunk(source: Option<&str>) -> bool {
    source.is_some_and(|s| s == crate::sandbox::SANDBOX_CHUNK || s.starts_with("=__mlua"))
}

/// How a value is named in messages: `nil`, `a number`, `a Texture`, `an Eye`, ...
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Integer(i) => format!("the number {i}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => match s.to_str() {
            Ok(s) if s.len() <= 40 => format!("the string {:?}", &*s),
            _ => "a string".into(),
        },
        Value::Table(_) => "a table".into(),
        Value::Function(_) => "a function".into(),
        Value::UserData(ud) => match crate::api::type_name(ud) {
            Some(name) if name.starts_with(['A', 'E', 'I', 'O', 'U']) => format!("an {name}"),
            Some(name) => format!("a {name}"),
            None => "a userdata".into(),
        },
        #[cfg(feature = "luau")]
        Value::Vector(_) => "a vector".into(),
        other => format!("a {}", other.type_name()),
    }
}

/// `256 MB`, or the byte count when it is not a whole number of megabytes.
pub(crate) fn megabytes(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Splits `file:line: message` (the form Lua prefixes to errors) into its parts; text without
/// such a prefix is all message.
fn split_location(text: &str) -> (Option<String>, Option<u32>, String) {
    let bytes = text.as_bytes();
    for (colon, _) in text.match_indices(':') {
        let digits = bytes[colon + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if colon == 0 || digits == 0 {
            continue;
        }
        let after = colon + 1 + digits;
        if text[after..].starts_with(':')
            && let Ok(line) = text[colon + 1..after].parse()
        {
            let message = text[after + 1..].trim_start().to_owned();
            return (Some(text[..colon].to_owned()), Some(line), message);
        }
    }
    (None, None, text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_locations_split_into_file_line_and_message() {
        assert_eq!(
            split_location("scripts/a.luau:12: attempt to call a nil value"),
            (
                Some("scripts/a.luau".into()),
                Some(12),
                "attempt to call a nil value".into()
            )
        );
        assert_eq!(
            split_location("no location here: 3 apples"),
            (None, None, "no location here: 3 apples".into())
        );
    }
}
