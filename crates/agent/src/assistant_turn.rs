//! Streaming one assistant response and turning provider events into agent events.
//!
//! `Start` becomes `message_start`, content events become delta-only `message_update`s with
//! the cumulative usage, and the final `Done`/`Error` becomes `message_end`. A provider that
//! fails before `Start` still produces `message_start` (with the final message) so every
//! message has both events, as in the TypeScript agent.

use knightcode_ai::ABORTED_MESSAGE;
use knightcode_ai::Accumulator;
use knightcode_ai::ErrorClass;
use knightcode_ai::Provider;
use knightcode_ai::StreamEvent;
use knightcode_ai::StreamRequest;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::MemoryOnly;
use knightcode_protocol::Millis;
use knightcode_protocol::StopReason;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::events::EventSender;

/// What a provider stream that stops without `Done`/`Error` ends with.
pub(crate) const ENDED_WITHOUT_RESULT: &str = "The response stream ended without a result";

/// Streams `request` and returns the final assistant message (also emitted as
/// `message_end`). Cancelling `cancel` ends it at once as `aborted`, keeping the partial
/// content received so far.
pub(crate) async fn stream_assistant(
    provider: &dyn Provider,
    request: &StreamRequest,
    events: &EventSender,
    clock: &dyn Clock,
    hooks: &dyn crate::hooks::AgentHooks,
    cancel: &CancellationToken,
) -> AssistantMessage {
    let mut stream = provider.stream(request, cancel.child_token());
    let mut acc = Accumulator::new();
    let mut started = false;
    let mut message = loop {
        // Checked before every read so a provider that keeps streaming after the abort (or
        // has events buffered) cannot delay it.
        if cancel.is_cancelled() {
            break unfinished(
                &acc,
                started,
                request,
                clock,
                StopReason::Aborted,
                ABORTED_MESSAGE,
                ErrorClass::Aborted,
            );
        }
        let event = tokio::select! {
            biased;
            event = stream.recv() => event,
            () = cancel.cancelled() => continue,
        };
        let Some(event) = event else {
            // A provider that honours the cancel token may just close the stream; that is an
            // abort, not a broken stream.
            if cancel.is_cancelled() {
                continue;
            }
            break unfinished(
                &acc,
                started,
                request,
                clock,
                StopReason::Error,
                ENDED_WITHOUT_RESULT,
                // The provider went away mid-response, like a dropped connection: transient.
                ErrorClass::Network,
            );
        };
        acc.push(&event);
        match event {
            StreamEvent::Start { message } => {
                started = true;
                events
                    .emit(AgentEvent::MessageStart {
                        message: AgentMessage::Assistant(Box::new(message)),
                    })
                    .await;
            }
            StreamEvent::Usage(_) => {}
            StreamEvent::Done { message, .. } | StreamEvent::Error { message, .. } => {
                break message;
            }
            other => {
                if let (true, Some(wire)) = (started, other.to_wire()) {
                    events
                        .emit(AgentEvent::MessageUpdate {
                            usage: acc.usage().clone(),
                            assistant_message_event: wire,
                        })
                        .await;
                }
            }
        }
    };
    // Dropping the stream tells the provider task to stop, whatever ended the loop.
    drop(stream);
    // A virtual model's provider names the level of the model it routed to.
    if message.thinking_level.is_none() {
        message.thinking_level = Some(request.options.thinking.as_str().to_owned());
    }
    if !started {
        events
            .emit(AgentEvent::MessageStart {
                message: AgentMessage::Assistant(Box::new(message.clone())),
            })
            .await;
    }
    let finished = AgentMessage::Assistant(Box::new(message));
    // `message_end` goes out once the caller has stored the message (acknowledged means
    // stored).
    match crate::hooks::finish_message(hooks, finished, cancel).await {
        AgentMessage::Assistant(message) => *message,
        // `finish_message` keeps the role.
        _ => AssistantMessage::default(),
    }
}

/// The message of a stream that stopped without a final event: the partial content so far,
/// or an empty skeleton when the provider never started.
fn unfinished(
    acc: &Accumulator,
    started: bool,
    request: &StreamRequest,
    clock: &dyn Clock,
    reason: StopReason,
    error: &str,
    class: ErrorClass,
) -> AssistantMessage {
    let mut message = if started {
        acc.partial()
    } else {
        AssistantMessage {
            api: request.model.api.clone(),
            provider: request.model.provider.clone(),
            model: request.model.id.clone(),
            timestamp: Millis(clock.now_ms()),
            ..AssistantMessage::default()
        }
    };
    message.stop_reason = reason.into();
    message.error_message = Some(error.to_owned());
    message.error_class = MemoryOnly(Some(class));
    message
}
