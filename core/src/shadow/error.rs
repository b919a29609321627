//! Errors of lights, shadow maps and [`Lighting`](super::Lighting).

use crate::format::Format;

/// Errors of building lights and shadow maps.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ShadowError {
    /// The map size is out of range.
    #[error("shadow-map resolution {0} is outside 1..=16384")]
    Resolution(u32),
    /// The map format is not a depth format penumbra renders.
    #[error("shadow maps are D32_FLOAT or D16_UNORM, not {0}")]
    Format(Format),
    /// A light's placement is not finite or degenerate.
    #[error(
        "invalid light (non-finite position/direction, zero direction, non-positive range or \
         angle, negative or non-finite intensity): {0}"
    )]
    Light(String),
    /// A directional light has nothing to fit its map to.
    #[error(
        "the scene has no occluders to fit a directional shadow map to; give the light explicit bounds"
    )]
    EmptyScene,
    /// The light's static sampler is invalid (R7–R18): the description's own error.
    #[error("shadow sampler: {0}")]
    Sampler(#[source] crate::desc::DescError),
    /// The light's sampler does not compare: a shadow map needs a COMPARISON filter (SPEC R17).
    #[error("shadow sampler: Filter {0} is not a COMPARISON filter (SPEC R17)")]
    NotComparison(crate::desc::Filter),
    /// The rasterizer refused the target: its own error.
    #[error("rasterizer: {0}")]
    Raster(#[source] crate::raster::RasterError),
    /// The map's texture could not be assembled from the rendered slices: its own error.
    #[error("shadow-map texture: {0}")]
    Texture(#[source] crate::texture::TextureError),
    /// A PCF kernel that cannot be used (unknown name, bad taps, or a texel-grid kernel on a
    /// cube map).
    #[error("PCF kernel: {0}")]
    Kernel(String),
    /// Caller-supplied view and projection matrices that do not fit the light.
    #[error("shadow views: {0}")]
    Views(String),
    /// The [deadline](crate::deadline) in force passed before the map was rendered.
    #[error("stopped: the deadline passed before the map was rendered")]
    Interrupted,
    /// A [`Lighting`](super::Lighting) handle that names nothing (removed, or never added).
    #[error("no {0} with this handle in the lighting")]
    UnknownHandle(&'static str),
}
