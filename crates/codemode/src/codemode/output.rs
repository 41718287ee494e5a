//! A script's result as the model sees it: a `Script completed` or `Script failed` header with
//! the wall time, the text items (each headed `==> text N/M <==` when there are several),
//! images, the console lines in one `<console_output>` block, and on failure the error and
//! the tool calls already made. Output past the budget keeps its start and end, the whole
//! text saved to a temp file named in the result.

use std::io::Write as _;
use std::time::Duration;

use knightcode_agent::ToolOutput;
use knightcode_protocol::ContentBlock;
use serde_json::Value;
use serde_json::json;

use super::CallRecord;
use super::sandbox::Failure;
use super::sandbox::ScriptEnd;

/// Characters per estimated token.
const CHARS_PER_TOKEN: u64 = 4;

pub(super) fn render(
    end: &ScriptEnd,
    calls: &[CallRecord],
    took: Duration,
    max_output_tokens: u64,
) -> ToolOutput {
    let texts: Vec<&str> = end
        .items
        .iter()
        .filter(|i| i["type"] == "text")
        .filter_map(|i| i["text"].as_str())
        .collect();
    let mut parts: Vec<String> = Vec::new();
    for (n, text) in texts.iter().enumerate() {
        if texts.len() > 1 {
            parts.push(format!("==> text {}/{} <==\n{text}", n + 1, texts.len()));
        } else {
            parts.push((*text).to_owned());
        }
    }
    let mut images = Vec::new();
    for item in end.items.iter().filter(|i| i["type"] == "image") {
        let data = item["data"].as_str().unwrap_or_default();
        let mime = item["mimeType"].as_str().unwrap_or("image/png");
        images.push(ContentBlock::image(data, mime));
        let saved = save_image(data, mime)
            .map(|path| format!("[Image {} saved to {path}]", images.len()))
            .unwrap_or_else(|e| format!("[Image {} could not be saved: {e}]", images.len()));
        parts.push(saved);
    }
    if !end.console.is_empty() {
        parts.push(format!(
            "<console_output>\n{}\n</console_output>",
            end.console.join("\n")
        ));
    }
    let mut body = parts.join("\n\n");
    let budget =
        usize::try_from(max_output_tokens.saturating_mul(CHARS_PER_TOKEN)).unwrap_or(usize::MAX);
    let mut full_output_path = None;
    if body.chars().count() > budget {
        let path = save_text(&body).ok();
        body = cut_middle(&body, budget, path.as_deref());
        full_output_path = path;
    }
    let millis = took.as_millis();
    let mut text = match &end.failure {
        None => format!("Script completed in {millis} ms."),
        Some(_) => format!("Script failed after {millis} ms."),
    };
    if !body.is_empty() {
        text.push_str("\n\n");
        text.push_str(&body);
    } else if end.failure.is_none() {
        text.push_str("\n\n(no output)");
    }
    if let Some(failure) = &end.failure {
        let error = match failure {
            Failure::Script(error) | Failure::Sandbox(error) => error.clone(),
            Failure::Timeout(limit) => {
                format!("the script timed out after {} ms", limit.as_millis())
            }
            Failure::Aborted => "the script was aborted".to_owned(),
        };
        text.push_str(&format!("\n\nScript error: {error}"));
        if !calls.is_empty() {
            let made: Vec<String> = calls
                .iter()
                .map(|c| format!("{} ({})", c.name, c.status))
                .collect();
            text.push_str(&format!(
                "\nTool calls made before the failure (they are not undone): {}",
                made.join(", ")
            ));
        }
    }
    let mut content = vec![ContentBlock::text(text)];
    content.extend(images);
    let records: Vec<Value> = calls
        .iter()
        .map(|c| {
            let mut record = json!({"id": c.id, "name": c.name, "status": c.status});
            if let Some(ms) = c.duration_ms {
                record["durationMs"] = json!(ms);
            }
            if let Some(error) = &c.error {
                record["error"] = json!(error.chars().take(500).collect::<String>());
            }
            record
        })
        .collect();
    let mut details = json!({ "calls": records });
    if let Some(path) = full_output_path {
        details["fullOutputPath"] = json!(path);
    }
    ToolOutput {
        content,
        details: Some(details),
        is_error: end.failure.is_some(),
        ..ToolOutput::default()
    }
}

/// `text` cut to about `budget` characters: its start and end around a marker that says how
/// much was left out and where the whole text is.
fn cut_middle(text: &str, budget: usize, path: Option<&str>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let half = budget / 2;
    let head: String = chars[..half.min(chars.len())].iter().collect();
    let tail_start = chars.len().saturating_sub(half).max(half);
    let tail: String = chars[tail_start..].iter().collect();
    let left_out = chars.len() - head.chars().count() - tail.chars().count();
    let place = path.map_or_else(String::new, |p| format!("; full output: {p}"));
    format!("{head}\n…{left_out} chars truncated{place}…\n{tail}")
}

/// A new owner-only file in the temp folder.
fn temp_file(suffix: &str) -> std::io::Result<(std::fs::File, String)> {
    let dir = std::env::temp_dir();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    for attempt in 0..100u32 {
        let path = dir.join(format!(
            "knightcode-codemode-{:x}-{stamp:x}-{attempt}{suffix}",
            std::process::id()
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(file) => return Ok((file, path.display().to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temp file name"))
}

fn save_text(text: &str) -> std::io::Result<String> {
    let (mut file, path) = temp_file(".txt")?;
    file.write_all(text.as_bytes())?;
    Ok(path)
}

fn save_image(data: &str, mime: &str) -> std::io::Result<String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let suffix = match mime {
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        _ => ".png",
    };
    let (mut file, path) = temp_file(suffix)?;
    file.write_all(&bytes)?;
    Ok(path)
}
