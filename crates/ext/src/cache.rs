//! The load cache: what loading a file produced (stripped JavaScript, its position map and
//! the QuickJS bytecode of the runner's wrapper), keyed by a hash of what it was made
//! from, so a warm start neither strips nor parses.
//!
//! * Key: xxh3-128 of the build id, the transform's identity, the file's path (the bytecode
//!   names it in stacks) and its bytes. Content, not mtime and size: hashing a 20 KB file
//!   costs microseconds, and mtimes mislead after checkouts.
//! * Build id: xxh3-128 of our version, the target, and the running executable's path,
//!   size and modification time, so every build has its own entries (bytecode is only
//!   valid for the QuickJS that wrote it).
//! * Entry: a header (magic, format, key, checksum of the rest), then flags, the code, the
//!   positions and the sealed bytecode (`bytecode.rs` checks its own header again before
//!   QuickJS reads it). Anything that does not check out is a miss: the file is compiled.
//! * Where: `$KNIGHTCODE_EXT_CACHE_DIR`, else `$XDG_CACHE_HOME/knightcode/ext/`, else
//!   `~/.cache/knightcode/ext/`; off with `KNIGHTCODE_EXT_CACHE=0`. The folder is made
//!   private (0700) and not used when others can write to it. Entries are written to a
//!   temporary file and renamed into place; past [`CAP`] the least recently used go
//!   (checked at a load's first write).

use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

/// Everything the cache holds, at most (entries are a few KB to a few hundred KB).
const CAP: u64 = 256 << 20;
/// What the transform and the runner's wrappers are; changes when either does.
const TRANSFORM: &str = "oxc-0.146 strip+module-runner, kc wrappers v1";
const MAGIC: &[u8; 8] = b"KCEXTC1\0";
const FORMAT: u32 = 1;
/// magic, format, key, checksum.
const HEADER: usize = 8 + 4 + 16 + 16;

pub(crate) type Key = [u8; 16];

/// What loading a file produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Entry {
    pub module: bool,
    pub tla: bool,
    pub code: String,
    /// `transpile::PositionMap::to_bytes`.
    pub positions: Vec<u8>,
    /// `bytecode::seal`ed bytecode of the wrapper.
    pub bytecode: Vec<u8>,
}

/// The cache of one process (or none: `dir` is `None` when it is off or unusable).
#[derive(Debug, Clone, Default)]
pub(crate) struct Cache {
    dir: Option<PathBuf>,
    build: [u8; 16],
    /// Whether this cache has looked at the folder's size yet: once per load is enough,
    /// and a cold start writes many entries.
    pruned: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

fn hash_parts(parts: &[&[u8]]) -> [u8; 16] {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for part in parts {
        // Lengths first, so no two lists of parts hash the same bytes.
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.digest128().to_le_bytes()
}

/// This executable's identity; `None` when it cannot be read (then nothing is cached).
fn build_id() -> Option<[u8; 16]> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(hash_parts(&[
        env!("CARGO_PKG_VERSION").as_bytes(),
        std::env::consts::ARCH.as_bytes(),
        std::env::consts::OS.as_bytes(),
        &[usize::BITS as u8, u8::from(cfg!(target_endian = "little"))],
        exe.as_os_str().as_encoded_bytes(),
        &meta.len().to_le_bytes(),
        &modified.to_le_bytes(),
    ]))
}

/// The folder the environment names, or none when the cache is off.
pub(crate) fn dir_from_env() -> Option<PathBuf> {
    if std::env::var_os("KNIGHTCODE_EXT_CACHE").is_some_and(|v| v == "0") {
        return None;
    }
    if let Some(dir) = std::env::var_os("KNIGHTCODE_EXT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|home| home.join(".cache")))?;
    Some(base.join("knightcode").join("ext"))
}

/// Makes `dir` (private) and says whether it is safe to read bytecode from: nobody but
/// its owner may write there.
fn usable(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        use std::os::unix::fs::PermissionsExt as _;
        if !dir.is_dir() {
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
        std::fs::metadata(dir).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o022 == 0)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).is_ok()
    }
}

impl Cache {
    /// A cache in `dir` (`None`: off) for this build.
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        match (dir, build_id()) {
            (Some(dir), Some(build)) if usable(&dir) => Self {
                dir: Some(dir),
                build,
                pruned: std::sync::Arc::default(),
            },
            _ => Self::default(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.dir.is_some()
    }

    pub(crate) fn build(&self) -> &[u8; 16] {
        &self.build
    }

    pub(crate) fn key(&self, name: &str, source: &[u8]) -> Key {
        hash_parts(&[&self.build, TRANSFORM.as_bytes(), name.as_bytes(), source])
    }

    fn path(&self, key: &Key) -> Option<PathBuf> {
        let name: String = key.iter().map(|b| format!("{b:02x}")).collect();
        Some(self.dir.as_ref()?.join(name))
    }

    /// The entry stored under `key`, if there is one and it is whole.
    pub(crate) fn get(&self, key: &Key) -> Option<Entry> {
        let path = self.path(key)?;
        let bytes = std::fs::read(&path).ok()?;
        let entry = decode(&bytes, key)?;
        // Least recently *used* goes first when the cache is full.
        if let Ok(file) = std::fs::File::open(&path) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        Some(entry)
    }

    /// Stores `entry` under `key` (best effort: a cache that cannot be written is a cache
    /// that misses).
    pub(crate) fn put(&self, key: &Key, entry: &Entry) {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key)) else {
            return;
        };
        // Process and thread in the name: two hosts of one process may write one key at
        // once, and each must rename a whole file of its own.
        let temp = dir.join(format!(
            ".tmp-{}-{:?}-{:x}",
            std::process::id(),
            std::thread::current().id(),
            u128::from_le_bytes(*key)
        ));
        let written = std::fs::File::create(&temp)
            .and_then(|mut file| file.write_all(&encode(entry, key)))
            .and_then(|()| std::fs::rename(&temp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
            return;
        }
        if !self.pruned.swap(true, std::sync::atomic::Ordering::Relaxed) {
            prune(dir, CAP);
        }
    }
}

fn encode(entry: &Entry, key: &Key) -> Vec<u8> {
    let mut body =
        Vec::with_capacity(16 + entry.code.len() + entry.positions.len() + entry.bytecode.len());
    body.push(u8::from(entry.module) | (u8::from(entry.tla) << 1));
    for part in [entry.code.as_bytes(), &entry.positions] {
        body.extend_from_slice(&(part.len() as u64).to_le_bytes());
        body.extend_from_slice(part);
    }
    body.extend_from_slice(&entry.bytecode);
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

fn decode(bytes: &[u8], key: &Key) -> Option<Entry> {
    let (header, body) = bytes.split_at_checked(HEADER)?;
    let (magic, rest) = header.split_at(8);
    let (format, rest) = rest.split_at(4);
    let (stored_key, sum) = rest.split_at(16);
    if magic != MAGIC
        || format != FORMAT.to_le_bytes()
        || stored_key != key
        || sum != xxhash_rust::xxh3::xxh3_128(body).to_le_bytes()
    {
        return None;
    }
    let (&flags, mut rest) = body.split_first()?;
    let mut part = || -> Option<&[u8]> {
        let (len, tail) = rest.split_at_checked(8)?;
        let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
        let (part, tail) = tail.split_at_checked(len)?;
        rest = tail;
        Some(part)
    };
    let code = String::from_utf8(part()?.to_vec()).ok()?;
    let positions = part()?.to_vec();
    Some(Entry {
        module: flags & 1 != 0,
        tla: flags & 2 != 0,
        code,
        positions,
        bytecode: rest.to_vec(),
    })
}

/// Deletes the least recently used entries (and stale temporary files) while the folder
/// holds more than `cap` bytes, down to three quarters of it.
fn prune(dir: &Path, cap: u64) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = listing
        .filter_map(Result::ok)
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= cap {
        return;
    }
    entries.sort();
    for (_, size, path) in entries {
        if total <= cap / 4 * 3 {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            module: true,
            tla: false,
            code: "export default 1;".to_owned(),
            positions: vec![1, 2, 3, 4],
            bytecode: vec![9; 40],
        }
    }

    #[test]
    fn entries_round_trip_and_damage_is_a_miss() {
        let key = [3u8; 16];
        let bytes = encode(&entry(), &key);
        assert_eq!(decode(&bytes, &key), Some(entry()));
        assert_eq!(decode(&bytes, &[4u8; 16]), None, "another key's entry");
        for cut in [0, 5, HEADER, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut], &key), None, "truncated at {cut}");
        }
        for at in [0, 9, HEADER + 3, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            assert_eq!(decode(&damaged, &key), None, "byte {at} flipped");
        }
    }

    #[test]
    fn stored_entries_are_found_and_the_folder_stays_under_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(Some(dir.path().join("ext")));
        assert!(cache.enabled());
        let key = cache.key("/x/a.ts", b"source");
        assert_ne!(
            key,
            cache.key("/x/b.ts", b"source"),
            "the path is part of the key"
        );
        assert_eq!(cache.get(&key), None);
        cache.put(&key, &entry());
        assert_eq!(cache.get(&key), Some(entry()));
        let folder = dir.path().join("ext");
        for n in 0..8u8 {
            std::fs::write(folder.join(format!("old{n}")), vec![0u8; 1000]).unwrap();
        }
        prune(&folder, 4000);
        let left: u64 = std::fs::read_dir(&folder)
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum();
        assert!(left <= 3000, "{left} bytes left");
    }

    #[test]
    fn a_folder_others_can_write_to_is_not_used() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let dir = tempfile::tempdir().unwrap();
            let open = dir.path().join("open");
            std::fs::create_dir(&open).unwrap();
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
            assert!(!Cache::new(Some(open)).enabled());
            assert!(!Cache::new(None).enabled());
        }
    }
}
