//! Light, eye and transform descriptions read from Lua tables, and the probe walk of
//! `probePath`: every field checked, with a message that names it.

use std::fmt::Display;

use glam::{EulerRot, Mat4, Quat, Vec3};
use mlua::Value;
use penumbra_core::shadow::{Aabb, Light, LightKind, PcfKernel};

use super::EyeParams;
use crate::api::{Call, Fields, FromArg};
use crate::context::ScriptContext;

/// The largest shadow-map edge a script may ask for.
const MAX_LIGHT_RESOLUTION: u32 = 8192;
/// The largest eye depth-map edge a script may ask for.
const MAX_EYE_RESOLUTION: u32 = 4096;
/// The most probes `probePath` places.
const MAX_PROBES: f64 = 1_000_000.0;

pub(super) const LIGHT_KEYS: [&str; 11] = [
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
pub(super) const EYE_KEYS: [&str; 6] = [
    "name",
    "position",
    "direction",
    "fov",
    "range",
    "resolution",
];
/// What `canSee` and `saveView` take to describe an eye given as a position.
pub(crate) const EYE_PARAM_KEYS: [&str; 4] = ["direction", "fov", "range", "resolution"];
const TRANSFORM_KEYS: [&str; 3] = ["position", "rotation", "scale"];

/// Reads `direction`, `fov`, `range` and `resolution` for an eye at `position`.
pub(super) fn eye_params(
    call: &Call<'_>,
    f: &Fields<'_, '_>,
    position: Vec3,
) -> mlua::Result<EyeParams> {
    let direction = f.vec3("direction")?;
    if let Some(d) = direction
        && d.length_squared() == 0.0
    {
        return Err(call.error(format!("{}: the direction is zero", f.name("direction"))));
    }
    let fov = f.number("fov")?;
    if let Some(fov) = fov {
        radians_hint(call, f, "fov", fov);
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

/// An object's placement `{position = v, rotation = {x, y, z} degrees, scale = s | v}` (nil:
/// where it was modelled): scale, then rotate (roll about z, pitch about x, yaw about y), then
/// move.
pub(super) struct Transform(pub Mat4);

impl FromArg for Transform {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        let f = Fields::check(call, what, call.read(what, v)?, &TRANSFORM_KEYS)?;
        let position = f.vec3("position")?.unwrap_or(Vec3::ZERO);
        let rotation = f.vec3("rotation")?.unwrap_or(Vec3::ZERO);
        let scale = match f.get("scale")? {
            Value::Nil => Vec3::ONE,
            v @ (Value::Integer(_) | Value::Number(_)) => {
                Vec3::splat(call.finite_of(&f.name("scale"), &v)? as f32)
            }
            v => call.vec3_of(&f.name("scale"), &v)?,
        };
        let rotation = Quat::from_euler(
            EulerRot::YXZ,
            rotation.y.to_radians(),
            rotation.x.to_radians(),
            rotation.z.to_radians(),
        );
        Ok(Transform(Mat4::from_scale_rotation_translation(
            scale, rotation, position,
        )))
    }
}

/// A new light's or eye's name: the one given (not empty), or `default`; never one the scene
/// already has (`taken`). `noun` names the kind in messages (`a light`).
pub(super) fn new_name(
    call: &Call<'_>,
    given: Option<String>,
    default: String,
    taken: impl FnOnce(&str) -> bool,
    noun: &str,
) -> mlua::Result<String> {
    let name = match given {
        Some(name) if name.is_empty() => return Err(call.error("desc.name is empty")),
        Some(name) => name,
        None => default,
    };
    if taken(&name) {
        return Err(call.error(format!(
            "desc.name: the scene already has {noun} named {name:?}"
        )));
    }
    Ok(name)
}

/// A light's description (`scene:addLight(desc)`): its kind, the name it asks for and the
/// engine light.
pub(super) struct LightDesc {
    pub kind: String,
    pub name: Option<String>,
    pub light: Light,
}

impl FromArg for LightDesc {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        read_light(call, Fields::of(call, what, v, &LIGHT_KEYS)?)
    }
}

/// An eye's description (`scene:addEye(desc)`): the name it asks for and how it looks.
pub(super) struct EyeDesc {
    pub name: Option<String>,
    pub params: EyeParams,
}

impl FromArg for EyeDesc {
    fn from_arg(call: &Call<'_>, what: &(impl Display + ?Sized), v: &Value) -> mlua::Result<Self> {
        let f = Fields::of(call, what, v, &EYE_KEYS)?;
        let position = f
            .vec3("position")?
            .ok_or_else(|| call.error(format!("{} is missing", f.name("position"))))?;
        let params = eye_params(call, &f, position)?;
        Ok(EyeDesc {
            name: f.string("name")?,
            params,
        })
    }
}

/// The description of a light in `f`.
fn read_light(call: &Call<'_>, f: Fields<'_, '_>) -> mlua::Result<LightDesc> {
    let kind = f.string("kind")?.ok_or_else(|| {
        call.error(format!(
            "{} is missing: \"directional\", \"spot\" or \"point\"",
            f.name("kind")
        ))
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
            let d = direction(&f)?;
            if d.y > 0.0 {
                ScriptContext::of(call.lua).warn(
                    call.lua,
                    "upward sun",
                    &format!(
                        "{}: {{{}, {}, {}}} points up; a directional light's direction is the \
                         way its light travels (from the sun down to the ground, e.g. {{0, -1, \
                         0}} at noon), so with this one the ground is never lit",
                        f.name("direction"),
                        d.x,
                        d.y,
                        d.z
                    ),
                );
            }
            let mut light = Light::directional(d, intensity);
            if let Some(b) = f.read("bounds", |c, what, v| {
                let b = Fields::of(c, what, v, &["min", "max"])?;
                let corner = |key: &str| {
                    b.vec3(key)?
                        .ok_or_else(|| c.error(format!("{} is missing", b.name(key))))
                };
                let (min, max) = (corner("min")?, corner("max")?);
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
            radians_hint(call, &f, "angle", angle);
            let inner = f.number("innerAngle")?;
            if let Some(inner) = inner {
                radians_hint(call, &f, "innerAngle", inner);
            }
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
                "{}: {other:?} is not one of \"directional\", \"spot\", \"point\"",
                f.name("kind")
            )));
        }
    };
    if let Some(resolution) = f.index("resolution")? {
        if !(1..=MAX_LIGHT_RESOLUTION).contains(&resolution) {
            return Err(call.error(format!(
                "{} = {resolution}: expected 1 to {MAX_LIGHT_RESOLUTION} texels",
                f.name("resolution")
            )));
        }
        light.resolution = resolution;
    }
    if let Some(kernel) = f.string("kernel")? {
        light.kernel = kernel.parse::<PcfKernel>().map_err(|_| {
            call.error(format!(
                "{}: {kernel:?} is not one of \"2x2\", \"3x3\", \"5x5\", \"castano13\"",
                f.name("kernel")
            ))
        })?;
    }
    Ok(LightDesc {
        name: f.string("name")?,
        kind,
        light,
    })
}

/// The rows of a probe walk: points every `spacing` along the polyline, and its last point.
pub(super) fn probe_points(
    call: &Call<'_>,
    path: &[Vec3],
    spacing: f64,
) -> mlua::Result<Vec<(Vec3, f32)>> {
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

/// Warns when an angle in degrees looks like radians (`angle = math.rad(60)`, a 1° cone):
/// a value at most π that is not a whole number of degrees.
fn radians_hint(call: &Call<'_>, f: &Fields<'_, '_>, key: &str, degrees: f64) {
    if degrees > 0.0 && degrees <= std::f64::consts::PI && degrees.fract() != 0.0 {
        ScriptContext::of(call.lua).warn(
            call.lua,
            "radians",
            &format!(
                "{} = {degrees} looks like radians ({:.0}°); angles are in degrees, so this is a \
                 {degrees}° cone (write {:.0}, not math.rad({:.0}))",
                f.name(key),
                degrees.to_degrees(),
                degrees.to_degrees(),
                degrees.to_degrees()
            ),
        );
    }
}
