use super::support::*;
use crate::component::Component;
use crate::editor::buffer::State;
use crate::editor::completion::apply;
use crate::editor::{CompletionItem, Editor, EditorOutcome::*};

const TAB: &[u8] = b"\t";
const UP: &[u8] = b"\x1b[A";
const DOWN: &[u8] = b"\x1b[B";

fn completing() -> Editor {
    let mut e = editor();
    e.set_completion_provider(FakeProvider::boxed());
    e
}

/// The popup's items (labels) and the selected one.
fn popup(e: &Editor) -> Option<(Vec<String>, String)> {
    let popup = e.popup.as_ref()?;
    let labels = popup
        .list
        .visible_items()
        .map(|item| item.display().to_owned())
        .collect();
    let selected = popup.selected()?.display().to_owned();
    Some((labels, selected))
}

fn labels(e: &Editor) -> Vec<String> {
    popup(e).map(|(labels, _)| labels).unwrap_or_default()
}

#[test]
fn slash_at_the_start_opens_command_completion() {
    let mut e = completing();
    type_text(&mut e, "/");
    assert!(e.is_showing_completions());
    assert_eq!(labels(&e), vec!["model", "mcp", "new", "name", "quit"]);
    type_text(&mut e, "m");
    assert_eq!(labels(&e), vec!["model", "mcp"]);
    type_text(&mut e, "c");
    assert_eq!(labels(&e), vec!["mcp"]);
    // Nothing matches: the popup closes.
    type_text(&mut e, "x");
    assert!(!e.is_showing_completions());
    // Deleting back into a completable word reopens it.
    press(&mut e, b"\x7f");
    assert_eq!(labels(&e), vec!["mcp"]);
    press(&mut e, b"\x7f");
    assert_eq!(labels(&e), vec!["model", "mcp"]);
}

#[test]
fn enter_on_a_slash_command_accepts_and_submits() {
    let mut e = completing();
    type_text(&mut e, "/mo");
    assert_eq!(press(&mut e, b"\r"), Submit("/model".into()));
    assert!(!e.is_showing_completions());
    assert!(e.is_empty());
}

#[test]
fn tab_accepts_without_submitting() {
    let mut e = completing();
    type_text(&mut e, "/n");
    assert_eq!(
        popup(&e),
        Some((vec!["new".into(), "name".into()], "new".into()))
    );
    press(&mut e, DOWN);
    assert_eq!(press(&mut e, TAB), Handled);
    assert_eq!(at_cursor(&e), "/name |");
    assert!(!e.is_showing_completions());
    // The argument is typed after the completed name.
    type_text(&mut e, "x");
    assert_eq!(e.text(), "/name x");
}

#[test]
fn the_key_that_applies_a_suggestion_says_so_and_the_next_edit_does_not() {
    let mut e = completing();
    type_text(&mut e, "/n");
    assert!(!e.applied_completion(), "typing is not applying");
    press(&mut e, TAB);
    assert!(e.applied_completion());
    type_text(&mut e, "x");
    assert!(!e.applied_completion());
}

#[test]
fn up_and_down_move_through_the_popup_and_wrap() {
    let mut e = completing();
    type_text(&mut e, "/");
    press(&mut e, UP);
    assert_eq!(popup(&e).map(|p| p.1), Some("quit".into()));
    press(&mut e, DOWN);
    assert_eq!(popup(&e).map(|p| p.1), Some("model".into()));
    press(&mut e, DOWN);
    press(&mut e, TAB);
    assert_eq!(e.text(), "/mcp ");
}

#[test]
fn escape_closes_the_popup_then_belongs_to_the_app() {
    let mut e = completing();
    type_text(&mut e, "/");
    assert_eq!(press(&mut e, b"\x1b"), Handled);
    assert!(!e.is_showing_completions());
    assert_eq!(e.text(), "/");
    assert_eq!(press(&mut e, b"\x1b"), Ignored);
    // Ctrl+C stays the app's even with the popup open.
    type_text(&mut e, "m");
    assert!(e.is_showing_completions());
    assert_eq!(press(&mut e, b"\x03"), Ignored);
}

#[test]
fn slash_commands_only_on_the_first_line() {
    let mut e = completing();
    type_text(&mut e, "a");
    press(&mut e, b"\n");
    type_text(&mut e, "/m");
    assert!(!e.is_showing_completions());
    // Nor after other text.
    let mut e = completing();
    type_text(&mut e, "x /");
    assert!(!e.is_showing_completions());
}

#[test]
fn at_sign_after_whitespace_completes_files() {
    let mut e = completing();
    type_text(&mut e, "look @");
    assert_eq!(labels(&e).len(), 5);
    type_text(&mut e, "s");
    assert_eq!(labels(&e), vec!["src/", "src/main.rs", "src/lib.rs"]);
    // A directory gets no space, so completion can go on inside it.
    press(&mut e, TAB);
    assert_eq!(at_cursor(&e), "look @src/|");
    type_text(&mut e, "m");
    assert_eq!(labels(&e), vec!["src/main.rs"]);
    // Enter accepts a file without submitting; a file gets a trailing space.
    assert_eq!(press(&mut e, b"\r"), Handled);
    assert_eq!(at_cursor(&e), "look @src/main.rs |");
}

#[test]
fn at_sign_inside_a_word_does_not_complete() {
    let mut e = completing();
    type_text(&mut e, "mail@");
    assert!(!e.is_showing_completions());
    let mut e = completing();
    type_text(&mut e, "@");
    assert!(e.is_showing_completions());
}

#[test]
fn tab_completes_paths_and_inserts_a_single_match() {
    let mut e = completing();
    type_text(&mut e, "cat READ");
    assert!(!e.is_showing_completions());
    assert_eq!(press(&mut e, TAB), Handled);
    assert_eq!(at_cursor(&e), "cat README.md|");
    assert!(!e.is_showing_completions());
    // Undo takes the completion back.
    press(&mut e, b"\x1f");
    assert_eq!(e.text(), "cat READ");
}

#[test]
fn tab_with_several_matches_opens_the_popup_which_follows_typing() {
    let mut e = completing();
    type_text(&mut e, "cat s");
    press(&mut e, TAB);
    assert_eq!(labels(&e), vec!["src/", "src/main.rs", "src/lib.rs"]);
    type_text(&mut e, "rc/l");
    assert_eq!(labels(&e), vec!["src/lib.rs"]);
    press(&mut e, TAB);
    assert_eq!(at_cursor(&e), "cat src/lib.rs|");
}

#[test]
fn tab_on_a_command_name_lists_commands() {
    let mut e = completing();
    e.set_text("/qu");
    press(&mut e, TAB);
    assert_eq!(labels(&e), vec!["quit"]);
    press(&mut e, TAB);
    assert_eq!(e.text(), "/quit ");
}

#[test]
fn tab_without_a_provider_does_nothing() {
    let mut e = editor();
    type_text(&mut e, "abc");
    assert_eq!(press(&mut e, TAB), Handled);
    assert_eq!(e.text(), "abc");
}

#[test]
fn cursor_marker_is_left_out_while_the_popup_is_open() {
    let mut e = completing();
    type_text(&mut e, "/");
    let shown = show(&e.render(40));
    assert!(!shown.contains('‸'), "{shown}");
    press(&mut e, b"\x1b");
    assert!(show(&e.render(40)).contains('‸'));
}

#[test]
fn popup_is_drawn_under_the_editor() {
    let mut e = completing();
    type_text(&mut e, "/");
    insta::assert_snapshot!("popup_commands", show(&e.render(60)));
    press(&mut e, DOWN);
    insta::assert_snapshot!("popup_commands_narrow", show(&e.render(30)));
}

#[test]
fn popup_scrolls_when_there_are_more_items_than_rows() {
    let mut e = completing();
    e.set_autocomplete_max_visible(3);
    type_text(&mut e, "/");
    press(&mut e, UP);
    insta::assert_snapshot!("popup_scrolled", show(&e.render(60)));
}

fn item(value: &str, label: &str) -> CompletionItem {
    CompletionItem::new(value).with_label(label)
}

fn applied(before: &str, after: &str, item: &CompletionItem, prefix: &str) -> String {
    let mut state = State::from_text(&format!("{before}{after}"));
    state.col = before.len();
    apply(&mut state, item, prefix);
    let mut line = state.lines[0].clone();
    line.insert(state.col, '|');
    line
}

#[test]
fn applying_completions() {
    // Slash command name: slash and trailing space; a value with its slash is not doubled.
    assert_eq!(
        applied("/mo", "", &item("model", "model"), "/mo"),
        "/model |"
    );
    assert_eq!(
        applied("/mo", "", &item("/model", "model"), "/mo"),
        "/model |"
    );
    // Command argument: replaced as is.
    assert_eq!(
        applied("/model gp", "", &item("gpt-5", "gpt-5"), "gp"),
        "/model gpt-5|"
    );
    // File reference: trailing space unless a directory.
    assert_eq!(
        applied("see @sr", " x", &item("@src/", "src/"), "@sr"),
        "see @src/| x"
    );
    assert_eq!(
        applied("see @ma", "", &item("@main.rs", "main.rs"), "@ma"),
        "see @main.rs |"
    );
    // Quoted paths: the closing quote after the cursor is not doubled; in a directory the
    // cursor stays inside the quotes.
    assert_eq!(
        applied(
            "open @\"my fi",
            "\"",
            &item("@\"my file.txt\"", "my file.txt"),
            "@\"my fi"
        ),
        "open @\"my file.txt\" |"
    );
    assert_eq!(
        applied("cd \"my d", "", &item("\"my dir/\"", "my dir/"), "\"my d"),
        "cd \"my dir/|\""
    );
    // Plain path.
    assert_eq!(
        applied("cat ./sr", "", &item("./src/", "src/"), "./sr"),
        "cat ./src/|"
    );
    // A prefix with a second slash is a path, not a command.
    assert_eq!(
        applied("/usr/lo", "", &item("/usr/local/", "local/"), "/usr/lo"),
        "/usr/local/|"
    );
    // A prefix that is not before the cursor replaces nothing.
    assert_eq!(applied("abc", "", &item("X", "X"), "zz"), "abcX|");
}

#[test]
fn moving_the_cursor_closes_the_popup() {
    let mut e = completing();
    type_text(&mut e, "/m");
    press(&mut e, b"\x1b[D");
    assert!(!e.is_showing_completions());
    type_text(&mut e, "look @s");
    assert!(e.is_showing_completions());
    press(&mut e, b"\x17");
    assert!(!e.is_showing_completions());
}

#[test]
fn the_editor_can_live_in_a_component_tree() {
    fn send<T: Send>() {}
    send::<Editor>();
}
