//! The renderer's bytes, played into a terminal emulator: after every frame the emulated
//! screen and scrollback must hold exactly what the frame says.

use knightcode_tui::{CURSOR_MARKER, FrameStats, Renderer};

/// A terminal emulator with (practically) unlimited scrollback.
struct Term {
    parser: vt100::Parser,
}

const CLEAR_ALL: &[u8] = b"\x1b[2J\x1b[H\x1b[3J";

impl Term {
    fn new(rows: u16, cols: u16) -> Self {
        Self {
            parser: vt100::Parser::new(rows, cols, 1_000_000),
        }
    }

    /// Feeds bytes. vt100 ignores "clear scrollback" (`CSI 3 J`); real terminals honour
    /// it, so the emulator is replaced by an empty one at that point (the screen is blank
    /// and the cursor home there anyway).
    fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(at) = find(rest, CLEAR_ALL) {
            self.parser.process(&rest[..at]);
            let (rows, cols) = self.parser.screen().size();
            let hidden = self.parser.screen().hide_cursor();
            self.parser = vt100::Parser::new(rows, cols, 1_000_000);
            if hidden {
                self.parser.process(b"\x1b[?25l");
            }
            rest = &rest[at + CLEAR_ALL.len()..];
        }
        self.parser.process(rest);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.screen_mut().set_size(rows, cols);
    }

    /// The visible rows, trailing spaces removed.
    fn screen(&self) -> Vec<String> {
        let (_, cols) = self.parser.screen().size();
        self.parser
            .screen()
            .rows(0, cols)
            .map(|row| row.trim_end().to_owned())
            .collect()
    }

    /// The visible rows with trailing blank rows removed.
    fn screen_content(&self) -> Vec<String> {
        trim_blank_tail(self.screen())
    }

    /// Rows in scrollback, oldest first.
    fn scrollback(&mut self) -> Vec<String> {
        let (_, cols) = self.parser.screen().size();
        let screen = self.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let len = screen.scrollback();
        let mut rows = Vec::with_capacity(len);
        for offset in (1..=len).rev() {
            screen.set_scrollback(offset);
            let row = screen.rows(0, cols).next().unwrap_or_default();
            rows.push(row.trim_end().to_owned());
        }
        screen.set_scrollback(0);
        rows
    }

    fn scrollback_len(&mut self) -> usize {
        let screen = self.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let len = screen.scrollback();
        screen.set_scrollback(0);
        len
    }

    /// Scrollback followed by the screen, trailing blank rows removed.
    fn history(&mut self) -> Vec<String> {
        let mut all = self.scrollback();
        all.extend(self.screen());
        trim_blank_tail(all)
    }

    fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    fn cursor_hidden(&self) -> bool {
        self.parser.screen().hide_cursor()
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn trim_blank_tail(mut rows: Vec<String>) -> Vec<String> {
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

fn numbered(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("line {i}")).collect()
}

/// A renderer and an emulator of the same size, fed frame by frame.
struct Rig {
    renderer: Renderer,
    term: Term,
    last: Vec<u8>,
}

impl Rig {
    fn new(rows: u16, cols: u16) -> Self {
        Self {
            renderer: Renderer::new(cols, rows),
            term: Term::new(rows, cols),
            last: Vec::new(),
        }
    }

    fn frame(&mut self, lines: &[String]) -> FrameStats {
        self.last.clear();
        let stats = self.renderer.render(lines, &mut self.last);
        assert_eq!(stats.bytes, self.last.len());
        self.term.feed(&self.last);
        stats
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.term.resize(rows, cols);
        self.renderer.resize(cols, rows);
    }
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn first_frame_writes_every_line_inside_synchronized_output() {
    let mut rig = Rig::new(10, 20);
    let lines = numbered(0..5);
    let stats = rig.frame(&lines);
    assert_eq!(rig.term.screen_content(), lines);
    assert!(rig.last.starts_with(b"\x1b[?2026h"));
    assert!(rig.last.ends_with(b"\x1b[?2026l"));
    assert_eq!(stats.lines_rewritten, 5);
    assert!(!stats.full_redraw);
    assert!(rig.term.scrollback().is_empty());
}

#[test]
fn appended_lines_are_written_below_and_nothing_else() {
    let mut rig = Rig::new(10, 20);
    rig.frame(&numbered(0..5));
    let stats = rig.frame(&numbered(0..7));
    assert_eq!(rig.term.screen_content(), numbered(0..7));
    assert_eq!(stats.lines_rewritten, 2);
    assert_eq!(
        rig.last,
        b"\x1b[?2026h\r\n\x1b[2Kline 5\r\n\x1b[2Kline 6\x1b[?2026l"
    );
}

#[test]
fn a_changed_line_is_rewritten_alone() {
    let mut rig = Rig::new(10, 20);
    let mut lines = numbered(0..8);
    rig.frame(&lines);
    lines[3] = "changed".to_owned();
    let stats = rig.frame(&lines);
    assert_eq!(rig.term.screen_content(), lines);
    assert_eq!(stats.lines_rewritten, 1);
    // From the last line (7) up four rows, clear that row, write it.
    let expected = b"\x1b[?2026h\x1b[4A\r\x1b[2Kchanged\x1b[?2026l";
    assert_eq!(rig.last, expected);
    assert_eq!(stats.bytes, expected.len());

    // Two changes far apart: the lines between them are skipped, not rewritten.
    lines[1] = "one".to_owned();
    lines[6] = "six".to_owned();
    let stats = rig.frame(&lines);
    assert_eq!(rig.term.screen_content(), lines);
    assert_eq!(stats.lines_rewritten, 2);
    assert_eq!(
        rig.last,
        b"\x1b[?2026h\x1b[2A\r\x1b[2Kone\x1b[5B\r\x1b[2Ksix\x1b[?2026l"
    );
}

#[test]
fn an_unchanged_frame_writes_nothing() {
    let mut rig = Rig::new(10, 20);
    let lines = numbered(0..30);
    rig.frame(&lines);
    let stats = rig.frame(&lines);
    assert_eq!(stats, FrameStats::default());
    assert!(rig.last.is_empty());
    // An empty first frame writes nothing either.
    let mut empty = Rig::new(10, 20);
    assert_eq!(empty.frame(&[]), FrameStats::default());
}

#[test]
fn a_shorter_frame_clears_the_rows_left_over() {
    let mut rig = Rig::new(10, 20);
    rig.frame(&numbered(0..8));
    let mut lines = numbered(0..4);
    lines[2] = "two".to_owned();
    let stats = rig.frame(&lines);
    assert_eq!(rig.term.screen(), {
        let mut rows = lines.clone();
        rows.resize(10, String::new());
        rows
    });
    assert_eq!(stats.lines_rewritten, 1);
    assert!(!stats.full_redraw);
    // Growing again fills the cleared rows.
    let stats = rig.frame(&numbered(0..6));
    assert_eq!(rig.term.screen_content(), numbered(0..6));
    assert_eq!(stats.lines_rewritten, 3);
    // Shrinking to nothing clears everything drawn.
    rig.frame(&[]);
    assert!(rig.term.screen_content().is_empty());
    rig.frame(&numbered(0..2));
    assert_eq!(rig.term.screen_content(), numbered(0..2));
}

#[test]
fn a_shorter_frame_after_scrolling_keeps_scrollback_and_clears_below() {
    let mut rig = Rig::new(10, 20);
    rig.frame(&numbered(0..25));
    // 15 lines are in scrollback, 10 on screen; drop the last 4.
    let stats = rig.frame(&numbered(0..21));
    assert!(!stats.full_redraw);
    assert_eq!(rig.term.scrollback(), numbered(0..15));
    assert_eq!(rig.term.screen_content(), numbered(15..21));
    // New lines go into the cleared rows, then scroll again.
    rig.frame(&numbered(0..30));
    assert_eq!(rig.term.history(), numbered(0..30));
    assert_eq!(rig.term.screen_content(), numbered(20..30));
}

#[test]
fn streaming_two_thousand_lines_keeps_every_line_in_scrollback() {
    let mut rig = Rig::new(24, 40);
    let all = numbered(0..2000);
    for end in 1..=all.len() {
        let stats = rig.frame(&all[..end]);
        assert_eq!(stats.lines_rewritten, 1, "frame {end}");
    }
    assert_eq!(rig.term.history(), all);
    assert_eq!(rig.term.screen_content(), numbered(1976..2000));
}

#[test]
fn streaming_above_a_fixed_editor_and_footer_leaves_only_the_transcript_in_scrollback() {
    let mut rig = Rig::new(12, 40);
    let mut transcript: Vec<String> = Vec::new();
    for i in 0..300 {
        // The last transcript line grows word by word before the next one starts.
        if i % 3 == 0 {
            transcript.push(format!("msg {}", i / 3));
        } else if let Some(last) = transcript.last_mut() {
            last.push_str(" more");
        }
        let mut lines = transcript.clone();
        lines.push("─".repeat(40));
        lines.push(format!("> typing {i}"));
        lines.push("~/project (main)".to_owned());
        rig.frame(&lines);
        assert_eq!(rig.term.history(), lines, "frame {i}");
    }
}

#[test]
fn a_width_change_redraws_everything_and_replaces_scrollback() {
    let mut rig = Rig::new(10, 30);
    rig.frame(&numbered(0..40));
    rig.resize(10, 20);
    // The app renders again at the new width; lines differ in scrollback too.
    let lines: Vec<String> = (0..45).map(|i| format!("narrow {i}")).collect();
    let stats = rig.frame(&lines);
    assert!(stats.full_redraw);
    assert_eq!(stats.lines_rewritten, 45);
    assert!(find(&rig.last, CLEAR_ALL).is_some());
    assert_eq!(rig.term.history(), lines);
    // Afterwards frames are differential again.
    let mut more = lines.clone();
    more.push("after".to_owned());
    let stats = rig.frame(&more);
    assert!(!stats.full_redraw);
    assert_eq!(stats.lines_rewritten, 1);
    assert_eq!(rig.term.history(), more);
}

#[test]
fn a_requested_full_redraw_replaces_lines_already_in_scrollback() {
    let mut rig = Rig::new(10, 20);
    let mut lines = numbered(0..30);
    rig.frame(&lines);
    // A tool result near the top is expanded: it gains lines.
    lines.splice(3..4, strings(&["tool", "  out 1", "  out 2"]));
    rig.renderer.request_full_redraw();
    let stats = rig.frame(&lines);
    assert!(stats.full_redraw);
    assert_eq!(rig.term.history(), lines);
    // The request is used up.
    assert_eq!(rig.frame(&lines), FrameStats::default());
}

#[test]
fn a_stray_change_in_scrollback_only_repaints_what_is_visible() {
    let mut rig = Rig::new(10, 20);
    let mut lines = numbered(0..50);
    rig.frame(&lines);
    lines[5] = "changed off screen".to_owned();
    lines[45] = "changed on screen".to_owned();
    let stats = rig.frame(&lines);
    assert!(!stats.full_redraw);
    assert_eq!(stats.lines_rewritten, 1);
    assert!(find(&rig.last, b"\x1b[3J").is_none());
    assert!(find(&rig.last, b"\x1b[2J").is_none());
    let history = rig.term.history();
    // Scrollback still shows the old line 5: it cannot change without a full redraw.
    assert_eq!(history[5], "line 5");
    assert_eq!(history[45], "changed on screen");
    assert_eq!(history.len(), 50);
}

#[test]
fn shrinking_below_the_screen_redraws_everything() {
    let mut rig = Rig::new(10, 20);
    rig.frame(&numbered(0..50));
    // Nothing of the new content would be on screen (it all lies above row 0).
    let lines = numbered(0..20);
    let stats = rig.frame(&lines);
    assert!(stats.full_redraw);
    assert_eq!(rig.term.history(), lines);
    assert_eq!(rig.term.screen_content(), numbered(10..20));
}

#[test]
fn a_height_change_repaints_the_screen_without_clearing_scrollback() {
    let mut rig = Rig::new(10, 20);
    rig.frame(&numbered(0..30));
    // Shorter window. Real terminals push the top rows into scrollback; vt100 drops the
    // bottom rows instead, so only the screen (and that scrollback is never cleared) is
    // checked here.
    rig.resize(6, 20);
    let stats = rig.frame(&numbered(0..30));
    assert!(!stats.full_redraw);
    assert!(find(&rig.last, b"\x1b[3J").is_none());
    assert_eq!(rig.term.screen_content(), numbered(24..30));
    assert_eq!(rig.term.scrollback(), numbered(0..20));
    // Later frames are differential and correct at the new height.
    let mut lines = numbered(0..32);
    lines[27] = "edited".to_owned();
    let stats = rig.frame(&lines);
    assert_eq!(stats.lines_rewritten, 3);
    assert_eq!(rig.term.screen_content(), lines[26..32]);

    // Taller window: as many lines as fit are shown again.
    rig.resize(14, 20);
    let stats = rig.frame(&lines);
    assert!(!stats.full_redraw);
    assert!(find(&rig.last, b"\x1b[3J").is_none());
    assert_eq!(rig.term.screen_content(), lines[18..32]);
    lines.push("appended".to_owned());
    rig.frame(&lines);
    assert_eq!(rig.term.screen_content(), lines[19..33]);
}

#[test]
fn a_height_change_with_short_content_keeps_it_in_place() {
    let mut rig = Rig::new(10, 20);
    rig.frame(&numbered(0..4));
    rig.resize(8, 20);
    rig.frame(&numbered(0..4));
    assert_eq!(rig.term.screen_content(), numbered(0..4));
    rig.resize(12, 20);
    rig.frame(&numbered(0..5));
    assert_eq!(rig.term.screen_content(), numbered(0..5));
    assert!(rig.term.scrollback().is_empty());
}

#[test]
fn over_long_lines_are_clipped_and_never_wrap() {
    let mut rig = Rig::new(6, 10);
    let lines = strings(&["0123456789abcdef", "\x1b[31mred red red red\x1b[0m", "tail"]);
    rig.frame(&lines);
    assert_eq!(
        rig.term.screen_content(),
        strings(&["0123456789", "red red re", "tail"])
    );
    // The styled line's colour does not leak into the next line.
    let cell = rig.term.parser.screen().cell(2, 0).unwrap();
    assert_eq!(cell.fgcolor(), vt100::Color::Default);
}

#[test]
fn wide_characters_at_the_edge_are_dropped_whole() {
    let mut rig = Rig::new(6, 10);
    let lines = strings(&[
        "abcdefghi日",  // 11 columns: the wide glyph would straddle the edge
        "日本語です",   // exactly 10 columns
        "👍👍👍👍👍👍", // 12 columns of emoji
        "ok",
    ]);
    rig.frame(&lines);
    assert_eq!(
        rig.term.screen_content(),
        strings(&["abcdefghi", "日本語です", "👍👍👍👍👍", "ok"])
    );
    // Rewriting a full-width line with a shorter one leaves nothing behind.
    let mut next = lines.clone();
    next[1] = "日".to_owned();
    rig.frame(&next);
    assert_eq!(
        rig.term.screen_content(),
        strings(&["abcdefghi", "日", "👍👍👍👍👍", "ok"])
    );
}

#[test]
fn tabs_become_spaces() {
    let mut rig = Rig::new(4, 20);
    rig.frame(&strings(&["a\tb"]));
    assert_eq!(rig.term.screen_content(), strings(&["a   b"]));
}

#[test]
fn the_hardware_cursor_goes_to_the_marker_when_enabled() {
    let mut rig = Rig::new(8, 20);
    let lines = vec![
        "header".to_owned(),
        format!("> hel{CURSOR_MARKER}lo"),
        "footer".to_owned(),
    ];
    // Off: the marker is removed and the cursor stays hidden.
    rig.term.feed(b"\x1b[?25l");
    rig.frame(&lines);
    assert_eq!(
        rig.term.screen_content(),
        strings(&["header", "> hello", "footer"])
    );
    assert!(rig.term.cursor_hidden());

    let mut rig = Rig::new(8, 20);
    rig.term.feed(b"\x1b[?25l");
    rig.renderer.set_show_hardware_cursor(true);
    rig.frame(&lines);
    assert_eq!(rig.term.cursor(), (1, 5));
    assert!(!rig.term.cursor_hidden());
    // Unchanged frame: nothing to do, the cursor stays.
    assert_eq!(rig.frame(&lines), FrameStats::default());
    // A change elsewhere hides the cursor while drawing and puts it back.
    let mut next = lines.clone();
    next[2] = "footer 2".to_owned();
    rig.frame(&next);
    assert_eq!(rig.term.cursor(), (1, 5));
    assert!(!rig.term.cursor_hidden());
    assert_eq!(rig.term.screen_content()[2], "footer 2");
    // The marker moves with the typing.
    next[1] = format!("> hello w{CURSOR_MARKER}");
    rig.frame(&next);
    assert_eq!(rig.term.cursor(), (1, 9));
    // Hidden by someone else (a child process, then `Terminal::resume`): shown again.
    rig.term.feed(b"\x1b[?25l");
    rig.renderer.cursor_was_hidden();
    rig.frame(&next);
    assert_eq!(rig.term.cursor(), (1, 9));
    assert!(!rig.term.cursor_hidden());
    // No marker: hidden again.
    next[1] = "> hello w".to_owned();
    rig.frame(&next);
    assert!(rig.term.cursor_hidden());
}

#[test]
fn the_first_frame_starts_under_the_shell_prompt() {
    let mut rig = Rig::new(6, 20);
    rig.term.feed(b"shell 1\r\nshell 2\r\n$ kc\r\n");
    rig.renderer.set_start_row(3);
    rig.frame(&numbered(0..2));
    assert_eq!(
        rig.term.screen_content(),
        strings(&["shell 1", "shell 2", "$ kc", "line 0", "line 1"])
    );
    // Line 0 scrolls off as the content grows; a later change to it must not be drawn
    // over whatever row the cursor can reach.
    let mut lines = numbered(0..8);
    rig.frame(&lines);
    lines[0] = "changed".to_owned();
    lines[7] = "seven".to_owned();
    let stats = rig.frame(&lines);
    assert_eq!(stats.lines_rewritten, 1);
    let mut expected = strings(&["shell 1", "shell 2", "$ kc"]);
    expected.extend(numbered(0..7));
    expected.push("seven".to_owned());
    assert_eq!(rig.term.history(), expected);
}

#[test]
fn finish_leaves_the_cursor_under_the_content() {
    let mut rig = Rig::new(10, 20);
    rig.renderer.set_show_hardware_cursor(true);
    let lines = vec![format!("> {CURSOR_MARKER}"), "footer".to_owned()];
    rig.frame(&lines);
    let mut out = Vec::new();
    rig.renderer.finish(&mut out);
    rig.term.feed(&out);
    assert_eq!(rig.term.cursor(), (2, 0));
    assert!(!rig.term.cursor_hidden());
    // Scrolled content: the cursor ends on a new bottom row.
    let mut rig = Rig::new(5, 20);
    rig.frame(&numbered(0..12));
    let mut out = Vec::new();
    rig.renderer.finish(&mut out);
    rig.term.feed(&out);
    rig.term.feed(b"$ ");
    assert_eq!(rig.term.history(), {
        let mut rows = numbered(0..12);
        rows.push("$".to_owned());
        rows
    });
    // Content that shrank to end right above the screen: the prompt takes the first row.
    let mut rig = Rig::new(5, 20);
    rig.frame(&numbered(0..12));
    rig.frame(&numbered(0..7));
    let mut out = Vec::new();
    rig.renderer.finish(&mut out);
    rig.term.feed(&out);
    rig.term.feed(b"$ ");
    assert_eq!(rig.term.history(), {
        let mut rows = numbered(0..7);
        rows.push("$".to_owned());
        rows
    });
    // Nothing drawn: the prompt stays where the content would have started.
    let mut rig = Rig::new(5, 20);
    rig.term.feed(b"$ kc\r\n");
    rig.renderer.set_start_row(1);
    rig.frame(&[]);
    let mut out = Vec::new();
    rig.renderer.finish(&mut out);
    rig.term.feed(&out);
    assert_eq!(rig.term.cursor(), (1, 0));
}

#[test]
fn back_from_a_suspend_a_requested_redraw_replaces_the_transcript() {
    let mut rig = Rig::new(5, 20);
    rig.frame(&numbered(0..12));
    let mut out = Vec::new();
    rig.renderer.finish(&mut out);
    rig.term.feed(&out);
    // Ctrl+Z, then `fg`: the shell prints below the transcript.
    rig.term.feed(b"[1]+ Stopped\r\n$ fg\r\n");
    rig.renderer.request_full_redraw();
    let lines = numbered(0..13);
    let stats = rig.frame(&lines);
    assert!(stats.full_redraw);
    assert_eq!(rig.term.history(), lines);
}

#[test]
fn clear_empties_screen_and_scrollback_and_starts_again_at_the_top() {
    let mut rig = Rig::new(5, 20);
    rig.frame(&numbered(0..12));
    let mut out = Vec::new();
    rig.renderer.clear(&mut out);
    rig.term.feed(&out);
    assert!(rig.term.history().is_empty());
    rig.frame(&numbered(100..102));
    assert_eq!(rig.term.history(), numbered(100..102));
}

/// A small deterministic generator, so failures replay.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}

#[test]
fn random_edits_always_leave_the_screen_right() {
    let (rows, cols) = (8_usize, 16_u16);
    let mut rig = Rig::new(rows as u16, cols);
    let mut rng = Lcg(7);
    let mut lines: Vec<String> = Vec::new();
    // The oracle: the screen is a window onto the content that only moves down, except
    // that a full redraw starts it again.
    let mut top: usize = 0;
    for step in 0..3000 {
        match rng.next(6) {
            0 | 1 => {
                for _ in 0..=rng.next(3) {
                    lines.push(format!("s{step} {}", rng.next(100)));
                }
            }
            2 if !lines.is_empty() => {
                let at = rng.next(lines.len());
                lines[at] = format!("e{step}");
            }
            3 if !lines.is_empty() => {
                let keep = lines.len() - rng.next(4).min(lines.len());
                lines.truncate(keep);
            }
            4 if !lines.is_empty() => {
                let at = lines.len() - 1 - rng.next(3).min(lines.len() - 1);
                lines.insert(at, format!("i{step} wide 日本語 and long enough to clip"));
            }
            _ => {}
        }
        let stats = rig.frame(&lines);
        if stats.full_redraw {
            top = lines.len().saturating_sub(rows);
        } else {
            top = top.max(lines.len().saturating_sub(rows));
        }
        let expected: Vec<String> = lines[top.min(lines.len())..]
            .iter()
            .map(|l| {
                knightcode_tui::width::truncate_to_width(l, usize::from(cols), "")
                    .trim_end()
                    .to_owned()
            })
            .collect();
        assert_eq!(rig.term.screen_content(), expected, "step {step}");
        assert_eq!(rig.term.scrollback_len(), top, "step {step}");
    }
}

/// Escapes bytes so a snapshot shows the control sequences.
fn escaped(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .replace('\x1b', "␛")
        .replace('\r', "⏎")
        .replace('\n', "␤")
}

#[test]
fn byte_shape_of_a_small_session() {
    let mut rig = Rig::new(4, 12);
    rig.renderer.set_show_hardware_cursor(true);
    let mut log = String::new();
    let mut step = |rig: &mut Rig, name: &str, lines: &[String]| {
        let stats = rig.frame(lines);
        log.push_str(&format!(
            "{name}: {} bytes, {} lines{}\n  {}\n",
            stats.bytes,
            stats.lines_rewritten,
            if stats.full_redraw { ", full" } else { "" },
            escaped(&rig.last)
        ));
    };
    let editor = |text: &str| format!("> {text}{CURSOR_MARKER}");
    step(&mut rig, "first", &[editor(""), "footer".to_owned()]);
    step(&mut rig, "type", &[editor("hi"), "footer".to_owned()]);
    step(
        &mut rig,
        "submit",
        &strings(&["you: hi", "", "> \x1b_kc:c\x07", "footer"]),
    );
    step(
        &mut rig,
        "stream",
        &strings(&["you: hi", "", "bot: hello", "> \x1b_kc:c\x07", "footer"]),
    );
    step(
        &mut rig,
        "same",
        &strings(&["you: hi", "", "bot: hello", "> \x1b_kc:c\x07", "footer"]),
    );
    rig.resize(4, 10);
    step(
        &mut rig,
        "narrower",
        &strings(&["you: hi", "", "bot: hello", "> \x1b_kc:c\x07", "footer"]),
    );
    let mut out = Vec::new();
    rig.renderer.finish(&mut out);
    log.push_str(&format!("finish\n  {}\n", escaped(&out)));
    insta::assert_snapshot!("small_session", log);
}
