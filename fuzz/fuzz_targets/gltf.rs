//! glTF level loading: `penumbra_core::gltf::read_gltf` on any bytes, as a `.glb` or a `.gltf`,
//! with external buffers from a callback that refuses some names and returns bytes of the input
//! (or zeros) for others. No panic, no abort on allocation (small limits: every count is checked
//! before it is allocated); a level that reads writes with `write_glb` and reads back to the same
//! names, transforms, positions and indices bit for bit, with the same meshes shared, and writing
//! that again gives the same bytes.
#![no_main]

use std::sync::Arc;

use glam::Mat4;
use libfuzzer_sys::fuzz_target;
use penumbra_core::gltf::{GltfLevel, GltfLimits, read_gltf, write_glb};
use penumbra_core::raster::Mesh;

const LIMITS: GltfLimits = GltfLimits {
    max_bytes: 1 << 20,
    max_triangles: 1 << 16,
    max_vertices: 1 << 16,
    max_nodes: 256,
};

fn entries(level: &GltfLevel) -> Vec<(&str, &Mesh, Mat4)> {
    level
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), &*n.mesh, n.transform))
        .collect()
}

fn bits(m: Mat4) -> [u32; 16] {
    m.to_cols_array().map(f32::to_bits)
}

fuzz_target!(|data: &[u8]| {
    let mut load = |uri: &str| -> Result<Vec<u8>, String> {
        let hash = uri
            .bytes()
            .fold(17u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        match hash % 4 {
            0 => Err(format!("no file {uri:?}")),
            1 => Ok(data[..data.len().min(hash as usize % 4096)].to_vec()),
            2 => Ok(data.to_vec()),
            _ => Ok(vec![0; hash as usize % 2048]),
        }
    };
    let level = match read_gltf(data, &mut load, LIMITS) {
        Ok(level) => level,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert!(level.nodes.len() as u64 <= LIMITS.max_nodes);
    for node in &level.nodes {
        assert!(node.transform.is_finite(), "{}: transform", node.name);
        assert!(
            node.mesh.triangle_count() > 0,
            "{}: no triangles",
            node.name
        );
        assert!(
            node.mesh.positions().iter().all(|p| p.is_finite()),
            "{}: a position is not finite",
            node.name
        );
    }

    let glb = write_glb(&entries(&level)).expect("a level that reads writes");
    let mut no_files = |uri: &str| -> Result<Vec<u8>, String> {
        panic!("write_glb output asked for an external file {uri:?}")
    };
    let back = read_gltf(&glb, &mut no_files, GltfLimits::default())
        .unwrap_or_else(|e| panic!("write_glb output does not read back: {e}"));
    assert_eq!(back.nodes.len(), level.nodes.len());
    assert_eq!(back.skipped_primitives, 0);
    for (a, b) in level.nodes.iter().zip(&back.nodes) {
        assert_eq!(a.name, b.name);
        assert_eq!(
            bits(a.transform),
            bits(b.transform),
            "{}: transform",
            a.name
        );
        assert_eq!(a.mesh.indices(), b.mesh.indices(), "{}: indices", a.name);
        assert!(
            a.mesh
                .positions()
                .iter()
                .zip(b.mesh.positions())
                .all(|(p, q)| p.to_array().map(f32::to_bits) == q.to_array().map(f32::to_bits)),
            "{}: positions",
            a.name
        );
        assert_eq!(a.mesh.positions().len(), b.mesh.positions().len());
    }
    for (i, a) in level.nodes.iter().enumerate() {
        for (j, b) in level.nodes.iter().enumerate().skip(i + 1) {
            assert_eq!(
                Arc::ptr_eq(&a.mesh, &b.mesh),
                Arc::ptr_eq(&back.nodes[i].mesh, &back.nodes[j].mesh),
                "mesh sharing of nodes {i} and {j}"
            );
        }
    }
    let again = write_glb(&entries(&back)).expect("the read-back level writes");
    assert_eq!(again, glb, "a second round trip changed the file");
});
