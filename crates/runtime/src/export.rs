//! Sessions out and in for front ends: the open session as an HTML page or as the JSONL of
//! its current branch (`/export`, RPC `export_html`), any session file as a page
//! (`--export`), and a session file copied into the session directory (`/import`).
//! The page itself is `knightcode-export`'s; this module picks the data and the paths.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

pub use knightcode_export::ExportColors;
use knightcode_export::RenderedTool;
use knightcode_export::SessionData;
use knightcode_protocol::SessionHeader;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;

use crate::error::Result;
use crate::error::RuntimeError;

/// `export_html` of a session that has no file (the reference's text).
pub const IN_MEMORY: &str = "Cannot export in-memory session to HTML";
/// `export_html` before the first reply wrote the file (the reference's text).
pub const NOTHING_YET: &str = "Nothing to export yet - start a conversation first";

fn export_error(error: knightcode_export::ExportError) -> RuntimeError {
    RuntimeError::Rejected(error.to_string())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The page of `session`: every entry, its leaf, and the system prompt and tools it
/// recorded (when it recorded any).
fn page(
    session: &SessionManager,
    colors: &ExportColors,
    rendered_tools: Option<&BTreeMap<String, RenderedTool>>,
) -> Result<String> {
    let context = session.build_context();
    let prompt = context.system.prompt_text();
    let tools = &context.system.tools;
    let data = SessionData {
        header: session.header(),
        entries: session.entries(),
        leaf_id: session.leaf_id(),
        system_prompt: (!prompt.is_empty()).then_some(prompt.as_str()),
        tools: (!tools.is_empty()).then_some(tools.as_slice()),
        rendered_tools,
    };
    knightcode_export::render_html(&data, colors).map_err(export_error)
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(RuntimeError::io("create", parent))?;
    }
    std::fs::write(path, text).map_err(RuntimeError::io("write", path))
}

/// Prepares the open session's page under the session lock; [`finish`] writes it after.
pub(crate) fn session_html(
    session: &SessionManager,
    output: Option<&Path>,
    colors: &ExportColors,
    rendered_tools: Option<&BTreeMap<String, RenderedTool>>,
) -> Result<(PathBuf, String)> {
    let Some(file) = session.session_file() else {
        return Err(RuntimeError::Rejected(IN_MEMORY.to_owned()));
    };
    if !session.is_persisted() {
        return Err(RuntimeError::Rejected(NOTHING_YET.to_owned()));
    }
    let path = output
        .map(Path::to_owned)
        .unwrap_or_else(|| knightcode_export::default_html_name(file));
    Ok((path, page(session, colors, rendered_tools)?))
}

/// The header and current branch of the open session, re-chained into one line of
/// entries (`/export file.jsonl`); the default name is `session-<time>.jsonl`.
pub(crate) fn session_jsonl(
    session: &SessionManager,
    output: Option<&Path>,
) -> Result<(PathBuf, String)> {
    let now = session.now_iso();
    let header: SessionHeader = serde_json::from_value(serde_json::json!({
        "type": "session",
        "version": 3,
        "id": session.session_id(),
        "timestamp": now,
        "cwd": session.cwd(),
    }))
    .map_err(|source| RuntimeError::Encode {
        what: "the export header",
        source,
    })?;
    let branch = session.branch(None)?;
    let text = knightcode_export::branch_jsonl(&header, &branch).map_err(export_error)?;
    let path = output
        .map(Path::to_owned)
        .unwrap_or_else(|| PathBuf::from(knightcode_export::default_jsonl_name(&now)));
    Ok((absolute(&path), text))
}

/// Writes what [`session_html`] or [`session_jsonl`] prepared; returns the path written.
pub(crate) fn finish(prepared: Result<(PathBuf, String)>) -> Result<PathBuf> {
    let (path, text) = prepared?;
    write(&path, &text)?;
    Ok(path)
}

/// `--export <input> [output]`: a session file as a page, read without taking ownership
/// (nothing is migrated on disk). The default output is
/// `knightcode-session-<input name>.html` in the working directory.
pub fn export_file(
    store: &SessionStore,
    input: &Path,
    output: Option<&Path>,
    colors: &ExportColors,
) -> Result<PathBuf> {
    let input = absolute(input);
    if !input.is_file() {
        return Err(RuntimeError::Rejected(format!(
            "File not found: {}",
            input.display()
        )));
    }
    let session = store.open_read_only(&input)?;
    let path = output
        .map(Path::to_owned)
        .unwrap_or_else(|| knightcode_export::default_html_name(&input));
    write(&path, &page(&session, colors, None)?)?;
    Ok(path)
}

/// `/import <input>`: checks that `input` is a session (a header first; damage after it is
/// repaired on open as for any session), then copies it into `dir` under its own name,
/// `-1`, `-2`, … added on a clash, and returns the copy to switch to. A file already in
/// `dir` is used where it is.
pub fn import_file(store: &SessionStore, dir: &Path, input: &Path) -> Result<PathBuf> {
    let input = absolute(input);
    if !input.is_file() {
        return Err(RuntimeError::Rejected(format!(
            "File not found: {}",
            input.display()
        )));
    }
    if input.extension().is_none_or(|e| e != "jsonl") {
        return Err(RuntimeError::Rejected(format!(
            "Cannot import {}: sessions are .jsonl files",
            input.display()
        )));
    }
    let session = store.open_read_only(&input).map_err(|error| {
        RuntimeError::Rejected(format!(
            "Cannot import {}: {error}. Nothing was copied.",
            input.display()
        ))
    })?;
    drop(session);
    let dir = absolute(dir);
    if input.parent() == Some(dir.as_path()) {
        return Ok(input);
    }
    std::fs::create_dir_all(&dir).map_err(RuntimeError::io("create", &dir))?;
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".to_owned());
    let bytes = std::fs::read(&input).map_err(RuntimeError::io("read", &input))?;
    for n in 0..1000 {
        let name = if n == 0 {
            format!("{stem}.jsonl")
        } else {
            format!("{stem}-{n}.jsonl")
        };
        let target = dir.join(name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target);
        match file {
            Ok(mut file) => {
                use std::io::Write as _;
                file.write_all(&bytes)
                    .map_err(RuntimeError::io("write", &target))?;
                return Ok(target);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(RuntimeError::io("create", &target)(error)),
        }
    }
    Err(RuntimeError::Rejected(format!(
        "Cannot import {}: too many sessions of that name in {}",
        input.display(),
        dir.display()
    )))
}
