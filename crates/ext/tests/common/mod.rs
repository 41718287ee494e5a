//! Helpers the suite's modules share.

use std::path::Path;

use std::sync::Arc;

use knightcode_agent::ToolContext;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Calls the host's first tool with no arguments in `dir` and reads the JSON its text
/// answer holds (the probe tools these tests load report what they saw that way).
pub async fn probe_result(host: &ExtensionHost, dir: &Path) -> Value {
    let tool = host.tools().remove(0);
    let out = tool
        .execute(
            json!({}),
            ToolContext::new("c", dir, CancellationToken::new()),
        )
        .await
        .unwrap();
    serde_json::from_str(out.content[0].as_text().unwrap()).unwrap()
}

/// A probe tool whose body is `body` (an async function of `dir`, the test's folder,
/// returning what the tool answers), after the `imports` it needs. `waitFor(what, register)`
/// resolves with the first value a callback gets, or rejects after 20 s naming what it
/// waited for.
const PROBE_TOOL: &str = r#"
IMPORTS

function waitFor(what, register) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 20000);
    register((value) => { clearTimeout(timer); resolve(value); });
  });
}

export default function (pi) {
  pi.registerTool({
    name: "probe", label: "probe", description: "d", parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, _onUpdate, ctx) {
      const dir = ctx.cwd;
      const out = await (BODY)(dir);
      return { content: [{ type: "text", text: JSON.stringify(out) }], details: undefined };
    },
  });
}
"#;

/// Loads a probe tool (see [`PROBE_TOOL`]) in a fresh folder, runs it and reads its answer.
pub async fn run_probe_body(imports: &str, body: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe.ts");
    std::fs::write(
        &path,
        PROBE_TOOL.replace("IMPORTS", imports).replace("BODY", body),
    )
    .unwrap();
    let host: Arc<ExtensionHost> = ExtensionHost::load_with_cache(
        HostConfig {
            paths: vec![path],
            cwd: dir.path().to_path_buf(),
            mode: "print".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        },
        None,
    )
    .await
    .unwrap();
    probe_result(&host, dir.path()).await
}
