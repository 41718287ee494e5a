//! A `tools/call` result as the model sees it: the text parts joined (over 20 KiB the middle
//! is cut, the whole text saved to a temp file named in the result), images kept after it,
//! other content described in one line.

use std::io::Write as _;

use knightcode_protocol::ContentBlock;
use serde_json::Value;

/// Text results longer than this many bytes are cut in the middle.
pub const TRUNCATE_LIMIT: usize = 20 * 1024;

/// What one call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// For the model: one text block (if any text) then the images.
    pub content: Vec<ContentBlock>,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
    /// The `CallToolResult` without `_meta`, for UIs and scripts.
    pub structured: Value,
}

/// Builds the output of a call of `tool` on `server` from the result's JSON.
pub(crate) fn call_output(server: &str, tool: &str, mut result: Value) -> CallOutput {
    if let Some(map) = result.as_object_mut() {
        map.remove("_meta");
    }
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut texts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for item in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let field = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text" => texts.push(field("text").to_owned()),
            "image" => images.push(ContentBlock::image(field("data"), field("mimeType"))),
            "resource_link" => texts.push(resource_link(item)),
            "resource" => texts.push(embedded(item.get("resource").unwrap_or(&Value::Null))),
            "audio" => texts.push(format!("[Audio ({}) omitted]", field("mimeType"))),
            other => texts.push(format!("[Unsupported content type {other:?} omitted]")),
        }
    }
    if texts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        texts.push(structured.to_string());
    }
    if texts.is_empty() && is_error {
        texts.push(format!("MCP tool {server}/{tool} returned an error"));
    }
    let mut content = Vec::new();
    if !texts.is_empty() {
        content.push(ContentBlock::text(truncate(&texts.join("\n"))));
    }
    content.extend(images);
    CallOutput {
        content,
        is_error,
        structured: result,
    }
}

fn resource_link(item: &Value) -> String {
    let field = |key: &str| item.get(key).and_then(Value::as_str);
    let mut line = format!("[Resource {}", field("uri").unwrap_or_default());
    if let Some(title) = field("title").or_else(|| field("name")) {
        line.push_str(&format!(" \"{title}\""));
    }
    if let Some(mime) = field("mimeType") {
        line.push_str(&format!(" ({mime})"));
    }
    if let Some(description) = field("description") {
        line.push_str(&format!(": {description}"));
    }
    line.push(']');
    line
}

fn embedded(resource: &Value) -> String {
    let field = |key: &str| resource.get(key).and_then(Value::as_str);
    match field("text") {
        Some(text) => text.to_owned(),
        None => format!(
            "[Binary resource {} ({}) omitted]",
            field("uri").unwrap_or_default(),
            field("mimeType").unwrap_or("application/octet-stream")
        ),
    }
}

/// What the model sees of a resource's `contents` (`resources/read`): texts (cut as tool
/// results are), images, text-like blobs decoded, other blobs saved to a temp file the
/// result names.
pub fn resource_output(contents: &Value) -> Vec<ContentBlock> {
    let mut texts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for item in contents.as_array().into_iter().flatten() {
        let field = |key: &str| item.get(key).and_then(Value::as_str);
        let uri = field("uri").unwrap_or_default();
        let mime = field("mimeType").unwrap_or("application/octet-stream");
        if let Some(text) = field("text") {
            texts.push(text.to_owned());
            continue;
        }
        let Some(blob) = field("blob") else { continue };
        if mime.starts_with("image/") {
            images.push(ContentBlock::image(blob, mime));
            continue;
        }
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob.trim())
            .unwrap_or_default();
        if text_like(mime)
            && let Ok(text) = String::from_utf8(bytes.clone())
        {
            texts.push(text);
            continue;
        }
        let saved = save_bytes(&bytes, ".bin").map_or_else(
            || "could not be saved".to_owned(),
            |p| format!("saved to {}", p.display()),
        );
        texts.push(format!(
            "[Binary resource {uri} ({mime}, {} bytes) {saved}]",
            bytes.len()
        ));
    }
    let mut content = Vec::new();
    if !texts.is_empty() {
        content.push(ContentBlock::text(truncate(&texts.join("\n"))));
    }
    content.extend(images);
    content
}

/// MIME types whose bytes are text.
fn text_like(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || mime == "application/xml"
}

/// Text within the limit as it is; longer text with its middle replaced by a marker, the
/// whole saved to a temp file the result names (when it can be written).
fn truncate(text: &str) -> String {
    if text.len() <= TRUNCATE_LIMIT {
        return text.to_owned();
    }
    let keep = TRUNCATE_LIMIT / 2;
    let head_end = floor_boundary(text, keep);
    let tail_start = ceil_boundary(text, text.len() - keep);
    let cut = text[head_end..tail_start].chars().count();
    let lines = text.lines().count();
    let tokens = text.chars().count().div_ceil(4);
    let mut out = format!(
        "Warning: truncated output (original token count: {tokens})\nTotal output lines: {lines}\n\n{}\n…{cut} chars truncated…\n{}",
        &text[..head_end],
        &text[tail_start..]
    );
    if let Some(path) = save_full(text) {
        out.push_str(&format!(
            "\n\n[Full output: {} (read it with offset/limit)]",
            path.display()
        ));
    }
    out
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// `$TMPDIR/knightcode-mcp-<16 hex>.txt`, readable by the owner only.
fn save_full(text: &str) -> Option<std::path::PathBuf> {
    save_bytes(text.as_bytes(), ".txt")
}

/// `$TMPDIR/knightcode-mcp-<16 hex><suffix>`, readable by the owner only.
fn save_bytes(bytes: &[u8], suffix: &str) -> Option<std::path::PathBuf> {
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).ok()?;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::env::temp_dir().join(format!("knightcode-mcp-{hex}{suffix}"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path).ok()?;
    file.write_all(bytes).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_without_text_names_the_tool() {
        let out = call_output("s", "t", json!({"content": [], "isError": true}));
        assert!(out.is_error);
        assert_eq!(
            out.content,
            vec![ContentBlock::text("MCP tool s/t returned an error")]
        );
    }

    #[test]
    fn long_text_is_cut_in_the_middle_and_saved() {
        let text = format!("{}{}", "a".repeat(30_000), "z".repeat(30_000));
        let out = call_output(
            "s",
            "t",
            json!({"content": [{"type": "text", "text": text}]}),
        );
        let ContentBlock::Text(block) = &out.content[0] else {
            panic!("{:?}", out.content);
        };
        assert!(
            block
                .text
                .starts_with("Warning: truncated output (original token count: 15000)")
        );
        assert!(
            block.text.contains("…39520 chars truncated…"),
            "{}",
            &block.text[..200]
        );
        let path = block
            .text
            .rsplit("[Full output: ")
            .next()
            .unwrap_or_default();
        let path = path.trim_end_matches(" (read it with offset/limit)]");
        assert_eq!(
            std::fs::read_to_string(path).ok().as_deref(),
            Some(text.as_str())
        );
        let _ = std::fs::remove_file(path);
    }
}
