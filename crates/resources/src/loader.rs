//! Every location of skills and prompt templates, in the reference's precedence: project
//! settings entries, project folders (trusted projects only), user settings entries, user
//! folders, then the `--skill` / `--prompt-template` paths. The first resource of a name
//! wins; a later one is a collision diagnostic.

use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;

use globset::GlobBuilder;

use crate::DiagnosticKind;
use crate::ResourceDiagnostic;
use crate::SourceInfo;
use crate::paths;
use crate::paths::Scanned;
use crate::skills;
use crate::skills::Skill;
use crate::templates;
use crate::templates::DirScan;
use crate::templates::PromptTemplate;

/// The `skills` and `prompts` lists of one settings file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsLists {
    pub skills: Vec<String>,
    pub prompts: Vec<String>,
}

/// What to load.
#[derive(Debug, Clone, Default)]
pub struct ResourceConfig {
    pub cwd: PathBuf,
    /// `~/.knightcode/agent`: `skills/`, `prompts/`, and what user settings entries resolve
    /// against.
    pub agent_dir: PathBuf,
    /// For `~` in paths and `~/.agents/skills`.
    pub home: Option<PathBuf>,
    /// Project resources (`.knightcode/skills`, `.knightcode/prompts`, `.agents/skills` in
    /// the folder and its parents) load only in a trusted project.
    pub trusted: bool,
    /// The user settings file's lists.
    pub user: SettingsLists,
    /// The project settings file's lists (empty when the project is not trusted).
    pub project: SettingsLists,
    /// `--skill` paths, and `--no-skills` (which keeps them).
    pub cli_skills: Vec<String>,
    pub no_skills: bool,
    /// `--prompt-template` paths, and `--no-prompt-templates` (which keeps them).
    pub cli_prompts: Vec<String>,
    pub no_prompt_templates: bool,
    /// The skill and template paths of `-e` packages: ahead of every other location (the
    /// reference resolves them first), kept by `--no-skills` / `--no-prompt-templates`.
    pub packages: ExtraLists,
    /// The paths extensions returned from `resources_discover`: after every other
    /// location, and kept by the `--no-*` flags too.
    pub extensions: ExtraLists,
}

/// Skill, template and theme paths from outside the settings and the discovered folders.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraLists {
    pub skills: Vec<ExtraPath>,
    pub prompts: Vec<ExtraPath>,
    /// Not read here (themes are the interface's): carried to [`Resources`] for it.
    pub themes: Vec<PathBuf>,
}

/// A file or folder of resources and where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraPath {
    /// Absolute, or relative to the working directory (`~` allowed).
    pub path: PathBuf,
    /// The source info its resources carry (each with its own file as `path`).
    pub source: SourceInfo,
}

impl ExtraPath {
    fn info(&self, file: &Path) -> SourceInfo {
        SourceInfo {
            path: file.to_path_buf(),
            ..self.source.clone()
        }
    }
}

/// The loaded skills and templates, and what went wrong on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
    pub skill_diagnostics: Vec<ResourceDiagnostic>,
    pub template_diagnostics: Vec<ResourceDiagnostic>,
    /// The theme paths of `-e` packages and of extensions (`ResourceConfig`'s `themes`),
    /// for the interface to load with its own.
    pub package_themes: Vec<PathBuf>,
    pub extension_themes: Vec<PathBuf>,
}

/// A resolved resource path and where it came from.
struct Found {
    path: PathBuf,
    /// The real path (what makes two paths one file).
    real: PathBuf,
    source: Provenance,
    enabled: bool,
}

#[derive(Clone)]
struct Provenance {
    source: &'static str,
    scope: &'static str,
    base_dir: Option<PathBuf>,
}

impl Provenance {
    fn info(&self, path: &Path) -> SourceInfo {
        SourceInfo {
            path: path.to_path_buf(),
            source: self.source.to_owned(),
            scope: self.scope.to_owned(),
            origin: "top-level".to_owned(),
            base_dir: self.base_dir.clone(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skills,
    Prompts,
}

impl Resources {
    /// Loads everything `config` names.
    /// Skills and templates are read side by side (two threads): start-up waits for the
    /// slower of the two, not their sum.
    pub fn load(config: &ResourceConfig) -> Self {
        let mut skills = Self::default();
        let mut templates = Self::default();
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| templates.load_templates(config));
            skills.load_skills(config);
            // A panic while reading templates leaves them empty rather than taking the
            // session down.
            let _ = worker.join();
        });
        Self {
            skills: skills.skills,
            templates: templates.templates,
            skill_diagnostics: skills.skill_diagnostics,
            template_diagnostics: templates.template_diagnostics,
            package_themes: config.packages.themes.clone(),
            extension_themes: config.extensions.themes.clone(),
        }
    }

    /// The skill called `name`.
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// Every diagnostic, skills first.
    pub fn diagnostics(&self) -> impl Iterator<Item = &ResourceDiagnostic> {
        self.skill_diagnostics
            .iter()
            .chain(&self.template_diagnostics)
    }

    /// A prompt as it becomes a user message: `/skill:name args` becomes the skill's
    /// block, then `/template args` its expanded body; anything else stays as typed. A
    /// skill file that can no longer be read leaves the text as it was and says why.
    pub fn expand(&self, text: &str) -> Expansion {
        let mut error = None;
        let mut expanded = match skills::parse_command(text)
            .and_then(|(name, args)| Some((self.skill(name)?, args)))
        {
            Some((skill, args)) => match skills::invocation_text(skill, args) {
                Ok(text) => text,
                Err(e) => {
                    error = Some(format!(
                        "could not read skill {}: {e}",
                        skill.file_path.display()
                    ));
                    text.to_owned()
                }
            },
            None => text.to_owned(),
        };
        if let Some(text) = templates::expand(&expanded, &self.templates) {
            expanded = text;
        }
        Expansion {
            text: expanded,
            error,
        }
    }

    fn load_skills(&mut self, config: &ResourceConfig) {
        let mut found = FoundList::default();
        if !config.no_skills {
            discover(config, Kind::Skills, &mut found);
        }
        // Each with its file's real path.
        let mut loaded: Vec<(Skill, PathBuf)> = Vec::new();
        let mut diagnostics = Vec::new();
        extra_skills(
            config,
            &config.packages.skills,
            &mut loaded,
            &mut diagnostics,
        );
        for entry in found.items.iter().filter(|f| f.enabled) {
            let (skill, problems) = skills::load_file(&entry.path, entry.source.info(&entry.path));
            diagnostics.extend(problems);
            loaded.extend(skill.map(|s| (s, entry.real.clone())));
        }
        for raw in &config.cli_skills {
            let path = paths::resolve(raw, &config.cwd, config.home.as_deref());
            let Ok(meta) = std::fs::metadata(&path) else {
                diagnostics.push(ResourceDiagnostic::warning(
                    "skill path does not exist",
                    path,
                ));
                continue;
            };
            if meta.is_dir() {
                for file in skills::scan(&path, true) {
                    let source = cli_skill_source(&file.path);
                    let (skill, problems) = skills::load_file(&file.path, source);
                    diagnostics.extend(problems);
                    loaded.extend(skill.map(|s| (s, file.real)));
                }
            } else if meta.is_file() && path.to_string_lossy().ends_with(".md") {
                let (skill, problems) = skills::load_file(&path, cli_skill_source(&path));
                diagnostics.extend(problems);
                loaded.extend(skill.map(|s| (s, paths::canonical(&path))));
            } else {
                diagnostics.push(ResourceDiagnostic::warning(
                    "skill path is not a markdown file",
                    path,
                ));
            }
        }
        extra_skills(
            config,
            &config.extensions.skills,
            &mut loaded,
            &mut diagnostics,
        );
        let mut seen_files: HashSet<PathBuf> = HashSet::new();
        let mut collisions = Vec::new();
        for (skill, real) in loaded {
            if seen_files.contains(&real) {
                continue;
            }
            if let Some(winner) = self.skills.iter().find(|s| s.name == skill.name) {
                collisions.push(collision(
                    "skill",
                    &skill.name,
                    &winner.file_path,
                    &skill.file_path,
                    format!("name \"{}\" collision", skill.name),
                ));
                continue;
            }
            seen_files.insert(real);
            self.skills.push(skill);
        }
        diagnostics.extend(collisions);
        self.skill_diagnostics = diagnostics;
    }

    fn load_templates(&mut self, config: &ResourceConfig) {
        let mut found = FoundList::default();
        if !config.no_prompt_templates {
            discover(config, Kind::Prompts, &mut found);
        }
        let mut loaded = extra_templates(config, &config.packages.prompts, DirScan::Recursive);
        loaded.extend(
            found
                .items
                .iter()
                .filter(|f| f.enabled)
                .filter_map(|f| templates::load_file(&f.path, f.source.info(&f.path))),
        );
        let mut diagnostics = Vec::new();
        for raw in &config.cli_prompts {
            let path = paths::resolve(raw, &config.cwd, config.home.as_deref());
            let Ok(meta) = std::fs::metadata(&path) else {
                diagnostics.push(ResourceDiagnostic::error(
                    "Prompt template path does not exist",
                    path,
                ));
                continue;
            };
            let source = |file: &Path, base: &Path| SourceInfo {
                path: file.to_path_buf(),
                source: "local".to_owned(),
                scope: "temporary".to_owned(),
                origin: "top-level".to_owned(),
                base_dir: Some(base.to_path_buf()),
            };
            if meta.is_dir() {
                for file in templates::scan(&path, DirScan::Plain) {
                    loaded.extend(templates::load_file(&file.path, source(&file.path, &path)));
                }
            } else if meta.is_file() && path.to_string_lossy().ends_with(".md") {
                let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
                loaded.extend(templates::load_file(&path, source(&path, &base)));
            }
        }
        loaded.extend(extra_templates(
            config,
            &config.extensions.prompts,
            DirScan::Plain,
        ));
        for template in loaded {
            if let Some(winner) = self.templates.iter().find(|t| t.name == template.name) {
                diagnostics.push(collision(
                    "prompt",
                    &template.name,
                    &winner.file_path,
                    &template.file_path,
                    format!("name \"/{}\" collision", template.name),
                ));
                continue;
            }
            self.templates.push(template);
        }
        self.template_diagnostics = diagnostics;
    }
}

/// What [`Resources::expand`] made of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    pub text: String,
    /// A skill that could not be read (the text is then left as typed).
    pub error: Option<String>,
}

fn collision(
    resource_type: &'static str,
    name: &str,
    winner: &Path,
    loser: &Path,
    message: String,
) -> ResourceDiagnostic {
    ResourceDiagnostic {
        kind: DiagnosticKind::Collision {
            resource_type,
            name: name.to_owned(),
            winner_path: winner.to_path_buf(),
            loser_path: loser.to_path_buf(),
        },
        message,
        path: Some(loser.to_path_buf()),
    }
}

/// The skills of `extra` paths (a folder is scanned like a `--skill` folder); a path that
/// does not exist is reported.
fn extra_skills(
    config: &ResourceConfig,
    extra: &[ExtraPath],
    loaded: &mut Vec<(Skill, PathBuf)>,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) {
    for entry in extra {
        let path = paths::resolve(
            &entry.path.to_string_lossy(),
            &config.cwd,
            config.home.as_deref(),
        );
        let files = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => skills::scan(&path, true),
            Ok(meta) if meta.is_file() => vec![Scanned::resolve(path)],
            _ => {
                diagnostics.push(ResourceDiagnostic::warning(
                    "skill path does not exist",
                    path,
                ));
                continue;
            }
        };
        for file in files {
            let (skill, problems) = skills::load_file(&file.path, entry.info(&file.path));
            diagnostics.extend(problems);
            loaded.extend(skill.map(|s| (s, file.real)));
        }
    }
}

/// The templates of `extra` paths, a folder listed as `how` says.
fn extra_templates(
    config: &ResourceConfig,
    extra: &[ExtraPath],
    how: DirScan,
) -> Vec<PromptTemplate> {
    let mut out = Vec::new();
    for entry in extra {
        let path = paths::resolve(
            &entry.path.to_string_lossy(),
            &config.cwd,
            config.home.as_deref(),
        );
        let files = if path.is_dir() {
            templates::scan(&path, how)
        } else if path.is_file() {
            vec![Scanned::resolve(path)]
        } else {
            continue;
        };
        out.extend(
            files
                .iter()
                .filter_map(|f| templates::load_file(&f.path, entry.info(&f.path))),
        );
    }
    out
}

/// A `--skill` path's skill: a local skill of this run only.
fn cli_skill_source(file: &Path) -> SourceInfo {
    SourceInfo {
        path: file.to_path_buf(),
        source: "local".to_owned(),
        scope: "temporary".to_owned(),
        origin: "top-level".to_owned(),
        base_dir: file.parent().map(Path::to_path_buf),
    }
}

/// The settings entries and discovered folders of one kind, in precedence order, each
/// real file once.
fn discover(config: &ResourceConfig, kind: Kind, found: &mut FoundList) {
    let project_base = config.cwd.join(".knightcode");
    let lists = |l: &SettingsLists| match kind {
        Kind::Skills => l.skills.clone(),
        Kind::Prompts => l.prompts.clone(),
    };
    let folder = match kind {
        Kind::Skills => "skills",
        Kind::Prompts => "prompts",
    };
    let add = |paths: Vec<Scanned>,
               source: &Provenance,
               overrides: &[String],
               base: &Path,
               found: &mut FoundList| {
        for file in paths {
            let enabled = enabled_by_overrides(&file.path, overrides, base);
            push(found, file, source.clone(), enabled);
        }
    };
    let local = |scope: &'static str| Provenance {
        source: "local",
        scope,
        base_dir: None,
    };
    let auto = |scope: &'static str, base: &Path| Provenance {
        source: "auto",
        scope,
        base_dir: Some(base.to_path_buf()),
    };
    let project_entries = lists(&config.project);
    let user_entries = lists(&config.user);
    // Settings entries first (project, then user); the discovered folders after them.
    if config.trusted {
        settings_entries(
            &project_entries,
            kind,
            &project_base,
            config,
            &local("project"),
            found,
        );
    }
    settings_entries(
        &user_entries,
        kind,
        &config.agent_dir,
        config,
        &local("user"),
        found,
    );
    if config.trusted {
        let mut paths = scan_folder(&project_base.join(folder), kind, true);
        if kind == Kind::Skills {
            let user_agents = config
                .home
                .as_ref()
                .map(|h| h.join(".agents").join("skills"));
            for dir in ancestor_agents_dirs(&config.cwd) {
                if Some(&dir) != user_agents.as_ref() {
                    paths.extend(skills::scan(&dir, false));
                }
            }
        }
        add(
            paths,
            &auto("project", &project_base),
            &project_entries,
            &project_base,
            found,
        );
    }
    let mut paths = scan_folder(&config.agent_dir.join(folder), kind, true);
    if kind == Kind::Skills
        && let Some(home) = &config.home
    {
        paths.extend(skills::scan(&home.join(".agents").join("skills"), false));
    }
    add(
        paths,
        &auto("user", &config.agent_dir),
        &user_entries,
        &config.agent_dir,
        found,
    );
    // Settings entries were added before discovered folders of the same scope, but the
    // reference ranks project above user across both: project entries, project folders,
    // user entries, user folders.
    found.items.sort_by_key(|f| rank(&f.source));
}

fn rank(source: &Provenance) -> u8 {
    let scope = if source.scope == "project" { 0 } else { 2 };
    scope + u8::from(source.source != "local")
}

/// Resource paths in the order found, each real file once.
#[derive(Default)]
struct FoundList {
    items: Vec<Found>,
    seen: HashSet<PathBuf>,
}

fn push(found: &mut FoundList, file: Scanned, source: Provenance, enabled: bool) {
    if !found.seen.insert(file.real.clone()) {
        return;
    }
    found.items.push(Found {
        path: file.path,
        real: file.real,
        source,
        enabled,
    });
}

fn scan_folder(dir: &Path, kind: Kind, discovered: bool) -> Vec<Scanned> {
    match kind {
        Kind::Skills => skills::scan(dir, true),
        Kind::Prompts => templates::scan(
            dir,
            if discovered {
                DirScan::Discovered
            } else {
                DirScan::Recursive
            },
        ),
    }
}

/// A settings list: plain entries are files or folders (relative to the settings file's
/// folder); `!glob` excludes, `+path` forces in, `-path` forces out, a bare glob narrows.
fn settings_entries(
    entries: &[String],
    kind: Kind,
    base: &Path,
    config: &ResourceConfig,
    source: &Provenance,
    found: &mut FoundList,
) {
    let (patterns, plain): (Vec<&String>, Vec<&String>) =
        entries.iter().partition(|e| is_pattern(e));
    let mut files = Vec::new();
    for entry in plain {
        let path = paths::resolve(entry, base, config.home.as_deref());
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => files.push(Scanned::resolve(path)),
            Ok(meta) if meta.is_dir() => files.extend(scan_folder(&path, kind, false)),
            _ => {}
        }
    }
    let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let enabled = apply_patterns(&paths, &patterns, base);
    for file in files {
        let on = enabled.contains(&file.path);
        push(found, file, source.clone(), on);
    }
}

pub(crate) fn is_pattern(entry: &str) -> bool {
    entry.starts_with('!')
        || entry.starts_with('+')
        || entry.starts_with('-')
        || entry.contains('*')
        || entry.contains('?')
}

pub(crate) fn apply_patterns(
    files: &[PathBuf],
    patterns: &[&String],
    base: &Path,
) -> HashSet<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for pattern in patterns {
        if let Some(p) = pattern.strip_prefix('+') {
            force_in.push(p.to_owned());
        } else if let Some(p) = pattern.strip_prefix('-') {
            force_out.push(p.to_owned());
        } else if let Some(p) = pattern.strip_prefix('!') {
            excludes.push(p.to_owned());
        } else {
            includes.push((*pattern).clone());
        }
    }
    let mut result: Vec<&PathBuf> = files
        .iter()
        .filter(|f| includes.is_empty() || matches_any(f, &includes, base))
        .filter(|f| !matches_any(f, &excludes, base))
        .collect();
    for file in files {
        if !result.contains(&file) && matches_exact(file, &force_in, base) {
            result.push(file);
        }
    }
    result
        .into_iter()
        .filter(|f| !matches_exact(f, &force_out, base))
        .cloned()
        .collect()
}

/// `!`, `+` and `-` entries of a settings list applied to a discovered file.
pub(crate) fn enabled_by_overrides(path: &Path, entries: &[String], base: &Path) -> bool {
    let with = |prefix: char| -> Vec<String> {
        entries
            .iter()
            .filter_map(|e| e.strip_prefix(prefix))
            .map(str::to_owned)
            .collect()
    };
    let mut enabled = !matches_any(path, &with('!'), base);
    if matches_exact(path, &with('+'), base) {
        enabled = true;
    }
    if matches_exact(path, &with('-'), base) {
        enabled = false;
    }
    enabled
}

/// The forms a pattern is tried against: the path relative to `base`, the file name, the
/// whole path; for a `SKILL.md` also its folder's.
fn candidates(path: &Path, base: &Path) -> Vec<String> {
    let rel = |p: &Path| crate::ignore_rules::posix(p.strip_prefix(base).unwrap_or(p));
    let mut out = vec![
        rel(path),
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        crate::ignore_rules::posix(path),
    ];
    if path.file_name().is_some_and(|n| n == "SKILL.md")
        && let Some(parent) = path.parent()
    {
        out.push(rel(parent));
        out.push(
            parent
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        out.push(crate::ignore_rules::posix(parent));
    }
    out
}

fn matches_any(path: &Path, patterns: &[String], base: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let forms = candidates(path, base);
    patterns.iter().any(|pattern| {
        GlobBuilder::new(&pattern.replace('\\', "/"))
            .literal_separator(true)
            .build()
            .map(|glob| {
                let matcher = glob.compile_matcher();
                forms.iter().any(|f| matcher.is_match(f))
            })
            .unwrap_or(false)
    })
}

fn matches_exact(path: &Path, patterns: &[String], base: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let forms = candidates(path, base);
    patterns.iter().any(|pattern| {
        let pattern = pattern
            .strip_prefix("./")
            .unwrap_or(pattern)
            .replace('\\', "/");
        // The file name alone is no exact match.
        forms
            .iter()
            .enumerate()
            .any(|(i, f)| i != 1 && i != 4 && *f == pattern)
    })
}

/// `.agents/skills` in `cwd` and each parent up to the git repository's root (or the
/// file system's root outside a repository).
fn ancestor_agents_dirs(cwd: &Path) -> Vec<PathBuf> {
    let start = paths::normalize(cwd);
    let repo_root = start
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf);
    let mut out = Vec::new();
    for dir in start.ancestors() {
        out.push(dir.join(".agents").join("skills"));
        if repo_root.as_deref() == Some(dir) {
            break;
        }
    }
    out
}
