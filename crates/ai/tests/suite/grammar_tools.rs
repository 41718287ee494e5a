//! Grammar tools (`constrainedSampling: {type: "grammar"}`) on the Responses APIs: sent as
//! custom tools when the model's `supportsOpenAIGrammarTools` flag is set, their
//! `custom_tool_call`s decoded into ordinary calls with the raw input as the one string
//! argument, and replayed as custom items to models with the flag, as function calls to
//! others.

use crate::common;

use std::sync::Arc;

use common::FixedClock;
use common::client;
use common::collect;
use common::describe;
use common::model_for;
use knightcode_ai::Accumulator;
use knightcode_ai::Api;
use knightcode_ai::CancellationToken;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::Blocks;
use knightcode_protocol::ConstrainedSampling;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::GrammarVariants;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::ToolResultMessage;
use knightcode_testkit::Chunking;
use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WebResponse;
use knightcode_testkit::WebServer;
use knightcode_testkit::WireFormat;
use knightcode_testkit::oauth::chatgpt_access_token;
use serde_json::Value;
use serde_json::json;

const GRAMMAR: &str = "start: /[\\s\\S]+/\n";
/// A script with what JSON must escape: quotes, a backslash, a newline, a tab, non-ASCII.
const SCRIPT: &str = "const s = \"a\\\\b\";\n\ttext(s + 'é');";

fn script_tool() -> ToolDeclaration {
    ToolDeclaration {
        name: "codemode".into(),
        description: "Run a script".into(),
        parameters: json!({
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
            "required": ["code"],
        }),
        constrained_sampling: Some(ConstrainedSampling::grammar(GrammarVariants {
            openai_lark: Some(GRAMMAR.into()),
            ..GrammarVariants::default()
        })),
        ..ToolDeclaration::default()
    }
}

fn read_tool() -> ToolDeclaration {
    ToolDeclaration {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ..ToolDeclaration::default()
    }
}

fn with_grammar(mut model: Model, on: bool) -> Model {
    let mut compat = serde_json::Map::new();
    compat.insert("supportsOpenAIGrammarTools".into(), json!(on));
    model.compat = Some(compat);
    model
}

fn context(messages: Vec<AgentMessage>) -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: messages.into_iter().map(Arc::new).collect(),
        tools: vec![script_tool(), read_tool()],
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        ..StreamOptions::default()
    }
}

fn body_of(model: Model, context: Context, options: StreamOptions) -> Value {
    let request = StreamRequest {
        model,
        context,
        options,
    };
    client(Arc::default()).build_request(&request).unwrap().body
}

fn offline(api: Api) -> Model {
    let mut model = Model::new("openai", "gpt-test", api, "http://127.0.0.1:9");
    model.context_window = 200_000;
    model.max_tokens = 32_000;
    model
}

#[test]
fn grammar_tools_are_custom_tools_where_the_model_supports_them() {
    let hi = || context(vec![AgentMessage::user("hi", Millis(1))]);
    let custom = json!({
        "type": "custom",
        "name": "codemode",
        "description": "Run a script",
        "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR},
    });
    let codex_options = StreamOptions {
        api_key: Some(chatgpt_access_token("acct", "n")),
        ..StreamOptions::default()
    };
    for (api, options) in [
        (Api::OpenAiResponses, options()),
        (Api::AzureOpenAiResponses, options()),
        (Api::OpenAiCodexResponses, codex_options),
    ] {
        let name = api.as_str();
        let body = body_of(with_grammar(offline(api), true), hi(), options.clone());
        assert_eq!(body["tools"][0], custom, "{name}");
        assert_eq!(
            body["tools"][1]["type"], "function",
            "{name}: other tools stay functions"
        );
        for model in [offline(api), with_grammar(offline(api), false)] {
            let body = body_of(model, hi(), options.clone());
            assert_eq!(
                body["tools"][0]["type"], "function",
                "{name} without the flag"
            );
            assert_eq!(
                body["tools"][0]["parameters"],
                script_tool().parameters,
                "{name}"
            );
        }
    }
    // The flag means nothing to other wires: the tool keeps its JSON schema.
    let body = body_of(
        with_grammar(offline(Api::OpenAiCompletions), true),
        hi(),
        options(),
    );
    assert_eq!(body["tools"][0]["function"]["name"], "codemode");
    assert_eq!(
        body["tools"][0]["function"]["parameters"],
        script_tool().parameters
    );

    // The regex variant when there is no Lark one.
    let mut ctx = hi();
    ctx.tools[0].constrained_sampling = Some(ConstrainedSampling::grammar(GrammarVariants {
        openai_lark: Some("  ".into()),
        openai_regex: Some("[a-z]+".into()),
        ..GrammarVariants::default()
    }));
    let body = body_of(
        with_grammar(offline(Api::OpenAiResponses), true),
        ctx,
        options(),
    );
    assert_eq!(
        body["tools"][0]["format"],
        json!({"type": "grammar", "syntax": "regex", "definition": "[a-z]+"})
    );
}

/// The built-in catalog marks the models the reference does (GPT-5 and later on the
/// Responses endpoints of the providers that pass custom tools through), and a request for
/// one of them sends a grammar tool as a custom tool; older models and other wires do not.
#[test]
fn the_catalog_gives_the_flag_to_gpt_5_and_later_on_the_responses_endpoints() {
    let models = knightcode_ai::models::builtin_models();
    let find = |provider: &str, id: &str| {
        models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
            .unwrap_or_else(|| panic!("{provider}/{id} is in the catalog"))
            .clone()
    };
    let flag = |m: &Model| m.compat_bool("supportsOpenAIGrammarTools").unwrap_or(false);
    for (provider, id) in [
        ("openai", "gpt-5"),
        ("openai", "gpt-5-mini"),
        ("azure-openai-responses", "gpt-5"),
        ("openai-codex", "gpt-5.1"),
        ("github-copilot", "gpt-5"),
        ("opencode", "gpt-5"),
    ] {
        assert!(flag(&find(provider, id)), "{provider}/{id}");
    }
    for (provider, id) in [
        ("openai", "gpt-4o"),
        ("openai", "gpt-4.1"),
        ("openai", "o3"),
        ("openrouter", "openai/gpt-5"),
        ("github-copilot", "gpt-4o"),
    ] {
        assert!(!flag(&find(provider, id)), "{provider}/{id}");
    }
    let marked = models.iter().filter(|m| flag(m)).collect::<Vec<_>>();
    assert!(
        marked.iter().all(|m| m.id.starts_with("gpt-")
            && matches!(
                m.api.as_str(),
                "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
            )),
        "{:?}",
        marked
            .iter()
            .map(|m| (&m.provider, &m.id))
            .collect::<Vec<_>>()
    );

    let hi = context(vec![AgentMessage::user("hi", Millis(1))]);
    let body = body_of(find("openai", "gpt-5"), hi.clone(), options());
    assert_eq!(body["tools"][0]["type"], "custom");
    assert_eq!(body["tools"][0]["format"]["syntax"], "lark");
    let body = body_of(find("openai", "gpt-4o"), hi, options());
    assert_eq!(body["tools"][0]["type"], "function");
}

#[test]
fn a_grammar_tool_that_cannot_be_one_fails_the_request() {
    let model = with_grammar(offline(Api::OpenAiResponses), true);
    let mut no_variant = context(Vec::new());
    no_variant.tools[0].constrained_sampling =
        Some(ConstrainedSampling::grammar(GrammarVariants::default()));
    let mut two_arguments = context(Vec::new());
    two_arguments.tools[0].parameters = json!({
        "type": "object",
        "properties": {"code": {"type": "string"}, "name": {"type": "string"}},
        "required": ["code", "name"],
    });
    let mut not_a_string = context(Vec::new());
    not_a_string.tools[0].parameters = json!({
        "type": "object", "properties": {"code": {"type": "number"}}, "required": ["code"],
    });
    for (ctx, expected) in [
        (
            no_variant,
            "Tool \"codemode\" cannot use grammar constrained sampling: no supported grammar variant was provided.",
        ),
        (
            two_arguments,
            "Tool \"codemode\" cannot use grammar constrained sampling: grammar constrained sampling requires exactly one required string property.",
        ),
        (
            not_a_string,
            "Tool \"codemode\" cannot use grammar constrained sampling: grammar constrained sampling property code must have type string.",
        ),
    ] {
        let request = StreamRequest {
            model: model.clone(),
            context: ctx,
            options: options(),
        };
        let failure = client(Arc::default()).build_request(&request).unwrap_err();
        assert_eq!(failure.message, expected);
    }
}

fn custom_reply() -> ScriptedReply {
    ScriptedReply::default()
        .with_text("Running it.")
        .with_custom_tool_call("call_1", "codemode", SCRIPT)
        .with_chunking(Chunking::chars(7))
}

async fn served(replies: Vec<ScriptedReply>) -> (MockServer, StreamRequest) {
    let server = MockServer::start(WireFormat::OpenAiResponses, replies)
        .await
        .unwrap();
    let request = StreamRequest {
        model: with_grammar(model_for(&server, "mock-model"), true),
        context: context(vec![AgentMessage::user("Run it", Millis(1))]),
        options: options(),
    };
    (server, request)
}

#[tokio::test]
async fn custom_tool_calls_stream_as_calls_with_the_input_as_code() {
    let (server, request) = served(vec![custom_reply()]).await;
    let client = client(Arc::new(FixedClock::default()));
    let events = collect(client.stream(&request, CancellationToken::new())).await;
    let Some(StreamEvent::Done { reason, message }) = events.last() else {
        panic!("the stream must end with done: {:?}", events.last());
    };
    assert_eq!(*reason, StopReason::ToolUse);
    let call = message.tool_calls().next().unwrap();
    assert_eq!(call.name, "codemode");
    assert_eq!(call.arguments, json!({"code": SCRIPT}));
    assert!(call.id.starts_with("call_1|ctc_"), "{}", call.id);

    // One delta per input chunk, together the JSON text of the arguments.
    let lines = describe(&events);
    let start = lines
        .iter()
        .position(|l| l.starts_with("toolcall_start 1 call_1|ctc_"))
        .unwrap();
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas.len(),
        SCRIPT.chars().count().div_ceil(7) + 1,
        "{lines:#?}"
    );
    assert!(deltas[0].starts_with("{\"code\":\""), "{deltas:?}");
    assert_eq!(
        *deltas.last().unwrap(),
        "\"}",
        "the done event only closes the text"
    );
    let joined: String = deltas.concat();
    assert_eq!(
        serde_json::from_str::<Value>(&joined).unwrap(),
        json!({"code": SCRIPT})
    );
    assert!(
        lines[start + 1..]
            .iter()
            .any(|l| l.starts_with("toolcall_end 1"))
    );

    // The accumulator rebuilds the same call from the events.
    let mut acc = Accumulator::new();
    for event in &events[..events.len() - 1] {
        acc.push(event);
    }
    assert_eq!(acc.partial().content[1], message.content[1]);

    // The request declared the custom tool.
    let sent = &server.requests()[0].body;
    assert_eq!(sent["tools"][0]["type"], "custom");
}

#[tokio::test]
async fn an_error_mid_input_keeps_what_arrived() {
    // created, in_progress, the text item's seven events, the call's added event,
    // then two input deltas.
    let broken = custom_reply().with_fault(Fault::MidStreamError {
        after_events: 12,
        message: "server_error: upstream failed".into(),
        kind: MockErrorKind::Server,
    });
    let (_server, request) = served(vec![broken]).await;
    let client = client(Arc::new(FixedClock::default()));
    let events = collect(client.stream(&request, CancellationToken::new())).await;
    let Some(StreamEvent::Error { reason, message }) = events.last() else {
        panic!("the stream must end with an error: {:?}", events.last());
    };
    assert_eq!(*reason, StopReason::Error);
    assert!(
        message
            .error_message
            .as_deref()
            .unwrap()
            .contains("upstream failed")
    );
    let call = message.tool_calls().next().unwrap();
    let prefix: String = SCRIPT.chars().take(14).collect();
    assert_eq!(call.arguments, json!({"code": prefix}));
}

fn stored_call(id: &str) -> AgentMessage {
    AgentMessage::Assistant(Box::new(AssistantMessage {
        content: Blocks(vec![ContentBlock::ToolCall(
            knightcode_protocol::ToolCall {
                id: id.into(),
                name: "codemode".into(),
                arguments: json!({"code": SCRIPT}),
                ..Default::default()
            },
        )]),
        api: "openai-responses".into(),
        provider: "openai".into(),
        model: "gpt-test".into(),
        stop_reason: StopReason::ToolUse.into(),
        timestamp: Millis(2),
        ..AssistantMessage::default()
    }))
}

fn stored_result(id: &str) -> AgentMessage {
    AgentMessage::ToolResult(Box::new(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "codemode".into(),
        content: Blocks(vec![ContentBlock::text("a\\bé")]),
        timestamp: Millis(3),
        ..ToolResultMessage::default()
    }))
}

fn replayed(body: &Value) -> Vec<Value> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i.get("call_id").is_some())
        .cloned()
        .collect()
}

#[tokio::test]
async fn calls_are_replayed_as_custom_items_and_results_as_custom_outputs() {
    let (server, mut request) = served(vec![custom_reply(), ScriptedReply::text("Done.")]).await;
    let client = client(Arc::new(FixedClock::default()));
    let message = client.complete(&request, CancellationToken::new()).await;
    let call = message.tool_calls().next().unwrap().clone();
    let item = call.id.split('|').nth(1).unwrap().to_owned();
    request
        .context
        .messages
        .push(Arc::new(AgentMessage::Assistant(Box::new(message))));
    request
        .context
        .messages
        .push(Arc::new(stored_result(&call.id)));
    let done = client.complete(&request, CancellationToken::new()).await;
    assert_eq!(done.text(), "Done.");
    assert_eq!(
        replayed(&server.requests()[1].body),
        vec![
            json!({"type": "custom_tool_call", "id": item, "call_id": "call_1", "name": "codemode", "input": SCRIPT}),
            json!({"type": "custom_tool_call_output", "call_id": "call_1", "output": "a\\bé"}),
        ]
    );
}

#[test]
fn a_session_that_moves_to_a_model_without_grammar_tools_sends_function_calls() {
    let history = || {
        context(vec![
            AgentMessage::user("Run it", Millis(1)),
            stored_call("call_1|ctc_abc"),
            stored_result("call_1|ctc_abc"),
        ])
    };
    // Without the flag: a function call (the `ctc_` item id is not one a function call may
    // carry, so it goes without), and a function call output.
    let body = body_of(offline(Api::OpenAiResponses), history(), options());
    assert_eq!(
        replayed(&body),
        vec![
            json!({"type": "function_call", "call_id": "call_1", "name": "codemode",
                   "arguments": serde_json::to_string(&json!({"code": SCRIPT})).unwrap()}),
            json!({"type": "function_call_output", "call_id": "call_1", "output": "a\\bé"}),
        ]
    );
    // A function call made before the model had the flag goes back as a custom call.
    let mut ctx = history();
    ctx.messages[1] = Arc::new(stored_call("call_1|fc_abc"));
    let body = body_of(
        with_grammar(offline(Api::OpenAiResponses), true),
        ctx,
        options(),
    );
    assert_eq!(
        replayed(&body)[0],
        json!({"type": "custom_tool_call", "id": "fc_abc", "call_id": "call_1", "name": "codemode", "input": SCRIPT})
    );
    // A stored call whose argument is not a string cannot be replayed as raw input.
    let mut ctx = history();
    ctx.messages[1] = Arc::new(AgentMessage::Assistant(Box::new(AssistantMessage {
        content: Blocks(vec![ContentBlock::ToolCall(
            knightcode_protocol::ToolCall {
                id: "call_1|ctc_abc".into(),
                name: "codemode".into(),
                arguments: json!({"code": 1}),
                ..Default::default()
            },
        )]),
        ..AssistantMessage::default()
    })));
    let request = StreamRequest {
        model: with_grammar(offline(Api::OpenAiResponses), true),
        context: ctx,
        options: options(),
    };
    let failure = client(Arc::default()).build_request(&request).unwrap_err();
    assert_eq!(
        failure.message,
        "Grammar tool call \"codemode\" requires argument \"code\" to be a string."
    );
}

/// A Responses stream served raw: the input a custom call's events carry must only grow.
async fn raw(events: &[Value]) -> AssistantMessage {
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let server = WebServer::start(vec![(
        "/v1/responses",
        WebResponse::ok("text/event-stream", body),
    )])
    .await
    .unwrap();
    let model = Model::new(
        "openai",
        "gpt-test",
        Api::OpenAiResponses,
        format!("{}/v1", server.url()),
    );
    let request = StreamRequest {
        model: with_grammar(model, true),
        context: context(vec![AgentMessage::user("Run it", Millis(1))]),
        options: options(),
    };
    client(Arc::new(FixedClock::default()))
        .complete(&request, CancellationToken::new())
        .await
}

#[tokio::test]
async fn custom_input_that_does_not_only_grow_fails_the_stream() {
    let added = json!({"type": "response.output_item.added", "output_index": 0,
        "item": {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "codemode", "input": ""}});
    let delta = json!({"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": "text(1)"});
    let done = |input: &str| json!({"type": "response.custom_tool_call_input.done", "output_index": 0, "input": input});
    let item_done = |input: &str| {
        json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "codemode", "input": input}})
    };
    let completed =
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}});
    for (events, expected) in [
        (
            vec![added.clone(), delta.clone(), done("text(2)")],
            Some("grammar tool input for property \"code\" changed non-monotonically"),
        ),
        (
            vec![
                added.clone(),
                delta.clone(),
                done("text(1);"),
                item_done("text(2);"),
            ],
            Some("grammar tool input for property \"code\" changed after it was closed"),
        ),
        // The whole input again after it was complete, and an item that only says it at
        // the end, are fine.
        (
            vec![
                added.clone(),
                delta.clone(),
                done("text(1);"),
                item_done("text(1);"),
                completed.clone(),
            ],
            None,
        ),
        (
            vec![added.clone(), item_done("text(1);"), completed.clone()],
            None,
        ),
    ] {
        let message = raw(&events).await;
        match expected {
            Some(expected) => {
                assert_eq!(message.stop_reason.known(), Some(StopReason::Error));
                assert!(
                    message.error_message.as_deref().unwrap().contains(expected),
                    "{:?}",
                    message.error_message
                );
            }
            None => {
                assert_eq!(
                    message.stop_reason.known(),
                    Some(StopReason::ToolUse),
                    "{:?}",
                    message.error_message
                );
                let call = message.tool_calls().next().unwrap();
                assert_eq!(call.arguments, json!({"code": "text(1);"}));
                assert_eq!(call.id, "call_1|ctc_1");
            }
        }
    }
}
