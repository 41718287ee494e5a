//! The fullscreen layout: on the alternate screen the content (a transcript, say) scrolls
//! inside its own viewport above a fixed bottom part (an editor, a footer), and the whole
//! frame is exactly one screen high, so nothing ever reaches the terminal's scrollback.
//!
//! [`Viewport`] keeps the scroll position. At the bottom it follows new content; once the
//! user scrolled up it holds the lines in view still while content grows below them, and
//! its last row says how much lies below and whether something new arrived there.

/// What lies below the viewport while it is scrolled up, for the indicator row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Below {
    /// Content lines under the viewport.
    pub lines: usize,
    /// Content arrived since the user scrolled up.
    pub new_content: bool,
}

/// The scroll position of a content viewport; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Viewport {
    /// Content lines hidden below the viewport; 0 follows the bottom.
    offset: usize,
    /// Content length at the last frame, to tell growth.
    last_len: usize,
    /// Rows the viewport had at the last frame (the page size).
    rows: usize,
    /// Content arrived below while scrolled up.
    unseen: bool,
}

impl Viewport {
    pub fn new() -> Self {
        Self::default()
    }

    /// At the bottom, following new content.
    pub fn is_following(&self) -> bool {
        self.offset == 0
    }

    /// Rows of content the last frame showed (at least 1).
    pub fn page(&self) -> usize {
        self.rows.max(1)
    }

    /// Scrolls toward older content by `lines` (clamped when the next frame is composed).
    pub fn scroll_up(&mut self, lines: usize) {
        let max = self.last_len.saturating_sub(self.page());
        self.offset = self.offset.saturating_add(lines).min(max);
    }

    /// Scrolls toward newer content; reaching the bottom follows it again.
    pub fn scroll_down(&mut self, lines: usize) {
        self.offset = self.offset.saturating_sub(lines);
        if self.offset == 0 {
            self.unseen = false;
        }
    }

    pub fn to_top(&mut self) {
        self.offset = usize::MAX;
        self.scroll_up(0);
    }

    pub fn to_bottom(&mut self) {
        self.offset = 0;
        self.unseen = false;
    }

    /// Exactly `height` rows: the part of `content` in view, then `bottom` (its last
    /// `height` rows if it is taller than the screen). Content shorter than its viewport
    /// starts at the top, with empty rows before `bottom`. While scrolled up, the
    /// viewport's last row is `indicator(below)`.
    pub fn compose(
        &mut self,
        content: &[String],
        bottom: &[String],
        height: usize,
        indicator: impl FnOnce(Below) -> String,
        out: &mut Vec<String>,
    ) {
        out.clear();
        let height = height.max(1);
        let bottom = &bottom[bottom.len().saturating_sub(height)..];
        let rows = height - bottom.len();
        let len = content.len();
        if self.offset > 0 && len > self.last_len {
            // Hold the lines in view still while content grows below them.
            self.offset += len - self.last_len;
            self.unseen = true;
        }
        self.last_len = len;
        self.rows = rows;
        self.offset = self.offset.min(len.saturating_sub(rows));
        if self.offset == 0 {
            self.unseen = false;
        }
        let end = len - self.offset;
        let start = end.saturating_sub(rows);
        out.extend(content[start..end].iter().cloned());
        if self.offset > 0 && rows > 0 {
            out.pop();
            out.push(indicator(Below {
                lines: self.offset,
                new_content: self.unseen,
            }));
        }
        out.resize(rows, String::new());
        out.extend(bottom.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    fn frame(view: &mut Viewport, content: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let bottom = vec!["editor".to_owned(), "footer".to_owned()];
        view.compose(
            content,
            &bottom,
            6,
            |below| format!("v {} {}", below.lines, below.new_content),
            &mut out,
        );
        out
    }

    #[test]
    fn short_content_starts_at_the_top_and_the_bottom_stays_put() {
        let mut view = Viewport::new();
        assert_eq!(
            frame(&mut view, &lines(2)),
            ["line 0", "line 1", "", "", "editor", "footer"]
        );
    }

    #[test]
    fn follows_the_bottom_until_scrolled_up_then_holds_still() {
        let mut view = Viewport::new();
        let mut content = lines(10);
        assert_eq!(
            frame(&mut view, &content)[..4],
            ["line 6", "line 7", "line 8", "line 9"]
        );
        view.scroll_up(view.page());
        assert!(!view.is_following());
        assert_eq!(
            frame(&mut view, &content)[..4],
            ["line 2", "line 3", "line 4", "v 4 false"]
        );
        content.extend(["new a".to_owned(), "new b".to_owned()]);
        assert_eq!(
            frame(&mut view, &content)[..4],
            ["line 2", "line 3", "line 4", "v 6 true"]
        );
        view.scroll_down(100);
        assert!(view.is_following());
        assert_eq!(
            frame(&mut view, &content)[..4],
            ["line 8", "line 9", "new a", "new b"]
        );
    }

    #[test]
    fn top_and_bottom_clamp() {
        let mut view = Viewport::new();
        let content = lines(10);
        frame(&mut view, &content);
        view.to_top();
        assert_eq!(
            frame(&mut view, &content)[..4],
            ["line 0", "line 1", "line 2", "v 6 false"]
        );
        view.scroll_up(50);
        assert_eq!(frame(&mut view, &content)[0], "line 0");
        view.to_bottom();
        assert_eq!(frame(&mut view, &content)[3], "line 9");
    }

    #[test]
    fn a_bottom_taller_than_the_screen_keeps_its_last_rows() {
        let mut view = Viewport::new();
        let mut out = Vec::new();
        let bottom = lines(8);
        view.compose(&lines(3), &bottom, 4, |_| String::new(), &mut out);
        assert_eq!(out, ["line 4", "line 5", "line 6", "line 7"]);
    }
}
