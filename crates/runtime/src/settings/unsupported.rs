//! Settings of the spec this build reads but cannot act on yet: a value that asks for
//! something other than what happens anyway gets one notice at start, naming the setting,
//! so a configuration does not silently do nothing. (The audit is in docs/settings.md.)

use serde_json::Value;

use super::Settings;

/// (dotted key, values that change nothing here, what happens instead). An empty list of
/// harmless values means any value is worth the notice.
const UNSUPPORTED: &[(&str, &[&str], &str)] = &[
    (
        "transport",
        &["auto", "sse"],
        "requests stream over HTTP (SSE); WebSocket transports are not built",
    ),
    (
        "websocketConnectTimeoutMs",
        &[],
        "WebSocket transports are not built",
    ),
    (
        "httpProxy",
        &[],
        "set HTTPS_PROXY/HTTP_PROXY in the environment instead",
    ),
    (
        "showCacheMissNotices",
        &["false"],
        "no cache-miss notices are shown",
    ),
    ("outputPad", &["1"], "output keeps its one-column padding"),
    (
        "terminal.showImages",
        &["false"],
        "images are not drawn in the terminal",
    ),
    (
        "terminal.imageWidthCells",
        &[],
        "images are not drawn in the terminal",
    ),
    (
        "terminal.images",
        &["false"],
        "images are not drawn in the terminal",
    ),
    (
        "terminal.clearOnShrink",
        &["true"],
        "rows left over by shorter content are always cleared",
    ),
    (
        "terminal.hyperlinks",
        &["auto", "false"],
        "links are printed as text",
    ),
    (
        "markdown.codeBlockIndent",
        &["  "],
        "code blocks are indented by two spaces",
    ),
    ("markdown.mermaid", &["off"], "mermaid blocks show as code"),
    (
        "autoUpdate",
        &["false"],
        "knightcode does not update itself",
    ),
    (
        "enableInstallTelemetry",
        &["false"],
        "knightcode sends no telemetry",
    ),
    (
        "enableAnalytics",
        &["false"],
        "knightcode sends no analytics",
    ),
];

fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One line per setting set to something this build does not do.
pub fn notices(settings: &Settings) -> Vec<String> {
    UNSUPPORTED
        .iter()
        .filter_map(|(key, harmless, instead)| {
            let value = settings.get(key)?;
            if harmless.contains(&shown(value).as_str()) {
                return None;
            }
            Some(format!(
                "Setting {key} ({value}) is not available yet: {instead}."
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_values_that_ask_for_something_else_are_named() {
        let settings = Settings::from_layers(
            json!({"transport": "websocket", "tuiMode": "regular", "terminal": {"hyperlinks": true}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            serde_json::Map::new(),
        );
        assert_eq!(
            notices(&settings),
            [
                "Setting transport (\"websocket\") is not available yet: requests stream over HTTP (SSE); WebSocket transports are not built.",
                "Setting terminal.hyperlinks (true) is not available yet: links are printed as text.",
            ]
        );
        assert!(notices(&Settings::default()).is_empty());
    }
}
