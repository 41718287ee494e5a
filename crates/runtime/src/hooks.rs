//! The runtime's hook points: the agent loop's ([`AgentHooks`]) plus the two that act before
//! a prompt reaches the loop. The extension host implements [`SessionHooks`]; everything has
//! a no-op default.

use knightcode_agent::AgentHooks;
use knightcode_agent::HookFuture;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Usage;
use tokio_util::sync::CancellationToken;

use crate::compaction::Preparation;

/// Where a prompt came from (the `input` event's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    Interactive,
    Rpc,
    /// An extension's `sendUserMessage`: sent as written (no commands, no expansion).
    Extension,
    /// `sendUserMessage` with `expandPromptTemplates`: as if the user typed it (extension
    /// commands run, `/skill:name` and `/template` expand); the `input` event still says
    /// `extension`.
    ExtensionTyped,
}

impl InputSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Interactive => "interactive",
            Self::Rpc => "rpc",
            Self::Extension | Self::ExtensionTyped => "extension",
        }
    }
}

/// A prompt as the user sent it, before it becomes a user message.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptInput {
    pub text: String,
    pub images: Vec<ContentBlock>,
    pub source: InputSource,
}

/// What [`SessionHooks::transform_input`] decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum InputAction {
    /// Go on with the input as it is.
    #[default]
    Continue,
    /// Go on with this text and these images instead.
    Transform {
        text: String,
        images: Vec<ContentBlock>,
    },
    /// The hook consumed the input: no user message, no run (disposition `handled`).
    Handled,
}

/// The run about to start (`before_agent_start`).
#[derive(Debug, Clone, Copy)]
pub struct AgentStart<'a> {
    pub prompt: &'a str,
    pub images: &'a [ContentBlock],
    /// The custom message that starts the run (`sendMessage` with `triggerTurn`) instead
    /// of a prompt (`messageType: "custom"`).
    pub custom: Option<&'a AgentMessage>,
    /// What the system prompt was built from (`systemPromptOptions`).
    pub system_prompt_options: &'a serde_json::Value,
    /// The rendered system prompt the run would use.
    pub system_prompt: &'a str,
}

/// Changes [`SessionHooks::before_agent_start`] asks for.
#[derive(Debug, Clone, Default)]
pub struct AgentStartChanges {
    /// Messages added to the run after the prompt (custom messages).
    pub messages: Vec<AgentMessage>,
    /// A system prompt that replaces the rendered one for this run.
    pub system_prompt: Option<String>,
}

/// A compaction about to summarise (`session_before_compact`).
#[derive(Debug, Clone, Copy)]
pub struct CompactionStarting<'a> {
    pub preparation: &'a Preparation,
    pub custom_instructions: Option<&'a str>,
    pub reason: CompactionReason,
    /// An overflow recovery: the failed request is retried after it.
    pub will_retry: bool,
}

/// A summary a hook supplies instead of the model's (recorded with `fromHook: true`; its
/// details are not carried into later compactions' file lists).
#[derive(Debug, Clone, PartialEq)]
pub struct SuppliedCompaction {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    pub usage: Option<Usage>,
    pub details: Option<serde_json::Value>,
}

/// What [`SessionHooks::before_compact`] decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum CompactionDecision {
    #[default]
    Proceed,
    /// Do not compact (reported as an aborted compaction).
    Cancel,
    Supply(SuppliedCompaction),
}

/// How a compaction ended, for [`SessionHooks::compacted`] and
/// [`SessionHooks::compaction_failed`].
#[derive(Debug, Clone, Copy)]
pub struct CompactionEnded<'a> {
    pub reason: CompactionReason,
    pub will_retry: bool,
    /// The summary came from a hook.
    pub from_hook: bool,
    /// The entry written (success only).
    pub entry_id: Option<&'a str>,
    /// Why it failed (failure only; `None` with `aborted`).
    pub error_message: Option<&'a str>,
    pub aborted: bool,
}

/// A `/tree` navigation about to happen (`session_before_tree`).
#[derive(Debug, Clone)]
pub struct TreeNavigation<'a> {
    pub target_id: &'a str,
    pub old_leaf_id: Option<&'a str>,
    pub common_ancestor_id: Option<&'a str>,
    /// The messages a summary would see.
    pub entries_to_summarize: &'a [AgentMessage],
    pub user_wants_summary: bool,
    pub custom_instructions: Option<&'a str>,
    pub replace_instructions: bool,
    pub label: Option<&'a str>,
}

/// What [`SessionHooks::before_tree`] decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TreeDecision {
    #[default]
    Proceed,
    /// Stay where we are.
    Cancel,
    /// Use this summary text (only when the user wants a summary).
    Supply {
        summary: String,
        details: Option<serde_json::Value>,
    },
    /// Proceed with other instructions or label.
    Override {
        custom_instructions: Option<String>,
        replace_instructions: Option<bool>,
        label: Option<String>,
    },
}

/// Where a navigation went (`session_tree`).
#[derive(Debug, Clone, Copy)]
pub struct TreeChanged<'a> {
    pub new_leaf_id: Option<&'a str>,
    pub old_leaf_id: Option<&'a str>,
    pub summary_entry_id: Option<&'a str>,
    /// The summary came from a hook.
    pub from_hook: bool,
}

/// What the hooks do with a user shell command (`!cmd`, `user_bash`).
#[derive(Debug, Clone, PartialEq)]
pub enum UserBashDecision {
    /// Run it here, as usual.
    Run,
    /// A hook ran it (or something else) itself: this is its result.
    Replace(knightcode_protocol::rpc::BashResult),
    /// A hook failed: the command does not run (fail-safe), for this reason.
    Blocked(String),
}

/// Every hook point of a session: the loop's, and the ones before a prompt runs.
pub trait SessionHooks: AgentHooks {
    /// A user shell command is about to run (`user_bash`).
    fn user_bash<'a>(
        &'a self,
        command: &'a str,
        exclude_from_context: bool,
        cwd: &'a std::path::Path,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, UserBashDecision> {
        let _ = (command, exclude_from_context, cwd, cancel);
        Box::pin(std::future::ready(UserBashDecision::Run))
    }

    /// A prompt arrived (not steering or follow-ups queued while a run goes on).
    fn transform_input<'a>(
        &'a self,
        input: &'a PromptInput,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, InputAction> {
        let _ = (input, cancel);
        Box::pin(std::future::ready(InputAction::Continue))
    }

    /// The prompt was accepted and the run is about to start.
    fn before_agent_start<'a>(
        &'a self,
        start: AgentStart<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, AgentStartChanges> {
        let _ = (start, cancel);
        Box::pin(std::future::ready(AgentStartChanges::default()))
    }

    /// Whether [`SessionHooks::before_compact`] looks at the summarised messages
    /// (`Preparation::messages_to_summarize`); they are copied out only then.
    fn inspects_compaction_messages(&self) -> bool {
        false
    }

    /// A compaction has chosen what to summarise: go on, cancel, or supply the summary.
    fn before_compact<'a>(
        &'a self,
        starting: CompactionStarting<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, CompactionDecision> {
        let _ = (starting, cancel);
        Box::pin(std::future::ready(CompactionDecision::Proceed))
    }

    /// A compaction wrote its entry (`session_compact`).
    fn compacted<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        let _ = ended;
        Box::pin(std::future::ready(()))
    }

    /// A compaction failed or was cancelled (`session_compact_failed`).
    fn compaction_failed<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        let _ = ended;
        Box::pin(std::future::ready(()))
    }

    /// A navigation with a summary is about to leave a branch.
    fn before_tree<'a>(
        &'a self,
        navigation: TreeNavigation<'a>,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, TreeDecision> {
        let _ = (navigation, cancel);
        Box::pin(std::future::ready(TreeDecision::Proceed))
    }

    /// The leaf moved (`session_tree`).
    fn tree_changed<'a>(&'a self, changed: TreeChanged<'a>) -> HookFuture<'a, ()> {
        let _ = changed;
        Box::pin(std::future::ready(()))
    }
}

/// A session without hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSessionHooks;

impl AgentHooks for NoSessionHooks {}
impl SessionHooks for NoSessionHooks {}
