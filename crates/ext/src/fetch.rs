//! `fetch` for extensions (OAuth token exchanges, the GitLab example's token request):
//! the whole body is read, on the session's runtime, with the provider layer's HTTP client
//! setup (TLS roots, user agent). Bodies are read chunk by chunk (`response.body` streams,
//! as the Anthropic SDK reads server-sent events).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use serde_json::Value;
use serde_json::json;

fn client() -> Result<&'static reqwest::Client, crate::ExtError> {
    static CLIENT: OnceLock<Result<reqwest::Client, crate::ExtError>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            knightcode_ai::http_client_builder()
                .map_err(|e| crate::ExtError::Http(e.to_string()))?
                .build()
                .map_err(|e| crate::ExtError::Http(e.to_string()))
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn failure(message: &str) -> Value {
    json!({ "error": { "code": "ERR_KC_FETCH", "message": message } })
}

/// Response bodies being read, by id.
#[derive(Default)]
pub(crate) struct Bodies {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<reqwest::Response>>>>,
}

impl Bodies {
    fn open(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<tokio::sync::Mutex<reqwest::Response>>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next chunk of body `id` as base64, `null` at the end (the body is then closed).
    pub(crate) async fn read(&self, id: u64) -> Value {
        let Some(response) = self.open().get(&id).cloned() else {
            return json!({ "ok": null });
        };
        let chunk = response.lock().await.chunk().await;
        match chunk {
            Ok(Some(bytes)) => json!({ "ok": encode_base64(&bytes) }),
            Ok(None) => {
                self.open().remove(&id);
                json!({ "ok": null })
            }
            Err(e) => {
                self.open().remove(&id);
                failure(&format!("fetch failed reading the body: {e}"))
            }
        }
    }

    pub(crate) fn close(&self, id: u64) {
        self.open().remove(&id);
    }
}

fn encode_base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(TABLE[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One request `{url, method, headers, body}` → `{status, statusText, url, headers,
/// bodyId}`; the body is read with [`Bodies::read`].
pub(crate) async fn fetch(args: Value, bodies: Arc<Bodies>) -> Value {
    let client = match client() {
        Ok(client) => client,
        Err(unavailable) => return failure(&unavailable.to_string()),
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
    } else if let Some(bytes) = args.get("bodyBase64").and_then(Value::as_str) {
        request = request.body(crate::tools::decode_base64(bytes));
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
    let id = bodies.next.fetch_add(1, Ordering::Relaxed) + 1;
    bodies
        .open()
        .insert(id, Arc::new(tokio::sync::Mutex::new(response)));
    json!({ "ok": {
        "status": status.as_u16(),
        "statusText": status.canonical_reason().unwrap_or(""),
        "url": final_url,
        "headers": headers,
        "bodyId": id,
    }})
}
