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
    /// How many times the user's scrolling moved the view (not content growing).
    moves: u64,
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
        self.move_to(self.offset.saturating_add(lines).min(max));
    }

    /// Scrolls toward newer content; reaching the bottom follows it again.
    pub fn scroll_down(&mut self, lines: usize) {
        self.move_to(self.offset.saturating_sub(lines));
    }

    pub fn to_top(&mut self) {
        self.move_to(self.last_len.saturating_sub(self.page()));
    }

    pub fn to_bottom(&mut self) {
        self.move_to(0);
    }

    /// How many times scrolling moved the view so far: a scrollbar that shows for a
    /// moment after each move compares it with the count it saw last.
    pub fn moves(&self) -> u64 {
        self.moves
    }

    fn move_to(&mut self, offset: usize) {
        if offset != self.offset {
            self.moves += 1;
        }
        self.offset = offset;
        if self.offset == 0 {
            self.unseen = false;
        }
    }

    /// Content lines at the last frame.
    pub fn len(&self) -> usize {
        self.last_len
    }

    /// Whether there was no content at the last frame.
    pub fn is_empty(&self) -> bool {
        self.last_len == 0
    }

    /// The content line on the viewport's first row.
    pub fn first_line(&self) -> usize {
        self.last_len
            .saturating_sub(self.offset)
            .saturating_sub(self.rows)
    }

    /// Viewport rows that show content lines (not the indicator row, nor the empty rows
    /// under content shorter than the viewport).
    pub fn content_rows(&self) -> usize {
        let end = self.last_len.saturating_sub(self.offset);
        let shown = end - self.first_line();
        if self.offset > 0 {
            shown.saturating_sub(1)
        } else {
            shown
        }
    }

    /// The content line on viewport row `row`, clamped to the lines in view (a drag
    /// below the last one stays on it); `None` when no line is in view.
    pub fn line_at(&self, row: usize) -> Option<usize> {
        let shown = self.content_rows();
        (shown > 0).then(|| self.first_line() + row.min(shown - 1))
    }

    /// Scrolls so that content line `line` is on the first row (or as near as the
    /// content allows); reaching the bottom follows it again.
    pub fn scroll_to_line(&mut self, line: usize) {
        let rows = self.page();
        let top = line.min(self.last_len.saturating_sub(rows));
        self.move_to(self.last_len.saturating_sub(top + rows));
    }

    /// Whether the content at the last frame was taller than the viewport.
    pub fn overflows(&self) -> bool {
        self.rows > 0 && self.last_len > self.rows
    }

    /// The scrollbar's thumb over the viewport's rows at the last frame: its first row
    /// and its length; `None` when the content fits. As in the reference: the track is
    /// every row, the thumb at least two rows (or the track) and as long as the share of
    /// the content in view, placed by the share scrolled, rounded.
    pub fn thumb(&self) -> Option<(usize, usize)> {
        let (rows, len) = (self.rows, self.last_len);
        if !self.overflows() {
            return None;
        }
        let size = ((rows * rows + len / 2) / len).clamp(rows.min(2), rows);
        let max_top = len - rows;
        let room = rows - size;
        let start = (self.first_line() * room + max_top / 2) / max_top;
        Some((start.min(room), size))
    }

    /// Scrolls so that the thumb's first row is `row` (clamped to the track): the inverse
    /// of [`Viewport::thumb`], as dragging the thumb or clicking the track does. Nothing
    /// when the content fits.
    pub fn scroll_thumb_to(&mut self, row: usize) {
        let Some((_, size)) = self.thumb() else {
            return;
        };
        let room = self.rows - size;
        let max_top = self.last_len - self.rows;
        let top = match room {
            0 => 0,
            _ => (row.min(room) * max_top + room / 2) / room,
        };
        self.scroll_to_line(top);
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
    fn rows_map_to_content_lines_and_a_line_can_be_brought_to_the_top() {
        let mut view = Viewport::new();
        let content = lines(10);
        frame(&mut view, &content);
        assert_eq!((view.first_line(), view.content_rows()), (6, 4));
        assert_eq!(view.line_at(0), Some(6));
        assert_eq!(view.line_at(9), Some(9));
        view.scroll_to_line(2);
        assert_eq!(frame(&mut view, &content)[0], "line 2");
        // The indicator row is not content: a row there maps to the line above it.
        assert_eq!(view.content_rows(), 3);
        assert_eq!(view.line_at(3), Some(4));
        view.scroll_to_line(9);
        assert!(view.is_following());
        let mut short = Viewport::new();
        frame(&mut short, &lines(2));
        assert_eq!(short.line_at(3), Some(1));
        let mut empty = Viewport::new();
        frame(&mut empty, &[]);
        assert_eq!(empty.line_at(0), None);
    }

    #[test]
    fn the_thumb_tracks_the_position_and_size() {
        let mut view = Viewport::new();
        let content = lines(16);
        frame(&mut view, &content);
        // Four rows over sixteen lines: a thumb of the minimum two rows, at the bottom.
        assert_eq!(view.thumb(), Some((2, 2)));
        let moves = view.moves();
        view.to_top();
        assert_eq!(view.moves(), moves + 1);
        view.to_top();
        assert_eq!(view.moves(), moves + 1, "no move, no count");
        frame(&mut view, &content);
        assert_eq!(view.thumb(), Some((0, 2)));
        view.scroll_to_line(6);
        frame(&mut view, &content);
        assert_eq!(view.thumb(), Some((1, 2)));
        let mut long = Viewport::new();
        frame(&mut long, &lines(5));
        assert_eq!(
            long.thumb(),
            Some((1, 3)),
            "4 rows of 5 lines: 3.2 rounds to 3"
        );
        let mut fits = Viewport::new();
        frame(&mut fits, &lines(4));
        assert_eq!(fits.thumb(), None);
    }

    #[test]
    fn moving_the_thumb_scrolls_in_proportion() {
        let mut view = Viewport::new();
        let content = lines(16);
        frame(&mut view, &content);
        // Four rows over sixteen lines: the thumb is two rows with two rows of room, and
        // twelve lines to scroll past.
        view.scroll_thumb_to(0);
        frame(&mut view, &content);
        assert_eq!((view.first_line(), view.thumb()), (0, Some((0, 2))));
        view.scroll_thumb_to(1);
        frame(&mut view, &content);
        assert_eq!((view.first_line(), view.thumb()), (6, Some((1, 2))));
        view.scroll_thumb_to(9);
        frame(&mut view, &content);
        assert!(
            view.is_following(),
            "the end of the track follows the bottom"
        );
        let mut fits = Viewport::new();
        frame(&mut fits, &lines(3));
        fits.scroll_thumb_to(2);
        assert_eq!(fits.first_line(), 0);
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
