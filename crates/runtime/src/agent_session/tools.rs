//! Tool assembly for a session: the built-in tools with their shared configuration
//! (shell, session environment, image policy, web search) and the extension tools
//! joined to them under the CLI's tool selection.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::ToolRegistry;
use knightcode_ai::Model;
use knightcode_tools::BashConfig;
use knightcode_tools::ImagePolicy;
use knightcode_tools::SessionEnv;
use knightcode_tools::ToolsConfig;

use super::SessionSetup;
use crate::settings::Settings;
use crate::tool_selection::select_tools;
use crate::web_tools::WebTools;

/// What `read` does with images for `model`: the `images.autoResize` setting, the model's
/// `inputLimits` and whether it takes images at all.
pub(crate) fn image_policy(
    settings: &crate::settings::SettingsValues,
    model: &Model,
) -> ImagePolicy {
    ImagePolicy {
        auto_resize: settings.images_auto_resize,
        limits: knightcode_tools::ResizeLimits::from_input_limits(model.input_limits.as_ref()),
        model_accepts_images: Some(model.input.iter().any(|kind| kind == "image")),
    }
}

/// Built-in tools and the names to activate: `--tools`, else the `defaultTools` setting, minus
/// `--exclude-tools`; none with `--no-tools` or `--no-builtin-tools`. Entries that name no
/// tool become notices.
pub(super) fn build_tools(
    setup: &SessionSetup,
    settings: &Settings,
    session_env: &Arc<Mutex<SessionEnv>>,
    image_policy: &Arc<Mutex<ImagePolicy>>,
    (web_tools, sandbox): (&WebTools, &crate::sandbox::SessionSandbox),
    planning: Vec<Arc<dyn knightcode_agent::Tool>>,
    notices: &mut Vec<String>,
) -> (ToolRegistry, Vec<String>) {
    let env = Arc::clone(session_env);
    let bash = BashConfig {
        shell_path: settings.values().shell_path(setup.home.as_deref()),
        command_prefix: settings.values().shell_command_prefix.clone(),
        // Read when each command starts: a model, thinking or session change shows at once.
        session_env: Some(Arc::new(move || {
            env.lock().unwrap_or_else(PoisonError::into_inner).clone()
        })),
        sandbox: sandbox.launcher().cloned(),
        ..BashConfig::default()
    };
    let local: Arc<dyn knightcode_tools::FileOps> = Arc::new(knightcode_tools::LocalFileOps);
    let config = ToolsConfig {
        // Under the sandbox, write and edit refuse what a sandboxed command could not write.
        file_ops: match sandbox.policy() {
            Some(policy) => Arc::new(knightcode_tools::SandboxedFileOps::new(
                local,
                policy.clone(),
            )),
            None => local,
        },
        mutation_queue: knightcode_tools::FileMutationQueue::new(),
        bash,
        images: Some({
            let policy = Arc::clone(image_policy);
            Arc::new(move || {
                policy
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            })
        }),
        web: knightcode_tools::WebConfig {
            search: Some(web_tools.search_source()),
            ..knightcode_tools::WebConfig::default()
        },
    };
    let mut registry = ToolRegistry::new();
    for tool in knightcode_tools::builtin_tools(config) {
        registry.register(tool);
    }
    // Registered inactive: `--tools`, `defaultTools` or an MCP server activate them. The
    // session's own `codemode` (with its store) replaces this one once extensions are known.
    registry.register(Arc::new(knightcode_codemode::ToolSearch::new()));
    registry.register(Arc::new(knightcode_codemode::Codemode::new(&[], None)));
    let names: Vec<&str> = registry.names().collect();
    // Web tools `/tools` turned on for every session join the defaults (so --tools,
    // --exclude-tools and --no-tools apply to them as to the rest).
    let mut defaults = settings.values().default_tools.clone();
    defaults.extend(
        crate::web_tools::WEB_TOOL_NAMES
            .iter()
            .filter(|name| web_tools.always(name))
            .map(|name| (*name).to_owned()),
    );
    // Plan mode's tools activate only when planning starts: `--tools` names them to allow
    // planning (no warning), and no pattern picks them up.
    let mut selection = setup.tools.clone();
    let planning_name = |entry: &String| planning.iter().any(|t| t.definition().name == *entry);
    if let Some(allow) = &mut selection.allow {
        allow.retain(|entry| !planning_name(entry));
    }
    selection.exclude.retain(|entry| !planning_name(entry));
    let choice = select_tools(&selection, &defaults, &names);
    notices.extend(choice.warnings);
    for tool in planning {
        registry.register(tool);
    }
    (registry, choice.active)
}

/// Extension tools are active unless `--tools` leaves them out or `--no-tools` is given
/// (`--no-builtin-tools` keeps them); a name a built-in has replaces the built-in. Only
/// `direct` and `model-only` tools activate on registration (not with `defaultActive:
/// false`, unless `--tools` names them).
pub(super) fn add_extension_tools(
    setup: &SessionSetup,
    mut registry: ToolRegistry,
    active: Vec<String>,
    extension_tools: Vec<Arc<dyn knightcode_agent::Tool>>,
) -> (ToolRegistry, Vec<String>) {
    let active = with_extension_tools(setup, active, &extension_tools);
    for tool in extension_tools {
        registry.register(tool);
    }
    (registry, active)
}

/// `active` with the extension tools that activate on registration added (the rule of
/// [`add_extension_tools`]), without building the registry.
pub(super) fn with_extension_tools(
    setup: &SessionSetup,
    mut active: Vec<String>,
    extension_tools: &[Arc<dyn knightcode_agent::Tool>],
) -> Vec<String> {
    for tool in extension_tools {
        let name = &tool.definition().name;
        let activate = match &setup.tools.allow {
            Some(allow) => allow.iter().any(|a| a == name) && tool.exposure().declarable(),
            None => tool.active_on_registration(),
        };
        if activate && !setup.tools.no_tools && !active.contains(name) {
            active.push(name.clone());
        }
    }
    active
}
