//! The `codemode.*` settings through the real binary: with `mode: "only"` the active tools
//! scripts can call are not declared to the model, codemode's description declares them
//! instead (within `inlineBudget`; 0 names them only) and a script still calls them; the
//! default mode keeps them declared.

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

use crate::common::Sandbox;
use crate::oneshot_common::knightcode;
use crate::oneshot_common::offered_description;
use crate::oneshot_common::offered_tools;
use crate::oneshot_common::sandbox;

fn settings(sandbox: &Sandbox, codemode: Value) {
    let settings = json!({"defaultTools": ["+codemode"], "codemode": codemode});
    std::fs::write(sandbox.agent.join("settings.json"), settings.to_string()).unwrap();
}

/// codemode's description in the request `body`.
fn codemode_description(body: &Value) -> String {
    offered_description(body, "codemode")
        .unwrap_or_else(|| panic!("codemode is not offered: {body}"))
}

#[test]
fn only_mode_moves_the_active_tools_into_codemode() {
    let code = "return await tools.read({ path: 'notes.txt' });";
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "codemode", json!({ "code": code }).to_string()),
            ScriptedReply::text("Read it."),
            ScriptedReply::text("Namespaces only."),
            ScriptedReply::text("Declared."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);

    settings(&sandbox, json!({"mode": "only"}));
    let run = knightcode(&sandbox, &["-p", "read the notes"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Read it.\n");
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let requests = server.requests();
    for request in &requests[..2] {
        assert_eq!(offered_tools(&request.body), ["codemode"]);
    }
    let description = codemode_description(&requests[0].body);
    assert!(description.contains("### `read`"), "{description}");
    assert!(description.contains("tools.bash(args: {"), "{description}");
    assert!(!description.contains("More tools"), "{description}");
    // The script reached `read`, hidden from the model but active.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = messages.last().unwrap().to_string();
    assert!(result.contains("Script completed"), "{result}");
    assert!(result.contains("alpha\\nbeta\\ngamma"), "{result}");

    // A budget of 0 names them without declarations.
    settings(&sandbox, json!({"mode": "only", "inlineBudget": 0}));
    let run = knightcode(&sandbox, &["-p", "hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = &server.requests()[2].body;
    assert_eq!(offered_tools(body), ["codemode"]);
    let description = codemode_description(body);
    assert!(!description.contains("tools.read(args"), "{description}");
    assert!(
        description.contains("- `read`, `bash`, `edit`, `write`"),
        "{description}"
    );

    // The default mode keeps them declared; there is nothing codemode-only to list.
    settings(&sandbox, json!({"inlineBudget": 0}));
    let run = knightcode(&sandbox, &["-p", "hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = &server.requests()[3].body;
    assert_eq!(
        offered_tools(body),
        ["read", "bash", "edit", "write", "codemode"]
    );
    let description = codemode_description(body);
    assert!(!description.contains("`read`"), "{description}");
}

#[test]
fn an_invalid_codemode_setting_is_reported_and_reads_as_the_default() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    settings(&sandbox, json!({"mode": "sometimes"}));
    let run = knightcode(&sandbox, &["-p", "hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr
            .contains("codemode.mode is \"sometimes\", expected \"on\" or \"only\"; using \"on\""),
        "{}",
        run.stderr
    );
    let offered = offered_tools(&server.requests()[0].body);
    assert_eq!(offered, ["read", "bash", "edit", "write", "codemode"]);
}
