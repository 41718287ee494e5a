//! Steps 4 and 5 of starting a session: the model, its thinking level and credentials, and
//! what the session file records of them.

use std::collections::HashMap;
use std::path::Path;

use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ResolvedAuth;
use knightcode_ai::ThinkingLevel;
use knightcode_session::SessionManager;

use super::super::SessionSetup;
use super::super::restored_thinking_level;
use crate::error::Result;
use crate::error::RuntimeError;
use crate::model_select;
use crate::settings::Settings;

/// What step 4 chose: the model and level, its credentials, and what the command line and
/// the scope said.
pub(super) struct ChosenModel {
    pub(super) model: Model,
    pub(super) thinking: ThinkingLevel,
    pub(super) resolved: ResolvedAuth,
    pub(super) runtime_keys: HashMap<String, String>,
    /// The model and level the command line named, for later model switches.
    pub(super) cli: (Option<Model>, Option<ThinkingLevel>),
    pub(super) scope: Vec<model_select::ScopedModel>,
    /// The model and level the session file last recorded (step 5 records what changed).
    restored_model: Option<knightcode_session::ModelRef>,
    restored_thinking: Option<ThinkingLevel>,
}

/// Step 4: the model (command line, the resumed session's, the scope's first, the saved
/// default), its thinking level, and its credentials.
pub(super) async fn choose_model(
    setup: &SessionSetup,
    settings: &Settings,
    registry: &ModelRegistry,
    auth_storage: &AuthStorage,
    env: &dyn knightcode_ai::EnvSource,
    session: &SessionManager,
    notices: &mut Vec<String>,
) -> Result<ChosenModel> {
    let no_runtime_keys = HashMap::new();
    let auth = AuthContext {
        storage: auth_storage,
        env,
        runtime_keys: &no_runtime_keys,
    };
    let has_auth = |provider: &str| {
        let key = registry.provider_config(provider).and_then(|c| c.api_key());
        auth.has_auth(provider, key)
    };
    let restored = session.build_context();
    let restored_model = restored.model.clone();
    let restored_selection = restored.selection.clone();
    let restored_thinking = restored_thinking_level(session).flatten();
    drop(restored);

    let scope_patterns = setup
        .models
        .clone()
        .or_else(|| settings.values().enabled_models.clone());
    // Every model with credentials: only a scope or a start without `--model` needs
    // them (a catalogue's worth of clones otherwise spent on every start).
    let available = if scope_patterns.is_some() || setup.model.is_none() {
        registry.available(&auth)
    } else {
        Vec::new()
    };
    let (scope, scope_warnings) = scope_patterns
        .map(|patterns| model_select::resolve_model_scope(&patterns, &available))
        .unwrap_or_default();
    notices.extend(scope_warnings.into_iter().map(|w| format!("Warning: {w}")));
    // The level of the scoped model a new session starts on (`pattern:level`).
    let mut scope_thinking = None;
    let (model, suffix_thinking) = match &setup.model {
        Some(pattern) => match exact_cli_model(registry, setup.provider.as_deref(), pattern) {
            // A full reference needs no search, so the rest of the catalog stays unparsed.
            Some(model) => (model.clone(), None),
            None => {
                let chosen = model_select::resolve_cli_model(
                    setup.provider.as_deref(),
                    pattern,
                    setup.thinking,
                    registry.models(),
                    &has_auth,
                )?;
                notices.extend(chosen.warning);
                (chosen.model, chosen.thinking)
            }
        },
        None => {
            let (from_session, notice) = crate::extensions::restored_model(
                restored_selection.as_ref(),
                restored_model.as_ref(),
                &available,
                registry,
            );
            notices.extend(notice);
            // A new session starts on the first scoped model, at its pattern's level.
            let from_scope = scope
                .first()
                .filter(|_| restored_model.is_none())
                .map(|s| (s.model.clone(), s.thinking));
            let saved = settings
                .values()
                .default_provider
                .as_deref()
                .zip(settings.values().default_model.as_deref());
            match (from_session, from_scope) {
                (Some(model), _) => (model.clone(), None),
                (None, Some((model, level))) => {
                    scope_thinking = level;
                    (model, None)
                }
                (None, None) => match model_select::default_model(&available, saved) {
                    Some(model) => (model.clone(), None),
                    None => {
                        let restored = (restored_model, restored_thinking);
                        return no_model_available(setup, env, notices, restored);
                    }
                },
            }
        }
    };
    let thinking = setup
        .thinking
        .or(suffix_thinking)
        .or(scope_thinking)
        .or(restored_thinking)
        .or_else(|| {
            settings
                .values()
                .model_thinking_level(&model.provider, &model.id)
        })
        .unwrap_or(settings.values().default_thinking_level);
    let thinking = model.clamp_thinking_level(thinking);

    let mut runtime_keys = HashMap::new();
    if let Some(key) = &setup.api_key {
        runtime_keys.insert(model.provider.clone(), key.clone());
    }
    let auth = AuthContext {
        storage: auth_storage,
        env,
        runtime_keys: &runtime_keys,
    };
    let resolved = registry
        .resolve_auth(&model, &auth)
        .await
        .map_err(|e| RuntimeError::Setup(e.to_string()))?;
    let Some(resolved) = resolved else {
        return Err(RuntimeError::Setup(
            knightcode_ai::auth::no_api_key_message(
                &model.provider,
                None,
                Some(auth_storage.path()),
            ),
        ));
    };
    let cli = (
        setup.model.is_some().then(|| model.clone()),
        setup.thinking.or(suffix_thinking),
    );
    Ok(ChosenModel {
        model,
        thinking,
        resolved,
        runtime_keys,
        cli,
        scope,
        restored_model,
        restored_thinking,
    })
}

/// Nothing to choose from: the interactive mode starts without a model (with a warning
/// saying how to get one); the other modes stop with that advice.
fn no_model_available(
    setup: &SessionSetup,
    env: &dyn knightcode_ai::EnvSource,
    notices: &mut Vec<String>,
    (restored_model, restored_thinking): (
        Option<knightcode_session::ModelRef>,
        Option<ThinkingLevel>,
    ),
) -> Result<ChosenModel> {
    if setup.start_without_model {
        let advice = no_model_message(&setup.agent_dir, env, true);
        notices.push(format!("Warning: {advice}"));
        return Ok(ChosenModel::unselected(restored_model, restored_thinking));
    }
    Err(RuntimeError::Setup(no_model_message(
        &setup.agent_dir,
        env,
        false,
    )))
}

impl ChosenModel {
    /// No model yet (see [`SessionSetup::start_without_model`]).
    fn unselected(
        restored_model: Option<knightcode_session::ModelRef>,
        restored_thinking: Option<ThinkingLevel>,
    ) -> Self {
        Self {
            model: Model::unselected(),
            thinking: ThinkingLevel::Off,
            resolved: ResolvedAuth {
                api_key: None,
                headers: serde_json::Map::new(),
                source: knightcode_ai::AuthSource::Runtime,
            },
            runtime_keys: HashMap::new(),
            cli: (None, None),
            scope: Vec::new(),
            restored_model,
            restored_thinking,
        }
    }
}

/// Why a prompt of a session without a model was refused, and what to do. Only a session
/// that started without one (the interactive mode's first run) refuses so, after its
/// start-up warning gave every way to get a model: this repeats the gist, not the list.
pub(crate) fn no_model_selected_message(agent_dir: &Path) -> String {
    format!(
        "No model selected. Log in with /login (a subscription or an API key), set a \
         provider's API key in the environment, add a provider to {}, or start a local model \
         server (the warning at the start lists each); then send the prompt again: the model \
         is picked up without a restart. /model chooses among the models you have.",
        agent_dir.join("models.json").display()
    )
}

/// `interactive`: the terminal interface's first run, where `/login` is offered.
fn no_model_message(
    agent_dir: &Path,
    env: &dyn knightcode_ai::EnvSource,
    interactive: bool,
) -> String {
    format!(
        "No model available. {}",
        advice(agent_dir, env, interactive)
    )
}

fn advice(agent_dir: &Path, env: &dyn knightcode_ai::EnvSource, interactive: bool) -> String {
    // Documentation is pointed at where the package put it, and only when it is there.
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let docs = crate::paths::package_dir(env, std::env::home_dir(), beside)
        .unwrap_or_default()
        .join("docs");
    knightcode_ai::list_models::no_models_advice(&agent_dir.join("models.json"), &docs, interactive)
}

/// Step 5: the session file records the model and level a resumed session did not have (or
/// had differently), and `--name`.
pub(super) fn record_selection(
    session: &mut SessionManager,
    setup: &SessionSetup,
    chosen: &ChosenModel,
) -> Result<()> {
    let model = &chosen.model;
    if model.is_unselected() {
        // Nothing chosen, nothing recorded: the first model picked is.
        if let Some(name) = &setup.name {
            session.set_session_name(name)?;
        }
        return Ok(());
    }
    let model_changed = chosen
        .restored_model
        .as_ref()
        .is_none_or(|m| m.provider != model.provider || m.model_id != model.id);
    if model_changed {
        session.append_model_change(&model.provider, &model.id)?;
    }
    if chosen.restored_thinking != Some(chosen.thinking) {
        session.append_thinking_level_change(chosen.thinking.as_str())?;
    }
    if let Some(name) = &setup.name {
        session.set_session_name(name)?;
    }
    Ok(())
}

/// The model `--model provider/id` (or `--provider p --model id`) names exactly, as the
/// search would find it, without parsing every provider of the catalog.
fn exact_cli_model<'r>(
    registry: &'r ModelRegistry,
    provider: Option<&str>,
    pattern: &str,
) -> Option<&'r Model> {
    let (provider, id) = match provider {
        Some(provider) => (provider, pattern),
        None => pattern.split_once('/')?,
    };
    registry.find(provider, id)
}

/// Step 3b: the local model servers are asked from the start on (see `local_models`), off
/// its path; it waits for their answer only when `--provider`/`--model` name one of their
/// providers, or nothing is asked for and no other model has credentials.
pub(super) async fn wait_for_local_models(
    setup: &SessionSetup,
    registry: &mut ModelRegistry,
    auth_storage: &AuthStorage,
    env: &dyn knightcode_ai::EnvSource,
    local: &mut crate::local_models::LocalProbe,
) {
    let named = crate::local_models::names_local_provider(
        setup.provider.as_deref(),
        setup.model.as_deref(),
    );
    let no_runtime_keys = HashMap::new();
    let auth = AuthContext {
        storage: auth_storage,
        env,
        runtime_keys: &no_runtime_keys,
    };
    let nothing_else = || {
        setup.model.is_none()
            && !registry
                .available(&auth)
                .iter()
                .any(knightcode_ai::is_supported)
    };
    if named || nothing_else() {
        registry.add_local_models(local.wait().await);
    }
}
