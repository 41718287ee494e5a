//! Print mode (`-p`) and JSON mode (`--mode json`): the prompts from the command line and
//! piped stdin, run by [`knightcode_headless::oneshot`].

use std::io::IsTerminal as _;
use std::io::Read as _;
use std::process::ExitCode;

use anyhow::Context as _;
use knightcode_headless::oneshot::OneShotMode;
use knightcode_headless::oneshot::OneShotPrompts;

use crate::args::Args;
use crate::initial::initial_prompts;
use crate::setup::session_setup;

/// Output of a one-shot run.
pub type OneShot = OneShotMode;

/// Reads piped stdin (not a terminal) as the start of the prompt; blank input counts as none.
fn piped_stdin() -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("could not read standard input")?;
    let text = String::from_utf8_lossy(&bytes).trim().to_owned();
    Ok((!text.is_empty()).then_some(text))
}

/// Runs print or JSON mode and returns the process exit code.
pub fn run(args: &Args, mode: OneShot) -> anyhow::Result<ExitCode> {
    let setup = session_setup(args)?;
    let stdin = piped_stdin()?;
    let prompts = initial_prompts(stdin.clone(), &args.file_args, &args.messages, &setup.cwd)?;
    let Some(first) = prompts.first else {
        anyhow::bail!("{}", knightcode_headless::oneshot::NO_PROMPT);
    };
    let without_plan_argument = match args.messages_without_plan_argument() {
        Some(messages) => {
            let prompts = initial_prompts(stdin, &args.file_args, &messages, &setup.cwd)?;
            Some(prompts.first.map(|first| {
                Box::new(OneShotPrompts {
                    first,
                    rest: prompts.rest,
                    without_plan_argument: None,
                })
            }))
        }
        None => None,
    };
    let prompts = OneShotPrompts {
        first,
        rest: prompts.rest,
        without_plan_argument,
    };
    Ok(ExitCode::from(knightcode_headless::oneshot::run(
        setup, prompts, mode,
    )))
}
