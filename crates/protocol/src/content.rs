//! Content blocks of messages (`text`, `image`, `thinking`, `toolCall`).

use std::fmt;

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;
use serde::de;

use crate::wire_enum;
use crate::wire_struct;

wire_struct! {
    /// `{type:"text", text, textSignature?}`.
    pub struct TextContent {
        req "text" text: String,
        /// Opaque provider metadata (e.g. Gemini thought signatures on text parts).
        opt "textSignature" text_signature: Option<String>,
    }
}

wire_struct! {
    /// `{type:"image", data (base64), mimeType}`.
    pub struct ImageContent {
        req "data" data: String,
        req "mimeType" mime_type: String,
    }
}

/// The image type of a file's first bytes, for the formats models accept. The `read` tool
/// and `@file` attachments both sniff with this, so they accept the same files.
pub fn detect_image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some("image/jpeg");
    }
    if head.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        return Some("image/png");
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    // `BM` alone would claim text files that start with those letters; the DIB header
    // size that follows the file header is one of a few known values in real bitmaps.
    if head.len() >= 18 && head.starts_with(b"BM") {
        let dib = u32::from_le_bytes([head[14], head[15], head[16], head[17]]);
        if matches!(dib, 12 | 16 | 40 | 52 | 56 | 64 | 108 | 124) {
            return Some("image/bmp");
        }
    }
    None
}

wire_struct! {
    /// `{type:"thinking", thinking, thinkingSignature?, redacted?}`.
    pub struct ThinkingContent {
        req "thinking" thinking: String,
        /// Opaque replay data the provider wants back on later requests.
        opt "thinkingSignature" thinking_signature: Option<String>,
        opt "redacted" redacted: Option<bool>,
    }
}

wire_struct! {
    /// `{type:"toolCall", id, name, arguments, thoughtSignature?, namespace?}`.
    pub struct ToolCall {
        req "id" id: String,
        req "name" name: String,
        req "arguments" arguments: serde_json::Value,
        opt "thoughtSignature" thought_signature: Option<String>,
        opt "namespace" namespace: Option<String>,
    }
}

wire_enum! {
    /// One block of message content, tagged by `type`.
    pub enum ContentBlock tag "type" {
        "text" => Text(TextContent),
        "image" => Image(ImageContent),
        "thinking" => Thinking(ThinkingContent),
        "toolCall" => ToolCall(ToolCall),
    }
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..ImageContent::default()
        })
    }

    /// The text of a `text` block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(block) => Some(&block.text),
            _ => None,
        }
    }
}

/// Content that is either a plain string or a list of blocks (user, system and custom
/// messages). JSON `null` reads as an empty block list.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl Default for Content {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

impl From<&str> for Content {
    fn from(value: &str) -> Self {
        Self::Text(value.to_owned())
    }
}

impl From<String> for Content {
    fn from(value: String) -> Self {
        Self::Text(value)
    }
}

impl From<Vec<ContentBlock>> for Content {
    fn from(value: Vec<ContentBlock>) -> Self {
        Self::Blocks(value)
    }
}

impl Content {
    /// All text of the content joined with newlines (images and other blocks skipped).
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => join_text(blocks),
        }
    }

    /// The content as blocks; a string becomes one text block.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            Self::Text(text) => vec![ContentBlock::text(text)],
            Self::Blocks(blocks) => blocks,
        }
    }
}

/// Joins the `text` blocks of a block list with newlines.
pub fn join_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for text in blocks.iter().filter_map(ContentBlock::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => serializer.serialize_str(text),
            Self::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> de::Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::Blocks(Vec::new()))
            }
            fn visit_none<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::Blocks(Vec::new()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// A list of blocks (assistant and tool-result content). JSON `null` reads as empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blocks(pub Vec<ContentBlock>);

impl std::ops::Deref for Blocks {
    type Target = Vec<ContentBlock>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Blocks {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<Vec<ContentBlock>> for Blocks {
    fn from(value: Vec<ContentBlock>) -> Self {
        Self(value)
    }
}

impl Serialize for Blocks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Blocks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A string is accepted too: some writers store plain-text tool results.
        Ok(Self(Content::deserialize(deserializer)?.into_blocks()))
    }
}

#[cfg(test)]
mod tests {
    use super::detect_image_mime;

    #[test]
    fn images_are_known_by_their_first_bytes() {
        assert_eq!(
            detect_image_mime(b"\x89PNG\r\n\x1a\n rest"),
            Some("image/png")
        );
        assert_eq!(detect_image_mime(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(detect_image_mime(b"GIF87a..."), Some("image/gif"));
        assert_eq!(detect_image_mime(b"GIF89a..."), Some("image/gif"));
        assert_eq!(detect_image_mime(b"RIFF\0\0\0\0WEBP"), Some("image/webp"));
        let mut bitmap = b"BM".to_vec();
        bitmap.extend([0; 12]);
        bitmap.extend(40u32.to_le_bytes());
        assert_eq!(detect_image_mime(&bitmap), Some("image/bmp"));
    }

    #[test]
    fn text_and_short_heads_are_not_images() {
        assert_eq!(detect_image_mime(b"BMW and Mini, a text file\n"), None);
        assert_eq!(detect_image_mime(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(detect_image_mime(b"\x89PN"), None);
        assert_eq!(detect_image_mime(b""), None);
    }
}
