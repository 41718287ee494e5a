//! `ctx.getSystemPromptOptions()` in a command through the real binary (JSON mode): what the
//! base system prompt is built from, current with the active tools.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;
use serde_json::Value;

const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("opts", {
    handler: async (args, ctx) => {
      const o = ctx.getSystemPromptOptions();
      pi.sendMessage({ customType: "opts", content: JSON.stringify({ tools: o.selectedTools, cwd: o.cwd === ctx.cwd, keys: Object.keys(o).sort() }), display: true });
    },
  });
  pi.registerCommand("narrow", { handler: async () => { pi.setActiveTools(["read"]); } });
}
"#;

#[test]
fn a_command_reads_the_system_prompt_options() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("opts.ts"), EXTENSION).unwrap();
    let run = knightcode(
        &sb,
        &[
            "--mode", "json", "-e", "opts.ts", "/opts", "/narrow", "/opts",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let reports: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "message_end" && e["message"]["customType"] == "opts")
        .map(|e| serde_json::from_str(e["message"]["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(reports.len(), 2, "{}", run.stdout);
    assert_eq!(
        reports[0]["tools"],
        serde_json::json!(["read", "bash", "edit", "write"])
    );
    assert_eq!(reports[0]["cwd"], true);
    for key in [
        "selectedTools",
        "toolSnippets",
        "cwd",
        "contextFiles",
        "skills",
    ] {
        assert!(
            reports[0]["keys"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == key),
            "{key}: {}",
            reports[0]
        );
    }
    assert_eq!(reports[1]["tools"], serde_json::json!(["read"]));
}
