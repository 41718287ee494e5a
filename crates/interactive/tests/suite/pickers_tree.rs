//! The `/tree` view driven by keys: where the cursor starts, filters, search, folding,
//! labels, selection, and very long sessions.

use crate::common;

use common::*;
use knightcode_interactive::pickers::PickerOutcome;
use knightcode_interactive::pickers::TreeFilter;
use knightcode_interactive::pickers::TreeRequest;
use knightcode_interactive::pickers::TreeSelection;
use knightcode_interactive::pickers::TreeView;
use knightcode_interactive::pickers::TreeViewOptions;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Modifiers;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;
use serde_json::json;

type Outcome = PickerOutcome<TreeSelection, TreeRequest>;

/// A session that forked after the first exchange: the README branch was left for the
/// LICENSE branch, where the leaf is.
fn session() -> Entries {
    let mut e = Entries::new();
    e.user("u1", None, "Set up the project")
        .assistant(
            "a1",
            Some("u1"),
            "Reading the manifest first.",
            &[("c1", "read", json!({"path": "/home/user/proj/Cargo.toml"}))],
        )
        .tool_result("t1", Some("a1"), "c1", "read", "[package]")
        .assistant(
            "a2",
            Some("t1"),
            "",
            &[("c2", "bash", json!({"command": "cargo build"}))],
        )
        .tool_result("t2", Some("a2"), "c2", "bash", "Finished")
        .assistant("a3", Some("t2"), "The project builds.", &[])
        .model_change("m1", Some("a3"), "claude-opus")
        .user("u2", Some("m1"), "Add a README")
        .assistant("a4", Some("u2"), "Added README.md", &[])
        .user("u3", Some("m1"), "Add a LICENSE instead\nMIT, please")
        .assistant("a5", Some("u3"), "Added LICENSE (MIT).", &[])
        .label("l1", Some("a5"), "u2", "readme");
    e
}

fn options() -> TreeViewOptions {
    TreeViewOptions {
        now_ms: NOW,
        home: Some("/home/user".to_owned()),
        ..TreeViewOptions::default()
    }
}

fn view() -> TreeView {
    view_with(options())
}

fn view_with(options: TreeViewOptions) -> TreeView {
    TreeView::new(
        &session().tree(Some("a5")),
        Theme::plain(),
        &Keybindings::defaults(),
        options,
    )
}

fn press(view: &mut TreeView, keys: &[Key]) -> Outcome {
    let bindings = Keybindings::defaults();
    let mut outcome = Outcome::Pending;
    for key in keys {
        outcome = view.handle_key(key, &bindings);
    }
    outcome
}

fn shift(c: char) -> Key {
    // What a legacy terminal sends for Shift+letter.
    ch(c.to_ascii_uppercase())
}

#[test]
fn renders_the_tree_with_the_current_branch_first() {
    let mut view = view();
    insta::assert_snapshot!(render(&mut view, 80));
}

#[test]
fn renders_at_a_narrow_width() {
    let mut view = view();
    insta::assert_snapshot!(render(&mut view, 40));
}

#[test]
fn the_cursor_starts_on_the_leaf_and_enter_picks_it() {
    let mut view = view();
    assert_eq!(view.selected_id(), Some("a5"));
    assert_eq!(
        press(&mut view, &[plain(KeyCode::Enter)]),
        Outcome::Done(TreeSelection {
            entry_id: "a5".to_owned(),
            is_user_message: false,
            text: None,
        })
    );
}

#[test]
fn an_initial_selection_overrides_the_leaf() {
    let view = view_with(TreeViewOptions {
        initial_selected: Some("a4".to_owned()),
        ..options()
    });
    assert_eq!(view.selected_id(), Some("a4"));
}

#[test]
fn picking_a_user_message_returns_its_full_text() {
    let mut view = view();
    assert_eq!(
        press(&mut view, &[plain(KeyCode::Up), plain(KeyCode::Enter)]),
        Outcome::Done(TreeSelection {
            entry_id: "u3".to_owned(),
            is_user_message: true,
            text: Some("Add a LICENSE instead\nMIT, please".to_owned()),
        })
    );
}

#[test]
fn the_default_view_hides_bookkeeping_and_tool_only_steps() {
    let view = view();
    assert_eq!(
        view.visible_ids(),
        ["u1", "a1", "t1", "t2", "a3", "u3", "a5", "u2", "a4"]
    );
}

#[test]
fn filters_toggle_and_cycle() {
    let mut view = view();
    press(&mut view, &[ctrl('u')]);
    assert_eq!(view.filter(), TreeFilter::UserOnly);
    assert_eq!(view.visible_ids(), ["u1", "u3", "u2"]);
    // The cursor moved to the nearest visible ancestor of the leaf.
    assert_eq!(view.selected_id(), Some("u3"));
    assert!(render(&mut view, 80).contains("(2/3) [user]"));
    press(&mut view, &[ctrl('u')]);
    assert_eq!(view.filter(), TreeFilter::Default);
    // Back on the same entry, not on the leaf.
    assert_eq!(view.selected_id(), Some("u3"));

    press(&mut view, &[ctrl('t')]);
    assert_eq!(view.filter(), TreeFilter::NoTools);
    assert_eq!(
        view.visible_ids(),
        ["u1", "a1", "a3", "u3", "a5", "u2", "a4"]
    );

    press(&mut view, &[ctrl('a')]);
    assert_eq!(view.filter(), TreeFilter::All);
    assert_eq!(
        view.visible_ids(),
        [
            "u1", "a1", "t1", "a2", "t2", "a3", "m1", "u3", "a5", "l1", "u2", "a4"
        ]
    );

    press(&mut view, &[ctrl('l')]);
    assert_eq!(view.filter(), TreeFilter::LabeledOnly);
    assert_eq!(view.visible_ids(), ["u2"]);

    press(&mut view, &[ctrl('d')]);
    assert_eq!(view.filter(), TreeFilter::Default);

    let cycle_back = with(KeyCode::Char('o'), Modifiers::CTRL | Modifiers::SHIFT);
    let mut seen = Vec::new();
    for _ in 0..5 {
        press(&mut view, &[ctrl('o')]);
        seen.push(view.filter());
    }
    assert_eq!(
        seen,
        [
            TreeFilter::NoTools,
            TreeFilter::UserOnly,
            TreeFilter::LabeledOnly,
            TreeFilter::All,
            TreeFilter::Default
        ]
    );
    press(&mut view, &[cycle_back]);
    assert_eq!(view.filter(), TreeFilter::All);
}

#[test]
fn the_initial_filter_comes_from_the_options() {
    let view = view_with(TreeViewOptions {
        filter: TreeFilter::UserOnly,
        ..options()
    });
    assert_eq!(view.visible_ids(), ["u1", "u3", "u2"]);
}

#[test]
fn an_empty_filter_result_keeps_the_place() {
    let entries = {
        let mut e = Entries::new();
        e.user("u1", None, "hello")
            .assistant("a1", Some("u1"), "hi", &[]);
        e
    };
    let mut view = TreeView::new(
        &entries.tree(None),
        Theme::plain(),
        &Keybindings::defaults(),
        options(),
    );
    press(&mut view, &[ctrl('l')]);
    assert!(view.visible_ids().is_empty());
    let screen = render(&mut view, 80);
    assert!(screen.contains("No entries found"), "{screen}");
    assert!(screen.contains("(0/0) [labeled]"), "{screen}");
    assert_eq!(press(&mut view, &[plain(KeyCode::Enter)]), Outcome::Pending);
    press(&mut view, &[ctrl('l')]);
    assert_eq!(view.selected_id(), Some("a1"));
}

#[test]
fn typing_searches_and_one_escape_closes() {
    let mut view = view();
    press(&mut view, &typing("add"));
    assert_eq!(view.search_text(), "add");
    assert_eq!(view.visible_ids(), ["u3", "a5", "u2", "a4"]);
    press(&mut view, &typing(" lic"));
    assert_eq!(view.visible_ids(), ["u3", "a5"]);
    assert!(render(&mut view, 80).contains("Type to search: add lic"));
    press(&mut view, &[plain(KeyCode::Backspace)]);
    assert_eq!(view.search_text(), "add li");
    // The hint says "escape cancel": one press closes, search typed or not.
    assert_eq!(press(&mut view, &[plain(KeyCode::Escape)]), Outcome::Cancel);
}

#[test]
fn search_finds_labels_and_tool_calls() {
    let mut view = view();
    press(&mut view, &typing("readme"));
    assert_eq!(view.visible_ids(), ["u2", "a4"]);
    let mut view = self::view();
    press(&mut view, &typing("cargo.toml"));
    assert_eq!(view.visible_ids(), ["t1"]);
}

#[test]
fn up_and_down_wrap_and_left_right_page() {
    let mut view = view();
    press(&mut view, &[plain(KeyCode::Down), plain(KeyCode::Down)]);
    assert_eq!(view.selected_id(), Some("a4"));
    press(&mut view, &[plain(KeyCode::Down)]);
    assert_eq!(view.selected_id(), Some("u1"));
    press(&mut view, &[plain(KeyCode::Up)]);
    assert_eq!(view.selected_id(), Some("a4"));

    view.set_max_rows(3);
    press(&mut view, &[plain(KeyCode::Left)]);
    assert_eq!(view.selected_id(), Some("u3"));
    press(&mut view, &[plain(KeyCode::PageUp)]);
    assert_eq!(view.selected_id(), Some("t1"));
    press(&mut view, &[plain(KeyCode::Right)]);
    assert_eq!(view.selected_id(), Some("u3"));
    press(
        &mut view,
        &[plain(KeyCode::PageDown), plain(KeyCode::PageDown)],
    );
    assert_eq!(view.selected_id(), Some("a4"));
}

#[test]
fn folding_hides_a_branch_and_unfolding_shows_it_again() {
    let fold = || with(KeyCode::Left, Modifiers::CTRL);
    let unfold = || with(KeyCode::Right, Modifiers::CTRL);
    let mut view = view();
    // From the leaf, fold-or-up first moves to the start of its branch.
    press(&mut view, &[fold()]);
    assert_eq!(view.selected_id(), Some("u3"));
    press(&mut view, &[fold()]);
    assert_eq!(
        view.visible_ids(),
        ["u1", "a1", "t1", "t2", "a3", "u3", "u2", "a4"]
    );
    insta::assert_snapshot!("folded", render(&mut view, 80));
    press(&mut view, &[unfold()]);
    assert_eq!(view.visible_ids().len(), 9);
    // Unfold-or-down on an unfolded branch start follows it to its end.
    press(&mut view, &[unfold()]);
    assert_eq!(view.selected_id(), Some("a5"));
    // Alt+Left is the same action.
    press(&mut view, &[with(KeyCode::Left, Modifiers::ALT)]);
    assert_eq!(view.selected_id(), Some("u3"));
}

#[test]
fn a_root_folds_everything_below_it() {
    let mut view = view();
    press(
        &mut view,
        &[
            plain(KeyCode::Down),
            plain(KeyCode::Down),
            plain(KeyCode::Down),
        ],
    );
    assert_eq!(view.selected_id(), Some("u1"));
    press(&mut view, &[with(KeyCode::Left, Modifiers::ALT)]);
    assert_eq!(view.visible_ids(), ["u1"]);
    assert!(render(&mut view, 80).contains("⊞"));
}

#[test]
fn labels_are_edited_inline_and_saved_by_the_app() {
    let mut view = view();
    press(&mut view, &[plain(KeyCode::Up), shift('l')]);
    assert!(view.is_editing_label());
    insta::assert_snapshot!("label_editing", render(&mut view, 80));
    assert_eq!(
        press(&mut view, &typing("license")),
        Outcome::Pending,
        "typing goes into the label, not the search"
    );
    assert_eq!(view.search_text(), "");
    assert_eq!(
        press(&mut view, &[plain(KeyCode::Enter)]),
        Outcome::Request(TreeRequest::Label {
            id: "u3".to_owned(),
            label: Some("license".to_owned())
        })
    );
    assert!(!view.is_editing_label());
    assert!(render(&mut view, 80).contains("[license] user: Add a LICENSE"));
    press(&mut view, &[ctrl('l')]);
    assert_eq!(view.visible_ids(), ["u3", "u2"]);
}

#[test]
fn an_empty_label_clears_and_escape_keeps_the_old_one() {
    let mut view = view();
    press(&mut view, &[ctrl('l')]);
    assert_eq!(view.selected_id(), Some("u2"));
    press(&mut view, &[shift('l')]);
    press(&mut view, &typing("-x"));
    assert_eq!(
        press(&mut view, &[plain(KeyCode::Escape)]),
        Outcome::Pending
    );
    assert!(render(&mut view, 80).contains("[readme]"));

    press(&mut view, &[shift('l'), ctrl('u')]);
    assert_eq!(
        press(&mut view, &[plain(KeyCode::Enter)]),
        Outcome::Request(TreeRequest::Label {
            id: "u2".to_owned(),
            label: None
        })
    );
    assert!(view.visible_ids().is_empty());
    // The app could not write it: the old label comes back.
    view.set_label("u2", Some("readme".to_owned()));
    assert_eq!(view.visible_ids(), ["u2"]);
}

#[test]
fn label_times_show_in_local_time() {
    let mut view = view_with(TreeViewOptions {
        utc_offset_seconds: 3600,
        ..options()
    });
    press(&mut view, &[shift('t')]);
    let screen = render(&mut view, 80);
    // The label entry is the 12th entry: 10:12 UTC, 11:12 at UTC+1, today.
    assert!(
        screen.contains("[readme] 11:12 user: Add a README"),
        "{screen}"
    );
    assert!(screen.contains("[+label time]"), "{screen}");
}

#[test]
fn several_roots_hang_from_an_invisible_root() {
    let mut e = Entries::new();
    e.user("r1", None, "First root")
        .assistant("b1", Some("r1"), "One", &[])
        .user("r2", None, "Second root")
        .assistant("b2", Some("r2"), "Two", &[]);
    let mut view = TreeView::new(
        &e.tree(None),
        Theme::plain(),
        &Keybindings::defaults(),
        options(),
    );
    insta::assert_snapshot!("several_roots", render(&mut view, 60));
}

#[test]
fn compactions_summaries_and_errors_have_their_own_rows() {
    let mut e = Entries::new();
    e.user("u1", None, "go")
        .compaction("c1", Some("u1"), 48_600)
        .branch_summary("s1", Some("c1"), "Tried the\nother approach")
        .assistant(
            "a1",
            Some("s1"),
            "",
            &[("x", "mcp_search", json!({"q": "rust"}))],
        )
        .tool_result("t1", Some("a1"), "x", "mcp_search", "found");
    let mut view = TreeView::new(
        &e.tree(None),
        Theme::plain(),
        &Keybindings::defaults(),
        options(),
    );
    let screen = render(&mut view, 80);
    assert!(screen.contains("[compaction: 49k tokens]"), "{screen}");
    assert!(
        screen.contains("[branch summary]: Tried the other approach"),
        "{screen}"
    );
    assert!(
        screen.contains("[mcp_search: {\"q\":\"rust\"}]"),
        "{screen}"
    );
    // The tool-only step is hidden unless everything is shown, where it names its calls.
    assert!(!screen.contains("tool calls"), "{screen}");
    press(&mut view, &[ctrl('a')]);
    assert!(render(&mut view, 80).contains("assistant: [tool calls: mcp_search]"));
}

#[test]
fn deep_forks_keep_the_innermost_levels_in_view() {
    let mut e = Entries::new();
    let mut parent: Option<String> = None;
    for i in 0..40 {
        let id = format!("c{i}");
        e.user(&id, parent.as_deref(), &format!("step {i}"));
        e.user(&format!("s{i}"), Some(&id), &format!("side {i}"));
        parent = Some(id);
    }
    let mut view = TreeView::new(
        &e.tree(Some("c39")),
        Theme::plain(),
        &Keybindings::defaults(),
        options(),
    );
    view.set_max_rows(6);
    insta::assert_snapshot!("deep_forks", render(&mut view, 60));
}

/// 10,000 entries in one chain, with a side branch every 100: building, filtering,
/// searching and drawing only touch what they must (no recursion, visible rows only).
#[test]
fn ten_thousand_entries() {
    let mut e = Entries::new();
    let mut parent: Option<String> = None;
    for i in 0..10_000 {
        let id = format!("e{i}");
        if i % 2 == 0 {
            e.user(&id, parent.as_deref(), &format!("question {i}"));
        } else {
            e.assistant(&id, parent.as_deref(), &format!("answer {i}"), &[]);
        }
        if i % 100 == 50 {
            e.user(&format!("side{i}"), parent.as_deref(), "abandoned idea");
        }
        parent = Some(id);
    }
    let tree = e.tree(Some("e9999"));
    let mut view = TreeView::new(&tree, Theme::plain(), &Keybindings::defaults(), options());
    view.set_max_rows(20);
    let lines = view.render(100);
    // Border, title, search, 20 rows, position, border, two hint lines.
    assert_eq!(lines.len(), 27);
    let screen = lines.join("\n");
    assert!(screen.contains("(10000/10100)"), "{screen}");
    assert!(screen.contains("answer 9999 ← current"), "{screen}");

    press(&mut view, &[ctrl('u')]);
    assert_eq!(view.visible_ids().len(), 5_100);
    press(&mut view, &typing("question 42"));
    // Even numbers with "42" in them.
    assert_eq!(view.visible_ids().len(), 199);
    // The cursor stays where the search put it.
    for _ in 0.."question 42".len() {
        press(&mut view, &[plain(KeyCode::Backspace)]);
    }
    press(&mut view, &[ctrl('u')]);
    assert_eq!(view.selected_id(), Some("e9942"));
    for _ in 0..50 {
        press(&mut view, &[with(KeyCode::Left, Modifiers::CTRL)]);
    }
    assert_eq!(view.render(100).len(), 27);
}

#[test]
fn ctrl_x_copies_the_selected_entry() {
    let mut view = view();
    assert_eq!(view.selected_id(), Some("a5"));
    assert_eq!(
        press(&mut view, &[ctrl('x')]),
        Outcome::Request(TreeRequest::Copy {
            text: "Added LICENSE (MIT).".to_owned()
        })
    );
    assert!(
        render(&mut view, 80).contains("· copied"),
        "the view says so"
    );
    press(&mut view, &[plain(KeyCode::Up)]);
    assert_eq!(view.selected_id(), Some("u3"));
    assert!(
        !render(&mut view, 80).contains("copied"),
        "until the next key"
    );
    assert_eq!(
        press(&mut view, &[ctrl('x')]),
        Outcome::Request(TreeRequest::Copy {
            text: "Add a LICENSE instead\nMIT, please".to_owned()
        })
    );
    press(&mut view, &[plain(KeyCode::Up)]);
    assert_eq!(view.selected_id(), Some("a3"));
    assert_eq!(
        press(&mut view, &[ctrl('x')]),
        Outcome::Request(TreeRequest::Copy {
            text: "The project builds.".to_owned()
        })
    );
}
