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

mod accessor;
mod buffer;
mod document;
mod scene;
mod write;

use std::borrow::Cow;
use std::sync::Arc;

use glam::Mat4;

use crate::raster::Mesh;
use crate::shadow::Occluder;
use document::{Document, split_glb};

pub use write::{GlbNode, GlbTransform, write_glb, write_glb_nodes};

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

#[cfg(test)]
mod tests;
