//! Strict JSONL framing: LF-only splitting, CR stripping, EOF lines, the line cap, and a
//! writer that never interleaves records and pushes back on a slow reader.

use std::collections::HashMap;

use knightcode_headless::HeadlessError;
use knightcode_headless::rpc::framing::CommandReader;
use knightcode_headless::rpc::framing::DEFAULT_MAX_LINE_BYTES;
use knightcode_headless::rpc::framing::LineReader;
use knightcode_headless::rpc::framing::spawn_writer;
use knightcode_protocol::rpc::RpcCommandBody;
use knightcode_protocol::rpc::RpcInput;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

async fn all_lines(input: &[u8]) -> Vec<String> {
    let mut reader = LineReader::new(input);
    let mut lines = Vec::new();
    while let Some(line) = reader.next_line().await.unwrap() {
        lines.push(line);
    }
    lines
}

/// Feeds `input` through a pipe that carries `chunk` bytes at a time.
fn trickle(input: Vec<u8>, chunk: usize) -> tokio::io::DuplexStream {
    let (mut tx, rx) = tokio::io::duplex(chunk);
    tokio::spawn(async move {
        tx.write_all(&input).await.unwrap();
    });
    rx
}

#[tokio::test]
async fn splits_on_lf_only() {
    let input = "{\"a\":\"x\u{2028}y\u{2029}z\"}\n{\"b\":\"lone\rcr\"}\n";
    assert_eq!(
        all_lines(input.as_bytes()).await,
        ["{\"a\":\"x\u{2028}y\u{2029}z\"}", "{\"b\":\"lone\rcr\"}"]
    );
}

#[tokio::test]
async fn strips_exactly_one_trailing_cr() {
    assert_eq!(
        all_lines(b"one\r\ntwo\r\r\nthree\n").await,
        ["one", "two\r", "three"]
    );
}

#[tokio::test]
async fn final_unterminated_line_is_delivered() {
    assert_eq!(all_lines(b"first\nlast").await, ["first", "last"]);
    assert_eq!(all_lines(b"only\r").await, ["only"]);
    assert_eq!(all_lines(b"ends\n").await, ["ends"]);
    assert!(all_lines(b"").await.is_empty());
    // Blank lines are records too (the server answers them with a parse error).
    assert_eq!(all_lines(b"\n\nx\n").await, ["", "", "x"]);
}

#[tokio::test]
async fn lines_survive_any_chunking() {
    let text = "{\"m\":\"héllo \u{2028} wörld 🦀\"}\r\n{\"n\":2}\n{\"tail\":true}";
    for chunk in [1, 2, 3, 7] {
        let mut reader = LineReader::new(trickle(text.as_bytes().to_vec(), chunk));
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            lines.push(line);
        }
        assert_eq!(
            lines,
            [
                "{\"m\":\"héllo \u{2028} wörld 🦀\"}",
                "{\"n\":2}",
                "{\"tail\":true}"
            ],
            "chunk size {chunk}"
        );
    }
}

#[tokio::test]
async fn invalid_utf8_is_replaced_not_fatal() {
    let lines = all_lines(b"{\"a\":\"\xff\"}\n{\"b\":1}\n").await;
    assert_eq!(lines, ["{\"a\":\"\u{fffd}\"}", "{\"b\":1}"]);
}

#[tokio::test]
async fn a_ten_megabyte_command_is_one_record() {
    let message = "x".repeat(10 * 1024 * 1024);
    let line = format!(
        "{{\"type\":\"prompt\",\"message\":\"{message}\",\"id\":\"big\"}}\n{{\"type\":\"abort\"}}\n"
    );
    let mut reader = CommandReader::new(trickle(line.into_bytes(), 64 * 1024));
    let Some(RpcInput::Command(command)) = reader.next_input().await.unwrap() else {
        panic!("not a command");
    };
    let RpcCommandBody::Prompt { message: got, .. } = command.body else {
        panic!("not a prompt");
    };
    assert_eq!(got.len(), message.len());
    assert_eq!(command.id.as_deref(), Some("big"));
    assert!(matches!(
        reader.next_input().await.unwrap(),
        Some(RpcInput::Command(_))
    ));
    const { assert!(DEFAULT_MAX_LINE_BYTES >= 64 * 1024 * 1024) };
}

#[tokio::test]
async fn over_long_lines_are_skipped_and_reading_resumes() {
    let input = format!("short\n{}\nafter\n{}", "y".repeat(100), "z".repeat(50));
    let mut reader = LineReader::new(trickle(input.into_bytes(), 8)).with_max_line_bytes(32);
    assert_eq!(reader.next_line().await.unwrap().as_deref(), Some("short"));
    let error = reader.next_line().await.unwrap_err();
    assert!(
        matches!(
            error,
            HeadlessError::LineTooLong {
                length: 100,
                limit: 32
            }
        ),
        "{error:?}"
    );
    assert_eq!(reader.next_line().await.unwrap().as_deref(), Some("after"));
    // Also at EOF without a terminator.
    assert!(matches!(
        reader.next_line().await,
        Err(HeadlessError::LineTooLong {
            length: 50,
            limit: 32
        })
    ));
    assert_eq!(reader.next_line().await.unwrap(), None);
    // A line of exactly the limit is fine.
    let mut reader = LineReader::new(&b"12345678\n"[..]).with_max_line_bytes(8);
    assert_eq!(
        reader.next_line().await.unwrap().as_deref(),
        Some("12345678")
    );
}

#[tokio::test]
async fn command_reader_classifies_and_answers() {
    let input = [
        r#"{"type":"get_state","id":"1"}"#,
        "{oops",
        r#"{"type":"teleport","id":"2"}"#,
        r#"{"type":"extension_ui_response","id":"u1","confirmed":true}"#,
        &"q".repeat(70),
        r#"{"type":"set_session_name","id":"3"}"#,
    ]
    .join("\n");
    let mut reader =
        CommandReader::from_lines(LineReader::new(input.as_bytes()).with_max_line_bytes(60));
    let mut answers = Vec::new();
    while let Some(input) = reader.next_input().await.unwrap() {
        let answer = input
            .error_response()
            .map(|r| serde_json::to_string(&r).unwrap());
        answers.push(answer.unwrap_or_else(|| format!("{input:?}").chars().take(12).collect()));
    }
    assert_eq!(answers[0], "Command(RpcC");
    assert!(answers[1].starts_with(
        r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: key must be a string"#
    ), "{}", answers[1]);
    assert_eq!(
        answers[2],
        r#"{"id":"2","type":"response","command":"teleport","success":false,"error":"Unknown command: teleport"}"#
    );
    assert_eq!(answers[3], "UiResponse(E");
    assert!(
        answers[4].starts_with(
            r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: a line of 70 bytes exceeds the 60-byte limit"#
        ),
        "{}",
        answers[4]
    );
    assert!(answers[5].starts_with(
        r#"{"id":"3","type":"response","command":"set_session_name","success":false,"error":"Invalid set_session_name command: missing field `name`"#
    ), "{}", answers[5]);
}

#[tokio::test]
async fn concurrent_producers_never_interleave() {
    let (write_end, mut read_end) = tokio::io::duplex(4096);
    let (writer, task) = spawn_writer(write_end, 4);
    let reader = tokio::spawn(async move {
        let mut text = String::new();
        read_end.read_to_string(&mut text).await.unwrap();
        text
    });
    let mut producers = Vec::new();
    for producer in 0..8 {
        let writer = writer.clone();
        producers.push(tokio::spawn(async move {
            for seq in 0..100 {
                // Records larger than the pipe buffer force partial writes.
                let padding = "\u{2028}".repeat((producer * 1000 + seq * 37) % 3000);
                let record = serde_json::json!({"producer": producer, "seq": seq, "pad": padding});
                writer.send(&record).await.unwrap();
            }
        }));
    }
    for producer in producers {
        producer.await.unwrap();
    }
    drop(writer);
    task.finished().await.unwrap();
    let text = reader.await.unwrap();
    assert!(text.ends_with('\n'));
    let mut next_seq: HashMap<u64, u64> = HashMap::new();
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let producer = value["producer"].as_u64().unwrap();
        let seq = next_seq.entry(producer).or_default();
        assert_eq!(
            value["seq"].as_u64().unwrap(),
            *seq,
            "order within a producer"
        );
        *seq += 1;
    }
    assert_eq!(next_seq.len(), 8);
    assert!(next_seq.values().all(|&count| count == 100));
}

#[tokio::test]
async fn a_stalled_reader_applies_backpressure() {
    let (write_end, mut read_end) = tokio::io::duplex(64);
    let (writer, task) = spawn_writer(write_end, 1);
    let record = serde_json::json!({"type": "message_update", "delta": "d".repeat(200)});
    // The task takes the first record and blocks writing it (the pipe holds 64 bytes); the
    // second waits in the queue; a third does not fit.
    writer.send(&record).await.unwrap();
    writer.send(&record).await.unwrap();
    assert!(matches!(
        writer.try_send(&record),
        Err(HeadlessError::OutputFull)
    ));
    // Once the reader catches up, everything is delivered.
    let reader = tokio::spawn(async move {
        let mut text = String::new();
        read_end.read_to_string(&mut text).await.unwrap();
        text
    });
    writer.send(&record).await.unwrap();
    drop(writer);
    task.finished().await.unwrap();
    assert_eq!(reader.await.unwrap().lines().count(), 3);
}

#[tokio::test]
async fn close_drains_the_queue_then_ends_the_stream() {
    let (write_end, mut read_end) = tokio::io::duplex(1 << 16);
    let (writer, task) = spawn_writer(write_end, 8);
    writer.send(&serde_json::json!({"n": 1})).await.unwrap();
    writer.send_json(r#"{"n":2}"#.to_owned()).await.unwrap();
    assert!(matches!(
        writer.send_json("{\"n\":\n3}".to_owned()).await,
        Err(HeadlessError::EmbeddedNewline)
    ));
    // Another clone is still alive: closing must not wait for it.
    let other = writer.clone();
    task.close().await.unwrap();
    let mut text = String::new();
    read_end.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "{\"n\":1}\n{\"n\":2}\n");
    assert!(other.is_closed());
    assert!(matches!(
        other.send(&serde_json::json!({})).await,
        Err(HeadlessError::OutputClosed)
    ));
}

#[tokio::test]
async fn a_broken_output_is_reported() {
    let (write_end, read_end) = tokio::io::duplex(16);
    drop(read_end);
    let (writer, task) = spawn_writer(write_end, 1);
    // The first record is accepted into the queue; the write then fails and the task ends.
    writer.send(&serde_json::json!({"n": 1})).await.unwrap();
    let error = task.finished().await.unwrap_err();
    assert!(
        matches!(&error, HeadlessError::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe),
        "{error:?}"
    );
    assert!(matches!(
        writer.send(&serde_json::json!({"n": 2})).await,
        Err(HeadlessError::OutputClosed)
    ));
}
