//! Writing: placed meshes and node hierarchies as a binary glTF 2.0 that
//! [`read_gltf`](super::read_gltf) and other tools read.

use std::collections::HashMap;

use glam::{Mat4, Quat, Vec3};

use super::scene::trs_matrix;
use super::{GltfError, label};
use crate::raster::Mesh;

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
    /// The matrix [`read_gltf`](super::read_gltf) makes of it (bit for bit).
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
///
/// [`read_gltf`]: super::read_gltf
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
