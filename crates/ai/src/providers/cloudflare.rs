//! Cloudflare's two providers speak wire formats this crate has (Workers AI: Chat
//! Completions; AI Gateway: Anthropic Messages, Chat Completions and OpenAI Responses); what
//! they add is where requests go and, for the gateway, how they are signed, as the reference
//! does it:
//!
//! - their base URLs name the account (and gateway) as `{CLOUDFLARE_ACCOUNT_ID}` and
//!   `{CLOUDFLARE_GATEWAY_ID}`, filled in from the environment when a request is built;
//! - AI Gateway takes the Cloudflare token in `cf-aig-authorization`, and the upstream
//!   provider's own `authorization` / `x-api-key` are left out (the gateway holds those
//!   keys) unless the model's or the request's headers set them.

use std::borrow::Cow;

use crate::error::ErrorClass;
use crate::error::StreamFailure;
use crate::http::Headers;
use crate::model::Model;
use crate::options::StreamOptions;

const WORKERS_AI: &str = "cloudflare-workers-ai";
const AI_GATEWAY: &str = "cloudflare-ai-gateway";

fn is_cloudflare(provider: &str) -> bool {
    provider == WORKERS_AI || provider == AI_GATEWAY
}

/// `model` with the `{VAR}` placeholders of its base URL filled in from the environment
/// (unchanged for other providers, or a URL without placeholders).
pub(crate) fn resolve(model: &Model) -> Result<Cow<'_, Model>, StreamFailure> {
    resolve_with(model, &|name| {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    })
}

fn resolve_with<'m>(
    model: &'m Model,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Cow<'m, Model>, StreamFailure> {
    if !is_cloudflare(&model.provider) || !model.base_url.contains('{') {
        return Ok(Cow::Borrowed(model));
    }
    let mut url = String::with_capacity(model.base_url.len());
    let mut rest = model.base_url.as_str();
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + len];
        let is_name = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        url.push_str(&rest[..start]);
        if is_name {
            let value = env(name).ok_or_else(|| missing(name, &model.provider))?;
            url.push_str(value.trim());
        } else {
            url.push_str(&rest[start..=start + len]);
        }
        rest = &rest[start + len + 1..];
    }
    url.push_str(rest);
    let mut resolved = model.clone();
    resolved.base_url = url;
    Ok(Cow::Owned(resolved))
}

fn missing(name: &str, provider: &str) -> StreamFailure {
    let what = match name {
        "CLOUDFLARE_ACCOUNT_ID" => {
            " Set it to your Cloudflare account id (on the dashboard's \
                                   overview page, or in the URL after dash.cloudflare.com/)."
        }
        "CLOUDFLARE_GATEWAY_ID" => {
            " Set it to the name of your AI Gateway (AI > AI Gateway on \
                                   the dashboard)."
        }
        _ => "",
    };
    StreamFailure::new(
        ErrorClass::Auth,
        format!("{name} is required for provider {provider} but is not set.{what}"),
    )
}

/// AI Gateway's authorization: the key in `cf-aig-authorization`, and no upstream
/// credentials but the ones the model's or request's headers name.
pub(crate) fn sign(model: &Model, options: &StreamOptions, headers: &mut Headers) {
    if model.provider != AI_GATEWAY {
        return;
    }
    let mut configured = Headers::default();
    configured.merge(model.headers.as_ref());
    configured.merge(Some(&options.headers));
    for name in ["authorization", "x-api-key"] {
        match configured.get(name) {
            Some(value) => headers.set(name, value),
            None => headers.remove(name),
        }
    }
    let key = options.api_key.as_deref().map(str::trim);
    if let Some(key) = key.filter(|key| !key.is_empty())
        && !configured.has("cf-aig-authorization")
    {
        headers.set("cf-aig-authorization", format!("Bearer {key}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway() -> Model {
        Model::new(
            AI_GATEWAY,
            "claude-sonnet-4-5",
            crate::Api::AnthropicMessages,
            "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/anthropic",
        )
    }

    #[test]
    fn placeholders_are_filled_from_the_environment() {
        let env = |name: &str| match name {
            "CLOUDFLARE_ACCOUNT_ID" => Some("acct123".to_owned()),
            "CLOUDFLARE_GATEWAY_ID" => Some("my-gw".to_owned()),
            _ => None,
        };
        let model = gateway();
        assert_eq!(
            resolve_with(&model, &env).unwrap().base_url,
            "https://gateway.ai.cloudflare.com/v1/acct123/my-gw/anthropic"
        );
        let only_account = |name: &str| (name == "CLOUDFLARE_ACCOUNT_ID").then(|| "a".to_owned());
        let error = resolve_with(&model, &only_account).unwrap_err();
        assert!(
            error.message.starts_with(
                "CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is \
                 not set."
            ),
            "{}",
            error.message
        );
        let other = Model::new("openai", "m", crate::Api::OpenAiResponses, "http://x/{A}");
        assert_eq!(resolve_with(&other, &env).unwrap().base_url, "http://x/{A}");
    }

    #[test]
    fn the_gateway_key_goes_in_its_own_header() {
        let model = gateway();
        let options = StreamOptions {
            api_key: Some("cf-token".into()),
            ..StreamOptions::default()
        };
        let mut headers = Headers::default();
        headers.set("x-api-key", "cf-token");
        headers.set("Authorization", "Bearer cf-token");
        sign(&model, &options, &mut headers);
        assert_eq!(headers.get("cf-aig-authorization"), Some("Bearer cf-token"));
        assert!(!headers.has("x-api-key") && !headers.has("authorization"));
    }
}
