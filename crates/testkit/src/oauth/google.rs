//! Google's token endpoint, as Vertex AI clients reach it with application default
//! credentials: a service account's JWT bearer grant (RS256, checked against the public half
//! of [`SERVICE_ACCOUNT_KEY`], with the scope and audience Google requires) or a user
//! login's refresh grant, both form-encoded. Each grant is recorded as a JSON object of its
//! form fields (the assertion's claims under `"claims"`).

use std::sync::Mutex;

use base64::Engine as _;
use serde_json::Value;
use serde_json::json;

use super::Answer;
use super::State;
use super::TokenAnswer;
use super::json_answer;
use super::params;

/// The private key of the stand-in's service account (PKCS #8 PEM, a test key made for
/// these tests and used for nothing else), for a test's `service_account` credentials file.
pub const SERVICE_ACCOUNT_KEY: &str = include_str!("service_account_key.pem");

/// Its public half (PKCS #1 DER), which the stand-in checks signatures with.
const SERVICE_ACCOUNT_PUBLIC_KEY: &[u8] = include_bytes!("service_account_key.pub.der");

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

fn invalid(why: &str) -> Answer {
    json_answer(
        400,
        &json!({"error": "invalid_grant", "error_description": why}),
    )
}

/// The claims of a JWT whose RS256 signature the stand-in's key made, or why not.
fn verified_claims(assertion: &str) -> Result<Value, &'static str> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let json =
        |part: &str| -> Option<Value> { serde_json::from_slice(&b64.decode(part).ok()?).ok() };
    let (signed, signature) = assertion
        .rsplit_once('.')
        .ok_or("the assertion is not a JWT")?;
    let (header, claims) = signed.split_once('.').ok_or("the assertion is not a JWT")?;
    if json(header).ok_or("the JWT header is not base64url JSON")?["alg"] != "RS256" {
        return Err("the JWT is not signed with RS256");
    }
    let signature = b64
        .decode(signature)
        .map_err(|_| "the signature is not base64url")?;
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        SERVICE_ACCOUNT_PUBLIC_KEY,
    )
    .verify(signed.as_bytes(), &signature)
    .map_err(|_| "invalid JWT signature")?;
    json(claims).ok_or("the JWT claims are not base64url JSON")
}

/// Answers one grant.
pub(super) fn token(state: &Mutex<State>, body: &[u8]) -> Answer {
    let form: serde_json::Map<String, Value> = params(&String::from_utf8_lossy(body))
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let mut record = Value::Object(form.clone());
    let text = |key: &str| form.get(key).and_then(Value::as_str).unwrap_or_default();
    let checked = match text("grant_type") {
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => verified_claims(text("assertion"))
            .and_then(|claims| {
                record["claims"] = claims.clone();
                if claims["scope"] != SCOPE {
                    Err("the scope is not cloud-platform")
                } else if !claims["aud"]
                    .as_str()
                    .is_some_and(|a| a.ends_with("/google/token"))
                {
                    Err("the audience is not this token endpoint")
                } else if claims["exp"].as_u64() <= claims["iat"].as_u64() {
                    Err("the JWT expires before it is issued")
                } else {
                    Ok(())
                }
            }),
        "refresh_token" if !text("refresh_token").is_empty() && !text("client_id").is_empty() => {
            Ok(())
        }
        _ => Err("unsupported grant"),
    };
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.exchanges.push(record);
    if let Err(why) = checked {
        return invalid(why);
    }
    match state.answer.clone() {
        TokenAnswer::Tokens {
            access, expires_in, ..
        } => json_answer(
            200,
            &json!({"access_token": access, "expires_in": expires_in, "token_type": "Bearer"}),
        ),
        TokenAnswer::Refuse { status, body } => (
            status,
            vec![("content-type".into(), "application/json".into())],
            body.into_bytes(),
        ),
    }
}
