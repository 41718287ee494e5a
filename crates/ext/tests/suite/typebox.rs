//! TypeBox's `Value.Check` and `Value.Errors` in the host package against what TypeBox 1.4
//! (the one pi 0.73 ships) reports for the same schemas and values: the same errors
//! (`keyword`, `schemaPath`, `instancePath`, `params`, `message`) in the same order.

use knightcode_agent::ToolContext;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

const cases = (Type) => [
  [Type.Object({ name: Type.String({ minLength: 2 }), n: Type.Optional(Type.Integer({ minimum: 1 })), tags: Type.Array(Type.String()) }, { additionalProperties: false }), { name: "a", n: 0.5, tags: [1], extra: 1 }],
  [Type.Object({ a: Type.Number(), b: Type.String() }, { additionalProperties: false }), { b: 1, c: 2 }],
  [Type.Object({ m: Type.Union([Type.Literal("a"), Type.Literal("b")]) }), { m: "c" }],
  [Type.Union([Type.String(), Type.Number()]), true],
  [Type.String({ maxLength: 1, pattern: "^a" }), "bb"],
  [Type.Number({ maximum: 3, exclusiveMinimum: 1, multipleOf: 2 }), 1],
  [Type.Array(Type.Number(), { minItems: 2, maxItems: 3 }), [1]],
  [Type.Tuple([Type.String(), Type.Number()]), ["a", "b", 3]],
  [Type.Record(Type.String(), Type.Number()), { a: "x" }],
  [Type.Array(Type.Object({ x: Type.Number() })), [{ x: 1 }, {}]],
  [Type.Object({ a: Type.Number() }), { a: 1, b: 2 }],
  [Type.Integer(), 1.5],
];
const report = (Type, Value) => JSON.stringify(cases(Type).map(([s, v]) => [Value.Check(s, v), Value.Errors(s, v).map((e) => [e.keyword, e.schemaPath, e.instancePath, e.params, e.message])]));

export default function (pi) {
  pi.registerTool({
    name: "check", label: "Check", description: "Validates", parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: "text", text: report(Type, Value) }], details: {} }),
  });
}
"#;

/// `node` with TypeBox 1.4.3 printed this for the cases above.
const TYPEBOX: &str = r##"[[false,[["boolean","#/additionalProperties","/extra",{},"schema is false"],["additionalProperties","#","",{"additionalProperties":["extra"]},"must not have additional properties"],["minLength","#/properties/name","/name",{"limit":2},"must not have fewer than 2 characters"],["type","#/properties/n","/n",{"type":"integer"},"must be integer"],["minimum","#/properties/n","/n",{"comparison":">=","limit":1},"must be >= 1"],["type","#/properties/tags/items","/tags/0",{"type":"string"},"must be string"]]],[false,[["required","#","",{"requiredProperties":["a"]},"must have required properties a"],["boolean","#/additionalProperties","/c",{},"schema is false"],["additionalProperties","#","",{"additionalProperties":["c"]},"must not have additional properties"],["type","#/properties/b","/b",{"type":"string"},"must be string"]]],[false,[["const","#/properties/m/anyOf/0","/m",{"allowedValue":"a"},"must be equal to constant"],["const","#/properties/m/anyOf/1","/m",{"allowedValue":"b"},"must be equal to constant"],["anyOf","#/properties/m","/m",{},"must match a schema in anyOf"]]],[false,[["type","#/anyOf/0","",{"type":"string"},"must be string"],["type","#/anyOf/1","",{"type":"number"},"must be number"],["anyOf","#","",{},"must match a schema in anyOf"]]],[false,[["maxLength","#","",{"limit":1},"must not have more than 1 characters"],["pattern","#","",{"pattern":"^a"},"must match pattern \"^a\""]]],[false,[["exclusiveMinimum","#","",{"comparison":">","limit":1},"must be > 1"],["multipleOf","#","",{"multipleOf":2},"must be multiple of 2"]]],[false,[["minItems","#","",{"limit":2},"must not have fewer than 2 items"]]],[false,[["boolean","#/additionalItems","/2",{},"schema is false"],["type","#/items/1","/1",{"type":"number"},"must be number"]]],[false,[["type","#/patternProperties/^.*$","/a",{"type":"number"},"must be number"]]],[false,[["required","#/items","/1",{"requiredProperties":["x"]},"must have required properties x"]]],[true,[]],[false,[["type","#","",{"type":"integer"},"must be integer"]]]]"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn value_check_and_errors_report_what_typebox_reports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("check.ts");
    std::fs::write(&path, EXTENSION).unwrap();
    let host = ExtensionHost::load(HostConfig {
        paths: vec![path],
        cwd: dir.path().to_path_buf(),
        mode: "print".to_owned(),
        flags: serde_json::Map::new(),
        memory_limit: None,
    })
    .await
    .unwrap();
    let tool = host
        .tools()
        .into_iter()
        .find(|t| t.definition().name == "check")
        .unwrap();
    let output = tool
        .execute(
            json!({}),
            ToolContext::new("c1", dir.path(), CancellationToken::new()),
        )
        .await
        .unwrap();
    let text = output.content[0].as_text().unwrap().to_owned();
    let ours: Value = serde_json::from_str(&text).unwrap();
    let theirs: Value = serde_json::from_str(TYPEBOX).unwrap();
    let ours = ours.as_array().unwrap();
    let theirs = theirs.as_array().unwrap();
    assert_eq!(ours.len(), theirs.len());
    for (i, (ours, theirs)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(ours, theirs, "case {i}");
    }
}
