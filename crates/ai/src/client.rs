//! The entry point: a [`Provider`] that streams a request with the right wire format.

use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;

use knightcode_protocol::AssistantMessage;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::clock::SystemClock;
use crate::driver::Pipeline;
use crate::driver::StreamTask;
use crate::error::AiError;
use crate::error::StreamFailure;
use crate::event::EventStream;
use crate::event::StreamEvent;
use crate::http::HttpRequest;
use crate::model::Api;
use crate::options::StreamRequest;
use crate::output::Output;
use crate::providers::WireFormat;
use crate::providers::wire_format;

/// Anything that turns a request into a stream of events: the HTTP [`Client`], or a fake in
/// tests of the agent.
pub trait Provider: Send + Sync {
    /// Starts the request. Cancelling `cancel` stops the HTTP stream at once and ends the
    /// stream with an `aborted` message that keeps the partial content.
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream;
}

/// Events buffered between the HTTP task and the consumer.
const CHANNEL_CAPACITY: usize = 1024;

/// Streams requests over HTTP with the wire format each model's `api` names.
///
/// The HTTP client is built on the first request, and the platform's root certificates are
/// loaded on its first `https://` handshake: they cost milliseconds and memory that a session
/// which never calls a model (RPC clients asking for state) or only calls a local `http://`
/// model should not pay. One client serves both schemes.
#[derive(Clone)]
pub struct Client {
    http: Arc<OnceLock<Result<reqwest::Client, StreamFailure>>>,
    clock: Arc<dyn Clock>,
    user_agent: String,
    read_pacing: Duration,
    /// The access token of Vertex AI requests signed in with application default
    /// credentials, shared by this client's requests.
    google_adc: Arc<crate::google_adc::GoogleAdc>,
    /// AWS keys fetched for Bedrock requests (instance metadata, containers, STS, …),
    /// shared by this client's requests until they expire.
    aws_credentials: Arc<crate::providers::bedrock::CredentialCache>,
    /// Classifier label token ids, per llama.cpp server, model and label.
    label_tokens: crate::classify::LabelTokens,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("user_agent", &self.user_agent)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client with the system clock.
    pub fn new() -> Result<Self, AiError> {
        Self::with_clock(Arc::new(SystemClock::new()))
    }

    /// A client with an injected clock (timestamps, retry sleeps, jitter).
    pub fn with_clock(clock: Arc<dyn Clock>) -> Result<Self, AiError> {
        Ok(Self {
            http: Arc::new(OnceLock::new()),
            clock,
            user_agent: crate::http::user_agent(),
            read_pacing: Duration::ZERO,
            google_adc: Arc::default(),
            aws_credentials: Arc::default(),
            label_tokens: crate::classify::LabelTokens::default(),
        })
    }

    /// The HTTP client, built on first use; a failure is reported by every request.
    pub(crate) fn http(&self) -> Result<&reqwest::Client, StreamFailure> {
        self.http
            .get_or_init(|| {
                crate::http::build_http_client().map_err(|e| StreamFailure::other(e.to_string()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    pub(crate) fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    pub(crate) fn label_tokens(&self) -> crate::classify::LabelTokens {
        self.label_tokens.clone()
    }

    /// Replaces the `User-Agent` (tests pin it for snapshots).
    pub fn with_user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// After each small read of a streaming response, waits `pacing` before reading again,
    /// so that tokens arriving meanwhile are decoded and delivered as one batch. A screen
    /// that draws 30 frames a second loses nothing by it and the process wakes up once per
    /// batch instead of once per token. Zero (the default) reads as soon as data arrives.
    pub fn with_read_pacing(mut self, pacing: Duration) -> Self {
        self.read_pacing = pacing;
        self
    }

    /// Streams and waits for the final message.
    pub async fn complete(
        &self,
        request: &StreamRequest,
        cancel: CancellationToken,
    ) -> AssistantMessage {
        self.stream(request, cancel).result().await
    }

    /// The HTTP request that [`Provider::stream`] would send: URL, headers and JSON body.
    /// Used by snapshot tests and for debugging.
    pub fn build_request(&self, request: &StreamRequest) -> Result<BuiltRequest, StreamFailure> {
        let (http, _) = self.prepare(request)?;
        Ok(BuiltRequest {
            url: http.url,
            headers: http
                .headers
                .iter()
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect(),
            body: serde_json::from_slice(&http.body)
                .map_err(|e| StreamFailure::other(e.to_string()))?,
        })
    }

    fn prepare(
        &self,
        request: &StreamRequest,
    ) -> Result<(HttpRequest, &'static WireFormat), StreamFailure> {
        let model = &request.model;
        if model.api == crate::models::VIRTUAL_API {
            // Only the session's router knows how to route one; reaching the wire client
            // means the request skipped it (an extension streaming through a built-in API).
            return Err(StreamFailure::other(format!(
                "Virtual model {}/{} must be routed before streaming",
                model.provider, model.id
            )));
        }
        let api = model.api_kind().ok_or_else(|| {
            let supported: Vec<&str> = Api::ALL.iter().map(|a| a.as_str()).collect();
            StreamFailure::other(format!(
                "Unsupported API \"{}\" for model {}/{}. Supported: {}",
                model.api,
                model.provider,
                model.id,
                supported.join(", ")
            ))
        })?;
        let wire = wire_format(api);
        let model = crate::providers::cloudflare::resolve(model)?;
        let model = crate::providers::copilot::resolve(&model, &request.options);
        let mut built =
            (wire.build_request)(&model, &request.context, &request.options, &self.user_agent)?;
        crate::providers::cloudflare::sign(&model, &request.options, &mut built.headers);
        Ok((built, wire))
    }

    fn spawn(
        &self,
        request: &StreamRequest,
        http_request: HttpRequest,
        wire: &WireFormat,
        cancel: CancellationToken,
    ) -> EventStream {
        let http = match self.http() {
            Ok(http) => http.clone(),
            Err(failure) => return self.failed(request, failure),
        };
        let aws_signer = match crate::providers::bedrock::signer(
            &request.model,
            &request.options,
            &self.aws_credentials,
        ) {
            Ok(signer) => signer,
            Err(failure) => return self.failed(request, failure),
        };
        let out = Output::new(&request.model, self.clock.now_ms());
        let task = StreamTask {
            http,
            clock: self.clock.clone(),
            request: http_request,
            retry: request.options.retry,
            style: wire.error_style,
            pipeline: Pipeline::new(
                (wire.decoder)(&request.model, &request.context, &request.options),
                out,
            ),
            read_pacing: self.read_pacing,
            payload_hook: request.options.payload_hook.clone(),
            response_hook: request.options.response_hook.clone(),
            headers_hook: request.options.headers_hook.clone(),
            stream_event_hook: request.options.stream_event_hook.clone().map(|hook| {
                let model = &request.model;
                let source = serde_json::json!({
                    "provider": model.provider,
                    "api": model.api,
                    "model": model.id,
                });
                (hook, source)
            }),
            google_adc: (request.model.api == Api::GoogleVertex.as_str()
                && crate::providers::vertex::uses_default_credentials(&request.options))
            .then(|| Arc::clone(&self.google_adc)),
            aws_signer,
        };
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(task.run(tx, cancel));
                EventStream::new(rx)
            }
            Err(_) => self.failed(
                request,
                StreamFailure::other("Streaming needs a tokio runtime; call it from async code"),
            ),
        }
    }

    fn failed(&self, request: &StreamRequest, failure: StreamFailure) -> EventStream {
        let mut out = Output::new(&request.model, self.clock.now_ms());
        out.fail(failure, self.clock.now_ms());
        match out.events.pop() {
            Some(event) => EventStream::single(event),
            None => EventStream::single(StreamEvent::Error {
                reason: knightcode_protocol::StopReason::Error,
                message: out.message,
            }),
        }
    }
}

/// A request as it would go on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Provider for Client {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        let (http, wire) = match self.prepare(request) {
            Ok(prepared) => prepared,
            Err(failure) => return self.failed(request, failure),
        };
        self.spawn(request, http, wire, cancel)
    }
}
