//! Rays and glTF levels: `scene:raycast` (as Roblox's `workspace:Raycast`), its batched form
//! `scene:raycastBatch`, `scene:isInside`, and `scene:loadGltf`.

use std::collections::HashSet;

use glam::Vec3;
use mlua::{Table, UserDataMethods, Value};
use penumbra_core::gltf::{GltfLimits, read_gltf};
use penumbra_core::raster::RayHit;
use penumbra_core::shadow::{Occluder, OccluderId};

use super::describe::Transform;
use super::{LuaScene, State};
use crate::api::{Call, Fields, method, vector_value};

/// The keys of raycast's params.
const RAY_KEYS: [&str; 3] = ["include", "exclude", "maxDistance"];
/// The most rays one `raycastBatch` call casts.
const MAX_BATCH: usize = 1 << 24;

pub(super) fn add_methods<M: UserDataMethods<LuaScene>>(methods: &mut M) {
    method(methods, "raycast", |call, this: &LuaScene| {
        penumbra_core::zone!("penumbra_lua::raycast");
        let origin = call.vec3(0, "origin")?;
        let direction = call.vec3(1, "direction")?;
        let state = this.state(call)?;
        let params = RayParams::read(call, &state, 2)?;
        let (dir, length) = params.ray(call, direction)?;
        let hit = state
            .lighting()
            .raycast(origin, dir, length, &|id| params.admits(id));
        match hit {
            Some(hit) => Ok(Value::Table(result(call, &state, &hit)?)),
            None => Ok(Value::Nil),
        }
    });
    method(methods, "raycastBatch", |call, this: &LuaScene| {
        penumbra_core::zone!("penumbra_lua::raycastBatch");
        let origins = call.points_of("origins", call.arg(0))?;
        if origins.len() > MAX_BATCH {
            return Err(call.error(format!(
                "origins: {} rays; at most {MAX_BATCH} a call",
                origins.len()
            )));
        }
        // One direction for all, or one per origin.
        let directions = match call.vec3_of("direction", call.arg(1)) {
            Ok(d) => vec![d],
            Err(_) => {
                let got = call.points_of("directions", call.arg(1))?;
                if got.len() != origins.len() {
                    return Err(call.error(format!(
                        "directions: {} directions for {} origins (give one for all, or \
                             one per origin)",
                        got.len(),
                        origins.len()
                    )));
                }
                got
            }
        };
        let state = this.state(call)?;
        let params = RayParams::read(call, &state, 2)?;
        let mut rays = Vec::with_capacity(origins.len());
        let mut length = f32::INFINITY;
        for (i, &o) in origins.iter().enumerate() {
            let d = directions[if directions.len() == 1 { 0 } else { i }];
            let (dir, len) = params.ray(call, d)?;
            // One length for the batch: rays of other lengths are cut per ray below.
            length = if i == 0 { len } else { length.max(len) };
            rays.push((o, dir, len));
        }
        let pairs: Vec<(Vec3, Vec3)> = rays.iter().map(|&(o, d, _)| (o, d)).collect();
        let threads = state.lighting().threads();
        let hits = state
            .lighting()
            .raycast_many(&pairs, length, &|id| params.admits(id), threads);
        let out = call.lua.create_table_with_capacity(hits.len(), 0)?;
        for (k, hit) in hits.iter().enumerate() {
            match hit {
                Some(h) if h.distance <= rays[k].2 => {
                    out.raw_set(k + 1, result(call, &state, h)?)?;
                }
                _ => out.raw_set(k + 1, false)?,
            }
        }
        Ok(out)
    });
    method(methods, "isInside", |call, this: &LuaScene| {
        penumbra_core::zone!("penumbra_lua::isInside");
        let point = call.vec3(0, "point")?;
        let state = this.state(call)?;
        Ok(match state.lighting().is_inside(point) {
            Some(id) => (true, Some(state.occluder_name(id).to_owned())),
            None => (false, None),
        })
    });
    method(methods, "loadGltf", |call, this: &LuaScene| {
        penumbra_core::zone!("penumbra_lua::loadGltf");
        let rel = call.string(0, "path")?;
        let Transform(matrix) = call.get(1, "transform")?;
        let bytes = crate::api::png::read_root(call, &rel, GltfLimits::default().max_bytes)?;
        let folder = match rel.rfind('/') {
            Some(i) => &rel[..=i],
            None => "",
        };
        let mut load = |uri: &str| -> Result<Vec<u8>, String> {
            let path = format!("{folder}{uri}");
            crate::api::png::read_root(call, &path, GltfLimits::default().max_bytes)
                .map_err(|e| lua_message(&e))
        };
        let level = read_gltf(&bytes, &mut load, GltfLimits::default())
            .map_err(|e| call.error(format!("{rel}: {e}")))?;
        let mut state = this.state(call)?;
        let names = call.lua.create_table_with_capacity(level.nodes.len(), 0)?;
        for node in &level.nodes {
            let occluder = Occluder::mesh(node.mesh.clone(), matrix * node.transform);
            let name = state.add_named_occluder(call, occluder, Some(node.name.clone()), "node")?;
            names.raw_push(name)?;
        }
        Ok(names)
    });
}

/// The text of an API error (for a glTF buffer that could not be read).
fn lua_message(e: &mlua::Error) -> String {
    let text = e.to_string();
    text.lines().next().unwrap_or_default().to_owned()
}

/// Raycast params: which occluders count, and how far the ray goes.
struct RayParams {
    include: Option<HashSet<OccluderId>>,
    exclude: HashSet<OccluderId>,
    max_distance: Option<f32>,
}

impl RayParams {
    fn read(call: &Call<'_>, state: &State, i: usize) -> mlua::Result<RayParams> {
        let f = Fields::optional(call, i, "params", &RAY_KEYS)?;
        let names = |key: &str| -> mlua::Result<Option<HashSet<OccluderId>>> {
            f.read(key, |c, what, v| {
                let t: Table = c.table_of(what, v)?;
                let mut ids = HashSet::new();
                for k in 1..=t.raw_len() {
                    let name = c.string_of(&format!("{what}[{k}]"), &t.raw_get::<Value>(k)?)?;
                    let found = state.occluders_named(&name);
                    if found.is_empty() {
                        return Err(c.error(format!(
                            "{what}[{k}]: the scene has no occluder named {name:?}"
                        )));
                    }
                    ids.extend(found);
                }
                Ok(ids)
            })
        };
        let include = names("include")?;
        let exclude = names("exclude")?.unwrap_or_default();
        let max_distance = match f.number("maxDistance")? {
            Some(d) if d >= 0.0 => Some(d as f32),
            Some(d) => {
                return Err(call.error(format!(
                    "{} = {d}: expected a distance >= 0",
                    f.name("maxDistance")
                )));
            }
            None => None,
        };
        Ok(RayParams {
            include,
            exclude,
            max_distance,
        })
    }

    fn admits(&self, id: OccluderId) -> bool {
        !self.exclude.contains(&id) && self.include.as_ref().is_none_or(|i| i.contains(&id))
    }

    /// The ray's unit direction and length: `direction`'s own length, as Roblox's
    /// `workspace:Raycast` reads it, or `maxDistance` when given.
    fn ray(&self, call: &Call<'_>, direction: Vec3) -> mlua::Result<(Vec3, f32)> {
        let len = direction.length();
        if !(len > 0.0 && len.is_finite()) {
            return Err(call.error(format!(
                "direction: {{{}, {}, {}}} has no length; the ray goes along it, as far as its \
                 length (or params.maxDistance)",
                direction.x, direction.y, direction.z
            )));
        }
        Ok((direction / len, self.max_distance.unwrap_or(len)))
    }
}

/// `{position =, normal =, distance =, occluder =, triangle =}`.
fn result(call: &Call<'_>, state: &State, hit: &RayHit<OccluderId>) -> mlua::Result<Table> {
    let t = call.lua.create_table_with_capacity(0, 5)?;
    t.raw_set("position", vector_value(call.lua, hit.position)?)?;
    t.raw_set("normal", vector_value(call.lua, hit.normal)?)?;
    t.raw_set("distance", hit.distance)?;
    t.raw_set("occluder", state.occluder_name(hit.occluder))?;
    t.raw_set("triangle", hit.triangle + 1)?;
    Ok(t)
}
