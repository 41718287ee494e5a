//! An untrusted project cannot choose where its transcripts go: the project file's
//! `sessionDir` applies only to a project trusted before the session starts.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::Sandbox;
use oneshot_common::knightcode;

/// A sandbox whose project asks for its sessions in `<project>/leak`.
fn sandbox(server: &MockServer) -> Sandbox {
    let sandbox = oneshot_common::sandbox(server);
    let dot = sandbox.project.join(".knightcode");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::write(dot.join("settings.json"), r#"{"sessionDir":"leak"}"#).unwrap();
    sandbox
}

/// Session files under `dir`, at any depth.
fn sessions_under(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                sessions_under(&path)
            } else {
                usize::from(path.extension().is_some_and(|ext| ext == "jsonl"))
            }
        })
        .sum()
}

fn server() -> MockServer {
    MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("stored")],
    )
    .unwrap()
}

#[test]
fn an_untrusted_projects_session_dir_is_not_used_and_the_user_is_told() {
    for (label, args, global) in [
        ("--no-approve", vec!["-na"], None),
        (
            "defaultProjectTrust never",
            vec![],
            Some(r#"{"defaultProjectTrust":"never"}"#),
        ),
        // Undecided (ask) outside the terminal UI is not trusted either.
        ("no decision", vec![], None),
    ] {
        let server = server();
        let sandbox = sandbox(&server);
        if let Some(global) = global {
            std::fs::write(sandbox.agent.join("settings.json"), global).unwrap();
        }
        let mut all = args.clone();
        all.extend(["-p", "hello"]);
        let run = knightcode(&sandbox, &all);
        assert_eq!(run.code, 0, "{label}: {}", run.stderr);
        assert_eq!(run.stdout.trim(), "stored", "{label}");
        assert!(
            !sandbox.project.join("leak").exists(),
            "{label}: the transcript went where the untrusted project said"
        );
        assert_eq!(
            sessions_under(&sandbox.agent.join("sessions")),
            1,
            "{label}: the session is in the default folder"
        );
        assert!(
            run.stderr
                .contains("the project's sessionDir setting (\"leak\") is not used"),
            "{label}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_trusted_projects_session_dir_is_used() {
    let server = server();
    let sandbox = sandbox(&server);
    let run = knightcode(&sandbox, &["--approve", "-p", "hello"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sessions_under(&sandbox.project.join("leak")), 1);
    assert_eq!(sessions_under(&sandbox.agent.join("sessions")), 0);
    assert!(!run.stderr.contains("sessionDir"), "{}", run.stderr);
}
