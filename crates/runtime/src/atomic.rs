//! Files the runtime replaces whole (settings, trust decisions, web-tool keys, the undo
//! index): a temporary file beside the target, fsync, rename over it, fsync of the folder
//! (`atomic-write-file`). A crash at any point leaves the old file or the new one, never a
//! truncated mix, and the rename survives a power cut.

use std::io::Write as _;
use std::path::Path;

/// Replaces `path` with `bytes`; `mode` sets the permissions (0o600 for secrets) before any
/// byte is written.
pub(crate) fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let mut file = atomic_write_file::AtomicWriteFile::open(path)?;
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt as _;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.write_all(bytes)?;
    file.commit()
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
}
