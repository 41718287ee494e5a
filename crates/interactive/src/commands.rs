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
        name: "model",
        hint: "[provider/model]",
        description: "Select the model (opens the selector without an argument)",
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
        description: "Export the session (not available yet)",
    },
    CommandInfo {
        name: "share",
        hint: "",
        description: "Share the session (not available yet)",
    },
    CommandInfo {
        name: "undo",
        hint: "",
        description: "Go back to an earlier message and restore files (not available yet)",
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
    Trust,
    /// `/reload`: keybindings, skills, prompt templates, context files.
    Reload,
    Hotkeys,
    Quit,
    /// Known to the reference but not built here yet; the name says which.
    NotAvailable(&'static str),
    /// `/something` we don't know: sent to the model as typed, like the reference does for
    /// text that is not a command.
    Unknown(String),
}

fn arg(rest: &str) -> Option<String> {
    let rest = rest.trim();
    (!rest.is_empty()).then(|| rest.to_owned())
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
        "hotkeys" => SlashCommand::Hotkeys,
        "quit" | "exit" => SlashCommand::Quit,
        "compact" => SlashCommand::Compact(arg(rest)),
        "export" => SlashCommand::NotAvailable("export"),
        "share" => SlashCommand::NotAvailable("share"),
        "undo" => SlashCommand::NotAvailable("undo"),
        "import" => SlashCommand::NotAvailable("import"),
        "settings" => SlashCommand::NotAvailable("settings"),
        "scoped-models" => SlashCommand::ScopedModels,
        "login" => SlashCommand::NotAvailable("login"),
        "logout" => SlashCommand::NotAvailable("logout"),
        "reload" => SlashCommand::Reload,
        "changelog" => SlashCommand::NotAvailable("changelog"),
        "bug" => SlashCommand::NotAvailable("bug"),
        _ => SlashCommand::Unknown(name.to_owned()),
    })
}

/// What the user is told for a command whose core is not built yet.
pub fn not_available_message(name: &str) -> String {
    let why = match name {
        "export" => "exporting sessions (HTML/JSONL) is not built yet",
        "share" => "sharing sessions is not built yet",
        "undo" => {
            "file checkpoints for /undo are not built yet; /tree can still take the conversation back to an earlier message"
        }
        "import" => {
            "importing sessions is not built yet; open a file with knightcode --session <path>"
        }
        "settings" => "the settings menu is not built yet; edit ~/.knightcode/agent/settings.json",
        "login" | "logout" => {
            "interactive login is not built yet; set the provider's API key variable or edit auth.json"
        }
        _ => "this command is not built yet",
    };
    format!("/{name}: {why}.")
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
