//! Tool exposure in the session: which tools registration activates, which `setActiveTools`
//! may name, and what active tools' `prepareLoadout` hooks change in the declarations.

use std::sync::Arc;

use knightcode_agent::Tool;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolRegistry;
use serde_json::Value;
use serde_json::json;

use super::AgentSession;

/// The names `setActiveTools` may name: every registered tool but the hidden ones.
pub(crate) fn activatable_names(registry: &ToolRegistry) -> Vec<String> {
    registry
        .iter()
        .filter(|t| t.exposure() != ToolExposure::Hidden)
        .map(|t| t.definition().name.clone())
        .collect()
}

fn info(tool: &Arc<dyn Tool>) -> Value {
    let d = tool.definition();
    json!({
        "name": d.name,
        "label": d.label,
        "description": d.description,
        "parameters": d.parameters,
    })
}

impl AgentSession {
    /// Asks the active tools' `prepareLoadout` hooks what the next requests declare (once
    /// per run, before its first request), then lets the built-in `codemode` apply its
    /// settings (unless an extension registered its own `codemode`); codemode scripts'
    /// `models` list is taken again too.
    pub(super) async fn refresh_loadout(&mut self) {
        self.script_models.set(self.ops.classify_access());
        let mut loadout = self.extension_loadout().await;
        let host = self.extension_host.as_ref();
        let replaced = host.is_some_and(|host| {
            host.registry()
                .tools
                .iter()
                .any(|t| t.name == knightcode_codemode::CODEMODE_NAME)
        });
        if !replaced {
            let mut settings = self.settings.values().codemode;
            let config = self.agent.config();
            let active = config.active_tools.clone().unwrap_or_default();
            self.plan.note_codemode_only(
                settings.mode == crate::settings::CodemodeMode::Only
                    && active
                        .iter()
                        .any(|n| n == knightcode_codemode::CODEMODE_NAME),
            );
            // Plan mode blocks codemode: while planning (entered before codemode became
            // active in `only` mode), its tools stay declared.
            let planning = self.plan.enabled()
                && matches!(self.plan.state(), Ok(Some(state)) if state.planning());
            if planning {
                settings.mode = crate::settings::CodemodeMode::On;
            }
            crate::codemode_tools::apply_settings(
                &config.tools,
                &active,
                (settings, planning),
                &mut loadout,
            );
        }
        self.agent.config_mut().loadout = loadout;
    }

    /// What the active tools' `prepareLoadout` hooks change (nothing without any).
    async fn extension_loadout(&mut self) -> knightcode_agent::Loadout {
        let Some(host) = self.extension_host.clone() else {
            return knightcode_agent::Loadout::default();
        };
        let config = self.agent.config();
        let active = config.active_tools.clone().unwrap_or_default();
        if !host.shapes_loadout(&active) {
            return knightcode_agent::Loadout::default();
        }
        let tools = &config.tools;
        let declared: Vec<Value> = active
            .iter()
            .filter_map(|name| tools.get(name))
            .map(info)
            .collect();
        let callable: Vec<Value> = tools
            .iter()
            .filter(|t| match t.exposure() {
                ToolExposure::Codemode | ToolExposure::Deferred => true,
                ToolExposure::Direct => active.contains(&t.definition().name),
                ToolExposure::ModelOnly | ToolExposure::Hidden => false,
            })
            .map(info)
            .collect();
        let registered: Vec<Value> = tools.iter().map(info).collect();
        let exposures: serde_json::Map<String, Value> = tools
            .iter()
            .map(|t| (t.definition().name.clone(), json!(t.exposure().as_str())))
            .collect();
        let guidelines: serde_json::Map<String, Value> = tools
            .iter()
            .map(|t| {
                let d = t.definition();
                (d.name.clone(), json!(d.prompt_guidelines))
            })
            .collect();
        let payload = json!({
            "declared": declared,
            "callable": callable,
            "registered": registered,
            "exposures": exposures,
            "guidelines": guidelines,
        });
        host.loadout(payload).await
    }
}
