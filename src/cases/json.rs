//! The JSON reader of case files: strict (serde_json's conforming parser, duplicate keys
//! refused) and exact (every number keeps its decimal text, so it is rounded to f32 once).
//!
//! The document is checked in one pass by serde_json while each value is captured as a
//! [`RawValue`] borrowed from the input: syntax errors carry their true `line:column`, and no
//! tree of the whole file is built. A [`Json`] tree is built only for what is small — one case,
//! one texture's fields — and a texture's `data` is streamed straight into texel bytes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON value whose numbers keep their text.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written (`1.0000000596046447753906250001`, `1e999`).
    Number(Cow<'a, str>),
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object, in file order (keys are unique: duplicates are refused).
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

static NULL: Json<'static> = Json::Null;

impl<'a> Json<'a> {
    /// Parses a whole document.
    ///
    /// # Errors
    /// A syntax error (with its line and column), a duplicate key (named, with its position),
    /// or text after the value.
    pub fn parse(text: &'a str) -> Result<Json<'a>, JsonError> {
        let raw: &RawValue = serde_json::from_str(text).map_err(JsonError::Syntax)?;
        Json::from_raw(raw, text)
    }

    /// The tree of a value captured from `source` (a checked document, so only duplicate keys
    /// can fail).
    pub(crate) fn from_raw(raw: &'a RawValue, source: &'a str) -> Result<Json<'a>, JsonError> {
        let text = raw.get().trim_start();
        // Each level re-reads its own text (up to serde_json's 128 levels): a deep, large value
        // is bounded by the deadline in force.
        if matches!(text.as_bytes().first(), Some(b'{' | b'['))
            && penumbra_core::deadline::expired()
        {
            return Err(JsonError::Interrupted);
        }
        Ok(match text.as_bytes().first() {
            Some(b'{') => {
                let entries = object_entries(raw, source)?;
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    out.push((k, Json::from_raw(v, source)?));
                }
                Json::Object(out)
            }
            Some(b'[') => {
                let items: Vec<&RawValue> =
                    serde_json::from_str(raw.get()).map_err(JsonError::Content)?;
                let mut out = Vec::with_capacity(items.len());
                for v in items {
                    out.push(Json::from_raw(v, source)?);
                }
                Json::Array(out)
            }
            Some(b'"') => {
                Json::String(serde_json::from_str(raw.get()).map_err(JsonError::Content)?)
            }
            Some(b't') => Json::Bool(true),
            Some(b'f') => Json::Bool(false),
            Some(b'n') => Json::Null,
            _ => Json::Number(Cow::Borrowed(text.trim_end())),
        })
    }

    /// The value at `key` of an object (`None` for a missing key or a non-object).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The entries of an object.
    #[must_use]
    pub fn as_object(&self) -> Option<&[(Cow<'a, str>, Json<'a>)]> {
        match self {
            Json::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The items of an array.
    #[must_use]
    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text of a string.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The text of a number.
    #[must_use]
    pub fn number_text(&self) -> Option<&str> {
        match self {
            Json::Number(t) => Some(t),
            _ => None,
        }
    }

    /// Whether this is `null`.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// An owned copy (no borrow of the input).
    #[must_use]
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Number(t) => Json::Number(Cow::Owned(t.into_owned())),
            Json::String(s) => Json::String(Cow::Owned(s.into_owned())),
            Json::Array(a) => Json::Array(a.into_iter().map(Json::into_owned).collect()),
            Json::Object(o) => Json::Object(
                o.into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }
}

impl<'a> std::ops::Index<&str> for Json<'a> {
    type Output = Json<'a>;

    /// The value at `key`, `null` when there is none.
    fn index(&self, key: &str) -> &Json<'a> {
        self.get(key).unwrap_or(&NULL)
    }
}

/// Conversion from a serde_json value (numbers by their shortest text), for programs that build
/// cases in memory.
impl From<&serde_json::Value> for Json<'static> {
    fn from(v: &serde_json::Value) -> Self {
        use serde_json::Value;
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(Cow::Owned(n.to_string())),
            Value::String(s) => Json::String(Cow::Owned(s.clone())),
            Value::Array(a) => Json::Array(a.iter().map(Json::from).collect()),
            Value::Object(o) => Json::Object(
                o.iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), Json::from(v)))
                    .collect(),
            ),
        }
    }
}

/// The JSON text of a value (numbers exactly as read, strings escaped; for messages and for
/// echoing ids).
impl fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Number(t) => f.write_str(t),
            Json::String(s) => {
                let quoted = serde_json::to_string(&**s).map_err(|_| fmt::Error)?;
                f.write_str(&quoted)
            }
            Json::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Json::Object(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    let key = serde_json::to_string(&**k).map_err(|_| fmt::Error)?;
                    write!(f, "{key}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Why a JSON text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// Not JSON (serde_json's message, with the line and column).
    #[error("{0}")]
    Syntax(serde_json::Error),
    /// A value of a well-formed document that cannot be read (a string with a lone UTF-16
    /// surrogate escape, `"\ud800"`, is JSON but no Unicode text).
    #[error("{0}")]
    Content(serde_json::Error),
    /// The [deadline](penumbra_core::deadline) in force passed while the value was read.
    #[error("stopped: the deadline passed while the file was read")]
    Interrupted,
    /// An object with a key twice.
    #[error("duplicate key \"{key}\" at line {line} column {column}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// Line of the object that repeats it (1-based).
        line: usize,
        /// Column of that object (1-based, in characters).
        column: usize,
    },
}

/// The `(key, raw value)` pairs of a captured object, refusing a repeated key.
pub(crate) fn object_entries<'a>(
    raw: &'a RawValue,
    source: &'a str,
) -> Result<Vec<(Cow<'a, str>, &'a RawValue)>, JsonError> {
    let Entries(entries) = serde_json::from_str(raw.get()).map_err(JsonError::Content)?;
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    for (k, _) in &entries {
        if !seen.insert(&**k) {
            let (line, column) = position(source, raw.get());
            return Err(JsonError::DuplicateKey {
                key: k.to_string(),
                line,
                column,
            });
        }
    }
    Ok(entries)
}

/// The 1-based line and column where `inner` (a slice of `source`) starts.
pub(crate) fn position(source: &str, inner: &str) -> (usize, usize) {
    let offset = (inner.as_ptr() as usize)
        .checked_sub(source.as_ptr() as usize)
        .filter(|&o| o <= source.len())
        .unwrap_or(0);
    let before = &source[..source.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// An object's entries in order, as borrowed raw values.
struct Entries<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> de::Deserialize<'de> for Entries<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    out.push((key, value));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Streams the items of a captured array to `each` (the item's raw text and index), without
/// collecting them: a texture's millions of values go straight into texel bytes.
pub(crate) fn for_each_item<'a, E>(
    raw: &'a RawValue,
    mut each: impl FnMut(usize, &'a RawValue) -> Result<(), E>,
) -> Result<Option<E>, serde_json::Error> {
    struct Seed<'f, F>(&'f mut F);
    impl<'de, 'f, F> DeserializeSeed<'de> for Seed<'f, F>
    where
        F: FnMut(&'de RawValue) -> bool,
    {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            struct V<'f, F>(&'f mut F);
            impl<'de, F: FnMut(&'de RawValue) -> bool> Visitor<'de> for V<'_, F> {
                type Value = ();
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an array")
                }
                fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
                    while let Some(item) = seq.next_element::<&'de RawValue>()? {
                        if !(self.0)(item) {
                            // Drain the rest so the parser ends cleanly.
                            while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                            break;
                        }
                    }
                    Ok(())
                }
            }
            d.deserialize_seq(V(self.0))
        }
    }
    let mut failure = None;
    let mut index = 0;
    let mut visit = |item: &'a RawValue| match each(index, item) {
        Ok(()) => {
            index += 1;
            true
        }
        Err(e) => {
            failure = Some(e);
            false
        }
    };
    let mut de = serde_json::Deserializer::from_str(raw.get());
    Seed(&mut visit).deserialize(&mut de)?;
    de.end()?;
    Ok(failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_text_and_strings_their_escapes() {
        let v = Json::parse(
            r#"{"a": [1.0000000596046447753906250001, -2e-3, 1e999], "b": "x\"y\u00e9"}"#,
        )
        .unwrap();
        let a = v["a"].as_array().unwrap();
        assert_eq!(a[0].number_text(), Some("1.0000000596046447753906250001"));
        assert_eq!(a[1].number_text(), Some("-2e-3"));
        assert_eq!(a[2].number_text(), Some("1e999"));
        assert_eq!(v["b"].as_str(), Some("x\"y\u{e9}"));
        assert_eq!(v["missing"], Json::Null);
    }

    #[test]
    fn invalid_json_is_refused_with_its_true_position() {
        for (text, line, column) in [
            (r#"{"cases": [1, 2, x]}"#, 1, 18),
            (r#"{"textures":[],"cases":[{"id":-}]}"#, 1, 32),
            ("{\n  \"id\": 01\n}", 2, 10),
            (r#"{"id": 1.2.3}"#, 1, 11),
            (r#"{"id": 1e5e5--}"#, 1, 11),
            (r#"{cases: []}"#, 1, 2),
            ("[1, 2] 3", 1, 8),
        ] {
            let err = Json::parse(text).unwrap_err();
            let JsonError::Syntax(e) = &err else {
                panic!("{text}: {err}")
            };
            assert_eq!((e.line(), e.column()), (line, column), "{text}: {err}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused_and_named() {
        let err = Json::parse("{\"cases\": [],\n \"x\": {\"id\": 1, \"id\": 2}}").unwrap_err();
        assert_eq!(err.to_string(), "duplicate key \"id\" at line 2 column 7");
    }

    #[test]
    fn arrays_stream_without_being_collected() {
        let raw: &RawValue = serde_json::from_str("[1, 2.5, \"NaN\", 4]").unwrap();
        let mut seen = Vec::new();
        let stopped = for_each_item(raw, |i, v| {
            seen.push(v.get().to_owned());
            if i == 2 { Err("third") } else { Ok(()) }
        })
        .unwrap();
        assert_eq!(stopped, Some("third"));
        assert_eq!(seen, ["1", "2.5", "\"NaN\""]);
    }
}
