//! Images reach the model fitted to its limits: prompt attachments and the `read` tool's
//! results, following `images.autoResize` and the model's `input` and `inputLimits`.

use crate::common;

use base64::Engine as _;
use knightcode_protocol::ContentBlock;
use knightcode_runtime::Command;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use serde_json::Value;

use common::Running;
use common::TestSession;

fn png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

/// Rewrites the mock provider's models: `mock-model` with these inputs and limits.
fn with_models(test: TestSession, input: &[&str], input_limits: Option<Value>) -> TestSession {
    let mut model = serde_json::json!({
        "id": "mock-model", "name": "Mock", "contextWindow": 100000, "maxTokens": 1000,
        "input": input,
    });
    if let Some(limits) = input_limits {
        model["inputLimits"] = limits;
    }
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": test.server.base_url(), "api": "anthropic-messages", "apiKey": "test-key",
        "models": [model]}}});
    std::fs::write(test.agent_dir.join("models.json"), models.to_string()).unwrap();
    test
}

/// The sizes of every base64 image in an Anthropic request body.
fn image_sizes(body: &Value) -> Vec<(u32, u32)> {
    fn walk(value: &Value, out: &mut Vec<(u32, u32)>) {
        match value {
            Value::Object(map) => {
                if let (Some(Value::String(data)), Some(_)) =
                    (map.get("data"), map.get("media_type"))
                {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .unwrap();
                    let image = image::load_from_memory(&bytes).unwrap();
                    out.push((image.width(), image.height()));
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out
}

async fn prompt_with_image(run: &mut Running, bytes: &[u8]) {
    let tag = run.send(Command::Prompt {
        text: "what is this?".to_owned(),
        images: vec![ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            "image/png",
        )],
        queueing: None,
        source: knightcode_runtime::hooks::InputSource::Rpc,
    });
    run.reply(tag).await;
    run.until_settled().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_images_are_fitted_to_the_models_limits() {
    let test = TestSession::new(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("a chart")],
    )
    .await;
    let test = with_models(
        test,
        &["text", "image"],
        Some(serde_json::json!({"images": {"resize": {"maxWidth": 500, "maxHeight": 500}}})),
    );
    let mut run = Running::spawn(test).await;
    prompt_with_image(&mut run, &png(1000, 200)).await;
    let body = &run.test.server.requests()[0].body;
    assert_eq!(image_sizes(body), [(500, 100)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_resize_off_sends_prompt_images_unchanged() {
    let test = TestSession::new(
        WireFormat::AnthropicMessages,
        vec![ScriptedReply::text("a chart")],
    )
    .await
    .with_settings(r#"{"images": {"autoResize": false}}"#);
    let test = with_models(test, &["text", "image"], None);
    let mut run = Running::spawn(test).await;
    prompt_with_image(&mut run, &png(2600, 100)).await;
    assert_eq!(
        image_sizes(&run.test.server.requests()[0].body),
        [(2600, 100)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_tool_fits_large_images_with_a_coordinate_note() {
    let replies = vec![
        ScriptedReply::tool_call("c1", "read", r#"{"path": "shot.png"}"#),
        ScriptedReply::text("seen"),
    ];
    let test = TestSession::new(WireFormat::AnthropicMessages, replies).await;
    std::fs::write(test.project.join("shot.png"), png(3000, 150)).unwrap();
    let test = with_models(test, &["text", "image"], None);
    let mut run = Running::spawn(test).await;
    run.prompt("look at shot.png").await;
    let body = &run.test.server.requests()[1].body;
    assert_eq!(image_sizes(body), [(2000, 100)]);
    let texts = common::body_strings(body);
    assert!(
        texts.iter().any(|t| t.contains(
            "[Image: original 3000x150, displayed at 2000x100. Multiply coordinates by 1.50"
        )),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("does not support images")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_tool_notes_a_model_without_vision() {
    let replies = vec![
        ScriptedReply::tool_call("c1", "read", r#"{"path": "shot.png"}"#),
        ScriptedReply::text("seen"),
    ];
    let test = TestSession::new(WireFormat::AnthropicMessages, replies).await;
    std::fs::write(test.project.join("shot.png"), png(40, 40)).unwrap();
    let test = with_models(test, &["text"], None);
    let mut run = Running::spawn(test).await;
    run.prompt("look at shot.png").await;
    let texts = common::body_strings(&run.test.server.requests()[1].body);
    assert!(
        texts.iter().any(|t| t.contains(
            "[Current model does not support images. The image will be omitted from this request.]"
        )),
        "{texts:?}"
    );
}
