//! Folder listing and path helpers shared by the skill and template scans.

use std::path::Path;
use std::path::PathBuf;

/// One folder entry with symlinks followed; broken links are left out.
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) is_symlink: bool,
    pub(crate) is_dir: bool,
    pub(crate) is_file: bool,
}

/// The entries of `dir` sorted by name bytes (the order Node's `readdirSync` gives), or none
/// when it cannot be read.
pub(crate) fn entries(dir: &Path) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Entry> = read
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let file_type = entry.file_type().ok()?;
            let path = entry.path();
            let (is_dir, is_file) = if file_type.is_symlink() {
                let meta = std::fs::metadata(&path).ok()?;
                (meta.is_dir(), meta.is_file())
            } else {
                (file_type.is_dir(), file_type.is_file())
            };
            Some(Entry {
                name: entry.file_name().to_string_lossy().into_owned(),
                path,
                is_symlink: file_type.is_symlink(),
                is_dir,
                is_file,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    out
}

/// `~`, `~/x` and `~x` against `home`, relative paths against `base`; surrounding white
/// space trimmed.
pub(crate) fn resolve(input: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let trimmed = input.trim();
    let home_path = |rest: &str| {
        home.map(|h| {
            if rest.is_empty() {
                h.to_path_buf()
            } else {
                h.join(rest)
            }
        })
    };
    let expanded = if trimmed == "~" {
        home_path("")
    } else if let Some(rest) = trimmed.strip_prefix("~/") {
        home_path(rest)
    } else if let Some(rest) = trimmed.strip_prefix('~') {
        home_path(rest)
    } else {
        None
    };
    let path = expanded.unwrap_or_else(|| PathBuf::from(trimmed));
    if path.is_absolute() {
        normalize(&path)
    } else {
        normalize(&base.join(path))
    }
}

/// `.` and `..` folded lexically, as Node's `path.resolve` does.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The real path (symlinks resolved), or the path itself when it cannot be resolved.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A file a scan found, with its real path: the scanned folder's real path joined with the
/// names below it, resolved again only below a symlink (resolving every file's real path
/// costs a `readlink` per component).
#[derive(Debug, Clone)]
pub struct Scanned {
    pub path: PathBuf,
    pub real: PathBuf,
}

impl Scanned {
    /// A file named directly (a settings entry, a flag).
    pub(crate) fn resolve(path: PathBuf) -> Self {
        let real = canonical(&path);
        Self { path, real }
    }
}

/// A file's text, read without the size query `std::fs::read_to_string` makes first (small
/// files, read by the hundred at start-up).
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut text = String::with_capacity(4096);
    // Through `Take`: `File`'s own `read_to_string` asks for the size first.
    std::fs::File::open(path)?
        .take(u64::MAX)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// The real path of an entry in a folder whose real path is `real_dir`.
pub(crate) fn real_of(entry: &Entry, real_dir: &Path) -> PathBuf {
    if entry.is_symlink {
        canonical(&entry.path)
    } else {
        real_dir.join(&entry.name)
    }
}
