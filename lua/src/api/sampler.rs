//! `penumbra.sampler(desc)` and `penumbra.staticSamplers(ron)`: sampler descriptions from a
//! table of D3D12 names or from RON, validated once by the engine (SPEC §2.1, R119).

use std::str::FromStr;

use mlua::{Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, Value};
use penumbra_core::{
    AddressMode, ComparisonFunc, DescError, Filter, ParseEnumError, Sampler, SamplerDesc,
    SamplerFlags, ShaderVisibility, StaticBorderColor, StaticSamplerDesc, StaticSamplerTable,
};

use super::names::{self, Members};
use super::{Call, ScriptType, export, method};
use crate::context::{Charge, ScriptContext};
use crate::error::describe;

/// The fields of a sampler desc table, as scripts spell them.
const SAMPLER_KEYS: [&str; 11] = [
    "filter",
    "addressU",
    "addressV",
    "addressW",
    "mipLODBias",
    "maxAnisotropy",
    "comparisonFunc",
    "borderColor",
    "minLOD",
    "maxLOD",
    "flags",
];

/// Fields only a static sampler has; RON naming one is read as a `StaticSamplerDesc`.
const STATIC_ONLY: [&str; 3] = ["ShaderRegister", "RegisterSpace", "ShaderVisibility"];

/// A validated D3D12 sampler (`penumbra.sampler`).
pub(crate) struct LuaSampler(
    pub Sampler,
    #[allow(dead_code, reason = "held for its drop")] Charge,
);

/// A root signature's static samplers (`penumbra.staticSamplers`).
pub(crate) struct LuaStaticSamplers(
    StaticSamplerTable,
    #[allow(dead_code, reason = "held for its drop")] Charge,
);

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "sampler", |call| {
        let desc = match call.arg(0) {
            Value::Table(t) => desc_from_table(call, t)?,
            Value::String(_) => desc_from_ron(call, &call.string(0, "desc")?)?,
            other => {
                return Err(call.expected(
                    "desc",
                    "a table of D3D12 names or a RON SamplerDesc string",
                    other,
                ));
            }
        };
        let sampler = Sampler::new(desc).map_err(|e| call.error(desc_error(&e)))?;
        Ok(LuaSampler(sampler, sampler_charge(call)?))
    })?;
    export(lua, module, "staticSamplers", |call| {
        let text = call.string(0, "ron")?;
        let table = StaticSamplerTable::from_ron(&text).map_err(|e| call.error(e))?;
        let bytes = crate::context::OBJECT_BYTES
            + (table.len() * std::mem::size_of::<penumbra_core::StaticSamplerDesc>() * 2) as u64;
        let charge = ScriptContext::of(call.lua)
            .textures
            .charge_for(call.lua, bytes, "a static sampler table")
            .map_err(|e| call.error(e))?;
        Ok(LuaStaticSamplers(table, charge))
    })?;
    Ok(())
}

/// A desc table's key as scripts spell it: the D3D12 field name with a lower-case first letter.
fn script_field(d3d12: &str) -> String {
    let mut chars = d3d12.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// A validation error in the script's words: `desc.mipLODBias = 20: must be ... (SPEC R9; ...)`.
fn desc_error(e: &DescError) -> String {
    format!(
        "desc.{} = {}: {} (SPEC {}; {})",
        script_field(e.field),
        e.value,
        e.reason,
        e.rule,
        e.cite
    )
}

/// A D3D12 enumeration value from its name (prefix optional) or raw number.
fn parse_enum<E>(call: &Call<'_>, field: &str, v: &Value) -> mlua::Result<E>
where
    E: FromStr<Err = ParseEnumError>,
{
    let text = match v {
        Value::String(_) => call.string_of(&format!("desc.{field}"), v)?,
        Value::Integer(i) => i.to_string(),
        Value::Number(n) if n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX) => {
            (*n as u64).to_string()
        }
        other => {
            return Err(call.expected(
                &format!("desc.{field}"),
                "a D3D12 name (a string) or its number",
                other,
            ));
        }
    };
    text.parse()
        .map_err(|e: ParseEnumError| call.error(format!("desc.{field}: {e}")))
}

/// `borderColor`: a `D3D12_STATIC_BORDER_COLOR` name or `{r, g, b, a}`.
fn border_color(call: &Call<'_>, v: &Value) -> mlua::Result<[f32; 4]> {
    match v {
        Value::Table(t) => {
            if t.raw_len() != 4 {
                return Err(call.error(format!(
                    "desc.borderColor: expected {{r, g, b, a}} (4 numbers), got a table of {}",
                    t.raw_len()
                )));
            }
            let mut rgba = [0.0; 4];
            for (i, c) in rgba.iter_mut().enumerate() {
                *c = call.number_of("desc.borderColor", &t.raw_get::<Value>(i + 1)?)? as f32;
            }
            Ok(rgba)
        }
        other => Ok(parse_enum::<StaticBorderColor>(call, "borderColor", other)?.rgba()),
    }
}

/// `flags`: `"UINT_BORDER_COLOR | NON_NORMALIZED_COORDINATES"`, a list of names, or a number.
fn flags(call: &Call<'_>, v: &Value) -> mlua::Result<SamplerFlags> {
    let parse = |text: &str| {
        text.parse::<SamplerFlags>()
            .map_err(|e| call.error(format!("desc.flags: {e}")))
    };
    match v {
        Value::String(_) => parse(&call.string_of("desc.flags", v)?),
        Value::Integer(_) | Value::Number(_) => Ok(SamplerFlags(call.index_of("desc.flags", v)?)),
        Value::Table(t) => {
            let mut all = SamplerFlags::NONE;
            for item in t.sequence_values::<Value>() {
                all |= parse(&call.string_of("desc.flags", &item?)?)?;
            }
            Ok(all)
        }
        other => Err(call.expected("desc.flags", "flag names or a number", other)),
    }
}

/// A heap sampler description from a table of camelCase fields with D3D12 values.
fn desc_from_table(call: &Call<'_>, t: &Table) -> mlua::Result<SamplerDesc> {
    let mut desc = SamplerDesc::default();
    let mut filter = None;
    for pair in t.pairs::<Value, Value>() {
        let (key, v) = pair?;
        let Value::String(_) = key else {
            return Err(call.error(format!(
                "desc: keys are field names ({}), got {} as a key",
                SAMPLER_KEYS.join(", "),
                describe(&key)
            )));
        };
        let key = call.string_of("desc key", &key)?;
        let number = |field: &str| -> mlua::Result<f32> {
            Ok(call.number_of(&format!("desc.{field}"), &v)? as f32)
        };
        match key.as_str() {
            "filter" => filter = Some(parse_enum::<Filter>(call, "filter", &v)?),
            "addressU" => desc.address_u = parse_enum::<AddressMode>(call, "addressU", &v)?,
            "addressV" => desc.address_v = parse_enum::<AddressMode>(call, "addressV", &v)?,
            "addressW" => desc.address_w = parse_enum::<AddressMode>(call, "addressW", &v)?,
            "mipLODBias" => desc.mip_lod_bias = number("mipLODBias")?,
            "maxAnisotropy" => desc.max_anisotropy = call.index_of("desc.maxAnisotropy", &v)?,
            "comparisonFunc" => {
                desc.comparison_func = parse_enum::<ComparisonFunc>(call, "comparisonFunc", &v)?;
            }
            "borderColor" => desc.border_color = border_color(call, &v)?,
            "minLOD" => desc.min_lod = number("minLOD")?,
            "maxLOD" => desc.max_lod = number("maxLOD")?,
            "flags" => desc.flags = flags(call, &v)?,
            other => {
                return Err(call.error(format!(
                    "desc.{other}: unknown field; a sampler desc has {}",
                    SAMPLER_KEYS.join(", ")
                )));
            }
        }
    }
    desc.filter = filter.ok_or_else(|| {
        call.error(
            "desc.filter is missing: every sampler needs a filter, e.g. \"MIN_MAG_MIP_LINEAR\"",
        )
    })?;
    Ok(desc)
}

/// A heap sampler description from RON: a `SamplerDesc`, or a `StaticSamplerDesc` (validated
/// as one, then turned into its heap equivalent) when it names a static-only field.
fn desc_from_ron(call: &Call<'_>, text: &str) -> mlua::Result<SamplerDesc> {
    if STATIC_ONLY.iter().any(|field| text.contains(field)) {
        let desc: StaticSamplerDesc =
            ron::from_str(text).map_err(|e| call.error(format!("RON StaticSamplerDesc {e}")))?;
        desc.validate().map_err(|e| call.error(desc_error(&e)))?;
        Ok(desc.to_sampler_desc())
    } else {
        ron::from_str(text).map_err(|e| call.error(format!("RON SamplerDesc {e}")))
    }
}

/// The description as the table `penumbra.sampler` accepts.
fn desc_table(lua: &Lua, d: &SamplerDesc) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("filter", d.filter.name())?;
    t.raw_set("addressU", d.address_u.name())?;
    t.raw_set("addressV", d.address_v.name())?;
    t.raw_set("addressW", d.address_w.name())?;
    t.raw_set("mipLODBias", d.mip_lod_bias)?;
    t.raw_set("maxAnisotropy", d.max_anisotropy)?;
    t.raw_set("comparisonFunc", d.comparison_func.name())?;
    t.raw_set("borderColor", lua.create_sequence_from(d.border_color)?)?;
    t.raw_set("minLOD", d.min_lod)?;
    t.raw_set("maxLOD", d.max_lod)?;
    t.raw_set("flags", d.flags.to_string())?;
    Ok(t)
}

impl ScriptType for LuaSampler {
    const MEMBERS: &'static Members = &names::SAMPLER_MEMBERS;
}

impl UserData for LuaSampler {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            let d = this.0.desc();
            let cmp = if d.filter.is_comparison() {
                format!(", {}", d.comparison_func)
            } else {
                String::new()
            };
            Ok(format!(
                "Sampler({}{cmp}, {} {} {})",
                d.filter, d.address_u, d.address_v, d.address_w
            ))
        });
        method(methods, "desc", |call, this: &Self| {
            desc_table(call.lua, this.0.desc())
        });
        super::sampling::add_methods(methods);
    }
}

/// A sampler's share of the memory budget.
fn sampler_charge(call: &Call<'_>) -> mlua::Result<Charge> {
    ScriptContext::of(call.lua)
        .textures
        .charge_for(call.lua, crate::context::OBJECT_BYTES, "a sampler")
        .map_err(|e| call.error(e))
}

/// The sampler of a static entry (already validated as part of its table).
fn static_sampler(call: &Call<'_>, desc: &StaticSamplerDesc) -> mlua::Result<LuaSampler> {
    let sampler = Sampler::new(desc.to_sampler_desc()).map_err(|e| call.error(desc_error(&e)))?;
    Ok(LuaSampler(sampler, sampler_charge(call)?))
}

impl ScriptType for LuaStaticSamplers {
    const MEMBERS: &'static Members = &names::STATIC_SAMPLERS_MEMBERS;
}

impl UserData for LuaStaticSamplers {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        Self::name_field(fields);
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        crate::api::names::strict(methods);
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!("StaticSamplers({} samplers)", this.0.len()))
        });
        methods.add_meta_method(MetaMethod::Len, |_, this, ()| Ok(this.0.len()));
        method(methods, "lookup", |call, this: &Self| {
            let space = call.index(0, "space")?;
            let register = call.index(1, "register")?;
            let stage = call.string(2, "stage")?;
            let stage = stage
                .parse::<ShaderVisibility>()
                .map_err(|e| call.error(format!("stage: {e}")))?;
            this.0
                .lookup(space, register, stage)
                .map(|desc| static_sampler(call, desc))
                .transpose()
        });
        method(methods, "get", |call, this: &Self| {
            let name = call.string(0, "name")?;
            this.0
                .get(&name)
                .map(|desc| static_sampler(call, desc))
                .transpose()
        });
        method(methods, "names", |call, this: &Self| {
            call.lua
                .create_sequence_from(this.0.iter().filter_map(|(name, _)| name))
        });
    }
}
