//! Tracy zones with names known only at run time (script files, `penumbra.zone` names). The
//! engine's `zone!` macro takes literals; these allocate their source location instead. Without
//! the `tracy` feature everything here is empty.

/// An open zone; it closes when dropped.
#[cfg(feature = "tracy")]
pub(crate) struct Span {
    _zone: Option<tracy_client::Span>,
}

/// An open zone; it closes when dropped.
#[cfg(not(feature = "tracy"))]
pub(crate) struct Span;

/// Opens a zone `name` for `function` at `file:line` while a Tracy client runs.
#[cfg(feature = "tracy")]
pub(crate) fn span(name: &str, function: &str, file: &str, line: u32) -> Span {
    Span {
        _zone: tracy_client::Client::running()
            .map(|client| client.span_alloc(Some(name), function, file, line, 0)),
    }
}

/// Opens a zone `name` for `function` at `file:line` while a Tracy client runs.
#[cfg(not(feature = "tracy"))]
pub(crate) fn span(_name: &str, _function: &str, _file: &str, _line: u32) -> Span {
    Span
}
