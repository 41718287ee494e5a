//! Files replaced whole (settings, trust decisions, credentials in `auth.json` and
//! `mcp-auth.json`, `mcp.json`, web-tool keys, the undo index): a
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

/// Lock attempts, 20 ms apart, while a live process holds the lock (the reference's
/// synchronous lock).
pub const LOCK_ATTEMPTS: u32 = 10;

/// The time between two lock attempts.
pub const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// A lock folder older than this, with no live owner in it, was left by a process that died
/// holding it (the reference's `proper-lockfile` default; a write holds the lock for
/// milliseconds).
pub const LOCK_STALE: std::time::Duration = std::time::Duration::from_secs(10);

/// The file in the lock folder that its holder keeps an OS lock on. The OS drops that lock
/// when the holder dies, however it dies, so a lock left by a killed process is taken over at
/// once instead of after [`LOCK_STALE`]. The reference's folders have no owner file; they
/// go stale by age as before.
const OWNER: &str = "owner";

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
pub struct SettingsLock {
    folder: PathBuf,
    /// Holds the OS lock on the owner file until the folder is gone.
    owner: std::fs::File,
}

impl SettingsLock {
    /// The lock folder.
    pub fn path(&self) -> &Path {
        &self.folder
    }
}

impl Drop for SettingsLock {
    fn drop(&mut self) {
        // The owner file goes while its OS lock is still held: a waiter that opened it gets
        // the lock only after this, finds the file gone, and starts again. Nothing to do when
        // it is already gone.
        let _ = std::fs::remove_file(self.folder.join(OWNER));
        let _ = std::fs::remove_dir(&self.folder);
        let _ = self.owner.unlock();
    }
}

/// The lock folder of the settings file at `path` (`settings.json.lock`).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Takes the lock of the file at `path`, calling `backoff` with the failed attempt's
/// number (from 0) between attempts. A live holder is waited for [`LOCK_ATTEMPTS`] times; a
/// folder with no live owner (one the reference made, or one whose maker was killed before
/// it wrote its owner file) until it is [`LOCK_STALE`].
pub fn lock(path: &Path, backoff: &dyn Fn(u32)) -> Result<SettingsLock, LockFailure> {
    let folder = lock_path(path);
    let ownerless_attempts =
        LOCK_ATTEMPTS + LOCK_STALE.as_millis().div_ceil(LOCK_RETRY.as_millis()) as u32;
    let mut live_waits = 0;
    for attempt in 0..ownerless_attempts {
        match std::fs::create_dir(&folder) {
            Ok(()) => {
                let owner = make_owner(&folder).map_err(|error| {
                    let _ = std::fs::remove_dir_all(&folder);
                    LockFailure::Io(error)
                })?;
                return Ok(SettingsLock { folder, owner });
            }
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
            Err(error) => return Err(LockFailure::Io(error)),
        }
        match take_over(&folder) {
            Holder::Dead(owner) => return Ok(SettingsLock { folder, owner }),
            // Released, or cleared as stale: the next attempt makes it afresh.
            Holder::Gone => continue,
            Holder::Unknown if is_stale(&folder) && clear_stale(&folder) => continue,
            Holder::Unknown => {}
            Holder::Alive => {
                live_waits += 1;
                if live_waits == LOCK_ATTEMPTS {
                    break;
                }
            }
        }
        backoff(attempt);
    }
    Err(LockFailure::Busy)
}

/// What the owner file of an existing lock folder says about its holder.
enum Holder {
    /// It died; its OS lock is now ours, and with it the folder.
    Dead(std::fs::File),
    /// It is alive and holds its OS lock.
    Alive,
    /// The folder was released while we looked: try again at once.
    Gone,
    /// No owner file: the reference's folder, or a holder killed before it wrote one.
    Unknown,
}

fn take_over(folder: &Path) -> Holder {
    let path = folder.join(OWNER);
    let Ok(file) = std::fs::File::open(&path) else {
        return if folder.exists() {
            Holder::Unknown
        } else {
            Holder::Gone
        };
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Holder::Alive,
        Err(std::fs::TryLockError::Error(_)) => return Holder::Unknown,
    }
    // A holder releasing the folder removes the owner file before it lets its OS lock go:
    // the lock is only the folder's if the file is still the one in the folder.
    if same_file(&file, &path) {
        // Fresh again, for the reference's age check.
        let _ =
            std::fs::File::open(folder).and_then(|f| f.set_modified(std::time::SystemTime::now()));
        Holder::Dead(file)
    } else {
        Holder::Gone
    }
}

fn same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(held), Ok(named)) => held.dev() == named.dev() && held.ino() == named.ino(),
        _ => false,
    }
}

/// Makes the owner file of a folder just made: written under a name of its own, locked, and
/// only then renamed into place, so that whoever sees `owner` sees it locked.
fn make_owner(folder: &Path) -> std::io::Result<std::fs::File> {
    let temp = folder.join(format!("{OWNER}.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp)?;
    file.try_lock().map_err(std::io::Error::from)?;
    // The pid is for a person looking at a lock left behind; nothing reads it.
    let _ = writeln!(file, "{}", std::process::id());
    std::fs::rename(&temp, folder.join(OWNER))?;
    Ok(file)
}

/// Removes a stale folder: each file in it only when its OS lock can be taken (a live
/// holder's owner file never goes), then the folder. False when something stayed.
fn clear_stale(folder: &Path) -> bool {
    if let Ok(entries) = std::fs::read_dir(folder) {
        for entry in entries.flatten() {
            let path = entry.path();
            if let Ok(file) = std::fs::File::open(&path)
                && file.try_lock().is_ok()
            {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    std::fs::remove_dir(folder).is_ok()
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
    fn a_lock_whose_holder_was_killed_is_taken_over_at_once_and_freed_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        // What a holder killed mid-write leaves: the folder and its owner file, whose OS
        // lock went with the process.
        let left = dir.path().join("settings.json.lock");
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("owner"), "4242\n").unwrap();
        let held = lock(&path, &|_| panic!("a dead holder is not waited for")).unwrap();
        assert!(held.path().is_dir());
        let busy = lock(&path, &|_| {});
        assert!(matches!(busy, Err(super::LockFailure::Busy)), "ours now");
        drop(held);
        assert!(!left.exists(), "released whole");
        lock(&path, &|_| {}).unwrap();
    }

    #[test]
    fn an_ownerless_lock_is_waited_for_until_it_is_stale_then_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        // The reference's lock: an empty folder.
        let left = dir.path().join("settings.json.lock");
        std::fs::create_dir(&left).unwrap();
        let waits = std::cell::Cell::new(0);
        let busy = lock(&path, &|_| waits.set(waits.get() + 1));
        assert!(matches!(busy, Err(super::LockFailure::Busy)));
        assert!(
            waits.get() > super::LOCK_ATTEMPTS,
            "waited longer than for a live holder: {}",
            waits.get()
        );
        // Released by its maker while we wait.
        let released = lock(&path, &|attempt| {
            if attempt == 3 {
                std::fs::remove_dir(&left).unwrap();
            }
        });
        assert!(released.is_ok());
        drop(released);

        // Left behind, with a half-made owner file in it, long enough ago.
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("owner.4242"), "").unwrap();
        let a_minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::open(&left)
            .unwrap()
            .set_modified(a_minute_ago)
            .unwrap();
        let held = lock(&path, &|_| panic!("a stale lock is not waited for")).unwrap();
        assert!(held.path().join("owner").is_file());
        assert!(!held.path().join("owner.4242").exists());
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
