//! What extensions do while the session starts (the real binary, print mode, mock model):
//! a flag an extension declares is read in `session_start` without an "unknown flag"
//! warning (an undeclared one still gets it), and `setActiveTools` there decides what the
//! first request offers; and lifecycle events reach handlers in order with the loop's hooks.

use crate::common;
use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;

const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerFlag("review", { description: "review depth", type: "string" });
  pi.on("session_start", () => {
    if (pi.getFlag("review") === "deep") pi.setActiveTools(["read", "grep"]);
  });
}
"#;

#[test]
fn a_declared_flag_is_read_at_start_and_set_active_tools_shapes_the_first_request() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("plan.ts"), EXTENSION).unwrap();
    let run = knightcode(
        &sb,
        &["-e", "plan.ts", "--review", "deep", "--typo", "-p", "hi"],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stderr,
        "Warning: unknown flag --typo (no loaded extension declares it); ignoring it.\n"
    );
    let requests = server.requests();
    assert_eq!(
        offered_tools(&requests[0].body),
        vec!["read".to_owned(), "grep".to_owned()]
    );
}

/// Lifecycle events reach handlers in order with the loop's hooks: each turn's
/// `turn_start` before its `tool_call` and `turn_end` (the rpc-demo example counts turns so).
const TURN_ORDER: &str = r#"
export default function (pi) {
  const seen = [];
  pi.on("turn_start", (event) => { seen.push(`start ${event.turnIndex}`); });
  pi.on("tool_call", () => { seen.push("tool_call"); });
  pi.on("turn_end", (event) => { seen.push(`end ${event.turnIndex}`); });
  pi.on("agent_end", () => { pi.appendEntry("order", { seen }); });
}
"#;

#[test]
fn turn_start_reaches_handlers_before_that_turns_tool_call_and_turn_end() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "bash", r#"{"command":"echo hi"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("order.ts"), TURN_ORDER).unwrap();
    let run = knightcode(&sb, &["-e", "order.ts", "-p", "go"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let file = common::session_files(&sb.agent).pop().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let entry: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "custom" && e["customType"] == "order")
        .expect("the order entry");
    assert_eq!(
        entry["data"]["seen"],
        serde_json::json!(["start 0", "tool_call", "end 0", "start 1", "end 1"])
    );
}
