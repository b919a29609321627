//! `penumbra.scene()` and the `Scene`, `Light` and `Eye` userdata: occluders (boxes, meshes,
//! OBJ files), lights and eyes, and the questions a level designer asks of them — how lit is
//! this point, can this eye see that one, how lit is the player along a path.
//!
//! Shadow maps and eye depth maps are rendered when a query first needs them and kept until the
//! geometry changes (adding an occluder drops them all). Their bytes, and the geometry's, count
//! against the script's texture budget. Batch queries (`lightAtBatch`, `probePath`, the
//! pictures) go through `ShadowMap::lit_fractions`, the batched `sample_c_lz` path, which returns exactly the
//! bits the one-point queries return.

use std::cell::{Ref, RefCell, RefMut};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use glam::{EulerRot, Mat4, Quat, Vec3};
use mlua::{Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, Value};
use penumbra_core::Format;
use penumbra_core::raster::Mesh;
use penumbra_core::shadow::{
    Aabb, EyeMap, Light, LightKind, Occluder, PcfKernel, Scene, ShadowError, ShadowMap, Viewer,
};

use super::{Call, Fields, describe, function, method, vector_value};
use crate::host::{Charge, Host};

/// Items a loop handles between two deadline checks.
pub(super) const CHECK_EVERY: usize = 4096;
/// Ad-hoc eyes (`canSee` from a position) whose depth maps are kept.
const ADHOC_EYES: usize = 16;
/// The largest shadow-map edge a script may ask for.
const MAX_LIGHT_RESOLUTION: u32 = 8192;
/// The largest eye depth-map edge a script may ask for.
const MAX_EYE_RESOLUTION: u32 = 4096;
/// The most probes `probePath` places.
const MAX_PROBES: f64 = 1_000_000.0;
/// The largest OBJ file `loadObj` reads.
const MAX_OBJ_BYTES: u64 = 256 << 20;

const LIGHT_KEYS: [&str; 11] = [
    "kind",
    "name",
    "direction",
    "position",
    "angle",
    "innerAngle",
    "range",
    "intensity",
    "resolution",
    "kernel",
    "bounds",
];
const EYE_KEYS: [&str; 6] = [
    "name",
    "position",
    "direction",
    "fov",
    "range",
    "resolution",
];
/// What `canSee` and `saveView` take to describe an eye given as a position.
pub(super) const EYE_PARAM_KEYS: [&str; 4] = ["direction", "fov", "range", "resolution"];
const TRANSFORM_KEYS: [&str; 3] = ["position", "rotation", "scale"];

/// A rendered map; its batched query path is charged to the budget on first use.
pub(super) struct Rendered {
    pub map: ShadowMap,
    batch: RefCell<Option<Charge>>,
    _charge: Charge,
}

impl Rendered {
    fn new(map: ShadowMap, charge: Charge) -> Self {
        Self {
            map,
            batch: RefCell::new(None),
            _charge: charge,
        }
    }

    /// The map, for its batched lit-fraction query (`ShadowMap::lit_fractions`, whose key image
    /// is built once on first use and charged to the budget here).
    pub fn batch(&self, call: &Call<'_>, what: &str) -> mlua::Result<&ShadowMap> {
        if self.batch.borrow().is_none() {
            let charge = Host::of(call.lua)
                .textures
                .charge_for(call.lua, key_image_bytes(&self.map), what)
                .map_err(|e| call.error(e))?;
            *self.batch.borrow_mut() = Some(charge);
        }
        Ok(&self.map)
    }
}

/// A rendered eye.
pub(super) struct RenderedEye {
    pub eye: EyeMap,
    pub depth: Rendered,
}

struct SceneLight {
    name: String,
    light: Light,
    map: Option<Rc<Rendered>>,
}

struct SceneEye {
    name: String,
    params: EyeParams,
    map: Option<Rc<RenderedEye>>,
}

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

    /// Sees all around (no direction, or a field of view of 179° or more).
    pub fn all_around(&self) -> bool {
        self.direction.is_none() || self.fov >= 179.0
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

/// A scene's occluders, lights, eyes and rendered maps.
pub(super) struct State {
    pub scene: Scene,
    /// The scene's charge for itself (what it holds besides its geometry and maps).
    _charge: Charge,
    geometry: Vec<Charge>,
    lights: Vec<SceneLight>,
    eyes: Vec<SceneEye>,
    adhoc: HashMap<[u32; 9], Rc<RenderedEye>>,
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
    module.raw_set(
        "scene",
        function(lua, "penumbra.scene", |call| {
            if !call.arg(0).is_nil() {
                return Err(call.error(format!(
                    "takes no arguments (got {}); add geometry with scene:addBox",
                    describe(call.arg(0))
                )));
            }
            Ok(LuaScene(Rc::new(RefCell::new(State {
                scene: Scene::default(),
                _charge: Host::of(call.lua)
                    .textures
                    .charge_for(call.lua, crate::host::OBJECT_BYTES, "a scene")
                    .map_err(|e| call.error(e))?,
                geometry: Vec::new(),
                lights: Vec::new(),
                eyes: Vec::new(),
                adhoc: HashMap::new(),
            }))))
        })?,
    )?;
    Ok(())
}

impl LuaScene {
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

/// Bytes of a light's rendered map.
fn map_bytes(light: &Light) -> u64 {
    let slices = match &light.kind {
        LightKind::Point { .. } => 6,
        LightKind::Cascaded { radii, .. } => radii.len() as u64,
        _ => 1,
    };
    let n = u64::from(light.resolution);
    n * n * light.format.bytes_per_texel() as u64 * slices
}

/// Bytes of the key image `ShadowMap::lit_fractions` builds for `map` (none for cubes and
/// cascades).
fn key_image_bytes(map: &ShadowMap) -> u64 {
    let tex = map.texture();
    if tex.dimension() != penumbra_core::Dimension::Texture2D {
        return 0;
    }
    let [w, h, _] = tex.level_size(0);
    let key = if tex.format() == Format::D16Unorm {
        2
    } else {
        4
    };
    2 * (u64::from(w) + 4) * (u64::from(h) + 3) * key
}

impl State {
    /// Drops every rendered map (the geometry changed).
    fn invalidate(&mut self) {
        for light in &mut self.lights {
            light.map = None;
        }
        for eye in &mut self.eyes {
            eye.map = None;
        }
        self.adhoc.clear();
    }

    fn add_occluder(&mut self, call: &Call<'_>, occluder: Occluder) -> mlua::Result<()> {
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
        let charge = Host::of(call.lua)
            .textures
            .charge_for(call.lua, bytes, "an occluder")
            .map_err(|e| call.error(e))?;
        self.geometry.push(charge);
        self.scene.add(occluder);
        self.invalidate();
        Ok(())
    }

    pub fn light_count(&self) -> usize {
        self.lights.len()
    }

    pub fn light(&self, i: usize) -> (&str, &Light) {
        (&self.lights[i].name, &self.lights[i].light)
    }

    /// Light `i`'s shadow map, rendered now if needed.
    pub fn light_map(&mut self, call: &Call<'_>, i: usize) -> mlua::Result<Rc<Rendered>> {
        if let Some(r) = &self.lights[i].map {
            return Ok(Rc::clone(r));
        }
        penumbra_core::zone!("penumbra_lua::render shadow map");
        let entry = &self.lights[i];
        let charge = Host::of(call.lua)
            .textures
            .charge_for(
                call.lua,
                map_bytes(&entry.light),
                &format!("the shadow map of light {:?}", entry.name),
            )
            .map_err(|e| call.error(e))?;
        let map = entry
            .light
            .render(&self.scene)
            .map_err(|e| call.error(format!("light {:?}: {}", entry.name, shadow_error(&e))))?;
        let rendered = Rc::new(Rendered::new(map, charge));
        self.lights[i].map = Some(Rc::clone(&rendered));
        Ok(rendered)
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

    /// An eye's depth map, rendered now if needed.
    pub fn eye_map(&mut self, call: &Call<'_>, eye: &EyeArg) -> mlua::Result<Rc<RenderedEye>> {
        let cached = match eye {
            EyeArg::Named(i) => self.eyes[*i].map.clone(),
            EyeArg::At(params) => self.adhoc.get(&params.key()).cloned(),
        };
        if let Some(r) = cached {
            return Ok(r);
        }
        penumbra_core::zone!("penumbra_lua::render eye map");
        let params = self.eye_params(eye);
        let name = self.eye_name(eye);
        let n = u64::from(params.resolution);
        let faces = if params.all_around() { 6 } else { 1 };
        let charge = Host::of(call.lua)
            .textures
            .charge_for(
                call.lua,
                n * n * 4 * faces,
                &format!("the depth map of {name}"),
            )
            .map_err(|e| call.error(e))?;
        let map = params
            .viewer()
            .render(&self.scene)
            .map_err(|e| call.error(format!("{name}: {}", shadow_error(&e))))?;
        let rendered = Rc::new(RenderedEye {
            depth: Rendered::new(map.map().clone(), charge),
            eye: map,
        });
        match eye {
            EyeArg::Named(i) => self.eyes[*i].map = Some(Rc::clone(&rendered)),
            EyeArg::At(params) => {
                if self.adhoc.len() >= ADHOC_EYES {
                    self.adhoc.clear();
                }
                self.adhoc.insert(params.key(), Rc::clone(&rendered));
            }
        }
        Ok(rendered)
    }

    /// The exposure at every point (the sum over lights of unshadowed light × lit fraction),
    /// through each light's batch; the same bits as [`State::light_at`].
    pub fn exposures(
        &mut self,
        call: &Call<'_>,
        points: &[Vec3],
        normal: Option<Vec3>,
    ) -> mlua::Result<Vec<f32>> {
        penumbra_core::zone!("penumbra_lua::exposures");
        let host = Host::of(call.lua);
        let mut total = vec![0.0f32; points.len()];
        let (mut at, mut pts, mut unshadowed, mut lit) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for i in 0..self.lights.len() {
            at.clear();
            pts.clear();
            unshadowed.clear();
            let light = &self.lights[i].light;
            for (k, p) in points.iter().enumerate() {
                let u = light.unshadowed(*p);
                if u != 0.0 {
                    at.push(k);
                    pts.push(*p);
                    unshadowed.push(u);
                }
            }
            if at.is_empty() {
                continue;
            }
            let kernel = light.kernel;
            let rendered = self.light_map(call, i)?;
            let what = format!("the batch of light {:?}", self.lights[i].name);
            let batch = rendered.batch(call, &what)?;
            lit.clear();
            lit.resize(pts.len(), 0.0f32);
            for (p, out) in pts.chunks(CHECK_EVERY).zip(lit.chunks_mut(CHECK_EVERY)) {
                host.check_deadline(call.lua)?;
                batch.lit_fractions(p, normal, kernel, out);
            }
            for ((&k, &u), &f) in at.iter().zip(&unshadowed).zip(&lit) {
                total[k] += u * f;
            }
        }
        Ok(total)
    }

    /// The exposure at one point and each light's part of it.
    fn light_at(
        &mut self,
        call: &Call<'_>,
        point: Vec3,
        normal: Option<Vec3>,
    ) -> mlua::Result<(f32, Vec<f32>)> {
        let mut total = 0.0f32;
        let mut parts = Vec::with_capacity(self.lights.len());
        for i in 0..self.lights.len() {
            let light = &self.lights[i].light;
            let (u, kernel) = (light.unshadowed(point), light.kernel);
            let part = if u == 0.0 {
                0.0
            } else {
                u * self
                    .light_map(call, i)?
                    .map
                    .lit_fraction(point, normal, kernel)
            };
            total += part;
            parts.push(part);
        }
        Ok((total, parts))
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
                .position(|l| l.name == name)
                .ok_or_else(|| {
                    let names: Vec<String> = state
                        .lights
                        .iter()
                        .map(|l| format!("{:?}", l.name))
                        .collect();
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
    if let Value::UserData(ud) = v
        && ud.is::<LuaEye>()
    {
        let eye = ud.borrow::<LuaEye>()?;
        if !Rc::ptr_eq(&eye.scene, &scene.0) {
            return Err(call.error("eye: the eye belongs to another scene"));
        }
        for key in EYE_PARAM_KEYS {
            if params.has(key)? {
                return Err(call.error(format!(
                    "{}: the eye was given its {key} by scene:addEye; pass a position to \
                     describe another eye",
                    params.name(key)
                )));
            }
        }
        return Ok(EyeArg::Named(eye.index));
    }
    let position = match v {
        Value::UserData(_) => return Err(call.expected("eye", "an Eye or a position", v)),
        _ => call.vec3_of("eye", v)?,
    };
    Ok(EyeArg::At(eye_params(call, params, position)?))
}

/// Reads `direction`, `fov`, `range` and `resolution` for an eye at `position`.
fn eye_params(call: &Call<'_>, f: &Fields<'_, '_>, position: Vec3) -> mlua::Result<EyeParams> {
    let direction = f.vec3("direction")?;
    if let Some(d) = direction
        && d.length_squared() == 0.0
    {
        return Err(call.error(format!("{}: the direction is zero", f.name("direction"))));
    }
    let fov = f.number("fov")?;
    if let Some(fov) = fov {
        if !(fov > 0.0 && fov <= 360.0) {
            return Err(call.error(format!(
                "{} = {fov}: expected degrees in (0, 360]",
                f.name("fov")
            )));
        }
        if direction.is_none() && fov < 360.0 {
            return Err(call.error(format!(
                "{} = {fov} needs a direction (without one the eye sees all around)",
                f.name("fov")
            )));
        }
    }
    let range = f.number("range")?.unwrap_or(30.0);
    if range <= 0.0 {
        return Err(call.error(format!(
            "{} = {range}: expected a distance > 0",
            f.name("range")
        )));
    }
    let resolution = f.index("resolution")?.unwrap_or(512);
    if !(1..=MAX_EYE_RESOLUTION).contains(&resolution) {
        return Err(call.error(format!(
            "{} = {resolution}: expected 1 to {MAX_EYE_RESOLUTION} texels",
            f.name("resolution")
        )));
    }
    Ok(EyeParams {
        position,
        direction,
        fov: fov.unwrap_or(90.0) as f32,
        range: range as f32,
        resolution,
    })
}

/// An optional object transform `{position = v, rotation = {x, y, z} degrees, scale = s | v}`:
/// scale, then rotate (roll about z, pitch about x, yaw about y), then move.
fn transform(call: &Call<'_>, i: usize) -> mlua::Result<Mat4> {
    let f = Fields::optional(call, i, "transform", &TRANSFORM_KEYS)?;
    let position = f.vec3("position")?.unwrap_or(Vec3::ZERO);
    let rotation = f.vec3("rotation")?.unwrap_or(Vec3::ZERO);
    let scale = match f.get("scale")? {
        Value::Nil => Vec3::ONE,
        v @ (Value::Integer(_) | Value::Number(_)) => {
            Vec3::splat(call.finite_of("transform.scale", &v)? as f32)
        }
        v => call.vec3_of("transform.scale", &v)?,
    };
    let rotation = Quat::from_euler(
        EulerRot::YXZ,
        rotation.y.to_radians(),
        rotation.x.to_radians(),
        rotation.z.to_radians(),
    );
    Ok(Mat4::from_scale_rotation_translation(
        scale, rotation, position,
    ))
}

/// `scene:addLight(desc)`.
fn read_light(call: &Call<'_>, state: &State) -> mlua::Result<(String, Light)> {
    let f = Fields::required(call, 0, "desc", &LIGHT_KEYS)?;
    let kind = f.string("kind")?.ok_or_else(|| {
        call.error("desc.kind is missing: \"directional\", \"spot\" or \"point\"")
    })?;
    let only = |key: &str, kinds: &str| -> mlua::Result<()> {
        if f.has(key)? {
            return Err(call.error(format!(
                "{}: a {kind} light has no {key} (only {kinds} lights do)",
                f.name(key)
            )));
        }
        Ok(())
    };
    let needed = |key: &str| -> mlua::Result<Vec3> {
        f.vec3(key)?.ok_or_else(|| {
            call.error(format!(
                "{} is missing: a {kind} light needs one",
                f.name(key)
            ))
        })
    };
    let direction = |f: &Fields<'_, '_>| -> mlua::Result<Vec3> {
        let d = needed("direction")?;
        if d.length_squared() == 0.0 {
            return Err(call.error(format!("{}: the direction is zero", f.name("direction"))));
        }
        Ok(d)
    };
    let range = || -> mlua::Result<f32> {
        let r = f.number("range")?.unwrap_or(20.0);
        if r <= 0.0 {
            return Err(call.error(format!(
                "{} = {r}: expected a distance > 0",
                f.name("range")
            )));
        }
        Ok(r as f32)
    };
    let intensity = f.number("intensity")?.unwrap_or(1.0);
    if intensity < 0.0 {
        return Err(call.error(format!(
            "{} = {intensity}: expected a number >= 0",
            f.name("intensity")
        )));
    }
    let intensity = intensity as f32;
    let mut light = match kind.as_str() {
        "directional" => {
            only("position", "spot and point")?;
            only("range", "spot and point")?;
            only("angle", "spot")?;
            only("innerAngle", "spot")?;
            let mut light = Light::directional(direction(&f)?, intensity);
            if let Some(b) = f.read("bounds", |c, what, v| {
                let b = Fields::check(
                    c,
                    "desc.bounds",
                    Some(c.table_of(what, v)?),
                    &["min", "max"],
                )?;
                let min = b
                    .vec3("min")?
                    .ok_or_else(|| c.error("desc.bounds.min is missing"))?;
                let max = b
                    .vec3("max")?
                    .ok_or_else(|| c.error("desc.bounds.max is missing"))?;
                Ok(Aabb {
                    min: min.min(max),
                    max: min.max(max),
                })
            })? && let LightKind::Directional { bounds, .. } = &mut light.kind
            {
                *bounds = Some(b);
            }
            light
        }
        "spot" => {
            only("bounds", "directional")?;
            let angle = f.number("angle")?.unwrap_or(60.0);
            if !(angle > 0.0 && angle <= 176.0) {
                return Err(call.error(format!(
                    "{} = {angle}: expected the cone's full angle in degrees, in (0, 176]",
                    f.name("angle")
                )));
            }
            let inner = f.number("innerAngle")?;
            if let Some(inner) = inner
                && !(inner > 0.0 && inner <= angle)
            {
                return Err(call.error(format!(
                    "{} = {inner}: expected degrees in (0, angle = {angle}]",
                    f.name("innerAngle")
                )));
            }
            // Half-angles in f32, as Rust code writes them (`40f32.to_radians()`), so a level
            // built here and one built in Rust get the same bits.
            let half = |degrees: f64| (0.5 * degrees as f32).to_radians();
            let mut light = Light::spot(
                needed("position")?,
                direction(&f)?,
                half(angle),
                range()?,
                intensity,
            );
            if let (Some(inner), LightKind::Spot { inner_angle, .. }) = (inner, &mut light.kind) {
                *inner_angle = half(inner);
            }
            light
        }
        "point" => {
            only("bounds", "directional")?;
            only("direction", "directional and spot")?;
            only("angle", "spot")?;
            only("innerAngle", "spot")?;
            Light::point(needed("position")?, range()?, intensity)
        }
        other => {
            return Err(call.error(format!(
                "desc.kind: {other:?} is not one of \"directional\", \"spot\", \"point\""
            )));
        }
    };
    if let Some(resolution) = f.index("resolution")? {
        if !(1..=MAX_LIGHT_RESOLUTION).contains(&resolution) {
            return Err(call.error(format!(
                "desc.resolution = {resolution}: expected 1 to {MAX_LIGHT_RESOLUTION} texels"
            )));
        }
        light.resolution = resolution;
    }
    if let Some(kernel) = f.string("kernel")? {
        light.kernel = kernel.parse::<PcfKernel>().map_err(|_| {
            call.error(format!(
                "desc.kernel: {kernel:?} is not one of \"2x2\", \"3x3\", \"5x5\""
            ))
        })?;
    }
    let name = match f.string("name")? {
        Some(name) if name.is_empty() => return Err(call.error("desc.name is empty")),
        Some(name) => name,
        None => format!("{kind}{}", state.lights.len() + 1),
    };
    if state.lights.iter().any(|l| l.name == name) {
        return Err(call.error(format!(
            "desc.name: the scene already has a light named {name:?}"
        )));
    }
    Ok((name, light))
}

/// The rows of a probe walk: points every `spacing` along the polyline, and its last point.
fn probe_points(call: &Call<'_>, path: &[Vec3], spacing: f64) -> mlua::Result<Vec<(Vec3, f32)>> {
    let Some(&first) = path.first() else {
        return Err(call.error("points: the path is empty"));
    };
    let length: f64 = path
        .windows(2)
        .map(|w| f64::from(w[0].distance(w[1])))
        .sum();
    if length / spacing > MAX_PROBES {
        return Err(call.error(format!(
            "spacing = {spacing}: a path {length} long would get more than {MAX_PROBES} probes"
        )));
    }
    let mut out = vec![(first, 0.0f32)];
    let (mut next, mut start, mut emitted) = (spacing, 0.0f64, 0.0f64);
    for w in path.windows(2) {
        let len = f64::from(w[0].distance(w[1]));
        while len > 0.0 && next <= start + len {
            let t = ((next - start) / len) as f32;
            out.push((w[0].lerp(w[1], t), next as f32));
            emitted = next;
            next += spacing;
        }
        start += len;
    }
    // The path's end, unless the last probe already sits on it.
    if length - emitted > 1e-6 * spacing {
        out.push((*path.last().unwrap_or(&first), length as f32));
    }
    Ok(out)
}

impl UserData for LuaScene {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("occluders", |_, s| {
            Ok(s.0.try_borrow().map_or(0, |st| st.scene.occluders.len()))
        });
        fields.add_field_method_get("triangles", |_, s| {
            Ok(s.0.try_borrow().map_or(0, |st| st.scene.triangle_count()))
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            Ok(match s.0.try_borrow() {
                Ok(st) => format!(
                    "Scene({} occluders, {} triangles, {} lights, {} eyes)",
                    st.scene.occluders.len(),
                    st.scene.triangle_count(),
                    st.lights.len(),
                    st.eyes.len()
                ),
                Err(_) => "Scene(busy)".into(),
            })
        });
        method(methods, "addBox", "Scene:addBox", |call, this: &Self| {
            let a = call.vec3(0, "min")?;
            let b = call.vec3(1, "max")?;
            this.state(call)?
                .add_occluder(call, Occluder::cuboid(a.min(b), a.max(b)))
        });
        method(methods, "addMesh", "Scene:addMesh", |call, this: &Self| {
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
            let matrix = transform(call, 2)?;
            let mesh = Mesh::new(positions, indices).map_err(|e| call.error(e))?;
            this.state(call)?
                .add_occluder(call, Occluder::mesh(Arc::new(mesh), matrix))
        });
        method(methods, "loadObj", "Scene:loadObj", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::loadObj");
            let rel = call.string(0, "path")?;
            let matrix = transform(call, 1)?;
            let bytes = super::png::read_root(call, &rel, MAX_OBJ_BYTES)?;
            let text = String::from_utf8(bytes)
                .map_err(|e| call.error(format!("{rel}: not UTF-8 text ({e})")))?;
            let host = Host::of(call.lua);
            let mesh =
                super::obj::parse(&text, || host.check_deadline(call.lua))?.map_err(|e| match e
                    .line
                {
                    Some(line) => call.error(format!("{rel}:{line}: {}", e.message)),
                    None => call.error(format!("{rel}: {}", e.message)),
                })?;
            let triangles = mesh.indices.len() / 3;
            let mesh = Mesh::new(mesh.positions, mesh.indices).map_err(|e| call.error(e))?;
            this.state(call)?
                .add_occluder(call, Occluder::mesh(Arc::new(mesh), matrix))?;
            Ok(triangles)
        });
        method(
            methods,
            "addLight",
            "Scene:addLight",
            |call, this: &Self| {
                let mut state = this.state(call)?;
                let (name, light) = read_light(call, &state)?;
                state.lights.push(SceneLight {
                    name,
                    light,
                    map: None,
                });
                Ok(LuaLight {
                    scene: Rc::clone(&this.0),
                    index: state.lights.len() - 1,
                })
            },
        );
        method(methods, "addEye", "Scene:addEye", |call, this: &Self| {
            let f = Fields::required(call, 0, "desc", &EYE_KEYS)?;
            let position = f
                .vec3("position")?
                .ok_or_else(|| call.error("desc.position is missing"))?;
            let params = eye_params(call, &f, position)?;
            let mut state = this.state(call)?;
            let name = match f.string("name")? {
                Some(name) if name.is_empty() => return Err(call.error("desc.name is empty")),
                Some(name) => name,
                None => format!("eye{}", state.eyes.len() + 1),
            };
            if state.eyes.iter().any(|e| e.name == name) {
                return Err(call.error(format!(
                    "desc.name: the scene already has an eye named {name:?}"
                )));
            }
            state.eyes.push(SceneEye {
                name,
                params,
                map: None,
            });
            Ok(LuaEye {
                scene: Rc::clone(&this.0),
                index: state.eyes.len() - 1,
            })
        });
        method(methods, "light", "Scene:light", |call, this: &Self| {
            let name = call.string(0, "name")?;
            let state = this.state(call)?;
            Ok(state
                .lights
                .iter()
                .position(|l| l.name == name)
                .map(|index| LuaLight {
                    scene: Rc::clone(&this.0),
                    index,
                }))
        });
        method(methods, "eye", "Scene:eye", |call, this: &Self| {
            let name = call.string(0, "name")?;
            let state = this.state(call)?;
            Ok(state
                .eyes
                .iter()
                .position(|e| e.name == name)
                .map(|index| LuaEye {
                    scene: Rc::clone(&this.0),
                    index,
                }))
        });
        method(methods, "bounds", "Scene:bounds", |call, this: &Self| {
            let b = this.state(call)?.scene.bounds();
            if b.is_empty() {
                return Ok((Value::Nil, Value::Nil));
            }
            Ok((
                vector_value(call.lua, b.min)?,
                vector_value(call.lua, b.max)?,
            ))
        });
        method(methods, "lightAt", "Scene:lightAt", |call, this: &Self| {
            penumbra_core::zone!("penumbra_lua::lightAt");
            let point = call.vec3(0, "pos")?;
            let normal = call.opt(1, |v| call.vec3_of("normal", v))?;
            let mut state = this.state(call)?;
            let (total, parts) = state.light_at(call, point, normal)?;
            let lights = call.lua.create_table_with_capacity(0, parts.len())?;
            // Keys are made per call: a scene holds no Lua references, so a script can keep
            // as many scenes as its memory allows (each reference takes a slot of a Lua stack
            // with a fixed size).
            for (light, part) in state.lights.iter().zip(parts) {
                lights.raw_set(light.name.as_str(), part)?;
            }
            let out = call.lua.create_table_with_capacity(0, 2)?;
            out.raw_set("total", total)?;
            out.raw_set("lights", lights)?;
            Ok(out)
        });
        method(
            methods,
            "lightAtBatch",
            "Scene:lightAtBatch",
            |call, this: &Self| {
                penumbra_core::zone!("penumbra_lua::lightAtBatch");
                let points = call.points_of("points", call.arg(0))?;
                let normal = call.opt(1, |v| call.vec3_of("normal", v))?;
                let totals = this.state(call)?.exposures(call, &points, normal)?;
                call.lua.create_sequence_from(totals)
            },
        );
        method(
            methods,
            "litFraction",
            "Scene:litFraction",
            |call, this: &Self| {
                penumbra_core::zone!("penumbra_lua::litFraction");
                let mut state = this.state(call)?;
                let i = light_index(call, &state, this, call.arg(0))?;
                let point = call.vec3(1, "pos")?;
                let normal = call.opt(2, |v| call.vec3_of("normal", v))?;
                let kernel = state.lights[i].light.kernel;
                Ok(state
                    .light_map(call, i)?
                    .map
                    .lit_fraction(point, normal, kernel))
            },
        );
        method(methods, "canSee", "Scene:canSee", |call, this: &Self| {
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
            let rendered = this.state(call)?.eye_map(call, &eye)?;
            let fraction = rendered.eye.visible_fraction(target, radius as f32);
            Ok((fraction >= 0.5, fraction))
        });
        method(
            methods,
            "probePath",
            "Scene:probePath",
            |call, this: &Self| {
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
            },
        );
        super::scene_pictures::add_methods(methods);
    }
}

impl LuaLight {
    fn entry<R>(&self, f: impl FnOnce(&SceneLight) -> R) -> Option<R> {
        let state: Ref<'_, State> = self.scene.try_borrow().ok()?;
        state.lights.get(self.index).map(f)
    }
}

impl UserData for LuaLight {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, l| Ok(l.entry(|e| e.name.clone())));
        fields.add_field_method_get("kind", |_, l| {
            Ok(l.entry(|e| match e.light.kind {
                LightKind::Directional { .. } | LightKind::Cascaded { .. } => "directional",
                LightKind::Spot { .. } => "spot",
                LightKind::Point { .. } => "point",
            }))
        });
        fields.add_field_method_get("intensity", |_, l| Ok(l.entry(|e| e.light.intensity)));
        fields.add_field_method_get("resolution", |_, l| Ok(l.entry(|e| e.light.resolution)));
        fields.add_field_method_get("kernel", |_, l| Ok(l.entry(|e| e.light.kernel.name())));
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

impl LuaEye {
    fn entry<R>(&self, f: impl FnOnce(&SceneEye) -> R) -> Option<R> {
        let state: Ref<'_, State> = self.scene.try_borrow().ok()?;
        state.eyes.get(self.index).map(f)
    }
}

impl UserData for LuaEye {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, e| Ok(e.entry(|e| e.name.clone())));
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
                if e.params.direction.is_some() {
                    e.params.fov
                } else {
                    360.0
                }
            }))
        });
        fields.add_field_method_get("range", |_, e| Ok(e.entry(|e| e.params.range)));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, e, ()| {
            Ok(e.entry(|e| format!("Eye({:?})", e.name))
                .unwrap_or_else(|| "Eye(?)".into()))
        });
    }
}
