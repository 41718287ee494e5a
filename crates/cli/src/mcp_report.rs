//! `knightcode mcp list --json`: each server as the reference reports it
//! (`{servers: [{name, scope, source, enabled, exposure, transport, state, tools,
//! toolExposure?, resources?, resourceTemplates?, error?}], errors, note?}`), for scripts and
//! agents that check an `mcp.json` they wrote.

use knightcode_mcp::McpManager;
use knightcode_mcp::ServerState;
use knightcode_mcp::ServerStatus;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// How many resources and resource templates each server offers (`None` without the
/// capability, or when listing them failed).
pub(crate) async fn resource_counts(
    manager: &McpManager,
    statuses: &[ServerStatus],
) -> Vec<Option<(usize, usize)>> {
    let cancel = CancellationToken::new();
    let mut counts = Vec::with_capacity(statuses.len());
    for status in statuses {
        let name = &status.config.name;
        let count = if status.state == ServerState::Connected && status.resources {
            let resources = manager.list_resources(name, &cancel).await.ok();
            let templates = manager.list_resource_templates(name, &cancel).await;
            resources.map(|r| (r.len(), templates.map_or(0, |t| t.len())))
        } else {
            None
        };
        counts.push(count);
    }
    counts
}

/// The whole report.
pub(crate) fn json_report(
    statuses: &[ServerStatus],
    resources: &[Option<(usize, usize)>],
    issues: &[knightcode_mcp::ConfigIssue],
    note: Option<String>,
) -> Value {
    let servers: Vec<Value> = statuses
        .iter()
        .enumerate()
        .map(|(i, status)| server(status, resources.get(i).copied().flatten()))
        .collect();
    let errors: Vec<String> = issues.iter().map(ToString::to_string).collect();
    let mut report = json!({ "servers": servers, "errors": errors });
    if let Some(note) = note {
        report["note"] = Value::String(note);
    }
    report
}

fn server(status: &ServerStatus, resources: Option<(usize, usize)>) -> Value {
    let config = &status.config;
    let mut out = Map::new();
    out.insert("name".into(), json!(config.name));
    out.insert("scope".into(), json!(config.scope.as_str()));
    out.insert("source".into(), json!(config.source.display().to_string()));
    if config.overridden {
        out.insert("override".into(), json!(true));
    }
    out.insert("enabled".into(), json!(config.enabled));
    out.insert("exposure".into(), json!(config.exposure.as_str()));
    out.insert("transport".into(), json!(config.transport.target()));
    out.insert("state".into(), json!(status.state.as_str()));
    let tools: Vec<&str> = status.tools.iter().map(|t| t.name.as_str()).collect();
    out.insert("tools".into(), json!(tools));
    let differing: Map<String, Value> = status
        .tools
        .iter()
        .filter_map(|tool| {
            let exposure = config.exposure_of(&tool.name);
            (exposure != config.exposure).then(|| (tool.name.clone(), json!(exposure.as_str())))
        })
        .collect();
    if !differing.is_empty() {
        out.insert("toolExposure".into(), Value::Object(differing));
    }
    if let Some((resources, templates)) = resources {
        out.insert("resources".into(), json!(resources));
        out.insert("resourceTemplates".into(), json!(templates));
    }
    if status.state != ServerState::Connected
        && let Some(error) = &status.error
    {
        out.insert("error".into(), json!(error));
    }
    Value::Object(out)
}
