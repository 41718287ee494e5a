//! The interactive mode's rough edges a daily user meets (issue 18), each as the screen must
//! show it: provider errors in words, the external editor, sessions owned elsewhere, shell
//! cards, the session and hotkey listings, the header and `@` completion.

use crate::common::mkfifo;
use crate::common::usage;
use crate::tui_common;

use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;

const RATE_LIMIT_BODY: &str = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;

fn rate_limited() -> ScriptedReply {
    ScriptedReply::fault(Fault::HttpStatus {
        status: 429,
        retry_after: None,
        body: Some(RATE_LIMIT_BODY.to_owned()),
        headers: Vec::new(),
    })
}

#[test]
fn a_rate_limit_is_one_line_in_words_that_clears_when_the_retry_works() {
    let sandbox = tui_common::sandbox(vec![
        rate_limited(),
        ScriptedReply::text("Made it on the second try."),
    ]);
    let mut tui = sandbox.spawn(&[], 120, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello");
    // The default first delay is 2 s: the line stands that long.
    let screen = tui.wait_for_text("Rate limited by mock — retrying in 2 s (1/3)");
    assert!(
        screen.contains("Number of request tokens has exceeded your per-minute rate limit"),
        "{screen}"
    );
    assert!(!screen.contains("{\""), "no JSON: {screen}");
    assert!(
        !screen.contains("Error:"),
        "the failed attempt gives way: {screen}"
    );
    let screen = tui.wait_for_text("Made it on the second try.");
    assert!(!screen.contains("Rate limited"), "cleared: {screen}");
    assert!(!screen.contains("Error:"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn escape_during_a_retry_wait_cancels_it_and_shows_the_failure() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::http_error(503)]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"retry":{"baseDelayMs":60000}}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 120, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello");
    tui.wait_for_text("mock had a server error (503) — retrying in 60 s (1/3)");
    tui.send("\x1b");
    let screen = tui.wait_for_text("Retry cancelled.");
    assert!(
        screen.contains("Error: mock had a server error (503)"),
        "the failure is shown again: {screen}"
    );
    assert!(!screen.contains("retrying in"), "{screen}");
    tui.wait_for("the working row to go", |s| !s.contains("esc to interrupt"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_final_provider_error_says_what_happened_once_and_what_to_do() {
    let sandbox = tui_common::sandbox(vec![rate_limited(), rate_limited()]);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"retry":{"maxRetries":1,"baseDelayMs":50}}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 140, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello");
    let screen = tui.wait_for_text("Error: Rate limited by mock (gave up after 1 retry)");
    assert!(
        screen.contains("Wait a minute and send again, or switch models with /model."),
        "{screen}"
    );
    assert_eq!(
        screen
            .matches("Number of request tokens has exceeded")
            .count(),
        1,
        "said once: {screen}"
    );
    assert!(!screen.contains("retrying in"), "{screen}");
    assert!(!screen.contains("{\""), "no JSON: {screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// The seconds a duration on screen stands for: `40ms`, `1.2s`, `12s`, `2m 05s`.
fn seconds(shown: &str) -> Option<f64> {
    if let Some(ms) = shown.strip_suffix("ms") {
        return ms.parse::<f64>().ok().map(|ms| ms / 1000.0);
    }
    let shown = shown.strip_suffix('s')?;
    match shown.split_once("m ") {
        Some((minutes, secs)) => {
            Some(minutes.parse::<f64>().ok()? * 60.0 + secs.parse::<f64>().ok()?)
        }
        None => shown.parse().ok(),
    }
}

/// The duration the card titled `title` shows (`$ cmd · 3s`), if it shows one.
fn shown_seconds(screen: &str, title: &str) -> Option<f64> {
    screen.lines().find_map(|line| {
        let time = line.trim().strip_prefix(title)?.strip_prefix(" · ")?;
        seconds(time)
    })
}

/// Whether the card titled `title` shows whole seconds run (`… · 3s`).
fn shows_seconds(screen: &str, title: &str) -> bool {
    shown_seconds(screen, title).is_some_and(|secs| secs >= 1.0)
}

/// The theme's error colour (what a failure is painted in).
const ERROR_RED: vt100::Color = vt100::Color::Rgb(204, 102, 102);

#[test]
fn a_failed_bash_call_shows_its_time_and_colours_only_the_exit_line() {
    const COMMAND: &str = "echo out-line; read _ < gate; exit 3";
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call(
            "call_1",
            "bash",
            serde_json::json!({ "command": COMMAND }).to_string(),
        ),
        ScriptedReply::text("The command failed."),
    ]);
    // The command waits on the gate until the test has seen its running time.
    let gate = sandbox.project.join("gate");
    mkfifo(&gate);
    let title = format!("$ {COMMAND}");
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("run it");
    // Live: the running time in the title, from the first second.
    let live = tui.wait_for("the running time", |s| {
        shows_seconds(s, &title) && !s.contains("Command exited")
    });
    let counted = shown_seconds(&live, &title).unwrap();
    // Opening the gate for writing returns once the command has it open for reading; the
    // wait for the answer below bounds it.
    let opener = std::thread::spawn(move || std::fs::write(gate, "go\n").unwrap());
    let screen = tui.wait_for_text("The command failed.");
    opener.join().unwrap();
    // Done: the title keeps a fixed duration that goes on from the live count.
    let took = shown_seconds(&screen, &title)
        .unwrap_or_else(|| panic!("no duration on {title:?}: {screen}"));
    assert!(
        took >= counted,
        "{took}s after {counted}s counted: {screen}"
    );
    assert!(screen.contains("Command exited with code 3"), "{screen}");
    assert_ne!(
        tui.color_of("out-line"),
        Some(ERROR_RED),
        "output keeps its colour"
    );
    assert_eq!(tui.color_of("Command exited with code 3"), Some(ERROR_RED));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_shell_command_has_a_working_row_with_the_cancel_key_and_its_own_border() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    let border = |tui: &tui_common::Tui| tui.color_of(&"─".repeat(100));
    let normal = border(&tui);
    tui.send("!echo started");
    tui.wait_for_text("!echo started");
    let shell = border(&tui);
    assert_eq!(shell, Some(vt100::Color::Rgb(181, 189, 104)), "shell mode");
    assert_ne!(shell, normal);
    tui.send("; sleep 30\r");
    tui.wait_for_text("Running shell command… (");
    tui.wait_for_text("esc to cancel)");
    tui.wait_for("the running time", |s| {
        shows_seconds(s, "$ echo started; sleep 30")
    });
    assert_eq!(
        border(&tui),
        normal,
        "the border is back once the line is sent"
    );
    tui.send("\x1b");
    let screen = tui.wait_for_text("cancelled");
    assert!(!screen.contains("esc to cancel"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn ctrl_g_without_a_working_editor_says_what_to_set_and_keeps_the_screen_whole() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn_with_env(&[], &[("VISUAL", "/nowhere/editor")], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("draft");
    tui.send("\x07");
    tui.wait_for_text(
        "Could not start the external editor: /nowhere/editor (from $VISUAL) is not installed",
    );
    tui.send("\x03");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // An editor that writes on the screen and fails: its text is painted over, the screen
    // is whole again (border and footer), and the externalEditor setting comes first.
    let script = sandbox.root.path().join("broken-editor.sh");
    std::fs::write(&script, "#!/bin/sh\necho editor-garbage-line\nexit 3\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        sandbox.agent.join("settings.json"),
        serde_json::json!({"externalEditor": script}).to_string(),
    )
    .unwrap();
    let mut tui = sandbox.spawn_with_env(&[], &[("VISUAL", "/nowhere/editor")], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("draft");
    tui.send("\x07");
    tui.wait_for_text("from the externalEditor setting) exited");
    let screen = tui.wait_for("the screen repainted", |s| {
        !s.contains("editor-garbage-line") && s.contains("mock-model")
    });
    assert!(
        screen.contains("draft"),
        "the prompt is unchanged: {screen}"
    );
    assert_eq!(
        screen.lines().filter(|l| *l == "─".repeat(100)).count(),
        2,
        "the editor's borders: {screen}"
    );
    tui.send("\x03");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_session_open_elsewhere_is_marked_and_continues_in_a_fork() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("First answer."),
        ScriptedReply::text("Answer in the fork."),
    ]);
    let mut owner = sandbox.spawn(&[], 100, 30);
    owner.wait_for_text("mock-model");
    owner.submit("remember the green door");
    owner.wait_for_text("First answer.");
    let original = sandbox.session_files()[0].clone();
    let before = std::fs::read_to_string(&original).unwrap();

    // Another knightcode picks it at start: marked in use, then a fork is offered.
    let mut tui = sandbox.spawn(&["--resume"], 100, 30);
    let screen = tui.wait_for_text("remember the green door");
    let row = screen
        .lines()
        .find(|l| l.contains("remember the green door"))
        .unwrap();
    assert!(row.contains("in use"), "{screen}");
    tui.send("\r");
    let screen = tui.wait_for_text("Session in use");
    assert!(screen.contains("Continue in a fork"), "{screen}");
    assert!(screen.contains("Start a new session instead"), "{screen}");
    tui.send("\r");
    tui.wait_for_text("in a fork: a new session file");
    tui.wait_for_text("First answer.");
    tui.submit("and now?");
    tui.wait_for_text("Answer in the fork.");

    // /resume offers the same; declining keeps the session this process is in.
    tui.submit("/resume");
    tui.wait_for_text("in use");
    let screen = tui.screen();
    let selected_original = screen
        .lines()
        .any(|l| l.contains("›") && l.contains("in use"));
    if !selected_original {
        tui.send("\x1b[B");
        tui.wait_for("the owned session selected", |s| {
            s.lines().any(|l| l.contains("›") && l.contains("in use"))
        });
    }
    tui.send("\r");
    tui.wait_for_text("Keep the current session");
    tui.send("\x1b[B\r");
    let screen = tui.wait_for("the prompt to close", |s| !s.contains("Session in use"));
    assert!(screen.contains("Answer in the fork."), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    assert_eq!(
        std::fs::read_to_string(&original).unwrap(),
        before,
        "the owner's file is left alone"
    );
    let files = sandbox.session_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let fork = files.iter().find(|f| **f != original).unwrap();
    let entries = tui_common::read_jsonl(fork);
    assert_eq!(
        entries[0]["parentSession"].as_str(),
        Some(original.to_str().unwrap())
    );
    owner.send("\x04");
    assert_eq!(owner.wait_exit(), 0);
}

#[test]
fn the_header_wraps_between_items_and_the_window_title_names_the_session() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 60, 30);
    let screen = tui.wait_for_text("mock-model");
    assert!(
        screen.lines().any(|l| l.contains("ctrl+o tool output")),
        "{screen}"
    );
    for line in screen.lines().take(6) {
        assert!(!line.trim_end().ends_with("·"), "{line:?}");
        assert!(line.chars().count() <= 60, "{line:?}");
    }
    assert!(
        tui.output()
            .contains("\x1b[22;0t\x1b]0;knightcode · project\x07")
    );
    tui.submit("/name bug hunt");
    tui.wait_for_text("Session named \"bug hunt\".");
    let title = "\x1b]0;knightcode · bug hunt\x07";
    tui.wait_for_output(title);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let output = tui.output();
    let restored = output.rfind("\x1b[23;0t").unwrap();
    assert!(
        restored > output.rfind(title).unwrap(),
        "the title is put back on exit"
    );
}

#[test]
fn session_shows_the_name_grouped_numbers_and_a_path_kept_together() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Counted.").with_usage(
        knightcode_testkit::MockUsage {
            cache_read: 1_000_000,
            ..usage(12_345, 6_789)
        },
    )]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("count the tokens");
    tui.wait_for_text("Counted.");
    tui.submit("/name token audit");
    tui.wait_for_text("Session named \"token audit\".");
    // Status notices stay in the transcript after the next key, indented like cards.
    tui.send("x");
    tui.send("\x03");
    let screen = tui.wait_for("the editor cleared", |s| {
        !s.lines().any(|l| l.trim() == "x")
    });
    let named = screen
        .lines()
        .find(|l| l.contains("Session named \"token audit\"."))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(named.starts_with(' '), "{named:?}");
    tui.submit("/session");
    let screen = tui.wait_for_text("Tokens:");
    assert!(screen.contains("Name:      token audit"), "{screen}");
    assert!(
        screen.contains("12,345 in, 6,789 out, 1,000,000 cache read"),
        "{screen}"
    );
    // The cache warmer's row: the default mode, and nothing kept warm for the mock model.
    assert!(
        screen
            .lines()
            .any(|l| l.contains("Warming:") && l.contains("streaming · Inactive (")),
        "{screen}"
    );
    // The path wraps at a `/`, in its column: the file name stays whole.
    let file = sandbox.session_files()[0].clone();
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        screen
            .lines()
            .any(|l| l.trim() == name || l.trim_end().ends_with(name)),
        "{screen}"
    );
    assert!(!screen.lines().any(|l| l.trim() == ".jsonl"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn at_completion_offers_folders_and_walks_into_them() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.project.join("docs/api")).unwrap();
    std::fs::write(sandbox.project.join("docs/guide.md"), "# Guide\n").unwrap();
    std::fs::write(sandbox.project.join("docs/api/ref.md"), "# Ref\n").unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("see @do");
    tui.wait_for_text("docs/");
    tui.send("\t");
    // The folder is in the editor and the popup shows what is inside it, folders first.
    let screen = tui.wait_for("the folder's entries", |s| {
        s.contains("see @docs/") && s.contains("docs/guide.md") && !s.contains("ref.md")
    });
    assert!(screen.contains("docs/api/"), "{screen}");
    assert!(
        !screen.contains("notes.txt"),
        "only the folder's entries: {screen}"
    );
    tui.send("\r");
    tui.wait_for_text("docs/api/ref.md");
    tui.send("\r");
    tui.wait_for("the file in the editor", |s| {
        s.contains("see @docs/api/ref.md") && !s.contains("docs/guide.md")
    });
    tui.send("\x03");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn hotkeys_are_grouped_by_where_they_apply_and_follow_keybindings_json() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::write(
        sandbox.agent.join("keybindings.json"),
        r#"{"app.model.select": "alt+m"}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("/hotkeys");
    tui.wait_for_text("Thinking level (/thinking)");
    let history = tui.history();
    let at = |heading: &str| {
        history
            .iter()
            .position(|l| l.trim() == heading)
            .unwrap_or_else(|| panic!("{heading} missing: {history:#?}"))
    };
    let groups = [
        at("Editor and conversation"),
        at("Editing"),
        at("Pickers"),
        at("Session picker (/resume)"),
        at("Session tree (/tree)"),
        at("Scoped models (/scoped-models)"),
        at("Thinking level (/thinking)"),
    ];
    assert!(groups.windows(2).all(|w| w[0] < w[1]), "{groups:?}");
    let line_in = |group: usize, needle: &str| {
        let end = groups.get(group + 1).copied().unwrap_or(history.len());
        history[groups[group]..end]
            .iter()
            .any(|l| l.contains(needle))
    };
    // ctrl+d once per place it means something, each under its own heading.
    assert!(line_in(0, "Exit when editor is empty"));
    assert!(line_in(1, "Delete character forward"));
    assert!(line_in(1, "ctrl+w, alt+backspace"), "editing keys listed");
    assert!(line_in(3, "Delete session"));
    assert!(line_in(4, "Tree filter: default view"));
    // The active bindings: the changed key is shown, the default is not.
    assert!(line_in(0, "alt+m"));
    assert!(
        !history
            .iter()
            .any(|l| l.contains("ctrl+l") && l.contains("model selector"))
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn read_results_are_highlighted_by_the_files_language() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::tool_call("call_1", "read", r#"{"path":"src/lib.rs"}"#),
        ScriptedReply::text("Read it."),
    ]);
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    std::fs::write(
        sandbox.project.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n",
    )
    .unwrap();
    let keyword = Some(vt100::Color::Rgb(0x56, 0x9c, 0xd6));
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("read the lib");
    tui.wait_for_text("Read it.");
    assert_eq!(tui.color_of("pub fn answer"), keyword, "{}", tui.screen());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    // The same when the session is opened again.
    let mut tui = sandbox.spawn(&["--continue"], 100, 30);
    tui.wait_for_text("Read it.");
    assert_eq!(tui.color_of("pub fn answer"), keyword, "{}", tui.screen());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn continue_on_a_session_open_elsewhere_offers_a_fork_or_a_new_session() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("First answer."),
        ScriptedReply::text("Answer in the fork."),
    ]);
    let mut owner = sandbox.spawn(&[], 100, 30);
    owner.wait_for_text("mock-model");
    owner.submit("remember the red door");
    owner.wait_for_text("First answer.");

    // Declined: a new, empty session instead of an exit.
    let mut tui = sandbox.spawn(&["--continue"], 100, 30);
    tui.wait_for_text("Session in use");
    tui.wait_for_text("Start a new session instead");
    tui.send("\x1b[B\r");
    let screen = tui.wait_for_text("Started a new session.");
    assert!(!screen.contains("First answer."), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // Accepted: the conversation goes on in a fork.
    let mut tui = sandbox.spawn(&["--continue"], 100, 30);
    tui.wait_for_text("Continue in a fork");
    tui.send("\r");
    tui.wait_for_text("in a fork: a new session file");
    tui.wait_for_text("First answer.");
    tui.submit("go on");
    tui.wait_for_text("Answer in the fork.");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(sandbox.session_files().len(), 2);
    owner.send("\x04");
    assert_eq!(owner.wait_exit(), 0);
}
