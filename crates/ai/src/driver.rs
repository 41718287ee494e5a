//! Runs one streaming request: send (with retry), decode SSE into events, forward them, and
//! end with exactly one `Done` or `Error`, also on cancellation, timeouts and broken streams.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::StreamExt;
use knightcode_protocol::StopReason;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::error::ErrorClass;
use crate::error::StreamFailure;
use crate::event::StreamEvent;
use crate::http::ErrorStyle;
use crate::http::HttpRequest;
use crate::http::SendError;
use crate::http::idle_timeout;
use crate::http::send_with_retry;
use crate::http::transport_failure;
use crate::output::Output;
use crate::retry::ProviderRetry;
use crate::sse::SseDecoder;
use crate::sse::SseEvent;

/// The text of every cancelled request's `errorMessage`.
pub const ABORTED_MESSAGE: &str = "Request was aborted";

/// How a response body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Sse,
    /// AWS event-stream messages (Bedrock), each handed on as an [`SseEvent`] named by its
    /// type (see `providers::bedrock::frame_event`).
    EventStream,
}

/// A wire format's response decoder: a synchronous state machine over SSE events.
pub(crate) trait Decoder: Send + 'static {
    /// How the body is framed; SSE unless the format says otherwise.
    fn framing(&self) -> Framing {
        Framing::Sse
    }

    /// Handles one SSE event. An `Err` ends the stream with that failure.
    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure>;

    /// The body ended: close open blocks and decide the stop reason.
    fn finish(&mut self, out: &mut Output) -> Result<StopReason, StreamFailure>;

    /// The stream is about to end with an error or abort: store replay data kept aside.
    fn before_fail(&mut self, _out: &mut Output) {}

    /// Whether lines outside SSE fields should be collected and passed to [`Decoder::raw`].
    fn wants_raw_lines(&self) -> bool {
        false
    }

    /// A complete JSON document found outside SSE events (Gemini in-stream errors).
    fn raw(&mut self, _value: serde_json::Value, _out: &mut Output) -> Result<(), StreamFailure> {
        Ok(())
    }
}

/// The decoder of whichever wire format a model speaks, chosen at run time (one indirect call
/// per SSE event, nothing next to parsing its JSON).
impl Decoder for Box<dyn Decoder> {
    fn framing(&self) -> Framing {
        (**self).framing()
    }

    fn event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), StreamFailure> {
        (**self).event(event, out)
    }

    fn finish(&mut self, out: &mut Output) -> Result<StopReason, StreamFailure> {
        (**self).finish(out)
    }

    fn before_fail(&mut self, out: &mut Output) {
        (**self).before_fail(out);
    }

    fn wants_raw_lines(&self) -> bool {
        (**self).wants_raw_lines()
    }

    fn raw(&mut self, value: serde_json::Value, out: &mut Output) -> Result<(), StreamFailure> {
        (**self).raw(value, out)
    }
}

/// Feeds bytes through SSE decoding into a [`Decoder`]; the synchronous core of a stream,
/// also used by the benchmark.
pub(crate) struct Pipeline<D> {
    sse: SseDecoder,
    /// Set for formats framed as AWS event streams; then `sse` stays unused.
    event_stream: Option<crate::providers::bedrock::EventStreamDecoder>,
    pub(crate) decoder: D,
    pub(crate) out: Output,
    /// Parsed events kept for the stream-event hook (`None`: no hook, nothing kept).
    captured: Option<Vec<serde_json::Value>>,
}

impl<D: Decoder> Pipeline<D> {
    pub(crate) fn new(decoder: D, out: Output) -> Self {
        let sse = if decoder.wants_raw_lines() {
            SseDecoder::keeping_raw_lines()
        } else {
            SseDecoder::new()
        };
        let event_stream = (decoder.framing() == Framing::EventStream)
            .then(crate::providers::bedrock::EventStreamDecoder::new);
        Self {
            sse,
            event_stream,
            decoder,
            out,
            captured: None,
        }
    }

    /// Keeps each parsed event for [`Pipeline::take_captured`] (the stream-event hook).
    pub(crate) fn capture_events(&mut self) {
        self.captured = Some(Vec::new());
    }

    /// The events parsed since the last call, in stream order.
    pub(crate) fn take_captured(&mut self) -> Vec<serde_json::Value> {
        self.captured
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<(), StreamFailure> {
        let Self {
            sse,
            event_stream,
            decoder,
            out,
            captured,
        } = self;
        if let Some(frames) = event_stream {
            return frames.feed(
                chunk,
                |message| match crate::providers::bedrock::frame_event(&message) {
                    Some(event) => decode(decoder, captured, event, out),
                    None => Ok(()),
                },
            );
        }
        sse.feed(chunk, |event| decode(decoder, captured, event, out))?;
        self.check_raw()
    }

    /// Hands a complete raw JSON document to the decoder (incomplete ones wait for more).
    fn check_raw(&mut self) -> Result<(), StreamFailure> {
        if self.sse.raw().is_empty() {
            return Ok(());
        }
        match serde_json::from_slice::<serde_json::Value>(self.sse.raw()) {
            Ok(value) => {
                self.sse.clear_raw();
                self.decoder.raw(value, &mut self.out)
            }
            Err(e) if e.is_eof() => Ok(()),
            Err(_) => {
                self.sse.clear_raw();
                Ok(())
            }
        }
    }

    pub(crate) fn finish(&mut self) -> Result<StopReason, StreamFailure> {
        let Self {
            sse,
            event_stream,
            decoder,
            out,
            captured,
        } = self;
        if let Some(frames) = event_stream {
            frames.finish()?;
            return self.decoder.finish(&mut self.out);
        }
        sse.finish(|event| decode(decoder, captured, event, out))?;
        self.check_raw()?;
        self.decoder.finish(&mut self.out)
    }
}

/// Hands one SSE event to the decoder, keeping its parsed data first when asked to.
fn decode<D: Decoder>(
    decoder: &mut D,
    captured: &mut Option<Vec<serde_json::Value>>,
    event: SseEvent<'_>,
    out: &mut Output,
) -> Result<(), StreamFailure> {
    if let Some(captured) = captured {
        captured.push(serde_json::from_slice(event.data).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(event.data).into_owned())
        }));
    }
    decoder.event(event, out)
}

/// Everything a streaming task needs.
pub(crate) struct StreamTask<D> {
    pub(crate) http: reqwest::Client,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) request: HttpRequest,
    pub(crate) retry: ProviderRetry,
    pub(crate) style: ErrorStyle,
    pub(crate) pipeline: Pipeline<D>,
    /// See [`crate::Client::with_read_pacing`].
    pub(crate) read_pacing: Duration,
    pub(crate) payload_hook: Option<crate::options::PayloadHook>,
    pub(crate) response_hook: Option<crate::options::ResponseHook>,
    pub(crate) headers_hook: Option<crate::options::HeadersHook>,
    /// With the `{provider, api, model}` its events are stamped with.
    pub(crate) stream_event_hook: Option<(crate::options::StreamEventHook, serde_json::Value)>,
    /// Where a Vertex AI request without an API key gets its access token.
    pub(crate) google_adc: Option<Arc<crate::google_adc::GoogleAdc>>,
    /// Signs a Bedrock request (SigV4) once hooks have had their say on its body and headers.
    pub(crate) aws_signer: Option<crate::providers::bedrock::Signer>,
}

/// A read at least this large means data is flowing faster than tokens are generated (a
/// large body, a burst after a stall); the next read follows at once.
const PACED_READ_LIMIT: usize = 4096;

/// Sends queued events; `false` when the consumer went away (then the request is dropped).
async fn flush(out: &mut Output, tx: &mpsc::Sender<StreamEvent>) -> bool {
    for event in out.events.drain(..) {
        if tx.send(event).await.is_err() {
            return false;
        }
    }
    true
}

/// Runs the payload hook over a request body; the error is the stream's failure message.
async fn apply_payload_hook(
    hook: &crate::options::PayloadHook,
    body: &[u8],
) -> Result<Vec<u8>, StreamFailure> {
    let payload: serde_json::Value = serde_json::from_slice(body).map_err(|error| {
        StreamFailure::other(format!(
            "Could not decode the request body for the payload hook: {error}"
        ))
    })?;
    let replaced = (hook.0)(payload).await;
    serde_json::to_vec(&replaced).map_err(|error| {
        StreamFailure::other(format!(
            "Could not encode the request body the payload hook returned: {error}"
        ))
    })
}

impl<D: Decoder> StreamTask<D> {
    /// Awaits the stream-event hook for each event parsed since the last call, in stream
    /// order; `false` when the request was aborted meanwhile.
    async fn report_stream_events(&mut self, cancel: &CancellationToken) -> bool {
        let Some((hook, source)) = &self.stream_event_hook else {
            return true;
        };
        for data in self.pipeline.take_captured() {
            let mut event = source.clone();
            event["data"] = data;
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return false,
                () = (hook.0)(event) => {}
            }
        }
        true
    }

    pub(crate) async fn run(mut self, tx: mpsc::Sender<StreamEvent>, cancel: CancellationToken) {
        let outcome = self.stream(&tx, &cancel).await;
        let now = self.clock.now_ms();
        if matches!(outcome, Outcome::Failed(_) | Outcome::Aborted) {
            self.pipeline.decoder.before_fail(&mut self.pipeline.out);
        }
        let out = &mut self.pipeline.out;
        match outcome {
            Outcome::Done(reason) => out.finish(reason, now),
            Outcome::Failed(failure) => out.fail(failure, now),
            Outcome::Aborted => out.fail(
                StreamFailure::new(ErrorClass::Aborted, ABORTED_MESSAGE),
                now,
            ),
            Outcome::ConsumerGone => return,
        }
        flush(out, &tx).await;
    }

    async fn stream(
        &mut self,
        tx: &mpsc::Sender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Outcome {
        if let Some(adc) = self.google_adc.take() {
            let token = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Outcome::Aborted,
                token = adc.access_token(&self.http, u64::try_from(self.clock.now_ms()).unwrap_or(0)) => token,
            };
            match token {
                Ok(token) if !self.request.headers.has("authorization") => self
                    .request
                    .headers
                    .set("authorization", format!("Bearer {token}")),
                Ok(_) => {}
                Err(failure) => return Outcome::Failed(failure),
            }
            if self
                .request
                .url
                .contains(crate::google_adc::METADATA_PROJECT)
            {
                let project = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Outcome::Aborted,
                    project = adc.metadata_project(&self.http, &crate::config_value::ProcessEnv) => project,
                };
                match project {
                    Ok(project) => {
                        self.request.url = self
                            .request
                            .url
                            .replace(crate::google_adc::METADATA_PROJECT, &project);
                    }
                    Err(failure) => return Outcome::Failed(failure),
                }
            }
        }
        if let Some(hook) = self.payload_hook.take() {
            let replaced = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Outcome::Aborted,
                replaced = apply_payload_hook(&hook, &self.request.body) => replaced,
            };
            match replaced {
                Ok(body) => self.request.body = body,
                Err(failure) => return Outcome::Failed(failure),
            }
        }
        if let Some(hook) = self.headers_hook.take() {
            let headers = self.request.headers.to_json();
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Outcome::Aborted,
                headers = (hook.0)(headers) => self.request.headers = crate::http::Headers::from_json(&headers),
            }
        }
        if self.stream_event_hook.is_some() {
            self.pipeline.capture_events();
        }
        if let Some(signer) = self.aws_signer.take() {
            let now = self.clock.now_ms();
            let signed = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Outcome::Aborted,
                signed = signer.sign(&self.http, &mut self.request, now) => signed,
            };
            if let Err(failure) = signed {
                return Outcome::Failed(failure);
            }
        }
        let sent = send_with_retry(
            &self.http,
            &self.request,
            &self.retry,
            self.clock.as_ref(),
            cancel,
            self.style,
        )
        .await;
        let response = match sent {
            Ok(response) => response,
            Err(SendError::Aborted) => return Outcome::Aborted,
            Err(SendError::Failed(failure)) => return Outcome::Failed(failure),
        };
        if let Some(hook) = self.response_hook.take() {
            let headers: serde_json::Map<String, serde_json::Value> = response
                .headers()
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        serde_json::Value::String(
                            String::from_utf8_lossy(value.as_bytes()).into_owned(),
                        ),
                    )
                })
                .collect();
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Outcome::Aborted,
                () = (hook.0)(response.status().as_u16(), headers) => {}
            }
        }
        self.pipeline.out.start();
        if !flush(&mut self.pipeline.out, tx).await {
            return Outcome::ConsumerGone;
        }
        let idle = idle_timeout(&self.retry);
        let mut body = response.bytes_stream();
        // One idle deadline, moved on only when it fires: a timer registered and dropped
        // per chunk costs more than decoding the chunk.
        let mut last_data = tokio::time::Instant::now();
        let deadline = tokio::time::sleep(idle);
        tokio::pin!(deadline);
        loop {
            let next = tokio::select! {
                // Checked first so a cancel wins over data that is already buffered.
                biased;
                _ = cancel.cancelled() => return Outcome::Aborted,
                next = body.next() => Some(next),
                () = &mut deadline => None,
            };
            let Some(next) = next else {
                let quiet_until = last_data + idle;
                if tokio::time::Instant::now() >= quiet_until {
                    return Outcome::Failed(StreamFailure::network(format!(
                        "Request timed out: no data for {} ms",
                        idle.as_millis()
                    )));
                }
                deadline.as_mut().reset(quiet_until);
                continue;
            };
            let chunk = match next {
                None => break,
                Some(Err(error)) => return Outcome::Failed(transport_failure(&error)),
                Some(Ok(chunk)) => chunk,
            };
            last_data = tokio::time::Instant::now();
            let mut fed = self.pipeline.feed(&chunk);
            let mut read = chunk.len();
            // Paced reads take every chunk that is already here before handing the events
            // on and pausing: the body yields one chunk per call, and the connection task
            // decodes the next only once this one is taken, so it is let run in between.
            // Unpaced reads hand each chunk on at once, with no extra yield.
            let mut ended = false;
            while fed.is_ok() && !self.read_pacing.is_zero() {
                tokio::task::yield_now().await;
                match body.next().now_or_never() {
                    None => break,
                    Some(None) => {
                        ended = true;
                        break;
                    }
                    Some(Some(Err(error))) => {
                        fed = Err(transport_failure(&error));
                    }
                    Some(Some(Ok(chunk))) => {
                        read += chunk.len();
                        fed = self.pipeline.feed(&chunk);
                    }
                }
            }
            if !self.report_stream_events(cancel).await {
                return Outcome::Aborted;
            }
            if !flush(&mut self.pipeline.out, tx).await {
                return Outcome::ConsumerGone;
            }
            if let Err(failure) = fed {
                return Outcome::Failed(failure);
            }
            if ended {
                break;
            }
            if !self.read_pacing.is_zero() && read < PACED_READ_LIMIT {
                // Tokens that arrive while we wait are read, decoded and handed on together.
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Outcome::Aborted,
                    () = tokio::time::sleep(self.read_pacing) => {}
                }
            }
        }
        if cancel.is_cancelled() {
            return Outcome::Aborted;
        }
        let finished = self.pipeline.finish();
        if !self.report_stream_events(cancel).await {
            return Outcome::Aborted;
        }
        if !flush(&mut self.pipeline.out, tx).await {
            return Outcome::ConsumerGone;
        }
        match finished {
            Ok(reason) => Outcome::Done(reason),
            Err(failure) => Outcome::Failed(failure),
        }
    }
}

enum Outcome {
    Done(StopReason),
    Failed(StreamFailure),
    Aborted,
    ConsumerGone,
}

/// A synchronous decoder for a whole response body in one wire format: feed it bytes as they
/// arrive and take the events. This is what every streaming request runs internally; it is
/// public for replaying recorded streams and for benchmarks.
pub struct WireDecoder {
    inner: Pipeline<Box<dyn Decoder>>,
}

impl WireDecoder {
    /// A decoder for `model`'s API; `None` for APIs this crate does not speak.
    pub fn new(model: &crate::model::Model, now_ms: i64) -> Option<Self> {
        let wire = crate::providers::wire_format(model.api_kind()?);
        let mut out = Output::new(model, now_ms);
        out.start();
        Some(Self {
            inner: Pipeline::new(
                (wire.decoder)(
                    model,
                    &crate::options::Context::default(),
                    &crate::options::StreamOptions::default(),
                ),
                out,
            ),
        })
    }

    /// Decodes a chunk of the body. An `Err` is the stream's failure.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), StreamFailure> {
        self.inner.feed(chunk)
    }

    /// Moves the events produced so far into `events`.
    pub fn drain_into(&mut self, events: &mut Vec<StreamEvent>) {
        events.append(&mut self.inner.out.events);
    }

    /// Ends the body and returns the final `Done` or `Error` event (after any `*_end` events
    /// still pending, which go into `events`).
    pub fn finish(mut self, now_ms: i64, events: &mut Vec<StreamEvent>) -> StreamEvent {
        let finished = self.inner.finish();
        if finished.is_err() {
            self.inner.decoder.before_fail(&mut self.inner.out);
        }
        let out = &mut self.inner.out;
        match finished {
            Ok(reason) => out.finish(reason, now_ms),
            Err(failure) => out.fail(failure, now_ms),
        }
        let last = out.events.pop();
        events.append(&mut out.events);
        last.unwrap_or_else(|| StreamEvent::Error {
            reason: StopReason::Error,
            message: out.message.clone(),
        })
    }
}
