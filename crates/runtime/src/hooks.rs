//! The runtime's hook points: the agent loop's ([`AgentHooks`]) plus the two that act before
//! a prompt reaches the loop. The extension host implements [`SessionHooks`]; everything has
//! a no-op default.

use knightcode_agent::AgentHooks;
use knightcode_agent::HookFuture;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use tokio_util::sync::CancellationToken;

/// Where a prompt came from (the `input` event's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    Interactive,
    Rpc,
    Extension,
}

impl InputSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Interactive => "interactive",
            Self::Rpc => "rpc",
            Self::Extension => "extension",
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

/// Every hook point of a session: the loop's, and the ones before a prompt runs.
pub trait SessionHooks: AgentHooks {
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
}

/// A session without hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSessionHooks;

impl AgentHooks for NoSessionHooks {}
impl SessionHooks for NoSessionHooks {}
