//! `knightcode mcp login|logout` against the testkit's OAuth-protected MCP server: `list`
//! says the server requires sign-in; `login` prints the authorize address (the test is the
//! browser, `BROWSER=true` opens nothing) and completes through the loopback callback;
//! `list` then connects with the stored token; `logout` forgets it. A stdio server does not
//! use OAuth.

use std::io::BufRead as _;
use std::process::Stdio;

use knightcode_testkit::oauth::McpOAuthServer;
use knightcode_testkit::oauth::browser_get;
use serde_json::json;

use crate::common::Models;
use crate::common::Sandbox;
use crate::suite::mcp::write_config;

fn run(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let output = sandbox.command(args).stdin(Stdio::null()).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn login_signs_in_through_the_browser_and_logout_forgets_the_tokens() {
    let service = McpOAuthServer::start().unwrap();
    let sandbox = Sandbox::with_url("http://127.0.0.1:9", Models::Single);
    write_config(
        &sandbox,
        json!({
            "web": {"url": service.mcp_url()},
            "local": {"command": "node", "args": ["-e", ""]},
        }),
    );
    let (code, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "web: needs-auth (http, codemode, global)\n  MCP server \"web\" requires sign-in. Run /mcp to sign in.\n"
        ),
        "{stdout}"
    );

    let mut child = sandbox
        .command(&["mcp", "login", "web", "--timeout", "60"])
        .env("BROWSER", "true")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The address is shown while the login waits; the test opens it as a browser would.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut shown = String::new();
    let address = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no address in {shown}"
        );
        shown.push_str(&line);
        if line.starts_with("http://") && line.contains("/authorize?") {
            break line.trim().to_owned();
        }
    };
    assert!(
        shown.starts_with("Sign in to MCP server \"web\" in your browser:\n"),
        "{shown}"
    );
    let (status, location, _) = browser_get(&address).unwrap();
    assert_eq!(status, 302);
    let (status, _, page) = browser_get(&location.unwrap()).unwrap();
    assert_eq!(status, 200, "{page}");
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout,
        "Signed in to MCP server \"web\". Running sessions use it from their next turn.\n"
    );
    let stored = std::fs::read_to_string(sandbox.agent.join("mcp-auth.json")).unwrap();
    assert!(stored.contains(&service.mcp_url()), "{stored}");

    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(
        stdout.contains("web: connected, 1 tool (http, codemode, global)"),
        "{stdout}"
    );

    let (code, stdout, _) = run(&sandbox, &["mcp", "logout", "web"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "Signed out of MCP server \"web\"; its tokens were removed.\n"
    );
    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("web: needs-auth"), "{stdout}");

    for command in ["login", "logout"] {
        let (code, _, stderr) = run(&sandbox, &["mcp", command, "local"]);
        assert_eq!(code, 1);
        assert_eq!(stderr, "MCP server \"local\" does not use OAuth.\n");
    }
}
