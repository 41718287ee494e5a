//! What the session does for its extensions beyond prompts: `sendMessage` while idle and
//! tools registered after `session_start`.

use knightcode_protocol::AgentMessage;

use super::super::AgentSession;
use super::super::lock;
use super::PromptStart;
use crate::error::Result;

impl AgentSession {
    /// An extension's `sendMessage` while idle: with `trigger_turn` a run starts from the
    /// message (`before_agent_start` sees `messageType: "custom"`); otherwise it joins the
    /// conversation (the session file, and `message_start`/`message_end` for front ends).
    pub async fn send_custom_message(
        &mut self,
        message: AgentMessage,
        trigger_turn: bool,
    ) -> Result<PromptStart> {
        if !trigger_turn {
            if let AgentMessage::Custom(custom) = &message {
                lock(&self.session).append_custom_message(
                    &custom.custom_type,
                    custom.content.clone(),
                    custom.display,
                    custom.details.clone(),
                )?;
            }
            let events = self.compaction.events.clone();
            events
                .emit(knightcode_protocol::AgentEvent::MessageStart {
                    message: message.clone(),
                })
                .await;
            events
                .emit(knightcode_protocol::AgentEvent::MessageEnd { message })
                .await;
            return Ok(PromptStart::Handled);
        }
        let cancel = tokio_util::sync::CancellationToken::new();
        let added = self.before_run("", &[], Some(&message), &cancel).await?;
        let mut messages = vec![message];
        messages.extend(self.extension_actions.take_next_turn());
        messages.extend(added);
        Ok(PromptStart::Run(messages))
    }

    /// Tools extensions registered after `session_start` join the registry and are offered
    /// from the next request, as the reference's `refreshTools` does; tools already there
    /// (the built-ins, earlier registrations) stay as they are.
    pub async fn refresh_extension_tools(&mut self) {
        let Some(host) = self.extension_host.clone() else {
            return;
        };
        host.refresh().await;
        let mut registry = self.agent.config().tools.clone();
        let mut active = self.agent.config().active_tools.clone().unwrap_or_default();
        let mut added = false;
        for tool in host.tools() {
            let name = tool.definition().name.clone();
            if registry.get(&name).is_none() {
                registry.register(tool);
                if !active.contains(&name) {
                    active.push(name);
                }
                added = true;
            }
        }
        if added {
            self.extension_actions
                .note_registered_tools(registry.names().map(str::to_owned).collect());
            self.extension_actions.note_active_tools(&active);
            self.agent.config_mut().tools = registry;
            self.agent.config_mut().active_tools = Some(active);
        }
    }
}
