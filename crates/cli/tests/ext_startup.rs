#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What extensions do while the session starts (the real binary, print mode, mock model):
//! a flag an extension declares is read in `session_start` without an "unknown flag"
//! warning (an undeclared one still gets it), and `setActiveTools` there decides what the
//! first request offers.

mod oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;

const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerFlag("plan", { description: "plan mode", type: "string" });
  pi.on("session_start", () => {
    if (pi.getFlag("plan") === "deep") pi.setActiveTools(["read", "grep"]);
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
        &["-e", "plan.ts", "--plan", "deep", "--typo", "-p", "hi"],
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
