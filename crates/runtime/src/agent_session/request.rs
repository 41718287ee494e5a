//! What a request is built from: the system prompt brought up to date in the session file,
//! the branch's context loaded into the agent, and the prompt's inputs as extensions see
//! them (`systemPromptOptions`).

use std::sync::Arc;

use knightcode_agent::ToolRegistry;
use knightcode_protocol::AgentMessage;
use knightcode_session::SystemState;

use super::AgentSession;
use super::lock;
use super::now_millis;
use crate::error::Result;
use crate::system_prompt::PromptInputs;
use crate::system_prompt::ToolPromptInfo;
use crate::system_prompt::build_sections;
use crate::system_prompt::system_message_for;

impl AgentSession {
    /// Keeps `ctx.getSystemPromptOptions()` current (after every command and run), for
    /// extensions only.
    pub(crate) fn note_prompt_options(&self) {
        if self.extension_host.is_some() {
            self.extension_actions
                .note_prompt_options(self.system_prompt_options());
        }
    }

    /// `systemPromptOptions` for `before_agent_start`: what the prompt is built from.
    pub(super) fn system_prompt_options(&self) -> serde_json::Value {
        let active: Vec<String> = self.agent.config().active_tools.clone().unwrap_or_default();
        let infos = tool_prompt_infos(&self.agent.config().tools, &active);
        crate::system_prompt::prompt_options_json(
            &infos,
            &self.prompt_files,
            &self.context_files,
            &self.resources.skills,
            &self.cwd,
        )
    }

    /// Brings the persisted system prompt up to date and loads the branch's context into the
    /// agent: every finished message is already in the session file before this request.
    pub(super) fn prepare_request(&mut self) -> Result<()> {
        let tools = self.agent.config().tools.clone();
        let mut session = lock(&self.session);
        let previous: SystemState = session.build_context().system;
        let mut active: Vec<String> = self.agent.config().active_tools.clone().unwrap_or_default();
        if self
            .mcp
            .branch_activations
            .restore(&previous.tools, &tools, &mut active)
        {
            self.extension_actions.note_active_tools(&active);
            self.agent.config_mut().active_tools = Some(active.clone());
        }
        let loadout = self.agent.config().loadout.clone();
        // Declarations `prepareLoadout` hides are left out of the prompt's tools and rules.
        let shown: Vec<String> = active
            .iter()
            .filter(|name| !loadout.hidden.contains(name))
            .cloned()
            .collect();
        let infos = tool_prompt_infos(&tools, &shown);
        // The same list, in the same order, as every request of the run offers (the
        // transcript keeps hidden declarations, so the active set survives a resume).
        let declarations = tools.declarations_with(Some(&active), &loadout, true);
        let date = chrono::Local::now().format("%Y-%m-%d").to_string();
        let mcp_servers = self.mcp.servers_section();
        let sections = build_sections(&PromptInputs {
            tools: &infos,
            prompt_files: &self.prompt_files,
            context_files: &self.context_files,
            skills: &self.resources.skills,
            cwd: &self.cwd,
            date: &date,
            docs_dir: None,
            mcp_servers: mcp_servers.as_deref(),
        });
        if let Some(message) = system_message_for(&previous, &sections, &declarations, now_millis())
        {
            session.append_message(AgentMessage::System(Box::new(message)))?;
        }
        self.mcp.branch_activations.record(&declarations);
        let context = session.build_context();
        let prompt = context.system.prompt_text();
        let messages: Vec<Arc<AgentMessage>> = context
            .messages
            .iter()
            .map(|m| Arc::new((*m.message).clone()))
            .collect();
        drop(context);
        drop(session);
        self.extension_actions.note_system_prompt(&prompt);
        self.agent.config_mut().system_prompt = Some(prompt);
        self.agent.replace_messages(messages);
        Ok(())
    }
}

/// The prompt's view of the active tools, in their order.
fn tool_prompt_infos(tools: &ToolRegistry, active: &[String]) -> Vec<ToolPromptInfo> {
    active
        .iter()
        .filter_map(|name| tools.get(name))
        .map(|tool| {
            let def = tool.definition();
            ToolPromptInfo {
                name: def.name.clone(),
                snippet: def.prompt_snippet.clone(),
                guidelines: def.prompt_guidelines.clone(),
            }
        })
        .collect()
}
