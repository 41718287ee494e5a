//! The fault matrix of docs/reliability.md: each provider fault in print, JSON and RPC mode,
//! with the exit code, the closing events, the message the user reads and the number of
//! requests (retries) each must give, and no hang; the interactive mode shows the failure and
//! takes the next key. Every run also leaves a session whose prompt and failed answer are
//! stored.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::process::Stdio;
use std::sync::mpsc;

use knightcode_testkit::process::{OutputWithin, PROCESS_LIMIT};
use knightcode_testkit::{Chunking, Fault, MockServer, ScriptedReply, WireFormat};
use serde_json::Value;

use crate::common::{Models, Sandbox, read_jsonl};

/// Retries quick, so the matrix runs in seconds (the cells that honour `retry-after` still
/// wait the second it asks for); the idle timeout short only where a stall is the fault, so
/// a busy machine cannot make a slow stream look like one.
fn settings(cell: &Cell) -> String {
    let idle_ms = if cell.fault.starts_with("stall") {
        300
    } else {
        60_000
    };
    format!(r#"{{"retry": {{"baseDelayMs": 1, "maxRetries": 2}}, "httpIdleTimeoutMs": {idle_ms}}}"#)
}

/// Where the model is and what it does.
enum Model {
    Scripted(Vec<ScriptedReply>),
    /// A port nothing listens on.
    Refused,
    /// A listener that takes each request and closes the connection without answering.
    Hangup,
    /// The mock (plain HTTP) addressed as `https://`.
    NotTls(Vec<ScriptedReply>),
}

struct Cell {
    fault: &'static str,
    model: fn() -> Model,
    /// `None`: the run succeeds with this many characters of answer.
    message: Option<&'static str>,
    answer_chars: usize,
    /// Requests that reach the server (`None` where no server counts them).
    requests: Option<usize>,
    /// What the interactive mode shows at the end (it words provider errors its own way).
    screen: &'static str,
}

fn status(status: u16, retry_after: Option<&str>) -> ScriptedReply {
    ScriptedReply::fault(Fault::HttpStatus {
        status,
        retry_after: retry_after.map(str::to_owned),
        body: None,
        headers: Vec::new(),
    })
}

fn always(reply: ScriptedReply) -> Vec<ScriptedReply> {
    vec![reply; 3]
}

const TEN_MB: usize = 10 * 1024 * 1024;

fn cells() -> Vec<Cell> {
    vec![
        Cell {
            fault: "429",
            model: || Model::Scripted(always(status(429, None))),
            message: Some("429 Rate limit exceeded"),
            answer_chars: 0,
            requests: Some(3),
            screen: "Error: Rate limited by mock (gave up after 2 retries)",
        },
        Cell {
            fault: "429 retry-after 1",
            model: || Model::Scripted(always(status(429, Some("1")))),
            message: Some("429 Rate limit exceeded"),
            answer_chars: 0,
            requests: Some(3),
            screen: "Error: Rate limited by mock (gave up after 2 retries)",
        },
        Cell {
            fault: "429 retry-after 3600",
            model: || Model::Scripted(always(status(429, Some("3600")))),
            message: Some("Server requested 3600s retry delay (max: 60s)"),
            answer_chars: 0,
            requests: Some(1),
            screen: "Error: Rate limited by mock: Server requested 3600s retry delay (max: 60s)",
        },
        Cell {
            fault: "500",
            model: || Model::Scripted(always(status(500, None))),
            message: Some("500 Internal server error"),
            answer_chars: 0,
            requests: Some(3),
            screen: "Error: mock had a server error (500) (gave up after 2 retries)",
        },
        Cell {
            fault: "500 then an answer",
            model: || {
                Model::Scripted(vec![
                    status(500, Some("1")),
                    ScriptedReply::text("Recovered."),
                ])
            },
            message: None,
            answer_chars: "Recovered.".len(),
            requests: Some(2),
            screen: "Recovered.",
        },
        Cell {
            fault: "529",
            model: || Model::Scripted(always(status(529, None))),
            message: Some("529 The server is overloaded"),
            answer_chars: 0,
            requests: Some(3),
            screen: "Error: mock is overloaded (529) (gave up after 2 retries)",
        },
        Cell {
            fault: "cut mid-stream",
            model: || {
                Model::Scripted(always(
                    ScriptedReply::text("Half of it").with_fault(Fault::ResetAfterEvents(2)),
                ))
            },
            message: Some("The connection closed before the answer was complete"),
            answer_chars: 0,
            requests: Some(3),
            screen: "Error: Could not reach mock (gave up after 2 retries)",
        },
        Cell {
            fault: "invalid chunk",
            model: || {
                Model::Scripted(always(
                    ScriptedReply::text("Half of it").with_fault(Fault::MalformedSseAfterEvents(2)),
                ))
            },
            message: Some("Could not parse OpenAI SSE event data"),
            answer_chars: 0,
            requests: Some(1),
            screen: "Error: mock returned an error: Could not parse OpenAI SSE event data",
        },
        Cell {
            fault: "stall past the idle timeout",
            model: || {
                Model::Scripted(always(
                    ScriptedReply::text("Half of it").with_fault(Fault::StallAfterEvents(2)),
                ))
            },
            message: Some("Request timed out: no data for 300 ms"),
            answer_chars: 0,
            requests: Some(3),
            screen: "Error: Could not reach mock (gave up after 2 retries): Request timed out: no data for 300 ms",
        },
        Cell {
            fault: "10 MB answer",
            model: || {
                Model::Scripted(vec![ScriptedReply::text("x".repeat(TEN_MB)).with_chunking(
                    Chunking {
                        text_chars: 64 * 1024,
                        ..Chunking::default()
                    },
                )])
            },
            message: None,
            answer_chars: TEN_MB,
            requests: Some(1),
            screen: "xxxxxxxxxx",
        },
        Cell {
            fault: "refused connection",
            model: || Model::Refused,
            message: Some("Nothing is listening at http://127.0.0.1:"),
            answer_chars: 0,
            requests: None,
            screen: "Error: Could not reach mock (gave up after 2 retries)",
        },
        Cell {
            fault: "connection closed unanswered",
            model: || Model::Hangup,
            message: Some("Network error"),
            answer_chars: 0,
            requests: None,
            screen: "Error: Could not reach mock (gave up after 2 retries)",
        },
        Cell {
            fault: "TLS failure",
            model: || Model::NotTls(always(ScriptedReply::text("never read"))),
            message: Some("The TLS handshake with https://127.0.0.1:"),
            answer_chars: 0,
            requests: None,
            screen: "Error: Could not reach mock (gave up after 2 retries)",
        },
    ]
}

/// A sandbox whose models point at `model`, and what keeps that model serving.
fn sandbox(
    cell: &Cell,
) -> (
    Sandbox,
    Option<MockServer>,
    Option<std::thread::JoinHandle<()>>,
) {
    let (url, server, listener) = match (cell.model)() {
        Model::Scripted(replies) => {
            let server =
                MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
            (server.base_url(), Some(server), None)
        }
        Model::NotTls(replies) => {
            let server =
                MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
            (
                server.base_url().replace("http://", "https://"),
                Some(server),
                None,
            )
        }
        Model::Refused => {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            (format!("http://127.0.0.1:{port}/v1"), None, None)
        }
        Model::Hangup => {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let url = format!("http://{}/v1", listener.local_addr().unwrap());
            // Three requests (the first and two retries), each read and left unanswered.
            let thread = std::thread::spawn(move || {
                for _ in 0..3 {
                    let Ok((stream, _)) = listener.accept() else {
                        return;
                    };
                    let mut reader = BufReader::new(stream);
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                }
            });
            (url, None, Some(thread))
        }
    };
    let box_ = Sandbox::with_url(&url, Models::Single);
    std::fs::write(box_.agent.join("settings.json"), settings(cell)).unwrap();
    (box_, server, listener)
}

/// The error message of the last assistant message stored, and the user prompt's presence.
fn stored(box_: &Sandbox) -> (bool, Option<String>) {
    let files = box_.session_files();
    assert_eq!(files.len(), 1, "one session file");
    let entries = read_jsonl(&files[0]);
    let prompt = entries
        .iter()
        .any(|e| e["message"]["role"] == "user" && e["message"]["content"][0]["text"] == "hi");
    let error = entries
        .iter()
        .rev()
        .find(|e| e["message"]["role"] == "assistant")
        .and_then(|e| e["message"]["errorMessage"].as_str().map(str::to_owned));
    (prompt, error)
}

fn check_stored(box_: &Sandbox, cell: &Cell, mode: &str) {
    let (prompt, error) = stored(box_);
    assert!(prompt, "{} / {mode}: the prompt is stored", cell.fault);
    match cell.message {
        Some(message) => assert!(
            error.as_deref().is_some_and(|e| e.contains(message)),
            "{} / {mode}: stored error {error:?}",
            cell.fault
        ),
        None => assert_eq!(error, None, "{} / {mode}", cell.fault),
    }
}

fn check_requests(server: Option<&MockServer>, cell: &Cell, mode: &str) {
    if let (Some(server), Some(expected)) = (server, cell.requests) {
        assert_eq!(
            server.requests().len(),
            expected,
            "{} / {mode}: requests",
            cell.fault
        );
    }
}

fn print_mode(cell: &Cell) {
    let (box_, server, _listener) = sandbox(cell);
    let output = box_
        .command(&["-p", "hi"])
        .stdin(Stdio::null())
        .output_within(PROCESS_LIMIT, "knightcode -p in the fault matrix")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    match cell.message {
        Some(message) => {
            assert_eq!(
                output.status.code(),
                Some(1),
                "{} / print: {stderr}",
                cell.fault
            );
            assert!(stderr.contains(message), "{} / print: {stderr}", cell.fault);
            assert_eq!(stdout, "", "{} / print", cell.fault);
        }
        None => {
            assert_eq!(
                output.status.code(),
                Some(0),
                "{} / print: {stderr}",
                cell.fault
            );
            assert_eq!(
                stdout.trim_end().len(),
                cell.answer_chars,
                "{} / print",
                cell.fault
            );
        }
    }
    check_requests(server.as_ref(), cell, "print");
    check_stored(&box_, cell, "print");
}

fn json_mode(cell: &Cell) {
    let (box_, server, _listener) = sandbox(cell);
    let output = box_
        .command(&["--mode", "json", "hi"])
        .stdin(Stdio::null())
        .output_within(PROCESS_LIMIT, "knightcode --mode json in the fault matrix")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "agent_settled", "{} / json", cell.fault);
    let expected_code = if cell.message.is_some() { 1 } else { 0 };
    assert_eq!(
        output.status.code(),
        Some(expected_code),
        "{} / json",
        cell.fault
    );
    check_closing_events(&events, cell, "json");
    check_requests(server.as_ref(), cell, "json");
    check_stored(&box_, cell, "json");
}

/// The last assistant message's error (or answer), and for retried faults the
/// `auto_retry_end` that gave up.
fn check_closing_events(events: &[Value], cell: &Cell, mode: &str) {
    let last_end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap_or_else(|| panic!("{} / {mode}: no assistant message_end", cell.fault));
    match cell.message {
        Some(message) => {
            assert_eq!(
                last_end["message"]["stopReason"], "error",
                "{} / {mode}",
                cell.fault
            );
            let error = last_end["message"]["errorMessage"]
                .as_str()
                .unwrap_or_default();
            assert!(error.contains(message), "{} / {mode}: {error}", cell.fault);
            if cell.requests.is_some_and(|n| n > 1) {
                let gave_up = events
                    .iter()
                    .any(|e| e["type"] == "auto_retry_end" && e["success"] == false);
                assert!(gave_up, "{} / {mode}: auto_retry_end", cell.fault);
            }
        }
        None => {
            assert_eq!(
                last_end["message"]["stopReason"], "stop",
                "{} / {mode}",
                cell.fault
            );
            let text = last_end["message"]["content"][0]["text"].as_str().unwrap();
            assert_eq!(text.len(), cell.answer_chars, "{} / {mode}", cell.fault);
        }
    }
}

fn rpc_mode(cell: &Cell) {
    let (box_, server, _listener) = sandbox(cell);
    let mut child = box_
        .command(&["--mode", "rpc"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines, received) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if lines.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let next = |what: &str| {
        received
            .recv_timeout(PROCESS_LIMIT)
            .unwrap_or_else(|_| panic!("{} / rpc: waited for {what}", cell.fault))
    };
    writeln!(stdin, r#"{{"id": "p", "type": "prompt", "message": "hi"}}"#).unwrap();
    let mut events = Vec::new();
    loop {
        let event = next("agent_settled");
        let settled = event["type"] == "agent_settled";
        events.push(event);
        if settled {
            break;
        }
    }
    let accepted = events
        .iter()
        .find(|e| e["type"] == "response" && e["id"] == "p")
        .unwrap();
    assert_eq!(accepted["success"], true, "{} / rpc", cell.fault);
    check_closing_events(&events, cell, "rpc");
    // Still answering after the fault: no hang, no exit.
    writeln!(stdin, r#"{{"id": "s", "type": "get_state"}}"#).unwrap();
    loop {
        let event = next("the get_state response");
        if event["type"] == "response" && event["id"] == "s" {
            assert_eq!(event["success"], true);
            break;
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "{} / rpc: exit after stdin closed",
        cell.fault
    );
    check_requests(server.as_ref(), cell, "rpc");
    check_stored(&box_, cell, "rpc");
}

fn interactive_mode(cell: &Cell) {
    let (box_, server, _listener) = sandbox(cell);
    let mut tui = box_.spawn(&[], 120, 30);
    tui.wait_for_text("mock-model");
    tui.submit("hi");
    // The footer back under the answer, and no working row: the run is over and the whole
    // answer has been written out (10 MB of it takes a while).
    tui.wait_for(&format!("{:?} with the run settled", cell.screen), |s| {
        s.contains(cell.screen) && s.contains("mock-model") && !s.contains("Working…")
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0, "{} / interactive", cell.fault);
    check_requests(server.as_ref(), cell, "interactive");
    check_stored(&box_, cell, "interactive");
}

#[test]
fn interactive_mode_column() {
    for cell in cells() {
        interactive_mode(&cell);
    }
}

#[test]
fn print_mode_column() {
    for cell in cells() {
        print_mode(&cell);
    }
}

#[test]
fn json_mode_column() {
    for cell in cells() {
        json_mode(&cell);
    }
}

#[test]
fn rpc_mode_column() {
    for cell in cells() {
        rpc_mode(&cell);
    }
}

/// A full disk while the answer is written: the file-size limit (`ulimit -f`, with SIGXFSZ
/// ignored so the write fails with `EFBIG` as on a full disk) lets the prompt in and refuses
/// the 40 KB answer. The run fails saying so, every stored line still parses, and the session
/// continues once there is room.
#[test]
fn a_full_disk_fails_the_run_cleanly_and_keeps_what_was_stored() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("y".repeat(40_000)),
            ScriptedReply::text("Room again."),
        ],
    )
    .unwrap();
    let box_ = Sandbox::with_models(&server, Models::Single);
    let script = format!(
        "trap '' XFSZ; ulimit -f 24; exec {} -p hi",
        env!("CARGO_BIN_EXE_knightcode")
    );
    let output = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(&box_.project)
        .env_clear()
        .envs(box_.env())
        .stdin(Stdio::null())
        .output_within(PROCESS_LIMIT, "knightcode -p under a file size limit")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("The disk is full"), "{stderr}");
    assert!(stderr.contains("continue with --continue"), "{stderr}");
    let (prompt, _) = stored(&box_);
    assert!(prompt, "the prompt was stored before the answer");

    let again = box_
        .command(&["--continue", "-p", "again"])
        .stdin(Stdio::null())
        .output_within(PROCESS_LIMIT, "knightcode --continue after the disk filled")
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout), "Room again.\n");
    let entries = read_jsonl(&box_.session_files()[0]);
    let users: Vec<&Value> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .map(|e| &e["message"]["content"][0]["text"])
        .collect();
    assert_eq!(users, ["hi", "again"]);
}

/// A session folder the process may not write (Landlock makes it read-only even for root):
/// refused before the model is asked, with what to do.
#[test]
fn a_read_only_session_folder_is_refused_before_the_model_is_asked() {
    if !crate::suite::sandbox::enforced() {
        return;
    }
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("no")],
    )
    .unwrap();
    let box_ = Sandbox::with_models(&server, Models::Single);
    let binary = env!("CARGO_BIN_EXE_knightcode");
    let output = box_
        .command(&[
            "__sandbox-exec",
            "--mode",
            "read-only",
            "--",
            binary,
            "-p",
            "hi",
        ])
        .stdin(Stdio::null())
        .output_within(
            PROCESS_LIMIT,
            "knightcode -p with a read-only session folder",
        )
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(
        stderr.contains("The session folder is not writable: fix its permissions, choose another folder with --session-dir, or run with --no-session"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}
