//! `penumbra.scene()` and the `Scene`, `Light` and `Eye` userdata: occluders (boxes, meshes,
//! OBJ files), lights and eyes, and the questions a level designer asks of them — how lit is
//! this point, can this eye see that one, how lit is the player along a path.
//!
//! A scene is a binding over the engine's [`Lighting`]: it names lights and eyes, reads their
//! descriptions from Lua (`describe`), and charges the script's memory budget for what the
//! engine holds. Which maps exist, when they are rendered and when an occluder change drops
//! them, and what exposure means, are the engine's (`penumbra_core::shadow::Lighting`). Batch
//! queries (`lightAtBatch`, `probePath`, the pictures) go through the batched `sample_c_lz`
//! path, which returns exactly the bits the one-point queries return.
//!
//! * `methods` — the userdata methods scripts call;
//! * `describe` — light, eye and transform descriptions read from Lua tables;
//! * `pictures` — `saveShadowMap`, `saveLitMap`, `saveView`.

mod describe;
mod methods;
mod pictures;
mod rays;

use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::rc::Rc;

use glam::Vec3;
use mlua::{Lua, Table, Value};
use penumbra_core::shadow::{
    Exposure, ExposureScratch, EyeId, EyeMap, LightId, Lighting, Occluder, OccluderId, Scene,
    ShadowError, ShadowMap, Viewer,
};

use super::{Call, Fields, export};
use crate::context::{Charge, ScriptContext};
use crate::error::describe as describe_value;

pub(super) use describe::EYE_PARAM_KEYS;
use describe::{EyeDesc, LightDesc};

/// Items a loop handles between two deadline checks.
pub(super) const CHECK_EVERY: usize = 4096;
/// Ad-hoc eyes (`canSee` from a position) whose depth maps are kept.
const ADHOC_EYES: usize = 16;

/// How an eye looks: `direction` `None` sees all around.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct EyeParams {
    pub position: Vec3,
    pub direction: Option<Vec3>,
    /// Full field of view, degrees.
    pub fov: f32,
    pub range: f32,
    pub resolution: u32,
}

impl EyeParams {
    pub fn viewer(&self) -> Viewer {
        let (direction, fov) = match self.direction {
            Some(d) => (d, self.fov.to_radians()),
            None => (Vec3::Z, std::f32::consts::TAU),
        };
        Viewer {
            position: self.position,
            direction,
            fov,
            range: self.range,
            resolution: self.resolution,
        }
    }

    /// Sees all around (no direction, or a field of view of `Viewer::ALL_AROUND`, 177.6°, or
    /// more).
    pub fn all_around(&self) -> bool {
        self.viewer().all_around()
    }

    fn key(&self) -> [u32; 9] {
        let d = self.direction.unwrap_or(Vec3::ZERO);
        [
            self.position.x.to_bits(),
            self.position.y.to_bits(),
            self.position.z.to_bits(),
            d.x.to_bits(),
            d.y.to_bits(),
            d.z.to_bits(),
            self.fov.to_bits(),
            self.range.to_bits(),
            self.resolution,
        ]
    }
}

/// What a map's budget charges are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum MapKey {
    Light(LightId),
    Eye(EyeId),
}

/// The charges of one rendered map: its texture, and its batched query path once used.
struct MapCharges {
    _map: Charge,
    batch: Option<Charge>,
}

/// Occluder names (several occluders may share one: a glTF mesh placed twice).
#[derive(Default)]
struct OccluderNames {
    by_id: HashMap<OccluderId, String>,
    /// Occluders named by default per prefix ("box", "mesh"), for `box3`.
    counts: HashMap<&'static str, usize>,
}

/// A named eye of the scene.
struct SceneEye {
    name: String,
    params: EyeParams,
    id: EyeId,
}

/// A scene: the engine lighting, the names scripts use, and the budget charges.
pub(super) struct State {
    lighting: Lighting,
    /// The scene's charge for itself (what it holds besides its geometry and maps).
    _charge: Charge,
    geometry: Vec<Charge>,
    /// Lights by name, in the order added (which is their handle order, the order exposures
    /// sum them in).
    lights: Vec<(String, LightId)>,
    /// Occluder names, made with the first occluder (a scene costs little until it has
    /// geometry: scripts may hold many).
    names: Option<Box<OccluderNames>>,
    eyes: Vec<SceneEye>,
    /// Ad-hoc eyes by parameters, oldest first.
    adhoc: Vec<([u32; 9], EyeId)>,
    charges: HashMap<MapKey, MapCharges>,
    /// The batched queries' buffers, made on the first batched query.
    scratch: Option<Box<ExposureScratch>>,
}

/// `penumbra.scene()`.
#[derive(Clone)]
pub(crate) struct LuaScene(Rc<RefCell<State>>);

/// A light of a scene (`scene:addLight`).
pub(crate) struct LuaLight {
    scene: Rc<RefCell<State>>,
    index: usize,
}

/// An eye of a scene (`scene:addEye`).
pub(crate) struct LuaEye {
    scene: Rc<RefCell<State>>,
    index: usize,
}

/// An eye argument: a scene's eye or a position with parameters.
pub(super) enum EyeArg {
    Named(usize),
    At(EyeParams),
}

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "scene", |call| {
        if !call.arg(0).is_nil() {
            return Err(call.error(format!(
                "takes no arguments (got {}); add geometry with scene:addBox",
                describe_value(call.arg(0))
            )));
        }
        Ok(LuaScene(Rc::new(RefCell::new(State {
            lighting: Lighting::new(),
            _charge: ScriptContext::of(call.lua)
                .textures
                .charge_for(call.lua, crate::context::OBJECT_BYTES, "a scene")
                .map_err(|e| call.error(e))?,
            geometry: Vec::new(),
            lights: Vec::new(),
            names: None,
            eyes: Vec::new(),
            adhoc: Vec::new(),
            charges: HashMap::new(),
            scratch: None,
        }))))
    })?;
    Ok(())
}

impl LuaScene {
    /// The handle of light `index`.
    fn light_handle(&self, index: usize) -> LuaLight {
        LuaLight {
            scene: Rc::clone(&self.0),
            index,
        }
    }

    /// The handle of eye `index`.
    fn eye_handle(&self, index: usize) -> LuaEye {
        LuaEye {
            scene: Rc::clone(&self.0),
            index,
        }
    }

    pub(super) fn state(&self, call: &Call<'_>) -> mlua::Result<RefMut<'_, State>> {
        self.0
            .try_borrow_mut()
            .map_err(|_| call.error("the scene is busy"))
    }
}

/// A shadow-map error in a script's words.
fn shadow_error(e: &ShadowError) -> String {
    match e {
        ShadowError::EmptyScene => "the scene has no occluders to fit a directional light's \
                                    shadow map to; add geometry first, or give the light `bounds`"
            .into(),
        other => other.to_string(),
    }
}

impl State {
    /// The occluders as the engine's scene.
    pub fn scene(&self) -> &Scene {
        self.lighting.scene()
    }

    /// Gives back the charges of maps the engine no longer holds (an occluder change dropped
    /// them).
    fn sync_charges(&mut self) {
        let lighting = &self.lighting;
        self.charges.retain(|key, _| match key {
            MapKey::Light(id) => lighting.rendered_map(*id).is_some(),
            MapKey::Eye(id) => lighting.rendered_eye_map(*id).is_some(),
        });
    }

    /// Adds an occluder named `name` (or `prefix` and a number, `box3`); returns the name.
    pub(super) fn add_named_occluder(
        &mut self,
        call: &Call<'_>,
        occluder: Occluder,
        name: Option<String>,
        prefix: &'static str,
    ) -> mlua::Result<String> {
        if name.as_deref() == Some("") {
            return Err(call.error("name: an occluder's name is not empty"));
        }
        let id = self.add_occluder(call, occluder)?;
        let name = name.unwrap_or_else(|| {
            let count = self
                .names
                .get_or_insert_default()
                .counts
                .entry(prefix)
                .or_insert(0);
            *count += 1;
            format!("{prefix}{count}")
        });
        self.names
            .get_or_insert_default()
            .by_id
            .insert(id, name.clone());
        Ok(name)
    }

    /// The name of occluder `id`.
    pub(super) fn occluder_name(&self, id: OccluderId) -> &str {
        self.names
            .as_ref()
            .and_then(|n| n.by_id.get(&id))
            .map_or("", String::as_str)
    }

    /// The ids of the occluders named `name`.
    pub(super) fn occluders_named(&self, name: &str) -> Vec<OccluderId> {
        self.names.as_ref().map_or_else(Vec::new, |n| {
            n.by_id
                .iter()
                .filter(|(_, n)| *n == name)
                .map(|(id, _)| *id)
                .collect()
        })
    }

    /// The engine lighting (queries that need no map: raycasts, inside tests).
    pub(super) fn lighting(&self) -> &Lighting {
        &self.lighting
    }

    fn add_occluder(&mut self, call: &Call<'_>, occluder: Occluder) -> mlua::Result<OccluderId> {
        let mesh = &occluder.mesh;
        // A finite transform can still overflow (a scale of 3e38 and a rotation): refused here,
        // where the script can see which call it was, rather than leaving a scene whose maps
        // have nothing to fit.
        let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        if let Some((i, p)) = mesh
            .positions()
            .iter()
            .map(|&p| occluder.transform.transform_point3(p))
            .inspect(|&p| {
                lo = lo.min(p);
                hi = hi.max(p);
            })
            .enumerate()
            .find(|(_, p)| !p.is_finite())
        {
            return Err(call.error(format!(
                "transform: vertex {} lands at ({}, {}, {}), which is not finite; use a smaller \
                 scale or position",
                i + 1,
                p.x,
                p.y,
                p.z
            )));
        }
        if !mesh.positions().is_empty() && !(hi - lo).is_finite() {
            return Err(call.error(format!(
                "transform: the occluder would span from {lo} to {hi}, a size that is not \
                 finite; use a smaller scale or position"
            )));
        }
        let bytes = 64 + 12 * mesh.positions().len() as u64 + 4 * mesh.indices().len() as u64;
        let charge = ScriptContext::of(call.lua)
            .textures
            .charge_for(call.lua, bytes, "an occluder")
            .map_err(|e| call.error(e))?;
        self.geometry.push(charge);
        let id = self.lighting.add_occluder(occluder);
        self.sync_charges();
        Ok(id)
    }

    /// Adds the light `desc` describes, named as it asks (or by its kind and the next number,
    /// `spot2`); returns its index.
    fn add_light(&mut self, call: &Call<'_>, desc: LightDesc) -> mlua::Result<usize> {
        let default = format!("{}{}", desc.kind, self.lights.len() + 1);
        let taken = |name: &str| self.lights.iter().any(|(n, _)| n == name);
        let name = describe::new_name(call, desc.name, default, taken, "a light")?;
        let id = self.lighting.add_light(desc.light);
        self.lights.push((name, id));
        Ok(self.lights.len() - 1)
    }

    /// Adds the eye `desc` describes, named as it asks (or `eye` and the next number); returns
    /// its index.
    fn add_eye(&mut self, call: &Call<'_>, desc: EyeDesc) -> mlua::Result<usize> {
        let default = format!("eye{}", self.eyes.len() + 1);
        let taken = |name: &str| self.eyes.iter().any(|e| e.name == name);
        let name = describe::new_name(call, desc.name, default, taken, "an eye")?;
        let id = self.lighting.add_eye(desc.params.viewer());
        self.eyes.push(SceneEye {
            name,
            params: desc.params,
            id,
        });
        Ok(self.eyes.len() - 1)
    }

    pub fn light_count(&self) -> usize {
        self.lights.len()
    }

    /// Light `i`'s name and description.
    pub fn light(&self, i: usize) -> (&str, &penumbra_core::shadow::Light) {
        let (name, id) = &self.lights[i];
        (
            name,
            self.lighting.light(*id).expect("a scene's lights stay"),
        )
    }

    /// Light `i`'s shadow map, rendered now (and charged) if needed.
    pub fn light_map(&mut self, call: &Call<'_>, i: usize) -> mlua::Result<&ShadowMap> {
        let (name, id) = self.lights[i].clone();
        self.ensure_light(call, &name, id)?;
        Ok(self.lighting.rendered_map(id).expect("rendered"))
    }

    /// Renders light `id` (named `name`) if it is not, charging its bytes first.
    fn ensure_light(&mut self, call: &Call<'_>, name: &str, id: LightId) -> mlua::Result<()> {
        if self.lighting.rendered_map(id).is_some() {
            return Ok(());
        }
        let error = |e: &ShadowError| call.error(format!("light {name:?}: {}", shadow_error(e)));
        if let Some(e) = self.lighting.map_error(id) {
            return Err(error(e));
        }
        penumbra_core::zone!("penumbra_lua::render shadow map");
        let bytes = self.lighting.light(id).map_or(0, |l| l.map_bytes());
        let charge = ScriptContext::of(call.lua)
            .textures
            .charge_for(
                call.lua,
                bytes,
                &format!("the shadow map of light {name:?}"),
            )
            .map_err(|e| call.error(e))?;
        self.lighting.map(id).map_err(|e| error(&e))?;
        self.charges.insert(
            MapKey::Light(id),
            MapCharges {
                _map: charge,
                batch: None,
            },
        );
        Ok(())
    }

    /// Charges the batched query path of a rendered map on its first use.
    fn charge_batch(&mut self, call: &Call<'_>, key: MapKey, what: &str) -> mlua::Result<()> {
        let bytes = match key {
            MapKey::Light(id) => self.lighting.rendered_map(id).map(ShadowMap::batch_bytes),
            MapKey::Eye(id) => self
                .lighting
                .rendered_eye_map(id)
                .map(|e| e.map().batch_bytes()),
        };
        let Some(entry) = self.charges.get_mut(&key) else {
            return Ok(());
        };
        if entry.batch.is_none() {
            let charge = ScriptContext::of(call.lua)
                .textures
                .charge_for(call.lua, bytes.unwrap_or(0), what)
                .map_err(|e| call.error(e))?;
            entry.batch = Some(charge);
        }
        Ok(())
    }

    /// Renders (and charges) the maps an exposure query of `points` needs; with `batched`, their
    /// batched query paths are charged too.
    fn prepare(&mut self, call: &Call<'_>, points: &[Vec3], batched: bool) -> mlua::Result<()> {
        let needed = self.lighting.lights_reaching(points);
        for id in needed {
            let Some(name) = self
                .lights
                .iter()
                .find(|(_, l)| *l == id)
                .map(|(n, _)| n.clone())
            else {
                continue;
            };
            self.ensure_light(call, &name, id)?;
            if batched {
                self.charge_batch(
                    call,
                    MapKey::Light(id),
                    &format!("the batch of light {name:?}"),
                )?;
            }
        }
        Ok(())
    }

    /// The parameters of an eye argument.
    pub fn eye_params(&self, eye: &EyeArg) -> EyeParams {
        match eye {
            EyeArg::Named(i) => self.eyes[*i].params,
            EyeArg::At(params) => *params,
        }
    }

    /// The name of an eye argument for messages and pictures.
    pub fn eye_name(&self, eye: &EyeArg) -> String {
        match eye {
            EyeArg::Named(i) => self.eyes[*i].name.clone(),
            EyeArg::At(p) => format!(
                "the eye at ({}, {}, {})",
                p.position.x, p.position.y, p.position.z
            ),
        }
    }

    /// The engine eye of an eye argument (an ad-hoc eye is added on first use; the oldest of
    /// more than 16 is removed).
    fn eye_id(&mut self, eye: &EyeArg) -> EyeId {
        match eye {
            EyeArg::Named(i) => self.eyes[*i].id,
            EyeArg::At(params) => {
                let key = params.key();
                if let Some((_, id)) = self.adhoc.iter().find(|(k, _)| *k == key) {
                    return *id;
                }
                if self.adhoc.len() >= ADHOC_EYES {
                    let (_, old) = self.adhoc.remove(0);
                    self.lighting.remove_eye(old);
                    self.charges.remove(&MapKey::Eye(old));
                }
                let id = self.lighting.add_eye(params.viewer());
                self.adhoc.push((key, id));
                id
            }
        }
    }

    /// An eye's depth map, rendered now (and charged) if needed; with `batched`, its batched
    /// query path is charged too.
    pub fn eye_map(
        &mut self,
        call: &Call<'_>,
        eye: &EyeArg,
        batched: bool,
    ) -> mlua::Result<&EyeMap> {
        let id = self.eye_id(eye);
        let name = self.eye_name(eye);
        if self.lighting.rendered_eye_map(id).is_none() {
            let error = |e: &ShadowError| call.error(format!("{name}: {}", shadow_error(e)));
            if let Some(e) = self.lighting.eye_map_error(id) {
                return Err(error(e));
            }
            penumbra_core::zone!("penumbra_lua::render eye map");
            let bytes = self.lighting.eye(id).map_or(0, Viewer::map_bytes);
            let charge = ScriptContext::of(call.lua)
                .textures
                .charge_for(call.lua, bytes, &format!("the depth map of {name}"))
                .map_err(|e| call.error(e))?;
            self.lighting.eye_map(id).map_err(|e| error(&e))?;
            self.charges.insert(
                MapKey::Eye(id),
                MapCharges {
                    _map: charge,
                    batch: None,
                },
            );
        }
        if batched {
            self.charge_batch(call, MapKey::Eye(id), &format!("the batch of {name}"))?;
        }
        Ok(self.lighting.rendered_eye_map(id).expect("rendered"))
    }

    /// The rendered depth map of an eye argument that [`State::eye_map`] rendered.
    pub fn rendered_eye(&self, eye: &EyeArg) -> Option<&EyeMap> {
        let id = match eye {
            EyeArg::Named(i) => self.eyes[*i].id,
            EyeArg::At(params) => {
                let key = params.key();
                self.adhoc.iter().find(|(k, _)| *k == key)?.1
            }
        };
        self.lighting.rendered_eye_map(id)
    }

    /// The exposure at every point (`Lighting::exposures`); the same bits as
    /// [`State::light_at`]'s total.
    pub fn exposures(
        &mut self,
        call: &Call<'_>,
        points: &[Vec3],
        normal: Option<Vec3>,
    ) -> mlua::Result<Vec<f32>> {
        penumbra_core::zone!("penumbra_lua::exposures");
        self.prepare(call, points, true)?;
        let mut out = vec![0.0f32; points.len()];
        let State {
            lighting, scratch, ..
        } = self;
        lighting
            .exposures(points, normal, &mut out, scratch.get_or_insert_default())
            .map_err(|e| call.error(shadow_error(&e)))?;
        Ok(out)
    }

    /// The exposure at one point (`Lighting::exposure`) and each light's part of it, in the
    /// order the lights were added (0 for lights that do not reach the point).
    fn light_at(
        &mut self,
        call: &Call<'_>,
        point: Vec3,
        normal: Option<Vec3>,
    ) -> mlua::Result<(f32, Vec<f32>)> {
        self.prepare(call, &[point], false)?;
        let exposure: Exposure = self
            .lighting
            .exposure(point, normal)
            .map_err(|e| call.error(shadow_error(&e)))?;
        let parts = self
            .lights
            .iter()
            .map(|(_, id)| exposure.light(*id).map_or(0.0, |s| s.irradiance))
            .collect();
        Ok((exposure.total(), parts))
    }

    /// How lit `point` is in light `i`'s map.
    fn lit_fraction(
        &mut self,
        call: &Call<'_>,
        i: usize,
        point: Vec3,
        normal: Option<Vec3>,
    ) -> mlua::Result<f32> {
        Ok(self.light_map(call, i)?.lit_fraction(point, normal))
    }
}

/// A light argument: its name or its handle (of this scene).
pub(super) fn light_index(
    call: &Call<'_>,
    state: &State,
    scene: &LuaScene,
    v: &Value,
) -> mlua::Result<usize> {
    match v {
        Value::String(_) => {
            let name = call.string_of("light", v)?;
            state
                .lights
                .iter()
                .position(|(l, _)| *l == name)
                .ok_or_else(|| {
                    let names: Vec<String> =
                        state.lights.iter().map(|(l, _)| format!("{l:?}")).collect();
                    call.error(format!(
                        "light: the scene has no light named {name:?} (it has {})",
                        if names.is_empty() {
                            "none".to_owned()
                        } else {
                            names.join(", ")
                        }
                    ))
                })
        }
        Value::UserData(ud) if ud.is::<LuaLight>() => {
            let light = ud.borrow::<LuaLight>()?;
            if !Rc::ptr_eq(&light.scene, &scene.0) {
                return Err(call.error("light: the light belongs to another scene"));
            }
            Ok(light.index)
        }
        other => Err(call.expected("light", "a light name or a Light", other)),
    }
}

/// An eye argument: an `Eye` of this scene (then `params` may not describe it), or a position
/// described by `params` (`direction`, `fov`, `range`, `resolution`).
pub(super) fn eye_arg(
    call: &Call<'_>,
    scene: &LuaScene,
    v: &Value,
    params: &Fields<'_, '_>,
) -> mlua::Result<EyeArg> {
    // An eye handle, or an eye's name as `litFraction` takes a light's.
    let named = match v {
        Value::UserData(ud) if ud.is::<LuaEye>() => {
            let eye = ud.borrow::<LuaEye>()?;
            if !Rc::ptr_eq(&eye.scene, &scene.0) {
                return Err(call.error("eye: the eye belongs to another scene"));
            }
            Some(eye.index)
        }
        Value::String(_) => {
            let name = call.string_of("eye", v)?;
            let state = scene
                .0
                .try_borrow()
                .map_err(|_| call.error("the scene is busy"))?;
            let found = state.eyes.iter().position(|e| e.name == name);
            Some(found.ok_or_else(|| {
                let names: Vec<String> =
                    state.eyes.iter().map(|e| format!("{:?}", e.name)).collect();
                call.error(format!(
                    "eye: the scene has no eye named {name:?} (it has {})",
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                ))
            })?)
        }
        _ => None,
    };
    if let Some(index) = named {
        for key in EYE_PARAM_KEYS {
            if params.has(key)? {
                return Err(call.error(format!(
                    "{}: the eye was given its {key} by scene:addEye; pass a position to \
                     describe another eye",
                    params.name(key)
                )));
            }
        }
        return Ok(EyeArg::Named(index));
    }
    let position = match v {
        Value::UserData(_) => {
            return Err(call.expected("eye", "an Eye, an eye's name or a position", v));
        }
        _ => call.vec3_of("eye", v)?,
    };
    Ok(EyeArg::At(describe::eye_params(call, params, position)?))
}
