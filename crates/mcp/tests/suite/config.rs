//! `mcp.json`: both files, merging, overrides, and every validation message.

use std::path::Path;
use std::time::Duration;

use knightcode_mcp::Exposure;
use knightcode_mcp::LoadedConfig;
use knightcode_mcp::Scope;
use knightcode_mcp::Transport;
use knightcode_mcp::load_config;

struct Dirs {
    _root: tempfile::TempDir,
    agent: std::path::PathBuf,
    project: std::path::PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let project = root.path().join("project");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(project.join(".knightcode")).unwrap();
    Dirs {
        _root: root,
        agent,
        project,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn load(user: &str, project: Option<&str>) -> (LoadedConfig, Dirs) {
    let dirs = dirs();
    write(&dirs.agent.join("mcp.json"), user);
    if let Some(project) = project {
        write(&dirs.project.join(".knightcode/mcp.json"), project);
    }
    (load_config(&dirs.agent, &dirs.project, true), dirs)
}

fn messages(config: &LoadedConfig) -> Vec<String> {
    config.issues.iter().map(|i| i.message.clone()).collect()
}

#[test]
fn a_stdio_and_an_http_server_with_defaults() {
    let (config, dirs) = load(
        r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "${TOKEN}"}, "cwd": "~/x"},
            "docs": {"url": "https://example.com/mcp", "headers": {"X-Key": "!pass show key"}, "exposure": "codemode-deferred"}
        }}"#,
        None,
    );
    assert_eq!(messages(&config), Vec::<String>::new());
    assert!(config.auto_enable_codemode);
    let [files, docs] = &config.servers[..] else {
        panic!("{:?}", config.servers);
    };
    assert_eq!(files.name, "files");
    assert_eq!(files.scope, Scope::User);
    assert_eq!(files.source, dirs.agent.join("mcp.json"));
    assert_eq!(files.exposure, Exposure::Codemode);
    assert_eq!(files.timeout, Duration::from_secs(60));
    assert!(files.enabled);
    assert_eq!(
        files.transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server".into()],
            env: vec![("TOKEN".into(), "${TOKEN}".into())],
            cwd: Some("~/x".into()),
        }
    );
    assert_eq!(docs.transport.kind(), "http");
    assert_eq!(docs.exposure, Exposure::Codemode);
}

#[test]
fn each_invalid_entry_is_reported_and_skipped() {
    let (config, _dirs) = load(
        r#"{"mcpServers": {
            "bad name": {"command": "x"},
            "e": {"command": "x", "exposure": "everywhere"},
            "t": {"command": "x", "timeout": 0},
            "t2": {"command": "x", "timeout": "soon"},
            "sse": {"type": "sse", "url": "https://example.com/sse"},
            "none": {"description": "nothing to start"},
            "te": {"command": "x", "toolExposure": {"get_*": "sometimes"}},
            "ok": {"command": "x", "toolExposure": {"get_*": "direct", "*": "hidden"}}
        }, "autoEnableCodemode": "yes"}"#,
        None,
    );
    assert_eq!(
        messages(&config),
        [
            r#""autoEnableCodemode" must be true or false"#,
            r#"invalid server name "bad name" (use letters, digits, "_" and "-")"#,
            r#"server "e": exposure must be one of "codemode", "deferred", "direct", "hidden""#,
            r#"server "t": timeout must be a positive number of seconds"#,
            r#"server "t2": timeout must be a positive number of seconds"#,
            r#"server "sse": legacy SSE transport is not supported; use the streamable HTTP URL"#,
            r#"server "none" needs either "command" (stdio) or "url" (streamable HTTP)"#,
            r#"server "te": toolExposure "get_*" must be one of "codemode", "deferred", "direct", "hidden""#,
        ]
    );
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let ok = &config.servers[0];
    assert_eq!(ok.exposure_of("get_issue"), Exposure::Direct);
    assert_eq!(ok.exposure_of("delete_issue"), Exposure::Hidden);
}

#[test]
fn oauth_and_auth_settings_are_checked() {
    let (config, _dirs) = load(
        r#"{"mcpServers": {
            "port": {"url": "https://a.example/mcp", "oauth": {"callbackPort": 70000}},
            "cb": {"url": "https://a.example/mcp", "oauth": {"callbackUrl": "https://localhost/cb"}},
            "cbq": {"url": "https://a.example/mcp", "oauth": {"callbackUrl": "http://127.0.0.1:9000/cb?x=1"}},
            "cbp": {"url": "https://a.example/mcp", "oauth": {"callbackUrl": "http://localhost:9000/cb", "callbackPort": 9001}},
            "cimd": {"url": "https://a.example/mcp", "oauth": {"clientRegistration": "cimd", "clientId": "x"}},
            "meta": {"url": "https://a.example/mcp", "oauth": {"authServerMetadataUrl": "http://auth.example/m"}},
            "both": {"url": "https://a.example/mcp", "oauth": {}, "auth": {"provider": "anthropic"}},
            "header": {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer x"}, "auth": {"provider": "anthropic"}},
            "plain": {"url": "http://a.example/mcp", "auth": {"provider": "anthropic"}},
            "noprov": {"url": "https://a.example/mcp", "auth": {}},
            "ok": {"url": "https://a.example/mcp", "oauth": {"clientId": "id", "callbackPort": 8123,
                   "callbackUrl": "http://localhost/cb", "scope": "a b", "clientName": "Mine"}},
            "local": {"url": "http://127.0.0.1:5/mcp", "auth": {"provider": "anthropic"}}
        }}"#,
        None,
    );
    assert_eq!(
        messages(&config),
        [
            r#"server "port": oauth.callbackPort must be an integer from 1 to 65535"#,
            r#"server "cb": oauth.callbackUrl must be an http address on localhost, 127.0.0.1 or [::1] without query or fragment"#,
            r#"server "cbq": oauth.callbackUrl must be an http address on localhost, 127.0.0.1 or [::1] without query or fragment"#,
            r#"server "cbp": oauth.callbackUrl's port 9000 differs from oauth.callbackPort 9001"#,
            r#"server "cimd": oauth.clientRegistration "cimd" cannot be combined with clientId or clientName"#,
            r#"server "meta": oauth.authServerMetadataUrl must be an https address (or http on localhost)"#,
            r#"server "both": auth cannot be combined with oauth"#,
            r#"server "header": auth cannot be combined with an Authorization header"#,
            r#"server "plain": auth sends a provider's token, so the url must be https (or http on localhost)"#,
            r#"server "noprov": auth must be an object with a "provider" string"#,
        ]
    );
    let Transport::Http { oauth, .. } = &config.servers[0].transport else {
        panic!("ok is an HTTP server");
    };
    let oauth = oauth.as_ref().unwrap();
    assert_eq!(oauth.client_id.as_deref(), Some("id"));
    assert_eq!(
        oauth.callback_url.as_deref(),
        Some("http://localhost:8123/cb")
    );
    assert_eq!(oauth.scope.as_deref(), Some("a b"));
    assert_eq!(oauth.client_name.as_deref(), Some("Mine"));
    assert!(matches!(
        &config.servers[1].transport,
        Transport::Http { auth_provider: Some(p), .. } if p == "anthropic"
    ));
}

#[test]
fn broken_files_say_which_file() {
    let (config, dirs) = load("{not json", Some(r#"["a list"]"#));
    let text: Vec<String> = config.issues.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 2, "{text:?}");
    assert!(
        text[0].starts_with(&format!(
            "{}: key must be a string",
            dirs.agent.join("mcp.json").display()
        )),
        "{text:?}"
    );
    assert_eq!(
        text[1],
        format!(
            "{}: expected an object with an \"mcpServers\" object",
            dirs.project.join(".knightcode/mcp.json").display()
        )
    );
}

#[test]
fn the_project_replaces_and_overrides_user_entries() {
    let (config, dirs) = load(
        r#"{"mcpServers": {
            "a": {"command": "user-a"},
            "b": {"command": "user-b", "env": {"TOKEN": "secret"}},
            "c": {"command": "user-c"}
        }, "autoEnableCodemode": true}"#,
        Some(
            r#"{"mcpServers": {
            "a": {"command": "project-a"},
            "b": {"exposure": "direct", "enabled": false, "toolExposure": {"x": "hidden"}},
            "c": {"exposure": "direct", "description": "not allowed"},
            "d": {"exposure": "direct"},
            "e": {"url": "https://example.com", "auth": {"provider": "anthropic"}}
        }, "autoEnableCodemode": false}"#,
        ),
    );
    let project_file = dirs.project.join(".knightcode/mcp.json");
    assert_eq!(
        messages(&config),
        [
            r#"server "c": an override can only set enabled, exposure, toolExposure"#,
            r#"server "e": auth is only allowed in the global mcp.json"#,
            r#"server "d" needs "command" or "url", or a global server to override"#,
        ]
    );
    assert!(!config.auto_enable_codemode);
    let a = &config.servers[0];
    assert_eq!(a.scope, Scope::Project);
    assert!(matches!(&a.transport, Transport::Stdio { command, .. } if command == "project-a"));
    let b = &config.servers[1];
    assert_eq!(b.scope, Scope::User);
    assert!(b.overridden);
    assert_eq!(b.source, project_file);
    assert!(!b.enabled);
    assert_eq!(b.exposure, Exposure::Direct);
    assert_eq!(b.exposure_of("x"), Exposure::Hidden);
    assert!(matches!(&b.transport, Transport::Stdio { env, .. } if env[0].1 == "secret"));
    assert_eq!(config.servers[2].name, "c");
    assert_eq!(config.servers[2].exposure, Exposure::Codemode);
}

#[test]
fn names_differing_only_in_dash_and_underscore_clash() {
    let (config, _dirs) = load(
        r#"{"mcpServers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}"#,
        None,
    );
    assert_eq!(messages(&config), [r#"server "a_b" conflicts with "a-b""#]);
    assert_eq!(config.servers.len(), 1);
}

#[test]
fn an_untrusted_project_file_is_not_read() {
    let dirs = dirs();
    write(
        &dirs.project.join(".knightcode/mcp.json"),
        r#"{"mcpServers": {"p": {"command": "x"}}}"#,
    );
    let config = load_config(&dirs.agent, &dirs.project, false);
    assert!(config.servers.is_empty());
    assert!(config.issues.is_empty());
    assert_eq!(
        config.ignored_project_file,
        Some(dirs.project.join(".knightcode/mcp.json"))
    );
}

#[test]
fn add_and_remove_keep_the_rest_of_the_file() {
    let dirs = dirs();
    let path = dirs.agent.join("mcp.json");
    write(
        &path,
        r#"{"autoEnableCodemode": false, "mcpServers": {"keep": {"command": "k"}}}"#,
    );
    let entry = serde_json::json!({"command": "node", "args": ["server.js"]});
    assert!(!knightcode_mcp::add_server(&path, "new", entry.clone()).unwrap());
    assert!(knightcode_mcp::add_server(&path, "new", entry).unwrap());
    let config = load_config(&dirs.agent, &dirs.project, false);
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["keep", "new"]);
    assert!(!config.auto_enable_codemode);
    assert!(knightcode_mcp::remove_server(&path, "new").unwrap());
    assert!(!knightcode_mcp::remove_server(&path, "new").unwrap());
    let missing = dirs.project.join(".knightcode/none.json");
    assert!(!knightcode_mcp::remove_server(&missing, "x").unwrap());
}
