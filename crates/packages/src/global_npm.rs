//! Where `npm install -g` puts packages, found without running npm (a node start costs
//! ~100 ms). pi 0.73.1 installs user npm packages globally; a package it installed is used
//! from there when ours (`<agentDir>/npm`) does not have it.
//!
//! npm's own order for its prefix: the `npm_config_prefix` environment variable, then
//! `prefix=` in the user's `.npmrc` (`NPM_CONFIG_USERCONFIG`, else `~/.npmrc`), else the
//! folder above the one holding `node`. Global packages are in `<prefix>/lib/node_modules`.

use std::path::Path;
use std::path::PathBuf;

/// The global `node_modules` folder, when one can be worked out.
pub fn global_node_modules(home: Option<&Path>) -> Option<PathBuf> {
    prefix(home).map(|prefix| prefix.join("lib").join("node_modules"))
}

fn prefix(home: Option<&Path>) -> Option<PathBuf> {
    let env = |name: &str| {
        std::env::vars_os()
            .find(|(key, _)| key.to_string_lossy().eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
            .filter(|value| !value.is_empty())
    };
    if let Some(prefix) = env("npm_config_prefix") {
        return Some(expand(&prefix.to_string_lossy(), home));
    }
    let userconfig = env("npm_config_userconfig")
        .map(PathBuf::from)
        .or_else(|| home.map(|home| home.join(".npmrc")));
    if let Some(prefix) = userconfig
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| npmrc_prefix(&text))
    {
        return Some(expand(&prefix, home));
    }
    let node = std::env::split_paths(&env("PATH")?)
        .map(|dir| dir.join("node"))
        .find(|path| path.is_file())?;
    let node = std::fs::canonicalize(&node).unwrap_or(node);
    Some(node.parent()?.parent()?.to_path_buf())
}

/// `prefix = …` in an npmrc (`;` and `#` start comments).
fn npmrc_prefix(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.trim();
        if line.starts_with(';') || line.starts_with('#') {
            return None;
        }
        let (key, value) = line.split_once('=')?;
        (key.trim() == "prefix")
            .then(|| value.trim().trim_matches('"').to_owned())
            .filter(|value| !value.is_empty())
    })
}

fn expand(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::npmrc_prefix;

    #[test]
    fn the_prefix_line_of_an_npmrc_is_found_past_comments() {
        assert_eq!(
            npmrc_prefix("; prefix=/commented\nregistry=x\nprefix = \"/opt/npm\"\n"),
            Some("/opt/npm".to_owned())
        );
        assert_eq!(npmrc_prefix("# prefix=/no\n"), None);
    }
}
