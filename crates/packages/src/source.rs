//! Package sources as the reference parses them (`npm:`, `git:` and protocol URLs with
//! `@ref`, local paths) and the identity that makes two spellings one package.

use std::path::Path;
use std::path::PathBuf;

/// A parsed package source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Npm(NpmSource),
    Git(GitSource),
    /// A folder or a file, as written (relative to the settings file's folder once stored).
    Local(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSource {
    /// What `npm install` gets: `@scope/pkg@1.2.3`.
    pub spec: String,
    /// The package name: `@scope/pkg`.
    pub name: String,
    /// Whether the spec names a version (pinned: `update` does not move it).
    pub pinned: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// What `git clone` gets (shorthands become `https://`).
    pub repo: String,
    pub host: String,
    /// `user/repo`, without `.git`.
    pub path: String,
    pub git_ref: Option<String>,
}

/// Parses `source` like the reference: `npm:` first, then local paths, then git forms
/// (`git:` accepts shorthands, otherwise only `https?://`, `ssh://`, `git://` URLs), and
/// anything else is a local path.
pub fn parse(source: &str) -> Source {
    let trimmed = source.trim();
    if let Some(spec) = trimmed.strip_prefix("npm:") {
        let spec = spec.trim();
        let (name, version) = split_npm_spec(spec);
        return Source::Npm(NpmSource {
            spec: spec.to_owned(),
            name: name.to_owned(),
            pinned: version.is_some(),
        });
    }
    if is_local_path(trimmed) {
        return Source::Local(trimmed.to_owned());
    }
    match parse_git(trimmed) {
        Some(git) => Source::Git(git),
        None => Source::Local(trimmed.to_owned()),
    }
}

fn is_local_path(value: &str) -> bool {
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|prefix| value.starts_with(prefix))
}

/// `@scope/pkg@1.2.3` -> (`@scope/pkg`, `1.2.3`); the version is what follows the first `@`
/// after the name.
fn split_npm_spec(spec: &str) -> (&str, Option<&str>) {
    let search_from = usize::from(spec.starts_with('@'));
    match spec[search_from..].find('@') {
        Some(at) => {
            let at = at + search_from;
            let version = &spec[at + 1..];
            (&spec[..at], (!version.is_empty()).then_some(version))
        }
        None => (spec, None),
    }
}

/// Splits a trailing `@ref` off the repository path (not off the `git@` user).
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_path = |prefix: &str, path: &str, joiner: &str| -> Option<(String, String)> {
        let (repo_path, git_ref) = path.split_once('@')?;
        if repo_path.is_empty() || git_ref.is_empty() {
            return None;
        }
        Some((format!("{prefix}{joiner}{repo_path}"), git_ref.to_owned()))
    };
    let found = if let Some(rest) = url.strip_prefix("git@") {
        rest.split_once(':')
            .and_then(|(host, path)| split_path(&format!("git@{host}"), path, ":"))
    } else if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        split_path(
            &format!("{scheme}://{authority}"),
            path.trim_start_matches('/'),
            "/",
        )
    } else {
        url.split_once('/')
            .and_then(|(host, path)| split_path(host, path, "/"))
    };
    match found {
        Some((repo, git_ref)) => (repo, Some(git_ref)),
        None => (url.to_owned(), None),
    }
}

fn parse_git(source: &str) -> Option<GitSource> {
    // `git://host/…` is a protocol URL, not the `git:` prefix (the reference reads it as a
    // local path, which can never install).
    let prefixed = source
        .strip_prefix("git:")
        .filter(|_| !source.starts_with("git://"));
    let url = prefixed.unwrap_or(source).trim();
    let lower = url.to_ascii_lowercase();
    let protocol = ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p));
    if prefixed.is_none() && !protocol {
        return None;
    }
    let (mut repo, git_ref) = split_ref(url);
    let (host, path) = if let Some(rest) = repo.strip_prefix("git@") {
        let (host, path) = rest.split_once(':')?;
        (host.to_owned(), path.to_owned())
    } else if protocol {
        let rest = repo.split_once("://")?.1;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let host = host.split(':').next().unwrap_or(host);
        (host.to_ascii_lowercase(), path.to_owned())
    } else {
        let (first, rest) = repo.split_once('/')?;
        let (host, path) = if first.contains('.') || first == "localhost" {
            (first.to_owned(), rest.to_owned())
        } else if !rest.contains('/') {
            // `git:user/repo` is a GitHub shorthand, as hosted-git-info reads it.
            ("github.com".to_owned(), repo.clone())
        } else {
            return None;
        };
        repo = format!("https://{host}/{path}");
        (host, path)
    };
    let path = path.trim_start_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).to_owned();
    if host.is_empty() || path.split('/').filter(|s| !s.is_empty()).count() < 2 {
        return None;
    }
    Some(GitSource {
        repo,
        host,
        path,
        git_ref,
    })
}

/// What makes two sources one package: the npm name, the git host and path (so SSH and
/// HTTPS spellings match, refs ignored), or the resolved local path.
pub fn identity(source: &str, base_dir: &Path, home: Option<&Path>) -> String {
    match parse(source) {
        Source::Npm(npm) => format!("npm:{}", npm.name),
        Source::Git(git) => format!("git:{}/{}", git.host, git.path),
        Source::Local(path) => format!("local:{}", resolve(&path, base_dir, home).display()),
    }
}

/// `path` against `base_dir`, with `~` expanded; `.` and `..` folded lexically.
pub fn resolve(path: &str, base_dir: &Path, home: Option<&Path>) -> PathBuf {
    let expanded = match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    };
    let joined = base_dir.join(expanded);
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
