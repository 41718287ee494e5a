//! `knightcode mcp list|add|remove` (and `login|logout`, in `mcp_login`): the MCP servers of `mcp.json` (docs/mcp.md), checked by
//! connecting to each, and entries added or removed without touching the rest of the file.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use knightcode_mcp::Scope;
use knightcode_mcp::ServerState;
use serde_json::Value;
use serde_json::json;

const USAGE: &str = "Usage:\n  knightcode mcp list [--json]\n  knightcode mcp add <name> [--scope user|project] [-l|--local] [--env K=V]... [--exposure E] [--description D] -- <command> [args...]\n  knightcode mcp add <name> [--scope user|project] [-l|--local] [--header K=V]... [--exposure E] [--description D] --url <url>\n  knightcode mcp remove <name> [--scope user|project] [-l|--local]\n  knightcode mcp login <name> [--timeout <seconds>]\n  knightcode mcp logout <name>\n";

/// How long `list` waits for each server to connect and list its tools.
const LIST_WAIT: Duration = Duration::from_secs(60);

/// Where the command works.
#[derive(Debug, Clone)]
pub struct Layout {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
}

/// Runs `knightcode mcp …` (`argv` starts after `mcp`); the exit code.
pub fn run(argv: &[String], layout: &Layout, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match argv.first().map(String::as_str) {
        Some("list") => match &argv[1..] {
            [] => list(layout, false, out, err),
            [flag] if flag == "--json" => list(layout, true, out, err),
            _ => Err("usage: knightcode mcp list [--json]".to_owned()),
        },
        Some("add") => add(&argv[1..], layout, out),
        Some("remove" | "rm") => remove(&argv[1..], layout, out),
        Some("login") => crate::mcp_login::login(&argv[1..], layout, out, err),
        Some("logout") => crate::mcp_login::logout(&argv[1..], layout, out, err),
        Some("-h" | "--help" | "help") => {
            let _ = out.write_all(USAGE.as_bytes());
            return 0;
        }
        Some(other) => Err(format!(
            "unknown mcp command \"{other}\"; the commands are list, add, remove, login and logout"
        )),
        None => {
            Err("knightcode mcp needs a command: list, add, remove, login or logout".to_owned())
        }
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "Error: {message}\n\n{USAGE}");
            1
        }
    }
}

/// Whether the project's `mcp.json` may be read: the saved trust decision, as print mode
/// decides it (an undecided project is not trusted).
pub(crate) fn project_trusted(layout: &Layout) -> bool {
    let Ok(store) = knightcode_runtime::TrustStore::load(&layout.agent_dir) else {
        return false;
    };
    knightcode_runtime::trust::resolve_non_interactive(
        &layout.cwd,
        layout.home.as_deref(),
        None,
        &store,
        knightcode_runtime::settings::DefaultProjectTrust::Ask,
    )
    .trusted
}

/// `list`: connects to every enabled server and reports it (text, or `--json` as the
/// reference prints it); exit 1 on a config problem or an enabled server not connected.
fn list(
    layout: &Layout,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let config =
        knightcode_mcp::load_config(&layout.agent_dir, &layout.cwd, project_trusted(layout));
    let mut code = u8::from(!config.issues.is_empty());
    let note = config.ignored_project_file.as_ref().map(|path| {
        format!(
            "{} was not read: the project is not trusted. Start knightcode in the project to trust it.",
            path.display()
        )
    });
    if !json {
        for issue in &config.issues {
            let _ = writeln!(err, "Error: {issue}");
        }
        if let Some(note) = &note {
            let _ = writeln!(err, "Note: {note}");
        }
    }
    if config.servers.is_empty() && !json {
        let _ = writeln!(
            out,
            "No MCP servers configured. Add one with: knightcode mcp add <name> -- <command> [args...]"
        );
        return Ok(code);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let (statuses, resources) = runtime.block_on(async {
        let manager =
            knightcode_mcp::McpManager::new(config.servers.clone(), connect_options(layout));
        manager.start();
        manager.wait_settled(LIST_WAIT).await;
        let statuses = manager.statuses();
        // The JSON report counts resources and templates, as the reference's does.
        let mut resources = Vec::new();
        if json {
            resources = crate::mcp_report::resource_counts(&manager, &statuses).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), manager.stop()).await;
        (statuses, resources)
    });
    if statuses
        .iter()
        .any(|s| s.config.enabled && s.state != ServerState::Connected)
    {
        code = 1;
    }
    if json {
        let report = crate::mcp_report::json_report(&statuses, &resources, &config.issues, note);
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        let _ = writeln!(out, "{text}");
        return Ok(code);
    }
    for line in knightcode_mcp::status_lines(&statuses) {
        let _ = writeln!(out, "{line}");
    }
    Ok(code)
}

/// `--scope user|project` or `-l`/`--local`.
/// How the commands reach servers: the workspace's HTTP client, `mcp.log`, the tokens of
/// `mcp-auth.json`, and the providers' tokens of `auth.json` for `auth.provider`.
pub(crate) fn connect_options(layout: &Layout) -> knightcode_mcp::ConnectOptions {
    knightcode_mcp::ConnectOptions {
        cwd: layout.cwd.clone(),
        home: layout.home.clone(),
        env: std::sync::Arc::new(|name| std::env::var(name).ok()),
        http: knightcode_ai::http_client_builder()
            .ok()
            .and_then(|b| b.build().ok()),
        log: Some(std::sync::Arc::new(knightcode_mcp::ServerLog::new(
            layout.agent_dir.join("mcp.log"),
        ))),
        auth: Some(std::sync::Arc::new(knightcode_mcp::AuthStore::new(
            &layout.agent_dir,
        ))),
        provider_token: Some(knightcode_runtime::mcp::provider_token(
            &layout.agent_dir,
            std::sync::Arc::new(knightcode_ai::ProcessEnv),
        )),
    }
}

fn scope_option(args: &[String], i: &mut usize, scope: &mut Scope) -> Result<bool, String> {
    match args[*i].as_str() {
        "-l" | "--local" => *scope = Scope::Project,
        "--scope" => {
            *i += 1;
            *scope = match args.get(*i).map(String::as_str) {
                Some("user" | "global") => Scope::User,
                Some("project" | "local") => Scope::Project,
                _ => return Err("--scope takes user or project".to_owned()),
            };
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn path_for(scope: Scope, layout: &Layout) -> PathBuf {
    // The commands edit files: an extension's scope never reaches here (`-l` or not).
    match scope {
        Scope::Project => knightcode_mcp::project_config_path(&layout.cwd),
        Scope::User | Scope::Extension => knightcode_mcp::user_config_path(&layout.agent_dir),
    }
}

fn pair(flag: &str, value: Option<&String>) -> Result<(String, String), String> {
    value
        .and_then(|v| v.split_once('='))
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{flag} takes KEY=VALUE"))
}

fn add(args: &[String], layout: &Layout, out: &mut dyn Write) -> Result<u8, String> {
    let name = args
        .first()
        .filter(|n| !n.starts_with('-'))
        .ok_or("knightcode mcp add needs a server name")?;
    let mut scope = Scope::User;
    let mut url = None;
    let mut env = serde_json::Map::new();
    let mut headers = serde_json::Map::new();
    let mut exposure = None;
    let mut description = None;
    let mut command: Vec<String> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        if scope_option(args, &mut i, &mut scope)? {
            i += 1;
            continue;
        }
        match args[i].as_str() {
            "--url" => {
                i += 1;
                url = Some(args.get(i).ok_or("--url needs a URL")?.clone());
            }
            "--env" | "-e" => {
                i += 1;
                let (k, v) = pair("--env", args.get(i))?;
                env.insert(k, Value::String(v));
            }
            "--header" => {
                i += 1;
                let (k, v) = pair("--header", args.get(i))?;
                headers.insert(k, Value::String(v));
            }
            "--exposure" => {
                i += 1;
                exposure = Some(args.get(i).ok_or("--exposure needs a value")?.clone());
            }
            "--description" => {
                i += 1;
                description = Some(args.get(i).ok_or("--description needs a value")?.clone());
            }
            "--" => {
                command = args[i + 1..].to_vec();
                break;
            }
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            // The command starts here; its own flags pass through untouched.
            _ => {
                command = args[i..].to_vec();
                break;
            }
        }
        i += 1;
    }
    let mut entry = match (url, command.split_first()) {
        (Some(_), Some(_)) => return Err("give either --url or a command, not both".to_owned()),
        (None, None) => {
            return Err("give a command after -- (stdio) or --url (streamable HTTP)".to_owned());
        }
        (Some(url), None) => {
            if !env.is_empty() {
                return Err("--env only applies to stdio servers.".to_owned());
            }
            let mut entry = json!({"url": url});
            if !headers.is_empty() {
                entry["headers"] = Value::Object(headers);
            }
            entry
        }
        (None, Some((program, rest))) => {
            if !headers.is_empty() {
                return Err("--header only applies to HTTP servers.".to_owned());
            }
            let mut entry = json!({"command": program});
            if !rest.is_empty() {
                entry["args"] = json!(rest);
            }
            if !env.is_empty() {
                entry["env"] = Value::Object(env);
            }
            entry
        }
    };
    if let Some(exposure) = exposure {
        entry["exposure"] = Value::String(exposure);
    }
    if let Some(description) = description {
        entry["description"] = Value::String(description);
    }
    knightcode_mcp::check_entry(name, &entry, scope).map_err(|e| e.to_string())?;
    let path = path_for(scope, layout);
    let http = entry.get("url").is_some();
    let replaced = knightcode_mcp::add_server(&path, name, entry).map_err(|e| e.to_string())?;
    let verb = if replaced { "Replaced" } else { "Added" };
    let _ = writeln!(
        out,
        "{verb} {} MCP server \"{name}\" in {}.",
        scope.as_str(),
        path.display()
    );
    if scope == Scope::Project && !project_trusted(layout) {
        let _ = writeln!(
            out,
            "The project is not trusted yet: its mcp.json is read once you trust it."
        );
    }
    if http {
        let _ = writeln!(
            out,
            "Check it with: knightcode mcp list. If it requires sign-in: knightcode mcp login {name}"
        );
    } else {
        let _ = writeln!(out, "Check it with: knightcode mcp list");
    }
    Ok(0)
}

fn remove(args: &[String], layout: &Layout, out: &mut dyn Write) -> Result<u8, String> {
    let name = args
        .first()
        .filter(|n| !n.starts_with('-'))
        .ok_or("knightcode mcp remove needs a server name")?;
    let mut scope = Scope::User;
    let mut i = 1;
    while i < args.len() {
        if !scope_option(args, &mut i, &mut scope)? {
            return Err(format!("unknown option {}", args[i]));
        }
        i += 1;
    }
    let path = path_for(scope, layout);
    if knightcode_mcp::remove_server(&path, name).map_err(|e| e.to_string())? {
        let _ = writeln!(
            out,
            "Removed {} MCP server \"{name}\" from {}.",
            scope.as_str(),
            path.display()
        );
        return Ok(0);
    }
    let (other, hint) = match scope {
        Scope::Project => (Scope::User, "; omit --local"),
        Scope::User | Scope::Extension => (Scope::Project, "; use --local"),
    };
    let defined_there = defines(&path_for(other, layout), name);
    Err(format!(
        "MCP server \"{name}\" is not defined in {}{}",
        path.display(),
        if defined_there { hint } else { "" }
    ))
}

fn defines(path: &Path, name: &str) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|v| v["mcpServers"].get(name).is_some())
}
