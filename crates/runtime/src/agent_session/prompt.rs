//! Preparing and running a prompt, in one place: the undo command for direct callers, the
//! input hook (which may handle or rewrite it), `/skill:` and template expansion, images
//! fitted to the model, `before_agent_start` (system prompt and added messages), then the
//! run itself. [`AgentSession::begin_prompt`] and [`AgentSession::run_prompt`] are split so
//! a front end can report acceptance before the run starts.

use std::sync::Arc;

use knightcode_agent::RunOutcome;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use super::now_millis;
use crate::error::Result;
use crate::error::RuntimeError;
use crate::hooks::AgentStart;
use crate::hooks::InputAction;
use crate::hooks::PromptInput;

/// What [`AgentSession::begin_prompt`] made of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptStart {
    /// An input hook consumed it; nothing runs.
    Handled,
    /// Run these messages (the user message, then any a start hook added).
    Run(Vec<AgentMessage>),
}

impl AgentSession {
    /// Checks and records a prompt: the input hook sees it first (and may handle or rewrite
    /// it), the system prompt is brought up to date, the context loaded into the agent, the
    /// user message built, and the start hook may add messages or force a system prompt.
    /// Run it with [`AgentSession::run_prompt`]; the split lets a front end report
    /// acceptance before the run starts.
    pub async fn begin_prompt(&mut self, input: PromptInput) -> Result<PromptStart> {
        if super::is_undo_command(&input.text) {
            // Direct callers (the session actor runs it as a job of its own, see
            // `actor::task`).
            self.undo_with_dialogs(&tokio_util::sync::CancellationToken::new())
                .await?;
            return Ok(PromptStart::Handled);
        }
        let cancel = tokio_util::sync::CancellationToken::new();
        let hooks = Arc::clone(&self.hooks);
        let (text, images) = match hooks.transform_input(&input, &cancel).await {
            InputAction::Handled => return Ok(PromptStart::Handled),
            InputAction::Transform { text, images } => (text, images),
            InputAction::Continue => (input.text, input.images),
        };
        // An extension's `sendUserMessage` is sent as written unless it asked for
        // `expandPromptTemplates` (`InputSource::ExtensionTyped`).
        let text = if input.source == crate::hooks::InputSource::Extension {
            text
        } else {
            self.expand_prompt(&text)
        };
        let (text, images) = if self.settings.values().images_auto_resize {
            let limits = super::image_policy(self.settings.values(), &self.model).limits;
            fit_prompt_images(text, images, limits).await
        } else {
            (text, images)
        };
        let added = self.before_run(&text, &images, None, &cancel).await?;
        let mut messages = vec![user_message(&text, images)];
        messages.extend(self.extension_actions.take_next_turn());
        messages.extend(added);
        Ok(PromptStart::Run(messages))
    }

    /// Runs a prompt made by [`AgentSession::begin_prompt`] to completion.
    pub async fn run_prompt(&mut self, messages: Vec<AgentMessage>) -> Result<RunOutcome> {
        self.refresh_compaction_target();
        self.refresh_session_env();
        self.refresh_oauth_key().await?;
        self.agent
            .prompt(messages)
            .await
            .map_err(RuntimeError::from)
    }

    /// A prompt's text as it becomes a user message: `/skill:name` and `/template`
    /// expanded. A skill file that cannot be read leaves the text as typed, with a warning.
    pub(crate) fn expand_prompt(&mut self, text: &str) -> String {
        let expansion = self.resources.expand(text);
        if let Some(error) = expansion.error {
            self.ops.warnings.push(error);
        }
        expansion.text
    }

    /// Readies a run's first request and asks `before_agent_start`: the system prompt as
    /// the extensions leave it (a forced one replaces it for this run); returns the messages
    /// they add after the run's own. `custom` is the message starting a `sendMessage` turn.
    pub(super) async fn before_run(
        &mut self,
        prompt: &str,
        images: &[ContentBlock],
        custom: Option<&AgentMessage>,
        cancel: &CancellationToken,
    ) -> Result<Vec<AgentMessage>> {
        if !self.has_model() && self.pick_up_model().await?.is_none() {
            return Err(RuntimeError::Rejected(
                super::start::no_model_selected_message(&self.ops.agent_dir),
            ));
        }
        // Fails closed: a branch whose planning state cannot be enforced sends nothing.
        self.plan.check_restorable()?;
        self.sync_mcp_tools().await;
        self.activate_planning_tools();
        self.refresh_loadout().await;
        self.prepare_request()?;
        let options = self.system_prompt_options();
        let system_prompt = self
            .agent
            .config()
            .system_prompt
            .clone()
            .unwrap_or_default();
        let hooks = Arc::clone(&self.hooks);
        let changes = hooks
            .before_agent_start(
                AgentStart {
                    prompt,
                    images,
                    custom,
                    system_prompt_options: &options,
                    system_prompt: &system_prompt,
                },
                cancel,
            )
            .await;
        if let Some(forced) = changes.system_prompt {
            self.extension_actions.note_system_prompt(&forced);
            self.agent.config_mut().system_prompt = Some(forced);
        }
        Ok(changes.messages)
    }
}

impl AgentSession {
    /// Once plan mode was used on the branch, its tools and the read tools stay active
    /// (registered ones only; the web tools unless `/tools` turned them off).
    fn activate_planning_tools(&mut self) {
        let loadout = self.plan.loadout();
        if loadout.is_empty() {
            return;
        }
        let registry = self.agent.config().tools.clone();
        let mut active = self.agent.config().active_tools.clone().unwrap_or_default();
        let mut changed = false;
        for name in loadout {
            let web = crate::web_tools::WEB_TOOL_NAMES.contains(&name);
            if registry.get(name).is_none()
                || active.iter().any(|a| a == name)
                || (web && self.web_tools.turned_off(name))
            {
                continue;
            }
            active.push(name.to_owned());
            changed = true;
        }
        if changed {
            self.extension_actions.note_active_tools(&active);
            self.agent.config_mut().active_tools = Some(active);
        }
    }

    /// Starts connecting the configured MCP servers in the background, unless they already
    /// are; returns at once. The session task calls it once the front end has shown itself;
    /// the first prompt and `/mcp` call it too, for a session used without that task.
    pub(crate) fn connect_mcp(&mut self) {
        self.mcp.connect();
    }

    /// Stops the MCP servers (the session is ending).
    pub(crate) async fn stop_mcp(&mut self) {
        self.mcp.stop().await;
    }

    /// The MCP servers' direct tools as they stand (the first prompt waits for servers
    /// still connecting, up to `mcp::FIRST_PROMPT_WAIT`); what needs saying goes to the
    /// warnings.
    async fn sync_mcp_tools(&mut self) {
        if self.mcp.manager().is_none() {
            return;
        }
        let mut registry = self.agent.config().tools.clone();
        let mut active = self.agent.config().active_tools.clone().unwrap_or_default();
        let warnings = self.mcp.sync(&mut registry, &mut active).await;
        self.ops.warnings.extend(warnings);
        self.extension_actions
            .note_registered_tools(super::loadout::activatable_names(&registry));
        self.extension_actions.note_active_tools(&active);
        self.agent.config_mut().tools = registry;
        self.agent.config_mut().active_tools = Some(active);
    }
}

/// Attached images fitted to the model's image limits;
/// one that cannot be fitted is dropped with a note appended to the text.
async fn fit_prompt_images(
    mut text: String,
    images: Vec<ContentBlock>,
    limits: knightcode_tools::ResizeLimits,
) -> (String, Vec<ContentBlock>) {
    if images.is_empty() {
        return (text, images);
    }
    let fitted = tokio::task::spawn_blocking(move || {
        images
            .into_iter()
            .map(|block| match block {
                ContentBlock::Image(image) => knightcode_tools::image::fit_encoded_image(
                    &image.data,
                    &image.mime_type,
                    &limits,
                )
                .map(|fitted| ContentBlock::image(fitted.data, fitted.mime_type)),
                other => Some(other),
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    let mut kept = Vec::with_capacity(fitted.len());
    for block in fitted {
        match block {
            Some(block) => kept.push(block),
            None => {
                text.push('\n');
                text.push_str(knightcode_tools::image::IMAGE_TOO_LARGE_NOTE);
            }
        }
    }
    (text, kept)
}

/// A user prompt, steering or follow-up message: the text, then any images, stamped now.
pub fn user_message(text: &str, images: Vec<ContentBlock>) -> AgentMessage {
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(images);
    AgentMessage::user(Content::Blocks(blocks), now_millis())
}
