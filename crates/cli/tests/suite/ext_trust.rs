//! The two passes around project trust: with the project's trust undecided, the user's own
//! extensions load first and may answer `project_trust`; the project's extensions load
//! after, only when the answer trusts the project.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::Sandbox;
use oneshot_common::knightcode;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;

/// A project extension (a protected resource: trust is undecided) that registers
/// `project_tool`, and one that would trust any project if it were asked (it is not:
/// project extensions load after the decision).
fn project_with_extensions(sb: &Sandbox) {
    let dir = sb.project.join(".knightcode").join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("project.ts"),
        r#"export default function (pi) {
  pi.registerTool({
    name: "project_tool", label: "Project", description: "from the project",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
  pi.on("project_trust", () => ({ trusted: "yes" }));
}
"#,
    )
    .unwrap();
}

fn user_extension(sb: &Sandbox, answer: &str) {
    let dir = sb.agent.join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gate.ts"),
        format!(
            r#"export default function (pi) {{
  pi.on("project_trust", (event) => {{
    if (typeof event.cwd !== "string") throw new Error("no cwd");
    return {answer};
  }});
}}
"#
        ),
    )
    .unwrap();
}

fn run(answer: &str) -> (Sandbox, MockServer, oneshot_common::Run) {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sb = sandbox(&server);
    project_with_extensions(&sb);
    user_extension(&sb, answer);
    let run = knightcode(&sb, &["-p", "hi"]);
    (sb, server, run)
}

fn trust_file(sb: &Sandbox) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(sb.agent.join("trust.json")).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

#[test]
fn a_user_extension_that_trusts_the_project_lets_its_extensions_load() {
    let (sb, server, run) = run(r#"{ trusted: "yes", remember: true }"#);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert!(
        offered_tools(&requests[0].body).contains(&"project_tool".to_owned()),
        "{:?}",
        offered_tools(&requests[0].body)
    );
    // `remember` saved the decision for the folder.
    let saved = trust_file(&sb).expect("trust.json written");
    let key = std::fs::canonicalize(&sb.project).unwrap();
    assert_eq!(saved[key.to_str().unwrap()], serde_json::json!(true));
}

#[test]
fn undecided_keeps_the_project_untrusted_and_its_extensions_unread() {
    let (sb, server, run) = run(r#"{ trusted: "undecided" }"#);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert!(
        !offered_tools(&requests[0].body).contains(&"project_tool".to_owned()),
        "the project's extension must not load"
    );
    assert!(run.stderr.contains("defaultProjectTrust"), "{}", run.stderr);
    assert_eq!(trust_file(&sb), None);
}

#[test]
fn no_and_without_remember_is_not_saved() {
    let (sb, server, run) = run(r#"{ trusted: "no" }"#);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert!(!offered_tools(&requests[0].body).contains(&"project_tool".to_owned()));
    assert!(run.stderr.contains("project_trust"), "{}", run.stderr);
    assert_eq!(trust_file(&sb), None);
}
