//! Slash commands: the built-in table (names, argument hints and descriptions for
//! completion and `/hotkeys`) and parsing of a submitted line.

/// A built-in slash command as completion shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    pub name: &'static str,
    pub hint: &'static str,
    pub description: &'static str,
}

/// Every built-in, in the order completion lists them (`spec/commands-ui.md` §1.1).
pub const BUILTIN_COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        name: "settings",
        hint: "",
        description: "Open the settings menu",
    },
    CommandInfo {
        name: "model",
        hint: "[provider/model]",
        description: "Select the model (opens the selector without an argument)",
    },
    CommandInfo {
        name: "login",
        hint: "[provider]",
        description: "Log in to a provider (a subscription or an API key)",
    },
    CommandInfo {
        name: "logout",
        hint: "[provider]",
        description: "Remove a provider's stored credentials",
    },
    CommandInfo {
        name: "scoped-models",
        hint: "",
        description: "Choose the models ctrl+p cycles through",
    },
    CommandInfo {
        name: "thinking",
        hint: "[level]",
        description: "Set the thinking level",
    },
    CommandInfo {
        name: "new",
        hint: "",
        description: "Start a new session",
    },
    CommandInfo {
        name: "resume",
        hint: "",
        description: "Resume another session",
    },
    CommandInfo {
        name: "tree",
        hint: "",
        description: "Navigate the session tree (switch branch, edit an earlier message)",
    },
    CommandInfo {
        name: "fork",
        hint: "",
        description: "New session file from an earlier user message",
    },
    CommandInfo {
        name: "clone",
        hint: "",
        description: "Duplicate the current branch into a new session file",
    },
    CommandInfo {
        name: "name",
        hint: "[name]",
        description: "Set or show the session name",
    },
    CommandInfo {
        name: "session",
        hint: "",
        description: "Session file, id, messages, tokens and cost",
    },
    CommandInfo {
        name: "copy",
        hint: "",
        description: "Copy the last assistant message to the clipboard",
    },
    CommandInfo {
        name: "compact",
        hint: "[instructions]",
        description: "Summarise older messages to free context (optional focus)",
    },
    CommandInfo {
        name: "export",
        hint: "[path]",
        description: "Export the session as HTML (or the branch as JSONL: a .jsonl path)",
    },
    CommandInfo {
        name: "import",
        hint: "<path.jsonl>",
        description: "Import a session file and continue it",
    },
    CommandInfo {
        name: "share",
        hint: "",
        description: "Share the session as a private GitHub gist",
    },
    CommandInfo {
        name: "undo",
        hint: "",
        description: "Go back to an earlier message, optionally restoring files",
    },
    CommandInfo {
        name: "tools",
        hint: "[webfetch|websearch] [on|always|off]",
        description: "Web tools: off, on for this session, or always; websearch's provider",
    },
    CommandInfo {
        name: "trust",
        hint: "",
        description: "Save a project trust decision for future runs",
    },
    CommandInfo {
        name: "reload",
        hint: "",
        description: "Reload keybindings, skills, prompt templates and context files",
    },
    CommandInfo {
        name: "bug",
        hint: "[description]",
        description: "Prepare a bug report (a zip to review and send)",
    },
    CommandInfo {
        name: "changelog",
        hint: "",
        description: "Show changelog entries",
    },
    CommandInfo {
        name: "hotkeys",
        hint: "",
        description: "Show keyboard shortcuts",
    },
    CommandInfo {
        name: "quit",
        hint: "",
        description: "Quit knightcode",
    },
];

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Model(Option<String>),
    ScopedModels,
    Thinking(Option<String>),
    /// The settings menu.
    Settings,
    New,
    Resume,
    Tree,
    Fork,
    Clone,
    Name(Option<String>),
    Session,
    /// `/compact [focus]`.
    Compact(Option<String>),
    Copy,
    /// `/tools ...`: the change to make, or the usage error to show.
    Tools(Result<knightcode_runtime::web_tools::WebToolsChange, String>),
    /// `/export [path]`.
    Export(Option<String>),
    /// `/import <path>` (`None`: no path given).
    Import(Option<String>),
    Share,
    /// `/bug [description]`.
    Bug(Option<String>),
    Trust,
    /// `/undo`: back to before one of the branch's user messages.
    Undo,
    /// `/reload`: keybindings, skills, prompt templates, context files.
    Reload,
    Hotkeys,
    /// `/changelog`: the changelog this build ships.
    Changelog,
    Quit,
    /// `/login [provider]`.
    Login(Option<String>),
    /// `/logout [provider]`.
    Logout(Option<String>),
    /// `/something` we don't know: sent to the model as typed, like the reference does for
    /// text that is not a command.
    Unknown(String),
}

fn arg(rest: &str) -> Option<String> {
    let rest = rest.trim();
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// A path argument: the first word, or the text between matching quotes (paths with
/// spaces), as the reference reads `/export` and `/import`.
fn path_arg(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let inner = &rest[1..];
    match inner.find(quote) {
        Some(end) => Some(inner[..end].to_owned()).filter(|p| !p.is_empty()),
        None => Some(inner.trim_end().to_owned()).filter(|p| !p.is_empty()),
    }
}

fn path_or_word(rest: &str) -> Option<String> {
    path_arg(rest).or_else(|| rest.split_whitespace().next().map(str::to_owned))
}

/// Parses a submitted line; `None` when it is not a slash command.
pub fn parse(line: &str) -> Option<SlashCommand> {
    let body = line.strip_prefix('/')?;
    if body.is_empty() || body.starts_with(['/', ' ']) {
        return None;
    }
    let (name, rest) = match body.find(char::is_whitespace) {
        Some(at) => (&body[..at], &body[at..]),
        None => (body, ""),
    };
    Some(match name {
        "model" => SlashCommand::Model(arg(rest)),
        "thinking" => SlashCommand::Thinking(arg(rest)),
        "new" => SlashCommand::New,
        "resume" => SlashCommand::Resume,
        "tree" => SlashCommand::Tree,
        "fork" => SlashCommand::Fork,
        "clone" => SlashCommand::Clone,
        "name" => SlashCommand::Name(arg(rest)),
        "session" => SlashCommand::Session,
        "copy" => SlashCommand::Copy,
        "trust" => SlashCommand::Trust,
        "tools" => SlashCommand::Tools(parse_tools(rest)),
        "hotkeys" => SlashCommand::Hotkeys,
        "quit" | "exit" => SlashCommand::Quit,
        "compact" => SlashCommand::Compact(arg(rest)),
        "export" => SlashCommand::Export(path_or_word(rest)),
        "share" => SlashCommand::Share,
        "undo" => SlashCommand::Undo,
        "import" => SlashCommand::Import(path_or_word(rest)),
        "settings" => SlashCommand::Settings,
        "scoped-models" => SlashCommand::ScopedModels,
        "login" => SlashCommand::Login(arg(rest)),
        "logout" => SlashCommand::Logout(arg(rest)),
        "reload" => SlashCommand::Reload,
        "changelog" => SlashCommand::Changelog,
        "bug" => SlashCommand::Bug(arg(rest)),
        _ => SlashCommand::Unknown(name.to_owned()),
    })
}

const TOOLS_USAGE: &str = "Usage: /tools [webfetch|websearch] [on|always|off], \
    /tools websearch duckduckgo, /tools websearch brave [API key]";

/// `/tools [tool] [mode]`, `/tools websearch duckduckgo|brave [key]`.
fn parse_tools(rest: &str) -> Result<knightcode_runtime::web_tools::WebToolsChange, String> {
    use knightcode_runtime::web_tools::{SearchProvider, ToolMode, WebToolsChange};
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut change = WebToolsChange::default();
    match words.as_slice() {
        [] => {}
        ["scratchpad", ..] => {
            return Err("/tools scratchpad: the scratchpad is not available yet.".to_owned());
        }
        [tool @ ("webfetch" | "websearch"), mode] if ToolMode::parse(mode).is_some() => {
            change.tool = ToolMode::parse(mode).map(|mode| ((*tool).to_owned(), mode));
        }
        ["websearch", provider, key @ ..] if SearchProvider::parse(provider).is_some() => {
            let provider = SearchProvider::parse(provider);
            if provider == Some(SearchProvider::DuckDuckGo) && !key.is_empty() {
                return Err("DuckDuckGo needs no key. ".to_owned() + TOOLS_USAGE);
            }
            change.provider = provider;
            change.brave_api_key = key.first().map(|k| (*k).to_owned());
        }
        _ => return Err(TOOLS_USAGE.to_owned()),
    }
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_arguments() {
        assert_eq!(parse("/model"), Some(SlashCommand::Model(None)));
        assert_eq!(
            parse("/model  openai/gpt-5 "),
            Some(SlashCommand::Model(Some("openai/gpt-5".into())))
        );
        assert_eq!(
            parse("/name my work"),
            Some(SlashCommand::Name(Some("my work".into())))
        );
        assert_eq!(
            parse("/compact focus on the tests"),
            Some(SlashCommand::Compact(Some("focus on the tests".to_owned())))
        );
        assert_eq!(
            parse("/frobnicate"),
            Some(SlashCommand::Unknown("frobnicate".into()))
        );
        assert_eq!(
            parse("/export out.html"),
            Some(SlashCommand::Export(Some("out.html".into())))
        );
        assert_eq!(
            parse("/export \"my dir/out.jsonl\""),
            Some(SlashCommand::Export(Some("my dir/out.jsonl".into())))
        );
        assert_eq!(parse("/import"), Some(SlashCommand::Import(None)));
        assert_eq!(parse("/login"), Some(SlashCommand::Login(None)));
        assert_eq!(
            parse("/logout openai"),
            Some(SlashCommand::Logout(Some("openai".into())))
        );
        assert_eq!(
            parse("/bug the footer flickers"),
            Some(SlashCommand::Bug(Some("the footer flickers".into())))
        );
        assert_eq!(parse("hello /model"), None);
        assert_eq!(parse("/"), None);
        assert_eq!(parse("//comment"), None);
        assert_eq!(parse("/ x"), None);
    }

    #[test]
    fn every_listed_command_parses_to_something_known() {
        for info in BUILTIN_COMMANDS {
            let parsed = parse(&format!("/{}", info.name));
            assert!(
                !matches!(parsed, None | Some(SlashCommand::Unknown(_))),
                "{}",
                info.name
            );
        }
    }
}
