//! The support module of this crate's tests: the one `Sandbox` every harness runs the binary
//! in, the `watchdog` that bounds a whole async test, the `usage` builder, and the files the
//! binary writes read back. The harnesses build on it: `oneshot_common` (print and JSON
//! mode), `rpc_common` (`--mode rpc` over pipes), `tui_common` (a pseudo-terminal).
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use knightcode_testkit::MockServer;
use knightcode_testkit::MockUsage;
use serde_json::json;

/// Upper bound for a whole test or one awaited state: a hang fails instead of blocking the
/// suite. Never reached by a passing test, so it is not a timing assertion.
pub const WATCHDOG: Duration = Duration::from_secs(120);

/// Runs an async test under the [`WATCHDOG`]; a test that hangs fails.
pub async fn watchdog<F: std::future::Future>(test: F) -> F::Output {
    tokio::time::timeout(WATCHDOG, test)
        .await
        .expect("the test hung")
}

/// Token usage of a scripted reply.
pub fn usage(input: u64, output: u64) -> MockUsage {
    MockUsage {
        input,
        output,
        ..MockUsage::default()
    }
}

/// The models a sandbox's `models.json` offers: provider `mock`, served by the mock server.
/// Each harness keeps the set its tests (and snapshots) were written against.
#[derive(Clone, Copy, Debug)]
pub enum Models {
    /// `mock-model` (reasoning, priced) and `mock-model-2` (no reasoning, text and images),
    /// as in the reference recordings (`fixtures/pi/README.md`): the RPC tests.
    Recorded,
    /// `mock-model` alone, without reasoning: the one-shot runs.
    Single,
    /// `mock-model` (text and images) and `mock-reasoner` (reasoning): the terminal UI.
    WithReasoner,
}

impl Models {
    fn provider(self, base_url: &str) -> serde_json::Value {
        let (api_key, models) = match self {
            Self::Recorded => (
                "mock-api-key",
                json!([
                    {"id": "mock-model", "name": "Mock Model", "reasoning": true,
                     "input": ["text"], "contextWindow": 128000, "maxTokens": 16384,
                     "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
                    {"id": "mock-model-2", "name": "Mock Model Two", "reasoning": false,
                     "input": ["text", "image"], "contextWindow": 32000, "maxTokens": 4096,
                     "cost": {"input": 0.5, "output": 1.5, "cacheRead": 0.05, "cacheWrite": 0}}
                ]),
            ),
            Self::Single => (
                "test-key",
                json!([{"id": "mock-model", "name": "Mock", "reasoning": false,
                        "contextWindow": 128000, "maxTokens": 4096}]),
            ),
            Self::WithReasoner => (
                "test-key",
                json!([
                    {"id": "mock-model", "name": "Mock", "reasoning": false,
                     "input": ["text", "image"], "contextWindow": 128000, "maxTokens": 4096},
                    {"id": "mock-reasoner", "name": "Mock Reasoner", "reasoning": true,
                     "contextWindow": 200000, "maxTokens": 8192}
                ]),
            ),
        };
        json!({"providers": {"mock": {
            "baseUrl": base_url, "api": "openai-completions", "apiKey": api_key,
            "models": models}}})
    }
}

/// A home, an agent folder (with a `models.json` pointing at the mock server) and a project
/// folder holding `notes.txt` (`alpha`, `beta`, `gamma`), all in one temporary folder.
pub struct Sandbox {
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub agent: PathBuf,
    pub project: PathBuf,
    /// The server the models point at, when the sandbox owns it (the terminal tests start
    /// one per sandbox); see [`Sandbox::server`].
    server: Option<MockServer>,
}

impl Sandbox {
    /// The [`Models::Recorded`] pair served by `server`.
    pub fn new(server: &MockServer) -> Self {
        Self::with_models(server, Models::Recorded)
    }

    pub fn with_models(server: &MockServer, models: Models) -> Self {
        Self::with_url(&server.base_url(), models)
    }

    /// `models` served from `base_url` (a server the test runs itself, or none at all).
    pub fn with_url(base_url: &str, models: Models) -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let agent = root.path().join("agent");
        let project = root.path().join("project");
        for dir in [&home, &agent, &project] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let models = models.provider(base_url);
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(project.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
        Self {
            root,
            home,
            agent,
            project,
            server: None,
        }
    }

    /// Keeps `server` (the one the models point at) alive as long as the sandbox.
    pub fn owning(mut self, server: MockServer) -> Self {
        self.server = Some(server);
        self
    }

    /// The server the sandbox owns.
    pub fn server(&self) -> &MockServer {
        self.server
            .as_ref()
            .expect("this sandbox does not own its server; use the one it was made with")
    }

    /// The environment the binary runs with (and nothing else): `PATH`, the sandbox's `HOME`
    /// and agent folder, and the cloud metadata services switched off (a test on a cloud
    /// machine must neither find its credentials nor ask for them).
    pub fn env(&self) -> [(&'static str, OsString); 5] {
        [
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
            ("METADATA_SERVER_DETECTION", "none".into()),
            ("PATH", std::env::var_os("PATH").unwrap_or_default()),
            ("HOME", self.home.clone().into()),
            ("KNIGHTCODE_CODING_AGENT_DIR", self.agent.clone().into()),
        ]
    }

    /// `knightcode ARGS` in the project, with only [`Sandbox::env`] set.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode"));
        command
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .envs(self.env());
        command
    }

    /// Every session file, oldest first by name.
    pub fn session_files(&self) -> Vec<PathBuf> {
        session_files(&self.agent)
    }
}

/// Every session file under `<agent>/sessions`, sorted by name (oldest first).
pub fn session_files(agent: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(dirs) = std::fs::read_dir(agent.join("sessions")) else {
        return files;
    };
    for dir in dirs {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of a JSONL file as JSON values.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Makes a named pipe: a process blocked on it waits for the test, not for time.
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}
