//! The `mcp.json` files: `<agentDir>/mcp.json` always, `<cwd>/.knightcode/mcp.json` only in a
//! trusted project. A project entry replaces the user entry of the same name; a project entry
//! without `command`, `url` or `type` only overrides `enabled`, `exposure` and `toolExposure`
//! of the user's server. Each invalid entry is reported with what is wrong and skipped.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Map;
use serde_json::Value;

use crate::error::McpError;
use crate::exposure::Exposure;

/// Which file defines a server, or that an extension registered it for the session
/// (`registerMcpServer`; its `source` is then the extension's file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
    Extension,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "global",
            Self::Project => "project",
            Self::Extension => "extension",
        }
    }
}

/// How to reach a server. Values are as written: `${NAME}`, `!command` and `~/` are resolved
/// when the server is started, so reading the files never runs anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// How to sign in when the server answers 401.
        oauth: Option<crate::auth::OAuthConfig>,
        /// `auth.provider`: send that KnightCode provider's token.
        auth_provider: Option<String>,
    },
}

impl Transport {
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
        }
    }

    /// What it reaches: a stdio server's command line, an HTTP server's address.
    pub fn target(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Self::Http { url, .. } => url.clone(),
        }
    }
}

/// One server as the files define it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub scope: Scope,
    /// The file that defines it (the project file for an override).
    pub source: PathBuf,
    /// Whether a project entry overrides part of it.
    pub overridden: bool,
    pub transport: Transport,
    pub exposure: Exposure,
    /// `toolExposure` in file order.
    pub tool_exposure: Vec<(String, Exposure)>,
    pub description: Option<String>,
    pub enabled: bool,
    /// Per request; progress notifications renew it.
    pub timeout: Duration,
}

impl ServerConfig {
    /// The exposure of one of its tools.
    pub fn exposure_of(&self, tool: &str) -> Exposure {
        crate::exposure::for_tool(self.exposure, &self.tool_exposure, tool)
    }
}

/// A file or entry that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The servers both files define, merged.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    pub servers: Vec<ServerConfig>,
    pub issues: Vec<ConfigIssue>,
    /// `autoEnableCodemode` (the project's value wins); `true` when neither sets it.
    pub auto_enable_codemode: bool,
    /// The project file that exists but was not read because the project is not trusted.
    pub ignored_project_file: Option<PathBuf>,
}

pub fn user_config_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("mcp.json")
}

pub fn project_config_path(cwd: &Path) -> PathBuf {
    cwd.join(".knightcode").join("mcp.json")
}

/// Reads both files (the project's only when `project_trusted`) and merges them.
pub fn load_config(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> LoadedConfig {
    let mut out = LoadedConfig {
        auto_enable_codemode: true,
        ..LoadedConfig::default()
    };
    let user_path = user_config_path(agent_dir);
    let user = read_file(&user_path, Scope::User, &mut out.issues);
    if let Some(auto) = user.auto_enable_codemode {
        out.auto_enable_codemode = auto;
    }
    out.servers = user
        .entries
        .into_iter()
        .filter_map(|entry| match entry {
            Entry::Server(server) => Some(server),
            Entry::Override(_) => None,
        })
        .collect();
    let project_path = project_config_path(cwd);
    if !project_trusted {
        if project_path.exists() {
            out.ignored_project_file = Some(project_path);
        }
    } else {
        let project = read_file(&project_path, Scope::Project, &mut out.issues);
        if let Some(auto) = project.auto_enable_codemode {
            out.auto_enable_codemode = auto;
        }
        for entry in project.entries {
            merge(&mut out, entry, &project_path);
        }
    }
    reject_clashes(&mut out);
    out
}

fn merge(out: &mut LoadedConfig, entry: Entry, project_path: &Path) {
    match entry {
        Entry::Server(server) => match out.servers.iter_mut().find(|s| s.name == server.name) {
            Some(existing) => *existing = server,
            None => out.servers.push(server),
        },
        Entry::Override(over) => match out.servers.iter_mut().find(|s| s.name == over.name) {
            Some(existing) => {
                existing.overridden = true;
                existing.source = project_path.to_path_buf();
                if let Some(enabled) = over.enabled {
                    existing.enabled = enabled;
                }
                if let Some(exposure) = over.exposure {
                    existing.exposure = exposure;
                }
                if let Some(rules) = over.tool_exposure {
                    existing.tool_exposure = rules;
                }
            }
            None => out.issues.push(ConfigIssue {
                path: project_path.to_path_buf(),
                message: format!(
                    "server \"{}\" needs \"command\" or \"url\", or a global server to override",
                    over.name
                ),
            }),
        },
    }
}

/// Names that differ only in `-` and `_` would share a namespace: the later one goes.
fn reject_clashes(out: &mut LoadedConfig) {
    let mut kept: Vec<ServerConfig> = Vec::new();
    for server in std::mem::take(&mut out.servers) {
        match kept.iter().find(|k| names_clash(&k.name, &server.name)) {
            Some(first) => out.issues.push(ConfigIssue {
                path: server.source.clone(),
                message: format!(
                    "server \"{}\" conflicts with \"{}\"",
                    server.name, first.name
                ),
            }),
            None => kept.push(server),
        }
    }
    out.servers = kept;
}

/// An entry of one file.
#[derive(Debug, Clone, PartialEq)]
enum Entry {
    Server(ServerConfig),
    Override(Override),
}

#[derive(Debug, Clone, PartialEq)]
struct Override {
    name: String,
    enabled: Option<bool>,
    exposure: Option<Exposure>,
    tool_exposure: Option<Vec<(String, Exposure)>>,
}

#[derive(Default)]
struct FileContents {
    entries: Vec<Entry>,
    auto_enable_codemode: Option<bool>,
}

fn read_file(path: &Path, scope: Scope, issues: &mut Vec<ConfigIssue>) -> FileContents {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileContents::default(),
        Err(e) => {
            issues.push(ConfigIssue {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
            return FileContents::default();
        }
    };
    let (servers, file_issues, auto) = parse_file(path, &text, scope);
    issues.extend(file_issues);
    FileContents {
        entries: servers,
        auto_enable_codemode: auto,
    }
}

/// One file's text: its entries, the problems found, and its `autoEnableCodemode`.
fn parse_file(
    path: &Path,
    text: &str,
    scope: Scope,
) -> (Vec<Entry>, Vec<ConfigIssue>, Option<bool>) {
    let issue = |message: String| ConfigIssue {
        path: path.to_path_buf(),
        message,
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return (Vec::new(), vec![issue(e.to_string())], None),
    };
    let Some(servers) = value.get("mcpServers").and_then(Value::as_object) else {
        let message = "expected an object with an \"mcpServers\" object".to_owned();
        return (Vec::new(), vec![issue(message)], None);
    };
    let mut issues = Vec::new();
    let auto = match value.get("autoEnableCodemode") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            issues.push(issue(
                "\"autoEnableCodemode\" must be true or false".to_owned(),
            ));
            None
        }
    };
    let mut entries = Vec::new();
    for (name, entry) in servers {
        match parse_entry(name, entry, scope, path) {
            Ok(entry) => entries.push(entry),
            Err(message) => issues.push(issue(message)),
        }
    }
    (entries, issues, auto)
}

const EXPOSURE_MESSAGE: &str = "must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\"";

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn parse_entry(name: &str, value: &Value, scope: Scope, path: &Path) -> Result<Entry, String> {
    if !valid_name(name) {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let Some(entry) = value.as_object() else {
        return Err(format!("server \"{name}\": expected an object"));
    };
    let exposure = match entry.get("exposure") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(Exposure::parse)
                .ok_or_else(|| format!("server \"{name}\": exposure {EXPOSURE_MESSAGE}"))?,
        ),
    };
    let tool_exposure = match entry.get("toolExposure") {
        None => None,
        Some(v) => Some(tool_exposure(name, v)?),
    };
    let enabled = match entry.get("enabled") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(format!("server \"{name}\": enabled must be true or false")),
    };
    let defines = ["command", "url", "type"]
        .iter()
        .any(|k| entry.contains_key(*k));
    if !defines && scope == Scope::Project {
        if entry
            .keys()
            .any(|k| !matches!(k.as_str(), "enabled" | "exposure" | "toolExposure"))
        {
            return Err(format!(
                "server \"{name}\": an override can only set enabled, exposure, toolExposure"
            ));
        }
        return Ok(Entry::Override(Override {
            name: name.to_owned(),
            enabled,
            exposure,
            tool_exposure,
        }));
    }
    let timeout = match entry.get("timeout") {
        None => Duration::from_secs(60),
        Some(v) => match v.as_f64() {
            Some(seconds) if seconds > 0.0 && seconds.is_finite() => {
                Duration::from_secs_f64(seconds.min(1e9))
            }
            _ => {
                return Err(format!(
                    "server \"{name}\": timeout must be a positive number of seconds"
                ));
            }
        },
    };
    let description = match entry.get("description") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(format!("server \"{name}\": description must be a string")),
    };
    // A provider's token goes only where the user's own file says.
    if scope != Scope::User && entry.contains_key("auth") {
        return Err(format!(
            "server \"{name}\": auth is only allowed in the global mcp.json"
        ));
    }
    let transport = transport(name, entry)?;
    Ok(Entry::Server(ServerConfig {
        name: name.to_owned(),
        scope,
        source: path.to_path_buf(),
        overridden: false,
        transport,
        exposure: exposure.unwrap_or_default(),
        tool_exposure: tool_exposure.unwrap_or_default(),
        description,
        enabled: enabled.unwrap_or(true),
        timeout,
    }))
}

fn tool_exposure(name: &str, value: &Value) -> Result<Vec<(String, Exposure)>, String> {
    let Some(map) = value.as_object() else {
        return Err(format!(
            "server \"{name}\": toolExposure must be an object of tool names (or patterns with *) and exposures"
        ));
    };
    map.iter()
        .map(|(tool, v)| {
            v.as_str()
                .and_then(Exposure::parse)
                .map(|e| (tool.clone(), e))
                .ok_or_else(|| {
                    format!("server \"{name}\": toolExposure \"{tool}\" {EXPOSURE_MESSAGE}")
                })
        })
        .collect()
}

fn transport(name: &str, entry: &Map<String, Value>) -> Result<Transport, String> {
    let kind = match entry.get("type") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => Some(""),
    };
    match kind {
        Some("sse") => {
            return Err(format!(
                "server \"{name}\": legacy SSE transport is not supported; use the streamable HTTP URL"
            ));
        }
        None | Some("stdio" | "http" | "streamable-http") => {}
        Some(_) => {
            return Err(format!(
                "server \"{name}\": type must be \"stdio\", \"http\" or \"streamable-http\""
            ));
        }
    }
    let wants_http = matches!(kind, Some("http" | "streamable-http"));
    let wants_stdio = kind == Some("stdio");
    if let (Some(url), false) = (entry.get("url"), wants_stdio) {
        let Some(url) = url.as_str() else {
            return Err(format!("server \"{name}\": url must be a string"));
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "server \"{name}\": url must start with http:// or https://"
            ));
        }
        let oauth = match entry.get("oauth") {
            Some(oauth) => Some(crate::auth::parse_oauth(name, oauth)?),
            None => None,
        };
        let headers = string_map(name, "headers", entry.get("headers"))?;
        let auth_provider = match entry.get("auth") {
            Some(auth) => Some(crate::auth::parse_auth(
                name,
                auth,
                url,
                oauth.is_some(),
                &headers,
            )?),
            None => None,
        };
        return Ok(Transport::Http {
            url: url.to_owned(),
            headers,
            oauth,
            auth_provider,
        });
    }
    if let (Some(command), false) = (entry.get("command"), wants_http) {
        let command = match command.as_str() {
            Some(c) if !c.trim().is_empty() => c.to_owned(),
            _ => {
                return Err(format!(
                    "server \"{name}\": command must be a non-empty string (one executable; put its arguments in \"args\")"
                ));
            }
        };
        let args = match entry.get("args") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("server \"{name}\": args must be an array of strings"))?,
            Some(_) => {
                return Err(format!(
                    "server \"{name}\": args must be an array of strings"
                ));
            }
        };
        let cwd = match entry.get("cwd") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(format!("server \"{name}\": cwd must be a string")),
        };
        return Ok(Transport::Stdio {
            command,
            args,
            env: string_map(name, "env", entry.get("env"))?,
            cwd,
        });
    }
    Err(format!(
        "server \"{name}\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
    ))
}

fn string_map(
    name: &str,
    key: &str,
    value: Option<&Value>,
) -> Result<Vec<(String, String)>, String> {
    let error = || format!("server \"{name}\": {key} must be an object of strings");
    match value {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.clone(), v.to_owned()))
                    .ok_or_else(error)
            })
            .collect(),
        Some(_) => Err(error()),
    }
}

/// Checks one entry as [`load_config`] would (for `knightcode mcp add`).
pub fn check_entry(name: &str, entry: &Value, scope: Scope) -> Result<(), McpError> {
    parse_entry(name, entry, scope, Path::new(""))
        .map(|_| ())
        .map_err(McpError::Invalid)
}

/// A server an extension registers (`registerMcpServer(name, config)`): the config has the
/// shape of an `mcp.json` entry and is checked as one (an override without `command` or
/// `url` has no user entry to override here, so it is refused).
pub fn extension_server(
    name: &str,
    entry: &Value,
    extension_path: &Path,
) -> Result<ServerConfig, McpError> {
    match parse_entry(name, entry, Scope::Extension, extension_path) {
        Ok(Entry::Server(server)) => Ok(server),
        Ok(Entry::Override(_)) => Err(McpError::Invalid(format!(
            "server \"{name}\" needs \"command\" or \"url\""
        ))),
        Err(message) => Err(McpError::Invalid(message)),
    }
}

/// Whether two server names share a tool namespace (`-` and `_` are the same there).
pub fn names_clash(a: &str, b: &str) -> bool {
    a.replace('-', "_") == b.replace('-', "_")
}

/// Adds (or replaces) `name` in the file at `path`, keeping everything else in it.
/// Returns whether an entry was replaced.
pub fn add_server(path: &Path, name: &str, entry: Value) -> Result<bool, McpError> {
    let mut root = read_json_object(path)?;
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if !servers.is_object() {
        *servers = Value::Object(Map::new());
    }
    let replaced = servers
        .as_object_mut()
        .map(|m| m.insert(name.to_owned(), entry).is_some())
        .unwrap_or(false);
    write_json(path, &Value::Object(root))?;
    Ok(replaced)
}

/// Removes `name` from the file at `path`; `false` when it was not there.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, McpError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut root = read_json_object(path)?;
    let removed = root
        .get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.shift_remove(name))
        .is_some();
    if removed {
        write_json(path, &Value::Object(root))?;
    }
    Ok(removed)
}

/// What `/mcp` changes of a server: its exposure, or whether it is enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerPatch {
    Exposure(Exposure),
    Enabled(bool),
}

/// Writes `patch` into `name`'s entry in the file at `path`, keeping the rest of the file and
/// its indentation. A value that is the default (`exposure: "codemode"`, `enabled: true`) is
/// removed rather than written, except in an override entry (`override_entry`: a project
/// entry that only adjusts a global server), where it is what overrides.
pub fn update_server(
    path: &Path,
    name: &str,
    patch: ServerPatch,
    override_entry: bool,
) -> Result<(), McpError> {
    let mut root = read_json_object(path)?;
    let entry = root
        .get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .and_then(|servers| servers.get_mut(name))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| McpError::File {
            path: path.to_path_buf(),
            reason: format!("it has no server \"{name}\" any more"),
        })?;
    let (key, value, default) = match patch {
        ServerPatch::Exposure(exposure) => (
            "exposure",
            Value::String(exposure.as_str().to_owned()),
            exposure == Exposure::default(),
        ),
        ServerPatch::Enabled(enabled) => ("enabled", Value::Bool(enabled), enabled),
    };
    if default && !override_entry {
        entry.shift_remove(key);
    } else {
        entry.insert(key.to_owned(), value);
    }
    write_json(path, &Value::Object(root))
}

fn read_json_object(path: &Path) -> Result<Map<String, Value>, McpError> {
    let file_error = |reason: String| McpError::File {
        path: path.to_path_buf(),
        reason,
    };
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(file_error(
                "expected a JSON object; fix or move the file".to_owned(),
            )),
            Err(e) => Err(file_error(format!("{e}; fix or move the file"))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(file_error(e.to_string())),
    }
}

/// The indentation unit of the file at `path` (its first indented line's), two spaces for a
/// new or flat file.
fn indentation(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines()
                .map(|line| &line[..line.len() - line.trim_start().len()])
                .find(|indent| !indent.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "  ".to_owned())
}

fn pretty_json(value: &Value, indent: &str) -> Result<String, String> {
    use serde::Serialize as _;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut serializer)
        .map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

fn write_json(path: &Path, value: &Value) -> Result<(), McpError> {
    let file_error = |reason: String| McpError::File {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| file_error(e.to_string()))?;
    }
    let mut text = pretty_json(value, &indentation(path)).map_err(file_error)?;
    text.push('\n');
    // A file linked into place is replaced where the link points (the link stays); the
    // write is a temporary file renamed over the old one, which keeps its permissions (an
    // entry's headers may hold a token), so a crash never leaves half a file.
    knightcode_files::replace(path, text.as_bytes(), None).map_err(|e| file_error(e.to_string()))
}
