//! Turning the paths a model writes into absolute paths.
//!
//! Models copy paths from prompts (`@src/main.rs`), from terminals (non-breaking spaces),
//! from URLs (`file:///…`) and from macOS Finder (screenshot names with a narrow no-break
//! space before `AM`/`PM`, decomposed accents, curly apostrophes), so resolution forgives
//! each of those.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use crate::ops::FileOps;

const NARROW_NO_BREAK_SPACE: char = '\u{202F}';

fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Strips one leading `@`, turns unicode spaces into ASCII ones, expands `~` and decodes a
/// `file://` URL; the result may still be relative.
pub fn expand_path(input: &str) -> PathBuf {
    let spaced: String = input
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    let normalized = spaced.strip_prefix('@').unwrap_or(&spaced);
    if (normalized == "~" || normalized.starts_with("~/"))
        && let Some(home) = std::env::home_dir()
    {
        let rest = normalized.get(2..).unwrap_or_default();
        return if rest.is_empty() {
            home
        } else {
            home.join(rest)
        };
    }
    if let Some(path) = file_url_to_path(normalized) {
        return path;
    }
    PathBuf::from(normalized)
}

/// `file:///a%20b` → `/a b`; `None` for anything that is not a local file URL.
fn file_url_to_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("file://")?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let path = match rest.strip_prefix("localhost") {
        Some(after) if after.starts_with('/') => after,
        _ if rest.starts_with('/') => rest,
        _ => return None,
    };
    Some(PathBuf::from(OsString::from_vec(percent_decode(path))))
}

fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'%' {
            let hex = text.get(index + 1..index + 3);
            if let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(value);
                index += 3;
                continue;
            }
        }
        out.push(byte);
        index += 1;
    }
    out
}

/// Resolves `.` and `..` without touching the disk (like Node's `path.resolve`).
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// The absolute path `input` names, relative paths taken from `cwd`.
pub fn resolve_to_cwd(input: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(input);
    if expanded.is_absolute() {
        normalize_lexically(&expanded)
    } else {
        normalize_lexically(&cwd.join(expanded))
    }
}

/// `Screenshot 2024-01-01 at 10.00.00 AM.png` with the narrow no-break space macOS puts
/// before `AM`/`PM` (matched case-insensitively, case kept).
fn macos_screenshot_variant(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(position) = rest.find(' ') {
        out.push_str(&rest[..position]);
        let after = &rest[position + 1..];
        let meridiem = after.get(..3).filter(|candidate| {
            let upper = candidate.to_ascii_uppercase();
            upper == "AM." || upper == "PM."
        });
        match meridiem {
            Some(marker) => {
                out.push(NARROW_NO_BREAK_SPACE);
                out.push_str(marker);
                rest = &after[3..];
            }
            None => {
                out.push(' ');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn curly_quote_variant(path: &str) -> String {
    path.replace('\'', "\u{2019}")
}

/// Like [`resolve_to_cwd`], but when that path does not exist tries the macOS spellings
/// (screenshot AM/PM space, NFD, curly apostrophe, NFD + curly); the first that exists
/// wins, otherwise the plain resolution is returned so errors name what the model wrote.
pub async fn resolve_read_path(input: &str, cwd: &Path, ops: &dyn FileOps) -> PathBuf {
    let resolved = resolve_to_cwd(input, cwd);
    if ops.stat(&resolved).await.is_ok() {
        return resolved;
    }
    let Some(text) = resolved.to_str() else {
        return resolved;
    };
    let nfd: String = text.nfd().collect();
    let candidates = [
        macos_screenshot_variant(text),
        nfd.clone(),
        curly_quote_variant(text),
        curly_quote_variant(&nfd),
    ];
    for candidate in candidates {
        if candidate != text && ops.stat(Path::new(&candidate)).await.is_ok() {
            return PathBuf::from(candidate);
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_model_written_paths() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            resolve_to_cwd("src/a.rs", cwd),
            Path::new("/work/project/src/a.rs")
        );
        assert_eq!(
            resolve_to_cwd("@src/a.rs", cwd),
            Path::new("/work/project/src/a.rs")
        );
        assert_eq!(resolve_to_cwd("../x/./y", cwd), Path::new("/work/x/y"));
        assert_eq!(resolve_to_cwd("/abs/p", cwd), Path::new("/abs/p"));
        assert_eq!(
            resolve_to_cwd("my\u{00A0}file.txt", cwd),
            Path::new("/work/project/my file.txt")
        );
        assert_eq!(
            resolve_to_cwd("file:///tmp/a%20b.txt", cwd),
            Path::new("/tmp/a b.txt")
        );
        assert_eq!(
            resolve_to_cwd("file://localhost/tmp/c", cwd),
            Path::new("/tmp/c")
        );
        if let Some(home) = std::env::home_dir() {
            assert_eq!(resolve_to_cwd("~/notes", cwd), home.join("notes"));
            assert_eq!(resolve_to_cwd("~", cwd), home);
        }
    }

    #[test]
    fn screenshot_variant_uses_narrow_space() {
        assert_eq!(
            macos_screenshot_variant("/d/Shot at 1.02.03 pm.png"),
            "/d/Shot at 1.02.03\u{202F}pm.png"
        );
        assert_eq!(macos_screenshot_variant("/d/a b.txt"), "/d/a b.txt");
    }
}
