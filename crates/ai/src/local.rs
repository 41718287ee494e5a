//! Local model servers found with no setup: Ollama, LM Studio, llama.cpp's server and vLLM
//! answer on loopback ports of their own. Each is asked what it serves (and, where it says,
//! with what context length), all at once and within a short time, and what answers becomes
//! a provider (`ollama`, `lmstudio`, `llamacpp`, `vllm`) on their OpenAI-compatible API.

use std::time::Duration;

use serde_json::Value;
use serde_json::json;

use crate::model::Api;
use crate::model::Model;

/// The providers local servers become, with the loopback address each listens on by default.
pub const LOCAL_DEFAULTS: [(&str, &str); 4] = [
    ("ollama", "http://127.0.0.1:11434"),
    ("lmstudio", "http://127.0.0.1:1234"),
    ("llamacpp", "http://127.0.0.1:8080"),
    ("vllm", "http://127.0.0.1:8000"),
];

/// How long the whole probe may take. A loopback port nobody listens on refuses at once; this
/// bounds a server that accepts and then hangs.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(800);

/// The key local models are sent with: the servers ignore it, the wire format wants one.
pub const LOCAL_API_KEY: &str = "local";

/// A server to ask: the provider it becomes and the root of its address (no `/v1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    pub provider: String,
    pub url: String,
}

impl LocalServer {
    pub fn new(provider: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            url: url.into().trim_end_matches('/').to_owned(),
        }
    }

    /// The four servers at their default addresses.
    pub fn defaults() -> Vec<Self> {
        LOCAL_DEFAULTS
            .iter()
            .map(|(provider, url)| Self::new(*provider, *url))
            .collect()
    }
}

/// Whether `provider` is one a local server becomes.
pub fn is_local_provider(provider: &str) -> bool {
    LOCAL_DEFAULTS.iter().any(|(name, _)| *name == provider)
}

/// Asks every server at once what it serves; the models of those that answered, in the
/// order of `servers`. Servers that are down, slow or answer something else are left out.
pub async fn probe_local_servers(servers: &[LocalServer]) -> Vec<Model> {
    let Ok(client) = crate::http::http_client_builder().and_then(|builder| {
        builder
            .timeout(PROBE_TIMEOUT)
            .connect_timeout(PROBE_TIMEOUT)
            .no_proxy()
            .build()
            .map_err(|e| crate::error::AiError::HttpClient(e.to_string()))
    }) else {
        return Vec::new();
    };
    let probes = servers.iter().map(|server| probe(&client, server));
    let answers = futures_util::future::join_all(probes);
    match tokio::time::timeout(PROBE_TIMEOUT, answers).await {
        Ok(answers) => answers.into_iter().flatten().collect(),
        Err(_) => Vec::new(),
    }
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

/// One server's models: `(id, context length if it says)`.
async fn probe(client: &reqwest::Client, server: &LocalServer) -> Vec<Model> {
    let root = &server.url;
    let listed: Vec<(String, Option<u64>)> = match server.provider.as_str() {
        "ollama" => ollama_models(client, root).await,
        "lmstudio" => match get_json(client, &format!("{root}/api/v0/models")).await {
            Some(answer) => openai_list(&answer, &["loaded_context_length", "max_context_length"]),
            None => openai_models(client, root).await,
        },
        _ => openai_models(client, root).await,
    };
    listed
        .into_iter()
        .map(|(id, context)| local_model(server, &id, context))
        .collect()
}

/// `/v1/models`, with what vLLM (`max_model_len`) and llama.cpp (`meta.n_ctx_train`, or the
/// running context of `/props`) say of the context.
async fn openai_models(client: &reqwest::Client, root: &str) -> Vec<(String, Option<u64>)> {
    let Some(answer) = get_json(client, &format!("{root}/v1/models")).await else {
        return Vec::new();
    };
    let mut models = openai_list(&answer, &["max_model_len", "context_length"]);
    if models.iter().any(|(_, context)| context.is_none())
        && let Some(props) = get_json(client, &format!("{root}/props")).await
        && let Some(n_ctx) = props
            .pointer("/default_generation_settings/n_ctx")
            .and_then(Value::as_u64)
    {
        for (_, context) in models.iter_mut().filter(|(_, c)| c.is_none()) {
            *context = Some(n_ctx);
        }
    }
    models
}

/// The `data` of an OpenAI-style model list; the context from the first of `keys` present
/// (or llama.cpp's `meta.n_ctx_train`). Embedding models are left out.
fn openai_list(answer: &Value, keys: &[&str]) -> Vec<(String, Option<u64>)> {
    let Some(data) = answer.get("data").and_then(Value::as_array) else {
        return Vec::new();
    };
    data.iter()
        .filter(|entry| {
            !matches!(
                entry.get("type").and_then(Value::as_str),
                Some("embeddings" | "embedding")
            )
        })
        .filter_map(|entry| {
            let id = entry.get("id").and_then(Value::as_str)?.to_owned();
            let context = keys
                .iter()
                .find_map(|key| entry.get(*key).and_then(Value::as_u64))
                .or_else(|| entry.pointer("/meta/n_ctx_train").and_then(Value::as_u64));
            Some((id, context))
        })
        .collect()
}

/// Ollama's `/api/tags`, and `/api/show` for each model's context length.
async fn ollama_models(client: &reqwest::Client, root: &str) -> Vec<(String, Option<u64>)> {
    let Some(tags) = get_json(client, &format!("{root}/api/tags")).await else {
        return Vec::new();
    };
    let names: Vec<String> = tags
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("name").or_else(|| m.get("model"))?.as_str())
        .map(str::to_owned)
        .collect();
    let shows = names.iter().map(|name| async move {
        let answer = client
            .post(format!("{root}/api/show"))
            .json(&json!({"model": name}))
            .send()
            .await
            .ok()?
            .json::<Value>()
            .await
            .ok()?;
        let info = answer.get("model_info")?.as_object()?;
        info.iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, value)| value.as_u64())
    });
    let contexts = futures_util::future::join_all(shows).await;
    names.into_iter().zip(contexts).collect()
}

/// A served model as this agent uses it: the server's OpenAI-compatible API, text only, no
/// reasoning, free. An unknown context gets the `models.json` default.
fn local_model(server: &LocalServer, id: &str, context: Option<u64>) -> Model {
    let mut model = Model::new(
        server.provider.clone(),
        id,
        Api::OpenAiCompletions,
        format!("{}/v1", server.url),
    );
    model.context_window = context.filter(|c| *c > 0).unwrap_or(128_000);
    model.max_tokens = model.context_window.min(16_384);
    // What the reference's documentation advises for these servers.
    let mut compat = serde_json::Map::new();
    compat.insert("supportsDeveloperRole".into(), json!(false));
    compat.insert("supportsReasoningEffort".into(), json!(false));
    model.compat = Some(compat);
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_their_context_lengths() {
        let vllm = json!({"data": [{"id": "qwen", "max_model_len": 32768}]});
        assert_eq!(
            openai_list(&vllm, &["max_model_len"]),
            [("qwen".to_owned(), Some(32768))]
        );
        let llamacpp = json!({"data": [{"id": "m.gguf", "meta": {"n_ctx_train": 4096}}]});
        assert_eq!(
            openai_list(&llamacpp, &["max_model_len"]),
            [("m.gguf".to_owned(), Some(4096))]
        );
        let lmstudio = json!({"data": [
            {"id": "e", "type": "embeddings", "max_context_length": 2048},
            {"id": "l", "type": "llm", "max_context_length": 8192}]});
        assert_eq!(
            openai_list(&lmstudio, &["loaded_context_length", "max_context_length"]),
            [("l".to_owned(), Some(8192))]
        );
        let server = LocalServer::new("ollama", "http://127.0.0.1:11434/");
        let model = local_model(&server, "qwen3:8b", None);
        assert_eq!(model.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!((model.context_window, model.max_tokens), (128_000, 16_384));
    }
}
