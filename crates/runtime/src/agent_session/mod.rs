//! `AgentSession`: one conversation wired together — session file, model and auth, tools,
//! system prompt and the agent loop. Print, JSON and RPC modes drive it; so can Rust code.

mod compacting;
mod loadout;
pub mod operations;
mod recorder;
mod request;
mod tools;
mod undo;

pub use self::undo::Navigated;
pub use self::undo::is_undo_command;

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::Agent;
use knightcode_agent::AgentConfig;
use knightcode_agent::AgentHandle;
use knightcode_agent::EventReceiver;
use knightcode_agent::RunOutcome;
use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::Client;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_ai::StreamOptions;
use knightcode_ai::ThinkingLevel;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::Millis;
use knightcode_protocol::SessionHeader;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;
use knightcode_tools::ImagePolicy;
use knightcode_tools::SessionEnv;

use self::operations::PromptStart;
use self::tools::add_extension_tools;
use self::tools::build_tools;
pub(crate) use self::tools::image_policy;
use self::tools::with_extension_tools;
use crate::context_files::ContextFile;
use crate::context_files::PromptFiles;
use crate::context_files::discover_context_files;
use crate::context_files::resolve_prompt_files;
use crate::dialogs::Dialogs;
use crate::dialogs::NoDialogs;
use crate::error::Result;
use crate::error::RuntimeError;
use crate::file_history::FileHistory;
use crate::hooks::InputSource;
use crate::hooks::PromptInput;
use crate::hooks::SessionHooks;
use crate::model_select;
use crate::services::Services;
use crate::settings::Settings;
use crate::trust::TrustDecision;
use crate::trust::TrustStore;
use crate::web_tools::WebTools;

/// Which session to work in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    /// `--no-session`: nothing is written.
    InMemory,
    /// A new session file in `dir` (written on the first reply).
    New {
        dir: PathBuf,
        session_id: Option<String>,
    },
    /// An existing file (or a path where a new session should be written).
    Open(PathBuf),
    /// `--fork <source>`: a copy of `source` in `dir`.
    Fork {
        source: PathBuf,
        dir: PathBuf,
        session_id: Option<String>,
    },
}

/// Which tools to offer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSelection {
    /// `--tools`: exactly these (names or `*` patterns, see `tool_selection`).
    pub allow: Option<Vec<String>>,
    /// `--exclude-tools` (names or `*` patterns).
    pub exclude: Vec<String>,
    /// `--no-builtin-tools`.
    pub no_builtin: bool,
    /// `--no-tools`.
    pub no_tools: bool,
}

/// Everything a run is started with; the CLI fills it from flags, an SDK user by hand.
#[derive(Debug, Clone)]
pub struct SessionSetup {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub home: Option<PathBuf>,
    pub target: SessionTarget,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<ThinkingLevel>,
    pub api_key: Option<String>,
    pub tools: ToolSelection,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub no_context_files: bool,
    /// `--approve` (Some(true)) / `--no-approve` (Some(false)).
    pub approve: Option<bool>,
    /// `--name`.
    pub name: Option<String>,
    /// `--models`: the scope for start-up and model cycling (else `enabledModels`).
    pub models: Option<Vec<String>>,
    /// How long a streaming response waits between small reads (see
    /// `knightcode_ai::Client::with_read_pacing`); zero reads at once.
    pub stream_read_pacing: std::time::Duration,
    /// Extensions to load (`-e`, `--no-extensions`, discovered directories).
    pub extensions: crate::extensions::ExtensionSources,
    /// `--skill`, `--no-skills`, `--prompt-template`, `--no-prompt-templates`.
    pub resources: crate::resources::ResourceFlags,
    /// Where the start-up installs of a trusted project's missing packages report.
    pub package_installs: crate::project_packages::InstallOutput,
    /// The first trust pass a front end ran ahead of its own trust question
    /// ([`crate::extensions::ask_extensions_about_trust`]); the session goes on with its host.
    pub first_pass: Option<crate::extensions::FirstPass>,
    /// What building this setup has to tell the user (an untrusted project's `sessionDir`
    /// left unused); shown first among the session's notices.
    pub notices: Vec<String>,
}

impl SessionSetup {
    pub fn new(cwd: PathBuf, agent_dir: PathBuf, target: SessionTarget) -> Self {
        Self {
            cwd,
            agent_dir,
            home: None,
            target,
            provider: None,
            model: None,
            thinking: None,
            api_key: None,
            tools: ToolSelection::default(),
            system_prompt: None,
            append_system_prompt: Vec::new(),
            no_context_files: false,
            approve: None,
            name: None,
            models: None,
            stream_read_pacing: std::time::Duration::ZERO,
            extensions: crate::extensions::ExtensionSources::default(),
            resources: crate::resources::ResourceFlags::default(),
            package_installs: crate::project_packages::InstallOutput::default(),
            first_pass: None,
            notices: Vec::new(),
        }
    }
}

/// Locks the extensions' record of the selected model (nothing panics while holding it).
pub(crate) fn lock_selection<T>(selection: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    selection.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn lock(session: &Mutex<SessionManager>) -> std::sync::MutexGuard<'_, SessionManager> {
    // Appends either complete or roll back inside the session store, so a panic elsewhere
    // cannot leave the manager half-updated.
    session.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One live conversation.
pub struct AgentSession {
    session: Arc<Mutex<SessionManager>>,
    agent: Agent,
    handle: AgentHandle,
    model: Model,
    thinking: ThinkingLevel,
    settings: Settings,
    trust: TrustDecision,
    prompt_files: PromptFiles,
    context_files: Vec<ContextFile>,
    /// Skills and prompt templates (shared with the actor, which expands queued messages).
    resources: Arc<knightcode_resources::Resources>,
    /// Where `get_commands` finds extension commands.
    command_sources: Arc<crate::resources::CommandSources>,
    cwd: PathBuf,
    /// Things worth telling the user on stderr (skipped project resources, bad files, …).
    notices: Vec<String>,
    /// What model switches and session replacement need later (see `operations`).
    ops: operations::OpsState,
    hooks: Arc<dyn SessionHooks>,
    /// The provider the loop streams with; summaries go through it too.
    provider: Arc<dyn knightcode_ai::Provider>,
    /// What compactions use (the loop's and the session's own), brought up to date
    /// before each run.
    compaction: compacting::CompactionState,
    /// The `KNIGHTCODE_*` variables the bash tool exports, brought up to date before each
    /// run.
    session_env: Arc<Mutex<SessionEnv>>,
    /// How `read` treats images (resize setting, the model's limits and vision), brought
    /// up to date before each run.
    image_policy: Arc<Mutex<ImagePolicy>>,
    /// `tools.json`: web tools on by default, the search provider and key (`/tools`).
    web_tools: WebTools,
    /// Backups of the files the tools change, for `/undo` and `/tree`.
    file_history: Arc<FileHistory>,
    /// Who the built-in `/undo` asks when the front end has no picker of its own.
    dialogs: Arc<dyn Dialogs>,
    /// The loaded extensions, for the lifecycle events the actor hands them.
    extension_host: Option<Arc<knightcode_ext::ExtensionHost>>,
    /// The registry extensions see (`ctx.modelRegistry`), updated with the session's.
    extension_models: Option<crate::extension_models::SharedModels>,
    /// How extensions act on the session (`sendUserMessage`, `setActiveTools`).
    extension_actions: Arc<crate::actor::ExtensionActions>,
    /// Resource paths of `-e` packages and `resources_discover`, and the `-e` values.
    extension_resources: crate::resources::ExtensionResources,
    extension_cli: Vec<String>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field(
                "model",
                &format_args!("{}/{}", self.model.provider, self.model.id),
            )
            .field("thinking", &self.thinking)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

fn open_session(store: &SessionStore, setup: &SessionSetup) -> Result<SessionManager> {
    let session = match &setup.target {
        SessionTarget::InMemory => store.in_memory(&setup.cwd),
        SessionTarget::New { dir, session_id } => store.create(
            dir,
            &setup.cwd,
            knightcode_session::NewSession {
                session_id: session_id.clone(),
                ..Default::default()
            },
        )?,
        SessionTarget::Open(path) => store.open(path, &setup.cwd)?,
        SessionTarget::Fork {
            source,
            dir,
            session_id,
        } => store.fork_from(source, dir, &setup.cwd, session_id.clone())?,
    };
    Ok(session)
}

/// The trusted project's missing packages, installed before anything is loaded from them.
async fn install_project_packages(setup: &SessionSetup, global: &Settings) -> Vec<String> {
    let layout = knightcode_packages::Layout {
        agent_dir: setup.agent_dir.clone(),
        cwd: setup.cwd.clone(),
        home: setup.home.clone(),
    };
    // `npmCommand` comes from the user's settings only: a project cannot choose what runs.
    let npm_command: Vec<String> = match global.get("npmCommand") {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let output = setup.package_installs;
    tokio::task::spawn_blocking(move || {
        crate::project_packages::install_missing(&layout, npm_command, output)
    })
    .await
    .unwrap_or_else(|error| vec![format!("installing the project's packages failed: {error}")])
}

impl AgentSession {
    /// Starts a session: trust, settings, session file, model, tools, prompt inputs.
    /// Returns the session and the receiver of its events.
    pub async fn start(setup: SessionSetup) -> Result<(Self, EventReceiver)> {
        Self::start_with_store(setup, SessionStore::default()).await
    }

    /// As [`Self::start`], with a caller-owned session store (shared ownership registry, clock).
    pub async fn start_with_store(
        setup: SessionSetup,
        store: SessionStore,
    ) -> Result<(Self, EventReceiver)> {
        Self::start_with(setup, Services::default().with_store(store)).await
    }

    /// As [`Self::start`], with the services given (store, environment, provider, hooks).
    pub async fn start_with(
        mut setup: SessionSetup,
        services: Services,
    ) -> Result<(Self, EventReceiver)> {
        let Services {
            clock,
            store,
            env,
            provider,
            mut hooks,
        } = services;
        let mut notices = std::mem::take(&mut setup.notices);
        let global_only = Settings::load(&setup.agent_dir, &setup.cwd, false);
        let mut trust_store = TrustStore::load(&setup.agent_dir).unwrap_or_else(|error| {
            notices.push(format!(
                "{error}; treating every folder as having no saved decision"
            ));
            TrustStore::default()
        });
        let resolution = crate::trust::resolve(
            &setup.cwd,
            setup.home.as_deref(),
            setup.approve,
            &trust_store,
            global_only.values().default_project_trust,
        );
        // Undecided: the user's own and `-e` extensions load first and may decide
        // (`project_trust`); the project's load after, into the same runtime.
        let (trust, first_pass) = match (setup.first_pass.take(), resolution) {
            (Some(ahead), resolution) => {
                notices.extend(ahead.notices);
                let decision = match resolution {
                    crate::trust::TrustResolution::Decided(decision) => {
                        ahead.decision.unwrap_or(decision)
                    }
                    ask => ask.without_prompt(),
                };
                (decision, ahead.host)
            }
            (None, crate::trust::TrustResolution::Decided(decision)) => (decision, None),
            (None, crate::trust::TrustResolution::Ask { protected }) => {
                crate::extensions::first_pass(&setup, protected, &mut trust_store, &mut notices)
                    .await?
            }
        };
        notices.extend(trust.skipped_notice(&setup.cwd));
        if trust.trusted {
            notices.extend(install_project_packages(&setup, &global_only).await);
        }
        let settings = Settings::load(&setup.agent_dir, &setup.cwd, trust.trusted);
        notices.extend(settings.diagnostics().iter().map(ToString::to_string));
        notices.extend(crate::settings::unsupported::notices(&settings));

        let mut session = open_session(&store, &setup)?;
        notices.extend(
            session
                .warnings()
                .iter()
                .map(|w| format!("session file: {w}")),
        );

        let mut registry = ModelRegistry::load(&setup.agent_dir);
        if let Some(error) = registry.error() {
            notices.push(error.to_owned());
        }
        // Extensions load before the model is chosen, so the models of the providers they
        // register can be picked with `--provider`/`--model`. Only when one is configured:
        // otherwise the JS runtime never starts.
        let extension_paths = crate::extensions::discover(
            &setup.extensions,
            &settings,
            &setup.cwd,
            &setup.agent_dir,
            setup.home.as_deref(),
            trust.trusted,
        );
        let extension_host = match first_pass {
            Some((host, loaded_paths)) => {
                let rest: Vec<_> = extension_paths
                    .into_iter()
                    .filter(|p| !loaded_paths.contains(p))
                    .collect();
                crate::extensions::load_more(&host, rest).await?;
                Some(host)
            }
            None if !extension_paths.is_empty() => {
                Some(crate::extensions::load_host(&setup, extension_paths).await?)
            }
            None => None,
        };
        if let Some(host) = &extension_host {
            notices.extend(host.diagnostics());
            notices.extend(crate::extension_models::register_providers(
                host,
                &mut registry,
            ));
        }
        let auth_storage = AuthStorage::load(&setup.agent_dir).unwrap_or_else(|error| {
            notices.push(error.to_string());
            AuthStorage::empty(&setup.agent_dir)
        });
        // Stored OAuth logins of the extensions' providers refresh through their `oauth`.
        if let Some(host) = &extension_host {
            auth_storage.set_oauth(host.oauth_hooks());
        }
        let no_runtime_keys = HashMap::new();
        let auth = AuthContext {
            storage: &auth_storage,
            env: env.as_ref(),
            runtime_keys: &no_runtime_keys,
        };
        let has_auth = |provider: &str| {
            let key = registry.provider_config(provider).and_then(|c| c.api_key());
            auth.has_auth(provider, key)
        };
        let restored = session.build_context();
        let restored_model = restored.model.clone();
        let restored_thinking = restored_thinking_level(&session).flatten();
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
            Some(pattern) => {
                let chosen = model_select::resolve_cli_model(
                    setup.provider.as_deref(),
                    pattern,
                    setup.thinking,
                    registry.models(),
                    &has_auth,
                )
                .map_err(RuntimeError::Setup)?;
                notices.extend(chosen.warning);
                (chosen.model, chosen.thinking)
            }
            None => {
                let from_session = restored_model.as_ref().and_then(|m| {
                    available
                        .iter()
                        .find(|a| a.provider == m.provider && a.id == m.model_id)
                });
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
                    (None, None) => model_select::default_model(&available, saved)
                        .cloned()
                        .map(|model| (model, None))
                        .ok_or_else(|| RuntimeError::Setup(no_model_message(&setup.agent_dir)))?,
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
            storage: &auth_storage,
            env: env.as_ref(),
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
        let model_port_registry = extension_host.as_ref().map(|_| registry.clone());
        let mut ops = operations::OpsState::new(
            &setup,
            &store,
            registry,
            auth_storage,
            runtime_keys,
            cli,
            Arc::clone(&env),
        );
        ops.scope = scope;
        ops.block_images.store(
            settings.values().images_block_images,
            std::sync::atomic::Ordering::Relaxed,
        );

        // Record the model and level a resumed session did not have (or had differently).
        let model_changed = restored_model
            .as_ref()
            .is_none_or(|m| m.provider != model.provider || m.model_id != model.id);
        if model_changed {
            session.append_model_change(&model.provider, &model.id)?;
        }
        if restored_thinking != Some(thinking) {
            session.append_thinking_level_change(thinking.as_str())?;
        }
        if let Some(name) = &setup.name {
            session.set_session_name(name)?;
        }

        let session_id = session.session_id().to_owned();
        let session_file = session.session_file().map(Path::to_path_buf);
        let history_enabled =
            !crate::file_history::disabled_by(env.var(crate::file_history::DISABLE_VAR).as_deref());
        let file_history = Arc::new(FileHistory::new(
            &setup.agent_dir,
            &session_id,
            history_enabled,
        ));
        if history_enabled {
            let now = std::time::UNIX_EPOCH
                + std::time::Duration::from_millis(u64::try_from(clock.now_ms()).unwrap_or(0));
            // Off the start-up path: nothing waits for it.
            file_history.start_pruning(now);
        }
        let session = Arc::new(Mutex::new(session));
        let (events, receiver) =
            knightcode_agent::event_channel(knightcode_agent::DEFAULT_EVENT_CAPACITY);
        // Built before `session_start`, so `getActiveTools` there sees the session's tools.
        let session_env = Arc::new(Mutex::new(SessionEnv {
            session_id: Some(session_id.clone()),
            session_file,
            provider: Some(model.provider.clone()),
            model: Some(model.id.clone()),
            reasoning_level: Some(thinking.as_str().to_owned()),
        }));
        let image_policy = Arc::new(Mutex::new(image_policy(settings.values(), &model)));
        let web_tools = WebTools::load(&setup.agent_dir, env.var("BRAVE_API_KEY"));
        let (tools, active_tools) = build_tools(
            &setup,
            &settings,
            &session_env,
            &image_policy,
            &web_tools,
            &mut notices,
        );
        let mut extension_tools = Vec::new();
        let mut extension_resources = crate::resources::ExtensionResources {
            packages: crate::extensions::resources::cli_package_resources(
                &setup.extensions.cli,
                &setup.cwd,
            ),
            ..Default::default()
        };
        let extension_actions = Arc::new(crate::actor::ExtensionActions::default());
        if setup.extensions.mode == "rpc" || setup.extensions.mode == "tui" {
            // RPC and interactive modes set their dialogs right after the start:
            // `session_start` already has a UI.
            extension_actions.expect_ui();
        }
        if let Some(host) = &extension_host {
            let host = Arc::clone(host);
            extension_actions.note_selection(
                serde_json::to_value(&model).unwrap_or_default(),
                thinking.as_str(),
            );
            host.bind(
                Arc::new(crate::extensions::Port {
                    session: Arc::clone(&session),
                    model: (model.provider.clone(), model.id.clone()),
                    thinking: thinking.as_str().to_owned(),
                    actions: Arc::clone(&extension_actions),
                    project_trusted: trust.trusted,
                }),
                events.clone(),
            );
            events.set_observer(Arc::new(crate::extensions::ExtensionEvents::new(
                Arc::clone(&host),
            )));
            let preview = with_extension_tools(&setup, active_tools.clone(), &host.tools());
            extension_actions.note_active_tools(&preview);
            host.dispatch("session_start", serde_json::json!({ "reason": "startup" }))
                .await;
            host.refresh().await;
            extension_resources.discovered = crate::extensions::resources::discover(
                &host,
                &setup.cwd,
                "startup",
                &setup.extensions.cli,
            )
            .await;
            extension_tools = host.tools();
            // Extensions first; the embedding program's hooks keep working beside them.
            hooks = Arc::new(crate::hook_chain::ChainedHooks {
                first: Arc::new(crate::extensions::ExtensionHooks {
                    host,
                    entries: Some(Arc::clone(&session)),
                }),
                second: hooks,
            });
        }
        notices.extend(crate::extensions::undeclared_flags(
            &setup.extensions.flags,
            extension_host.as_deref(),
        ));
        // Last, so no image an extension adds gets through either.
        hooks = Arc::new(crate::hook_chain::ChainedHooks {
            first: hooks,
            second: Arc::new(crate::block_images::BlockImages {
                blocked: Arc::clone(&ops.block_images),
            }),
        });
        let (tools, active_tools) =
            add_extension_tools(&setup, tools, active_tools, extension_tools);
        // `setActiveTools` from `session_start`, before the session runs: applied here.
        let active_tools = match extension_actions.take_early_active_tools() {
            Some(names) => {
                let mut chosen: Vec<String> = Vec::new();
                let allowed = loadout::activatable_names(&tools);
                for name in names {
                    if allowed.contains(&name) && !chosen.contains(&name) {
                        chosen.push(name);
                    }
                }
                chosen
            }
            None => active_tools,
        };

        let prompt_files = resolve_prompt_files(
            &setup.agent_dir,
            &setup.cwd,
            trust.trusted,
            setup.system_prompt.as_deref(),
            &setup.append_system_prompt,
        );
        let context_files = if setup.no_context_files {
            Vec::new()
        } else {
            discover_context_files(&setup.agent_dir, &setup.cwd)
        };
        let resources = Arc::new(crate::resources::load(
            &setup.resources,
            &settings,
            &setup.cwd,
            &setup.agent_dir,
            setup.home.as_deref(),
            trust.trusted,
            &extension_resources,
        ));
        notices.extend(resources.diagnostics().map(ToString::to_string));

        let mut headers = serde_json::Map::new();
        headers.extend(resolved.headers.clone());
        let config = AgentConfig {
            model: model.clone(),
            options: StreamOptions {
                api_key: resolved.api_key,
                thinking,
                session_id: Some(session_id),
                headers,
                response_hook: extension_host
                    .as_ref()
                    .and_then(knightcode_ext::ExtensionHost::response_hook),
                headers_hook: extension_host
                    .as_ref()
                    .and_then(knightcode_ext::ExtensionHost::headers_hook),
                stream_event_hook: extension_host
                    .as_ref()
                    .and_then(knightcode_ext::ExtensionHost::stream_event_hook),
                thinking_budgets: settings.values().thinking_budgets,
                retry: settings.values().provider_retry,
                ..StreamOptions::default()
            },
            system_prompt: None,
            tools: {
                extension_actions.note_registered_tools(loadout::activatable_names(&tools));
                tools
            },
            active_tools: {
                extension_actions.note_active_tools(&active_tools);
                Some(active_tools)
            },
            loadout: knightcode_agent::Loadout::default(),
            cwd: setup.cwd.clone(),
            retry: settings.values().retry,
        };
        let provider: Arc<dyn knightcode_ai::Provider> = match provider {
            Some(provider) => provider,
            None => Arc::new(
                Client::with_clock(Arc::clone(&clock))
                    .map_err(|e| RuntimeError::Setup(e.to_string()))?
                    .with_read_pacing(setup.stream_read_pacing),
            ),
        };
        let (provider, extension_models) = match &extension_host {
            Some(host) => {
                let (provider, models) = crate::extension_models::bind(
                    host,
                    provider,
                    model_port_registry,
                    &setup.agent_dir,
                    Arc::clone(&env),
                    ops.runtime_keys().clone(),
                );
                extension_actions.set_models(models.clone());
                (provider, Some(models))
            }
            None => (provider, None),
        };
        let compaction = compacting::CompactionState {
            target: crate::compaction::hooks::SharedTarget::default(),
            events: events.clone(),
            clock: Arc::clone(&clock),
            compacting: crate::compaction::hooks::CompactingFlag::default(),
        };
        let loop_hooks: Arc<dyn knightcode_agent::AgentHooks> =
            Arc::new(crate::file_history::hooks::FileHistoryHooks {
                inner: Arc::new(crate::compaction::hooks::RuntimeHooks::new(
                    hooks.clone(),
                    Arc::clone(&compaction.target),
                    events.clone(),
                    compaction.compacting.clone(),
                )),
                history: Arc::clone(&file_history),
                session: Arc::clone(&session),
                cwd: setup.cwd.clone(),
            });
        // Every finished message goes to the session file before the next model request.
        let store = Arc::clone(&session);
        let agent = Agent::new(Arc::clone(&provider), config, events)
            .with_clock(clock)
            .with_hooks(loop_hooks)
            .with_queue_modes(
                settings.values().steering_mode,
                settings.values().follow_up_mode,
            )
            .with_store(Box::new(recorder::SessionRecorder { session: store }));
        let handle = agent.handle();
        Ok((
            Self {
                session,
                agent,
                handle,
                model,
                thinking,
                settings,
                trust,
                prompt_files,
                context_files,
                resources,
                command_sources: Arc::new(crate::resources::CommandSources {
                    host: extension_host.clone(),
                    agent_dir: setup.agent_dir.clone(),
                    cwd: setup.cwd.clone(),
                }),
                cwd: setup.cwd,
                notices,
                ops,
                hooks,
                provider,
                compaction,
                session_env,
                image_policy,
                web_tools,
                file_history,
                dialogs: Arc::new(NoDialogs),
                extension_host,
                extension_models,
                extension_actions,
                extension_resources,
                extension_cli: setup.extensions.cli.clone(),
            },
            receiver,
        ))
    }

    /// Steering, queueing and abort while a prompt runs.
    pub fn handle(&self) -> AgentHandle {
        self.handle.clone()
    }

    /// Who the built-in `/undo` asks (RPC mode's extension-UI bridge); no one by default.
    pub fn set_dialogs(&mut self, dialogs: Arc<dyn Dialogs>) {
        self.extension_actions.set_dialogs(Arc::clone(&dialogs));
        self.dialogs = dialogs;
    }

    /// The session's file history (backups for `/undo`).
    pub(crate) fn extension_actions(&self) -> &Arc<crate::actor::ExtensionActions> {
        &self.extension_actions
    }

    /// Resolves when an extension called `ctx.shutdown()` (RPC mode then ends as on EOF).
    pub fn shutdown_requested(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let shutdown = self.extension_actions.shutdown_signal();
        async move { shutdown.notified().await }
    }

    /// The session's extensions, when any are loaded.
    pub fn extension_host(&self) -> Option<Arc<knightcode_ext::ExtensionHost>> {
        self.extension_host.clone()
    }

    /// Where a terminal front end sends keys, size and theme to extensions' components.
    pub fn component_channel(&self) -> Option<crate::dialogs::ComponentChannel> {
        self.extension_host
            .clone()
            .map(crate::dialogs::ComponentChannel::new)
    }

    pub fn file_history(&self) -> &Arc<FileHistory> {
        &self.file_history
    }

    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.thinking
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The context files (AGENTS.md, CLAUDE.md, ...) loaded into the system prompt.
    pub fn context_files(&self) -> &[ContextFile] {
        &self.context_files
    }

    /// The skills and prompt templates loaded (with their diagnostics).
    pub fn resources(&self) -> &Arc<knightcode_resources::Resources> {
        &self.resources
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

    /// `/reload`: skills, prompt templates and context files read again (with the settings
    /// files' `skills` and `prompts` lists as they are now). The next request carries the
    /// changed prompt.
    pub fn reload_resources(&mut self) -> &Arc<knightcode_resources::Resources> {
        // The `skills` and `prompts` lists as the files have them now; the session's own
        // settings (with this process's changes) stay as they are.
        let lists = Settings::load(&self.ops.agent_dir, &self.cwd, self.trust.trusted);
        self.context_files = if self.ops.no_context_files {
            Vec::new()
        } else {
            discover_context_files(&self.ops.agent_dir, &self.cwd)
        };
        self.resources = Arc::new(crate::resources::load(
            &self.ops.resource_flags,
            &lists,
            &self.cwd,
            &self.ops.agent_dir,
            self.ops.home.as_deref(),
            self.trust.trusted,
            &self.extension_resources,
        ));
        &self.resources
    }

    /// `resources_discover` again (after `/reload` or a session replacement): the paths
    /// extensions name now. `true` when they changed.
    pub(crate) async fn rediscover_extension_resources(&mut self, reason: &str) -> bool {
        let Some(host) = self.extension_host.clone() else {
            return false;
        };
        let found =
            crate::extensions::resources::discover(&host, &self.cwd, reason, &self.extension_cli)
                .await;
        let changed = found != self.extension_resources.discovered;
        self.extension_resources.discovered = found;
        changed
    }

    pub fn trust(&self) -> &TrustDecision {
        &self.trust
    }

    /// The session header (the first record of `--mode json`).
    pub fn header(&self) -> SessionHeader {
        lock(&self.session).header().clone()
    }

    /// The session, for reads (tree, entries, stats).
    pub fn session(&self) -> Arc<Mutex<SessionManager>> {
        Arc::clone(&self.session)
    }

    /// Runs one user prompt to completion (tool calls, queued messages, retries). A prompt
    /// an input hook handled runs nothing and returns an empty outcome.
    pub async fn prompt(&mut self, text: &str, images: Vec<ContentBlock>) -> Result<RunOutcome> {
        let input = PromptInput {
            text: text.to_owned(),
            images,
            source: InputSource::Rpc,
        };
        match self.begin_prompt(input).await? {
            PromptStart::Handled => Ok(RunOutcome {
                messages: Vec::new(),
                aborted: false,
                error: None,
            }),
            PromptStart::Run(messages) => self.run_prompt(messages).await,
        }
    }
}

/// The thinking level the session's branch last recorded: `None` when it never recorded
/// one, `Some(None)` when the last one is not a level this build knows (the last entry
/// decides, as in the reference's context building).
pub(crate) fn restored_thinking_level(session: &SessionManager) -> Option<Option<ThinkingLevel>> {
    session.branch(None).ok().and_then(|path| {
        path.iter().rev().find_map(|entry| match entry {
            knightcode_protocol::SessionEntry::ThinkingLevelChange(change) => {
                Some(ThinkingLevel::parse(&change.thinking_level))
            }
            _ => None,
        })
    })
}

fn now_millis() -> Millis {
    Millis(chrono::Utc::now().timestamp_millis())
}

fn no_model_message(agent_dir: &Path) -> String {
    format!(
        "No model available. Set a provider's API key (for example ANTHROPIC_API_KEY or OPENAI_API_KEY), \
         add a provider to {}, or pass --model with --api-key.",
        agent_dir.join("models.json").display()
    )
}
