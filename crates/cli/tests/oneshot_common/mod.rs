//! Harness of the one-shot (print and JSON mode) tests: the real binary run to its end in a
//! [`Sandbox`] of the support module.
#![allow(dead_code, clippy::unwrap_used)]

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use std::process::Command;

use crate::common::Models;
pub use crate::common::Sandbox;
use knightcode_testkit::MockServer;

/// The sandbox of the one-shot runs: [`Models::Single`] served by `server`.
pub fn sandbox(server: &MockServer) -> Sandbox {
    Sandbox::with_models(server, Models::Single)
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The binary in the sandbox: its own HOME and agent dir, the project as cwd, no stdin.
pub fn command(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut command = sandbox.command(args);
    command.stdin(std::process::Stdio::null());
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

/// `knightcode ARGS` with `input` as one line on stdin: the exit code, stdout and stderr.
pub fn with_input(sandbox: &Sandbox, args: &[&str], input: &str) -> (i32, String, String) {
    let mut dialogue =
        knightcode_testkit::process::Dialogue::spawn(&mut sandbox.command(args), "knightcode")
            .unwrap();
    dialogue.write_line(input).unwrap();
    let (status, stdout, stderr) = dialogue.finish(PROCESS_LIMIT).unwrap();
    (status.code().unwrap_or(-1), stdout, stderr)
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

/// The description a recorded request gives the tool `name`; `None` when it is not offered.
pub fn offered_description(body: &serde_json::Value, name: &str) -> Option<String> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
        .and_then(|t| t["function"]["description"].as_str())
        .map(str::to_owned)
}
