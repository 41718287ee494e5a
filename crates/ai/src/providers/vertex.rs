//! `google-vertex`: Gemini through Vertex AI. The request body and the stream are the Gemini
//! API's ([`super::google`]); what differs is where it goes and how it is signed in:
//!
//! - with an API key (`GOOGLE_CLOUD_API_KEY`, `auth.json`, `--api-key`): the global
//!   endpoint, `/v1/publishers/google/models/<id>:streamGenerateContent`, key in
//!   `x-goog-api-key`;
//! - otherwise with application default credentials: the project and location from
//!   `GOOGLE_CLOUD_PROJECT` (or `GCLOUD_PROJECT`) and `GOOGLE_CLOUD_LOCATION`,
//!   `/v1/projects/<p>/locations/<l>/publishers/google/models/<id>:…` on the location's
//!   host, and an OAuth access token the client gets before sending (`crate::google_adc`);
//!   without a configured project, on a Google Cloud machine, the metadata server's.
//!
//! A model's base URL without the `{location}` placeholder replaces the host (a proxy),
//! as the reference's client does.

use super::WireFormat;
use super::google;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::model::Model;
use crate::options::Context;
use crate::options::StreamOptions;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |_, _, _| Box::new(google::GoogleDecoder::default()),
    error_style: ErrorStyle::ErrorMessage,
};

/// The key that stands for "use the platform's credentials" rather than an API key: what
/// the auth chain answers for configured ADC, the reference's marker, or a `<placeholder>`.
pub(crate) fn uses_default_credentials(options: &StreamOptions) -> bool {
    let key = options.api_key.as_deref().map(str::trim).unwrap_or("");
    key.is_empty()
        || key == crate::auth::AMBIENT_CREDENTIALS
        || key == "gcp-vertex-credentials"
        || (key.starts_with('<') && key.ends_with('>'))
}

/// The host requests go to: the model's base URL unless it is the catalog's template.
fn base_url(model: &Model, location: Option<&str>) -> String {
    let configured = model.base_url.trim().trim_end_matches('/');
    if !configured.is_empty() && !configured.contains("{location}") {
        return configured.to_owned();
    }
    match location {
        Some(location) if location != "global" => {
            format!("https://{location}-aiplatform.googleapis.com")
        }
        _ => "https://aiplatform.googleapis.com".to_owned(),
    }
}

/// A custom base URL that already names the API version (a path part `v1`, `v1beta1`)
/// gets none added.
fn versioned(base: &str) -> String {
    let path = base.splitn(4, '/').nth(3).unwrap_or("");
    if path.split('/').any(is_version) {
        base.to_owned()
    } else {
        format!("{base}/v1")
    }
}

fn is_version(part: &str) -> bool {
    let Some(rest) = part.strip_prefix('v') else {
        return false;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let tail = &rest[digits..];
    digits > 0
        && (tail.is_empty()
            || tail
                .strip_prefix("beta")
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    let mut headers = base_headers(model, user_agent);
    headers.merge(Some(&options.headers));
    headers.set("content-type", "application/json");
    let method = format!(
        "publishers/google/models/{}:streamGenerateContent?alt=sse",
        model.id
    );
    let url = if uses_default_credentials(options) {
        // On a Google Cloud machine the metadata server tells the project; the client puts
        // it in once it has asked (see `crate::google_adc::METADATA_PROJECT`).
        let project = env("GOOGLE_CLOUD_PROJECT")
            .or_else(|| env("GCLOUD_PROJECT"))
            .or_else(|| {
                crate::google_adc::uses_metadata_server(&crate::config_value::ProcessEnv)
                    .then(|| crate::google_adc::METADATA_PROJECT.to_owned())
            })
            .ok_or_else(|| {
                StreamFailure::new(
                    crate::error::ErrorClass::Auth,
                    "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT, \
                     or set GOOGLE_CLOUD_API_KEY to use an API key instead.",
                )
            })?;
        let location = env("GOOGLE_CLOUD_LOCATION").ok_or_else(|| {
            StreamFailure::new(
                crate::error::ErrorClass::Auth,
                "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION (e.g. us-central1 or \
                 global).",
            )
        })?;
        // The access token is added by the client once it has one (see `Client::spawn`).
        format!(
            "{}/projects/{project}/locations/{location}/{method}",
            versioned(&base_url(model, Some(&location)))
        )
    } else {
        if !headers.has("authorization") && !headers.has("x-goog-api-key") {
            let key = options.api_key.as_deref().unwrap_or_default().trim();
            headers.set("x-goog-api-key", key);
        }
        format!("{}/{method}", versioned(&base_url(model, None)))
    };
    Ok(HttpRequest {
        url,
        headers,
        body: google::request_body(model, context, options)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_added_unless_the_base_url_names_one() {
        assert_eq!(
            versioned("https://aiplatform.googleapis.com"),
            "https://aiplatform.googleapis.com/v1"
        );
        assert_eq!(
            versioned("https://proxy.example/vertex/v1beta1"),
            "https://proxy.example/vertex/v1beta1"
        );
        assert_eq!(versioned("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
        assert_eq!(
            versioned("http://127.0.0.1:9/vertex"),
            "http://127.0.0.1:9/vertex/v1"
        );
    }

    #[test]
    fn the_location_chooses_the_host() {
        let mut model = Model::new(
            "google-vertex",
            "gemini-2.5-pro",
            crate::Api::GoogleVertex,
            "",
        );
        model.base_url = "https://{location}-aiplatform.googleapis.com".into();
        assert_eq!(
            base_url(&model, Some("europe-west4")),
            "https://europe-west4-aiplatform.googleapis.com"
        );
        assert_eq!(
            base_url(&model, Some("global")),
            "https://aiplatform.googleapis.com"
        );
        model.base_url = "http://127.0.0.1:9/".into();
        assert_eq!(base_url(&model, Some("us-east1")), "http://127.0.0.1:9");
    }
}
