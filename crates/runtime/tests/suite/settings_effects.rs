//! Settings that reach the provider and the model switch: `thinkingBudgets` in the request
//! body, `modelThinkingLevels` when switching to a model that has an entry, and the notice
//! for a setting this build cannot act on.

use crate::common;

use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::Running;
use common::TestSession;

/// Two thinking models on the mock server, with room for large budgets.
async fn thinking_models(format: WireFormat, replies: Vec<ScriptedReply>) -> TestSession {
    let test = TestSession::new(format, replies).await;
    let models = serde_json::json!({"providers": {"mock": {
    "baseUrl": test.server.base_url(), "api": format.api_name(), "apiKey": "test-key",
    "models": [
        {"id": "mock-model", "name": "Mock", "reasoning": true, "contextWindow": 200000, "maxTokens": 64000},
        {"id": "mock-other", "name": "Other", "reasoning": true, "contextWindow": 200000, "maxTokens": 64000}
    ]}}});
    std::fs::write(test.agent_dir.join("models.json"), models.to_string()).unwrap();
    test
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_budgets_set_the_anthropic_budget() {
    let test = thinking_models(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("ok")],
    )
    .await
    .with_settings(r#"{"defaultThinkingLevel": "medium", "thinkingBudgets": {"medium": 3000}}"#);
    let mut run = Running::spawn(test).await;
    run.prompt("hi").await;
    let body = &run.test.server.requests()[0].body;
    assert_eq!(body["thinking"]["budget_tokens"], 3000, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_switch_takes_the_targets_model_thinking_level() {
    let test = thinking_models(WireFormat::OpenAiCompletions, vec![])
        .await
        .with_settings(
            r#"{"defaultThinkingLevel": "high", "modelThinkingLevels": {"mock/mock-other": "low"}}"#,
        );
    let mut run = Running::spawn(test).await;
    let tag = run.send(Command::SetModel {
        provider: "mock".into(),
        model_id: "mock-other".into(),
    });
    let Reply::ModelSet(switch) = run.reply(tag).await else {
        panic!("no model switch")
    };
    assert_eq!(switch.thinking.as_str(), "low");
    // Back to a model without an entry: the level carries over.
    let tag = run.send(Command::SetModel {
        provider: "mock".into(),
        model_id: "mock-model".into(),
    });
    let Reply::ModelSet(switch) = run.reply(tag).await else {
        panic!("no model switch")
    };
    assert_eq!(switch.thinking.as_str(), "low");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setting_this_build_cannot_act_on_is_named_once_at_start() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, vec![])
        .await
        .with_settings(r#"{"transport": "websocket", "tuiMode": "regular"}"#);
    let (session, _events) = knightcode_runtime::AgentSession::start_with(
        test.setup(),
        test.services(std::sync::Arc::new(
            knightcode_runtime::hooks::NoSessionHooks,
        )),
    )
    .await
    .unwrap();
    let notices: Vec<&String> = session
        .notices()
        .iter()
        .filter(|n| n.contains("not available yet"))
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("Setting transport (\"websocket\")"),
        "{notices:?}"
    );
}

async fn prompt_with_image(run: &mut Running) {
    let tag = run.send(Command::Prompt {
        text: "what is this?".to_owned(),
        images: vec![knightcode_protocol::ContentBlock::image(
            "QUJDREVGRw==",
            "image/png",
        )],
        queueing: None,
        source: knightcode_runtime::hooks::InputSource::Rpc,
    });
    run.reply(tag).await;
    run.until_settled().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_images_keeps_images_from_the_provider_until_turned_off() {
    let test = TestSession::new(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("blocked"), ScriptedReply::text("seen")],
    )
    .await
    .with_settings(r#"{"images": {"autoResize": false, "blockImages": true}}"#);
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": test.server.base_url(), "api": "anthropic-messages", "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock", "input": ["text", "image"],
                    "contextWindow": 100000, "maxTokens": 1000}]}}});
    std::fs::write(test.agent_dir.join("models.json"), models.to_string()).unwrap();
    let mut run = Running::spawn(test).await;
    prompt_with_image(&mut run).await;
    let first = run.test.server.requests()[0].body.to_string();
    assert!(!first.contains("QUJDREVGRw=="), "{first}");
    assert!(first.contains("Image reading is disabled."), "{first}");

    // `/settings` turns it off: the next request carries the images (both prompts').
    let tag = run.send(Command::SaveSettings(vec![(
        "images.blockImages".to_owned(),
        serde_json::Value::Bool(false),
    )]));
    run.reply(tag).await;
    prompt_with_image(&mut run).await;
    let second = run.test.server.requests()[1].body.to_string();
    assert_eq!(second.matches("QUJDREVGRw==").count(), 2, "{second}");
}
