//! Helpers the suite's modules share.

use std::path::Path;

use knightcode_agent::ToolContext;
use knightcode_ext::ExtensionHost;
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
