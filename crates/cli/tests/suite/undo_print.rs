//! `/undo` in print mode: there is nobody to ask (the reference's dialogs answer `undefined`
//! without a UI), so it changes nothing, sends nothing to the model and exits 0; the turn's
//! backup is on disk for a later interactive `/undo`.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;

#[test]
fn undo_in_print_mode_changes_nothing() {
    let args = serde_json::json!({ "path": "a.txt", "content": "changed\n" });
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("w1", "write", args.to_string()),
            ScriptedReply::text("done"),
        ],
    )
    .unwrap();
    let sandbox = oneshot_common::sandbox(&server);
    std::fs::write(sandbox.project.join("a.txt"), "original\n").unwrap();
    let run = knightcode(&sandbox, &["-p", "change a.txt"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let history = sandbox.agent.join("file-history");
    let sessions: Vec<_> = std::fs::read_dir(&history).unwrap().flatten().collect();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].path().join("index.json").exists());
    let requests = server.requests().len();

    let run = knightcode(&sandbox, &["--continue", "-p", "/undo"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        server.requests().len(),
        requests,
        "nothing reaches the model"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("a.txt")).unwrap(),
        "changed\n"
    );
}
