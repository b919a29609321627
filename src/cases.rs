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

use half::f16;
use serde_json::{Map, Value, json};

use penumbra_core::format::ComponentKind;
use penumbra_core::{
    AddressMode, ComparisonFunc, Coord, Dimension, Filter, Format, LodMode, Offset, SampleArgs,
    Sampler, SamplerDesc, SamplerFlags, StaticBorderColor, Texture, TextureDesc, TextureView,
};

/// A file-level error: the file cannot be read as a case file at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaseFileError {
    /// Not valid JSON.
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
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
}

/// The textures of a case file, by id.
pub struct CaseFile {
    textures: Vec<(String, Texture)>,
    cases: Vec<Value>,
}

/// Marks a number literal that [`quote_numbers`] turned into a string.
const NUMBER_MARK: char = '\u{1}';

/// Rewrites every number literal of a JSON text (outside strings) as a marked string, so that
/// its exact text survives parsing: case files promise that a decimal is rounded to f32 once,
/// which parsing it to f64 first would not keep.
#[must_use]
pub fn quote_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '-' || c.is_ascii_digit() {
            out.push_str("\"\\u0001");
            out.push(c);
            while let Some(&n) = chars.peek() {
                if n.is_ascii_digit() || matches!(n, '.' | 'e' | 'E' | '+' | '-') {
                    out.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push('"');
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of a number: a marked string from [`quote_numbers`], or a plain JSON number.
fn number_text(v: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match v {
        Value::String(s) => s.strip_prefix(NUMBER_MARK).map(std::borrow::Cow::Borrowed),
        Value::Number(n) => Some(std::borrow::Cow::Owned(n.to_string())),
        _ => None,
    }
}

/// Turns marked number strings back into JSON numbers (for echoing ids).
fn restore_numbers(v: Value) -> Value {
    match v {
        Value::String(s) if s.starts_with(NUMBER_MARK) => {
            let t = &s[NUMBER_MARK.len_utf8()..];
            t.parse::<i64>()
                .map(Value::from)
                .or_else(|_| t.parse::<u64>().map(Value::from))
                .or_else(|_| t.parse::<f64>().map(Value::from))
                .unwrap_or(Value::String(t.to_string()))
        }
        Value::Array(a) => Value::Array(a.into_iter().map(restore_numbers).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (k, restore_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

/// Parses one number the way case files write them: a JSON number (rounded once to f32), or one of
/// the strings `"NaN"`, `"Inf"`, `"-Inf"`, `"0x3f800000"` (raw f32 bits).
pub fn parse_f32(v: &Value, what: &str) -> Result<f32, String> {
    if let Some(t) = number_text(v) {
        return t
            .parse::<f32>()
            .map_err(|_| format!("{what}: {t} is not a number"));
    }
    match v {
        Value::String(s) => parse_special(s)
            .or_else(|| parse_hex(s).map(f32::from_bits))
            .ok_or_else(|| format!("{what}: \"{s}\" is not a number (use a number, \"NaN\", \"Inf\", \"-Inf\" or \"0x\" and 8 hex digits of f32 bits)")),
        other => Err(format!("{what}: expected a number, got {other}")),
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
fn parse_integer(v: &Value) -> Option<i128> {
    let t = number_text(v)?;
    t.parse::<i128>().ok().or_else(|| {
        let f = t.parse::<f64>().ok()?;
        (f.fract() == 0.0 && f.abs() < 1e30).then_some(f as i128)
    })
}

fn parse_u32(v: &Value, what: &str) -> Result<u32, String> {
    if number_text(v).is_some() {
        return parse_integer(v)
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| {
                format!(
                    "{what}: {} is not an unsigned 32-bit integer",
                    restore_numbers(v.clone())
                )
            });
    }
    match v {
        Value::String(s) => {
            parse_hex(s).ok_or_else(|| format!("{what}: \"{s}\" is not an integer"))
        }
        other => Err(format!("{what}: expected an integer, got {other}")),
    }
}

fn parse_i32(v: &Value, what: &str) -> Result<i32, String> {
    parse_integer(v)
        .and_then(|x| i32::try_from(x).ok())
        .ok_or_else(|| {
            format!(
                "{what}: expected an integer, got {}",
                restore_numbers(v.clone())
            )
        })
}

fn f32_list(v: &Value, what: &str) -> Result<Vec<f32>, String> {
    match v {
        Value::Array(a) => a
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
    v: &Value,
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
        Value::String(s) => s.parse::<T>().map_err(|e| format!("{what}: {e}")),
        other => Err(format!(
            "{what}: expected a D3D12 name or number, got {other}"
        )),
    }
}

/// Builds a D3D12_SAMPLER_DESC from a case's `sampler` object (defaults of the case format:
/// CLAMP, bias 0, MaxAnisotropy 1, NONE, border TRANSPARENT_BLACK, MinLOD 0, MaxLOD FLT_MAX).
pub fn parse_sampler(v: &Value) -> Result<SamplerDesc, String> {
    let obj = v.as_object().ok_or("sampler: expected an object")?;
    let filter: Filter = parse_enum(
        obj.get("Filter").ok_or("sampler: Filter is required")?,
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
        match key.as_str() {
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
                    _ => val
                        .as_str()
                        .unwrap_or_default()
                        .parse::<SamplerFlags>()
                        .map_err(|e| format!("Flags: {e}"))?,
                }
            }
            "BorderColor" => {
                d.border_color = match val {
                    Value::Array(a) if a.len() == 4 => {
                        let c = f32_list(val, key)?;
                        [c[0], c[1], c[2], c[3]]
                    }
                    Value::Array(a) => {
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
                    "sampler: unknown field `{other}` (D3D12_SAMPLER_DESC names: Filter, AddressU, AddressV, AddressW, MipLODBias, MaxAnisotropy, ComparisonFunc, BorderColor, MinLOD, MaxLOD)"
                ));
            }
        }
    }
    Ok(d)
}

fn get_u32(obj: &Map<String, Value>, key: &str, default: u32) -> Result<u32, String> {
    obj.get(key).map_or(Ok(default), |v| parse_u32(v, key))
}

/// One raw component code of `format` from a case-file value.
fn texel_code(format: Format, v: &Value, what: &str) -> Result<u32, String> {
    match format.kind() {
        ComponentKind::Float32 => Ok(match v {
            Value::String(s) if parse_hex(s).is_some() => parse_hex(s).unwrap_or(0),
            _ => parse_f32(v, what)?.to_bits(),
        }),
        ComponentKind::Float16 => match v {
            Value::String(s) if parse_hex(s).is_some() => {
                let raw = parse_hex(s).unwrap_or(0);
                u16::try_from(raw)
                    .map(u32::from)
                    .map_err(|_| format!("{what}: {s} is not a 16-bit half pattern"))
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

fn parse_texture(index: usize, v: &Value) -> Result<(String, Texture), CaseFileError> {
    let id = match v.get("id").map(|id| restore_numbers(id.clone())) {
        Some(Value::String(s)) => s,
        Some(other @ Value::Number(_)) => other.to_string(),
        _ => index.to_string(),
    };
    let err = |reason: String| CaseFileError::Texture {
        index,
        id: id.clone(),
        reason,
    };
    let obj = v
        .as_object()
        .ok_or_else(|| err("expected an object".into()))?;
    let dimension: Dimension = obj
        .get("dimension")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            err("dimension is required (1D, 1DArray, 2D, 2DArray, 3D, Cube, CubeArray)".into())
        })?
        .parse()
        .map_err(|e: penumbra_core::TextureError| err(e.to_string()))?;
    let format: Format = obj
        .get("format")
        .and_then(Value::as_str)
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
        width: get_u32(obj, "width", 1).map_err(err)?,
        height: get_u32(obj, "height", 1).map_err(err)?,
        depth: get_u32(obj, "depth", 1).map_err(err)?,
        array_size: get_u32(obj, "array_size", default_array).map_err(err)?,
        mip_levels: get_u32(obj, "mip_levels", 1).map_err(err)?,
    };
    desc.validate().map_err(|e| err(e.to_string()))?;
    let data = obj
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| err("data is required: one array per subresource".into()))?;
    let subs = (desc.mip_levels * desc.array_size) as usize;
    if data.len() != subs {
        return Err(err(format!(
            "data has {} subresources, but mip_levels × array_size = {subs}",
            data.len()
        )));
    }
    let bpt = format.bytes_per_texel();
    let ch = format.channels();
    // Grown subresource by subresource, once each one's values are known to be there: the size
    // in the description alone (up to `MAX_BYTES`) must not be allocated for a short file.
    let mut bytes = Vec::new();
    for (i, sub) in data.iter().enumerate() {
        let mip = i as u32 % desc.mip_levels;
        let [w, h, d] = desc.level_size(mip);
        // In usize: a valid 2048×2048×1024 level has 2^32 texels.
        let texels = w as usize * h as usize * d as usize;
        let values = sub
            .as_array()
            .ok_or_else(|| err(format!("data[{i}] is not an array")))?;
        if values.len() != texels * ch {
            return Err(err(format!(
                "data[{i}] (mip {mip}, slice {}) has {} values, but {w}×{h}×{d} texels of {format} need {}",
                i as u32 / desc.mip_levels,
                values.len(),
                texels * ch
            )));
        }
        bytes.reserve(texels * bpt);
        for t in 0..texels {
            let mut texel = [0u8; 16];
            for c in 0..ch {
                let code = texel_code(
                    format,
                    &values[t * ch + c],
                    &format!("data[{i}][{}]", t * ch + c),
                )
                .map_err(err)?;
                format.store_raw_component(&mut texel, c, code);
            }
            bytes.extend_from_slice(&texel[..bpt]);
        }
    }
    let mut tex = Texture::new(desc, bytes).map_err(|e| err(e.to_string()))?;
    if let Some(view) = obj.get("view") {
        let vo = view
            .as_object()
            .ok_or_else(|| err("view: expected an object".into()))?;
        let opt = |k: &str| vo.get(k).map(|v| parse_u32(v, k)).transpose();
        let tv = TextureView {
            most_detailed_mip: opt("most_detailed_mip").map_err(err)?.unwrap_or(0),
            mip_levels: opt("mip_levels").map_err(err)?,
            first_array_slice: opt("first_array_slice").map_err(err)?.unwrap_or(0),
            array_size: opt("array_size").map_err(err)?,
            resource_min_lod_clamp: vo
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

impl CaseFile {
    /// Reads a case file: JSON syntax, shape and every texture (file-level errors).
    pub fn parse(text: &str) -> Result<CaseFile, CaseFileError> {
        let root: Value = serde_json::from_str(&quote_numbers(text))?;
        let obj = root.as_object().ok_or_else(|| {
            CaseFileError::Shape(
                "the top level must be an object with \"textures\" and \"cases\"".into(),
            )
        })?;
        let textures = match obj.get("textures") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, t)| parse_texture(i, t))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(CaseFileError::Shape("\"textures\" must be an array".into())),
        };
        let cases = match obj.get("cases") {
            Some(Value::Array(a)) => a.clone(),
            _ => return Err(CaseFileError::Shape("\"cases\" must be an array".into())),
        };
        Ok(CaseFile { textures, cases })
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

    fn texture(&self, v: Option<&Value>) -> Result<Option<&Texture>, String> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) if number_text(v).is_some() => parse_u32(v, "texture")
                .ok()
                .and_then(|i| self.textures.get(i as usize))
                .map(|(_, t)| Some(t))
                .ok_or_else(|| {
                    format!(
                        "texture: index {} is out of range",
                        restore_numbers(v.clone())
                    )
                }),
            Some(Value::String(s)) => self
                .textures
                .iter()
                .find(|(id, _)| id == s)
                .map(|(_, t)| Some(t))
                .ok_or_else(|| format!("texture: no texture has id \"{s}\"")),
            Some(other) => Err(format!(
                "texture: expected an id, an index or null, got {other}"
            )),
        }
    }

    /// Evaluates case `index`: the result values, or the reason it is invalid.
    pub fn evaluate(&self, index: usize) -> Result<Vec<f32>, String> {
        let case = self.cases.get(index).ok_or("no such case")?;
        let obj = case.as_object().ok_or("a case must be an object")?;
        let tex = self.texture(obj.get("texture"))?;
        let desc = parse_sampler(obj.get("sampler").ok_or("sampler is required")?)?;
        let sampler = Sampler::new(desc).map_err(|e| e.to_string())?;
        let op = obj
            .get("op")
            .and_then(Value::as_str)
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
                    "op: unknown operation `{other}` (sample_l, sample_grad, sample_b, sample_c_l, sample_c_lz, sample_c_grad, gather4, gather4_c, lod)"
                ));
            }
        })
    }

    /// Evaluates every case into the output document of the case format.
    #[must_use]
    pub fn run(&self) -> Value {
        penumbra_core::zone!("penumbra::cases::run");
        let mut ok = 0;
        let mut errors = 0;
        let results: Vec<Value> = (0..self.cases.len())
            .map(|i| {
                let id = restore_numbers(self.cases[i].get("id").cloned().unwrap_or(Value::Null));
                match self.evaluate(i) {
                    Ok(values) => {
                        ok += 1;
                        json!({
                            "index": i, "id": id, "status": "ok",
                            "result": values.iter().map(|&v| number_value(v)).collect::<Vec<_>>(),
                            "bits": values.iter().map(|v| format!("0x{:08x}", v.to_bits())).collect::<Vec<_>>(),
                        })
                    }
                    Err(reason) => {
                        errors += 1;
                        json!({"index": i, "id": id, "status": "error", "reason": reason})
                    }
                }
            })
            .collect();
        json!({
            "engine": {"name": "penumbra", "version": env!("CARGO_PKG_VERSION")},
            "summary": {"ok": ok, "error": errors},
            "results": results,
        })
    }
}

fn e<T>(r: Result<T, penumbra_core::SampleError>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// An f32 as the output format writes it: the exact decimal (shortest round trip of the widened
/// f64), or `"NaN"`, `"Inf"`, `"-Inf"`.
#[must_use]
pub fn number_value(v: f32) -> Value {
    if v.is_nan() {
        Value::from("NaN")
    } else if v.is_infinite() {
        Value::from(if v > 0.0 { "Inf" } else { "-Inf" })
    } else {
        Value::from(f64::from(v))
    }
}

/// Parses and runs a whole case file.
pub fn run_text(text: &str) -> Result<Value, CaseFileError> {
    Ok(CaseFile::parse(text)?.run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_rounded_to_f32_once() {
        // Just above the midpoint between 1 and 1 + 2^-23: one rounding goes up; rounding to f64
        // first would land exactly on the midpoint and then tie to even (1.0).
        let v: Value = serde_json::from_str(&quote_numbers(
            "[1.0000000596046447753906250001, 0.1, -2e-3]",
        ))
        .unwrap();
        assert_eq!(parse_f32(&v[0], "x").unwrap(), 1.0 + f32::EPSILON);
        assert_eq!(parse_f32(&v[1], "x").unwrap(), 0.1f32);
        assert_eq!(parse_f32(&v[2], "x").unwrap(), -2e-3f32);
    }

    #[test]
    fn numbers_inside_strings_are_left_alone_and_ids_echo_as_numbers() {
        let text = r#"{"a": "x 1.5 \" 2", "b": [3, -4.25e1], "c": {"d": 7}}"#;
        let v: Value = serde_json::from_str(&quote_numbers(text)).unwrap();
        assert_eq!(v["a"], "x 1.5 \" 2");
        assert_eq!(
            restore_numbers(v),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }
}
