//! The local model servers' probe: how long a start spends starting it (it runs in the
//! background), and how long it takes to answer with one server up (a stand-in vLLM on a free
//! port) and the other three addresses refusing, as on a machine running one server.
//!
//! Run with `cargo bench -p knightcode-ai --bench local_probe`. Prints medians.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use std::time::Instant;

use knightcode_ai::local::LocalServer;
use knightcode_ai::local::probe_local_servers;
use knightcode_testkit::WebResponse;
use knightcode_testkit::WebServer;

const ROUNDS: usize = 21;

fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let models = r#"{"object":"list","data":[{"id":"Qwen/Qwen3-8B","max_model_len":32768}]}"#;
        let server = WebServer::start(vec![(
            "/v1/models",
            WebResponse::ok("application/json", models),
        )])
        .await
        .unwrap();
        let servers = vec![
            LocalServer::new("ollama", closed_port()),
            LocalServer::new("lmstudio", closed_port()),
            LocalServer::new("llamacpp", closed_port()),
            LocalServer::new("vllm", server.url()),
        ];
        let mut start_costs = Vec::new();
        let mut answers = Vec::new();
        for _ in 0..ROUNDS {
            let list = servers.clone();
            let start = Instant::now();
            let task = tokio::spawn(async move { probe_local_servers(&list).await });
            start_costs.push(start.elapsed());
            let found = task.await.unwrap();
            answers.push(start.elapsed());
            assert_eq!(found.len(), 1);
        }
        println!(
            "local probe: {:.4} ms to start it (what a start spends), {:.1} ms to the answer \
             with one server up and three refusing (median of {ROUNDS})",
            median(start_costs),
            median(answers)
        );
    });
}
