//! The real binary in JSON and print mode against a scripted model: it reads a file, lists the
//! folder, edits the file and answers; the session is recorded and `--continue` resumes it.

use std::process::Command;

use crate::common;
use crate::oneshot_common;

use common::session_files;
use common::usage;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::command;
use oneshot_common::knightcode;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;
use serde_json::Value;

fn four_turns() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::default()
            .with_text("Reading the file.")
            .with_tool_call("call_read", "read", r#"{"path":"notes.txt"}"#)
            .with_usage(usage(100, 10)),
        ScriptedReply::tool_call("call_ls", "ls", r#"{"path":"."}"#).with_usage(usage(120, 8)),
        ScriptedReply::tool_call(
            "call_edit",
            "edit",
            r#"{"path":"notes.txt","edits":[{"oldText":"beta","newText":"BETA"}]}"#,
        )
        .with_usage(usage(140, 12)),
        ScriptedReply::text("Done: beta is now BETA.").with_usage(usage(160, 6)),
    ]
}

/// The event stream with run-specific values (ids, times, durations) replaced, one line each.
fn normalised(stdout: &str) -> String {
    fn scrub(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match key.as_str() {
                        "id" | "parentId" | "timestamp" | "durationMs" | "cwd" | "responseId"
                            if !v.is_object() =>
                        {
                            *v = Value::String(format!("<{key}>"));
                        }
                        _ => scrub(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    stdout
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            scrub(&mut value);
            value.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn json_mode_reads_lists_edits_and_answers() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, four_turns()).unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(
        &sandbox,
        &[
            "--mode",
            "json",
            "--tools",
            "read,bash,edit,write,ls",
            "Uppercase beta in notes.txt",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    // The edit happened on disk.
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("notes.txt")).unwrap(),
        "alpha\nBETA\ngamma\n"
    );

    // Strict JSONL: the header, then events; stdout carries nothing else.
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    let types: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.first(), Some(&"agent_start"));
    assert_eq!(types.last(), Some(&"agent_settled"));
    let tools: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "tool_execution_end")
        .map(|l| l["toolName"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "ls", "edit"]);
    for end in lines.iter().filter(|l| l["type"] == "tool_execution_end") {
        assert_eq!(end["isError"], false, "{end}");
        assert!(end["durationMs"].is_u64(), "{end}");
    }
    // message_update is delta-only: no cumulative snapshots on the wire.
    for update in lines.iter().filter(|l| l["type"] == "message_update") {
        assert!(
            update.get("message").is_none()
                && update["assistantMessageEvent"].get("partial").is_none()
        );
    }
    let starts: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["type"] == "message_update" && l["assistantMessageEvent"]["type"] == "toolcall_start"
        })
        .collect();
    assert_eq!(starts[0]["assistantMessageEvent"]["toolName"], "read");
    assert_eq!(starts[0]["assistantMessageEvent"]["id"], "call_read");
    insta::assert_snapshot!("json_mode_four_turns", normalised(&run.stdout));

    // The session file holds the whole conversation and matches the header.
    let files = session_files(&sandbox.agent);
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let entries: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        entries[0], lines[0],
        "the stream's header is the file's header"
    );
    let roles: Vec<String> = entries[1..]
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => e["message"]["role"].as_str().unwrap().to_owned(),
            other => other.to_owned(),
        })
        .collect();
    assert_eq!(
        roles,
        [
            "model_change",
            "thinking_level_change",
            "system",
            "custom",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "assistant",
            "custom"
        ]
    );
    assert_eq!(entries[4]["customType"], "knightcode.turn");
    assert_eq!(entries[13]["customType"], "knightcode.turnEnd");
    let edit_result = &entries[11]["message"];
    assert!(
        edit_result["details"]["diff"]
            .as_str()
            .unwrap()
            .contains("BETA")
    );
}

#[test]
fn continue_sends_the_whole_prior_conversation() {
    let mut replies = four_turns();
    replies.push(ScriptedReply::text("Still BETA."));
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    let first = knightcode(
        &sandbox,
        &[
            "--tools",
            "read,ls,edit",
            "-p",
            "Uppercase beta in notes.txt",
        ],
    );
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.stdout, "Done: beta is now BETA.\n");

    let second = knightcode(
        &sandbox,
        &[
            "--tools",
            "read,ls,edit",
            "--continue",
            "-p",
            "Is it still uppercase?",
        ],
    );
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(second.stdout, "Still BETA.\n");
    assert_eq!(
        session_files(&sandbox.agent).len(),
        1,
        "continued, not a new session"
    );

    let requests = server.requests();
    let last = &requests.last().unwrap().body["messages"];
    let roles: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user"
        ]
    );
    assert_eq!(last[1]["content"][0]["text"], "Uppercase beta in notes.txt");
    assert_eq!(last[2]["tool_calls"][0]["id"], "call_read");
    assert_eq!(last[3]["content"], "alpha\nbeta\ngamma\n");
    assert_eq!(last[9]["content"][0]["text"], "Is it still uppercase?");
}

#[test]
fn provider_errors_exit_1_with_the_message_and_keep_the_session() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::http_error(400)],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("400"), "{}", run.stderr);
}

#[test]
fn a_clean_exit_leaves_no_lock_file() {
    // The session gives its file up before the event stream ends, so the front end never
    // exits ahead of the lock's removal (about every other print-mode run left its `.lock`).
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        (0..5).map(|_| ScriptedReply::text("ok")).collect(),
    )
    .unwrap();
    let sandbox = sandbox(&server);
    for _ in 0..5 {
        let run = knightcode(&sandbox, &["-p", "hello"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let sessions = sandbox.agent.join("sessions");
    let locks: Vec<_> = walk(&sessions)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "lock"))
        .collect();
    assert!(locks.is_empty(), "left behind: {locks:?}");
    assert_eq!(session_files(&sandbox.agent).len(), 5);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn json_mode_also_exits_1_when_the_answer_is_an_error() {
    // Print mode exits 1 on a failed answer; JSON mode used to exit 0 with the error only in
    // its events (a script checking `$?` saw success).
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::http_error(400)],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(&sandbox, &["--mode", "json", "-p", "hello"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("400"), "{}", run.stderr);
    let error = run
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message_end")
        .find_map(|event| event["message"]["errorMessage"].as_str().map(str::to_owned));
    assert!(error.is_some_and(|e| e.contains("400")), "{}", run.stdout);
}

#[test]
fn untrusted_project_settings_are_skipped_with_a_notice() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::create_dir_all(sandbox.project.join(".knightcode")).unwrap();
    // Would select a model that does not exist, if it were applied.
    std::fs::write(
        sandbox.project.join(".knightcode/settings.json"),
        r#"{"defaultProvider":"nope","defaultModel":"nope","defaultTools":[]}"#,
    )
    .unwrap();
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ok\n");
    assert!(run.stderr.contains("Project not trusted"), "{}", run.stderr);
    assert!(
        run.stderr.contains(".knightcode/settings.json"),
        "{}",
        run.stderr
    );
    // The tools were not emptied by the skipped project settings.
    let tools = server.requests()[0].body["tools"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert_eq!(tools, 4);
}

#[test]
fn an_invalid_setting_warns_and_reads_as_its_default() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"defaultTools": "read", "steeringMode": "sometimes"}"#,
    )
    .unwrap();
    let run = knightcode(&sandbox, &["-p", "hello"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ok\n");
    for expected in [
        "settings.json: defaultTools is \"read\", expected an array of strings; ignoring it",
        "steeringMode is \"sometimes\", expected \"all\" or \"one-at-a-time\"; using \"one-at-a-time\"",
    ] {
        assert!(run.stderr.contains(expected), "{}", run.stderr);
    }
    // The invalid list reads as the default one: the four built-in tools are offered.
    let tools = server.requests()[0].body["tools"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert_eq!(tools, 4);
}

/// The `tools` of a request as the provider receives them: every built-in tool, with the
/// reference's key order (`type`, `required`, `properties`) and `edit`'s
/// `additionalProperties: false`, which also makes an edit with an unknown key fail
/// validation before it touches the file, as it does in pi.
#[test]
fn requests_carry_the_tool_schemas_and_edit_refuses_unknown_keys() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call(
                "call_edit",
                "edit",
                r#"{"path":"notes.txt","edits":[{"oldText":"beta","newText":"BETA","replaceAll":true}]}"#,
            ),
            ScriptedReply::text("Left it alone."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(
        &sandbox,
        &[
            "--mode",
            "json",
            "--tools",
            "read,bash,edit,write,grep,find,ls",
            "Uppercase beta in notes.txt",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
    let end = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true, "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Validation failed for tool \"edit\":\n  - edits/0: "),
        "{text}"
    );
    assert!(text.contains("replaceAll"), "{text}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    insta::assert_snapshot!(
        "request_tools",
        serde_json::to_string_pretty(&requests[0].body["tools"]).unwrap()
    );
}

#[test]
fn missing_file_arguments_fail_before_any_request() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(&sandbox, &["-p", "@missing.txt", "summarise"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("File not found:"), "{}", run.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn kill_9_mid_run_leaves_a_session_that_continue_resumes() {
    use knightcode_testkit::Fault;
    let replies = vec![
        ScriptedReply::tool_call("call_read", "read", r#"{"path":"notes.txt"}"#),
        // The second turn stalls mid-stream: the process is killed while it waits.
        ScriptedReply::text("This reply never finishes").with_fault(Fault::StallAfterEvents(2)),
        ScriptedReply::text("Resumed fine."),
    ];
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    let mut child = command(&sandbox, &["-p", "Read notes.txt"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (on the server's own state, not a timer) until the second request is stalled.
    let reached = server.wait_until_blocking(|a| a.stalls >= 1, std::time::Duration::from_secs(60));
    assert!(
        reached.is_some(),
        "the run never reached the second model request"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    server.release_stalls();

    // Everything finished before the second request is on disk, and the file is clean.
    let files = session_files(&sandbox.agent);
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.ends_with('\n'));
    let roles: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["message"]["role"].as_str().map(str::to_owned)
        })
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "toolResult"]);

    let resumed = knightcode(&sandbox, &["--continue", "-p", "Go on"]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    assert_eq!(resumed.stdout, "Resumed fine.\n");
    let requests = server.requests();
    let last = &requests.last().unwrap().body["messages"];
    let roles: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
}

#[test]
fn sigterm_kills_running_commands_and_exits_143() {
    use std::io::BufRead as _;
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::tool_call(
            "call_sleep",
            "bash",
            r#"{"command":"echo started $$; sleep 100"}"#,
        )],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let mut child = command(&sandbox, &["--mode", "json", "wait a while"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Read events until the command reports its shell pid: it is running now.
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let shell_pid = loop {
        let line = lines
            .next()
            .expect("stream ended before the command ran")
            .unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] != "tool_execution_update" {
            continue;
        }
        let text = event["partialResult"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if let Some(pid) = text.split_whitespace().nth(1) {
            break pid.parse::<u32>().unwrap();
        }
    };
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let remaining: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(143), "{exit:?}");
    // Gone, or a zombie waiting to be reaped by init: either way it no longer runs.
    let state = std::fs::read_to_string(format!("/proc/{shell_pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_owned)
        });
    assert!(
        matches!(state.as_deref(), None | Some("Z") | Some("X")),
        "the command's shell {shell_pid} survived in state {state:?}"
    );
    // Whatever was written before the exit is still whole JSON lines.
    for line in &remaining {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

#[test]
fn tool_patterns_offer_exactly_the_matching_tools() {
    let replies = vec![ScriptedReply::text("ok"); 3];
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    let runs: [&[&str]; 2] = [
        &["-p", "hi", "--tools", "r*,l*"],
        &["-p", "hi", "--tools", "*", "--exclude-tools", "*e*,bash"],
    ];
    for args in runs {
        let run = knightcode(&sandbox, args);
        assert_eq!((run.code, run.stdout.as_str()), (0, "ok\n"), "{args:?}");
        assert_eq!(run.stderr, "", "{args:?}");
    }
    // The defaultTools setting takes the same patterns.
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"defaultTools": ["*s*"]}"#,
    )
    .unwrap();
    let run = knightcode(&sandbox, &["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");

    let offered: Vec<Vec<String>> = server
        .requests()
        .iter()
        .map(|r| offered_tools(&r.body))
        .collect();
    assert_eq!(
        offered,
        [
            vec!["read", "ls"],
            vec!["find", "ls"],
            // `tool_search` is registered (inactive) too, so a pattern can name it.
            vec!["bash", "powershell", "ls", "websearch", "tool_search"]
        ]
    );
}

#[test]
fn unknown_tool_names_warn_with_the_available_tools_and_the_run_goes_on() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let run = knightcode(
        &sandbox,
        &["-p", "hi", "--tools", "read,raed", "--exclude-tools", "z*"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ok\n");
    assert_eq!(
        run.stderr,
        "Warning: --tools: \"raed\" matches no tool; ignoring it. Available tools: read, bash, powershell, edit, write, grep, find, ls, webfetch, websearch, tool_search, codemode.\n\
         Warning: --exclude-tools: \"z*\" matches no tool; ignoring it. Available tools: read, bash, powershell, edit, write, grep, find, ls, webfetch, websearch, tool_search, codemode.\n"
    );
    assert_eq!(offered_tools(&server.requests()[0].body), ["read"]);
}

#[test]
fn warnings_go_to_stderr_and_the_run_goes_on() {
    let replies = vec![ScriptedReply::text("ok"); 2];
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);

    let run = knightcode(&sandbox, &["-p", "hi", "--skill", "review.md", "--offline"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ok\n");
    assert_eq!(
        run.stderr,
        format!(
            "Warning: {}: skill path does not exist\n",
            sandbox.project.join("review.md").display()
        )
    );

    // JSON mode: the warnings stay off stdout, which is still JSON lines only.
    let run = knightcode(
        &sandbox,
        &[
            "--mode",
            "json",
            "--no-skills",
            "--fast",
            "--tui-mode",
            "fullscreen",
            "hi",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "Warning: unknown flag --fast (no loaded extension declares it); ignoring it.\n"
    );
    for line in run.stdout.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    assert!(run.stdout.contains("\"agent_settled\""));
    assert_eq!(server.requests().len(), 2);
}

/// The last user text of a chat-completions request.
fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

#[test]
fn print_and_json_modes_expand_templates_and_skill_commands() {
    let replies = vec![ScriptedReply::text("ok"); 3];
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, replies).unwrap();
    let sandbox = sandbox(&server);
    let templates = sandbox.home.join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(templates.join("greet.md"), "Say hello to $1 and ${@:2}.").unwrap();
    let skill = sandbox.agent.join("skills").join("tone").join("SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(&skill, "---\ndescription: Tone.\n---\nBe kind.\n").unwrap();
    let flag = templates.to_string_lossy().into_owned();

    let run = knightcode(
        &sandbox,
        &["-np", "--prompt-template", &flag, "-p", "/greet Ann Bo Cy"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = knightcode(&sandbox, &["--mode", "json", "/skill:tone now"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // --no-skills drops discovered skills: the text goes through as typed.
    let run = knightcode(&sandbox, &["-ns", "-p", "/skill:tone now"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(
        last_user_text(&requests[0].body),
        "Say hello to Ann and Bo Cy."
    );
    assert_eq!(
        last_user_text(&requests[1].body),
        format!(
            "<skill name=\"tone\" location=\"{}\">\nReferences are relative to {}.\n\nBe kind.\n</skill>\n\nnow",
            skill.display(),
            skill.parent().unwrap().display()
        )
    );
    assert_eq!(last_user_text(&requests[2].body), "/skill:tone now");
}
