//! A streamable HTTP server (the Node fixture `http-fixture-server.js`): a server that answers
//! 503 or 429 while starting is connected on a retry (twice at most), one that answers 501 is
//! not retried.

use std::io::BufRead as _;
use std::time::Duration;

use knightcode_mcp::McpManager;
use knightcode_mcp::Scope;
use knightcode_mcp::ServerConfig;
use knightcode_mcp::ServerState;
use knightcode_mcp::ServerStatus;
use knightcode_mcp::Transport;

const HTTP_SERVER_JS: &str = include_str!("../common/http-fixture-server.js");

/// The fixture on a free port, failing its first POSTs with `fail_with`; killed when dropped.
struct HttpFixture {
    child: std::process::Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_fixture(fail_with: &str) -> HttpFixture {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("http-fixture-server.js");
    std::fs::write(&script, HTTP_SERVER_JS).unwrap();
    let mut child = std::process::Command::new("node")
        .arg(&script)
        .env("FAIL_WITH", fail_with)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node runs the HTTP fixture");
    // The fixture prints its port once listening (or exits, which ends the read).
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .trim()
        .parse()
        .expect("the HTTP fixture printed its port");
    HttpFixture {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        _dir: dir,
    }
}

async fn connect(fixture: &HttpFixture) -> ServerStatus {
    let server = ServerConfig {
        name: "web".to_owned(),
        scope: Scope::User,
        source: "mcp.json".into(),
        overridden: false,
        transport: Transport::Http {
            url: fixture.url.clone(),
            headers: Vec::new(),
            oauth: None,
            auth_provider: None,
        },
        exposure: knightcode_mcp::Exposure::Direct,
        tool_exposure: Vec::new(),
        description: None,
        enabled: true,
        timeout: Duration::from_secs(30),
    };
    let dir = tempfile::tempdir().unwrap();
    let options = knightcode_mcp::ConnectOptions {
        http: Some(
            knightcode_ai::http_client_builder()
                .unwrap()
                .build()
                .unwrap(),
        ),
        ..crate::common::options(dir.path())
    };
    let manager = McpManager::new(vec![server], options);
    manager.start();
    assert!(
        manager.wait_settled(Duration::from_secs(30)).await,
        "the HTTP fixture did not settle within 30 s"
    );
    let status = manager.statuses().remove(0);
    manager.stop().await;
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_503_then_429_while_starting_connects_on_a_retry() {
    let fixture = http_fixture("503,429");
    let status = connect(&fixture).await;
    assert_eq!(status.state, ServerState::Connected, "{:?}", status.error);
    assert_eq!(status.tools.len(), 1);
    assert_eq!(status.instructions.as_deref(), Some("A fixture over HTTP."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_transient_failures_in_a_row_fail_the_connection() {
    let fixture = http_fixture("503,503,502");
    let status = connect(&fixture).await;
    assert_eq!(status.state, ServerState::Failed);
    let error = status.error.unwrap_or_default();
    assert!(error.contains("502"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_implemented_is_not_retried() {
    let fixture = http_fixture("501");
    let status = connect(&fixture).await;
    assert_eq!(
        status.state,
        ServerState::Failed,
        "a retry would have connected"
    );
    let error = status.error.unwrap_or_default();
    assert!(error.contains("501"), "{error}");
}
