//! Exported pages rendered by headless Chromium: the DOM after the page's scripts ran must
//! hold the conversation, every entry type, and each branch of a forked session.

use crate::common;

use common::dump_dom;
use common::every_entry_type;
use common::write_page;

fn assert_all(dom: &str, wanted: &[&str]) {
    let missing: Vec<&&str> = wanted.iter().filter(|w| !dom.contains(**w)).collect();
    assert!(
        missing.is_empty(),
        "missing from the rendered page: {missing:?}"
    );
}

#[test]
fn every_entry_type_renders_on_the_current_branch() {
    let (session, _first, second) = every_entry_type();
    let tools = common::tools();
    let dir = tempfile::tempdir().unwrap();
    let prompt = "SYSTEM-PROMPT-TEXT: be careful";
    let page = write_page(
        dir.path(),
        "all.html",
        &session.data(Some(&second), Some(prompt), Some(&tools)),
    );
    let dom = dump_dom(&page, None);
    assert_all(
        &dom,
        &[
            // header, system prompt and tools
            "<title>Fix the notes - KnightCode session</title>",
            "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "/home/user/project",
            "SYSTEM-PROMPT-TEXT: be careful",
            "Tools (2)",
            "Read a file from disk",
            // entry types, each with its own element
            "entry entry-model_change",
            "Model: <b>mock/mock-model</b>",
            "Thinking level: <b>high</b>",
            "entry entry-message role-system",
            "You are KnightCode, a careful coding agent.",
            "entry entry-message role-user",
            "Please fix notes.txt and look at this screenshot",
            "<img class=\"attachment\" alt=\"attached image\" src=\"data:image/png;base64,iVBOR",
            "entry entry-message role-assistant",
            "The user wants notes.txt changed; read it first.",
            "<h2>Plan</h2>",
            "<strong>read</strong>",
            "<span class=\"tok-keyword\">fn</span>",
            "<span class=\"tok-number\">42</span>",
            "<li>first step</li>",
            // tools, with results folded into their calls
            "tool tool-read ok",
            "alpha\nbeta\ngamma",
            "tool tool-edit ok",
            "<span class=\"del\">-2 beta</span>",
            "<span class=\"add\">+2 BETA</span>",
            "tool tool-bash failed",
            "$ cargo test --quiet",
            "cannot find value",
            "tool tool-write ok",
            "src/new.rs",
            "created",
            "tool tool-weather ok",
            "Sunny, 21°C in Lisbon",
            "user shell <span class=\"arg\">$ ls -la</span>",
            "[reminder]",
            "Remember the changelog",
            "entry entry-custom_message",
            "Plan mode is on",
            "entry entry-custom",
            "todo-state",
            "entry entry-usage",
            "entry entry-compaction",
            "48k tokens summarised",
            "Earlier the user asked to fix notes.txt",
            "Session name: <b>Fix the notes</b>",
            "entry entry-context_edit",
            "[read output elided]",
            "Entry of type <b>future_thing</b>",
            "Error: upstream overloaded (529)",
            "Which branch is this?",
            "entry entry-branch_summary",
            "The first branch answered the question one way.",
            "This is the SECOND-BRANCH answer.",
            "Branch 2 of 2",
        ],
    );
    // A tool result shows inside its call's card, not a second time on its own.
    assert_eq!(
        dom.matches("Sunny, 21°C in Lisbon").count(),
        2,
        "card + sidebar row"
    );
    // The other branch is in the tree, but not in the conversation.
    assert!(dom.contains("assistant: This is the FIRST-BRANCH answer."));
    assert!(!dom.contains("<p>This is the FIRST-BRANCH answer.</p>"));
}

#[test]
fn the_other_branch_renders_when_selected() {
    let (session, first, second) = every_entry_type();
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(
        dir.path(),
        "fork.html",
        &session.data(Some(&second), None, None),
    );
    let dom = dump_dom(&page, Some(&format!("entry={first}")));
    assert_all(
        &dom,
        &[
            "<p>This is the FIRST-BRANCH answer.</p>",
            "Label <b>good answer</b> on assistant: This is the FIRST-BRANCH answer.",
            "Branch 1 of 2",
            "[good answer]",
            "Which branch is this?",
        ],
    );
    assert!(!dom.contains("<p>This is the SECOND-BRANCH answer.</p>"));
    // No system prompt or tools were given: the page says nothing about them.
    assert!(!dom.contains("Tools ("));
}

#[test]
fn session_text_cannot_break_out_of_the_page() {
    let mut session = common::Builder::new();
    let user = session.user(
        None,
        "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)> {{JS}}",
    );
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(
        dir.path(),
        "hostile.html",
        &session.data(Some(&user), None, None),
    );
    let dom = dump_dom(&page, None);
    assert!(dom.contains("KnightCode session 0193a1b2"), "title kept");
    assert!(dom.contains("&lt;/script&gt;&lt;script&gt;document.title='pwned'"));
    assert!(!dom.contains("<img src=\"x\""));
    assert!(dom.contains("{{JS}}"));
}

#[test]
fn pages_of_the_reference_agents_sessions_render() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi");
    let dir = tempfile::tempdir().unwrap();
    for (name, wanted) in [
        (
            "tools/session.jsonl",
            "Inspect notes.txt and uppercase beta",
        ),
        ("rpc-tree/session.jsonl", "entry entry-compaction"),
    ] {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        let mut lines = text.lines();
        let header = serde_json::from_str(lines.next().unwrap()).unwrap();
        let entries: Vec<_> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
        let data = knightcode_export::SessionData {
            header: &header,
            entries: &entries,
            leaf_id: entries
                .last()
                .map(|e: &knightcode_protocol::SessionEntry| e.id()),
            system_prompt: None,
            tools: None,
            rendered_tools: None,
        };
        let page = write_page(dir.path(), "fixture.html", &data);
        let dom = dump_dom(&page, None);
        assert!(dom.contains(wanted), "{name}: {wanted}");
        assert!(dom.contains("class=\"tree-row"), "{name}: tree drawn");
    }
}

#[test]
fn a_long_session_draws_only_a_window() {
    let mut session = common::Builder::new();
    let mut parent: Option<String> = None;
    for i in 0..3000 {
        let id = if i % 2 == 0 {
            session.user(parent.as_deref(), &format!("question number {i}"))
        } else {
            session.assistant(
                parent.as_deref(),
                serde_json::json!([{"type": "text", "text": format!("answer number {i}")}]),
            )
        };
        parent = Some(id);
    }
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(
        dir.path(),
        "long.html",
        &session.data(parent.as_deref(), None, None),
    );
    let dom = dump_dom(&page, None);
    assert!(dom.contains("question number 0"));
    let drawn = dom.matches("data-entry-id=").count();
    assert!(drawn > 0 && drawn <= 200, "{drawn} entries drawn at once");
    let rows = dom.matches("class=\"tree-row").count();
    assert!(rows > 0 && rows <= 200, "{rows} tree rows drawn at once");
    assert!(dom.contains("3000 entries"));
}

/// Screenshots of both branches; set `KNIGHTCODE_EXPORT_SCREENSHOTS` to a folder to keep
/// them for a look.
#[test]
fn screenshots_of_a_forked_session() {
    let (session, first, second) = every_entry_type();
    let tools = common::tools();
    let keep = std::env::var_os("KNIGHTCODE_EXPORT_SCREENSHOTS").map(std::path::PathBuf::from);
    let dir = tempfile::tempdir().unwrap();
    let out = keep.unwrap_or_else(|| dir.path().to_owned());
    std::fs::create_dir_all(&out).unwrap();
    let page = write_page(
        &out,
        "session.html",
        &session.data(Some(&second), Some("You are KnightCode."), Some(&tools)),
    );
    for (name, fragment) in [
        ("current.png", None),
        ("first-branch.png", Some(format!("entry={first}"))),
    ] {
        let png = out.join(name);
        common::screenshot(&page, &png, 1280, 1800, fragment.as_deref());
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{name} is a PNG");
        // A blank page compresses to a few kilobytes; a drawn conversation does not.
        assert!(
            bytes.len() > 30_000,
            "{name} looks blank ({} bytes)",
            bytes.len()
        );
    }
}

#[test]
fn tool_calls_drawn_by_extensions_show_their_lines() {
    let mut session = common::Builder::new();
    let user = session.user(None, "What is the weather?");
    let call = session.assistant(
        Some(&user),
        serde_json::json!([{"type": "toolCall", "id": "call-w", "name": "weather",
            "arguments": {"city": "Paris"}}]),
    );
    let result = session.tool_result(
        &call,
        "call-w",
        "weather",
        "raw result text",
        serde_json::json!({}),
        false,
    );
    let mut drawn = std::collections::BTreeMap::new();
    drawn.insert(
        "call-w".to_owned(),
        knightcode_export::RenderedTool {
            call_html: Some(knightcode_export::ansi_lines_to_html(&[
                "\x1b[1mweather\x1b[22m Paris".to_owned(),
            ])),
            result_html_collapsed: Some(knightcode_export::ansi_lines_to_html(&[
                "\x1b[31msunny\x1b[39m <22°C>".to_owned(),
            ])),
            result_html_expanded: Some(knightcode_export::ansi_lines_to_html(&[
                "sunny, all day".to_owned()
            ])),
        },
    );
    let mut data = session.data(Some(&result), None, None);
    data.rendered_tools = Some(&drawn);
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), "drawn.html", &data);
    let dom = dump_dom(&page, None);
    assert_all(
        &dom,
        &[
            "<div class=\"tool-title ansi\"><div class=\"ansi-line\"><span style=\"font-weight:bold;\">weather</span> Paris</div></div>",
            "<span style=\"color:#cd0000;\">sunny</span> &lt;22°C&gt;",
            "<summary>expanded</summary>",
            "sunny, all day",
        ],
    );
    // The page's own drawing of the result gives way to the extension's (the tree in the
    // sidebar still names the result by its text).
    assert!(
        !dom.contains("<div class=\"tool-output\">raw result text"),
        "{dom}"
    );
}
