//! `knightcode --help`. Built from tables so every option of the parser has one line here
//! (a unit test checks the two agree).

use std::fmt::Write as _;

/// One option line: aliases as typed, the value placeholder, and what it does.
struct Opt {
    flags: &'static str,
    value: &'static str,
    about: &'static str,
}

const fn opt(flags: &'static str, value: &'static str, about: &'static str) -> Opt {
    Opt {
        flags,
        value,
        about,
    }
}

const SECTIONS: &[(&str, &[Opt])] = &[
    (
        "Running",
        &[
            opt(
                "-p, --print",
                "[message]",
                "Answer once and exit; the final reply goes to stdout",
            ),
            opt(
                "--mode",
                "<text|json|rpc>",
                "Output: text (default), json (events as JSON lines), rpc (JSON commands on stdin)",
            ),
            opt(
                "--tui-mode",
                "<regular|fullscreen>",
                "Keep the terminal's scrollback (regular, the default) or take over the screen with a scrolling transcript (fullscreen)",
            ),
            opt(
                "--verbose",
                "",
                "Show the full startup report even when quietStartup is set (this build always shows it)",
            ),
            opt(
                "--offline",
                "",
                "Make no automatic network requests (same as KNIGHTCODE_OFFLINE=1); this build makes none anyway, only model requests",
            ),
            opt(
                "-a, --approve",
                "",
                "Trust this project's local configuration and resources for this run",
            ),
            opt(
                "-na, --no-approve",
                "",
                "Ignore this project's trust-gated files for this run",
            ),
            opt("-h, --help", "", "Show this help and exit"),
            opt("-v, --version", "", "Print the version number and exit"),
        ],
    ),
    (
        "Model",
        &[
            opt(
                "--model",
                "<pattern>",
                "Model to use: exact id, fuzzy name or provider/id, optionally ending in :<thinking>",
            ),
            opt(
                "--provider",
                "<name>",
                "Look the --model pattern up in this provider only (needs --model)",
            ),
            opt(
                "--api-key",
                "<key>",
                "API key for the chosen model's provider, for this run only (never saved)",
            ),
            opt(
                "--thinking",
                "<level>",
                "Reasoning effort: off, minimal, low, medium, high, xhigh or max",
            ),
            opt(
                "--models",
                "<patterns>",
                "Comma-separated models to start with and cycle through with Ctrl+P (ids, fuzzy names, globs such as anthropic/*, :<thinking> suffixes)",
            ),
            opt(
                "--list-models",
                "[search]",
                "Print the models you have credentials for, optionally filtered, and exit",
            ),
        ],
    ),
    (
        "Sessions",
        &[
            opt(
                "-c, --continue",
                "",
                "Continue the most recent session in this directory",
            ),
            opt("-r, --resume", "", "Choose a session to resume from a list"),
            opt(
                "--session",
                "<path|id>",
                "Open a session file, or a session by id or id prefix",
            ),
            opt(
                "--session-id",
                "<id>",
                "Open the project session with this exact id, or start a new one with it",
            ),
            opt(
                "--fork",
                "<path|id>",
                "Start a new session here as a copy of an existing one",
            ),
            opt(
                "--session-dir",
                "<dir>",
                "Store and look up sessions in this directory",
            ),
            opt(
                "--no-session",
                "",
                "Keep the conversation in memory only; nothing is saved",
            ),
            opt("-n, --name", "<name>", "Give the session a display name"),
            opt(
                "--export",
                "<in.jsonl> [out.html]",
                "Write a session file as HTML and exit (default output: knightcode-session-<input basename>.html in this directory)",
            ),
        ],
    ),
    (
        "Tools",
        &[
            opt(
                "-t, --tools",
                "<list>",
                "Comma-separated tools to enable, by name or * pattern (r*,ls) among read, bash, powershell, edit, write, grep, find, ls, webfetch, websearch; replaces the default set (read,bash,edit,write); names that match no tool are reported",
            ),
            opt(
                "-xt, --exclude-tools",
                "<list>",
                "Comma-separated tools to disable, by name or * pattern, applied after everything else",
            ),
            opt(
                "-nbt, --no-builtin-tools",
                "",
                "Start without built-in tools; extension and custom tools stay",
            ),
            opt(
                "-nt, --no-tools",
                "",
                "Start without any tools at all, MCP included",
            ),
            opt(
                "--no-mcp",
                "",
                "Leave MCP servers off for this run: no mcp.json is read, no server started",
            ),
            opt(
                "--plan",
                "",
                "Start in plan mode: the model investigates and submits a plan (docs/plan-mode.md)",
            ),
            opt(
                "--sandbox",
                "<mode>",
                "OS sandbox for tool commands and file writes: read-only, workspace-write or off",
            ),
        ],
    ),
    (
        "Extensions and resources",
        &[
            opt(
                "-e, --extension",
                "<path>",
                "Load an extension file or folder (TypeScript or JavaScript, no build step); repeatable",
            ),
            opt(
                "-ne, --no-extensions",
                "",
                "Skip discovered, configured and built-in extensions (-e ones still load)",
            ),
            opt(
                "--skill",
                "<path>",
                "Load a skill file or folder; repeatable (kept with --no-skills)",
            ),
            opt(
                "-ns, --no-skills",
                "",
                "Skip discovered and configured skills (--skill ones still load)",
            ),
            opt(
                "--prompt-template",
                "<path>",
                "Load a prompt template file or folder; repeatable (kept with --no-prompt-templates)",
            ),
            opt(
                "-np, --no-prompt-templates",
                "",
                "Skip discovered and configured prompt templates (--prompt-template ones still load)",
            ),
            opt(
                "--theme",
                "<path>",
                "Load a theme file or folder; repeatable (kept with --no-themes)",
            ),
            opt(
                "--use-theme",
                "<name[/name]>",
                "Theme to start the interface with, for this run (a light/dark pair follows the terminal)",
            ),
            opt(
                "--no-themes",
                "",
                "Skip discovered and configured themes (--theme ones still load)",
            ),
            opt(
                "-nc, --no-context-files",
                "",
                "Ignore AGENTS.md and CLAUDE.md files",
            ),
            opt(
                "--system-prompt",
                "<text|path>",
                "Replace the system prompt (with the file's contents when the path exists)",
            ),
            opt(
                "--append-system-prompt",
                "<text|path>",
                "Add text or a file's contents to the system prompt; repeatable",
            ),
        ],
    ),
];

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "KNIGHTCODE_CODING_AGENT_DIR",
        "Configuration folder (default ~/.knightcode/agent)",
    ),
    (
        "KNIGHTCODE_CODING_AGENT_SESSION_DIR",
        "Session folder (--session-dir wins over it)",
    ),
    (
        "KNIGHTCODE_PACKAGE_DIR",
        "Where bundled files live (for Nix, Guix and similar stores)",
    ),
    ("KNIGHTCODE_OFFLINE", "1, true or yes: no automatic network"),
    (
        "KNIGHTCODE_SKIP_VERSION_CHECK",
        "Do not ask whether a newer version exists",
    ),
    (
        "KNIGHTCODE_DISABLE_AUTO_UPDATE",
        "1: never download updates in the background",
    ),
    (
        "KNIGHTCODE_BIN_PATH",
        "Path of a custom knightcode binary (for update notices)",
    ),
    (
        "KNIGHTCODE_DISABLE_FILE_CHECKPOINTS",
        "1, true or yes: no backups before edit/write; /undo rewinds the conversation only",
    ),
    (
        "KNIGHTCODE_TELEMETRY",
        "1/true/yes or 0/false/no: turn install telemetry on or off",
    ),
    (
        "KNIGHTCODE_CACHE_RETENTION",
        "long: ask providers for extended prompt caching",
    ),
    (
        "KNIGHTCODE_SHARE_VIEWER_URL",
        "Base URL for /share links (default https://knightcode.dev/session/)",
    ),
    ("KNIGHTCODE_RADIUS_GATEWAY", "Radius gateway origin"),
    (
        "KNIGHTCODE_SERVER_DIR, KNIGHTCODE_SERVER_ID",
        "Experimental server folder (default ~/.knightcode/server) and id",
    ),
    (
        "KNIGHTCODE_HARDWARE_CURSOR",
        "1: show the terminal's own cursor",
    ),
    (
        "KNIGHTCODE_CLEAR_ON_SHRINK",
        "1: clear the screen when the interface gets shorter",
    ),
    (
        "KNIGHTCODE_HYPERLINKS, KNIGHTCODE_TRUE_COLOR",
        "1, 0 or auto: override terminal capability detection",
    ),
    (
        "KNIGHTCODE_IMAGE_PROTOCOL",
        "kitty, iterm2, none or auto: how images are drawn",
    ),
    (
        "KNIGHTCODE_TUI_ESC_TIMEOUT",
        "Milliseconds to wait after a lone Escape (default 100 over SSH, else 10)",
    ),
    (
        "KNIGHTCODE_STARTUP_BENCHMARK",
        "Time interactive startup and exit",
    ),
    (
        "ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, ...",
        "Provider API keys (each provider has its own variable)",
    ),
    (
        "BRAVE_API_KEY",
        "Key for the websearch tool's Brave backend",
    ),
    ("VISUAL, EDITOR", "External editor (falls back to nano)"),
    ("HTTP_PROXY, HTTPS_PROXY", "Proxy for provider requests"),
];

const EXAMPLES: &[(&str, &str)] = &[
    ("Start the interactive interface", "knightcode"),
    (
        "Start with a first request",
        "knightcode \"Explain what src/main.rs does\"",
    ),
    (
        "Attach files to the first request",
        "knightcode @notes.md @screenshot.png \"Turn these notes into a plan\"",
    ),
    (
        "Answer once and exit",
        "knightcode -p \"Summarise the last commit\"",
    ),
    (
        "Feed piped text into the prompt",
        "git diff | knightcode -p \"Review this change\"",
    ),
    (
        "Pick up where you left off",
        "knightcode --continue \"Where were we?\"",
    ),
    (
        "Choose a model and reasoning effort",
        "knightcode --model anthropic/claude-sonnet-4-5:high \"Find the race in worker.rs\"",
    ),
    (
        "Look without touching anything",
        "knightcode --tools read,grep,find,ls -p \"Audit src/ for unsafe code\"",
    ),
    (
        "List models matching a search",
        "knightcode --list-models sonnet",
    ),
    (
        "Export a session to HTML",
        "knightcode --export session.jsonl session.html",
    ),
];

/// Where descriptions start; longer option columns put the description on the next line.
const COLUMN: usize = 34;

/// Lines are kept within this many columns.
const WIDTH: usize = 100;

/// Greedy word wrap; a word longer than `width` gets a line of its own.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// One `left  description` row; a left column too wide for [`COLUMN`] gets a line of its own.
fn row(out: &mut String, left: &str, about: &str) {
    let mut about = wrap(about, WIDTH - COLUMN).into_iter();
    if left.len() + 2 <= COLUMN {
        let first = about.next().unwrap_or_default();
        let _ = writeln!(out, "{left:<COLUMN$}{first}");
    } else {
        let _ = writeln!(out, "{left}");
    }
    for line in about {
        let _ = writeln!(out, "{:COLUMN$}{line}", "");
    }
}

/// Whether the long option `--name` takes a value; `None` when there is no such option.
pub fn long_option_takes_value(name: &str) -> Option<bool> {
    let long = format!("--{name}");
    SECTIONS
        .iter()
        .flat_map(|(_, options)| options.iter())
        .find(|o| o.flags.split(", ").any(|flag| flag == long))
        .map(|o| !o.value.is_empty())
}

/// The full help text, ending in a newline.
pub fn text() -> String {
    let mut out = String::from(
        "knightcode: an AI coding agent for your terminal\n\
         \n\
         Usage:\n  \
         knightcode [options] [--] [@file ...] [message ...]\n  \
         knightcode install <source> [-l|--local]\n  \
         knightcode remove <source> [-l|--local]      (also: uninstall)\n  \
         knightcode update [target] [--self|--extensions|--extension <source>|--models|--all|--force]\n  \
         knightcode list\n  \
         knightcode config [-l|--local]\n  \
         knightcode auth login [<provider>] [--api-key]\n  \
         knightcode auth logout [<provider>]\n  \
         knightcode auth check|print-api-key|print-bearer-token --provider <name> | --model <pattern>\n  \
         knightcode mcp list\n  \
         knightcode mcp add <name> [-l] [--exposure <e>] (-- <command> [args...] | --url <url>)\n  \
         knightcode mcp remove <name> [-l]\n\
         \n\
         With no -p and a terminal on both ends, knightcode opens its interactive interface.\n\
         With -p, or when input or output is redirected, it answers once and exits. The first\n\
         request is built from piped input, then the @files, then the first message; each\n\
         further message is sent after the previous one is answered. Everything after --\n\
         is a message, except @file arguments.\n",
    );
    for (title, options) in SECTIONS {
        let _ = write!(out, "\n{title}:\n");
        for option in *options {
            // Single-alias long options line up with the long name of aliased ones.
            let indent = if option.flags.starts_with("--") {
                "      "
            } else {
                "  "
            };
            let mut left = format!("{indent}{}", option.flags);
            if !option.value.is_empty() {
                left.push(' ');
                left.push_str(option.value);
            }
            row(&mut out, &left, option.about);
        }
    }
    out.push_str(
        "\nExtensions can add options of their own (--name, --name <value> or --name=value);\n\
         they reach the extensions that declare them. Give the options above a value with a\n\
         space: --model=gpt-5 is not --model gpt-5.\n",
    );
    out.push_str("\nEnvironment:\n");
    for (name, about) in ENVIRONMENT {
        row(&mut out, &format!("  {name}"), about);
    }
    out.push_str("\nExamples:\n");
    for (what, command) in EXAMPLES {
        let _ = writeln!(out, "  # {what}\n  {command}\n");
    }
    out.push_str(
        "This build runs the interactive, print (-p), JSON (--mode json) and RPC (--mode rpc)\n\
         modes, --export, the install, remove, update, list and config commands\n\
         (docs/packages.md) and mcp list, add and remove (docs/mcp.md). Not available yet:\n\
         the auth command and mcp login and logout (they say so and exit with status 1).\n\
         Extensions load\n\
         in every mode, without a terminal UI of their own yet (docs/extensions.md).\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token the parser accepts as an option, with the ones that take a value.
    const PARSER_OPTIONS: &[&str] = &[
        "--help",
        "-h",
        "--version",
        "-v",
        "--mode",
        "--print",
        "-p",
        "--provider",
        "--model",
        "--api-key",
        "--thinking",
        "--models",
        "--list-models",
        "--continue",
        "-c",
        "--resume",
        "-r",
        "--session",
        "--session-id",
        "--fork",
        "--session-dir",
        "--no-session",
        "--name",
        "-n",
        "--tools",
        "-t",
        "--exclude-tools",
        "-xt",
        "--no-builtin-tools",
        "-nbt",
        "--no-tools",
        "-nt",
        "--extension",
        "-e",
        "--no-extensions",
        "-ne",
        "--no-mcp",
        "--plan",
        "--sandbox",
        "--skill",
        "--no-skills",
        "-ns",
        "--prompt-template",
        "--no-prompt-templates",
        "-np",
        "--theme",
        "--use-theme",
        "--no-themes",
        "--no-context-files",
        "-nc",
        "--system-prompt",
        "--append-system-prompt",
        "--tui-mode",
        "--verbose",
        "--approve",
        "-a",
        "--no-approve",
        "-na",
        "--offline",
        "--export",
    ];

    fn documented_flags() -> Vec<&'static str> {
        SECTIONS
            .iter()
            .flat_map(|(_, options)| options.iter())
            .flat_map(|o| o.flags.split(", "))
            .collect()
    }

    #[test]
    fn help_documents_exactly_the_parsed_options() {
        let mut documented = documented_flags();
        let mut parsed = PARSER_OPTIONS.to_vec();
        documented.sort_unstable();
        parsed.sort_unstable();
        assert_eq!(documented, parsed);
    }

    #[test]
    fn documented_options_are_recognised_by_the_parser() {
        // A recognised option never lands in messages, extension flags or diagnostics when
        // given a harmless value.
        for flag in documented_flags() {
            let argv = vec![flag.to_owned(), "regular".to_owned()];
            let parsed = crate::args::parse(&argv);
            assert!(
                parsed.args.extension_flags.is_empty(),
                "{flag} was not recognised"
            );
            let unknown = parsed
                .diagnostics
                .iter()
                .any(|d| d.message.starts_with("Unknown option"));
            assert!(!unknown, "{flag} was not recognised");
        }
    }

    #[test]
    fn lines_stay_readable() {
        let text = text();
        assert!(text.ends_with('\n'));
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "too long: {line}");
        }
    }
}
