//! From parsed arguments to a [`SessionSetup`]: directories, the session to use, model and
//! tool flags (`spec/cli.md` §5).

use std::path::Path;
use std::path::PathBuf;

use anyhow::Context as _;
use anyhow::bail;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::SessionTarget;
use knightcode_runtime::ToolSelection;
use knightcode_session::list;
use knightcode_session::paths::SessionLocation;
use knightcode_session::paths::resolve_session_location;

use crate::args::Args;
use crate::list_models::agent_dir;

/// `--session`/`--fork` values name a file when they look like a path.
fn looks_like_path(value: &str) -> bool {
    value.contains('/') || value.contains('\\') || value.ends_with(".jsonl")
}

/// Finds a session by path, exact id or id prefix: in this project first, then anywhere.
fn find_session(
    value: &str,
    location: &SessionLocation,
    cwd: &Path,
    agent_dir: &Path,
) -> anyhow::Result<PathBuf> {
    if looks_like_path(value) {
        return Ok(cwd.join(value));
    }
    let filter = location.filter_by_cwd.then_some(cwd);
    if let Some(path) = list::find_session(&location.dir, filter, value) {
        return Ok(path);
    }
    let global = list::list_all_sessions(&agent_dir.join("sessions"));
    global
        .iter()
        .find(|info| info.id == value)
        .or_else(|| global.iter().find(|info| info.id.starts_with(value)))
        .map(|info| info.path.clone())
        .with_context(|| format!("No session found matching '{value}'"))
}

/// Builds the run's setup from the command line and the environment (print, JSON and RPC
/// modes, which have no session picker for `--resume`).
pub fn session_setup(args: &Args) -> anyhow::Result<SessionSetup> {
    session_setup_with_location(args, false).map(|(setup, _)| setup)
}

/// Like [`session_setup`], also returning where this project's sessions live (for pickers).
/// With `picker`, `--resume` starts a new session and leaves choosing to the caller.
pub fn session_setup_with_location(
    args: &Args,
    picker: bool,
) -> anyhow::Result<(SessionSetup, SessionLocation)> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let agent_dir = agent_dir()?;
    let home = std::env::home_dir();
    let env_dir = std::env::var("KNIGHTCODE_CODING_AGENT_SESSION_DIR").ok();
    let setting_dir = knightcode_runtime::settings::bootstrap_session_dir(
        &agent_dir,
        &cwd,
        home.as_deref(),
        args.project_trust,
    );
    let location = resolve_session_location(
        args.session_dir.as_deref(),
        env_dir.as_deref(),
        setting_dir.dir.as_deref(),
        &agent_dir,
        &cwd,
        home.as_deref(),
    );
    let mut notices = Vec::new();
    if let Some(ignored) = &setting_dir.ignored_project_dir
        && args.session_dir.is_none()
        && env_dir.is_none()
    {
        notices.push(format!(
            "Warning: the project's sessionDir setting (\"{ignored}\") is not used because the project is not trusted; this session is stored in {}. Trust the project (--approve, or /trust and a restart) to use it.",
            location.dir.display()
        ));
    }
    let filter = location.filter_by_cwd.then_some(cwd.as_path());
    let target = if args.no_session {
        SessionTarget::InMemory
    } else if let Some(source) = &args.fork {
        SessionTarget::Fork {
            source: find_session(source, &location, &cwd, &agent_dir)?,
            dir: location.dir.clone(),
            session_id: args.session_id.clone(),
        }
    } else if let Some(value) = &args.session {
        let path = find_session(value, &location, &cwd, &agent_dir)?;
        if !looks_like_path(value) && path.parent() != Some(location.dir.as_path()) {
            bail!(
                "Session '{value}' belongs to another project ({}). Use --fork {value} to continue it here.",
                path.display()
            );
        }
        SessionTarget::Open(path)
    } else if args.resume && picker {
        SessionTarget::New {
            dir: location.dir.clone(),
            session_id: None,
        }
    } else if args.resume {
        bail!(
            "--resume needs the interactive session picker, which is not available yet; use --continue or --session <id>"
        );
    } else if args.continue_session {
        match list::most_recent_session(&location.dir, filter) {
            Some(path) => SessionTarget::Open(path),
            None => SessionTarget::New {
                dir: location.dir.clone(),
                session_id: None,
            },
        }
    } else if let Some(id) = &args.session_id {
        match list::find_session(&location.dir, filter, id) {
            Some(path)
                if knightcode_session::load::read_header(&path)
                    .ok()
                    .flatten()
                    .is_some_and(|h| &h.id == id) =>
            {
                SessionTarget::Open(path)
            }
            _ => SessionTarget::New {
                dir: location.dir.clone(),
                session_id: Some(id.clone()),
            },
        }
    } else {
        SessionTarget::New {
            dir: location.dir.clone(),
            session_id: None,
        }
    };
    let mut setup = SessionSetup::new(cwd, agent_dir, target);
    setup.notices = notices;
    setup.home = home;
    setup.provider = args.provider.clone();
    setup.model = args.model.clone();
    setup.thinking = args.thinking;
    setup.api_key = args.api_key.clone();
    setup.tools = ToolSelection {
        allow: args.tools.clone(),
        exclude: args.exclude_tools.clone().unwrap_or_default(),
        no_builtin: args.no_builtin_tools,
        no_tools: args.no_tools,
    };
    setup.system_prompt = args.system_prompt.clone();
    setup.append_system_prompt = args.append_system_prompt.clone();
    setup.no_context_files = args.no_context_files;
    setup.resources = knightcode_runtime::resources::ResourceFlags {
        skills: args.skills.clone(),
        no_skills: args.no_skills,
        prompt_templates: args.prompt_templates.clone(),
        no_prompt_templates: args.no_prompt_templates,
    };
    setup.approve = args.project_trust;
    // The interactive UI owns the terminal: npm's and git's output stay off it.
    setup.package_installs = if picker {
        knightcode_runtime::project_packages::InstallOutput::Notices
    } else {
        knightcode_runtime::project_packages::InstallOutput::Stderr
    };
    setup.name = args.name.clone();
    setup.no_mcp = args.no_mcp;
    setup.sandbox = knightcode_runtime::sandbox::SandboxRequest {
        mode: args.sandbox,
        launcher: sandbox_launcher(),
    };
    setup.models = args.models.clone();
    // The interactive mode opens without a model and says how to get one (a first run);
    // the other modes have no one to tell, so they stop with that advice.
    setup.start_without_model = picker;
    setup.extensions = knightcode_runtime::ExtensionSources {
        cli: args.extensions.clone(),
        no_extensions: args.no_extensions,
        plan_argument: args
            .plan_argument
            .and_then(|index| args.messages.get(index).cloned()),
        flags: args
            .extension_flags
            .iter()
            // Our own options written wrongly (`--model=x`) got their own warning.
            .filter(|(name, _)| crate::help::long_option_takes_value(name).is_none())
            .map(|(name, value)| {
                let value = match value {
                    crate::args::FlagValue::Present => serde_json::Value::Bool(true),
                    crate::args::FlagValue::Value(v) => serde_json::Value::String(v.clone()),
                };
                (name.clone(), value)
            })
            // `--plan` is plan mode's, whoever provides it (the built-in or an extension).
            .chain(
                args.plan
                    .then(|| ("plan".to_owned(), serde_json::Value::Bool(true))),
            )
            .collect(),
        mode: match (picker, args.mode) {
            (true, _) => "tui",
            (_, Some(crate::args::OutputMode::Rpc)) => "rpc",
            (_, Some(crate::args::OutputMode::Json)) => "json",
            _ => "print",
        }
        .to_owned(),
    };
    Ok((setup, location))
}

/// The binary sandboxed commands start through: `knightcode-sandbox` installed beside this
/// one (small, so quick to start), else this binary's own `__sandbox-exec`.
fn sandbox_launcher() -> Option<std::path::PathBuf> {
    let this = std::env::current_exe().ok()?;
    let small = this.with_file_name("knightcode-sandbox");
    Some(if small.is_file() { small } else { this })
}
