//! Harness of the one-shot (print and JSON mode) tests: a sandbox with its own HOME, agent
//! folder (a `models.json` pointing at the mock server) and project folder, and the real
//! binary run in it.
#![allow(dead_code, clippy::unwrap_used)]

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use std::path::PathBuf;
use std::process::Command;

use knightcode_testkit::MockServer;

pub struct Sandbox {
    pub _root: tempfile::TempDir,
    pub home: PathBuf,
    pub agent: PathBuf,
    pub project: PathBuf,
}

pub fn sandbox(server: &MockServer) -> Sandbox {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let agent = root.path().join("agent");
    let project = root.path().join("project");
    for dir in [&home, &agent, &project] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": server.base_url(), "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock", "reasoning": false,
                    "contextWindow": 128000, "maxTokens": 4096}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    Sandbox {
        _root: root,
        home,
        agent,
        project,
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The binary in the sandbox: its own HOME and agent dir, the project as cwd, no stdin.
pub fn command(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_knightcode"));
    command
        .args(args)
        .current_dir(&sandbox.project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("KNIGHTCODE_CODING_AGENT_DIR", &sandbox.agent)
        .stdin(std::process::Stdio::null());
    command
}

pub fn knightcode(sandbox: &Sandbox, args: &[&str]) -> Run {
    let output = command(sandbox, args)
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// The names of the tools a recorded request offers the model.
pub fn offered_tools(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}
