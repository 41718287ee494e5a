//! `localModels`: which local model servers a session asks what they serve
//! (`knightcode_ai::local`). `false` turns the probe off; an object can leave the default
//! addresses out (`"defaults": false`) and add servers
//! (`"servers": [{"provider": "ollama", "url": "http://127.0.0.1:11500"}]`). Addresses come
//! from the global file only: a project could otherwise point the agent at a server of its
//! choosing and have prompts sent there when nothing else is configured.

use knightcode_ai::local::LocalServer;
use serde_json::Map;
use serde_json::Value;

use super::values::lookup;

/// The servers to probe; none when the probe is off.
pub(super) fn parse(
    effective: &Map<String, Value>,
    global: &Map<String, Value>,
) -> Vec<LocalServer> {
    match lookup(effective, "localModels") {
        Some(Value::Bool(false)) => return Vec::new(),
        Some(Value::Object(setting))
            if setting.get("enabled").and_then(Value::as_bool) == Some(false) =>
        {
            return Vec::new();
        }
        _ => {}
    }
    let Some(Value::Object(setting)) = lookup(global, "localModels") else {
        return LocalServer::defaults();
    };
    let mut servers = if setting.get("defaults").and_then(Value::as_bool) == Some(false) {
        Vec::new()
    } else {
        LocalServer::defaults()
    };
    for entry in setting
        .get("servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if let Some(url) = text("url") {
            servers.push(LocalServer::new(text("provider").unwrap_or("local"), url));
        }
    }
    servers
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn off_defaults_and_added_servers() {
        let empty = Map::new();
        assert_eq!(parse(&empty, &empty), LocalServer::defaults());
        let off = map(json!({"localModels": false}));
        assert!(parse(&off, &empty).is_empty());
        let added = map(json!({"localModels": {"defaults": false,
            "servers": [{"provider": "ollama", "url": "http://127.0.0.1:5/"}, {"url": "http://h:1"}]}}));
        assert_eq!(
            parse(&added, &added),
            [
                LocalServer::new("ollama", "http://127.0.0.1:5"),
                LocalServer::new("local", "http://h:1")
            ]
        );
        // A project's addresses are not used.
        assert_eq!(parse(&added, &empty), LocalServer::defaults());
    }
}
