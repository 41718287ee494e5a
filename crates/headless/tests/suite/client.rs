//! The typed RPC client against an in-test server: the test plays the server over in-memory
//! pipes with the real framing, replaying response shapes recorded from the reference agent.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use knightcode_headless::HeadlessError;
use knightcode_headless::rpc::RpcClient;
use knightcode_headless::rpc::RpcClientBuilder;
use knightcode_headless::rpc::RpcEvent;
use knightcode_headless::rpc::RpcEvents;
use knightcode_headless::rpc::SpawnOptions;
use knightcode_headless::rpc::framing::CommandReader;
use knightcode_headless::rpc::framing::LineWriter;
use knightcode_headless::rpc::framing::spawn_writer;
use knightcode_headless::rpc::ui_bridge::DialogOptions;
use knightcode_headless::rpc::ui_bridge::UiBridge;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_protocol::rpc::RpcCommand;
use knightcode_protocol::rpc::RpcCommandBody;
use knightcode_protocol::rpc::RpcInput;
use knightcode_protocol::rpc::RpcResponse;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use tokio::io::DuplexStream;

/// The server's ends of the two pipes.
struct Server {
    input: CommandReader<DuplexStream>,
    out: LineWriter,
}

impl Server {
    async fn command(&mut self) -> RpcCommand {
        match self.input.next_input().await.unwrap() {
            Some(RpcInput::Command(command)) => command,
            other => panic!("expected a command, got {other:?}"),
        }
    }

    async fn send(&self, line: &str) {
        self.out.send_json(line.to_owned()).await.unwrap();
    }

    async fn respond(&self, response: &RpcResponse) {
        self.out.send(response).await.unwrap();
    }
}

fn connect(builder: RpcClientBuilder) -> (RpcClient, RpcEvents, Server) {
    let (client_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    let (client, events) = builder.connect(client_in, client_out);
    let (out, _task) = spawn_writer(server_out, 64);
    let server = Server {
        input: CommandReader::new(server_in),
        out,
    };
    (client, events, server)
}

/// A response line recorded from the reference agent, with the id replaced.
fn recorded_response(request_id: &str, id: &str) -> String {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/rpc/rpc-out.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .find(|line| line.starts_with(&format!(r#"{{"id":"{request_id}","#)))
        .unwrap();
    line.replacen(
        &format!(r#""id":"{request_id}""#),
        &format!(r#""id":"{id}""#),
        1,
    )
}

#[tokio::test]
async fn typed_calls_read_recorded_responses() {
    let (client, _events, mut server) = connect(RpcClientBuilder::new());
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let state = tokio::spawn(async move { caller.get_state().await });
    let command = server.command().await;
    assert_eq!(command.body, RpcCommandBody::GetState);
    assert_eq!(command.id.as_deref(), Some("req_1"));
    server.send(&recorded_response("req-1", "req_1")).await;
    let state = state.await.unwrap().unwrap();
    assert_eq!(state.model.unwrap().id, "mock-model");
    assert_eq!(state.thinking_level, "medium");

    let caller = Arc::clone(&client);
    let stats = tokio::spawn(async move { caller.get_session_stats().await });
    let command = server.command().await;
    server
        .send(&recorded_response("req-17", command.id.as_deref().unwrap()))
        .await;
    assert_eq!(stats.await.unwrap().unwrap().tokens.total, 5045);

    // pi sends no data for prompt; newer servers send a disposition.
    let caller = Arc::clone(&client);
    let prompt = tokio::spawn(async move { caller.prompt("Say hello").await });
    let command = server.command().await;
    assert_eq!(command.body, RpcCommandBody::prompt("Say hello"));
    server
        .send(&recorded_response("req-4", command.id.as_deref().unwrap()))
        .await;
    assert_eq!(prompt.await.unwrap().unwrap(), None);
    let caller = Arc::clone(&client);
    let prompt = tokio::spawn(async move { caller.prompt("Again").await });
    let id = server.command().await.id;
    let data = serde_json::json!({"disposition": "queued"});
    server
        .respond(&RpcResponse::with_data(id, "prompt", &data).unwrap())
        .await;
    assert_eq!(
        prompt.await.unwrap().unwrap(),
        Some(PromptDisposition::Queued)
    );
}

#[tokio::test]
async fn concurrent_requests_are_matched_by_id() {
    let (client, _events, mut server) = connect(RpcClientBuilder::new());
    let client = Arc::new(client);
    let a = tokio::spawn({
        let client = Arc::clone(&client);
        async move { client.get_last_assistant_text().await }
    });
    let b = tokio::spawn({
        let client = Arc::clone(&client);
        async move { client.get_fork_messages().await }
    });
    let c = tokio::spawn({
        let client = Arc::clone(&client);
        async move { client.bash("echo from-rpc-bash").await }
    });
    let mut commands = Vec::new();
    for _ in 0..3 {
        commands.push(server.command().await);
    }
    // Answer in reverse order of arrival.
    for command in commands.iter().rev() {
        let id = command.id.as_deref().unwrap();
        let recorded = match command.body {
            RpcCommandBody::GetLastAssistantText => "req-14",
            RpcCommandBody::GetForkMessages => "req-15",
            RpcCommandBody::Bash { .. } => "req-11",
            ref other => panic!("unexpected {other:?}"),
        };
        server.send(&recorded_response(recorded, id)).await;
    }
    assert_eq!(
        a.await.unwrap().unwrap().as_deref(),
        Some("You're welcome.")
    );
    assert_eq!(b.await.unwrap().unwrap().len(), 3);
    let bash = c.await.unwrap().unwrap();
    assert_eq!(
        (bash.output.as_str(), bash.exit_code),
        ("from-rpc-bash\n", Some(0))
    );
}

#[tokio::test]
async fn failures_carry_the_server_message() {
    let (client, _events, mut server) = connect(RpcClientBuilder::new());
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let call = tokio::spawn(async move { caller.set_model("mock", "no-such-model").await });
    let command = server.command().await;
    assert_eq!(
        serde_json::to_string(&command).unwrap(),
        r#"{"type":"set_model","provider":"mock","modelId":"no-such-model","id":"req_1"}"#
    );
    server.send(&recorded_response("req-19", "req_1")).await;
    let error = call.await.unwrap().unwrap_err();
    assert!(matches!(&error, HeadlessError::Command { command, .. } if command == "set_model"));
    assert_eq!(error.to_string(), "Model not found: mock/no-such-model");

    // Data of the wrong shape is reported, not papered over.
    let caller = Arc::clone(&client);
    let call = tokio::spawn(async move { caller.get_state().await });
    let id = server.command().await.id;
    server
        .respond(&RpcResponse::with_data(id, "get_state", &[1, 2]).unwrap())
        .await;
    assert!(matches!(
        call.await.unwrap(),
        Err(HeadlessError::BadData { .. })
    ));
}

#[tokio::test]
async fn events_arrive_in_order_with_unmatched_responses() {
    let (client, mut events, mut server) = connect(RpcClientBuilder::new());
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let prompt = tokio::spawn(async move { caller.prompt("Say hello").await });
    let id = server.command().await.id;
    server.respond(&RpcResponse::ok(id, "prompt")).await;
    for line in [
        r#"{"type":"agent_start"}"#,
        // pi 0.73's message_update shape cannot be typed: it arrives as Other.
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hi","partial":{}},"message":{}}"#,
        r#"{"type":"bash_execution_update","id":"req_9","delta":"x\n"}"#,
        r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: oops"}"#,
        r#"{"id":"req_99","type":"response","command":"abort","success":true}"#,
        "this is not json",
        r#"{"type":"agent_settled","aborted":false}"#,
        r#"{"type":"turn_start"}"#,
    ] {
        server.send(line).await;
    }
    assert_eq!(prompt.await.unwrap().unwrap(), None);
    let events = events.until_settled().await;
    assert_eq!(events.len(), 7);
    assert!(matches!(events[0], RpcEvent::Agent(AgentEvent::AgentStart)));
    assert!(matches!(&events[1], RpcEvent::Other(value) if value["type"] == "message_update"));
    assert!(
        matches!(&events[2], RpcEvent::Agent(AgentEvent::BashExecutionUpdate { id: Some(id), .. }) if id == "req_9")
    );
    assert!(matches!(&events[3], RpcEvent::Response(r) if r.command == "parse" && r.id.is_none()));
    assert!(matches!(&events[4], RpcEvent::Response(r) if r.id.as_deref() == Some("req_99")));
    assert!(matches!(&events[5], RpcEvent::Unparsed { line, .. } if line == "this is not json"));
    assert!(matches!(
        events[6],
        RpcEvent::Agent(AgentEvent::AgentSettled { aborted: false })
    ));
}

/// The server side of a UI round trip: the bridge asks, the input loop routes the reply.
async fn ask_confirm(server: &mut Server) -> bool {
    let bridge = UiBridge::new(server.out.clone());
    let asking = bridge.clone();
    let answer = tokio::spawn(async move {
        asking
            .confirm("Allow?", "rm -rf build", &DialogOptions::default())
            .await
    });
    bridge.notify("working", None).await.unwrap();
    match server.input.next_input().await.unwrap() {
        Some(RpcInput::UiResponse(response)) => assert!(bridge.resolve(response)),
        other => panic!("expected a UI reply, got {other:?}"),
    }
    answer.await.unwrap()
}

#[tokio::test]
async fn a_ui_handler_answers_dialogs() {
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
    let builder = RpcClientBuilder::new().on_ui_request(move |request| {
        let seen = seen_tx.clone();
        async move {
            let answer = match &request.kind {
                UiRequestKind::Confirm { .. } => Some(UiReply::Confirmed(true)),
                _ => None,
            };
            seen.send(request.kind.method()).unwrap();
            answer
        }
    });
    let (_client, _events, mut server) = connect(builder);
    assert!(ask_confirm(&mut server).await);
    let mut methods = vec![seen_rx.recv().await.unwrap(), seen_rx.recv().await.unwrap()];
    methods.sort_unstable();
    assert_eq!(methods, ["confirm", "notify"]);
}

#[tokio::test]
async fn without_a_handler_dialogs_are_events_to_answer() {
    let (client, mut events, mut server) = connect(RpcClientBuilder::new());
    let client = Arc::new(client);
    let answering = Arc::clone(&client);
    let answerer = tokio::spawn(async move {
        let mut kinds = Vec::new();
        while let Some(event) = events.recv().await {
            let RpcEvent::UiRequest(request) = event else {
                continue;
            };
            kinds.push(request.kind.method());
            if request.kind.expects_response() {
                answering
                    .reply_ui(request.id, UiReply::Confirmed(false))
                    .await
                    .unwrap();
                return kinds;
            }
        }
        kinds
    });
    assert!(!ask_confirm(&mut server).await);
    let kinds = answerer.await.unwrap();
    assert!(kinds.contains(&"confirm"));
}

#[tokio::test]
async fn dropped_events_and_no_handler_cancel_dialogs() {
    let (client, events, mut server) = connect(RpcClientBuilder::new());
    drop(events);
    assert!(!ask_confirm(&mut server).await);
    // Responses still reach their requests.
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let call = tokio::spawn(async move { caller.abort().await });
    let id = server.command().await.id;
    server.respond(&RpcResponse::ok(id, "abort")).await;
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_closed_server_fails_pending_and_later_requests() {
    let (client, mut events, mut server) = connect(RpcClientBuilder::new());
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let call = tokio::spawn(async move { caller.compact(None).await });
    server.command().await;
    drop(server);
    assert!(matches!(
        call.await.unwrap(),
        Err(HeadlessError::Disconnected { .. })
    ));
    assert!(events.recv().await.is_none());
    assert!(matches!(
        client.get_state().await,
        Err(HeadlessError::Disconnected { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_request_timeout_gives_up_and_the_late_answer_becomes_an_event() {
    let builder = RpcClientBuilder::new().request_timeout(Duration::from_secs(30));
    let (client, mut events, mut server) = connect(builder);
    let client = Arc::new(client);
    let caller = Arc::clone(&client);
    let call = tokio::spawn(async move { caller.get_tree().await });
    let id = server.command().await.id;
    tokio::time::advance(Duration::from_secs(30)).await;
    let error = call.await.unwrap().unwrap_err();
    assert!(matches!(&error, HeadlessError::Timeout { command, .. } if command == "get_tree"));
    server
        .respond(&RpcResponse::ok(id.clone(), "get_tree"))
        .await;
    assert!(matches!(events.recv().await, Some(RpcEvent::Response(r)) if r.id == id));
}

#[tokio::test]
async fn shutdown_closes_the_server_input_and_waits_for_its_output() {
    let (client, mut events, mut server) = connect(RpcClientBuilder::new());
    let server_task = tokio::spawn(async move {
        // The server sees EOF, says goodbye and closes its output.
        assert!(server.input.next_input().await.unwrap().is_none());
        server
            .send(r#"{"type":"agent_settled","aborted":true}"#)
            .await;
    });
    let events_task = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = events.recv().await {
            seen.push(event);
        }
        seen
    });
    assert_eq!(client.shutdown().await.unwrap(), None);
    server_task.await.unwrap();
    let seen = events_task.await.unwrap();
    assert!(matches!(
        seen[..],
        [RpcEvent::Agent(AgentEvent::AgentSettled { aborted: true })]
    ));
}

#[tokio::test]
async fn spawns_a_process_and_shuts_it_down() {
    // A stand-in server: answers every line with a failure for req_1, exits 0 at EOF.
    let script = r#"while IFS= read -r line; do printf '%s\n' '{"id":"req_1","type":"response","command":"get_state","success":false,"error":"no session yet"}'; done"#;
    let options = SpawnOptions {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..SpawnOptions::default()
    };
    let (client, events) = RpcClientBuilder::new().spawn(&options).unwrap();
    drop(events);
    assert!(client.process_id().is_some());
    let error = client.get_state().await.unwrap_err();
    assert_eq!(error.to_string(), "no session yet");
    let status = client.shutdown().await.unwrap().unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn a_missing_binary_is_a_spawn_error() {
    let options = SpawnOptions::program("/nonexistent/knightcode").arg("--no-session");
    assert_eq!(options.args, ["--mode", "rpc", "--no-session"]);
    let error = RpcClientBuilder::new().spawn(&options).unwrap_err();
    assert!(
        matches!(&error, HeadlessError::Spawn { program, .. } if program == "/nonexistent/knightcode")
    );
}
