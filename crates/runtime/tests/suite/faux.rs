//! A session with the in-process faux provider (no HTTP): the runtime's own behaviour —
//! what it stores and what it sends — without a wire format in between.

use crate::common;

use std::sync::Arc;

use knightcode_protocol::AgentMessage;
use knightcode_runtime::AgentSession;
use knightcode_runtime::hooks::NoSessionHooks;
use knightcode_testkit::FauxProvider;
use knightcode_testkit::FauxReply;
use knightcode_testkit::WireFormat;
use serde_json::json;

use common::TestSession;
use common::stored_messages;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_runs_and_its_result_reaches_the_next_request() {
    // The mock server only provides models.json here; it is never called.
    let test = TestSession::new(WireFormat::OpenAiCompletions, Vec::new()).await;
    let faux = FauxProvider::new([
        FauxReply::ToolCall {
            id: "call_1".into(),
            name: "write".into(),
            arguments: json!({"path": "notes.txt", "content": "faux"}),
        },
        FauxReply::Text("written".into()),
    ]);
    let services = test
        .services(Arc::new(NoSessionHooks))
        .with_provider(Arc::new(faux.clone()));
    let (mut session, mut events) = AgentSession::start_with(test.setup(), services)
        .await
        .unwrap();
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    let outcome = session.prompt("write notes", Vec::new()).await.unwrap();
    assert_eq!(outcome.error, None);
    assert_eq!(
        std::fs::read_to_string(test.project.join("notes.txt")).unwrap(),
        "faux"
    );
    let requests = faux.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        test.server.requests().is_empty(),
        "no HTTP request was made"
    );
    let last = requests[1].context.messages.last().unwrap();
    assert!(matches!(&**last, AgentMessage::ToolResult(r) if !r.is_error));
    let roles: Vec<String> = stored_messages(&session)
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_response_is_the_outcomes_error() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, Vec::new()).await;
    let faux = FauxProvider::new([FauxReply::Error("the faux model refused".into())]);
    let services = test
        .services(Arc::new(NoSessionHooks))
        .with_provider(Arc::new(faux));
    let (mut session, mut events) = AgentSession::start_with(test.setup(), services)
        .await
        .unwrap();
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    let outcome = session.prompt("hi", Vec::new()).await.unwrap();
    assert_eq!(outcome.error.as_deref(), Some("the faux model refused"));
}
