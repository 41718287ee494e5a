//! `knightcode install|remove|uninstall|update|list|config`: the package commands, with the
//! reference's options, progress lines and messages (`knightcode-packages` does the work).

use std::io::Write;
use std::path::Path;

use knightcode_packages::Layout;
use knightcode_packages::Manager;
use knightcode_packages::Scope;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Install,
    Remove,
    Update,
    List,
}

impl Command {
    fn usage(self) -> &'static str {
        match self {
            Command::Install => "knightcode install <source> [-l]",
            Command::Remove => "knightcode remove <source> [-l]",
            Command::Update => {
                "knightcode update [source|self|knightcode] [--self] [--extensions] [--extension <source>] [--force]"
            }
            Command::List => "knightcode list",
        }
    }
}

/// What `update` updates.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UpdateTarget {
    All,
    SelfOnly,
    Packages(Option<String>),
}

#[derive(Debug, Default)]
struct Options {
    source: Option<String>,
    local: bool,
    help: bool,
    self_flag: bool,
    extensions: bool,
    extension: Option<String>,
    problem: Option<String>,
}

fn parse(command: Command, rest: &[String]) -> Options {
    let mut o = Options::default();
    let problem = |o: &mut Options, text: String| {
        o.problem.get_or_insert(text);
    };
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        let update = command == Command::Update;
        match arg {
            "-h" | "--help" => o.help = true,
            "-l" | "--local" if matches!(command, Command::Install | Command::Remove) => {
                o.local = true;
            }
            "--self" if update => o.self_flag = true,
            "--extensions" if update => o.extensions = true,
            "--force" if update => {}
            "--extension" if update => match rest.get(i + 1) {
                Some(value) if !value.starts_with('-') => {
                    if o.extension.is_some() {
                        problem(&mut o, "--extension can only be provided once".into());
                    } else {
                        o.extension = Some(value.clone());
                    }
                    i += 1;
                }
                _ => problem(&mut o, format!("Missing value for {arg}.")),
            },
            _ if arg.starts_with('-') => problem(
                &mut o,
                format!(
                    "Unknown option {arg} for \"{}\".",
                    command.usage().split(' ').nth(1).unwrap_or_default()
                ),
            ),
            _ if o.source.is_none() => o.source = Some(arg.to_owned()),
            _ => problem(&mut o, format!("Unexpected argument {arg}.")),
        }
        i += 1;
    }
    o
}

fn update_target(o: &mut Options) -> UpdateTarget {
    if let Some(source) = o.extension.clone() {
        if o.self_flag || o.extensions {
            o.problem
                .get_or_insert("--extension cannot be combined with --self or --extensions".into());
        }
        if o.source.is_some() {
            o.problem
                .get_or_insert("--extension cannot be combined with a positional source".into());
        }
        return UpdateTarget::Packages(Some(source));
    }
    match o.source.clone() {
        Some(s) if s == "self" || s == "knightcode" => {
            if o.extensions {
                UpdateTarget::All
            } else {
                UpdateTarget::SelfOnly
            }
        }
        Some(s) => {
            if o.extensions || o.self_flag {
                o.problem.get_or_insert(
                    "positional update targets cannot be combined with --self or --extensions"
                        .into(),
                );
            }
            UpdateTarget::Packages(Some(s))
        }
        None => match (o.self_flag, o.extensions) {
            (true, false) => UpdateTarget::SelfOnly,
            (false, true) => UpdateTarget::Packages(None),
            _ => UpdateTarget::All,
        },
    }
}

/// Runs the package subcommand `argv[0]` (one of `args::SUBCOMMANDS`' package names);
/// `None` when it is not one. Returns the exit status.
pub fn run(
    argv: &[String],
    layout: &Layout,
    npm_command: Vec<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Option<u8> {
    let (name, rest) = argv.split_first()?;
    let command = match name.as_str() {
        "install" => Command::Install,
        "remove" | "uninstall" => Command::Remove,
        "update" => Command::Update,
        "list" => Command::List,
        "config" => return Some(config(rest, layout, out, err)),
        _ => return None,
    };
    let mut o = parse(command, rest);
    let target = (command == Command::Update).then(|| update_target(&mut o));
    if o.help {
        let _ = writeln!(out, "Usage:\n  {}", command.usage());
        return Some(0);
    }
    if let Some(problem) = &o.problem {
        let _ = writeln!(err, "{problem}");
        let _ = writeln!(err, "Usage: {}", command.usage());
        return Some(1);
    }
    let scope = if o.local { Scope::Project } else { Scope::User };
    let needs_source = matches!(command, Command::Install | Command::Remove);
    let source = match (&o.source, needs_source) {
        (None, true) => {
            let _ = writeln!(err, "Missing {} source.", name_of(command));
            let _ = writeln!(err, "Usage: {}", command.usage());
            return Some(1);
        }
        (source, _) => source.clone().unwrap_or_default(),
    };
    if command == Command::List {
        return Some(list(layout, out, err));
    }
    // Progress lines go out as they happen: npm and git print in between.
    let mut print = |line: &str| {
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    let mut manager = Manager {
        layout: layout.clone(),
        npm_command,
        progress: &mut print,
        env: Vec::new(),
        capture: false,
    };
    let result = match command {
        Command::Install => manager
            .install_and_persist(&source, scope)
            .map(|()| Some(format!("Installed {source}"))),
        Command::Remove => match manager.remove_and_persist(&source, scope) {
            Ok(true) => Ok(Some(format!("Removed {source}"))),
            Ok(false) => {
                let _ = writeln!(err, "No matching package found for {source}");
                return Some(1);
            }
            Err(e) => Err(e),
        },
        _ => {
            let target = target.unwrap_or(UpdateTarget::All);
            let packages = match &target {
                UpdateTarget::SelfOnly => None,
                UpdateTarget::All => Some(None),
                UpdateTarget::Packages(only) => Some(only.clone()),
            };
            let updated = match packages {
                Some(only) => manager.update(only.as_deref()).map(|()| {
                    Some(match only {
                        Some(s) => format!("Updated {s}"),
                        None => "Updated packages".to_owned(),
                    })
                }),
                None => Ok(None),
            };
            drop(manager);
            if let Ok(Some(line)) = &updated {
                let _ = writeln!(out, "{line}");
            }
            return Some(match updated {
                Err(e) => {
                    let _ = writeln!(err, "Error: {e}");
                    1
                }
                Ok(_) if matches!(target, UpdateTarget::Packages(_)) => 0,
                Ok(_) => self_update_unavailable(err),
            });
        }
    };
    drop(manager);
    match result {
        Ok(line) => {
            if let Some(line) = line {
                let _ = writeln!(out, "{line}");
            }
            Some(0)
        }
        Err(e) => {
            let _ = writeln!(err, "Error: {e}");
            Some(1)
        }
    }
}

/// `knightcode config [-l] [--approve|--no-approve]`: the resource screen. The project's
/// files are read only when the project is trusted (`spec/trust-security.md`; no prompt
/// here: an undecided project counts as untrusted, and the screen says how to trust it).
fn config(rest: &[String], layout: &Layout, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let usage = "Usage: knightcode config [-l|--local] [--approve|--no-approve]";
    let mut project = false;
    let mut approve = None;
    for arg in rest {
        match arg.as_str() {
            "-l" | "--local" => project = true,
            "-a" | "--approve" => approve = Some(true),
            "-na" | "--no-approve" => approve = Some(false),
            "-h" | "--help" => {
                let _ = writeln!(out, "{usage}");
                return 0;
            }
            other => {
                let _ = writeln!(err, "Unknown option {other} for \"config\".");
                let _ = writeln!(err, "{usage}");
                return 1;
            }
        }
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdin())
        || !std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        let _ = writeln!(
            err,
            "Error: knightcode config needs a terminal; edit the settings files instead (docs/packages.md)."
        );
        return 1;
    }
    let global =
        knightcode_runtime::settings::Settings::load(&layout.agent_dir, &layout.cwd, false);
    let store = knightcode_runtime::trust::TrustStore::load(&layout.agent_dir).unwrap_or_default();
    let trusted = knightcode_runtime::trust::resolve_non_interactive(
        &layout.cwd,
        layout.home.as_deref(),
        approve,
        &store,
        global.values().default_project_trust,
    )
    .trusted;
    let options = knightcode_interactive::config_screen::ConfigOptions {
        layout: layout.clone(),
        trusted,
        project,
    };
    match knightcode_interactive::config_screen::run(options) {
        Ok(code) => code,
        Err(error) => {
            let _ = writeln!(err, "Error: {error}");
            1
        }
    }
}

fn name_of(command: Command) -> &'static str {
    match command {
        Command::Install => "install",
        Command::Remove => "remove",
        Command::Update => "update",
        Command::List => "list",
    }
}

/// This binary is built and installed with cargo; it does not replace itself.
fn self_update_unavailable(err: &mut dyn Write) -> u8 {
    let _ = writeln!(
        err,
        "error: knightcode cannot self-update this installation."
    );
    let _ = writeln!(
        err,
        "This build is installed with cargo. Update it from its source checkout: git pull, then cargo install --locked --path crates/cli"
    );
    if let Ok(exe) = std::env::current_exe() {
        let _ = writeln!(err);
        let _ = writeln!(err, "Location of knightcode executable: {}", exe.display());
    }
    1
}

fn list(layout: &Layout, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let configured = match knightcode_packages::list(layout) {
        Ok(configured) => configured,
        Err(e) => {
            let _ = writeln!(err, "Error: {e}");
            return 1;
        }
    };
    if configured.is_empty() {
        let _ = writeln!(out, "No packages installed.");
        return 0;
    }
    let mut first = true;
    for (scope, title) in [
        (Scope::User, "User packages:"),
        (Scope::Project, "Project packages:"),
    ] {
        let of_scope: Vec<_> = configured.iter().filter(|c| c.scope == scope).collect();
        if of_scope.is_empty() {
            continue;
        }
        if !first {
            let _ = writeln!(out);
        }
        first = false;
        let _ = writeln!(out, "{title}");
        for pkg in of_scope {
            let filtered = if pkg.filtered { " (filtered)" } else { "" };
            let _ = writeln!(out, "  {}{filtered}", pkg.source);
            if let Some(path) = &pkg.installed_path {
                let _ = writeln!(out, "    {}", path.display());
            }
        }
    }
    0
}

/// The `npmCommand` of the user's settings file (a project's settings cannot choose which
/// program we run); empty when unset or not a list of strings.
pub fn npm_command(agent_dir: &Path) -> Vec<String> {
    let settings = knightcode_runtime::settings::Settings::load(agent_dir, agent_dir, false);
    match settings.get("npmCommand") {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}
