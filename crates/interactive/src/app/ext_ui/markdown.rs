//! Extensions' markdown transformers (`registerMarkdownTransformer`): user messages and
//! assistant text and thinking are shown as the transformers rewrite them, while the session
//! and the model keep the original. The transformers run on the JS thread; a card asks
//! again whenever its text changes or the width does, at most one request per card in
//! flight, so a reply streaming a thousand tokens a second costs one transform per answer,
//! not one per token.

use std::collections::HashMap;

use serde_json::Value;

use crate::app::ui::Ui;
use crate::transcript::card::inner_width;

/// Cards whose markdown is with the transformers, and whether it changed since it was sent.
#[derive(Debug, Default)]
pub struct InFlight {
    cards: HashMap<usize, bool>,
}

impl Ui {
    /// Asks the extensions' markdown transformers for card `index`'s markdown (every user
    /// and assistant card when `None`), if any extension registered one.
    pub fn request_markdown(&mut self, index: Option<usize>) {
        let ext_ui = &mut self.ext_ui;
        let Some(channel) = ext_ui.channel.as_ref() else {
            return;
        };
        if !channel.renderers().markdown {
            return;
        }
        let width = inner_width(self.terminal.width());
        for request in self.screen.transcript.markdown_requests(index) {
            if let Some(changed) = ext_ui.markdown.cards.get_mut(&request.key) {
                *changed = true;
                continue;
            }
            let parts: Vec<Value> = request
                .parts
                .iter()
                .map(|part| {
                    serde_json::json!({
                        "index": part.index,
                        "messageType": part.message_type,
                        "markdown": part.markdown,
                    })
                })
                .collect();
            channel.transform_markdown(request.key, &parts, request.streaming, width);
            ext_ui.markdown.cards.insert(request.key, false);
        }
    }

    /// The transformers' answer for a card (`{"op": "markdown"}`): shown, and asked again
    /// when the card changed meanwhile.
    pub(super) fn apply_markdown(&mut self, message: &Value) {
        let Some(key) = message
            .get("key")
            .and_then(Value::as_u64)
            .and_then(|k| usize::try_from(k).ok())
        else {
            return;
        };
        let parts = message
            .get("parts")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|part| {
                        let index = usize::try_from(part.get("index")?.as_u64()?).ok()?;
                        let markdown = part.get("markdown")?.as_str()?.to_owned();
                        Some((index, markdown))
                    })
                    .collect()
            })
            .unwrap_or_default();
        if self.screen.transcript.set_markdown(key, parts) {
            self.mark_dirty();
        }
        if self.ext_ui.markdown.cards.remove(&key) == Some(true) {
            self.request_markdown(Some(key));
        }
    }
}
