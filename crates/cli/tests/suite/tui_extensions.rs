//! Extensions' `ctx.ui` in a real pseudo-terminal: dialogs take the editor's place and
//! answer the extension, notices land in the transcript, statuses in the footer, string
//! widgets above and below the editor, and the window title and editor text follow.

use crate::tui_common;

use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;

const DOWN: &str = "\x1b[B";
const ESC: &str = "\x1b";

const EXTENSION: &str = r#"
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setStatus("b-status", "second status");
    ctx.ui.setStatus("a-status", "first\tstatus");
    ctx.ui.setWidget("top", ["widget line one", "widget line two"]);
    ctx.ui.setWidget("bottom", ["below the editor"], { placement: "belowEditor" });
    ctx.ui.setTitle("extension title");
  });
  pi.registerCommand("ask", {
    handler: async (_args, ctx) => {
      const colour = await ctx.ui.select("Pick a colour", ["red", "green", "blue"]);
      const sure = await ctx.ui.confirm("Really?", `Use ${colour}?`);
      const name = await ctx.ui.input("Your name", "type it here");
      ctx.ui.notify(`answers: ${colour} ${sure} ${name} hasUI=${ctx.hasUI}`, "info");
    },
  });
  pi.registerCommand("escape", {
    handler: async (_args, ctx) => {
      const colour = await ctx.ui.select("Escape me", ["one", "two"]);
      ctx.ui.notify(`escaped: ${colour}`, "warning");
    },
  });
  pi.registerCommand("expire", {
    handler: async (_args, ctx) => {
      const colour = await ctx.ui.select("Gone soon", ["only"], { timeout: 200 });
      ctx.ui.notify(`expired: ${colour}`, "error");
    },
  });
  pi.registerCommand("edit", {
    handler: async (_args, ctx) => {
      const text = await ctx.ui.editor("Edit the note", "prefilled");
      ctx.ui.notify(`edited: ${text}`);
      ctx.ui.setWidget("top", undefined);
      ctx.ui.setStatus("b-status", undefined);
      ctx.ui.setEditorText("text from the extension");
    },
  });
}
"#;

/// A sandbox whose project has `source` as `extension.ts`, and the terminal running it.
fn with_extension(
    source: &str,
    replies: Vec<ScriptedReply>,
    cols: u16,
    rows: u16,
) -> (Sandbox, tui_common::Tui) {
    let sandbox = tui_common::sandbox(replies);
    std::fs::write(sandbox.project.join("extension.ts"), source).unwrap();
    let tui = sandbox.spawn(&["-e", "extension.ts"], cols, rows);
    (sandbox, tui)
}

fn sandbox_with_extension() -> Sandbox {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::write(sandbox.project.join("ui.ts"), EXTENSION).unwrap();
    sandbox
}

#[test]
fn dialogs_answer_the_extension_and_notices_statuses_widgets_and_title_show() {
    let sandbox = sandbox_with_extension();
    let mut tui = sandbox.spawn(&["-e", "ui.ts"], 100, 40);
    // What session_start set arrives request by request; wait for all of it.
    let screen = tui.wait_for("the statuses and both widgets", |s| {
        s.contains("first status second status")
            && s.contains("widget line two")
            && s.contains("below the editor")
    });
    let lines: Vec<&str> = screen.lines().collect();
    let row = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{screen}"))
    };
    // Widgets above the editor, the other below it, above the footer.
    let editor_top = lines.iter().position(|l| l.starts_with("────")).unwrap();
    assert!(row("widget line one") < editor_top, "{screen}");
    assert_eq!(
        row("widget line two"),
        row("widget line one") + 1,
        "{screen}"
    );
    assert!(row("below the editor") > editor_top, "{screen}");
    assert!(row("below the editor") < row("mock-model"), "{screen}");
    assert!(
        row("first status second status") > row("mock-model"),
        "{screen}"
    );
    tui.wait_for_output("\x1b]0;extension title\x07");

    tui.submit("/ask");
    tui.wait_for_text("Pick a colour");
    tui.send(DOWN);
    tui.wait_for("green selected", |s| s.contains("→ green"));
    tui.send("\r");
    tui.wait_for("the question with Yes selected", |s| {
        s.contains("Use green?") && s.contains("→ Yes")
    });
    tui.send("\r");
    tui.wait_for_text("Your name");
    tui.send("Ada");
    tui.wait_for_text("> Ada");
    tui.send("\r");
    tui.wait_for_text("answers: green true Ada hasUI=true");

    tui.submit("/escape");
    tui.wait_for_text("Escape me");
    tui.send(ESC);
    tui.wait_for_text("escaped: undefined");

    // A timed-out dialog leaves the screen by itself and the extension gets the default.
    tui.submit("/expire");
    tui.wait_for_text("expired: undefined");
    let screen = tui.screen();
    assert!(!screen.contains("Gone soon"), "{screen}");

    tui.submit("/edit");
    tui.wait_for_text("Edit the note");
    tui.send(" and more\r");
    tui.wait_for_text("edited: prefilled and more");
    tui.wait_for("the editor text, one widget and one status left", |s| {
        s.contains("text from the extension")
            && !s.contains("widget line one")
            && !s.contains("second status")
            && s.contains("first status")
    });
    tui.send("\x03");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const COMPONENTS: &str = r#"
import { matchesKey, Text } from "@mariozechner/pi-tui";
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setWidget("clock", (_tui, theme) => new Text(theme.fg("accent", "component widget"), 1, 0));
    ctx.ui.setFooter((_tui, _theme) => ({ render: (width) => [`custom footer at ${width} columns`], invalidate() {} }));
  });
  pi.registerCommand("counter", {
    handler: async (_args, ctx) => {
      const result = await ctx.ui.custom((tui, theme, _keys, done) => {
        let count = 0;
        return {
          render: (width) => [`counter ${count} of ${width}`, theme.bold("press + or escape")],
          handleInput(data) {
            if (data === "+") { count++; tui.requestRender(); }
            if (matchesKey(data, "escape")) done(count);
          },
          invalidate() {},
        };
      });
      ctx.ui.notify(`counted to ${result}`);
      ctx.ui.setFooter(undefined);
    },
  });
  pi.registerShortcut("ctrl+alt+x", { description: "say hello", handler: async (ctx) => ctx.ui.notify(`the shortcut ran with ${ctx.ui.getEditorText()}`) });
  pi.registerShortcut("ctrl+c", { description: "taken", handler: async (ctx) => ctx.ui.notify("must not run") });
  pi.registerCommand("broken", {
    handler: async (_args, ctx) => {
      await ctx.ui.custom((_tui, _theme, _keys, done) => ({
        render() { throw new Error("boom in render"); },
        handleInput() { done(undefined); },
      }));
      ctx.ui.notify("broken one closed");
    },
  });
}
"#;

#[test]
fn components_draw_take_keys_and_close_with_their_result() {
    let (_sandbox, mut tui) = with_extension(COMPONENTS, vec![], 90, 30);
    let screen = tui.wait_for("the footer and the widget", |s| {
        s.contains("custom footer at 90 columns") && s.contains("component widget")
    });
    assert!(screen.contains("component widget"), "{screen}");
    assert!(
        !screen.contains("mock-model"),
        "the built-in footer is replaced:\n{screen}"
    );

    tui.submit("/counter");
    let screen = tui.wait_for_text("counter 0 of 90");
    // A command is not a turn: no working row while it shows its component.
    assert!(!screen.contains("Working…"), "{screen}");
    tui.send("+");
    tui.wait_for_text("counter 1 of 90");
    tui.send("+");
    tui.wait_for_text("counter 2 of 90");
    tui.resize(70, 30);
    tui.wait_for_text("counter 2 of 70");
    tui.send(ESC);
    tui.wait_for("the result and no component", |s| {
        s.contains("counted to 2") && !s.contains("press + or escape")
    });
    // The footer came back.
    tui.wait_for_text("mock-model");

    // A shortcut runs its handler; one on a reserved key is skipped with a warning.
    let screen = tui.screen();
    assert!(
        screen.contains("Extension shortcut 'ctrl+c' from"),
        "{screen}"
    );
    tui.send("a draft");
    tui.wait_for_text("a draft");
    tui.send("\x1b\x18");
    tui.wait_for_text("the shortcut ran with a draft");
    tui.send("\x03");

    // A component that throws shows as failed; keys still reach it.
    tui.submit("/broken");
    tui.wait_for_text("[extension component failed: boom in render]");
    tui.send("x");
    tui.wait_for_text("broken one closed");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const RENDERERS: &str = r#"
import { Text } from "@mariozechner/pi-tui";
export default function (pi) {
  pi.registerTool({
    name: "weather", label: "Weather", description: "Tells the weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    async execute(_id, params) {
      return { content: [{ type: "text", text: `sunny in ${params.city}` }], details: { degrees: 21 } };
    },
    renderCall(args, theme) { return new Text(theme.bold(`☀ forecast for ${args.city}`), 0, 0); },
    renderResult(result, { expanded }, _theme, context) {
      context.state.renders = (context.state.renders || 0) + 1;
      return new Text(`${result.details.degrees} degrees${expanded ? " (expanded)" : ""}`, 0, 0);
    },
  });
  // A resolver for a built-in tool: only its call line changes.
  pi.registerToolRenderer((toolName, next) => {
    if (toolName !== "read") return next();
    return { renderCall: (args) => new Text(`reading ${args.path} my way`, 0, 0) };
  });
}
"#;

#[test]
fn tool_renderers_draw_calls_and_results_in_the_transcript() {
    let (_sandbox, mut tui) = with_extension(
        RENDERERS,
        vec![
            ScriptedReply::tool_call("call-1", "weather", r#"{"city":"Lyon"}"#),
            ScriptedReply::tool_call("call-2", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("all done"),
        ],
        90,
        40,
    );
    tui.wait_for_text("mock-model");
    tui.submit("what is the weather");
    let screen = tui.wait_for("both tools drawn and the answer", |s| {
        s.contains("all done") && s.contains("reading notes.txt my way") && s.contains("21 degrees")
    });
    assert!(screen.contains("☀ forecast for Lyon"), "{screen}");
    assert!(
        !screen.contains("sunny in Lyon"),
        "the result renderer replaces the text:\n{screen}"
    );
    // The read card keeps our own result lines under the extension's call line.
    assert!(screen.contains("gamma"), "{screen}");
    // Expanding tool output draws the result again, expanded.
    tui.send("\x0f");
    tui.wait_for_text("21 degrees (expanded)");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const WORKING: &str = r#"
let release;
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setWorkingMessage("Brewing the answer");
    ctx.ui.setWorkingIndicator({ frames: ["●"] });
  });
  pi.registerTool({
    name: "wait", label: "Wait", description: "Waits to be released", parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, _onUpdate, ctx) { ctx.ui.notify("the tool waits"); await new Promise((resolve) => { release = resolve; }); return { content: [{ type: "text", text: "released" }], details: undefined }; },
  });
  pi.registerShortcut("ctrl+alt+r", { description: "release the tool", handler: async () => release?.() });
}
"#;

#[test]
fn the_working_row_takes_an_extension_message_and_indicator() {
    let (_sandbox, mut tui) = with_extension(
        WORKING,
        vec![
            ScriptedReply::tool_call("call-1", "wait", "{}"),
            ScriptedReply::text("brewed"),
        ],
        90,
        30,
    );
    tui.wait_for_text("mock-model");
    tui.submit("go");
    // The tool has started (it says so) before the shortcut releases it.
    let screen = tui.wait_for("the custom working row and the waiting tool", |s| {
        s.contains("● Brewing the answer") && s.contains("the tool waits")
    });
    assert!(!screen.contains("Working…"), "{screen}");
    tui.send("\x1b\x12");
    tui.wait_for_text("brewed");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// A project with its own extension (a protected resource: its trust is undecided) and a
/// user-level extension that answers `project_trust` with `answer`.
fn project_behind_a_trust_gate(answer: &str) -> Sandbox {
    let sandbox = tui_common::sandbox(vec![]);
    let project = sandbox.project.join(".knightcode/extensions");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("project.ts"),
        r#"export default function (pi) {
  pi.on("session_start", (_event, ctx) => ctx.ui.setStatus("project", "project extension loaded"));
}
"#,
    )
    .unwrap();
    let user = sandbox.agent.join("extensions");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("gate.ts"),
        format!(
            r#"export default function (pi) {{
  pi.on("project_trust", () => {answer});
  pi.on("session_start", (_event, ctx) => ctx.ui.setStatus("gate", "gate loaded"));
}}
"#
        ),
    )
    .unwrap();
    sandbox
}

#[test]
fn a_user_extension_decides_trust_before_the_prompt_would_ask() {
    let sandbox = project_behind_a_trust_gate(r#"({ trusted: "yes" })"#);
    let mut tui = sandbox.spawn(&[], 100, 30);
    let screen = tui.wait_for("both extensions running", |s| {
        s.contains("project extension loaded") && s.contains("gate loaded")
    });
    assert!(!screen.contains("Do not trust"), "{screen}");
    // Nothing was remembered: the extension did not ask for it.
    assert!(!sandbox.agent.join("trust.json").exists());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn an_undecided_extension_leaves_the_question_to_the_prompt() {
    let sandbox = project_behind_a_trust_gate(r#"({ trusted: "undecided" })"#);
    let mut tui = sandbox.spawn(&[], 100, 30);
    let screen = tui.wait_for_text("Do not trust");
    assert!(screen.contains(".knightcode/extensions"), "{screen}");
    // Trust: the project's extension loads beside the user's, which loaded once.
    tui.send("\r");
    tui.wait_for("both extensions running", |s| {
        s.contains("project extension loaded") && s.contains("gate loaded")
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn an_extension_that_distrusts_keeps_the_project_out_without_asking() {
    let sandbox = project_behind_a_trust_gate(r#"({ trusted: "no", remember: true })"#);
    let mut tui = sandbox.spawn(&[], 100, 30);
    let screen = tui.wait_for_text("gate loaded");
    assert!(!screen.contains("Do not trust"), "{screen}");
    assert!(!screen.contains("project extension loaded"), "{screen}");
    let saved = std::fs::read_to_string(sandbox.agent.join("trust.json")).unwrap();
    assert!(saved.contains("false"), "{saved}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const PROMPT_EVENTS: &str = r#"
export default function (pi) {
  const seen = [];
  pi.on("ui_prompt_start", (e) => { seen.push(`start ${e.kind} ${e.title} ${e.reason}`); });
  pi.on("ui_prompt_end", (e) => { seen.push(`end ${e.kind} ${e.title}`); });
  pi.registerCommand("nested", {
    handler: async (_args, ctx) => {
      // A confirm opened while a select waits is nested: only the outer one is announced.
      const outer = ctx.ui.select("Outer pick", ["a", "b"]);
      await ctx.ui.confirm("Inner check", "sure?");
      await outer;
      await new Promise((r) => setTimeout(r, 0));
      ctx.ui.notify(`prompts: ${seen.join(" | ")}`);
    },
  });
}
"#;

#[test]
fn blocking_prompts_announce_the_outermost_open_and_close() {
    let (_sandbox, mut tui) = with_extension(PROMPT_EVENTS, vec![], 100, 30);
    tui.wait_for_text("mock-model");
    tui.submit("/nested");
    tui.wait_for_text("Outer pick");
    tui.send("\r");
    tui.wait_for_text("Inner check");
    tui.send("\r");
    tui.wait_for_text("prompts: start select Outer pick ui_prompt | end select Outer pick");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const RAW_INPUT: &str = r#"
let off;
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    off = ctx.ui.onTerminalInput((data) => {
      if (data === "x") return { consume: true };
      if (data === "a") return { data: "b" };
      return undefined;
    });
    // Shown after the listener is on: the terminal hears of both the same way, in order.
    ctx.ui.setWidget("hook", () => ({ render: () => ["listening"], invalidate() {} }));
  });
  pi.registerCommand("unhook", { handler: async (_args, ctx) => { off?.(); ctx.ui.notify("unhooked"); } });
}
"#;

#[test]
fn terminal_input_listeners_consume_and_rewrite_keys_until_they_unsubscribe() {
    let (_sandbox, mut tui) = with_extension(RAW_INPUT, vec![], 90, 30);
    tui.wait_for_text("listening");
    // "x" is swallowed and "a" arrives as "b"; other keys pass as they are.
    tui.send("xaqxa");
    tui.wait_for_text("bqb");
    // Clear the editor (ctrl+c), then turn the listener off: keys are the app's again.
    tui.send("\x03");
    tui.wait_for("the editor cleared", |s| !s.contains("bqb"));
    tui.submit("/unhook");
    tui.wait_for_text("unhooked");
    tui.send("xa");
    tui.wait_for_text("xa");
    tui.send("\x04");
    tui.send("\x03");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const STUCK: &str = r#"
export default function (pi) {
  pi.registerCommand("stuck", {
    handler: async (_args, ctx) => {
      const result = await ctx.ui.custom((tui, _theme, _keys, _done) => {
        let spin = false;
        return {
          render() { if (spin) for (;;) {} return ["press s to hang render, h to hang keys"]; },
          handleInput(data) {
            if (data === "s") { spin = true; tui.requestRender(); }
            if (data === "h") for (;;) {}
          },
          invalidate() {},
        };
      });
      ctx.ui.notify(`the stuck one closed with ${result}`);
    },
  });
  pi.registerCommand("alive", {
    handler: async (_args, ctx) => ctx.ui.notify("the extension host still answers"),
  });
}
"#;

#[test]
fn a_component_stuck_in_render_or_a_key_is_stopped_and_closes_with_escape() {
    let (_sandbox, mut tui) = with_extension(STUCK, vec![], 100, 30);
    tui.wait_for_text("mock-model");
    for (key, what) in [("s", "render"), ("h", "handleInput")] {
        tui.submit("/stuck");
        tui.wait_for_text("press s to hang render");
        tui.send(key);
        let failed =
            format!("[extension component failed: its {what}() was stopped after running for 1 s]");
        tui.wait_for(&failed, |s| {
            s.contains(&failed) && s.contains("Press escape to close it.")
        });
        // The terminal never waited: typing meanwhile goes on (into the component, which
        // no longer takes keys), and escape closes it.
        tui.send(ESC);
        tui.wait_for("the component gone", |s| {
            s.contains("the stuck one closed with undefined") && !s.contains(&failed)
        });
        // The stuck code was reported once, and the JS thread answers the next command.
        tui.submit("/alive");
        let screen = tui.wait_for_text("the extension host still answers");
        assert!(
            screen.contains(&format!("{what}() was stopped")),
            "the error is reported in the transcript:\n{screen}"
        );
    }
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const FOOTER_DATA: &str = r#"
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setFooter((tui, _theme, footerData) => {
      const off = footerData.onBranchChange(() => { ctx.ui.notify(`branch now ${footerData.getGitBranch()}`); tui.requestRender(); });
      return {
        dispose: off,
        invalidate() {},
        render: () => {
          const statuses = [...footerData.getExtensionStatuses()].map(([k, v]) => `${k}=${v}`).join(",");
          return [`branch ${footerData.getGitBranch()} statuses [${statuses}] providers ${footerData.getAvailableProviderCount()}`];
        },
      };
    });
  });
  pi.registerCommand("st", {
    handler: async (args, ctx) => ctx.ui.setStatus("job", args || undefined),
  });
}
"#;

#[test]
fn a_custom_footer_reads_the_branch_statuses_and_providers_and_hears_of_branch_changes() {
    let sandbox = tui_common::sandbox(vec![]);
    let git = sandbox.project.join(".git");
    std::fs::create_dir_all(&git).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/feature-x\n").unwrap();
    std::fs::write(sandbox.project.join("extension.ts"), FOOTER_DATA).unwrap();
    let mut tui = sandbox.spawn(&["-e", "extension.ts"], 100, 30);
    tui.wait_for_text("branch feature-x statuses [] providers 1");
    tui.submit("/st building");
    tui.wait_for_text("branch feature-x statuses [job=building] providers 1");
    tui.submit("/st");
    tui.wait_for_text("branch feature-x statuses [] providers 1");
    // A shell command switches branches (here: rewrites HEAD); the footer hears of it once
    // the command is done. A detached HEAD reads "detached", as in the reference.
    tui.submit("!printf 'ref: refs/heads/main\\n' > .git/HEAD");
    tui.wait_for("the new branch", |s| {
        s.contains("branch now main") && s.contains("branch main statuses []")
    });
    tui.submit("!printf '0123456789abcdef0123456789abcdef01234567\\n' > .git/HEAD");
    tui.wait_for_text("branch detached statuses []");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

const STUCK_RENDERERS: &str = r#"
import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({
    name: "spin",
    label: "Spin",
    description: "A tool whose card never finishes drawing",
    parameters: Type.Object({}),
    async execute() { return { content: [{ type: "text", text: "spun fine" }], details: {} }; },
    renderCall() { for (;;) {} },
  });
  pi.registerMessageRenderer("loop", () => ({ render() { for (;;) {} }, invalidate() {} }));
  pi.registerCommand("loop", {
    handler: async () => pi.sendMessage({ customType: "loop", content: "looping note", display: true }),
  });
  pi.registerCommand("alive", {
    handler: async (_args, ctx) => ctx.ui.notify("the extension host still answers"),
  });
}
"#;

#[test]
fn a_stuck_tool_or_message_renderer_is_stopped_and_drawn_without_it() {
    let (_sandbox, mut tui) = with_extension(
        STUCK_RENDERERS,
        vec![
            ScriptedReply::tool_call("call-1", "spin", "{}"),
            ScriptedReply::text("after the spin"),
        ],
        100,
        30,
    );
    tui.wait_for_text("mock-model");
    tui.submit("go");
    // The card falls back to the built-in drawing; the run is not held up by it.
    let screen = tui.wait_for_text("after the spin");
    assert!(screen.contains("spun fine"), "{screen}");
    // Reported once, in the transcript.
    tui.wait_for_text("The renderer of tool \"spin\": its renderCall() was stopped");
    tui.submit("/loop");
    tui.wait_for_text(
        "[extension renderer failed: its render() was stopped after running for 1 s]",
    );
    tui.submit("/alive");
    tui.wait_for_text("the extension host still answers");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
