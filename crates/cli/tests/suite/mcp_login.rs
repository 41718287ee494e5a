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

    let (code, stdout) = login_from_shell(&sandbox);
    assert_eq!(code, 0, "{stdout}");
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

/// `knightcode mcp login web` with the test as the browser: it opens the address the login
/// shows and follows it back to the callback. The exit code and stdout.
fn login_from_shell(sandbox: &Sandbox) -> (i32, String) {
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
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn a_tool_that_needs_more_scope_asks_for_a_sign_in_with_the_old_and_new_scopes() {
    use knightcode_testkit::MockServer;
    use knightcode_testkit::ScriptedReply;
    use knightcode_testkit::WireFormat;

    let service = McpOAuthServer::start().unwrap();
    service.demand_scope("echo", "mcp:write");
    let model = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "mcp__web__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("It needs more access."),
            ScriptedReply::tool_call("call_2", "mcp__web__echo", r#"{"message":"hi"}"#),
            ScriptedReply::text("Echoed."),
        ],
    )
    .unwrap();
    let sandbox = crate::oneshot_common::sandbox(&model);
    write_config(
        &sandbox,
        json!({"web": {"url": service.mcp_url(), "exposure": "direct"}}),
    );
    assert_eq!(login_from_shell(&sandbox).0, 0);
    // What the model got back for the call of request `n`'s turn.
    let tool_result = |n: usize| {
        let requests = model.requests();
        let last = requests[n].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["role"], "tool", "{last}");
        last["content"].to_string()
    };

    // The token lacks the tool's scope: the tool error says how to get it.
    let run = crate::oneshot_common::knightcode(&sandbox, &["-p", "echo hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = tool_result(1);
    assert!(
        text.contains(
            "MCP server \\\"web\\\" needs more access (scope \\\"mcp:write\\\"). Run /mcp login web to sign in again."
        ),
        "{text}"
    );

    // Signing in again asks for both scopes, and the call goes through.
    assert_eq!(login_from_shell(&sandbox).0, 0);
    let scopes: Vec<String> = service
        .authorizations()
        .iter()
        .map(|q| {
            knightcode_testkit::oauth::params(q)
                .into_iter()
                .find(|(k, _)| k == "scope")
                .map(|(_, v)| v)
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(scopes, ["mcp", "mcp mcp:write"]);
    let run = crate::oneshot_common::knightcode(&sandbox, &["-p", "echo again"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Echoed."), "{}", run.stdout);
    let text = tool_result(3);
    assert!(
        text.contains("hi") && !text.contains("needs more access"),
        "{text}"
    );
}

#[test]
fn mcp_login_in_print_mode_needs_interactive_mode() {
    let service = McpOAuthServer::start().unwrap();
    let sandbox = Sandbox::with_url("http://127.0.0.1:9", Models::Single);
    write_config(&sandbox, json!({"web": {"url": service.mcp_url()}}));
    let (code, _, stderr) = run(&sandbox, &["-p", "/mcp login web"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("Signing in to MCP server \"web\" requires interactive mode."),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_login_over_rpc_takes_the_pasted_address_and_connects() {
    crate::rpc_common::watchdog(async {
        let service = McpOAuthServer::start().unwrap();
        let server = knightcode_testkit::MockServer::start(
            knightcode_testkit::WireFormat::OpenAiCompletions,
            vec![],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        write_config(&sandbox, json!({"web": {"url": service.mcp_url()}}));
        let mut command = sandbox.rpc_command(&[]);
        // Nothing is opened: the test is the browser.
        command.env("BROWSER", "true");
        let (client, events) = knightcode_headless::rpc::RpcClientBuilder::new()
            .spawn_command(command, "knightcode")
            .unwrap();
        let mut rpc = crate::rpc_common::Rpc {
            server,
            sandbox,
            client,
            events,
        };
        let notices = login_answering(&mut rpc).await;
        assert!(
            notices.contains(
                &"Signed in to MCP server \"web\": 1 tool; they are offered from the next prompt."
                    .to_owned()
            ),
            "{notices:?}"
        );
        rpc.shutdown().await;
    })
    .await;
}

/// `/mcp login` over RPC, pasting into the dialog the address the browser ends on; the
/// notices until the outcome's.
async fn login_answering(rpc: &mut crate::rpc_common::Rpc) -> Vec<String> {
    use knightcode_headless::rpc::RpcEvent;
    use knightcode_protocol::rpc::PromptDisposition;
    use knightcode_protocol::rpc::UiReply;
    use knightcode_protocol::rpc::UiRequestKind;
    let crate::rpc_common::Rpc { client, events, .. } = rpc;
    let prompt = client.prompt("/mcp login");
    tokio::pin!(prompt);
    let mut notices = Vec::new();
    let disposition = loop {
        tokio::select! {
            event = events.recv() => {
                let Some(RpcEvent::UiRequest(request)) = event else { continue };
                match &request.kind {
                    // The dialog shows the address; the "browser" is on another machine, so
                    // the address it ends on is pasted into the dialog.
                    UiRequestKind::Input { title, .. } => {
                        assert!(
                            title.starts_with("Sign in to MCP server \"web\" in your browser:\n"),
                            "{title}"
                        );
                        let address = title.lines().nth(1).unwrap().to_owned();
                        let (_, location, _) =
                            tokio::task::spawn_blocking(move || browser_get(&address).unwrap())
                                .await
                                .unwrap();
                        client
                            .reply_ui(&request.id, UiReply::Value(location.unwrap()))
                            .await
                            .unwrap();
                    }
                    UiRequestKind::Notify { message, .. } => notices.push(message.clone()),
                    _ => {}
                }
            }
            disposition = &mut prompt => break disposition.unwrap(),
        }
    };
    assert_eq!(disposition, Some(PromptDisposition::Handled));
    // The outcome's notice may come after the prompt's answer.
    while !notices.iter().any(|n| n.starts_with("Signed in")) {
        if let Some(RpcEvent::UiRequest(request)) = events.recv().await
            && let UiRequestKind::Notify { message, .. } = &request.kind
        {
            notices.push(message.clone());
        }
    }
    notices
}

#[test]
fn signing_in_from_the_terminal_menu_completes_through_the_callback() {
    use std::os::unix::fs::PermissionsExt as _;

    let service = McpOAuthServer::start().unwrap();
    let sandbox = crate::tui_common::sandbox(vec![knightcode_testkit::ScriptedReply::text(
        "servers are up",
    )]);
    write_config(&sandbox, json!({"web": {"url": service.mcp_url()}}));
    // The "browser" hands the address to the test through a FIFO.
    let fifo = sandbox.root.path().join("browser.fifo");
    crate::common::mkfifo(&fifo);
    let browser = sandbox.root.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" > '{}'\n", fifo.display()),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (opened_tx, opened) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut reader = std::io::BufReader::new(std::fs::File::open(&fifo).unwrap());
        reader.read_line(&mut line).unwrap();
        let _ = opened_tx.send(line.trim().to_owned());
    });

    let browser = browser.display().to_string();
    let mut tui = sandbox.spawn_with_env(&[], &[("BROWSER", browser.as_str())], 120, 40);
    tui.submit("hello");
    tui.wait_for_text("servers are up");
    tui.submit("/mcp");
    tui.wait_for_text("web  needs sign-in · codemode · global");
    tui.send("\r");
    tui.wait_for_text("MCP server \"web\": needs-auth");
    // "Sign in" comes first for a server that needs it.
    tui.send("\r");
    tui.wait_for_text("Sign in to MCP server \"web\" in your browser:");
    let address = opened
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the browser was opened on the authorize address");
    let (status, location, _) = browser_get(&address).unwrap();
    assert_eq!(status, 302);
    let (status, _, page) = browser_get(&location.unwrap()).unwrap();
    assert_eq!(status, 200, "{page}");
    tui.wait_for_text("Signed in to MCP server \"web\": 1 tool");
}
