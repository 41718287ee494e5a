//! Session ownership: one writing process per canonical session file.
//!
//! # Lock file format
//!
//! Beside the session, `<session file name>.lock` holds one JSON object:
//!
//! ```json
//! {"version":1,"owner":"<uuid>","pid":1234,"host":"machine","session":"/canonical/path.jsonl",
//!  "acquiredAt":1733234400000,"refreshedAt":1733234410000,"ttlMs":30000}
//! ```
//!
//! * Every read or change of the record happens under an exclusive `flock` of the lock file,
//!   held for microseconds. The file is deleted on release; a waiter that then holds a lock on
//!   the deleted inode notices (inode differs from the path's) and retries.
//! * On the owner's own machine (same host name and boot id), the lock is held exactly as
//!   long as the owning process lives: a pid that no longer runs, or runs a different
//!   process (another start time), is taken over at once; a live owner keeps it however
//!   long it idles or is stopped (Ctrl+Z).
//! * Another machine can only see the file over a network filesystem and cannot check the
//!   pid; for it the owner refreshes `refreshedAt` every `refresh_interval` from a background
//!   thread, and the lock may be taken over once `refreshedAt + ttlMs` has passed (a stalled
//!   or unreachable owner). On a local filesystem no other machine can see the file, so
//!   there is no refresher and an idle session wakes nothing.
//! * Before every write the owner re-reads the record; if another owner took over, the write is
//!   refused (`OwnershipLost`) and the new owner's lock is left alone.
//! * Inside one process, managers of the same file share one counted lock through
//!   [`Ownership`]; the last handle dropped releases it.
//!
//! Symlinked paths resolve to the same canonical file and so to the same lock. A session file
//! with several hard links is refused: a second name would get a second lock.

use std::collections::HashMap;
use std::fs::File;
use std::fs::OpenOptions;
use std::io::Read;
use std::io::Seek;
use std::io::SeekFrom;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::Weak;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

use serde::Deserialize;
use serde::Serialize;

use crate::error::Result;
use crate::error::SessionError;

/// Lock timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockOptions {
    /// How long a lock stays valid without a refresh.
    pub ttl: Duration,
    /// How often the owner refreshes it.
    pub refresh_interval: Duration,
}

impl Default for LockOptions {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(30),
            refresh_interval: Duration::from_secs(10),
        }
    }
}

/// The JSON record in a lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockRecord {
    pub version: u32,
    pub owner: String,
    pub pid: u32,
    pub host: String,
    pub session: String,
    pub acquired_at: u64,
    pub refreshed_at: u64,
    pub ttl_ms: u64,
    /// The kernel's boot id: with `host`, tells this machine from another of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    /// The owner's start time (clock ticks after boot), so a reused pid is not mistaken for
    /// the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<u64>,
}

impl LockRecord {
    fn expired(&self, now: u64) -> bool {
        now >= self.refreshed_at.saturating_add(self.ttl_ms)
    }

    /// Whether the record still holds the lock, as seen from `machine` at `now`.
    fn held(&self, machine: &Machine, now: u64) -> bool {
        let same_host = self.host == machine.host;
        if same_host && self.boot_id.is_some() && self.boot_id == machine.boot_id {
            return process_start(self.pid)
                .is_some_and(|start| self.pid_start.is_none_or(|recorded| recorded == start));
        }
        // A record without a boot id (an older version, or a machine without one): the
        // owner refreshes it; a pid known to be gone on this host frees it at once.
        let crashed = same_host && self.boot_id.is_none() && process_is_gone(self.pid);
        !self.expired(now) && !crashed
    }
}

/// What identifies this machine in lock records.
struct Machine {
    host: String,
    boot_id: Option<String>,
}

impl Machine {
    fn this() -> Self {
        Self {
            host: hostname(),
            boot_id: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|id| id.trim().to_owned())
                .filter(|id| !id.is_empty()),
        }
    }
}

/// When process `pid` started (clock ticks after boot), or `None` when it does not run.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let fields = stat.rsplit_once(')')?.1;
    // Field 22 of the file, the 20th after the name: state is field 3.
    fields.split_whitespace().nth(19)?.parse().ok()
}

/// Whether another machine could open `path`: network and cluster filesystems, FUSE (sshfs,
/// virtiofs) and VM shares. Unknown filesystems count as shared.
fn may_be_shared(path: &Path) -> bool {
    const LOCAL: &[u32] = &[
        0xEF53,      // ext2/3/4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0x8584_58F6, // ramfs
        0x794C_7630, // overlayfs
        0x2FC1_2FC1, // zfs
        0xF2F5_2010, // f2fs
        0xCA45_1A4E, // bcachefs
        0x5265_4973, // reiserfs
        0x3153_464A, // jfs
        0x4D44,      // vfat
        0x2011_BAB0, // exfat
        0x5346_544E, // ntfs
        0x7366_746E, // ntfs3
    ];
    match rustix::fs::statfs(path) {
        // The magic is a signed or unsigned word depending on the target.
        #[allow(
            clippy::unnecessary_cast,
            clippy::cast_sign_loss,
            clippy::cast_possible_truncation
        )]
        Ok(stat) => !LOCAL.contains(&(stat.f_type as u32)),
        Err(_) => true,
    }
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}

/// Whether a pid on this host certainly no longer runs. Unknown -> false (rely on expiry).
fn process_is_gone(pid: u32) -> bool {
    let proc_root = Path::new("/proc");
    proc_root.join("self").exists() && !proc_root.join(pid.to_string()).exists()
}

/// The canonical session path: symlinks resolved, parent directory canonical.
pub fn canonical_session_path(path: &Path) -> Result<PathBuf> {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return Ok(canonical);
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| SessionError::NotASession {
        path: path.to_owned(),
    })?;
    let parent = std::fs::canonicalize(parent).map_err(SessionError::io("resolve", parent))?;
    Ok(parent.join(name))
}

/// Another live process that owns a session file (from its lock record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOwner {
    pub pid: u32,
    pub host: String,
}

/// Who owns the session file at `path`, when another live process does. Only reads the
/// lock file (no flock, nothing taken or repaired): for pickers that mark sessions in use
/// and ask before opening one. A record caught half-written reads as no owner; opening the
/// file still checks properly.
pub fn other_owner(path: &Path) -> Option<SessionOwner> {
    let canonical = canonical_session_path(path).ok()?;
    let text = std::fs::read_to_string(lock_path_for(&canonical)).ok()?;
    let record: LockRecord = serde_json::from_str(&text).ok()?;
    let machine = Machine::this();
    if record.pid == std::process::id() && record.host == machine.host {
        return None;
    }
    record.held(&machine, now_millis()).then_some(SessionOwner {
        pid: record.pid,
        host: record.host,
    })
}

fn lock_path_for(canonical: &Path) -> PathBuf {
    let mut name = canonical.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    canonical.with_file_name(name)
}

/// An open lock file with its flock held; dropped -> unlocked.
struct LockedFile {
    file: File,
}

impl LockedFile {
    /// Opens (creating) and flocks the lock file, retrying if it was deleted meanwhile.
    fn open(lock_path: &Path) -> Result<Self> {
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(lock_path)
                .map_err(SessionError::io("open lock file", lock_path))?;
            file.lock().map_err(SessionError::io("lock", lock_path))?;
            let held = file
                .metadata()
                .map_err(SessionError::io("inspect", lock_path))?;
            match std::fs::metadata(lock_path) {
                Ok(current) if current.ino() == held.ino() && current.dev() == held.dev() => {
                    return Ok(Self { file });
                }
                // Released (deleted) while we waited: lock the new file instead.
                _ => continue,
            }
        }
    }

    fn read_record(&mut self) -> Option<LockRecord> {
        let mut text = String::new();
        self.file.seek(SeekFrom::Start(0)).ok()?;
        self.file.read_to_string(&mut text).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn write_record(&mut self, record: &LockRecord, lock_path: &Path) -> Result<()> {
        let text = serde_json::to_string(record)?;
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)))
            .and_then(|_| self.file.write_all(text.as_bytes()))
            .map_err(SessionError::io("write lock file", lock_path))
    }
}

impl Drop for LockedFile {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Ownership of one session file by this process.
#[derive(Debug)]
pub struct SessionLock {
    canonical: PathBuf,
    lock_path: PathBuf,
    owner: String,
    ttl_ms: u64,
    state: Arc<Mutex<LockState>>,
    stop_refresh: Option<mpsc::Sender<()>>,
    refresher: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct LockState {
    record: LockRecord,
    lost: bool,
}

impl SessionLock {
    fn acquire(canonical: PathBuf, options: LockOptions) -> Result<Self> {
        let lock_path = lock_path_for(&canonical);
        let mut locked = LockedFile::open(&lock_path)?;
        let now = now_millis();
        let machine = Machine::this();
        if let Some(existing) = locked.read_record()
            && existing.held(&machine, now)
        {
            return Err(SessionError::Locked {
                path: canonical,
                pid: existing.pid,
                host: existing.host,
                age_secs: now.saturating_sub(existing.refreshed_at) / 1000,
            });
        }
        let pid = std::process::id();
        let record = LockRecord {
            version: 1,
            owner: uuid::Uuid::new_v4().to_string(),
            pid,
            host: machine.host,
            session: canonical.to_string_lossy().into_owned(),
            acquired_at: now,
            refreshed_at: now,
            ttl_ms: options.ttl.as_millis() as u64,
            boot_id: machine.boot_id,
            pid_start: process_start(pid),
        };
        locked.write_record(&record, &lock_path)?;
        drop(locked);
        let owner = record.owner.clone();
        let state = Arc::new(Mutex::new(LockState {
            record,
            lost: false,
        }));
        let (stop_refresh, stop_rx) = mpsc::channel();
        let refresher = if !may_be_shared(&lock_path) {
            None
        } else {
            let state = Arc::clone(&state);
            let lock_path = lock_path.clone();
            std::thread::Builder::new()
                .name("knightcode-session-lock".to_owned())
                .spawn(move || {
                    // The channel doubles as the timer: a message or a hang-up ends the loop.
                    while let Err(mpsc::RecvTimeoutError::Timeout) =
                        stop_rx.recv_timeout(options.refresh_interval)
                    {
                        if refresh(&state, &lock_path, 0).is_err() {
                            break;
                        }
                    }
                })
                .ok()
        };
        Ok(Self {
            canonical,
            lock_path,
            owner,
            ttl_ms: options.ttl.as_millis() as u64,
            state,
            stop_refresh: Some(stop_refresh),
            refresher,
        })
    }

    /// Confirms this process still owns the session; refreshes the record while at it.
    pub fn verify(&self) -> Result<()> {
        let min_age_ms = self.ttl_ms / 3;
        refresh(&self.state, &self.lock_path, min_age_ms).map_err(|_| SessionError::OwnershipLost {
            path: self.canonical.clone(),
        })
    }

    pub fn canonical_path(&self) -> &Path {
        &self.canonical
    }

    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    pub fn owner_id(&self) -> &str {
        &self.owner
    }
}

/// Re-reads the record under the flock; if it is still ours and at least `min_age_ms` old,
/// bumps `refreshedAt`. Writers pass a third of the TTL, so an append usually costs one read
/// of the lock file and no write; the refresher thread passes 0.
fn refresh(
    state: &Mutex<LockState>,
    lock_path: &Path,
    min_age_ms: u64,
) -> std::result::Result<(), ()> {
    let mut state = state.lock().map_err(|_| ())?;
    if state.lost {
        return Err(());
    }
    // A missing lock file means someone removed it: we cannot prove ownership any more.
    if !lock_path.exists() {
        state.lost = true;
        return Err(());
    }
    let Ok(mut locked) = LockedFile::open(lock_path) else {
        return Err(());
    };
    match locked.read_record() {
        Some(current) if current.owner == state.record.owner => {
            let now = now_millis();
            if now.saturating_sub(current.refreshed_at) < min_age_ms {
                return Ok(());
            }
            state.record.refreshed_at = now;
            let record = state.record.clone();
            locked.write_record(&record, lock_path).map_err(|_| ())
        }
        _ => {
            state.lost = true;
            Err(())
        }
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        if let Some(stop) = self.stop_refresh.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.refresher.take() {
            let _ = handle.join();
        }
        let lost = self.state.lock().map(|s| s.lost).unwrap_or(true);
        if lost || !self.lock_path.exists() {
            return;
        }
        if let Ok(mut locked) = LockedFile::open(&self.lock_path) {
            // Only ever remove our own record, never a new owner's.
            if locked.read_record().is_some_and(|r| r.owner == self.owner) {
                let _ = std::fs::remove_file(&self.lock_path);
            }
        }
    }
}

/// Counted ownership inside one process: managers of the same canonical file share a lock.
#[derive(Debug, Clone, Default)]
pub struct Ownership {
    options: LockOptions,
    held: Arc<Mutex<HashMap<PathBuf, Weak<SessionLock>>>>,
}

impl Ownership {
    pub fn new(options: LockOptions) -> Self {
        Self {
            options,
            held: Arc::default(),
        }
    }

    /// Takes (or shares) ownership of a session file. Refuses hard-linked files.
    pub fn acquire(&self, path: &Path) -> Result<Arc<SessionLock>> {
        let canonical = canonical_session_path(path)?;
        if let Ok(meta) = std::fs::metadata(&canonical) {
            // A folder has several links too; say what it is instead.
            if meta.is_dir() {
                return Err(SessionError::IsADirectory { path: canonical });
            }
            if meta.nlink() > 1 {
                return Err(SessionError::HardLinked { path: canonical });
            }
        }
        let mut held = self.held.lock().map_err(|_| SessionError::OwnershipLost {
            path: canonical.clone(),
        })?;
        if let Some(existing) = held.get(&canonical).and_then(Weak::upgrade) {
            return Ok(existing);
        }
        let lock = Arc::new(SessionLock::acquire(canonical.clone(), self.options)?);
        held.retain(|_, weak| weak.strong_count() > 0);
        held.insert(canonical, Arc::downgrade(&lock));
        Ok(lock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_identify_processes() {
        let own = process_start(std::process::id());
        assert!(own.is_some());
        assert_eq!(process_start(std::process::id()), own, "stable");
        // pid 0 never has a /proc entry.
        assert_eq!(process_start(0), None);
    }

    #[test]
    fn pseudo_filesystems_count_as_shared_and_a_missing_path_too() {
        assert!(may_be_shared(Path::new("/proc")));
        assert!(may_be_shared(Path::new("/no/such/dir")));
    }
}
