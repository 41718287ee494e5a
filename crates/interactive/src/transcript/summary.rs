//! Cards for the summaries that stand in for earlier conversation: a compaction's and a
//! branch summary. Collapsed they show a title and the summary's first lines; ctrl+o (the
//! tool-output toggle) shows the whole summary as markdown.

use knightcode_tui::width::wrap_text_with_ansi;

use super::card::LineCache;
use super::card::boxed;
use super::card::inner_width;
use super::render::Look;
use super::render::markdown;

/// Summary lines shown while collapsed.
const PREVIEW_LINES: usize = 4;

/// Which summary a card shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    /// Older history compacted; `tokens_before` were summarised.
    Compaction { tokens_before: u64 },
    /// The branch left behind by a `/tree` navigation.
    Branch,
}

#[derive(Debug, Clone)]
pub struct SummaryCard {
    pub kind: SummaryKind,
    pub summary: String,
    cache: LineCache,
}

impl SummaryCard {
    pub fn new(kind: SummaryKind, summary: String) -> Self {
        Self {
            kind,
            summary,
            cache: LineCache::default(),
        }
    }

    pub fn invalidate(&mut self) {
        self.cache.clear();
    }

    fn title(&self) -> String {
        match self.kind {
            SummaryKind::Compaction { tokens_before } => format!(
                "Compacted: {} tokens of earlier conversation summarised",
                thousands(tokens_before)
            ),
            SummaryKind::Branch => "Summary of the branch left behind".to_owned(),
        }
    }

    pub fn render(&mut self, width: u16, look: &Look) -> Vec<String> {
        if let Some(lines) = self.cache.get(width) {
            return lines.to_vec();
        }
        let theme = &look.theme;
        let inner = inner_width(width);
        let mut body = wrap_text_with_ansi(&theme.tool_title.paint(&self.title()), inner);
        body.push(String::new());
        // The title says what our preamble says; the preview shows the summary itself.
        let text = match self.kind {
            SummaryKind::Branch => self
                .summary
                .strip_prefix(knightcode_runtime::compaction::summary::BRANCH_PREAMBLE)
                .unwrap_or(&self.summary),
            SummaryKind::Compaction { .. } => &self.summary,
        };
        let summary = markdown(text, inner, theme);
        if look.tools_expanded || summary.len() <= PREVIEW_LINES + 1 {
            body.extend(summary);
        } else {
            let hidden = summary.len() - PREVIEW_LINES;
            body.extend(summary.into_iter().take(PREVIEW_LINES));
            body.push(
                theme
                    .muted
                    .paint(&format!("… {hidden} more lines (ctrl+o to expand)")),
            );
        }
        let lines = boxed(&body, width, theme.tool_success_bg);
        self.cache.put(width, lines)
    }
}

/// `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use knightcode_tui::Theme;

    use super::*;

    fn look(expanded: bool) -> Look {
        Look {
            theme: Theme::plain(),
            cwd: "/w".to_owned(),
            home: None,
            tools_expanded: expanded,
            thinking_hidden: false,
            hidden_thinking_label: None,
            mark_wraps: false,
        }
    }

    #[test]
    fn a_long_summary_is_previewed_until_expanded() {
        let summary = "## Goal\nFix the parser\n\n## Progress\n- one\n- two\n- three\n- four";
        let kind = SummaryKind::Compaction {
            tokens_before: 123_456,
        };
        let mut card = SummaryCard::new(kind, summary.to_owned());
        let collapsed = card.render(80, &look(false)).join("\n");
        assert!(
            collapsed.contains("Compacted: 123,456 tokens of earlier conversation summarised"),
            "{collapsed}"
        );
        assert!(collapsed.contains("Fix the parser"));
        assert!(collapsed.contains("more lines (ctrl+o to expand)"));
        assert!(!collapsed.contains("four"));
        let mut card = SummaryCard::new(kind, summary.to_owned());
        let expanded = card.render(80, &look(true)).join("\n");
        assert!(expanded.contains("four"));
        assert!(!expanded.contains("ctrl+o"));
    }

    #[test]
    fn the_title_wraps_on_a_narrow_terminal() {
        let kind = SummaryKind::Compaction {
            tokens_before: 123_456,
        };
        let mut card = SummaryCard::new(kind, "short".to_owned());
        let lines = card.render(30, &look(false));
        assert!(super::super::card::fits(&lines, 30));
        assert!(lines.join(" ").contains("summarised"), "{lines:?}");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
