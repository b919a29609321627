//! The description of a texture resource: its [`Dimension`], format, size, array size and mip
//! count, checked against D3D12's limits.

use std::fmt;
use std::str::FromStr;

use super::{TextureError, limits};
use crate::format::Format;

/// The dimension of a texture (and of the view that samples it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dimension {
    /// `Texture1D`: coordinate `[u]`.
    Texture1D,
    /// `Texture1DArray`: coordinate `[u, slice]`.
    Texture1DArray,
    /// `Texture2D`: coordinate `[u, v]`.
    Texture2D,
    /// `Texture2DArray`: coordinate `[u, v, slice]`.
    Texture2DArray,
    /// `Texture3D`: coordinate `[u, v, w]`.
    Texture3D,
    /// `TextureCube`: coordinate `[x, y, z]` (a direction).
    TextureCube,
    /// `TextureCubeArray`: coordinate `[x, y, z, cube]`.
    TextureCubeArray,
}

impl Dimension {
    /// Every dimension.
    pub const ALL: [Dimension; 7] = [
        Dimension::Texture1D,
        Dimension::Texture1DArray,
        Dimension::Texture2D,
        Dimension::Texture2DArray,
        Dimension::Texture3D,
        Dimension::TextureCube,
        Dimension::TextureCubeArray,
    ];

    /// The short name used by case files: `1D`, `1DArray`, `2D`, `2DArray`, `3D`, `Cube`, `CubeArray`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Dimension::Texture1D => "1D",
            Dimension::Texture1DArray => "1DArray",
            Dimension::Texture2D => "2D",
            Dimension::Texture2DArray => "2DArray",
            Dimension::Texture3D => "3D",
            Dimension::TextureCube => "Cube",
            Dimension::TextureCubeArray => "CubeArray",
        }
    }

    /// Number of filtered axes (1, 2 or 3; cubes filter 2D faces).
    #[must_use]
    #[inline]
    pub const fn axes(self) -> usize {
        match self {
            Dimension::Texture1D | Dimension::Texture1DArray => 1,
            Dimension::Texture3D => 3,
            _ => 2,
        }
    }

    /// Number of derivative / offset components the coordinate has (3 for cubes: a direction).
    #[must_use]
    #[inline]
    pub const fn gradient_axes(self) -> usize {
        match self {
            Dimension::TextureCube | Dimension::TextureCubeArray => 3,
            other => other.axes(),
        }
    }

    /// True for the array dimensions (including cube arrays).
    #[must_use]
    #[inline]
    pub const fn is_array(self) -> bool {
        matches!(
            self,
            Dimension::Texture1DArray | Dimension::Texture2DArray | Dimension::TextureCubeArray
        )
    }

    /// True for cubes and cube arrays.
    #[must_use]
    #[inline]
    pub const fn is_cube(self) -> bool {
        matches!(self, Dimension::TextureCube | Dimension::TextureCubeArray)
    }

    /// Index of the array coordinate in a sample coordinate, if any (R43).
    #[must_use]
    #[inline]
    pub const fn array_coord(self) -> Option<usize> {
        match self {
            Dimension::Texture1DArray => Some(1),
            Dimension::Texture2DArray => Some(2),
            Dimension::TextureCubeArray => Some(3),
            _ => None,
        }
    }

    /// Number of coordinate components a sample takes.
    #[must_use]
    pub const fn coord_len(self) -> usize {
        match self {
            Dimension::Texture1D => 1,
            Dimension::Texture1DArray | Dimension::Texture2D => 2,
            Dimension::Texture2DArray | Dimension::Texture3D | Dimension::TextureCube => 3,
            Dimension::TextureCubeArray => 4,
        }
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dimension {
    type Err = TextureError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let short = s.strip_prefix("Texture").unwrap_or(s);
        Dimension::ALL
            .into_iter()
            .find(|d| d.name() == short)
            .ok_or_else(|| TextureError::UnknownDimension(s.to_string()))
    }
}

/// The shape and format of a texture resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    /// Dimension of the resource.
    pub dimension: Dimension,
    /// Texel format.
    pub format: Format,
    /// Width of mip 0.
    pub width: u32,
    /// Height of mip 0 (1 for 1D textures).
    pub height: u32,
    /// Depth of mip 0 (1 unless 3D).
    pub depth: u32,
    /// Number of array slices: 1 for non-arrays, 6 for a cube, `6·n` for a cube array.
    pub array_size: u32,
    /// Number of mip levels.
    pub mip_levels: u32,
}

impl TextureDesc {
    /// A 2D texture with one mip.
    #[must_use]
    pub const fn new_2d(format: Format, width: u32, height: u32) -> Self {
        TextureDesc {
            dimension: Dimension::Texture2D,
            format,
            width,
            height,
            depth: 1,
            array_size: 1,
            mip_levels: 1,
        }
    }

    /// A texture of any dimension with one mip; `array_size` counts 2D slices (6 per cube).
    #[must_use]
    pub const fn new(
        dimension: Dimension,
        format: Format,
        [width, height, depth]: [u32; 3],
        array_size: u32,
    ) -> Self {
        TextureDesc {
            dimension,
            format,
            width,
            height,
            depth,
            array_size,
            mip_levels: 1,
        }
    }

    /// The same description with `mip_levels` mips.
    #[must_use]
    pub const fn with_mip_levels(mut self, mip_levels: u32) -> Self {
        self.mip_levels = mip_levels;
        self
    }

    /// The full mip count for this size: `floor(log2(max edge)) + 1`.
    #[must_use]
    pub fn full_mip_count(&self) -> u32 {
        let edge = self.width.max(self.height).max(self.depth).max(1);
        32 - edge.leading_zeros()
    }

    /// Size of mip `mip` (`max(1, size >> mip)` per axis).
    #[must_use]
    #[inline]
    pub fn level_size(&self, mip: u32) -> [u32; 3] {
        [
            (self.width >> mip).max(1),
            (self.height >> mip).max(1),
            (self.depth >> mip).max(1),
        ]
    }

    /// Bytes of one subresource at mip `mip`.
    #[must_use]
    pub fn subresource_bytes(&self, mip: u32) -> usize {
        let [w, h, d] = self.level_size(mip);
        w as usize * h as usize * d as usize * self.format.bytes_per_texel()
    }

    /// Total bytes of all subresources.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        (0..self.mip_levels)
            .map(|m| self.subresource_bytes(m) as u64)
            .sum::<u64>()
            * u64::from(self.array_size)
    }

    /// Checks the description against D3D12's limits (SPEC §1.2) and its own consistency.
    pub fn validate(&self) -> Result<(), TextureError> {
        let bad = |field: &'static str, value: u32, reason: String| {
            Err(TextureError::InvalidDesc {
                field,
                value,
                reason,
            })
        };
        let dim = self.dimension;
        let max_edge = if dim == Dimension::Texture3D {
            limits::MAX_EDGE_3D
        } else {
            limits::MAX_EDGE_2D
        };
        for (field, value) in [("width", self.width), ("height", self.height)] {
            if value == 0 {
                return bad(field, value, "must be at least 1".into());
            }
            if value > max_edge {
                return bad(
                    field,
                    value,
                    format!("exceeds D3D12's limit of {max_edge} for {dim} textures"),
                );
            }
        }
        if matches!(dim, Dimension::Texture1D | Dimension::Texture1DArray) && self.height != 1 {
            return bad("height", self.height, "must be 1 for 1D textures".into());
        }
        if dim == Dimension::Texture3D {
            if self.depth == 0 || self.depth > max_edge {
                return bad(
                    "depth",
                    self.depth,
                    format!("must be in 1..={max_edge} for 3D textures"),
                );
            }
        } else if self.depth != 1 {
            return bad(
                "depth",
                self.depth,
                "must be 1 unless the texture is 3D".into(),
            );
        }
        if dim.is_cube() && self.width != self.height {
            return bad(
                "height",
                self.height,
                format!("cube faces are square, but width is {}", self.width),
            );
        }
        let array_ok = match dim {
            Dimension::Texture1D | Dimension::Texture2D | Dimension::Texture3D => {
                self.array_size == 1
            }
            Dimension::TextureCube => self.array_size == 6,
            Dimension::TextureCubeArray => {
                self.array_size >= 6 && self.array_size.is_multiple_of(6)
            }
            Dimension::Texture1DArray | Dimension::Texture2DArray => self.array_size >= 1,
        };
        if !array_ok || self.array_size > limits::MAX_ARRAY_SIZE + 5 {
            return bad(
                "array_size",
                self.array_size,
                match dim {
                    Dimension::TextureCube => "must be 6 for a cube".into(),
                    Dimension::TextureCubeArray => {
                        "must be a non-zero multiple of 6 for a cube array".into()
                    }
                    d if !d.is_array() => format!("must be 1 for a {d} texture"),
                    _ => format!("must be in 1..={}", limits::MAX_ARRAY_SIZE),
                },
            );
        }
        let slices_limit = if dim.is_cube() {
            limits::MAX_ARRAY_SIZE / 6 * 6
        } else {
            limits::MAX_ARRAY_SIZE
        };
        if self.array_size > slices_limit {
            return bad(
                "array_size",
                self.array_size,
                format!("exceeds D3D12's limit of {slices_limit}"),
            );
        }
        let full = self.full_mip_count();
        if self.mip_levels == 0 || self.mip_levels > full.min(limits::MAX_MIP_LEVELS) {
            return bad(
                "mip_levels",
                self.mip_levels,
                format!(
                    "must be in 1..={} for this size",
                    full.min(limits::MAX_MIP_LEVELS)
                ),
            );
        }
        let total = self.total_bytes();
        if total > limits::MAX_BYTES {
            return Err(TextureError::TooLarge { bytes: total });
        }
        Ok(())
    }
}
