//! [`PenumbraPlugin`], its system sets and the core sub-plugin.

#[cfg(feature = "ron")]
use std::path::Path;

use bevy_app::{App, Plugin, PluginGroup, PluginGroupBuilder, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy_tasks::{ComputeTaskPool, TaskPool};
use bevy_transform::TransformSystems;
use penumbra_core::StaticSamplerTable;

use crate::ShadowSettings;
use crate::diagnostics::{PenumbraDiagnostics, PenumbraDiagnosticsPlugin};
use crate::occluder::OccluderPlugin;
use crate::probe::LightProbePlugin;
#[cfg(feature = "ron")]
use crate::samplers::SamplerTableError;
use crate::samplers::StaticSamplers;
use crate::shadow::ShadowMapPlugin;
use crate::sight::LineOfSightPlugin;

/// The plugin's system sets, run in this order (chained) after transform propagation
/// (`TransformSystems::Propagate`) in the plugin's schedule.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PenumbraSystems {
    /// Applies added, moved and removed occluders to the engine lighting in
    /// [`ShadowMaps`](crate::shadow::ShadowMaps).
    Prepare,
    /// Re-renders the shadow maps and eye maps that changed.
    Rasterize,
    /// Updates [`Exposure`](crate::probe::Exposure) and
    /// [`LineOfSight`](crate::sight::LineOfSight) components.
    Query,
    /// Publishes the frame's [`PenumbraDiagnostics`] and Tracy plots; game systems that read
    /// the components can run after it (or after [`PenumbraSystems::Query`]).
    Writeback,
}

/// penumbra for a Bevy game: add it, and occluders, lights, probes and viewers work.
///
/// It is a plugin group of [`PenumbraCorePlugin`] (sets, settings, samplers, diagnostics),
/// [`OccluderPlugin`], [`ShadowMapPlugin`], [`LightProbePlugin`], [`LineOfSightPlugin`] and
/// [`PenumbraDiagnosticsPlugin`]; replace or disable any of them through
/// `PenumbraPlugin::default().build()`.
///
/// ```
/// use bevy_app::{App, FixedPostUpdate, PluginGroup};
/// use bevy_penumbra::prelude::*;
/// use bevy_penumbra::sight::LineOfSightPlugin;
///
/// let mut app = App::new();
/// app.add_plugins(
///     PenumbraPlugin::new(FixedPostUpdate)
///         .with_settings(ShadowSettings { raster_threads: 2, ..Default::default() })
///         .build()
///         .disable::<LineOfSightPlugin>(), // no guards in this game
/// );
/// ```
#[derive(Clone, Debug)]
pub struct PenumbraPlugin {
    schedule: InternedScheduleLabel,
    settings: ShadowSettings,
    samplers: Option<StaticSamplers>,
    frame_mark: bool,
}

impl Default for PenumbraPlugin {
    /// Runs in `PostUpdate`, default settings, an empty sampler table, frame marks on.
    fn default() -> Self {
        PenumbraPlugin::new(PostUpdate)
    }
}

impl PenumbraPlugin {
    /// The plugin running in `schedule` (after `TransformSystems::Propagate` when the schedule
    /// has it, as `PostUpdate` does).
    #[must_use]
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        PenumbraPlugin {
            schedule: schedule.intern(),
            settings: ShadowSettings::default(),
            samplers: None,
            frame_mark: true,
        }
    }

    /// The schedule the plugin runs in.
    #[must_use]
    pub fn schedule(&self) -> InternedScheduleLabel {
        self.schedule
    }

    /// Starts with these [`ShadowSettings`].
    #[must_use]
    pub fn with_settings(mut self, settings: ShadowSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Starts with this static-sampler table.
    #[must_use]
    pub fn with_samplers(mut self, table: StaticSamplerTable) -> Self {
        self.samplers = Some(StaticSamplers::new(table));
        self
    }

    /// Starts with the static samplers of a RON text (see [`crate::samplers`]).
    ///
    /// # Errors
    /// [`SamplerTableError::Invalid`], naming the entry, field and rule (or line and column).
    #[cfg(feature = "ron")]
    pub fn try_with_sampler_ron(mut self, ron: &str) -> Result<Self, SamplerTableError> {
        self.samplers = Some(StaticSamplers::from_ron(ron)?);
        Ok(self)
    }

    /// Starts with the static samplers of a RON file.
    ///
    /// # Errors
    /// [`SamplerTableError::Read`] or [`SamplerTableError::Invalid`], naming the file.
    #[cfg(feature = "ron")]
    pub fn try_with_sampler_file(
        mut self,
        path: impl AsRef<Path>,
    ) -> Result<Self, SamplerTableError> {
        self.samplers = Some(StaticSamplers::from_file(path)?);
        Ok(self)
    }

    /// Whether to mark the end of each Bevy frame for Tracy (default on; only with the `tracy`
    /// feature).
    #[must_use]
    pub fn with_frame_mark(mut self, frame_mark: bool) -> Self {
        self.frame_mark = frame_mark;
        self
    }
}

impl PluginGroup for PenumbraPlugin {
    fn build(self) -> PluginGroupBuilder {
        let schedule = self.schedule;
        let group = PluginGroupBuilder::start::<Self>()
            .add(PenumbraCorePlugin {
                schedule,
                settings: self.settings,
                samplers: self.samplers,
            })
            .add(OccluderPlugin { schedule })
            .add(ShadowMapPlugin { schedule })
            .add(LightProbePlugin { schedule })
            .add(LineOfSightPlugin { schedule })
            .add(PenumbraDiagnosticsPlugin {
                schedule,
                frame_mark: self.frame_mark,
            });
        #[cfg(feature = "pbr")]
        let group = group.add(crate::pbr::PbrShadowPlugin { schedule });
        group
    }
}

/// Orders the [`PenumbraSystems`] sets and inserts the shared resources: [`ShadowSettings`],
/// [`StaticSamplers`], [`PenumbraDiagnostics`].
#[derive(Clone, Debug)]
pub struct PenumbraCorePlugin {
    /// The schedule the sets run in.
    pub schedule: InternedScheduleLabel,
    /// The settings to start with.
    pub settings: ShadowSettings,
    /// The static samplers to start with (an empty table when `None`).
    pub samplers: Option<StaticSamplers>,
}

impl Default for PenumbraCorePlugin {
    fn default() -> Self {
        PenumbraCorePlugin {
            schedule: PostUpdate.intern(),
            settings: ShadowSettings::default(),
            samplers: None,
        }
    }
}

impl Plugin for PenumbraCorePlugin {
    fn build(&self, app: &mut App) {
        app.configure_sets(
            self.schedule,
            (
                PenumbraSystems::Prepare,
                PenumbraSystems::Rasterize,
                PenumbraSystems::Query,
                PenumbraSystems::Writeback,
            )
                .chain()
                .after(TransformSystems::Propagate),
        )
        .insert_resource(self.settings.clone())
        .insert_resource(self.samplers.clone().unwrap_or_default())
        .init_resource::<PenumbraDiagnostics>();
    }

    fn finish(&self, _app: &mut App) {
        ensure_compute_task_pool();
    }
}

/// `par_iter_mut` needs the `ComputeTaskPool`; `TaskPoolPlugin` (in `bevy_app`) creates it, and
/// without it one with a thread per core is made once every plugin is built.
pub(crate) fn ensure_compute_task_pool() {
    ComputeTaskPool::get_or_init(TaskPool::default);
}
