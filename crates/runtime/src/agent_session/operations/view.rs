//! [`SessionView`]: the read side of a session (state, messages, entries, tree, statistics),
//! usable from another task while the session itself is busy running a prompt.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::Mutex;

use crate::file_history::FileHistory;
use crate::file_history::RestorePlan;
use crate::file_history::UndoPoint;

use knightcode_agent::AgentHandle;
use knightcode_ai::Context;
use knightcode_ai::Model;
use knightcode_ai::ThinkingLevel;
use knightcode_ai::estimate_context_tokens;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::JsNumber;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::StopReason;
use knightcode_protocol::Usage;
use knightcode_protocol::rpc::ContextUsage;

use crate::compaction::hooks::CompactingFlag;
use knightcode_protocol::rpc::EntriesResult;
use knightcode_protocol::rpc::ForkMessage;
use knightcode_protocol::rpc::ModelInfo;
use knightcode_protocol::rpc::SessionState;
use knightcode_protocol::rpc::SessionStats;
use knightcode_protocol::rpc::TokenTotals;
use knightcode_session::SessionManager;

use super::TranscriptItem;
use super::conversation;
use super::transcript;
use crate::agent_session::lock;
use crate::error::Result;
use crate::error::RuntimeError;

/// The model as RPC reports it (`get_state`, `set_model`, `get_available_models`).
pub fn model_info(model: &Model) -> ModelInfo {
    ModelInfo::from(model)
}

/// Read access to a session, cheap to clone. Model and thinking level are as of its creation
/// ([`crate::AgentSession::view`]); everything else is read live.
#[derive(Clone)]
pub struct SessionView {
    session: Arc<Mutex<SessionManager>>,
    handle: AgentHandle,
    model: Model,
    thinking: ThinkingLevel,
    auto_compaction: bool,
    compacting: CompactingFlag,
    file_history: Arc<FileHistory>,
    resources: Arc<knightcode_resources::Resources>,
    command_sources: Arc<crate::resources::CommandSources>,
    /// The session's cache warmer (none for a view taken outside a session).
    cache_warming: Option<crate::cache_warming::CacheWarming>,
    /// For a virtual model, the physical model of the latest response.
    routed: Option<Model>,
}

impl std::fmt::Debug for SessionView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionView")
            .field(
                "model",
                &format_args!("{}/{}", self.model.provider, self.model.id),
            )
            .field("thinking", &self.thinking)
            .finish_non_exhaustive()
    }
}

impl SessionView {
    pub(super) fn new(
        session: Arc<Mutex<SessionManager>>,
        handle: AgentHandle,
        model: Model,
        thinking: ThinkingLevel,
        auto_compaction: bool,
        compacting: CompactingFlag,
        file_history: Arc<FileHistory>,
    ) -> Self {
        Self {
            session,
            handle,
            model,
            thinking,
            auto_compaction,
            compacting,
            file_history,
            resources: Arc::default(),
            command_sources: Arc::default(),
            cache_warming: None,
            routed: None,
        }
    }

    pub(super) fn with_routed(mut self, routed: Option<Model>) -> Self {
        self.routed = routed;
        self
    }

    /// For a virtual model, the physical model that answered last (the footer shows
    /// `selection → physical`); its limits are the context's.
    pub fn routed_model(&self) -> Option<&Model> {
        self.routed.as_ref()
    }

    pub(super) fn with_cache_warming(
        mut self,
        warming: crate::cache_warming::CacheWarming,
    ) -> Self {
        self.cache_warming = Some(warming);
        self
    }

    /// `cacheWarming` and what the warmer does now (`/session`); `None` outside a session.
    pub fn cache_warming(
        &self,
    ) -> Option<(
        crate::cache_warming::CacheWarmingMode,
        crate::cache_warming::CacheWarmingStatus,
    )> {
        let warming = self.cache_warming.as_ref()?;
        Some((warming.mode(), warming.status()))
    }

    /// Records a cache refresh as a `usage` entry of kind `cache_warm`.
    pub(crate) fn record_cache_warm(
        &self,
        warm: &crate::cache_warming::CacheWarmUsage,
    ) -> Result<()> {
        lock(&self.session).append_usage(
            "cache_warm",
            &warm.provider,
            &warm.model,
            warm.usage.clone(),
            warm.note.as_deref(),
        )?;
        Ok(())
    }

    /// The skills, prompt templates and extension commands the view answers for.
    pub(super) fn with_resources(
        mut self,
        resources: Arc<knightcode_resources::Resources>,
        command_sources: Arc<crate::resources::CommandSources>,
    ) -> Self {
        self.resources = resources;
        self.command_sources = command_sources;
        self
    }

    /// What a move in the tree to `target` would restore (`None`: before the first entry).
    pub fn restore_plan(&self, target: Option<&str>) -> RestorePlan {
        crate::file_history::plan_navigation(&self.file_history, &lock(&self.session), target)
    }

    /// The user messages `/undo` lists, oldest first, with what an undo to each restores.
    pub fn undo_points(&self) -> Vec<UndoPoint> {
        crate::file_history::undo_points(&self.file_history, &lock(&self.session))
    }

    /// A user shell command started: its turn has changes file history cannot undo.
    pub fn mark_shell(&self) {
        if self.file_history.enabled()
            && let Some(checkpoint) = crate::file_history::current_checkpoint(&lock(&self.session))
        {
            self.file_history.mark_shell(&checkpoint);
        }
    }

    /// `get_commands`: extension commands, prompt templates, then skills.
    pub fn commands(&self) -> Vec<knightcode_protocol::rpc::SlashCommand> {
        let mut out = self.command_sources.extension_commands();
        out.extend(crate::resources::commands(&self.resources));
        out
    }

    /// The skills and prompt templates, as of the view's creation.
    pub fn resources(&self) -> &Arc<knightcode_resources::Resources> {
        &self.resources
    }

    /// Whether a run is in progress (`ctx.isIdle`).
    pub(crate) fn is_running(&self) -> bool {
        self.handle.is_running()
    }

    /// Whether steering or follow-up messages wait (`ctx.hasPendingMessages`).
    pub(crate) fn has_queued(&self) -> bool {
        let (steering, follow_up) = self.handle.queued();
        !steering.is_empty() || !follow_up.is_empty()
    }

    /// Aborts the run in progress, if any (`ctx.abort`).
    pub(crate) fn abort(&self) {
        self.handle.abort();
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Runs `f` with the session locked (exports read the whole tree at once).
    pub(crate) fn with_session<T>(&self, f: impl FnOnce(&SessionManager) -> T) -> T {
        f(&lock(&self.session))
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.thinking
    }

    /// `get_state`. `is_streaming` comes from the caller, who knows whether a run is going.
    pub fn state(&self, is_streaming: bool) -> SessionState {
        let (steering, follow_up) = self.handle.queued();
        let session = lock(&self.session);
        let message_count = session
            .build_context()
            .messages
            .iter()
            .filter(|m| !matches!(*m.message, AgentMessage::System(_)))
            .count();
        SessionState {
            model: Some(model_info(&self.model)),
            thinking_level: self.thinking.as_str().to_owned(),
            is_streaming,
            is_compacting: self.compacting.get(),
            steering_mode: (self.handle.steering_mode()),
            follow_up_mode: (self.handle.follow_up_mode()),
            session_file: session
                .session_file()
                .map(|p| p.to_string_lossy().into_owned()),
            session_id: session.session_id().to_owned(),
            session_name: session.session_name().map(str::to_owned),
            auto_compaction_enabled: self.auto_compaction,
            message_count: message_count as u64,
            pending_message_count: (steering.len() + follow_up.len()) as u64,
            ..SessionState::default()
        }
    }

    /// `get_messages`: the conversation the next request is built from (system prompt
    /// snapshots left out).
    /// Whether moving to `target` leaves entries behind (the current leaf is not on the
    /// target's path): only then is there a branch to summarise.
    pub fn navigation_abandons(&self, target: &str) -> bool {
        let session = lock(&self.session);
        let Some(leaf) = session.leaf_id() else {
            return false;
        };
        session
            .branch(Some(target))
            .map(|path| !path.iter().any(|e| e.id() == leaf))
            .unwrap_or(false)
    }

    pub fn messages(&self) -> Vec<AgentMessage> {
        conversation(&self.session)
    }

    /// The conversation with the branch's custom entries in place, for a transcript.
    pub fn transcript(&self) -> Vec<TranscriptItem> {
        transcript(&self.session)
    }

    /// `get_entries`: every entry in file order, or those after `since`.
    pub fn entries(&self, since: Option<&str>) -> Result<EntriesResult> {
        let session = lock(&self.session);
        let entries = session.entries();
        let start = match since {
            None => 0,
            Some(id) => {
                entries
                    .iter()
                    .position(|e| e.id() == id)
                    .ok_or_else(|| RuntimeError::Rejected(format!("Entry not found: {id}")))?
                    + 1
            }
        };
        Ok(EntriesResult {
            entries: entries[start..].to_vec(),
            leaf_id: session.leaf_id().map(str::to_owned),
            ..EntriesResult::default()
        })
    }

    /// `get_tree` data as JSON text: `{"tree":[{entry, children, label?, labelTimestamp?}],
    /// "leafId"}`. Written iteratively, so a session of any depth is fine.
    pub fn tree_json(&self) -> Result<String> {
        let session = lock(&self.session);
        let tree = session.tree();
        let forest = tree.forest();
        let mut out = String::from("{\"tree\":[");
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for (root_position, &root) in forest.roots.iter().enumerate() {
            if root_position > 0 {
                out.push(',');
            }
            open_node(&mut out, tree.entry(root))?;
            stack.push((root, 0));
            while let Some((node, next)) = stack.last_mut() {
                let children = &forest.children[*node as usize];
                if let Some(&child) = children.get(*next) {
                    if *next > 0 {
                        out.push(',');
                    }
                    *next += 1;
                    open_node(&mut out, tree.entry(child))?;
                    stack.push((child, 0));
                } else {
                    let id = tree.entry(*node).id();
                    close_node(&mut out, tree.label(id), tree.label_timestamp(id))?;
                    stack.pop();
                }
            }
        }
        out.push_str("],\"leafId\":");
        out.push_str(&encode(&session.leaf_id())?);
        out.push('}');
        Ok(out)
    }

    /// Entries appended after the first `from` that the message flow did not produce
    /// (context edits, custom entries, usage records): what `entry_appended` reports. Also
    /// returns the new entry count, to pass as `from` next time. With `until_settled`, a run's
    /// turn end and what follows it wait for the scan at `agent_settled`: the end is written
    /// just before that event, and would otherwise be reported at whichever earlier event's
    /// scan happened to run after it.
    pub fn entries_outside_message_flow(
        &self,
        from: usize,
        until_settled: bool,
    ) -> (Vec<SessionEntry>, usize) {
        let session = lock(&self.session);
        let all = session.entries();
        let held = |entry: &SessionEntry| {
            until_settled
                && matches!(entry, SessionEntry::Custom(custom)
                    if custom.custom_type == knightcode_protocol::TURN_END)
        };
        let end = all
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, entry)| held(entry))
            .map_or(all.len(), |(index, _)| index);
        let entries = &all[..end];
        let appended = entries
            .iter()
            .skip(from)
            .filter(|entry| {
                !matches!(
                    entry,
                    SessionEntry::Message(_)
                        | SessionEntry::ModelChange(_)
                        | SessionEntry::ThinkingLevelChange(_)
                        | SessionEntry::SessionInfo(_)
                        // Reported by `compaction_end`.
                        | SessionEntry::Compaction(_)
                )
            })
            .cloned()
            .collect();
        (appended, entries.len())
    }

    /// `get_fork_messages`: every user message in the file with text, in file order.
    pub fn fork_messages(&self) -> Vec<ForkMessage> {
        let session = lock(&self.session);
        session
            .entries()
            .iter()
            .filter_map(|entry| {
                let SessionEntry::Message(message) = entry else {
                    return None;
                };
                let text = super::user_text(&message.message);
                (!text.is_empty()).then(|| ForkMessage {
                    entry_id: entry.id().to_owned(),
                    text,
                    ..ForkMessage::default()
                })
            })
            .collect()
    }

    /// `get_last_assistant_text`: the text of the last assistant message in context that
    /// is not an empty abort, trimmed; `None` when there is none or it has no text.
    pub fn last_assistant_text(&self) -> Option<String> {
        let messages = self.messages();
        let last = messages.iter().rev().find_map(|m| match m {
            AgentMessage::Assistant(a)
                if !(a.stop_reason.known() == Some(StopReason::Aborted)
                    && a.content.is_empty()) =>
            {
                Some(a)
            }
            _ => None,
        })?;
        let text: String = last
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// `set_session_name`: trims, refuses an empty name, records it; returns the name as
    /// stored (line breaks collapsed).
    pub fn set_session_name(&self, name: &str) -> Result<Option<String>> {
        let name = name.trim();
        if name.is_empty() {
            return Err(RuntimeError::Rejected(
                "Session name cannot be empty".to_owned(),
            ));
        }
        let mut session = lock(&self.session);
        session.set_session_name(name)?;
        Ok(session.session_name().map(str::to_owned))
    }

    /// `get_session_stats`: counts and totals over every entry of the file (abandoned
    /// branches and compacted history included), and the current context's size.
    /// What the responses cost per model that answered (`provider/id`), in the order each
    /// first answered: with a virtual model several physical models share the session.
    pub fn cost_by_model(&self) -> Vec<(String, f64)> {
        let session = lock(&self.session);
        let mut costs: Vec<(String, f64)> = Vec::new();
        for entry in session.entries() {
            let SessionEntry::Message(message) = entry else {
                continue;
            };
            let AgentMessage::Assistant(assistant) = &message.message else {
                continue;
            };
            let name = format!("{}/{}", assistant.provider, assistant.model);
            let cost = assistant.usage.cost.total.0;
            match costs.iter_mut().find(|(n, _)| *n == name) {
                Some((_, total)) => *total += cost,
                None => costs.push((name, cost)),
            }
        }
        costs
    }

    pub fn stats(&self) -> SessionStats {
        let session = lock(&self.session);
        let mut stats = SessionStats {
            session_file: session
                .session_file()
                .map(|p| p.to_string_lossy().into_owned()),
            session_id: session.session_id().to_owned(),
            ..SessionStats::default()
        };
        let mut tokens = TokenTotals::default();
        let mut cost = 0.0;
        let mut add = |usage: &Usage| {
            tokens.input += usage.input.0;
            tokens.output += usage.output.0;
            tokens.cache_read += usage.cache_read.0;
            tokens.cache_write += usage.cache_write.0;
            cost += usage.cost.total.0;
        };
        for entry in session.entries() {
            match entry {
                SessionEntry::Message(message) => match &message.message {
                    AgentMessage::System(_) => {}
                    AgentMessage::User(_) => {
                        stats.user_messages += 1;
                        stats.total_messages += 1;
                    }
                    AgentMessage::Assistant(assistant) => {
                        stats.assistant_messages += 1;
                        stats.total_messages += 1;
                        stats.tool_calls += assistant.tool_calls().count() as u64;
                        add(&assistant.usage);
                    }
                    AgentMessage::ToolResult(result) => {
                        stats.tool_results += 1;
                        stats.total_messages += 1;
                        if let Some(usage) = &result.usage {
                            add(usage);
                        }
                    }
                    _ => stats.total_messages += 1,
                },
                SessionEntry::Compaction(compaction) => {
                    if let Some(usage) = &compaction.usage {
                        add(usage);
                    }
                }
                SessionEntry::BranchSummary(summary) => {
                    if let Some(usage) = &summary.usage {
                        add(usage);
                    }
                }
                SessionEntry::Usage(record) => add(&record.usage),
                _ => {}
            }
        }
        tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write;
        stats.tokens = tokens;
        stats.cost = JsNumber(cost);
        drop(session);
        stats.context_usage = self.context_usage();
        stats
    }

    /// Tokens in the current context: the last valid response's usage plus an estimate of
    /// what followed; unknown after a compaction until a response arrives.
    pub(crate) fn context_usage(&self) -> Option<ContextUsage> {
        let window = self.routed.as_ref().unwrap_or(&self.model).context_window;
        if window == 0 {
            return None;
        }
        let unknown = ContextUsage {
            tokens: None,
            context_window: window,
            percent: None,
            ..ContextUsage::default()
        };
        {
            let session = lock(&self.session);
            let branch = session.branch(None).ok()?;
            if let Some(compaction) = branch
                .iter()
                .rposition(|e| matches!(e, SessionEntry::Compaction(_)))
            {
                let valid_after = branch[compaction + 1..].iter().rev().find_map(|entry| {
                    let Some(AgentMessage::Assistant(a)) = entry.message() else {
                        return None;
                    };
                    if matches!(
                        a.stop_reason.known(),
                        Some(StopReason::Aborted | StopReason::Error)
                    ) {
                        return None;
                    }
                    Some(
                        a.usage.input.0
                            + a.usage.output.0
                            + a.usage.cache_read.0
                            + a.usage.cache_write.0
                            > 0,
                    )
                });
                if valid_after != Some(true) {
                    return Some(unknown);
                }
            }
        }
        let context = Context {
            system_prompt: None,
            messages: self
                .messages()
                .into_iter()
                .map(std::sync::Arc::new)
                .collect(),
            tools: Vec::new(),
        };
        let (usage, trailing) = estimate_context_tokens(&context);
        let tokens = usage + trailing;
        Some(ContextUsage {
            tokens: Some(tokens),
            context_window: window,
            percent: Some(JsNumber(tokens as f64 / window as f64 * 100.0)),
            ..ContextUsage::default()
        })
    }
}

fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|source| RuntimeError::Encode {
        what: "a session tree",
        source,
    })
}

fn open_node(out: &mut String, entry: &SessionEntry) -> Result<()> {
    out.push_str("{\"entry\":");
    out.push_str(&encode(entry)?);
    out.push_str(",\"children\":[");
    Ok(())
}

fn close_node(out: &mut String, label: Option<&str>, timestamp: Option<&str>) -> Result<()> {
    out.push(']');
    if let Some(label) = label {
        let _ = write!(out, ",\"label\":{}", encode(label)?);
        if let Some(timestamp) = timestamp.filter(|t| !t.is_empty()) {
            let _ = write!(out, ",\"labelTimestamp\":{}", encode(timestamp)?);
        }
    }
    out.push('}');
    Ok(())
}
