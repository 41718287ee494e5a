//! `prepareLoadout` of the active tools: what tools that orchestrate others change in the
//! declarations the model gets (descriptions, declarations left out of requests).

use std::collections::HashMap;

use knightcode_agent::Loadout;
use serde_json::Value;

use crate::host::ExtensionHost;
use crate::host::HandlerError;

impl ExtensionHost {
    /// Whether one of the `active` tools has a `prepareLoadout` hook.
    pub fn shapes_loadout(&self, active: &[String]) -> bool {
        self.registry()
            .tools
            .iter()
            .any(|t| t.prepare_loadout && active.contains(&t.name))
    }

    /// Runs the hooks with the session's tools (`{declared, callable, registered}` as
    /// `{name, label, description, parameters}` lists, `exposures` and `guidelines` by
    /// name). A throwing hook is reported (`prepare_loadout`) and changes nothing.
    pub async fn loadout(&self, tools: Value) -> Loadout {
        let reply = match self.engine.call("loadout", &tools).await {
            Ok(reply) => reply,
            Err(error) => {
                self.report(vec![HandlerError {
                    extension_path: "<host>".to_owned(),
                    event: "prepare_loadout".to_owned(),
                    error: error.to_string(),
                    stack: None,
                }])
                .await;
                return Loadout::default();
            }
        };
        let errors: Vec<HandlerError> = reply
            .get("errors")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        self.report(errors).await;
        let descriptions: HashMap<String, String> = reply
            .get("descriptions")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let hidden: Vec<String> = reply
            .get("hidden")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        Loadout {
            descriptions,
            hidden,
        }
    }
}
