//! Files the runtime replaces whole (settings, trust decisions, web-tool keys, the undo
//! index): a temporary file beside the target, fsync, rename over it, fsync of the folder
//! (`atomic-write-file`). A crash at any point leaves the old file or the new one, never a
//! truncated mix, and the rename survives a power cut.

use std::io::Write as _;
use std::path::Path;

/// Replaces `path` with `bytes`; `mode` sets the permissions (0o600 for secrets) before any
/// byte is written.
pub(crate) fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
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
pub(crate) fn link_target(path: &Path) -> std::path::PathBuf {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::replace;

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
