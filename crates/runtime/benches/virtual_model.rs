#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! What routing through a virtual model adds to a request (`virtual-models.md`; issue 34's
//! budget: at most 0.5 ms over a direct request, besides the router's own time). One
//! session per configuration, both with the same router extension loaded, prompts answered
//! by the in-process mock: `direct` selects the physical model, `routed` the virtual model
//! whose `route()` returns it at once (so the router's own time is a constant return).
//!
//! Run with `cargo bench -p knightcode-runtime --bench virtual_model`. Medians per prompt,
//! configurations interleaved; see docs/perf.md.

use std::time::Duration;
use std::time::Instant;

use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::SessionTarget;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

const RUNS: usize = 5;
const PROMPTS: usize = 100;

const ROUTER: &str = r#"
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "auto", name: "Auto", contextWindow: 100000, maxTokens: 1000,
    route(request, ctx) {
      return { model: ctx.modelRegistry.find("mock", "m") };
    },
  });
}
"#;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// The median time of one prompt (request, stream, session writes) in a fresh session
/// with `provider/model` selected.
async fn per_prompt(provider: &str, model: &str) -> Duration {
    let replies = (0..PROMPTS).map(|_| ScriptedReply::text("ok")).collect();
    let server = MockServer::start(WireFormat::OpenAiCompletions, replies)
        .await
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let project = root.path().join("project");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": server.base_url(), "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m", "name": "M", "contextWindow": 100000, "maxTokens": 1000}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(project.join("router.ts"), ROUTER).unwrap();
    let mut setup = SessionSetup::new(
        project.clone(),
        agent.clone(),
        SessionTarget::New {
            dir: agent.join("sessions"),
            session_id: None,
        },
    );
    setup.extensions.cli = vec!["router.ts".to_owned()];
    setup.extensions.mode = "print".to_owned();
    setup.provider = Some(provider.to_owned());
    setup.model = Some(model.to_owned());
    let (mut session, mut events) = AgentSession::start(setup).await.unwrap();
    // The event channel is bounded: a consumer must read it or the run waits for space,
    // as a front end would read it.
    let drain = tokio::spawn(async move { while events.recv().await.is_some() {} });
    let mut times = Vec::with_capacity(PROMPTS);
    for _ in 0..PROMPTS {
        let started = Instant::now();
        session.prompt("hi", Vec::new()).await.unwrap();
        times.push(started.elapsed());
    }
    assert_eq!(
        server.requests().len(),
        PROMPTS,
        "every prompt reached the mock"
    );
    drain.abort();
    median(times)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (mut direct, mut routed) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            direct.push(per_prompt("mock", "m").await);
            routed.push(per_prompt("router", "auto").await);
        }
        let (direct, routed) = (median(direct), median(routed));
        println!("per prompt, direct (mock/m): {direct:?}");
        println!("per prompt, routed (router/auto -> mock/m): {routed:?}");
        println!(
            "added by routing: {:.3} ms",
            routed.as_secs_f64() * 1e3 - direct.as_secs_f64() * 1e3
        );
    });
}
