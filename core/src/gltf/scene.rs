//! The scene: the node graph checked (trees, no cycles), world transforms multiplied from the
//! roots down, and each glTF mesh's triangle primitives merged into one [`Mesh`], built once.

use std::sync::Arc;

use ::gltf::json;
use glam::{Mat4, Quat, Vec3};
use json::mesh::{Mode, Semantic};
use json::validation::Checked;

use super::{
    CYCLE_SHOWN, GltfError, GltfNode, Reader, check_deadline, count_of, invalid, label, limit,
};
use crate::raster::Mesh;

impl Reader<'_, '_> {
    fn node_label(&self, i: usize) -> String {
        label("node", i, self.root.nodes[i].name.as_deref())
    }

    /// Checks the node graph and walks the scene.
    pub(super) fn scene(&mut self) -> Result<Vec<GltfNode>, GltfError> {
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
}

/// Translation × rotation × scale, as glTF composes a node's TRS (the rotation as given).
pub(super) fn trs_matrix(translation: Vec3, rotation: Quat, scale: Vec3) -> Mat4 {
    Mat4::from_scale_rotation_translation(scale, rotation, translation)
}
