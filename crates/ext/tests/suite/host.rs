//! The host driven through its API with small inline extensions.

use std::path::Path;
use std::sync::Arc;

use knightcode_agent::AgentHooks as _;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolContext;
use knightcode_ext::ExtError;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::json;
use tokio_util::sync::CancellationToken;

async fn load(dir: &Path, files: &[(&str, &str)]) -> Result<Arc<ExtensionHost>, ExtError> {
    let mut paths = Vec::new();
    for (name, source) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, source).unwrap();
        if !name.contains("node_modules") && !name.ends_with(".json") && !name.starts_with("lib/") {
            paths.push(path);
        }
    }
    // A cache of the test's own, never the user's.
    ExtensionHost::load_with_cache(
        HostConfig {
            paths,
            cwd: dir.to_path_buf(),
            mode: "print".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        },
        Some(dir.join(".cache")),
    )
    .await
}

const HELLO: &str = r#"
import { Type } from "@knightcode/ai";
import { defineTool, type ExtensionAPI } from "@knightcodeai/cli";
import { StringEnum } from "@mariozechner/pi-ai";
import * as path from "node:path";
import { helper } from "./lib/helper";
import data from "./lib/data.json";
import ms from "ms";

enum Greeting { Hello = "Hello", Hi = "Hi" }

const hello = defineTool({
  name: "hello",
  label: "Hello",
  description: "Greets someone",
  parameters: Type.Object({ name: Type.String({ description: "Who" }), mood: Type.Optional(StringEnum(["glad", "sad"] as const)) }),
  async execute(_id: string, params: { name: string }, _signal, onUpdate, ctx) {
    onUpdate?.({ content: [{ type: "text", text: "working" }], details: undefined });
    return { content: [{ type: "text", text: `${Greeting.Hello}, ${params.name}! ${helper()} ${data.n} ${ms(60000)} ${path.basename(ctx.cwd) !== ""}` }], details: { greeted: params.name } };
  },
});

export default function (pi: ExtensionAPI) {
  pi.registerTool(hello);
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_tool_with_local_imports_json_and_node_modules_runs() {
    let dir = tempfile::tempdir().unwrap();
    let host = load(
        dir.path(),
        &[
            ("hello.ts", HELLO),
            (
                "lib/helper.ts",
                "export const helper = (): string => \"from helper\";\n",
            ),
            ("lib/data.json", "{\"n\": 42}"),
            ("node_modules/ms/package.json", "{\"main\": \"index.js\"}"),
            (
                "node_modules/ms/index.js",
                "module.exports = function (v) { return v / 60000 + 'm'; };\n",
            ),
        ],
    )
    .await
    .unwrap();
    let registry = host.registry();
    assert_eq!(registry.tools.len(), 1);
    let spec = &registry.tools[0];
    assert_eq!(spec.name, "hello");
    assert_eq!(
        spec.parameters,
        json!({"type":"object","properties":{"name":{"type":"string","description":"Who"},"mood":{"type":"string","enum":["glad","sad"]}},"required":["name"]})
    );
    let tool = host.tools().remove(0);
    let updates = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&updates);
    let context = ToolContext::new("call-1", dir.path(), CancellationToken::new())
        .with_updates(Arc::new(move |p| seen.lock().unwrap().push(p)));
    let out = tool.execute(json!({"name": "Ada"}), context).await.unwrap();
    assert_eq!(
        out.content[0].as_text(),
        Some("Hello, Ada! from helper 42 1m true")
    );
    assert_eq!(out.details, Some(json!({"greeted": "Ada"})));
    assert_eq!(updates.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_handlers_block_mutate_and_a_throwing_one_blocks_as_a_fail_safe() {
    let dir = tempfile::tempdir().unwrap();
    let host = load(
        dir.path(),
        &[(
            "gate.ts",
            r#"
export default function (pi) {
  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash" && /rm -rf/.test(event.input.command)) return { block: true, reason: "no rm" };
    if (event.toolName === "bash") event.input.command = "echo safe";
    if (event.toolName === "boom") throw new Error("handler exploded");
  });
}
"#,
        )],
    )
    .await
    .unwrap();
    let cancel = CancellationToken::new();
    let blocked = host
        .before_tool_call(
            PendingToolCall {
                tool_call_id: "1",
                tool_name: "bash",
                arguments: &json!({"command": "rm -rf /"}),
                parent_tool_call_id: None,
            },
            &cancel,
        )
        .await;
    assert_eq!(blocked, ToolCallVerdict::Block("no rm".to_owned()));
    let rewritten = host
        .before_tool_call(
            PendingToolCall {
                tool_call_id: "2",
                tool_name: "bash",
                arguments: &json!({"command": "ls"}),
                parent_tool_call_id: None,
            },
            &cancel,
        )
        .await;
    assert_eq!(
        rewritten,
        ToolCallVerdict::Rewrite(json!({"command": "echo safe"}))
    );
    let failed = host
        .before_tool_call(
            PendingToolCall {
                tool_call_id: "3",
                tool_name: "boom",
                arguments: &json!({}),
                parent_tool_call_id: None,
            },
            &cancel,
        )
        .await;
    assert_eq!(
        failed,
        ToolCallVerdict::Block("handler exploded".to_owned())
    );
    let untouched = host
        .before_tool_call(
            PendingToolCall {
                tool_call_id: "4",
                tool_name: "read",
                arguments: &json!({"path": "a"}),
                parent_tool_call_id: None,
            },
            &cancel,
        )
        .await;
    assert_eq!(untouched, ToolCallVerdict::Proceed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_failures_name_the_extension_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(
        dir.path(),
        &[(
            "bad.ts",
            "type Api = { on: unknown };\n\nexport default function (pi: Api) {\n  throw new Error(\"nope\");\n}\n",
        )],
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("Failed to load extension \""), "{text}");
    // The location is the TypeScript line (4), not the stripped code's.
    let bad = dir.path().join("bad.ts");
    assert!(
        text.contains(&format!("bad.ts\": nope\n    at {}:4:", bad.display())),
        "{text}"
    );
    let err = load(
        dir.path(),
        &[(
            "syntax.ts",
            "export default function (pi) {\n  const = 1;\n}\n",
        )],
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("syntax.ts:2:"), "{err}");
    let err = load(dir.path(), &[("none.ts", "export const x = 1;\n")])
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Extension does not export a valid factory function"),
        "{err}"
    );
    let err = load(
        dir.path(),
        &[(
            "missing.ts",
            "import x from \"not-there\";\nexport default function () { x; }\n",
        )],
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("Cannot find module 'not-there' imported from"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_shims_the_examples_use() {
    let dir = tempfile::tempdir().unwrap();
    let host = load(
        dir.path(),
        &[(
            "node.ts",
            r#"
import * as fs from "node:fs";
import { execSync, spawnSync, exec } from "node:child_process";
import { promisify } from "node:util";
import { join } from "path";
import { homedir } from "os";
import { fileURLToPath } from "node:url";
const req = require("node:fs");

export default function (pi) {
  pi.registerTool({
    name: "probe", label: "probe", description: "d", parameters: { type: "object", properties: {} },
    async execute() {
      const file = join(process.cwd(), "out.txt");
      fs.writeFileSync(file, "written");
      const out = [
        fs.existsSync(file), fs.existsSync(file + ".nope"), fs.readFileSync(file, "utf8"),
        execSync("echo hi", { encoding: "utf8" }).trim(), spawnSync("sh", ["-c", "exit 3"]).status,
        (await promisify(exec)("echo async")).stdout.trim(), typeof homedir(), req === fs,
        fileURLToPath(import.meta.url).endsWith("node.ts"), (await pi.exec("sh", ["-c", "echo $0"])).stdout.trim(),
      ];
      // performance.now() has sub-millisecond steps; hrtime(previous) is a non-negative span.
      const t0 = performance.now(); let t1 = t0; while (t1 === t0) t1 = performance.now();
      const span = process.hrtime(process.hrtime());
      out.push(t1 - t0 < 1, span[0] >= 0 && span[1] >= 0 && span[1] < 1e9);
      await new Promise((r) => setTimeout(r, 1));
      return { content: [{ type: "text", text: JSON.stringify(out) }], details: undefined };
    },
  });
}
"#,
        )],
    )
    .await
    .unwrap();
    let tool = host.tools().remove(0);
    let cwd = std::env::current_dir().unwrap();
    let out = tool
        .execute(
            json!({}),
            ToolContext::new("c", &cwd, CancellationToken::new()),
        )
        .await
        .unwrap();
    assert_eq!(
        out.content[0].as_text(),
        Some(r#"[true,false,"written","hi",3,"async","string",true,true,"sh",true,true]"#)
    );
    let _ = std::fs::remove_file(cwd.join("out.txt"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_packages_keys_frontmatter_and_a_buffered_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let host = load(
        dir.path(),
        &[(
            "pkg.ts",
            r#"
import { spawn } from "node:child_process";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { Key } from "@mariozechner/pi-tui";

export default function (pi) {
  pi.registerTool({
    name: "probe", label: "probe", description: "d", parameters: { type: "object", properties: {} },
    async execute() {
      const { frontmatter, body } = parseFrontmatter("---\nname: scout\ntools: read, grep\nlist: [a, 'b']\nn: 3\nitems:\n  - x\n  - y\n---\n\nBody text\n");
      const spawned = await new Promise((resolve) => {
        const child = spawn("sh", ["-c", "echo out; echo err >&2; exit 4"], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "", err = "";
        child.stdout.on("data", (d) => { out += d.toString(); });
        child.stderr.on("data", (d) => { err += d.toString(); });
        child.on("close", (code) => resolve([out.trim(), err.trim(), code]));
      });
      const out = [Key.ctrlAlt("p"), Key.ctrlShift("u"), Key.escape, Key.slash, frontmatter, body, spawned];
      return { content: [{ type: "text", text: JSON.stringify(out) }], details: undefined };
    },
  });
}
"#,
        )],
    )
    .await
    .unwrap();
    let value = crate::common::probe_result(&host, dir.path()).await;
    assert_eq!(
        value,
        json!(["ctrl+alt+p", "ctrl+shift+u", "escape", "/",
            {"name": "scout", "tools": "read, grep", "list": ["a", "b"], "n": 3, "items": ["x", "y"]},
            "Body text", ["out", "err", 4]])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_shims_the_npm_packages_use() {
    let dir = tempfile::tempdir().unwrap();
    let host = load(
        dir.path(),
        &[
            (
                "npm.ts",
            r#"
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { debuglog } from "node:util";
import { Compile } from "typebox/compile";
import { Type } from "typebox";
import { AsyncLocalStorage } from "node:async_hooks";
import { lookup } from "node:dns/promises";
import Layout, { helper } from "./lib/umd.js";

export default function (pi) {
  pi.registerTool({
    name: "probe", label: "probe", description: "d", parameters: { type: "object", properties: {} },
    async execute() {
      // pi-subagents and pi-markdown-preview name runs and caches by SHA-256.
      const hashes = [
        createHash("sha256").update("abc").digest("hex"),
        createHash("sha256").update("é".repeat(100)).update("x").update(new Uint8Array([1, 2, 3])).digest("base64url"),
        createHash("sha256").digest("hex"),
      ];
      // pi-subagents: a silent debug log, and a compiled validator at load.
      const log = debuglog("kc-test");
      const validator = Compile(Type.Object({ n: Type.Number() }));
      const checks = [log.enabled, validator.Check({ n: 1 }), validator.Check({ n: "x" }), [...validator.Errors({})].length > 0];
      // pi-web-access scopes its proxy setting with AsyncLocalStorage; it imports dns too.
      const storage = new AsyncLocalStorage();
      checks.push(storage.run("inside", () => storage.getStore()), storage.getStore() === undefined, typeof lookup);
      // beautiful-mermaid imports elkjs, whose CommonJS exports carry a `default` of their own.
      checks.push(new Layout().kind, helper());
      // pi-mcp-adapter's MCP SDK builds on the DOM event globals.
      const target = new EventTarget();
      const seen = [];
      target.addEventListener("ping", (e) => seen.push(e.detail), { once: true });
      target.addEventListener("ping", { handleEvent: (e) => seen.push(e.type) });
      target.dispatchEvent(new CustomEvent("ping", { detail: 1 }));
      target.dispatchEvent(new Event("ping"));
      checks.push(seen);
      // pi-processes and pi-subagents truncate by grapheme at load.
      const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment("e\u0301👍🏽x")]
        .map((s) => [s.segment.length, s.index]);
      let word;
      try { new Intl.Segmenter("en", { granularity: "word" }); } catch (e) { word = e.code; }
      // pi-markdown-preview pipes its page to pandoc: `spawn(...).stdin.end(input)`.
      const piped = await new Promise((resolve) => {
        const child = spawn("sh", ["-c", "tr a-z A-Z"]);
        let out = "";
        child.stdout.on("data", (d) => { out += d.toString(); });
        child.on("close", (code) => resolve([out, code, child.unref() === child]));
        child.stdin.write("piped ");
        child.stdin.end("input");
      });
      // pi-collaborating-agents keeps agents whose pid answers `kill(pid, 0)`.
      let gone;
      try { process.kill(2147483646, 0); } catch (e) { gone = e.code; }
      const out = [hashes, checks, graphemes, word, piped, process.kill(process.pid, 0), gone];
      return { content: [{ type: "text", text: JSON.stringify(out) }], details: undefined };
    },
  });
}
"#,
            ),
            (
                "lib/umd.js",
                "class Layout { constructor() { this.kind = 'layout'; } }\nmodule.exports = Layout;\nLayout.default = Layout;\nLayout.helper = () => 'helped';\n",
            ),
        ],
    )
    .await
    .unwrap();
    let value = crate::common::probe_result(&host, dir.path()).await;
    assert_eq!(
        value,
        json!([
            [
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "dDWDstQmFbRM_fEcfoNdRaC7Z9LyV_FjVVb5SNjBlz8",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
            ],
            [
                false,
                true,
                false,
                true,
                "inside",
                true,
                "function",
                "layout",
                "helped",
                [1, "ping", "ping"]
            ],
            [[2, 0], [4, 2], [1, 6]],
            "ERR_KC_UNSUPPORTED",
            ["PIPED INPUT", 0, true],
            true,
            "ESRCH"
        ])
    );
}

/// Routers that read the conversation, change it, keep the request past the call, and never
/// answer.
const ROUTERS: &str = r#"
let kept;
export default function (pi) {
  const answer = (extra) => ({ model: { provider: "p", id: "m", api: "openai-completions", ...extra } });
  pi.registerVirtualModel({
    provider: "router", id: "reads",
    route(request) {
      const seen = request.messages.map((m) => ({ role: m.role, content: m.content }));
      request.messages = request.messages.slice(0, 1);
      return answer({ seen, afterSet: request.messages.length });
    },
  });
  pi.registerVirtualModel({
    provider: "router", id: "keeps",
    route(request) {
      let later = null;
      if (kept) {
        try { later = kept.messages.length; } catch (error) { later = error.message; }
      }
      kept = request;
      return answer({ later });
    },
  });
  pi.registerVirtualModel({ provider: "router", id: "hangs", route: () => new Promise(() => {}) });
}
"#;

fn route_request(id: &str) -> serde_json::Value {
    json!({"provider": "router", "id": id, "thinkingLevel": "off", "reason": "direct",
           "systemPrompt": "Be brief."})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_reads_the_whole_conversation_only_while_its_route_call_runs() {
    use knightcode_protocol::AgentMessage;
    let dir = tempfile::tempdir().unwrap();
    let host = load(dir.path(), &[("routers.ts", ROUTERS)]).await.unwrap();
    let message =
        |value: serde_json::Value| Arc::new(serde_json::from_value::<AgentMessage>(value).unwrap());
    let conversation = vec![
        message(json!({"role": "user", "content": "Read notes.txt", "timestamp": 1})),
        Arc::new(AgentMessage::Assistant(Box::default())),
        message(
            json!({"role": "bashExecution", "command": "ls", "output": "notes.txt\n",
                       "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": 3}),
        ),
        message(json!({"role": "user", "content": "And now?", "timestamp": 4})),
    ];

    let answer = host
        .route_virtual(route_request("reads"), conversation.clone())
        .await
        .unwrap();
    let roles: Vec<&str> = answer["model"]["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // The system prompt first, then every message as the model sees it (the shell run as
    // user text).
    assert_eq!(roles, ["system", "user", "assistant", "user", "user"]);
    assert_eq!(answer["model"]["seen"][0]["content"], "Be brief.");
    assert_eq!(answer["model"]["seen"][1]["content"], "Read notes.txt");
    assert!(
        answer["model"]["seen"][3]["content"]
            .to_string()
            .contains("notes.txt"),
        "{answer}"
    );
    assert_eq!(answer["model"]["seen"][4]["content"], "And now?");
    assert_eq!(answer["model"]["afterSet"], 1, "the router may replace it");

    // Each call's conversation is let go when the call ends: nothing accumulates.
    for _ in 0..50 {
        host.route_virtual(route_request("keeps"), conversation.clone())
            .await
            .unwrap();
    }
    assert_eq!(host.routes_in_flight(), 0);
    let answer = host
        .route_virtual(route_request("keeps"), conversation.clone())
        .await
        .unwrap();
    assert_eq!(
        answer["model"]["later"],
        "request.messages can be read only while route() runs; keep a copy to use it later"
    );

    // A call given up on (the request was aborted) lets its conversation go too.
    let abandoned = tokio::time::timeout(
        std::time::Duration::ZERO,
        host.route_virtual(route_request("hangs"), conversation),
    )
    .await;
    assert!(abandoned.is_err(), "the router never answers");
    assert_eq!(host.routes_in_flight(), 0);
}
