//! Extensions in RPC mode, at the byte level: `ctx.ui` over the extension-UI subprotocol
//! (dialogs answered, timed out and aborted; the fire-and-forget records as written), and
//! the command context's session control (`newSession`, `fork`, `switchSession`,
//! `navigateTree`, `reload`, `waitForIdle`) with the session events around it and the stale
//! `ctx` afterwards.

use crate::rpc_common;

use std::path::Path;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use rpc_common::Raw;
use rpc_common::Sandbox;
use rpc_common::read_jsonl;
use rpc_common::watchdog;
use serde_json::Value;
use serde_json::json;

/// `knightcode --mode rpc -e ext.ts` with raw pipes, `ext.ts` holding `extension`.
fn with_extension(sandbox: &Sandbox, extension: &str) -> Raw {
    std::fs::write(sandbox.project.join("ext.ts"), extension).unwrap();
    Raw::spawn(sandbox, &["-e", "ext.ts"])
}

async fn server(replies: Vec<ScriptedReply>) -> MockServer {
    MockServer::start(WireFormat::OpenAiCompletions, replies)
        .await
        .unwrap()
}

/// A request line with its (random) id replaced, to compare shapes byte for byte.
fn shape(line: &str) -> String {
    let value: Value = serde_json::from_str(line).unwrap();
    let id = value["id"].as_str().unwrap();
    uuid_like(id);
    line.replacen(id, "<id>", 1)
}

fn uuid_like(id: &str) {
    assert_eq!(id.len(), 36, "{id}");
    assert_eq!(id.matches('-').count(), 4, "{id}");
}

const DIALOGS: &str = r#"
export default function (pi) {
  pi.registerCommand("ask", { handler: async (_args, ctx) => {
    ctx.ui.notify("starting");
    const pick = await ctx.ui.select("Pick one", ["a", "b"]);
    const ok = await ctx.ui.confirm("Sure?", "Really sure", { timeout: 60000 });
    const name = await ctx.ui.input("Name", "your name");
    const text = await ctx.ui.editor("Edit", "draft");
    ctx.ui.notify(`pick=${pick} ok=${ok} name=${name} text=${text} hasUI=${ctx.hasUI} mode=${ctx.mode}`, "warning");
    ctx.ui.setStatus("k", "busy");
    ctx.ui.setStatus("k", undefined);
    ctx.ui.setWidget("w", ["one", "two"], { placement: "belowEditor" });
    ctx.ui.setWidget("w", () => ({ render: () => [] }));
    ctx.ui.setWidget("w", undefined);
    ctx.ui.setTitle("Title");
    ctx.ui.setEditorText("typed");
    ctx.ui.pasteToEditor("pasted");
    ctx.ui.setWorkingMessage("ignored");
    ctx.ui.setFooter(() => undefined);
    const degraded = [ctx.ui.getEditorText(), ctx.ui.getToolsExpanded(), JSON.stringify(ctx.ui.getAllThemes()),
      ctx.ui.getTheme("dark"), JSON.stringify(ctx.ui.setTheme("light")), await ctx.ui.custom(() => undefined)];
    ctx.ui.notify(degraded.map(String).join("|"), "error");
  }});
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_are_answered_and_fire_and_forget_requests_are_written_as_the_reference_does() {
    watchdog(async {
        let server = server(vec![]).await;
        let sandbox = Sandbox::new(&server);
        let mut raw = with_extension(&sandbox, DIALOGS);
        raw.send(json!({ "id": "1", "type": "prompt", "message": "/ask" }))
            .await;
        let mut shapes = Vec::new();
        loop {
            let text = raw.text().await;
            let line: Value = serde_json::from_str(&text).unwrap();
            if line["type"] == "response" {
                assert_eq!(line["id"], "1", "{line}");
                assert_eq!(line["success"], true, "{line}");
                break;
            }
            if line["type"] != "extension_ui_request" {
                continue;
            }
            shapes.push(shape(&text));
            let answer = match line["method"].as_str().unwrap() {
                "select" => Some(json!({ "value": "b" })),
                "confirm" => Some(json!({ "confirmed": true })),
                "input" => Some(json!({ "cancelled": true })),
                "editor" => Some(json!({ "value": "draft, edited" })),
                _ => None,
            };
            if let Some(answer) = answer {
                raw.reply(&line["id"], answer).await;
            }
        }
        let r = r#"{"type":"extension_ui_request","id":"<id>","#;
        let expected = [
            format!(r#"{r}"method":"notify","message":"starting"}}"#),
            format!(r#"{r}"method":"select","title":"Pick one","options":["a","b"]}}"#),
            format!(
                r#"{r}"method":"confirm","title":"Sure?","message":"Really sure","timeout":60000}}"#
            ),
            format!(r#"{r}"method":"input","title":"Name","placeholder":"your name"}}"#),
            format!(r#"{r}"method":"editor","title":"Edit","prefill":"draft"}}"#),
            format!(
                r#"{r}"method":"notify","message":"pick=b ok=true name=undefined text=draft, edited hasUI=true mode=rpc","notifyType":"warning"}}"#
            ),
            format!(r#"{r}"method":"setStatus","statusKey":"k","statusText":"busy"}}"#),
            format!(r#"{r}"method":"setStatus","statusKey":"k"}}"#),
            format!(
                r#"{r}"method":"setWidget","widgetKey":"w","widgetLines":["one","two"],"widgetPlacement":"belowEditor"}}"#
            ),
            format!(r#"{r}"method":"setWidget","widgetKey":"w"}}"#),
            format!(r#"{r}"method":"setTitle","title":"Title"}}"#),
            format!(r#"{r}"method":"set_editor_text","text":"typed"}}"#),
            format!(r#"{r}"method":"set_editor_text","text":"pasted"}}"#),
            format!(
                r#"{r}"method":"notify","message":"|false|[]|undefined|{{\"success\":false,\"error\":\"Theme switching not supported in RPC mode\"}}|undefined","notifyType":"error"}}"#
            ),
        ];
        assert_eq!(shapes, expected);
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}

const TIMEOUT_AND_ABORT: &str = r#"
export default function (pi) {
  pi.registerCommand("wait", { handler: async (_args, ctx) => {
    const late = await ctx.ui.select("Nobody answers", ["x"], { timeout: 1 });
    const controller = new AbortController();
    const first = ctx.ui.confirm("Aborted", "m", { signal: controller.signal });
    const second = await ctx.ui.input("Second");
    if (second === "abort the first") controller.abort();
    const aborted = await first;
    const already = await ctx.ui.select("Never shown", ["y"], { signal: controller.signal });
    ctx.ui.notify(`late=${late} aborted=${aborted} already=${already}`);
  }});
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_resolves_to_its_default_after_its_timeout_or_its_signal_aborting() {
    watchdog(async {
        let server = server(vec![]).await;
        let sandbox = Sandbox::new(&server);
        let mut raw = with_extension(&sandbox, TIMEOUT_AND_ABORT);
        raw.send(json!({ "id": "1", "type": "prompt", "message": "/wait" }))
            .await;
        let timed = raw.ui().await;
        assert_eq!(timed["method"], "select");
        assert_eq!(timed["timeout"], 1);
        // Unanswered: the two dialogs after it open once the timeout has passed.
        let mut open = [raw.ui().await, raw.ui().await];
        open.sort_by_key(|r| r["method"].as_str().unwrap().to_owned());
        let (confirm, input) = (open[0].clone(), open[1].clone());
        assert_eq!(confirm["title"], "Aborted");
        assert_eq!(input["title"], "Second");
        raw.reply(&input["id"], json!({ "value": "abort the first" }))
            .await;
        let notice = raw.ui().await;
        assert_eq!(
            notice["message"],
            "late=undefined aborted=false already=undefined"
        );
        // Replies to dialogs that are gone are ignored, and nothing answers them.
        raw.reply(&timed["id"], json!({ "value": "x" })).await;
        raw.reply(&confirm["id"], json!({ "confirmed": true }))
            .await;
        let done = raw.response("1").await;
        assert_eq!(done["success"], true, "{done}");
        raw.send(json!({ "id": "2", "type": "get_state" })).await;
        let state = raw.response("2").await;
        assert_eq!(state["success"], true, "{state}");
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}

/// Logs every session event and command step to `events.log` in the project.
const SESSIONS: &str = r#"
import { appendFileSync } from "node:fs";
import { join } from "node:path";
let cancelNext = false;
let factories = 0;
export default function (pi) {
  factories++;
  const log = (line) => appendFileSync(join(process.cwd(), "events.log"), line + "\n");
  const name = (file) => (file ? file.split("/").pop().replace(/^.*_/, "") : "-");
  log(`factory ${factories}`);
  pi.on("session_start", (e) => log(`session_start ${e.reason} previous=${name(e.previousSessionFile)}`));
  pi.on("session_shutdown", (e) => log(`session_shutdown ${e.reason} target=${name(e.targetSessionFile)}`));
  pi.on("session_before_switch", (e) => { log(`session_before_switch ${e.reason} target=${name(e.targetSessionFile)}`); if (cancelNext) { cancelNext = false; return { cancel: true }; } });
  pi.on("session_before_fork", (e) => { log(`session_before_fork ${e.position} ${typeof e.entryId}`); });
  pi.on("session_tree", (e) => log(`session_tree moved=${e.newLeafId !== e.oldLeafId}`));
  pi.on("session_before_tree", (e) => { const p = e.preparation; log(`session_before_tree summary=${p.userWantsSummary} ${typeof p.targetId} ${typeof p.oldLeafId}`); if (cancelNext) { cancelNext = false; return { cancel: true }; } });
  const firstUser = (ctx) => ctx.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
  const stale = (ctx) => { try { ctx.cwd; return "usable"; } catch (e) { return e.message.startsWith("This extension ctx is stale after session replacement or reload.") ? "stale" : e.message; } };
  pi.registerCommand("new", { handler: async (args, ctx) => {
    cancelNext = args === "cancel";
    const before = ctx.sessionManager.getSessionFile();
    const result = await ctx.newSession({ parentSession: before, withSession: async (next) => log(`withSession ${stale(next)} parent=${name(next.sessionManager.getHeader().parentSession)}`) });
    log(`newSession ${JSON.stringify(result)} old ctx ${stale(ctx)}`);
  }});
  pi.registerCommand("fork", { handler: async (args, ctx) => {
    const result = await ctx.fork(firstUser(ctx).id, { position: args || "before" });
    log(`fork ${JSON.stringify(result)} old ctx ${stale(ctx)}`);
  }});
  pi.registerCommand("switch", { handler: async (args, ctx) => {
    const result = await ctx.switchSession(args, { withSession: async (next) => log(`switched to ${name(next.sessionManager.getSessionFile())}`) });
    log(`switchSession ${JSON.stringify(result)}`);
  }});
  pi.registerCommand("tree", { handler: async (args, ctx) => {
    cancelNext = args === "cancel";
    const result = await ctx.navigateTree(firstUser(ctx).id);
    // Before the prompt's turn: the parent of the turn marker the prompt follows.
    const marker = ctx.sessionManager.getEntry(firstUser(ctx).parentId);
    const before = marker?.customType === "knightcode.turn" ? marker.parentId : firstUser(ctx).parentId;
    log(`navigateTree ${JSON.stringify(result)} leaf=${ctx.sessionManager.getLeafId() === before ? "parent" : "other"} old ctx ${stale(ctx)}`);
  }});
  pi.registerCommand("reload-all", { handler: async (_args, ctx) => {
    await ctx.reload();
    log(`reloaded old ctx ${stale(ctx)}`);
  }});
  pi.registerCommand("turn", { handler: async (_args, ctx) => {
    pi.sendUserMessage("from the command");
    await ctx.waitForIdle();
    const messages = ctx.sessionManager.getBranch().filter((e) => e.type === "message").map((e) => e.message.role).join(",");
    log(`idle=${ctx.isIdle()} pending=${ctx.hasPendingMessages()} messages=${messages} usage=${typeof ctx.getContextUsage().contextWindow}`);
  }});
}
"#;

fn log(project: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(project.join("events.log")).unwrap_or_default();
    std::fs::write(project.join("events.log"), "").unwrap();
    text.lines().map(str::to_owned).collect()
}

/// The id part of a session file name (what `name()` in the extension logs).
fn short(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    name.rsplit('_').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_session_control_emits_the_session_events_and_leaves_the_old_ctx_stale() {
    watchdog(async {
        let server = server(vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
        ])
        .await;
        let sandbox = Sandbox::new(&server);
        let project = sandbox.project.clone();
        let mut raw = with_extension(&sandbox, SESSIONS);
        // A run from the command, awaited with `waitForIdle`.
        let done = raw.prompt("1", "/turn").await;
        assert_eq!(done["success"], true, "{done}");
        assert_eq!(
            log(&project),
            [
                "factory 1",
                "session_start startup previous=-",
                "idle=true pending=false messages=system,user,assistant usage=number",
            ]
        );
        let first = sandbox.session_files();
        assert_eq!(first.len(), 1);
        let first = first[0].clone();
        let user_entries = read_jsonl(&first)
            .iter()
            .filter(|e| e["type"] == "message" && e["message"]["role"] == "user")
            .count();
        assert_eq!(user_entries, 1);

        // A cancelled replacement changes nothing.
        let done = raw.prompt("2", "/new cancel").await;
        assert_eq!(done["success"], true, "{done}");
        assert_eq!(
            log(&project),
            [
                "session_before_switch new target=-",
                r#"newSession {"cancelled":true} old ctx usable"#
            ]
        );

        let done = raw.prompt("3", "/new").await;
        assert_eq!(done["success"], true, "{done}");
        let lines = log(&project);
        raw.send(json!({ "id": "s", "type": "get_state" })).await;
        let state = raw.response("s").await;
        let second = std::path::PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
        assert_ne!(second, first);
        let second_name = short(&second);
        assert_eq!(
            lines,
            [
                "session_before_switch new target=-".to_owned(),
                format!("session_shutdown new target={second_name}"),
                "factory 2".to_owned(),
                format!("session_start new previous={}", short(&first)),
                format!("withSession usable parent={}", short(&first)),
                r#"newSession {"cancelled":false} old ctx stale"#.to_owned(),
            ]
        );

        // Back to the first session, then fork and navigate there.
        let done = raw
            .prompt("4", &format!("/switch {}", first.display()))
            .await;
        assert_eq!(done["success"], true, "{done}");
        assert_eq!(
            log(&project),
            [
                format!("session_before_switch resume target={}", short(&first)),
                format!("session_shutdown resume target={}", short(&first)),
                "factory 3".to_owned(),
                format!("session_start resume previous={second_name}"),
                format!("switched to {}", short(&first)),
                r#"switchSession {"cancelled":false}"#.to_owned(),
            ]
        );

        let done = raw.prompt("5c", "/tree cancel").await;
        assert_eq!(done["success"], true, "{done}");
        assert_eq!(
            log(&project),
            [
                "session_before_tree summary=false string string",
                r#"navigateTree {"cancelled":true} leaf=other old ctx usable"#
            ]
        );
        let done = raw.prompt("5", "/tree").await;
        assert_eq!(done["success"], true, "{done}");
        assert_eq!(
            log(&project),
            [
                "session_before_tree summary=false string string",
                "session_tree moved=true",
                r#"navigateTree {"cancelled":false} leaf=parent old ctx usable"#
            ]
        );

        let done = raw.prompt("6", "/fork at").await;
        assert_eq!(done["success"], true, "{done}");
        let lines = log(&project);
        assert_eq!(lines[0], "session_before_fork at string");
        assert!(
            lines[1].starts_with("session_shutdown fork target="),
            "{lines:?}"
        );
        assert_eq!(lines[2], "factory 4");
        assert_eq!(
            lines[3],
            format!("session_start fork previous={}", short(&first))
        );
        assert_eq!(lines[4], r#"fork {"cancelled":false} old ctx stale"#);

        let done = raw.prompt("7", "/reload-all").await;
        assert_eq!(done["success"], true, "{done}");
        // A reload imports the module afresh: its module-level counter starts over.
        assert_eq!(
            log(&project),
            [
                "session_shutdown reload target=-",
                "factory 1",
                "session_start reload previous=-",
                "reloaded old ctx stale",
            ]
        );
        assert_eq!(raw.finish().await.1, Some(0));
        assert_eq!(log(&project), ["session_shutdown quit target=-"]);
    })
    .await;
}

/// Sends a prompt and reads until it is answered and `count` notices came: a compaction
/// runs after the command has returned, so the two come in either order.
async fn prompt_with_notices(raw: &mut Raw, id: &str, text: &str, count: usize) -> Vec<String> {
    raw.send(json!({ "id": id, "type": "prompt", "message": text }))
        .await;
    let mut notices = Vec::new();
    let mut answered = false;
    while !answered || notices.len() < count {
        let line = raw.line().await;
        if line["type"] == "extension_ui_request" {
            notices.push(line["message"].as_str().unwrap().to_owned());
        } else if line["type"] == "response" && line["id"] == id {
            assert_eq!(line["success"], true, "{line}");
            answered = true;
        }
    }
    notices
}

const COMPACTION: &str = r#"
let cancel = false;
export default function (pi) {
  pi.on("session_before_compact", (e) => {
    if (cancel) return { cancel: true };
    const p = e.preparation;
    return { compaction: { summary: `custom of ${p.messagesToSummarize.length} (${e.reason}, ${e.customInstructions})`, firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore } };
  });
  pi.on("session_compact", (e, ctx) => ctx.ui.notify(`session_compact fromExtension=${e.fromExtension} ${e.compactionEntry.type}: ${e.compactionEntry.summary}`));
  pi.registerCommand("squash", { handler: async (args, ctx) => {
    cancel = args === "cancel";
    ctx.compact({
      customInstructions: "focus",
      onComplete: (result) => ctx.ui.notify(`done: ${result.summary}`),
      onError: (error) => ctx.ui.notify(`failed: ${error.message}`),
    });
  }});
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_compact_runs_the_compaction_hooks_and_reports_back() {
    watchdog(async {
        let server = server(vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
        ])
        .await;
        let sandbox = Sandbox::new(&server);
        std::fs::write(
            sandbox.agent.join("settings.json"),
            r#"{"compaction": {"keepRecentTokens": 5}}"#,
        )
        .unwrap();
        let mut raw = with_extension(&sandbox, COMPACTION);
        for (id, text) in [("1", "first question"), ("2", "second question")] {
            raw.prompt(id, text).await;
            raw.until(|l| l["type"] == "agent_settled").await;
        }
        // The compaction runs after the command has returned: its notices and the prompt's
        // response come in either order.
        let notices = prompt_with_notices(&mut raw, "3", "/squash", 2).await;
        assert_eq!(
            notices,
            [
                "session_compact fromExtension=true compaction: custom of 2 (manual, focus)",
                "done: custom of 2 (manual, focus)"
            ]
        );
        // Only the two answers were asked of the model: the summary came from the hook.
        assert_eq!(server.requests().len(), 2);

        let failed = prompt_with_notices(&mut raw, "4", "/squash cancel", 1).await;
        assert!(failed[0].starts_with("failed: "), "{failed:?}");
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}

const SEEDED: &str = r#"
export default function (pi) {
  pi.registerCommand("seeded", { handler: async (_args, ctx) => {
    await ctx.newSession({
      setup: async (sm) => {
        sm.appendMessage({ role: "user", content: [{ type: "text", text: "seeded question" }], timestamp: Date.now() });
        sm.appendCustomEntry("seed-marker", { n: 1 });
      },
      withSession: async (next) => {
        const kinds = next.sessionManager.getBranch().map((e) => e.type === "message" ? e.message.role : e.type);
        next.ui.notify(`${kinds.join(",")} trusted=${next.isProjectTrusted()}`);
      },
    });
  }});
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_session_setup_writes_the_start_of_the_next_conversation() {
    watchdog(async {
        let server = server(vec![ScriptedReply::text("an answer")]).await;
        let sandbox = Sandbox::new(&server);
        let mut raw = with_extension(&sandbox, SEEDED);
        raw.send(json!({ "id": "1", "type": "prompt", "message": "/seeded" }))
            .await;
        let notice = raw.ui().await;
        // A project without resources of its own needs no trust decision: it is trusted.
        assert_eq!(
            notice["message"],
            "model_change,thinking_level_change,user,custom trusted=true"
        );
        raw.response("1").await;
        raw.prompt("2", "the next question").await;
        raw.until(|l| l["type"] == "agent_settled").await;
        let requests = server.requests();
        assert_eq!(
            rpc_common::user_texts(&requests[0].body),
            ["seeded question", "the next question"]
        );
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}

/// The reference's confirm-destructive pattern: a dialog inside `session_before_switch`,
/// answered while the session waits for the handler.
const CONFIRM_NEW: &str = r#"
export default function (pi) {
  pi.on("session_before_switch", async (event, ctx) => {
    if (!ctx.hasUI || event.reason !== "new") return;
    const confirmed = await ctx.ui.confirm("Clear session?", "This will delete all messages in the current session.");
    if (!confirmed) {
      ctx.ui.notify("Clear cancelled", "info");
      return { cancel: true };
    }
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_in_session_before_switch_decides_whether_new_session_goes_ahead() {
    watchdog(async {
        let server = server(vec![]).await;
        let sandbox = Sandbox::new(&server);
        let mut raw = with_extension(&sandbox, CONFIRM_NEW);
        for (id, confirmed, cancelled) in [("1", false, true), ("2", true, false)] {
            raw.send(json!({ "id": id, "type": "new_session" })).await;
            let question = raw.ui().await;
            assert_eq!(question["method"], "confirm");
            assert_eq!(question["title"], "Clear session?");
            raw.reply(&question["id"], json!({ "confirmed": confirmed }))
                .await;
            let seen = raw
                .until(|l| l["type"] == "response" && l["id"] == id)
                .await;
            let response = seen.last().unwrap();
            assert_eq!(
                response["data"],
                json!({ "cancelled": cancelled }),
                "{response}"
            );
            let notices: Vec<&Value> = seen
                .iter()
                .filter(|l| l["type"] == "extension_ui_request")
                .map(|l| &l["message"])
                .collect();
            if cancelled {
                assert_eq!(notices, [&json!("Clear cancelled")]);
            } else {
                assert!(notices.is_empty(), "{notices:?}");
            }
        }
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_shutdown_ends_the_rpc_process_in_order_while_stdin_stays_open() {
    watchdog(async {
        let server = server(vec![]).await;
        let sandbox = Sandbox::new(&server);
        let source = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("session_shutdown", (e) => appendFileSync("shutdown.log", `${e.reason}\n`));
  pi.registerCommand("bye", { handler: async (_args, ctx) => { ctx.ui.notify("bye"); ctx.shutdown(); } });
}
"#;
        let mut raw = with_extension(&sandbox, source);
        raw.send(json!({ "id": "1", "type": "prompt", "message": "/bye" }))
            .await;
        assert_eq!(raw.ui().await["message"], "bye");
        // The command's prompt is answered first, as the reference answers before it exits.
        assert_eq!(raw.response("1").await["success"], true);
        // The output ends and the process exits 0 with its stdin still open.
        assert_eq!(raw.wait_exit().await.1, Some(0));
        assert_eq!(
            std::fs::read_to_string(sandbox.project.join("shutdown.log")).unwrap(),
            "quit\n"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_sees_the_run_and_ctx_abort_stops_it() {
    watchdog(async {
        let server = server(vec![
            ScriptedReply::tool_call("call_1", "stopper", "{}"),
            ScriptedReply::text("never asked for"),
        ])
        .await;
        let sandbox = Sandbox::new(&server);
        let source = r#"
export default function (pi) {
  pi.registerTool({
    name: "stopper", label: "Stopper", description: "Stops the run", parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, _onUpdate, ctx) {
      ctx.ui.notify(`idle=${ctx.isIdle()} pending=${ctx.hasPendingMessages()}`);
      ctx.abort();
      return { content: [{ type: "text", text: "stopped" }] };
    },
  });
}
"#;
        let mut raw = with_extension(&sandbox, source);
        raw.prompt("1", "stop yourself").await;
        let mut notice = None;
        let seen = raw
            .until(|l| l["type"] == "agent_settled")
            .await;
        for line in &seen {
            if line["type"] == "extension_ui_request" {
                notice = Some(line["message"].clone());
            }
        }
        assert_eq!(notice, Some(json!("idle=false pending=false")));
        assert_eq!(seen.last().unwrap()["aborted"], true, "{seen:#?}");
        assert_eq!(server.requests().len(), 1);
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_and_follow_up_refuse_an_extension_command_as_the_reference_does() {
    watchdog(async {
        let server = server(vec![]).await;
        let sandbox = Sandbox::new(&server);
        let source = r#"
export default function (pi) {
  pi.registerCommand("note", { handler: async (_args, ctx) => ctx.ui.notify("ran") });
}
"#;
        let mut raw = with_extension(&sandbox, source);
        for (id, kind, message) in [("1", "steer", "/note now"), ("2", "follow_up", "/note")] {
            raw.send(json!({ "id": id, "type": kind, "message": message }))
                .await;
            let response = raw.response(id).await;
            assert_eq!(response["success"], false, "{response}");
            assert_eq!(
                response["error"],
                "Extension command \"/note\" cannot be queued. Use prompt() or execute the command when not streaming."
            );
        }
        // Text that names no command is queued as before.
        raw.send(json!({ "id": "3", "type": "follow_up", "message": "/notes are text" }))
            .await;
        assert_eq!(raw.response("3").await["data"]["disposition"], "queued");
        assert_eq!(raw.finish().await.1, Some(0));
    })
    .await;
}
