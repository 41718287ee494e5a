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
