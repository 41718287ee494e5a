//! Strict JSON-schema tools (`constrainedSampling: {type: "json_schema", strict}`): sent with
//! `strict: true` and a schema in strict mode's subset where the model's compat says the
//! provider takes strict tools (`supportsStrictMode` on the OpenAI wires,
//! `supportsStrictTools` on Anthropic's); left as they were otherwise, unless they `require`
//! it, which fails the request with the reference's message.

use crate::common;

use std::sync::Arc;

use common::FixedClock;
use common::client;
use common::collect;
use common::model_for;
use knightcode_ai::Api;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Millis;
use knightcode_protocol::ToolDeclaration;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

fn read_tool(strict: Option<&str>) -> ToolDeclaration {
    ToolDeclaration {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            },
            "required": ["path"],
        }),
        constrained_sampling: strict
            .map(|s| serde_json::from_value(json!({"type": "json_schema", "strict": s})).unwrap()),
        ..ToolDeclaration::default()
    }
}

/// What strict mode makes of `read_tool`'s schema: every object closed, every property
/// required, the optional ones nullable, the key order kept.
fn strict_read_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "tags": {"anyOf": [
                {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                    "required": ["name"],
                    "additionalProperties": false,
                }},
                {"type": "null"},
            ]},
        },
        "required": ["path", "offset", "tags"],
        "additionalProperties": false,
    })
}

fn with_flag(mut model: Model, key: &str, on: bool) -> Model {
    model
        .compat
        .get_or_insert_with(Default::default)
        .insert(key.into(), json!(on));
    model
}

fn offline(api: Api) -> Model {
    let mut model = Model::new("mock", "mock-model", api, "http://127.0.0.1:9");
    model.context_window = 200_000;
    model.max_tokens = 32_000;
    model
}

fn request(model: Model, tools: Vec<ToolDeclaration>) -> StreamRequest {
    StreamRequest {
        model,
        context: Context {
            system_prompt: Some("You are a test.".into()),
            messages: vec![Arc::new(AgentMessage::user("hi", Millis(1)))],
            tools,
        },
        options: StreamOptions {
            api_key: Some("test-key".into()),
            ..StreamOptions::default()
        },
    }
}

fn body_of(model: Model, tools: Vec<ToolDeclaration>) -> Value {
    client(Arc::default())
        .build_request(&request(model, tools))
        .unwrap()
        .body
}

/// The request as the mock server received it: a strict tool on OpenAI's chat completions.
#[tokio::test]
async fn a_strict_tool_reaches_chat_completions_strict() {
    let server = MockServer::start(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("Hi.")],
    )
    .await
    .unwrap();
    let plain = ToolDeclaration {
        name: "ls".into(),
        ..read_tool(None)
    };
    let request = request(
        model_for(&server, "mock-model"),
        vec![read_tool(Some("prefer")), plain],
    );
    let events =
        collect(client(Arc::new(FixedClock::default())).stream(&request, CancellationToken::new()))
            .await;
    assert!(
        matches!(events.last(), Some(StreamEvent::Done { .. })),
        "{events:?}"
    );
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "function": {
            "name": "read", "description": "Read a file",
            "parameters": strict_read_schema(), "strict": true,
        }})
    );
    // A tool that did not ask keeps its schema and `strict: false`.
    assert_eq!(body["tools"][1]["function"]["strict"], false);
    assert_eq!(
        body["tools"][1]["function"]["parameters"],
        read_tool(None).parameters
    );
}

#[test]
fn each_wire_sends_strict_tools_only_where_the_compat_says_so() {
    let tools = || vec![read_tool(Some("prefer"))];
    // Chat completions: on unless the compat turns it off; off means no `strict` at all.
    let body = body_of(
        with_flag(offline(Api::OpenAiCompletions), "supportsStrictMode", false),
        tools(),
    );
    assert_eq!(body["tools"][0]["function"].get("strict"), None);
    assert_eq!(
        body["tools"][0]["function"]["parameters"],
        read_tool(None).parameters
    );

    // Responses: off unless the compat turns it on.
    let body = body_of(offline(Api::OpenAiResponses), tools());
    assert_eq!(body["tools"][0].get("strict"), None);
    let body = body_of(
        with_flag(offline(Api::OpenAiResponses), "supportsStrictMode", true),
        tools(),
    );
    assert_eq!(body["tools"][0]["strict"], true);
    assert_eq!(body["tools"][0]["parameters"], strict_read_schema());

    // Anthropic: `strict: true` before the schema, which keeps the strict schema's keys.
    let body = body_of(offline(Api::AnthropicMessages), tools());
    assert_eq!(body["tools"][0].get("strict"), None);
    assert_eq!(
        body["tools"][0]["input_schema"],
        json!({"type": "object", "properties": read_tool(None).parameters["properties"], "required": ["path"]})
    );
    let body = body_of(
        with_flag(offline(Api::AnthropicMessages), "supportsStrictTools", true),
        tools(),
    );
    let tool = body["tools"][0].as_object().unwrap();
    let keys: Vec<&str> = tool.keys().map(String::as_str).take(5).collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "eager_input_streaming",
            "strict",
            "input_schema"
        ]
    );
    assert_eq!(tool["input_schema"], strict_read_schema());
}

#[test]
fn a_schema_strict_mode_cannot_express_leaves_prefer_as_it_was_and_fails_require() {
    let mut prefer = read_tool(Some("prefer"));
    prefer.parameters["properties"]["path"] =
        json!({"oneOf": [{"type": "string"}, {"type": "number"}]});
    let body = body_of(offline(Api::OpenAiCompletions), vec![prefer.clone()]);
    assert_eq!(body["tools"][0]["function"]["strict"], false);
    assert_eq!(
        body["tools"][0]["function"]["parameters"],
        prefer.parameters
    );

    let mut require = prefer.clone();
    require.constrained_sampling = read_tool(Some("require")).constrained_sampling;
    let failure = client(Arc::default())
        .build_request(&request(offline(Api::OpenAiCompletions), vec![require]))
        .unwrap_err();
    assert_eq!(
        failure.message,
        "Tool \"read\" requires JSON-schema constrained sampling, but oneOf schemas are unsupported."
    );

    // A provider without strict tools cannot give `require` what it asks.
    let failure = client(Arc::default())
        .build_request(&request(
            offline(Api::OpenAiResponses),
            vec![read_tool(Some("require"))],
        ))
        .unwrap_err();
    assert_eq!(
        failure.message,
        "Tool \"read\" requires JSON-schema constrained sampling, but strict tools are unsupported."
    );
}

/// The catalog carries the reference's strict flags: OpenAI's Responses models (OpenAI's own
/// and the Cloudflare gateway's) and Anthropic's own models take strict tools.
#[test]
fn the_catalog_marks_the_models_that_take_strict_tools() {
    let models = knightcode_ai::models::builtin_models();
    let find = |provider: &str, id: &str| {
        models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
            .unwrap_or_else(|| panic!("{provider}/{id} is in the catalog"))
            .clone()
    };
    let body = body_of(find("openai", "gpt-4o"), vec![read_tool(None)]);
    assert_eq!(body["tools"][0]["strict"], false);
    let body = body_of(find("openai", "gpt-4o"), vec![read_tool(Some("prefer"))]);
    assert_eq!(body["tools"][0]["strict"], true);
    assert_eq!(body["tools"][0]["parameters"], strict_read_schema());
    let body = body_of(
        find("anthropic", "claude-sonnet-4-5"),
        vec![read_tool(Some("require"))],
    );
    assert_eq!(body["tools"][0]["strict"], true);
    // Elsewhere the flags stay off: a `require` tool cannot be served.
    for (provider, id) in [
        ("openrouter", "anthropic/claude-sonnet-4.5"),
        ("azure-openai-responses", "gpt-4o"),
        ("github-copilot", "gpt-5"),
    ] {
        let model = find(provider, id);
        assert_eq!(
            model.compat_bool("supportsStrictTools"),
            None,
            "{provider}/{id}"
        );
        assert_eq!(
            model.compat_bool("supportsStrictMode"),
            None,
            "{provider}/{id}"
        );
    }
}
