//! Model providers across the JS boundary, both ways:
//! - [`JsApiProvider`]: an API an extension implements in JS (`registerProvider` with a
//!   `streamSimple`), driven by the agent loop like any [`Provider`]. Each event the JS
//!   stream yields is pushed to Rust by a sync op and becomes a [`StreamEvent`].
//! - `modelStream`/`modelNext`: JS calling our Rust providers (`streamSimple`, `complete`,
//!   `streamSimpleAnthropic`, `ctx.modelRegistry.streamSimple`); the stream runs on the main
//!   runtime and JS awaits one event at a time.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use knightcode_ai::CacheRetention;
use knightcode_ai::Context;
use knightcode_ai::EventStream;
use knightcode_ai::Model;
use knightcode_ai::PayloadHook;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamOptions;
use knightcode_ai::StreamRequest;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolCall;
use knightcode_protocol::ToolDeclaration;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::engine::WeakEngine;

/// A future the model port returns.
pub type AuthFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Credentials for one request: the API key and the configured headers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestAuth {
    pub api_key: Option<String>,
    pub headers: Map<String, Value>,
}

/// What the session offers extensions about models (`ctx.modelRegistry`, `@knightcode/ai`).
/// The runtime implements it over its registry, credentials and provider.
pub trait ModelPort: Send + Sync {
    /// Every model, with whether its provider has credentials.
    fn models(&self) -> Vec<(Model, bool)>;
    /// A number that changes whenever [`Self::models`] or [`Self::classifiers`] may answer
    /// differently, so the host can keep what it read; `None` (the default) reads them
    /// every time.
    fn models_version(&self) -> Option<u64> {
        None
    }
    /// The key and headers a request to `model` would use; `None` without credentials.
    fn resolve_auth(
        &self,
        model: Model,
    ) -> AuthFuture<Result<Option<RequestAuth>, knightcode_ai::AiError>>;
    /// What the session streams with (extension APIs included).
    fn provider(&self) -> Arc<dyn Provider>;
    /// The built-in client only (`streamSimpleAnthropic` and co. name their API).
    fn builtin(&self) -> Arc<dyn Provider>;
    /// The classifier models, with whether their provider has credentials.
    fn classifiers(&self) -> Vec<(knightcode_ai::ClassifierModel, bool)> {
        Vec::new()
    }
    /// `classify(model, context, options)` (`{model, context, options}` as JS passed them):
    /// the JS `ClassifierResult`, failures included.
    fn classify(&self, request: Value) -> AuthFuture<Value> {
        let _ = request;
        Box::pin(async {
            json!({"answers": {}, "stopReason": "error", "errorMessage": "Classifier models are not available here"})
        })
    }
}

/// Events of a JS provider's stream on their way to the agent.
struct JsStream {
    events: mpsc::UnboundedSender<Value>,
    payload_hook: Option<PayloadHook>,
    response_hook: Option<knightcode_ai::ResponseHook>,
}

/// A Rust stream JS reads (`modelNext`).
struct RustStream {
    events: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
    cancel: CancellationToken,
}

/// The provider state shared by the host and the JS thread.
#[derive(Default)]
pub(crate) struct ProviderOps {
    next_id: AtomicU64,
    js_streams: Mutex<HashMap<u64, JsStream>>,
    rust_streams: Mutex<HashMap<u64, RustStream>>,
    port: Mutex<Option<Arc<dyn ModelPort>>>,
    /// How many times a port was bound: part of [`Self::models_version`].
    port_binds: AtomicU64,
    /// The runtime the session runs on (Rust streams started from JS run there).
    pub(crate) main: Mutex<Option<tokio::runtime::Handle>>,
    pub(crate) engine: Mutex<Option<WeakEngine>>,
    pub(crate) bodies: Arc<crate::fetch::Bodies>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn ok(value: Value) -> Value {
    json!({ "ok": value })
}

fn error(message: &str) -> Value {
    json!({ "error": { "code": "ERR_KC_PROVIDER", "message": message } })
}

impl ProviderOps {
    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn port(&self) -> Option<Arc<dyn ModelPort>> {
        lock(&self.port).clone()
    }

    /// Binds the session's model port (a new one replaces the models JS has read).
    pub(crate) fn bind_port(&self, port: Arc<dyn ModelPort>) {
        *lock(&self.port) = Some(port);
        self.port_binds.fetch_add(1, Ordering::Relaxed);
    }

    /// `kc.modelsVersion()`: changes whenever `kc.models()` may answer differently, so JS
    /// reads the list again only then; `None` when the port keeps no version.
    pub(crate) fn models_version(&self) -> Option<String> {
        let binds = self.port_binds.load(Ordering::Relaxed);
        match self.port() {
            None => Some(format!("{binds}:unbound")),
            Some(port) => port.models_version().map(|v| format!("{binds}:{v}")),
        }
    }

    /// `kc.streamEvent(id, json)`: one event of a JS provider's stream.
    pub(crate) fn js_event(&self, id: u64, event: Value) -> Value {
        if let Some(stream) = lock(&self.js_streams).get(&id) {
            let _ = stream.events.send(event);
        }
        ok(Value::Null)
    }

    /// The payload hook of a JS provider's request (`options.onPayload` in JS).
    pub(crate) fn js_payload_hook(&self, id: u64) -> Option<PayloadHook> {
        lock(&self.js_streams)
            .get(&id)
            .and_then(|s| s.payload_hook.clone())
    }

    /// The response hook of a JS provider's request (`options.onResponse` in JS).
    pub(crate) fn js_response_hook(&self, id: u64) -> Option<knightcode_ai::ResponseHook> {
        lock(&self.js_streams)
            .get(&id)
            .and_then(|s| s.response_hook.clone())
    }

    /// `kc.models()`: every model with `available`, for `getModels` and `ctx.modelRegistry`.
    pub(crate) fn models(&self) -> Value {
        let Some(port) = self.port() else {
            return ok(json!([]));
        };
        let mut list: Vec<Value> = port
            .models()
            .into_iter()
            .map(|(model, available)| json!({ "model": model, "available": available }))
            .collect();
        list.extend(
            port.classifiers()
                .into_iter()
                .map(|(model, available)| json!({ "model": model, "available": available })),
        );
        ok(Value::Array(list))
    }

    /// `kc.modelClassify(json)`: the JS `ClassifierResult`, on the session's runtime.
    pub(crate) fn classify(&self, request: Value) -> AuthFuture<Value> {
        let port = self.port();
        let main = lock(&self.main).clone();
        Box::pin(async move {
            let Some(port) = port else {
                return json!({"answers": {}, "stopReason": "error",
                    "errorMessage": "Classifier models are not available before the session starts"});
            };
            let call = port.classify(request);
            match main {
                // Its connections belong to the session's runtime.
                Some(main) => main.spawn(call).await.unwrap_or_else(|_| {
                    json!({"answers": {}, "stopReason": "aborted", "errorMessage": "The classification was cancelled"})
                }),
                None => call.await,
            }
        })
    }

    /// `kc.modelAuth(modelJson)` → `{apiKey, headers}` or `null`.
    pub(crate) fn auth(&self, model: Value) -> AuthFuture<Value> {
        let port = self.port();
        Box::pin(async move {
            let Some(port) = port else {
                return ok(Value::Null);
            };
            let model: Model = match serde_json::from_value(model) {
                Ok(model) => model,
                Err(e) => return error(&format!("invalid model: {e}")),
            };
            match port.resolve_auth(model).await {
                Ok(Some(auth)) => ok(json!({ "apiKey": auth.api_key, "headers": auth.headers })),
                Ok(None) => ok(Value::Null),
                Err(failure) => error(&failure.to_string()),
            }
        })
    }

    /// `kc.modelStream(json)`: starts a Rust stream for JS; returns its id.
    pub(crate) fn start_rust_stream(self: &Arc<Self>, args: Value) -> Value {
        let Some(port) = self.port() else {
            return error("model streaming is not available before the session starts");
        };
        let Some(main) = lock(&self.main).clone() else {
            return error("model streaming is not available before the session starts");
        };
        let model: Model = match args.get("model").cloned().map(serde_json::from_value) {
            Some(Ok(model)) => model,
            Some(Err(e)) => return error(&format!("invalid model: {e}")),
            None => return error("a model is required"),
        };
        let context = match context_from_js(args.get("context").unwrap_or(&Value::Null)) {
            Ok(context) => context,
            Err(invalid) => return error(&invalid.to_string()),
        };
        let js_options = args.get("options").cloned().unwrap_or(Value::Null);
        let id = self.id();
        let cancel = CancellationToken::new();
        let (tx, rx) = mpsc::unbounded_channel::<String>();
        lock(&self.rust_streams).insert(
            id,
            RustStream {
                events: Arc::new(tokio::sync::Mutex::new(rx)),
                cancel: cancel.clone(),
            },
        );
        let provider = if args.get("builtin").and_then(Value::as_bool) == Some(true) {
            port.builtin()
        } else {
            port.provider()
        };
        let payload_hook = (args.get("onPayload").and_then(Value::as_bool) == Some(true))
            .then(|| lock(&self.engine).clone())
            .flatten()
            .map(|engine| js_payload_callback(engine, id));
        let response_hook = (args.get("onResponse").and_then(Value::as_bool) == Some(true))
            .then(|| lock(&self.engine).clone())
            .flatten()
            .map(|engine| js_response_callback(engine, id));
        main.spawn(async move {
            let mut options = options_from_js(&js_options, &model);
            options.payload_hook = payload_hook;
            options.response_hook = response_hook;
            if options.api_key.is_none() {
                match port.resolve_auth(model.clone()).await {
                    Ok(Some(auth)) => {
                        options.api_key = auth.api_key;
                        for (name, value) in auth.headers {
                            options.headers.entry(name).or_insert(value);
                        }
                    }
                    Ok(None) => {}
                    Err(failure) => {
                        let _ = tx.send(
                            json!({ "type": "error", "reason": "error",
                                    "error": failed_message(&model, &failure.to_string()) })
                            .to_string(),
                        );
                        return;
                    }
                }
            }
            let request = StreamRequest {
                model,
                context,
                options,
            };
            let mut stream = provider.stream(&request, cancel);
            while let Some(event) = stream.recv().await {
                let final_event = event.final_message().is_some();
                if let Some(value) = event_to_js(&event)
                    && tx.send(value.to_string()).is_err()
                {
                    return;
                }
                if final_event {
                    return;
                }
            }
        });
        ok(json!(id))
    }

    /// The receiver of a Rust stream (`modelNext`); `None` once it has been read to the end.
    pub(crate) fn rust_stream(
        &self,
        id: u64,
    ) -> Option<Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>> {
        lock(&self.rust_streams)
            .get(&id)
            .map(|s| Arc::clone(&s.events))
    }

    pub(crate) fn finish_rust_stream(&self, id: u64) {
        lock(&self.rust_streams).remove(&id);
    }

    /// `kc.modelAbort(id)`: the JS signal of a Rust stream aborted.
    pub(crate) fn abort_rust_stream(&self, id: u64) -> Value {
        if let Some(stream) = lock(&self.rust_streams).get(&id) {
            stream.cancel.cancel();
        }
        ok(Value::Null)
    }
}

/// A payload hook that asks JS (`options.onPayload` of the stream `id`).
fn js_payload_callback(engine: WeakEngine, id: u64) -> PayloadHook {
    PayloadHook(Arc::new(move |payload: Value| {
        let engine = engine.clone();
        Box::pin(async move {
            let Some(engine) = engine.upgrade() else {
                return payload;
            };
            match engine
                .call(
                    "streamPayload",
                    &json!({ "streamId": id, "payload": payload }),
                )
                .await
            {
                Ok(Value::Null) | Err(_) => payload,
                Ok(replaced) => replaced,
            }
        })
    }))
}

/// A response hook that tells JS (`options.onResponse` of the stream `id`).
fn js_response_callback(engine: WeakEngine, id: u64) -> knightcode_ai::ResponseHook {
    knightcode_ai::ResponseHook(Arc::new(move |status, headers| {
        let engine = engine.clone();
        Box::pin(async move {
            if let Some(engine) = engine.upgrade() {
                let payload = json!({ "streamId": id, "status": status, "headers": headers });
                let _ = engine.call("streamResponse", &payload).await;
            }
        })
    }))
}

/// pi's `Context` (`{systemPrompt, messages, tools}`) as ours.
fn context_from_js(value: &Value) -> Result<Context, crate::ExtError> {
    let messages = value
        .get("messages")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|m| {
                    serde_json::from_value::<AgentMessage>(m.clone())
                        .map(Arc::new)
                        .map_err(|e| {
                            crate::ExtError::Invalid(format!("invalid message in context: {e}"))
                        })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    let tools = value
        .get("tools")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|t| ToolDeclaration {
                    name: t
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    parameters: t.get("parameters").cloned().unwrap_or(json!({})),
                    constrained_sampling: t
                        .get("constrainedSampling")
                        .and_then(|c| serde_json::from_value(c.clone()).ok()),
                    ..Default::default()
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Context {
        system_prompt: value
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages,
        tools,
    })
}

/// pi's `SimpleStreamOptions` as ours (the signal and callbacks stay in JS).
fn options_from_js(value: &Value, model: &Model) -> StreamOptions {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let reasoning = text("reasoning")
        .as_deref()
        .and_then(ThinkingLevel::parse)
        .unwrap_or(ThinkingLevel::Off);
    StreamOptions {
        api_key: text("apiKey"),
        thinking: model.clamp_thinking_level(reasoning),
        max_tokens: value.get("maxTokens").and_then(Value::as_u64),
        temperature: value.get("temperature").and_then(Value::as_f64),
        cache_retention: match text("cacheRetention").as_deref() {
            Some("none") => Some(CacheRetention::None),
            Some("long") => Some(CacheRetention::Long),
            Some("short") => Some(CacheRetention::Short),
            _ => None,
        },
        session_id: text("sessionId"),
        headers: value
            .get("headers")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        ..StreamOptions::default()
    }
}

/// An event as pi's `AssistantMessageEvent` minus `partial` (JS rebuilds it); `start`
/// carries the skeleton message JS starts from.
fn event_to_js(event: &StreamEvent) -> Option<Value> {
    match event {
        StreamEvent::Start { message } => Some(json!({ "type": "start", "partial": message })),
        other => other.to_wire().and_then(|w| serde_json::to_value(w).ok()),
    }
}

/// A failed response for `model` saying `message`.
fn failed_message(model: &Model, message: &str) -> Value {
    json!({
        "role": "assistant", "content": [], "api": model.api, "provider": model.provider,
        "model": model.id,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "error", "errorMessage": message,
        "timestamp": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    })
}

fn assistant(value: Option<&Value>, model: &Model, fallback_error: &str) -> AssistantMessage {
    value
        .cloned()
        .and_then(|v| serde_json::from_value::<AssistantMessage>(v).ok())
        .or_else(|| serde_json::from_value(failed_message(model, fallback_error)).ok())
        .unwrap_or_default()
}

fn stop_reason(value: Option<&Value>, default: StopReason) -> StopReason {
    value
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or(default)
}

/// One event a JS stream yielded, as ours. `None` for events we do not forward.
fn event_from_js(value: &Value, model: &Model) -> Option<StreamEvent> {
    let index = || {
        value
            .get("contentIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize
    };
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Some(match value.get("type").and_then(Value::as_str)? {
        "start" => StreamEvent::Start {
            message: {
                let mut message = assistant(value.get("partial"), model, "");
                message.stop_reason = StopReason::Pending.into();
                message.error_message = None;
                message
            },
        },
        "text_start" => StreamEvent::TextStart {
            content_index: index(),
        },
        "text_delta" => StreamEvent::TextDelta {
            content_index: index(),
            delta: text("delta"),
        },
        "text_end" => StreamEvent::TextEnd {
            content_index: index(),
            content: text("content"),
        },
        "thinking_start" => StreamEvent::ThinkingStart {
            content_index: index(),
        },
        "thinking_delta" => StreamEvent::ThinkingDelta {
            content_index: index(),
            delta: text("delta"),
        },
        "thinking_end" => StreamEvent::ThinkingEnd {
            content_index: index(),
            content: text("content"),
        },
        "toolcall_start" => StreamEvent::ToolCallStart {
            content_index: index(),
            id: text("id"),
            name: text("toolName"),
        },
        "toolcall_delta" => StreamEvent::ToolCallDelta {
            content_index: index(),
            delta: text("delta"),
        },
        "toolcall_end" => StreamEvent::ToolCallEnd {
            content_index: index(),
            tool_call: value
                .get("toolCall")
                .cloned()
                .and_then(|v| serde_json::from_value::<ToolCall>(v).ok())
                .unwrap_or_default(),
        },
        "done" => StreamEvent::Done {
            reason: stop_reason(value.get("reason"), StopReason::Stop),
            message: assistant(value.get("message"), model, "invalid final message"),
        },
        "error" => StreamEvent::Error {
            reason: stop_reason(value.get("reason"), StopReason::Error),
            message: assistant(value.get("error"), model, "the provider failed"),
        },
        _ => return None,
    })
}

/// An API implemented by an extension's `streamSimple`.
pub struct JsApiProvider {
    api: String,
    engine: Engine,
    ops: Arc<ProviderOps>,
}

impl std::fmt::Debug for JsApiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsApiProvider")
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

impl JsApiProvider {
    pub(crate) fn new(api: String, engine: Engine, ops: Arc<ProviderOps>) -> Self {
        Self { api, engine, ops }
    }

    pub fn api(&self) -> &str {
        &self.api
    }
}

/// The request as the JS `streamSimple` receives it.
fn request_to_js(api: &str, id: u64, request: &StreamRequest) -> Value {
    let options = &request.options;
    let tools: Vec<Value> = request
        .context
        .tools
        .iter()
        .map(
            |t| json!({ "name": t.name, "description": t.description, "parameters": t.parameters }),
        )
        .collect();
    let mut js_options = json!({
        "apiKey": options.api_key,
        "maxTokens": options.max_tokens,
        "temperature": options.temperature,
        "sessionId": options.session_id,
        "headers": options.headers,
        "cacheRetention": options.cache_retention.map(|c| match c {
            CacheRetention::None => "none",
            CacheRetention::Short => "short",
            CacheRetention::Long => "long",
        }),
    });
    if options.thinking != ThinkingLevel::Off {
        js_options["reasoning"] = json!(options.thinking.as_str());
    }
    json!({
        "api": api,
        "streamId": id,
        "model": request.model,
        "context": {
            "systemPrompt": request.context.system_prompt,
            "messages": knightcode_ai::llm_messages_json(&request.context.messages),
            "tools": tools,
        },
        "options": js_options,
        "hasPayloadHook": options.payload_hook.is_some(),
        "hasResponseHook": options.response_hook.is_some(),
    })
}

impl Provider for JsApiProvider {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel::<StreamEvent>(256);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            let _ = tx.try_send(StreamEvent::Error {
                reason: StopReason::Error,
                message: assistant(None, &request.model, "Streaming needs a tokio runtime"),
            });
            return EventStream::from_receiver(rx);
        };
        let model = request.model.clone();
        let id = self.ops.id();
        let (events, mut incoming) = mpsc::unbounded_channel::<Value>();
        lock(&self.ops.js_streams).insert(
            id,
            JsStream {
                events,
                payload_hook: request.options.payload_hook.clone(),
                response_hook: request.options.response_hook.clone(),
            },
        );
        let payload = request_to_js(&self.api, id, request);
        let engine = self.engine.clone();
        let ops = Arc::clone(&self.ops);
        let task = async move {
            let call = engine.call("streamSimple", &payload);
            tokio::pin!(call);
            // Forwards one JS event; true once the final one went (or no one listens).
            let forward = |event: Value| {
                let tx = tx.clone();
                let model = model.clone();
                async move {
                    let Some(event) = event_from_js(&event, &model) else {
                        return false;
                    };
                    let last = event.final_message().is_some();
                    tx.send(event).await.is_err() || last
                }
            };
            let mut finished = false;
            let mut failure = None;
            loop {
                tokio::select! {
                    event = incoming.recv() => match event {
                        Some(event) => if forward(event).await { finished = true; break },
                        None => break,
                    },
                    result = &mut call => {
                        // The JS side returned: every event it pushed is already queued.
                        while let Ok(event) = incoming.try_recv() {
                            if forward(event).await {
                                finished = true;
                                break;
                            }
                        }
                        failure = result.err();
                        break;
                    }
                    () = cancel.cancelled() => {
                        let _ = engine.call("abortStream", &json!({ "streamId": id })).await;
                        let mut message = assistant(None, &model, knightcode_ai::ABORTED_MESSAGE);
                        message.stop_reason = StopReason::Aborted.into();
                        let _ = tx.send(StreamEvent::Error { reason: StopReason::Aborted, message }).await;
                        finished = true;
                        break;
                    }
                }
            }
            if !finished {
                let why = failure.map_or_else(
                    || "The response stream ended without a result".to_owned(),
                    |failure| failure.to_string(),
                );
                let _ = tx
                    .send(StreamEvent::Error {
                        reason: StopReason::Error,
                        message: assistant(None, &model, &why),
                    })
                    .await;
            }
            lock(&ops.js_streams).remove(&id);
        };
        handle.spawn(task);
        EventStream::from_receiver(rx)
    }
}
