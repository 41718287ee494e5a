//! `bedrock-converse-stream`: Amazon Bedrock's Converse API, streaming
//! (`POST {endpoint}/model/{modelId}/converse-stream`), as the reference reaches it through
//! the AWS SDK, without the SDK:
//!
//! - [`request`]: the JSON body (messages, system prompt, cache points, tools, thinking);
//! - [`credentials`]: the credential chain (bearer token, environment keys, profiles), and
//!   the sources asked over the network ([`remote`], which caches their keys):
//!   [`container`]: the container credentials endpoint, [`sso`]: IAM Identity Center,
//!   [`imds`]: EC2 instance metadata, [`web_identity`]: STS for a web identity token,
//!   [`process`]: a profile's `credential_process`;
//! - [`sigv4`]: the request signature, made after the payload and header hooks ran;
//! - [`eventstream`]: the binary framing of the answer;
//! - [`stream`]: the Converse events into stream events, and error texts.
//!
//! Where the request goes follows the reference: `AWS_REGION`, else `AWS_DEFAULT_REGION`,
//! names the region; a model's base URL that is not a standard Bedrock runtime host (a
//! proxy, a VPC endpoint, a test server) is used as it is, and a standard host is used only
//! when no region or profile says otherwise. Without any of them the region is
//! `us-east-1`, or the instance's when the keys come from EC2 instance metadata; with only
//! `AWS_PROFILE`, the profile's `region`.

mod container;
mod credentials;
mod eventstream;
mod imds;
mod process;
mod remote;
mod request;
mod sigv4;
mod sso;
mod stream;
mod web_identity;

pub(crate) use eventstream::EventStreamDecoder;
pub(crate) use eventstream::FrameError;
pub(crate) use remote::CredentialCache;
pub(crate) use stream::http_failure;

use super::WireFormat;
use crate::config_value::EnvSource;
use crate::config_value::ProcessEnv;
use crate::error::ErrorClass;
use crate::error::StreamFailure;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::base_headers;
use crate::http::join_url;
use crate::model::Api;
use crate::model::Model;
use crate::options::Context;
use crate::options::StreamOptions;
use crate::sse::SseEvent;
use credentials::AwsCredentials;
use credentials::BedrockAuth;

pub(crate) const WIRE_FORMAT: WireFormat = WireFormat {
    build_request,
    decoder: |_, _, _| Box::new(stream::BedrockDecoder::new()),
    error_style: ErrorStyle::Bedrock,
};

/// The region of a request when nothing names one (as the reference).
const DEFAULT_REGION: &str = "us-east-1";

/// The service name SigV4 signs Bedrock's runtime requests for.
const SIGNING_SERVICE: &str = "bedrock";

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

/// The region of a standard Bedrock runtime host (`bedrock-runtime[-fips].<region>.
/// amazonaws.com[.cn]`).
fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_lowercase();
    let rest = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest
        .strip_suffix(".amazonaws.com")
        .or_else(|| rest.strip_suffix(".amazonaws.com.cn"))?;
    (!region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
    .then(|| region.to_owned())
}

/// Where a request goes and which region it is signed for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    endpoint: String,
    region: String,
    /// No region was configured: `us-east-1` stands in for one.
    defaulted: bool,
}

/// The standard Bedrock runtime host of a region.
fn regional_endpoint(region: &str) -> String {
    if region.starts_with("cn-") {
        format!("https://bedrock-runtime.{region}.amazonaws.com.cn")
    } else {
        format!("https://bedrock-runtime.{region}.amazonaws.com")
    }
}

fn target(model: &Model, env: &dyn EnvSource) -> Result<Target, StreamFailure> {
    let configured = var(env, "AWS_REGION").or_else(|| var(env, "AWS_DEFAULT_REGION"));
    let has_profile = var(env, "AWS_PROFILE").is_some();
    let base = model.base_url.trim();
    let endpoint_region = standard_endpoint_region(base);
    let explicit =
        !base.is_empty() && (endpoint_region.is_none() || (configured.is_none() && !has_profile));
    // Nothing names a region: the catalog's host (`us-east-1`) stands in for one, and the
    // instance's region replaces it when the keys come from instance metadata. Another
    // standard host in `models.json` keeps its region.
    let defaulted = configured.is_none()
        && !has_profile
        && (base.is_empty() || endpoint_region.as_deref() == Some(DEFAULT_REGION));
    let region = configured
        .or_else(|| endpoint_region.clone().filter(|_| explicit))
        .or_else(|| (!has_profile).then(|| DEFAULT_REGION.to_owned()))
        .or_else(|| credentials::profile_region(env))
        .ok_or_else(|| {
            StreamFailure::new(
                ErrorClass::Auth,
                "No AWS region for Amazon Bedrock: set AWS_REGION (for example us-east-1), or a \
                 region in the AWS_PROFILE profile of ~/.aws/config.",
            )
        })?;
    let endpoint = if explicit {
        base.trim_end_matches('/').to_owned()
    } else {
        regional_endpoint(&region)
    };
    Ok(Target {
        endpoint,
        region,
        defaulted,
    })
}

/// Whether EC2 instance metadata was asked for (see `imds::asked_for`; no network is used).
pub(crate) fn instance_credentials_asked_for(env: &dyn EnvSource) -> bool {
    imds::asked_for(env)
}

/// What to tell someone who chose a Bedrock model without credentials (`subject` names the
/// model or the provider): Bedrock takes the AWS credential chain, never a key in auth.json.
pub(crate) fn no_credentials_message(subject: &str) -> String {
    format!(
        "No AWS credentials for {subject}. To use it, set AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary keys), AWS_PROFILE naming \
         a profile with keys in ~/.aws/credentials, or AWS_BEARER_TOKEN_BEDROCK (a Bedrock API \
         key).{} See docs/providers.md.",
        if imds::firmware_says_ec2() {
            " On this EC2 instance, set AWS_EC2_METADATA_DISABLED=false to use its role's keys."
        } else {
            ""
        }
    )
}

fn auth_failure(error: credentials::CredentialError) -> StreamFailure {
    StreamFailure::new(ErrorClass::Auth, error.to_string())
}

fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
) -> Result<HttpRequest, StreamFailure> {
    build_request_in(model, context, options, user_agent, &ProcessEnv)
}

fn build_request_in(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    user_agent: &str,
    env: &dyn EnvSource,
) -> Result<HttpRequest, StreamFailure> {
    let target = target(model, env)?;
    let request_env = request::RequestEnv {
        region: Some(&target.region),
        force_cache: env.var("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1"),
    };
    let body = request::body(model, context, options, &request_env)?;
    let mut headers = base_headers(model, user_agent);
    headers.merge(Some(&options.headers));
    headers.set("content-type", "application/json");
    // A bearer token goes in as it is; keys sign the request once it is final (`Signer`).
    // An `Authorization` header of the model or the request (a proxy's) replaces both.
    if !headers.has("authorization")
        && let BedrockAuth::Bearer(token) = credentials::resolve(env).map_err(auth_failure)?
    {
        headers.set("authorization", format!("Bearer {token}"));
    }
    let path = format!("/model/{}/converse-stream", sigv4::uri_encode(&model.id));
    let body = serde_json::to_vec(&body).map_err(|e| StreamFailure::other(e.to_string()))?;
    Ok(HttpRequest {
        url: join_url(&target.endpoint, &path),
        headers,
        body,
    })
}

/// Where a signer's keys come from.
#[derive(Debug, Clone)]
enum Keys {
    Static(AwsCredentials),
    Remote(remote::RemoteSource),
}

/// Signs a Bedrock request with AWS keys, just before it is sent.
#[derive(Debug, Clone)]
pub(crate) struct Signer {
    keys: Keys,
    region: String,
    /// No region was configured and the keys come from instance metadata: the request goes
    /// to the instance's region instead of `us-east-1`.
    instance_region: bool,
    cache: std::sync::Arc<CredentialCache>,
}

impl Signer {
    /// Gets the keys (from the cache, or their source when they come from the network) and
    /// signs.
    pub(crate) async fn sign(
        &self,
        http: &reqwest::Client,
        request: &mut HttpRequest,
        now_ms: i64,
    ) -> Result<(), StreamFailure> {
        let fetched;
        let credentials = match &self.keys {
            Keys::Static(credentials) => credentials,
            Keys::Remote(source) => {
                fetched = self
                    .cache
                    .credentials(source, http, now_ms)
                    .await
                    .map_err(auth_failure)?;
                &fetched
            }
        };
        let mut region = self.region.clone();
        if self.instance_region
            && let Keys::Remote(remote::RemoteSource::Imds(imds)) = &self.keys
        {
            let instance = self
                .cache
                .instance_region(imds, http)
                .await
                .map_err(auth_failure)?;
            if instance != region {
                let from = regional_endpoint(&region);
                if let Some(rest) = request.url.strip_prefix(&from) {
                    request.url = format!("{}{rest}", regional_endpoint(&instance));
                }
                region = instance;
            }
        }
        let scope = sigv4::SigningScope {
            region: &region,
            service: SIGNING_SERVICE,
            now_ms,
        };
        sigv4::sign(
            &request.url,
            &mut request.headers,
            &request.body,
            credentials,
            &scope,
        )
    }
}

/// The signer a request of `model` needs: `None` for other APIs, for bearer tokens and
/// when the model or the request sets its own `Authorization` header. `cache` keeps keys
/// fetched over the network for the client's next requests.
pub(crate) fn signer(
    model: &Model,
    options: &StreamOptions,
    cache: &std::sync::Arc<CredentialCache>,
) -> Result<Option<Signer>, StreamFailure> {
    signer_in(model, options, cache, &ProcessEnv)
}

fn signer_in(
    model: &Model,
    options: &StreamOptions,
    cache: &std::sync::Arc<CredentialCache>,
    env: &dyn EnvSource,
) -> Result<Option<Signer>, StreamFailure> {
    if model.api != Api::BedrockConverseStream.as_str() {
        return Ok(None);
    }
    let mut headers = crate::http::Headers::default();
    headers.merge(model.headers.as_ref());
    headers.merge(Some(&options.headers));
    if headers.has("authorization") {
        return Ok(None);
    }
    let keys = match credentials::resolve(env).map_err(auth_failure)? {
        BedrockAuth::Bearer(_) => return Ok(None),
        BedrockAuth::SigV4(credentials) => Keys::Static(credentials),
        BedrockAuth::Remote(source) => Keys::Remote(source),
    };
    let target = target(model, env)?;
    let instance_region =
        target.defaulted && matches!(keys, Keys::Remote(remote::RemoteSource::Imds(_)));
    Ok(Some(Signer {
        keys,
        region: target.region,
        instance_region,
        cache: std::sync::Arc::clone(cache),
    }))
}

/// The event an event-stream message stands for: named by its `:event-type`, or by its
/// `:exception-type` for an exception; an `error` message becomes [`stream::ERROR_EVENT`]
/// with its `:error-message`. Messages of other types are skipped.
pub(crate) fn frame_event<'a>(message: &eventstream::Message<'a>) -> Option<SseEvent<'a>> {
    match message.header(":message-type").unwrap_or("event") {
        "event" => Some(SseEvent {
            event: message.header(":event-type")?,
            data: message.payload,
        }),
        "exception" => Some(SseEvent {
            event: message.header(":exception-type")?,
            data: message.payload,
        }),
        "error" => Some(SseEvent {
            event: stream::ERROR_EVENT,
            data: message.header(":error-message").unwrap_or("").as_bytes(),
        }),
        _ => None,
    }
}

impl From<FrameError> for StreamFailure {
    fn from(error: FrameError) -> Self {
        // A cut or corrupted stream is the connection's fault; the request can be retried.
        StreamFailure::network(match error {
            FrameError::Truncated(_) => format!(
                "Network error: {error}. The connection closed before the answer was complete."
            ),
            other => format!("Network error: the Bedrock stream is corrupted ({other})"),
        })
    }
}

#[cfg(test)]
mod remote_tests;
#[cfg(test)]
mod tests;
