//! The session's side of the `codemode` tool: the store its scripts' `store()`/`load()` use
//! (the current branch's `codemode-store` custom entries), and the tool itself, listing the
//! extension tools with `codemode` exposure in its description, shaped by the `codemode.*`
//! settings while it is active.

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::Loadout;
use knightcode_agent::Tool;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolListing;
use knightcode_agent::ToolRegistry;
use knightcode_codemode::CODEMODE_NAME;
use knightcode_codemode::CodemodeError;
use knightcode_codemode::STORE_ENTRY_TYPE;
use knightcode_protocol::SessionEntry;
use knightcode_session::SessionManager;
use serde_json::Value;
use serde_json::json;

use crate::settings::CodemodeMode;
use crate::settings::CodemodeSettings;

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

/// The session's models as scripts list them (`models`), and what `models.classify` uses:
/// taken before each run, so a login or a provider registered since shows.
#[derive(Default)]
pub(crate) struct ScriptModelList {
    access: Mutex<Option<Arc<crate::classify::ClassifyAccess>>>,
    /// Built on the first classification; its label token cache lasts the session.
    client: std::sync::OnceLock<Option<knightcode_ai::Client>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ScriptModelList {
    /// The registry and credentials of the next run. The list itself is built only when a
    /// script reads `models`: serialising the whole catalog before every run cost about
    /// a millisecond a prompt.
    pub(crate) fn set(&self, access: crate::classify::ClassifyAccess) {
        *lock(&self.access) = Some(Arc::new(access));
    }
}

impl knightcode_codemode::ScriptModels for ScriptModelList {
    fn models(&self) -> Vec<(Value, bool)> {
        let Some(access) = lock(&self.access).clone() else {
            return Vec::new();
        };
        let auth = access.auth();
        let registry = &access.registry;
        let chat = registry.models().iter().map(|model| {
            (
                serde_json::to_value(model).ok(),
                registry.has_auth(&model.provider, &auth),
            )
        });
        let classifiers = crate::classify::classifier_models(registry, &auth)
            .into_iter()
            .map(|(model, available)| (serde_json::to_value(model).ok(), available));
        chat.chain(classifiers)
            .filter_map(|(value, available)| Some((value?, available)))
            .collect()
    }

    fn classify(
        &self,
        request: Value,
        cancel: knightcode_ai::CancellationToken,
    ) -> knightcode_codemode::ClassifyFuture {
        let access = lock(&self.access).clone();
        let client = self
            .client
            .get_or_init(|| knightcode_ai::Client::new().ok())
            .clone();
        Box::pin(async move {
            let Some(access) = access else {
                return json!({"answers": {}, "stopReason": "error",
                    "errorMessage": "Classifier models are not available before the session starts"});
            };
            let auth = access.auth();
            crate::classify::classify(&access.registry, &auth, client.as_ref(), &request, cancel)
                .await
        })
    }
}

/// The `codemode` tool of a session whose extensions registered `extension_tools`, its
/// description inlining `inline_budget` estimated tokens of declarations, its scripts
/// listing `models`.
pub(crate) fn codemode_tool(
    extension_tools: &[Arc<dyn Tool>],
    inline_budget: u64,
    (session, models): (&Arc<Mutex<SessionManager>>, &Arc<ScriptModelList>),
) -> Arc<dyn Tool> {
    let listed: Vec<ToolListing> = extension_tools
        .iter()
        .filter(|t| t.exposure() == ToolExposure::Codemode)
        .map(listing)
        .collect();
    let store = BranchStore {
        session: Arc::clone(session),
    };
    let models: Arc<dyn knightcode_codemode::ScriptModels> = Arc::clone(models) as _;
    Arc::new(
        knightcode_codemode::Codemode::with_budget(&listed, inline_budget, Some(Arc::new(store)))
            .with_models(models),
    )
}

fn listing(tool: &Arc<dyn Tool>) -> ToolListing {
    ToolListing {
        definition: tool.definition().clone(),
        exposure: tool.exposure(),
        namespace: tool.namespace(),
        active: false,
        callable: true,
        output_schema: tool.output_schema(),
    }
}

/// What the built-in `codemode` changes in the declarations while it is active
/// (`codemode.*` settings): its description lists the tools with `codemode` exposure within
/// the inline budget; with `mode: "on"` the declared tools scripts can call keep their
/// declarations, each description ending with how a script calls it and what that
/// resolves to; with `mode: "only"` those tools (`direct` ones) are left out of the
/// declarations and listed there instead. Tools already left out (`loadout.hidden`) stay
/// out. Nothing changes when `codemode` is not active; while plan mode is planning (it
/// blocks codemode) the declared tools keep their own descriptions.
pub(crate) fn apply_settings(
    tools: &ToolRegistry,
    active: &[String],
    (settings, planning): (CodemodeSettings, bool),
    loadout: &mut Loadout,
) {
    if !active.iter().any(|name| name == CODEMODE_NAME) {
        return;
    }
    let mut listed: Vec<ToolListing> = tools
        .iter()
        .filter(|t| t.exposure() == ToolExposure::Codemode)
        .map(listing)
        .collect();
    if settings.mode == CodemodeMode::On && !planning {
        note_script_calls(tools, active, loadout);
    }
    if settings.mode == CodemodeMode::Only {
        let moved: Vec<&Arc<dyn Tool>> = active
            .iter()
            .filter(|name| *name != CODEMODE_NAME && !loadout.hidden.contains(name))
            .filter_map(|name| tools.get(name))
            .filter(|t| t.exposure() == ToolExposure::Direct)
            .collect();
        for tool in moved {
            loadout.hidden.push(tool.definition().name.clone());
            listed.push(ToolListing {
                active: true,
                ..listing(tool)
            });
        }
    }
    let description = knightcode_codemode::description(&listed, settings.inline_budget);
    loadout
        .descriptions
        .insert(CODEMODE_NAME.to_owned(), description);
}

/// Ends the description of every declared tool a script can call (`mode: "on"`) with how
/// a script calls it and what the call resolves to, so the model knows it may batch them.
fn note_script_calls(tools: &ToolRegistry, active: &[String], loadout: &mut Loadout) {
    let callable = active
        .iter()
        .filter(|name| *name != CODEMODE_NAME && !loadout.hidden.contains(name))
        .filter_map(|name| tools.get(name))
        .filter(|tool| {
            !matches!(
                tool.exposure(),
                ToolExposure::ModelOnly | ToolExposure::Hidden
            )
        });
    for tool in callable {
        let name = &tool.definition().name;
        let description = loadout
            .descriptions
            .get(name)
            .unwrap_or(&tool.definition().description)
            .trim();
        let note = format!(
            "{description}\n\nCodemode: `tools.{}(args)` resolves to {}.",
            knightcode_codemode::identifier(name),
            knightcode_codemode::describe_output(tool.output_schema().as_ref())
        );
        loadout.descriptions.insert(name.clone(), note);
    }
}
