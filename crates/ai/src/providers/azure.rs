//! `azure-openai-responses`: the Responses API of an Azure OpenAI resource. The stream is
//! OpenAI's ([`super::openai_responses`]); what differs is where the request goes and how it
//! is signed, read as the reference reads them:
//!
//! - the base URL: `AZURE_OPENAI_BASE_URL`, else `https://<AZURE_OPENAI_RESOURCE_NAME>
//!   .openai.azure.com/openai/v1`, else the model's `baseUrl` (`models.json`); an Azure host
//!   without a path gets `/openai/v1`;
//! - `POST <base>/responses?api-version=<AZURE_OPENAI_API_VERSION or v1>`;
//! - the key in `api-key` (not a bearer token);
//! - the deployment as the body's `model`: the model's id, or what
//!   `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,…`) maps it to.

use super::WireFormat;
use super::openai_responses;
use super::openai_responses::Dialect;
use crate::error::ErrorClass;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::model::Model;
use crate::options::Context;
use crate::options::StreamOptions;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: openai_responses::WIRE_FORMAT.decoder,
    error_style: ErrorStyle::ErrorMessage,
};

const DEFAULT_API_VERSION: &str = "v1";

/// What the environment says (a named variable's value, when set and not blank).
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The deployment `model` is served by: the map's entry for its id, else the id.
fn deployment(model: &Model, env: Env<'_>) -> String {
    let map = env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP").unwrap_or_default();
    map.split(',')
        .filter_map(|entry| entry.trim().split_once('='))
        .map(|(id, name)| (id.trim(), name.trim()))
        .find(|(id, name)| *id == model.id && !name.is_empty())
        .map_or_else(|| model.id.clone(), |(_, name)| name.to_owned())
}

/// The base URL requests go under, or why there is none.
fn base_url(model: &Model, env: Env<'_>) -> Result<String, StreamFailure> {
    let configured = env("AZURE_OPENAI_BASE_URL")
        .map(|url| url.trim().to_owned())
        .or_else(|| {
            env("AZURE_OPENAI_RESOURCE_NAME")
                .map(|name| format!("https://{}.openai.azure.com/openai/v1", name.trim()))
        })
        .or_else(|| Some(model.base_url.trim().to_owned()).filter(|url| !url.is_empty()))
        .ok_or_else(|| {
            StreamFailure::new(
                ErrorClass::Auth,
                "Azure OpenAI needs its endpoint: set AZURE_OPENAI_BASE_URL (for instance \
                 https://<resource>.openai.azure.com/openai/v1) or AZURE_OPENAI_RESOURCE_NAME, \
                 or give azure-openai-responses a baseUrl in models.json.",
            )
        })?;
    normalize(&configured)
}

/// An Azure host with no path (or only `/openai`) gets the v1 API's path, as the reference's
/// client does; other URLs (proxies) are kept.
fn normalize(url: &str) -> Result<String, StreamFailure> {
    let trimmed = url.trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|_| {
        StreamFailure::new(
            ErrorClass::Other,
            format!("Invalid Azure OpenAI base URL: {url}"),
        )
    })?;
    let host = parsed.host_str().unwrap_or("");
    let azure =
        host.ends_with(".openai.azure.com") || host.ends_with(".cognitiveservices.azure.com");
    let path = parsed.path().trim_end_matches('/');
    if azure && (path.is_empty() || path == "/openai") {
        let mut fixed = parsed.clone();
        fixed.set_path("/openai/v1");
        fixed.set_query(None);
        return Ok(fixed.as_str().trim_end_matches('/').to_owned());
    }
    Ok(trimmed.to_owned())
}

fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    build_request_with(model, context, options, user_agent, &process_env)
}

fn build_request_with(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
    env: Env<'_>,
) -> Result<HttpRequest, StreamFailure> {
    let key = options
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .ok_or_else(|| crate::auth::no_api_key_failure(&model.provider))?;
    let base = base_url(model, env)?;
    let version = env("AZURE_OPENAI_API_VERSION").unwrap_or_else(|| DEFAULT_API_VERSION.into());
    let deployment = deployment(model, env);
    let body = openai_responses::request_body(
        model,
        context,
        options,
        Dialect::Azure {
            deployment: &deployment,
        },
    )?;
    let mut headers = base_headers(model, user_agent);
    headers.merge(Some(&options.headers));
    if !headers.has("api-key") {
        headers.set("api-key", key);
    }
    headers.set("content-type", "application/json");
    let mut url = reqwest::Url::parse(&format!("{base}/responses")).map_err(|_| {
        StreamFailure::new(
            ErrorClass::Other,
            format!("Invalid Azure OpenAI base URL: {base}"),
        )
    })?;
    url.query_pairs_mut()
        .append_pair("api-version", version.trim());
    Ok(HttpRequest {
        url: url.into(),
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn model() -> Model {
        let mut model = Model::new(
            "azure-openai-responses",
            "gpt-5-mini",
            crate::Api::OpenAiResponses,
            "",
        );
        model.api = "azure-openai-responses".into();
        model
    }

    #[test]
    fn the_base_url_comes_from_the_environment_then_the_model() {
        let m = model();
        let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "kc-res")]);
        assert_eq!(
            base_url(&m, &env).unwrap(),
            "https://kc-res.openai.azure.com/openai/v1"
        );
        let env = env_of(&[
            ("AZURE_OPENAI_RESOURCE_NAME", "kc-res"),
            ("AZURE_OPENAI_BASE_URL", "https://other.openai.azure.com/"),
        ]);
        assert_eq!(
            base_url(&m, &env).unwrap(),
            "https://other.openai.azure.com/openai/v1"
        );
        let mut proxied = model();
        proxied.base_url = "http://127.0.0.1:9/azure/".into();
        assert_eq!(
            base_url(&proxied, &env_of(&[])).unwrap(),
            "http://127.0.0.1:9/azure"
        );
        let error = base_url(&m, &env_of(&[])).unwrap_err();
        assert!(error.message.contains("AZURE_OPENAI_BASE_URL"), "{error:?}");
        let env = env_of(&[("AZURE_OPENAI_BASE_URL", "not a url")]);
        let error = base_url(&m, &env).unwrap_err();
        assert_eq!(error.message, "Invalid Azure OpenAI base URL: not a url");
    }

    #[test]
    fn the_deployment_map_names_the_model() {
        let m = model();
        assert_eq!(deployment(&m, &env_of(&[])), "gpt-5-mini");
        let env = env_of(&[(
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "gpt-4o=prod-4o, gpt-5-mini = team-mini ,bad",
        )]);
        assert_eq!(deployment(&m, &env), "team-mini");
    }
}
