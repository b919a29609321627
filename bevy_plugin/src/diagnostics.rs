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
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};

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
    /// Light probes whose exposure was recomputed this frame.
    pub probes_updated: u32,
    /// World points those probes evaluated (each against every light that reaches it).
    pub probe_points: u32,
    /// Viewer–target pairs checked this frame.
    pub sightings: u32,
    /// Shadow maps rendered since the app started.
    pub total_shadow_maps_rendered: u64,
    /// Eye maps rendered since the app started.
    pub total_eye_maps_rendered: u64,
    /// Frames the plugin has run.
    pub frames: u64,
}

impl PenumbraDiagnostics {
    /// Time of the [`PenumbraSystems::Prepare`] and [`PenumbraSystems::Rasterize`] systems.
    #[must_use]
    pub fn rasterize_time(&self) -> Duration {
        self.sync_occluders + self.render_shadow_maps + self.render_eye_maps
    }

    /// Time of the [`PenumbraSystems::Query`] systems (exposure and line of sight).
    #[must_use]
    pub fn query_time(&self) -> Duration {
        self.update_exposure + self.update_line_of_sight
    }
}

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
        app.init_resource::<PenumbraDiagnostics>().add_systems(
            self.schedule,
            publish_diagnostics.in_set(PenumbraSystems::Writeback),
        );
        if self.frame_mark && penumbra_core::profile::enabled() {
            app.add_systems(Last, mark_frame);
        }
    }
}

/// Counts the frame and sends this frame's counts to Tracy plots.
pub fn publish_diagnostics(mut diagnostics: ResMut<PenumbraDiagnostics>) {
    penumbra_core::zone!("bevy_penumbra::publish_diagnostics");
    diagnostics.frames += 1;
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
}

/// Marks the end of a Bevy frame for Tracy.
pub fn mark_frame() {
    penumbra_core::frame_mark!();
}
