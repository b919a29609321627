//! Watching the files a script read — the script, its `require`d modules, images, meshes and
//! levels — for `penumbra run --watch` and the Bevy plugin's script reload.
//!
//! The folders holding the files are watched (not the files), so an editor that saves by
//! writing a new file and renaming it over the old one is seen too; events for other files in
//! those folders are ignored.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

/// A watch over a set of files.
pub struct FileWatch {
    watcher: notify::RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
    files: BTreeSet<PathBuf>,
    folders: BTreeSet<PathBuf>,
}

impl std::fmt::Debug for FileWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatch")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// The name of a path as the watch compares it: canonical where it exists.
fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl FileWatch {
    /// Watches `files` (paths that do not exist yet are watched through their folder).
    pub fn new(files: &[PathBuf]) -> Result<FileWatch, String> {
        let (tx, events) = channel();
        let watcher = notify::recommended_watcher(move |event| {
            let _ = tx.send(event);
        })
        .map_err(|e| format!("cannot watch files: {e}"))?;
        let mut watch = FileWatch {
            watcher,
            events,
            files: BTreeSet::new(),
            folders: BTreeSet::new(),
        };
        watch.set_files(files)?;
        Ok(watch)
    }

    /// Replaces the watched files (a re-run may read others).
    pub fn set_files(&mut self, files: &[PathBuf]) -> Result<(), String> {
        let files: BTreeSet<PathBuf> = files.iter().map(|f| key(f)).collect();
        let folders: BTreeSet<PathBuf> = files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        for gone in self.folders.difference(&folders) {
            let _ = self.watcher.unwatch(gone);
        }
        for new in folders.difference(&self.folders) {
            self.watcher
                .watch(new, RecursiveMode::NonRecursive)
                .map_err(|e| format!("cannot watch {}: {e}", new.display()))?;
        }
        self.files = files;
        self.folders = folders;
        Ok(())
    }

    /// The watched files.
    #[must_use]
    pub fn files(&self) -> Vec<PathBuf> {
        self.files.iter().cloned().collect()
    }

    /// The watched files that changed since the last call, without waiting.
    pub fn changed(&self) -> Vec<PathBuf> {
        let mut out = BTreeSet::new();
        while let Ok(event) = self.events.try_recv() {
            self.collect(event, &mut out);
        }
        out.into_iter().collect()
    }

    /// Waits up to `timeout` for a watched file to change, then for `settle` more in which no
    /// further event arrives (an editor's save is several events), and returns the files that
    /// changed; empty if none did within `timeout`.
    pub fn wait(&self, timeout: Duration, settle: Duration) -> Vec<PathBuf> {
        let mut out = BTreeSet::new();
        let end = Instant::now().checked_add(timeout);
        while out.is_empty() {
            let left = end.map_or(Duration::from_secs(3600), |e| {
                e.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Vec::new();
            }
            match self.events.recv_timeout(left) {
                Ok(event) => self.collect(event, &mut out),
                Err(RecvTimeoutError::Timeout) => return Vec::new(),
                Err(RecvTimeoutError::Disconnected) => return Vec::new(),
            }
        }
        while let Ok(event) = self.events.recv_timeout(settle) {
            self.collect(event, &mut out);
        }
        out.into_iter().collect()
    }

    fn collect(&self, event: notify::Result<notify::Event>, out: &mut BTreeSet<PathBuf>) {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        for path in &event.paths {
            let path = key(path);
            if self.files.contains(&path) {
                out.insert(path);
            }
        }
    }
}
