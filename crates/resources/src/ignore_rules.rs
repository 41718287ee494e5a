//! `.gitignore`, `.ignore` and `.fdignore` files met while scanning a resource folder. As in
//! the reference, each file's patterns are rewritten relative to the scanned root (a file in
//! `sub/` turns `x` into `sub/x`), and all of them go into one matcher for the whole scan.

use std::path::Path;
use std::path::PathBuf;

use ignore::gitignore::Gitignore;
use ignore::gitignore::GitignoreBuilder;

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The patterns of one scan.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Option<Gitignore>,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            lines: Vec::new(),
            matcher: None,
        }
    }

    /// Adds the ignore files of `dir` (a folder at or below the root) among its `names`
    /// (the folder was listed already: no file is opened that is not there).
    pub(crate) fn add_dir<'a>(&mut self, dir: &Path, names: impl IntoIterator<Item = &'a str>) {
        let present: Vec<&str> = names
            .into_iter()
            .filter(|n| IGNORE_FILE_NAMES.contains(n))
            .collect();
        if present.is_empty() {
            return;
        }
        let prefix = match dir.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", posix(rel)),
            _ => String::new(),
        };
        let mut added = false;
        for name in IGNORE_FILE_NAMES.iter().filter(|n| present.contains(n)) {
            let Ok(content) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in content.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if let Some(pattern) = prefixed(line, &prefix) {
                    self.lines.push(pattern);
                    added = true;
                }
            }
        }
        if added {
            let mut builder = GitignoreBuilder::new(&self.root);
            for line in &self.lines {
                // A pattern the matcher cannot read is skipped, as a bad line in a
                // .gitignore is.
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().ok();
        }
    }

    /// Whether `path` (below the root) is ignored, by itself or through a parent folder.
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        match &self.matcher {
            Some(matcher) if path.starts_with(&self.root) && path != self.root => matcher
                .matched_path_or_any_parents(path, is_dir)
                .is_ignore(),
            _ => false,
        }
    }
}

/// One ignore-file line made relative to the root: blank lines and comments drop out, `!`
/// stays in front, a leading `/` anchors at the file's own folder.
fn prefixed(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let (negated, pattern) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        // `\!x` stays escaped: the matcher reads it as a literal `!`.
        None => (false, line),
    };
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    // The matcher anchors a pattern with a slash; the prefix carries the file's folder.
    let anchored = if prefix.is_empty() {
        pattern.to_owned()
    } else {
        format!("/{prefix}{pattern}")
    };
    Some(if negated {
        format!("!{anchored}")
    } else {
        anchored
    })
}

pub(crate) fn posix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
