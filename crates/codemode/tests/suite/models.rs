//! The `models` global of scripts: the session's models by type, `headers` left out;
//! `classify` and `generateImages` resolve to an error result rather than throwing.

use std::sync::Arc;

use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_codemode::Codemode;
use knightcode_codemode::ScriptModels;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Listed;

impl ScriptModels for Listed {
    fn models(&self) -> Vec<(Value, bool)> {
        vec![
            (
                json!({"provider": "acme", "id": "chatty", "name": "Chatty", "api": "openai-completions", "input": ["text"], "headers": {"x-key": "secret"}}),
                true,
            ),
            (
                json!({"provider": "other", "id": "talk", "name": "Talk", "api": "anthropic-messages", "input": ["text", "image"]}),
                false,
            ),
            (
                json!({"type": "classifier", "provider": "acme", "id": "judge", "name": "Judge", "api": "x", "input": ["text"]}),
                true,
            ),
        ]
    }
}

async fn run(code: &str) -> Value {
    let tool = Codemode::new(&[], None).with_models(Arc::new(Listed));
    let context = ToolContext::new("call_1", ".", CancellationToken::new());
    let output = tool
        .execute(json!({ "code": code }), context)
        .await
        .unwrap();
    let text = knightcode_protocol::content::join_text(&output.content);
    assert!(!output.is_error, "{text}");
    let json = text.split_once("\n\n").map_or("", |(_, rest)| rest);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn scripts_list_the_models_by_type_without_headers() {
    let listed = run("return JSON.stringify({\n  chat: models.getModelsOfType('chat').map((m) => m.provider + '/' + m.id),\n  available: models.getAvailableOfType('chat').map((m) => m.id),\n  acme: models.getModelsOfType('chat', 'acme').map((m) => m.id),\n  classifiers: models.getAvailableOfType('classifier').map((m) => m.id),\n  images: models.getModelsOfType('image'),\n  one: models.getModelOfType('chat', 'acme', 'chatty'),\n  none: models.getModelOfType('chat', 'acme', 'judge') === undefined,\n});").await;
    assert_eq!(listed["chat"], json!(["acme/chatty", "other/talk"]));
    assert_eq!(listed["available"], json!(["chatty"]));
    assert_eq!(listed["acme"], json!(["chatty"]));
    assert_eq!(listed["classifiers"], json!(["judge"]));
    assert_eq!(listed["images"], json!([]));
    assert_eq!(listed["one"]["name"], "Chatty");
    assert!(listed["one"].get("headers").is_none(), "{listed}");
    assert_eq!(listed["none"], true);
}

#[tokio::test]
async fn classify_and_generate_images_answer_an_error_result() {
    let answers = run("const judge = models.getModelOfType('classifier', 'acme', 'judge');\nconst verdict = await models.classify(judge, { state: 'x', questions: { ok: { type: 'bool', instructions: 'Is it?', criteria: { true: 'yes', false: 'no' } } } });\nconst images = await models.generateImages({ provider: 'acme', id: 'painter' }, { input: [{ type: 'text', text: 'a cat' }] });\nreturn JSON.stringify({ verdict, images });").await;
    assert_eq!(answers["verdict"]["provider"], "acme");
    assert_eq!(answers["verdict"]["model"], "judge");
    assert_eq!(answers["verdict"]["stopReason"], "error");
    assert_eq!(answers["verdict"]["answers"], json!({}));
    assert_eq!(
        answers["verdict"]["errorMessage"],
        "Classifier models are not available to this script"
    );
    assert_eq!(answers["images"]["model"], "painter");
    assert_eq!(answers["images"]["output"], json!([]));
    assert_eq!(answers["images"]["stopReason"], "error");
}

#[tokio::test]
async fn without_a_model_source_scripts_see_none() {
    let tool = Codemode::new(&[], None);
    let context = ToolContext::new("call_1", ".", CancellationToken::new());
    let code = "return models.getModelsOfType('chat').length;";
    let output = tool
        .execute(json!({ "code": code }), context)
        .await
        .unwrap();
    let text = knightcode_protocol::content::join_text(&output.content);
    assert!(text.ends_with("\n\n0"), "{text}");
}
