//! Skills, prompt templates and themes for a session (`knightcode-resources` does the
//! reading): which paths to load from settings, flags and trust, and the commands they add.

use std::path::Path;

use knightcode_protocol::rpc::CommandSource;
use knightcode_protocol::rpc::SlashCommand;
use knightcode_protocol::rpc::SourceInfo;
use knightcode_resources::DiagnosticKind;
use knightcode_resources::ExtraLists;
use knightcode_resources::ResourceConfig;
use knightcode_resources::ResourceDiagnostic;
pub use knightcode_resources::Resources;
use knightcode_resources::loader::SettingsLists;
pub use knightcode_resources::themes;

use crate::settings::Settings;

/// The resource flags of a run (`--skill`, `--no-skills`, `--prompt-template`,
/// `--no-prompt-templates`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceFlags {
    pub skills: Vec<String>,
    pub no_skills: bool,
    pub prompt_templates: Vec<String>,
    pub no_prompt_templates: bool,
}

/// Resource paths that come with extensions rather than settings or folders (see
/// `extensions::resources`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionResources {
    /// The skills, templates and themes of `-e` folders that are packages: ahead of all.
    pub packages: ExtraLists,
    /// What extensions returned from `resources_discover`: after all.
    pub discovered: ExtraLists,
}

/// Loads the skills and templates of a session in `cwd`. Project folders and project
/// settings count only when `trusted` (the settings are already loaded that way).
pub fn load(
    flags: &ResourceFlags,
    settings: &Settings,
    cwd: &Path,
    agent_dir: &Path,
    home: Option<&Path>,
    trusted: bool,
    extra: &ExtensionResources,
) -> Resources {
    let packages = knightcode_packages::installed_resources(
        &knightcode_packages::Layout {
            agent_dir: agent_dir.to_path_buf(),
            cwd: cwd.to_path_buf(),
            home: home.map(Path::to_path_buf),
        },
        trusted,
    );
    // Installed packages' folders follow the scope's own settings entries, as absolute
    // paths (the loader takes them like any settings entry).
    let lists = |project: bool| {
        let mut lists = SettingsLists {
            skills: settings.layer_strings("skills", project),
            prompts: settings.layer_strings("prompts", project),
        };
        let scope = if project {
            knightcode_packages::Scope::Project
        } else {
            knightcode_packages::Scope::User
        };
        let text = |p: &std::path::PathBuf| p.to_string_lossy().into_owned();
        for (_, found) in packages.iter().filter(|(s, _)| *s == scope) {
            lists.skills.extend(found.skills.iter().map(text));
            lists.prompts.extend(found.prompts.iter().map(text));
        }
        lists
    };
    Resources::load(&ResourceConfig {
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        home: home.map(Path::to_path_buf),
        trusted,
        user: lists(false),
        project: if trusted {
            lists(true)
        } else {
            SettingsLists::default()
        },
        cli_skills: flags.skills.clone(),
        no_skills: flags.no_skills,
        cli_prompts: flags.prompt_templates.clone(),
        no_prompt_templates: flags.no_prompt_templates,
        packages: extra.packages.clone(),
        extensions: extra.discovered.clone(),
    })
}

/// The theme flags of an interactive run (`--theme`, `--no-themes`, `--use-theme`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThemeFlags {
    pub paths: Vec<String>,
    pub no_themes: bool,
    pub use_theme: Option<String>,
    /// Not flags: the theme paths of `-e` packages and of extensions' `resources_discover`
    /// (`Resources::package_themes`, `Resources::extension_themes`).
    pub packages: Vec<std::path::PathBuf>,
    pub extensions: Vec<std::path::PathBuf>,
}

/// The themes of a session in `cwd` and the one to start with: `--use-theme`, else the
/// `theme` setting, else `system`. The warnings are the loading problems and an unknown
/// name's fallback to dark.
pub fn load_themes(
    flags: &ThemeFlags,
    settings: &Settings,
    cwd: &Path,
    agent_dir: &Path,
    home: Option<&Path>,
    trusted: bool,
    appearance: themes::Appearance,
) -> (themes::Themes, themes::ThemeFile, Vec<String>) {
    // Installed packages' themes follow the scope's own settings entries (as in `load`).
    let packages = knightcode_packages::installed_resources(
        &knightcode_packages::Layout {
            agent_dir: agent_dir.to_path_buf(),
            cwd: cwd.to_path_buf(),
            home: home.map(Path::to_path_buf),
        },
        trusted,
    );
    let entries = |project: bool| {
        let scope = if project {
            knightcode_packages::Scope::Project
        } else {
            knightcode_packages::Scope::User
        };
        let mut list = settings.layer_strings("themes", project);
        for (_, found) in packages.iter().filter(|(s, _)| *s == scope) {
            list.extend(
                found
                    .themes
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned()),
            );
        }
        list
    };
    let loaded = themes::Themes::load(&themes::ThemeConfig {
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        home: home.map(Path::to_path_buf),
        trusted,
        user_settings: entries(false),
        project_settings: if trusted { entries(true) } else { Vec::new() },
        cli: flags.paths.clone(),
        no_themes: flags.no_themes,
        packages: flags.packages.clone(),
        extensions: flags.extensions.clone(),
    });
    let setting = settings
        .get("theme")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    let requested = flags.use_theme.clone().or(setting);
    let (theme, fallback) = loaded.select(requested.as_deref(), appearance);
    let mut warnings: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    warnings.extend(fallback);
    (loaded, theme, warnings)
}

/// Where extension commands come from, for their `sourceInfo`.
#[derive(Debug, Default)]
pub struct CommandSources {
    pub host: Option<std::sync::Arc<knightcode_ext::ExtensionHost>>,
    pub agent_dir: std::path::PathBuf,
    pub cwd: std::path::PathBuf,
}

impl CommandSources {
    /// The commands extensions registered, each with where its extension was found: a
    /// discovered folder (`auto`, user or project), else the command line (`cli`).
    pub fn extension_commands(&self) -> Vec<SlashCommand> {
        let Some(host) = &self.host else {
            return Vec::new();
        };
        let user = self.agent_dir.join("extensions");
        let project = self.cwd.join(".knightcode").join("extensions");
        host.registry()
            .commands
            .into_iter()
            .map(|command| {
                let path = Path::new(&command.extension_path);
                let (source, scope, base_dir) = if path.starts_with(&user) {
                    ("auto", "user", Some(self.agent_dir.clone()))
                } else if path.starts_with(&project) {
                    ("auto", "project", Some(self.cwd.join(".knightcode")))
                } else {
                    ("cli", "temporary", None)
                };
                let base_dir = base_dir.map(|dir| dir.to_string_lossy().into_owned());
                SlashCommand {
                    name: command.name,
                    description: command.description,
                    source: CommandSource::Extension,
                    source_info: SourceInfo {
                        path: command.extension_path,
                        source: source.to_owned(),
                        scope: scope.to_owned(),
                        origin: "top-level".to_owned(),
                        base_dir,
                        extra: Default::default(),
                    },
                    extra: Default::default(),
                }
            })
            .collect()
    }
}

/// `get_commands` minus extension commands: prompt templates, then skills as `skill:name`.
pub fn commands(resources: &Resources) -> Vec<SlashCommand> {
    let templates = resources.templates.iter().map(|t| SlashCommand {
        name: t.name.clone(),
        description: Some(t.description.clone()),
        source: CommandSource::Prompt,
        source_info: source_info(&t.source),
        extra: Default::default(),
    });
    let skills = resources.skills.iter().map(|s| SlashCommand {
        name: format!("skill:{}", s.name),
        description: Some(s.description.clone()),
        source: CommandSource::Skill,
        source_info: source_info(&s.source),
        extra: Default::default(),
    });
    templates.chain(skills).collect()
}

fn source_info(info: &knightcode_resources::SourceInfo) -> SourceInfo {
    SourceInfo {
        path: info.path.to_string_lossy().into_owned(),
        source: info.source.clone(),
        scope: info.scope.clone(),
        origin: info.origin.clone(),
        base_dir: info
            .base_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        extra: Default::default(),
    }
}

/// A resource command as the interactive `/` completion shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionCommand {
    pub name: String,
    pub hint: Option<String>,
    /// With the reference's scope tag in front (`[u]`, `[p]`, `[t]`).
    pub description: String,
}

/// The commands `/` completion offers after the built-ins: prompt templates, then (unless
/// `enableSkillCommands` is off) `skill:name` for each skill.
pub fn completion_commands(resources: &Resources, skill_commands: bool) -> Vec<CompletionCommand> {
    let tagged = |description: &str, info: &knightcode_resources::SourceInfo| {
        let tag = match info.scope.as_str() {
            "user" => "u",
            "project" => "p",
            _ => "t",
        };
        if description.is_empty() {
            format!("[{tag}]")
        } else {
            format!("[{tag}] {description}")
        }
    };
    let mut out: Vec<CompletionCommand> = resources
        .templates
        .iter()
        .map(|t| CompletionCommand {
            name: t.name.clone(),
            hint: t.argument_hint.clone(),
            description: tagged(&t.description, &t.source),
        })
        .collect();
    if skill_commands {
        out.extend(resources.skills.iter().map(|s| CompletionCommand {
            name: format!("skill:{}", s.name),
            hint: None,
            description: tagged(&s.description, &s.source),
        }));
    }
    out
}

/// The start-up report of resource problems, grouped as the reference does: collisions by
/// name (winner, then the skipped ones), then each warning under its path. Empty when
/// nothing went wrong.
pub fn report(resources: &Resources) -> Vec<String> {
    let mut out = Vec::new();
    for (title, diagnostics) in [
        ("[Skill conflicts]", &resources.skill_diagnostics),
        ("[Prompt conflicts]", &resources.template_diagnostics),
    ] {
        if diagnostics.is_empty() {
            continue;
        }
        out.push(title.to_owned());
        out.extend(format_diagnostics(diagnostics));
    }
    out
}

fn format_diagnostics(diagnostics: &[ResourceDiagnostic]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for d in diagnostics {
        if let DiagnosticKind::Collision { name, .. } = &d.kind
            && !names.contains(&name.as_str())
        {
            names.push(name);
        }
    }
    for name in names {
        let group: Vec<_> = diagnostics
            .iter()
            .filter_map(|d| match &d.kind {
                DiagnosticKind::Collision {
                    name: n,
                    winner_path,
                    loser_path,
                    ..
                } if n == name => Some((winner_path, loser_path)),
                _ => None,
            })
            .collect();
        lines.push(format!("  \"{name}\" collision:"));
        if let Some((winner, _)) = group.first() {
            lines.push(format!("    ✓ {}", winner.display()));
        }
        for (_, loser) in group {
            lines.push(format!("    ✗ {} (skipped)", loser.display()));
        }
    }
    for d in diagnostics
        .iter()
        .filter(|d| !matches!(d.kind, DiagnosticKind::Collision { .. }))
    {
        match &d.path {
            Some(path) => {
                lines.push(format!("  {}", path.display()));
                lines.push(format!("    {}", d.message));
            }
            None => lines.push(format!("  {}", d.message)),
        }
    }
    lines
}
