//! The fullscreen mode (`--tui-mode fullscreen`, setting `tuiMode`): the same screen as
//! the regular mode, drawn on the alternate screen with the transcript in a viewport of its
//! own above the editor and footer (`knightcode_tui::viewport`). Here: what the settings
//! ask for, the keys and mouse wheel that scroll the transcript, the jumps between prompts
//! and when the scrollbar shows, and clicking and dragging it. The search is `search.rs`,
//! the selection `select.rs`.

use std::time::Duration;
use std::time::Instant;

use knightcode_runtime::settings::Settings;
use knightcode_tui::InputEvent;
use knightcode_tui::Key;
use knightcode_tui::keys::MouseEvent;
use knightcode_tui::keys::MouseKind;
use knightcode_tui::viewport::Viewport;
use serde_json::Value;

use super::ui::Ui;

/// Lines one wheel notch scrolls when `fullscreenWheelScrollLines` is `auto`.
const WHEEL_LINES_AUTO: usize = 3;

/// How long an `auto` scrollbar stays after the view last moved (the reference's delay).
const SCROLLBAR_LINGER: Duration = Duration::from_secs(1);

/// What is left on the main screen when the fullscreen mode ends
/// (`fullscreenExitOutput`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitOutput {
    /// The header and transcript, as the regular mode leaves them in the scrollback, then
    /// the resume hint.
    #[default]
    Transcript,
    /// Only the resume hint.
    ResumeHint,
}

/// When the transcript's scrollbar shows (`fullscreenScrollbar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scrollbar {
    /// For a second after each scroll, over the transcript's last column, while the
    /// transcript is taller than its rows (as the reference's `auto`).
    #[default]
    Auto,
    /// On every frame, in a column of its own: the transcript is laid out a column
    /// narrower.
    Always,
    Hidden,
}

/// The scrollbar between frames: the setting, until when an `auto` one shows, and the
/// thumb held by the mouse.
#[derive(Debug, Clone, Default)]
pub struct ScrollbarState {
    pub policy: Scrollbar,
    /// The viewport's move count the last frame saw.
    seen_moves: u64,
    until: Option<Instant>,
    /// While the left button that went down on the bar is held: the row of the thumb it
    /// holds (the thumb keeps that row under the mouse as it moves).
    held: Option<usize>,
}

impl ScrollbarState {
    /// The transcript gives up its last column to the bar.
    pub fn reserves_column(&self) -> bool {
        self.policy == Scrollbar::Always
    }

    /// The thumb to draw on this frame (first row, rows), if any; a move of the view
    /// since the last frame shows an `auto` bar for a while.
    pub fn thumb(&mut self, viewport: &Viewport, now: Instant) -> Option<(usize, usize)> {
        match self.policy {
            Scrollbar::Hidden => None,
            // Content that fits fills the track, as in the reference.
            Scrollbar::Always => viewport
                .thumb()
                .or((viewport.page() > 0).then(|| (0, viewport.page()))),
            Scrollbar::Auto => {
                if viewport.moves() != self.seen_moves {
                    self.seen_moves = viewport.moves();
                    if viewport.overflows() {
                        self.until = Some(now + SCROLLBAR_LINGER);
                    }
                }
                viewport
                    .thumb()
                    .filter(|_| self.held.is_some() || self.until.is_some_and(|until| now < until))
            }
        }
    }

    /// The left button went down on the bar's column at viewport row `row`, as in the
    /// reference: on the thumb it takes hold of it where it was pressed; elsewhere on the
    /// track the thumb's middle jumps there (and is held by it). An `auto` bar answers
    /// whether or not it shows at that moment (the mouse reports no hovering to show it
    /// first); a hidden one, or an `auto` one with nothing to scroll, does not. False when
    /// the press is not the bar's.
    pub fn press(&mut self, viewport: &mut Viewport, row: usize) -> bool {
        self.held = None;
        let always = match self.policy {
            Scrollbar::Hidden => return false,
            Scrollbar::Always => true,
            Scrollbar::Auto => false,
        };
        if row >= viewport.page() {
            return false;
        }
        let Some((top, size)) = viewport.thumb() else {
            // `always` keeps the column even when nothing scrolls: a press there is the
            // bar's, and does nothing.
            return always;
        };
        let grab = if (top..top + size).contains(&row) {
            row - top
        } else {
            let grab = size / 2;
            viewport.scroll_thumb_to(row.saturating_sub(grab));
            grab
        };
        self.held = Some(grab);
        true
    }

    /// The mouse moved to viewport row `row` (above or below the track too) with the
    /// button held: the thumb follows it. False when no thumb is held.
    pub fn drag(&mut self, viewport: &mut Viewport, row: usize) -> bool {
        let Some(grab) = self.held else {
            return false;
        };
        viewport.scroll_thumb_to(row.saturating_sub(grab));
        true
    }

    /// The button came up; true when it held the thumb.
    pub fn release(&mut self) -> bool {
        self.held.take().is_some()
    }

    /// When an `auto` bar is due to go (the loop wakes then to draw without it).
    pub fn deadline(&self) -> Option<Instant> {
        self.until
    }

    /// True when the bar's time ran out by `now` (a frame is needed to take it away).
    pub fn expire(&mut self, now: Instant) -> bool {
        let due = self.until.is_some_and(|until| until <= now);
        if due {
            self.until = None;
        }
        due
    }
}

/// The fullscreen mode's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullscreenOptions {
    pub exit_output: ExitOutput,
    /// Lines one wheel notch scrolls (1..=100).
    pub wheel_lines: usize,
    pub scrollbar: Scrollbar,
    /// A selection is copied when the mouse button comes up (else with `ctrl+x`).
    pub copy_on_select: bool,
}

impl Default for FullscreenOptions {
    fn default() -> Self {
        Self {
            exit_output: ExitOutput::Transcript,
            wheel_lines: WHEEL_LINES_AUTO,
            scrollbar: Scrollbar::Auto,
            copy_on_select: true,
        }
    }
}

impl FullscreenOptions {
    /// The layout asked for: `--tui-mode` (`flag`: Some(true) fullscreen, Some(false)
    /// regular) over the `tuiMode` setting; `regular` (or nothing) keeps the inline mode.
    /// `fullscreenExitOutput`, `fullscreenWheelScrollLines` (`auto` or a number, clamped
    /// to 1..100 as in the reference), `fullscreenScrollbar` and `fullscreenCopyOnSelect`
    /// shape the fullscreen one.
    pub fn choose(flag: Option<bool>, settings: &Settings) -> Option<Self> {
        let fullscreen = flag.unwrap_or_else(|| {
            settings.get("tuiMode").and_then(Value::as_str) == Some("fullscreen")
        });
        if !fullscreen {
            return None;
        }
        let exit_output = match settings.get("fullscreenExitOutput").and_then(Value::as_str) {
            Some("resume-hint") => ExitOutput::ResumeHint,
            _ => ExitOutput::Transcript,
        };
        let wheel_lines = settings
            .get("fullscreenWheelScrollLines")
            .and_then(Value::as_f64)
            .map_or(WHEEL_LINES_AUTO, |n| n.clamp(1.0, 100.0) as usize);
        let scrollbar = match settings.get("fullscreenScrollbar").and_then(Value::as_str) {
            Some("always") => Scrollbar::Always,
            Some("hidden") => Scrollbar::Hidden,
            _ => Scrollbar::Auto,
        };
        let copy_on_select = settings
            .get("fullscreenCopyOnSelect")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        Some(Self {
            exit_output,
            wheel_lines,
            scrollbar,
            copy_on_select,
        })
    }
}

impl Ui {
    /// A key of the fullscreen transcript (`tui.altScreen.*`): the scrolling keys (see
    /// [`Ui::fullscreen_scroll`]; with an empty editor top and bottom, else `home`/`end`
    /// move the editor's cursor), the jumps to the previous and next prompt, and opening
    /// the search. True when the key was one.
    pub(super) fn fullscreen_key(&mut self, key: &Key) -> bool {
        let editor_empty = self.screen.editor.text().is_empty();
        if self.fullscreen_scroll(key, editor_empty) {
            return true;
        }
        if self.screen.viewport.is_none() {
            return false;
        }
        let b = self.prefs.bindings();
        if b.matches("tui.altScreen.search", key) {
            return self.open_search();
        }
        let forward = if b.matches("tui.altScreen.previousPrompt", key) {
            false
        } else if b.matches("tui.altScreen.nextPrompt", key) {
            true
        } else {
            return false;
        };
        self.jump_to_prompt(forward);
        true
    }

    /// Brings the previous (next) prompt above the view's first line to its top, as the
    /// reference does with the rows it marks as a prompt's start.
    fn jump_to_prompt(&mut self, forward: bool) {
        let prompts = self.screen.prompt_lines();
        let Some(viewport) = &mut self.screen.viewport else {
            return;
        };
        let top = viewport.first_line();
        let target = if forward {
            prompts.iter().find(|&&line| line > top)
        } else {
            prompts.iter().rev().find(|&&line| line < top)
        };
        if let Some(&line) = target {
            viewport.scroll_to_line(line);
            self.mark_urgent();
        }
    }

    /// A scrolling key: page, half page, line, and top and bottom when `ends` (the
    /// search lets them scroll too). True when the key was one.
    pub(super) fn fullscreen_scroll(&mut self, key: &Key, ends: bool) -> bool {
        let b = self.prefs.bindings();
        let Some(viewport) = &mut self.screen.viewport else {
            return false;
        };
        let page = viewport.page();
        let half = page.div_ceil(2);
        // A page keeps one line of the last one in view, for context.
        let step = page.saturating_sub(1).max(1);
        if b.matches("tui.altScreen.pageUp", key) {
            viewport.scroll_up(step);
        } else if b.matches("tui.altScreen.pageDown", key) {
            viewport.scroll_down(step);
        } else if b.matches("tui.altScreen.halfPageUp", key) {
            viewport.scroll_up(half);
        } else if b.matches("tui.altScreen.halfPageDown", key) {
            viewport.scroll_down(half);
        } else if b.matches("tui.altScreen.lineUp", key) {
            viewport.scroll_up(1);
        } else if b.matches("tui.altScreen.lineDown", key) {
            viewport.scroll_down(1);
        } else if ends && b.matches("tui.altScreen.top", key) {
            viewport.to_top();
        } else if ends && b.matches("tui.altScreen.bottom", key) {
            viewport.to_bottom();
        } else {
            return false;
        }
        self.mark_urgent();
        true
    }

    /// A mouse report: the wheel scrolls the fullscreen transcript, the left button
    /// selects text in it (see `select.rs`); other buttons do nothing.
    pub(super) fn on_mouse(&mut self, event: &InputEvent) {
        let Some(mouse) = MouseEvent::parse(event) else {
            return;
        };
        let lines = self.fullscreen_options.wheel_lines;
        let Some(viewport) = &mut self.screen.viewport else {
            return;
        };
        match mouse.kind {
            MouseKind::WheelUp => viewport.scroll_up(lines),
            MouseKind::WheelDown => viewport.scroll_down(lines),
            MouseKind::Press(0) => {
                if !self.search_click(&mouse) && !self.scrollbar_press(&mouse) {
                    self.select_press(&mouse);
                }
                return;
            }
            MouseKind::Drag(0) => {
                let row = usize::from(mouse.row);
                if !self.screen.scrollbar.drag(viewport, row) {
                    return self.select_drag(&mouse);
                }
            }
            MouseKind::Release(0) => {
                if !self.screen.scrollbar.release() {
                    self.select_release();
                }
                return;
            }
            _ => return,
        }
        self.mark_urgent();
    }

    /// A press of the left button in the screen's last column, over the transcript: the
    /// scrollbar's (see [`ScrollbarState::press`]). It starts no selection and clears the
    /// one there was, as in the reference. True when the bar took it.
    fn scrollbar_press(&mut self, mouse: &MouseEvent) -> bool {
        let last_column = self.terminal.width().saturating_sub(1);
        let Some(viewport) = &mut self.screen.viewport else {
            return false;
        };
        if mouse.column != last_column
            || !self
                .screen
                .scrollbar
                .press(viewport, usize::from(mouse.row))
        {
            return false;
        }
        self.clear_selection();
        self.mark_urgent();
        true
    }

    /// Back to the newest output (a prompt was sent).
    pub(super) fn follow_transcript(&mut self) {
        if let Some(viewport) = &mut self.screen.viewport {
            viewport.to_bottom();
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn settings(value: serde_json::Value) -> Settings {
        Settings::from_layers(
            value.as_object().cloned().unwrap_or_default(),
            serde_json::Map::new(),
        )
    }

    #[test]
    fn the_flag_wins_over_the_setting() {
        let fullscreen = settings(json!({"tuiMode": "fullscreen"}));
        assert!(FullscreenOptions::choose(None, &fullscreen).is_some());
        assert!(FullscreenOptions::choose(Some(false), &fullscreen).is_none());
        let regular = settings(json!({"tuiMode": "regular"}));
        assert!(FullscreenOptions::choose(None, &regular).is_none());
        assert!(FullscreenOptions::choose(Some(true), &regular).is_some());
        assert!(FullscreenOptions::choose(None, &Settings::default()).is_none());
    }

    #[test]
    fn exit_output_and_wheel_lines_follow_the_reference() {
        let chosen = FullscreenOptions::choose(
            Some(true),
            &settings(
                json!({"fullscreenExitOutput": "resume-hint", "fullscreenWheelScrollLines": 500}),
            ),
        );
        assert_eq!(
            chosen,
            Some(FullscreenOptions {
                exit_output: ExitOutput::ResumeHint,
                wheel_lines: 100,
                ..FullscreenOptions::default()
            })
        );
        let auto = FullscreenOptions::choose(
            Some(true),
            &settings(json!({"fullscreenWheelScrollLines": "auto"})),
        );
        assert_eq!(auto, Some(FullscreenOptions::default()));
        let shaped = FullscreenOptions::choose(
            Some(true),
            &settings(json!({"fullscreenScrollbar": "always", "fullscreenCopyOnSelect": false})),
        )
        .expect("fullscreen");
        assert_eq!(shaped.scrollbar, Scrollbar::Always);
        assert!(!shaped.copy_on_select);
    }
}
