//! The tool factories of the host package (`createBashTool`, `createReadTool`, …) in the
//! real binary against the mock model: a factory tool runs our built-in tool, a bash
//! `spawnHook` rewrites command and environment, and custom `operations` (pi's ssh example
//! shape) are called instead of the local disk and shell.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;

/// The text of the tool result the second request carries.
fn tool_result_text(server: &MockServer) -> String {
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool", "{last}");
    last["content"].to_string()
}

const SPAWN_HOOK: &str = r#"
import { createBashTool } from "@mariozechner/pi-coding-agent";

export default function (pi) {
  const bashTool = createBashTool(process.cwd(), {
    spawnHook: ({ command, cwd, env }) => ({ command: `echo hooked\n${command}`, cwd, env: { ...env, PI_SPAWN_HOOK: "1" } }),
  });
  pi.registerTool({ ...bashTool, execute: async (id, params, signal, onUpdate) => bashTool.execute(id, params, signal, onUpdate) });
}
"#;

#[test]
fn a_factory_bash_tool_runs_our_bash_with_the_spawn_hook_applied() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call(
                "call_1",
                "bash",
                r#"{"command":"echo value=$PI_SPAWN_HOOK"}"#,
            ),
            ScriptedReply::text("Done."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("hook.ts"), SPAWN_HOOK).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "hook.ts", "run it"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = tool_result_text(&server);
    assert!(result.contains("hooked"), "{result}");
    assert!(result.contains("value=1"), "{result}");
    // The definition the model sees is our bash tool's.
    let tools = server.requests()[0].body["tools"].clone();
    let bash = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "bash")
        .unwrap()
        .clone();
    assert!(
        bash["function"]["parameters"]["properties"]["command"].is_object(),
        "{bash}"
    );
}

const WRITE: &str = r#"
import { createWriteTool } from "@mariozechner/pi-coding-agent";

export default function (pi) {
  const write = createWriteTool(process.cwd());
  pi.registerTool({ ...write, label: "Write (ours)" });
}
"#;

#[test]
fn a_factory_write_tool_writes_the_file() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "write", r#"{"path":"out.txt","content":"hello"}"#),
            ScriptedReply::text("Written."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("write.ts"), WRITE).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "write.ts", "write it"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("out.txt")).unwrap(),
        "hello"
    );
    let result = tool_result_text(&server);
    assert!(result.contains("Successfully wrote"), "{result}");
}

const REMOTE: &str = r#"
import { createBashTool, createReadTool } from "@mariozechner/pi-coding-agent";

export default function (pi) {
  const cwd = process.cwd();
  const read = createReadTool(cwd, {
    operations: {
      readFile: async (p) => Buffer.from(`remote contents of ${p.replace(cwd, "/remote")}\n`),
      access: async () => {},
    },
  });
  const bash = createBashTool(cwd, {
    operations: {
      exec: async (command, dir, { onData }) => {
        onData(Buffer.from(`ran [${command}] in ${dir.replace(cwd, "/remote")}\n`));
        return { exitCode: 0 };
      },
    },
  });
  pi.registerTool(read);
  pi.registerTool(bash);
}
"#;

#[test]
fn factory_tools_with_custom_operations_call_them_instead_of_the_local_machine() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("Read."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("remote.ts"), REMOTE).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "remote.ts", "read notes"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = tool_result_text(&server);
    assert!(
        result.contains("remote contents of /remote/notes.txt"),
        "{result}"
    );

    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_2", "bash", r#"{"command":"uname -a"}"#),
            ScriptedReply::text("Ran."),
        ],
    )
    .unwrap();
    let sandbox = oneshot_common::sandbox(&server);
    std::fs::write(sandbox.project.join("remote.ts"), REMOTE).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "remote.ts", "run uname"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = tool_result_text(&server);
    assert!(result.contains("ran [uname -a] in /remote"), "{result}");
}

const SHELL_OPTIONS: &str = r#"
import { createBashTool } from "@mariozechner/pi-coding-agent";

export default function (pi) {
  const cwd = process.cwd();
  const bash = createBashTool(cwd, { shellPath: `${cwd}/shell.sh`, commandPrefix: "export PREFIXED=yes" });
  pi.registerTool({
    ...bash,
    // The factory's partial results reach the onUpdate it is given, here a rewriting one.
    execute: (id, params, signal, onUpdate) =>
      bash.execute(id, params, signal, (partial) =>
        onUpdate({ content: [{ type: "text", text: `wrapped: ${partial.content[0].text}` }], details: partial.details })),
  });
}
"#;

#[test]
fn the_bash_factory_uses_its_shell_and_prefix_and_reports_partials_to_the_given_on_update() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "bash", r#"{"command":"echo prefixed=$PREFIXED"}"#),
            ScriptedReply::text("Ran."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let shell = sandbox.project.join("shell.sh");
    std::fs::write(
        &shell,
        "#!/bin/sh\necho via-custom-shell\nexec /bin/sh \"$@\"\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(sandbox.project.join("shell.ts"), SHELL_OPTIONS).unwrap();
    let run = knightcode(&sandbox, &["--mode", "json", "-e", "shell.ts", "run it"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = tool_result_text(&server);
    assert!(result.contains("via-custom-shell"), "{result}");
    assert!(result.contains("prefixed=yes"), "{result}");
    let updates: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("\"tool_execution_update\""))
        .collect();
    assert!(!updates.is_empty(), "no partial results: {}", run.stdout);
    assert!(
        updates.iter().all(|l| l.contains("wrapped: ")),
        "{updates:#?}"
    );
}

const REMOTE_SEARCH: &str = r#"
import { createFindTool, createGrepTool } from "@mariozechner/pi-coding-agent";

export default function (pi) {
  const cwd = process.cwd();
  const asked = [];
  pi.registerTool(createFindTool(cwd, {
    operations: {
      exists: async (p) => { asked.push(`exists ${p.replace(cwd, "<cwd>")}`); return true; },
      glob: async (pattern, dir, { ignore, limit }) => {
        asked.push(`glob ${pattern} ${dir.replace(cwd, "<cwd>")} ${ignore.join(",")} ${limit}`);
        return [`${dir}/remote/a.ts`, "remote/b.ts"];
      },
    },
  }));
  pi.registerTool(createGrepTool(cwd, {
    operations: {
      isDirectory: async (p) => { asked.push(`isDirectory ${p.replace(cwd, "<cwd>")}`); return true; },
      readFile: async (p) => "",
    },
  }));
  pi.on("agent_end", () => { require("node:fs").writeFileSync("asked.txt", asked.join("\n")); });
}
"#;

#[test]
fn find_and_grep_factories_with_custom_operations_ask_them() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "find", r#"{"pattern":"*.ts"}"#),
            ScriptedReply::text("Found."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("search.ts"), REMOTE_SEARCH).unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "search.ts", "find ts"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = tool_result_text(&server);
    assert!(result.contains("remote/a.ts\\nremote/b.ts"), "{result}");
    let asked = std::fs::read_to_string(sandbox.project.join("asked.txt")).unwrap();
    assert_eq!(
        asked,
        "exists <cwd>\nglob *.ts <cwd> **/node_modules/**,**/.git/** 1000"
    );

    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_2", "grep", r#"{"pattern":"needle"}"#),
            ScriptedReply::text("Searched."),
        ],
    )
    .unwrap();
    let sandbox = oneshot_common::sandbox(&server);
    std::fs::write(sandbox.project.join("search.ts"), REMOTE_SEARCH).unwrap();
    std::fs::write(sandbox.project.join("hay.txt"), "a needle here\n").unwrap();
    let run = knightcode(&sandbox, &["-p", "-e", "search.ts", "grep"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = tool_result_text(&server);
    assert!(result.contains("hay.txt:1: a needle here"), "{result}");
    let asked = std::fs::read_to_string(sandbox.project.join("asked.txt")).unwrap();
    assert_eq!(asked, "isDirectory <cwd>");
}

const READ_AS_IS: &str = r#"
import { createReadTool } from "@mariozechner/pi-coding-agent";

export default function (pi) {
  pi.registerTool(createReadTool(process.cwd(), { autoResizeImages: false }));
}
"#;

/// The image block's width and height as the second request carries it (an OpenAI
/// `image_url` data URL in the user message that follows the tool result).
fn sent_image_size(server: &MockServer) -> (u32, u32) {
    let body = server.requests()[1].body.to_string();
    let start = body
        .find("data:image/png;base64,")
        .expect("an image in the request")
        + "data:image/png;base64,".len();
    let end = start + body[start..].find('"').unwrap();
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&body[start..end])
        .unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    (image.width(), image.height())
}

#[test]
fn the_read_factory_without_auto_resize_sends_a_large_image_as_it_is() {
    let wide = image::RgbImage::from_fn(2400, 8, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8])
    });
    for (extension, expected) in [(READ_AS_IS, 2400), (WRITE, 2000)] {
        let server = MockServer::start_blocking(
            WireFormat::OpenAiCompletions,
            vec![
                ScriptedReply::tool_call("call_1", "read", r#"{"path":"wide.png"}"#),
                ScriptedReply::text("Seen."),
            ],
        )
        .unwrap();
        let sandbox = sandbox(&server);
        // A model that takes images, so the image reaches the request.
        let models = serde_json::json!({"providers": {"mock": {
            "baseUrl": server.base_url(), "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "mock-model", "name": "Mock", "reasoning": false, "input": ["text", "image"],
                        "contextWindow": 128000, "maxTokens": 4096}]}}});
        std::fs::write(sandbox.agent.join("models.json"), models.to_string()).unwrap();
        wide.save(sandbox.project.join("wide.png")).unwrap();
        // The write-only extension leaves our own read tool, which fits images to 2000 px.
        std::fs::write(sandbox.project.join("ext.ts"), extension).unwrap();
        let run = knightcode(&sandbox, &["-p", "-e", "ext.ts", "look"]);
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        assert_eq!(sent_image_size(&server).0, expected);
    }
}
