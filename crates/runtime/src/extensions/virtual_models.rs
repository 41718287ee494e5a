//! Virtual models (`pi.registerVirtualModel`): the session's provider for the
//! `knightcode-virtual` API. Each request asks the extension's `route()` which physical model
//! answers, resolves that model's credentials, and streams it through the session's provider;
//! the response names the physical model, so the session records what was dispatched while
//! `model_change` keeps the selection.

use std::sync::Arc;
use std::sync::Weak;

use knightcode_ai::EventStream;
use knightcode_ai::Model;
use knightcode_ai::Provider;
use knightcode_ai::RequestReason;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamRequest;
use knightcode_ai::ThinkingLevel;
use knightcode_ai::VIRTUAL_API;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ErrorClass;
use knightcode_protocol::StopReason;
use knightcode_protocol::StoredStopReason;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::models::Inner;

/// The session's compaction, for a routed model whose window is too small for the context:
/// the reference compacts before sending such a request rather than letting it fail.
pub(crate) trait CompactAhead: Send + Sync {
    /// Compacts the session now; the compacted conversation as the request would carry it,
    /// or `None` when nothing was compacted.
    fn compact_ahead<'a>(
        &'a self,
        cancel: &'a CancellationToken,
    ) -> knightcode_agent::HookFuture<'a, Option<Vec<Arc<AgentMessage>>>>;
}

/// Routes requests to virtual models; held by the session's [`knightcode_ai::ApiRouter`],
/// which it reaches again through `inner` (weakly: the router owns this provider).
pub(crate) struct VirtualProvider {
    pub(crate) inner: Weak<Inner>,
}

/// Why a virtual model's request could not be routed (the request ends with this text).
#[derive(Debug, thiserror::Error)]
enum RouteError {
    #[error("the session has ended")]
    Ended,
    #[error("route() failed: {0}")]
    Route(String),
    #[error("route() returned {0}, which is not a known model")]
    Unknown(String),
    #[error("route() returned the virtual model {0}; return a physical model")]
    Virtual(String),
    #[error("route() returned {0}, which has no credentials (log in or set its API key)")]
    NoCredentials(String),
    #[error("route() returned {model}, whose credentials failed: {why}")]
    Credentials { model: String, why: String },
    #[error(
        "the context (about {tokens} tokens) does not fit the {window}-token window of {model}"
    )]
    TooLarge {
        model: String,
        tokens: u64,
        window: u64,
    },
}

impl Provider for VirtualProvider {
    fn stream(&self, request: &StreamRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel::<StreamEvent>(256);
        let virtual_model = request.model.clone();
        let (Some(inner), Ok(handle)) =
            (self.inner.upgrade(), tokio::runtime::Handle::try_current())
        else {
            let _ = tx.try_send(failure(&virtual_model, &RouteError::Ended));
            return EventStream::from_receiver(rx);
        };
        let request = request.clone();
        handle.spawn(async move {
            let routed = tokio::select! {
                routed = route(&inner, request, &cancel) => routed,
                () = cancel.cancelled() => {
                    let mut message = error_message(&virtual_model, knightcode_ai::ABORTED_MESSAGE);
                    message.stop_reason = StopReason::Aborted.into();
                    let _ = tx.send(StreamEvent::Error { reason: StopReason::Aborted, message }).await;
                    return;
                }
            };
            let (physical, level) = match routed {
                Ok(routed) => routed,
                Err(error) => {
                    let _ = tx.send(failure(&virtual_model, &error)).await;
                    return;
                }
            };
            let mut stream = inner.router.stream(&physical, cancel);
            while let Some(mut event) = stream.recv().await {
                if let StreamEvent::Done { message, .. } | StreamEvent::Error { message, .. } =
                    &mut event
                {
                    message.thinking_level = Some(level.as_str().to_owned());
                }
                if tx.send(event).await.is_err() {
                    return;
                }
            }
        });
        EventStream::from_receiver(rx)
    }
}

/// Asks the extension which model answers `request` and makes it that model's request: its
/// credentials, its clamped thinking level, everything else as the session set it.
async fn route(
    inner: &Inner,
    mut request: StreamRequest,
    cancel: &CancellationToken,
) -> Result<(StreamRequest, ThinkingLevel), RouteError> {
    let host = inner.host.upgrade().ok_or(RouteError::Ended)?;
    let model = &request.model;
    let options = &request.options;
    let mut ask = json!({
        "provider": model.provider,
        "id": model.id,
        "thinkingLevel": options.thinking.as_str(),
        "reason": options.reason.as_str(),
        "systemPrompt": request.context.system_prompt,
        "previous": previous_answer(&request.context.messages),
    });
    if let RequestReason::Retry {
        failed: Some(failed),
    } = &options.reason
    {
        ask["failed"] = serde_json::to_value(&**failed).unwrap_or(Value::Null);
    }
    // The conversation goes as shared messages, converted only if `route()` reads
    // `request.messages`: most routers decide without it.
    let answer = host
        .route_virtual(ask, request.context.messages.clone())
        .await
        .map_err(|e| RouteError::Route(e.to_string()))?;
    let physical = physical_model(inner, answer.get("model").unwrap_or(&Value::Null))?;
    let level = answer
        .get("thinkingLevel")
        .and_then(Value::as_str)
        .and_then(ThinkingLevel::parse)
        .unwrap_or(options.thinking);
    let level = physical.clamp_thinking_level(level);
    let name = format!("{}/{}", physical.provider, physical.id);
    let messages = fit_window(inner, &request, &physical, cancel)
        .await
        .map_err(|tokens| RouteError::TooLarge {
            model: name.clone(),
            tokens,
            window: physical.context_window,
        })?;
    let auth = inner
        .registry()
        .resolve_auth(&physical, &inner.auth())
        .await
        .map_err(|e| RouteError::Credentials {
            model: name.clone(),
            why: e.to_string(),
        })?
        .ok_or(RouteError::NoCredentials(name))?;
    if let Some(messages) = messages {
        request.context.messages = messages;
    }
    let options = &mut request.options;
    options.api_key = auth.api_key;
    for (header, value) in auth.headers {
        options.headers.insert(header, value);
    }
    options.thinking = level;
    // The session capped output for the virtual entry; the physical model's own cap applies.
    if options.max_tokens == Some(request.model.max_tokens) {
        options.max_tokens = None;
    }
    request.model = physical;
    Ok((request, level))
}

/// The last answer that did not fail or abort (`request.previous`): its model and
/// thinking level, as the message names them.
fn previous_answer(messages: &[Arc<AgentMessage>]) -> Value {
    messages
        .iter()
        .rev()
        .find_map(|m| match &**m {
            AgentMessage::Assistant(answer)
                if !matches!(
                    answer.stop_reason,
                    StoredStopReason::Known(StopReason::Error | StopReason::Aborted)
                ) =>
            {
                Some(answer)
            }
            _ => None,
        })
        .map_or(Value::Null, |m| {
            json!({
                "provider": m.provider,
                "model": m.model,
                "api": m.api,
                "thinkingLevel": m.thinking_level,
            })
        })
}

/// The session sized the context for the window it knew. When the routed model's is
/// smaller, the session compacts before the request (not for a `direct` one, such as the
/// summary itself) and the request carries the compacted conversation (`Some`) to the model
/// the router chose. `Err(tokens)` when it still does not fit: the request ends with an
/// overflow error, which the session answers as any overflow.
async fn fit_window(
    inner: &Inner,
    request: &StreamRequest,
    physical: &Model,
    cancel: &CancellationToken,
) -> Result<Option<Vec<Arc<AgentMessage>>>, u64> {
    let window = physical.context_window;
    let (usage, trailing) = knightcode_ai::estimate_context_tokens(&request.context);
    let tokens = usage + trailing;
    if window == 0 || tokens <= window {
        return Ok(None);
    }
    let compactor = match request.options.reason {
        RequestReason::Direct => None,
        _ => inner.compactor(),
    };
    let Some(compactor) = compactor else {
        return Err(tokens);
    };
    let Some(messages) = compactor.compact_ahead(cancel).await else {
        return Err(tokens);
    };
    // Estimated from the text alone: the usage the kept responses report counted the
    // conversation from before the compaction.
    let mut context = request.context.clone();
    context.messages = messages
        .iter()
        .map(|m| Arc::new(without_usage(m)))
        .collect();
    let (usage, trailing) = knightcode_ai::estimate_context_tokens(&context);
    match usage + trailing {
        tokens if tokens > window => Err(tokens),
        _ => Ok(Some(messages)),
    }
}

fn without_usage(message: &AgentMessage) -> AgentMessage {
    match message {
        AgentMessage::Assistant(assistant) => {
            let mut assistant = assistant.clone();
            assistant.usage = knightcode_protocol::Usage::default();
            AgentMessage::Assistant(assistant)
        }
        other => other.clone(),
    }
}

/// The model `route()` named: the registry's entry of its provider and id, else the model
/// object as given (an extension may build one).
fn physical_model(inner: &Inner, value: &Value) -> Result<Model, RouteError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
    let name = format!("{}/{}", text("provider"), text("id"));
    if text("api") == VIRTUAL_API {
        return Err(RouteError::Virtual(name));
    }
    let registry = inner.registry();
    let model = match registry.find(text("provider"), text("id")) {
        Some(model) => model.clone(),
        None => serde_json::from_value::<Model>(value.clone())
            .map_err(|_| RouteError::Unknown(name.clone()))?,
    };
    if model.api == VIRTUAL_API {
        return Err(RouteError::Virtual(name));
    }
    Ok(model)
}

/// A response that failed before any request was sent, naming the virtual model.
fn error_message(model: &Model, text: &str) -> AssistantMessage {
    AssistantMessage {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        stop_reason: StopReason::Error.into(),
        error_message: Some(text.to_owned()),
        timestamp: knightcode_protocol::Millis(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        ),
        ..AssistantMessage::default()
    }
}

fn failure(model: &Model, error: &RouteError) -> StreamEvent {
    let text = format!("Virtual model {}/{}: {error}", model.provider, model.id);
    let mut message = error_message(model, &text);
    // The router's own failure: retrying the same request would fail the same way. A
    // context too large for the routed model is an overflow: compaction helps.
    let class = match error {
        RouteError::TooLarge { .. } => ErrorClass::ContextOverflow,
        _ => ErrorClass::Other,
    };
    message.error_class = knightcode_protocol::MemoryOnly(Some(class));
    StreamEvent::Error {
        reason: StopReason::Error,
        message,
    }
}

/// The provider to register for [`VIRTUAL_API`] on the session's router.
pub(crate) fn provider(inner: &Arc<Inner>) -> Arc<dyn Provider> {
    Arc::new(VirtualProvider {
        inner: Arc::downgrade(inner),
    })
}

/// The model a resumed session continues with, among `available`: its selection (the
/// latest `model_change`) when that is a virtual model still registered, else the model
/// the session last recorded, which for a virtual selection is the physical model that
/// answered last. A virtual selection no longer registered comes with a notice saying so.
pub(crate) fn restored_model<'m>(
    selection: Option<&knightcode_session::ModelRef>,
    last: Option<&knightcode_session::ModelRef>,
    available: &'m [Model],
    registry: &knightcode_ai::ModelRegistry,
) -> (Option<&'m Model>, Option<String>) {
    let find = |r: &knightcode_session::ModelRef| {
        available
            .iter()
            .find(|m| m.provider == r.provider && m.id == r.model_id)
    };
    if let Some(model) = selection.and_then(find)
        && model.api == VIRTUAL_API
    {
        return (Some(model), None);
    }
    let fallback = last.and_then(find);
    let notice = match (selection, fallback) {
        (Some(selected), Some(model))
            if Some(selected) != last
                && registry
                    .find(&selected.provider, &selected.model_id)
                    .is_none() =>
        {
            Some(format!(
                "Warning: Virtual model {}/{} is no longer registered (is its extension loaded?); \
                 continuing with {}/{}, the model that answered last.",
                selected.provider, selected.model_id, model.provider, model.id
            ))
        }
        _ => None,
    };
    (fallback, notice)
}
