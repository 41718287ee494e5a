//! Generic components through their public API: text cards, truncation, the spinner, the
//! select list (scrolling, filtering, keys) and borders; fuzzy ranking.

use knightcode_tui::components::{
    BorderedBox, DynamicBorder, Loader, Panel, SPINNER_FRAMES, SelectItem, SelectList, Spacer,
    Text, TruncatedText,
};
use knightcode_tui::fuzzy::{fuzzy_filter, fuzzy_match};
use knightcode_tui::style::{Color, Style};
use knightcode_tui::width::visible_width;
use knightcode_tui::{Component, InputEvent, Key, KeyCode, Theme};

fn render(component: &mut dyn Component, width: u16) -> Vec<String> {
    let lines = component.render(width);
    for line in &lines {
        assert!(
            visible_width(line) <= usize::from(width),
            "line wider than {width}: {line:?}"
        );
    }
    lines
}

fn key(code: KeyCode) -> InputEvent {
    InputEvent::Key(Key::plain(code))
}

#[test]
fn text_wraps_inside_its_padding() {
    let mut text = Text::new("The quick brown fox jumps over the lazy dog").with_padding(2, 1);
    insta::assert_snapshot!(render(&mut text, 20).join("|\n"));
    text.set_text("   ");
    assert!(render(&mut text, 20).is_empty());
}

#[test]
fn text_background_fills_every_line() {
    let bg = Style::new().bg(Color::Rgb(52, 53, 65));
    let mut text = Text::new(format!("hi {}", Style::new().bold().paint("you")))
        .with_padding(1, 1)
        .with_background(bg);
    let lines = render(&mut text, 12);
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|line| visible_width(line) == 12));
    insta::assert_snapshot!(lines.join("\n").replace('\x1b', "␛"));
}

#[test]
fn text_at_narrow_widths_with_wide_glyphs() {
    let mut text = Text::new("日本語 👍 emoji 👨‍👩‍👧 x").with_padding(1, 0);
    for width in 1..=20 {
        render(&mut text, width);
    }
    insta::assert_snapshot!(render(&mut text, 8).join("|\n"));
}

#[test]
fn truncated_text_keeps_one_line() {
    let mut text = TruncatedText::new("first line that is long\nsecond");
    assert_eq!(render(&mut text, 10), vec!["first lin…"]);
    assert_eq!(render(&mut text, 40), vec!["first line that is long"]);
    let mut padded = TruncatedText::new("日本語テキスト").with_padding(1, 1);
    assert_eq!(render(&mut padded, 8), vec!["", " 日本…", ""]);
    assert_eq!(render(&mut padded, 1).len(), 3);
}

#[test]
fn spacer_and_borders() {
    assert_eq!(render(&mut Spacer(2), 5), vec!["", ""]);
    assert_eq!(
        render(&mut DynamicBorder::new(Style::new()), 4),
        vec!["────"]
    );
    let mut boxed = BorderedBox::new(Style::new());
    boxed.push(Box::new(Text::new("inside")));
    assert_eq!(render(&mut boxed, 6), vec!["──────", "inside", "──────"]);
}

#[test]
fn panel_pads_children_and_fills_background() {
    let mut panel = Panel::new(1, 1, None);
    panel.push(Box::new(Text::new("one two three")));
    panel.push(Box::new(Spacer(1)));
    panel.push(Box::new(Text::new("four")));
    assert_eq!(
        render(&mut panel, 9),
        vec!["", " one two", " three", "", " four", ""]
    );
    let bg = Style::new().bg(Color::Ansi(4));
    panel.set_background(Some(bg));
    let lines = render(&mut panel, 9);
    assert!(lines.iter().all(|line| visible_width(line) == 9));
    assert!(lines.iter().all(|line| line.starts_with("\x1b[44m")));
    let mut empty = Panel::new(1, 1, Some(bg));
    assert!(render(&mut empty, 9).is_empty());
}

#[test]
fn loader_ticks_through_frames() {
    let mut loader = Loader::new("Working...", &Theme::plain());
    assert_eq!(render(&mut loader, 30), vec!["", " ⠋ Working..."]);
    loader.tick();
    assert_eq!(render(&mut loader, 30), vec!["", " ⠙ Working..."]);
    for _ in 1..SPINNER_FRAMES.len() {
        loader.tick();
    }
    assert_eq!(loader.frame(), 0);
    loader.set_message("Compacting");
    assert_eq!(render(&mut loader, 30), vec!["", " ⠋ Compacting"]);
    let dark = Loader::new("x", &Theme::dark()).render(30);
    assert!(dark[1].contains("\x1b[38;2;138;190;183m⠋\x1b[0m"));
}

fn models() -> Vec<SelectItem> {
    (1..=20)
        .map(|n| {
            SelectItem::new(format!("model-{n:02}"))
                .with_description(format!("Model number {n} from the provider"))
        })
        .collect()
}

#[test]
fn select_list_scrolls_around_the_selection() {
    let mut list = SelectList::new(models(), 5, &Theme::plain());
    let mut frames = vec![render(&mut list, 60).join("\n")];
    list.select_prev(); // wraps to the last item
    frames.push(render(&mut list, 60).join("\n"));
    for _ in 0..10 {
        list.select_next(); // wraps to the first, then moves down to the tenth
    }
    assert_eq!(list.selected_index(), 9);
    frames.push(render(&mut list, 60).join("\n"));
    insta::assert_snapshot!(frames.join("\n---\n"));
}

#[test]
fn select_list_keys_and_pages() {
    let mut list = SelectList::new(models(), 5, &Theme::plain());
    assert!(list.handle_input(&key(KeyCode::Down)));
    assert_eq!(list.selected().map(|i| i.value.as_str()), Some("model-02"));
    assert!(list.handle_input(&key(KeyCode::PageDown)));
    assert_eq!(list.selected_index(), 6);
    for _ in 0..5 {
        list.handle_input(&key(KeyCode::PageDown));
    }
    assert_eq!(list.selected_index(), 19);
    assert!(list.handle_input(&key(KeyCode::PageUp)));
    assert_eq!(list.selected_index(), 14);
    assert!(list.handle_input(&key(KeyCode::Up)));
    assert_eq!(list.selected_index(), 13);
    // Confirm and cancel are the app's to decide.
    assert!(!list.handle_input(&key(KeyCode::Enter)));
    assert!(!list.handle_input(&key(KeyCode::Escape)));
    assert!(!list.handle_input(&InputEvent::Paste("x".into())));
}

#[test]
fn select_list_filters_fuzzily() {
    let items = vec![
        SelectItem::new("claude-sonnet-4").with_description("Anthropic"),
        SelectItem::new("gpt-4o").with_description("OpenAI"),
        SelectItem::new("gemini-2.5-pro").with_description("Google"),
        SelectItem::new("sonnet-legacy").with_label("Sonnet (legacy)"),
    ];
    let mut list = SelectList::new(items, 5, &Theme::plain()).with_empty_message("No models");
    list.set_filter("sonnet");
    let shown: Vec<&str> = list.visible_items().map(|i| i.value.as_str()).collect();
    assert_eq!(shown, vec!["sonnet-legacy", "claude-sonnet-4"]);
    assert_eq!(
        list.selected().map(|i| i.value.as_str()),
        Some("sonnet-legacy")
    );
    list.set_filter("g4");
    assert_eq!(list.selected().map(|i| i.value.as_str()), Some("gpt-4o"));
    list.set_filter("zzz");
    assert!(list.selected().is_none());
    assert_eq!(render(&mut list, 40), vec!["  No models"]);
    list.set_filter("");
    assert_eq!(list.len(), 4);
    assert!(list.select_value("gemini-2.5-pro"));
    insta::assert_snapshot!(render(&mut list, 50).join("|\n"));
}

#[test]
fn select_list_narrow_and_wide_glyphs() {
    let items = vec![
        SelectItem::new("日本語のモデル名").with_description("説明文がここにあります"),
        SelectItem::new("a").with_description("short"),
    ];
    let mut list = SelectList::new(items, 3, &Theme::dark());
    for width in 1..=60 {
        render(&mut list, width);
    }
    let lines = render(&mut list, 50);
    // The selected row is in the selection style, the other's description muted.
    assert!(lines[0].starts_with("\x1b[1;38;2;138;190;183m→ "));
    assert!(lines[1].contains("\x1b[38;5;244m"));
}

#[test]
fn fuzzy_ranks_word_starts_and_exact_matches_first() {
    let commands = [
        "session",
        "settings",
        "resume",
        "new",
        "model",
        "models-list",
        "tree",
        "export",
    ];
    let ranked = fuzzy_filter(&commands, "se", |c| *c);
    assert_eq!(ranked, vec![&"session", &"settings", &"resume"]);
    let ranked = fuzzy_filter(&commands, "model", |c| *c);
    assert_eq!(ranked, vec![&"model", &"models-list"]);
    // Every word must match; order follows the summed score.
    let files = ["src/main.rs", "src/tui/main_view.rs", "docs/main.md"];
    assert_eq!(
        fuzzy_filter(&files, "src main", |f| *f),
        vec![&"src/main.rs", &"src/tui/main_view.rs"]
    );
    assert_eq!(fuzzy_filter(&files, "  ", |f| *f).len(), 3);
    assert!(fuzzy_match("SeSs", "session").is_some());
}
