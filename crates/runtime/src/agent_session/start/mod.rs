//! Starting a session, one named step after another: trust and settings, the session file,
//! the extension host, the model, the tools and the hook stack, the prompt inputs, the agent.
//! [`AgentSession::start_with`] runs them in that order; `docs/architecture.md` draws the
//! hook stack [`hook_stack`] builds.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::Agent;
use knightcode_agent::AgentConfig;
use knightcode_agent::AgentHooks;
use knightcode_agent::EventSender;
use knightcode_ai::AuthStorage;
use knightcode_ai::Client;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ResolvedAuth;
use knightcode_ai::StreamOptions;
use knightcode_ai::ThinkingLevel;
use knightcode_ext::ExtensionHost;
use knightcode_session::SessionManager;
use knightcode_session::SessionStore;
use knightcode_tools::SessionEnv;

use super::AgentSession;
use super::SessionSetup;
use super::SessionTarget;
use super::compacting;
use super::operations;
use super::recorder;
use super::tools::image_policy;
use crate::context_files::discover_context_files;
use crate::context_files::resolve_prompt_files;
use crate::dialogs::NoDialogs;
use crate::error::Result;
use crate::error::RuntimeError;
use crate::file_history::FileHistory;
use crate::hooks::SessionHooks;
use crate::services::Services;
use crate::settings::Settings;
use crate::trust::TrustDecision;
use crate::trust::TrustStore;
use crate::web_tools::WebTools;

/// A host that already loaded some extensions, with the paths it loaded.
type LoadedHost = Option<(Arc<ExtensionHost>, Vec<PathBuf>)>;

mod extensions;
mod model;

use self::extensions::extension_host;
use self::extensions::tools_and_extensions;
use self::model::ChosenModel;
use self::model::choose_model;
pub(super) use self::model::no_model_selected_message;
use self::model::record_selection;
use crate::local_models::LocalProbe;

impl AgentSession {
    /// As [`Self::start`], with the services given (store, environment, provider, hooks).
    pub async fn start_with(
        mut setup: SessionSetup,
        services: Services,
    ) -> Result<(Self, knightcode_agent::EventReceiver)> {
        let Services {
            clock,
            store,
            env,
            provider,
            hooks,
        } = services;
        let mut notices = std::mem::take(&mut setup.notices);
        let Trusted {
            trust,
            first_pass,
            settings,
            mut mcp,
            sandbox,
        } = trust_and_settings(&mut setup, &env, &mut notices).await?;
        let mut session = session_file(&store, &setup, &mut notices)?;
        let (registry, extension_host, auth_storage, local) =
            extension_host(&setup, &settings, &trust, first_pass, &env, &mut notices).await?;
        extension_mcp_servers(&mut mcp, extension_host.as_ref(), &mut notices);
        let chosen = choose_model(
            &setup,
            &settings,
            &registry,
            &auth_storage,
            env.as_ref(),
            &session,
            &mut notices,
        )
        .await?;
        record_selection(&mut session, &setup, &chosen)?;
        let model_port_registry = extension_host.as_ref().map(|_| registry.clone());
        let (ops, model, thinking, resolved) = ops_state(
            &setup,
            &store,
            &settings,
            (registry, local),
            auth_storage,
            chosen,
            &env,
        );
        let session_id = session.session_id().to_owned();
        let session_file = session.session_file().map(Path::to_path_buf);
        let file_history = file_history(&setup, env.as_ref(), clock.as_ref(), &session_id);
        let session = Arc::new(Mutex::new(session));
        let (events, receiver) =
            knightcode_agent::event_channel(knightcode_agent::DEFAULT_EVENT_CAPACITY);
        // Built before `session_start`, so `getActiveTools` there sees the session's tools.
        let session_env = session_env(&session_id, session_file, &model, thinking);
        let image_policy = Arc::new(Mutex::new(image_policy(settings.values(), &model)));
        let web_tools = WebTools::load(&setup.agent_dir, env.var("BRAVE_API_KEY"));
        let toolbox = tools_and_extensions(
            &setup,
            &settings,
            (&session_env, &image_policy),
            (&web_tools, &sandbox),
            extension_host.as_ref(),
            (&session, &events),
            (&model, thinking, trust.trusted),
            &mut notices,
        )
        .await?;
        let hooks = hook_stack(
            extension_host.as_ref(),
            &session,
            hooks,
            (&ops, &toolbox.plan),
        );
        let inputs = prompt_inputs(&setup, &settings, &trust, &toolbox.resources, &mut notices);
        let extension_actions = toolbox.actions;
        let config = agent_config(
            &setup,
            &settings,
            (&model, thinking),
            (resolved, env.as_ref()),
            session_id,
            extension_host.as_ref(),
            (toolbox.tools, toolbox.active_tools),
        );
        let (provider, extension_models) = model_provider(
            provider,
            &clock,
            &setup,
            extension_host.as_ref(),
            (model_port_registry, &env, &ops),
            &extension_actions,
        )?;
        let compaction = compacting::CompactionState::new(events.clone(), Arc::clone(&clock));
        let loop_hooks = loop_hooks(
            &hooks,
            (&compaction, extension_models.as_ref()),
            &events,
            &file_history,
            &session,
            &setup,
        );
        let (agent, cache_warming) = agent(
            (&provider, config, events),
            clock,
            loop_hooks,
            &settings,
            &session,
        );
        // MCP servers connect once a front end is served: `AgentSession::connect_mcp`.
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
                prompt_files: inputs.prompt_files,
                context_files: inputs.context_files,
                resources: inputs.resources,
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
                sandbox,
                dialogs: Arc::new(NoDialogs),
                extension_host,
                extension_models,
                extension_actions,
                extension_resources: toolbox.resources,
                extension_cli: setup.extensions.cli.clone(),
                mcp,
                plan: toolbox.plan,
                script_models: toolbox.script_models,
                cache_warming,
            },
            receiver,
        ))
    }
}

/// The agent, on the session's provider seen by the cache warmer (every real request
/// restarts warming), and that warmer.
fn agent(
    (provider, config, events): (&Arc<dyn knightcode_ai::Provider>, AgentConfig, EventSender),
    clock: Arc<dyn knightcode_agent::Clock>,
    loop_hooks: Arc<dyn AgentHooks>,
    settings: &Settings,
    session: &Arc<Mutex<SessionManager>>,
) -> (Agent, crate::cache_warming::CacheWarming) {
    let warming = crate::cache_warming::CacheWarming::new(
        Arc::clone(&clock),
        settings.values().cache_warming,
    );
    let provider = Arc::new(crate::cache_warming::WarmingProvider {
        inner: Arc::clone(provider),
        warming: warming.clone(),
    });
    // Every finished message goes to the session file before the next model request.
    let agent = Agent::new(provider, config, events)
        .with_clock(clock)
        .with_hooks(loop_hooks)
        .with_queue_modes(
            settings.values().steering_mode,
            settings.values().follow_up_mode,
        )
        .with_store(Box::new(recorder::SessionRecorder {
            session: Arc::clone(session),
        }));
    (agent, warming)
}

/// Step 10: the provider the agent streams from: the one given, or HTTP with our client;
/// with extensions, a router that also reaches the providers they register.
fn model_provider(
    provider: Option<Arc<dyn knightcode_ai::Provider>>,
    clock: &Arc<dyn knightcode_agent::Clock>,
    setup: &SessionSetup,
    host: Option<&Arc<ExtensionHost>>,
    (registry, env, ops): (
        Option<ModelRegistry>,
        &Arc<dyn knightcode_ai::EnvSource>,
        &operations::OpsState,
    ),
    actions: &crate::extensions::ExtensionActions,
) -> Result<(
    Arc<dyn knightcode_ai::Provider>,
    Option<crate::extensions::models::SharedModels>,
)> {
    let provider: Arc<dyn knightcode_ai::Provider> = match provider {
        Some(provider) => provider,
        None => Arc::new(
            Client::with_clock(Arc::clone(clock))
                .map_err(|e| RuntimeError::Setup(e.to_string()))?
                .with_read_pacing(setup.stream_read_pacing),
        ),
    };
    Ok(match host {
        Some(host) => {
            let (provider, models) = crate::extensions::models::bind(
                host,
                provider,
                registry,
                &setup.agent_dir,
                Arc::clone(env),
                ops.runtime_keys().clone(),
            );
            actions.set_models(models.clone());
            (provider, Some(models))
        }
        None => (provider, None),
    })
}

/// The session's operations state (registry, credentials, scope, the command line's
/// choices); hands back the chosen model, level and credentials.
fn ops_state(
    setup: &SessionSetup,
    store: &SessionStore,
    settings: &Settings,
    (registry, local): (ModelRegistry, LocalProbe),
    auth_storage: AuthStorage,
    chosen: ChosenModel,
    env: &Arc<dyn knightcode_ai::EnvSource>,
) -> (operations::OpsState, Model, ThinkingLevel, ResolvedAuth) {
    let ChosenModel {
        model,
        thinking,
        resolved,
        runtime_keys,
        cli,
        scope,
        ..
    } = chosen;
    let mut ops = operations::OpsState::new(
        setup,
        store,
        registry,
        auth_storage,
        runtime_keys,
        cli,
        Arc::clone(env),
    );
    ops.scope = scope;
    ops.local = local;
    ops.block_images.store(
        settings.values().images_block_images,
        std::sync::atomic::Ordering::Relaxed,
    );
    (ops, model, thinking, resolved)
}

/// What the tools know of the session (its id and file, the model and level).
fn session_env(
    session_id: &str,
    session_file: Option<PathBuf>,
    model: &Model,
    thinking: ThinkingLevel,
) -> Arc<Mutex<SessionEnv>> {
    Arc::new(Mutex::new(SessionEnv {
        session_id: Some(session_id.to_owned()),
        session_file,
        provider: Some(model.provider.clone()),
        model: Some(model.id.clone()),
        reasoning_level: Some(thinking.as_str().to_owned()),
    }))
}

/// The session's file history (what `/undo` restores), its pruning started off the
/// start-up path.
fn file_history(
    setup: &SessionSetup,
    env: &dyn knightcode_ai::EnvSource,
    clock: &dyn knightcode_agent::Clock,
    session_id: &str,
) -> Arc<FileHistory> {
    let enabled =
        !crate::file_history::disabled_by(env.var(crate::file_history::DISABLE_VAR).as_deref());
    let history = Arc::new(FileHistory::new(&setup.agent_dir, session_id, enabled));
    if enabled {
        let now = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(u64::try_from(clock.now_ms()).unwrap_or(0));
        history.start_pruning(now);
    }
    history
}

/// What the system prompt is built from.
struct PromptInputs {
    prompt_files: crate::context_files::PromptFiles,
    context_files: Vec<crate::context_files::ContextFile>,
    resources: Arc<crate::resources::Resources>,
}

/// Step 8: the prompt files, context files, skills, prompt templates and themes (the
/// extensions' among them).
fn prompt_inputs(
    setup: &SessionSetup,
    settings: &Settings,
    trust: &TrustDecision,
    extension_resources: &crate::resources::ExtensionResources,
    notices: &mut Vec<String>,
) -> PromptInputs {
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
        settings,
        &setup.cwd,
        &setup.agent_dir,
        setup.home.as_deref(),
        trust.trusted,
        extension_resources,
    ));
    notices.extend(resources.diagnostics().map(ToString::to_string));
    PromptInputs {
        prompt_files,
        context_files,
        resources,
    }
}

/// The MCP servers extensions registered while loading connect with the files' ones.
fn extension_mcp_servers(
    mcp: &mut crate::mcp::McpSession,
    host: Option<&Arc<ExtensionHost>>,
    notices: &mut Vec<String>,
) {
    if let Some(host) = host {
        notices.extend(mcp.set_extension_servers(&host.registry().mcp_servers));
    }
}

/// The project's trust, decided before anything is read from it, and the settings and MCP
/// servers it allows.
struct Trusted {
    trust: TrustDecision,
    /// The host of the first trust pass, when extensions were asked about the project.
    first_pass: LoadedHost,
    settings: Settings,
    /// Configured, not connecting yet: the session starts the connections last.
    mcp: crate::mcp::McpSession,
    /// The OS sandbox of tool commands, checked against the kernel.
    sandbox: crate::sandbox::SessionSandbox,
}

/// Step 1: trust (saved decision, `--approve`, or the extensions' `project_trust`), the
/// trusted project's missing packages, then the settings the decision allows, and the MCP
/// servers started (in the background: start-up never waits for a server).
async fn trust_and_settings(
    setup: &mut SessionSetup,
    env: &Arc<dyn knightcode_ai::EnvSource>,
    notices: &mut Vec<String>,
) -> Result<Trusted> {
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
            crate::extensions::first_pass(setup, protected, &mut trust_store, notices).await?
        }
    };
    notices.extend(trust.skipped_notice(&setup.cwd));
    if trust.trusted {
        notices.extend(install_project_packages(setup, &global_only).await);
    }
    let settings = Settings::load(&setup.agent_dir, &setup.cwd, trust.trusted);
    notices.extend(settings.diagnostics().iter().map(ToString::to_string));
    notices.extend(crate::settings::unsupported::notices(&settings));
    // Before the session file and the servers: a sandbox the kernel cannot enforce stops
    // the start.
    let sandbox = crate::sandbox::resolve(
        &setup.sandbox,
        &settings.values().sandbox,
        &setup.cwd,
        setup.home.as_deref(),
    )?;
    let mcp = crate::mcp::McpSession::start(setup, trust.trusted, env, notices);
    Ok(Trusted {
        trust,
        first_pass,
        settings,
        mcp,
        sandbox,
    })
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

/// Step 2: the session file to work in (new, opened, forked or in memory), with what was
/// wrong in it.
fn session_file(
    store: &SessionStore,
    setup: &SessionSetup,
    notices: &mut Vec<String>,
) -> Result<SessionManager> {
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
    notices.extend(
        session
            .warnings()
            .iter()
            .map(|w| format!("session file: {w}")),
    );
    Ok(session)
}

/// Step 7, the session's hook stack, outermost first:
///
/// ```text
/// ChainedHooks ─ first:  ChainedHooks ─ first:  ChainedHooks ─ first:  ExtensionHooks
///              │                      │                      └ second: the program's hooks
///              │                      └ second: PlanGate (the built-in plan mode)
///              └ second: BlockImages (last, so no image an extension adds gets through)
/// ```
///
/// The agent loop wraps it once more ([`loop_hooks`]).
fn hook_stack(
    host: Option<&Arc<ExtensionHost>>,
    session: &Arc<Mutex<SessionManager>>,
    program: Arc<dyn SessionHooks>,
    (ops, plan): (&operations::OpsState, &Arc<crate::plan_mode::PlanMode>),
) -> Arc<dyn SessionHooks> {
    let hooks = match host {
        // Extensions first; the embedding program's hooks keep working beside them.
        Some(host) => Arc::new(crate::extensions::hook_chain::ChainedHooks {
            first: Arc::new(crate::extensions::ExtensionHooks {
                host: Arc::clone(host),
                entries: Some(Arc::clone(session)),
            }),
            second: program,
        }) as Arc<dyn SessionHooks>,
        None => program,
    };
    // Plan mode after the extensions (their handlers see calls first, as in the reference).
    let hooks = Arc::new(crate::extensions::hook_chain::ChainedHooks {
        first: hooks,
        second: Arc::new(crate::plan_mode::PlanGate {
            plan: Arc::clone(plan),
        }),
    });
    Arc::new(crate::extensions::hook_chain::ChainedHooks {
        first: hooks,
        second: Arc::new(crate::block_images::BlockImages {
            blocked: Arc::clone(&ops.block_images),
        }),
    })
}

/// The hooks the agent loop calls: file history around the compaction-aware runtime hooks
/// around the session's [`hook_stack`].
fn loop_hooks(
    hooks: &Arc<dyn SessionHooks>,
    (compaction, models): (
        &compacting::CompactionState,
        Option<&crate::extensions::models::SharedModels>,
    ),
    events: &EventSender,
    file_history: &Arc<FileHistory>,
    session: &Arc<Mutex<SessionManager>>,
    setup: &SessionSetup,
) -> Arc<dyn AgentHooks> {
    let runtime = Arc::new(crate::compaction::hooks::RuntimeHooks::new(
        hooks.clone(),
        Arc::clone(&compaction.target),
        events.clone(),
        compaction.compacting.clone(),
    ));
    let hooks = Arc::new(crate::file_history::hooks::FileHistoryHooks {
        inner: Arc::clone(&runtime) as Arc<dyn AgentHooks>,
        history: Arc::clone(file_history),
        session: Arc::clone(session),
        cwd: setup.cwd.clone(),
    });
    // Routing compacts ahead for a routed model too small for the context.
    if let Some(models) = models {
        models
            .set_compactor(&(runtime as Arc<dyn crate::extensions::virtual_models::CompactAhead>));
    }
    hooks
}

/// Step 9: what the agent loop runs with (model, stream options and provider hooks, tools).
fn agent_config(
    setup: &SessionSetup,
    settings: &Settings,
    (model, thinking): (&Model, ThinkingLevel),
    (resolved, env): (ResolvedAuth, &dyn knightcode_ai::EnvSource),
    session_id: String,
    host: Option<&Arc<ExtensionHost>>,
    (tools, active_tools): (knightcode_agent::ToolRegistry, Vec<String>),
) -> AgentConfig {
    let mut headers = serde_json::Map::new();
    headers.extend(resolved.headers.clone());
    AgentConfig {
        model: model.clone(),
        options: StreamOptions {
            api_key: resolved.api_key,
            thinking,
            // The session's requests choose no lifetime; the user may ask for the long one.
            cache_retention: knightcode_ai::CacheRetention::from_env_value(
                env.var("KNIGHTCODE_CACHE_RETENTION").as_deref(),
            ),
            session_id: Some(session_id),
            headers,
            response_hook: host.and_then(ExtensionHost::response_hook),
            headers_hook: host.and_then(ExtensionHost::headers_hook),
            stream_event_hook: host.and_then(ExtensionHost::stream_event_hook),
            thinking_budgets: settings.values().thinking_budgets,
            retry: settings.values().provider_retry,
            ..StreamOptions::default()
        },
        system_prompt: None,
        tools,
        active_tools: Some(active_tools),
        loadout: knightcode_agent::Loadout::default(),
        cwd: setup.cwd.clone(),
        retry: settings.values().retry,
    }
}
