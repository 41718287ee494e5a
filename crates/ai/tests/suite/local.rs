//! Local model servers found with no setup: each kind is asked the way it answers (stand-ins
//! on free ports serve the real answers' shapes), with the context length it reports; servers
//! that are down, or hang, leave nothing behind and do not hold the probe up for long.

use knightcode_ai::local::LocalServer;
use knightcode_ai::local::probe_local_servers;
use knightcode_testkit::WebResponse;
use knightcode_testkit::WebServer;
use serde_json::json;

fn json_response(value: serde_json::Value) -> WebResponse {
    WebResponse::ok("application/json", value.to_string())
}

/// A loopback port with nothing listening on it.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn each_kind_of_server_lists_its_models_with_their_context() {
    let ollama = WebServer::start(vec![
        (
            "/api/tags",
            json_response(json!({"models": [{"name": "qwen3:8b", "model": "qwen3:8b"}]})),
        ),
        (
            "/api/show",
            json_response(json!({"model_info": {"qwen3.context_length": 40960}})),
        ),
    ])
    .await
    .unwrap();
    let lmstudio = WebServer::start(vec![(
        "/api/v0/models",
        json_response(json!({"data": [
            {"id": "text-embedding-nomic", "type": "embeddings", "max_context_length": 2048},
            {"id": "google/gemma-3-12b", "type": "vlm", "max_context_length": 131072}]})),
    )])
    .await
    .unwrap();
    let llamacpp = WebServer::start(vec![
        (
            "/v1/models",
            json_response(json!({"data": [{"id": "model.gguf", "object": "model"}]})),
        ),
        (
            "/props",
            json_response(json!({"default_generation_settings": {"n_ctx": 8192}})),
        ),
    ])
    .await
    .unwrap();
    let vllm = WebServer::start(vec![(
        "/v1/models",
        json_response(json!({"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]})),
    )])
    .await
    .unwrap();
    let servers = [
        LocalServer::new("ollama", ollama.url()),
        LocalServer::new("lmstudio", lmstudio.url()),
        LocalServer::new("llamacpp", llamacpp.url()),
        LocalServer::new("vllm", vllm.url()),
        LocalServer::new("vllm", closed_port()),
    ];
    let found: Vec<(String, String, u64, String)> = probe_local_servers(&servers)
        .await
        .into_iter()
        .map(|m| (m.provider, m.id, m.context_window, m.base_url))
        .collect();
    assert_eq!(
        found,
        [
            (
                "ollama".into(),
                "qwen3:8b".into(),
                40960,
                format!("{}/v1", ollama.url())
            ),
            (
                "lmstudio".into(),
                "google/gemma-3-12b".into(),
                131_072,
                format!("{}/v1", lmstudio.url())
            ),
            (
                "llamacpp".into(),
                "model.gguf".into(),
                8192,
                format!("{}/v1", llamacpp.url())
            ),
            (
                "vllm".into(),
                "Qwen/Qwen3-8B".into(),
                32768,
                format!("{}/v1", vllm.url())
            ),
        ]
    );
    // Ollama was asked for the model it lists.
    let show = ollama
        .requests()
        .into_iter()
        .find(|r| r.path == "/api/show")
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&show.body).unwrap(),
        json!({"model": "qwen3:8b"})
    );
}

#[tokio::test]
async fn a_server_that_hangs_or_answers_nonsense_gives_nothing() {
    let hanging = WebServer::start(vec![("/v1/models", WebResponse::stall())])
        .await
        .unwrap();
    let nonsense = WebServer::start(vec![("/v1/models", WebResponse::ok("text/html", "<html>"))])
        .await
        .unwrap();
    let servers = [
        LocalServer::new("vllm", hanging.url()),
        LocalServer::new("llamacpp", nonsense.url()),
        LocalServer::new("ollama", closed_port()),
    ];
    assert!(probe_local_servers(&servers).await.is_empty());
}
