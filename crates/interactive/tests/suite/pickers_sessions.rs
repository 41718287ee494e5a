//! The `/resume` session picker driven by keys: search, sort, filters, scopes, rename,
//! delete, and how it looks.

use crate::common;

use std::path::PathBuf;

use common::*;
use knightcode_interactive::pickers::PickerOutcome;
use knightcode_interactive::pickers::SessionPicker;
use knightcode_interactive::pickers::SessionPickerOptions;
use knightcode_interactive::pickers::SessionRequest;
use knightcode_interactive::pickers::session_picker::Scope;
use knightcode_interactive::pickers::session_picker::SortMode;
use knightcode_runtime::sessions::SessionInfo;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Modifiers;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::KeyBinding;
use knightcode_tui::keybindings::Keybindings;

type Outcome = PickerOutcome<PathBuf, SessionRequest>;

fn sessions() -> Vec<SessionInfo> {
    let mut forked = session(
        "c0ffee03",
        None,
        "Try the other parser instead",
        3 * HOUR,
        4,
    );
    forked.parent_session_path = Some(session_path("c0ffee02").to_string_lossy().into_owned());
    vec![
        session(
            "c0ffee01",
            None,
            "Fix the failing\nauth test in login.rs",
            5 * MINUTE,
            12,
        ),
        session(
            "c0ffee02",
            Some("Parser rewrite"),
            "Rewrite the parser",
            2 * HOUR,
            40,
        ),
        forked,
        session(
            "c0ffee04",
            None,
            "Add a changelog entry for the release notes of version 2.0 with every fix listed",
            3 * DAY,
            6,
        ),
        session(
            "c0ffee05",
            Some("Benchmarks"),
            "Measure startup",
            20 * DAY,
            18,
        ),
    ]
}

fn options() -> SessionPickerOptions {
    SessionPickerOptions {
        now_ms: NOW,
        home: Some("/home/user".to_owned()),
        current_session: Some(session_path("c0ffee01")),
        allow_rename: true,
        ..SessionPickerOptions::default()
    }
}

fn picker() -> SessionPicker {
    SessionPicker::new(
        sessions(),
        Theme::plain(),
        &Keybindings::defaults(),
        options(),
    )
}

fn press(picker: &mut SessionPicker, keys: &[Key]) -> Vec<Outcome> {
    let bindings = Keybindings::defaults();
    keys.iter()
        .map(|key| picker.handle_key(key, &bindings))
        .collect()
}

fn last(picker: &mut SessionPicker, keys: &[Key]) -> Outcome {
    press(picker, keys).pop().expect("at least one key")
}

fn ids(picker: &SessionPicker) -> Vec<String> {
    picker
        .listed_paths()
        .iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy();
            name.rsplit('_').next().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn renders_the_current_folder_threaded() {
    let mut picker = picker();
    insta::assert_snapshot!(render(&mut picker, 80));
}

#[test]
fn renders_at_a_narrow_width() {
    let mut picker = picker();
    insta::assert_snapshot!(render(&mut picker, 40));
}

#[test]
fn forks_are_nested_under_their_parent_in_the_thread_view() {
    let picker = picker();
    assert_eq!(picker.sort_mode(), SortMode::Threaded);
    assert_eq!(
        ids(&picker),
        ["c0ffee01", "c0ffee02", "c0ffee03", "c0ffee04", "c0ffee05"]
    );
    let screen = render(&mut { picker }, 80);
    assert!(screen.contains("└─ Try the other parser"), "{screen}");
}

#[test]
fn typing_narrows_the_list_and_one_escape_closes() {
    let mut picker = picker();
    press(&mut picker, &typing("parser"));
    assert_eq!(picker.search_text(), "parser");
    assert_eq!(ids(&picker), ["c0ffee02", "c0ffee03"]);
    // A word that matches nothing empties the list and says so.
    press(&mut picker, &typing(" zzz"));
    assert!(ids(&picker).is_empty());
    assert!(render(&mut picker, 80).contains("No sessions match the search"));

    // The hint says "escape cancel": one press closes with a search typed, as in pi.
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Escape)]),
        Outcome::Cancel
    );
}

#[test]
fn search_looks_at_ids_folders_and_phrases() {
    let mut picker = picker();
    press(&mut picker, &typing("c0ffee04"));
    assert_eq!(ids(&picker), ["c0ffee04"]);

    let mut picker = self::picker();
    press(&mut picker, &typing("\"the parser\""));
    assert_eq!(ids(&picker), ["c0ffee02"]);

    let mut picker = self::picker();
    press(&mut picker, &typing("re:^c0ffee0[45]"));
    assert_eq!(ids(&picker), ["c0ffee04", "c0ffee05"]);
}

#[test]
fn an_invalid_regex_is_reported_instead_of_listing() {
    let mut picker = picker();
    press(&mut picker, &typing("re:(unclosed"));
    assert!(ids(&picker).is_empty());
    let screen = render(&mut picker, 80);
    assert!(screen.contains("Invalid regex"), "{screen}");
}

#[test]
fn sort_cycles_threaded_recent_fuzzy_and_fuzzy_ranks_best_first() {
    let mut picker = picker();
    press(&mut picker, &typing("parser"));
    // Recent order while threaded or recent.
    assert_eq!(ids(&picker), ["c0ffee02", "c0ffee03"]);
    press(&mut picker, &[ctrl('s')]);
    assert_eq!(picker.sort_mode(), SortMode::Recent);
    press(&mut picker, &[ctrl('s')]);
    assert_eq!(picker.sort_mode(), SortMode::Relevance);
    assert!(render(&mut picker, 80).contains("Sort: Fuzzy"));
    press(&mut picker, &[ctrl('s')]);
    assert_eq!(picker.sort_mode(), SortMode::Threaded);

    // "other" is a whole word in one message and scattered letters in another.
    let mut picker = self::picker();
    press(&mut picker, &[ctrl('s'), ctrl('s')]);
    press(&mut picker, &typing("other"));
    assert_eq!(ids(&picker).first().map(String::as_str), Some("c0ffee03"));
}

#[test]
fn the_named_filter_keeps_named_sessions() {
    let mut picker = picker();
    press(&mut picker, &[ctrl('n')]);
    assert!(picker.named_only());
    assert_eq!(ids(&picker), ["c0ffee02", "c0ffee05"]);
    assert!(render(&mut picker, 80).contains("Name: Named"));
    press(&mut picker, &[ctrl('n')]);
    assert_eq!(ids(&picker).len(), 5);
}

#[test]
fn the_path_toggle_shows_session_files() {
    let mut picker = picker();
    assert!(!render(&mut picker, 120).contains(".jsonl"));
    press(&mut picker, &[ctrl('p')]);
    assert!(picker.shows_paths());
    let screen = render(&mut picker, 120);
    assert!(
        screen
            .contains("~/.knightcode/agent/sessions/--home-user-proj--/2026-03-01_c0ffee02.jsonl"),
        "{screen}"
    );
    assert!(screen.contains("path (on)"), "{screen}");
}

#[test]
fn moving_and_picking() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Down), plain(KeyCode::Down)]);
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Enter)]),
        Outcome::Done(session_path("c0ffee03"))
    );
    press(&mut picker, &[plain(KeyCode::PageDown)]);
    assert_eq!(
        picker.selected_path(),
        Some(session_path("c0ffee05").as_path())
    );
    press(&mut picker, &[plain(KeyCode::PageUp), plain(KeyCode::Up)]);
    assert_eq!(
        picker.selected_path(),
        Some(session_path("c0ffee01").as_path())
    );
}

#[test]
fn a_short_list_scrolls_and_shows_the_position() {
    let mut picker = picker();
    picker.set_max_rows(2);
    press(&mut picker, &[plain(KeyCode::Down), plain(KeyCode::Down)]);
    let screen = render(&mut picker, 80);
    assert!(screen.contains("(3/5)"), "{screen}");
    assert!(!screen.contains("Fix the failing"), "{screen}");
}

#[test]
fn tab_asks_for_all_projects_once_and_switches_back() {
    let mut picker = picker();
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Tab)]),
        Outcome::Request(SessionRequest::LoadAllSessions)
    );
    assert_eq!(picker.scope(), Scope::All);
    assert!(render(&mut picker, 80).contains("Loading"));

    let mut other = session("0babe001", None, "Deploy the docs site", 30 * MINUTE, 3);
    other.cwd = "/srv/docs".to_owned();
    let mut all = sessions();
    all.insert(1, other);
    picker.set_all_sessions(all);
    let screen = render(&mut picker, 100);
    assert!(screen.contains("◉ All"), "{screen}");
    // Folders show in the all-projects view.
    assert!(screen.contains("/srv/docs"), "{screen}");
    assert!(screen.contains("~/proj"), "{screen}");
    assert_eq!(ids(&picker).len(), 6);

    assert_eq!(last(&mut picker, &[plain(KeyCode::Tab)]), Outcome::Pending);
    assert_eq!(picker.scope(), Scope::CurrentFolder);
    assert_eq!(ids(&picker).len(), 5);
    // Already loaded: no second request.
    assert_eq!(last(&mut picker, &[plain(KeyCode::Tab)]), Outcome::Pending);
    assert_eq!(ids(&picker).len(), 6);
}

#[test]
fn a_failed_load_is_shown_and_tab_tries_again() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Tab)]);
    picker.set_load_error("permission denied");
    assert!(render(&mut picker, 80).contains("Failed to load sessions: permission denied"));
    press(&mut picker, &[plain(KeyCode::Tab)]);
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Tab)]),
        Outcome::Request(SessionRequest::LoadAllSessions)
    );
}

#[test]
fn rename_edits_inline_and_asks_the_app() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Down), ctrl('r')]);
    assert!(picker.is_renaming());
    insta::assert_snapshot!("rename_inline", render(&mut picker, 80));

    // Clear the old name, type a new one.
    press(&mut picker, &[ctrl('u')]);
    press(&mut picker, &typing("Parser v2"));
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Enter)]),
        Outcome::Request(SessionRequest::Rename {
            path: session_path("c0ffee02"),
            name: "Parser v2".to_owned()
        })
    );
    assert!(!picker.is_renaming());
    // The app wrote it and reports back.
    picker.set_name(&session_path("c0ffee02"), Some("Parser v2".to_owned()));
    assert!(render(&mut picker, 80).contains("Parser v2"));
    assert_eq!(
        picker.selected_path(),
        Some(session_path("c0ffee02").as_path())
    );
}

#[test]
fn rename_ignores_an_empty_name_and_escape_aborts() {
    let mut picker = picker();
    press(&mut picker, &[ctrl('r')]);
    // An unnamed session starts with an empty field; Enter keeps it open.
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Enter)]),
        Outcome::Pending
    );
    assert!(picker.is_renaming());
    press(&mut picker, &typing("x"));
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Escape)]),
        Outcome::Pending
    );
    assert!(!picker.is_renaming());
    // Typing goes to the search again.
    press(&mut picker, &typing("y"));
    assert_eq!(picker.search_text(), "y");
}

#[test]
fn rename_is_not_offered_when_the_app_cannot_rename() {
    let mut options = options();
    options.allow_rename = false;
    let mut picker = SessionPicker::new(
        sessions(),
        Theme::plain(),
        &Keybindings::defaults(),
        options,
    );
    press(&mut picker, &[ctrl('r')]);
    assert!(!picker.is_renaming());
    assert!(!render(&mut picker, 120).contains("rename"));
}

#[test]
fn delete_asks_first_then_asks_the_app_and_drops_the_row() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Down), ctrl('d')]);
    assert_eq!(
        picker.confirming_delete(),
        Some(session_path("c0ffee02").as_path())
    );
    insta::assert_snapshot!("delete_confirm", render(&mut picker, 80));

    // Other keys leave the question open; n keeps the session.
    press(&mut picker, &typing("x"));
    assert!(picker.confirming_delete().is_some());
    assert_eq!(picker.search_text(), "");
    assert_eq!(last(&mut picker, &[ch('n')]), Outcome::Pending);
    assert!(picker.confirming_delete().is_none());

    press(&mut picker, &[ctrl('d')]);
    assert_eq!(
        last(&mut picker, &[ch('y')]),
        Outcome::Request(SessionRequest::Delete(session_path("c0ffee02")))
    );
    picker.remove(&session_path("c0ffee02"));
    assert_eq!(
        ids(&picker),
        ["c0ffee01", "c0ffee03", "c0ffee04", "c0ffee05"]
    );
    // The cursor stays at the same place in the list.
    assert_eq!(
        picker.selected_path(),
        Some(session_path("c0ffee03").as_path())
    );
}

#[test]
fn enter_confirms_and_escape_cancels_a_delete() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Down), ctrl('d')]);
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Escape)]),
        Outcome::Pending
    );
    assert!(picker.confirming_delete().is_none());
    press(&mut picker, &[ctrl('d')]);
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Enter)]),
        Outcome::Request(SessionRequest::Delete(session_path("c0ffee02")))
    );
}

#[test]
fn the_current_session_cannot_be_deleted() {
    let mut picker = picker();
    assert_eq!(
        picker.selected_path(),
        Some(session_path("c0ffee01").as_path())
    );
    assert_eq!(last(&mut picker, &[ctrl('d')]), Outcome::Pending);
    assert!(picker.confirming_delete().is_none());
    let screen = render(&mut picker, 80);
    assert!(
        screen.contains("Cannot delete the currently active session"),
        "{screen}"
    );
    // The message goes away with the next key.
    press(&mut picker, &[plain(KeyCode::Down)]);
    assert!(!render(&mut picker, 80).contains("Cannot delete"));
}

#[test]
fn ctrl_backspace_deletes_only_with_an_empty_search() {
    let ctrl_backspace = with(KeyCode::Backspace, Modifiers::CTRL);
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Down), ctrl_backspace.clone()]);
    assert!(picker.confirming_delete().is_some());

    let mut picker = self::picker();
    press(&mut picker, &typing("parser tes"));
    press(&mut picker, &[ctrl_backspace]);
    assert!(picker.confirming_delete().is_none());
    assert_eq!(picker.search_text(), "parser ");
}

#[test]
fn user_keybindings_apply() {
    let mut bindings = Keybindings::defaults();
    bindings.set(
        "app.session.toggleSort",
        vec![KeyBinding::parse("alt+s").unwrap()],
    );
    let mut picker = SessionPicker::new(sessions(), Theme::plain(), &bindings, options());
    picker.handle_key(&ctrl('s'), &bindings);
    assert_eq!(picker.sort_mode(), SortMode::Threaded);
    picker.handle_key(&with(KeyCode::Char('s'), Modifiers::ALT), &bindings);
    assert_eq!(picker.sort_mode(), SortMode::Recent);
    assert!(render(&mut picker, 80).contains("alt+s sort"));
}

#[test]
fn empty_lists_say_what_to_do() {
    let mut picker = SessionPicker::new(
        Vec::new(),
        Theme::plain(),
        &Keybindings::defaults(),
        options(),
    );
    assert!(
        render(&mut picker, 80).contains("No sessions in current folder. Press Tab to view all.")
    );
    assert_eq!(
        last(&mut picker, &[plain(KeyCode::Enter)]),
        Outcome::Pending
    );
    press(&mut picker, &[ctrl('n')]);
    assert!(render(&mut picker, 100).contains("No named sessions in current folder"));
}

#[test]
fn pastes_go_into_the_search() {
    let mut picker = picker();
    picker.handle_paste("release\nnotes");
    assert_eq!(picker.search_text(), "release notes");
    assert_eq!(ids(&picker), ["c0ffee04"]);
}
