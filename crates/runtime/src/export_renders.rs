//! Tool calls in the HTML export drawn as the terminal draws them: a tool's `renderCall` /
//! `renderResult` and `registerToolRenderer` resolvers give terminal lines, which the page
//! shows as HTML (`renderedTools`, the reference's shape). The page draws the built-in
//! file and shell tools itself.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::time::Duration;

use knightcode_export::RenderedTool;
use knightcode_ext::ExtensionHost;
use knightcode_protocol::AgentMessage;
use knightcode_session::SessionManager;
use serde_json::Value;
use serde_json::json;

/// Columns the renderers draw for (the reference's export width).
const WIDTH: u16 = 100;

/// Longest the export waits for the extensions to draw: past it the page draws every call
/// itself (each renderer also has the components' own time limit).
const DRAW_LIMIT: Duration = Duration::from_secs(10);

/// Every tool call of the session, on every branch, with its result when it has one.
pub(crate) fn tool_calls(session: &SessionManager) -> Vec<Value> {
    let mut results: HashMap<&str, Value> = HashMap::new();
    for entry in session.entries() {
        if let Some(AgentMessage::ToolResult(result)) = entry.message() {
            results.insert(
                &result.tool_call_id,
                json!({
                    "content": result.content,
                    "details": result.details,
                    "isError": result.is_error,
                }),
            );
        }
    }
    let mut calls = Vec::new();
    for entry in session.entries() {
        if let Some(AgentMessage::Assistant(reply)) = entry.message() {
            for call in reply.tool_calls() {
                let mut tool = json!({
                    "toolCallId": call.id,
                    "toolName": call.name,
                    "args": call.arguments,
                });
                if let Some(result) = results.get(call.id.as_str()) {
                    tool["result"] = result.clone();
                }
                calls.push(tool);
            }
        }
    }
    calls
}

/// Asks the extensions to draw `tools`; `None` when they draw none of them (or could not
/// answer in time: the export never waits on a stuck extension for long).
pub(crate) async fn draw(
    host: &ExtensionHost,
    tools: Vec<Value>,
) -> Option<BTreeMap<String, RenderedTool>> {
    let renderers = host.renderers();
    let tools: Vec<Value> = tools
        .into_iter()
        .filter(|tool| renderers.draws_tool(tool["toolName"].as_str().unwrap_or("")))
        .collect();
    if tools.is_empty() {
        return None;
    }
    let request = json!({ "tools": tools, "width": WIDTH });
    let answer = tokio::time::timeout(DRAW_LIMIT, host.export_tool_renders(&request))
        .await
        .ok()?
        .ok()?;
    let drawn: BTreeMap<String, RenderedTool> = answer
        .as_object()?
        .iter()
        .map(|(id, lines)| (id.clone(), rendered(lines)))
        .filter(|(_, tool)| tool.call_html.is_some() || tool.result_html_collapsed.is_some())
        .collect();
    (!drawn.is_empty()).then_some(drawn)
}

/// One call's lines (`{call?, collapsed?, expanded?}`) as HTML.
fn rendered(lines: &Value) -> RenderedTool {
    let html = |key: &str| {
        let lines: Vec<String> = lines
            .get(key)?
            .as_array()?
            .iter()
            .filter_map(|l| l.as_str().map(str::to_owned))
            .collect();
        // The reference trims a result's blank edges; a blank drawing leaves it to the page.
        let start = lines.iter().position(|l| !blank(l))?;
        let end = lines.iter().rposition(|l| !blank(l))?;
        Some(knightcode_export::ansi_lines_to_html(&lines[start..=end]))
    };
    RenderedTool {
        call_html: html("call"),
        result_html_collapsed: html("collapsed"),
        result_html_expanded: html("expanded"),
    }
}

/// Whether a line shows nothing: only spaces, whatever their styling.
fn blank(line: &str) -> bool {
    let html = knightcode_export::ansi_to_html(line);
    let mut inside_tag = false;
    html.chars().all(|c| match c {
        '<' => {
            inside_tag = true;
            true
        }
        '>' => {
            inside_tag = false;
            true
        }
        c => inside_tag || c.is_whitespace(),
    })
}
