//! What the session does for its extensions beyond prompts: `sendMessage` while idle and
//! tools registered after `session_start`.

use knightcode_ai::Model;
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
            let events = self.compaction.events.clone();
            events
                .emit(knightcode_protocol::AgentEvent::MessageStart {
                    message: message.clone(),
                })
                .await;
            // `message_end` handlers may replace it (same role) before it is stored.
            let mut message = message;
            if self.hooks.replaces_messages() {
                let cancel = tokio_util::sync::CancellationToken::new();
                if let Some(replacement) = self.hooks.message_end(&message, &cancel).await
                    && replacement.role() == message.role()
                {
                    message = replacement;
                }
            }
            if let AgentMessage::Custom(custom) = &message {
                lock(&self.session).append_custom_message(
                    &custom.custom_type,
                    custom.content.clone(),
                    custom.display,
                    custom.details.clone(),
                )?;
            }
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

    /// `pi.registerProvider` / `unregisterProvider` after loading: the session's registry
    /// (and the one extensions see) takes the change at once, so the provider's models can
    /// be listed and selected; the current model stays.
    pub fn extension_provider(&mut self, name: &str, spec: Option<&knightcode_ext::ProviderSpec>) {
        match spec {
            None => self.ops.registry.unregister_provider(name),
            Some(spec) => {
                let config = crate::extensions::models::provider_config(spec);
                if let Err(message) = self.ops.registry.register_provider(name, config) {
                    self.ops.warnings.push(format!(
                        "Extension error ({}, register_provider): {message}",
                        spec.extension_path
                    ));
                    return;
                }
            }
        }
        if let Some(models) = &self.extension_models {
            models.set_registry(self.ops.registry.clone());
        }
    }

    /// `pi.registerVirtualModel` / `unregisterVirtualModel` after loading.
    pub fn extension_virtual_model(&mut self, provider: &str, id: &str, model: Option<Model>) {
        match model {
            Some(model) => self.ops.registry.register_virtual(model),
            None => self.ops.registry.unregister_virtual(provider, id),
        }
        if let Some(models) = &self.extension_models {
            models.set_registry(self.ops.registry.clone());
        }
    }

    /// The extensions' MCP servers after a registration past loading: reconciled with the
    /// connections (the actor announces them to extensions: `mcp_servers_change`).
    pub fn extension_mcp_servers(&mut self, servers: &[knightcode_ext::McpServerSpec]) {
        let notices = self.mcp.set_extension_servers(servers);
        self.ops.warnings.extend(notices);
    }

    /// After the extensions started again (reload, a new session): their servers are what
    /// they registered this time.
    pub(crate) fn resync_extension_mcp_servers(&mut self) {
        if let Some(host) = &self.extension_host {
            let servers = host.registry().mcp_servers;
            let notices = self.mcp.set_extension_servers(&servers);
            self.ops.warnings.extend(notices);
        }
    }

    /// Tools extensions registered after `session_start` join the registry and are offered
    /// from the next request, as the reference's `refreshTools` does; tools already there
    /// keep their state. A tool registered again replaces its earlier self: made `hidden` it
    /// is withdrawn (inactive, uncallable), made `direct` or `model-only` from an exposure
    /// registration did not activate it activates.
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
            let was_activated = registry.get(&name).map(|t| t.active_on_registration());
            let activates = tool.active_on_registration();
            let hidden = tool.exposure() == knightcode_agent::ToolExposure::Hidden;
            let changed = registry.get(&name).is_none_or(|t| {
                t.exposure() != tool.exposure() || t.definition() != tool.definition()
            });
            if !changed {
                continue;
            }
            registry.register(tool);
            if hidden {
                active.retain(|n| n != &name);
            } else if activates && was_activated != Some(true) && !active.contains(&name) {
                active.push(name);
            }
            added = true;
        }
        if added {
            self.extension_actions
                .note_registered_tools(super::super::loadout::activatable_names(&registry));
            self.extension_actions.note_active_tools(&active);
            self.agent.config_mut().tools = registry;
            self.agent.config_mut().active_tools = Some(active);
        }
    }
}
