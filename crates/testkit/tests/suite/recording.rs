//! Requests are recorded; the blocking server and the raw wire framing work as documented.

// Helpers outside #[test] functions panic on purpose, like the tests themselves.
#![allow(clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use common::{GUARD, client, open_stream};
use knightcode_testkit::{MockServer, ScriptedReply, WireFormat};
use serde_json::json;

#[tokio::test]
async fn requests_are_recorded_in_order_with_headers_and_body() {
    let client = client();
    let server = MockServer::start(
        WireFormat::Google,
        vec![ScriptedReply::text("a"), ScriptedReply::text("b")],
    )
    .await
    .expect("start");
    assert!(server.base_url().ends_with("/v1beta"));
    for (i, model) in ["gemini-2.5-flash", "gemini-2.5-pro"].iter().enumerate() {
        let resp = client
            .post(format!(
                "{}/models/{model}:streamGenerateContent?alt=sse",
                server.base_url()
            ))
            .header("x-goog-api-key", "secret")
            .json(&json!({"contents": [{"role": "user", "parts": [{"text": format!("q{i}")}]}]}))
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status(), 200);
        let events = common::SseReader::new(resp).rest().await;
        assert_eq!(events[0].json()["modelVersion"], *model);
    }
    let requests = server.wait_for_requests(2).await;
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(requests[0].query, "alt=sse");
    assert_eq!(requests[0].header("X-Goog-Api-Key"), Some("secret"));
    assert_eq!(requests[1].body["contents"][0]["parts"][0]["text"], "q1");
}

#[tokio::test]
async fn base_urls_match_what_clients_expect() {
    for (format, suffix, path) in [
        (WireFormat::AnthropicMessages, "", "/v1/messages"),
        (WireFormat::OpenAiCompletions, "/v1", "/v1/chat/completions"),
        (WireFormat::OpenAiResponses, "/v1", "/v1/responses"),
    ] {
        let server = MockServer::start(format, Vec::new()).await.expect("start");
        assert_eq!(server.base_url(), format!("{}{suffix}", server.root_url()));
        assert_eq!(
            server.endpoint_url("m"),
            format!("{}{path}", server.root_url())
        );
    }
}

#[tokio::test]
async fn the_request_log_gets_one_json_line_per_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("requests.jsonl");
    let server = MockServer::builder(WireFormat::AnthropicMessages)
        .replies(vec![ScriptedReply::text("hi")])
        .request_log(&log)
        .start()
        .await
        .expect("start");
    let client = client();
    open_stream(&client, &server, "claude").await.rest().await;
    server.wait_for_requests(1).await;
    let text = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 1);
    let entry: serde_json::Value = serde_json::from_str(lines[0]).expect("json line");
    assert_eq!(entry["path"], "/v1/messages");
    assert_eq!(entry["body"]["model"], "claude");
}

/// Reads one chunked HTTP response from `reader`: (status line, header lines, chunks).
fn read_chunked(reader: &mut BufReader<TcpStream>) -> (String, Vec<String>, Vec<String>) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line.trim_end().to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).expect("header");
        if line == "\r\n" {
            break;
        }
        headers.push(line.trim_end().to_ascii_lowercase());
    }
    let mut chunks = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).expect("chunk size");
        let size = usize::from_str_radix(line.trim_end(), 16).expect("hex size");
        let mut data = vec![0; size + 2];
        reader.read_exact(&mut data).expect("chunk data");
        assert_eq!(&data[size..], b"\r\n");
        if size == 0 {
            return (status, headers, chunks);
        }
        data.truncate(size);
        chunks.push(String::from_utf8(data).expect("utf-8"));
    }
}

#[test]
fn blocking_server_frames_each_event_as_one_chunk_and_keeps_alive() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("hello there"),
            ScriptedReply::text("again"),
        ],
    )
    .expect("start");
    let stream = TcpStream::connect(server.addr()).expect("connect");
    stream.set_read_timeout(Some(GUARD)).expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    for expected in ["hello there", "again"] {
        let body = r#"{"model":"gpt-test","stream":true,"messages":[]}"#;
        write!(
            writer,
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("write");
        let (status, headers, chunks) = read_chunked(&mut reader);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(headers.contains(&"transfer-encoding: chunked".to_owned()));
        assert!(
            headers
                .iter()
                .any(|h| h.starts_with("content-type: text/event-stream"))
        );
        for chunk in &chunks {
            assert!(chunk.starts_with("data: "), "{chunk:?}");
            assert!(chunk.ends_with("\n\n"), "{chunk:?}");
            assert_eq!(
                chunk.matches("\n\n").count(),
                1,
                "one event per chunk: {chunk:?}"
            );
        }
        let text: String = chunks
            .iter()
            .filter_map(|c| {
                c.strip_prefix("data: ")?
                    .trim_end()
                    .parse::<serde_json::Value>()
                    .ok()
            })
            .filter_map(|v| {
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, expected);
        assert_eq!(chunks.last().map(String::as_str), Some("data: [DONE]\n\n"));
    }
    let activity = server
        .wait_until_blocking(|a| a.completed == 2, GUARD)
        .expect("both served");
    assert_eq!(activity.requests, 2);
    assert_eq!(server.requests()[1].body["model"], "gpt-test");
}

#[test]
fn the_binary_serves_a_script_file_and_logs_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("replies.json");
    let log = dir.path().join("requests.jsonl");
    std::fs::write(
        &script,
        r#"[{"parts":[{"thinking":{"text":"hmm"}},{"toolCall":{"id":"toolu_1","name":"ls","argumentsJson":"{}"}}]},
            {"parts":[{"text":"done"}],"usage":{"input":10,"output":2},"chunking":{"textChars":0}}]"#,
    )
    .expect("script");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode-mock-provider"))
        .args(["--format", "anthropic-messages", "--port", "0", "--script"])
        .arg(&script)
        .arg("--log")
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut base_url = String::new();
    stdout.read_line(&mut base_url).expect("first line");
    let base_url = base_url.trim().to_owned();
    let addr = base_url
        .strip_prefix("http://")
        .expect("http url")
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{base_url}");

    let stream = TcpStream::connect(&addr).expect("connect");
    stream.set_read_timeout(Some(GUARD)).expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    let mut names = Vec::new();
    for _ in 0..2 {
        let body = r#"{"model":"claude-test","stream":true}"#;
        write!(
            writer,
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("write");
        let (_, _, chunks) = read_chunked(&mut reader);
        names.push(
            chunks
                .iter()
                .filter_map(|c| {
                    c.strip_prefix("event: ")?
                        .split('\n')
                        .next()
                        .map(str::to_owned)
                })
                .collect::<Vec<_>>(),
        );
    }
    assert!(
        names[0]
            .iter()
            .filter(|n| *n == "content_block_start")
            .count()
            == 2
    );
    // Whole-text chunking: a single text delta in the second reply.
    assert_eq!(
        names[1]
            .iter()
            .filter(|n| *n == "content_block_delta")
            .count(),
        1
    );
    let _ = child.kill();
    let _ = child.wait();
    let logged = std::fs::read_to_string(&log).expect("log");
    assert_eq!(logged.lines().count(), 2);
    assert!(logged.contains("claude-test"));
}

#[test]
fn the_binary_rejects_bad_arguments() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knightcode-mock-provider"))
        .args(["--format", "nope", "--script", "x.json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown format nope"));
}

#[test]
fn the_readme_script_example_parses() {
    let readme = include_str!("../../README.md");
    let start = readme.find("```json\n").expect("json block") + "```json\n".len();
    let end = start + readme[start..].find("```").expect("block end");
    let replies: Vec<knightcode_testkit::ScriptedReply> =
        serde_json::from_str(&readme[start..end]).expect("README script parses");
    assert_eq!(replies.len(), 5);
    assert!(matches!(
        replies[2].fault,
        Some(knightcode_testkit::Fault::HttpStatus { status: 529, .. })
    ));
    assert_eq!(
        replies[4].chunking.interval(),
        std::time::Duration::from_millis(20)
    );
}
