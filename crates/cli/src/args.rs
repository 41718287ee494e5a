//! The agent's command line (cli.md §2–§5), parsed by hand because the TypeScript CLI is not
//! clap-shaped: `-p` may swallow the next token, unknown `--flags` belong to extensions, value
//! flags take the next token whatever it looks like, and a few multi-letter short aliases
//! (`-nt`, `-xt`, …) exist. Parsing never fails: problems come back as [`Diagnostic`]s so the
//! caller can print every one of them before deciding to exit.

use knightcode_ai::ThinkingLevel;

/// `--mode`: how a run talks to its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    Text,
    Json,
    Rpc,
}

/// `--tui-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiMode {
    Regular,
    Fullscreen,
}

/// `--list-models` with or without its optional search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListModels {
    All,
    Search(String),
}

impl ListModels {
    pub fn search(&self) -> Option<&str> {
        match self {
            Self::All => None,
            Self::Search(query) => Some(query),
        }
    }
}

/// Value of a flag the agent does not know (extensions may declare it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagValue {
    /// `--flag` with no value after it.
    Present,
    Value(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prefix = match self.severity {
            Severity::Warning => "Warning",
            Severity::Error => "Error",
        };
        write!(f, "{prefix}: {}", self.message)
    }
}

/// Everything the agent's command line can ask for. Options that may be given once keep the
/// last occurrence (as the TypeScript parser assigns); repeatable ones collect in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    /// `--mode`; `None` when absent or when the value was not one of text/json/rpc.
    pub mode: Option<OutputMode>,
    pub print: bool,

    pub provider: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub thinking: Option<ThinkingLevel>,
    /// `--models`, split on commas and trimmed (empty items kept, as the reference does).
    pub models: Option<Vec<String>>,
    pub list_models: Option<ListModels>,

    pub continue_session: bool,
    pub resume: bool,
    pub session: Option<String>,
    pub session_id: Option<String>,
    pub fork: Option<String>,
    pub session_dir: Option<String>,
    pub no_session: bool,
    /// `--name`, trimmed; an empty name is reported as an error instead.
    pub name: Option<String>,
    /// `--export <in.jsonl>`; the output path is the first message (see [`Args::export_output`]).
    pub export: Option<String>,

    pub tools: Option<Vec<String>>,
    pub exclude_tools: Option<Vec<String>>,
    pub no_builtin_tools: bool,
    pub no_tools: bool,
    pub no_mcp: bool,
    /// `--plan`: start planning (the built-in plan mode, or an extension's `--plan`).
    pub plan: bool,
    /// The index in `messages` of the word right after `--plan`: the built-in's flag takes
    /// no value, so it is a message unless an extension that replaces plan mode declares
    /// `--plan` as a string flag, which takes it (`AgentSession::plan_argument_taken`).
    pub plan_argument: Option<usize>,
    /// `--sandbox <mode>`.
    pub sandbox: Option<knightcode_sandbox::SandboxMode>,

    pub extensions: Vec<String>,
    pub no_extensions: bool,
    pub skills: Vec<String>,
    pub no_skills: bool,
    pub prompt_templates: Vec<String>,
    pub no_prompt_templates: bool,
    pub themes: Vec<String>,
    pub use_theme: Option<String>,
    pub no_themes: bool,
    pub no_context_files: bool,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,

    pub tui_mode: Option<TuiMode>,
    pub verbose: bool,
    /// `--approve` (`Some(true)`) / `--no-approve` (`Some(false)`); the last one given wins.
    pub project_trust: Option<bool>,
    pub offline: bool,

    /// Positional messages, in order (the one `-p` swallowed included).
    pub messages: Vec<String>,
    /// `@path` arguments with the `@` removed.
    pub file_args: Vec<String>,
    /// Unknown `--flags` in first-seen order; a repeated flag keeps its place, last value wins.
    pub extension_flags: Vec<(String, FlagValue)>,
}

impl Args {
    /// Where `--export` writes: the first positional argument, if any.
    pub fn export_output(&self) -> Option<&str> {
        self.messages.first().map(String::as_str)
    }

    /// The messages without the word after `--plan`, for when a replacing extension's string
    /// `--plan` takes it; `None` when no word follows `--plan`.
    pub fn messages_without_plan_argument(&self) -> Option<Vec<String>> {
        let index = self.plan_argument?;
        let mut messages = self.messages.clone();
        (index < messages.len()).then(|| {
            messages.remove(index);
            messages
        })
    }

    fn set_extension_flag(&mut self, name: &str, value: FlagValue) {
        match self.extension_flags.iter_mut().find(|(n, _)| n == name) {
            Some((_, existing)) => *existing = value,
            None => self.extension_flags.push((name.to_owned(), value)),
        }
    }
}

/// What [`parse`] returns: the arguments and every warning or error found on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub args: Args,
    pub diagnostics: Vec<Diagnostic>,
}

/// How this run interacts (cli.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppMode {
    Interactive,
    Print,
    Json,
    Rpc,
}

/// First match wins: `--mode rpc`, `--mode json`, then print when asked for or when either end
/// of the terminal is not a terminal, else interactive. `--mode text` forces nothing.
pub fn resolve_mode(args: &Args, stdin_is_tty: bool, stdout_is_tty: bool) -> AppMode {
    match args.mode {
        Some(OutputMode::Rpc) => AppMode::Rpc,
        Some(OutputMode::Json) => AppMode::Json,
        _ if args.print || !stdin_is_tty || !stdout_is_tty => AppMode::Print,
        _ => AppMode::Interactive,
    }
}

/// The subcommands dispatched before agent options are parsed (cli.md §1), by first token.
pub const SUBCOMMANDS: [&str; 8] = [
    "auth",
    "install",
    "remove",
    "uninstall",
    "update",
    "list",
    "config",
    "mcp",
];

/// The subcommand `argv` names, if its first token is one.
pub fn subcommand(argv: &[String]) -> Option<&'static str> {
    let first = argv.first()?;
    SUBCOMMANDS.into_iter().find(|name| first == name)
}

const THINKING_VALUES: &str = "off, minimal, low, medium, high, xhigh, max";

/// Parses the agent's arguments (without the program name).
///
/// Value options take the next token whatever it is (`--model --print` sets the model to
/// `--print`). A long value option with nothing after it is treated like any unknown long flag
/// (kept as an extension flag, so effectively ignored), a short alias with nothing after it is
/// an unknown option: both exactly as the reference parser falls through.
pub fn parse(argv: &[String]) -> Parsed {
    let mut out = Parsed::default();
    let args = &mut out.args;
    let diagnostics = &mut out.diagnostics;
    let mut i = 0;
    // Takes the token after `i` as this option's value when there is one.
    let take = |i: &mut usize| -> Option<String> {
        let value = argv.get(*i + 1)?.clone();
        *i += 1;
        Some(value)
    };
    while i < argv.len() {
        let arg = argv[i].as_str();
        let has_value = i + 1 < argv.len();
        match arg {
            "--" => {
                for rest in &argv[i + 1..] {
                    match rest.strip_prefix('@') {
                        Some(path) => args.file_args.push(path.to_owned()),
                        None => args.messages.push(rest.clone()),
                    }
                }
                break;
            }
            "--help" | "-h" => args.help = true,
            "--version" | "-v" => args.version = true,
            "--mode" if has_value => {
                // An unknown mode is dropped as the reference does, but not without a word.
                match take(&mut i).unwrap_or_default().as_str() {
                    "text" => args.mode = Some(OutputMode::Text),
                    "json" => args.mode = Some(OutputMode::Json),
                    "rpc" => args.mode = Some(OutputMode::Rpc),
                    other => diagnostics.push(Diagnostic::warning(format!(
                        "Invalid --mode \"{other}\" (valid values: text, json, rpc); ignoring it"
                    ))),
                }
            }
            "--continue" | "-c" => args.continue_session = true,
            "--resume" | "-r" => args.resume = true,
            "--provider" if has_value => args.provider = take(&mut i),
            "--model" if has_value => args.model = take(&mut i),
            "--api-key" if has_value => args.api_key = take(&mut i),
            "--system-prompt" if has_value => args.system_prompt = take(&mut i),
            "--append-system-prompt" if has_value => {
                args.append_system_prompt.extend(take(&mut i));
            }
            "--name" | "-n" => match take(&mut i) {
                Some(name) => args.name = Some(name),
                None => diagnostics.push(Diagnostic::error("--name requires a value")),
            },
            "--no-session" => args.no_session = true,
            "--session" if has_value => args.session = take(&mut i),
            "--session-id" if has_value => args.session_id = take(&mut i),
            "--fork" if has_value => args.fork = take(&mut i),
            "--session-dir" if has_value => args.session_dir = take(&mut i),
            "--models" if has_value => {
                args.models =
                    take(&mut i).map(|list| list.split(',').map(|s| s.trim().to_owned()).collect());
            }
            "--no-tools" | "-nt" => args.no_tools = true,
            "--no-builtin-tools" | "-nbt" => args.no_builtin_tools = true,
            "--tools" | "-t" if has_value => {
                let list = take(&mut i).unwrap_or_default();
                args.tools = tool_list("--tools", &list, diagnostics);
            }
            "--exclude-tools" | "-xt" if has_value => {
                let list = take(&mut i).unwrap_or_default();
                args.exclude_tools = tool_list("--exclude-tools", &list, diagnostics);
            }
            "--thinking" if has_value => {
                let level = take(&mut i).unwrap_or_default();
                match ThinkingLevel::parse(&level) {
                    Some(parsed) => args.thinking = Some(parsed),
                    None => diagnostics.push(Diagnostic::warning(format!(
                        "Invalid thinking level \"{level}\". Valid values: {THINKING_VALUES}"
                    ))),
                }
            }
            "--print" | "-p" => {
                args.print = true;
                // The next token is the message unless it looks like a file or an option;
                // `---` lets a message that starts with dashes through.
                if let Some(next) = argv.get(i + 1)
                    && !next.starts_with('@')
                    && (!next.starts_with('-') || next.starts_with("---"))
                {
                    args.messages.push(next.clone());
                    i += 1;
                }
            }
            "--export" if has_value => args.export = take(&mut i),
            "--extension" | "-e" if has_value => args.extensions.extend(take(&mut i)),
            "--no-extensions" | "-ne" => args.no_extensions = true,
            "--no-mcp" => args.no_mcp = true,
            "--plan" => {
                args.plan = true;
                args.plan_argument = argv
                    .get(i + 1)
                    .filter(|next| !next.starts_with('-') && !next.starts_with('@'))
                    .map(|_| args.messages.len());
            }
            "--sandbox" => match argv.get(i + 1) {
                Some(mode) if !mode.starts_with('-') => {
                    i += 1;
                    match mode.parse() {
                        Ok(mode) => args.sandbox = Some(mode),
                        Err(_) => diagnostics.push(sandbox_mode_invalid(mode)),
                    }
                }
                _ => diagnostics.push(sandbox_mode_invalid("")),
            },
            "--skill" if has_value => args.skills.extend(take(&mut i)),
            "--prompt-template" if has_value => args.prompt_templates.extend(take(&mut i)),
            "--theme" if has_value => args.themes.extend(take(&mut i)),
            "--use-theme" => match argv.get(i + 1) {
                Some(name) if !name.starts_with('-') => {
                    args.use_theme = Some(name.clone());
                    i += 1;
                }
                // The next option is left in place so it still takes effect.
                _ => diagnostics.push(Diagnostic::error("--use-theme requires a theme name")),
            },
            "--no-skills" | "-ns" => args.no_skills = true,
            "--no-prompt-templates" | "-np" => args.no_prompt_templates = true,
            "--no-themes" => args.no_themes = true,
            "--no-context-files" | "-nc" => args.no_context_files = true,
            "--list-models" => {
                args.list_models = Some(match argv.get(i + 1) {
                    Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
                        i += 1;
                        ListModels::Search(next.clone())
                    }
                    _ => ListModels::All,
                });
            }
            "--tui-mode" => match argv.get(i + 1).map(String::as_str) {
                Some("regular") => {
                    args.tui_mode = Some(TuiMode::Regular);
                    i += 1;
                }
                Some("fullscreen") => {
                    args.tui_mode = Some(TuiMode::Fullscreen);
                    i += 1;
                }
                None => diagnostics.push(tui_mode_missing()),
                Some(next) if next.starts_with('-') => diagnostics.push(tui_mode_missing()),
                Some(other) => {
                    diagnostics.push(Diagnostic::error(format!(
                        "Invalid TUI mode \"{other}\". Valid values: regular, fullscreen"
                    )));
                    i += 1;
                }
            },
            "--verbose" => args.verbose = true,
            "--approve" | "-a" => args.project_trust = Some(true),
            "--no-approve" | "-na" => args.project_trust = Some(false),
            "--offline" => args.offline = true,
            _ => {
                if let Some(path) = arg.strip_prefix('@') {
                    args.file_args.push(path.to_owned());
                } else if let Some(flag) = arg.strip_prefix("--") {
                    match flag.split_once('=') {
                        Some((name, value)) => {
                            args.set_extension_flag(name, FlagValue::Value(value.to_owned()));
                        }
                        None => {
                            let value = match argv.get(i + 1) {
                                Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
                                    i += 1;
                                    FlagValue::Value(next.clone())
                                }
                                _ => FlagValue::Present,
                            };
                            args.set_extension_flag(flag, value);
                        }
                    }
                } else if arg.starts_with('-') {
                    diagnostics.push(Diagnostic::error(format!("Unknown option: {arg}")));
                } else {
                    args.messages.push(arg.to_owned());
                }
            }
        }
        i += 1;
    }
    // Checked once at the end because only the last `--name` counts.
    if let Some(name) = &args.name {
        let trimmed = name.trim();
        if trimmed.is_empty() {
            diagnostics.push(Diagnostic::error("--name requires a non-empty value"));
            args.name = None;
        } else if trimmed.len() != name.len() {
            args.name = Some(trimmed.to_owned());
        }
    }
    out
}

fn sandbox_mode_invalid(found: &str) -> Diagnostic {
    let expected = knightcode_sandbox::SandboxMode::NAMES.join(", ");
    if found.is_empty() {
        return Diagnostic::error(format!("--sandbox requires a mode: {expected}"));
    }
    Diagnostic::error(format!(
        "--sandbox: unknown mode \"{found}\" (expected {expected})"
    ))
}

fn tui_mode_missing() -> Diagnostic {
    Diagnostic::error("--tui-mode requires regular or fullscreen")
}

/// A `--tools`/`--exclude-tools` list: split on commas, trimmed, empty items dropped. `+name`
/// and `-name` edit the `defaultTools` setting's selection; on the command line the list is
/// the whole selection, so they are refused rather than silently taken as tool names.
fn tool_list(flag: &str, list: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<String>> {
    let items: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let edits: Vec<&str> = items
        .iter()
        .map(String::as_str)
        .filter(|s| s.starts_with('+') || s.starts_with('-'))
        .collect();
    if edits.is_empty() {
        return Some(items);
    }
    let quoted: Vec<String> = edits.iter().map(|s| format!("\"{s}\"")).collect();
    let message = if flag == "--tools" && edits.len() < items.len() {
        format!(
            "--tools: tool names cannot be mixed with +name or -name entries ({})",
            quoted.join(", ")
        )
    } else {
        format!(
            "{flag} takes tool names, not +name or -name entries ({}); write the names alone, e.g. {flag} read,bash",
            quoted.join(", ")
        )
    };
    diagnostics.push(Diagnostic::error(message));
    None
}

/// Non-empty, as the reference tests these options for truthiness.
fn given(value: &Option<String>) -> bool {
    value.as_deref().is_some_and(|v| !v.is_empty())
}

/// `Error: <flag> cannot be combined with …` naming the given ones of `others`, if any.
fn combined_with(flag: &str, others: &[(bool, &str)]) -> Option<Diagnostic> {
    let given: Vec<&str> = others
        .iter()
        .filter_map(|&(set, other)| set.then_some(other))
        .collect();
    (!given.is_empty()).then(|| {
        Diagnostic::error(format!(
            "{flag} cannot be combined with {}",
            given.join(", ")
        ))
    })
}

/// The combinations §5 refuses, and `--provider` without `--model`. Run after parsing; each
/// problem is one error.
pub fn check_conflicts(args: &Args) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    if given(&args.fork) {
        errors.extend(combined_with(
            "--fork",
            &[
                (given(&args.session), "--session"),
                (args.continue_session, "--continue"),
                (args.resume, "--resume"),
                (args.no_session, "--no-session"),
            ],
        ));
    }
    if let Some(id) = &args.session_id {
        let clash = combined_with(
            "--session-id",
            &[
                (given(&args.session), "--session"),
                (args.continue_session, "--continue"),
                (args.resume, "--resume"),
            ],
        );
        match clash {
            Some(error) => errors.push(error),
            None => {
                if let Err(e) = knightcode_session::ids::validate_session_id(id) {
                    errors.push(Diagnostic::error(e.to_string()));
                }
            }
        }
    }
    if given(&args.provider) && !given(&args.model) {
        errors.push(Diagnostic::error(
            "--provider requires --model (name the model too, e.g. --provider openai --model gpt-5, or use --model openai/gpt-5)",
        ));
    }
    errors
}

#[cfg(test)]
mod tests;
