//! The interactive mode in a real pseudo-terminal against the scripted model: typing a
//! prompt, streaming text and tool calls, steering, aborting, resuming from the picker,
//! branching from /tree and resizing.

use crate::tui_common;

use knightcode_testkit::Chunking;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use tui_common::read_jsonl;

#[test]
fn a_prompt_streams_text_and_a_tool_call_then_exits_cleanly() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::default()
            .with_text("Let me read **the notes**.")
            .with_tool_call("call_1", "read", r#"{"path":"notes.txt"}"#)
            .with_chunking(Chunking::chars(3)),
        ScriptedReply::text("The notes say alpha, beta, gamma.").with_chunking(Chunking::chars(4)),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("what do the notes say?");
    tui.wait_for_text("The notes say alpha, beta, gamma.");
    let screen = tui.wait_for_text("read notes.txt");
    assert!(screen.contains("what do the notes say?"), "{screen}");
    assert!(
        screen.contains("Let me read the notes."),
        "markdown bold rendered: {screen}"
    );
    assert!(screen.contains("alpha"), "tool output shown: {screen}");
    // Ctrl+D on an empty editor quits; the transcript stays and a resume hint follows.
    tui.send("\x04");
    let code = tui.wait_exit();
    assert_eq!(code, 0);
    let history = tui.history().join("\n");
    assert!(
        history.contains("Resume this session with: knightcode --session"),
        "{history}"
    );
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1);
    let entries = read_jsonl(&files[0]);
    assert!(entries.iter().any(|e| e["message"]["role"] == "toolResult"));
}

#[test]
fn command_line_options_this_build_lacks_are_warned_about_in_the_transcript() {
    let sandbox = tui_common::sandbox(Vec::new());
    let mut tui = sandbox.spawn(&["--use-theme", "solarized"], 200, 30);
    // An unknown theme is a warning of its own (tui_themes.rs has the details).
    tui.wait_for_text("Theme \"solarized\" not found; using dark.");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn enter_while_streaming_steers_and_escape_aborts() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("Starting the long task and still going")
            .with_chunking(Chunking::chars(5))
            .with_fault(Fault::StallAfterEvents(3)),
        ScriptedReply::text("Redirected: doing the other thing now.")
            .with_chunking(Chunking::chars(5))
            .with_fault(Fault::StallAfterEvents(2)),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("do the long task");
    sandbox
        .server()
        .wait_until_blocking(|a| a.stalls >= 1, tui_common::WATCHDOG)
        .unwrap();
    tui.wait_for_text("esc to interrupt");
    tui.submit("also do the other thing");
    tui.wait_for_text("Steering: also do the other thing");
    sandbox.server().release_stalls();
    // The steering message goes with the next request, after the first reply ends.
    let requests = sandbox
        .server()
        .wait_until_blocking(|a| a.stalls >= 2, tui_common::WATCHDOG)
        .unwrap();
    assert!(requests.requests >= 2);
    let second = &sandbox.server().requests()[1];
    assert!(
        second.body.to_string().contains("also do the other thing"),
        "{}",
        second.body
    );
    tui.wait_for_text("Redir");
    // Escape aborts the stalled second reply.
    tui.send("\x1b");
    tui.wait_for_text("Operation aborted");
    let screen = tui.wait_for("the working row to go", |s| !s.contains("esc to interrupt"));
    assert!(screen.contains("also do the other thing"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let entries = read_jsonl(&sandbox.session_files()[0]);
    let last_assistant = entries
        .iter()
        .rev()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(last_assistant["message"]["stopReason"], "aborted");
}

#[test]
fn resume_opens_the_picker_and_loads_the_chosen_session() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("First answer.")]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("remember the blue door");
    tui.wait_for_text("First answer.");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // --continue opens the newest session straight away.
    let mut tui = sandbox.spawn(&["--continue"], 100, 30);
    tui.wait_for_text("First answer.");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    let mut tui = sandbox.spawn(&["--resume"], 100, 30);
    tui.wait_for_text("remember the blue door");
    tui.send("\r");
    tui.wait_for_text("First answer.");
    // Up recalls the resumed conversation's prompts.
    tui.send("\x1b[A");
    tui.wait_for("the prompt recalled into the editor", |s| {
        s.matches("remember the blue door").count() == 2
    });
    tui.send("\x03");
    // The resumed conversation continues in the same file.
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(sandbox.session_files().len(), 1);
}

#[test]
fn resizing_redraws_at_the_new_width() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text(
        "A fairly long answer that has to wrap differently once the terminal becomes narrower than before.",
    )]);
    let mut tui = sandbox.spawn(&[], 120, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello");
    tui.wait_for_text("terminal becomes narrower than before.");
    tui.resize(50, 30);
    let screen = tui.wait_for("the editor border at 50 columns", |s| {
        s.lines().any(|l| l == "─".repeat(50))
    });
    for line in screen.lines() {
        assert!(line.chars().count() <= 50, "{line:?}");
    }
    assert!(
        screen.contains("A fairly long answer that has to wrap"),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_two_thousand_line_reply_leaves_the_scrollback_intact() {
    let text: String = (0..2000).map(|i| format!("line {i:04}\n\n")).collect();
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text(text).with_chunking(Chunking::chars(400)),
    ]);
    let mut tui = sandbox.spawn(&[], 80, 24);
    tui.wait_for_text("mock-model");
    tui.submit("count");
    tui.wait_for("the reply to end", |s| {
        s.contains("line 1999") && !s.contains("esc to interrupt")
    });
    let history = tui.history();
    let numbered: Vec<&String> = history
        .iter()
        .filter(|l| l.trim_start().starts_with("line "))
        .collect();
    let expected: Vec<String> = (0..2000).map(|i| format!("line {i:04}")).collect();
    let got: Vec<String> = numbered.iter().map(|l| l.trim().to_owned()).collect();
    assert_eq!(got, expected, "every line once, in order");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn tree_selects_an_earlier_prompt_and_submitting_it_starts_a_branch() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("reply one"),
        ScriptedReply::text("reply two"),
        ScriptedReply::text("reply three"),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("alpha question");
    tui.wait_for_text("reply one");
    tui.submit("beta question");
    tui.wait_for_answer("reply two");
    tui.submit("/tree");
    tui.wait_for_text("beta question");
    // Typing searches the tree; Enter on the prompt puts it back in the editor.
    tui.send("alpha");
    tui.wait_for_text("(1/1)");
    tui.send("\r");
    // Leaving the branch asks about a summary; enter takes the first choice, none.
    tui.wait_for_text("→ No summary");
    tui.send("\r");
    let screen = tui.wait_for("the transcript to go back", |s| !s.contains("reply one"));
    assert!(
        screen.contains("alpha question"),
        "the prompt is in the editor: {screen}"
    );
    tui.submit(" revised");
    tui.wait_for_text("reply three");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    let entries = read_jsonl(&sandbox.session_files()[0]);
    let users: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .collect();
    let texts: Vec<String> = users
        .iter()
        .map(|e| {
            e["message"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(
        texts,
        ["alpha question", "beta question", "alpha question revised"]
    );
    // Each prompt follows its turn marker; the edit's turn starts where the first one did.
    let turn_parent = |user: &serde_json::Value| {
        let marker = entries
            .iter()
            .find(|e| e["id"] == user["parentId"])
            .unwrap();
        assert_eq!(marker["customType"], "knightcode.turn");
        marker["parentId"].clone()
    };
    assert_eq!(
        turn_parent(users[0]),
        turn_parent(users[2]),
        "the edit branches off where the first prompt did"
    );
    // The third request saw only the new branch.
    let third = sandbox.server().requests()[2].body.to_string();
    assert!(!third.contains("beta question"), "{third}");
}

#[test]
fn a_folder_with_protected_resources_asks_for_trust_first() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.project.join(".knightcode")).unwrap();
    std::fs::write(sandbox.project.join(".knightcode/settings.json"), "{}").unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    let screen = tui.wait_for_text("Do not trust");
    assert!(screen.contains(".knightcode/settings.json"), "{screen}");
    // The first option trusts the folder and saves it.
    tui.send("\r");
    tui.wait_for_text("mock-model");
    let saved = std::fs::read_to_string(sandbox.agent.join("trust.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let key = std::fs::canonicalize(&sandbox.project).unwrap();
    assert_eq!(saved[key.to_str().unwrap()], true, "{saved}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // Next time nothing is asked.
    let mut tui = sandbox.spawn(&[], 100, 30);
    let screen = tui.wait_for_text("mock-model");
    assert!(!screen.contains("Do not trust"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn shell_commands_run_from_the_editor_and_are_recorded() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Seen it.")]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("!echo from-the-shell");
    tui.wait_for_text("$ echo from-the-shell");
    tui.wait_for("the command's output", |s| {
        s.lines().any(|l| l.trim() == "from-the-shell")
    });
    tui.submit("!!echo private-output");
    tui.wait_for_text("(not sent to the model)");
    tui.submit("what did the shell say?");
    tui.wait_for_text("Seen it.");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let request = sandbox.server().requests()[0].body.to_string();
    assert!(request.contains("from-the-shell"), "{request}");
    assert!(
        !request.contains("private-output"),
        "!! output stays out of the context: {request}"
    );
    let entries = read_jsonl(&sandbox.session_files()[0]);
    let commands: Vec<&str> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "bashExecution")
        .map(|e| e["message"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["echo from-the-shell", "echo private-output"]);
}

#[test]
fn ctrl_p_cycles_models_and_the_footer_follows() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("\x10");
    tui.wait_for_text("mock-reasoner");
    // A reasoning model shows its thinking level; Shift+Tab changes it.
    let before = tui.screen();
    tui.send("\x1b[Z");
    tui.wait_for("the thinking level to change", |s| {
        s != before && s.contains("Thinking level")
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn alt_enter_queues_a_follow_up_for_after_the_run() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("Working on the first thing")
            .with_chunking(Chunking::chars(5))
            .with_fault(Fault::StallAfterEvents(2)),
        ScriptedReply::text("Now the follow-up."),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("first thing");
    sandbox
        .server()
        .wait_until_blocking(|a| a.stalls >= 1, tui_common::WATCHDOG)
        .unwrap();
    tui.send("then the second thing");
    tui.send("\x1b\r");
    tui.wait_for_text("Follow-up: then the second thing");
    sandbox.server().release_stalls();
    tui.wait_for_text("Now the follow-up.");
    let second = sandbox.server().requests()[1].body.to_string();
    assert!(second.contains("then the second thing"), "{second}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn double_escape_opens_the_tree_and_name_shows_in_the_footer() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Hi.")]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello there");
    tui.wait_for_answer("Hi.");
    tui.submit("/name refactor work");
    tui.wait_for("the name in the footer", |s| {
        s.contains("project • refactor work")
    });
    tui.send("\x1b");
    tui.wait_for_text("Press escape again");
    tui.send("\x1b");
    tui.wait_for_text("Session Tree");
    tui.send("\x1b");
    tui.wait_for("the tree to close", |s| !s.contains("Session Tree"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let entries = read_jsonl(&sandbox.session_files()[0]);
    assert!(
        entries
            .iter()
            .any(|e| e["type"] == "session_info" && e["name"] == "refactor work")
    );
}

#[test]
fn large_pastes_collapse_and_image_paths_attach() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Got it all.")]);
    // A 1x1 PNG.
    let png: [u8; 67] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::write(sandbox.project.join("pic.png"), png).unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    let pasted: String = (1..=30)
        .map(|i| format!("pasted line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    tui.send("look at this: ");
    tui.paste(&pasted);
    tui.wait_for_text("[paste #1 +30 lines]");
    tui.paste("pic.png");
    tui.wait_for_text("📎 pic.png");
    tui.send("\r");
    tui.wait_for_text("Got it all.");
    let body = sandbox.server().requests()[0].body.to_string();
    assert!(
        body.contains("pasted line 1\\n") && body.contains("pasted line 30"),
        "{body}"
    );
    assert!(!body.contains("[paste #1"), "{body}");
    assert!(body.contains("data:image/png;base64,"), "{body}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn ctrl_g_edits_the_prompt_in_the_external_editor() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Edited prompt received.")]);
    let script = sandbox.root.path().join("fake-editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf 'written in the editor' > \"$1\"\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let mut tui = sandbox.spawn_with_env(&[], &[("VISUAL", script.to_str().unwrap())], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("draft");
    tui.send("\x07");
    tui.wait_for_text("written in the editor");
    tui.send("\r");
    tui.wait_for_text("Edited prompt received.");
    let body = sandbox.server().requests()[0].body.to_string();
    assert!(body.contains("written in the editor"), "{body}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn fork_clone_and_new_each_start_a_new_session_file() {
    let sandbox = tui_common::sandbox(vec![
        ScriptedReply::text("answer one"),
        ScriptedReply::text("answer two"),
        ScriptedReply::text("answer three"),
    ]);
    let mut tui = sandbox.spawn(&[], 100, 40);
    tui.wait_for_text("mock-model");
    tui.submit("first prompt");
    tui.wait_for_text("answer one");
    tui.submit("second prompt");
    tui.wait_for_text("answer two");

    // /fork: pick the second prompt (the newest is preselected); the new file holds the
    // conversation before it and the prompt waits in the editor.
    tui.submit("/fork");
    tui.wait_for_text("Message 2 of 2");
    tui.send("\r");
    let screen = tui.wait_for_text("Forked into a new session");
    assert!(!screen.contains("answer two"), "{screen}");
    assert!(
        screen.contains("second prompt"),
        "the prompt is back in the editor: {screen}"
    );
    tui.submit(" again");
    tui.wait_for_text("answer three");
    assert_eq!(sandbox.session_files().len(), 2);

    tui.submit("/clone");
    tui.wait_for_text("Cloned the current branch");
    tui.submit("/new");
    let screen = tui.wait_for_text("Started a new session.");
    assert!(!screen.contains("answer three"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    // The clone is written at once; the new session only with its first reply.
    assert_eq!(sandbox.session_files().len(), 3);
}

#[test]
fn a_models_scope_chooses_the_start_model_and_ctrl_p_stays_inside_it() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&["--models", "mock-reasoner:high,mock-model"], 100, 30);
    tui.wait_for_text("Scoped models (ctrl+p cycles): mock-reasoner:high, mock-model");
    // A new session starts on the first scoped model at its pattern's level.
    tui.wait_for("the scoped start model", |s| {
        s.contains("mock-reasoner") && s.contains("high")
    });
    tui.send("\x10");
    tui.wait_for_text("Model: mock/mock-model (scoped)");
    tui.send("\x10");
    tui.wait_for_text("Model: mock/mock-reasoner (scoped) · thinking high");
    // The model picker opens on the scope; Tab shows all models.
    tui.submit("/model");
    tui.wait_for_text("Scope: all | scoped");
    tui.send("\x1b");
    tui.wait_for("the picker to close", |s| !s.contains("Select Model"));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn ctrl_v_attaches_an_image_from_the_clipboard() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("A one-pixel image.")]);
    // A stand-in for xclip: it offers a PNG once the file exists, plain text before.
    let bin = sandbox.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let png_path = sandbox.home.join("clip.png");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *TARGETS*) if [ -e '{0}' ]; then printf 'TARGETS\\nimage/png\\n'; else printf 'TARGETS\\nUTF8_STRING\\n'; fi ;;\n  *image/png*) cat '{0}' ;;\n  *) exit 1 ;;\nesac\n",
        png_path.display()
    );
    std::fs::write(bin.join("xclip"), script).unwrap();
    std::fs::set_permissions(bin.join("xclip"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut tui = sandbox.spawn_with_env(&[], &[("PATH", &path), ("DISPLAY", ":99")], 100, 30);
    tui.wait_for_text("mock-model");
    tui.send("\x16");
    tui.wait_for_text("The clipboard holds no image");
    use base64::Engine as _;
    // A real one-pixel PNG: prompt images are decoded to fit the model's limits.
    let png = base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
        .unwrap();
    std::fs::write(&png_path, &png).unwrap();
    tui.send("\x16");
    tui.wait_for_text("📎 clipboard-1.png");
    tui.submit("what is this?");
    tui.wait_for_text("A one-pixel image.");
    let body = sandbox.server().requests()[0].body.to_string();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    assert!(
        body.contains(&format!("data:image/png;base64,{encoded}")),
        "{body}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn scoped_models_picks_the_ctrl_p_models_and_saves_them() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/scoped-models");
    tui.wait_for_text("Scoped Models");
    // The first row (mock-model) joins the scope; ctrl+s saves it.
    tui.send("\r");
    tui.wait_for_text("1 of 2 enabled");
    tui.send("\x13");
    tui.wait_for_text("ctrl+p has 1 model to cycle through (saved to settings)");
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.agent.join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["enabledModels"],
        serde_json::json!(["mock/mock-model"])
    );
    tui.send("\x10");
    tui.wait_for_text("Only one model is in the scope");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn sigterm_kills_a_running_shell_command_before_exiting() {
    let sandbox = tui_common::sandbox(vec![]);
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("!echo started $$; sleep 100");
    let screen = tui.wait_for("the command's shell pid", |s| {
        s.lines().any(|l| l.trim_start().starts_with("started "))
    });
    let shell: u32 = screen
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("started "))
        .and_then(|pid| pid.trim().parse().ok())
        .unwrap();
    tui.signal("-TERM");
    assert_eq!(tui.wait_exit(), 143);
    let state = std::fs::read_to_string(format!("/proc/{shell}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next())
        })
        .flatten();
    assert!(
        state.is_none() || state == Some('Z'),
        "the shell {shell} survived in state {state:?}"
    );
}
