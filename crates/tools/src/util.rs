//! Small helpers shared by the tools: argument parsing and Node-compatible error formatting.

use std::io;
use std::path::Path;

use knightcode_agent::tool::ToolError;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserialises validated tool arguments; a mismatch is reported to the model.
pub(crate) fn parse_args<T: DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments)
        .map_err(|error| ToolError::failed(format!("Invalid arguments: {error}")))
}

/// Length in UTF-16 code units, the unit JavaScript's `string.length` counts; size limits
/// taken from the reference agent are expressed in it.
pub(crate) fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The errno name of an OS error (`ENOENT`), as Node reports it in `error.code`.
pub(crate) fn errno_name(error: &io::Error) -> Option<String> {
    error
        .raw_os_error()
        .map(|code| format!("{:?}", nix::errno::Errno::from_raw(code)))
}

/// Node's wording for common errno values (libuv's messages), so error texts match what
/// the reference agent shows the model.
fn errno_description(code: i32) -> String {
    use nix::errno::Errno;
    let errno = Errno::from_raw(code);
    let known = match errno {
        Errno::ENOENT => "no such file or directory",
        Errno::EACCES => "permission denied",
        Errno::EISDIR => "illegal operation on a directory",
        Errno::ENOTDIR => "not a directory",
        Errno::EPERM => "operation not permitted",
        Errno::ELOOP => "too many symbolic links encountered",
        Errno::ENAMETOOLONG => "name too long",
        Errno::EROFS => "read-only file system",
        Errno::EEXIST => "file already exists",
        Errno::ENOSPC => "no space left on device",
        Errno::EMFILE => "too many open files",
        Errno::EIO => "i/o error",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    let mut description = errno.desc().to_owned();
    if let Some(first) = description.get(..1) {
        let lower = first.to_ascii_lowercase();
        description.replace_range(..1, &lower);
    }
    description
}

/// An I/O error in Node's format: `ENOENT: no such file or directory, access '/p'`.
/// Errors that carry no errno (from custom operations) keep their own text.
pub(crate) fn node_error(error: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    match (error.raw_os_error(), errno_name(error)) {
        (Some(code), Some(name)) => {
            let description = errno_description(code);
            match path {
                Some(path) => format!("{name}: {description}, {syscall} '{}'", path.display()),
                None => format!("{name}: {description}, {syscall}"),
            }
        }
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_read_like_node() {
        let error = io::Error::from_raw_os_error(2);
        assert_eq!(
            node_error(&error, "access", Some(Path::new("/x"))),
            "ENOENT: no such file or directory, access '/x'"
        );
        assert_eq!(errno_name(&error).as_deref(), Some("ENOENT"));
        let custom = io::Error::other("remote said no");
        assert_eq!(node_error(&custom, "open", None), "remote said no");
    }
}
