//! Sampling case files: the JSON interchange format of `penumbra sample` (see
//! `docs/case-format.md`). A file holds textures and cases; every case is evaluated on its own,
//! so one invalid case never stops the others.
//!
//! ```
//! let input = r#"{
//!   "textures": [{"id": "depth", "dimension": "2D", "format": "R32_FLOAT", "width": 2, "height": 2,
//!                 "data": [[0.3, 0.6, 0.6, 0.9]]}],
//!   "cases": [{"id": "pcf", "texture": "depth", "op": "sample_c_lz", "coord": [0.5, 0.5], "ref": 0.5,
//!              "sampler": {"Filter": "COMPARISON_MIN_MAG_LINEAR_MIP_POINT", "ComparisonFunc": "LESS_EQUAL"}}]
//! }"#;
//! let output = penumbra::cases::run_text(input).unwrap();
//! assert_eq!(output["results"][0]["result"][0], 0.75);
//! ```

use std::io::{self, Write};

use half::f16;
use serde_json::value::RawValue;

use penumbra_core::format::ComponentKind;
use penumbra_core::{
    AddressMode, ComparisonFunc, Coord, Dimension, Filter, Format, LodMode, Offset, SampleArgs,
    Sampler, SamplerDesc, SamplerFlags, StaticBorderColor, Texture, TextureDesc, TextureView,
};

pub mod json;

pub use json::{Json, JsonError};

/// A file-level error: the file cannot be read as a case file at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaseFileError {
    /// Not valid JSON, or an object with a key twice.
    #[error("not valid JSON: {0}")]
    Json(#[from] JsonError),
    /// The top level is not an object with `textures` and `cases`.
    #[error("{0}")]
    Shape(String),
    /// A texture cannot be built from its description and data.
    #[error("texture {index} ({id}): {reason}")]
    Texture {
        /// Index in `textures`.
        index: usize,
        /// Its id.
        id: String,
        /// What is wrong.
        reason: String,
    },
    /// Two textures with one id.
    #[error("textures {first} and {second} both have the id {id:?}; ids must be unique")]
    DuplicateTextureId {
        /// The id.
        id: String,
        /// Index of the first texture with it.
        first: usize,
        /// Index of the second.
        second: usize,
    },
}

/// A case file: its textures, built when it is read, and its cases, kept as text and read one
/// at a time when they are evaluated (so a large file never becomes a tree in memory).
pub struct CaseFile {
    textures: Vec<(String, Texture)>,
    /// The file's text.
    source: String,
    /// Where each case's object lies in `source`.
    cases: Vec<std::ops::Range<usize>>,
}

/// What one case gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The result values.
    Ok(Vec<f32>),
    /// Why the case is invalid.
    Error(String),
}

/// The text of a number value.
fn number_text<'j>(v: &'j Json<'_>) -> Option<&'j str> {
    v.number_text()
}

/// Parses one number the way case files write them: a JSON number (rounded once to f32), or one of
/// the strings `"NaN"`, `"Inf"`, `"-Inf"`, `"0x3f800000"` (raw f32 bits).
pub fn parse_f32(v: &Json<'_>, what: &str) -> Result<f32, String> {
    if let Some(t) = number_text(v) {
        return t
            .parse::<f32>()
            .map_err(|_| format!("{what}: {t} is not a number"));
    }
    match v {
        Json::String(s) => parse_special(s)
            .or_else(|| parse_hex(s).map(f32::from_bits))
            .ok_or_else(|| format!("{what}: {} is not a number (use a number, \"NaN\", \"Inf\", \"-Inf\" or \"0x\" and 8 hex digits of f32 bits)", short(v))),
        other => Err(format!("{what}: expected a number, got {}", short(other))),
    }
}

/// A value as messages quote it: its JSON text, cut to 60 characters.
fn short(v: &Json<'_>) -> String {
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

fn parse_u32(v: &Json<'_>, what: &str) -> Result<u32, String> {
    if number_text(v).is_some() {
        return parse_integer(v)
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| format!("{what}: {} is not an unsigned 32-bit integer", short(v)));
    }
    match v {
        Json::String(s) => {
            parse_hex(s).ok_or_else(|| format!("{what}: {} is not an integer", short(v)))
        }
        other => Err(format!("{what}: expected an integer, got {}", short(other))),
    }
}

fn parse_i32(v: &Json<'_>, what: &str) -> Result<i32, String> {
    parse_integer(v)
        .and_then(|x| i32::try_from(x).ok())
        .ok_or_else(|| format!("{what}: expected an integer, got {}", short(v)))
}

fn f32_list(v: &Json<'_>, what: &str) -> Result<Vec<f32>, String> {
    match v {
        Json::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| parse_f32(x, &format!("{what}[{i}]")))
            .collect(),
        other => Ok(vec![parse_f32(other, what)?]),
    }
}

/// An enum field given as a D3D12 name (via `FromStr`) or number (via `from_raw`, whose error
/// names the field and the rule).
fn parse_enum<T: std::str::FromStr>(
    v: &Json<'_>,
    what: &'static str,
    from_raw: fn(u32, &'static str) -> Result<T, penumbra_core::DescError>,
) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    if number_text(v).is_some() {
        return from_raw(parse_u32(v, what)?, what).map_err(|e| e.to_string());
    }
    match v {
        Json::String(s) => s.parse::<T>().map_err(|e| format!("{what}: {e}")),
        other => Err(format!(
            "{what}: expected a D3D12 name or number, got {}",
            short(other)
        )),
    }
}

/// Builds a D3D12_SAMPLER_DESC from a case's `sampler` object (defaults of the case format:
/// CLAMP, bias 0, MaxAnisotropy 1, NONE, border TRANSPARENT_BLACK, MinLOD 0, MaxLOD FLT_MAX).
pub fn parse_sampler(v: &Json<'_>) -> Result<SamplerDesc, String> {
    let obj = v.as_object().ok_or("sampler: expected an object")?;
    let filter: Filter = parse_enum(
        v.get("Filter").ok_or("sampler: Filter is required")?,
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
                        .map_err(|e| format!("Flags: {e}"))?,
                    other => {
                        return Err(format!(
                            "Flags: expected a number or flag names, got {}",
                            short(other)
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
                        return Err(format!("BorderColor: expected 4 floats, got {}", a.len()));
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
                return Err(format!(
                    "sampler: unknown field {} (D3D12_SAMPLER_DESC names: Filter, AddressU, AddressV, AddressW, MipLODBias, MaxAnisotropy, ComparisonFunc, BorderColor, MinLOD, MaxLOD)",
                    short(&Json::String(other.into()))
                ));
            }
        }
    }
    Ok(d)
}

fn get_u32(obj: &Json<'_>, key: &str, default: u32) -> Result<u32, String> {
    obj.get(key).map_or(Ok(default), |v| parse_u32(v, key))
}

/// One raw component code of `format` from a case-file value.
fn texel_code(format: Format, v: &Json<'_>, what: &str) -> Result<u32, String> {
    match format.kind() {
        ComponentKind::Float32 => Ok(match v {
            Json::String(s) if parse_hex(s).is_some() => parse_hex(s).unwrap_or(0),
            _ => parse_f32(v, what)?.to_bits(),
        }),
        ComponentKind::Float16 => match v {
            Json::String(s) if parse_hex(s).is_some() => {
                let raw = parse_hex(s).unwrap_or(0);
                u16::try_from(raw)
                    .map(u32::from)
                    .map_err(|_| format!("{what}: {} is not a 16-bit half pattern", short(v)))
            }
            _ if number_text(v).is_some() => {
                let t = number_text(v).unwrap_or_default();
                let x = t
                    .parse::<f64>()
                    .map_err(|_| format!("{what}: {t} is not a number"))?;
                Ok(u32::from(f16::from_f64(x).to_bits()))
            }
            _ => Ok(u32::from(f16::from_f32(parse_f32(v, what)?).to_bits())),
        },
        ComponentKind::Unorm(bits) => {
            let code = parse_u32(v, what)?;
            let max = format.unorm_max().unwrap_or(u32::MAX);
            if code > max {
                return Err(format!(
                    "{what}: code {code} does not fit {bits}-bit {format} (max {max})"
                ));
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
            reason: "expected an object".into(),
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
    let err = |reason: String| CaseFileError::Texture {
        index,
        id: id.clone(),
        reason,
    };
    let dimension: Dimension = obj
        .get("dimension")
        .and_then(Json::as_str)
        .ok_or_else(|| {
            err("dimension is required (1D, 1DArray, 2D, 2DArray, 3D, Cube, CubeArray)".into())
        })?
        .parse()
        .map_err(|e: penumbra_core::TextureError| err(e.to_string()))?;
    let format: Format = obj
        .get("format")
        .and_then(Json::as_str)
        .ok_or_else(|| err("format is required".into()))?
        .parse()
        .map_err(|e: penumbra_core::format::ParseFormatError| err(e.to_string()))?;
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
    desc.validate().map_err(|e| err(e.to_string()))?;
    let data_raw = data_raw
        .filter(|d| d.get().trim_start().starts_with('['))
        .ok_or_else(|| err("data is required: one array per subresource".into()))?;
    let subs = (desc.mip_levels * desc.array_size) as usize;
    let bpt = format.bytes_per_texel();
    let ch = format.channels();
    let mut bytes: Vec<u8> = Vec::new();
    let mut count = 0;
    let failed = json::for_each_item(data_raw, |i, sub| -> Result<(), String> {
        count = i + 1;
        if i >= subs {
            return Ok(());
        }
        let mip = i as u32 % desc.mip_levels;
        let [w, h, d] = desc.level_size(mip);
        // In usize: a valid 2048×2048×1024 level has 2^32 texels.
        let texels = w as usize * h as usize * d as usize;
        if !sub.get().trim_start().starts_with('[') {
            return Err(format!("data[{i}] is not an array"));
        }
        // The values are counted before anything is reserved: the description alone (up to
        // the texture guard) must not be allocated for a short file.
        let mut n = 0usize;
        json::for_each_item(sub, |_, _| -> Result<(), ()> {
            n += 1;
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        if n != texels * ch {
            return Err(format!(
                "data[{i}] (mip {mip}, slice {}) has {n} values, but {w}×{h}×{d} texels of {format} need {}",
                i as u32 / desc.mip_levels,
                texels * ch
            ));
        }
        bytes
            .try_reserve(texels * bpt)
            .map_err(|_| format!("not enough memory for data[{i}] ({} bytes)", texels * bpt))?;
        let mut texel = [0u8; 16];
        let stopped = json::for_each_item(sub, |k, raw| -> Result<(), String> {
            let value = Json::from_raw(raw, source).map_err(|e| e.to_string())?;
            let c = k % ch;
            // The value's name is only formatted for an error (messages start with it).
            let code = texel_code(format, &value, "").map_err(|m| format!("data[{i}][{k}]{m}"))?;
            format.store_raw_component(&mut texel, c, code);
            if c + 1 == ch {
                bytes.extend_from_slice(&texel[..bpt]);
                texel = [0; 16];
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        stopped.map_or(Ok(()), Err)
    })
    .map_err(|e| err(e.to_string()))?;
    if let Some(reason) = failed {
        return Err(err(reason));
    }
    if count != subs {
        return Err(err(format!(
            "data has {count} subresources, but mip_levels × array_size = {subs}"
        )));
    }
    let mut tex = Texture::new(desc, bytes).map_err(|e| err(e.to_string()))?;
    if let Some(view) = obj.get("view") {
        if view.as_object().is_none() {
            return Err(err("view: expected an object".into()));
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
        tex = tex.with_view(tv).map_err(|e| err(e.to_string()))?;
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

    /// Number of cases.
    #[must_use]
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// True when the file has no cases.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// Case `index` as a tree (its numbers keep their text).
    fn case(&self, index: usize) -> Result<Json<'_>, String> {
        let range = self.cases.get(index).ok_or("no such case")?;
        let raw: &RawValue = serde_json::from_str(&self.source[range.clone()])
            .map_err(|e| format!("internal: case {index} does not parse again: {e}"))?;
        Json::from_raw(raw, &self.source).map_err(|e| e.to_string())
    }

    fn texture(&self, v: Option<&Json<'_>>) -> Result<Option<&Texture>, String> {
        match v {
            None | Some(Json::Null) => Ok(None),
            Some(v @ Json::Number(_)) => parse_u32(v, "texture")
                .ok()
                .and_then(|i| self.textures.get(i as usize))
                .map(|(_, t)| Some(t))
                .ok_or_else(|| format!("texture: index {} is out of range", short(v))),
            Some(Json::String(s)) => self
                .textures
                .iter()
                .find(|(id, _)| id == s)
                .map(|(_, t)| Some(t))
                .ok_or_else(|| {
                    format!(
                        "texture: no texture has id {}",
                        short(&Json::String(s.clone()))
                    )
                }),
            Some(other) => Err(format!(
                "texture: expected an id, an index or null, got {}",
                short(other)
            )),
        }
    }

    /// Evaluates case `index`: the result values, or the reason it is invalid.
    pub fn evaluate(&self, index: usize) -> Result<Vec<f32>, String> {
        let case = self.case(index)?;
        Self::evaluate_case(self, &case)
    }

    fn evaluate_case(&self, case: &Json<'_>) -> Result<Vec<f32>, String> {
        if case.as_object().is_none() {
            return Err("a case must be an object".into());
        }
        let obj = case;
        let tex = self.texture(obj.get("texture"))?;
        let desc = parse_sampler(obj.get("sampler").ok_or("sampler is required")?)?;
        let sampler = Sampler::new(desc).map_err(|e| e.to_string())?;
        let op = obj
            .get("op")
            .and_then(Json::as_str)
            .ok_or("op is required")?;
        let num = |k: &str| -> Result<f32, String> {
            parse_f32(obj.get(k).ok_or_else(|| format!("{op} needs `{k}`"))?, k)
        };
        let coord_vals = f32_list(obj.get("coord").ok_or("coord is required")?, "coord")?;
        if coord_vals.is_empty() || coord_vals.len() > 4 {
            return Err(format!(
                "coord: expected 1 to 4 numbers, got {}",
                coord_vals.len()
            ));
        }
        if let Some(t) = tex {
            let need = t.dimension().coord_len();
            if coord_vals.len() < need {
                return Err(format!(
                    "coord: a {} texture needs {need} components, got {}",
                    t.dimension(),
                    coord_vals.len()
                ));
            }
        }
        let mut coord = Coord::default();
        coord.0[..coord_vals.len()].copy_from_slice(&coord_vals);
        let mut offset = Offset::default();
        if let Some(o) = obj.get("offset") {
            let list = o
                .as_array()
                .ok_or("offset: expected an array of integers")?;
            if list.len() > 3 {
                return Err("offset: at most 3 integers".into());
            }
            for (i, v) in list.iter().enumerate() {
                offset.0[i] = parse_i32(v, "offset")?;
            }
        }
        let grads = || -> Result<([f32; 3], [f32; 3]), String> {
            let get = |k: &str| -> Result<[f32; 3], String> {
                let v = f32_list(obj.get(k).ok_or_else(|| format!("{op} needs `{k}`"))?, k)?;
                if v.len() > 3 {
                    return Err(format!("{k}: at most 3 numbers"));
                }
                let mut out = [0.0; 3];
                out[..v.len()].copy_from_slice(&v);
                Ok(out)
            };
            Ok((get("ddx")?, get("ddy")?))
        };
        let args = |lod: LodMode| SampleArgs {
            coord,
            lod,
            offset,
            clamp: None,
        };
        Ok(match op {
            "sample_l" => e(sampler.sample(tex, &args(LodMode::Level(num("lod")?))))?.to_vec(),
            "sample_grad" | "sample_d" => {
                let (ddx, ddy) = grads()?;
                e(sampler.sample(
                    tex,
                    &args(LodMode::Grad {
                        ddx,
                        ddy,
                        bias: 0.0,
                    }),
                ))?
                .to_vec()
            }
            "sample_b" => {
                let (ddx, ddy) = grads()?;
                e(sampler.sample(
                    tex,
                    &args(LodMode::Grad {
                        ddx,
                        ddy,
                        bias: num("bias")?,
                    }),
                ))?
                .to_vec()
            }
            "sample_c_l" => vec![e(sampler.sample_cmp(
                tex,
                &args(LodMode::Level(num("lod")?)),
                num("ref")?,
            ))?],
            "sample_c_lz" => vec![e(sampler.sample_cmp(
                tex,
                &args(LodMode::Zero),
                num("ref")?,
            ))?],
            "sample_c_grad" | "sample_c_d" => {
                let (ddx, ddy) = grads()?;
                vec![e(sampler.sample_cmp(
                    tex,
                    &args(LodMode::Grad {
                        ddx,
                        ddy,
                        bias: 0.0,
                    }),
                    num("ref")?,
                ))?]
            }
            "gather4" => {
                let component = obj
                    .get("component")
                    .map_or(Ok(0), |v| parse_u32(v, "component"))?;
                e(sampler.gather(tex, coord, component, offset))?.to_vec()
            }
            "gather4_c" => e(sampler.gather_cmp(tex, coord, num("ref")?, offset))?.to_vec(),
            "lod" => {
                let (ddx, ddy) = grads()?;
                e(sampler.calculate_lod(tex, coord, ddx, ddy))?.to_vec()
            }
            other => {
                return Err(format!(
                    "op: unknown operation {} (sample_l, sample_grad, sample_b, sample_c_l, sample_c_lz, sample_c_grad, gather4, gather4_c, lod)",
                    short(&Json::String(other.into()))
                ));
            }
        })
    }

    /// The id of case `index` as written (`null` when it has none or cannot be read).
    fn id_text(&self, case: &Json<'_>) -> String {
        case.get("id")
            .map_or_else(|| "null".into(), ToString::to_string)
    }

    /// Evaluates every case, in order, handing each one's index, id (its JSON text, exactly as
    /// written) and outcome to `each`.
    pub fn for_each_outcome<E>(
        &self,
        mut each: impl FnMut(usize, &str, Outcome) -> Result<(), E>,
    ) -> Result<(), E> {
        penumbra_core::zone!("penumbra::cases::run");
        for i in 0..self.cases.len() {
            let (id, outcome) = match self.case(i) {
                Ok(case) => (
                    self.id_text(&case),
                    match self.evaluate_case(&case) {
                        Ok(v) => Outcome::Ok(v),
                        Err(reason) => Outcome::Error(reason),
                    },
                ),
                Err(reason) => ("null".into(), Outcome::Error(reason)),
            };
            each(i, &id, outcome)?;
        }
        Ok(())
    }

    /// Evaluates every case into the output document of the case format.
    #[must_use]
    pub fn run(&self) -> serde_json::Value {
        let mut results = Vec::new();
        let (mut ok, mut errors) = (0, 0);
        let _ = self.for_each_outcome(|i, id, outcome| -> Result<(), ()> {
            // An id that serde_json cannot hold exactly (1e999) comes back as its text.
            let id: serde_json::Value = serde_json::from_str(id)
                .ok()
                .filter(|v: &serde_json::Value| !v.is_null() || id == "null")
                .unwrap_or_else(|| serde_json::Value::String(id.to_owned()));
            results.push(match outcome {
                Outcome::Ok(values) => {
                    ok += 1;
                    serde_json::json!({
                        "index": i, "id": id, "status": "ok",
                        "result": values.iter().map(|&v| number_value(v)).collect::<Vec<_>>(),
                        "bits": values.iter().map(|v| format!("0x{:08x}", v.to_bits())).collect::<Vec<_>>(),
                    })
                }
                Outcome::Error(reason) => {
                    errors += 1;
                    serde_json::json!({"index": i, "id": id, "status": "error", "reason": reason})
                }
            });
            Ok(())
        });
        serde_json::json!({
            "engine": {"name": "penumbra", "version": env!("CARGO_PKG_VERSION")},
            "summary": {"ok": ok, "error": errors},
            "results": results,
        })
    }

    /// Evaluates every case, in order, checking the [deadline](penumbra_core::deadline) in force
    /// between cases.
    ///
    /// # Errors
    /// [`Interrupted`](penumbra_core::deadline::Interrupted) when the deadline passed first.
    pub fn evaluate_all(&self) -> Result<Results, penumbra_core::deadline::Interrupted> {
        let mut outcomes = Vec::with_capacity(self.cases.len());
        self.for_each_outcome(|_, id, outcome| {
            penumbra_core::deadline::check()?;
            outcomes.push((id.to_owned(), outcome));
            Ok(())
        })?;
        Ok(Results { outcomes })
    }
}

/// Every case's outcome, in file order, with its id as written ([`CaseFile::evaluate_all`]).
pub struct Results {
    outcomes: Vec<(String, Outcome)>,
}

impl Results {
    /// The numbers of ok and error cases.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        let ok = self
            .outcomes
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Ok(_)))
            .count();
        (ok, self.outcomes.len() - ok)
    }

    /// Writes the output document of the case format, one line per result (ids echoed as
    /// written).
    ///
    /// # Errors
    /// A write to `out` failed.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let (ok, errors) = self.counts();
        writeln!(
            out,
            "{{\n  \"engine\": {{\"name\": \"penumbra\", \"version\": \"{}\"}},\n  \"summary\": {{\"ok\": {ok}, \"error\": {errors}}},\n  \"results\": [",
            env!("CARGO_PKG_VERSION")
        )?;
        let n = self.outcomes.len();
        for (i, (id, outcome)) in self.outcomes.iter().enumerate() {
            write!(out, "    {{\"index\": {i}, \"id\": {id}, ")?;
            match outcome {
                Outcome::Ok(values) => {
                    let result: Vec<String> = values
                        .iter()
                        .map(|&v| number_value(v).to_string())
                        .collect();
                    let bits: Vec<String> = values
                        .iter()
                        .map(|v| format!("\"0x{:08x}\"", v.to_bits()))
                        .collect();
                    write!(
                        out,
                        "\"status\": \"ok\", \"result\": [{}], \"bits\": [{}]}}",
                        result.join(", "),
                        bits.join(", ")
                    )?;
                }
                Outcome::Error(reason) => {
                    let reason = serde_json::to_string(reason).map_err(io::Error::other)?;
                    write!(out, "\"status\": \"error\", \"reason\": {reason}}}")?;
                }
            }
            writeln!(out, "{}", if i + 1 < n { "," } else { "" })?;
        }
        writeln!(out, "  ]\n}}")
    }
}

fn e<T>(r: Result<T, penumbra_core::SampleError>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// An f32 as the output format writes it: the exact decimal (shortest round trip of the widened
/// f64), or `"NaN"`, `"Inf"`, `"-Inf"`.
#[must_use]
pub fn number_value(v: f32) -> serde_json::Value {
    if v.is_nan() {
        serde_json::Value::from("NaN")
    } else if v.is_infinite() {
        serde_json::Value::from(if v > 0.0 { "Inf" } else { "-Inf" })
    } else {
        serde_json::Value::from(f64::from(v))
    }
}

/// Parses and runs a whole case file.
pub fn run_text(text: &str) -> Result<serde_json::Value, CaseFileError> {
    Ok(CaseFile::parse(text)?.run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_rounded_to_f32_once() {
        // Just above the midpoint between 1 and 1 + 2^-23: one rounding goes up; rounding to f64
        // first would land exactly on the midpoint and then tie to even (1.0).
        let v = Json::parse("[1.0000000596046447753906250001, 0.1, -2e-3]").unwrap();
        let v = v.as_array().unwrap();
        assert_eq!(parse_f32(&v[0], "x").unwrap(), 1.0 + f32::EPSILON);
        assert_eq!(parse_f32(&v[1], "x").unwrap(), 0.1f32);
        assert_eq!(parse_f32(&v[2], "x").unwrap(), -2e-3f32);
    }

    #[test]
    fn ids_echo_exactly_and_duplicate_texture_ids_are_refused() {
        let text =
            r#"{"textures": [], "cases": [{"id": 1e999}, {"id": "a\"b"}, {"id": [1, 2.50]}, {}]}"#;
        let file = CaseFile::parse(text).unwrap();
        let mut out = Vec::new();
        file.evaluate_all().unwrap().write(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains(r#""id": 1e999,"#), "{out}");
        assert!(out.contains(r#""id": "a\"b","#), "{out}");
        assert!(out.contains(r#""id": [1, 2.50],"#), "{out}");
        assert!(out.contains(r#""id": null,"#), "{out}");
        let parsed: serde_json::Value =
            serde_json::from_str(&out.replace("1e999", "\"1e999\"")).unwrap();
        assert_eq!(parsed["summary"]["error"], 4);

        let dup = r#"{"textures": [
            {"id": "d", "dimension": "2D", "format": "R8_UNORM", "data": [[0]]},
            {"id": "d", "dimension": "2D", "format": "R8_UNORM", "data": [[1]]}], "cases": []}"#;
        let err = CaseFile::parse(dup).err().unwrap().to_string();
        assert_eq!(
            err,
            "textures 0 and 1 both have the id \"d\"; ids must be unique"
        );
    }
}
