//! The methods of the `Scene`, `Light` and `Eye` userdata.

use std::cell::Ref;
use std::sync::Arc;

use glam::Vec3;
use mlua::{MetaMethod, UserData, UserDataFields, UserDataMethods, Value};
use penumbra_core::raster::Mesh;
use penumbra_core::shadow::{Light, LightKind, Occluder};

use super::describe::{EYE_PARAM_KEYS, Transform, probe_points};
use super::{EyeParams, LuaEye, LuaLight, LuaScene, State, eye_arg, light_index};
use crate::api::names::{self, Members};
use crate::api::{Fields, ScriptType, method, vector_value};
use crate::context::ScriptContext;

/// The largest OBJ file `loadObj` reads: tobj keeps about 80 bytes per face while it reads, so
/// a file of short `f` lines costs up to ten times its size (a million-triangle OBJ is about
/// 40 MB).
const MAX_OBJ_BYTES: u64 = 64 << 20;

impl ScriptType for LuaScene {
    const MEMBERS: &'static Members = &names::SCENE_MEMBERS;
}

impl UserData for LuaScene {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
        fields.add_field_method_get("occluders", |_, s| {
            Ok(s.0
                .try_borrow()
                .map_or(0, |st| st.lighting.occluder_count()))
        });
        fields.add_field_method_get("triangles", |_, s| {
            Ok(s.0
                .try_borrow()
                .map_or(0, |st| st.lighting.triangle_count()))
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            Ok(match s.0.try_borrow() {
                Ok(st) => format!(
                    "Scene({} occluders, {} triangles, {} lights, {} eyes)",
                    st.lighting.occluder_count(),
                    st.lighting.triangle_count(),
                    st.lights.len(),
                    st.eyes.len()
                ),
                Err(_) => "Scene(busy)".into(),
            })
        });
        method(methods, "addBox", |call, this: &Self| {
            let a = call.vec3(0, "min")?;
            let b = call.vec3(1, "max")?;
            let name = call.get::<Option<String>>(2, "name")?;
            this.state(call)?.add_named_occluder(
                call,
                Occluder::cuboid(a.min(b), a.max(b)),
                name,
                "box",
            )
        });
        method(methods, "addMesh", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::addMesh");
            let positions = call.points_of("positions", call.arg(0))?;
            let t = call.table_of("indices", call.arg(1))?;
            let len = t.raw_len();
            if len == 0 || !len.is_multiple_of(3) {
                return Err(call.error(format!(
                    "indices: expected three indices per triangle, got {len}"
                )));
            }
            let mut indices = Vec::with_capacity(len);
            for k in 0..len {
                let what = format!("indices[{}]", k + 1);
                let i = call.index_of(&what, &t.raw_get::<Value>(k + 1)?)?;
                if i == 0 || i as usize > positions.len() {
                    return Err(call.error(format!(
                        "{what} = {i}: expected 1 to {} (indices start at 1)",
                        positions.len()
                    )));
                }
                indices.push(i - 1);
            }
            let Transform(matrix) = call.get(2, "transform")?;
            let name = call.get::<Option<String>>(3, "name")?;
            let mesh = Mesh::new(positions, indices).map_err(|e| call.error(e))?;
            this.state(call)?.add_named_occluder(
                call,
                Occluder::mesh(Arc::new(mesh), matrix),
                name,
                "mesh",
            )
        });
        method(methods, "loadObj", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::loadObj");
            let rel = call.string(0, "path")?;
            let Transform(matrix) = call.get(1, "transform")?;
            // The name raycasts report: given, or the file's name without its extension.
            let name = match call.get::<Option<String>>(2, "name")? {
                Some(name) => name,
                None => {
                    let file = rel.rsplit('/').next().unwrap_or(&rel);
                    file.rsplit_once('.')
                        .map_or(file, |(stem, _)| stem)
                        .to_owned()
                }
            };
            let bytes = crate::api::png::read_root(call, &rel, MAX_OBJ_BYTES)?;
            let text = String::from_utf8(bytes)
                .map_err(|e| call.error(format!("{rel}: not UTF-8 text ({e})")))?;
            let context = ScriptContext::of(call.lua);
            let mesh = crate::api::obj::parse(&text, || context.check_deadline(call.lua))?
                .map_err(|e| match e.line {
                    Some(line) => call.error(format!("{rel}:{line}: {}", e.message)),
                    None => call.error(format!("{rel}: {}", e.message)),
                })?;
            let triangles = mesh.indices.len() / 3;
            let mesh = Mesh::new(mesh.positions, mesh.indices).map_err(|e| call.error(e))?;
            this.state(call)?.add_named_occluder(
                call,
                Occluder::mesh(Arc::new(mesh), matrix),
                Some(name),
                "obj",
            )?;
            Ok(triangles)
        });
        method(methods, "addLight", |call, this: &Self| {
            let mut state = this.state(call)?;
            let index = state.add_light(call, call.get(0, "desc")?)?;
            Ok(this.light_handle(index))
        });
        method(methods, "addEye", |call, this: &Self| {
            let desc = call.get(0, "desc")?;
            let index = this.state(call)?.add_eye(call, desc)?;
            Ok(this.eye_handle(index))
        });
        method(methods, "light", |call, this: &Self| {
            let name = call.string(0, "name")?;
            let state = this.state(call)?;
            let found = state.lights.iter().position(|(l, _)| *l == name);
            Ok(found.map(|index| this.light_handle(index)))
        });
        method(methods, "eye", |call, this: &Self| {
            let name = call.string(0, "name")?;
            let state = this.state(call)?;
            let found = state.eyes.iter().position(|e| e.name == name);
            Ok(found.map(|index| this.eye_handle(index)))
        });
        method(methods, "bounds", |call, this: &Self| {
            let b = this.state(call)?.lighting.bounds();
            if b.is_empty() {
                return Ok((Value::Nil, Value::Nil));
            }
            Ok((
                vector_value(call.lua, b.min)?,
                vector_value(call.lua, b.max)?,
            ))
        });
        method(methods, "lightAt", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::lightAt");
            let point = call.vec3(0, "pos")?;
            let normal = call.get::<Option<Vec3>>(1, "normal")?;
            let mut state = this.state(call)?;
            let (total, parts) = state.light_at(call, point, normal)?;
            let lights = call.lua.create_table_with_capacity(0, parts.len())?;
            // Keys are made per call: a scene holds no Lua references, so a script can keep
            // as many scenes as its memory allows (each reference takes a slot of a Lua stack
            // with a fixed size).
            for ((name, _), part) in state.lights.iter().zip(parts) {
                lights.raw_set(name.as_str(), part)?;
            }
            let out = call.lua.create_table_with_capacity(0, 2)?;
            out.raw_set("total", total)?;
            out.raw_set("lights", lights)?;
            Ok(out)
        });
        method(methods, "tileStats", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::tileStats");
            let state = this.state(call)?;
            let i = light_index(call, &state, this, call.arg(0))?;
            let id = state.lights[i].1;
            let lighting = state.lighting();
            // A map not made yet (no query read it) has nothing drawn: asking neither makes
            // it nor charges its bytes.
            let (n, slices, drawn) = match lighting.rendered_map(id) {
                Some(map) => (
                    map.resolution(),
                    map.view_proj().len(),
                    Some(map.drawn_tiles()),
                ),
                None => match lighting.light(id) {
                    Some(light) => (light.resolution, light.slices(), None),
                    None => return Err(call.error("the light is no longer in the scene")),
                },
            };
            let across = u64::from(n.div_ceil(penumbra_core::shadow::MAP_TILE));
            let (tiles_drawn, rows, texels) =
                drawn.map_or((0, 0, 0), |d| (d.tiles() as u64, d.tile_rows(), d.texels()));
            let out = call.lua.create_table_with_capacity(0, 6)?;
            out.raw_set("resolution", n)?;
            out.raw_set("slices", slices)?;
            out.raw_set("tiles", across * across * slices as u64)?;
            out.raw_set("tilesDrawn", tiles_drawn)?;
            out.raw_set("rowsDrawn", rows)?;
            out.raw_set("texelsDrawn", texels)?;
            Ok(out)
        });
        method(methods, "lightAtBatch", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::lightAtBatch");
            let points = call.points_of("points", call.arg(0))?;
            let normal = call.get::<Option<Vec3>>(1, "normal")?;
            let totals = this.state(call)?.exposures(call, &points, normal)?;
            call.lua.create_sequence_from(totals)
        });
        method(methods, "litFraction", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::litFraction");
            let mut state = this.state(call)?;
            let i = light_index(call, &state, this, call.arg(0))?;
            let point = call.vec3(1, "pos")?;
            let normal = call.get::<Option<Vec3>>(2, "normal")?;
            state.lit_fraction(call, i, point, normal)
        });
        method(methods, "canSee", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::canSee");
            let target = call.vec3(1, "target")?;
            let mut keys = EYE_PARAM_KEYS.to_vec();
            keys.push("radius");
            let params = Fields::optional(call, 2, "params", &keys)?;
            let radius = params.number("radius")?.unwrap_or(0.0);
            if radius < 0.0 {
                return Err(call.error(format!("params.radius = {radius}: expected >= 0")));
            }
            let eye = eye_arg(call, this, call.arg(0), &params)?;
            let fraction = this
                .state(call)?
                .eye_map(call, &eye, false)?
                .visible_fraction(target, radius as f32);
            Ok((fraction >= 0.5, fraction))
        });
        method(methods, "probePath", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::probePath");
            let path = call.points_of("points", call.arg(0))?;
            let spacing = call.finite_of("spacing", call.arg(1))?;
            if spacing <= 0.0 {
                return Err(call.error(format!("spacing = {spacing}: expected a distance > 0")));
            }
            let f = Fields::optional(call, 2, "options", &["normal"])?;
            let normal = f.vec3("normal")?;
            let probes = probe_points(call, &path, spacing)?;
            let points: Vec<Vec3> = probes.iter().map(|&(p, _)| p).collect();
            let exposure = this.state(call)?.exposures(call, &points, normal)?;
            let rows = call.lua.create_table_with_capacity(probes.len(), 0)?;
            for ((p, distance), e) in probes.into_iter().zip(exposure) {
                let row = call.lua.create_table_with_capacity(0, 3)?;
                row.raw_set("pos", vector_value(call.lua, p)?)?;
                row.raw_set("distance", distance)?;
                row.raw_set("exposure", e)?;
                rows.raw_push(row)?;
            }
            Ok(rows)
        });
        super::pictures::add_methods(methods);
        super::rays::add_methods(methods);
    }
}

/// A light's name and description, as its handle sees them.
struct LightEntry<'a> {
    name: &'a str,
    light: &'a Light,
}

impl LuaLight {
    fn entry<R>(&self, f: impl FnOnce(LightEntry<'_>) -> R) -> Option<R> {
        let state: Ref<'_, State> = self.scene.try_borrow().ok()?;
        (self.index < state.light_count()).then(|| {
            let (name, light) = state.light(self.index);
            f(LightEntry { name, light })
        })
    }
}

impl ScriptType for LuaLight {
    const MEMBERS: &'static Members = &names::LIGHT_MEMBERS;
}

impl UserData for LuaLight {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
        fields.add_field_method_get("name", |_, l| Ok(l.entry(|e| e.name.to_owned())));
        fields.add_field_method_get("kind", |_, l| {
            Ok(l.entry(|e| match e.light.kind {
                LightKind::Directional { .. } | LightKind::Cascaded { .. } => "directional",
                LightKind::Spot { .. } => "spot",
                LightKind::Point { .. } => "point",
            }))
        });
        fields.add_field_method_get("intensity", |_, l| Ok(l.entry(|e| e.light.intensity)));
        fields.add_field_method_get("resolution", |_, l| Ok(l.entry(|e| e.light.resolution)));
        fields.add_field_method_get("kernel", |_, l| {
            Ok(l.entry(|e| e.light.kernel.name().to_owned()))
        });
        fields.add_field_method_get("position", |lua, l| {
            let p = l.entry(|e| match e.light.kind {
                LightKind::Spot { position, .. } | LightKind::Point { position, .. } => {
                    Some(position)
                }
                _ => None,
            });
            p.flatten().map(|p| vector_value(lua, p)).transpose()
        });
        fields.add_field_method_get("direction", |lua, l| {
            let d = l.entry(|e| match e.light.kind {
                LightKind::Spot { direction, .. }
                | LightKind::Directional { direction, .. }
                | LightKind::Cascaded { direction, .. } => Some(direction),
                LightKind::Point { .. } => None,
            });
            d.flatten().map(|d| vector_value(lua, d)).transpose()
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, l, ()| {
            Ok(l.entry(|e| {
                let kind = match e.light.kind {
                    LightKind::Spot { .. } => "spot",
                    LightKind::Point { .. } => "point",
                    _ => "directional",
                };
                format!("Light({:?}, {kind})", e.name)
            })
            .unwrap_or_else(|| "Light(?)".into()))
        });
    }
}

/// An eye's name and description, as its handle sees them.
struct EyeEntry<'a> {
    name: &'a str,
    params: EyeParams,
}

impl LuaEye {
    fn entry<R>(&self, f: impl FnOnce(EyeEntry<'_>) -> R) -> Option<R> {
        let state: Ref<'_, State> = self.scene.try_borrow().ok()?;
        state.eyes.get(self.index).map(|e| {
            f(EyeEntry {
                name: &e.name,
                params: e.params,
            })
        })
    }
}

impl ScriptType for LuaEye {
    const MEMBERS: &'static Members = &names::EYE_MEMBERS;
}

impl UserData for LuaEye {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
        fields.add_field_method_get("name", |_, e| Ok(e.entry(|e| e.name.to_owned())));
        fields.add_field_method_get("position", |lua, e| {
            e.entry(|e| e.params.position)
                .map(|p| vector_value(lua, p))
                .transpose()
        });
        fields.add_field_method_get("direction", |lua, e| {
            e.entry(|e| e.params.direction)
                .flatten()
                .map(|d| vector_value(lua, d))
                .transpose()
        });
        fields.add_field_method_get("fov", |_, e| {
            Ok(e.entry(|e| {
                if e.params.all_around() {
                    360.0
                } else {
                    e.params.fov
                }
            }))
        });
        fields.add_field_method_get("range", |_, e| Ok(e.entry(|e| e.params.range)));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, e, ()| {
            Ok(e.entry(|e| format!("Eye({:?})", e.name))
                .unwrap_or_else(|| "Eye(?)".into()))
        });
    }
}
