//! Where an import specifier leads: a host package (ours, shared by all its aliases), a Node
//! built-in (our Node layer), or a file (relative, absolute, `file:` URL, `node_modules`).
//! Host names beat `node_modules`, as jiti's aliases do.

use std::path::Path;
use std::path::PathBuf;

use serde_json::Value;

/// What a specifier resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// One of our modules, by id (`cli`, `ai`, `typebox`, `tui`, `agent`, `node:fs`, …).
    Host(String),
    /// A file on disk (real path).
    File(PathBuf),
}

/// The host package a bare specifier names, if any. Subpaths of a package resolve to the
/// package's one instance (`typebox/value`, `@knightcode/ai/compat`).
pub fn host_package(specifier: &str) -> Option<&'static str> {
    let (scope_pkg, _) = split_package(specifier);
    Some(match scope_pkg {
        "@knightcodeai/cli"
        | "@mariozechner/pi-coding-agent"
        | "@earendil-works/pi-coding-agent" => "cli",
        "@knightcode/ai" | "@mariozechner/pi-ai" | "@earendil-works/pi-ai" => "ai",
        "@knightcode/tui" | "@mariozechner/pi-tui" | "@earendil-works/pi-tui" => "tui",
        "@knightcode/agent" | "@mariozechner/pi-agent-core" | "@earendil-works/pi-agent-core" => {
            "agent"
        }
        "typebox" | "@sinclair/typebox" => "typebox",
        _ => return None,
    })
}

/// Node's built-in module names we answer (a real built-in we lack still imports: its
/// members throw a "not supported" error when used).
const NODE_BUILTINS: &[&str] = &[
    "assert",
    "assert/strict",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "dns/promises",
    "domain",
    "events",
    "fs",
    "fs/promises",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "path/posix",
    "path/win32",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "readline/promises",
    "repl",
    "stream",
    "stream/consumers",
    "stream/promises",
    "stream/web",
    "string_decoder",
    "sys",
    "timers",
    "timers/promises",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "util/types",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// `node:fs` / `fs` → `node:fs`.
pub fn node_builtin(specifier: &str) -> Option<String> {
    let name = specifier.strip_prefix("node:").unwrap_or(specifier);
    NODE_BUILTINS
        .contains(&name)
        .then(|| format!("node:{name}"))
}

/// `@scope/pkg/sub` → (`@scope/pkg`, `sub`); `pkg/sub` → (`pkg`, `sub`).
fn split_package(specifier: &str) -> (&str, &str) {
    let mut slashes = specifier.match_indices('/').map(|(i, _)| i);
    let cut = if specifier.starts_with('@') {
        slashes.nth(1)
    } else {
        slashes.next()
    };
    match cut {
        Some(i) => (&specifier[..i], &specifier[i + 1..]),
        None => (specifier, ""),
    }
}

/// Extensions tried after the exact name, in order.
const EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "mjs", "cjs", "json"];

fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A file for `base`: exact, with an extension, `.js` written for a `.ts` source, then a
/// directory's `package.json` `main` or `index.*`.
fn file_or_dir(base: &Path) -> Option<PathBuf> {
    if base.is_file() {
        return Some(real(base));
    }
    let name = base.file_name()?.to_string_lossy().into_owned();
    for ext in EXTENSIONS {
        let candidate = base.with_file_name(format!("{name}.{ext}"));
        if candidate.is_file() {
            return Some(real(&candidate));
        }
    }
    for (from, to) in [
        (".js", ".ts"),
        (".mjs", ".mts"),
        (".cjs", ".cts"),
        (".jsx", ".tsx"),
    ] {
        if let Some(stem) = name.strip_suffix(from) {
            let candidate = base.with_file_name(format!("{stem}{to}"));
            if candidate.is_file() {
                return Some(real(&candidate));
            }
        }
    }
    if base.is_dir() {
        if let Some(main) = read_manifest(base)
            .as_ref()
            .and_then(|m| m.get("main"))
            .and_then(Value::as_str)
            && let Some(found) = file_or_dir(&base.join(main))
        {
            return Some(found);
        }
        for ext in EXTENSIONS {
            let candidate = base.join(format!("index.{ext}"));
            if candidate.is_file() {
                return Some(real(&candidate));
            }
        }
    }
    None
}

fn read_manifest(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Conditions we match in `exports`, in Node's order of preference for us.
const CONDITIONS: &[&str] = &["node", "import", "require", "module", "default"];

/// The target an `exports` value picks for this subpath (`.` or `./sub`).
fn exports_target(exports: &Value, subpath: &str) -> Option<String> {
    match exports {
        Value::String(s) => (subpath == ".").then(|| s.clone()),
        Value::Array(items) => items.iter().find_map(|v| exports_target(v, subpath)),
        Value::Object(map) => {
            let is_subpath_map = map.keys().any(|k| k.starts_with('.'));
            if !is_subpath_map {
                return CONDITIONS
                    .iter()
                    .find_map(|c| map.get(*c))
                    .and_then(|v| exports_target(v, "."))
                    .filter(|_| subpath == ".");
            }
            if let Some(v) = map.get(subpath) {
                return conditional(v);
            }
            // `./*` patterns.
            map.iter().find_map(|(key, v)| {
                let (prefix, suffix) = key.split_once('*')?;
                let middle = subpath.strip_prefix(prefix)?.strip_suffix(suffix)?;
                conditional(v).map(|t| t.replace('*', middle))
            })
        }
        _ => None,
    }
}

fn conditional(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => items.iter().find_map(conditional),
        Value::Object(map) => CONDITIONS
            .iter()
            .find_map(|c| map.get(*c))
            .and_then(conditional),
        _ => None,
    }
}

/// Node's walk up `node_modules` directories from `from_dir`.
fn node_modules(specifier: &str, from_dir: &Path) -> Option<PathBuf> {
    let (package, sub) = split_package(specifier);
    for dir in from_dir.ancestors() {
        let root = dir.join("node_modules").join(package);
        if !root.is_dir() {
            continue;
        }
        let manifest = read_manifest(&root);
        if let Some(exports) = manifest.as_ref().and_then(|m| m.get("exports")) {
            let subpath = if sub.is_empty() {
                ".".to_owned()
            } else {
                format!("./{sub}")
            };
            if let Some(target) = exports_target(exports, &subpath) {
                return file_or_dir(&root.join(target));
            }
        }
        return if sub.is_empty() {
            file_or_dir(&root)
        } else {
            file_or_dir(&root.join(sub))
        };
    }
    None
}

/// Resolves `specifier` imported from a file in `from_dir`; the error is Node's wording.
pub fn resolve(
    specifier: &str,
    from_dir: &Path,
    importer: &str,
) -> Result<Resolved, crate::ResolveError> {
    if let Some(id) = host_package(specifier) {
        return Ok(Resolved::Host(id.to_owned()));
    }
    if let Some(id) = node_builtin(specifier) {
        return Ok(Resolved::Host(id));
    }
    let not_found = || crate::ResolveError {
        specifier: specifier.to_owned(),
        importer: importer.to_owned(),
    };
    let path = if let Some(rest) = specifier.strip_prefix("file://") {
        Some(PathBuf::from(percent_decode(rest)))
    } else if specifier.starts_with("./")
        || specifier.starts_with("../")
        || specifier == "."
        || specifier == ".."
    {
        Some(from_dir.join(specifier))
    } else if Path::new(specifier).is_absolute() {
        Some(PathBuf::from(specifier))
    } else {
        None
    };
    let found = match path {
        Some(path) => file_or_dir(&path),
        None => node_modules(specifier, from_dir),
    };
    found.map(Resolved::File).ok_or_else(not_found)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len() + 1
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn host_names_and_aliases_share_one_module() {
        assert_eq!(host_package("@knightcodeai/cli"), Some("cli"));
        assert_eq!(host_package("@mariozechner/pi-coding-agent"), Some("cli"));
        assert_eq!(host_package("@sinclair/typebox/value"), Some("typebox"));
        assert_eq!(host_package("@knightcode/ai/compat"), Some("ai"));
        assert_eq!(host_package("left-pad"), None);
        assert_eq!(
            node_builtin("node:fs/promises").as_deref(),
            Some("node:fs/promises")
        );
        assert_eq!(node_builtin("fs").as_deref(), Some("node:fs"));
    }

    #[test]
    fn files_directories_and_node_modules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.ts"), "").unwrap();
        std::fs::create_dir_all(root.join("node_modules/pkg/lib")).unwrap();
        std::fs::write(
            root.join("node_modules/pkg/package.json"),
            r#"{"exports":{".":{"import":"./lib/m.js"},"./x":"./lib/x.js"}}"#,
        )
        .unwrap();
        std::fs::write(root.join("node_modules/pkg/lib/m.js"), "").unwrap();
        std::fs::write(root.join("node_modules/pkg/lib/x.js"), "").unwrap();
        std::fs::create_dir_all(root.join("node_modules/old")).unwrap();
        std::fs::write(
            root.join("node_modules/old/package.json"),
            r#"{"main":"main.js"}"#,
        )
        .unwrap();
        std::fs::write(root.join("node_modules/old/main.js"), "").unwrap();
        let real_root = std::fs::canonicalize(root).unwrap();
        let file = |p: &str| Resolved::File(real_root.join(p));
        assert_eq!(resolve("./a", root, "x").unwrap(), file("a.ts"));
        assert_eq!(resolve("./a.js", root, "x").unwrap(), file("a.ts"));
        assert_eq!(
            resolve("pkg", root, "x").unwrap(),
            file("node_modules/pkg/lib/m.js")
        );
        assert_eq!(
            resolve("pkg/x", root, "x").unwrap(),
            file("node_modules/pkg/lib/x.js")
        );
        assert_eq!(
            resolve("old", root, "x").unwrap(),
            file("node_modules/old/main.js")
        );
        assert_eq!(
            resolve("missing", root, "/ext/a.ts")
                .unwrap_err()
                .to_string(),
            "Cannot find module 'missing' imported from /ext/a.ts"
        );
    }
}
