//! The session's side of the `codemode` tool: the store its scripts' `store()`/`load()` use
//! (the current branch's `codemode-store` custom entries), and the tool itself, listing the
//! extension tools with `codemode` exposure in its description.

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::Tool;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolListing;
use knightcode_codemode::CodemodeError;
use knightcode_codemode::STORE_ENTRY_TYPE;
use knightcode_protocol::SessionEntry;
use knightcode_session::SessionManager;
use serde_json::Value;
use serde_json::json;

/// `store()` values on the session's current branch.
pub(crate) struct BranchStore {
    session: Arc<Mutex<SessionManager>>,
}

impl knightcode_codemode::ScriptStore for BranchStore {
    fn load(&self) -> serde_json::Map<String, Value> {
        let session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut values = serde_json::Map::new();
        let Ok(branch) = session.branch(None) else {
            return values;
        };
        for entry in branch {
            let SessionEntry::Custom(custom) = entry else {
                continue;
            };
            if custom.custom_type != STORE_ENTRY_TYPE {
                continue;
            }
            let Some(data) = &custom.data else { continue };
            if let Some(set) = data.get("set").and_then(Value::as_object) {
                for (key, value) in set {
                    values.insert(key.clone(), value.clone());
                }
            }
            for key in data
                .get("delete")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                values.remove(key);
            }
        }
        values
    }

    fn save(
        &self,
        set: serde_json::Map<String, Value>,
        delete: Vec<String>,
    ) -> Result<(), CodemodeError> {
        let mut session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        session
            .append_custom_entry(
                STORE_ENTRY_TYPE,
                Some(json!({"set": set, "delete": delete})),
            )
            .map(|_| ())
            .map_err(|e| CodemodeError::Store(e.to_string()))
    }
}

/// The `codemode` tool of a session whose extensions registered `extension_tools`.
pub(crate) fn codemode_tool(
    extension_tools: &[Arc<dyn Tool>],
    session: &Arc<Mutex<SessionManager>>,
) -> Arc<dyn Tool> {
    let listed: Vec<ToolListing> = extension_tools
        .iter()
        .filter(|t| t.exposure() == ToolExposure::Codemode)
        .map(|t| ToolListing {
            definition: t.definition().clone(),
            exposure: t.exposure(),
            namespace: t.namespace(),
            active: false,
            callable: true,
            output_schema: t.output_schema(),
        })
        .collect();
    let store = BranchStore {
        session: Arc::clone(session),
    };
    Arc::new(knightcode_codemode::Codemode::new(
        &listed,
        Some(Arc::new(store)),
    ))
}
