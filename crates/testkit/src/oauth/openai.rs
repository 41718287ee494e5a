//! OpenAI's login service, as the ChatGPT Plus/Pro (Codex) login reaches it: the token
//! endpoint takes form-encoded grants (recorded as JSON objects of their fields) and answers
//! as the Anthropic stand-in does. Its access tokens are JWTs naming a ChatGPT account,
//! which [`chatgpt_access_token`] makes.

use std::sync::Mutex;

use base64::Engine as _;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Answer;
use super::State;
use super::params;

/// An unsigned JWT with the claim the ChatGPT backend reads the account from
/// (`https://api.openai.com/auth`.`chatgpt_account_id`); `nonce` tells tokens apart.
pub fn chatgpt_access_token(account_id: &str, nonce: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = json!({"alg": "none", "typ": "JWT"});
    let claims = json!({
        "https://api.openai.com/auth": {"chatgpt_account_id": account_id, "chatgpt_plan_type": "plus"},
        "nonce": nonce,
    });
    format!(
        "{}.{}.stand-in",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    )
}

/// A form-encoded grant, checked as the JSON token endpoint checks its bodies.
pub(super) fn token(state: &Mutex<State>, body: &[u8]) -> Answer {
    let form: Map<String, Value> = params(&String::from_utf8_lossy(body))
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    super::token(state, Value::Object(form).to_string().as_bytes())
}
