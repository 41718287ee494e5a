//! Selecting text in the fullscreen transcript with the mouse: press, drag and release
//! selects (a drag past the top or bottom row scrolls), a double click a word, a triple
//! click a line. On release the selection is copied with OSC 52 when
//! `fullscreenCopyOnSelect` is on (the default); otherwise `ctrl+x` copies it. Escape or
//! a click clears it. The geometry is `knightcode_tui::selection`.

use std::time::Duration;
use std::time::Instant;

use knightcode_tui::keys::MouseEvent;
use knightcode_tui::selection::Point;
use knightcode_tui::selection::Selection;
use knightcode_tui::selection::plain_text;
use knightcode_tui::selection::word_at;
use knightcode_tui::width::visible_width;

use super::ui::Ui;

/// Presses on the same cell within this long count as a double (triple) click.
const MULTI_CLICK: Duration = Duration::from_millis(500);

/// The mouse's part in a selection under way.
#[derive(Debug, Default)]
pub(super) struct Pointer {
    /// Where the left button went down in the transcript, while it is held.
    anchor: Option<Point>,
    /// The last press: where, when, and how many presses in a row landed there.
    last_press: Option<(Point, Instant, u8)>,
    /// The selection was made by the gesture under way (copied when it ends).
    fresh: bool,
}

impl Ui {
    /// The content point under a mouse report, if it is over the transcript's rows.
    fn point_under(&self, mouse: &MouseEvent) -> Option<Point> {
        let viewport = self.screen.viewport.as_ref()?;
        let row = usize::from(mouse.row);
        if row >= viewport.page() {
            return None;
        }
        let line = viewport.line_at(row)?;
        Some(Point::new(line, usize::from(mouse.column)))
    }

    /// The left button went down: a click clears the selection and starts a new one, a
    /// second and third click on the same cell select its word and its line.
    pub(super) fn select_press(&mut self, mouse: &MouseEvent) {
        let had = self.screen.selection.take().is_some();
        self.pointer.anchor = None;
        self.pointer.fresh = false;
        let Some(point) = self.point_under(mouse) else {
            self.pointer.last_press = None;
            if had {
                self.mark_urgent();
            }
            return;
        };
        let now = Instant::now();
        let clicks = match self.pointer.last_press {
            Some((at, when, clicks))
                if at == point && now.duration_since(when) <= MULTI_CLICK && clicks < 3 =>
            {
                clicks + 1
            }
            _ => 1,
        };
        self.pointer.last_press = Some((point, now, clicks));
        let lines = self.screen.transcript_lines();
        let line = lines.get(point.line).map_or("", String::as_str);
        let selection = match clicks {
            1 => {
                self.pointer.anchor = Some(point);
                None
            }
            2 => word_at(line, point.col).map(|(from, to)| {
                Selection::new(Point::new(point.line, from), Point::new(point.line, to - 1))
            }),
            _ => {
                let width = visible_width(&plain_text(line));
                (width > 0).then(|| {
                    Selection::new(Point::new(point.line, 0), Point::new(point.line, width - 1))
                })
            }
        };
        self.pointer.fresh = selection.is_some();
        self.screen.selection = selection;
        self.mark_urgent();
    }

    /// The mouse moved with the left button held: the selection runs from where it went
    /// down to here. On the top row, or below the transcript, the view scrolls a line.
    pub(super) fn select_drag(&mut self, mouse: &MouseEvent) {
        let Some(anchor) = self.pointer.anchor else {
            return;
        };
        // A press that became a drag is not the first click of a double click.
        self.pointer.last_press = None;
        let Some(viewport) = &mut self.screen.viewport else {
            return;
        };
        let row = usize::from(mouse.row);
        if row == 0 {
            viewport.scroll_up(1);
        } else if row >= viewport.page() {
            viewport.scroll_down(1);
        }
        let Some(line) = viewport.line_at(row) else {
            return;
        };
        let focus = Point::new(line, usize::from(mouse.column));
        self.screen.selection = Some(Selection::new(anchor, focus));
        self.pointer.fresh = true;
        self.mark_urgent();
    }

    /// The left button came up: a selection this gesture made is copied when
    /// `fullscreenCopyOnSelect` is on.
    pub(super) fn select_release(&mut self) {
        self.pointer.anchor = None;
        if std::mem::take(&mut self.pointer.fresh) && self.fullscreen_options.copy_on_select {
            self.copy_selection();
        }
    }

    /// Escape with a selection on screen clears it (so does a press on the scrollbar);
    /// true when there was one.
    pub(super) fn clear_selection(&mut self) -> bool {
        self.pointer.anchor = None;
        self.pointer.last_press = None;
        self.pointer.fresh = false;
        let had = self.screen.selection.take().is_some();
        if had {
            self.mark_urgent();
        }
        had
    }

    /// `ctrl+x` with `fullscreenCopyOnSelect` off copies the selection; true when there
    /// was one to copy.
    pub(super) fn copy_selection_by_key(&mut self) -> bool {
        if self.fullscreen_options.copy_on_select || self.screen.selection.is_none() {
            return false;
        }
        self.copy_selection();
        true
    }

    /// Copies the selected text as shown and says how much.
    fn copy_selection(&mut self) {
        let Some(selection) = self.screen.selection else {
            return;
        };
        let text = selection.text(self.screen.transcript_lines());
        if text.trim().is_empty() {
            return;
        }
        self.copy_to_clipboard(&text);
        let count = text.chars().count();
        let noun = if count == 1 {
            "character"
        } else {
            "characters"
        };
        self.status(&format!("Copied {count} {noun} to the clipboard."));
    }
}
