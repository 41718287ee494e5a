//! `fetch` for extensions (OAuth token exchanges, the GitLab example's token request):
//! the whole body is read, on the session's runtime, with the provider layer's HTTP client
//! setup (TLS roots, user agent). Streaming bodies are not supported yet.

use std::sync::OnceLock;

use serde_json::Value;
use serde_json::json;

fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            knightcode_ai::http_client_builder()
                .map_err(|e| e.to_string())?
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn failure(message: &str) -> Value {
    json!({ "error": { "code": "ERR_KC_FETCH", "message": message } })
}

/// One request `{url, method, headers, body}` → `{status, statusText, url, headers, body}`.
pub(crate) async fn fetch(args: Value) -> Value {
    let client = match client() {
        Ok(client) => client,
        Err(message) => return failure(&message),
    };
    let url = args.get("url").and_then(Value::as_str).unwrap_or("");
    let method = args.get("method").and_then(Value::as_str).unwrap_or("GET");
    let Ok(method) = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
        return failure(&format!("invalid method {method}"));
    };
    let mut request = client.request(method, url);
    if let Some(headers) = args.get("headers").and_then(Value::as_object) {
        for (name, value) in headers {
            if let Some(value) = value.as_str() {
                request = request.header(name.as_str(), value);
            }
        }
    }
    if let Some(body) = args.get("body").and_then(Value::as_str) {
        request = request.body(body.to_owned());
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(e) => return failure(&format!("fetch failed: {e}")),
    };
    let status = response.status();
    let final_url = response.url().to_string();
    let headers: Vec<Value> = response
        .headers()
        .iter()
        .map(|(n, v)| json!([n.as_str(), String::from_utf8_lossy(v.as_bytes())]))
        .collect();
    match response.bytes().await {
        Ok(bytes) => json!({ "ok": {
            "status": status.as_u16(),
            "statusText": status.canonical_reason().unwrap_or(""),
            "url": final_url,
            "headers": headers,
            "body": String::from_utf8_lossy(&bytes),
        }}),
        Err(e) => failure(&format!("fetch failed reading the body: {e}")),
    }
}
