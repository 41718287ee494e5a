//! The run: turns of model request → tool execution, queued-message delivery, auto-retry and
//! abort.
//!
//! A session-level run (one [`Agent::prompt`]) is one or more low-level runs, each framed by
//! `agent_start` … `agent_end`. A new low-level run starts after a retryable failure (once the
//! backoff has passed) and when messages were queued too late for the previous one. One
//! `agent_settled` closes the whole thing.
//!
//! Inside a low-level run every turn is `turn_start`, the messages delivered before the request
//! (prompt, steering or follow-up), the assistant response, its tool executions and results,
//! `turn_end`. Steering messages are picked up after a turn's tool calls; follow-ups when a
//! turn had no tool calls and nothing else is pending.

use std::sync::Arc;
use std::time::Duration;

use knightcode_ai::Context;
use knightcode_ai::PayloadHook;
use knightcode_ai::RequestReason;
use knightcode_ai::StreamRequest;
use knightcode_ai::is_context_overflow;
use knightcode_ai::is_retryable_assistant_error;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::AssistantMessage;
use knightcode_protocol::StopReason;
use knightcode_protocol::ToolCall;
use knightcode_protocol::TurnEnd;
use knightcode_protocol::TurnErrorKind;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agent::RunOutcome;
use crate::assistant_turn::stream_assistant;
use crate::error::AgentError;
use crate::hooks::BoundaryAction;
use crate::hooks::TurnSummary;
use crate::queue::Queues;
use crate::tool_batch::ToolBatch;
use crate::validate::SchemaCache;

/// The final error of an auto-retry stopped by an abort.
pub const RETRY_CANCELLED: &str = "Retry cancelled";

/// How a session-level run begins.
pub(crate) enum Start {
    /// New messages (a prompt); steering queued before the run is delivered with them.
    Prompts(Vec<AgentMessage>),
    /// Queued steering messages taken by `continue_run`; no second steering poll, so
    /// `one-at-a-time` delivers exactly one.
    Queued(Vec<AgentMessage>),
    /// Nothing new: answer the conversation as it stands.
    Continue,
}

/// State of one session-level run.
struct RunState {
    cancel: CancellationToken,
    /// The retry in progress (1-based), 0 when none.
    retry_attempt: u32,
    /// The overflow hook was asked since the last user message (it is asked once).
    overflow_recovered: bool,
    schemas: SchemaCache,
    /// The store was told a turn began (at the first `agent_start`).
    turn_open: bool,
    /// The failed response the next request retries (a virtual model's router is told).
    retrying: Option<Arc<AssistantMessage>>,
}

/// What a low-level run produced.
struct LowRun {
    messages: Vec<AgentMessage>,
    last_assistant: Option<AssistantMessage>,
}

fn stop_reason(message: &AssistantMessage) -> Option<StopReason> {
    message.stop_reason.known()
}

impl Agent {
    pub(crate) async fn run_session(&mut self, start: Start) -> Result<RunOutcome, AgentError> {
        let guard = self.begin_run();
        let mut run = RunState {
            cancel: guard.cancel.clone(),
            retry_attempt: 0,
            overflow_recovered: false,
            schemas: SchemaCache::default(),
            turn_open: false,
            retrying: None,
        };
        let mut messages = Vec::new();
        let mut result = self.run_until_settled(&mut run, start, &mut messages).await;
        let aborted = run.cancel.is_cancelled();
        if run.turn_open {
            let end = turn_end(&result, aborted);
            let stored = self.store.end_turn(&end);
            if let (Ok(_), Err(source)) = (&result, stored) {
                result = Err(AgentError::Persist {
                    role: "turn end".to_owned(),
                    source,
                });
            }
        }
        self.shared
            .events
            .emit(AgentEvent::AgentSettled { aborted })
            .await;
        drop(guard);
        let last_assistant = result?;
        let error = last_assistant.and_then(|m| {
            (stop_reason(&m) == Some(StopReason::Error))
                .then(|| m.error_message.unwrap_or_default())
        });
        Ok(RunOutcome {
            messages,
            aborted,
            error,
        })
    }

    /// Low-level runs until nothing is left to do; returns the last assistant message.
    async fn run_until_settled(
        &mut self,
        run: &mut RunState,
        start: Start,
        all: &mut Vec<AgentMessage>,
    ) -> Result<Option<AssistantMessage>, AgentError> {
        let (mut prompts, mut poll_steering) = match start {
            Start::Prompts(prompts) => (prompts, true),
            Start::Queued(prompts) => (prompts, false),
            Start::Continue => (Vec::new(), true),
        };
        let mut last = None;
        loop {
            let low = self.low_level_run(run, prompts, poll_steering).await?;
            all.extend(low.messages);
            if low.last_assistant.is_some() {
                last = low.last_assistant;
            }
            if run.cancel.is_cancelled() {
                self.finish_cancelled_retry(run);
                return Ok(last);
            }
            if let Some(failed) = last.as_ref().filter(|m| self.is_overflow(m)) {
                if run.overflow_recovered {
                    self.hooks.overflow_unrecovered(failed, &run.cancel).await;
                } else {
                    run.overflow_recovered = true;
                    if let Some(recovery) = self.hooks.context_overflow(failed, &run.cancel).await
                        && !run.cancel.is_cancelled()
                    {
                        self.messages = recovery.context;
                        run.retrying = Some(Arc::new(failed.clone()));
                        (prompts, poll_steering) = (Vec::new(), true);
                        continue;
                    }
                }
            }
            let retry_left =
                self.config.retry.enabled && run.retry_attempt < self.config.retry.max_retries;
            if let Some(failed) = last.as_ref().filter(|m| retry_left && self.is_retryable(m)) {
                run.retry_attempt += 1;
                if !self.back_off(run, failed).await? {
                    return Ok(last);
                }
                run.retrying = Some(Arc::new(failed.clone()));
                (prompts, poll_steering) = (Vec::new(), true);
                continue;
            }
            if let Some(failed) = last
                .as_ref()
                .filter(|m| stop_reason(m) == Some(StopReason::Error) && run.retry_attempt > 0)
            {
                self.shared.events.emit_now(AgentEvent::AutoRetryEnd {
                    success: false,
                    attempt: run.retry_attempt,
                    final_error: failed.error_message.clone(),
                    cancelled: false,
                });
                run.retry_attempt = 0;
            }
            // Messages queued after the loop's last look (or while a failed turn ended the
            // run) start another low-level run instead of waiting for the next prompt.
            if self.shared.queues_empty() {
                return Ok(last);
            }
            let steering = self.shared.change_queues(false, Queues::take_steering);
            (prompts, poll_steering) = if steering.is_empty() {
                (
                    self.shared.change_queues(false, Queues::take_follow_up),
                    true,
                )
            } else {
                (steering, false)
            };
            // A new user message gets its own overflow recovery.
            run.overflow_recovered = false;
        }
    }

    /// Announces retry `run.retry_attempt`, drops the failed response from the context and
    /// waits. `Ok(false)` when an abort ended the wait.
    async fn back_off(
        &mut self,
        run: &mut RunState,
        failed: &AssistantMessage,
    ) -> Result<bool, AgentError> {
        // The server's `retry-after` when it asks for longer than our own back-off.
        let delay_ms = self
            .config
            .retry
            .delay_ms(run.retry_attempt)
            .max(failed.retry_after_ms.get().copied().unwrap_or(0));
        self.shared
            .events
            .emit(AgentEvent::AutoRetryStart {
                attempt: run.retry_attempt,
                max_attempts: self.config.retry.max_retries,
                delay_ms,
                error_message: failed
                    .error_message
                    .clone()
                    .filter(|e| !e.is_empty())
                    .unwrap_or_else(|| "Unknown error".to_owned()),
            })
            .await;
        // The retry must not show the model its own failed attempt; the session keeps it in
        // raw history and is told to leave it out of the context.
        if let Some(AgentMessage::Assistant(last)) = self.messages.last().map(|m| &**m)
            && **last == *failed
        {
            let removed = self.messages.pop();
            if let Some(removed) = removed {
                let removed = Arc::unwrap_or_clone(removed);
                self.store
                    .omit(&removed)
                    .map_err(|source| AgentError::Persist {
                        role: "context edit for the failed".to_owned(),
                        source,
                    })?;
            }
        }
        let sleep = self.clock.sleep(Duration::from_millis(delay_ms));
        tokio::select! {
            () = sleep => Ok(true),
            () = run.cancel.cancelled() => {
                self.finish_cancelled_retry(run);
                Ok(false)
            }
        }
    }

    fn finish_cancelled_retry(&self, run: &mut RunState) {
        if run.retry_attempt > 0 {
            self.shared.events.emit_now(AgentEvent::AutoRetryEnd {
                success: false,
                attempt: run.retry_attempt,
                final_error: Some(RETRY_CANCELLED.to_owned()),
                cancelled: true,
            });
            run.retry_attempt = 0;
        }
    }

    /// A transient failure that is not a context overflow (overflow is compacted, not
    /// retried), and whose server did not ask for a longer wait than the retry settings allow
    /// (its message says so).
    fn is_retryable(&self, message: &AssistantMessage) -> bool {
        let cap = self.config.retry.max_agent_delay_ms;
        let waits_too_long =
            cap > 0 && message.retry_after_ms.get().is_some_and(|wait| *wait > cap);
        !self.is_overflow(message) && !waits_too_long && is_retryable_assistant_error(message)
    }

    fn is_overflow(&self, message: &AssistantMessage) -> bool {
        let window = self.config.model.context_window;
        is_context_overflow(message, (window > 0).then_some(window))
    }

    /// One `agent_start` … `agent_end`.
    async fn low_level_run(
        &mut self,
        run: &mut RunState,
        prompts: Vec<AgentMessage>,
        poll_steering: bool,
    ) -> Result<LowRun, AgentError> {
        self.shared
            .ending
            .store(false, std::sync::atomic::Ordering::SeqCst);
        if !run.turn_open {
            self.store
                .begin_turn()
                .map_err(|source| AgentError::Persist {
                    role: "turn marker".to_owned(),
                    source,
                })?;
            run.turn_open = true;
        }
        self.shared.events.emit(AgentEvent::AgentStart).await;
        self.shared.events.emit(AgentEvent::TurnStart).await;
        let mut messages = Vec::new();
        let result = self.turns(run, prompts, poll_steering, &mut messages).await;
        let will_retry = match &result {
            Ok(Some(last)) => {
                !run.cancel.is_cancelled()
                    && self.config.retry.enabled
                    && run.retry_attempt < self.config.retry.max_retries
                    && self.is_retryable(last)
            }
            _ => false,
        };
        // Until the next low-level run starts (a retry, or a late queued message's), the
        // session treats this run as over (`AgentHandle::run_ending`).
        self.shared
            .ending
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.shared
            .events
            .emit(AgentEvent::AgentEnd {
                messages: messages.clone(),
                will_retry,
            })
            .await;
        let last_assistant = result?;
        Ok(LowRun {
            messages,
            last_assistant,
        })
    }

    /// The turns of a low-level run; returns its last assistant message.
    async fn turns(
        &mut self,
        run: &mut RunState,
        prompts: Vec<AgentMessage>,
        poll_steering: bool,
        new: &mut Vec<AgentMessage>,
    ) -> Result<Option<AssistantMessage>, AgentError> {
        let mut pending = prompts;
        if poll_steering {
            pending.extend(self.shared.change_queues(false, Queues::take_steering));
        }
        let mut turn_index = 0;
        let mut last = None;
        // The first turn always makes a request; later ones when the previous response
        // called tools, or a boundary hook asked for one more.
        let mut another_request = true;
        loop {
            while another_request || !pending.is_empty() {
                if turn_index > 0 {
                    self.shared.events.emit(AgentEvent::TurnStart).await;
                }
                for message in std::mem::take(&mut pending) {
                    self.deliver(message, new).await?;
                }

                let reason = self.request_reason(run.retrying.take());
                let request = self.build_request(&run.cancel, reason).await;
                let response = stream_assistant(
                    self.provider.as_ref(),
                    &request,
                    &self.shared.events,
                    self.clock.as_ref(),
                    self.hooks.as_ref(),
                    &run.cancel,
                )
                .await;
                drop(request);
                let assistant = AgentMessage::Assistant(Box::new(response.clone()));
                // Stored before `message_end` reports it: whoever sees the event (and then
                // a crash) finds the message in the session file.
                self.record(assistant.clone(), new)?;
                self.shared
                    .events
                    .emit(AgentEvent::MessageEnd {
                        message: assistant.clone(),
                    })
                    .await;
                last = Some(response.clone());
                let stop = stop_reason(&response);
                if stop != Some(StopReason::Error) && run.retry_attempt > 0 {
                    self.shared.events.emit_now(AgentEvent::AutoRetryEnd {
                        success: true,
                        attempt: run.retry_attempt,
                        final_error: None,
                        cancelled: false,
                    });
                    run.retry_attempt = 0;
                }
                if matches!(stop, Some(StopReason::Error | StopReason::Aborted)) {
                    self.shared
                        .events
                        .emit(AgentEvent::TurnEnd {
                            message: assistant,
                            tool_results: Vec::new(),
                        })
                        .await;
                    return Ok(last);
                }

                let calls: Vec<ToolCall> = response.tool_calls().cloned().collect();
                let (results, terminate) = if calls.is_empty() {
                    (Vec::new(), false)
                } else {
                    let truncated = stop == Some(StopReason::Length);
                    self.execute_tools(run, &calls, truncated, new).await?
                };
                self.shared
                    .events
                    .emit(AgentEvent::TurnEnd {
                        message: assistant,
                        tool_results: results.clone(),
                    })
                    .await;
                // An abort during the tools ends the run here: no request would be answered,
                // and queued messages stay queued for the user.
                if run.cancel.is_cancelled() {
                    return Ok(last);
                }
                let turn = TurnSummary {
                    turn_index,
                    message: &response,
                    tool_results: &results,
                };
                let action = self.hooks.turn_end(turn, &run.cancel).await;
                turn_index += 1;
                let (end, continue_run) = self.apply_boundary(action, new).await?;
                if end || run.cancel.is_cancelled() {
                    return Ok(last);
                }
                // Every tool of the batch said the run is done: no automatic follow-up.
                another_request = (!calls.is_empty() && !terminate) || continue_run;
                pending = self.shared.change_queues(false, Queues::take_steering);
            }
            let follow_up = self.shared.change_queues(false, Queues::take_follow_up);
            if !follow_up.is_empty() {
                pending = follow_up;
                continue;
            }
            let action = self.hooks.before_settle(last.as_ref(), &run.cancel).await;
            let (end, continue_run) = self.apply_boundary(action, new).await?;
            if end || !continue_run || run.cancel.is_cancelled() {
                return Ok(last);
            }
            another_request = true;
        }
    }

    /// Records a message that starts a turn (prompt, steering, follow-up, hook message).
    async fn deliver(
        &mut self,
        message: AgentMessage,
        new: &mut Vec<AgentMessage>,
    ) -> Result<(), AgentError> {
        self.shared
            .events
            .emit(AgentEvent::MessageStart {
                message: message.clone(),
            })
            .await;
        let message = crate::hooks::finish_message(
            self.hooks.as_ref(),
            message,
            &tokio_util::sync::CancellationToken::new(),
        )
        .await;
        // Stored before `message_end` reports it (acknowledged means stored).
        self.record(message.clone(), new)?;
        self.shared
            .events
            .emit(AgentEvent::MessageEnd { message })
            .await;
        Ok(())
    }

    /// Carries out a boundary hook's action; returns `(end, continue)`.
    async fn apply_boundary(
        &mut self,
        action: BoundaryAction,
        new: &mut Vec<AgentMessage>,
    ) -> Result<(bool, bool), AgentError> {
        if let Some(context) = action.context {
            self.messages = context;
        }
        for message in action.messages {
            self.deliver(message, new).await?;
        }
        Ok((action.end, action.continue_run && !action.end))
    }

    /// Runs the calls group by group, emitting and recording each group's results in call
    /// order before the next group starts.
    async fn execute_tools(
        &mut self,
        run: &mut RunState,
        calls: &[ToolCall],
        truncated: bool,
        new: &mut Vec<AgentMessage>,
    ) -> Result<(Vec<AgentMessage>, bool), AgentError> {
        let mut results = Vec::with_capacity(calls.len());
        let mut batch = ToolBatch {
            registry: &self.config.tools,
            active: self.config.active_tools.as_deref(),
            cwd: &self.config.cwd,
            events: &self.shared.events,
            clock: &self.clock,
            hooks: &self.hooks,
            cancel: &run.cancel,
            schemas: &mut run.schemas,
            truncated,
            terminate: None,
            activated: Vec::new(),
        };
        let groups = batch.groups(calls);
        let mut finished = Vec::with_capacity(groups.len());
        for group in groups {
            let messages = batch.run_group(&calls[group]).await;
            for message in messages {
                let message = AgentMessage::ToolResult(Box::new(message));
                batch
                    .events
                    .emit(AgentEvent::MessageStart {
                        message: message.clone(),
                    })
                    .await;
                let message =
                    crate::hooks::finish_message(self.hooks.as_ref(), message, &run.cancel).await;
                // Stored before `message_end` reports it, and before a later group starts.
                persist(self.store.as_mut(), &message)?;
                batch
                    .events
                    .emit(AgentEvent::MessageEnd {
                        message: message.clone(),
                    })
                    .await;
                finished.push(message);
            }
            for message in finished.drain(..) {
                self.messages.push(Arc::new(message.clone()));
                new.push(message.clone());
                results.push(message);
            }
        }
        let terminate = batch.terminate == Some(true);
        let activated = std::mem::take(&mut batch.activated);
        self.activate_tools(activated)?;
        Ok((results, terminate))
    }

    /// Adds tools a call asked for ([`crate::ToolContext::activate_tools`]) to the active set,
    /// so the next request declares them, and records their declarations in the session as a
    /// system message with `toolsAdded`, the tool-set change that replays on resume, `/tree`
    /// and fork. Unknown, hidden and already active tools are skipped.
    fn activate_tools(&mut self, names: Vec<String>) -> Result<(), AgentError> {
        let Some(active) = self.config.active_tools.as_mut() else {
            return Ok(());
        };
        let mut added: Vec<String> = Vec::new();
        for name in names {
            let known = self
                .config
                .tools
                .get(&name)
                .is_some_and(|t| t.exposure() != crate::tool::ToolExposure::Hidden);
            if known && !active.contains(&name) && !added.contains(&name) {
                added.push(name);
            }
        }
        if added.is_empty() {
            return Ok(());
        }
        active.extend(added.iter().cloned());
        let declarations =
            self.config
                .tools
                .declarations_with(Some(&added), &self.config.loadout, true);
        let message = AgentMessage::System(Box::new(knightcode_protocol::SystemMessage {
            content: "".into(),
            tools_added: Some(declarations),
            timestamp: knightcode_protocol::Millis(self.clock.now_ms()),
            ..knightcode_protocol::SystemMessage::default()
        }));
        persist(self.store.as_mut(), &message)
    }

    /// Stores a finished message and adds it to the conversation and the run's messages.
    fn record(
        &mut self,
        message: AgentMessage,
        new: &mut Vec<AgentMessage>,
    ) -> Result<(), AgentError> {
        persist(self.store.as_mut(), &message)?;
        self.messages.push(Arc::new(message.clone()));
        new.push(message);
        Ok(())
    }

    /// Why the next request is made: a retry of `retrying`, else the first answer to a
    /// message the user wrote, else a continuation (after tool results, a hook's request).
    fn request_reason(&self, retrying: Option<Arc<AssistantMessage>>) -> RequestReason {
        if let Some(failed) = retrying {
            return RequestReason::Retry {
                failed: Some(failed),
            };
        }
        let last = self
            .messages
            .iter()
            .rev()
            .find(|m| !matches!(***m, AgentMessage::System(_)));
        match last.map(|m| &**m) {
            Some(AgentMessage::User(_)) => RequestReason::User,
            _ => RequestReason::Continuation,
        }
    }

    /// The next request: the conversation as the context hook shows it, the active tools'
    /// declarations (built here, once per request), and the payload hook when it is wanted.
    async fn build_request(
        &mut self,
        cancel: &CancellationToken,
        reason: RequestReason,
    ) -> StreamRequest {
        let config = &self.config;
        let messages = self
            .hooks
            .transform_context(self.messages.clone(), cancel)
            .await;
        let mut options = config.options.clone();
        options.reason = reason;
        if self.hooks.inspects_provider_payload() {
            let hooks = Arc::clone(&self.hooks);
            let cancel = cancel.clone();
            options.payload_hook = Some(PayloadHook(Arc::new(move |payload| {
                let hooks = Arc::clone(&hooks);
                let cancel = cancel.clone();
                Box::pin(async move {
                    match hooks.provider_payload(&payload, &cancel).await {
                        Some(replaced) => replaced,
                        None => payload,
                    }
                })
            })));
        }
        StreamRequest {
            model: config.model.clone(),
            context: Context {
                system_prompt: config.system_prompt.clone(),
                messages,
                tools: config.tools.declarations_with(
                    config.active_tools.as_deref(),
                    &config.loadout,
                    false,
                ),
            },
            options,
        }
    }
}

/// How a settled run's turn ended. An abort interrupts it whatever happened before; a last
/// response that failed fails it, with the kind the provider layer decided where the failure
/// arose (a message without one, from a provider that gives only text, is classified by the
/// reference's text rules); a runtime error fails it as `other`.
fn turn_end(result: &Result<Option<AssistantMessage>, AgentError>, aborted: bool) -> TurnEnd {
    if aborted {
        return TurnEnd::interrupted();
    }
    let last = match result {
        Ok(last) => last.as_ref(),
        Err(error) => return TurnEnd::failed(error.to_string(), TurnErrorKind::Other),
    };
    let Some(last) = last else {
        return TurnEnd::completed();
    };
    match stop_reason(last) {
        Some(StopReason::Aborted) => TurnEnd::interrupted(),
        Some(StopReason::Error) => {
            let message = last.error_message.clone().unwrap_or_default();
            let class = match last.error_class.get() {
                Some(class) => *class,
                None => knightcode_ai::classify_error_message(&message),
            };
            TurnEnd::failed(message, TurnErrorKind::from(class))
        }
        _ => TurnEnd::completed(),
    }
}

/// Appends `message` to the session's store; the error names its role.
fn persist(store: &mut dyn crate::MessageStore, message: &AgentMessage) -> Result<(), AgentError> {
    store.append(message).map_err(|source| AgentError::Persist {
        role: message.role().to_owned(),
        source,
    })
}
