//! Evaluating a case file's cases, one at a time: each case is read from its text, its texture
//! looked up, its sampler built and its operation run.

use serde_json::value::RawValue;

use penumbra_core::{Coord, LodMode, Offset, SampleArgs, Sampler, Texture};

use super::error::{CaseError, FieldError};
use super::json::Json;
use super::read::{f32_list, parse_f32, parse_i32, parse_sampler, parse_u32, short};
use super::write::Results;
use super::{CaseFile, Outcome};

impl CaseFile {
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
    fn case(&self, index: usize) -> Result<Json<'_>, CaseError> {
        let range = self
            .cases
            .get(index)
            .ok_or(CaseError::NoSuchCase { index })?;
        let raw: &RawValue =
            serde_json::from_str(&self.source[range.clone()]).map_err(|e| CaseError::Reparse {
                index,
                reason: e.to_string(),
            })?;
        Json::from_raw(raw, &self.source).map_err(CaseError::json)
    }

    fn texture(&self, v: Option<&Json<'_>>) -> Result<Option<&Texture>, CaseError> {
        match v {
            None | Some(Json::Null) => Ok(None),
            Some(v @ Json::Number(_)) => parse_u32(v, "texture")
                .ok()
                .and_then(|i| self.textures.get(i as usize))
                .map(|(_, t)| Some(t))
                .ok_or_else(|| {
                    CaseError::field("texture", FieldError::TextureIndex { index: short(v) })
                }),
            Some(Json::String(s)) => self
                .textures
                .iter()
                .find(|(id, _)| id == s)
                .map(|(_, t)| Some(t))
                .ok_or_else(|| {
                    CaseError::field(
                        "texture",
                        FieldError::NoTextureId {
                            id: short(&Json::String(s.clone())),
                        },
                    )
                }),
            Some(other) => Err(CaseError::field(
                "texture",
                FieldError::ExpectedTexture { got: short(other) },
            )),
        }
    }

    /// Evaluates case `index`: the result values, or why it is invalid.
    ///
    /// # Errors
    /// The [`CaseError`] that names the field and the rule.
    pub fn evaluate(&self, index: usize) -> Result<Vec<f32>, CaseError> {
        let case = self.case(index)?;
        Self::evaluate_case(self, &case)
    }

    fn evaluate_case(&self, case: &Json<'_>) -> Result<Vec<f32>, CaseError> {
        if case.as_object().is_none() {
            return Err(CaseError::NotAnObject);
        }
        let obj = case;
        let tex = self.texture(obj.get("texture"))?;
        let desc = parse_sampler(
            obj.get("sampler")
                .ok_or(CaseError::Required { field: "sampler" })?,
        )?;
        let sampler = Sampler::new(desc)?;
        let op = obj
            .get("op")
            .and_then(Json::as_str)
            .ok_or(CaseError::Required { field: "op" })?;
        let needs = |k: &str| CaseError::NeedsField {
            op: op.into(),
            field: k.into(),
        };
        let num = |k: &str| -> Result<f32, CaseError> {
            parse_f32(obj.get(k).ok_or_else(|| needs(k))?, k)
        };
        let coord_vals = f32_list(
            obj.get("coord")
                .ok_or(CaseError::Required { field: "coord" })?,
            "coord",
        )?;
        if coord_vals.is_empty() || coord_vals.len() > 4 {
            return Err(CaseError::field(
                "coord",
                FieldError::CoordLength {
                    got: coord_vals.len(),
                },
            ));
        }
        if let Some(t) = tex {
            let need = t.dimension().coord_len();
            if coord_vals.len() < need {
                return Err(CaseError::field(
                    "coord",
                    FieldError::CoordComponents {
                        dimension: t.dimension(),
                        need,
                        got: coord_vals.len(),
                    },
                ));
            }
        }
        let mut coord = Coord::default();
        coord.0[..coord_vals.len()].copy_from_slice(&coord_vals);
        let mut offset = Offset::default();
        if let Some(o) = obj.get("offset") {
            let list = o
                .as_array()
                .ok_or_else(|| CaseError::field("offset", FieldError::ExpectedIntegers))?;
            if list.len() > 3 {
                return Err(CaseError::field("offset", FieldError::TooManyIntegers));
            }
            for (i, v) in list.iter().enumerate() {
                offset.0[i] = parse_i32(v, "offset")?;
            }
        }
        let grads = || -> Result<([f32; 3], [f32; 3]), CaseError> {
            let get = |k: &str| -> Result<[f32; 3], CaseError> {
                let v = f32_list(obj.get(k).ok_or_else(|| needs(k))?, k)?;
                if v.len() > 3 {
                    return Err(CaseError::field(k, FieldError::TooManyNumbers));
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
            "sample_l" => sampler
                .sample(tex, &args(LodMode::Level(num("lod")?)))?
                .to_vec(),
            "sample_grad" | "sample_d" => {
                let (ddx, ddy) = grads()?;
                sampler
                    .sample(
                        tex,
                        &args(LodMode::Grad {
                            ddx,
                            ddy,
                            bias: 0.0,
                        }),
                    )?
                    .to_vec()
            }
            "sample_b" => {
                let (ddx, ddy) = grads()?;
                sampler
                    .sample(
                        tex,
                        &args(LodMode::Grad {
                            ddx,
                            ddy,
                            bias: num("bias")?,
                        }),
                    )?
                    .to_vec()
            }
            "sample_c_l" => {
                vec![sampler.sample_cmp(tex, &args(LodMode::Level(num("lod")?)), num("ref")?)?]
            }
            "sample_c_lz" => vec![sampler.sample_cmp(tex, &args(LodMode::Zero), num("ref")?)?],
            "sample_c_grad" | "sample_c_d" => {
                let (ddx, ddy) = grads()?;
                vec![sampler.sample_cmp(
                    tex,
                    &args(LodMode::Grad {
                        ddx,
                        ddy,
                        bias: 0.0,
                    }),
                    num("ref")?,
                )?]
            }
            "gather4" => {
                let component = obj
                    .get("component")
                    .map_or(Ok(0), |v| parse_u32(v, "component"))?;
                sampler.gather(tex, coord, component, offset)?.to_vec()
            }
            "gather4_c" => sampler
                .gather_cmp(tex, coord, num("ref")?, offset)?
                .to_vec(),
            "lod" => {
                let (ddx, ddy) = grads()?;
                sampler.calculate_lod(tex, coord, ddx, ddy)?.to_vec()
            }
            other => {
                return Err(CaseError::field(
                    "op",
                    FieldError::UnknownOp {
                        name: short(&Json::String(other.into())),
                    },
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
