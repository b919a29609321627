//! The subcommands of the `penumbra` command, one module each.

pub mod demo;
pub mod judge;
pub mod limits;
pub mod match_cmd;
pub mod output;
pub mod run;
pub mod sample;

/// `text` with control characters (terminal escape sequences among them) written as `\u{..}`
/// escapes, so a message that quotes input cannot drive the terminal; newlines and tabs stay.
#[must_use]
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
