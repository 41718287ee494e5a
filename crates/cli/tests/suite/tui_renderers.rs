//! Extensions' display-only renderers in a real pseudo-terminal: entry renderers
//! (`registerEntryRenderer`) draw an extension's own session entries, live and on resume,
//! and markdown transformers (`registerMarkdownTransformer`) change how messages read
//! without changing what the session or the model keep.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;

const ENTRIES: &str = r#"
export default function (pi) {
  pi.registerEntryRenderer("bookmark", (entry, { expanded }) => ({
    render: () => [`bookmark: ${entry.data.label}${expanded ? " (expanded)" : ""}`],
    invalidate() {},
  }));
  // An entry type whose renderer draws nothing, and one with no renderer: neither shows.
  pi.registerEntryRenderer("quiet", () => undefined);
  pi.registerCommand("mark", {
    handler: async (args) => {
      pi.appendEntry("bookmark", { label: args });
      pi.appendEntry("quiet", { label: "never drawn" });
      pi.appendEntry("unrendered", { label: "never drawn either" });
    },
  });
}
"#;

#[test]
fn an_entry_renderer_draws_the_extensions_entries_live_and_after_a_resume() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("first answer")]);
    std::fs::write(sandbox.project.join("extension.ts"), ENTRIES).unwrap();
    let mut tui = sandbox.spawn(&["-e", "extension.ts"], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hello");
    tui.wait_for_text("first answer");
    tui.submit("/mark chapter one");
    let screen = tui.wait_for_text("bookmark: chapter one");
    assert!(!screen.contains("never drawn"), "{screen}");
    // The entry sits after the reply it followed.
    let answer = screen.find("first answer").unwrap();
    assert!(
        screen.find("bookmark: chapter one").unwrap() > answer,
        "{screen}"
    );
    // Expanding redraws it with `expanded` set.
    tui.send("\x0f");
    tui.wait_for_text("bookmark: chapter one (expanded)");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
    let stored: String = sandbox
        .session_files()
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert!(stored.contains(r#""customType":"bookmark""#), "{stored}");

    let mut tui = sandbox.spawn(&["-e", "extension.ts", "--continue"], 100, 30);
    let screen = tui.wait_for_text("bookmark: chapter one");
    assert!(!screen.contains("never drawn"), "{screen}");
    assert!(
        screen.find("bookmark: chapter one").unwrap() > screen.find("first answer").unwrap(),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const FIRST_TRANSFORMER: &str = r#"
export default function (pi) {
  pi.registerMarkdownTransformer((markdown, { messageType, isStreaming, availableWidth }) => {
    if (messageType === "user") return markdown.replace("hunter2", "[redacted]");
    if (typeof availableWidth !== "number" || availableWidth <= 0) return "no width given";
    return markdown.replace(/colour/g, "color") + (isStreaming ? "" : " [final]");
  });
}
"#;

// Loaded second: it sees what the first one made.
const SECOND_TRANSFORMER: &str = r#"
export default function (pi) {
  pi.registerMarkdownTransformer((markdown) => markdown.replace(/color/g, "hue"));
}
"#;

#[test]
fn markdown_transformers_chain_in_load_order_and_change_only_what_is_shown() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("the colour is blue")]);
    std::fs::write(sandbox.project.join("first.ts"), FIRST_TRANSFORMER).unwrap();
    std::fs::write(sandbox.project.join("second.ts"), SECOND_TRANSFORMER).unwrap();
    let args = ["-e", "first.ts", "-e", "second.ts"];
    let mut tui = sandbox.spawn(&args, 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("my password is hunter2");
    let screen = tui.wait_for_text("the hue is blue [final]");
    assert!(
        screen.contains("my password is [redacted]") && !screen.contains("hunter2"),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    // The session keeps what was said; a resumed session is shown transformed again.
    let stored: String = sandbox
        .session_files()
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert!(
        stored.contains("my password is hunter2") && stored.contains("the colour is blue"),
        "{stored}"
    );
    let mut tui = sandbox.spawn(
        &["-e", "first.ts", "-e", "second.ts", "--continue"],
        100,
        30,
    );
    let screen = tui.wait_for_text("the hue is blue [final]");
    assert!(screen.contains("my password is [redacted]"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
