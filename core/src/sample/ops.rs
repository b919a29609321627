//! The sampling operations' entry points: `Sample*`, `SampleCmp*` and
//! `CalculateLevelOfDetail`, each a call of the general sample with its LOD mode.

use super::{Coord, LodMode, Offset, SampleArgs, SampleError, Sampler};
use crate::texture::Texture;

impl Sampler {
    /// The general non-comparison sample (sample, sample_l, sample_d, sample_b with a clamp).
    pub fn sample(
        &self,
        tex: Option<&Texture>,
        args: &SampleArgs,
    ) -> Result<[f32; 4], SampleError> {
        self.check_kind("sample", false)?;
        let Some(tex) = tex else { return Ok([0.0; 4]) }; // R107
        self.run(tex, args, None)
    }

    /// The general comparison sample (`sample_c` family, R77–R92); the result is the filtered
    /// fraction of passing taps in [0, 1].
    pub fn sample_cmp(
        &self,
        tex: Option<&Texture>,
        args: &SampleArgs,
        reference: f32,
    ) -> Result<f32, SampleError> {
        self.check_kind("sample_c", true)?;
        let Some(tex) = tex else { return Ok(0.0) }; // R88, R107
        self.check_compare_target("sample_c", tex)?;
        Ok(self.run(tex, args, Some(reference))?[0])
    }

    /// `SampleLevel` / `sample_l`: explicit LOD (R52).
    pub fn sample_level(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        lod: f32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.sample(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Level(lod),
                offset: offset.into(),
                clamp: None,
            },
        )
    }

    /// `SampleGrad` / `sample_d`: LOD from explicit derivatives (R46–R48).
    pub fn sample_grad(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        ddx: [f32; 3],
        ddy: [f32; 3],
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.sample(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Grad {
                    ddx,
                    ddy,
                    bias: 0.0,
                },
                offset: offset.into(),
                clamp: None,
            },
        )
    }

    /// `SampleBias` / `sample_b`: derivatives plus a shader bias (R53).
    pub fn sample_bias(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        ddx: [f32; 3],
        ddy: [f32; 3],
        bias: f32,
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        self.sample(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Grad { ddx, ddy, bias },
                offset: offset.into(),
                clamp: None,
            },
        )
    }

    /// `SampleCmp` with explicit derivatives (`sample_c` / SM 6.8 `SampleCmpGrad`; R80, R87).
    pub fn sample_cmp_grad(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        ddx: [f32; 3],
        ddy: [f32; 3],
        offset: impl Into<Offset>,
    ) -> Result<f32, SampleError> {
        self.sample_cmp(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Grad {
                    ddx,
                    ddy,
                    bias: 0.0,
                },
                offset: offset.into(),
                clamp: None,
            },
            reference,
        )
    }

    /// `SampleCmpLevelZero` / `sample_c_lz`: LOD 0, then bias and clamps as usual (R89–R90).
    pub fn sample_cmp_level_zero(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        offset: impl Into<Offset>,
    ) -> Result<f32, SampleError> {
        self.sample_cmp(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Zero,
                offset: offset.into(),
                clamp: None,
            },
            reference,
        )
    }

    /// `SampleCmpLevel` (SM 6.7): comparison at an explicit LOD (R91).
    pub fn sample_cmp_level(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        reference: f32,
        lod: f32,
        offset: impl Into<Offset>,
    ) -> Result<f32, SampleError> {
        self.sample_cmp(
            tex,
            &SampleArgs {
                coord: coord.into(),
                lod: LodMode::Level(lod),
                offset: offset.into(),
                clamp: None,
            },
            reference,
        )
    }

    /// `CalculateLevelOfDetail` and `...Unclamped` (R54): `[clamped, unclamped]` for derivatives
    /// `ddx`, `ddy`. The clamped value includes the sampler and resource clamps; the empty set and
    /// an unbound texture give 0.
    pub fn calculate_lod(
        &self,
        tex: Option<&Texture>,
        coord: impl Into<Coord>,
        ddx: [f32; 3],
        ddy: [f32; 3],
    ) -> Result<[f32; 2], SampleError> {
        let Some(tex) = tex else { return Ok([0.0; 2]) };
        let lod = self.compute_lod(
            tex,
            &coord.into(),
            &LodMode::Grad {
                ddx,
                ddy,
                bias: 0.0,
            },
            None,
        );
        let clamped = if lod.empty { 0.0 } else { lod.clamped };
        Ok([clamped, lod.unclamped])
    }
}
