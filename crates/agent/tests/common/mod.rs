//! Test doubles for the agent loop: a scripted provider, a controllable clock, closure tools,
//! and compact event descriptions.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use knightcode_agent::Agent;
use knightcode_agent::AgentConfig;
use knightcode_agent::AgentError;
use knightcode_agent::Clock;
use knightcode_agent::EventReceiver;
use knightcode_agent::ExecutionMode;
use knightcode_agent::RunOutcome;
use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolRegistry;
use knightcode_agent::clock::BoxFuture;
use knightcode_agent::event_channel;
use knightcode_ai::Api;
use knightcode_ai::CancellationToken;
use knightcode_ai::EventStream;
use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::RetryPolicy;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::AssistantMessageEvent;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolCall;
use knightcode_protocol::Usage;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc;

pub const NOW_MS: i64 = 1_750_000_000_000;

/// Fixed wall clock; the monotonic clock advances 7 ms per reading; sleeps are recorded and
/// return at once, or never when `block_sleeps` is set (to abort during a backoff).
#[derive(Debug, Default)]
pub struct FakeClock {
    ticks: AtomicU64,
    pub sleeps: Mutex<Vec<Duration>>,
    pub block_sleeps: AtomicBool,
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        NOW_MS
    }

    fn monotonic(&self) -> Duration {
        Duration::from_millis(self.ticks.fetch_add(7, Ordering::SeqCst))
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.sleeps.lock().unwrap().push(duration);
        if self.block_sleeps.load(Ordering::SeqCst) {
            Box::pin(std::future::pending())
        } else {
            Box::pin(async {})
        }
    }

    fn random(&self) -> f64 {
        0.0
    }
}

/// A fixed clock for `knightcode_ai::Client` (message timestamps); sleeps return at once.
#[derive(Debug)]
pub struct AiClock;

impl Clock for AiClock {
    fn now_ms(&self) -> i64 {
        NOW_MS
    }

    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }

    fn sleep(&self, _duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }

    fn random(&self) -> f64 {
        0.0
    }
}

pub fn model() -> Model {
    let mut model = Model::new(
        "fake",
        "fake-model",
        Api::OpenAiCompletions,
        "http://unused",
    );
    model.context_window = 100_000;
    model
}

/// One scripted answer: events, then either the end of the stream or a hang until cancelled.
#[derive(Clone)]
pub struct Reply {
    pub events: Vec<StreamEvent>,
    pub hang: bool,
}

/// Builds the events of a well-formed assistant response.
pub struct ReplyBuilder {
    events: Vec<StreamEvent>,
    message: AssistantMessage,
}

pub fn skeleton() -> AssistantMessage {
    AssistantMessage {
        api: "openai-completions".into(),
        provider: "fake".into(),
        model: "fake-model".into(),
        stop_reason: StopReason::Pending.into(),
        timestamp: Millis(NOW_MS),
        ..AssistantMessage::default()
    }
}

pub fn usage(input: u64, output: u64) -> Usage {
    let mut usage = Usage::default();
    usage.input.0 = input;
    usage.output.0 = output;
    usage.total_tokens.0 = input + output;
    usage
}

pub fn reply() -> ReplyBuilder {
    let message = skeleton();
    ReplyBuilder {
        events: vec![StreamEvent::Start {
            message: message.clone(),
        }],
        message,
    }
}

impl ReplyBuilder {
    /// A text block streamed in two deltas.
    pub fn text(mut self, text: &str) -> Self {
        let index = self.message.content.len();
        let split = text.len() / 2;
        self.events.push(StreamEvent::TextStart {
            content_index: index,
        });
        for delta in [&text[..split], &text[split..]] {
            self.events.push(StreamEvent::TextDelta {
                content_index: index,
                delta: delta.into(),
            });
        }
        self.events.push(StreamEvent::TextEnd {
            content_index: index,
            content: text.into(),
        });
        self.message.content.push(ContentBlock::text(text));
        self
    }

    pub fn tool_call(mut self, id: &str, name: &str, arguments: Value) -> Self {
        let index = self.message.content.len();
        let call = ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.clone(),
            ..ToolCall::default()
        };
        self.events.push(StreamEvent::ToolCallStart {
            content_index: index,
            id: id.into(),
            name: name.into(),
        });
        self.events.push(StreamEvent::ToolCallDelta {
            content_index: index,
            delta: arguments.to_string(),
        });
        self.events.push(StreamEvent::ToolCallEnd {
            content_index: index,
            tool_call: call.clone(),
        });
        self.message.content.push(ContentBlock::ToolCall(call));
        self
    }

    fn finish(mut self, reason: StopReason, error: Option<&str>) -> Reply {
        self.message.usage = usage(10, 5);
        self.events
            .push(StreamEvent::Usage(self.message.usage.clone()));
        self.message.stop_reason = reason.into();
        self.message.error_message = error.map(str::to_owned);
        let message = self.message;
        self.events.push(if error.is_some() {
            StreamEvent::Error { reason, message }
        } else {
            StreamEvent::Done { reason, message }
        });
        Reply {
            events: self.events,
            hang: false,
        }
    }

    /// Completes normally: `toolUse` when there are tool calls, else `stop`.
    pub fn done(self) -> Reply {
        let reason = if self.message.tool_calls().next().is_some() {
            StopReason::ToolUse
        } else {
            StopReason::Stop
        };
        self.finish(reason, None)
    }

    pub fn done_with(self, reason: StopReason) -> Reply {
        self.finish(reason, None)
    }

    /// Fails mid-stream with `error`.
    pub fn fail(self, error: &str) -> Reply {
        self.finish(StopReason::Error, Some(error))
    }

    /// Sends what was built so far, then stalls until the request is cancelled.
    pub fn hang(self) -> Reply {
        Reply {
            events: self.events,
            hang: true,
        }
    }
}

pub fn text_reply(text: &str) -> Reply {
    reply().text(text).done()
}

/// A failure before anything streamed (like an HTTP error).
pub fn error_reply(error: &str) -> Reply {
    let mut message = skeleton();
    message.stop_reason = StopReason::Error.into();
    message.error_message = Some(error.into());
    Reply {
        events: vec![StreamEvent::Error {
            reason: StopReason::Error,
            message,
        }],
        hang: false,
    }
}

/// A failure before anything streamed whose kind the provider decided (as the HTTP client
/// does from a status or error code), with `error` as its text.
pub fn classified_error_reply(error: &str, class: knightcode_ai::ErrorClass) -> Reply {
    let mut reply = error_reply(error);
    if let Some(StreamEvent::Error { message, .. }) = reply.events.last_mut() {
        message.error_class = knightcode_protocol::MemoryOnly(Some(class));
    }
    reply
}

/// A provider that plays scripted replies and records every request and cancel token.
#[derive(Default)]
pub struct ScriptedProvider {
    replies: Mutex<VecDeque<Reply>>,
    pub requests: Mutex<Vec<StreamRequest>>,
    pub cancels: Mutex<Vec<CancellationToken>>,
    /// What the store held when each request was made.
    pub persisted_at_request: Mutex<Vec<Vec<AgentMessage>>>,
    pub store: Mutex<Option<Arc<Mutex<Vec<AgentMessage>>>>>,
}

impl ScriptedProvider {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into()),
            ..Self::default()
        })
    }

    pub fn requests(&self) -> Vec<StreamRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// The conversation each request carried.
    pub fn contexts(&self) -> Vec<Vec<AgentMessage>> {
        self.requests()
            .into_iter()
            .map(|r| {
                r.context
                    .messages
                    .into_iter()
                    .map(std::sync::Arc::unwrap_or_clone)
                    .collect()
            })
            .collect()
    }
}

impl Provider for ScriptedProvider {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        self.requests.lock().unwrap().push(request.clone());
        self.cancels.lock().unwrap().push(cancel.clone());
        if let Some(store) = self.store.lock().unwrap().as_ref() {
            let held = store.lock().unwrap().clone();
            self.persisted_at_request.lock().unwrap().push(held);
        }
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| error_reply("the test script has no reply left"));
        // A small channel, so the agent's reading pace drives the provider like HTTP would.
        let (tx, rx) = mpsc::channel(2);
        tokio::spawn(async move {
            for event in reply.events {
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            if reply.hang {
                cancel.cancelled().await;
            }
        });
        EventStream::from_receiver(rx)
    }
}

/// A tool whose behaviour is a closure.
pub struct FnTool {
    definition: ToolDefinition,
    run: Arc<dyn Fn(Value, ToolContext) -> ToolFuture<'static> + Send + Sync>,
    prepare: Option<fn(Value) -> Value>,
}

impl Tool for FnTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn prepare_arguments(&self, raw: Value) -> Value {
        match self.prepare {
            Some(prepare) => prepare(raw),
            None => raw,
        }
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        (self.run)(arguments, context)
    }
}

pub fn text_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    })
}

pub fn definition(name: &str, execution: ExecutionMode) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        label: name.into(),
        description: format!("The {name} tool"),
        parameters: text_schema(),
        prompt_snippet: None,
        prompt_guidelines: Vec::new(),
        execution,
    }
}

pub fn tool<F, Fut>(name: &str, execution: ExecutionMode, run: F) -> Arc<dyn Tool>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<knightcode_agent::ToolOutput, knightcode_agent::ToolError>>
        + Send
        + 'static,
{
    Arc::new(FnTool {
        definition: definition(name, execution),
        run: Arc::new(move |args, ctx| Box::pin(run(args, ctx))),
        prepare: None,
    })
}

pub fn tool_with_prepare(tool_name: &str, prepare: fn(Value) -> Value) -> Arc<dyn Tool> {
    Arc::new(FnTool {
        definition: definition(tool_name, ExecutionMode::Parallel),
        run: Arc::new(|args, _ctx| {
            Box::pin(async move {
                Ok(knightcode_agent::ToolOutput::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            })
        }),
        prepare: Some(prepare),
    })
}

/// `echo`: returns its `text` argument.
pub fn echo() -> Arc<dyn Tool> {
    tool("echo", ExecutionMode::Parallel, |args, _ctx| async move {
        Ok(knightcode_agent::ToolOutput::text(
            args["text"].as_str().unwrap_or_default(),
        ))
    })
}

pub fn registry(tools: Vec<Arc<dyn Tool>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool);
    }
    registry
}

pub fn user(text: &str) -> AgentMessage {
    AgentMessage::user(text, Millis(NOW_MS))
}

/// A store that records appended and omitted messages.
pub struct RecordingStore {
    pub appended: Arc<Mutex<Vec<AgentMessage>>>,
    pub omitted: Arc<Mutex<Vec<AgentMessage>>>,
}

impl knightcode_agent::MessageStore for RecordingStore {
    fn append(&mut self, message: &AgentMessage) -> Result<(), knightcode_agent::PersistError> {
        self.appended.lock().unwrap().push(message.clone());
        Ok(())
    }

    fn omit(&mut self, message: &AgentMessage) -> Result<(), knightcode_agent::PersistError> {
        self.omitted.lock().unwrap().push(message.clone());
        Ok(())
    }
}

/// An agent wired to `provider`, with a fake clock and a store recording into `stored`.
pub struct Setup {
    pub agent: Agent,
    pub events: EventReceiver,
    pub clock: Arc<FakeClock>,
    pub stored: Arc<Mutex<Vec<AgentMessage>>>,
    pub omitted: Arc<Mutex<Vec<AgentMessage>>>,
}

pub fn setup(provider: Arc<ScriptedProvider>, tools: Vec<Arc<dyn Tool>>) -> Setup {
    let (tx, events) = event_channel(8);
    let clock = Arc::new(FakeClock::default());
    let stored = Arc::new(Mutex::new(Vec::new()));
    *provider.store.lock().unwrap() = Some(stored.clone());
    let mut config = AgentConfig::new(model());
    config.tools = registry(tools);
    config.system_prompt = Some("You are a test.".into());
    config.retry = RetryPolicy::default();
    let omitted = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::new(provider, config, tx)
        .with_clock(clock.clone())
        .with_store(Box::new(RecordingStore {
            appended: stored.clone(),
            omitted: omitted.clone(),
        }));
    Setup {
        agent,
        events,
        clock,
        stored,
        omitted,
    }
}

/// Runs `prompt` in a task and gathers events up to `agent_settled`. `on_event` sees each
/// event as it arrives (to steer or abort at the right moment).
pub async fn run_with(
    agent: Agent,
    events: &mut EventReceiver,
    prompt: Vec<AgentMessage>,
    mut on_event: impl FnMut(&AgentEvent),
) -> (Agent, Result<RunOutcome, AgentError>, Vec<AgentEvent>) {
    let mut agent = agent;
    let task = tokio::spawn(async move {
        let result = agent.prompt(prompt).await;
        (agent, result)
    });
    let mut seen = Vec::new();
    let collect = async {
        while let Some(event) = events.recv().await {
            on_event(&event);
            let settled = matches!(event, AgentEvent::AgentSettled { .. });
            seen.push(event);
            if settled {
                break;
            }
        }
    };
    // A safety net against a hung loop, not a timing assertion.
    tokio::time::timeout(Duration::from_secs(20), collect)
        .await
        .expect("the run did not settle");
    let (agent, result) = task.await.unwrap();
    (agent, result, seen)
}

pub async fn run(
    agent: Agent,
    events: &mut EventReceiver,
    prompt: &str,
) -> (Agent, Result<RunOutcome, AgentError>, Vec<AgentEvent>) {
    run_with(agent, events, vec![user(prompt)], |_| {}).await
}

/// One short line per event.
pub fn describe(events: &[AgentEvent]) -> Vec<String> {
    events.iter().map(describe_one).collect()
}

fn message_label(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(m) => format!("user {:?}", m.content.text()),
        AgentMessage::Assistant(m) => format!(
            "assistant {}{}",
            m.stop_reason.known().map_or("?", StopReason::as_str),
            m.error_message
                .as_deref()
                .map(|e| format!(" {e:?}"))
                .unwrap_or_default()
        ),
        AgentMessage::ToolResult(m) => format!(
            "toolResult {} {}{:?}",
            m.tool_call_id,
            if m.is_error { "error " } else { "" },
            knightcode_protocol::content::join_text(&m.content)
        ),
        other => other.role().to_owned(),
    }
}

fn describe_one(event: &AgentEvent) -> String {
    match event {
        AgentEvent::AgentStart => "agent_start".into(),
        AgentEvent::AgentEnd {
            messages,
            will_retry,
        } => format!("agent_end {} willRetry={will_retry}", messages.len()),
        AgentEvent::AgentSettled { aborted } => format!("agent_settled aborted={aborted}"),
        AgentEvent::TurnStart => "turn_start".into(),
        AgentEvent::TurnEnd { tool_results, .. } => format!("turn_end {}", tool_results.len()),
        AgentEvent::MessageStart { message } => format!("message_start {}", message_label(message)),
        AgentEvent::MessageEnd { message } => format!("message_end {}", message_label(message)),
        AgentEvent::MessageUpdate {
            assistant_message_event,
            ..
        } => {
            let kind = serde_json::to_value(assistant_message_event).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned();
            match assistant_message_event {
                AssistantMessageEvent::TextDelta { delta, .. } => {
                    format!("update {kind} {delta:?}")
                }
                _ => format!("update {kind}"),
            }
        }
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => format!("tool_start {tool_call_id}"),
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            partial_result,
            ..
        } => format!(
            "tool_update {tool_call_id} {:?}",
            knightcode_protocol::content::join_text(&partial_result.content)
        ),
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            is_error,
            duration_ms,
            ..
        } => format!(
            "tool_end {tool_call_id}{}{}",
            if *is_error { " error" } else { "" },
            if duration_ms.is_some() {
                ""
            } else {
                " (not run)"
            }
        ),
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => format!("queue_update {steering:?} {follow_up:?}"),
        AgentEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => format!("auto_retry_start {attempt}/{max_attempts} {delay_ms}ms {error_message:?}"),
        AgentEvent::AutoRetryEnd {
            success,
            attempt,
            final_error,
            cancelled,
        } => format!(
            "auto_retry_end success={success} attempt={attempt} {final_error:?}{}",
            if *cancelled { " cancelled" } else { "" }
        ),
        other => serde_json::to_value(other).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_owned(),
    }
}

/// Only the lines that do not describe streaming deltas.
pub fn without_updates(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .filter(|l| !l.starts_with("update "))
        .collect()
}
