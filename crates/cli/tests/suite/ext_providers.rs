//! Providers registered by extensions, in the real binary against the mock servers: a
//! config-only provider (listed by `--list-models`, its key and headers sent), a provider
//! written in JS (`streamSimple`) that can also delegate to one of ours, the
//! `before_provider_request` payload replacement, and pi's GitLab Duo example.

use super::ext_examples::corpus;
use crate::oneshot_common;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;

use std::io::Read as _;
use std::io::Write as _;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;

fn proxy_extension(base_url: &str) -> String {
    format!(
        r#"
export default function (pi) {{
  pi.registerProvider("myproxy", {{
    baseUrl: "{base_url}", apiKey: "proxy-key", api: "openai-completions", headers: {{ "x-proxy": "yes" }},
    models: [{{ id: "proxied", name: "Proxied", reasoning: false, input: ["text"],
               cost: {{ input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 100000, maxTokens: 1000 }}],
  }});
  pi.on("before_provider_request", (event) => ({{ ...event.payload, extra_field: 42 }}));
  pi.on("after_provider_response", (event) => {{
    require("node:fs").writeFileSync("response.json", JSON.stringify({{ status: event.status, type: event.headers["content-type"] }}));
  }});
}}
"#
    )
}

#[test]
fn a_registered_provider_is_listed_and_answers_with_its_key_headers_and_the_replaced_payload() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("PROXIED-ANSWER")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.project.join("proxy.ts"),
        proxy_extension(&server.base_url()),
    )
    .unwrap();
    let list = knightcode(&sandbox, &["-e", "proxy.ts", "--list-models"]);
    assert_eq!(list.code, 0, "stderr: {}", list.stderr);
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("myproxy") && l.contains("proxied")),
        "{}",
        list.stdout
    );

    let run = knightcode(
        &sandbox,
        &[
            "-e",
            "proxy.ts",
            "-p",
            "--provider",
            "myproxy",
            "--model",
            "proxied",
            "hi",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.contains("PROXIED-ANSWER"), "{}", run.stdout);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer proxy-key")
    );
    assert_eq!(requests[0].header("x-proxy"), Some("yes"));
    assert_eq!(requests[0].body["model"], "proxied");
    assert_eq!(requests[0].body["extra_field"], 42);
    let response = read_json(sandbox.project.join("response.json"));
    assert_eq!(response["status"], 200);
    assert!(
        response["type"]
            .as_str()
            .unwrap()
            .contains("text/event-stream"),
        "{response}"
    );
}

const ECHO: &str = r#"
import { createAssistantMessageEventStream, streamSimpleOpenAICompletions } from "@mariozechner/pi-ai";

export default function (pi) {
  pi.registerProvider("echo", {
    baseUrl: "http://127.0.0.1:9", apiKey: "echo-key", api: "echo-api",
    models: [{ id: "echo-1", name: "Echo", reasoning: false, input: ["text"],
               cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 }],
    streamSimple(model, context, options) {
      const stream = createAssistantMessageEventStream();
      (async () => {
        const last = context.messages[context.messages.length - 1];
        const text = typeof last.content === "string" ? last.content : last.content.map((c) => c.text).join("");
        if (text.includes("delegate")) {
          const inner = streamSimpleOpenAICompletions({ ...model, baseUrl: process.env.MOCK_URL }, context, { ...options, apiKey: "inner-key" });
          for await (const event of inner) stream.push(event);
          stream.end();
          return;
        }
        const output = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
          usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: "stop", timestamp: Date.now() };
        stream.push({ type: "start", partial: output });
        output.content.push({ type: "text", text: "" });
        stream.push({ type: "text_start", contentIndex: 0, partial: output });
        const reply = `echo(${options.apiKey}, ${context.systemPrompt ? "prompt" : "no prompt"}): ${text}`;
        output.content[0].text = reply;
        stream.push({ type: "text_delta", contentIndex: 0, delta: reply, partial: output });
        stream.push({ type: "text_end", contentIndex: 0, content: reply, partial: output });
        stream.push({ type: "done", reason: "stop", message: output });
        stream.end();
      })();
      return stream;
    },
  });
}
"#;

#[test]
fn a_provider_written_in_js_answers_and_can_delegate_to_a_built_in_api() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("INNER-ANSWER")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("echo.ts"), ECHO).unwrap();
    let args = |prompt: &'static str| {
        [
            "-e",
            "echo.ts",
            "-p",
            "--provider",
            "echo",
            "--model",
            "echo-1",
            prompt,
        ]
    };
    let run = knightcode(&sandbox, &args("say hello"));
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "echo(echo-key, prompt): say hello");
    assert!(server.requests().is_empty());

    let output = oneshot_common::command(&sandbox, &args("please delegate"))
        .env("MOCK_URL", server.base_url())
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("INNER-ANSWER"), "{stdout}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer inner-key")
    );
    let messages = requests[0].body["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "user" && m["content"].to_string().contains("please delegate")),
        "{messages:?}"
    );
}

/// pi's example extensions, from the corpus `ext_examples` uses (`npm pack` into a cache
/// outside the clone, `npm install` in the examples with dependencies): never skipped.
fn examples_dir() -> Option<std::path::PathBuf> {
    Some(corpus::corpus().original)
}

/// A one-request HTTP server answering `body` as JSON; returns its root URL and the
/// request it received.
fn one_reply_server(body: &'static str) -> (String, std::thread::JoinHandle<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        // Headers, then the body by Content-Length.
        loop {
            let n = stream.read(&mut buffer).unwrap();
            request.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).unwrap();
        String::from_utf8_lossy(&request).to_string()
    });
    (url, handle)
}

#[test]
fn the_gitlab_duo_example_answers_through_its_direct_access_token() {
    let Some(examples) = examples_dir() else {
        return;
    };
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("DUO-ANSWER")],
    )
    .unwrap();
    let (gitlab, token_request) =
        one_reply_server(r#"{"token":"direct-token","headers":{"x-gitlab-instance":"test"}}"#);
    let sandbox = sandbox(&server);
    let source =
        std::fs::read_to_string(examples.join("custom-provider-gitlab-duo/index.ts")).unwrap();
    // The example's endpoints, pointed at the mock servers.
    let rewritten = source
        .replace(
            r#"const GITLAB_COM_URL = "https://gitlab.com";"#,
            &format!(r#"const GITLAB_COM_URL = "{gitlab}";"#),
        )
        .replace(
            "const ANTHROPIC_PROXY_URL = `${AI_GATEWAY_URL}/ai/v1/proxy/anthropic/`;",
            &format!(r#"const ANTHROPIC_PROXY_URL = "{}";"#, server.base_url()),
        );
    assert_ne!(rewritten, source);
    let dir = sandbox.project.join("gitlab-duo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.ts"), rewritten).unwrap();
    std::fs::copy(
        examples.join("custom-provider-gitlab-duo/package.json"),
        dir.join("package.json"),
    )
    .unwrap();

    // Another extension sees the requests the example's own stream function makes.
    std::fs::write(
        sandbox.project.join("watch.ts"),
        r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("before_provider_request", (event) => ({ ...event.payload, metadata: { user_id: "watched" } }));
  pi.on("after_provider_response", (event) => { writeFileSync("response.json", JSON.stringify({ status: event.status })); });
}
"#,
    )
    .unwrap();
    let list = oneshot_common::command(&sandbox, &["-e", "gitlab-duo", "--list-models", "duo"])
        .env("GITLAB_TOKEN", "glpat-test")
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("claude-sonnet-4-5-20250929"), "{listed}");

    let output = oneshot_common::command(
        &sandbox,
        &[
            "-e",
            "gitlab-duo",
            "-e",
            "watch.ts",
            "-p",
            "--provider",
            "gitlab-duo",
            "--model",
            "claude-sonnet-4-5-20250929",
            "hi",
        ],
    )
    .env("GITLAB_TOKEN", "glpat-test")
    .output_within(PROCESS_LIMIT, "knightcode")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("DUO-ANSWER"), "{stdout}");
    let token_request = token_request.join().unwrap();
    assert!(
        token_request.starts_with("POST /api/v4/ai/third_party_agents/direct_access"),
        "{token_request}"
    );
    assert!(
        token_request
            .to_ascii_lowercase()
            .contains("authorization: bearer glpat-test"),
        "{token_request}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer direct-token")
    );
    assert_eq!(requests[0].header("x-gitlab-instance"), Some("test"));
    assert_eq!(requests[0].body["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(requests[0].body["metadata"]["user_id"], "watched");
    let response = read_json(sandbox.project.join("response.json"));
    assert_eq!(response["status"], 200);
}

fn models_extension(base_url: &str) -> String {
    format!(
        r#"
import {{ writeFileSync }} from "node:fs";
import {{ complete }} from "@mariozechner/pi-ai";

export default function (pi) {{
  pi.registerProvider("second", {{
    baseUrl: "{base_url}", apiKey: "second-key", api: "openai-completions",
    models: [{{ id: "second-model", name: "Second", reasoning: true, input: ["text"],
               cost: {{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }}, contextWindow: 100000, maxTokens: 1000 }}],
  }});
  pi.on("model_select", (event) => {{
    writeFileSync("select.json", JSON.stringify({{ model: event.model.id, previous: event.previousModel.id, source: event.source }}));
  }});
  pi.on("before_agent_start", (_event, ctx) => {{
    writeFileSync("turn.json", JSON.stringify({{ model: ctx.model.id, level: pi.getThinkingLevel() }}));
  }});
  pi.registerCommand("ask", {{
    handler: async (_args, ctx) => {{
      const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model);
      const response = await complete(ctx.model,
        {{ messages: [{{ role: "user", content: [{{ type: "text", text: "side question" }}], timestamp: Date.now() }}] }},
        {{ apiKey: auth.apiKey, headers: auth.headers }});
      writeFileSync("ask.json", JSON.stringify({{
        text: response.content.filter((c) => c.type === "text").map((c) => c.text).join(""),
        model: ctx.model.id,
        available: ctx.modelRegistry.getAvailable().map((m) => `${{m.provider}}/${{m.id}}`),
        tools: pi.getAllTools().map((t) => `${{t.name}}:${{t.sourceInfo.source}}`),
      }}));
    }},
  }});
  pi.registerCommand("switch", {{
    handler: async (_args, ctx) => {{
      const ok = await pi.setModel(ctx.modelRegistry.find("second", "second-model"));
      pi.setThinkingLevel("high");
      const missing = await pi.setModel({{ provider: "nobody", id: "nothing" }});
      writeFileSync("switch.json", JSON.stringify({{ ok, missing }}));
    }},
  }});
}}
"#
    )
}

fn read_json(path: std::path::PathBuf) -> serde_json::Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn extensions_call_models_from_commands_and_switch_the_session_model() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("SIDE-ANSWER"),
            ScriptedReply::text("HI-ANSWER"),
        ],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.project.join("models.ts"),
        models_extension(&server.base_url()),
    )
    .unwrap();
    let run = knightcode(
        &sandbox,
        &[
            "-e",
            "models.ts",
            "-p",
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "/ask",
            "/switch",
            "hi",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.contains("HI-ANSWER"), "{}", run.stdout);

    let ask = read_json(sandbox.project.join("ask.json"));
    assert_eq!(ask["text"], "SIDE-ANSWER");
    assert_eq!(ask["model"], "mock-model");
    let available = ask["available"].to_string();
    assert!(available.contains("second/second-model"), "{available}");
    assert!(available.contains("mock/mock-model"), "{available}");
    let tools = ask["tools"].to_string();
    assert!(tools.contains("read:builtin"), "{tools}");
    assert!(tools.contains("bash:builtin"), "{tools}");

    let switched = read_json(sandbox.project.join("switch.json"));
    assert_eq!(switched, serde_json::json!({"ok": true, "missing": false}));
    let select = read_json(sandbox.project.join("select.json"));
    assert_eq!(
        select,
        serde_json::json!({"model": "second-model", "previous": "mock-model", "source": "set"})
    );
    let turn = read_json(sandbox.project.join("turn.json"));
    assert_eq!(
        turn,
        serde_json::json!({"model": "second-model", "level": "high"})
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["model"], "mock-model");
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    assert_eq!(requests[1].body["model"], "second-model");
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer second-key")
    );
    // Session-only: the saved defaults are not touched.
    let settings = std::fs::read_to_string(sandbox.agent.join("settings.json")).unwrap_or_default();
    assert!(!settings.contains("second-model"), "{settings}");
}

#[test]
fn the_custom_anthropic_example_streams_through_the_anthropic_sdk() {
    let Some(examples) = examples_dir() else {
        return;
    };
    // The example's `@anthropic-ai/sdk` dependency: installed beside it (the corpus of
    // `ext_examples` does), else in the `node_modules` holding the reference package.
    let Some(node_modules) = [
        examples.join("custom-provider-anthropic/node_modules"),
        examples.join("../../../.."),
    ]
    .into_iter()
    .find(|dir| dir.join("@anthropic-ai/sdk").is_dir()) else {
        panic!("@anthropic-ai/sdk is missing beside the example: the corpus installs it");
    };
    let server = MockServer::start_blocking(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("CUSTOM-ANTHROPIC-ANSWER")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    let source =
        std::fs::read_to_string(examples.join("custom-provider-anthropic/index.ts")).unwrap();
    let rewritten = source.replace(
        r#"baseUrl: "https://api.anthropic.com","#,
        &format!(r#"baseUrl: "{}","#, server.base_url()),
    );
    assert_ne!(rewritten, source);
    let dir = sandbox.project.join("custom-anthropic");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.ts"), rewritten).unwrap();
    std::os::unix::fs::symlink(
        node_modules.canonicalize().unwrap(),
        dir.join("node_modules"),
    )
    .unwrap();
    let output = oneshot_common::command(
        &sandbox,
        &[
            "-e",
            "custom-anthropic",
            "-p",
            "--provider",
            "custom-anthropic",
            "--model",
            "claude-sonnet-4-5",
            "hi",
        ],
    )
    .env("CUSTOM_ANTHROPIC_API_KEY", "sk-ant-test")
    .output_within(PROCESS_LIMIT, "knightcode")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("CUSTOM-ANTHROPIC-ANSWER"), "{stdout}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(requests[0].body["model"], "claude-sonnet-4-5");
}

#[test]
fn a_bad_provider_registration_is_reported_and_the_extension_stays_loaded() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("OK")],
    )
    .unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.project.join("bad.ts"),
        r#"
export default function (pi) {
  pi.registerProvider("broken", { apiKey: "k", api: "openai-completions", models: [{ id: "m" }] });
  pi.on("before_agent_start", () => { require("node:fs").writeFileSync("loaded.txt", "yes"); });
}
"#,
    )
    .unwrap();
    let run = knightcode(&sandbox, &["-e", "bad.ts", "-p", "hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.contains("OK"), "{}", run.stdout);
    assert!(
        run.stderr.contains("register_provider")
            && run
                .stderr
                .contains(r#"Provider broken: "baseUrl" is required when defining models."#),
        "{}",
        run.stderr
    );
    assert!(sandbox.project.join("loaded.txt").exists());
}

const TYPED_MODELS: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerCommand("types", {
    handler: async (_args, ctx) => {
      const registry = ctx.modelRegistry;
      const classified = await registry.classify(
        { provider: "typesafe", id: "jev-latest" },
        { state: { text: "hello" }, questions: { greeting: { type: "bool", instructions: "Is it a greeting?" } } },
      );
      const images = await registry.generateImages({ provider: "p", id: "m" }, { input: [] });
      writeFileSync("types.json", JSON.stringify({
        chat: registry.findOfType("chat", "mock", "mock-model")?.id ?? null,
        classifier: registry.findOfType("classifier", "mock", "mock-model") ?? null,
        availableChat: registry.getAvailableOfType("chat", "mock").map((m) => m.id),
        classifiers: registry.getAvailableClassifiers(),
        classified,
        images,
      }));
    },
  });
}
"#;

#[test]
fn the_registry_answers_by_model_type_and_an_unknown_classifier_with_an_error_result() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, vec![]).unwrap();
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("types.ts"), TYPED_MODELS).unwrap();
    let run = knightcode(
        &sandbox,
        &[
            "-e",
            "types.ts",
            "-p",
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "/types",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let types = read_json(sandbox.project.join("types.json"));
    assert_eq!(types["chat"], "mock-model");
    assert_eq!(types["classifier"], serde_json::Value::Null);
    assert_eq!(types["availableChat"], serde_json::json!(["mock-model"]));
    assert_eq!(types["classifiers"], serde_json::json!([]));
    assert_eq!(types["classified"]["stopReason"], "error");
    assert_eq!(types["classified"]["provider"], "typesafe");
    assert_eq!(types["classified"]["answers"], serde_json::json!({}));
    let message = types["classified"]["errorMessage"].as_str().unwrap();
    assert!(
        message.contains("No classifier model typesafe/jev-latest"),
        "{message}"
    );
    assert_eq!(types["images"]["stopReason"], "error");
}
