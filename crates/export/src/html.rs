//! The HTML page: template, inlined CSS and JavaScript, and the session as JSON.

use std::path::Path;
use std::path::PathBuf;

use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;
use knightcode_protocol::ToolDeclaration;
use serde::Serialize;

use crate::colors::ExportColors;
use crate::error::ExportError;
use crate::error::Result;

const TEMPLATE: &str = include_str!("../assets/template.html");
const CSS: &str = include_str!("../assets/page.css");
/// The page's script. It renders the session from the JSON in `#session-data`, everything on
/// demand: the tree shows only the rows in view, and the conversation grows in batches as it
/// is scrolled, so a session with tens of thousands of entries opens at once. Its parts run
/// in this order inside one function, whose variables they share (the page keeps one script
/// and adds nothing to the window's globals).
const JS: &str = concat!(
    "(function () {\n\"use strict\";\n\n",
    include_str!("../assets/page/session.js"),
    "\n",
    include_str!("../assets/page/text.js"),
    "\n",
    include_str!("../assets/page/entries.js"),
    "\n",
    include_str!("../assets/page/sidebar.js"),
    "\n",
    include_str!("../assets/page/conversation.js"),
    "\n",
    include_str!("../assets/page/start.js"),
    "})();\n",
);

/// What the page shows: the whole tree, the current leaf and, when known, the system prompt
/// and tools. Serialised as the page's data (`{header, entries, leafId, systemPrompt?,
/// tools?}`, the reference's shape).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionData<'a> {
    pub header: &'a SessionHeader,
    pub entries: &'a [SessionEntry],
    pub leaf_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<&'a [ToolDeclaration]>,
    /// Tool calls drawn by extensions' renderers, by tool call id (`renderedTools`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered_tools: Option<&'a std::collections::BTreeMap<String, RenderedTool>>,
}

/// A tool call as an extension's renderers drew it, as HTML (the reference's shape): the
/// call's lines, and the result's collapsed and expanded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedTool {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_html_collapsed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_html_expanded: Option<String>,
}

/// `knightcode-session-<session file name without .jsonl>.html`.
pub fn default_html_name(session_file: &Path) -> PathBuf {
    let stem = session_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".jsonl").unwrap_or(&stem);
    PathBuf::from(format!("knightcode-session-{stem}.html"))
}

/// Text for HTML element content and attribute values.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that can stand inside a `<script>` element: `<`, `>` and `&` only occur inside
/// JSON strings, where their `\u` escapes mean the same, so no `</script>` or `<!--` can
/// end the element early. U+2028/2029 are escaped for old parsers that treat them as line
/// ends.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn title(data: &SessionData<'_>) -> String {
    let name = data.entries.iter().rev().find_map(|entry| match entry {
        SessionEntry::SessionInfo(info) => info.name.as_deref().filter(|n| !n.is_empty()),
        _ => None,
    });
    match name {
        Some(name) => format!("{name} - KnightCode session"),
        None => format!("KnightCode session {}", data.header.id),
    }
}

/// The whole page as one string.
pub fn render_html(data: &SessionData<'_>, colors: &ExportColors) -> Result<String> {
    let json = serde_json::to_string(data)?;
    let css = format!("{}\n{CSS}", colors.css_variables());
    let mut page = String::with_capacity(TEMPLATE.len() + css.len() + JS.len() + json.len() + 64);
    // The template's markers are replaced in one pass, so text that looks like a marker
    // inside the session data stays as it is.
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        page.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            page.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match &after[..end] {
            "TITLE" => page.push_str(&escape_html(&title(data))),
            "CSS" => page.push_str(&css),
            "DATA" => page.push_str(&script_safe(&json)),
            "JS" => page.push_str(JS),
            other => {
                page.push_str("{{");
                page.push_str(other);
                page.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    page.push_str(rest);
    Ok(page)
}

/// Renders and writes the page to `path`.
pub fn write_html(path: &Path, data: &SessionData<'_>, colors: &ExportColors) -> Result<()> {
    let page = render_html(data, colors)?;
    std::fs::write(path, page).map_err(|source| ExportError::Write {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_safe_json_cannot_close_the_script_element() {
        let text = "</script><!-- & \u{2028}";
        let json = serde_json::to_string(&serde_json::json!({ "t": text })).unwrap_or_default();
        let safe = script_safe(&json);
        assert!(!safe.contains("</script"));
        assert!(!safe.contains("<!--"));
        assert!(!safe.contains('\u{2028}'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap_or_default();
        assert_eq!(back["t"], text);
    }

    #[test]
    fn default_name_follows_the_session_file() {
        assert_eq!(
            default_html_name(Path::new("/s/2026-01-01_abc.jsonl")),
            PathBuf::from("knightcode-session-2026-01-01_abc.html")
        );
    }
}
