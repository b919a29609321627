//! [`PenumbraDiagnostics`]: how long each system took and how much work it did this frame.
//!
//! Every system of the plugin writes its own fields each time it runs; the
//! [`PenumbraDiagnosticsPlugin`] counts frames in [`PenumbraSystems::Writeback`], sends the
//! per-frame counts to Tracy as plots and marks the end of each Bevy frame (both only with the
//! `tracy` feature).
//!
//! ```
//! use bevy_app::App;
//! use bevy_penumbra::{PenumbraDiagnostics, PenumbraPlugin};
//!
//! let mut app = App::new();
//! app.add_plugins(PenumbraPlugin::default());
//! app.update();
//! let diagnostics = app.world().resource::<PenumbraDiagnostics>();
//! assert_eq!(diagnostics.frames, 1);
//! assert_eq!(diagnostics.total_shadow_maps_rendered, 0); // no lights yet
//! ```

use std::time::Duration;

use bevy_app::{App, Last, Plugin, PostUpdate};
use bevy_diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};

use penumbra_core::shadow::TileStats;

use crate::PenumbraSystems;

/// Durations and counts of the plugin's last frame, plus running totals.
///
/// Durations are wall time of the whole system, including the work it hands to the
/// `ComputeTaskPool`.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct PenumbraDiagnostics {
    /// Time spent finding moved occluders and rebuilding the occluder scene.
    pub sync_occluders: Duration,
    /// Time spent rendering light shadow maps.
    pub render_shadow_maps: Duration,
    /// Time spent rendering viewers' eye depth maps.
    pub render_eye_maps: Duration,
    /// Time spent rendering the game lights' maps (`pbr` feature).
    pub render_pbr_maps: Duration,
    /// Time spent reading the game's meshes and lights (`pbr` feature).
    pub sync_pbr: Duration,
    /// Time spent adding the game lights to every `Exposure` (`pbr` feature).
    pub update_pbr_exposure: Duration,
    /// Time spent updating [`Exposure`](crate::probe::Exposure)s.
    pub update_exposure: Duration,
    /// Time spent updating [`LineOfSight`](crate::sight::LineOfSight)s.
    pub update_line_of_sight: Duration,
    /// Occluders in the scene.
    pub occluders: u32,
    /// Occluders added, moved, changed or removed this frame.
    pub occluders_changed: u32,
    /// Shadow maps rendered this frame.
    pub shadow_maps_rendered: u32,
    /// Eye maps rendered this frame.
    pub eye_maps_rendered: u32,
    /// Game-light maps (`pbr` feature: a directional light's cascades per camera, spot and
    /// point lights) rendered this frame.
    pub pbr_maps_rendered: u32,
    /// Light probes whose exposure was recomputed this frame.
    pub probes_updated: u32,
    /// World points those probes evaluated (each against every light that reaches it).
    pub probe_points: u32,
    /// Viewer–target pairs checked this frame.
    pub sightings: u32,
    /// Map tiles drawn this frame (maps are drawn tile by tile as queries need them, own
    /// lights' and game lights' alike; a static scene draws none after its first frames).
    pub tiles_rendered: u32,
    /// Drawn tiles forgotten this frame because an occluder change covered them.
    pub tiles_invalidated: u32,
    /// Triangle pieces skipped this frame while drawing tiles, because what a tile held
    /// already hid them (the rasterizer's coarse depth test).
    pub pieces_rejected: u32,
    /// Time spent rasterizing tiles this frame, summed over threads (it happens inside the
    /// query systems, which need the tiles).
    pub tile_render: Duration,
    /// Time spent writing drawn tiles into the maps' batch layouts (key images), and into
    /// their texels where a query reads texels, summed over threads.
    pub tile_layout: Duration,
    /// Wall-clock time the query systems waited for tiles this frame (drawing and layout,
    /// however many threads shared them): what [`query_time`](Self::query_time) leaves out.
    pub tile_wall: Duration,
    /// Map tiles drawn since the app started.
    pub total_tiles_rendered: u64,
    /// Shadow maps rendered since the app started.
    pub total_shadow_maps_rendered: u64,
    /// Eye maps rendered since the app started.
    pub total_eye_maps_rendered: u64,
    /// Frames the plugin has run.
    pub frames: u64,
}

impl PenumbraDiagnostics {
    /// Time of the [`PenumbraSystems::Prepare`] and [`PenumbraSystems::Rasterize`] systems,
    /// plus the tiles drawn on demand ([`tile_render`](Self::tile_render)).
    #[must_use]
    pub fn rasterize_time(&self) -> Duration {
        self.sync_occluders
            + self.render_shadow_maps
            + self.render_eye_maps
            + self.sync_pbr
            + self.render_pbr_maps
            + self.tile_render
    }

    /// Time spent laying drawn tiles out for the queries ([`tile_layout`](Self::tile_layout)).
    #[must_use]
    pub fn layout_time(&self) -> Duration {
        self.tile_layout
    }

    /// Time of the [`PenumbraSystems::Query`] systems (exposure and line of sight) less the
    /// wall-clock time they waited for tiles ([`tile_wall`](Self::tile_wall)), whose
    /// drawing and layout [`rasterize_time`](Self::rasterize_time) and
    /// [`layout_time`](Self::layout_time) report (as CPU time summed over threads, which can
    /// exceed the wall-clock time when several threads drew).
    #[must_use]
    pub fn query_time(&self) -> Duration {
        (self.update_exposure + self.update_line_of_sight + self.update_pbr_exposure)
            .saturating_sub(self.tile_wall)
    }
}

/// The plugin's measurements in Bevy's `DiagnosticsStore` (milliseconds and counts per
/// frame), for `LogDiagnosticsPlugin` or a game's own overlay.
pub mod paths {
    use bevy_diagnostic::DiagnosticPath;

    /// Occluder sync, map and eye-map rendering (ms): [`rasterize_time`](super::PenumbraDiagnostics::rasterize_time).
    pub const RASTERIZE_MS: DiagnosticPath = DiagnosticPath::const_new("penumbra/rasterize_ms");
    /// Exposure and line-of-sight updates (ms): [`query_time`](super::PenumbraDiagnostics::query_time).
    pub const QUERY_MS: DiagnosticPath = DiagnosticPath::const_new("penumbra/query_ms");
    /// Writing drawn tiles into the maps' layouts (ms): [`layout_time`](super::PenumbraDiagnostics::layout_time).
    pub const LAYOUT_MS: DiagnosticPath = DiagnosticPath::const_new("penumbra/layout_ms");
    /// Map tiles drawn this frame.
    pub const TILES_RENDERED: DiagnosticPath = DiagnosticPath::const_new("penumbra/tiles_rendered");
    /// Maps rendered this frame (own lights, eyes and game lights).
    pub const MAPS_RENDERED: DiagnosticPath = DiagnosticPath::const_new("penumbra/maps_rendered");
    /// Probes updated this frame.
    pub const PROBES_UPDATED: DiagnosticPath = DiagnosticPath::const_new("penumbra/probes_updated");
}

const ALL_PATHS: [DiagnosticPath; 6] = [
    paths::RASTERIZE_MS,
    paths::QUERY_MS,
    paths::LAYOUT_MS,
    paths::TILES_RENDERED,
    paths::MAPS_RENDERED,
    paths::PROBES_UPDATED,
];

/// Counts frames, sends Tracy plots and marks frames (part of
/// [`PenumbraPlugin`](crate::PenumbraPlugin)).
#[derive(Clone, Debug)]
pub struct PenumbraDiagnosticsPlugin {
    /// The schedule the plugin's systems run in.
    pub schedule: InternedScheduleLabel,
    /// Mark the end of each Bevy frame for Tracy (a system in [`Last`]); only with the `tracy`
    /// feature. Turn it off when something else already marks frames.
    pub frame_mark: bool,
}

impl PenumbraDiagnosticsPlugin {
    /// The plugin for `schedule`, with frame marks.
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        PenumbraDiagnosticsPlugin {
            schedule: schedule.intern(),
            frame_mark: true,
        }
    }
}

impl Default for PenumbraDiagnosticsPlugin {
    fn default() -> Self {
        PenumbraDiagnosticsPlugin::new(PostUpdate)
    }
}

impl Plugin for PenumbraDiagnosticsPlugin {
    fn build(&self, app: &mut App) {
        for path in ALL_PATHS {
            app.register_diagnostic(Diagnostic::new(path));
        }
        app.init_resource::<PenumbraDiagnostics>().add_systems(
            self.schedule,
            (publish_diagnostics, warn_empty_scene).in_set(PenumbraSystems::Writeback),
        );
        if self.frame_mark && penumbra_core::profile::enabled() {
            app.add_systems(Last, mark_frame);
        }
    }
}

/// Counts the frame, records it in Bevy's `Diagnostics` ([`paths`]) and sends this frame's
/// counts to Tracy plots.
pub fn publish_diagnostics(
    mut diagnostics: ResMut<PenumbraDiagnostics>,
    mut bevy: Diagnostics,
    maps: Option<Res<crate::shadow::ShadowMaps>>,
    #[cfg(feature = "pbr")] game: Option<Res<crate::pbr::PbrShadows>>,
    mut last: Local<TileStats>,
) {
    penumbra_core::zone!("bevy_penumbra::publish_diagnostics");
    diagnostics.frames += 1;
    // The tiles every lighting drew since the last frame.
    #[cfg_attr(not(feature = "pbr"), allow(unused_mut))]
    let mut now = maps
        .as_ref()
        .map_or_else(TileStats::default, |m| m.lighting().tile_stats());
    #[cfg(feature = "pbr")]
    if let Some(game) = &game {
        let g = game.lighting().tile_stats();
        now.tiles_rendered += g.tiles_rendered;
        now.tiles_invalidated += g.tiles_invalidated;
        now.pieces_rejected += g.pieces_rejected;
        now.render += g.render;
        now.layout += g.layout;
        now.wall += g.wall;
    }
    let count = |a: u64, b: u64| u32::try_from(a.saturating_sub(b)).unwrap_or(u32::MAX);
    diagnostics.tiles_rendered = count(now.tiles_rendered, last.tiles_rendered);
    diagnostics.tiles_invalidated = count(now.tiles_invalidated, last.tiles_invalidated);
    diagnostics.pieces_rejected = count(now.pieces_rejected, last.pieces_rejected);
    diagnostics.tile_render = now.render.saturating_sub(last.render);
    diagnostics.tile_layout = now.layout.saturating_sub(last.layout);
    diagnostics.tile_wall = now.wall.saturating_sub(last.wall);
    diagnostics.total_tiles_rendered += u64::from(diagnostics.tiles_rendered);
    *last = now;
    let d = &*diagnostics;
    bevy.add_measurement(&paths::LAYOUT_MS, || d.layout_time().as_secs_f64() * 1e3);
    bevy.add_measurement(&paths::TILES_RENDERED, || f64::from(d.tiles_rendered));
    bevy.add_measurement(&paths::RASTERIZE_MS, || {
        d.rasterize_time().as_secs_f64() * 1e3
    });
    bevy.add_measurement(&paths::QUERY_MS, || d.query_time().as_secs_f64() * 1e3);
    bevy.add_measurement(&paths::MAPS_RENDERED, || {
        f64::from(d.shadow_maps_rendered + d.eye_maps_rendered + d.pbr_maps_rendered)
    });
    bevy.add_measurement(&paths::PROBES_UPDATED, || f64::from(d.probes_updated));
    penumbra_core::plot!("bevy_penumbra probes updated", diagnostics.probes_updated);
    penumbra_core::plot!("bevy_penumbra probe points", diagnostics.probe_points);
    penumbra_core::plot!(
        "bevy_penumbra shadow maps rendered",
        diagnostics.shadow_maps_rendered
    );
    penumbra_core::plot!(
        "bevy_penumbra eye maps rendered",
        diagnostics.eye_maps_rendered
    );
    penumbra_core::plot!(
        "bevy_penumbra game-light maps rendered",
        diagnostics.pbr_maps_rendered
    );
    penumbra_core::plot!("bevy_penumbra tiles rendered", diagnostics.tiles_rendered);
    penumbra_core::plot!(
        "bevy_penumbra tiles invalidated",
        diagnostics.tiles_invalidated
    );
    penumbra_core::plot!("bevy_penumbra pieces rejected", diagnostics.pieces_rejected);
}

/// Warns once when probes or viewers exist but the plugin has seen nothing to answer them
/// with — no occluder and no light (`Occluder`/`ShadowLight`, or with the `pbr` feature the
/// game's `Mesh3d` entities and Bevy lights) — for [`EMPTY_SCENE_FRAMES`] frames in a row (so
/// assets still loading do not count).
pub fn warn_empty_scene(
    probes: Query<(), With<crate::probe::LightProbe>>,
    viewers: Query<(), With<crate::sight::Viewer>>,
    maps: Option<Res<crate::shadow::ShadowMaps>>,
    #[cfg(feature = "pbr")] game: Option<Res<crate::pbr::PbrShadows>>,
    mut empty_frames: Local<u32>,
) {
    if *empty_frames > EMPTY_SCENE_FRAMES || (probes.is_empty() && viewers.is_empty()) {
        return;
    }
    let own = maps
        .as_ref()
        .is_some_and(|m| m.lighting().occluder_count() > 0 || m.lighting().lights().len() > 0);
    #[cfg(feature = "pbr")]
    let own = own || game.as_ref().is_some_and(|g| g.lights().next().is_some());
    if own {
        *empty_frames = 0;
        return;
    }
    *empty_frames += 1;
    if *empty_frames <= EMPTY_SCENE_FRAMES {
        return;
    }
    #[cfg(feature = "pbr")]
    let hint = "add Mesh3d entities and DirectionalLight, PointLight or SpotLight (with \
                shadow_maps_enabled), or Occluder and ShadowLight components";
    #[cfg(not(feature = "pbr"))]
    let hint = "add Occluder and ShadowLight components, or enable bevy_penumbra's `pbr` \
                feature to use the game's own Mesh3d meshes and Bevy lights";
    log::warn!(
        "bevy_penumbra: {} light probes and {} viewers, but no occluder or light to answer \
         them with: {hint}",
        probes.iter().count(),
        viewers.iter().count()
    );
}

/// Frames with probes or viewers but nothing to answer them before [`warn_empty_scene`] warns.
pub const EMPTY_SCENE_FRAMES: u32 = 30;

/// Marks the end of a Bevy frame for Tracy.
pub fn mark_frame() {
    penumbra_core::frame_mark!();
}
