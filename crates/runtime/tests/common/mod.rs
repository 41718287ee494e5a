//! A session builder for in-process runtime tests: a temp agent folder whose `models.json`
//! points at a testkit mock server, an empty environment (a key in the developer's
//! environment must not change which model a test runs), and the hooks under test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use knightcode_ai::MapEnv;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_runtime::AgentSession;
use knightcode_runtime::Services;
use knightcode_runtime::SessionHooks;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::SessionTarget;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

pub struct TestSession {
    pub server: MockServer,
    pub root: tempfile::TempDir,
    pub agent_dir: PathBuf,
    pub project: PathBuf,
}

impl TestSession {
    /// A mock server for `format` with these replies, and the folders around it.
    pub async fn new(format: WireFormat, replies: Vec<ScriptedReply>) -> Self {
        let server = MockServer::start(format, replies).await.unwrap();
        let root = tempfile::tempdir().unwrap();
        let agent_dir = root.path().join("agent");
        let project = root.path().join("project");
        std::fs::create_dir_all(&agent_dir).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": server.base_url(), "api": format.api_name(), "apiKey": "test-key",
        "models": [
            {"id": "mock-model", "name": "Mock", "contextWindow": 100000, "maxTokens": 1000},
            {"id": "mock-other", "name": "Other", "contextWindow": 100000, "maxTokens": 1000}
        ]}}});
        std::fs::write(agent_dir.join("models.json"), models.to_string()).unwrap();
        Self {
            server,
            root,
            agent_dir,
            project,
        }
    }

    /// Writes the agent folder's `settings.json`.
    pub fn with_settings(self, json: &str) -> Self {
        std::fs::write(self.agent_dir.join("settings.json"), json).unwrap();
        self
    }

    pub fn setup(&self) -> SessionSetup {
        let mut setup = SessionSetup::new(
            self.project.clone(),
            self.agent_dir.clone(),
            SessionTarget::New {
                dir: self.agent_dir.join("sessions"),
                session_id: None,
            },
        );
        setup.provider = Some("mock".into());
        setup.model = Some("mock-model".into());
        setup
    }

    pub fn services(&self, hooks: Arc<dyn SessionHooks>) -> Services {
        Services::default()
            .with_env(Arc::new(MapEnv::new(Vec::<(String, String)>::new())))
            .with_hooks(hooks)
    }

    /// Starts a session with `hooks`; its events are drained in the background.
    pub async fn start(&self, hooks: Arc<dyn SessionHooks>) -> AgentSession {
        let (session, mut events) = AgentSession::start_with(self.setup(), self.services(hooks))
            .await
            .unwrap();
        tokio::spawn(async move { while events.recv().await.is_some() {} });
        session
    }
}

/// The stored messages of the session, in order.
pub fn stored_messages(session: &AgentSession) -> Vec<AgentMessage> {
    let shared = session.session();
    let manager = shared.lock().unwrap();
    manager
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            SessionEntry::Message(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect()
}

/// Every string in a request body of any wire format (texts, but also roles and names).
pub fn body_strings(body: &serde_json::Value) -> Vec<String> {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            serde_json::Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out
}

/// The text of every message in an OpenAI chat-completions request body.
pub fn request_texts(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            other => other.to_string(),
        })
        .collect()
}

/// A spawned session (the actor) and its stream, with the test's own reply tags.
pub struct Running {
    pub test: TestSession,
    pub handle: knightcode_runtime::SessionHandle,
    pub events: knightcode_runtime::SessionEvents,
    next_tag: u64,
}

impl Running {
    /// Starts and spawns a session without hooks in `test`'s folders.
    pub async fn spawn(test: TestSession) -> Self {
        let hooks = Arc::new(knightcode_runtime::hooks::NoSessionHooks);
        let services = test.services(hooks);
        Self::spawn_with(test, services).await
    }

    /// Starts and spawns a session with these services (another provider, say).
    pub async fn spawn_with(test: TestSession, services: Services) -> Self {
        let (session, events) = AgentSession::start_with(test.setup(), services)
            .await
            .unwrap();
        let (handle, events) = session.spawn(events);
        Self {
            test,
            handle,
            events,
            next_tag: 0,
        }
    }

    /// A session the test started and spawned itself (another setup).
    pub fn from_parts(
        test: TestSession,
        handle: knightcode_runtime::SessionHandle,
        events: knightcode_runtime::SessionEvents,
    ) -> Self {
        Self {
            test,
            handle,
            events,
            next_tag: 0,
        }
    }

    /// Sends a command whose reply comes in the stream; returns its tag.
    pub fn send(&mut self, command: knightcode_runtime::Command) -> u64 {
        let tag = self.next_tag;
        self.next_tag += 1;
        self.handle
            .send(command, knightcode_runtime::Responder::Stream(tag));
        tag
    }

    /// Reads the stream until `stop` holds for an item; returns everything read.
    pub async fn read_until(
        &mut self,
        stop: impl Fn(&knightcode_runtime::SessionEvent) -> bool,
    ) -> Vec<knightcode_runtime::SessionEvent> {
        let mut seen = Vec::new();
        let read = async {
            while let Some(item) = self.events.recv().await {
                let done = stop(&item);
                seen.push(item);
                if done {
                    return;
                }
            }
            panic!("the stream ended first: {seen:?}");
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), read)
            .await
            .expect("watchdog: the awaited event never came");
        seen
    }

    /// Everything up to the reply to `tag`, and the reply.
    pub async fn reply_with_events(
        &mut self,
        tag: u64,
    ) -> (
        Vec<knightcode_runtime::SessionEvent>,
        knightcode_runtime::Reply,
    ) {
        use knightcode_runtime::SessionEvent;
        let mut seen = self
            .read_until(|e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == tag))
            .await;
        match seen.pop() {
            Some(SessionEvent::Reply { reply, .. }) => (seen, reply),
            other => panic!("{other:?}"),
        }
    }

    /// The reply to `tag`.
    pub async fn reply(&mut self, tag: u64) -> knightcode_runtime::Reply {
        self.reply_with_events(tag).await.1
    }

    /// A prompt run to its end; the events it caused.
    pub async fn prompt(&mut self, text: &str) -> Vec<knightcode_runtime::SessionEvent> {
        use knightcode_runtime::SessionEvent;
        let tag = self.send(knightcode_runtime::Command::Prompt {
            text: text.to_owned(),
            images: Vec::new(),
            queueing: None,
            source: knightcode_runtime::hooks::InputSource::Rpc,
        });
        let (mut seen, reply) = self.reply_with_events(tag).await;
        assert_eq!(
            reply,
            knightcode_runtime::Reply::Prompt(knightcode_protocol::rpc::PromptDisposition::Started)
        );
        seen.extend(
            self.read_until(|e| {
                matches!(
                    e,
                    SessionEvent::Agent(knightcode_protocol::AgentEvent::AgentSettled { .. })
                )
            })
            .await,
        );
        seen
    }

    /// `compact` with an optional focus: the events up to its reply, and the reply.
    pub async fn compact(
        &mut self,
        focus: Option<&str>,
    ) -> (
        Vec<knightcode_runtime::SessionEvent>,
        knightcode_runtime::Reply,
    ) {
        let tag = self.send(knightcode_runtime::Command::Compact {
            custom_instructions: focus.map(str::to_owned),
        });
        self.reply_with_events(tag).await
    }

    /// The strings of the mock server's request `index` (any wire format).
    pub fn request_texts_at(&self, index: usize) -> Vec<String> {
        body_strings(&self.test.server.requests()[index].body)
    }

    /// Every entry of the session file.
    pub async fn entries(&self) -> Vec<SessionEntry> {
        let knightcode_runtime::Reply::Entries(entries) = self
            .handle
            .request(knightcode_runtime::Command::GetEntries { since: None })
            .await
        else {
            panic!("no entries");
        };
        entries.entries
    }

    /// The compaction entries of the session file.
    pub async fn compactions(&self) -> Vec<SessionEntry> {
        self.entries()
            .await
            .into_iter()
            .filter(|e| matches!(e, SessionEntry::Compaction(_)))
            .collect()
    }

    /// Two questions answered, then `compact` sent; returns its tag once the summary
    /// request (the reply scripted after the two answers, which must stall) has stalled.
    pub async fn two_turns_then_stalled_compact(&mut self) -> u64 {
        self.prompt("first question").await;
        self.prompt("second question").await;
        let tag = self.send(knightcode_runtime::Command::Compact {
            custom_instructions: None,
        });
        self.test.server.wait_for_stalls(1).await;
        tag
    }

    /// Everything up to the next `agent_settled`.
    pub async fn until_settled(&mut self) -> Vec<knightcode_runtime::SessionEvent> {
        self.read_until(|e| {
            matches!(
                e,
                knightcode_runtime::SessionEvent::Agent(
                    knightcode_protocol::AgentEvent::AgentSettled { .. }
                )
            )
        })
        .await
    }
}

/// Keeps ~5 tokens verbatim, so every earlier turn is compacted.
pub const KEEP_5_TOKENS: &str = r#"{"compaction": {"keepRecentTokens": 5}}"#;

/// A context overflow as OpenAI chat completions reports it (HTTP 400).
pub fn overflow() -> ScriptedReply {
    ScriptedReply::fault(knightcode_testkit::Fault::HttpStatus {
        status: 400,
        retry_after: None,
        body: Some(
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#
                .into(),
        ),
        headers: Vec::new(),
    })
}

/// The `compaction_start` / `compaction_end` events among `seen`.
pub fn compaction_events(
    seen: &[knightcode_runtime::SessionEvent],
) -> Vec<knightcode_protocol::AgentEvent> {
    use knightcode_protocol::AgentEvent;
    seen.iter()
        .filter_map(|e| match e {
            knightcode_runtime::SessionEvent::Agent(
                event @ (AgentEvent::CompactionStart { .. } | AgentEvent::CompactionEnd { .. }),
            ) => Some(event.clone()),
            _ => None,
        })
        .collect()
}
