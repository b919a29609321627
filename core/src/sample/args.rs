//! The arguments of a sample: the coordinate, the immediate offset, and everything else a
//! non-gather sample takes besides the texture.

use super::LodMode;
use crate::format::flush_denormal;

/// A sample coordinate: up to four components, used per dimension as SPEC §1.2 / the case format
/// lay them out (`[u]`, `[u, slice]`, `[u, v]`, `[u, v, slice]`, `[u, v, w]`, `[x, y, z]`,
/// `[x, y, z, cube]`). Unused components are ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Coord(pub [f32; 4]);

macro_rules! coord_from {
    ($($n:literal),*) => {$(
        impl From<[f32; $n]> for Coord {
            #[inline]
            fn from(c: [f32; $n]) -> Coord {
                let mut out = [0.0; 4];
                out[..$n].copy_from_slice(&c);
                Coord(out)
            }
        }
    )*};
}
coord_from!(1, 2, 3, 4);

impl Coord {
    /// §1.4: f32 denormal inputs of arithmetic flush to zero of the same sign (R6).
    #[must_use]
    #[inline]
    pub fn flushed(self) -> Coord {
        Coord(self.0.map(flush_denormal))
    }
}

impl From<f32> for Coord {
    #[inline]
    fn from(u: f32) -> Coord {
        Coord([u, 0.0, 0.0, 0.0])
    }
}

impl From<glam::Vec2> for Coord {
    #[inline]
    fn from(v: glam::Vec2) -> Coord {
        Coord([v.x, v.y, 0.0, 0.0])
    }
}

impl From<glam::Vec3> for Coord {
    #[inline]
    fn from(v: glam::Vec3) -> Coord {
        Coord([v.x, v.y, v.z, 0.0])
    }
}

impl From<glam::Vec4> for Coord {
    #[inline]
    fn from(v: glam::Vec4) -> Coord {
        Coord(v.to_array())
    }
}

/// An immediate texel offset (HLSL `Offset`, `aoffimmi`; R39–R41): `[u]`, `[u, v]` or `[u, v, w]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offset(pub [i32; 3]);

macro_rules! offset_from {
    ($($n:literal),*) => {$(
        impl From<[i32; $n]> for Offset {
            #[inline]
            fn from(c: [i32; $n]) -> Offset {
                let mut out = [0; 3];
                out[..$n].copy_from_slice(&c);
                Offset(out)
            }
        }
    )*};
}
offset_from!(1, 2, 3);

impl From<()> for Offset {
    #[inline]
    fn from((): ()) -> Offset {
        Offset([0; 3])
    }
}

/// Everything a non-gather sample takes besides the texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleArgs {
    /// The coordinate.
    pub coord: Coord,
    /// Where the LOD comes from.
    pub lod: LodMode,
    /// Immediate texel offset.
    pub offset: Offset,
    /// Per-sample LOD clamp (HLSL `Clamp`, R58), if any.
    pub clamp: Option<f32>,
}

impl SampleArgs {
    /// The arguments with every f32 denormal flushed to a signed zero (§1.4, R6): coordinates,
    /// explicit LOD, derivatives, bias and clamp are all inputs of f32 arithmetic.
    #[must_use]
    #[inline]
    pub fn flushed(&self) -> SampleArgs {
        let lod = match self.lod {
            LodMode::Zero => LodMode::Zero,
            LodMode::Level(l) => LodMode::Level(flush_denormal(l)),
            LodMode::Grad { ddx, ddy, bias } => LodMode::Grad {
                ddx: ddx.map(flush_denormal),
                ddy: ddy.map(flush_denormal),
                bias: flush_denormal(bias),
            },
        };
        SampleArgs {
            coord: self.coord.flushed(),
            lod,
            offset: self.offset,
            clamp: self.clamp.map(flush_denormal),
        }
    }
}
