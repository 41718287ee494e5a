//! RPC wire types against the transcripts recorded from the reference agent, plus the
//! classification rules of spec `rpc.md` §1.

use std::path::PathBuf;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::rpc::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn transcript(scenario: &str, file: &str) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi")
        .join(scenario)
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

const SCENARIOS: [&str; 2] = ["rpc", "rpc-tree"];

#[test]
fn every_recorded_command_parses_and_writes_back_identically() {
    let mut commands = 0;
    for scenario in SCENARIOS {
        for line in transcript(scenario, "rpc-in.jsonl") {
            match RpcInput::parse(&line) {
                RpcInput::Command(command) => {
                    assert_eq!(serde_json::to_string(&command).unwrap(), line);
                    // The derived reader agrees with the fast classifier.
                    let again: RpcCommand = serde_json::from_str(&line).unwrap();
                    assert_eq!(again, command);
                    commands += 1;
                }
                RpcInput::Unknown { id, command } => {
                    assert_eq!(command, "no_such_command");
                    assert_eq!(id.as_deref(), Some("req-20"));
                }
                other => panic!("{scenario}: {line} -> {other:?}"),
            }
        }
    }
    assert_eq!(commands, 42);
}

/// Reads `data` as `T` and writes the whole response back with the typed value.
fn typed_round_trip<T: Serialize + DeserializeOwned>(response: &RpcResponse) -> String {
    let data: T = response.data_as().unwrap();
    let typed =
        RpcResponse::with_data(response.id.clone(), response.command.clone(), &data).unwrap();
    serde_json::to_string(&typed).unwrap()
}

#[test]
fn every_recorded_response_round_trips_with_typed_data() {
    let mut typed = 0;
    for scenario in SCENARIOS {
        for line in transcript(scenario, "rpc-out.jsonl") {
            let Ok(RpcOutput::Response(response)) = RpcOutput::parse(&line) else {
                continue;
            };
            assert_eq!(serde_json::to_string(&response).unwrap(), line);
            if !response.is_success() || response.data().is_none() {
                continue;
            }
            let written = match response.command.as_str() {
                "get_state" => typed_round_trip::<SessionState>(&response),
                "get_available_models" => typed_round_trip::<ModelsResult>(&response),
                "set_model" => typed_round_trip::<ModelInfo>(&response),
                "get_commands" => typed_round_trip::<CommandsResult>(&response),
                "cycle_thinking_level" => {
                    typed_round_trip::<Option<ThinkingLevelResult>>(&response)
                }
                "bash" => typed_round_trip::<BashResult>(&response),
                "get_last_assistant_text" => typed_round_trip::<LastAssistantTextResult>(&response),
                "get_fork_messages" => typed_round_trip::<ForkMessagesResult>(&response),
                "get_messages" => typed_round_trip::<MessagesResult>(&response),
                "get_session_stats" => typed_round_trip::<SessionStats>(&response),
                "clone" => typed_round_trip::<CancelledResult>(&response),
                "fork" => typed_round_trip::<ForkResult>(&response),
                "compact" => typed_round_trip::<CompactionResult>(&response),
                other => panic!("{scenario}: no typed data for {other}"),
            };
            assert_eq!(written, line, "{scenario}: {}", response.command);
            typed += 1;
        }
    }
    assert_eq!(typed, 22);
}

#[test]
fn typed_data_reads_the_recorded_values() {
    let line = transcript("rpc", "rpc-out.jsonl")
        .into_iter()
        .find(|line| line.contains(r#""id":"req-17""#))
        .unwrap();
    let Ok(RpcOutput::Response(response)) = RpcOutput::parse(&line) else {
        panic!("not a response");
    };
    let stats: SessionStats = response.data_as().unwrap();
    assert_eq!(stats.tool_calls, 1);
    assert_eq!(stats.tokens.total, 5045);
    let usage = stats.context_usage.unwrap();
    assert_eq!(usage.percent.unwrap().get(), 1.09765625);

    let state_line = &transcript("rpc", "rpc-out.jsonl")[0];
    let Ok(RpcOutput::Response(response)) = RpcOutput::parse(state_line) else {
        panic!("not a response");
    };
    let state: SessionState = response.data_as().unwrap();
    assert_eq!(state.steering_mode, QueueMode::OneAtATime);
    assert_eq!(state.model.unwrap().context_window, 128_000);
    assert_eq!(state.session_name, None);
}

#[test]
fn every_recorded_stdout_line_is_classified() {
    let (mut responses, mut ui, mut events, mut other) = (0, 0, 0, 0);
    for scenario in SCENARIOS {
        for line in transcript(scenario, "rpc-out.jsonl") {
            match RpcOutput::parse(&line).unwrap() {
                RpcOutput::Response(_) => responses += 1,
                RpcOutput::UiRequest(request) => {
                    assert!(!request.kind.expects_response());
                    assert_eq!(serde_json::to_string(&request).unwrap(), line);
                    ui += 1;
                }
                RpcOutput::Event(_) => events += 1,
                RpcOutput::Other(value) => {
                    // pi 0.73 writes message_update with `partial`/`message` and no `usage`.
                    assert_eq!(value["type"], "message_update", "{line}");
                    other += 1;
                }
            }
        }
    }
    assert_eq!((responses, ui, events, other), (43, 3, 84, 37));
}

#[test]
fn unknown_command_echoes_the_id_unlike_pi() {
    let input = RpcInput::parse(r#"{"type":"no_such_command","id":"req-20"}"#);
    let response = input.error_response().unwrap();
    // pi 0.73.1 dropped the id here; spec rpc.md §1 says ids are echoed.
    assert_eq!(
        serde_json::to_string(&response).unwrap(),
        r#"{"id":"req-20","type":"response","command":"no_such_command","success":false,"error":"Unknown command: no_such_command"}"#
    );
}

#[test]
fn invalid_json_is_a_parse_error_without_id() {
    for line in ["{not json", "", "[1,2]", "42", r#"{"type":"prompt""#] {
        let input = RpcInput::parse(line);
        let RpcInput::ParseError { id: None, .. } = &input else {
            panic!("{line:?} -> {input:?}");
        };
        let text = serde_json::to_string(&input.error_response().unwrap()).unwrap();
        assert!(
            text.starts_with(
                r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: "#
            ),
            "{text}"
        );
    }
}

#[test]
fn object_without_type_is_a_parse_error_that_keeps_its_id() {
    let input = RpcInput::parse(r#"{"id":"a","message":"hi"}"#);
    assert_eq!(
        serde_json::to_string(&input.error_response().unwrap()).unwrap(),
        r#"{"id":"a","type":"response","command":"parse","success":false,"error":"Failed to parse command: the object has no string \"type\""}"#
    );
}

#[test]
fn malformed_fields_of_a_known_command_are_answered_for_that_command() {
    for (line, needle) in [
        (r#"{"type":"prompt","id":"x"}"#, "missing field `message`"),
        (
            r#"{"type":"set_auto_retry","enabled":"yes","id":"x"}"#,
            "invalid type",
        ),
        (
            r#"{"type":"set_steering_mode","mode":"sometimes","id":"x"}"#,
            "unknown variant",
        ),
    ] {
        let input = RpcInput::parse(line);
        let RpcInput::Invalid { id, command, error } = &input else {
            panic!("{line} -> {input:?}");
        };
        assert_eq!(id.as_deref(), Some("x"));
        assert!(error.contains(needle), "{error}");
        let response = input.error_response().unwrap();
        assert_eq!(&response.command, command);
        assert!(
            response
                .error_message()
                .unwrap()
                .starts_with(&format!("Invalid {command} command: "))
        );
    }
}

#[test]
fn unknown_fields_are_tolerated_and_separators_stay_in_strings() {
    let line =
        "{\"type\":\"prompt\",\"message\":\"a\u{2028}b\u{2029}c\",\"future\":[1],\"id\":\"p\"}";
    let RpcInput::Command(command) = RpcInput::parse(line) else {
        panic!("not a command");
    };
    let RpcCommandBody::Prompt { message, .. } = &command.body else {
        panic!("not a prompt");
    };
    assert_eq!(message, "a\u{2028}b\u{2029}c");
    let RpcInput::Command(command) = RpcInput::parse(r#"{"type":"abort","reason":"esc"}"#) else {
        panic!("not a command");
    };
    assert_eq!(command.body, RpcCommandBody::Abort);
    assert_eq!(command.id, None);
}

fn every_command() -> Vec<RpcCommandBody> {
    use RpcCommandBody::*;
    vec![
        Prompt {
            message: "What is in this image?".into(),
            images: Some(vec![knightcode_protocol::ContentBlock::image(
                "iVBORw0KGgo=",
                "image/png",
            )]),
            streaming_behavior: Some(StreamingBehavior::FollowUp),
        },
        Steer {
            message: "Stop and do this instead".into(),
            images: None,
        },
        FollowUp {
            message: "Then summarise".into(),
            images: None,
        },
        Abort,
        ClearQueue,
        NewSession {
            parent_session: Some("/s/parent.jsonl".into()),
        },
        GetState,
        GetMessages,
        SetModel {
            provider: "anthropic".into(),
            model_id: "claude-sonnet-4-5".into(),
        },
        CycleModel,
        GetAvailableModels,
        SetThinkingLevel {
            level: "high".into(),
        },
        CycleThinkingLevel,
        GetAvailableThinkingLevels,
        SetSteeringMode {
            mode: QueueMode::All,
        },
        SetFollowUpMode {
            mode: QueueMode::OneAtATime,
        },
        Compact {
            custom_instructions: Some("Focus on code changes".into()),
        },
        SetAutoCompaction { enabled: true },
        SetAutoRetry { enabled: false },
        AbortRetry,
        Bash {
            command: "ls -la".into(),
            exclude_from_context: Some(true),
        },
        AbortBash,
        GetSessionStats,
        ExportHtml {
            output_path: Some("/tmp/session.html".into()),
        },
        SwitchSession {
            session_path: "/s/other.jsonl".into(),
        },
        Fork {
            entry_id: "4b27e9df".into(),
        },
        Clone,
        GetForkMessages,
        GetEntries {
            since: Some("4b27e9df".into()),
        },
        GetTree,
        GetLastAssistantText,
        SetSessionName {
            name: "my-feature-work".into(),
        },
        GetCommands,
    ]
}

#[test]
fn every_command_type_round_trips() {
    let all = every_command();
    assert_eq!(all.len(), COMMAND_TYPES.len());
    let mut lines = Vec::new();
    for (body, name) in all.into_iter().zip(COMMAND_TYPES) {
        assert_eq!(body.command_type(), *name);
        let command = RpcCommand::new(Some(format!("req-{name}")), body);
        let line = serde_json::to_string(&command).unwrap();
        assert_eq!(RpcInput::parse(&line), RpcInput::Command(command));
        lines.push(line);
    }
    insta::assert_snapshot!("every_command", lines.join("\n"));
}

#[test]
fn images_of_a_prompt_are_reachable() {
    let body = &every_command()[0];
    let images: Vec<_> = body.images().collect();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].mime_type, "image/png");
    assert_eq!(RpcCommandBody::GetState.images().count(), 0);
}

#[test]
fn data_null_and_no_data_stay_distinct() {
    let with_null =
        r#"{"id":"1","type":"response","command":"cycle_model","success":true,"data":null}"#;
    let without = r#"{"id":"2","type":"response","command":"abort","success":true}"#;
    let a: RpcResponse = serde_json::from_str(with_null).unwrap();
    let b: RpcResponse = serde_json::from_str(without).unwrap();
    assert_eq!(serde_json::to_string(&a).unwrap(), with_null);
    assert_eq!(serde_json::to_string(&b).unwrap(), without);
    assert_eq!(a.data_as::<Option<CycleModelResult>>().unwrap(), None);
    assert_eq!(b.data_as::<Option<PromptResult>>().unwrap(), None);
    let made =
        RpcResponse::with_data(Some("1".into()), "cycle_model", &None::<CycleModelResult>).unwrap();
    assert_eq!(made, a);
}

#[test]
fn responses_keep_unknown_keys_and_number_formatting() {
    let line = r#"{"id":"s","type":"response","command":"get_session_stats","success":true,"data":{"sessionId":"x","userMessages":0,"assistantMessages":0,"toolCalls":0,"toolResults":0,"totalMessages":0,"tokens":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0},"cost":0.00009999999999999999,"contextUsage":{"tokens":null,"contextWindow":200000,"percent":null}},"trace":{"ms":1.5}}"#;
    let response: RpcResponse = serde_json::from_str(line).unwrap();
    assert_eq!(serde_json::to_string(&response).unwrap(), line);
    let stats: SessionStats = response.data_as().unwrap();
    assert_eq!(stats.session_file, None);
    assert_eq!(stats.context_usage.as_ref().unwrap().tokens, None);
    let typed = RpcResponse::with_data(response.id, "get_session_stats", &stats).unwrap();
    let mut typed_text = serde_json::to_string(&typed).unwrap();
    typed_text.truncate(typed_text.len() - 1);
    assert!(line.starts_with(&typed_text));
}

#[test]
fn errors_write_error_and_no_data() {
    let response = RpcResponse::error(
        Some("req-19".into()),
        "set_model",
        "Model not found: mock/no-such-model",
    );
    assert_eq!(
        serde_json::to_string(&response).unwrap(),
        r#"{"id":"req-19","type":"response","command":"set_model","success":false,"error":"Model not found: mock/no-such-model"}"#
    );
    assert_eq!(
        response.error_message(),
        Some("Model not found: mock/no-such-model")
    );
    assert!(response.data().is_none());
}

#[test]
fn ui_requests_write_the_reference_shapes() {
    let requests = [
        UiRequestKind::Select {
            title: "Allow?".into(),
            options: vec!["Allow".into(), "Block".into()],
            timeout: Some(10_000),
        },
        UiRequestKind::Confirm {
            title: "Clear session?".into(),
            message: "All messages will be lost.".into(),
            timeout: None,
        },
        UiRequestKind::Input {
            title: "Enter a value".into(),
            placeholder: Some("type something...".into()),
            timeout: None,
        },
        UiRequestKind::Editor {
            title: "Edit".into(),
            prefill: Some("Line 1\nLine 2".into()),
        },
        UiRequestKind::Notify {
            message: "Command blocked".into(),
            notify_type: Some(NotifyType::Warning),
        },
        UiRequestKind::SetStatus {
            status_key: "my-ext".into(),
            status_text: None,
        },
        UiRequestKind::SetWidget {
            widget_key: "my-ext".into(),
            widget_lines: Some(vec!["--- W ---".into()]),
            widget_placement: Some(WidgetPlacement::BelowEditor),
        },
        UiRequestKind::SetTitle {
            title: "knightcode - project".into(),
        },
        UiRequestKind::SetEditorText {
            text: "prefilled".into(),
        },
    ];
    let mut lines = Vec::new();
    for (n, kind) in requests.into_iter().enumerate() {
        let request = ExtensionUiRequest {
            id: format!("uuid-{n}"),
            kind,
        };
        let line = serde_json::to_string(&request).unwrap();
        assert_eq!(
            RpcOutput::parse(&line).unwrap(),
            RpcOutput::UiRequest(request.clone())
        );
        assert!(line.contains(&format!(r#""method":"{}""#, request.kind.method())));
        assert_eq!(request.kind.expects_response(), n < 4);
        lines.push(line);
    }
    insta::assert_snapshot!("ui_requests", lines.join("\n"));
}

#[test]
fn ui_responses_parse_leniently_and_are_not_commands() {
    for (line, reply) in [
        (
            r#"{"type":"extension_ui_response","id":"u","value":"Allow"}"#,
            UiReply::Value("Allow".into()),
        ),
        (
            r#"{"type":"extension_ui_response","id":"u","confirmed":false}"#,
            UiReply::Confirmed(false),
        ),
        (
            r#"{"type":"extension_ui_response","id":"u","cancelled":true}"#,
            UiReply::Cancelled,
        ),
        (
            r#"{"type":"extension_ui_response","id":"u"}"#,
            UiReply::Cancelled,
        ),
        (
            r#"{"type":"extension_ui_response","id":"u","value":7}"#,
            UiReply::Cancelled,
        ),
    ] {
        let RpcInput::UiResponse(response) = RpcInput::parse(line) else {
            panic!("{line}");
        };
        assert_eq!(response, ExtensionUiResponse::new("u", reply));
        assert!(RpcInput::parse(line).error_response().is_none());
    }
    for reply in [
        UiReply::Value("x".into()),
        UiReply::Confirmed(true),
        UiReply::Cancelled,
    ] {
        let response = ExtensionUiResponse::new("id-1", reply);
        let line = serde_json::to_string(&response).unwrap();
        assert_eq!(RpcInput::parse(&line), RpcInput::UiResponse(response));
    }
}

#[test]
fn rpc_only_events_are_agent_events() {
    let bash = r#"{"type":"bash_execution_update","id":"req-1","delta":"total 48\n"}"#;
    let error = r#"{"type":"extension_error","extensionPath":"/x/ext.ts","event":"tool_call","error":"boom"}"#;
    for line in [bash, error] {
        let RpcOutput::Event(event) = RpcOutput::parse(line).unwrap() else {
            panic!("{line}");
        };
        assert!(matches!(
            event,
            AgentEvent::BashExecutionUpdate { .. } | AgentEvent::ExtensionError { .. }
        ));
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
    assert!(RpcOutput::parse("not json").is_err());
}
