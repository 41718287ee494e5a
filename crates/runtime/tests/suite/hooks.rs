//! The hook points, each driven through a real session against the mock provider: what a
//! hook returns must change what the model is sent, what the tools do, or what is stored.

use crate::common;

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use knightcode_agent::AgentHooks;
use knightcode_agent::BoundaryAction;
use knightcode_agent::HookFuture;
use knightcode_agent::OverflowRecovery;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolResultPatch;
use knightcode_agent::TurnSummary;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_runtime::SessionHooks;
use knightcode_runtime::hooks::AgentStart;
use knightcode_runtime::hooks::AgentStartChanges;
use knightcode_runtime::hooks::InputAction;
use knightcode_runtime::hooks::PromptInput;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::TestSession;
use common::overflow;
use common::request_texts;
use common::stored_messages;

fn ready<'a, T: Send + 'a>(value: T) -> HookFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

/// Blocks every `write` call.
struct BlockWrites;

impl AgentHooks for BlockWrites {
    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        ready(if call.tool_name == "write" {
            ToolCallVerdict::Block("Writing files is not allowed in this project".into())
        } else {
            ToolCallVerdict::Proceed
        })
    }
}
impl SessionHooks for BlockWrites {}

fn write_call(path: &str) -> ScriptedReply {
    ScriptedReply::tool_call(
        "call_1",
        "write",
        json!({"path": path, "content": "from the model"}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_call_reaches_the_model_as_an_error_with_the_reason() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![write_call("a.txt"), ScriptedReply::text("understood")],
    )
    .await;
    let mut session = test.start(Arc::new(BlockWrites)).await;
    let outcome = session.prompt("write a.txt", Vec::new()).await.unwrap();
    assert_eq!(outcome.error, None);
    assert!(!test.project.join("a.txt").exists(), "the write ran");
    let requests = test.server.requests();
    assert_eq!(requests.len(), 2);
    let tool_message = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(
        tool_message["content"],
        "Writing files is not allowed in this project"
    );
    let result = stored_messages(&session)
        .into_iter()
        .find_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert!(result.is_error);
}

/// Sends every `write` to `redirected.txt`.
struct RedirectWrites;

impl AgentHooks for RedirectWrites {
    fn before_tool_call<'a>(
        &'a self,
        call: PendingToolCall<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolCallVerdict> {
        let mut arguments = call.arguments.clone();
        arguments["path"] = json!("redirected.txt");
        ready(ToolCallVerdict::Rewrite(arguments))
    }
}
impl SessionHooks for RedirectWrites {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewritten_arguments_are_what_the_tool_runs() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![write_call("a.txt"), ScriptedReply::text("done")],
    )
    .await;
    let mut session = test.start(Arc::new(RedirectWrites)).await;
    session.prompt("write a.txt", Vec::new()).await.unwrap();
    assert!(!test.project.join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(test.project.join("redirected.txt")).unwrap(),
        "from the model"
    );
}

/// Replaces the text of every result.
struct RedactResults;

impl AgentHooks for RedactResults {
    fn after_tool_result<'a>(
        &'a self,
        result: knightcode_agent::FinishedResult<'a>,
        arguments: &'a Value,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, ToolResultPatch> {
        ready(ToolResultPatch {
            content: Some(vec![ContentBlock::text(format!(
                "[redacted {} of {}]",
                result.tool_name, arguments["path"]
            ))]),
            details: None,
            is_error: Some(true),
            structured_content: None,
        })
    }
}
impl SessionHooks for RedactResults {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_patch_changes_what_the_model_and_the_session_see() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![write_call("a.txt"), ScriptedReply::text("ok")],
    )
    .await;
    let mut session = test.start(Arc::new(RedactResults)).await;
    session.prompt("write a.txt", Vec::new()).await.unwrap();
    assert!(
        test.project.join("a.txt").exists(),
        "the tool itself still ran"
    );
    let texts = request_texts(&test.server.requests()[1].body);
    assert!(texts.iter().any(|t| t == "[redacted write of \"a.txt\"]"));
    let result = stored_messages(&session)
        .into_iter()
        .find_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert!(result.is_error);
    assert_eq!(
        result.content.0[0].as_text(),
        Some("[redacted write of \"a.txt\"]")
    );
}

/// Adds a user note to every request's messages, without storing it.
struct AddNote;

impl AgentHooks for AddNote {
    fn transform_context<'a>(
        &'a self,
        mut messages: Vec<Arc<AgentMessage>>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Vec<Arc<AgentMessage>>> {
        messages.push(Arc::new(AgentMessage::user(
            "NOTE FROM THE CONTEXT HOOK",
            Millis(1),
        )));
        ready(messages)
    }
}
impl SessionHooks for AddNote {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_transform_changes_the_request_not_the_session() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let mut session = test.start(Arc::new(AddNote)).await;
    session.prompt("hello", Vec::new()).await.unwrap();
    let texts = request_texts(&test.server.requests()[0].body);
    assert_eq!(texts.last().unwrap(), "NOTE FROM THE CONTEXT HOOK");
    assert!(texts.iter().any(|t| t == "hello"));
    assert!(
        stored_messages(&session)
            .iter()
            .all(|m| !matches!(m, AgentMessage::User(u) if u.content.text().contains("NOTE")))
    );
}

/// Adds a field to the provider payload.
struct MarkPayload;

impl AgentHooks for MarkPayload {
    fn inspects_provider_payload(&self) -> bool {
        true
    }

    fn provider_payload<'a>(
        &'a self,
        payload: &'a Value,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<Value>> {
        let mut replaced = payload.clone();
        replaced["x_marked_by_hook"] = json!(true);
        ready(Some(replaced))
    }
}
impl SessionHooks for MarkPayload {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_hook_replaces_the_body_sent() {
    let test = TestSession::new(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let mut session = test.start(Arc::new(MarkPayload)).await;
    session.prompt("hello", Vec::new()).await.unwrap();
    let body = &test.server.requests()[0].body;
    assert_eq!(body["x_marked_by_hook"], json!(true));
    assert!(body["messages"].is_array(), "the rest of the body is kept");
}

/// Recovers from an overflow with a one-message context.
#[derive(Default)]
struct Compactor {
    calls: AtomicUsize,
}

impl AgentHooks for Compactor {
    fn context_overflow<'a>(
        &'a self,
        failed: &'a AssistantMessage,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<OverflowRecovery>> {
        assert!(failed.error_message.is_some());
        self.calls.fetch_add(1, Ordering::SeqCst);
        ready(Some(OverflowRecovery {
            context: vec![Arc::new(AgentMessage::user(
                "SUMMARY OF THE EARLIER CONVERSATION",
                Millis(1),
            ))],
        }))
    }
}
impl SessionHooks for Compactor {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_calls_the_overflow_hook_and_the_request_is_retried() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![overflow(), ScriptedReply::text("recovered")],
    )
    .await;
    let hooks = Arc::new(Compactor::default());
    let mut session = test.start(hooks.clone()).await;
    let outcome = session.prompt("a huge prompt", Vec::new()).await.unwrap();
    assert_eq!(outcome.error, None);
    assert_eq!(hooks.calls.load(Ordering::SeqCst), 1);
    let requests = test.server.requests();
    assert_eq!(requests.len(), 2);
    let retried = request_texts(&requests[1].body);
    assert!(
        retried
            .iter()
            .any(|t| t == "SUMMARY OF THE EARLIER CONVERSATION")
    );
    assert!(!retried.iter().any(|t| t == "a huge prompt"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_overflow_is_not_recovered_again() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, vec![overflow(), overflow()]).await;
    let hooks = Arc::new(Compactor::default());
    let mut session = test.start(hooks.clone()).await;
    let outcome = session.prompt("a huge prompt", Vec::new()).await.unwrap();
    assert!(outcome.error.unwrap().contains("maximum context length"));
    assert_eq!(hooks.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        test.server.requests().len(),
        2,
        "overflow is never auto-retried"
    );
}

/// Rewrites prompts; consumes `/handled`.
struct Shout;

impl AgentHooks for Shout {}
impl SessionHooks for Shout {
    fn transform_input<'a>(
        &'a self,
        input: &'a PromptInput,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, InputAction> {
        ready(if input.text == "/handled" {
            InputAction::Handled
        } else {
            InputAction::Transform {
                text: input.text.to_uppercase(),
                images: input.images.clone(),
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_transform_changes_the_stored_user_message() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let mut session = test.start(Arc::new(Shout)).await;
    session.prompt("hello there", Vec::new()).await.unwrap();
    let users: Vec<String> = stored_messages(&session)
        .iter()
        .filter_map(|m| match m {
            AgentMessage::User(u) => Some(u.content.text()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["HELLO THERE"]);
    assert!(request_texts(&test.server.requests()[0].body).contains(&"HELLO THERE".to_owned()));

    // A handled input runs nothing and stores nothing.
    session.prompt("/handled", Vec::new()).await.unwrap();
    assert_eq!(test.server.requests().len(), 1);
    assert_eq!(
        stored_messages(&session).len(),
        3,
        "system prompt, user, reply"
    );
}

/// Adds a custom message and forces the system prompt.
struct StartChanges {
    seen_prompt: Mutex<Option<String>>,
}

impl AgentHooks for StartChanges {}
impl SessionHooks for StartChanges {
    fn before_agent_start<'a>(
        &'a self,
        start: AgentStart<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, AgentStartChanges> {
        *self.seen_prompt.lock().unwrap() = Some(start.prompt.to_owned());
        assert!(!start.system_prompt.is_empty());
        ready(AgentStartChanges {
            messages: vec![AgentMessage::user("INJECTED AT START", Millis(1))],
            system_prompt: Some("FORCED SYSTEM PROMPT".into()),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_agent_start_adds_messages_and_forces_the_system_prompt() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let hooks = Arc::new(StartChanges {
        seen_prompt: Mutex::new(None),
    });
    let mut session = test.start(hooks.clone()).await;
    session.prompt("go", Vec::new()).await.unwrap();
    assert_eq!(hooks.seen_prompt.lock().unwrap().as_deref(), Some("go"));
    let body = &test.server.requests()[0].body;
    assert_eq!(body["messages"][0]["content"], "FORCED SYSTEM PROMPT");
    let texts = request_texts(body);
    let go = texts.iter().position(|t| t == "go").unwrap();
    let injected = texts.iter().position(|t| t == "INJECTED AT START").unwrap();
    assert!(go < injected);
}

/// At the first turn's end adds a message; before settling asks for one more request once.
#[derive(Default)]
struct Boundaries {
    settles: AtomicUsize,
    turns: Mutex<Vec<usize>>,
}

impl AgentHooks for Boundaries {
    fn turn_end<'a>(
        &'a self,
        turn: TurnSummary<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        self.turns.lock().unwrap().push(turn.turn_index);
        ready(BoundaryAction {
            messages: (turn.turn_index == 0)
                .then(|| AgentMessage::user("NOTE AFTER TURN ZERO", Millis(2)))
                .into_iter()
                .collect(),
            ..BoundaryAction::default()
        })
    }

    fn before_settle<'a>(
        &'a self,
        _last: Option<&'a AssistantMessage>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, BoundaryAction> {
        let first = self.settles.fetch_add(1, Ordering::SeqCst) == 0;
        ready(BoundaryAction {
            continue_run: first,
            ..BoundaryAction::default()
        })
    }
}
impl SessionHooks for Boundaries {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boundary_hooks_add_messages_and_continue_the_run_once() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("first"), ScriptedReply::text("second")],
    )
    .await;
    let hooks = Arc::new(Boundaries::default());
    let mut session = test.start(hooks.clone()).await;
    session.prompt("go", Vec::new()).await.unwrap();
    let requests = test.server.requests();
    assert_eq!(requests.len(), 2, "one more request after the settle hook");
    assert!(request_texts(&requests[1].body).contains(&"NOTE AFTER TURN ZERO".to_owned()));
    assert_eq!(*hooks.turns.lock().unwrap(), [0, 1]);
    assert_eq!(hooks.settles.load(Ordering::SeqCst), 2);
    assert!(
        stored_messages(&session).iter().any(
            |m| matches!(m, AgentMessage::User(u) if u.content.text() == "NOTE AFTER TURN ZERO")
        )
    );
}
