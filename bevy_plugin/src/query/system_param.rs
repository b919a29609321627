//! [`ShadowQuery`], the `SystemParam` for ad-hoc shadow and sight queries.

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemParam;
use glam::Vec3;
use penumbra_core::shadow::ShadowMap;
use penumbra_core::{Coord, Offset};

use super::{MapRef, QueryError};
use crate::ShadowSettings;
use crate::probe::Exposure;
use crate::shadow::{LightMap, ShadowMaps};
use crate::sight::look;

/// Ad-hoc shadow, exposure and line-of-sight queries for any system (see the
/// [module docs](crate::query)).
///
/// It only reads resources, so many systems can query in parallel.
#[derive(SystemParam)]
pub struct ShadowQuery<'w> {
    maps: Option<Res<'w, ShadowMaps>>,
    settings: Option<Res<'w, ShadowSettings>>,
    #[cfg(feature = "pbr")]
    game: Option<Res<'w, crate::pbr::PbrShadows>>,
}

impl ShadowQuery<'_> {
    /// Every light's map, if the [`ShadowMapPlugin`](crate::shadow::ShadowMapPlugin) is added.
    #[must_use]
    pub fn maps(&self) -> Option<&ShadowMaps> {
        self.maps.as_deref()
    }

    /// The fraction of the light that could reach `point` that does, over every light that
    /// reaches it (weighted by what each light would deliver): 1 in the open, 0 in full shadow.
    /// `None` when no light reaches the point (no lights, behind every spot light, past every
    /// range). A point outside a light's map is unshadowed by it.
    #[must_use]
    pub fn lit_fraction(&self, point: Vec3) -> Option<f32> {
        self.probe(&[point], None)?.lit_fraction()
    }

    /// Light arriving at `point` from every light — [`Exposure::total`] of a one-point
    /// [`LightProbe`](crate::probe::LightProbe) there. `None` when no light reaches the point.
    #[must_use]
    pub fn exposure(&self, point: Vec3) -> Option<f32> {
        self.probe(&[point], None).map(|e| e.total())
    }

    /// The [`Exposure`] a [`LightProbe`](crate::probe::LightProbe) at these world `points` (on a
    /// surface facing `normal`) gets (`Lighting::probe_exposure`); `None` when no light
    /// reaches any of them.
    #[must_use]
    pub fn probe(&self, points: &[Vec3], normal: Option<Vec3>) -> Option<Exposure> {
        let maps = self.maps.as_deref()?;
        let exposure = maps.lighting().probe_exposure(points, normal).ok()?;
        (exposure.unshadowed() > 0.0).then(|| Exposure::from(&exposure))
    }

    /// The lit fraction of `point` in one light's map with its PCF kernel, 0 to 1 (1 outside
    /// the map).
    ///
    /// # Errors
    /// The light has no map ([`QueryError::NoMap`], [`QueryError::UnknownName`],
    /// [`QueryError::MapFailed`]), the point is not finite.
    pub fn lit_fraction_from<'a>(
        &self,
        light: impl Into<MapRef<'a>>,
        point: Vec3,
    ) -> Result<f32, QueryError> {
        let light = self.light_map(light)?;
        if !point.is_finite() {
            return Err(QueryError::NotFinite(point));
        }
        Ok(light.map().lit_fraction(point, None))
    }

    /// True when `viewer` sees `target` (its visible fraction reaches
    /// [`ShadowSettings::sight_threshold`]), exactly as its
    /// [`LineOfSight`](crate::sight::LineOfSight) would for a point target there.
    ///
    /// # Errors
    /// [`QueryError::NoEyeMap`] when `viewer` has no eye map, [`QueryError::NotFinite`].
    pub fn can_see(&self, viewer: Entity, target: Vec3) -> Result<bool, QueryError> {
        self.look(viewer, target, 0.0).map(|(_, seen)| seen)
    }

    /// The shadow factor Bevy's renderer draws at `point` (unit surface `normal`) for a game
    /// light (`DirectionalLight`, `PointLight`, `SpotLight`) seen by `camera`, with the
    /// camera's `ShadowFilteringMethod` (feature `pbr`; see
    /// [`PbrShadows::shadow_factor`](crate::pbr::PbrShadows::shadow_factor)).
    ///
    /// # Errors
    /// [`QueryError::Game`]: an unknown camera or light, a non-finite point, a failed map.
    #[cfg(feature = "pbr")]
    pub fn shadow_factor(
        &self,
        camera: Entity,
        light: Entity,
        point: Vec3,
        normal: Vec3,
    ) -> Result<f32, QueryError> {
        let game = self
            .game
            .as_deref()
            .ok_or(QueryError::Game(crate::pbr::PbrError::UnknownLight(light)))?;
        Ok(game.shadow_factor(camera, light, point, normal)?)
    }

    /// The light arriving at `point` from every game light seen by `camera`, in lux (feature
    /// `pbr`; see [`PbrShadows::irradiance`](crate::pbr::PbrShadows::irradiance)).
    ///
    /// # Errors
    /// As [`shadow_factor`](Self::shadow_factor).
    #[cfg(feature = "pbr")]
    pub fn irradiance(
        &self,
        camera: Entity,
        point: Vec3,
        normal: Vec3,
    ) -> Result<crate::pbr::PbrIrradiance, QueryError> {
        let game =
            self.game
                .as_deref()
                .ok_or(QueryError::Game(crate::pbr::PbrError::UnknownCamera(
                    camera,
                )))?;
        Ok(game.irradiance(camera, point, normal)?)
    }

    /// The fraction of a target disc of `radius` at `target` that `viewer` sees.
    ///
    /// # Errors
    /// As [`can_see`](Self::can_see).
    pub fn visible_fraction(
        &self,
        viewer: Entity,
        target: Vec3,
        radius: f32,
    ) -> Result<f32, QueryError> {
        self.look(viewer, target, radius)
            .map(|(fraction, _)| fraction)
    }

    /// `SampleCmpLevelZero` on a light's map with its static sampler, as the shader writes it:
    /// `coord` is (u, v, array slice) for 2D maps and a direction for point lights' cubes,
    /// `reference` the depth compared, `offset` the immediate texel offset (`()` for none).
    ///
    /// # Errors
    /// The light has no map, or the sampler refuses the call (an offset on a cube, R40).
    pub fn sample_cmp<'a>(
        &self,
        map: impl Into<MapRef<'a>>,
        coord: impl Into<Coord>,
        reference: f32,
        offset: impl Into<Offset>,
    ) -> Result<f32, QueryError> {
        let map = self.shadow_map(map)?;
        Ok(map
            .sampler()
            .sample_cmp_level_zero(Some(map.texture()), coord, reference, offset)?)
    }

    /// A light's shadow map (its texture, matrices and sampler).
    ///
    /// # Errors
    /// As [`lit_fraction_from`](Self::lit_fraction_from).
    pub fn shadow_map<'a>(&self, map: impl Into<MapRef<'a>>) -> Result<&ShadowMap, QueryError> {
        self.light_map(map).map(|m| m.map())
    }

    fn light_map<'a>(&self, map: impl Into<MapRef<'a>>) -> Result<LightMap<'_>, QueryError> {
        let map = map.into();
        let maps = self.maps.as_deref();
        match map {
            MapRef::Entity(light) => match maps {
                Some(maps) => maps.get(light).ok_or_else(|| match maps.error(light) {
                    Some(error) => QueryError::MapFailed {
                        light,
                        error: error.clone(),
                    },
                    None => QueryError::NoMap(light),
                }),
                None => Err(QueryError::NoMap(light)),
            },
            MapRef::Name(name) => maps
                .and_then(|m| m.get_by_name(name))
                .ok_or_else(|| QueryError::UnknownName(name.to_owned())),
        }
    }

    fn look(&self, viewer: Entity, target: Vec3, radius: f32) -> Result<(f32, bool), QueryError> {
        let eye = self
            .maps
            .as_deref()
            .and_then(|m| m.eye_map(viewer))
            .ok_or(QueryError::NoEyeMap(viewer))?;
        if !target.is_finite() {
            return Err(QueryError::NotFinite(target));
        }
        let threshold = self
            .settings
            .as_deref()
            .map_or(ShadowSettings::default().sight_threshold, |s| {
                s.sight_threshold
            });
        Ok(look(Some(eye), target, radius, threshold))
    }
}
