//! `KNIGHTCODE_CACHE_RETENTION=long`: the session's requests ask for the long prompt-cache
//! lifetime (Anthropic's one-hour `ttl`), as the reference does when nothing else chose one.

use crate::oneshot_common;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::json;

/// The body of the one request a print run sends, with `KNIGHTCODE_CACHE_RETENTION` set to
/// `retention` (or unset).
fn anthropic_request(retention: Option<&str>) -> serde_json::Value {
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("hello")],
    )
    .unwrap();
    let sb = crate::common::Sandbox::with_url(&server.base_url(), crate::common::Models::Single);
    let models = json!({"providers": {"anthropic": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let mut command =
        oneshot_common::command(&sb, &["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"]);
    command.env("ANTHROPIC_API_KEY", "sk-ant-test");
    if let Some(value) = retention {
        command.env("KNIGHTCODE_CACHE_RETENTION", value);
    }
    let output = command
        .output_within(PROCESS_LIMIT, "knightcode -p")
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "one request");
    requests[0].body.clone()
}

/// Every `cache_control` marker of the system prompt.
fn system_markers(body: &serde_json::Value) -> Vec<serde_json::Value> {
    body["system"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .filter_map(|block| block.get("cache_control").cloned())
        .collect()
}

#[test]
fn cache_retention_long_in_the_environment_asks_anthropic_for_the_hour() {
    let long = system_markers(&anthropic_request(Some("long")));
    assert_eq!(long, [json!({"type": "ephemeral", "ttl": "1h"})]);
    // Unset, or any other value: the default five minutes (no `ttl`).
    for retention in [None, Some("short"), Some("LONG")] {
        let markers = system_markers(&anthropic_request(retention));
        assert_eq!(markers, [json!({"type": "ephemeral"})], "{retention:?}");
    }
}
