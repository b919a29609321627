//! glTF levels (`penumbra_core::gltf`): `write_glb` → `read_gltf` round trips, hand-built `.gltf`
//! documents (data: URIs, external buffers, strips, fans, index types, quantized, sparse and
//! strided positions, scene selection) and the errors of broken files, each naming the part.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::{Mat4, Quat, Vec3};
use penumbra_core::gltf::{
    GlbNode, GlbTransform, GltfError, GltfLevel, GltfLimits, read_gltf, write_glb, write_glb_nodes,
};
use penumbra_core::raster::Mesh;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn no_files(uri: &str) -> Result<Vec<u8>, String> {
    Err(format!("no file {uri:?} in this test"))
}

fn read(bytes: &[u8]) -> Result<GltfLevel, GltfError> {
    read_gltf(bytes, &mut no_files, GltfLimits::default())
}

fn read_json(doc: &Value) -> Result<GltfLevel, GltfError> {
    read(&serde_json::to_vec(doc).unwrap())
}

/// The message of an error that must happen.
fn refused(result: Result<GltfLevel, GltfError>) -> String {
    match result {
        Ok(level) => panic!("accepted: {} nodes", level.nodes.len()),
        Err(e) => e.to_string(),
    }
}

fn assert_contains(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} lacks {part:?}");
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn data_uri(bytes: &[u8]) -> String {
    format!("data:application/octet-stream;base64,{}", base64(bytes))
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Positions as triples.
fn vecs(values: &[f32]) -> Vec<Vec3> {
    values.chunks(3).map(Vec3::from_slice).collect()
}

/// One buffer (a data: URI) holding `positions` (f32 VEC3) and then `indices` (bytes of the
/// given component type, padded to 4), one mesh of one primitive with `mode`, one node.
fn one_primitive(positions: &[f32], indices: Option<(u32, &[u8])>, mode: u32) -> Value {
    let mut bin = f32_bytes(positions);
    let position_len = bin.len();
    let mut accessors = vec![json!({
        "bufferView": 0, "componentType": 5126, "count": positions.len() / 3, "type": "VEC3"
    })];
    let mut views = vec![json!({ "buffer": 0, "byteLength": position_len })];
    let mut primitive = json!({ "attributes": { "POSITION": 0 }, "mode": mode });
    if let Some((component, bytes)) = indices {
        let size = match component {
            5121 => 1,
            5123 => 2,
            _ => 4,
        };
        views.push(json!({ "buffer": 0, "byteOffset": position_len, "byteLength": bytes.len() }));
        accessors.push(json!({
            "bufferView": 1, "componentType": component, "count": bytes.len() / size,
            "type": "SCALAR"
        }));
        primitive["indices"] = json!(1);
        bin.extend_from_slice(bytes);
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    json!({
        "asset": { "version": "2.0" },
        "buffers": [{ "byteLength": bin.len(), "uri": data_uri(&bin) }],
        "bufferViews": views,
        "accessors": accessors,
        "meshes": [{ "name": "thing", "primitives": [primitive] }],
        "nodes": [{ "mesh": 0 }],
    })
}

/// The triangles of a mesh as position triples, for comparisons that ignore index layout.
fn triangles(mesh: &Mesh) -> Vec<[Vec3; 3]> {
    let p = mesh.positions();
    mesh.indices()
        .chunks(3)
        .map(|t| [p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]])
        .collect()
}

fn bits(m: Mat4) -> [u32; 16] {
    m.to_cols_array().map(f32::to_bits)
}

fn position_bits(mesh: &Mesh) -> Vec<[u32; 3]> {
    mesh.positions()
        .iter()
        .map(|p| p.to_array().map(f32::to_bits))
        .collect()
}

/// A mesh with awkward values: -0.0, a subnormal, huge and inexact ones, and a position no
/// triangle uses.
fn awkward_mesh() -> Mesh {
    Mesh::new(
        vec![
            Vec3::new(-0.0, 0.1, 1e30),
            Vec3::new(f32::from_bits(1), -3.5, 7.25e-12),
            Vec3::new(1.0 / 3.0, f32::MAX, -f32::MAX),
            Vec3::new(2.0, 2.0, 2.0),
            Vec3::new(123_456.79, -0.333_333_34, 0.0),
        ],
        vec![0, 1, 2, 2, 1, 4, 4, 0, 2],
    )
    .unwrap()
}

/// The JSON chunk of a GLB.
fn glb_json(glb: &[u8]) -> Value {
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    assert_eq!(&glb[16..20], b"JSON");
    serde_json::from_slice(&glb[20..20 + len]).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn write_then_read_gives_the_same_triangles_names_transforms_and_sharing() {
    let crate_mesh = Arc::new(Mesh::cuboid(Vec3::new(-1.0, 0.0, -1.0), Vec3::ONE));
    let awkward = Arc::new(awkward_mesh());
    let placed = Mat4::from_scale_rotation_translation(
        Vec3::new(1.5, -2.0, 0.25),
        Quat::from_rotation_y(0.7),
        Vec3::new(4.0, -0.0, 1e-3),
    );
    let skewed = Mat4::from_cols_array(&[
        1.0, 0.1, 0.0, 0.0, 0.3, 1.0, -0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 5.0, 6.0, 7.0, 1.0,
    ]);
    let entries: Vec<(&str, &Mesh, Mat4)> = vec![
        ("crate \"a\"", &crate_mesh, placed),
        ("awkward", &awkward, skewed),
        ("crate b", &crate_mesh, Mat4::IDENTITY),
        (
            "",
            &awkward,
            Mat4::from_translation(Vec3::new(-1.0, 2.0, -3.0)),
        ),
    ];
    let glb = write_glb(&entries).unwrap();
    let level = read(&glb).unwrap();
    assert_eq!(level.skipped_primitives, 0);
    assert_eq!(level.nodes.len(), entries.len());
    for (node, (name, mesh, transform)) in level.nodes.iter().zip(&entries) {
        assert_eq!(node.name, *name);
        assert_eq!(bits(node.transform), bits(*transform), "{name}");
        assert_eq!(node.mesh.indices(), mesh.indices(), "{name}");
        assert_eq!(position_bits(&node.mesh), position_bits(mesh), "{name}");
    }
    assert!(Arc::ptr_eq(&level.nodes[0].mesh, &level.nodes[2].mesh));
    assert!(Arc::ptr_eq(&level.nodes[1].mesh, &level.nodes[3].mesh));
    assert!(!Arc::ptr_eq(&level.nodes[0].mesh, &level.nodes[1].mesh));
    assert_eq!(level.nodes[2].mesh_index, level.nodes[0].mesh_index);
    assert_eq!(level.triangle_count(), 2 * 12 + 2 * 3);
    assert_eq!(level.occluders().count(), 4);

    // Written once per distinct mesh.
    let doc = glb_json(&glb);
    assert_eq!(doc["meshes"].as_array().unwrap().len(), 2);
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 4);
    // The identity is left out, as glTF's default.
    assert!(doc["nodes"][2].get("matrix").is_none());
    assert!(doc["nodes"][0].get("matrix").is_some());

    // And again: the second trip changes nothing.
    let again: Vec<(&str, &Mesh, Mat4)> = level
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), &*n.mesh, n.transform))
        .collect();
    assert_eq!(write_glb(&again).unwrap(), glb);
}

#[test]
fn a_hierarchy_with_a_trs_parent_and_a_matrix_child_multiplies_down_from_the_root() {
    let mesh = Mesh::cuboid(Vec3::ZERO, Vec3::ONE);
    let other = awkward_mesh();
    let parent = GlbTransform::Trs {
        translation: Vec3::new(10.0, 0.5, -4.0),
        rotation: Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 1.1),
        scale: Vec3::new(2.0, 0.5, 1.25),
    };
    let child = GlbTransform::Matrix(Mat4::from_cols_array(&[
        0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.25, 3.0, 1.0,
    ]));
    let grandchild = GlbTransform::Trs {
        translation: Vec3::new(0.0, 1.0, 0.0),
        rotation: Quat::IDENTITY,
        scale: Vec3::splat(3.0),
    };
    let nodes = [
        GlbNode {
            name: "parent",
            mesh: Some(&mesh),
            transform: parent,
            parent: None,
        },
        GlbNode {
            name: "child",
            mesh: Some(&other),
            transform: child,
            parent: Some(0),
        },
        GlbNode {
            name: "group",
            mesh: None,
            transform: grandchild,
            parent: Some(1),
        },
        GlbNode {
            name: "leaf",
            mesh: Some(&mesh),
            transform: GlbTransform::Matrix(Mat4::IDENTITY),
            parent: Some(2),
        },
        GlbNode {
            name: "second root",
            mesh: Some(&mesh),
            transform: GlbTransform::Matrix(Mat4::from_translation(Vec3::X)),
            parent: None,
        },
    ];
    let glb = write_glb_nodes(&nodes).unwrap();
    let doc = glb_json(&glb);
    assert_eq!(doc["scenes"][0]["nodes"], json!([0, 4]));
    assert_eq!(doc["nodes"][0]["children"], json!([1]));
    assert!(doc["nodes"][0].get("translation").is_some());
    assert!(doc["nodes"][0].get("matrix").is_none());
    assert!(doc["nodes"][1].get("matrix").is_some());
    assert!(doc["nodes"][2].get("mesh").is_none());

    let level = read(&glb).unwrap();
    let names: Vec<&str> = level.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["parent", "child", "leaf", "second root"]);
    let p = parent.matrix();
    let c = p * child.matrix();
    let leaf = c * grandchild.matrix() * Mat4::IDENTITY;
    assert_eq!(bits(level.nodes[0].transform), bits(p));
    assert_eq!(bits(level.nodes[1].transform), bits(c));
    assert_eq!(bits(level.nodes[2].transform), bits(leaf));
    assert_eq!(
        bits(level.nodes[3].transform),
        bits(Mat4::from_translation(Vec3::X))
    );
    assert_eq!(level.nodes[2].node, 3);
    // The TRS matrix is glTF's T × R × S.
    let expected = Mat4::from_translation(Vec3::new(10.0, 0.5, -4.0))
        * Mat4::from_quat(Quat::from_axis_angle(
            Vec3::new(1.0, 2.0, 3.0).normalize(),
            1.1,
        ))
        * Mat4::from_scale(Vec3::new(2.0, 0.5, 1.25));
    assert!(p.abs_diff_eq(expected, 1e-5));
    assert_eq!(position_bits(&level.nodes[1].mesh), position_bits(&other));
}

#[test]
fn a_written_glb_follows_the_container_rules() {
    let mesh = awkward_mesh();
    let glb = write_glb(&[("odd name é", &mesh, Mat4::IDENTITY)]).unwrap();
    assert_eq!(&glb[..4], b"glTF");
    assert_eq!(u32::from_le_bytes(glb[4..8].try_into().unwrap()), 2);
    assert_eq!(
        u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize,
        glb.len()
    );
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    assert!(json_len.is_multiple_of(4));
    let json_bytes = &glb[20..20 + json_len];
    let trimmed = json_bytes.trim_ascii_end();
    assert!(json_bytes[trimmed.len()..].iter().all(|&b| b == b' '));
    let bin_at = 20 + json_len;
    let bin_len = u32::from_le_bytes(glb[bin_at..bin_at + 4].try_into().unwrap()) as usize;
    assert_eq!(&glb[bin_at + 4..bin_at + 8], b"BIN\0");
    assert!(bin_len.is_multiple_of(4));
    assert_eq!(bin_at + 8 + bin_len, glb.len());

    let doc = glb_json(&glb);
    assert_eq!(doc["asset"]["version"], "2.0");
    assert_eq!(doc["scene"], 0);
    assert!(doc["buffers"][0]["byteLength"].as_u64().unwrap() as usize <= bin_len);
    assert!(doc["buffers"][0].get("uri").is_none());
    for view in doc["bufferViews"].as_array().unwrap() {
        assert_eq!(view["byteOffset"].as_u64().unwrap() % 4, 0);
    }
    let position = &doc["accessors"][0];
    assert_eq!(position["type"], "VEC3");
    assert_eq!(position["componentType"], 5126);
    let min: Vec<f32> = serde_json::from_value(position["min"].clone()).unwrap();
    let max: Vec<f32> = serde_json::from_value(position["max"].clone()).unwrap();
    let (lo, hi) = mesh.bounds().unwrap();
    assert_eq!(min, lo.to_array());
    assert_eq!(max, hi.to_array());
    assert_eq!(doc["accessors"][1]["componentType"], 5125);
    assert_eq!(doc["meshes"][0]["primitives"][0]["mode"], 4);
    assert_eq!(doc["nodes"][0]["name"], "odd name é");
}

#[test]
fn empty_meshes_and_empty_levels_are_written_and_read_as_nothing() {
    let empty = Mesh::new(vec![Vec3::ONE], vec![]).unwrap();
    let glb = write_glb(&[("nothing", &empty, Mat4::IDENTITY)]).unwrap();
    let doc = glb_json(&glb);
    assert!(doc.get("meshes").is_none());
    assert!(read(&glb).unwrap().nodes.is_empty());
    let glb = write_glb(&[]).unwrap();
    assert!(glb_json(&glb).get("scenes").is_none());
    assert!(read(&glb).unwrap().nodes.is_empty());
    // The spec makes a scene's `nodes` optional, and everything but geometry is not read: a
    // texture without `source` and an animation channel without `node` are fine.
    let doc = json!({
        "asset": { "version": "2.0" }, "scenes": [{}], "scene": 0,
        "textures": [{ "extensions": { "KHR_texture_basisu": { "source": 0 } } }],
        "animations": [{ "channels": [{ "sampler": 0, "target": { "path": "pointer" } }],
                         "samplers": [] }],
    });
    assert!(read_json(&doc).unwrap().nodes.is_empty());
}

#[test]
fn write_refuses_what_it_cannot_write() {
    let mut positions = awkward_mesh().positions().to_vec();
    positions[3].y = f32::NAN;
    let nan = Mesh::new(positions, vec![0, 1, 2]).unwrap();
    let e = write_glb(&[("bad", &nan, Mat4::IDENTITY)]).unwrap_err();
    assert_contains(
        &e.to_string(),
        &["entry 0 \"bad\"", "position 3", "not finite"],
    );
    let mesh = Mesh::cuboid(Vec3::ZERO, Vec3::ONE);
    let e = write_glb(&[
        ("ok", &mesh, Mat4::IDENTITY),
        ("inf", &mesh, Mat4::from_scale(Vec3::splat(f32::INFINITY))),
    ])
    .unwrap_err();
    assert_contains(
        &e.to_string(),
        &["entry 1 \"inf\"", "transform is not finite"],
    );
    let e = write_glb_nodes(&[GlbNode {
        name: "loop",
        mesh: None,
        transform: GlbTransform::Matrix(Mat4::IDENTITY),
        parent: Some(0),
    }])
    .unwrap_err();
    assert_contains(
        &e.to_string(),
        &["entry 0 \"loop\"", "does not come before"],
    );
}

// ---------------------------------------------------------------------------------------------
// Hand-built documents
// ---------------------------------------------------------------------------------------------

const QUAD: [f32; 12] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0];

#[test]
fn a_gltf_with_a_data_uri_buffer() {
    let indices: Vec<u8> = [0u16, 1, 2, 0, 2, 3]
        .iter()
        .flat_map(|i| i.to_le_bytes())
        .collect();
    let mut doc = one_primitive(&QUAD, Some((5123, &indices)), 4);
    doc["nodes"][0]["translation"] = json!([1.0, 2.0, 3.0]);
    let level = read_json(&doc).unwrap();
    assert_eq!(level.nodes.len(), 1);
    let node = &level.nodes[0];
    assert_eq!(node.name, "thing"); // the mesh's name: the node has none
    assert_eq!(node.mesh.positions(), vecs(&QUAD));
    assert_eq!(node.mesh.indices(), [0, 1, 2, 0, 2, 3]);
    assert_eq!(
        node.transform,
        Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0))
    );

    // Leading whitespace, a BOM and the application/gltf-buffer media type are fine too.
    let uri = doc["buffers"][0]["uri"]
        .as_str()
        .unwrap()
        .replace("application/octet-stream", "application/gltf-buffer");
    doc["buffers"][0]["uri"] = json!(uri);
    let mut bytes = b"\n  \xEF\xBB\xBF".to_vec();
    bytes.extend(serde_json::to_vec(&doc).unwrap());
    assert_eq!(
        read(&bytes).unwrap().nodes[0].mesh.indices(),
        [0, 1, 2, 0, 2, 3]
    );
}

#[test]
fn a_gltf_with_an_external_buffer_loaded_through_the_callback() {
    let bin = f32_bytes(&QUAD);
    let doc = json!({
        "asset": { "version": "2.0" },
        "buffers": [
            { "byteLength": bin.len(), "uri": "level%20parts/quad.bin" },
            { "byteLength": 4, "uri": "unused.bin" }
        ],
        "bufferViews": [{ "buffer": 0, "byteLength": bin.len() }],
        "accessors": [{ "bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3" }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0 }, "mode": 6 }] }],
        "nodes": [{ "name": "fan" }, { "mesh": 0 }],
        "scenes": [{ "nodes": [1] }],
    });
    let asked = RefCell::new(Vec::new());
    let mut load = |uri: &str| {
        asked.borrow_mut().push(uri.to_owned());
        // A longer file is cut to byteLength.
        let mut data = bin.clone();
        data.extend_from_slice(&[0xAB; 5]);
        Ok(data)
    };
    let level = read_gltf(
        &serde_json::to_vec(&doc).unwrap(),
        &mut load,
        GltfLimits::default(),
    )
    .unwrap();
    assert_eq!(*asked.borrow(), ["level parts/quad.bin"]);
    assert_eq!(level.nodes[0].name, "node 1");
    assert_eq!(level.nodes[0].mesh.positions(), vecs(&QUAD));
    assert_eq!(level.nodes[0].mesh.positions().len(), 4);
    // Fan: (v1, v2, v0), (v2, v3, v0).
    assert_eq!(level.nodes[0].mesh.indices(), [1, 2, 0, 2, 3, 0]);
}

#[test]
fn strips_and_fans_follow_the_spec_vertex_order() {
    // Five vertices: three triangles.
    let five: Vec<f32> = (0..15).map(|k| k as f32).collect();
    let strip = read_json(&one_primitive(&five, None, 5)).unwrap();
    assert_eq!(strip.nodes[0].mesh.indices(), [0, 1, 2, 1, 3, 2, 2, 3, 4]);
    let fan = read_json(&one_primitive(&five, None, 6)).unwrap();
    assert_eq!(fan.nodes[0].mesh.indices(), [1, 2, 0, 2, 3, 0, 3, 4, 0]);

    // Indexed: the strip walks the indices.
    let indexed = [4u8, 3, 2, 1, 0];
    let strip = read_json(&one_primitive(&five, Some((5121, &indexed)), 5)).unwrap();
    assert_eq!(strip.nodes[0].mesh.indices(), [4, 3, 2, 3, 1, 2, 2, 1, 0]);
    let fan = read_json(&one_primitive(&five, Some((5121, &indexed)), 6)).unwrap();
    assert_eq!(fan.nodes[0].mesh.indices(), [3, 2, 4, 2, 1, 4, 1, 0, 4]);

    // Strips of 2 vertices have no triangle: the node is left out.
    let level = read_json(&one_primitive(&five[..6], None, 5)).unwrap();
    assert!(level.nodes.is_empty());
    assert_eq!(level.skipped_primitives, 0);
}

#[test]
fn u8_u16_and_u32_indices_and_merged_primitives() {
    let tri = [0u32, 1, 2, 2, 3, 0];
    for (component, bytes) in [
        (5121u32, tri.iter().map(|&i| i as u8).collect::<Vec<u8>>()),
        (
            5123,
            tri.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect(),
        ),
        (5125, tri.iter().flat_map(|&i| i.to_le_bytes()).collect()),
    ] {
        let level = read_json(&one_primitive(&QUAD, Some((component, &bytes)), 4)).unwrap();
        assert_eq!(
            level.nodes[0].mesh.indices(),
            tri,
            "component type {component}"
        );
    }

    // Two primitives of one mesh share a buffer; the merged mesh offsets the second's indices.
    let mut doc = one_primitive(
        &QUAD,
        Some((
            5125,
            &tri.iter()
                .flat_map(|&i| i.to_le_bytes())
                .collect::<Vec<u8>>(),
        )),
        4,
    );
    let first = doc["meshes"][0]["primitives"][0].clone();
    let mut points = first.clone();
    points["mode"] = json!(0);
    let mut lines = first.clone();
    lines["mode"] = json!(1);
    doc["meshes"][0]["primitives"] = json!([first, points, first, lines]);
    doc["nodes"] = json!([{ "mesh": 0, "name": "a" }, { "mesh": 0, "name": "b" }]);
    let level = read_json(&doc).unwrap();
    assert_eq!(level.skipped_primitives, 2);
    let mesh = &level.nodes[0].mesh;
    assert_eq!(mesh.positions().len(), 8);
    assert_eq!(mesh.indices(), [0, 1, 2, 2, 3, 0, 4, 5, 6, 6, 7, 4]);
    assert!(Arc::ptr_eq(mesh, &level.nodes[1].mesh));
    assert_eq!(triangles(mesh)[2], triangles(mesh)[0]);
}

#[test]
fn scenes_pick_the_default_then_scene_zero_then_the_root_nodes() {
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["nodes"] = json!([
        { "name": "a", "mesh": 0 },
        { "name": "b", "mesh": 0, "children": [2] },
        { "name": "c", "mesh": 0 }
    ]);
    let names = |doc: &Value| -> Vec<String> {
        read_json(doc)
            .unwrap()
            .nodes
            .into_iter()
            .map(|n| n.name)
            .collect()
    };
    // No scenes: every root node (c is b's child).
    assert_eq!(names(&doc), ["a", "b", "c"]);
    doc["scenes"] = json!([{ "nodes": [0] }, { "nodes": [1, 0] }]);
    assert_eq!(names(&doc), ["a"]);
    doc["scene"] = json!(1);
    assert_eq!(names(&doc), ["b", "c", "a"]);
}

#[test]
fn quantized_sparse_strided_and_zero_positions() {
    // Normalized SHORT positions (KHR_mesh_quantization), 8 bytes apart (stride), then a
    // sparse accessor over zeros with two substitutions.
    let shorts: [i16; 12] = [32767, 0, -32768, 0, 16384, 0, -16384, 0, 0, 0, 1, 0];
    let mut bin: Vec<u8> = shorts.iter().flat_map(|s| s.to_le_bytes()).collect();
    let sparse_at = bin.len();
    bin.extend([1u8, 2, 0, 0]); // sparse indices (u8), padded
    bin.extend(f32_bytes(&[5.0, 6.0, 7.0, -1.0, -2.0, -3.0]));
    let doc = json!({
        "asset": { "version": "2.0" },
        "extensionsRequired": ["KHR_mesh_quantization", "KHR_materials_unlit"],
        "extensionsUsed": ["KHR_mesh_quantization", "KHR_materials_unlit"],
        "buffers": [{ "byteLength": bin.len(), "uri": data_uri(&bin) }],
        "bufferViews": [
            { "buffer": 0, "byteLength": sparse_at, "byteStride": 8 },
            { "buffer": 0, "byteOffset": sparse_at, "byteLength": 4 },
            { "buffer": 0, "byteOffset": sparse_at + 4, "byteLength": 24 }
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5122, "normalized": true, "count": 3,
              "type": "VEC3" },
            { "componentType": 5126, "count": 3, "type": "VEC3",
              "sparse": { "count": 2,
                          "indices": { "bufferView": 1, "componentType": 5121 },
                          "values": { "bufferView": 2 } } }
        ],
        "meshes": [{ "primitives": [
            { "attributes": { "POSITION": 0 } },
            { "attributes": { "POSITION": 1 }, "extras": "any JSON value" }
        ] }],
        "nodes": [{ "mesh": 0, "extras": 42 }],
    });
    let level = read_json(&doc).unwrap();
    let p = level.nodes[0].mesh.positions();
    assert_eq!(p[0], Vec3::new(1.0, 0.0, -1.0));
    assert_eq!(p[1], Vec3::new(16384.0 / 32767.0, 0.0, -16384.0 / 32767.0));
    assert_eq!(p[2], Vec3::new(0.0, 0.0, 1.0 / 32767.0));
    assert_eq!(
        &p[3..],
        [
            Vec3::ZERO,
            Vec3::new(5.0, 6.0, 7.0),
            Vec3::new(-1.0, -2.0, -3.0)
        ]
    );
    assert_eq!(level.nodes[0].mesh.indices(), [0, 1, 2, 3, 4, 5]);
}

#[test]
fn a_matrix_wins_over_trs_and_rotations_are_normalized() {
    let mut doc = one_primitive(&QUAD, None, 6);
    let m = Mat4::from_translation(Vec3::new(0.0, 9.0, 0.0));
    doc["nodes"] = json!([
        { "mesh": 0, "matrix": m.to_cols_array(), "translation": [1.0, 1.0, 1.0] },
        { "mesh": 0, "rotation": [0.0, 0.0, 0.0, 2.0] }
    ]);
    let level = read_json(&doc).unwrap();
    assert_eq!(level.nodes[0].transform, m);
    assert!(level.nodes[1].transform.abs_diff_eq(Mat4::IDENTITY, 1e-6));
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

fn sample_glb() -> Vec<u8> {
    let mesh = Mesh::cuboid(Vec3::ZERO, Vec3::ONE);
    write_glb(&[("box", &mesh, Mat4::IDENTITY)]).unwrap()
}

#[test]
fn broken_glb_containers_are_refused_with_the_chunk_named() {
    let glb = sample_glb();
    assert!(read(&glb).is_ok());

    let message = refused(read(&glb[..glb.len() - 10]));
    assert_contains(
        &message,
        &["GLB", "truncated", &format!("declares {} bytes", glb.len())],
    );
    let message = refused(read(&glb[..7]));
    assert_contains(&message, &["truncated", "header needs 12 bytes", "has 7"]);
    let message = refused(read(&[]));
    assert_contains(&message, &["truncated", "has 0"]);

    let mut bad = glb.clone();
    bad[..4].copy_from_slice(b"glTX");
    assert_contains(&refused(read(&bad)), &["bad magic", "\"glTX\""]);

    let mut bad = glb.clone();
    bad[4] = 1;
    assert_contains(&refused(read(&bad)), &["version 1"]);

    // The JSON chunk's length runs past the end.
    let mut bad = glb.clone();
    bad[12..16].copy_from_slice(&(glb.len() as u32).to_le_bytes());
    assert_contains(
        &refused(read(&bad)),
        &["chunk 0 (JSON)", "at byte 12", "runs past the end"],
    );

    // The BIN chunk's length runs past the end.
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let bin_at = 20 + json_len;
    let bin_len = u32::from_le_bytes(glb[bin_at..bin_at + 4].try_into().unwrap());
    let mut bad = glb.clone();
    bad[bin_at..bin_at + 4].copy_from_slice(&(bin_len + 4).to_le_bytes());
    assert_contains(
        &refused(read(&bad)),
        &["chunk 1 (BIN)", "its length", "runs past"],
    );

    // A first chunk that is not JSON.
    let mut bad = glb.clone();
    bad[16..20].copy_from_slice(b"BIN\0");
    assert_contains(&refused(read(&bad)), &["first chunk must be JSON", "BIN"]);

    // Trailing bytes after the declared length.
    let mut bad = glb.clone();
    bad.extend_from_slice(&[0; 4]);
    assert_contains(&refused(read(&bad)), &["trailing data"]);

    // No BIN chunk although buffer 0 needs it.
    let mut bad = glb[..bin_at].to_vec();
    let total = bad.len() as u32;
    bad[8..12].copy_from_slice(&total.to_le_bytes());
    assert_contains(&refused(read(&bad)), &["buffer 0", "no BIN chunk"]);
}

#[test]
fn bad_json_is_refused() {
    assert_contains(&refused(read(b"{ \"asset\": ")), &["glTF JSON", "EOF"]);
    assert_contains(&refused(read(b"{}")), &["glTF JSON", "asset"]);
    let doc = json!({ "asset": { "version": "1.0" } });
    assert_contains(&refused(read_json(&doc)), &["asset", "version \"1.0\""]);
    let doc = json!({ "asset": { "version": "2.0" }, "extensionsRequired": ["KHR_draco_mesh_compression"] });
    assert_contains(
        &refused(read_json(&doc)),
        &[
            "extensionsRequired[0]",
            "KHR_draco_mesh_compression",
            "not supported",
        ],
    );
}

#[test]
fn out_of_range_references_name_the_part() {
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(5);
    assert_contains(
        &refused(read_json(&doc)),
        &[
            "mesh 0 \"thing\" primitive 0",
            "POSITION accessor 5 does not exist",
            "1 accessor",
        ],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["accessors"][0]["count"] = json!(5);
    assert_contains(
        &refused(read_json(&doc)),
        &[
            "accessor 0 (POSITION of mesh 0 \"thing\" primitive 0)",
            "5 elements of 12 bytes",
            "end at byte 60, past the 48 bytes of buffer view 0",
        ],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["accessors"][0]["byteOffset"] = json!(u64::MAX - 4);
    assert_contains(&refused(read_json(&doc)), &["accessor 0", "past 2^64"]);

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["bufferViews"][0]["byteOffset"] = json!(8);
    assert_contains(
        &refused(read_json(&doc)),
        &[
            "buffer view 0",
            "bytes 8..+48 are past the 48 bytes of buffer 0",
        ],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["accessors"][0]["bufferView"] = json!(3);
    assert_contains(
        &refused(read_json(&doc)),
        &["accessor 0", "buffer view 3 does not exist"],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["bufferViews"][0]["buffer"] = json!(2);
    assert_contains(
        &refused(read_json(&doc)),
        &["buffer view 0", "buffer 2 does not exist"],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["nodes"][0]["mesh"] = json!(1);
    assert_contains(
        &refused(read_json(&doc)),
        &["node 0", "mesh 1 does not exist"],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["scenes"] = json!([{ "nodes": [0] }]);
    doc["scene"] = json!(4);
    assert_contains(
        &refused(read_json(&doc)),
        &["default scene", "scene 4 does not exist"],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["nodes"][0]["children"] = json!([7]);
    assert_contains(
        &refused(read_json(&doc)),
        &["node 0", "child 0 is node 7", "does not exist"],
    );

    let mut doc = one_primitive(&QUAD, None, 6);
    doc["meshes"][0]["primitives"][0]["mode"] = json!(9);
    assert_contains(&refused(read_json(&doc)), &["primitive 0", "mode"]);
}

#[test]
fn an_index_past_the_positions_names_the_mesh_the_index_and_the_accessors() {
    let indices = [0u8, 1, 2, 0, 2, 4];
    let mut doc = one_primitive(&QUAD, Some((5121, &indices)), 4);
    doc["meshes"][0]["name"] = json!("door");
    let message = refused(read_json(&doc));
    assert_eq!(
        message,
        "mesh 0 \"door\" primitive 0: index 4 (element 5 of accessor 1) is past the 4 positions \
         of accessor 0"
    );

    // Not a whole number of triangles.
    let doc = one_primitive(&QUAD, Some((5121, &indices[..5])), 4);
    assert_contains(
        &refused(read_json(&doc)),
        &["multiple of 3", "5 indices (accessor 1)"],
    );

    // Float indices.
    let mut doc = one_primitive(&QUAD, Some((5125, &[0; 12])), 4);
    doc["accessors"][1]["componentType"] = json!(5126);
    assert_contains(
        &refused(read_json(&doc)),
        &["accessor 1 (indices of", "FLOAT"],
    );
}

#[test]
fn nan_positions_are_refused() {
    let mut quad = QUAD;
    quad[7] = f32::NAN;
    let message = refused(read_json(&one_primitive(&quad, None, 6)));
    assert_contains(
        &message,
        &["accessor 0 (POSITION of mesh 0", "position 2 is not finite"],
    );
    quad[7] = f32::INFINITY;
    assert_contains(
        &refused(read_json(&one_primitive(&quad, None, 6))),
        &["position 2"],
    );
}

#[test]
fn node_graphs_must_be_trees() {
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["nodes"] = json!([
        { "name": "root", "mesh": 0 },
        { "name": "a", "children": [2] },
        { "name": "b", "children": [3], "mesh": 0 },
        { "name": "c", "children": [1] }
    ]);
    let message = refused(read_json(&doc));
    assert_contains(
        &message,
        &[
            "node 1 \"a\": node graph cycle",
            "node 1 → node 2 → node 3 → node 1",
        ],
    );

    // A cycle no scene reaches is refused too.
    doc["nodes"] = json!([
        { "mesh": 0 },
        { "name": "x", "children": [2] },
        { "name": "y", "children": [1] }
    ]);
    doc["scenes"] = json!([{ "nodes": [0] }]);
    assert_contains(
        &refused(read_json(&doc)),
        &["node graph cycle", "node 1 → node 2 → node 1"],
    );

    doc["nodes"] = json!([{ "mesh": 0, "children": [0] }]);
    assert_contains(&refused(read_json(&doc)), &["node 0", "its own child"]);

    doc["nodes"] = json!([{ "children": [2] }, { "children": [2] }, { "mesh": 0 }]);
    doc["scenes"] = json!([{ "nodes": [0, 1] }]);
    assert_contains(
        &refused(read_json(&doc)),
        &["node 2", "child of both node 0 and node 1"],
    );

    doc["nodes"] = json!([{ "children": [1] }, { "mesh": 0 }]);
    doc["scenes"] = json!([{ "nodes": [0, 1] }]);
    assert_contains(
        &refused(read_json(&doc)),
        &["scene 0", "node 1 as a root", "child of node 0"],
    );

    doc["scenes"] = json!([{ "nodes": [0, 0] }]);
    assert_contains(
        &refused(read_json(&doc)),
        &["scene 0", "lists node 0 twice"],
    );
}

#[test]
fn transforms_must_be_finite() {
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["nodes"] = json!([
        { "children": [1], "scale": [1e30, 1.0, 1.0] },
        { "name": "far", "mesh": 0, "scale": [1e30, 1.0, 1.0] }
    ]);
    assert_contains(
        &refused(read_json(&doc)),
        &["node 1 \"far\"", "world transform", "not finite"],
    );
    doc["nodes"] = json!([{ "mesh": 0, "rotation": [0.0, 0.0, 0.0, 0.0] }]);
    assert_contains(&refused(read_json(&doc)), &["node 0", "length 0"]);
}

#[test]
fn missing_buffers_name_the_buffer() {
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["buffers"][0]["uri"] = json!("geometry.bin");
    doc["buffers"][0]["name"] = json!("geo");
    let message = refused(read_json(&doc));
    assert_eq!(
        message,
        "buffer 0 \"geo\": could not load \"geometry.bin\": no file \"geometry.bin\" in this test"
    );

    // Shorter than byteLength.
    let mut short = |_: &str| Ok(vec![0u8; 10]);
    let message = refused(read_gltf(
        &serde_json::to_vec(&doc).unwrap(),
        &mut short,
        GltfLimits::default(),
    ));
    assert_contains(
        &message,
        &[
            "buffer 0 \"geo\"",
            "holds 10 bytes, fewer than its byteLength 48",
        ],
    );

    doc["buffers"][0]["uri"] = json!("https://example.com/geometry.bin");
    assert_contains(
        &refused(read_json(&doc)),
        &["buffer 0", "neither a relative path nor a data: URI"],
    );

    doc["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,AAA*");
    assert_contains(&refused(read_json(&doc)), &["buffer 0", "not base64"]);

    // Not a data: URI (a multi-byte character where the colon would be): an external file.
    doc["buffers"][0]["uri"] = json!("dataΞpplication;base64,AAAA");
    assert_contains(
        &refused(read_json(&doc)),
        &["could not load \"dataΞpplication"],
    );

    doc["buffers"][0]["uri"] = json!("data:text/plain,hello");
    assert_contains(&refused(read_json(&doc)), &["buffer 0", "only base64"]);

    doc["buffers"][0].as_object_mut().unwrap().remove("uri");
    assert_contains(&refused(read_json(&doc)), &["buffer 0", "has no uri"]);
}

#[test]
fn limits_are_checked_before_allocating() {
    let limits = GltfLimits {
        max_triangles: 1,
        ..GltfLimits::default()
    };
    let doc = one_primitive(&QUAD, None, 6);
    let bytes = serde_json::to_vec(&doc).unwrap();
    let message = refused(read_gltf(&bytes, &mut no_files, limits));
    assert_contains(
        &message,
        &[
            "mesh 0 \"thing\" primitive 0",
            "2 triangles",
            "max_triangles",
        ],
    );

    // A count of 2^40 without a buffer view (zeros) is refused, not allocated.
    let mut doc = one_primitive(&QUAD, None, 4);
    doc["accessors"][0] = json!({ "componentType": 5126, "count": 3u64 << 40, "type": "VEC3" });
    assert_contains(&refused(read_json(&doc)), &["max_triangles"]);
    let mut doc = one_primitive(&QUAD, None, 5);
    doc["accessors"][0] = json!({ "componentType": 5126, "count": 1u64 << 22, "type": "VEC3" });
    let limits = GltfLimits {
        max_vertices: 1 << 20,
        ..GltfLimits::default()
    };
    let message = refused(read_gltf(
        &serde_json::to_vec(&doc).unwrap(),
        &mut no_files,
        limits,
    ));
    assert_contains(&message, &["max_vertices"]);

    let limits = GltfLimits {
        max_nodes: 1,
        ..GltfLimits::default()
    };
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["nodes"] = json!([{ "mesh": 0 }, { "mesh": 0, "name": "second" }]);
    let message = refused(read_gltf(
        &serde_json::to_vec(&doc).unwrap(),
        &mut no_files,
        limits,
    ));
    assert_contains(&message, &["node 1 \"second\"", "max_nodes"]);

    // Bytes: the file, then the file and an external buffer together.
    let limits = GltfLimits {
        max_bytes: 100,
        ..GltfLimits::default()
    };
    assert_contains(
        &refused(read_gltf(&sample_glb(), &mut no_files, limits)),
        &["the file", "max_bytes"],
    );
    let mut doc = one_primitive(&QUAD, None, 6);
    doc["buffers"][0]["uri"] = json!("big.bin");
    let bytes = serde_json::to_vec(&doc).unwrap();
    let limits = GltfLimits {
        max_bytes: bytes.len() as u64 + 100,
        ..GltfLimits::default()
    };
    let mut big = |_: &str| Ok(vec![0u8; 200]);
    let message = refused(read_gltf(&bytes, &mut big, limits));
    assert_contains(&message, &["buffer 0", "200 more bytes", "max_bytes"]);
    let mut fits = |_: &str| Ok(f32_bytes(&QUAD));
    assert!(read_gltf(&bytes, &mut fits, limits).is_ok());
}

#[test]
fn a_passed_deadline_interrupts_reading() {
    let glb = sample_glb();
    let past = Instant::now().checked_sub(Duration::from_secs(1));
    let result = penumbra_core::deadline::with_deadline(past, || read(&glb));
    assert_eq!(result.unwrap_err(), GltfError::Interrupted);
    assert!(read(&glb).is_ok());
}
