//! Reading a case file: its numbers, samplers and textures, and the file itself (its shape, its
//! textures built, its cases kept as text).

use half::f16;
use serde_json::value::RawValue;

use penumbra_core::format::ComponentKind;
use penumbra_core::{
    AddressMode, ComparisonFunc, Dimension, Filter, Format, ParseEnumError, SamplerDesc,
    SamplerFlags, StaticBorderColor, Texture, TextureDesc, TextureView,
};

use super::error::{CaseError, FieldError};
use super::json::{self, Json, JsonError};
use super::{CaseFile, CaseFileError};

/// The text of a number value.
fn number_text<'j>(v: &'j Json<'_>) -> Option<&'j str> {
    v.number_text()
}

/// Parses one number the way case files write them: a JSON number (rounded once to f32), or one of
/// the strings `"NaN"`, `"Inf"`, `"-Inf"`, `"0x3f800000"` (raw f32 bits).
pub fn parse_f32(v: &Json<'_>, what: &str) -> Result<f32, CaseError> {
    f32_value(v).map_err(|p| CaseError::field(what, p))
}

/// [`parse_f32`] without the field's name.
fn f32_value(v: &Json<'_>) -> Result<f32, FieldError> {
    if let Some(t) = number_text(v) {
        return t
            .parse::<f32>()
            .map_err(|_| FieldError::NotANumber { text: t.into() });
    }
    match v {
        Json::String(s) => parse_special(s)
            .or_else(|| parse_hex(s).map(f32::from_bits))
            .ok_or_else(|| FieldError::NotANumberString { value: short(v) }),
        other => Err(FieldError::ExpectedNumber { got: short(other) }),
    }
}

/// A value as messages quote it: its JSON text, cut to 60 characters.
pub(super) fn short(v: &Json<'_>) -> String {
    let text = v.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        format!("{}...", text.chars().take(57).collect::<String>())
    }
}

fn parse_special(s: &str) -> Option<f32> {
    match s {
        "NaN" | "nan" => Some(f32::NAN),
        "Inf" | "+Inf" | "inf" | "Infinity" => Some(f32::INFINITY),
        "-Inf" | "-inf" | "-Infinity" => Some(f32::NEG_INFINITY),
        _ => None,
    }
}

fn parse_hex(s: &str) -> Option<u32> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u32::from_str_radix(h, 16).ok()
}

/// An integral number (written as an integer, or a float with no fraction).
fn parse_integer(v: &Json<'_>) -> Option<i128> {
    let t = number_text(v)?;
    t.parse::<i128>().ok().or_else(|| {
        let f = t.parse::<f64>().ok()?;
        (f.fract() == 0.0 && f.abs() < 1e30).then_some(f as i128)
    })
}

pub(super) fn parse_u32(v: &Json<'_>, what: &str) -> Result<u32, CaseError> {
    u32_value(v).map_err(|p| CaseError::field(what, p))
}

/// [`parse_u32`] without the field's name.
fn u32_value(v: &Json<'_>) -> Result<u32, FieldError> {
    if number_text(v).is_some() {
        return parse_integer(v)
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| FieldError::NotU32 { value: short(v) });
    }
    match v {
        Json::String(s) => parse_hex(s).ok_or_else(|| FieldError::NotInteger { value: short(v) }),
        other => Err(FieldError::ExpectedInteger { got: short(other) }),
    }
}

pub(super) fn parse_i32(v: &Json<'_>, what: &str) -> Result<i32, CaseError> {
    parse_integer(v)
        .and_then(|x| i32::try_from(x).ok())
        .ok_or_else(|| CaseError::field(what, FieldError::ExpectedInteger { got: short(v) }))
}

pub(super) fn f32_list(v: &Json<'_>, what: &str) -> Result<Vec<f32>, CaseError> {
    match v {
        Json::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| f32_value(x).map_err(|p| CaseError::field(format!("{what}[{i}]"), p)))
            .collect(),
        other => Ok(vec![parse_f32(other, what)?]),
    }
}

/// An enum field given as a D3D12 name (via `FromStr`) or number (via `from_raw`, whose error
/// names the field and the rule).
fn parse_enum<T: std::str::FromStr<Err = ParseEnumError>>(
    v: &Json<'_>,
    what: &'static str,
    from_raw: fn(u32, &'static str) -> Result<T, penumbra_core::DescError>,
) -> Result<T, CaseError> {
    if number_text(v).is_some() {
        return Ok(from_raw(parse_u32(v, what)?, what)?);
    }
    match v {
        Json::String(s) => s
            .parse::<T>()
            .map_err(|e| CaseError::field(what, FieldError::Name(e))),
        other => Err(CaseError::field(
            what,
            FieldError::ExpectedName { got: short(other) },
        )),
    }
}

/// Builds a D3D12_SAMPLER_DESC from a case's `sampler` object (defaults of the case format:
/// CLAMP, bias 0, MaxAnisotropy 1, NONE, border TRANSPARENT_BLACK, MinLOD 0, MaxLOD FLT_MAX).
pub fn parse_sampler(v: &Json<'_>) -> Result<SamplerDesc, CaseError> {
    let obj = v
        .as_object()
        .ok_or_else(|| CaseError::field("sampler", FieldError::ExpectedObject))?;
    let filter: Filter = parse_enum(
        v.get("Filter")
            .ok_or_else(|| CaseError::field("sampler", FieldError::FilterRequired))?,
        "Filter",
        Filter::from_raw_field,
    )?;
    let mut d = SamplerDesc {
        filter,
        ..SamplerDesc::default()
    };
    d.address_u = AddressMode::Clamp;
    d.address_v = AddressMode::Clamp;
    d.address_w = AddressMode::Clamp;
    d.comparison_func = ComparisonFunc::None;
    for (key, val) in obj {
        match &**key {
            "Filter" => {}
            "AddressU" => d.address_u = parse_enum(val, "AddressU", AddressMode::from_raw_field)?,
            "AddressV" => d.address_v = parse_enum(val, "AddressV", AddressMode::from_raw_field)?,
            "AddressW" => d.address_w = parse_enum(val, "AddressW", AddressMode::from_raw_field)?,
            "MipLODBias" => d.mip_lod_bias = parse_f32(val, key)?,
            "MaxAnisotropy" => d.max_anisotropy = parse_u32(val, key)?,
            "ComparisonFunc" => {
                d.comparison_func =
                    parse_enum(val, "ComparisonFunc", ComparisonFunc::from_raw_field)?
            }
            "MinLOD" => d.min_lod = parse_f32(val, key)?,
            "MaxLOD" => d.max_lod = parse_f32(val, key)?,
            "Flags" => {
                d.flags = match val {
                    _ if number_text(val).is_some() => SamplerFlags(parse_u32(val, key)?),
                    Json::String(s) => s
                        .parse::<SamplerFlags>()
                        .map_err(|e| CaseError::field("Flags", FieldError::Name(e)))?,
                    other => {
                        return Err(CaseError::field(
                            "Flags",
                            FieldError::ExpectedFlags { got: short(other) },
                        ));
                    }
                }
            }
            "BorderColor" => {
                d.border_color = match val {
                    Json::Array(a) if a.len() == 4 => {
                        let c = f32_list(val, key)?;
                        [c[0], c[1], c[2], c[3]]
                    }
                    Json::Array(a) => {
                        return Err(CaseError::field(
                            "BorderColor",
                            FieldError::BorderColorLength { got: a.len() },
                        ));
                    }
                    other => {
                        let s =
                            parse_enum(other, "BorderColor", StaticBorderColor::from_raw_field)?;
                        // R14 [CHOICE]: a _UINT static border on a float view reads as float 0/1.
                        s.rgba()
                    }
                }
            }
            other => {
                return Err(CaseError::field(
                    "sampler",
                    FieldError::UnknownSamplerField {
                        name: short(&Json::String(other.into())),
                    },
                ));
            }
        }
    }
    Ok(d)
}

fn get_u32(obj: &Json<'_>, key: &str, default: u32) -> Result<u32, CaseError> {
    obj.get(key).map_or(Ok(default), |v| parse_u32(v, key))
}

/// One raw component code of `format` from a case-file value (the caller names the value in
/// the error: the name is only formatted for an error).
fn texel_code(format: Format, v: &Json<'_>) -> Result<u32, FieldError> {
    match format.kind() {
        ComponentKind::Float32 => Ok(match v {
            Json::String(s) if parse_hex(s).is_some() => parse_hex(s).unwrap_or(0),
            _ => f32_value(v)?.to_bits(),
        }),
        ComponentKind::Float16 => match v {
            Json::String(s) if parse_hex(s).is_some() => {
                let raw = parse_hex(s).unwrap_or(0);
                u16::try_from(raw)
                    .map(u32::from)
                    .map_err(|_| FieldError::NotHalf { value: short(v) })
            }
            _ if number_text(v).is_some() => {
                let t = number_text(v).unwrap_or_default();
                let x = t
                    .parse::<f64>()
                    .map_err(|_| FieldError::NotANumber { text: t.into() })?;
                Ok(u32::from(f16::from_f64(x).to_bits()))
            }
            _ => Ok(u32::from(f16::from_f32(f32_value(v)?).to_bits())),
        },
        ComponentKind::Unorm(bits) => {
            let code = u32_value(v)?;
            let max = format.unorm_max().unwrap_or(u32::MAX);
            if code > max {
                return Err(FieldError::CodeTooLarge {
                    code,
                    bits,
                    format,
                    max,
                });
            }
            Ok(code)
        }
    }
}

/// The id a texture is named by (its index when it has none).
fn texture_id(index: usize, id: Option<&Json<'_>>) -> String {
    match id {
        Some(Json::String(s)) => s.to_string(),
        Some(Json::Number(n)) => n.to_string(),
        _ => index.to_string(),
    }
}

/// Reads one texture: its fields as a small tree, its `data` streamed subresource by
/// subresource, value by value, straight into texel bytes (memory is reserved fallibly, a
/// subresource at a time, once its values are known to be there).
fn parse_texture(
    index: usize,
    raw: &RawValue,
    source: &str,
) -> Result<(String, Texture), CaseFileError> {
    let text = raw.get().trim_start();
    if !text.starts_with('{') {
        return Err(CaseFileError::Texture {
            index,
            id: index.to_string(),
            reason: CaseError::TextureNotObject.to_string(),
        });
    }
    let entries = json::object_entries(raw, source)?;
    let mut fields = Vec::with_capacity(entries.len());
    let mut data_raw = None;
    for (k, v) in entries {
        if k == "data" {
            data_raw = Some(v);
        } else {
            fields.push((k, Json::from_raw(v, source)?));
        }
    }
    let obj = Json::Object(fields);
    let id = texture_id(index, obj.get("id"));
    let err = |reason: CaseError| CaseFileError::Texture {
        index,
        id: id.clone(),
        reason: reason.to_string(),
    };
    let dimension: Dimension = obj
        .get("dimension")
        .and_then(Json::as_str)
        .ok_or_else(|| err(CaseError::DimensionRequired))?
        .parse()
        .map_err(|e: penumbra_core::TextureError| err(e.into()))?;
    let format: Format = obj
        .get("format")
        .and_then(Json::as_str)
        .ok_or_else(|| err(CaseError::Required { field: "format" }))?
        .parse()
        .map_err(|e: penumbra_core::format::ParseFormatError| err(e.into()))?;
    let default_array = if dimension == Dimension::TextureCube {
        6
    } else {
        1
    };
    let desc = TextureDesc {
        dimension,
        format,
        width: get_u32(&obj, "width", 1).map_err(err)?,
        height: get_u32(&obj, "height", 1).map_err(err)?,
        depth: get_u32(&obj, "depth", 1).map_err(err)?,
        array_size: get_u32(&obj, "array_size", default_array).map_err(err)?,
        mip_levels: get_u32(&obj, "mip_levels", 1).map_err(err)?,
    };
    desc.validate().map_err(|e| err(e.into()))?;
    let data_raw = data_raw
        .filter(|d| d.get().trim_start().starts_with('['))
        .ok_or_else(|| err(CaseError::DataRequired))?;
    let subs = (desc.mip_levels * desc.array_size) as usize;
    let bpt = format.bytes_per_texel();
    let ch = format.channels();
    let mut bytes: Vec<u8> = Vec::new();
    let mut count = 0;
    let failed = json::for_each_item(data_raw, |i, sub| -> Result<(), CaseError> {
        count = i + 1;
        if i >= subs {
            return Ok(());
        }
        let mip = i as u32 % desc.mip_levels;
        let [w, h, d] = desc.level_size(mip);
        // In usize: a valid 2048×2048×1024 level has 2^32 texels.
        let texels = w as usize * h as usize * d as usize;
        if !sub.get().trim_start().starts_with('[') {
            return Err(CaseError::SubresourceNotArray { sub: i });
        }
        // The values are counted before anything is reserved: the description alone (up to
        // the texture guard) must not be allocated for a short file.
        let mut n = 0usize;
        json::for_each_item(sub, |_, _| -> Result<(), ()> {
            n += 1;
            Ok(())
        })
        .map_err(CaseError::json)?;
        if n != texels * ch {
            return Err(CaseError::SubresourceLength {
                sub: i,
                mip,
                slice: i as u32 / desc.mip_levels,
                values: n,
                size: [w, h, d],
                format,
                need: texels * ch,
            });
        }
        bytes
            .try_reserve(texels * bpt)
            .map_err(|_| CaseError::OutOfMemory {
                sub: i,
                bytes: texels * bpt,
            })?;
        let mut texel = [0u8; 16];
        let stopped = json::for_each_item(sub, |k, raw| -> Result<(), CaseError> {
            let value = Json::from_raw(raw, source).map_err(CaseError::json)?;
            let c = k % ch;
            // The value's name is only formatted for an error.
            let code = texel_code(format, &value)
                .map_err(|p| CaseError::field(format!("data[{i}][{k}]"), p))?;
            format.store_raw_component(&mut texel, c, code);
            if c + 1 == ch {
                bytes.extend_from_slice(&texel[..bpt]);
                texel = [0; 16];
            }
            Ok(())
        })
        .map_err(CaseError::json)?;
        stopped.map_or(Ok(()), Err)
    })
    .map_err(|e| err(CaseError::json(e)))?;
    if let Some(reason) = failed {
        return Err(err(reason));
    }
    if count != subs {
        return Err(err(CaseError::SubresourceCount {
            count,
            expected: subs,
        }));
    }
    let mut tex = Texture::new(desc, bytes).map_err(|e| err(e.into()))?;
    if let Some(view) = obj.get("view") {
        if view.as_object().is_none() {
            return Err(err(CaseError::field("view", FieldError::ExpectedObject)));
        }
        let opt = |k: &str| view.get(k).map(|v| parse_u32(v, k)).transpose();
        let tv = TextureView {
            most_detailed_mip: opt("most_detailed_mip").map_err(err)?.unwrap_or(0),
            mip_levels: opt("mip_levels").map_err(err)?,
            first_array_slice: opt("first_array_slice").map_err(err)?.unwrap_or(0),
            array_size: opt("array_size").map_err(err)?,
            resource_min_lod_clamp: view
                .get("resource_min_lod_clamp")
                .map(|v| parse_f32(v, "resource_min_lod_clamp"))
                .transpose()
                .map_err(err)?
                .unwrap_or(0.0),
        };
        tex = tex.with_view(tv).map_err(|e| err(e.into()))?;
    }
    Ok((id, tex))
}

/// The items of a top-level array field (`textures`, `cases`).
fn array_items<'a>(raw: &'a RawValue, what: &str) -> Result<Vec<&'a RawValue>, CaseFileError> {
    if !raw.get().trim_start().starts_with('[') {
        return Err(CaseFileError::Shape(format!("\"{what}\" must be an array")));
    }
    serde_json::from_str::<Vec<&RawValue>>(raw.get())
        .map_err(|e| CaseFileError::Json(JsonError::Content(e)))
}

/// The byte range of `inner`, a slice of `source`.
fn range_in(source: &str, inner: &str) -> std::ops::Range<usize> {
    let start = inner.as_ptr() as usize - source.as_ptr() as usize;
    start..start + inner.len()
}

impl CaseFile {
    /// Reads a case file: JSON syntax, shape and every texture (file-level errors).
    pub fn parse(text: &str) -> Result<CaseFile, CaseFileError> {
        Self::from_string(text.to_owned())
    }

    /// [`CaseFile::parse`] of text the file takes over (no copy of a large file).
    pub fn from_string(source: String) -> Result<CaseFile, CaseFileError> {
        let (textures, cases) = Self::read(&source)?;
        Ok(CaseFile {
            textures,
            source,
            cases,
        })
    }

    #[allow(clippy::type_complexity)]
    fn read(
        source: &str,
    ) -> Result<(Vec<(String, Texture)>, Vec<std::ops::Range<usize>>), CaseFileError> {
        let root: &RawValue =
            serde_json::from_str(source).map_err(|e| CaseFileError::Json(JsonError::Syntax(e)))?;
        if !root.get().trim_start().starts_with('{') {
            return Err(CaseFileError::Shape(
                "the top level must be an object with \"textures\" and \"cases\"".into(),
            ));
        }
        let entries = json::object_entries(root, source)?;
        let field = |name: &str| entries.iter().find(|(k, _)| k == name).map(|(_, v)| *v);

        let mut textures: Vec<(String, Texture)> = Vec::new();
        let mut ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        if let Some(raw) = field("textures") {
            for (i, t) in array_items(raw, "textures")?.into_iter().enumerate() {
                let (id, tex) = parse_texture(i, t, source)?;
                if let Some(&first) = ids.get(&id) {
                    return Err(CaseFileError::DuplicateTextureId {
                        id,
                        first,
                        second: i,
                    });
                }
                ids.insert(id.clone(), i);
                textures.push((id, tex));
            }
        }
        let cases = match field("cases") {
            Some(raw) => array_items(raw, "cases")?
                .into_iter()
                .map(|c| range_in(source, c.get()))
                .collect(),
            None => return Err(CaseFileError::Shape("\"cases\" must be an array".into())),
        };
        Ok((textures, cases))
    }
}
