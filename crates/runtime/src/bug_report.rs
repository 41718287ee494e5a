//! `/bug`: a private report for the maintainers, written as a zip the user can inspect.
//!
//! The report holds the environment, versions, the provider and model configuration and
//! recent error diagnostics, and optionally the transcript. Credentials never go in: the
//! configuration files are rebuilt with secret-looking values replaced, `auth.json` is
//! reduced to provider names and kinds, environment variables that look secret are named
//! but not shown, and as a last pass every secret value found in the environment,
//! `auth.json` and `models.json` is cut from every file of the report, wherever it appears
//! (a key pasted into the conversation, an error message that echoes it).

use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::error::Result;
use crate::error::RuntimeError;

/// What stands where a credential was.
pub const REDACTED: &str = "<redacted>";

/// The upload service is not reachable from this build: what `/bug` says with the zip.
pub const UPLOAD_UNAVAILABLE: &str =
    "Uploading bug reports to remote.knightcode.dev is not available in this build of knightcode.";

/// Everything the report is made of; the front end gathers what only it knows.
#[derive(Debug, Clone, Default)]
pub struct BugReportInput {
    pub description: Option<String>,
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    /// The process environment (names and values; values are filtered here).
    pub env: Vec<(String, String)>,
    pub version: String,
    /// `provider/model` and the thinking level in use.
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub session_file: Option<PathBuf>,
    /// Recent error and warning notices, oldest first.
    pub diagnostics: Vec<String>,
    /// The current branch as JSONL, when the user chose to include it.
    pub transcript: Option<String>,
}

fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION_ID",
        "PRIVATE",
    ]
    .iter()
    .any(|word| upper.contains(word))
        || upper == "HEADERS"
}

/// Environment variables whose values help and hold nothing private.
const SHOWN_ENV: &[&str] = &[
    "TERM",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "COLORTERM",
    "SHELL",
    "LANG",
    "LC_ALL",
    "TMUX",
    "NO_COLOR",
    "KNIGHTCODE_CODING_AGENT_DIR",
    "KNIGHTCODE_CODING_AGENT_SESSION_DIR",
    "KNIGHTCODE_OFFLINE",
    "KNIGHTCODE_SHARE_VIEWER_URL",
    "KNIGHTCODE_DISABLE_FILE_CHECKPOINTS",
];

/// Replaces every string under a secret-looking key (and every header value) with
/// [`REDACTED`], collecting the values it removed.
fn redact(value: &mut Value, secrets: &mut Vec<String>, under_secret: bool) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                redact(inner, secrets, under_secret || secret_name(key));
            }
        }
        Value::Array(items) => {
            for inner in items {
                redact(inner, secrets, under_secret);
            }
        }
        Value::String(text) if under_secret => {
            secrets.push(std::mem::take(text));
            *text = REDACTED.to_owned();
        }
        _ => {}
    }
}

/// Every string in `value` (all of `auth.json` is secret).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Why a configuration file was left out of the report. Not a failure of the report: its
/// text goes into the report's notes after the file's name.
#[derive(Debug, thiserror::Error)]
enum UnreadableConfig {
    #[error("{0}")]
    Read(#[from] std::io::Error),
    #[error("not valid JSON ({0})")]
    InvalidJson(#[from] serde_json::Error),
}

/// A JSON-with-comments file as JSON (`None` when there is no such file).
fn read_json(path: &Path) -> std::result::Result<Option<Value>, UnreadableConfig> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.into()),
    };
    let stripped: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    Ok(Some(serde_json::from_str(&stripped)?))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// The files of the report, by name, with no credential left in them.
pub fn build(input: &BugReportInput) -> Vec<(String, String)> {
    let mut secrets: Vec<String> = Vec::new();
    let mut files: Vec<(String, String)> = Vec::new();

    // The environment: names of everything relevant, values only where harmless.
    let mut env = Map::new();
    for (name, value) in &input.env {
        if secret_name(name) {
            secrets.push(value.clone());
            env.insert(name.clone(), json!("(set)"));
        } else if SHOWN_ENV.contains(&name.as_str()) {
            env.insert(name.clone(), json!(value));
        } else if name.starts_with("KNIGHTCODE_") || name.starts_with("PI_") {
            env.insert(name.clone(), json!("(set)"));
        }
    }
    let environment = json!({
        "knightcode": input.version,
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "family": std::env::consts::FAMILY,
        "cwd": input.cwd,
        "agentDir": input.agent_dir,
        "variables": env,
    });
    files.push(("environment.json".to_owned(), pretty(&environment)));

    // Provider and model configuration.
    let mut notes: Vec<String> = Vec::new();
    for name in ["settings.json", "models.json"] {
        match read_json(&input.agent_dir.join(name)) {
            Ok(Some(mut value)) => {
                redact(&mut value, &mut secrets, false);
                files.push((name.to_owned(), pretty(&value)));
            }
            Ok(None) => notes.push(format!("{name}: none")),
            Err(why) => notes.push(format!("{name}: could not be read: {why}")),
        }
    }
    match read_json(&input.agent_dir.join("auth.json")) {
        Ok(Some(value)) => {
            strings(&value, &mut secrets);
            let providers: Map<String, Value> = value
                .as_object()
                .map(|map| {
                    map.iter()
                        .map(|(provider, entry)| {
                            let kind = entry.get("type").and_then(Value::as_str).unwrap_or("?");
                            (provider.clone(), json!({ "type": kind }))
                        })
                        .collect()
                })
                .unwrap_or_default();
            files.push((
                "auth.json".to_owned(),
                pretty(&json!({ "providers": providers, "note": "credential values are not included" })),
            ));
        }
        Ok(None) => notes.push("auth.json: none".to_owned()),
        Err(why) => notes.push(format!("auth.json: could not be read: {why}")),
    }

    let diagnostics = if input.diagnostics.is_empty() {
        "No errors or warnings were shown in this session.\n".to_owned()
    } else {
        input.diagnostics.join("\n") + "\n"
    };
    files.push(("diagnostics.txt".to_owned(), diagnostics));
    if let Some(transcript) = &input.transcript {
        files.push(("transcript.jsonl".to_owned(), transcript.clone()));
    }

    let mut summary = String::from("# KnightCode bug report\n\n");
    summary.push_str(&format!(
        "Description: {}\n\n",
        input
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or("(none given)")
    ));
    summary.push_str(&format!(
        "- knightcode {} on {} {}\n",
        input.version,
        std::env::consts::OS,
        std::env::consts::ARCH
    ));
    if let Some(model) = &input.model {
        summary.push_str(&format!(
            "- model: {model}{}\n",
            input
                .thinking
                .as_deref()
                .map(|t| format!(" (thinking {t})"))
                .unwrap_or_default()
        ));
    }
    if let Some(file) = &input.session_file {
        summary.push_str(&format!("- session: {}\n", file.display()));
    }
    summary.push_str(&format!(
        "- transcript: {}\n",
        if input.transcript.is_some() {
            "included (transcript.jsonl)"
        } else {
            "not included"
        }
    ));
    for note in &notes {
        summary.push_str(&format!("- {note}\n"));
    }
    summary.push_str(
        "\nCredential values (API keys, tokens, auth.json, models.json keys and headers) are \
         left out; review the files before you share them.\n",
    );
    files.insert(0, ("report.md".to_owned(), summary));

    // The last pass: no secret value survives anywhere, longest first so a key that
    // contains another is cut whole.
    secrets.retain(|s| s.len() >= 6 && s != REDACTED);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    for (_, text) in &mut files {
        for secret in &secrets {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), REDACTED);
            }
        }
    }
    files
}

/// Writes the report's files as a zip at `path` (parent folders made).
pub fn write_zip(path: &Path, files: &[(String, String)]) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(RuntimeError::io("create", parent))?;
    }
    let file = std::fs::File::create(path).map_err(RuntimeError::io("create", path))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o600);
    let zip_error = |error: zip::result::ZipError| RuntimeError::Io {
        action: "write",
        path: path.to_owned(),
        source: std::io::Error::other(error),
    };
    for (name, text) in files {
        zip.start_file(name.as_str(), options).map_err(zip_error)?;
        zip.write_all(text.as_bytes())
            .map_err(RuntimeError::io("write", path))?;
    }
    zip.finish().map_err(zip_error)?;
    Ok(())
}

/// `<agentDir>/bug-reports/knightcode-bug-<time>.zip`, `time` as `toISOString()` gives it.
pub fn default_path(agent_dir: &Path, iso_time: &str) -> PathBuf {
    agent_dir.join("bug-reports").join(format!(
        "knightcode-bug-{}.zip",
        iso_time.replace([':', '.'], "-")
    ))
}
