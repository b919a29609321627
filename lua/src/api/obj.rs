//! A small Wavefront OBJ reader for occluders.
//!
//! Only geometry matters to a shadow: `v` lines give positions (extra numbers such as `w` or
//! vertex colours are ignored) and `f` lines give faces. A face lists three or more vertices,
//! each `i`, `i/t`, `i//n` or `i/t/n` (only the position index `i` is used); polygons are fanned
//! into triangles. Indices start at 1; negative ones count back from the last vertex read (`-1`
//! is the newest). A line ending in `\` continues on the next. Everything else — `vt`, `vn`,
//! `vp`, `o`, `g`, `s`, `usemtl`, `mtllib`, `l`, `p`, comments — is skipped.

use glam::Vec3;

/// Lines between two calls of the reader's `check` callback.
const CHECK_EVERY: usize = 1 << 16;

/// The geometry of an OBJ file: positions and a triangle list of 0-based indices into them.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ObjMesh {
    pub positions: Vec<Vec3>,
    pub indices: Vec<u32>,
}

/// Why a file is not an OBJ this reader takes: the (first) line at fault and what is wrong.
#[derive(Debug, PartialEq)]
pub(crate) struct ObjError {
    /// 1-based line number; `None` for problems of the whole file.
    pub line: Option<usize>,
    pub message: String,
}

impl ObjError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            message: message.into(),
        }
    }
}

/// Parses `text`. `check` is called every few thousand lines; an error from it stops the
/// reader and is returned as is (the caller's deadline).
pub(crate) fn parse<E>(
    text: &str,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<Result<ObjMesh, ObjError>, E> {
    let mut mesh = ObjMesh::default();
    let mut face = Vec::new();
    let mut logical = String::new();
    let mut start = 0;
    for (n, raw) in text.lines().enumerate() {
        let number = n + 1;
        if number.is_multiple_of(CHECK_EVERY) {
            check()?;
        }
        if logical.is_empty() {
            start = number;
        }
        let content = raw.split('#').next().unwrap_or("");
        match content.trim_end().strip_suffix('\\') {
            Some(head) => {
                logical.push_str(head);
                logical.push(' ');
                continue;
            }
            None => logical.push_str(content),
        }
        let line = std::mem::take(&mut logical);
        if let Err(e) = statement(&line, start, &mut mesh, &mut face) {
            return Ok(Err(e));
        }
    }
    if !logical.is_empty()
        && let Err(e) = statement(&logical, start, &mut mesh, &mut face)
    {
        return Ok(Err(e));
    }
    if mesh.indices.is_empty() {
        return Ok(Err(ObjError {
            line: None,
            message: format!(
                "no faces: the file has {} vertices but no `f` lines",
                mesh.positions.len()
            ),
        }));
    }
    Ok(Ok(mesh))
}

/// One logical line.
fn statement(
    line: &str,
    number: usize,
    mesh: &mut ObjMesh,
    face: &mut Vec<u32>,
) -> Result<(), ObjError> {
    let mut words = line.split_whitespace();
    match words.next() {
        Some("v") => {
            let mut xyz = [0.0f32; 3];
            for (axis, c) in ["x", "y", "z"].iter().zip(xyz.iter_mut()) {
                let word = words.next().ok_or_else(|| {
                    ObjError::at(
                        number,
                        format!("a vertex needs x, y and z; {axis} is missing"),
                    )
                })?;
                *c = word
                    .parse::<f32>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        ObjError::at(
                            number,
                            format!("vertex {axis} = {word:?} is not a finite number"),
                        )
                    })?;
            }
            if mesh.positions.len() >= u32::MAX as usize {
                return Err(ObjError::at(number, "more than 2^32 - 1 vertices"));
            }
            mesh.positions.push(Vec3::from(xyz));
        }
        Some("f") => {
            face.clear();
            for word in words {
                face.push(vertex_index(word, number, mesh.positions.len())?);
            }
            if face.len() < 3 {
                return Err(ObjError::at(
                    number,
                    format!("a face needs at least 3 vertices, got {}", face.len()),
                ));
            }
            for k in 1..face.len() - 1 {
                mesh.indices.extend([face[0], face[k], face[k + 1]]);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The 0-based position index of a face vertex (`i`, `i/t`, `i//n`, `i/t/n`).
fn vertex_index(word: &str, number: usize, count: usize) -> Result<u32, ObjError> {
    let first = word.split('/').next().unwrap_or("");
    let index: i64 = first.parse().map_err(|_| {
        ObjError::at(
            number,
            format!("face vertex {word:?} does not start with a whole number"),
        )
    })?;
    let resolved = match index {
        0 => {
            return Err(ObjError::at(
                number,
                "face vertex index 0: OBJ indices start at 1 (or count back from -1)",
            ));
        }
        i if i > 0 => i - 1,
        i => count as i64 + i,
    };
    if resolved < 0 || resolved >= count as i64 {
        return Err(ObjError::at(
            number,
            format!("face vertex index {index} does not exist ({count} vertices so far)"),
        ));
    }
    Ok(resolved as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ObjMesh, ObjError> {
        parse::<()>(text, || Ok(())).unwrap()
    }

    #[test]
    fn quads_fan_into_triangles_and_texture_and_normal_indices_are_ignored() {
        let mesh = read(
            "# a unit quad\no quad\nv 0 0 0\nv 1 0 0 1.0\nv 1 0 1\nv 0 0 1\nvt 0 0\nvn 0 1 0\n\
             usemtl stone\nf 1/1/1 2/1/1 3//1 4\n",
        )
        .unwrap();
        assert_eq!(mesh.positions.len(), 4);
        assert_eq!(mesh.positions[2], Vec3::new(1.0, 0.0, 1.0));
        assert_eq!(mesh.indices, [0, 1, 2, 0, 2, 3]);
    }

    #[test]
    fn negative_indices_count_back_from_the_newest_vertex() {
        let mesh = read("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 0 0 1\nf -4 -1 2\r\n").unwrap();
        assert_eq!(mesh.indices, [0, 1, 2, 0, 3, 1]);
    }

    #[test]
    fn continued_lines_join_and_report_their_first_line() {
        let mesh = read("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 \\\n 2 3\n").unwrap();
        assert_eq!(mesh.indices, [0, 1, 2]);
        let err = read("v 0 0 0\nf 1 \\\n 2 9\n").unwrap_err();
        assert_eq!(err.line, Some(2));
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let cases: [(&str, usize, &str); 7] = [
            ("v 0 0 0\nv 1 x 0\n", 2, "vertex y = \"x\""),
            ("v 0 0\n", 1, "z is missing"),
            ("v 0 0 nan\n", 1, "not a finite number"),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 4\n",
                5,
                "index 4 does not exist (3 vertices",
            ),
            ("v 0 0 0\nv 1 0 0\nf 1 2 0\n", 3, "index 0"),
            ("v 0 0 0\nv 1 0 0\nf -3 1 2\n", 3, "index -3 does not exist"),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n",
                4,
                "at least 3 vertices, got 2",
            ),
        ];
        for (text, line, part) in cases {
            let err = read(text).unwrap_err();
            assert_eq!(err.line, Some(line), "{text:?}: {err:?}");
            assert!(err.message.contains(part), "{text:?}: {err:?}");
        }
        let err = read("v 0 0 0\nf a b c\n").unwrap_err();
        assert!(
            err.message
                .contains("\"a\" does not start with a whole number")
        );
        let err = read("v 0 0 0\nl 1 1\n").unwrap_err();
        assert_eq!(err.line, None);
        assert!(err.message.contains("no faces"));
    }

    #[test]
    fn the_check_callback_can_stop_a_long_file() {
        let text = "v 0 0 0\n".repeat(CHECK_EVERY + 1);
        assert_eq!(parse(&text, || Err("stop")), Err("stop"));
    }
}
