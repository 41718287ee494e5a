//! MCP resources through the real binary: a server offering resources brings the resource
//! tools, with its exposure; the model lists and reads them directly, and a codemode script
//! reads them from a server with the default exposure.

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

use crate::common::Sandbox;
use crate::oneshot_common::knightcode;
use crate::oneshot_common::offered_tools;
use crate::oneshot_common::sandbox;
use crate::suite::mcp::fixture_entry;
use crate::suite::mcp::write_config;

fn resource_fixture(sandbox: &Sandbox, exposure: Option<&str>) {
    let mut entry = fixture_entry(sandbox);
    match exposure {
        Some(exposure) => entry["exposure"] = json!(exposure),
        None => {
            entry.as_object_mut().unwrap().remove("exposure");
        }
    }
    entry["env"] = json!({"FIXTURE_RESOURCES": "1"});
    write_config(sandbox, json!({"fixture": entry}));
}

fn result_text(server: &MockServer, index: usize) -> String {
    let body = &server.requests()[index].body;
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool", "{last}");
    match &last["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[test]
fn the_model_lists_and_reads_resources_of_a_direct_server() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "list_mcp_resources", "{}"),
            ScriptedReply::tool_call(
                "call_2",
                "list_mcp_resource_templates",
                r#"{"server":"fixture"}"#,
            ),
            ScriptedReply::tool_call(
                "call_3",
                "read_mcp_resource",
                r#"{"server":"fixture","uri":"fixture://notes"}"#,
            ),
            ScriptedReply::tool_call(
                "call_4",
                "read_mcp_resource",
                r#"{"server":"fixture","uri":"fixture://data.bin"}"#,
            ),
            ScriptedReply::tool_call(
                "call_5",
                "read_mcp_resource",
                r#"{"server":"fixture","uri":"fixture://missing"}"#,
            ),
            ScriptedReply::text("Read."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    resource_fixture(&sandbox, Some("direct"));
    let run = knightcode(&sandbox, &["-p", "read the notes"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    for name in [
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not in {offered:?}"
        );
    }
    let listed = result_text(&server, 1);
    assert!(
        listed.contains("fixture://notes") && listed.contains(r#""server": "fixture""#),
        "{listed}"
    );
    let templates = result_text(&server, 2);
    assert!(templates.contains("fixture://item/{id}"), "{templates}");
    assert!(result_text(&server, 3).contains("Notes of the fixture"));
    let binary = result_text(&server, 4);
    assert!(
        binary.contains(
            "[Binary resource fixture://data.bin (application/octet-stream, 4 bytes) saved to "
        ),
        "{binary}"
    );
    let missing = result_text(&server, 5);
    assert!(
        missing.contains("Resource not found: fixture://missing"),
        "{missing}"
    );
}

#[test]
fn a_codemode_script_reads_a_resource_of_a_codemode_server() {
    let code = "const read = await tools.read_mcp_resource({ server: 'fixture', uri: 'fixture://notes' });\nreturn read.contents[0].text.toUpperCase();";
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "codemode", json!({ "code": code }).to_string()),
            ScriptedReply::text("Read."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    resource_fixture(&sandbox, None);
    let run = knightcode(&sandbox, &["-p", "read the notes"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered = offered_tools(&server.requests()[0].body);
    assert!(
        !offered.iter().any(|n| n == "read_mcp_resource"),
        "{offered:?}"
    );
    let text = result_text(&server, 1);
    assert!(text.contains("NOTES OF THE FIXTURE"), "{text}");
}
