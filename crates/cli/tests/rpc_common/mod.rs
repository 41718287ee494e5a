//! Harness of the RPC tests: the scripted model server, a [`Sandbox`] of the support module
//! (with the [`Models::Recorded`] pair), and `knightcode --mode rpc` driven over pipes,
//! either through the typed client or raw.
#![allow(dead_code, unused_imports)]

pub use crate::common::Models;
pub use crate::common::Sandbox;
pub use crate::common::WATCHDOG;
pub use crate::common::read_jsonl;
pub use crate::common::session_files;
pub use crate::common::usage;
pub use crate::common::watchdog;

use std::process::Stdio;

use knightcode_headless::rpc::RpcClient;
use knightcode_headless::rpc::RpcClientBuilder;
use knightcode_headless::rpc::RpcEvent;
use knightcode_headless::rpc::RpcEvents;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;
use tokio::io::AsyncBufReadExt as _;
use tokio::io::AsyncWriteExt as _;
use tokio::io::BufReader;
use tokio::io::Lines;
use tokio::process::Child;
use tokio::process::ChildStdin;
use tokio::process::ChildStdout;

impl Sandbox {
    /// `knightcode --provider mock --model mock-model --mode rpc ARGS` in the project, with a
    /// scrubbed environment, its stderr passed through.
    pub fn rpc_command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::from(self.command(&[
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "--mode",
            "rpc",
        ]));
        command
            .args(args)
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        command
    }

    /// `knightcode --provider mock --model mock-model --mode json -p PROMPT` in the project,
    /// killed with the test.
    pub fn json_command(&self, prompt: &str) -> tokio::process::Command {
        let mut command = tokio::process::Command::from(self.command(&[
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "--mode",
            "json",
            "-p",
            prompt,
        ]));
        command.kill_on_drop(true);
        command
    }
}

/// Everything `child` writes to its (piped) stderr until it exits, and its exit code.
pub async fn stderr_and_exit(child: &mut Child) -> (String, Option<i32>) {
    use tokio::io::AsyncReadExt as _;
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).await.unwrap();
    }
    let status = child.wait().await.unwrap();
    (stderr, status.code())
}

/// A server, a sandbox and a connected client.
pub struct Rpc {
    pub server: MockServer,
    pub sandbox: Sandbox,
    pub client: RpcClient,
    pub events: RpcEvents,
}

impl Rpc {
    pub async fn start(replies: Vec<ScriptedReply>) -> Self {
        Self::start_with(replies, &[]).await
    }

    pub async fn start_with(replies: Vec<ScriptedReply>, args: &[&str]) -> Self {
        Self::start_prepared(replies, args, |_| {}).await
    }

    /// Like [`Rpc::start_with`], with a chance to change the sandbox (settings) first.
    pub async fn start_prepared(
        replies: Vec<ScriptedReply>,
        args: &[&str],
        prepare: impl FnOnce(&Sandbox),
    ) -> Self {
        let server = MockServer::start(WireFormat::OpenAiCompletions, replies)
            .await
            .unwrap();
        let sandbox = Sandbox::new(&server);
        prepare(&sandbox);
        let (client, events) = RpcClientBuilder::new()
            .spawn_command(sandbox.rpc_command(args), "knightcode")
            .unwrap();
        Self {
            server,
            sandbox,
            client,
            events,
        }
    }

    /// The next thing the server wrote besides responses to our requests.
    pub async fn next(&mut self) -> RpcEvent {
        self.events.recv().await.expect("the server's output ended")
    }

    /// The next session event (other records are skipped).
    pub async fn next_agent(&mut self) -> AgentEvent {
        loop {
            if let RpcEvent::Agent(event) = self.next().await {
                return event;
            }
        }
    }

    /// Session events up to and including the first one matching `until`.
    pub async fn agent_until(&mut self, until: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
        let mut seen = Vec::new();
        loop {
            let event = self.next_agent().await;
            let done = until(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Session events up to and including `agent_settled`.
    pub async fn settled(&mut self) -> Vec<AgentEvent> {
        self.agent_until(|e| matches!(e, AgentEvent::AgentSettled { .. }))
            .await
    }

    /// Closes stdin and waits for the exit code.
    pub async fn shutdown(self) -> Option<i32> {
        drop(self.events);
        self.client.shutdown().await.unwrap().and_then(|s| s.code())
    }
}

/// `knightcode --mode rpc` with raw pipes, for what the typed client hides: the bytes as
/// written, garbage in, the extension-UI subprotocol, signals.
pub struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Raw {
    pub fn spawn(sandbox: &Sandbox, args: &[&str]) -> Self {
        let mut child = sandbox
            .rpc_command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        Self {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        }
    }

    pub async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Writes `command` as one line.
    pub async fn send(&mut self, command: Value) {
        self.write(format!("{command}\n").as_bytes()).await;
    }

    /// The next line, as written.
    pub async fn text(&mut self) -> String {
        self.lines.next_line().await.unwrap().expect("output ended")
    }

    pub async fn line(&mut self) -> Value {
        let line = self.text().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Records up to and including the first one matching `until`.
    pub async fn until(&mut self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.line().await;
            let done = until(&line);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// The response to the command `id` (records before it are skipped).
    pub async fn response(&mut self, id: &str) -> Value {
        self.until(|l| l["type"] == "response" && l["id"] == id)
            .await
            .pop()
            .unwrap()
    }

    /// Sends a prompt and returns its response.
    pub async fn prompt(&mut self, id: &str, message: &str) -> Value {
        self.send(json!({ "id": id, "type": "prompt", "message": message }))
            .await;
        self.response(id).await
    }

    /// The next extension-UI request (other records are skipped).
    pub async fn ui(&mut self) -> Value {
        loop {
            let line = self.line().await;
            if line["type"] == "extension_ui_request" {
                return line;
            }
        }
    }

    /// Answers the extension-UI request `id` with the fields of `answer`.
    pub async fn reply(&mut self, id: &Value, answer: Value) {
        let mut reply = json!({ "type": "extension_ui_response", "id": id });
        for (key, value) in answer.as_object().unwrap() {
            reply[key] = value.clone();
        }
        self.send(reply).await;
    }

    /// Sends a signal (`-TERM`, `-HUP`) to the process.
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().unwrap().to_string();
        let status = std::process::Command::new("kill")
            .args([name, pid.as_str()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Reads what is still written until the output ends, then the exit code; stdin stays
    /// open.
    pub async fn wait_exit(&mut self) -> (Vec<Value>, Option<i32>) {
        let mut rest = Vec::new();
        while let Some(line) = self.lines.next_line().await.unwrap() {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        let status = self.child.wait().await.unwrap();
        (rest, status.code())
    }

    /// Closes stdin; returns what was still written and the exit code.
    pub async fn finish(mut self) -> (Vec<Value>, Option<i32>) {
        drop(self.stdin.take());
        self.wait_exit().await
    }
}

/// Texts of the messages of `message_end` events, by role (`user: hi`).
pub fn message_ends(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message } => Some(format!(
                "{}: {}",
                message.role(),
                message.display_text().unwrap_or_default()
            )),
            _ => None,
        })
        .collect()
}

/// The `type` of each event, in order.
pub fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The user texts a model request carried (`messages[].content` of role `user`).
pub fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        })
        .collect()
}

pub fn assistant_stop(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::Assistant(a) => a.stop_reason.known().map(|r| r.as_str().to_owned()),
        _ => None,
    }
}

/// Whether a process is gone (or only a zombie waiting for its reaper).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}
