//! Tool exposure through the real binary against the mock model: what the request's tool
//! list declares (`direct`, `model-only`, `defaultActive: false`, `codemode`, `deferred`,
//! `hidden`), what `prepareLoadout` changes in it, which tools nested calls reach, and what
//! `getAllTools`/`getActiveTools`/`setActiveTools` report and do.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::offered_description;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;
use serde_json::Value;
use serde_json::json;

const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";

const text = (t) => ({ content: [{ type: "text", text: t }], details: {} });

export default function (pi) {
  const simple = (name, extra) => pi.registerTool({
    name, label: name, description: `${name} tool`, parameters: Type.Object({}),
    execute: async () => text(`${name} ran`), ...extra,
  });
  simple("plain");
  simple("optional", { defaultActive: false });
  simple("asker", { exposure: "model-only" });
  simple("scripted", {
    exposure: "codemode",
    namespace: { name: "mcp__docs", description: "Docs server" },
    annotations: { readOnlyHint: true },
  });
  simple("found", { exposure: "deferred" });
  simple("secret", { exposure: "hidden" });
  pi.registerTool({
    name: "orchestrator", label: "Orchestrator", description: "original", parameters: Type.Object({}),
    reachesTools: (input) => "all",
    prepareLoadout(loadout) {
      const callable = loadout.callable.map((t) => t.name).sort().join(",");
      return {
        descriptions: { orchestrator: `calls: ${callable}; ns=${loadout.getNamespace("scripted").name}; exp=${loadout.getExposure("found")}` },
        hiddenDeclarations: ["plain"],
      };
    },
    async execute(id, params, signal, onUpdate, ctx) {
      const run = async (name) => { const o = await ctx.executeTool(name, {}); return [name, o.isError]; };
      const report = {
        nested: [await run("scripted"), await run("found"), await run("plain"), await run("asker"), await run("secret"), await run("optional")],
        active: pi.getActiveTools(),
        all: pi.getAllTools().filter((t) => t.sourceInfo.source === "local").map((t) => [t.name, t.exposure, t.namespace ? t.namespace.name : null, t.annotations || null, typeof t.reachesTools]),
        tools: ctx.tools.map((t) => t.name).sort(),
      };
      return text(JSON.stringify(report));
    },
  });
  pi.registerCommand("loadout", {
    handler: async () => { pi.setActiveTools(["read", "scripted", "secret", "nonexistent"]); },
  });
  // Tools cannot be unregistered: registering one again as hidden withdraws it.
  pi.registerCommand("withdraw", { handler: async () => { simple("scripted", { exposure: "hidden" }); } });
}
"#;

fn tool_description(body: &Value, name: &str) -> String {
    offered_description(body, name).unwrap_or_default()
}

#[test]
fn exposure_decides_what_the_model_sees_and_what_tools_may_call() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "orchestrator", "{}"),
            ScriptedReply::text("Done."),
            ScriptedReply::text("Again."),
            ScriptedReply::text("Last."),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("exposure.ts"), EXTENSION).unwrap();
    let run = knightcode(
        &sb,
        &[
            "-p",
            "-e",
            "exposure.ts",
            "go",
            "/loadout",
            "more",
            "/withdraw",
            "last",
        ],
    );
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");

    // Declared: the default built-ins, `direct` and `model-only` tools; not the inactive,
    // codemode, deferred or hidden ones, nor `plain`, whose declaration the orchestrator's
    // `prepareLoadout` hides while it stays active.
    let offered = offered_tools(&requests[0].body);
    assert_eq!(
        offered,
        ["read", "bash", "edit", "write", "asker", "orchestrator"],
        "{offered:?}"
    );
    assert_eq!(
        tool_description(&requests[0].body, "orchestrator"),
        "calls: bash,edit,found,orchestrator,plain,read,scripted,write; ns=mcp__docs; exp=deferred"
    );

    // Nested calls reach active direct tools (also `plain`, declared or not) and codemode
    // and deferred ones; never model-only, hidden or inactive ones.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = messages.iter().rfind(|m| m["role"] == "tool").unwrap();
    let report: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        report["nested"],
        json!([
            ["scripted", false],
            ["found", false],
            ["plain", false],
            ["asker", true],
            ["secret", true],
            ["optional", true]
        ])
    );
    assert_eq!(
        report["tools"],
        json!([
            "bash",
            "edit",
            "found",
            "orchestrator",
            "plain",
            "read",
            "scripted",
            "write"
        ])
    );
    assert_eq!(
        report["active"],
        json!([
            "read",
            "bash",
            "edit",
            "write",
            "plain",
            "asker",
            "orchestrator"
        ])
    );
    assert_eq!(
        report["all"],
        json!([
            ["plain", "direct", null, null, "undefined"],
            ["optional", "direct", null, null, "undefined"],
            ["asker", "model-only", null, null, "undefined"],
            ["scripted", "codemode", "mcp__docs", {"readOnlyHint": true}, "undefined"],
            ["found", "deferred", null, null, "undefined"],
            ["secret", "hidden", null, null, "undefined"],
            ["orchestrator", "direct", null, null, "function"]
        ])
    );

    // `setActiveTools` declares exactly the named tools, a codemode one included; hidden
    // and unknown names are ignored.
    assert_eq!(offered_tools(&requests[2].body), ["read", "scripted"]);
    // Withdrawn: no longer declared (nor callable).
    assert_eq!(offered_tools(&requests[3].body), ["read"]);
}

/// `registerTool`'s `constrainedSampling` reaches the request: a grammar tool goes out as a
/// custom tool and a strict one with `strict: true` where the model's compat allows them; a
/// value that is neither `false` nor a config is left out.
#[test]
fn constrained_sampling_of_registered_tools_reaches_the_request() {
    const SAMPLING: &str = r#"
import { Type } from "@sinclair/typebox";

export default function (pi) {
  const tool = (name, parameters, constrainedSampling) => pi.registerTool({
    name, label: name, description: `${name} tool`, parameters, constrainedSampling,
    execute: async () => ({ content: [{ type: "text", text: "ran" }], details: {} }),
  });
  tool("sql", Type.Object({ query: Type.String() }), {
    type: "grammar", variants: { openai_lark: "start: /SELECT .+/" },
  });
  tool("lookup", Type.Object({ key: Type.String(), limit: Type.Optional(Type.Number()) }), {
    type: "json_schema", strict: "prefer",
  });
  tool("loose", Type.Object({ key: Type.String() }), "yes");
}
"#;
    let server = MockServer::start_blocking(
        WireFormat::OpenAiResponses,
        vec![ScriptedReply::text("Hi.")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::write(
        sb.agent.join("models.json"),
        json!({"providers": {"mock": {
            "baseUrl": server.base_url(), "api": "openai-responses", "apiKey": "test-key",
            "models": [{"id": "mock-model", "name": "Mock", "reasoning": false,
                        "contextWindow": 128000, "maxTokens": 4096,
                        "compat": {"supportsOpenAIGrammarTools": true, "supportsStrictMode": true}}]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(sb.project.join("sampling.ts"), SAMPLING).unwrap();
    let run = knightcode(&sb, &["-p", "-e", "sampling.ts", "hi"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let body = &server.requests()[0].body;
    let tool = |name: &str| {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {body}"))
            .clone()
    };
    assert_eq!(
        tool("sql")["format"],
        json!({"type": "grammar", "syntax": "lark", "definition": "start: /SELECT .+/"})
    );
    assert_eq!(tool("sql")["type"], "custom");
    let lookup = tool("lookup");
    assert_eq!(lookup["strict"], true);
    assert_eq!(lookup["parameters"]["required"], json!(["key", "limit"]));
    assert_eq!(lookup["parameters"]["additionalProperties"], false);
    assert_eq!(
        lookup["parameters"]["properties"]["limit"],
        json!({"anyOf": [{"type": "number"}, {"type": "null"}]})
    );
    let loose = tool("loose");
    assert_eq!(loose["type"], "function");
    assert_eq!(loose["strict"], false);
    assert_eq!(loose["parameters"]["required"], json!(["key"]));
}
