//! Where sessions live: the default per-cwd directory and file names.

use std::path::Path;
use std::path::PathBuf;

use crate::ids::file_timestamp;

/// The directory name for a working directory: one leading separator removed, every `/`, `\`
/// and `:` replaced by `-`, wrapped in `--…--` (`/home/u/proj` -> `--home-u-proj--`).
pub fn encode_cwd(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let trimmed = text
        .strip_prefix('/')
        .or_else(|| text.strip_prefix('\\'))
        .unwrap_or(&text);
    let encoded: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{encoded}--")
}

/// `<agentDir>/sessions/--<cwd>--/`.
pub fn default_session_dir(agent_dir: &Path, cwd: &Path) -> PathBuf {
    agent_dir.join("sessions").join(encode_cwd(cwd))
}

/// `<timestamp>_<sessionId>.jsonl`.
pub fn session_file_name(iso_timestamp: &str, session_id: &str) -> String {
    format!("{}_{session_id}.jsonl", file_timestamp(iso_timestamp))
}

/// Where sessions are stored for one run, and whether listings must filter by header `cwd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLocation {
    pub dir: PathBuf,
    /// A custom directory is flat and shared by projects: listings filter on the header cwd.
    pub filter_by_cwd: bool,
}

/// Resolves the session directory: `--session-dir` > `KNIGHTCODE_CODING_AGENT_SESSION_DIR` >
/// setting `sessionDir` > `<agentDir>/sessions/--<cwd>--/`. Relative paths resolve from
/// `cwd`; `~` from `home`.
pub fn resolve_session_location(
    cli_dir: Option<&str>,
    env_dir: Option<&str>,
    setting_dir: Option<&str>,
    agent_dir: &Path,
    cwd: &Path,
    home: Option<&Path>,
) -> SessionLocation {
    let chosen = [cli_dir, env_dir, setting_dir]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|dir| !dir.is_empty());
    match chosen {
        Some(dir) => SessionLocation {
            dir: expand_path(dir, cwd, home),
            filter_by_cwd: true,
        },
        None => SessionLocation {
            dir: default_session_dir(agent_dir, cwd),
            filter_by_cwd: false,
        },
    }
}

/// Expands `~` and resolves a relative path against `base`.
pub fn expand_path(path: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let expanded = match (path.strip_prefix("~"), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    };
    if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding() {
        assert_eq!(encode_cwd(Path::new("/home/u/proj")), "--home-u-proj--");
        assert_eq!(encode_cwd(Path::new("C:\\work\\x")), "--C--work-x--");
        assert_eq!(encode_cwd(Path::new("/")), "----");
    }

    #[test]
    fn precedence() {
        let agent = Path::new("/a");
        let cwd = Path::new("/w/p");
        let home = Some(Path::new("/h"));
        let loc =
            resolve_session_location(Some("cli"), Some("/env"), Some("/set"), agent, cwd, home);
        assert_eq!(loc.dir, PathBuf::from("/w/p/cli"));
        assert!(loc.filter_by_cwd);
        let loc = resolve_session_location(None, Some("~/env"), Some("/set"), agent, cwd, home);
        assert_eq!(loc.dir, PathBuf::from("/h/env"));
        let loc = resolve_session_location(None, None, Some("/set"), agent, cwd, home);
        assert_eq!(loc.dir, PathBuf::from("/set"));
        let loc = resolve_session_location(None, Some(""), None, agent, cwd, home);
        assert_eq!(loc.dir, PathBuf::from("/a/sessions/--w-p--"));
        assert!(!loc.filter_by_cwd);
    }

    #[test]
    fn file_names() {
        assert_eq!(
            session_file_name("2024-12-03T14:00:00.000Z", "abc"),
            "2024-12-03T14-00-00-000Z_abc.jsonl"
        );
    }
}
