//! Steps 3 and 6 of starting a session: the extension host (with the registry and the
//! credentials its providers join), and the tools once the extensions have started.

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::EventSender;
use knightcode_ai::AuthStorage;
use knightcode_ai::Model;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ThinkingLevel;
use knightcode_ext::ExtensionHost;
use knightcode_session::SessionManager;
use knightcode_tools::SessionEnv;

use super::super::SessionSetup;
use super::super::loadout;
use super::super::tools::add_extension_tools;
use super::super::tools::build_tools;
use super::super::tools::with_extension_tools;
use super::LoadedHost;
use crate::error::Result;
use crate::local_models::LocalProbe;
use crate::settings::Settings;
use crate::trust::TrustDecision;
use crate::web_tools::WebTools;

/// Step 6's result: the tools the session offers, the active ones, and what the
/// extensions brought.
pub(super) struct Toolbox {
    pub(super) tools: knightcode_agent::ToolRegistry,
    pub(super) active_tools: Vec<String>,
    pub(super) actions: Arc<crate::extensions::ExtensionActions>,
    pub(super) resources: crate::resources::ExtensionResources,
    /// The built-in plan mode (disabled when an extension replaced it).
    pub(super) plan: Arc<crate::plan_mode::PlanMode>,
    /// What codemode scripts' `models` global lists (the session refreshes it).
    pub(super) script_models: Arc<crate::codemode_tools::ScriptModelList>,
}

/// Step 6: the built-in tools, then the extensions started on the session (bound,
/// `session_start`, their tools and resources), then the active set `session_start` chose.
#[allow(clippy::too_many_arguments)]
pub(super) async fn tools_and_extensions(
    setup: &SessionSetup,
    settings: &Settings,
    (session_env, image_policy): (
        &Arc<Mutex<SessionEnv>>,
        &Arc<Mutex<knightcode_tools::ImagePolicy>>,
    ),
    (web_tools, sandbox): (&WebTools, &crate::sandbox::SessionSandbox),
    host: Option<&Arc<ExtensionHost>>,
    (session, events): (&Arc<Mutex<SessionManager>>, &EventSender),
    selection: (&Model, ThinkingLevel, bool),
    notices: &mut Vec<String>,
) -> Result<Toolbox> {
    let plan = crate::plan_mode::PlanMode::new(Arc::clone(session), &setup.tools);
    let (mut tools, active_tools) = build_tools(
        setup,
        settings,
        session_env,
        image_policy,
        (web_tools, sandbox),
        crate::plan_mode::planning_tools(&plan),
        notices,
    );
    let actions = Arc::new(crate::extensions::ExtensionActions::default());
    plan.set_actions(&actions);
    if setup.extensions.mode == "rpc" || setup.extensions.mode == "tui" {
        // RPC and interactive modes set their dialogs right after the start:
        // `session_start` already has a UI.
        actions.expect_ui();
    }
    if let Some(host) = host {
        // Before `session_start`, where extensions read their flags.
        take_plan_argument(setup, host, &plan).await;
    }
    let started = match host {
        Some(host) => {
            start_extensions(
                host,
                setup,
                session,
                events,
                &actions,
                selection,
                &active_tools,
            )
            .await
        }
        None => StartedExtensions::none(setup),
    };
    if let Some(host) = host
        && replaces_plan_mode(host, &started.tools)
    {
        plan.disable();
    }
    let mut flags = setup.extensions.flags.clone();
    if plan.enabled() {
        // `--plan` is the built-in's.
        flags.remove("plan");
    }
    notices.extend(crate::extensions::undeclared_flags(
        &flags,
        host.map(|h| &**h),
    ));
    // Before the extensions' tools, so one of theirs named `codemode` replaces it.
    let script_models = Arc::new(crate::codemode_tools::ScriptModelList::default());
    tools.register(crate::codemode_tools::codemode_tool(
        &started.tools,
        settings.values().codemode.inline_budget,
        (session, &script_models),
    ));
    let (tools, active_tools) = add_extension_tools(setup, tools, active_tools, started.tools);
    plan.note_tools(tools.names());
    let active_tools = early_active_tools(&actions, &tools, active_tools);
    actions.note_registered_tools(loadout::activatable_names(&tools));
    actions.note_active_tools(&active_tools);
    plan.note_codemode_only(
        settings.values().codemode.mode == crate::settings::CodemodeMode::Only
            && active_tools
                .iter()
                .any(|n| n == knightcode_codemode::CODEMODE_NAME),
    );
    // `--plan` (after the extensions, which may have replaced the built-in).
    plan.enter_at_startup(setup)?;
    Ok(Toolbox {
        tools,
        active_tools,
        actions,
        resources: started.resources,
        plan,
        script_models,
    })
}

/// Step 3: the extension host. Extensions load before the model is chosen, so the models
/// of the providers they register can be picked with `--provider`/`--model`. Only when one
/// is configured: otherwise the JS runtime never starts.
/// Also loads the model registry (the host's providers join it) and the stored credentials
/// (its providers' OAuth logins refresh through their `oauth`), and asks the local model
/// servers what they serve (waited for only when nothing else can be used).
pub(super) async fn extension_host(
    setup: &SessionSetup,
    settings: &Settings,
    trust: &TrustDecision,
    first_pass: LoadedHost,
    env: &Arc<dyn knightcode_ai::EnvSource>,
    notices: &mut Vec<String>,
) -> Result<(
    ModelRegistry,
    Option<Arc<ExtensionHost>>,
    AuthStorage,
    LocalProbe,
)> {
    let mut local = LocalProbe::spawn(settings.values().local_models.clone());
    let mut registry = ModelRegistry::load(&setup.agent_dir);
    if let Some(error) = registry.error() {
        notices.push(error.to_owned());
    }
    let extension_paths = crate::extensions::discover(
        &setup.extensions,
        settings,
        &setup.cwd,
        &setup.agent_dir,
        setup.home.as_deref(),
        trust.trusted,
    );
    let host = match first_pass {
        Some((host, loaded_paths)) => {
            let rest: Vec<_> = extension_paths
                .into_iter()
                .filter(|p| !loaded_paths.contains(p))
                .collect();
            crate::extensions::load_more(&host, rest).await?;
            Some(host)
        }
        None if !extension_paths.is_empty() => {
            Some(crate::extensions::load_host(setup, extension_paths).await?)
        }
        None => None,
    };
    if let Some(host) = &host {
        notices.extend(host.diagnostics());
        notices.extend(crate::extensions::models::register_providers(
            host,
            &mut registry,
        ));
    }
    let auth_storage = AuthStorage::load(&setup.agent_dir).unwrap_or_else(|error| {
        notices.push(error.to_string());
        AuthStorage::empty(&setup.agent_dir)
    });
    if let Some(host) = &host {
        auth_storage.set_oauth(host.oauth_hooks());
        notices.extend(
            crate::extensions::models::modify_models(host, &mut registry, &auth_storage).await,
        );
    }
    super::model::wait_for_local_models(
        setup,
        &mut registry,
        &auth_storage,
        env.as_ref(),
        &mut local,
    )
    .await;
    Ok((registry, host, auth_storage, local))
}

/// What the extensions brought once started: their tools and resources.
struct StartedExtensions {
    tools: Vec<Arc<dyn knightcode_agent::Tool>>,
    resources: crate::resources::ExtensionResources,
}

impl StartedExtensions {
    fn none(setup: &SessionSetup) -> Self {
        Self {
            tools: Vec::new(),
            resources: crate::resources::ExtensionResources {
                packages: crate::extensions::resources::cli_package_resources(
                    &setup.extensions.cli,
                    &setup.cwd,
                ),
                ..Default::default()
            },
        }
    }
}

/// Step 6: the host is bound to the session (its port and events), hears `session_start`,
/// and supplies its tools and the resources it discovers.
async fn start_extensions(
    host: &Arc<ExtensionHost>,
    setup: &SessionSetup,
    session: &Arc<Mutex<SessionManager>>,
    events: &EventSender,
    actions: &Arc<crate::extensions::ExtensionActions>,
    (model, thinking, project_trusted): (&Model, ThinkingLevel, bool),
    active_tools: &[String],
) -> StartedExtensions {
    let mut started = StartedExtensions::none(setup);
    actions.note_selection(
        serde_json::to_value(model).unwrap_or_default(),
        thinking.as_str(),
    );
    host.bind(
        Arc::new(crate::extensions::Port {
            session: Arc::clone(session),
            model: (model.provider.clone(), model.id.clone()),
            thinking: thinking.as_str().to_owned(),
            actions: Arc::clone(actions),
            project_trusted,
        }),
        events.clone(),
    );
    events.set_observer(Arc::new(crate::extensions::ExtensionEvents::new(
        Arc::clone(host),
    )));
    let preview = with_extension_tools(setup, active_tools.to_vec(), &host.tools());
    actions.note_active_tools(&preview);
    host.dispatch("session_start", serde_json::json!({ "reason": "startup" }))
        .await;
    host.refresh().await;
    started.resources.discovered =
        crate::extensions::resources::discover(host, &setup.cwd, "startup", &setup.extensions.cli)
            .await;
    started.tools = host.tools();
    started
}

/// Whether an extension registered `/plan`, `--plan`, `ask_user` or `submit_plan`: then it
/// is plan mode and the built-in stands aside.
fn replaces_plan_mode(host: &ExtensionHost, tools: &[Arc<dyn knightcode_agent::Tool>]) -> bool {
    let registry = host.registry();
    registry.commands.iter().any(|c| c.name == "plan")
        || registry.flags.iter().any(|f| f.name == "plan")
        || tools.iter().any(|t| {
            let name = &t.definition().name;
            name == crate::plan_mode::ASK_USER || name == crate::plan_mode::SUBMIT_PLAN
        })
}

/// An extension's `--plan` declared as a string flag (it replaces plan mode) gets the
/// argument after it, which then is no message (see
/// [`crate::AgentSession::plan_argument_taken`]).
async fn take_plan_argument(
    setup: &SessionSetup,
    host: &ExtensionHost,
    plan: &crate::plan_mode::PlanMode,
) {
    let Some(argument) = &setup.extensions.plan_argument else {
        return;
    };
    let string_flag = host
        .registry()
        .flags
        .iter()
        .any(|f| f.name == "plan" && f.kind == knightcode_ext::FlagKind::String);
    if string_flag
        && host
            .set_flag("plan", serde_json::Value::String(argument.clone()))
            .await
            .is_ok()
    {
        plan.note_argument_taken();
    }
}

/// `setActiveTools` from `session_start`, before the session runs, applied to the tools
/// the session offers (unknown names left out, no repeats).
fn early_active_tools(
    actions: &crate::extensions::ExtensionActions,
    tools: &knightcode_agent::ToolRegistry,
    active_tools: Vec<String>,
) -> Vec<String> {
    let Some(names) = actions.take_early_active_tools() else {
        return active_tools;
    };
    let allowed = loadout::activatable_names(tools);
    let mut chosen: Vec<String> = Vec::new();
    for name in names {
        if allowed.contains(&name) && !chosen.contains(&name) {
            chosen.push(name);
        }
    }
    chosen
}
