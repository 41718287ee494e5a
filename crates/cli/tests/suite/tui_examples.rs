//! The reference's interactive example extensions in a real pseudo-terminal: games and
//! panels drawn by their own components, custom headers and footers, statuses and
//! widgets. The examples come from the npm package at test time (`ext_examples/corpus.rs`);
//! the texts waited for are what each example draws in the reference agent.

use super::ext_examples::corpus;
use crate::tui_common;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;

use tui_common::Sandbox;

const ESC: &str = "\x1b";

fn start(example: &str, cols: u16, rows: u16) -> (Sandbox, tui_common::Tui) {
    start_with(example, cols, rows, vec![])
}

fn start_with(
    example: &str,
    cols: u16,
    rows: u16,
    replies: Vec<knightcode_testkit::ScriptedReply>,
) -> (Sandbox, tui_common::Tui) {
    let corpus = corpus::corpus();
    let sandbox = tui_common::sandbox(replies);
    let path = corpus.original.join(example);
    let tui = sandbox.spawn(&["-e", path.to_str().unwrap()], cols, rows);
    (sandbox, tui)
}

/// The body of the last request the model got, as text.
fn last_request(sandbox: &Sandbox) -> String {
    sandbox.server().requests().last().unwrap().body.to_string()
}

fn quit(mut tui: tui_common::Tui) {
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// Quits with `typed` in the editor: ctrl+c clears it, then ctrl+d.
fn clear_and_quit(mut tui: tui_common::Tui, typed: &str) {
    tui.send("\x03");
    tui.wait_for("the editor cleared", |s| !s.contains(typed));
    quit(tui);
}

#[test]
fn snake_draws_its_board_and_quits_with_q() {
    let (_sandbox, mut tui) = start("snake.ts", 80, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/snake");
    // A frame arrives in pieces: wait for its top and its bottom.
    let screen = tui.wait_for("the whole board", |s| {
        s.contains("SNAKE │ Score: 0 │ High: 0")
            && s.contains("↑↓←→ or WASD to move, ESC pause, Q quit")
    });
    assert!(!screen.contains("Working…"), "{screen}");
    tui.send("q");
    tui.wait_for("the board closed", |s| !s.contains("SNAKE │"));
    quit(tui);
}

#[test]
fn space_invaders_draws_and_quits() {
    let (_sandbox, mut tui) = start("space-invaders.ts", 80, 34);
    tui.wait_for_text("mock-model");
    tui.submit("/invaders");
    tui.wait_for_text("←→ or AD to move, SPACE/F to fire, ESC pause, Q quit");
    tui.send("q");
    tui.wait_for("the game closed", |s| !s.contains("SPACE/F to fire"));
    quit(tui);
}

#[test]
fn tic_tac_toe_shows_the_board_and_escape_leaves() {
    let (_sandbox, mut tui) = start("tic-tac-toe.ts", 80, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/tic-tac-toe");
    tui.wait_for("the whole board", |s| {
        s.contains("Turn: X (You)") && s.contains("ENTER play")
    });
    tui.send(ESC);
    tui.wait_for("the board closed", |s| !s.contains("Turn: X (You)"));
    quit(tui);
}

#[test]
fn the_todo_panel_opens_and_closes() {
    let (_sandbox, mut tui) = start("todo.ts", 80, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/todos");
    tui.wait_for_text("No todos yet. Ask the agent to add some!");
    tui.send(ESC);
    tui.wait_for("the panel closed", |s| !s.contains("No todos yet"));
    quit(tui);
}

#[test]
fn a_custom_header_replaces_the_built_in_one() {
    let (_sandbox, tui) = start("custom-header.ts", 80, 30);
    tui.wait_for("the custom header alone", |s| {
        s.contains("shitty coding agent") && !s.contains("esc interrupt · ctrl+c clear")
    });
    quit(tui);
}

#[test]
fn a_custom_footer_replaces_the_built_in_one() {
    let (_sandbox, mut tui) = start("custom-footer.ts", 80, 30);
    let screen = tui.wait_for_text("mock-model");
    let project = screen
        .lines()
        .find(|l| l.contains("/project"))
        .unwrap()
        .trim()
        .to_owned();
    tui.submit("/footer");
    tui.wait_for_text("Custom footer enabled");
    tui.wait_for("the built-in footer's folder line is gone", |s| {
        !s.contains(&project)
    });
    quit(tui);
}

#[test]
fn status_line_and_widget_placement_show_where_they_belong() {
    let (_sandbox, tui) = start("status-line.ts", 80, 30);
    let screen = tui.wait_for("the status", |s| {
        s.lines().last().is_some_and(|l| l.contains("Ready"))
    });
    assert!(screen.contains("mock-model"), "{screen}");
    quit(tui);

    let (_sandbox, tui) = start("widget-placement.ts", 80, 30);
    let screen = tui.wait_for("both widgets", |s| {
        s.contains("Above editor widget") && s.contains("Below editor widget")
    });
    let lines: Vec<&str> = screen.lines().collect();
    let row = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap();
    let rules: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("────"))
        .map(|(i, _)| i)
        .collect();
    assert!(row("Above editor widget") < rules[0], "{screen}");
    assert!(row("Below editor widget") > rules[1], "{screen}");
    quit(tui);
}

#[test]
fn the_modal_editor_replaces_ours_and_its_prompt_is_sent() {
    let (sandbox, mut tui) = start_with(
        "modal-editor.ts",
        80,
        30,
        vec![knightcode_testkit::ScriptedReply::text("the model answers")],
    );
    tui.wait_for_text(" INSERT ");
    tui.send("hello modal");
    tui.wait_for_text("hello modal");
    // Escape: normal mode, where letters are commands, not text.
    tui.send(ESC);
    tui.wait_for_text(" NORMAL ");
    tui.send("x");
    tui.wait_for_text("hello moda");
    tui.send("i");
    tui.wait_for_text(" INSERT ");
    tui.send("\r");
    tui.wait_for_text("the model answers");
    let last = last_request(&sandbox);
    assert!(last.contains("hello moda"), "{last}");
    quit(tui);
}

#[test]
fn the_message_renderer_draws_custom_messages() {
    let (_sandbox, mut tui) = start("message-renderer.ts", 80, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/status warn disk almost full");
    // The renderer's box replaces the default "[status-update] …" notice.
    tui.wait_for("the rendered message alone", |s| {
        s.contains("[WARN] disk almost full") && !s.contains("[status-update]")
    });
    quit(tui);
}

fn question_call(id: &str) -> knightcode_testkit::ScriptedReply {
    knightcode_testkit::ScriptedReply::tool_call(
        id,
        "question",
        r#"{"question":"Which colour?","options":[{"label":"Red"},{"label":"Blue","description":"like the sea"}]}"#,
    )
}

#[test]
fn the_question_tool_asks_in_its_own_view_and_answers_the_model() {
    let (sandbox, mut tui) = start_with(
        "question.ts",
        80,
        30,
        vec![
            question_call("call-1"),
            knightcode_testkit::ScriptedReply::text("picked"),
            question_call("call-2"),
            knightcode_testkit::ScriptedReply::text("typed"),
        ],
    );
    tui.wait_for_text("mock-model");
    tui.submit("ask me");
    tui.wait_for("the whole question", |s| {
        s.contains("Which colour?")
            && s.contains("1. Red")
            && s.contains("like the sea")
            && s.contains("3. Type something.")
            && s.contains("↑↓ navigate • Enter to select • Esc to cancel")
    });
    tui.send("\x1b[B");
    tui.send("\r");
    // The tool's renderers draw its call and the answer.
    tui.wait_for("the rendered result", |s| {
        s.contains("✓ 2. Blue") && s.contains("picked")
    });
    let second = sandbox.server().requests()[1].body.to_string();
    assert!(second.contains("User selected: 2. Blue"), "{second}");

    // "Type something." opens the editor inside the view.
    tui.submit("again");
    // The call's own line lists the options too: wait for the view's hint.
    tui.wait_for_text("↑↓ navigate • Enter to select • Esc to cancel");
    tui.send("\x1b[B\x1b[B\r");
    tui.wait_for_text("Enter to submit • Esc to go back");
    tui.send("green");
    tui.wait_for_text("green");
    tui.send("\r");
    tui.wait_for("the written answer", |s| {
        s.contains("✓ (wrote) green") && s.contains("typed")
    });
    let fourth = sandbox.server().requests()[3].body.to_string();
    assert!(fourth.contains("User wrote: green"), "{fourth}");
    quit(tui);
}

#[test]
fn the_questionnaire_walks_its_tabs_and_submits_every_answer() {
    let questions = r#"{"questions":[
        {"id":"scope","label":"Scope","prompt":"How big?","options":[{"value":"s","label":"Small"},{"value":"l","label":"Large"}]},
        {"id":"priority","label":"Priority","prompt":"How urgent?","options":[{"value":"lo","label":"Low"},{"value":"hi","label":"High"}]}
    ]}"#;
    let (sandbox, mut tui) = start_with(
        "questionnaire.ts",
        90,
        30,
        vec![
            knightcode_testkit::ScriptedReply::tool_call("call-1", "questionnaire", questions),
            knightcode_testkit::ScriptedReply::text("thanks"),
        ],
    );
    tui.wait_for_text("mock-model");
    tui.submit("plan it");
    tui.wait_for("the first tab", |s| {
        s.contains("How big?")
            && s.contains("Tab/←→ navigate • ↑↓ select • Enter confirm • Esc cancel")
    });
    tui.send("\r");
    tui.wait_for_text("How urgent?");
    tui.send("\x1b[B\r");
    tui.wait_for("the submit tab", |s| {
        s.contains("Ready to submit") && s.contains("Press Enter to submit")
    });
    tui.send("\r");
    tui.wait_for("both answers drawn", |s| {
        s.contains("✓ scope: 1. Small") && s.contains("✓ priority: 2. High") && s.contains("thanks")
    });
    let second = sandbox.server().requests()[1].body.to_string();
    assert!(
        second.contains("Scope: user selected: 1. Small")
            && second.contains("Priority: user selected: 2. High"),
        "{second}"
    );
    quit(tui);
}

#[test]
fn the_rainbow_editor_colours_ultrathink_and_sends_the_text() {
    let (sandbox, mut tui) = start_with(
        "rainbow-editor.ts",
        80,
        30,
        vec![knightcode_testkit::ScriptedReply::text("thought hard")],
    );
    tui.wait_for_text("mock-model");
    tui.send("please ultrathink now");
    tui.wait_for_text("please ultrathink now");
    tui.wait_for_colour_that("ultrathink", "a true colour", |c| {
        matches!(c, Some(vt100::Color::Rgb(..)))
    });
    assert!(!matches!(
        tui.color_of("please"),
        Some(vt100::Color::Rgb(..))
    ));
    tui.send("\r");
    tui.wait_for_text("thought hard");
    let last = last_request(&sandbox);
    assert!(last.contains("please ultrathink now"), "{last}");
    quit(tui);
}

#[test]
fn the_working_indicator_example_reports_and_switches_its_mode() {
    let (_sandbox, mut tui) = start("working-indicator.ts", 90, 30);
    tui.wait_for_text("Indicator: custom spinner");
    tui.submit("/working-indicator dot");
    tui.wait_for("the switch", |s| {
        s.contains("Working indicator set to: static dot") && s.contains("Indicator: static dot")
    });
    tui.submit("/working-indicator bogus");
    tui.wait_for_text("Usage: /working-indicator [dot|pulse|none|spinner|reset]");
    quit(tui);
}

#[test]
fn an_overlay_floats_over_the_screen_takes_keys_and_closes() {
    let (_sandbox, mut tui) = start("overlay-test.ts", 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/overlay-test");
    let screen = tui.wait_for("the whole overlay", |s| {
        s.contains("Overlay Test")
            && s.contains("Edge Cases (borders should align)")
            && s.contains("Cancel")
    });
    // Centred on the screen (the frame padded to its height, as in the reference): as
    // wide as the component's `width` (70) on a 100-column screen, so it starts at column
    // 15, and its 16 rows start at row 7 of 30. (Row 6 when the emulator counts the family
    // emoji of its edge-case line as four wide characters, as terminals that do not join
    // them do: that line wraps once and the screen scrolls by one.) The footer stays where
    // it was, beside it.
    let rows: Vec<&str> = screen.lines().collect();
    let border = rows.iter().position(|l| l.contains('╭')).unwrap();
    assert!((6..=7).contains(&border), "{screen}");
    assert_eq!(
        rows[border].chars().position(|c| c == '╭'),
        Some(15),
        "{screen}"
    );
    assert!(screen.contains("mock-model"), "{screen}");
    tui.send("abc");
    tui.wait_for_text("Search: abc");
    tui.send("\r");
    tui.wait_for("the overlay gone and its answer", |s| {
        s.contains("Search: \"abc\"") && !s.contains("Overlay Test")
    });
    quit(tui);
}

#[test]
fn hidden_thinking_shows_the_extensions_label() {
    let (_sandbox, mut tui) = start_with(
        "hidden-thinking-label.ts",
        80,
        30,
        vec![
            knightcode_testkit::ScriptedReply::default()
                .with_thinking("secret reasoning", None)
                .with_text("the answer"),
        ],
    );
    tui.wait_for_text("mock-model");
    tui.submit("think");
    tui.wait_for("the reasoning and the answer", |s| {
        s.contains("secret reasoning") && s.contains("the answer")
    });
    // Ctrl+T hides thinking blocks: the label stands in.
    tui.send("\x14");
    tui.wait_for("the label instead of the reasoning", |s| {
        s.contains("Pondering...") && !s.contains("secret reasoning")
    });
    tui.submit("/thinking-label Musing");
    tui.wait_for("the new label", |s| {
        s.contains("Hidden thinking label set to: Musing")
            && s.contains("Musing")
            && !s.contains("Pondering...")
    });
    // Shown again for the next runs.
    tui.send("\x14");
    tui.wait_for_text("secret reasoning");
    quit(tui);
}

#[test]
fn the_tools_list_turns_a_tool_off_for_the_next_request() {
    let (sandbox, mut tui) = start_with(
        "tools.ts",
        80,
        30,
        vec![knightcode_testkit::ScriptedReply::text("fewer tools")],
    );
    tui.wait_for_text("mock-model");
    tui.submit("/tools");
    tui.wait_for("the settings list", |s| {
        s.contains("Tool Configuration") && s.contains("read") && s.contains("enabled")
    });
    // The first row is `read`: Enter flips it, Escape closes the list.
    tui.send("\r");
    tui.wait_for_text("disabled");
    tui.send(ESC);
    tui.wait_for("the list closed", |s| !s.contains("Tool Configuration"));
    tui.submit("go");
    tui.wait_for_text("fewer tools");
    let offered = sandbox.server().requests()[0].body["tools"].to_string();
    assert!(!offered.contains("\"read\""), "{offered}");
    assert!(offered.contains("\"bash\""), "{offered}");
    quit(tui);
}

#[test]
fn the_border_status_editor_carries_the_status_and_the_footer_goes() {
    let (sandbox, mut tui) = start_with(
        "border-status-editor.ts",
        100,
        30,
        vec![knightcode_testkit::ScriptedReply::text("bordered")],
    );
    // The model and thinking level sit in the editor's bottom border; our footer (with
    // its "(auto)" context line) is replaced by an empty one.
    tui.wait_for("the status in the border", |s| {
        s.contains("mock/mock-model · off") && !s.contains("(auto)")
    });
    tui.send("hi there");
    tui.wait_for_text("hi there");
    tui.send("\r");
    tui.wait_for_text("bordered");
    let last = last_request(&sandbox);
    assert!(last.contains("hi there"), "{last}");
    quit(tui);
}

#[test]
fn the_built_in_tool_renderer_draws_compact_read_and_bash_cards() {
    let (sandbox, mut tui) = start_with(
        "built-in-tool-renderer.ts",
        90,
        30,
        vec![
            knightcode_testkit::ScriptedReply::tool_call(
                "call-1",
                "read",
                r#"{"path":"notes.txt"}"#,
            ),
            knightcode_testkit::ScriptedReply::tool_call(
                "call-2",
                "bash",
                r#"{"command":"echo from-bash"}"#,
            ),
            knightcode_testkit::ScriptedReply::text("all read"),
        ],
    );
    std::fs::write(sandbox.project.join("notes.txt"), "one\ntwo\nthree").unwrap();
    tui.wait_for_text("mock-model");
    tui.submit("look");
    tui.wait_for("both compact cards", |s| {
        s.contains("read notes.txt")
            && s.contains("3 lines")
            && s.contains("$ echo from-bash")
            && s.contains("done")
            && s.contains("all read")
    });
    // The wrapped tools still do the work: the model got the file and the output.
    let requests = sandbox.server().requests();
    assert!(requests[1].body.to_string().contains("three"));
    assert!(requests[2].body.to_string().contains("from-bash"));
    quit(tui);
}

/// A tool that waits until ctrl+alt+r releases it: a turn that stays on screen.
const HOLD: &str = r#"
let release;
export default function (pi) {
  pi.registerTool({
    name: "hold", label: "Hold", description: "Waits to be released", parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, _onUpdate, ctx) { ctx.ui.notify(`holding ${_id}`); await new Promise((r) => { release = r; }); return { content: [{ type: "text", text: "released" }], details: undefined }; },
  });
  pi.registerShortcut("ctrl+alt+r", { description: "release the hold", handler: async () => release?.() });
}
"#;

#[test]
fn the_working_message_survives_from_turn_to_turn() {
    let corpus = corpus::corpus();
    let sandbox = tui_common::sandbox(vec![
        knightcode_testkit::ScriptedReply::tool_call("call-1", "hold", "{}"),
        knightcode_testkit::ScriptedReply::text("first done"),
        knightcode_testkit::ScriptedReply::tool_call("call-2", "hold", "{}"),
        knightcode_testkit::ScriptedReply::text("second done"),
    ]);
    std::fs::write(sandbox.project.join("hold.ts"), HOLD).unwrap();
    let example = corpus.original.join("working-message-test.ts");
    let mut tui = sandbox.spawn(&["-e", example.to_str().unwrap(), "-e", "hold.ts"], 90, 30);
    tui.wait_for_text("mock-model");
    for (prompt, call, done) in [
        ("one", "holding call-1", "first done"),
        ("two", "holding call-2", "second done"),
    ] {
        tui.submit(prompt);
        // The tool says it has started before the shortcut releases it.
        let screen = tui.wait_for("the custom working row", |s| {
            s.contains("● Working... (custom)") && s.contains(call)
        });
        assert!(!screen.contains("Working…"), "{screen}");
        tui.send("\x1b\x12");
        tui.wait_for_text(done);
    }
    quit(tui);
}

#[test]
fn the_summary_view_shows_what_the_model_wrote_and_closes() {
    let (sandbox, mut tui) = {
        let sandbox = tui_common::sandbox(vec![
            knightcode_testkit::ScriptedReply::text("the first answer"),
            knightcode_testkit::ScriptedReply::text("**Summary:** the user said hello"),
        ]);
        // The example asks for openai/gpt-5.2: models.json points that provider at the mock.
        let models_path = sandbox.agent.join("models.json");
        let mut models: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
        models["providers"]["openai"] = serde_json::json!({
            "baseUrl": sandbox.server().base_url(), "api": "openai-completions", "apiKey": "sk-test",
            "models": [{"id": "gpt-5.2", "name": "GPT-5.2", "reasoning": true,
                        "contextWindow": 128000, "maxTokens": 4096}]});
        std::fs::write(&models_path, models.to_string()).unwrap();
        let path = corpus::corpus().original.join("summarize.ts");
        // The catalog's openai models stay beside gpt-5.2, and its preferred one would be the
        // default: start on the mock's.
        let args = ["-e", path.to_str().unwrap(), "--model", "mock/mock-model"];
        let tui = sandbox.spawn(&args, 90, 30);
        (sandbox, tui)
    };
    tui.wait_for_text("mock-model");
    tui.submit("hello there");
    tui.wait_for_answer("the first answer");
    tui.submit("/summarize");
    tui.wait_for("the summary view", |s| {
        s.contains("Conversation Summary")
            && s.contains("the user said hello")
            && s.contains("Press Enter or Esc to close")
    });
    // The summary request went to the model the example chose, with the conversation.
    let requests = sandbox.server().requests();
    assert_eq!(requests[1].body["model"], "gpt-5.2");
    assert!(requests[1].body.to_string().contains("hello there"));
    tui.send("\r");
    tui.wait_for("the view closed", |s| !s.contains("Conversation Summary"));
    quit(tui);
}

#[test]
fn minimal_mode_hides_tool_output_until_ctrl_o() {
    let (_sandbox, mut tui) = start_with(
        "minimal-mode.ts",
        90,
        30,
        vec![
            knightcode_testkit::ScriptedReply::tool_call(
                "call-1",
                "read",
                r#"{"path":"notes.txt"}"#,
            ),
            knightcode_testkit::ScriptedReply::text("read it"),
        ],
    );
    tui.wait_for_text("mock-model");
    tui.submit("peek");
    // Collapsed: the call alone, none of the file (the extension's lines replace our
    // card's output when they arrive).
    tui.wait_for("the minimal card", |s| {
        s.contains("read notes.txt") && s.contains("read it") && !s.contains("gamma")
    });
    // Expanded: the whole output.
    tui.send("\x0f");
    tui.wait_for("the expanded output", |s| {
        s.contains("alpha") && s.contains("beta") && s.contains("gamma")
    });
    quit(tui);
}

/// A `PATH` that finds `script` as the program `name` first (in the sandbox's `bin`).
fn path_with_program(sandbox: &Sandbox, name: &str, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = sandbox.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let program = bin.join(name);
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn github_issue_autocomplete_offers_issues_after_a_hash_and_inserts_one() {
    let sandbox = tui_common::sandbox(vec![]);
    // A checkout of a GitHub repository, and a `gh` that lists its open issues.
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&sandbox.project)
            .output_within(PROCESS_LIMIT, "git")
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/acme/widgets.git",
    ]);
    let path = path_with_program(
        &sandbox,
        "gh",
        "#!/bin/sh\necho \"$@\" >> \"$HOME/gh-args\"\nprintf '%s' '[{\"number\":12,\"title\":\"Crash on start\",\"state\":\"OPEN\"},{\"number\":7,\"title\":\"Docs typo\",\"state\":\"OPEN\"}]'\n",
    );
    let example = corpus::corpus()
        .original
        .join("github-issue-autocomplete.ts");
    let mut tui = sandbox.spawn_with_env(
        &["-e", example.to_str().unwrap()],
        &[("PATH", &path)],
        100,
        30,
    );
    tui.wait_for_text("mock-model");
    tui.send("fix #1");
    let screen = tui.wait_for("the issue suggestion", |s| {
        s.contains("#12") && s.contains("[open] Crash on start")
    });
    assert!(
        !screen.contains("Docs typo"),
        "only issues matching 1:\n{screen}"
    );
    tui.send("\t");
    tui.wait_for("the issue in the editor, the popup gone", |s| {
        s.contains("fix #12") && !s.contains("Crash on start")
    });
    // A bare hash lists every open issue.
    tui.send(" and #");
    tui.wait_for("both issues", |s| {
        s.contains("[open] Crash on start") && s.contains("[open] Docs typo")
    });
    let args = std::fs::read_to_string(sandbox.home.join("gh-args")).unwrap();
    assert!(args.contains("issue list --repo acme/widgets"), "{args}");
    assert_eq!(
        args.lines().count(),
        1,
        "issues are loaded once per session: {args}"
    );
    tui.send(ESC);
    tui.wait_for("the popup closed", |s| !s.contains("Docs typo"));
    tui.send("\x03");
    tui.wait_for("an empty editor", |s| !s.contains("fix #12"));
    quit(tui);
}

#[test]
fn interactive_shell_lends_the_terminal_to_the_program_and_takes_it_back() {
    let (sandbox, mut tui) = start("interactive-shell.ts", 90, 30);
    tui.wait_for_text("mock-model");
    tui.submit(r#"!i sh -c 'printf "child asks: "; read answer; echo "got $answer" > answer.txt'"#);
    // The program has the screen (the example clears it) and the keyboard.
    let screen = tui.wait_for("the program's prompt", |s| {
        s.contains("child asks:") && !s.contains("mock-model")
    });
    assert!(!screen.contains("ctrl+c clear"), "{screen}");
    tui.send("hello\r");
    tui.wait_for("our screen back with the result", |s| {
        s.contains("(interactive command completed successfully)") && s.contains("mock-model")
    });
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("answer.txt")).unwrap(),
        "got hello\n"
    );
    // Keys are ours again.
    tui.send("typed after");
    tui.wait_for_text("typed after");
    tui.send("\x03");
    tui.wait_for("an empty editor", |s| !s.contains("typed after"));
    quit(tui);
}

#[test]
fn mac_system_theme_follows_the_appearance_osascript_reports() {
    let sandbox = tui_common::sandbox(vec![]);
    // An `osascript` that answers what the "system" says: light at first.
    let appearance = sandbox.home.join("appearance");
    std::fs::write(&appearance, "false\n").unwrap();
    let path = path_with_program(
        &sandbox,
        "osascript",
        "#!/bin/sh\ncat \"$HOME/appearance\"\n",
    );
    let example = corpus::corpus().original.join("mac-system-theme.ts");
    let mut tui = sandbox.spawn_with_env(
        &["-e", example.to_str().unwrap()],
        &[("PATH", &path)],
        100,
        30,
    );
    tui.wait_for_text("mock-model");
    // The editor's border for a model without reasoning: `thinkingOff` of each theme,
    // light's `#b0b0b0` first.
    let border = "─".repeat(100);
    tui.wait_for_color(&border, vt100::Color::Rgb(0xb0, 0xb0, 0xb0));
    // The system turns dark; the example asks again every 2 s.
    std::fs::write(&appearance, "true\n").unwrap();
    // (The built-in dark theme draws it in palette colour 240.)
    tui.wait_for_color(&border, vt100::Color::Idx(240));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// The overlay lab of the reference's examples: its commands each open overlays.
fn overlay_lab() -> (Sandbox, tui_common::Tui) {
    let (sandbox, tui) = start("overlay-qa-tests.ts", 100, 40);
    tui.wait_for_text("mock-model");
    (sandbox, tui)
}

#[test]
fn stacked_overlays_close_from_the_top_and_each_gets_the_keys_in_turn() {
    let (_sandbox, mut tui) = overlay_lab();
    tui.submit("/overlay-stack");
    // The front one (shown last) is drawn whole, over the others.
    tui.wait_for("the front overlay", |s| {
        s.contains("Layer: front (blue border)") && s.contains("Overlay #2")
    });
    tui.send("\r");
    tui.wait_for("the middle one on top", |s| {
        !s.contains("Overlay #3") && s.contains("Layer: middle (green border)")
    });
    tui.send("\r");
    tui.wait_for("the back one alone", |s| {
        !s.contains("Overlay #2") && s.contains("Layer: back (red border)")
    });
    tui.send("\r");
    tui.wait_for("all closed, in order", |s| {
        !s.contains("Overlay #1") && s.contains("Closed in order: Overlay 1, Overlay 2, Overlay 3")
    });
    // The editor has the keys again.
    tui.send("typed after");
    tui.wait_for_text("typed after");
    clear_and_quit(tui, "typed after");
}

#[test]
fn a_non_capturing_overlay_leaves_the_keys_to_the_one_that_captures_them() {
    let (_sandbox, mut tui) = overlay_lab();
    tui.submit("/overlay-passive");
    tui.wait_for("the demo and its timer", |s| {
        s.contains("Non-Capturing Demo")
            && s.contains("nonCapturing: true")
            && s.contains("focused=true inputs=0")
    });
    tui.send("abc");
    let screen = tui.wait_for("the typed text in the demo", |s| {
        s.contains("> abc") && s.contains("inputs=3")
    });
    assert!(screen.contains("Timer"), "{screen}");
    tui.send(ESC);
    tui.wait_for("both closed", |s| {
        !s.contains("Non-Capturing Demo") && !s.contains("nonCapturing: true")
    });
    // Nothing typed reached the editor.
    tui.send("zq9");
    let screen = tui.wait_for_text("zq9");
    assert!(!screen.contains("abc"), "{screen}");
    clear_and_quit(tui, "zq9");
}

#[test]
fn focus_moves_between_non_capturing_overlays_and_the_focused_one_is_on_top() {
    let (_sandbox, mut tui) = overlay_lab();
    tui.submit("/overlay-focus");
    // Alpha, Beta and Gamma overlap; Gamma, shown last, covers the ends of the others.
    let screen = tui.wait_for("the controller and three panels", |s| {
        s.contains("Current focus: Controller") && s.contains("│ Gamma")
    });
    assert!(screen.contains("│ Alph│ Beta│ Gamma"), "{screen}");
    assert!(!screen.contains("● FOCUSED"), "{screen}");
    tui.send("\t");
    // Alpha takes the focus and comes to the top: its label row is whole.
    let screen = tui.wait_for("Alpha focused, on top", |s| {
        s.contains("Current focus: Alpha") && s.contains("● FOCUSED")
    });
    assert!(screen.contains("│ Alpha "), "{screen}");
    assert_eq!(screen.matches("● FOCUSED").count(), 1, "{screen}");
    // Alpha has the keys now: its tab moves the focus on.
    tui.send("\t");
    tui.wait_for_text("Current focus: Beta");
    tui.send("\t");
    tui.wait_for_text("Current focus: Gamma");
    tui.send("\t");
    let screen = tui.wait_for_text("Current focus: Controller");
    assert!(!screen.contains("● FOCUSED"), "{screen}");
    tui.send(ESC);
    tui.wait_for("everything closed", |s| {
        !s.contains("Current focus") && !s.contains("│ Alph")
    });
    quit(tui);
}
