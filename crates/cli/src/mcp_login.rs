//! `knightcode mcp login <server> [--timeout s]` and `knightcode mcp logout <server>`: the
//! OAuth sign-in of an HTTP server in the browser (or by pasting the address the browser
//! ended on, for a browser on another machine), its tokens kept in `<agentDir>/mcp-auth.json`
//! where running sessions pick them up; and forgetting them.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use knightcode_mcp::McpError;
use knightcode_mcp::McpManager;

use crate::mcp::Layout;

/// The one server `name` of the files (trusted project included), in a manager that is not
/// started: signing in needs no connection.
fn manager_for(name: &str, layout: &Layout, err: &mut dyn Write) -> Result<McpManager, String> {
    let config = knightcode_mcp::load_config(
        &layout.agent_dir,
        &layout.cwd,
        crate::mcp::project_trusted(layout),
    );
    if let Some(path) = &config.ignored_project_file {
        let _ = writeln!(
            err,
            "Note: {} was not read: the project is not trusted. Start knightcode in the project to trust it.",
            path.display()
        );
    }
    let server = config
        .servers
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| {
            format!("MCP server \"{name}\" is not configured; see knightcode mcp list")
        })?;
    Ok(McpManager::new(
        vec![server],
        crate::mcp::connect_options(layout),
    ))
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// `login`: exit 0 once signed in; 1 when the server does not use OAuth or the sign-in failed.
pub(crate) fn login(
    args: &[String],
    layout: &Layout,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let mut name = None;
    let mut timeout = knightcode_mcp::DEFAULT_SIGN_IN_TIMEOUT;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--timeout" => {
                i += 1;
                timeout = args
                    .get(i)
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|s| *s > 0.0 && s.is_finite())
                    .map(|s| Duration::from_secs_f64(s.min(1e9)))
                    .ok_or("--timeout needs a positive number of seconds")?;
            }
            flag if flag.starts_with('-') => {
                return Err(format!("unknown option {flag} for knightcode mcp login"));
            }
            server if name.is_none() => name = Some(server.to_owned()),
            extra => return Err(format!("unexpected argument \"{extra}\"")),
        }
        i += 1;
    }
    let name = name.ok_or("knightcode mcp login needs a server name")?;
    let manager = match manager_for(&name, layout, err) {
        Ok(manager) => manager,
        Err(message) => {
            let _ = writeln!(err, "Error: {message}");
            return Ok(1);
        }
    };
    if !manager.uses_oauth(&name) {
        let _ = writeln!(err, "{}", McpError::NotOAuth(name));
        return Ok(1);
    }
    // Pasted lines come from stdin, read on a thread of their own (a read cannot be
    // cancelled; the process ends when the sign-in does).
    let (tx, pasted) = tokio::sync::mpsc::channel(4);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {
            if tx.blocking_send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let person = knightcode_mcp::SignIn {
        open_browser: Arc::new(knightcode_ai::login::open_browser),
        // The address must be on screen while the wait goes on, so straight to stderr.
        show: Arc::new(|text: &str| {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{text}");
            let _ = stderr.flush();
        }),
        pasted: Some(pasted),
        timeout,
    };
    let signed_in = runtime()?.block_on(manager.sign_in(&name, person));
    match signed_in {
        Ok(()) => {
            let _ = writeln!(
                out,
                "Signed in to MCP server \"{name}\". Running sessions use it from their next turn."
            );
            Ok(0)
        }
        Err(McpError::NotOAuth(_)) => {
            let _ = writeln!(err, "{}", McpError::NotOAuth(name));
            Ok(1)
        }
        Err(error) => {
            let _ = writeln!(err, "Error: {error}");
            Ok(1)
        }
    }
}

/// `logout`: forgets the server's tokens.
pub(crate) fn logout(
    args: &[String],
    layout: &Layout,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let [name] = args else {
        return Err("usage: knightcode mcp logout <name>".to_owned());
    };
    let manager = match manager_for(name, layout, err) {
        Ok(manager) => manager,
        Err(message) => {
            let _ = writeln!(err, "Error: {message}");
            return Ok(1);
        }
    };
    match manager.sign_out(name) {
        Ok(true) => {
            let _ = writeln!(
                out,
                "Signed out of MCP server \"{name}\"; its tokens were removed."
            );
            Ok(0)
        }
        Ok(false) => {
            let _ = writeln!(out, "MCP server \"{name}\" has no stored sign-in.");
            Ok(0)
        }
        Err(error @ McpError::NotOAuth(_)) => {
            let _ = writeln!(err, "{error}");
            Ok(1)
        }
        Err(error) => Err(error.to_string()),
    }
}
