//! The `world` table a system script gets every frame: the [`ShadowQuery`] answers, the
//! frame's probes and viewers, and the flags it sets, each function scoped to one call.

use std::cell::RefCell;
use std::collections::BTreeMap;

use bevy_ecs::prelude::*;
use glam::Vec3;
use penumbra_core::Coord;
use penumbra_lua::embed;
use penumbra_lua::mlua::{self, Lua, MetaMethod, Table, UserData, Value};

use crate::probe::Exposure;
use crate::query::{MapRef, ShadowQuery};
use crate::shadow::ShadowMaps;
use crate::sight::Sighting;

/// An entity as scripts hold it: compared with `==`, printed as `Entity(12v1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LuaEntity(Entity);

impl UserData for LuaEntity {
    fn add_fields<F: mlua::UserDataFields<Self>>(fields: &mut F) {
        fields.add_meta_field(MetaMethod::Type, "Entity");
    }

    fn add_methods<M: mlua::UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_function(
            MetaMethod::Index,
            |lua, (_, key): (mlua::AnyUserData, Value)| -> mlua::Result<Value> {
                let key = key.to_string().unwrap_or_default();
                Err(embed::unknown_member(lua, "Entity", &key, &[]))
            },
        );
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!("Entity({})", this.0))
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: Value| {
            Ok(entity_of(&other) == Some(this.0))
        });
    }
}

fn entity_of(value: &Value) -> Option<Entity> {
    match value {
        Value::UserData(u) => u.borrow::<LuaEntity>().ok().map(|e| e.0),
        _ => None,
    }
}

/// `function: what: expected an entity, got ...`.
fn entity_arg(lua: &Lua, function: &str, what: &str, value: &Value) -> mlua::Result<Entity> {
    entity_of(value).ok_or_else(|| {
        embed::error(
            lua,
            function,
            format!(
                "{what}: expected an entity (from world.probes(), viewers() or lights()), got {}",
                embed::describe(value)
            ),
        )
    })
}

/// A light named by entity or by `Name`.
enum LightArg {
    Entity(Entity),
    Name(String),
}

impl LightArg {
    fn read(lua: &Lua, function: &'static str, value: &Value) -> mlua::Result<LightArg> {
        match value {
            Value::String(_) => Ok(LightArg::Name(embed::string(
                lua, function, "light", value,
            )?)),
            _ => entity_arg(lua, function, "light", value).map(LightArg::Entity),
        }
    }

    fn map_ref(&self) -> MapRef<'_> {
        match self {
            LightArg::Entity(e) => MapRef::Entity(*e),
            LightArg::Name(n) => MapRef::Name(n),
        }
    }
}

/// Flag changes a script asked for: per entity, each flag's last requested state.
pub(super) type FlagChanges = BTreeMap<Entity, BTreeMap<String, bool>>;

/// One call's [`FlagChanges`] and how many (entity, flag) pairs they hold.
#[derive(Default)]
pub(super) struct CallFlags {
    pub(super) changes: FlagChanges,
    pub(super) pairs: usize,
}

/// Longest flag name, in bytes (flags live outside the Lua heap and its memory limit).
const MAX_FLAG_BYTES: usize = 256;
/// Most (entity, flag) pairs one script may set in one call.
const MAX_FLAG_EDITS: usize = 1 << 16;

/// A probe as `world.probes()` lists it.
pub(super) struct ProbeEntry<'a> {
    pub(super) entity: Entity,
    pub(super) position: Vec3,
    pub(super) name: Option<&'a str>,
    pub(super) exposure: &'a Exposure,
}

/// A viewer as `world.viewers()` lists it.
pub(super) struct ViewerEntry<'a> {
    pub(super) entity: Entity,
    pub(super) position: Vec3,
    pub(super) name: Option<&'a str>,
    pub(super) sightings: &'a [Sighting],
}

/// What the `world` table reads: the query and the frame's probes and viewers.
pub(super) struct WorldView<'a, 'w> {
    pub(super) query: &'a ShadowQuery<'w>,
    pub(super) probes: Vec<ProbeEntry<'a>>,
    pub(super) viewers: Vec<ViewerEntry<'a>>,
}

/// Builds the `world` table of one call with functions scoped to it.
pub(super) fn world_table<'scope, 'env: 'scope>(
    lua: &Lua,
    scope: &'scope mlua::Scope<'scope, 'env>,
    view: &'env WorldView<'env, '_>,
    changes: &'env RefCell<CallFlags>,
    frame: u64,
) -> mlua::Result<Table> {
    let world = lua.create_table()?;
    world.raw_set("frame", frame)?;
    let query = view.query;
    world.raw_set(
        "litFraction",
        scope.create_function(move |lua, p: Value| {
            let p = embed::vec3(lua, "world.litFraction", "point", &p)?;
            Ok(query.lit_fraction(p))
        })?,
    )?;
    world.raw_set(
        "exposure",
        scope.create_function(move |lua, p: Value| {
            let p = embed::vec3(lua, "world.exposure", "point", &p)?;
            Ok(query.exposure(p))
        })?,
    )?;
    world.raw_set(
        "litFractionFrom",
        scope.create_function(move |lua, (light, p): (Value, Value)| {
            const F: &str = "world.litFractionFrom";
            let light = LightArg::read(lua, F, &light)?;
            let p = embed::vec3(lua, F, "point", &p)?;
            query
                .lit_fraction_from(light.map_ref(), p)
                .map_err(|e| embed::error(lua, F, e))
        })?,
    )?;
    world.raw_set(
        "canSee",
        scope.create_function(move |lua, (viewer, p): (Value, Value)| {
            const F: &str = "world.canSee";
            let viewer = entity_arg(lua, F, "viewer", &viewer)?;
            let p = embed::vec3(lua, F, "target", &p)?;
            query
                .can_see(viewer, p)
                .map_err(|e| embed::error(lua, F, e))
        })?,
    )?;
    world.raw_set(
        "visibleFraction",
        scope.create_function(move |lua, (viewer, p, radius): (Value, Value, Value)| {
            const F: &str = "world.visibleFraction";
            let viewer = entity_arg(lua, F, "viewer", &viewer)?;
            let p = embed::vec3(lua, F, "target", &p)?;
            let radius = match radius {
                Value::Nil => 0.0,
                r => embed::number(lua, F, "radius", &r)?,
            };
            if !((radius as f32).is_finite() && radius >= 0.0) {
                return Err(embed::error(
                    lua,
                    F,
                    format!("radius = {radius:?}: expected a finite number >= 0"),
                ));
            }
            query
                .visible_fraction(viewer, p, radius as f32)
                .map_err(|e| embed::error(lua, F, e))
        })?,
    )?;
    world.raw_set(
        "sampleCmp",
        scope.create_function(
            move |lua, (light, coord, reference): (Value, Value, Value)| {
                const F: &str = "world.sampleCmp";
                let light = LightArg::read(lua, F, &light)?;
                let coord = coord_arg(lua, F, &coord)?;
                let reference = embed::number(lua, F, "reference", &reference)? as f32;
                query
                    .sample_cmp(light.map_ref(), coord, reference, ())
                    .map_err(|e| embed::error(lua, F, e))
            },
        )?,
    )?;
    let probes = &view.probes;
    world.raw_set(
        "probes",
        scope.create_function(move |lua, ()| {
            // One table per probe, built in one call each from interned keys (a probe costs
            // a table, a userdata and a vector, not six separate protected stores).
            let keys = [
                "entity",
                "name",
                "position",
                "total",
                "unshadowed",
                "litFraction",
            ]
            .map(|k| lua.create_string(k));
            let [entity, name, position, total, unshadowed, lit] = keys;
            let (entity, name, position) = (entity?, name?, position?);
            let (total, unshadowed, lit) = (total?, unshadowed?, lit?);
            let entries = probes
                .iter()
                .map(|p| {
                    let number = |v: f32| Value::Number(f64::from(v));
                    lua.create_table_from([
                        (
                            &entity,
                            Value::UserData(lua.create_userdata(LuaEntity(p.entity))?),
                        ),
                        (
                            &name,
                            p.name.map_or(Ok(Value::Nil), |n| {
                                lua.create_string(n).map(Value::String)
                            })?,
                        ),
                        (&position, embed::vector(lua, p.position)?),
                        (&total, number(p.exposure.total())),
                        (&unshadowed, number(p.exposure.unshadowed())),
                        (&lit, p.exposure.lit_fraction().map_or(Value::Nil, number)),
                    ])
                })
                .collect::<mlua::Result<Vec<Table>>>()?;
            lua.create_sequence_from(entries)
        })?,
    )?;
    let viewers = &view.viewers;
    world.raw_set(
        "viewers",
        scope.create_function(move |lua, ()| {
            let list = lua.create_table_with_capacity(viewers.len(), 0)?;
            for v in viewers {
                let t = entry(lua, v.entity, v.position, v.name)?;
                let sightings = lua.create_table_with_capacity(v.sightings.len(), 0)?;
                for s in v.sightings {
                    let row = lua.create_table_with_capacity(0, 4)?;
                    row.raw_set("target", LuaEntity(s.target))?;
                    row.raw_set("point", embed::vector(lua, s.point)?)?;
                    row.raw_set("visibleFraction", s.visible_fraction)?;
                    row.raw_set("seen", s.seen)?;
                    sightings.raw_push(row)?;
                }
                t.raw_set("sightings", sightings)?;
                list.raw_push(t)?;
            }
            Ok(list)
        })?,
    )?;
    world.raw_set(
        "lights",
        scope.create_function(move |lua, ()| {
            let list = lua.create_table()?;
            for light in query.maps().into_iter().flat_map(ShadowMaps::iter) {
                let t = lua.create_table()?;
                t.raw_set("entity", LuaEntity(light.entity()))?;
                t.raw_set("name", light.name())?;
                list.raw_push(t)?;
            }
            Ok(list)
        })?,
    )?;
    world.raw_set(
        "setFlag",
        scope.create_function(move |lua, (entity, flag, on): (Value, Value, Value)| {
            const F: &str = "world.setFlag";
            let entity = entity_arg(lua, F, "entity", &entity)?;
            let flag = match &flag {
                Value::String(s) if s.as_bytes().len() > MAX_FLAG_BYTES => {
                    return Err(embed::error(
                        lua,
                        F,
                        format!(
                            "flag: {} bytes, at most {MAX_FLAG_BYTES}",
                            s.as_bytes().len()
                        ),
                    ));
                }
                _ => embed::string(lua, F, "flag", &flag)?,
            };
            let on = match on {
                Value::Nil => true,
                Value::Boolean(b) => b,
                other => {
                    return Err(embed::error(
                        lua,
                        F,
                        format!("on: expected a boolean, got {}", embed::describe(&other)),
                    ));
                }
            };
            let mut call = changes.borrow_mut();
            let CallFlags { changes, pairs } = &mut *call;
            let edits = changes.entry(entity).or_default();
            if let Some(state) = edits.get_mut(&flag) {
                *state = on;
            } else if *pairs < MAX_FLAG_EDITS {
                edits.insert(flag, on);
                *pairs += 1;
            } else {
                return Err(embed::error(
                    lua,
                    F,
                    format!("more than {MAX_FLAG_EDITS} flags set in one frame"),
                ));
            }
            Ok(())
        })?,
    )?;
    embed::strict_table(lua, &world, "World")?;
    Ok(world)
}

/// `{entity = .., name = .., position = ..}`.
fn entry(lua: &Lua, entity: Entity, position: Vec3, name: Option<&str>) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 6)?;
    t.raw_set("entity", LuaEntity(entity))?;
    t.raw_set("name", name)?;
    t.raw_set("position", embed::vector(lua, position)?)?;
    Ok(t)
}

/// A sample coordinate: `{u, v}`, `{u, v, slice}` or a cube direction (a vector or 3 numbers).
fn coord_arg(lua: &Lua, function: &'static str, value: &Value) -> mlua::Result<Coord> {
    if let Value::Table(t) = value
        && t.raw_len() == 2
    {
        let u = embed::number(lua, function, "coord[1]", &t.raw_get(1)?)?;
        let v = embed::number(lua, function, "coord[2]", &t.raw_get(2)?)?;
        return Ok(Coord([u as f32, v as f32, 0.0, 0.0]));
    }
    let p = embed::vec3(lua, function, "coord", value)?;
    Ok(Coord([p.x, p.y, p.z, 0.0]))
}
