//! Files replaced whole (settings, trust decisions, web-tool keys, the undo index): a
//! temporary file beside the target, fsync, rename over it, fsync of the folder
//! (`atomic-write-file`). A crash at any point leaves the old file or the new one, never a
//! truncated mix, and the rename survives a power cut.
//!
//! A settings file is also shared between processes (a running session saving the model
//! while `knightcode install` adds a package): [`lock`] takes the reference's lock, a
//! `<file>.lock` folder beside it, so that each read-change-write sees the other's result.

use std::io::ErrorKind;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

/// Replaces `path` with `bytes`; `mode` sets the permissions (0o600 for secrets) before any
/// byte is written.
pub fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let path = link_target(path);
    let mut file = atomic_write_file::AtomicWriteFile::open(&path)?;
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt as _;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.write_all(bytes)?;
    file.commit()
}

/// The file a link at `path` points at (a settings file kept in a dotfiles repository and
/// linked into place): it is what gets replaced, so the link stays, as a plain write would
/// leave it. Other paths are returned as they are.
pub fn link_target(path: &Path) -> std::path::PathBuf {
    let is_link = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return path.to_path_buf();
    }
    std::fs::canonicalize(path)
        .or_else(|_| {
            // A dangling link: the file it names is created.
            std::fs::read_link(path).map(|target| match path.parent() {
                Some(parent) => parent.join(target),
                None => target,
            })
        })
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Lock attempts, 20 ms apart (the reference's synchronous lock).
pub const LOCK_ATTEMPTS: u32 = 10;

/// The time between two lock attempts.
pub const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// A lock folder older than this was left by a process that died holding it (the
/// reference's `proper-lockfile` default; a write holds the lock for milliseconds).
pub const LOCK_STALE: std::time::Duration = std::time::Duration::from_secs(10);

/// Why [`lock`] did not get the lock.
#[derive(Debug)]
pub enum LockFailure {
    /// Another process held it for every attempt.
    Busy,
    /// The lock folder could not be made.
    Io(std::io::Error),
}

/// A held settings lock; dropping it removes the lock folder, however the write ended.
#[derive(Debug)]
pub struct SettingsLock(PathBuf);

impl SettingsLock {
    /// The lock folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SettingsLock {
    fn drop(&mut self) {
        // Nothing to do when it is already gone.
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The lock folder of the settings file at `path` (`settings.json.lock`).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Takes the lock of the file at `path`, calling `backoff` with the failed attempt's
/// number (from 0) between attempts.
pub fn lock(path: &Path, backoff: &dyn Fn(u32)) -> Result<SettingsLock, LockFailure> {
    let lock = lock_path(path);
    for attempt in 0..LOCK_ATTEMPTS {
        match std::fs::create_dir(&lock) {
            Ok(()) => return Ok(SettingsLock(lock)),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {
                if is_stale(&lock) && std::fs::remove_dir(&lock).is_ok() {
                    // Taken over: the next attempt makes it afresh.
                    continue;
                }
                if attempt + 1 < LOCK_ATTEMPTS {
                    backoff(attempt);
                }
            }
            Err(error) => return Err(LockFailure::Io(error)),
        }
    }
    Err(LockFailure::Busy)
}

/// Whether the lock folder was made longer ago than [`LOCK_STALE`].
fn is_stale(lock: &Path) -> bool {
    std::fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|made| made.elapsed().ok())
        .is_some_and(|age| age > LOCK_STALE)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::lock;
    use super::replace;

    #[test]
    fn a_held_lock_makes_the_next_taker_wait_and_give_up_and_dropping_it_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let held = lock(&path, &|_| {}).unwrap();
        assert!(held.path().is_dir());
        let waits = std::cell::Cell::new(0);
        let busy = lock(&path, &|_| waits.set(waits.get() + 1));
        assert!(matches!(busy, Err(super::LockFailure::Busy)));
        assert_eq!(waits.get(), super::LOCK_ATTEMPTS - 1);
        drop(held);
        assert!(!dir.path().join("settings.json.lock").exists());
        lock(&path, &|_| {}).unwrap();
    }

    #[test]
    fn a_lock_left_by_a_killed_process_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let left = dir.path().join("settings.json.lock");
        std::fs::create_dir(&left).unwrap();
        let a_minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::open(&left)
            .unwrap()
            .set_modified(a_minute_ago)
            .unwrap();
        let held = lock(&path, &|_| panic!("a stale lock is not waited for")).unwrap();
        assert!(held.path().is_dir());
    }

    #[test]
    fn a_replaced_file_has_the_new_bytes_its_mode_and_no_temp_file_beside_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tools.json");
        std::fs::write(&path, "old and longer than the new text").unwrap();
        replace(&path, b"{}\n", Some(0o600)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["tools.json"]);
    }

    #[test]
    fn a_linked_file_is_replaced_where_the_link_points_and_the_link_stays() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir(&dotfiles).unwrap();
        std::fs::write(dotfiles.join("settings.json"), "{}").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink("dotfiles/settings.json", &link).unwrap();
        replace(&link, b"{\"theme\": \"light\"}\n", None).unwrap();
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(
            std::fs::read_to_string(dotfiles.join("settings.json")).unwrap(),
            "{\"theme\": \"light\"}\n"
        );
        // A dangling link: the file it names is made.
        let dangling = dir.path().join("auth.json");
        std::os::unix::fs::symlink("dotfiles/auth.json", &dangling).unwrap();
        replace(&dangling, b"{}", Some(0o600)).unwrap();
        assert!(
            dangling
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(dotfiles.join("auth.json")).unwrap(),
            "{}"
        );
    }
}
