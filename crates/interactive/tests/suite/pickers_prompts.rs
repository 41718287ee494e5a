//! The project-trust selector (startup and `/trust`) and the `/fork` picker driven by keys.

use crate::common;

use std::path::Path;
use std::path::PathBuf;

use common::*;
use knightcode_interactive::pickers::ForkCandidate;
use knightcode_interactive::pickers::ForkPicker;
use knightcode_interactive::pickers::PickerOutcome;
use knightcode_interactive::pickers::SavedTrust;
use knightcode_interactive::pickers::TrustChoice;
use knightcode_interactive::pickers::TrustPrompt;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

const CWD: &str = "/home/user/proj";

fn startup() -> TrustPrompt {
    TrustPrompt::startup(
        Path::new(CWD),
        vec![
            PathBuf::from("/home/user/proj/.knightcode/settings.json"),
            PathBuf::from("/home/user/proj/.knightcode/extensions"),
            PathBuf::from("/home/user/.agents/skills"),
        ],
        Theme::plain(),
        &Keybindings::defaults(),
    )
    .with_home(Some("/home/user"))
}

fn command(saved: SavedTrust) -> TrustPrompt {
    TrustPrompt::command(
        Path::new(CWD),
        saved,
        true,
        Theme::plain(),
        &Keybindings::defaults(),
    )
    .with_home(Some("/home/user"))
}

fn choose(prompt: &mut TrustPrompt, keys: &[Key]) -> PickerOutcome<TrustChoice> {
    let bindings = Keybindings::defaults();
    let mut outcome = PickerOutcome::Pending;
    for key in keys {
        outcome = prompt.handle_key(key, &bindings);
    }
    outcome
}

#[test]
fn the_startup_prompt_lists_resources_and_all_five_options() {
    let mut prompt = startup();
    assert_eq!(
        prompt.options(),
        [
            TrustChoice::Trust,
            TrustChoice::TrustParent(PathBuf::from("/home/user")),
            TrustChoice::TrustSessionOnly,
            TrustChoice::DoNotTrust,
            TrustChoice::DoNotTrustSessionOnly,
        ]
    );
    insta::assert_snapshot!("trust_startup", render(&mut prompt, 80));
    insta::assert_snapshot!("trust_startup_narrow", render(&mut prompt, 40));
}

#[test]
fn arrows_and_j_k_move_and_enter_decides() {
    let mut prompt = startup();
    assert_eq!(
        choose(&mut prompt, &[ch('j'), ch('j'), plain(KeyCode::Enter)]),
        PickerOutcome::Done(TrustChoice::TrustSessionOnly)
    );
    assert_eq!(
        choose(&mut prompt, &[ch('k'), plain(KeyCode::Enter)]),
        PickerOutcome::Done(TrustChoice::TrustParent(PathBuf::from("/home/user")))
    );
    assert_eq!(
        choose(&mut prompt, &[plain(KeyCode::Up), plain(KeyCode::Up)]),
        PickerOutcome::Pending
    );
    assert_eq!(prompt.selected(), &TrustChoice::DoNotTrustSessionOnly);
    assert_eq!(
        choose(&mut prompt, &[plain(KeyCode::Down), plain(KeyCode::Enter)]),
        PickerOutcome::Done(TrustChoice::Trust)
    );
    // Other letters do nothing; Escape leaves the decision to the app.
    assert_eq!(choose(&mut prompt, &[ch('x')]), PickerOutcome::Pending);
    assert_eq!(
        choose(&mut prompt, &[plain(KeyCode::Escape)]),
        PickerOutcome::Cancel
    );
}

#[test]
fn a_folder_without_a_parent_has_no_parent_option() {
    let prompt = TrustPrompt::startup(
        Path::new("/"),
        vec![PathBuf::from("/.knightcode/settings.json")],
        Theme::plain(),
        &Keybindings::defaults(),
    );
    assert_eq!(prompt.options().len(), 4);
    assert!(
        !prompt
            .options()
            .iter()
            .any(|o| matches!(o, TrustChoice::TrustParent(_)))
    );
}

#[test]
fn many_resources_are_summarised() {
    let resources = (0..12)
        .map(|i| PathBuf::from(format!("{CWD}/.knightcode/skills/s{i}")))
        .collect();
    let mut prompt = TrustPrompt::startup(
        Path::new(CWD),
        resources,
        Theme::plain(),
        &Keybindings::defaults(),
    );
    prompt.set_max_rows(3);
    let screen = render(&mut prompt, 80);
    assert!(screen.contains(".knightcode/skills/s2"), "{screen}");
    assert!(!screen.contains(".knightcode/skills/s3"), "{screen}");
    assert!(screen.contains("… and 9 more"), "{screen}");
}

#[test]
fn the_trust_command_offers_three_options_and_marks_the_saved_one() {
    let mut prompt = command(SavedTrust::Saved {
        trusted: false,
        path: PathBuf::from(CWD),
    });
    assert_eq!(
        prompt.options(),
        [
            TrustChoice::Trust,
            TrustChoice::TrustParent(PathBuf::from("/home/user")),
            TrustChoice::DoNotTrust,
        ]
    );
    assert_eq!(prompt.selected(), &TrustChoice::DoNotTrust);
    insta::assert_snapshot!("trust_command", render(&mut prompt, 80));
}

#[test]
fn the_trust_command_describes_each_saved_state() {
    let mut none = command(SavedTrust::None);
    let screen = render(&mut none, 80);
    assert!(screen.contains("Saved decision: none"), "{screen}");
    assert!(screen.contains("Current session: trusted"), "{screen}");
    assert!(!screen.contains('✓'), "{screen}");
    assert_eq!(none.selected(), &TrustChoice::Trust);

    let mut here = command(SavedTrust::Saved {
        trusted: true,
        path: PathBuf::from(CWD),
    });
    let screen = render(&mut here, 80);
    assert!(
        screen.contains("Saved decision: trusted (~/proj)"),
        "{screen}"
    );
    assert!(screen.contains("→ Trust ✓"), "{screen}");

    let mut parent = command(SavedTrust::Saved {
        trusted: true,
        path: PathBuf::from("/home/user"),
    });
    let screen = render(&mut parent, 80);
    assert!(
        screen.contains("Saved decision: trusted (inherited from ~)"),
        "{screen}"
    );
    assert!(screen.contains("→ Trust parent folder (~) ✓"), "{screen}");

    // Inherited from further up: no option saves exactly that, so nothing is ticked, but
    // the cursor starts on what it means.
    let mut far = TrustPrompt::command(
        Path::new(CWD),
        SavedTrust::Saved {
            trusted: false,
            path: PathBuf::from("/home"),
        },
        false,
        Theme::plain(),
        &Keybindings::defaults(),
    );
    let screen = render(&mut far, 80);
    assert!(
        screen.contains("Saved decision: untrusted (inherited from /home)"),
        "{screen}"
    );
    assert!(screen.contains("Current session: untrusted"), "{screen}");
    assert!(!screen.contains('✓'), "{screen}");
    assert_eq!(far.selected(), &TrustChoice::DoNotTrust);
}

fn candidates() -> Vec<ForkCandidate> {
    let mut e = Entries::new();
    e.user("u1", None, "Set up the project")
        .assistant("a1", Some("u1"), "Done.", &[])
        .user("u2", Some("a1"), "Add tests\nfor the parser")
        .assistant("a2", Some("u2"), "Added.", &[])
        .user("u3", Some("a2"), "Now benchmark it");
    let tree = e.tree(None);
    ForkCandidate::from_branch(tree.branch(tree.leaf()))
}

fn fork() -> ForkPicker {
    ForkPicker::new(candidates(), Theme::plain(), &Keybindings::defaults())
}

#[test]
fn fork_candidates_are_the_branch_user_messages_oldest_first() {
    let ids: Vec<String> = candidates().into_iter().map(|c| c.entry_id).collect();
    assert_eq!(ids, ["u1", "u2", "u3"]);
}

#[test]
fn the_fork_picker_starts_on_the_newest_message() {
    let mut picker = fork();
    assert_eq!(picker.selected_id(), Some("u3"));
    insta::assert_snapshot!("fork", render(&mut picker, 80));
    insta::assert_snapshot!("fork_narrow", render(&mut picker, 30));
}

#[test]
fn fork_keys_move_wrap_and_pick() {
    let bindings = Keybindings::defaults();
    let mut picker = fork();
    picker.handle_key(&plain(KeyCode::Down), &bindings);
    assert_eq!(picker.selected_id(), Some("u1"));
    picker.handle_key(&plain(KeyCode::Up), &bindings);
    picker.handle_key(&plain(KeyCode::Up), &bindings);
    assert_eq!(
        picker.handle_key(&plain(KeyCode::Enter), &bindings),
        PickerOutcome::Done("u2".to_owned())
    );
    assert_eq!(
        picker.handle_key(&plain(KeyCode::Escape), &bindings),
        PickerOutcome::Cancel
    );
}

#[test]
fn a_long_fork_list_scrolls() {
    let many = (0..20)
        .map(|i| ForkCandidate {
            entry_id: format!("m{i}"),
            text: format!("message {i}"),
        })
        .collect();
    let mut picker = ForkPicker::new(many, Theme::plain(), &Keybindings::defaults());
    picker.set_max_rows(9);
    let screen = render(&mut picker, 60);
    assert!(screen.contains("message 19"), "{screen}");
    assert!(screen.contains("Message 18 of 20"), "{screen}");
    assert!(!screen.contains("message 16"), "{screen}");
    assert!(screen.contains("(20/20)"), "{screen}");
}

#[test]
fn an_empty_fork_list_says_so_and_closes() {
    let mut picker = ForkPicker::new(Vec::new(), Theme::plain(), &Keybindings::defaults());
    assert!(picker.is_empty());
    assert!(render(&mut picker, 80).contains("No user messages found"));
    assert_eq!(
        picker.handle_key(&plain(KeyCode::Enter), &Keybindings::defaults()),
        PickerOutcome::Cancel
    );
}

#[test]
fn the_undo_list_shows_each_messages_time_and_files() {
    let details = vec![
        "09:12 · restores 2 files".to_owned(),
        "09:30 · restores 1 file · shell commands ran".to_owned(),
        "09:41".to_owned(),
    ];
    let mut picker = ForkPicker::undo(
        candidates(),
        details,
        Theme::plain(),
        &Keybindings::defaults(),
    );
    assert_eq!(picker.selected_id(), Some("u3"));
    insta::assert_snapshot!("undo", render(&mut picker, 80));
    assert_eq!(
        picker.handle_key(&plain(KeyCode::Enter), &Keybindings::defaults()),
        PickerOutcome::Done("u3".to_owned())
    );
}
