//! What a codemode script's tool calls resolve to, through the real binary: the structured
//! content of a tool that declares an output schema (an extension's `outputSchema`, `bash`'s
//! output and exit code, a failed command's included) as `tool_result` handlers left it
//! (they see it as `structuredContent`), the text of any other, and the text again once a
//! handler replaced the content without new structured content.
//! With `codemode.mode: "on"` the declared tools' descriptions say what a script gets.

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;
use serde_json::json;

use crate::oneshot_common::knightcode;
use crate::oneshot_common::offered_description;
use crate::oneshot_common::sandbox;

/// A tool with an output schema, one without, and a `tool_result` handler that adds to the
/// `weather` tool's structured content and redacts the `secret` tool's text.
const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";

export default function (pi) {
  const schema = Type.Object({});
  pi.registerTool({
    name: "weather",
    label: "Weather",
    description: "Today's weather.",
    parameters: schema,
    outputSchema: {
      type: "object",
      properties: { city: { type: "string" }, celsius: { type: "number" } },
      required: ["city", "celsius"],
    },
    async execute() {
      return {
        content: [{ type: "text", text: "Oslo, 4 degrees" }],
        structuredContent: { city: "Oslo", celsius: 4 },
        details: {},
      };
    },
  });
  pi.registerTool({
    name: "plain",
    label: "Plain",
    description: "Text only.",
    parameters: schema,
    async execute() {
      return { content: [{ type: "text", text: "just text" }], structuredContent: { hidden: true }, details: {} };
    },
  });
  pi.registerTool({
    name: "secret",
    label: "Secret",
    description: "Data with a secret.",
    parameters: schema,
    outputSchema: { type: "object", properties: { token: { type: "string" } } },
    async execute() {
      return { content: [{ type: "text", text: "token=abc" }], structuredContent: { token: "abc" }, details: {} };
    },
  });
  pi.on("tool_result", (event) => {
    if (event.toolName === "secret") return { content: [{ type: "text", text: "[redacted]" }] };
    if (event.toolName === "weather") return { structuredContent: { ...event.structuredContent, seen: true } };
  });
}
"#;

/// The text of the last message (the codemode result) of a request body.
fn last_result(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"].to_string()
}

/// The description the request `body` gives the tool `name`.
fn description(body: &Value, name: &str) -> String {
    offered_description(body, name).unwrap_or_else(|| panic!("{name} is not offered: {body}"))
}

#[test]
fn scripts_get_structured_content_where_a_tool_declares_an_output_schema() {
    let code = r#"
const weather = await tools.weather({});
const plain = await tools.plain({});
const secret = await tools.secret({});
const failed = await tools.bash({ command: "echo oops; exit 3" });
return JSON.stringify({ weather, plain, secret, code: failed.exit_code, output: failed.output, wall: typeof failed.wall_time_seconds });
"#;
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "codemode", json!({ "code": code }).to_string()),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let dir = sandbox.agent.join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.ts"), EXTENSION).unwrap();
    let settings = json!({"defaultTools": ["+codemode"]});
    std::fs::write(sandbox.agent.join("settings.json"), settings.to_string()).unwrap();

    let run = knightcode(&sandbox, &["-p", "check the weather"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Done.\n");
    let requests = server.requests();

    // The script's view of each call.
    let result = last_result(&requests[1].body);
    assert!(result.contains("Script completed"), "{result}");
    let returned = r#"{\"weather\":{\"city\":\"Oslo\",\"celsius\":4,\"seen\":true},\"plain\":\"just text\",\"secret\":\"[redacted]\",\"code\":3,\"output\":\"oops\\n\",\"wall\":\"number\"}"#;
    assert!(result.contains(returned), "{result}");

    // Declared tools say what a script's call of them resolves to (`mode: "on"`).
    let first = &requests[0].body;
    let bash = description(first, "bash");
    assert!(
        bash.ends_with(
            "\n\nCodemode: `tools.bash(args)` resolves to \
             `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."
        ),
        "{bash}"
    );
    let read = description(first, "read");
    assert!(
        read.ends_with("\n\nCodemode: `tools.read(args)` resolves to a string."),
        "{read}"
    );
    let weather = description(first, "weather");
    assert_eq!(
        weather,
        "Today's weather.\n\nCodemode: `tools.weather(args)` resolves to `{ city, celsius }`."
    );
    // codemode itself is not called from scripts.
    assert!(!description(first, "codemode").contains("tools.codemode("));
}
