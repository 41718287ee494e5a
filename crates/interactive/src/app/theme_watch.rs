//! The active theme file, watched: editing it redraws the screen in its new colours, as
//! the reference's file watcher does. The folder that holds the file is watched with the
//! system's file notifications (inotify on Linux, through `notify`, which the extension
//! host's `fs.watch` already uses): an idle session wakes nothing, where a poll woke the
//! process four times a second. The folder rather than the file, because editors save by
//! writing a new file and renaming it over the old one, which ends a watch on the file.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::SystemTime;

use notify::RecursiveMode;
use notify::Watcher as _;
use tokio::sync::mpsc;

/// What identifies one version of the file.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

pub struct ThemeWatch {
    changed: mpsc::UnboundedSender<()>,
    /// The file watched and the watcher; dropping the watcher ends its thread.
    current: Option<(PathBuf, notify::RecommendedWatcher)>,
}

impl ThemeWatch {
    /// Nothing is watched until [`ThemeWatch::watch`]; a change sends on `changed`.
    pub fn start(changed: mpsc::UnboundedSender<()>) -> Self {
        Self {
            changed,
            current: None,
        }
    }

    /// Watches `path` (the active theme's file; `None` for a built-in theme) from its
    /// current version on. Without notifications (none left, a folder that went away) an
    /// edit just does not show until `/reload`: nothing else depends on it.
    pub fn watch(&mut self, path: Option<&Path>) {
        if self.current.as_ref().map(|(p, _)| p.as_path()) == path {
            return;
        }
        self.current = None;
        let Some(path) = path else {
            return;
        };
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return;
        };
        let file = path.to_path_buf();
        let name = name.to_owned();
        let seen = Mutex::new(stamp(path));
        let changed = self.changed.clone();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else {
                return;
            };
            if !event
                .paths
                .iter()
                .any(|p| p.file_name() == Some(name.as_os_str()))
            {
                return;
            }
            let now = stamp(&file);
            let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
            // A file being replaced can be missing for a moment: its new version comes
            // with the next event.
            if now.is_some() && now != *seen {
                *seen = now;
                let _ = changed.send(());
            }
        });
        let Ok(mut watcher) = watcher else {
            return;
        };
        let folder = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        };
        if watcher.watch(folder, RecursiveMode::NonRecursive).is_ok() {
            self.current = Some((path.to_path_buf(), watcher));
        }
    }

    /// The file watched.
    pub fn path(&self) -> Option<PathBuf> {
        self.current.as_ref().map(|(path, _)| path.clone())
    }
}
