//! Drives the real `knightcode` binary: exit codes, stdout and stderr of the command-line layer.

use std::path::Path;

use assert_cmd::Command;
use assert_cmd::cargo::cargo_bin_cmd;
use tempfile::TempDir;

/// The binary with an empty environment and a throwaway home, so nothing on this machine
/// (API keys, ~/.knightcode) leaks into the result.
fn knightcode(home: &Path) -> Command {
    let mut cmd = cargo_bin_cmd!("knightcode");
    cmd.env_clear().env("HOME", home).current_dir(home);
    cmd
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn run_args(args: &[&str]) -> Run {
    let home = TempDir::new().unwrap();
    run(knightcode(home.path()).args(args))
}

/// Exit 1, nothing on stdout, exactly this on stderr.
fn assert_fails_with(args: &[&str], stderr: &str) {
    let r = run_args(args);
    assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
    assert_eq!(r.stdout, "", "{args:?}");
    assert_eq!(r.stderr, stderr, "{args:?}");
}

#[test]
fn version_prints_the_number_alone() {
    for flag in ["--version", "-v"] {
        let r = run_args(&[flag]);
        assert_eq!(r.code, 0);
        assert_eq!(r.stdout, format!("{}\n", env!("CARGO_PKG_VERSION")));
        assert_eq!(r.stderr, "");
    }
    // It wins over help and messages, like the reference.
    let r = run_args(&["--help", "hello", "--version"]);
    assert_eq!((r.code, r.stdout.trim()), (0, env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_and_version_read_no_configuration() {
    // No HOME at all and an agent dir full of broken files: nothing is loaded, both answer.
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("models.json"), "{ not json").unwrap();
    std::fs::write(dir.path().join("auth.json"), "[1, 2").unwrap();
    std::fs::write(dir.path().join("settings.json"), "nope").unwrap();
    for flag in ["--help", "--version"] {
        let mut cmd = cargo_bin_cmd!("knightcode");
        cmd.env_clear()
            .env("KNIGHTCODE_CODING_AGENT_DIR", dir.path())
            .current_dir(dir.path())
            .arg(flag);
        let r = run(&mut cmd);
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        assert_eq!(r.stderr, "", "{flag}");
        assert!(!r.stdout.is_empty());
    }
}

#[test]
fn help_lists_every_option_alias_and_value() {
    let r = run_args(&["--help"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stderr, "");
    let help = r.stdout;
    let expected = [
        "-h, --help",
        "-v, --version",
        "--mode <text|json|rpc>",
        "-p, --print [message]",
        "--provider <name>",
        "--model <pattern>",
        "--api-key <key>",
        "--thinking <level>",
        "off, minimal, low, medium, high, xhigh or max",
        "--models <patterns>",
        "--list-models [search]",
        "-c, --continue",
        "-r, --resume",
        "--session <path|id>",
        "--session-id <id>",
        "--fork <path|id>",
        "--session-dir <dir>",
        "--no-session",
        "-n, --name <name>",
        "-t, --tools <list>",
        "-xt, --exclude-tools <list>",
        "-nbt, --no-builtin-tools",
        "-nt, --no-tools",
        "-e, --extension <path>",
        "-ne, --no-extensions",
        "--no-mcp",
        "--skill <path>",
        "-ns, --no-skills",
        "--prompt-template <path>",
        "-np, --no-prompt-templates",
        "--theme <path>",
        "--use-theme <name[/name]>",
        "--no-themes",
        "-nc, --no-context-files",
        "--system-prompt <text|path>",
        "--append-system-prompt <text|path>",
        "--tui-mode <regular|fullscreen>",
        "--verbose",
        "-a, --approve",
        "-na, --no-approve",
        "--offline",
        "--export <in.jsonl> [out.html]",
    ];
    for option in expected {
        assert!(help.contains(option), "help lacks {option:?}");
    }
    for var in [
        "KNIGHTCODE_CODING_AGENT_DIR",
        "KNIGHTCODE_CODING_AGENT_SESSION_DIR",
        "KNIGHTCODE_PACKAGE_DIR",
        "KNIGHTCODE_OFFLINE",
        "KNIGHTCODE_SKIP_VERSION_CHECK",
        "KNIGHTCODE_DISABLE_AUTO_UPDATE",
        "KNIGHTCODE_BIN_PATH",
        "KNIGHTCODE_DISABLE_FILE_CHECKPOINTS",
        "KNIGHTCODE_TELEMETRY",
        "KNIGHTCODE_CACHE_RETENTION",
        "KNIGHTCODE_SHARE_VIEWER_URL",
        "KNIGHTCODE_RADIUS_GATEWAY",
        "KNIGHTCODE_SERVER_DIR",
        "KNIGHTCODE_SERVER_ID",
        "KNIGHTCODE_HARDWARE_CURSOR",
        "KNIGHTCODE_CLEAR_ON_SHRINK",
        "KNIGHTCODE_HYPERLINKS",
        "KNIGHTCODE_IMAGE_PROTOCOL",
        "KNIGHTCODE_TRUE_COLOR",
        "KNIGHTCODE_TUI_ESC_TIMEOUT",
        "KNIGHTCODE_STARTUP_BENCHMARK",
        "BRAVE_API_KEY",
        "VISUAL",
        "EDITOR",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ANTHROPIC_API_KEY",
    ] {
        assert!(help.contains(var), "help lacks {var}");
    }
    assert!(help.contains("Usage:") && help.contains("Examples:"));
    assert!(help.contains("knightcode [options] [--] [@file ...] [message ...]"));
}

#[test]
fn short_help_is_the_same_text() {
    let long = run_args(&["--help"]);
    let short = run_args(&["-h"]);
    assert_eq!(short.code, 0);
    assert_eq!(short.stdout, long.stdout);
}

#[test]
fn unknown_short_option_is_an_error() {
    assert_fails_with(&["-x"], "Error: Unknown option: -x\n");
    // Every parse error is printed, and errors win over --help and --version.
    assert_fails_with(
        &["-q", "--help", "-z", "--version"],
        "Error: Unknown option: -q\nError: Unknown option: -z\n",
    );
}

#[test]
fn provider_without_model_is_an_error() {
    let r = run_args(&["--provider", "openai", "-p", "hi"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.starts_with("Error: --provider requires --model"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
}

#[test]
fn fork_and_session_id_conflicts() {
    assert_fails_with(
        &["--fork", "abc", "--continue", "--no-session"],
        "Error: --fork cannot be combined with --continue, --no-session\n",
    );
    assert_fails_with(
        &["--session-id", "abc", "-r", "--session", "x.jsonl"],
        "Error: --session-id cannot be combined with --session, --resume\n",
    );
    assert_fails_with(
        &["--session-id", "not valid"],
        "Error: Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character\n",
    );
    // Checked before --help, as in the reference.
    assert_fails_with(
        &["--help", "--fork", "a", "-c"],
        "Error: --fork cannot be combined with --continue\n",
    );
}

#[test]
fn name_must_not_be_empty() {
    assert_fails_with(
        &["--name", ""],
        "Error: --name requires a non-empty value\n",
    );
    assert_fails_with(&["-n", "  "], "Error: --name requires a non-empty value\n");
    assert_fails_with(&["--name"], "Error: --name requires a value\n");
}

#[test]
fn other_value_errors() {
    assert_fails_with(
        &["--use-theme", "--help"],
        "Error: --use-theme requires a theme name\n",
    );
    assert_fails_with(
        &["--tui-mode", "big"],
        "Error: Invalid TUI mode \"big\". Valid values: regular, fullscreen\n",
    );
    assert_fails_with(
        &["--tools", "read,+grep"],
        "Error: --tools: tool names cannot be mixed with +name or -name entries (\"+grep\")\n",
    );
    assert_fails_with(
        &["--mode", "rpc", "@notes.md"],
        "Error: @file arguments are not supported in RPC mode\n",
    );
}

#[test]
fn warnings_do_not_stop_the_run() {
    let r = run_args(&["--thinking", "huge", "--version"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, format!("{}\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(
        r.stderr,
        "Warning: Invalid thinking level \"huge\". Valid values: off, minimal, low, medium, high, xhigh, max\n"
    );
}

/// An agent dir whose models.json adds a custom provider with a literal key (so it counts as
/// available) and two models.
fn agent_dir_with_custom_provider() -> TempDir {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("models.json"),
        r#"{
  // comments are allowed in models.json
  "providers": {
    "local-llm": {
      "baseUrl": "http://127.0.0.1:9/v1",
      "api": "openai-completions",
      "apiKey": "sk-local",
      "models": [
        { "id": "qwen-coder-32b", "contextWindow": 131072, "maxTokens": 8192, "reasoning": true },
        { "id": "llama-vision-8b", "contextWindow": 128000, "maxTokens": 4096, "input": ["text", "image"] }
      ]
    }
  }
}"#,
    )
    .unwrap();
    dir
}

fn list_models(agent_dir: &Path, extra: &[&str]) -> Run {
    let home = TempDir::new().unwrap();
    run(knightcode(home.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", agent_dir)
        .arg("--list-models")
        .args(extra))
}

#[test]
fn list_models_shows_custom_provider() {
    let agent = agent_dir_with_custom_provider();
    let r = list_models(agent.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    assert_eq!(
        r.stdout,
        "provider   model            context  max-out  thinking  images\n\
         local-llm  llama-vision-8b  128K     4.1K     no        yes   \n\
         local-llm  qwen-coder-32b   131.1K   8.2K     yes       no    \n"
    );
}

#[test]
fn list_models_search_filters() {
    let agent = agent_dir_with_custom_provider();
    let r = list_models(agent.path(), &["qwen"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout,
        "provider   model           context  max-out  thinking  images\n\
         local-llm  qwen-coder-32b  131.1K   8.2K     yes       no    \n"
    );
    // Tokens match provider and id together, in any order of words.
    let r = list_models(agent.path(), &["local vision"]);
    assert!(r.stdout.contains("llama-vision-8b") && !r.stdout.contains("qwen"));
    let r = list_models(agent.path(), &["mistral"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "No models matching \"mistral\"\n")
    );
}

#[test]
fn list_models_uses_environment_keys_for_builtin_providers() {
    let agent = agent_dir_with_custom_provider();
    let home = TempDir::new().unwrap();
    let r = run(knightcode(home.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", agent.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["--list-models", "anthropic"]));
    assert_eq!(r.code, 0);
    let providers: Vec<&str> = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(!providers.is_empty());
    assert!(providers.iter().all(|p| *p == "anthropic"), "{}", r.stdout);
}

#[test]
fn list_models_with_no_credentials_says_so() {
    let agent = TempDir::new().unwrap();
    let package = TempDir::new().unwrap();
    let home = TempDir::new().unwrap();
    // A local model server on the developer's machine would be listed.
    std::fs::write(
        agent.path().join("settings.json"),
        r#"{"localModels": false}"#,
    )
    .unwrap();
    let r = run(knightcode(home.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", agent.path())
        .env("KNIGHTCODE_PACKAGE_DIR", package.path())
        .arg("--list-models"));
    assert_eq!(r.code, 0);
    // Every way to get a model, and no pointer at documentation that is not there.
    assert!(
        r.stdout.starts_with("No models available. To use a model"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("ANTHROPIC_API_KEY"), "{}", r.stdout);
    let models_json = agent.path().join("models.json");
    assert!(r.stdout.contains(&models_json.display().to_string()));
    assert!(!r.stdout.contains(&package.path().display().to_string()));
    // With the documentation beside the package, it is named.
    let docs = package.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("providers.md"), "# Providers\n").unwrap();
    let r = run(knightcode(home.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", agent.path())
        .env("KNIGHTCODE_PACKAGE_DIR", package.path())
        .arg("--list-models"));
    assert!(
        r.stdout
            .contains(&docs.join("providers.md").display().to_string()),
        "{}",
        r.stdout
    );
}

#[test]
fn list_models_defaults_to_the_home_agent_dir() {
    let home = TempDir::new().unwrap();
    let agent = home.path().join(".knightcode").join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let custom = agent_dir_with_custom_provider();
    std::fs::copy(custom.path().join("models.json"), agent.join("models.json")).unwrap();
    let r = run(knightcode(home.path()).args(["--list-models", "qwen"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("qwen-coder-32b"), "{}", r.stdout);
    // A `~/` agent dir expands against the home directory.
    let r = run(knightcode(home.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", "~/.knightcode/agent")
        .args(["--list-models", "qwen"]));
    assert!(r.stdout.contains("qwen-coder-32b"), "{}", r.stdout);
}

#[test]
fn list_models_warns_about_broken_files_and_still_lists() {
    let agent = TempDir::new().unwrap();
    std::fs::write(agent.path().join("models.json"), "{ \"providers\": 3 }").unwrap();
    std::fs::write(agent.path().join("auth.json"), "{ broken").unwrap();
    let home = TempDir::new().unwrap();
    let r = run(knightcode(home.path())
        .env("KNIGHTCODE_CODING_AGENT_DIR", agent.path())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["--list-models", "openai"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("Warning: errors loading models.json:\n"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("providers"), "{}", r.stderr);
    assert!(
        r.stderr.contains("Warning: ignoring stored credentials:"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("auth.json"), "{}", r.stderr);
    assert!(r.stdout.starts_with("provider"), "{}", r.stdout);
    assert!(r.stdout.contains("openai"), "{}", r.stdout);
}

#[test]
fn export_writes_a_page_of_the_session_and_says_where() {
    let home = TempDir::new().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/tools/session.jsonl");
    let before = std::fs::read(&fixture).unwrap();
    let r = run(knightcode(home.path()).args(["--export", fixture.to_str().unwrap(), "out.html"]));
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "Exported to: out.html\n", "")
    );
    let page = std::fs::read_to_string(home.path().join("out.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("Inspect notes.txt and uppercase beta"));
    assert!(!page.contains("src=\"http"), "self-contained");
    assert_eq!(
        std::fs::read(&fixture).unwrap(),
        before,
        "the input is only read"
    );

    // Without an output the page is named after the input, in the working directory.
    let r = run(knightcode(home.path()).args(["--export", fixture.to_str().unwrap()]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Exported to: knightcode-session-session.html\n");
    assert!(
        home.path()
            .join("knightcode-session-session.html")
            .is_file()
    );
}

#[test]
fn export_of_a_missing_or_foreign_file_fails_with_exit_1() {
    let home = TempDir::new().unwrap();
    let missing = home.path().join("nope.jsonl");
    let r = run(knightcode(home.path()).args(["--export", missing.to_str().unwrap()]));
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        format!("Error: File not found: {}\n", missing.display())
    );

    let foreign = home.path().join("foreign.jsonl");
    std::fs::write(&foreign, "{\"hello\":1}\n").unwrap();
    let r = run(knightcode(home.path()).args(["--export", foreign.to_str().unwrap()]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with("Error: "), "{}", r.stderr);
    assert!(
        r.stderr.contains("not a valid knightcode session"),
        "{}",
        r.stderr
    );
    assert!(!home.path().join("knightcode-session-foreign.html").exists());
}

#[test]
fn auth_help_lists_its_commands() {
    let r = run_args(&["auth", "--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .starts_with("Usage:\n  knightcode auth login [<provider>] [--api-key] [-e <extension>]... [--no-extensions]\n")
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn package_commands_answer_help_and_config_needs_a_terminal() {
    let r = run_args(&["install", "--help"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Usage:\n  knightcode install <source> [-l]\n")
    );
    let r = run_args(&["config", "--help"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            "Usage: knightcode config [-l|--local] [--approve|--no-approve]\n"
        )
    );
    let r = run_args(&["config", "-x"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("Unknown option -x for \"config\".\n"),
        "{}",
        r.stderr
    );
    // No terminal here (output is captured): the screen cannot open.
    let r = run_args(&["config"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "Error: knightcode config needs a terminal; edit the settings files instead (docs/packages.md).\n"
    );
}

#[test]
fn closed_stdout_is_not_a_crash() {
    // The reader is gone before the help is written (as with `| head -1` finishing early):
    // the write fails with a broken pipe, which is no panic and no failure.
    let home = TempDir::new().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin!("knightcode"))
        .env_clear()
        .env("HOME", home.path())
        .arg("--help")
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
}
