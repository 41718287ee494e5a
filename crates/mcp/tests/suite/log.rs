//! `mcp.log`: a server's log messages appended one per line, and the file moved to
//! `mcp.log.1` past 5 MB.

use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use knightcode_mcp::McpManager;
use knightcode_mcp::ServerLog;
use knightcode_mcp::Transport;
use serde_json::json;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_log_messages_are_appended_to_mcp_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = common::fixture_server(dir.path(), "chatty", Duration::from_secs(30));
    if let Transport::Stdio { env, .. } = &mut server.transport {
        env.push(("FIXTURE_LOG".to_owned(), "1".to_owned()));
    }
    let path = dir.path().join("agent").join("mcp.log");
    let options = knightcode_mcp::ConnectOptions {
        log: Some(Arc::new(ServerLog::new(path.clone()))),
        auth: None,
        provider_token: None,
        ..common::options(dir.path())
    };
    let manager = McpManager::new(vec![server], options);
    manager.start();
    assert!(manager.wait_settled(Duration::from_secs(30)).await);
    // The notifications come beside the answers: look until all three lines are there.
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.lines().count() >= 4 || Instant::now() > deadline {
            break text;
        }
        tokio::task::yield_now().await;
    };
    manager.stop().await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        4,
        "three messages in mcp.log within 10 s:\n{text}"
    );
    // One entry per message, its continuation lines with it. The client handles
    // notifications concurrently, so the entries' order is not asserted.
    let mut entries: Vec<String> = Vec::new();
    for line in &lines {
        match line.strip_prefix("    ") {
            Some(more) => entries.last_mut().unwrap().push_str(&format!("\n{more}")),
            None => entries.push(line.split_once(' ').unwrap().1.to_owned()),
        }
    }
    entries.sort();
    assert_eq!(
        entries,
        [
            "[chatty] error first\nsecond",
            "[chatty] info boot: ready",
            r#"[chatty] warning {"disk":"low"}"#,
        ]
    );
    // An ISO time in UTC with milliseconds.
    let time = lines[0].split(' ').next().unwrap();
    assert!(
        time.len() == 24 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "{time}"
    );
}

#[test]
fn past_five_megabytes_the_log_moves_to_mcp_log_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.log");
    std::fs::write(&path, vec![b'x'; 5 * 1024 * 1024 + 1]).unwrap();
    let log = ServerLog::new(path.clone());
    log.write("s", "info", None, &json!("after"));
    let kept = std::fs::metadata(dir.path().join("mcp.log.1"))
        .unwrap()
        .len();
    assert_eq!(kept, 5 * 1024 * 1024 + 1);
    let fresh = std::fs::read_to_string(&path).unwrap();
    assert!(fresh.ends_with(" [s] info after\n"), "{fresh}");
    assert_eq!(fresh.lines().count(), 1);
}
