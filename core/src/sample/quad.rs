//! Pixel quads: implicit-LOD sampling the way a pixel shader does it. A 2×2 quad of pixels
//! shares one pair of coarse derivatives (`ddx_coarse`, `ddy_coarse`: the differences of the
//! coordinate across the quad's top row and left column), and each pixel samples with its own
//! coordinate and those derivatives (D3D11.3 FS 16.8, 22.4.15; SPEC R46).
//!
//! ```
//! use penumbra_core::sample::quad::Quad;
//! use penumbra_core::{Filter, Format, Sampler, SamplerDesc, Texture, TextureDesc};
//! use penumbra_core::texture::MipFilter;
//! let desc = TextureDesc::new_2d(Format::R32Float, 8, 8).with_mip_levels(4);
//! let level0: Vec<f32> = (0..64).map(|i| (i % 8) as f32).collect();
//! let tex = Texture::from_level0_f32(desc, &level0, MipFilter::Average).unwrap();
//! let s = Sampler::new(SamplerDesc::new(Filter::MinMagMipLinear)).unwrap();
//! // Neighbouring pixels step two texels: LOD 1.
//! let quad = Quad::from_origin([0.25, 0.25], [2.0 / 8.0, 0.0], [0.0, 2.0 / 8.0]);
//! assert_eq!(s.calculate_lod_quad(Some(&tex), &quad).unwrap()[0], 1.0);
//! let colours = s.sample_quad(Some(&tex), &quad, 0.0, ()).unwrap();
//! assert_eq!(colours.len(), 4);
//! ```

use super::{Coord, LodMode, Offset, SampleArgs, SampleError, Sampler};
use crate::format::flush_denormal;
use crate::texture::Texture;

/// The coordinates of the four pixels of a 2×2 quad, in the order top-left, top-right,
/// bottom-left, bottom-right.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quad(pub [Coord; 4]);

impl Quad {
    /// A quad from the top-left pixel's coordinate and the per-pixel steps along x and y.
    #[must_use]
    pub fn from_origin(
        origin: impl Into<Coord>,
        step_x: impl Into<Coord>,
        step_y: impl Into<Coord>,
    ) -> Quad {
        let (o, dx, dy) = (origin.into().0, step_x.into().0, step_y.into().0);
        let at = |fx: f32, fy: f32| Coord(std::array::from_fn(|i| o[i] + fx * dx[i] + fy * dy[i]));
        Quad([at(0.0, 0.0), at(1.0, 0.0), at(0.0, 1.0), at(1.0, 1.0)])
    }

    /// The coarse derivatives of the quad: `ddx = top-right − top-left`, `ddy = bottom-left −
    /// top-left`, per coordinate axis (f32 differences, denormals flushed, §1.4).
    #[must_use]
    pub fn coarse_derivatives(&self) -> ([f32; 3], [f32; 3]) {
        let c = self.0.map(|c| c.flushed().0);
        let ddx = std::array::from_fn(|i| flush_denormal(c[1][i] - c[0][i]));
        let ddy = std::array::from_fn(|i| flush_denormal(c[2][i] - c[0][i]));
        (ddx, ddy)
    }
}

impl Sampler {
    /// HLSL `Sample` / `SampleBias` for the four pixels of a quad: LOD from the quad's coarse
    /// derivatives plus `bias` (R46–R48, R53). Returns RGBA per pixel in quad order.
    pub fn sample_quad(
        &self,
        tex: Option<&Texture>,
        quad: &Quad,
        bias: f32,
        offset: impl Into<Offset>,
    ) -> Result<[[f32; 4]; 4], SampleError> {
        let (ddx, ddy) = quad.coarse_derivatives();
        let offset = offset.into();
        let mut out = [[0.0; 4]; 4];
        for (o, &coord) in out.iter_mut().zip(&quad.0) {
            *o = self.sample(
                tex,
                &SampleArgs {
                    coord,
                    lod: LodMode::Grad { ddx, ddy, bias },
                    offset,
                    clamp: None,
                },
            )?;
        }
        Ok(out)
    }

    /// HLSL `SampleCmp` for the four pixels of a quad, each with its own reference (R80, R87).
    pub fn sample_cmp_quad(
        &self,
        tex: Option<&Texture>,
        quad: &Quad,
        references: [f32; 4],
        offset: impl Into<Offset>,
    ) -> Result<[f32; 4], SampleError> {
        let (ddx, ddy) = quad.coarse_derivatives();
        let offset = offset.into();
        let mut out = [0.0; 4];
        for ((o, &coord), r) in out.iter_mut().zip(&quad.0).zip(references) {
            *o = self.sample_cmp(
                tex,
                &SampleArgs {
                    coord,
                    lod: LodMode::Grad {
                        ddx,
                        ddy,
                        bias: 0.0,
                    },
                    offset,
                    clamp: None,
                },
                r,
            )?;
        }
        Ok(out)
    }

    /// HLSL `CalculateLevelOfDetail[Unclamped]` for a quad (R54): `[clamped, unclamped]`.
    pub fn calculate_lod_quad(
        &self,
        tex: Option<&Texture>,
        quad: &Quad,
    ) -> Result<[f32; 2], SampleError> {
        let (ddx, ddy) = quad.coarse_derivatives();
        self.calculate_lod(tex, quad.0[0], ddx, ddy)
    }
}
