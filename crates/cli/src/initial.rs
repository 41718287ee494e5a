//! The first prompt: piped stdin, `@file` attachments and the first message, concatenated
//! with no separator; later messages become prompts of their own (`spec/cli.md` §2).

use std::path::Path;

use anyhow::bail;
use base64::Engine as _;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::content::detect_image_mime;

/// Prompts to run in order; the first carries any images.
#[derive(Debug, Default, PartialEq)]
pub struct InitialPrompts {
    pub first: Option<(String, Vec<ContentBlock>)>,
    pub rest: Vec<String>,
}

/// Reads `@file` arguments: text inline in `<file>` tags, images as attachments.
fn attach_files(
    files: &[String],
    cwd: &Path,
    text: &mut String,
    images: &mut Vec<ContentBlock>,
) -> anyhow::Result<()> {
    for file in files {
        let expanded = match (file.strip_prefix("~/"), std::env::home_dir()) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => cwd.join(file),
        };
        let Ok(bytes) = std::fs::read(&expanded) else {
            bail!("File not found: {}", expanded.display());
        };
        if bytes.is_empty() {
            continue;
        }
        let name = expanded.display();
        if let Some(mime) = detect_image_mime(&bytes) {
            images.push(ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(&bytes),
                mime,
            ));
            text.push_str(&format!("<file name=\"{name}\"></file>\n"));
        } else {
            let content = String::from_utf8_lossy(&bytes);
            let content = content.strip_prefix('\u{feff}').unwrap_or(&content);
            text.push_str(&format!("<file name=\"{name}\">\n{content}\n</file>\n"));
        }
    }
    Ok(())
}

/// Assembles the prompts from stdin, `@file`s and messages.
pub fn initial_prompts(
    stdin: Option<String>,
    files: &[String],
    messages: &[String],
    cwd: &Path,
) -> anyhow::Result<InitialPrompts> {
    let mut text = stdin.unwrap_or_default();
    let mut images = Vec::new();
    attach_files(files, cwd, &mut text, &mut images)?;
    let mut messages = messages.iter();
    if let Some(first) = messages.next() {
        text.push_str(first);
    }
    let first = (!text.is_empty() || !images.is_empty()).then_some((text, images));
    Ok(InitialPrompts {
        first,
        rest: messages.cloned().collect(),
    })
}
