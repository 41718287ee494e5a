//! `/export`, `/import`, `/share` and `/bug` in the real binary's terminal (issue 13).

use crate::tui_common;

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use knightcode_testkit::ScriptedReply;
use tui_common::Sandbox;

/// A stand-in `gh` in `dir`: logs its arguments, keeps a copy of the uploaded file, and
/// answers `auth status` with `auth_code`.
fn fake_gh(dir: &Path, auth_code: i32) {
    std::fs::create_dir_all(dir).unwrap();
    let script = format!(
        "#!/bin/sh\n\
         echo \"$@\" >> '{log}'\n\
         if [ \"$1\" = auth ]; then\n  [ {auth_code} -eq 0 ] || echo 'You are not logged into any GitHub hosts.' >&2\n  exit {auth_code}\nfi\n\
         if [ \"$1 $2\" = 'gist create' ]; then\n  cp \"$4\" '{copy}'\n  echo 'https://gist.github.com/someone/abc123def456'\n  exit 0\nfi\n\
         exit 2\n",
        log = dir.join("gh.log").display(),
        copy = dir.join("uploaded.html").display(),
    );
    let path = dir.join("gh");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn answered(sandbox: &Sandbox, env: &[(&str, &str)]) -> tui_common::Tui {
    let tui = sandbox.spawn_with_env(&[], env, 160, 40);
    tui.wait_for_text("mock-model");
    tui
}

#[test]
fn export_writes_html_and_branch_jsonl_and_says_where() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Exported answer here.")]);
    let mut tui = answered(&sandbox, &[]);
    tui.submit("/export");
    tui.wait_for_text("Nothing to export yet - start a conversation first");
    tui.submit("Question for the page");
    tui.wait_for_answer("Exported answer here.");
    tui.submit("/export");
    let session = sandbox.session_files().pop().unwrap();
    let stem = session.file_stem().unwrap().to_string_lossy().into_owned();
    let name = format!("knightcode-session-{stem}.html");
    tui.wait_for_text(&format!("Session exported to: {name}"));
    let page = std::fs::read_to_string(sandbox.project.join(&name)).unwrap();
    assert!(page.contains("Question for the page"));
    assert!(page.contains("Exported answer here."));
    // The page carries the system prompt and tools the session recorded.
    assert!(page.contains("\"systemPrompt\":"));
    assert!(page.contains("\"tools\":[{\"name\":\"read\""));

    tui.submit("/export out/branch.jsonl");
    let jsonl = sandbox.project.join("out/branch.jsonl");
    tui.wait_for_text(&format!("Session exported to: {}", jsonl.display()));
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert!(text.contains("Question for the page"));
    let mut previous = serde_json::Value::Null;
    for entry in &lines[1..] {
        assert_eq!(entry["parentId"], previous, "one line of entries");
        previous = entry["id"].clone();
    }
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn import_copies_a_session_in_and_continues_it() {
    let sandbox = tui_common::sandbox(vec![]);
    let source = sandbox.root.path().join("elsewhere/imported.jsonl");
    std::fs::create_dir_all(source.parent().unwrap()).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/simple/session.jsonl");
    let text = std::fs::read_to_string(fixture).unwrap().replace(
        "/tmp/kc-pi-fixture/project",
        sandbox.project.to_str().unwrap(),
    );
    std::fs::write(&source, &text).unwrap();
    let user_text = text
        .lines()
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["message"]["role"] == "user").then(|| {
                v["message"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
        })
        .unwrap();
    let mut tui = answered(&sandbox, &[]);
    tui.submit("/import");
    tui.wait_for_text("Usage: /import <path.jsonl>");
    tui.submit("/import missing.jsonl");
    tui.wait_for_text("Replace the current session with missing.jsonl?");
    tui.send("\r");
    tui.wait_for_text("Failed to import session: File not found:");
    tui.submit(&format!("/import {}", source.display()));
    tui.wait_for_text("Import and continue it");
    tui.send("\r");
    tui.wait_for_text(&format!("Session imported from: {}", source.display()));
    tui.wait_for_text(&user_text);
    let copies: Vec<_> = sandbox
        .session_files()
        .into_iter()
        .filter(|p| p.file_name().unwrap() == "imported.jsonl")
        .collect();
    assert_eq!(copies.len(), 1, "copied into the session folder");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn share_uploads_a_secret_gist_through_gh_and_prints_the_link() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Shared answer.")]);
    let bin = sandbox.root.path().join("bin");
    fake_gh(&bin, 0);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut tui = answered(
        &sandbox,
        &[
            ("PATH", &path),
            ("KNIGHTCODE_SHARE_VIEWER_URL", "https://viewer.test/s/"),
        ],
    );
    tui.submit("Question to share");
    tui.wait_for_answer("Shared answer.");
    tui.submit("/share");
    tui.wait_for_text("Share URL: https://viewer.test/s/#abc123def456");
    tui.wait_for_text("Gist: https://gist.github.com/someone/abc123def456");
    let log = std::fs::read_to_string(bin.join("gh.log")).unwrap();
    let calls: Vec<&str> = log.lines().collect();
    assert_eq!(calls[0], "auth status");
    assert!(
        calls[1].starts_with("gist create --public=false /"),
        "{log}"
    );
    assert!(calls[1].ends_with("/session.html"), "{log}");
    let uploaded = std::fs::read_to_string(bin.join("uploaded.html")).unwrap();
    assert!(uploaded.contains("Question to share"));
    let temp = calls[1].rsplit(' ').next().unwrap();
    assert!(!Path::new(temp).exists(), "the temporary page is removed");

    // Radius destinations are not built: said so, nothing run.
    std::fs::write(
        sandbox.agent.join("settings.json"),
        r#"{"sessionShareDestination": "radius"}"#,
    )
    .unwrap();
    tui.submit("/share");
    tui.wait_for_text("Sharing to a Radius artifact is not available");
    assert_eq!(std::fs::read_to_string(bin.join("gh.log")).unwrap(), log);
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn share_without_gh_or_a_login_says_what_to_do() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Answer.")]);
    let empty = sandbox.root.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let logged_out = sandbox.root.path().join("gh-logged-out");
    fake_gh(&logged_out, 1);
    let mut tui = answered(&sandbox, &[("PATH", empty.to_str().unwrap())]);
    tui.submit("Question");
    tui.wait_for_answer("Answer.");
    tui.submit("/share");
    tui.wait_for_text("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);

    let mut tui = answered(&sandbox, &[("PATH", logged_out.to_str().unwrap())]);
    tui.submit("/share");
    tui.wait_for_text("Nothing to export yet");
    tui.submit("/resume");
    tui.send("\r");
    tui.wait_for_text("Resumed");
    tui.submit("/share");
    tui.wait_for_text("GitHub CLI is not logged in. Run 'gh auth login' first");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn bug_writes_a_zip_without_credentials_and_says_upload_is_unavailable() {
    let sandbox = tui_common::sandbox(vec![ScriptedReply::text("Buggy answer.")]);
    std::fs::write(
        sandbox.agent.join("auth.json"),
        r#"{"anthropic":{"type":"api_key","key":"sk-ant-from-auth-json-123"}}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn_with_env(
        &["--provider", "mock", "--model", "mock-model"],
        &[("OPENAI_API_KEY", "sk-openai-env-secret-456")],
        160,
        40,
    );
    tui.wait_for_text("mock-model");
    tui.submit("Question before the bug");
    tui.wait_for_text("Buggy answer.");
    tui.submit("/bug the footer flickers");
    tui.wait_for_text("Include the transcript");
    tui.send("\x1b[B\r");
    tui.wait_for_text("is not available in this build of knightcode");
    let reports: Vec<_> = std::fs::read_dir(sandbox.agent.join("bug-reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1);
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&reports[0]).unwrap()).unwrap();
    let mut all = String::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).unwrap();
        all.push_str(&format!("== {}\n", file.name().unwrap()));
        file.read_to_string(&mut all).unwrap();
    }
    assert!(all.contains("the footer flickers"), "{all}");
    assert!(
        all.contains("Question before the bug"),
        "transcript included: {all}"
    );
    assert!(all.contains("mock/mock-model"), "{all}");
    for secret in [
        "sk-ant-from-auth-json-123",
        "sk-openai-env-secret-456",
        "test-key",
    ] {
        assert!(!all.contains(secret), "{secret} leaked: {all}");
    }
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
