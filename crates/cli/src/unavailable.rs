//! Options this build parses but cannot act on yet, and `--flags` nothing declares: one
//! warning each, so nothing on the command line is dropped without a word.
//!
//! The reference ignores unknown `--flags` that no extension declares (cli.md §3), so these
//! are warnings, never errors. Options that are honestly satisfied already are not warned
//! about: `--offline` (this build makes no automatic network requests), `--no-mcp` (it turns
//! MCP servers off) and `--verbose` (the start-up header is always complete).
//! Themes load (`--theme`, `--use-theme`, `--no-themes`); their problems are the interactive
//! mode's warnings.

use crate::args::AppMode;
use crate::args::Args;
use crate::args::Diagnostic;
use crate::args::FlagValue;
use crate::help;

/// The one warning for an unknown `--name` (stored as an extension flag).
fn unknown_flag(name: &str, value: &FlagValue) -> Option<Diagnostic> {
    let message = match (help::long_option_takes_value(name), value) {
        (Some(true), FlagValue::Value(value)) => format!(
            "--{name}={value} is not read as --{name}: write --{name} {value} (with a space); ignoring it."
        ),
        (Some(true), FlagValue::Present) => format!("--{name} needs a value; ignoring it."),
        (Some(false), _) => format!(
            "--{name} takes no value (write --{name} alone); ignoring --{name}={}.",
            value_text(value)
        ),
        // Not ours: an extension may declare it; the session warns once they have loaded.
        (None, _) => return None,
    };
    Some(Diagnostic::warning(message))
}

fn value_text(value: &FlagValue) -> &str {
    match value {
        FlagValue::Present => "",
        FlagValue::Value(value) => value,
    }
}

/// The warnings for `args` in `mode`. Every mode treats them alike now: interface options
/// (`--tui-mode`) are acted on in the interactive mode and ignored by the others, as in the
/// reference.
pub fn warnings(args: &Args, _mode: AppMode) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (name, value) in &args.extension_flags {
        out.extend(unknown_flag(name, value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(argv: &[&str], mode: AppMode) -> Vec<String> {
        let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
        let parsed = crate::args::parse(&argv);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        warnings(&parsed.args, mode)
            .into_iter()
            .map(|d| {
                assert!(!d.is_error(), "{d}");
                d.to_string()
            })
            .collect()
    }

    #[test]
    fn resource_options_say_nothing() {
        let got = messages(
            &[
                "-e",
                "a.ts",
                "--skill",
                "s",
                "--skill",
                "t",
                "--prompt-template",
                "p",
                "-ns",
                "-np",
            ],
            AppMode::Print,
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn options_already_satisfied_say_nothing() {
        let argv = [
            "--offline",
            "--no-mcp",
            "--verbose",
            "-ne",
            "-ns",
            "-np",
            "--no-themes",
            "--tui-mode",
            "regular",
            "--use-theme",
            "light/dark",
            "--theme",
            "t.json",
        ];
        for mode in [
            AppMode::Interactive,
            AppMode::Print,
            AppMode::Json,
            AppMode::Rpc,
        ] {
            assert!(messages(&argv, mode).is_empty(), "{mode:?}");
        }
    }

    #[test]
    fn the_fullscreen_mode_is_no_longer_warned_about() {
        let argv = ["--tui-mode", "fullscreen"];
        for mode in [
            AppMode::Interactive,
            AppMode::Print,
            AppMode::Json,
            AppMode::Rpc,
        ] {
            assert!(messages(&argv, mode).is_empty(), "{mode:?}");
        }
    }

    #[test]
    fn unknown_flags_are_left_to_the_session_which_knows_the_extensions_flags() {
        assert!(messages(&["--fast", "--review=deep", "--depth", "3"], AppMode::Json).is_empty());
    }

    #[test]
    fn our_own_options_written_with_equals_or_without_a_value_get_a_hint() {
        assert_eq!(
            messages(
                &["--model=gpt-5", "--verbose=1", "hi", "--session"],
                AppMode::Print
            ),
            [
                "Warning: --model=gpt-5 is not read as --model: write --model gpt-5 (with a space); ignoring it.",
                "Warning: --verbose takes no value (write --verbose alone); ignoring --verbose=1.",
                "Warning: --session needs a value; ignoring it.",
            ]
        );
    }
}
