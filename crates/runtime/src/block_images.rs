//! `images.blockImages`: images never reach the provider. Before each request every image of
//! a user message or tool result becomes the text `Image reading is disabled.` (once per
//! run of images), as in the reference; the stored conversation keeps them. The flag is
//! shared with the session, so `/settings` turns it on or off for the next request.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use knightcode_agent::AgentHooks;
use knightcode_agent::HookFuture;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use tokio_util::sync::CancellationToken;

use crate::hooks::SessionHooks;

/// The reference's placeholder.
pub const BLOCKED: &str = "Image reading is disabled.";

pub struct BlockImages {
    pub blocked: Arc<AtomicBool>,
}

fn is_placeholder(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text(text) if text.text == BLOCKED)
}

/// `blocks` with each image replaced by the placeholder, consecutive placeholders merged;
/// `None` when there was no image.
fn without_images(blocks: &[ContentBlock]) -> Option<Vec<ContentBlock>> {
    if !blocks.iter().any(|b| matches!(b, ContentBlock::Image(_))) {
        return None;
    }
    let mut out: Vec<ContentBlock> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let block = match block {
            ContentBlock::Image(_) => ContentBlock::text(BLOCKED),
            other => other.clone(),
        };
        if is_placeholder(&block) && out.last().is_some_and(is_placeholder) {
            continue;
        }
        out.push(block);
    }
    Some(out)
}

/// The messages as the provider may see them.
pub fn strip(messages: Vec<Arc<AgentMessage>>) -> Vec<Arc<AgentMessage>> {
    messages
        .into_iter()
        .map(|message| match message.as_ref() {
            AgentMessage::User(user) => match &user.content {
                knightcode_protocol::Content::Blocks(blocks) => match without_images(blocks) {
                    Some(blocks) => {
                        let mut user = user.clone();
                        user.content = knightcode_protocol::Content::Blocks(blocks);
                        Arc::new(AgentMessage::User(user))
                    }
                    None => message,
                },
                knightcode_protocol::Content::Text(_) => message,
            },
            AgentMessage::ToolResult(result) => match without_images(&result.content) {
                Some(blocks) => {
                    let mut result = result.clone();
                    result.content = knightcode_protocol::Blocks(blocks);
                    Arc::new(AgentMessage::ToolResult(result))
                }
                None => message,
            },
            _ => message,
        })
        .collect()
}

impl AgentHooks for BlockImages {
    fn transform_context<'a>(
        &'a self,
        messages: Vec<Arc<AgentMessage>>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        let messages = if self.blocked.load(Ordering::Relaxed) {
            strip(messages)
        } else {
            messages
        };
        Box::pin(std::future::ready(messages))
    }
}

impl SessionHooks for BlockImages {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_become_one_placeholder_per_run() {
        let blocks = vec![
            ContentBlock::text("look"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::image("BBBB", "image/png"),
            ContentBlock::text("and"),
            ContentBlock::image("CCCC", "image/png"),
        ];
        let out = without_images(&blocks).unwrap();
        let texts: Vec<String> = out
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.clone(),
                _ => "?".to_owned(),
            })
            .collect();
        assert_eq!(texts, ["look", BLOCKED, "and", BLOCKED]);
        assert!(without_images(&[ContentBlock::text("x")]).is_none());
    }
}
