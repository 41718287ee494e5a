//! Cards an extension may draw: custom messages (`registerMessageRenderer`) and custom
//! entries (`registerEntryRenderer`).

use super::Look;
use super::Notice;

/// A custom message: shown as a notice naming its type, unless an extension's message
/// renderer (`registerMessageRenderer`) drew it.
#[derive(Debug, Clone)]
pub struct CustomCard {
    pub(super) notice: Notice,
    /// The message as the renderer receives it.
    pub message: serde_json::Value,
    pub(super) lines: Option<Vec<String>>,
}

impl CustomCard {
    pub(super) fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        match &self.lines {
            Some(lines) => lines
                .iter()
                .map(|l| knightcode_tui::width::truncate_to_width(l, usize::from(width), ""))
                .collect(),
            None => self.notice.render(width, look),
        }
    }

    pub(super) fn invalidate(&mut self) {
        self.notice.invalidate();
    }
}

/// A custom entry (`appendEntry`). Entries are an extension's own records: nothing shows
/// unless an entry renderer drew it.
#[derive(Debug, Clone)]
pub struct EntryCard {
    /// The entry as the renderer receives it.
    pub entry: serde_json::Value,
    pub(super) lines: Option<Vec<String>>,
}

impl EntryCard {
    pub fn new(entry: serde_json::Value) -> Self {
        Self { entry, lines: None }
    }

    /// The entry's custom type.
    pub fn custom_type(&self) -> &str {
        self.entry
            .get("customType")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
    }

    pub(super) fn render(&self, width: u16) -> Vec<String> {
        self.lines
            .iter()
            .flatten()
            .map(|l| knightcode_tui::width::truncate_to_width(l, usize::from(width), ""))
            .collect()
    }
}
