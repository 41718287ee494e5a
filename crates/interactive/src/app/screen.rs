//! Everything on screen, top to bottom: start-up header, transcript, queued messages, the
//! working indicator, the editor (or a picker in its place) and the footer. Pure state and
//! rendering; no terminal I/O, so it can be rendered to strings in tests.

use knightcode_tui::Component as _;
use knightcode_tui::Theme;
use knightcode_tui::editor::Editor;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;
use knightcode_tui::width::wrap_text_with_ansi;

use crate::footer;
use crate::footer::FooterData;
use crate::transcript::Transcript;

use super::overlay::Overlay;

/// Spinner frames of the working indicator.
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The row between the transcript and the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Idle,
    /// The agent (or a shell command) is working.
    Working {
        message: String,
        frame: usize,
        since: std::time::Instant,
    },
}

pub struct Screen {
    pub theme: Theme,
    pub header: Vec<String>,
    pub transcript: Transcript,
    pub steering: Vec<String>,
    pub follow_ups: Vec<String>,
    pub status: Status,
    /// A one-line hint under the working row ("Press ctrl+c again to exit").
    pub hint: Option<String>,
    pub editor: Editor,
    /// The editor's border colour (by thinking level); a `!` line shows the shell colour.
    pub border: knightcode_tui::Style,
    /// The key that stops the agent or a shell command, as the working row names it.
    pub interrupt_key: String,
    /// What that key does now: "interrupt" the agent, "cancel" a shell command.
    pub interrupt_verb: &'static str,
    /// Images waiting to go with the next prompt, by display name.
    pub attachments: Vec<String>,
    pub overlay: Option<Overlay>,
    /// Extensions' overlays, bottom first, drawn over the finished frame.
    pub floating: Vec<super::ext_ui::FloatingPanel>,
    /// The overlay that takes the keys, if one does (else they go the usual way).
    pub floating_focus: Option<u64>,
    /// Extensions' string widgets (`ctx.ui.setWidget`), in the order they were first set.
    pub widgets: Vec<super::ext_ui::Widget>,
    /// An extension's footer and header (`setFooter`, `setHeader`): component id and its
    /// last lines, shown instead of the built-in ones.
    pub custom_footer: Option<(u64, Vec<String>)>,
    pub custom_header: Option<(u64, Vec<String>)>,
    /// An extension's editor (`setEditorComponent`) in place of ours.
    pub custom_editor: Option<(u64, Vec<String>)>,
    /// `setWorkingVisible(false)` hides the working row.
    pub working_visible: bool,
    /// `setWorkingIndicator`: the spinner's frames instead of ours.
    pub spinner: Option<Vec<String>>,
    pub footer: FooterData,
    /// Terminal rows, so pickers can size their lists.
    pub height: u16,
    /// The last frame's lines, kept so that unchanged transcript lines are not copied
    /// again (see `Transcript::render_into`).
    frame: Vec<String>,
    /// The frame with the floating panels drawn over it (only while one is open).
    composited: Vec<String>,
    /// The header as it is at the top of `frame`, the width it was laid out for and the
    /// lines it took there.
    framed_header: Vec<String>,
    header_width: u16,
    header_lines: usize,
    /// The fullscreen mode's scroll position over the header and transcript; `None` in
    /// the regular (inline) mode.
    pub viewport: Option<knightcode_tui::viewport::Viewport>,
    /// The fullscreen frame: one screen of rows (the transcript's part in view, then the
    /// rows below it).
    screenful: Vec<String>,
    /// The fullscreen transcript's selected text, over the lines of
    /// [`Screen::transcript_lines`].
    pub selection: Option<knightcode_tui::selection::Selection>,
    /// How many lines of `frame` are the header and transcript (the rest is the queue,
    /// working row, editor and footer).
    upper_len: usize,
    /// The fullscreen transcript's search, while it is open.
    pub(super) search: Option<super::search::TranscriptSearch>,
    /// The search's index of the header and transcript lines while no search is open
    /// (fullscreen only). Every frame brings it up to date with the lines that changed, so
    /// that neither opening a search nor its first key reads the transcript.
    pub(super) search_index: knightcode_tui::search::SearchIndex,
    /// Lines at the start of the header and transcript that stood since the index was
    /// last brought up to date.
    search_unchanged: usize,
    /// When the fullscreen transcript's scrollbar shows.
    pub scrollbar: super::fullscreen::ScrollbarState,
}

impl Screen {
    /// An idle screen showing `transcript`, with no header, queue or overlay. Lets benchmarks
    /// and tests build one without naming every field, so adding a field breaks nothing.
    pub fn new(
        theme: Theme,
        transcript: Transcript,
        editor: Editor,
        footer: FooterData,
        height: u16,
    ) -> Self {
        let border = theme.thinking_borders[0];
        Self {
            theme,
            border,
            interrupt_key: "esc".to_owned(),
            interrupt_verb: "interrupt",
            header: Vec::new(),
            transcript,
            steering: Vec::new(),
            follow_ups: Vec::new(),
            status: Status::Idle,
            hint: None,
            editor,
            attachments: Vec::new(),
            overlay: None,
            floating: Vec::new(),
            floating_focus: None,
            widgets: Vec::new(),
            custom_footer: None,
            custom_header: None,
            custom_editor: None,
            working_visible: true,
            spinner: None,
            footer,
            height,
            frame: Vec::new(),
            composited: Vec::new(),
            framed_header: Vec::new(),
            header_width: 0,
            header_lines: 0,
            viewport: None,
            screenful: Vec::new(),
            selection: None,
            upper_len: 0,
            search: None,
            search_index: knightcode_tui::search::SearchIndex::new(),
            search_unchanged: 0,
            scrollbar: super::fullscreen::ScrollbarState::default(),
        }
    }

    /// The header and transcript lines of the last frame, as laid out for its width.
    pub fn transcript_lines(&self) -> &[String] {
        &self.frame[..self.upper_len.min(self.frame.len())]
    }

    /// Where each user prompt starts among [`Screen::transcript_lines`].
    pub fn prompt_lines(&self) -> Vec<usize> {
        self.transcript
            .prompt_lines()
            .map(|line| self.header_lines + line)
            .collect()
    }

    pub fn advance_spinner(&mut self) {
        if let Status::Working { frame, .. } = &mut self.status {
            *frame = (*frame + 1) % SPINNER.len();
        }
    }

    pub fn is_working(&self) -> bool {
        matches!(self.status, Status::Working { .. })
    }

    pub fn render(&mut self, width: u16) -> &[String] {
        let theme = &self.theme;
        let w = usize::from(width);
        // A scrollbar of its own column (`fullscreenScrollbar: always`) narrows the
        // transcript by one.
        let upper_width = if self.viewport.is_some() && self.scrollbar.reserves_column() {
            width.saturating_sub(1).max(1)
        } else {
            width
        };
        let header = match &self.custom_header {
            Some((_, lines)) => lines,
            None => &self.header,
        };
        let reflowed = self.framed_header != *header
            || self.header_width != upper_width
            || self.frame.len() < self.header_lines;
        if reflowed {
            let flowed = flow_header(header, usize::from(upper_width));
            self.frame.clear();
            self.header_lines = flowed.len();
            self.frame.extend(flowed);
            self.framed_header = header.clone();
            self.header_width = upper_width;
            self.transcript.invalidate_frame();
        }
        let base = self.header_lines;
        let mut frame = std::mem::take(&mut self.frame);
        let kept = self.transcript.render_into(upper_width, &mut frame, base);
        let kept = if reflowed { 0 } else { kept };
        self.search_unchanged = self.search_unchanged.min(kept);

        let mut lower: Vec<String> = Vec::new();
        if !self.steering.is_empty() || !self.follow_ups.is_empty() {
            lower.push(String::new());
            for text in &self.steering {
                let line = format!("Steering: {}", one_line(text));
                lower.push(theme.muted.paint(&truncate_to_width(&line, w, "…")));
            }
            for text in &self.follow_ups {
                let line = format!("Follow-up: {}", one_line(text));
                lower.push(theme.muted.paint(&truncate_to_width(&line, w, "…")));
            }
            let hint = "↳ alt+up to edit queued messages";
            lower.push(theme.dim.paint(&truncate_to_width(hint, w, "…")));
        }
        lower.push(String::new());
        match &self.status {
            Status::Working {
                message,
                frame,
                since,
            } if self.working_visible => {
                let spinner = match &self.spinner {
                    Some(frames) if !frames.is_empty() => frames[*frame % frames.len()].clone(),
                    Some(_) => String::new(),
                    None => SPINNER[*frame % SPINNER.len()].to_owned(),
                };
                let text = if spinner.is_empty() {
                    message.clone()
                } else {
                    format!("{spinner} {message}")
                };
                let elapsed = since.elapsed().as_secs();
                let elapsed = if elapsed >= 60 {
                    format!("{}m {:02}s", elapsed / 60, elapsed % 60)
                } else {
                    format!("{elapsed}s")
                };
                let text = format!(
                    "{} {}",
                    theme.accent.paint(&text),
                    theme.muted.paint(&format!(
                        "({elapsed} · {} to {})",
                        self.interrupt_key, self.interrupt_verb
                    ))
                );
                lower.push(truncate_to_width(&text, w, "…"));
            }
            Status::Working { .. } | Status::Idle => {}
        }
        if let Some(hint) = &self.hint {
            for line in wrap_text_with_ansi(hint, w) {
                lower.push(theme.warning.paint(&line));
            }
        }
        for name in &self.attachments {
            lower.push(
                theme
                    .accent
                    .paint(&truncate_to_width(&format!("📎 {name}"), w, "…")),
            );
        }
        let above = widget_lines(&self.widgets, false, width);
        if !above.is_empty() {
            // One blank row between the working row and the widgets, as in the reference.
            if self.is_working() {
                lower.push(String::new());
            }
            lower.extend(above);
        }
        match &mut self.overlay {
            Some(overlay) => {
                overlay.set_max_rows(usize::from(self.height).saturating_sub(10).clamp(3, 20));
                lower.extend(overlay.render(width));
            }
            _ if self.custom_editor.is_some() => {
                if let Some((_, lines)) = &self.custom_editor {
                    lower.extend(lines.iter().map(|l| truncate_to_width(l, w, "")));
                }
            }
            _ => {
                // Shell mode (`!cmd`) has its own border colour, as in the reference.
                let shell = self
                    .editor
                    .lines()
                    .first()
                    .is_some_and(|line| line.trim_start().starts_with('!'));
                let border = if shell { theme.success } else { self.border };
                self.editor.set_border_style(border);
                lower.extend(self.editor.render(width));
            }
        }
        lower.extend(widget_lines(&self.widgets, true, width));
        match &self.custom_footer {
            Some((_, lines)) => lower.extend(lines.iter().map(|l| truncate_to_width(l, w, ""))),
            None => lower.extend(footer::render(&self.footer, width, theme)),
        }
        self.upper_len = frame.len();
        frame.extend(lower);
        self.frame = frame;
        let mut shown = &self.frame;
        if let Some(viewport) = &mut self.viewport {
            let (upper, lower) = self.frame.split_at(self.upper_len);
            let height = usize::from(self.height);
            let indicator_width = usize::from(upper_width);
            let compose = |viewport: &mut knightcode_tui::viewport::Viewport,
                           out: &mut Vec<String>| {
                viewport.compose(
                    upper,
                    lower,
                    height,
                    |below| scrolled_indicator(below, indicator_width, theme),
                    out,
                );
            };
            compose(viewport, &mut self.screenful);
            // A match picked out of view is brought into it: the rows are composed again.
            // The search's index follows the lines every frame, the few that changed at a
            // time, so that a search opened or a query typed reads nothing but the index.
            match &mut self.search {
                Some(search) => {
                    let top = search.refresh(upper, self.search_unchanged, viewport);
                    if let Some(top) = top {
                        viewport.scroll_to_line(top);
                        compose(viewport, &mut self.screenful);
                    }
                }
                None => {
                    self.search_index.sync(upper, self.search_unchanged);
                }
            }
            self.search_unchanged = usize::MAX;
            if let Some(selection) = &self.selection {
                highlight_selection(&mut self.screenful, viewport, selection);
            }
            if let Some(search) = &self.search {
                search.highlight(&mut self.screenful, viewport);
            }
            if let Some(thumb) = self.scrollbar.thumb(viewport, std::time::Instant::now()) {
                paint_thumb(&mut self.screenful, thumb, w.saturating_sub(1));
            }
            if let Some(search) = &mut self.search {
                search.draw_box(&mut self.screenful, w, theme);
            }
            shown = &self.screenful;
        }
        // Overlays are drawn over the finished frame; the editor stays in place.
        let floating: Vec<knightcode_tui::composite::Floating<'_>> = self
            .floating
            .iter()
            .filter_map(|panel| {
                let at = panel.at?;
                Some(knightcode_tui::composite::Floating {
                    lines: &panel.lines,
                    row: at.row,
                    col: at.col,
                    width: at.width,
                })
            })
            .collect();
        if !floating.is_empty() {
            self.composited =
                knightcode_tui::composite::composite(shown, &floating, w, usize::from(self.height));
            return &self.composited;
        }
        shown
    }
}

/// Draws the part of `selection` in view over the viewport's rows of `rows`.
fn highlight_selection(
    rows: &mut [String],
    viewport: &knightcode_tui::viewport::Viewport,
    selection: &knightcode_tui::selection::Selection,
) {
    let (start, end) = selection.ordered();
    let first = viewport.first_line();
    let shown = viewport.content_rows().min(rows.len());
    let from = start.line.max(first);
    let to = end.line.min((first + shown).saturating_sub(1));
    for line in from..=to {
        if line < first || line - first >= shown {
            continue;
        }
        let row = &mut rows[line - first];
        if let Some((from, to)) = selection.span_on(line, visible_width(row)) {
            *row = knightcode_tui::selection::highlight(row, from, to);
        }
    }
}

/// The scrollbar's thumb (first row, rows) in column `col` of the viewport's rows: the
/// cells take the reference's grey background, their text kept.
fn paint_thumb(rows: &mut [String], (first, len): (usize, usize), col: usize) {
    let style = knightcode_tui::Style::new().bg(knightcode_tui::style::Color::Ansi(8));
    for row in rows.iter_mut().skip(first).take(len) {
        *row = knightcode_tui::composite::restyle_cell(row, col, &style);
    }
}

/// The viewport's last row while the transcript is scrolled up: how much is below, and
/// whether something new arrived there.
fn scrolled_indicator(
    below: knightcode_tui::viewport::Below,
    width: usize,
    theme: &Theme,
) -> String {
    let lines = if below.lines == 1 { "line" } else { "lines" };
    let text = if below.new_content {
        format!(
            "↓ new output below · {} {lines} · pgdn to scroll down",
            below.lines
        )
    } else {
        format!("↓ {} more {lines} below · pgdn to scroll down", below.lines)
    };
    let style = if below.new_content {
        theme.accent
    } else {
        theme.muted
    };
    style.paint(&truncate_to_width(&text, width, "…"))
}

/// The header at `width`: a line too wide breaks between its ` · ` items (never inside
/// one: `ctrl+o tool output` stays whole), and only an item wider than the screen wraps.
fn flow_header(header: &[String], width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in header {
        if visible_width(line) <= width {
            out.push(line.clone());
            continue;
        }
        let mut rows: Vec<String> = Vec::new();
        let mut row = String::new();
        for item in line.split(" · ") {
            if !row.is_empty() && visible_width(&row) + 3 + visible_width(item) > width {
                rows.push(std::mem::take(&mut row));
            }
            if !row.is_empty() {
                row.push_str(" · ");
            }
            row.push_str(item);
        }
        rows.push(row);
        // One call, so the line's colour carries over to the rows after the first.
        out.extend(wrap_text_with_ansi(&rows.join("\n"), width));
    }
    out
}

/// The widgets above (or below) the editor, each line wrapped inside one column of
/// padding on each side.
fn widget_lines(widgets: &[super::ext_ui::Widget], below: bool, width: u16) -> Vec<String> {
    let inner = usize::from(width).saturating_sub(2).max(1);
    let mut out = Vec::new();
    for widget in widgets.iter().filter(|w| w.below == below) {
        if widget.component.is_some() {
            out.extend(
                widget
                    .lines
                    .iter()
                    .map(|l| truncate_to_width(l, usize::from(width), "")),
            );
            continue;
        }
        for line in &widget.lines {
            if line.trim().is_empty() {
                out.push(String::new());
                continue;
            }
            for row in wrap_text_with_ansi(&line.replace('\t', "   "), inner) {
                out.push(format!(" {row}"));
            }
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
