//! The game's meshes: Bevy meshes as penumbra triangles ([`triangles_of`]) and the occluders of
//! every `Mesh3d` entity kept in step ([`sync_pbr_meshes`]).

use std::sync::Arc;
use std::time::Instant;

use bevy_asset::{AssetEvent, Assets};
use bevy_camera::visibility::InheritedVisibility;
use bevy_ecs::prelude::*;
use bevy_light::NotShadowCaster;
use bevy_mesh::{Indices, Mesh, Mesh3d, MeshAccessError, PrimitiveTopology, VertexAttributeValues};
use bevy_transform::components::GlobalTransform;
use glam::Vec3;
use penumbra_core::raster::{CullMode, Mesh as CoreMesh};
use penumbra_core::shadow::{Occluder as CoreOccluder, OccluderId};

use super::{MeshEntry, PbrShadows, ShadowCull};
use crate::PenumbraDiagnostics;
use crate::shadow::ShadowMaps;

/// A Bevy mesh as penumbra triangles: `Ok(None)` for a mesh without triangles (lines, points,
/// no positions).
///
/// # Errors
/// The mesh's data is in the render world only.
pub fn triangles_of(mesh: &Mesh) -> Result<Option<CoreMesh>, MeshAccessError> {
    let positions = match mesh.try_attribute(Mesh::ATTRIBUTE_POSITION) {
        Ok(VertexAttributeValues::Float32x3(p)) => p,
        Ok(_) | Err(MeshAccessError::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let count = positions.len() as u32;
    let indices: Vec<u32> = match mesh.try_indices_option()? {
        Some(Indices::U16(i)) => i.iter().map(|&i| u32::from(i)).collect(),
        Some(Indices::U32(i)) => i.clone(),
        None => (0..count).collect(),
    };
    let list = match mesh.primitive_topology() {
        PrimitiveTopology::TriangleList => {
            let whole = indices.len() / 3 * 3;
            indices[..whole].to_vec()
        }
        // A strip's odd triangles swap their first two vertices to keep the winding.
        PrimitiveTopology::TriangleStrip => {
            let mut list = Vec::with_capacity(indices.len().saturating_sub(2) * 3);
            for (k, w) in indices.windows(3).enumerate() {
                if k % 2 == 0 {
                    list.extend_from_slice(&[w[0], w[1], w[2]]);
                } else {
                    list.extend_from_slice(&[w[1], w[0], w[2]]);
                }
            }
            list
        }
        _ => return Ok(None),
    };
    let points = positions.iter().map(|&p| Vec3::from_array(p)).collect();
    Ok(CoreMesh::new(points, list).ok())
}

type MeshData = (
    Entity,
    Ref<'static, Mesh3d>,
    Ref<'static, GlobalTransform>,
    Has<NotShadowCaster>,
    Option<Ref<'static, InheritedVisibility>>,
    Option<Ref<'static, ShadowCull>>,
);

/// The `Mesh3d` entities whose occluder may differ from last frame's: those whose mesh,
/// transform, visibility or culling changed, and those that stopped casting shadows.
type Touched = Or<(
    Changed<Mesh3d>,
    Changed<GlobalTransform>,
    Changed<InheritedVisibility>,
    Changed<ShadowCull>,
    Added<NotShadowCaster>,
)>;

/// Keeps the occluders of [`PbrShadows`] and [`ShadowMaps`] in step with the `Mesh3d` entities.
///
/// A frame in which no mesh asset changed and no entity lost `NotShadowCaster` visits only the
/// entities Bevy's change detection reports ([`Touched`]): a level of thousands of static
/// meshes costs next to nothing. Otherwise (and the first time) every entity is looked at, as
/// an entity whose mesh was not loaded, or which did not cast shadows, may cast them now.
#[allow(clippy::too_many_arguments)]
pub fn sync_pbr_meshes(
    meshes: Option<Res<Assets<Mesh>>>,
    mut events: MessageReader<AssetEvent<Mesh>>,
    entities: Query<MeshData>,
    touched: Query<MeshData, Touched>,
    mut removed: RemovedComponents<Mesh3d>,
    mut unshadowed: RemovedComponents<NotShadowCaster>,
    mut scanned: Local<bool>,
    mut shadows: ResMut<PbrShadows>,
    mut maps: ResMut<ShadowMaps>,
    mut diagnostics: ResMut<PenumbraDiagnostics>,
) {
    penumbra_core::zone!("bevy_penumbra::sync_pbr_meshes");
    let start = Instant::now();
    let state = &mut *shadows;
    let mut changed_assets = Vec::new();
    for event in events.read() {
        match event {
            AssetEvent::Modified { id } | AssetEvent::Removed { id } | AssetEvent::Added { id } => {
                state.mesh_cache.remove(id);
                changed_assets.push(*id);
            }
            _ => {}
        }
    }
    for entity in removed.read() {
        state.drop_occluder(entity, &mut maps);
    }
    let Some(meshes) = meshes else {
        diagnostics.sync_pbr = start.elapsed();
        return;
    };
    // Read every frame, so that only this frame's removals count below.
    let unshadowed = unshadowed.read().count() > 0;
    let everything = !*scanned || unshadowed || !changed_assets.is_empty();
    *scanned = true;
    let items: &mut dyn Iterator<Item = _> = if everything {
        &mut entities.iter()
    } else {
        &mut touched.iter()
    };
    for (entity, mesh3d, transform, no_shadow, visibility, cull) in items {
        let asset = mesh3d.id();
        let known = state.occluders.get(&entity) == Some(&asset);
        let casts = !no_shadow && visibility.as_ref().is_none_or(|v| v.get());
        let changed = mesh3d.is_changed()
            || transform.is_changed()
            || visibility.as_ref().is_some_and(|v| v.is_changed())
            || cull.as_ref().is_some_and(|c| c.is_changed())
            || changed_assets.contains(&asset);
        let id = OccluderId(entity.to_bits());
        if !casts {
            state.drop_occluder(entity, &mut maps);
            continue;
        }
        // Adding `NotShadowCaster` removes the occluder above; removing it leaves the entity
        // unknown, so it is added again here.
        if known && !changed {
            continue;
        }
        let entry = state
            .mesh_cache
            .entry(asset)
            .or_insert_with(|| match meshes.get(asset) {
                None => MeshEntry::Ready(None),
                Some(mesh) => match triangles_of(mesh) {
                    Ok(m) => MeshEntry::Ready(m.map(Arc::new)),
                    Err(_) => MeshEntry::Extracted,
                },
            });
        let mesh = match entry {
            MeshEntry::Ready(Some(m)) => m.clone(),
            MeshEntry::Ready(None) => {
                // Not loaded yet, or no triangles: look again when the asset changes.
                if meshes.get(asset).is_none() {
                    state.mesh_cache.remove(&asset);
                }
                state.drop_occluder(entity, &mut maps);
                continue;
            }
            MeshEntry::Extracted => {
                state.drop_occluder(entity, &mut maps);
                if state.warned.insert(entity) {
                    log::warn!(
                        "bevy_penumbra: the mesh of entity {entity} is in the render world only \
                         (RenderAssetUsages without MAIN_WORLD), so it casts no shadow in \
                         penumbra's queries; give it RenderAssetUsages::default()"
                    );
                }
                continue;
            }
        };
        // `ShadowCull(None)` culls nothing (the occluder's `None` would mean "the light's").
        let cull = cull.map_or(CullMode::Back, |c| c.0.unwrap_or(CullMode::None));
        let matrix = transform.to_matrix();
        state.lighting.set_occluder(
            id,
            CoreOccluder::mesh(mesh.clone(), matrix).with_cull(Some(cull)),
        );
        maps.lighting_mut()
            .set_occluder(id, CoreOccluder::mesh(mesh, matrix));
        state.occluders.insert(entity, asset);
    }
    diagnostics.sync_pbr = start.elapsed();
}
