//! Packages: bundles of extensions, skills, prompt templates and themes installed from npm,
//! git or a folder (`knightcode install|remove|update|list`). This crate parses sources,
//! knows the install folders, runs npm and git as subprocesses, edits the `packages` list of
//! the right settings file, and says which resource paths an installed package provides.
//! Loading those resources is the job of the resource loaders.

mod filter;
pub mod global_npm;
pub use filter::enabled_by_overrides;
mod manifest;
pub mod resolve;
mod settings_file;
pub mod source;
pub mod toggle;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

pub use manifest::KINDS;
pub use manifest::PackageResources;
pub use manifest::apply_delta;
pub use manifest::filtered_resources;
pub use manifest::local_package;
pub use manifest::package_resources;
pub use manifest::resource_files;
pub use settings_file::SettingsFile;
pub use source::GitSource;
pub use source::NpmSource;
pub use source::Source;

/// What went wrong, worded for the person who typed the command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Path does not exist: {0}")]
    MissingPath(PathBuf),
    #[error("{command} failed with code {code}")]
    CommandFailed { command: String, code: String },
    #[error("{command} failed with code {code}:\n{output}")]
    CommandFailedWithOutput {
        command: String,
        code: String,
        output: String,
    },
    #[error("could not run {command}: {source} (is it installed and on PATH?)")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("Invalid npmCommand: first array entry must be a non-empty command")]
    InvalidNpmCommand,
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON ({message}); fix or remove it, then try again")]
    InvalidSettings { path: PathBuf, message: String },
    #[error(
        "{0} is held by another knightcode process; try again, or remove it if no other knightcode is running"
    )]
    SettingsLocked(PathBuf),
    #[error("No matching package found for {0}")]
    NoMatch(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io {
        action,
        path,
        source,
    }
}

/// Whose package: the user's (`~/.knightcode/agent`) or the project's (`.knightcode/`, `-l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Where things live for one working folder.
#[derive(Debug, Clone)]
pub struct Layout {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
}

impl Layout {
    /// The folder of the scope's settings file: what stored local paths are relative to.
    pub fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.agent_dir.clone(),
            Scope::Project => self.cwd.join(".knightcode"),
        }
    }

    pub fn settings_path(&self, scope: Scope) -> PathBuf {
        self.base_dir(scope).join("settings.json")
    }

    /// `<base>/npm`: the `--prefix` of npm installs.
    pub fn npm_root(&self, scope: Scope) -> PathBuf {
        self.base_dir(scope).join("npm")
    }

    pub fn git_root(&self, scope: Scope) -> PathBuf {
        self.base_dir(scope).join("git")
    }

    /// Where the package of `source` is (or would be) installed; a local source is its
    /// own folder, resolved against the scope's settings folder.
    pub fn install_path(&self, source: &Source, scope: Scope) -> PathBuf {
        match source {
            Source::Npm(npm) => self.npm_root(scope).join("node_modules").join(&npm.name),
            Source::Git(git) => self.git_root(scope).join(&git.host).join(&git.path),
            Source::Local(path) => {
                source::resolve(path, &self.base_dir(scope), self.home.as_deref())
            }
        }
    }

    /// A source as typed on the command line: local paths resolve against the working
    /// folder.
    fn typed_path(&self, path: &str) -> PathBuf {
        source::resolve(path, &self.cwd, self.home.as_deref())
    }

    fn identity_of_typed(&self, typed: &str) -> String {
        source::identity(typed, &self.cwd, self.home.as_deref())
    }

    /// The identity of a source as stored in the scope's settings file: one package
    /// whatever its spelling.
    pub fn identity_in(&self, stored: &str, scope: Scope) -> String {
        source::identity(stored, &self.base_dir(scope), self.home.as_deref())
    }
}

/// One package entry of a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    pub source: String,
    pub scope: Scope,
    /// The object form (`{"source": …, "skills": […]}`): shown as `(filtered)`.
    pub filtered: bool,
    /// That object, whose `extensions`/`skills`/`prompts`/`themes` lists narrow what the
    /// package provides.
    pub filter: Option<serde_json::Map<String, serde_json::Value>>,
    pub installed_path: Option<PathBuf>,
}

/// Installs, removes and updates packages. `npm_command` is the `npmCommand` setting (an
/// argv prefix such as `["mise","exec","node@20","--","npm"]`); empty means `npm`.
/// `progress` receives the reference's start lines (`Installing npm:x...`).
pub struct Manager<'a> {
    pub layout: Layout,
    pub npm_command: Vec<String>,
    pub progress: &'a mut dyn FnMut(&str),
    /// Extra environment for the subprocesses (tests point git at local repositories).
    pub env: Vec<(String, String)>,
    /// Keep npm's and git's output off the terminal (a full-screen UI owns it); a failure
    /// then quotes the end of what they printed.
    pub capture: bool,
}

impl Manager<'_> {
    /// Installs `source` and adds it to the scope's settings; the settings file is only
    /// written after the install succeeded.
    pub fn install_and_persist(&mut self, source: &str, scope: Scope) -> Result<()> {
        let settings_path = self.layout.settings_path(scope);
        // Read first: an unreadable settings file stops us before anything is installed.
        SettingsFile::read(&settings_path)?;
        self.install(source, scope)?;
        let identity = self.layout.identity_of_typed(source);
        let stored = self.stored_form(source, scope);
        let layout = &self.layout;
        // Read again under the lock: the install may have taken minutes.
        SettingsFile::update(&settings_path, |settings| {
            let exists = settings
                .packages()
                .iter()
                .any(|(stored, _)| layout.identity_in(stored, scope) == identity);
            if !exists {
                settings.push_package(&stored);
            }
            Ok(!exists)
        })?;
        Ok(())
    }

    /// The form a source is stored in: local paths relative to the settings folder.
    fn stored_form(&self, source: &str, scope: Scope) -> String {
        match source::parse(source) {
            Source::Local(path) => {
                let resolved = self.layout.typed_path(&path);
                relative(&resolved, &self.layout.base_dir(scope))
            }
            _ => source.to_owned(),
        }
    }

    pub fn install(&mut self, source: &str, scope: Scope) -> Result<()> {
        (self.progress)(&format!("Installing {source}..."));
        match source::parse(source) {
            Source::Npm(npm) => self.install_npm(&npm, scope),
            Source::Git(git) => self.install_git(&git, scope),
            Source::Local(path) => {
                let resolved = self.layout.typed_path(&path);
                if resolved.exists() {
                    Ok(())
                } else {
                    Err(Error::MissingPath(resolved))
                }
            }
        }
    }

    /// Removes the installed files of `source` and its settings entry. `Ok(false)` when
    /// no settings entry matched.
    pub fn remove_and_persist(&mut self, source: &str, scope: Scope) -> Result<bool> {
        let settings_path = self.layout.settings_path(scope);
        // Read first: an unreadable settings file stops us before anything is removed.
        SettingsFile::read(&settings_path)?;
        (self.progress)(&format!("Removing {source}..."));
        match source::parse(source) {
            Source::Npm(npm) => {
                let root = self.layout.npm_root(scope);
                if root.exists() {
                    let prefix = root.to_string_lossy().into_owned();
                    self.npm(&["uninstall", &npm.name, "--prefix", &prefix], None)?;
                }
            }
            Source::Git(git) => {
                let target = self.layout.install_path(&Source::Git(git), scope);
                if target.exists() {
                    std::fs::remove_dir_all(&target).map_err(io("remove", &target))?;
                    prune_empty_parents(&target, &self.layout.git_root(scope));
                }
            }
            Source::Local(_) => {}
        }
        let identity = self.layout.identity_of_typed(source);
        let layout = &self.layout;
        SettingsFile::update(&settings_path, |settings| {
            Ok(settings.retain_packages(|stored| layout.identity_in(stored, scope) != identity))
        })
    }

    /// Updates the configured packages (all, or those matching `only`): unpinned npm
    /// packages are installed again at their latest version, unpinned git clones pull;
    /// pinned ones and local folders stay as they are.
    pub fn update(&mut self, only: Option<&str>) -> Result<()> {
        let configured = list(&self.layout)?;
        let identity = only.map(|s| self.layout.identity_of_typed(s));
        let mut matched = false;
        for entry in configured {
            if let Some(identity) = &identity
                && self.layout.identity_in(&entry.source, entry.scope) != *identity
            {
                continue;
            }
            matched = true;
            match source::parse(&entry.source) {
                Source::Npm(npm) => {
                    let installed = entry.installed_path.is_some();
                    if !npm.pinned || !installed {
                        (self.progress)(&format!("Updating {}...", entry.source));
                        let spec = if npm.pinned {
                            npm.spec.clone()
                        } else {
                            format!("{}@latest", npm.name)
                        };
                        self.install_npm(&NpmSource { spec, ..npm }, entry.scope)?;
                    }
                }
                Source::Git(git) => {
                    let target = self
                        .layout
                        .install_path(&Source::Git(git.clone()), entry.scope);
                    if !target.exists() {
                        (self.progress)(&format!("Updating {}...", entry.source));
                        self.install_git(&git, entry.scope)?;
                    } else if git.git_ref.is_none() {
                        (self.progress)(&format!("Updating {}...", entry.source));
                        self.run("git", &["pull", "--ff-only"], Some(&target))?;
                        if target.join("package.json").exists() {
                            let args = self.git_dependency_install_args();
                            self.npm(&args, Some(&target))?;
                        }
                    }
                }
                Source::Local(_) => {}
            }
        }
        match only {
            Some(source) if !matched => Err(Error::NoMatch(source.to_owned())),
            _ => Ok(()),
        }
    }

    fn install_npm(&mut self, npm: &NpmSource, scope: Scope) -> Result<()> {
        let root = self.layout.npm_root(scope);
        ensure_npm_project(&root)?;
        let prefix = root.to_string_lossy().into_owned();
        self.npm(&["install", &npm.spec, "--prefix", &prefix], None)
    }

    /// Clones into a staging folder beside the target and renames it into place once the
    /// checkout and the dependency install are done: a run killed half-way (where no error
    /// path can clean up) leaves only the staging folder, which the next install removes,
    /// never a half-made package that would pass for an installed one.
    fn install_git(&mut self, git: &GitSource, scope: Scope) -> Result<()> {
        let target = self.layout.install_path(&Source::Git(git.clone()), scope);
        if target.exists() {
            return Ok(());
        }
        ensure_gitignore(&self.layout.git_root(scope))?;
        let staging = staging_path(&target);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        remove_stale_staging(&target);
        let staging_text = staging.to_string_lossy().into_owned();
        let result = self
            .run("git", &["clone", &git.repo, &staging_text], None)
            .and_then(|()| match &git.git_ref {
                Some(git_ref) => self.run("git", &["checkout", git_ref], Some(&staging)),
                None => Ok(()),
            })
            .and_then(|()| {
                if staging.join("package.json").exists() {
                    let args = self.git_dependency_install_args();
                    self.npm(&args, Some(&staging))
                } else {
                    Ok(())
                }
            })
            .and_then(|()| std::fs::rename(&staging, &target).map_err(io("rename", &staging)));
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&staging);
            prune_empty_parents(&target, &self.layout.git_root(scope));
        }
        result
    }

    /// As the reference: `--omit=dev` unless a custom `npmCommand` is set.
    fn git_dependency_install_args(&self) -> Vec<&'static str> {
        if self.npm_command.is_empty() {
            vec!["install", "--omit=dev"]
        } else {
            vec!["install"]
        }
    }

    fn npm(&mut self, args: &[&str], cwd: Option<&Path>) -> Result<()> {
        let (program, prefix) = match self.npm_command.split_first() {
            None => ("npm".to_owned(), Vec::new()),
            Some((program, _)) if program.is_empty() => return Err(Error::InvalidNpmCommand),
            Some((program, rest)) => (program.clone(), rest.to_vec()),
        };
        let mut all: Vec<&str> = prefix.iter().map(String::as_str).collect();
        all.extend_from_slice(args);
        self.run(&program, &all, cwd)
    }

    /// Runs a subprocess with our terminal (npm and git print their own progress); its
    /// output goes to stderr so that stdout stays ours. With `capture`, nothing reaches the
    /// terminal.
    fn run(&mut self, program: &str, args: &[&str], cwd: Option<&Path>) -> Result<()> {
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command.env("GIT_TERMINAL_PROMPT", "0");
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let shown = format!("{program} {}", args.join(" "));
        let spawn_error = |source| Error::Spawn {
            command: program.to_owned(),
            source,
        };
        let code_of = |status: std::process::ExitStatus| {
            status
                .code()
                .map_or_else(|| "a signal".to_owned(), |c| c.to_string())
        };
        if self.capture {
            command.stdin(std::process::Stdio::null());
            let out = command.output().map_err(spawn_error)?;
            if out.status.success() {
                return Ok(());
            }
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&out.stderr));
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = lines[lines.len().saturating_sub(5)..].join("\n");
            return Err(if tail.is_empty() {
                Error::CommandFailed {
                    command: shown,
                    code: code_of(out.status),
                }
            } else {
                Error::CommandFailedWithOutput {
                    command: shown,
                    code: code_of(out.status),
                    output: tail,
                }
            });
        }
        command.stdout(std::io::stderr());
        let status = command.status().map_err(spawn_error)?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::CommandFailed {
                command: shown,
                code: code_of(status),
            })
        }
    }
}

/// The packages of both settings files, user first, each with where it is installed (when
/// it is). Missing settings files list nothing.
pub fn list(layout: &Layout) -> Result<Vec<Configured>> {
    let mut out = Vec::new();
    for scope in [Scope::User, Scope::Project] {
        let settings = SettingsFile::read(&layout.settings_path(scope))?;
        for (source, filter) in settings.package_entries() {
            let parsed = source::parse(&source);
            let mut path = layout.install_path(&parsed, scope);
            // A user package pi installed (`npm install -g`) is used where it is.
            if scope == Scope::User
                && !path.exists()
                && let Source::Npm(npm) = &parsed
                && let Some(global) = global_npm::global_node_modules(layout.home.as_deref())
                && global.join(&npm.name).is_dir()
            {
                path = global.join(&npm.name);
            }
            out.push(Configured {
                installed_path: path.exists().then_some(path),
                source,
                scope,
                filtered: filter.is_some(),
                filter,
            });
        }
    }
    Ok(out)
}

/// A configured package as a session applies it, after deduplication (packages.md "Scope
/// and Deduplication"): the same package in both settings files is the project's entry,
/// unless that entry says `autoload: false`; then the user's entry applies with the
/// project entry's lists as a delta over it.
#[derive(Debug, Clone)]
pub struct Effective {
    pub entry: Configured,
    /// The `autoload: false` project entry's object, whose lists switch single resources on
    /// or off.
    pub delta: Option<serde_json::Map<String, serde_json::Value>>,
    /// An `autoload: false` entry with no user entry under it: nothing loads but what its
    /// lists name.
    pub only_delta: bool,
}

fn autoload_off(filter: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
    filter
        .and_then(|f| f.get("autoload"))
        .is_some_and(|v| v == &serde_json::Value::Bool(false))
}

/// The packages a session applies: the user's, and the project's only when `trusted`.
pub fn effective(layout: &Layout, trusted: bool) -> Vec<Effective> {
    let Ok(configured) = list(layout) else {
        return Vec::new();
    };
    let identity = |c: &Configured| layout.identity_in(&c.source, c.scope);
    let project: Vec<&Configured> = configured
        .iter()
        .filter(|c| trusted && c.scope == Scope::Project)
        .collect();
    let mut out = Vec::new();
    for entry in configured.iter().filter(|c| c.scope == Scope::User) {
        match project.iter().find(|p| identity(p) == identity(entry)) {
            Some(p) if autoload_off(p.filter.as_ref()) => out.push(Effective {
                entry: entry.clone(),
                delta: p.filter.clone(),
                only_delta: false,
            }),
            Some(_) => {}
            None => out.push(Effective {
                entry: entry.clone(),
                delta: None,
                only_delta: false,
            }),
        }
    }
    for p in project {
        let off = autoload_off(p.filter.as_ref());
        let over_user = configured
            .iter()
            .any(|c| c.scope == Scope::User && identity(c) == identity(p));
        if off && over_user {
            continue;
        }
        out.push(Effective {
            entry: p.clone(),
            delta: off.then(|| p.filter.clone()).flatten(),
            only_delta: off,
        });
    }
    out
}

impl Effective {
    /// Every resource file the package has, with whether this session loads it.
    pub fn files(&self) -> Vec<(&'static str, PathBuf, bool)> {
        let Some(root) = &self.entry.installed_path else {
            return Vec::new();
        };
        if root.is_file() {
            return vec![("extensions", root.clone(), !self.only_delta)];
        }
        let filter = if self.only_delta {
            None
        } else {
            self.entry.filter.as_ref()
        };
        let mut files = resource_files(root, filter);
        if self.only_delta {
            for file in &mut files {
                file.2 = false;
            }
        }
        if let Some(delta) = &self.delta {
            apply_delta(&mut files, delta, root);
        }
        files
    }

    /// What the loaders take: the package's folders as they are, or with filters or a
    /// delta, the files that stay on.
    pub fn resources(&self) -> Option<PackageResources> {
        let path = self.entry.installed_path.as_ref()?;
        if self.delta.is_none() && !self.only_delta {
            if path.is_file() {
                return Some(PackageResources {
                    extensions: vec![path.clone()],
                    ..PackageResources::default()
                });
            }
            return Some(match &self.entry.filter {
                Some(filter) => filtered_resources(path, filter),
                None => package_resources(path),
            });
        }
        let mut out = PackageResources::default();
        for (kind, file, on) in self.files() {
            if !on {
                continue;
            }
            match kind {
                "extensions" => out.extensions.push(file),
                "skills" => out.skills.push(file),
                "prompts" => out.prompts.push(file),
                _ => out.themes.push(file),
            }
        }
        Some(out)
    }
}

/// The resources of every installed package configured for the session: the project's
/// only when `trusted`. A project entry hides a user entry of the same package, unless it
/// says `autoload: false` (then it adjusts the user's).
pub fn installed_resources(layout: &Layout, trusted: bool) -> Vec<(Scope, PackageResources)> {
    effective(layout, trusted)
        .into_iter()
        .filter_map(|e| Some((e.entry.scope, e.resources()?)))
        .collect()
}

/// The project's packages whose install folder is missing (npm and git sources; a local
/// path is never installed). An `autoload: false` entry over a user entry is left out: it
/// adjusts the user's install and has none of its own. Only ask in a trusted project.
pub fn missing_project_packages(layout: &Layout) -> Vec<String> {
    let Ok(configured) = list(layout) else {
        return Vec::new();
    };
    let identity = |c: &Configured| layout.identity_in(&c.source, c.scope);
    configured
        .iter()
        .filter(|c| c.scope == Scope::Project && c.installed_path.is_none())
        .filter(|c| !matches!(source::parse(&c.source), Source::Local(_)))
        .filter(|c| {
            !(autoload_off(c.filter.as_ref())
                && configured
                    .iter()
                    .any(|u| u.scope == Scope::User && identity(u) == identity(c)))
        })
        .map(|c| c.source.clone())
        .collect()
}

fn ensure_npm_project(root: &Path) -> Result<()> {
    ensure_gitignore(root)?;
    let package_json = root.join("package.json");
    if !package_json.exists() {
        // Whole or not at all: a half-written one would stop every later npm install.
        knightcode_files::replace(
            &package_json,
            b"{\n  \"name\": \"knightcode-extensions\",\n  \"private\": true\n}",
            None,
        )
        .map_err(io("write", &package_json))?;
    }
    Ok(())
}

/// Install folders keep out of the user's git repository.
fn ensure_gitignore(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        knightcode_files::replace(&ignore, b"*\n!.gitignore\n", None)
            .map_err(io("write", &ignore))?;
    }
    Ok(())
}

/// The folder a clone is made in before it becomes `target`: a hidden sibling, so that it
/// is never listed as a package and is inside the git folder's ignore-all `.gitignore`. It
/// is named after this process: the git of a killed install may still be writing into its
/// own.
fn staging_path(target: &Path) -> PathBuf {
    target.with_file_name(format!("{}{}", staging_prefix(target), std::process::id()))
}

fn staging_prefix(target: &Path) -> String {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.partial-")
}

/// Removes what killed installs of `target` left. Best effort: one whose git is still
/// running may not go yet, and is tried again by the next install.
fn remove_stale_staging(target: &Path) {
    let (Some(parent), prefix) = (target.parent(), staging_prefix(target)) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn prune_empty_parents(target: &Path, root: &Path) {
    let mut current = target.parent();
    while let Some(dir) = current {
        if !dir.starts_with(root) || dir == root || std::fs::remove_dir(dir).is_err() {
            break;
        }
        current = dir.parent();
    }
}

/// `path` relative to `base` (`.` when equal), like Node's `path.relative`.
fn relative(path: &Path, base: &Path) -> String {
    let path_parts: Vec<_> = path.components().collect();
    let base_parts: Vec<_> = base.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in common..base_parts.len() {
        out.push("..");
    }
    for part in &path_parts[common..] {
        out.push(part);
    }
    let text = out.to_string_lossy().into_owned();
    if text.is_empty() {
        ".".to_owned()
    } else {
        text
    }
}
