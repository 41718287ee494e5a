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
            ScriptedReply::tool_call(
                "call_1",
                "bash",
                r#"{"command":"echo prefixed=$PREFIXED"}"#,
            ),
            ScriptedReply::text("Ran."),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let shell = sandbox.project.join("shell.sh");
    std::fs::write(&shell, "#!/bin/sh\necho via-custom-shell\nexec /bin/sh \"$@\"\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(sandbox.project.join("shell.ts"), SHELL_OPTIONS).unwrap();
    let run = knightcode(
        &sandbox,
        &["--mode", "json", "-e", "shell.ts", "run it"],
    );
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
