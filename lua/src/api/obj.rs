//! Wavefront OBJ occluders, read with the `tobj` crate.
//!
//! Only geometry matters to a shadow: `v` lines give positions (a fourth number `w` divides
//! them; three more are a vertex colour, ignored) and `f` lines give faces of three or more
//! vertices, each `i`, `i/t`, `i//n` or `i/t/n`, fanned into triangles. Indices start at 1;
//! negative ones count back from the newest vertex. `vt`, `vn`, `o`, `g`, `s`, `usemtl`,
//! `mtllib` (never opened), `l` and `p` are read by tobj and dropped.
//!
//! tobj parses the statements. Around it, this module keeps what scripts rely on:
//! * **Lines.** A line ending in `\` continues on the next, and `#` starts a comment anywhere
//!   on a line; tobj knows neither, so [`Statements`] joins and strips before tobj sees a line.
//! * **The deadline.** tobj reads through a [`Feeder`] that calls the caller's check every
//!   [`CHECK_EVERY`] lines; a check that fails stops tobj with a read error, and the check's
//!   own error is returned.
//! * **Errors with a line.** tobj's errors say what, not where. A statement refused while it
//!   is read is the one the feeder handed out last; a face refused only when tobj assembles its
//!   object (an index out of range) is found by [`locate`], a second pass that runs only then.
//! * **Strictness.** A face of fewer than three vertices is an error (tobj would keep it as a
//!   line or a point, which are dropped), and so is a position that is not finite.

use std::convert::Infallible;
use std::io::{self, BufRead, Read};

use glam::Vec3;
use tobj::LoadError;

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

    fn whole(message: impl Into<String>) -> Self {
        Self {
            line: None,
            message: message.into(),
        }
    }
}

/// Parses `text`. `check` is called every few thousand lines; an error from it stops the
/// reader and is returned as is (the caller's deadline).
pub(crate) fn parse<E>(
    text: &str,
    check: impl FnMut() -> Result<(), E>,
) -> Result<Result<ObjMesh, ObjError>, E> {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let mut feeder = Feeder {
        statements: Statements::new(text, check),
        current: String::new(),
        consumed: 0,
        line: 0,
        stop: None,
    };
    let loaded = tobj::load_obj_buf(&mut feeder, &options, |_| Err(LoadError::OpenFileFailed));
    match feeder.stop {
        Some(Stop::Check(e)) => return Err(e),
        Some(Stop::Refused(refusal)) => return Ok(Err(refusal)),
        None => {}
    }
    let models = match loaded {
        Ok((models, _)) => models,
        Err(e) if at_read(&e) => {
            return Ok(Err(explain_statement(&feeder.current, feeder.line, &e)));
        }
        Err(e) => return Ok(Err(locate(text).unwrap_or_else(|| assembly_error(&e)))),
    };
    let mut mesh = ObjMesh::default();
    for model in &models {
        let Ok(base) = u32::try_from(mesh.positions.len()) else {
            return Ok(Err(ObjError::whole("more than 2^32 - 1 vertices")));
        };
        let positions = &model.mesh.positions;
        mesh.positions
            .extend(positions.chunks_exact(3).map(Vec3::from_slice));
        for &i in &model.mesh.indices {
            let Some(index) = base.checked_add(i) else {
                return Ok(Err(ObjError::whole("more than 2^32 - 1 vertices")));
            };
            mesh.indices.push(index);
        }
    }
    if mesh.indices.is_empty() || !mesh.positions.iter().all(|p| p.is_finite()) {
        return Ok(Err(locate(text).unwrap_or_else(|| {
            ObjError::whole(format!(
                "no faces: the file has {} vertices but no `f` lines",
                vertex_count(text)
            ))
        })));
    }
    Ok(Ok(mesh))
}

/// Whether tobj refused the statement it was reading (rather than an object it assembled).
fn at_read(e: &LoadError) -> bool {
    !matches!(
        e,
        LoadError::FaceVertexOutOfBounds
            | LoadError::FaceTexCoordOutOfBounds
            | LoadError::FaceNormalOutOfBounds
            | LoadError::FaceColorOutOfBounds
            | LoadError::InvalidPolygon
            | LoadError::GenericFailure
    )
}

/// A refusal of tobj's when it assembled an object that [`locate`] could not pin to a line.
fn assembly_error(e: &LoadError) -> ObjError {
    ObjError::whole(match e {
        LoadError::FaceColorOutOfBounds => {
            "some vertices have a colour (v x y z r g b) and others not: give every vertex a colour, or none"
                .to_owned()
        }
        e => e.to_string(),
    })
}

/// The logical lines of a file: `\`-continued lines joined (numbered by their first line) and
/// `#` comments cut off.
struct Statements<'t, C> {
    lines: std::iter::Enumerate<std::str::Lines<'t>>,
    check: C,
}

impl<'t, C, E> Statements<'t, C>
where
    C: FnMut() -> Result<(), E>,
{
    fn new(text: &'t str, check: C) -> Self {
        Self {
            lines: text.lines().enumerate(),
            check,
        }
    }

    /// The next statement and its line, or the check's error.
    fn next_statement(&mut self) -> Option<Result<(usize, String), E>> {
        let mut logical = String::new();
        let mut start = None;
        for (n, raw) in self.lines.by_ref() {
            let number = n + 1;
            if number.is_multiple_of(CHECK_EVERY)
                && let Err(e) = (self.check)()
            {
                return Some(Err(e));
            }
            let first = *start.get_or_insert(number);
            let content = raw.split('#').next().unwrap_or("");
            match content.trim_end().strip_suffix('\\') {
                Some(head) => {
                    logical.push_str(head);
                    logical.push(' ');
                }
                None => {
                    logical.push_str(content);
                    return Some(Ok((first, logical)));
                }
            }
        }
        start.map(|first| Ok((first, logical)))
    }
}

/// Why the feeder stopped handing lines to tobj.
enum Stop<E> {
    /// The caller's check failed.
    Check(E),
    /// A statement this module refuses (tobj would take it).
    Refused(ObjError),
}

/// What tobj reads: one statement at a time, so that the statement tobj refuses is always the
/// last one handed out.
struct Feeder<'t, C, E> {
    statements: Statements<'t, C>,
    /// The statement being read, with its newline, and how much of it tobj took.
    current: String,
    consumed: usize,
    /// The line `current` starts on.
    line: usize,
    stop: Option<Stop<E>>,
}

impl<C, E> BufRead for Feeder<'_, C, E>
where
    C: FnMut() -> Result<(), E>,
{
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.stop.is_some() {
            return Err(io::Error::other("stopped"));
        }
        if self.consumed == self.current.len() {
            self.current.clear();
            self.consumed = 0;
            match self.statements.next_statement() {
                None => {}
                Some(Err(e)) => self.stop = Some(Stop::Check(e)),
                Some(Ok((line, text))) => {
                    self.line = line;
                    let mut words = text.split_whitespace();
                    let vertices = words.clone().skip(1).count();
                    if words.next() == Some("f") && vertices < 3 {
                        self.stop = Some(Stop::Refused(ObjError::at(
                            line,
                            format!("a face needs at least 3 vertices, got {vertices}"),
                        )));
                        return Err(io::Error::other("refused"));
                    }
                    self.current = text;
                    self.current.push('\n');
                }
            }
            if self.stop.is_some() {
                return Err(io::Error::other("stopped"));
            }
        }
        Ok(&self.current.as_bytes()[self.consumed..])
    }

    fn consume(&mut self, amount: usize) {
        self.consumed = (self.consumed + amount).min(self.current.len());
    }
}

impl<C, E> Read for Feeder<'_, C, E>
where
    C: FnMut() -> Result<(), E>,
{
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// Every statement of `text`, for the passes that run after tobj (no deadline: they run once,
/// over a file tobj has already read).
fn statements(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    let mut all = Statements::new(text, || Ok::<(), Infallible>(()));
    std::iter::from_fn(move || {
        all.next_statement()
            .map(|s| s.unwrap_or_else(|e| match e {}))
    })
}

fn vertex_count(text: &str) -> usize {
    statements(text)
        .filter(|(_, s)| s.split_whitespace().next() == Some("v"))
        .count()
}

/// What is wrong with the statement tobj refused while reading it.
fn explain_statement(statement: &str, line: usize, e: &LoadError) -> ObjError {
    let mut words = statement.split_whitespace();
    let message = match (words.next(), e) {
        (Some("v"), LoadError::PositionParseError | LoadError::ColorParseError) => {
            vertex_problem(words)
                .unwrap_or_else(|| "a vertex is x y z, then an optional w or r g b".into())
        }
        (Some("v"), LoadError::ScalingByZeroError) => "vertex w = 0 (w divides x, y and z)".into(),
        (Some("f"), LoadError::FaceParseError) => words
            .find(|w| parse_index(w.split('/').next().unwrap_or("")).is_none())
            .map_or_else(
                || "a face vertex is i, i/t, i//n or i/t/n".into(),
                |w| format!("face vertex {w:?} does not start with a whole number"),
            ),
        (Some("vt"), _) => "a texture coordinate needs at least u and v".into(),
        (Some("vn"), _) => "a normal needs x, y and z".into(),
        (Some("usemtl"), _) => "usemtl needs a material name".into(),
        (_, e) => e.to_string(),
    };
    ObjError::at(line, message)
}

/// What is wrong with a vertex's numbers (after `v`), if anything.
fn vertex_problem<'w>(mut words: impl Iterator<Item = &'w str>) -> Option<String> {
    let mut xyz = [0.0f32; 3];
    for (axis, c) in ["x", "y", "z"].into_iter().zip(xyz.iter_mut()) {
        let Some(word) = words.next() else {
            return Some(format!("a vertex needs x, y and z; {axis} is missing"));
        };
        match word.parse::<f32>() {
            Ok(v) if v.is_finite() => *c = v,
            _ => return Some(format!("vertex {axis} = {word:?} is not a finite number")),
        }
    }
    let rest: Vec<&str> = words.collect();
    if let [w] = rest[..] {
        let divided = w.parse::<f32>().map(|w| xyz.map(|c| c / w));
        if !divided.is_ok_and(|p| p.iter().all(|c| c.is_finite())) {
            return Some(format!("vertex w = {w:?} does not give finite x, y and z"));
        }
    }
    None
}

fn parse_index(word: &str) -> Option<i64> {
    word.parse().ok()
}

/// The first statement of `text` that tobj refuses when it assembles an object, or that gives
/// a position that is not finite: indices are resolved against what was read before the face,
/// as OBJ defines them.
fn locate(text: &str) -> Option<ObjError> {
    let mut counts = [0usize; 3];
    for (line, statement) in statements(text) {
        let mut words = statement.split_whitespace();
        match words.next() {
            Some("v") => {
                if let Some(problem) = vertex_problem(words) {
                    return Some(ObjError::at(line, problem));
                }
                counts[0] += 1;
            }
            Some("vt") => counts[1] += 1,
            Some("vn") => counts[2] += 1,
            Some("f") => {
                for word in words {
                    if let Some(message) = face_vertex_problem(word, counts) {
                        return Some(ObjError::at(line, message));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// What is wrong with one face vertex `i/t/n` given the counts of `v`, `vt` and `vn` so far.
fn face_vertex_problem(word: &str, counts: [usize; 3]) -> Option<String> {
    const KINDS: [(&str, &str); 3] = [
        ("face vertex index", "vertices"),
        ("texture coordinate index", "texture coordinates"),
        ("normal index", "normals"),
    ];
    for ((part, (what, plural)), count) in word.split('/').zip(KINDS).zip(counts) {
        if part.is_empty() {
            continue;
        }
        let index = parse_index(part)?;
        let resolved = match index {
            0 => {
                return Some(format!(
                    "{what} 0: OBJ indices start at 1 (or count back from -1)"
                ));
            }
            i if i > 0 => i - 1,
            i => count as i64 + i,
        };
        if resolved < 0 || resolved >= count as i64 {
            return Some(format!(
                "{what} {index} does not exist ({count} {plural} so far)"
            ));
        }
    }
    None
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
    fn objects_and_groups_become_one_mesh_in_file_order() {
        let mesh = read(
            "o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 # first\ng b\nv 0 0 1\nv 1 1 1\n\
             v 2 2 2\nf 1 3 4\nf 2 3 4 5 6\n",
        )
        .unwrap();
        // The second object's vertices are its own copies, in the order its faces use them.
        let triangles: Vec<[Vec3; 3]> = mesh
            .indices
            .chunks(3)
            .map(|t| {
                t.iter()
                    .map(|&i| mesh.positions[i as usize])
                    .collect::<Vec<_>>()
            })
            .map(|t| [t[0], t[1], t[2]])
            .collect();
        let v = [
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::Z,
            Vec3::ONE,
            Vec3::splat(2.0),
        ];
        assert_eq!(
            triangles,
            [
                [v[0], v[1], v[2]],
                [v[0], v[2], v[3]],
                [v[1], v[2], v[3]],
                [v[1], v[3], v[4]],
                [v[1], v[4], v[5]],
            ]
        );
    }

    #[test]
    fn w_divides_and_colours_are_ignored() {
        let mesh = read("v 2 4 6 2\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
        assert_eq!(mesh.unwrap().positions[0], Vec3::new(1.0, 2.0, 3.0));
        let mesh = read("v 1 0 0 0.5 0.5 0.5\nv 0 1 0 1 1 1\nv 0 0 1 0 0 0\nf 1 2 3\n");
        assert_eq!(mesh.unwrap().positions[0], Vec3::X);
        // tobj needs a colour on every vertex or none.
        let err = read("v 1 0 0 0.5 0.5 0.5\nv 0 1 0\nv 0 0 1\nf 1 2 3\n").unwrap_err();
        assert!(
            err.message.contains("give every vertex a colour, or none"),
            "{err:?}"
        );
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let cases: [(&str, usize, &str); 12] = [
            ("v 0 0 0\nv 1 x 0\n", 2, "vertex y = \"x\""),
            ("v 0 0\n", 1, "z is missing"),
            ("v 0 0 nan\n", 1, "not a finite number"),
            (
                "v 0 0 0\nv 1e38 0 0 1e-10\nv 0 1 0\nf 1 2 3\n",
                2,
                "w = \"1e-10\"",
            ),
            ("v 0 0 0\nv 1 0 0 0\n", 2, "vertex w = 0"),
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
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/1 2/2 3/1\n",
                5,
                "texture coordinate index 2 does not exist (1 texture coordinates",
            ),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0\n", 4, "texture coordinate"),
            (
                "o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\no b\nf 1 2 9\n",
                7,
                "index 9",
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
        assert!(err.message.contains("1 vertices"), "{err:?}");
    }

    #[test]
    fn the_check_callback_can_stop_a_long_file() {
        let text = "v 0 0 0\n".repeat(CHECK_EVERY + 1);
        assert_eq!(parse(&text, || Err("stop")), Err("stop"));
    }

    #[test]
    fn hostile_statements_are_errors_not_panics() {
        for text in [
            "f\n",
            "v\n",
            "o\n",
            "g\nf 1 2 3\n",
            "usemtl\n",
            "mtllib\n",
            "v 0 0 0\nf 1/1/1/1 1 1\n",
            "v 0 0 0\nf 99999999999999999999 1 1\n",
            "v 0 0 0\nf -99999999999999999999 1 1\n",
            "v 0 0 0\nf 1// 1 1\n",
            "\\",
            "v 1 2 3 \\",
        ] {
            let _ = read(text);
        }
    }
}
