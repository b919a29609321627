//! Buffers: the GLB's BIN chunk, base64 `data:` URIs and external files through the caller's
//! callback, each loaded once and counted against
//! [`GltfLimits::max_bytes`](super::GltfLimits::max_bytes).

use std::borrow::Cow;

use super::{GltfError, Reader, buffer_error, invalid, label, limit, unsupported};

impl Reader<'_, '_> {
    /// Loads buffer `b` (once).
    pub(super) fn load(&mut self, b: usize) -> Result<(), GltfError> {
        if self.buffers[b].is_some() {
            return Ok(());
        }
        let buffer = &self.root.buffers[b];
        let part = label("buffer", b, buffer.name.as_deref());
        let declared = buffer.byte_length.0;
        let room = self.limits.max_bytes.saturating_sub(self.bytes_used);
        let over = |n: u64| {
            limit(
                part.clone(),
                format!(
                    "{n} more bytes would pass the limit of {} bytes for the file and its \
                     buffers (GltfLimits::max_bytes)",
                    self.limits.max_bytes
                ),
            )
        };
        if declared > room {
            return Err(over(declared));
        }
        let (data, owned): (Cow<'_, [u8]>, bool) = match &buffer.uri {
            None => match self.bin {
                Some(bin) if b == 0 => (Cow::Borrowed(bin), false),
                _ if self.glb && b == 0 => {
                    return Err(buffer_error(
                        part,
                        "has no uri and the GLB has no BIN chunk",
                    ));
                }
                _ => {
                    return Err(buffer_error(
                        part,
                        if self.glb {
                            "has no uri (only buffer 0 can be the GLB's BIN chunk)"
                        } else {
                            "has no uri (a .gltf buffer needs one)"
                        },
                    ));
                }
            },
            Some(uri)
                if uri
                    .as_bytes()
                    .get(..5)
                    .is_some_and(|head| head.eq_ignore_ascii_case(b"data:")) =>
            {
                let Some(comma) = uri.find(',') else {
                    return Err(buffer_error(part, "its data: URI has no ','"));
                };
                let header = &uri[5..comma];
                if !header.to_ascii_lowercase().ends_with(";base64") {
                    return Err(unsupported(
                        part,
                        "only base64 data: URIs are read (the URI has no ;base64)",
                    ));
                }
                let payload = &uri.as_bytes()[comma + 1..];
                let decoded_max = (payload.len() as u64).div_ceil(4) * 3;
                if decoded_max > room {
                    return Err(over(decoded_max));
                }
                let data = decode_base64(payload)
                    .map_err(|e| buffer_error(part.clone(), format!("its data: URI: {e}")))?;
                (Cow::Owned(data), true)
            }
            Some(uri) => {
                let shown: String = uri.chars().take(80).collect();
                if has_scheme(uri) {
                    return Err(unsupported(
                        part,
                        format!("uri {shown:?} is neither a relative path nor a data: URI"),
                    ));
                }
                let path = percent_decode(uri)
                    .map_err(|e| invalid(part.clone(), format!("uri {shown:?}: {e}")))?;
                let data = (self.load_buffer)(&path).map_err(|e| {
                    buffer_error(part.clone(), format!("could not load {path:?}: {e}"))
                })?;
                (Cow::Owned(data), true)
            }
        };
        let len = data.len() as u64;
        if owned && len > room {
            return Err(over(len));
        }
        if len < declared {
            return Err(buffer_error(
                part,
                format!("holds {len} bytes, fewer than its byteLength {declared}"),
            ));
        }
        if owned {
            self.bytes_used += len;
        }
        let declared = declared as usize;
        let data = match data {
            Cow::Borrowed(d) => Cow::Borrowed(&d[..declared]),
            Cow::Owned(mut d) => {
                d.truncate(declared);
                Cow::Owned(d)
            }
        };
        self.buffers[b] = Some(data);
        Ok(())
    }
}

/// Whether `uri` starts with a URI scheme (`http:`, `file:`, ...): letters, digits, `+`, `-`,
/// `.` after a first letter, then `:`. One letter before the colon is a Windows drive, not a
/// scheme.
pub(super) fn has_scheme(uri: &str) -> bool {
    let Some(colon) = uri.find(':') else {
        return false;
    };
    let scheme = &uri[..colon];
    scheme.len() >= 2
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `%XX` escapes decoded (the result must be UTF-8).
pub(super) fn percent_decode(uri: &str) -> Result<String, String> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] == b'%' {
            let hex = bytes
                .get(k + 1..k + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("'%' at byte {k} is not followed by two hex digits"))?;
            out.push(hex);
            k += 3;
        } else {
            out.push(bytes[k]);
            k += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "its %-escapes do not decode to UTF-8".to_owned())
}

/// Standard (or URL-safe) base64, padding optional.
pub(super) fn decode_base64(text: &[u8]) -> Result<Vec<u8>, String> {
    let body = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    if body.len() % 4 == 1 {
        return Err(format!(
            "{} base64 characters: one too many for whole bytes",
            body.len()
        ));
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    let mut acc = 0u32;
    let mut bits = 0;
    for (k, &c) in body.iter().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => {
                return Err(format!(
                    "byte {k} of the base64 text ({:?}) is not base64",
                    char::from(c)
                ));
            }
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}
