//! Directory walking for grep and find with ripgrep's own crates: `.gitignore`, `.ignore`
//! and git's exclude files are honoured, hidden files are included, `.git` is skipped.

use std::path::Path;

use globset::GlobBuilder;
use ignore::WalkBuilder;

use crate::error::ToolsError;
use crate::ops::GlobRequest;

/// Whether `dir` or an ancestor holds a `.git` entry.
fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors()
        .any(|ancestor| ancestor.join(".git").exists())
}

/// A sorted, gitignore-aware walker over `root`.
///
/// Inside a repository git's rules apply as git sees them (a nested repository does not
/// inherit its parent's ignores); outside one, `.gitignore` files are honoured anyway, as
/// `fd --no-require-git` does for the reference agent. Entries are sorted by name so
/// results are stable from run to run.
pub(crate) fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .require_git(inside_git_repo(root))
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    builder
}

/// fd-compatible glob search: a pattern without `/` matches file names; one with `/`
/// matches the absolute path (with an implied leading `**/`). Lowercase patterns match
/// case-insensitively (fd's smart case).
fn glob_blocking(request: &GlobRequest) -> Result<Vec<String>, ToolsError> {
    let full_path = request.pattern.contains('/');
    let mut pattern = request.pattern.clone();
    if full_path && !(pattern.starts_with('/') || pattern.starts_with("**/") || pattern == "**") {
        pattern = format!("**/{pattern}");
    }
    let case_insensitive = !request.pattern.chars().any(char::is_uppercase);
    let matcher = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|error| ToolsError::message(format!("Invalid glob pattern: {error}")))?
        .compile_matcher();

    let mut builder = walker(&request.dir);
    builder.add_custom_ignore_filename(".fdignore");
    let mut results = Vec::new();
    for entry in builder.build() {
        if request.cancel.is_cancelled() {
            return Err(ToolsError::Aborted);
        }
        // Unreadable directories are skipped, as fd reports them without failing.
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let matched = if full_path {
            matcher.is_match(entry.path())
        } else {
            matcher.is_match(entry.file_name())
        };
        if !matched {
            continue;
        }
        let mut text = entry.path().to_string_lossy().into_owned();
        if entry.file_type().is_some_and(|kind| kind.is_dir()) {
            text.push('/');
        }
        results.push(text);
        if results.len() >= request.limit {
            break;
        }
    }
    Ok(results)
}

/// [`crate::ops::LocalFileOps::glob`]: the walk runs on a blocking thread.
pub(crate) async fn local_glob(request: GlobRequest) -> Result<Vec<String>, ToolsError> {
    match tokio::task::spawn_blocking(move || glob_blocking(&request)).await {
        Ok(result) => result,
        Err(error) => Err(ToolsError::message(format!("File search failed: {error}"))),
    }
}
