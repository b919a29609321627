//! glTF 2.0 levels: [`read_gltf`] turns a `.glb` or `.gltf` file into shared [`Mesh`]es placed by
//! world transforms (shadow occluders), and [`write_glb`] / [`write_glb_nodes`] write meshes back
//! as a binary glTF that other tools read.
//!
//! # What is read
//!
//! * **Containers**: binary glTF (`.glb`: its BIN chunk is buffer 0 when that buffer has no
//!   `uri`) and JSON glTF (`.gltf`). Buffers come from the BIN chunk, from base64 `data:` URIs, or
//!   from relative paths handed, percent-decoded, to the caller's `load_buffer` callback (which
//!   enforces its own sandbox and read limit). URIs with another scheme are refused. Only the
//!   buffers that the scene's meshes use are loaded.
//! * **Scene**: the default scene (`scene`), else scene 0, else every root node when the file has
//!   no scenes. Node transforms (`matrix`, else `translation`/`rotation`/`scale`) multiply from the
//!   scene root down; a node with both uses its `matrix`. The hierarchy must be a set of trees: a
//!   cycle, a node with two parents or a scene root that has a parent is refused.
//! * **Geometry**: one [`GltfNode`] per node that has a mesh with at least one triangle, in
//!   depth-first pre-order (children in their listed order). All the triangle primitives of a
//!   glTF mesh are merged into one [`Mesh`] (their positions concatenated), built once and shared
//!   by every node that instances it. Modes TRIANGLES, TRIANGLE_STRIP and TRIANGLE_FAN are
//!   read (strips and fans in the spec's vertex order); POINTS and the LINE modes, and
//!   primitives without POSITION, are skipped and counted in
//!   [`GltfLevel::skipped_primitives`]. POSITION is a VEC3 of FLOAT, or (KHR_mesh_quantization)
//!   of BYTE, UNSIGNED_BYTE, SHORT or UNSIGNED_SHORT, normalized or not; indices are
//!   UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT, or absent (vertices in order). Sparse
//!   accessors are applied, and an accessor without a buffer view reads as zeros, as the spec
//!   says. Strides (`byteStride`) are honoured.
//! * **Ignored**: materials, textures, normals and every other attribute, cameras, lights,
//!   animations, skins (a skinned mesh is read in its bind pose, placed by its node) and morph
//!   targets. glTF's front faces are counter-clockwise in its right-handed frame; triangles
//!   keep their order, so set `front_counter_clockwise` when culling them.
//! * **Refused**: any `extensionsRequired` entry other than KHR_mesh_quantization and the
//!   material, texture and light extensions (KHR_materials_*, KHR_texture_*, EXT_texture_*,
//!   KHR_lights_punctual, KHR_materials_variants, MSFT_texture_dds), since the others (Draco,
//!   meshopt, GPU instancing, ...) change or hide the geometry; asset versions other than 2.x.
//!
//! Every problem is a [`GltfError`] whose message names the part of the file
//! (`mesh 3 "door" primitive 0: index 812 (element 17 of accessor 6) is past the 400 positions of
//! accessor 5`); nothing panics, lengths are checked with overflow-free arithmetic before they
//! are used, and nothing is allocated from a count before [`GltfLimits`] has allowed it. Long
//! loops stop with [`GltfError::Interrupted`] once the caller's [`deadline`](crate::deadline)
//! passes.
//!
//! ```
//! use std::sync::Arc;
//! use glam::{Mat4, Vec3};
//! use penumbra_core::gltf::{GltfLimits, read_gltf, write_glb};
//! use penumbra_core::raster::Mesh;
//!
//! let crate_mesh = Arc::new(Mesh::cuboid(Vec3::ZERO, Vec3::ONE));
//! let glb = write_glb(&[
//!     ("crate", &crate_mesh, Mat4::from_translation(Vec3::new(4.0, 0.0, 4.0))),
//!     ("crate 2", &crate_mesh, Mat4::from_translation(Vec3::new(6.0, 0.0, 4.0))),
//! ])
//! .unwrap();
//! let mut no_files = |uri: &str| Err(format!("{uri}: no external files here"));
//! let level = read_gltf(&glb, &mut no_files, GltfLimits::default()).unwrap();
//! assert_eq!(level.nodes.len(), 2);
//! assert_eq!(*level.nodes[1].mesh, *crate_mesh);
//! assert!(Arc::ptr_eq(&level.nodes[0].mesh, &level.nodes[1].mesh)); // one mesh, two instances
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use ::gltf::json;
use glam::{Mat4, Quat, Vec3};
use json::accessor::ComponentType;
use json::mesh::{Mode, Semantic};
use json::validation::Checked;

use crate::raster::Mesh;
use crate::shadow::Occluder;

/// Elements between two deadline checks in long loops.
const CHECK_EVERY: usize = 1 << 16;
/// Characters of a name shown in an error message.
const NAME_CHARS: usize = 48;
/// Nodes of a cycle listed in its error message.
const CYCLE_SHOWN: usize = 8;

/// Sizes that [`read_gltf`] refuses to pass, each checked before the memory is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GltfLimits {
    /// The most bytes of the file and of all the buffers loaded for it together (decoded
    /// `data:` URIs and external files; the GLB's BIN chunk is part of the file).
    pub max_bytes: u64,
    /// The most triangles in all the distinct meshes read (a mesh instanced by many nodes
    /// counts once).
    pub max_triangles: u64,
    /// The most positions in all the distinct meshes read.
    pub max_vertices: u64,
    /// The most entries of [`GltfLevel::nodes`].
    pub max_nodes: u64,
}

impl Default for GltfLimits {
    /// 256 MiB, 8 Mi triangles, 8 Mi positions, 64 Ki nodes.
    fn default() -> Self {
        Self {
            max_bytes: 256 << 20,
            max_triangles: 8 << 20,
            max_vertices: 8 << 20,
            max_nodes: 64 << 10,
        }
    }
}

/// Why a glTF file was not read, or not written. The message names the part at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GltfError {
    /// The bytes are not a GLB container or one of its chunks is malformed (magic, version,
    /// declared lengths, chunk types).
    #[error("GLB: {0}")]
    Glb(String),
    /// The JSON does not parse as a glTF document (syntax, or a field of the wrong type).
    #[error("glTF JSON: {0}")]
    Json(String),
    /// A part of the document breaks the glTF spec: an index out of range, a view past its
    /// buffer, a node cycle, a non-finite position or transform, ...
    #[error("{part}: {message}")]
    Invalid {
        /// The part at fault, e.g. `mesh 3 "door" primitive 0`.
        part: String,
        /// What is wrong with it.
        message: String,
    },
    /// The document uses something this reader does not read (a required extension, a data
    /// layout, a URI scheme).
    #[error("{part}: {message}")]
    Unsupported {
        /// The part at fault.
        part: String,
        /// What is not supported.
        message: String,
    },
    /// A buffer's data is missing: no BIN chunk or URI, a callback error, a bad `data:` URI, or
    /// fewer bytes than its `byteLength`.
    #[error("{part}: {message}")]
    Buffer {
        /// The buffer, e.g. `buffer 1 "geometry"`.
        part: String,
        /// What went wrong.
        message: String,
    },
    /// A [`GltfLimits`] value would be passed.
    #[error("{part}: {message}")]
    Limit {
        /// The part that would pass it.
        part: String,
        /// Which limit, and the sizes.
        message: String,
    },
    /// The caller's deadline passed ([`crate::deadline`]); nothing was returned.
    #[error("stopped: the caller's deadline passed")]
    Interrupted,
    /// [`write_glb`] or [`write_glb_nodes`] was given something it cannot write.
    #[error("write_glb: {part}: {message}")]
    Write {
        /// The entry at fault, e.g. `entry 2 "door"`.
        part: String,
        /// What is wrong with it.
        message: String,
    },
}

fn invalid(part: impl Into<String>, message: impl Into<String>) -> GltfError {
    GltfError::Invalid {
        part: part.into(),
        message: message.into(),
    }
}

fn unsupported(part: impl Into<String>, message: impl Into<String>) -> GltfError {
    GltfError::Unsupported {
        part: part.into(),
        message: message.into(),
    }
}

fn buffer_error(part: impl Into<String>, message: impl Into<String>) -> GltfError {
    GltfError::Buffer {
        part: part.into(),
        message: message.into(),
    }
}

fn limit(part: impl Into<String>, message: impl Into<String>) -> GltfError {
    GltfError::Limit {
        part: part.into(),
        message: message.into(),
    }
}

fn check_deadline() -> Result<(), GltfError> {
    if crate::deadline::expired() {
        Err(GltfError::Interrupted)
    } else {
        Ok(())
    }
}

/// One placed mesh of a level.
#[derive(Clone, Debug)]
pub struct GltfNode {
    /// The node's name, else its mesh's name, else `node N`.
    pub name: String,
    /// The glTF node's index.
    pub node: usize,
    /// The glTF mesh's index.
    pub mesh_index: usize,
    /// The mesh: all the triangle primitives of the glTF mesh, merged. Nodes that instance the
    /// same glTF mesh share one `Arc`.
    pub mesh: Arc<Mesh>,
    /// Object-to-world: the product of the node transforms from the scene root down to this
    /// node (a root node's own transform as written, not multiplied by anything).
    pub transform: Mat4,
}

/// The geometry of a glTF scene.
#[derive(Clone, Debug, Default)]
pub struct GltfLevel {
    /// One entry per node with a mesh that has triangles, in depth-first pre-order.
    pub nodes: Vec<GltfNode>,
    /// Primitives of the meshes read that were left out: POINTS, LINES, LINE_LOOP, LINE_STRIP,
    /// or no POSITION attribute.
    pub skipped_primitives: usize,
}

impl GltfLevel {
    /// The nodes as shadow occluders (the light's cull mode).
    pub fn occluders(&self) -> impl Iterator<Item = Occluder> + '_ {
        self.nodes
            .iter()
            .map(|n| Occluder::mesh(Arc::clone(&n.mesh), n.transform))
    }

    /// Triangles of all the nodes, counting every instance.
    #[must_use]
    pub fn triangle_count(&self) -> usize {
        self.nodes.iter().map(|n| n.mesh.triangle_count()).sum()
    }
}

/// `kind index "name"` (the name shortened), or `kind index` without a name.
fn label(kind: &str, index: usize, name: Option<&str>) -> String {
    match name {
        Some(name) => {
            let mut shown: String = name.chars().take(NAME_CHARS).collect();
            if name.chars().nth(NAME_CHARS).is_some() {
                shown.push('…');
            }
            format!("{kind} {index} {shown:?}")
        }
        None => format!("{kind} {index}"),
    }
}

/// `1 thing` or `N things`.
fn count_of(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Reads a glTF 2.0 level: a `.glb` (starting with the magic `glTF`) or a `.gltf` (JSON).
///
/// `load_buffer` is called with the percent-decoded relative URI of each external buffer the
/// scene needs (never for `data:` URIs or the GLB's BIN chunk); the caller resolves it against
/// the file's folder, enforces its sandbox and bounds the read (the bytes it returns count
/// against [`GltfLimits::max_bytes`] only once they are returned). Its error text is kept in
/// [`GltfError::Buffer`]. See the [module](self) for what is read, skipped and refused.
///
/// # Errors
/// A [`GltfError`] naming the part at fault; see the variants.
pub fn read_gltf(
    bytes: &[u8],
    load_buffer: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
    limits: GltfLimits,
) -> Result<GltfLevel, GltfError> {
    crate::zone!("penumbra::gltf::read_gltf");
    let size = bytes.len() as u64;
    if size > limits.max_bytes {
        return Err(limit(
            "the file",
            format!(
                "{size} bytes are over the limit of {} bytes (GltfLimits::max_bytes)",
                limits.max_bytes
            ),
        ));
    }
    let text_start = bytes
        .iter()
        .position(|b| !b" \t\r\n".contains(b))
        .unwrap_or(bytes.len());
    let body = bytes.get(text_start..).unwrap_or_default();
    let (json_bytes, bin, glb) = if body.starts_with(b"{") || body.starts_with(b"\xEF\xBB\xBF{") {
        (
            body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body),
            None,
            false,
        )
    } else {
        let (json, bin) = split_glb(bytes)?;
        (json, bin, true)
    };
    let root: Document =
        serde_json::from_slice(json_bytes).map_err(|e| GltfError::Json(e.to_string()))?;
    let mut reader = Reader {
        buffers: vec![None; root.buffers.len()],
        meshes: vec![None; root.meshes.len()],
        root,
        bin,
        glb,
        load_buffer,
        limits,
        bytes_used: size,
        vertices: 0,
        triangles: 0,
        skipped: 0,
    };
    reader.check_asset()?;
    let nodes = reader.scene()?;
    Ok(GltfLevel {
        nodes,
        skipped_primitives: reader.skipped,
    })
}

/// The parts of a glTF document that hold geometry, in the gltf crate's types. Everything else
/// (materials, textures, animations, cameras, skins, extensions) is skipped unread, so a quirk of
/// those types cannot refuse a level.
#[derive(serde::Deserialize)]
struct Document {
    asset: json::Asset,
    #[serde(default)]
    scene: Option<json::Index<json::Scene>>,
    #[serde(default)]
    scenes: Vec<SceneDoc>,
    #[serde(default)]
    nodes: Vec<json::Node>,
    #[serde(default)]
    meshes: Vec<json::Mesh>,
    #[serde(default)]
    accessors: Vec<json::Accessor>,
    #[serde(default, rename = "bufferViews")]
    buffer_views: Vec<json::buffer::View>,
    #[serde(default)]
    buffers: Vec<json::Buffer>,
    #[serde(default, rename = "extensionsRequired")]
    extensions_required: Vec<String>,
}

/// A scene; `nodes` is optional in the spec (`json::Scene` requires it).
#[derive(serde::Deserialize)]
struct SceneDoc {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    nodes: Vec<json::Index<json::Node>>,
}

/// The JSON chunk and the BIN chunk (if any) of a GLB.
fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), GltfError> {
    let glb = |m: String| GltfError::Glb(m);
    let u32_at = |at: usize| -> u32 {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    };
    if bytes.len() >= 4 && &bytes[..4] != b"glTF" {
        return Err(glb(format!(
            "bad magic {:?}: a binary glTF starts with \"glTF\" and a JSON glTF with '{{'",
            String::from_utf8_lossy(&bytes[..4])
        )));
    }
    if bytes.len() < 12 {
        return Err(glb(format!(
            "truncated: the header needs 12 bytes, the file has {}",
            bytes.len()
        )));
    }
    let version = u32_at(4);
    if version != 2 {
        return Err(glb(format!(
            "version {version} in the header: only glTF 2 is read"
        )));
    }
    let declared = u32_at(8) as usize;
    if declared > bytes.len() {
        return Err(glb(format!(
            "truncated: the header declares {declared} bytes, the file has {}",
            bytes.len()
        )));
    }
    if declared < bytes.len() {
        return Err(glb(format!(
            "the header declares {declared} bytes, but the file has {} (trailing data)",
            bytes.len()
        )));
    }
    let mut at = 12;
    let mut json = None;
    let mut bin = None;
    let mut index = 0usize;
    while at < declared {
        if declared - at < 8 {
            return Err(glb(format!(
                "truncated: chunk {index} at byte {at} needs an 8-byte header, {} bytes remain",
                declared - at
            )));
        }
        let length = u32_at(at) as usize;
        let kind = &bytes[at + 4..at + 8];
        let start = at + 8;
        let remain = declared - start;
        let name = match kind {
            b"JSON" => "JSON".to_owned(),
            b"BIN\0" => "BIN".to_owned(),
            other => format!("{:?}", String::from_utf8_lossy(other)),
        };
        if length > remain {
            return Err(glb(format!(
                "chunk {index} ({name}) at byte {at}: its length {length} runs past the end of \
                 the file ({remain} bytes follow its header)"
            )));
        }
        let data = &bytes[start..start + length];
        match kind {
            b"JSON" if index == 0 => json = Some(data),
            b"JSON" => {
                return Err(glb(format!(
                    "chunk {index} at byte {at} is a second JSON chunk"
                )));
            }
            _ if index == 0 => {
                return Err(glb(format!(
                    "the first chunk must be JSON, it is {name} (at byte 12)"
                )));
            }
            b"BIN\0" if bin.is_none() => bin = Some(data),
            b"BIN\0" => {
                return Err(glb(format!(
                    "chunk {index} at byte {at} is a second BIN chunk"
                )));
            }
            // Chunks of unknown types are skipped, as the spec says.
            _ => {}
        }
        at = start + length;
        index += 1;
    }
    let json = json.ok_or_else(|| glb("no JSON chunk after the header".to_owned()))?;
    // The spec pads the JSON chunk with spaces; some writers use zeros.
    let end = json
        .iter()
        .rposition(|&b| b != 0 && b != b' ')
        .map_or(0, |p| p + 1);
    Ok((&json[..end], bin))
}

/// Extensions a file may require without changing the geometry this reader sees.
fn harmless_extension(name: &str) -> bool {
    name == "KHR_mesh_quantization"
        || name == "KHR_lights_punctual"
        || name == "MSFT_texture_dds"
        || name.starts_with("KHR_materials_")
        || name.starts_with("KHR_texture_")
        || name.starts_with("EXT_texture_")
}

/// An accessor's data in the buffers: where element 0 starts and the stride.
#[derive(Clone, Copy, Debug)]
struct Span {
    buffer: usize,
    start: usize,
    stride: usize,
}

/// A sparse accessor's substitutions.
#[derive(Clone, Copy, Debug)]
struct SparseSpan {
    count: usize,
    indices: Span,
    index_type: ComponentType,
    values: Span,
}

/// A validated accessor, ready to read.
#[derive(Clone, Debug)]
struct Layout {
    part: String,
    count: usize,
    component: ComponentType,
    dims: usize,
    normalized: bool,
    base: Option<Span>,
    sparse: Option<SparseSpan>,
}

struct Reader<'a, 'c> {
    root: Document,
    bin: Option<&'a [u8]>,
    glb: bool,
    load_buffer: &'c mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
    buffers: Vec<Option<Cow<'a, [u8]>>>,
    /// Meshes built so far: `Some(None)` when a mesh has no triangles.
    meshes: Vec<Option<Option<Arc<Mesh>>>>,
    limits: GltfLimits,
    bytes_used: u64,
    vertices: u64,
    triangles: u64,
    skipped: usize,
}

impl Reader<'_, '_> {
    fn check_asset(&self) -> Result<(), GltfError> {
        let asset = &self.root.asset;
        if !asset.version.starts_with("2.") && asset.version != "2" {
            return Err(unsupported(
                "asset",
                format!(
                    "version {:?}: only glTF 2.x is read",
                    asset.version.chars().take(NAME_CHARS).collect::<String>()
                ),
            ));
        }
        if let Some(min) = &asset.min_version
            && !(min.starts_with("2.0") || min == "2")
        {
            return Err(unsupported(
                "asset",
                format!(
                    "minVersion {:?}: only glTF 2.0 is read",
                    min.chars().take(NAME_CHARS).collect::<String>()
                ),
            ));
        }
        for (i, name) in self.root.extensions_required.iter().enumerate() {
            if !harmless_extension(name) {
                return Err(unsupported(
                    format!("extensionsRequired[{i}]"),
                    format!(
                        "{:?} is not supported (it changes or hides the geometry; supported: \
                         KHR_mesh_quantization and material, texture and light extensions)",
                        name.chars().take(NAME_CHARS).collect::<String>()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn node_label(&self, i: usize) -> String {
        label("node", i, self.root.nodes[i].name.as_deref())
    }

    /// Checks the node graph and walks the scene.
    fn scene(&mut self) -> Result<Vec<GltfNode>, GltfError> {
        let n = self.root.nodes.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for i in 0..n {
            let children = self.root.nodes[i].children.as_deref().unwrap_or_default();
            for (k, child) in children.iter().enumerate() {
                let c = child.value();
                if c >= n {
                    return Err(invalid(
                        self.node_label(i),
                        format!(
                            "child {k} is node {c}, which does not exist (the file has {})",
                            count_of(n, "node", "nodes")
                        ),
                    ));
                }
                if c == i {
                    return Err(invalid(
                        self.node_label(i),
                        "node graph cycle: the node is its own child",
                    ));
                }
                match parent[c] {
                    Some(p) if p == i => {
                        return Err(invalid(
                            self.node_label(i),
                            format!("lists node {c} twice among its children"),
                        ));
                    }
                    Some(p) => {
                        return Err(invalid(
                            self.node_label(c),
                            format!(
                                "is a child of both node {p} and node {i} (glTF nodes form trees)"
                            ),
                        ));
                    }
                    None => parent[c] = Some(i),
                }
            }
        }
        self.check_cycles(&parent)?;

        let roots: Vec<usize> = match self.root.scene {
            Some(s) => self.scene_roots(s.value(), &parent, true)?,
            None if !self.root.scenes.is_empty() => self.scene_roots(0, &parent, false)?,
            None => (0..n).filter(|&i| parent[i].is_none()).collect(),
        };

        let mut out = Vec::new();
        let mut stack: Vec<(usize, Option<Mat4>)> =
            roots.iter().rev().map(|&r| (r, None)).collect();
        while let Some((i, parent_world)) = stack.pop() {
            check_deadline()?;
            let local = self.local_transform(i)?;
            let world = parent_world.map_or(local, |p| p * local);
            if !world.is_finite() {
                return Err(invalid(
                    self.node_label(i),
                    "its world transform (the product of its ancestors' transforms and its \
                     own) is not finite",
                ));
            }
            if let Some(m) = self.root.nodes[i].mesh {
                let m = m.value();
                if m >= self.root.meshes.len() {
                    return Err(invalid(
                        self.node_label(i),
                        format!(
                            "mesh {m} does not exist (the file has {})",
                            count_of(self.root.meshes.len(), "mesh", "meshes")
                        ),
                    ));
                }
                if let Some(mesh) = self.mesh(m)? {
                    if out.len() as u64 >= self.limits.max_nodes {
                        return Err(limit(
                            self.node_label(i),
                            format!(
                                "more than {} nodes with meshes (GltfLimits::max_nodes)",
                                self.limits.max_nodes
                            ),
                        ));
                    }
                    let node = &self.root.nodes[i];
                    let name = node
                        .name
                        .clone()
                        .or_else(|| self.root.meshes[m].name.clone())
                        .unwrap_or_else(|| format!("node {i}"));
                    out.push(GltfNode {
                        name,
                        node: i,
                        mesh_index: m,
                        mesh,
                        transform: world,
                    });
                }
            }
            let children = self.root.nodes[i].children.as_deref().unwrap_or_default();
            stack.extend(children.iter().rev().map(|c| (c.value(), Some(world))));
        }
        Ok(out)
    }

    /// Refuses a cycle among parent links (each node has at most one parent already).
    fn check_cycles(&self, parent: &[Option<usize>]) -> Result<(), GltfError> {
        // 0: not seen, 1: on the current walk, 2: known to reach a root.
        let mut state = vec![0u8; parent.len()];
        let mut walk = Vec::new();
        for start in 0..parent.len() {
            walk.clear();
            let mut at = Some(start);
            while let Some(i) = at {
                match state[i] {
                    2 => break,
                    1 => {
                        // `i` is on the walk: the cycle is the walk from `i` on (child to parent).
                        let from = walk.iter().position(|&w| w == i).unwrap_or(0);
                        let mut cycle: Vec<usize> = walk[from..].to_vec();
                        cycle.reverse(); // parent to child
                        // Start at the lowest node index.
                        let lowest = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                        cycle.rotate_left(lowest);
                        let first = cycle[0];
                        let mut shown: Vec<String> = cycle
                            .iter()
                            .take(CYCLE_SHOWN)
                            .map(|c| format!("node {c}"))
                            .collect();
                        if cycle.len() > CYCLE_SHOWN {
                            shown.push("…".to_owned());
                        }
                        shown.push(format!("node {first}"));
                        return Err(invalid(
                            self.node_label(first),
                            format!(
                                "node graph cycle: {} (a node cannot be its own ancestor)",
                                shown.join(" → ")
                            ),
                        ));
                    }
                    _ => {
                        state[i] = 1;
                        walk.push(i);
                        at = parent[i];
                    }
                }
            }
            for &w in &walk {
                state[w] = 2;
            }
        }
        Ok(())
    }

    fn scene_roots(
        &self,
        s: usize,
        parent: &[Option<usize>],
        default: bool,
    ) -> Result<Vec<usize>, GltfError> {
        let scenes = &self.root.scenes;
        if s >= scenes.len() {
            return Err(invalid(
                "the default scene",
                format!(
                    "scene {s} does not exist (the file has {})",
                    count_of(scenes.len(), "scene", "scenes")
                ),
            ));
        }
        let part = label("scene", s, scenes[s].name.as_deref());
        let part = if default {
            part
        } else {
            format!("{part} (no default scene)")
        };
        let n = parent.len();
        let mut listed = vec![false; n];
        let mut roots = Vec::with_capacity(scenes[s].nodes.len());
        for (k, node) in scenes[s].nodes.iter().enumerate() {
            let i = node.value();
            if i >= n {
                return Err(invalid(
                    part,
                    format!(
                        "root {k} is node {i}, which does not exist (the file has {})",
                        count_of(n, "node", "nodes")
                    ),
                ));
            }
            if let Some(p) = parent[i] {
                return Err(invalid(
                    part,
                    format!("lists node {i} as a root, but it is a child of node {p}"),
                ));
            }
            if std::mem::replace(&mut listed[i], true) {
                return Err(invalid(part, format!("lists node {i} twice")));
            }
            roots.push(i);
        }
        Ok(roots)
    }

    fn local_transform(&self, i: usize) -> Result<Mat4, GltfError> {
        let node = &self.root.nodes[i];
        if let Some(m) = node.matrix {
            let m = Mat4::from_cols_array(&m);
            if !m.is_finite() {
                return Err(invalid(
                    self.node_label(i),
                    "its matrix has a non-finite element",
                ));
            }
            return Ok(m);
        }
        if node.translation.is_none() && node.rotation.is_none() && node.scale.is_none() {
            return Ok(Mat4::IDENTITY);
        }
        let t = Vec3::from(node.translation.unwrap_or([0.0; 3]));
        let r = Quat::from_array(node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |q| q.0));
        let s = Vec3::from(node.scale.unwrap_or([1.0; 3]));
        if !(t.is_finite() && r.is_finite() && s.is_finite()) {
            return Err(invalid(
                self.node_label(i),
                "its translation, rotation or scale has a non-finite element",
            ));
        }
        let len2 = r.length_squared();
        if !(len2.is_finite() && len2 > 0.0) {
            return Err(invalid(
                self.node_label(i),
                "its rotation quaternion has length 0 (or overflows)",
            ));
        }
        // The spec wants unit quaternions; one that is clearly not is normalized, one within
        // rounding of unit length is used as written (so written files read back bit for bit).
        let r = if (len2 - 1.0).abs() <= 1e-5 {
            r
        } else {
            r.normalize()
        };
        Ok(trs_matrix(t, r, s))
    }

    /// The merged mesh of glTF mesh `m` (`None` when it has no triangles), built once.
    fn mesh(&mut self, m: usize) -> Result<Option<Arc<Mesh>>, GltfError> {
        if let Some(built) = &self.meshes[m] {
            return Ok(built.clone());
        }
        let mesh_label = label("mesh", m, self.root.meshes[m].name.as_deref());
        let mut positions: Vec<Vec3> = Vec::new();
        let mut indices: Vec<u32> = Vec::new();
        for p in 0..self.root.meshes[m].primitives.len() {
            check_deadline()?;
            let part = format!("{mesh_label} primitive {p}");
            self.primitive(m, p, &part, &mut positions, &mut indices)?;
        }
        let built = if indices.is_empty() {
            None
        } else {
            let mesh = Mesh::new(positions, indices)
                .map_err(|e| invalid(mesh_label.clone(), format!("the merged mesh: {e}")))?;
            Some(Arc::new(mesh))
        };
        self.meshes[m] = Some(built.clone());
        Ok(built)
    }

    /// Appends one primitive's triangles to a merged mesh.
    fn primitive(
        &mut self,
        m: usize,
        p: usize,
        part: &str,
        positions: &mut Vec<Vec3>,
        indices: &mut Vec<u32>,
    ) -> Result<(), GltfError> {
        let primitive = &self.root.meshes[m].primitives[p];
        let mode = match &primitive.mode {
            Checked::Valid(mode) => *mode,
            Checked::Invalid => {
                return Err(invalid(
                    part,
                    "mode is not one of 0 (POINTS) to 6 (TRIANGLE_FAN)",
                ));
            }
        };
        if !matches!(
            mode,
            Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
        ) {
            self.skipped += 1;
            return Ok(());
        }
        let Some(position) = primitive
            .attributes
            .get(&Checked::Valid(Semantic::Positions))
            .map(|a| a.value())
        else {
            self.skipped += 1;
            return Ok(());
        };
        let index_accessor = primitive.indices.map(|a| a.value());
        let accessors = self.root.accessors.len();
        for (what, a) in [("POSITION", Some(position)), ("indices", index_accessor)] {
            if let Some(a) = a
                && a >= accessors
            {
                return Err(invalid(
                    part,
                    format!(
                        "{what} accessor {a} does not exist (the file has {})",
                        count_of(accessors, "accessor", "accessors")
                    ),
                ));
            }
        }
        let vertex_count = self.root.accessors[position].count.0;
        let index_count = index_accessor.map_or(vertex_count, |a| self.root.accessors[a].count.0);
        let triangle_count = match mode {
            Mode::Triangles => {
                if !index_count.is_multiple_of(3) {
                    let source = index_accessor.map_or_else(
                        || format!("positions (accessor {position}, no indices)"),
                        |a| format!("indices (accessor {a})"),
                    );
                    return Err(invalid(
                        part,
                        format!(
                            "TRIANGLES needs a multiple of 3 vertices, it has {index_count} \
                             {source}"
                        ),
                    ));
                }
                index_count / 3
            }
            _ => index_count.saturating_sub(2),
        };
        if triangle_count == 0 {
            return Ok(());
        }
        let triangles = self.triangles.saturating_add(triangle_count);
        if triangles > self.limits.max_triangles {
            return Err(limit(
                part,
                format!(
                    "its {triangle_count} triangles bring the level to {triangles}, over the \
                     limit of {} (GltfLimits::max_triangles)",
                    self.limits.max_triangles
                ),
            ));
        }
        let vertices = self.vertices.saturating_add(vertex_count);
        if vertices > self.limits.max_vertices {
            return Err(limit(
                part,
                format!(
                    "its {vertex_count} positions bring the level to {vertices}, over the limit \
                     of {} (GltfLimits::max_vertices)",
                    self.limits.max_vertices
                ),
            ));
        }
        let base = positions.len() as u64;
        if base + vertex_count > u64::from(u32::MAX) + 1 {
            return Err(limit(
                part,
                "the merged mesh would have more than 2^32 positions",
            ));
        }
        self.triangles = triangles;
        self.vertices = vertices;

        let what = |role: &str, a: usize| format!("accessor {a} ({role} of {part})");
        let layout = self.layout(position, what("POSITION", position))?;
        let read = self.read_positions(&layout)?;
        let index_layout = match index_accessor {
            Some(a) => Some(self.layout(a, what("indices", a))?),
            None => None,
        };
        let list = match &index_layout {
            Some(layout) => self.read_indices(layout)?,
            None => (0..vertex_count).map(|i| i as u32).collect(),
        };
        let count = read.len();
        if let Some((at, &bad)) = list.iter().enumerate().find(|&(_, &i)| i as usize >= count) {
            let from = index_accessor
                .map_or_else(String::new, |a| format!(" (element {at} of accessor {a})"));
            return Err(invalid(
                part,
                format!(
                    "index {bad}{from} is past the {} of accessor {position}",
                    count_of(count, "position", "positions")
                ),
            ));
        }
        let base = base as u32;
        let n = list.len();
        indices.reserve(triangle_count as usize * 3);
        match mode {
            Mode::Triangles => indices.extend(list.iter().map(|&i| base + i)),
            Mode::TriangleStrip => {
                for k in 0..n - 2 {
                    let (b, c) = if k % 2 == 0 {
                        (k + 1, k + 2)
                    } else {
                        (k + 2, k + 1)
                    };
                    indices.extend([base + list[k], base + list[b], base + list[c]]);
                }
            }
            _ => {
                for k in 0..n - 2 {
                    indices.extend([base + list[k + 1], base + list[k + 2], base + list[0]]);
                }
            }
        }
        positions.extend(read);
        Ok(())
    }

    /// Loads buffer `b` (once).
    fn load(&mut self, b: usize) -> Result<(), GltfError> {
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

    /// Checks that `count` elements of `elem` bytes, `stride` apart (the view's stride when
    /// `None`), from `offset` in buffer view `v`, lie inside the view and its buffer.
    fn span(
        &mut self,
        part: &str,
        v: usize,
        offset: u64,
        count: usize,
        elem: usize,
        stride: Option<usize>,
    ) -> Result<Span, GltfError> {
        let views = self.root.buffer_views.len();
        if v >= views {
            return Err(invalid(
                part,
                format!(
                    "buffer view {v} does not exist (the file has {})",
                    count_of(views, "buffer view", "buffer views")
                ),
            ));
        }
        let view = &self.root.buffer_views[v];
        let view_part = label("buffer view", v, view.name.as_deref());
        let b = view.buffer.value();
        let buffers = self.root.buffers.len();
        if b >= buffers {
            return Err(invalid(
                view_part,
                format!(
                    "buffer {b} does not exist (the file has {})",
                    count_of(buffers, "buffer", "buffers")
                ),
            ));
        }
        let view_start = view.byte_offset.map_or(0, |o| o.0);
        let view_len = view.byte_length.0;
        let stride = match stride {
            Some(s) => s,
            None => match view.byte_stride {
                Some(s) if s.0 < elem => {
                    return Err(invalid(
                        part,
                        format!(
                            "the byteStride {} of buffer view {v} is shorter than its \
                             {elem}-byte elements",
                            s.0
                        ),
                    ));
                }
                Some(s) => s.0,
                None => elem,
            },
        };
        self.load(b)?;
        let buffer_len = self.buffers[b].as_deref().map_or(0, <[u8]>::len) as u64;
        let view_end = view_start.checked_add(view_len);
        if view_end.is_none_or(|e| e > buffer_len) {
            return Err(invalid(
                view_part,
                format!(
                    "bytes {view_start}..+{view_len} are past the {buffer_len} bytes of buffer {b}"
                ),
            ));
        }
        let end = if count == 0 {
            Some(offset)
        } else {
            (count as u64 - 1)
                .checked_mul(stride as u64)
                .and_then(|x| x.checked_add(elem as u64))
                .and_then(|x| x.checked_add(offset))
        };
        if end.is_none_or(|e| e > view_len) {
            let end = end.map_or_else(|| "past 2^64".to_owned(), |e| e.to_string());
            return Err(invalid(
                part,
                format!(
                    "{} of {elem} bytes (stride {stride}) from byte {offset} end at byte \
                     {end}, past the {view_len} bytes of buffer view {v}",
                    count_of(count, "element", "elements")
                ),
            ));
        }
        // Inside a buffer that is in memory, so every offset fits a usize.
        Ok(Span {
            buffer: b,
            start: (view_start + offset) as usize,
            stride,
        })
    }

    /// Validates accessor `a` (in range: checked by the caller).
    fn layout(&mut self, a: usize, part: String) -> Result<Layout, GltfError> {
        let accessor = &self.root.accessors[a];
        let Checked::Valid(json::accessor::GenericComponentType(component)) =
            &accessor.component_type
        else {
            return Err(invalid(part, "componentType is not one of 5120..5126"));
        };
        let Checked::Valid(kind) = &accessor.type_ else {
            return Err(invalid(part, "type is not SCALAR, VEC2..4 or MAT2..4"));
        };
        let (component, dims) = (*component, kind.multiplicity());
        // The counts were checked against the limits before: they fit in memory.
        let count = accessor.count.0 as usize;
        let normalized = accessor.normalized;
        let elem = component.size() * dims;
        let view = accessor.buffer_view.map(|v| v.value());
        let offset = accessor.byte_offset.map_or(0, |o| o.0);
        let sparse = accessor.sparse.as_ref().map(|s| {
            (
                s.count.0,
                s.indices.buffer_view.value(),
                s.indices.byte_offset.0,
                s.indices.component_type,
                s.values.buffer_view.value(),
                s.values.byte_offset.0,
            )
        });
        let base = match view {
            Some(v) => Some(self.span(&part, v, offset, count, elem, None)?),
            None => None,
        };
        let sparse = match sparse {
            None => None,
            Some((scount, iv, ioff, itype, vv, voff)) => {
                if scount > count as u64 {
                    return Err(invalid(
                        part,
                        format!("sparse count {scount} is more than its count {count}"),
                    ));
                }
                let scount = scount as usize;
                let index_type = match itype {
                    Checked::Valid(json::accessor::IndexComponentType(t))
                        if matches!(
                            t,
                            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
                        ) =>
                    {
                        t
                    }
                    _ => {
                        return Err(invalid(
                            part,
                            "sparse indices are not UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT",
                        ));
                    }
                };
                let isize = index_type.size();
                let indices = self.span(
                    &format!("{part} sparse indices"),
                    iv,
                    ioff,
                    scount,
                    isize,
                    Some(isize),
                )?;
                let values = self.span(
                    &format!("{part} sparse values"),
                    vv,
                    voff,
                    scount,
                    elem,
                    Some(elem),
                )?;
                Some(SparseSpan {
                    count: scount,
                    indices,
                    index_type,
                    values,
                })
            }
        };
        Ok(Layout {
            part,
            count,
            component,
            dims,
            normalized,
            base,
            sparse,
        })
    }

    fn bytes(&self, span: Span) -> &[u8] {
        self.buffers[span.buffer].as_deref().unwrap_or_default()
    }

    /// Reads every element of `layout` with `convert` (given an element's bytes), zeros where
    /// there is no buffer view, then applies its sparse substitutions.
    fn read_elements<T: Copy>(
        &self,
        layout: &Layout,
        zero: T,
        convert: impl Fn(&[u8]) -> T,
    ) -> Result<Vec<T>, GltfError> {
        let elem = layout.component.size() * layout.dims;
        let mut out = Vec::with_capacity(layout.count);
        match layout.base {
            Some(span) => {
                let data = self.bytes(span);
                for k in 0..layout.count {
                    if k % CHECK_EVERY == CHECK_EVERY - 1 {
                        check_deadline()?;
                    }
                    let at = span.start + k * span.stride;
                    out.push(convert(&data[at..at + elem]));
                }
            }
            None => out.resize(layout.count, zero),
        }
        if let Some(sparse) = layout.sparse {
            let indices = self.bytes(sparse.indices);
            let values = self.bytes(sparse.values);
            let isize = sparse.index_type.size();
            for k in 0..sparse.count {
                if k % CHECK_EVERY == CHECK_EVERY - 1 {
                    check_deadline()?;
                }
                let at = sparse.indices.start + k * isize;
                let target = component_u32(&indices[at..at + isize], sparse.index_type) as usize;
                if target >= layout.count {
                    return Err(invalid(
                        layout.part.clone(),
                        format!(
                            "sparse index {target} (entry {k}) is past its {}",
                            count_of(layout.count, "element", "elements")
                        ),
                    ));
                }
                let at = sparse.values.start + k * elem;
                out[target] = convert(&values[at..at + elem]);
            }
        }
        Ok(out)
    }

    fn read_positions(&self, layout: &Layout) -> Result<Vec<Vec3>, GltfError> {
        if layout.dims != 3 {
            return Err(invalid(
                layout.part.clone(),
                format!("type has {} components, POSITION is a VEC3", layout.dims),
            ));
        }
        let c = layout.component;
        if c == ComponentType::U32 {
            return Err(unsupported(
                layout.part.clone(),
                "POSITION of UNSIGNED_INT (FLOAT, or BYTE/SHORT and their unsigned forms with \
                 KHR_mesh_quantization, are read)",
            ));
        }
        let size = c.size();
        let normalized = layout.normalized;
        let out = self.read_elements(layout, Vec3::ZERO, |b| {
            Vec3::new(
                component_f32(&b[..size], c, normalized),
                component_f32(&b[size..2 * size], c, normalized),
                component_f32(&b[2 * size..], c, normalized),
            )
        })?;
        if let Some(k) = out.iter().position(|p| !p.is_finite()) {
            return Err(invalid(
                layout.part.clone(),
                format!("position {k} is not finite: {}", out[k]),
            ));
        }
        Ok(out)
    }

    fn read_indices(&self, layout: &Layout) -> Result<Vec<u32>, GltfError> {
        if layout.dims != 1 {
            return Err(invalid(
                layout.part.clone(),
                format!("type has {} components, indices are SCALAR", layout.dims),
            ));
        }
        let c = layout.component;
        if !matches!(
            c,
            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
        ) {
            return Err(invalid(
                layout.part.clone(),
                format!(
                    "indices of {}: they are UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT",
                    component_name(c)
                ),
            ));
        }
        self.read_elements(layout, 0, |b| component_u32(b, c))
    }
}

fn component_name(c: ComponentType) -> &'static str {
    match c {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// One component (`b` holds at least its bytes) as an unsigned integer.
fn component_u32(b: &[u8], c: ComponentType) -> u32 {
    match c {
        ComponentType::I8 | ComponentType::U8 => u32::from(b[0]),
        ComponentType::I16 | ComponentType::U16 => u32::from(u16::from_le_bytes([b[0], b[1]])),
        ComponentType::U32 | ComponentType::F32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

/// One component as a float, decoded as glTF says for normalized integers.
fn component_f32(b: &[u8], c: ComponentType, normalized: bool) -> f32 {
    match c {
        ComponentType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        ComponentType::I8 => {
            let v = f32::from(b[0] as i8);
            if normalized { (v / 127.0).max(-1.0) } else { v }
        }
        ComponentType::U8 => {
            let v = f32::from(b[0]);
            if normalized { v / 255.0 } else { v }
        }
        ComponentType::I16 => {
            let v = f32::from(i16::from_le_bytes([b[0], b[1]]));
            if normalized {
                (v / 32767.0).max(-1.0)
            } else {
                v
            }
        }
        ComponentType::U16 => {
            let v = f32::from(u16::from_le_bytes([b[0], b[1]]));
            if normalized { v / 65535.0 } else { v }
        }
        ComponentType::U32 => {
            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32;
            if normalized { v / u32::MAX as f32 } else { v }
        }
    }
}

/// Whether `uri` starts with a URI scheme (`http:`, `file:`, ...): letters, digits, `+`, `-`,
/// `.` after a first letter, then `:`. One letter before the colon is a Windows drive, not a
/// scheme.
fn has_scheme(uri: &str) -> bool {
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
fn percent_decode(uri: &str) -> Result<String, String> {
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
fn decode_base64(text: &[u8]) -> Result<Vec<u8>, String> {
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

/// Translation × rotation × scale, as glTF composes a node's TRS (the rotation as given).
fn trs_matrix(translation: Vec3, rotation: Quat, scale: Vec3) -> Mat4 {
    Mat4::from_scale_rotation_translation(scale, rotation, translation)
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// How [`write_glb_nodes`] places a node relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GlbTransform {
    /// A `matrix` (omitted from the file when it is exactly the identity).
    Matrix(Mat4),
    /// `translation`, `rotation` (a unit quaternion: the reader normalizes one whose squared
    /// length is off 1 by more than 1e-5) and `scale`.
    Trs {
        /// Translation.
        translation: Vec3,
        /// Rotation, unit length.
        rotation: Quat,
        /// Scale.
        scale: Vec3,
    },
}

impl GlbTransform {
    /// The matrix [`read_gltf`] makes of it (bit for bit).
    #[must_use]
    pub fn matrix(&self) -> Mat4 {
        match *self {
            GlbTransform::Matrix(m) => m,
            GlbTransform::Trs {
                translation,
                rotation,
                scale,
            } => trs_matrix(translation, rotation, scale),
        }
    }
}

/// One node for [`write_glb_nodes`].
#[derive(Clone, Copy, Debug)]
pub struct GlbNode<'a> {
    /// The node's name.
    pub name: &'a str,
    /// Its mesh, if any. Entries that pass the same `&Mesh` (the same address, e.g. one
    /// `Arc<Mesh>`) share one glTF mesh. A mesh without triangles is not written (the node is).
    pub mesh: Option<&'a Mesh>,
    /// Its transform relative to its parent (the world for a root).
    pub transform: GlbTransform,
    /// The index of its parent among the entries, which must come before it; `None` for a
    /// root of the scene.
    pub parent: Option<usize>,
}

/// Writes placed meshes as a binary glTF: one root node per entry `(name, mesh, world
/// transform)`, a `matrix` each. See [`write_glb_nodes`].
///
/// # Errors
/// [`GltfError::Write`] for a non-finite position or transform, or data past GLB's 4 GiB.
pub fn write_glb(nodes: &[(&str, &Mesh, Mat4)]) -> Result<Vec<u8>, GltfError> {
    let entries: Vec<GlbNode<'_>> = nodes
        .iter()
        .map(|&(name, mesh, transform)| GlbNode {
            name,
            mesh: Some(mesh),
            transform: GlbTransform::Matrix(transform),
            parent: None,
        })
        .collect();
    write_glb_nodes(&entries)
}

/// Writes a node hierarchy as a binary glTF 2.0: one buffer (the BIN chunk), per distinct mesh
/// one primitive of TRIANGLES with a FLOAT VEC3 POSITION accessor (with `min` and `max`) and
/// UNSIGNED_INT indices, each in its own buffer view; the nodes in entry order, their children
/// in entry order, and one scene of the roots, which is the default scene (no scene without
/// entries). Chunks are 4-byte
/// aligned, JSON padded with spaces. Glam's column-major matrices are glTF's layout.
///
/// [`read_gltf`] reads it back to the same positions and indices bit for bit (one merged
/// primitive per mesh), the same names, and transforms equal to [`GlbTransform::matrix`]
/// multiplied from the root down (a root's own, unmultiplied). Its node order is depth-first, so
/// it matches the entries' order when every child follows its parent directly or the entries
/// are flat.
///
/// # Errors
/// [`GltfError::Write`] for a parent that does not come before its child, a non-finite
/// position or transform, or data past GLB's 4 GiB.
pub fn write_glb_nodes(nodes: &[GlbNode<'_>]) -> Result<Vec<u8>, GltfError> {
    crate::zone!("penumbra::gltf::write_glb");
    let err = |k: usize, message: String| GltfError::Write {
        part: label("entry", k, Some(nodes[k].name)),
        message,
    };
    // Distinct meshes by address, with their first user's index.
    let mut meshes: Vec<(&Mesh, usize)> = Vec::new();
    let mut slots: HashMap<*const Mesh, usize> = HashMap::new();
    let mut node_mesh: Vec<Option<usize>> = Vec::with_capacity(nodes.len());
    for (k, node) in nodes.iter().enumerate() {
        if let Some(p) = node.parent
            && p >= k
        {
            return Err(err(k, format!("its parent {p} does not come before it")));
        }
        let finite = match node.transform {
            GlbTransform::Matrix(m) => m.is_finite(),
            GlbTransform::Trs {
                translation,
                rotation,
                scale,
            } => translation.is_finite() && rotation.is_finite() && scale.is_finite(),
        };
        if !finite {
            return Err(err(k, "its transform is not finite".to_owned()));
        }
        let slot = match node.mesh {
            Some(mesh) if mesh.triangle_count() > 0 => {
                Some(match slots.get(&std::ptr::from_ref(mesh)) {
                    Some(&s) => s,
                    None => {
                        if let Some(at) = mesh.positions().iter().position(|p| !p.is_finite()) {
                            return Err(err(k, format!("position {at} of its mesh is not finite")));
                        }
                        meshes.push((mesh, k));
                        slots.insert(std::ptr::from_ref(mesh), meshes.len() - 1);
                        meshes.len() - 1
                    }
                })
            }
            _ => None,
        };
        node_mesh.push(slot);
    }

    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    let mut json_meshes = Vec::new();
    for &(mesh, first) in &meshes {
        let positions = mesh.positions();
        let indices = mesh.indices();
        let size = (positions.len() as u64) * 12 + (indices.len() as u64) * 4;
        if bin.len() as u64 + size > u64::from(u32::MAX) - (1 << 20) {
            return Err(err(first, "the meshes pass GLB's 4 GiB".to_owned()));
        }
        let (lo, hi) = positions.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let start = bin.len();
        bin.reserve(size as usize);
        for p in positions {
            for c in p.to_array() {
                bin.extend_from_slice(&c.to_le_bytes());
            }
        }
        views.push(serde_json::json!({
            "buffer": 0, "byteOffset": start, "byteLength": bin.len() - start, "target": 34962
        }));
        accessors.push(serde_json::json!({
            "bufferView": views.len() - 1, "componentType": 5126, "count": positions.len(),
            "type": "VEC3", "min": lo.to_array(), "max": hi.to_array()
        }));
        let start = bin.len();
        for &i in indices {
            bin.extend_from_slice(&i.to_le_bytes());
        }
        views.push(serde_json::json!({
            "buffer": 0, "byteOffset": start, "byteLength": bin.len() - start, "target": 34963
        }));
        accessors.push(serde_json::json!({
            "bufferView": views.len() - 1, "componentType": 5125, "count": indices.len(),
            "type": "SCALAR"
        }));
        json_meshes.push(serde_json::json!({
            "name": nodes[first].name,
            "primitives": [{
                "attributes": { "POSITION": accessors.len() - 2 },
                "indices": accessors.len() - 1,
                "mode": 4
            }]
        }));
    }

    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        match node.parent {
            Some(p) => children[p].push(k),
            None => roots.push(k),
        }
    }
    let json_nodes: Vec<serde_json::Value> = nodes
        .iter()
        .enumerate()
        .map(|(k, node)| {
            let mut o = serde_json::Map::new();
            o.insert("name".into(), node.name.into());
            if let Some(m) = node_mesh[k] {
                o.insert("mesh".into(), m.into());
            }
            match node.transform {
                GlbTransform::Matrix(m) => {
                    let cols = m.to_cols_array();
                    let identity = cols
                        .iter()
                        .zip(Mat4::IDENTITY.to_cols_array())
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    if !identity {
                        o.insert("matrix".into(), cols.to_vec().into());
                    }
                }
                GlbTransform::Trs {
                    translation,
                    rotation,
                    scale,
                } => {
                    o.insert("translation".into(), translation.to_array().to_vec().into());
                    o.insert("rotation".into(), rotation.to_array().to_vec().into());
                    o.insert("scale".into(), scale.to_array().to_vec().into());
                }
            }
            if !children[k].is_empty() {
                o.insert("children".into(), children[k].clone().into());
            }
            serde_json::Value::Object(o)
        })
        .collect();

    let mut doc = serde_json::json!({
        "asset": { "version": "2.0", "generator": "penumbra" },
    });
    // A scene lists at least one node (the schema's minItems); with none, the file has none.
    if !roots.is_empty() {
        doc["scene"] = 0.into();
        doc["scenes"] = serde_json::json!([{ "nodes": roots }]);
    }
    if !json_nodes.is_empty() {
        doc["nodes"] = json_nodes.into();
    }
    if !json_meshes.is_empty() {
        doc["meshes"] = json_meshes.into();
        doc["accessors"] = accessors.into();
        doc["bufferViews"] = views.into();
        doc["buffers"] = serde_json::json!([{ "byteLength": bin.len() }]);
    }
    let mut json = serde_json::to_vec(&doc).map_err(|e| GltfError::Write {
        part: "the JSON".to_owned(),
        message: e.to_string(),
    })?;
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let Ok(total32) = u32::try_from(total) else {
        return Err(GltfError::Write {
            part: "the file".to_owned(),
            message: format!("{total} bytes pass GLB's 4 GiB"),
        });
    };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total32.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64(b"aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64(b"aGVsbG8").unwrap(), b"hello");
        assert_eq!(decode_base64(b"aGVsbA==").unwrap(), b"hell");
        assert_eq!(decode_base64(b"").unwrap(), b"");
        assert_eq!(decode_base64(b"_-8=").unwrap(), [0xff, 0xef]);
        assert!(decode_base64(b"aGV").is_ok());
        assert!(
            decode_base64(b"aGVsb")
                .unwrap_err()
                .contains("one too many")
        );
        assert!(decode_base64(b"aG*s").unwrap_err().contains("byte 2"));
    }

    #[test]
    fn uris_with_a_scheme_and_escapes() {
        assert!(has_scheme("http://example.com/a.bin"));
        assert!(has_scheme("file:a.bin"));
        assert!(!has_scheme("C:/levels/a.bin"));
        assert!(!has_scheme("a.bin"));
        assert!(!has_scheme("dir/a:b.bin"));
        assert_eq!(percent_decode("my%20level.bin").unwrap(), "my level.bin");
        assert!(percent_decode("bad%2").is_err());
        assert!(percent_decode("bad%ff").is_err());
    }

    #[test]
    fn names_in_messages_are_shortened() {
        let long = "x".repeat(100);
        let shown = label("mesh", 2, Some(&long));
        assert!(shown.starts_with("mesh 2 \"xxx"));
        assert!(shown.ends_with("…\""));
        assert!(shown.chars().count() < 70);
        assert_eq!(label("node", 1, None), "node 1");
    }
}
