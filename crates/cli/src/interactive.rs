//! `knightcode` on a terminal with no `-p`/`--mode`: the interactive mode.

use std::process::ExitCode;

use knightcode_interactive::InteractiveOptions;

use crate::args::Args;
use crate::initial::initial_prompts;
use crate::setup::session_setup_with_location;

/// Runs the interactive mode; messages and `@file`s on the command line become the first
/// prompt, sent as soon as the screen is up. `warnings` (about the command line) are shown
/// first.
pub fn run(args: &Args, warnings: Vec<String>) -> anyhow::Result<ExitCode> {
    let (setup, location) = session_setup_with_location(args, true)?;
    let prompts = initial_prompts(None, &args.file_args, &args.messages, &setup.cwd)?;
    let (initial_message, initial_images) = match prompts.first {
        Some((text, images)) => (Some(text), images),
        None => (None, Vec::new()),
    };
    let options = InteractiveOptions {
        initial_message,
        initial_images,
        resume_picker: args.resume,
        verbose: args.verbose,
        sessions_dir: location.dir,
        sessions_filter_by_cwd: location.filter_by_cwd,
        warnings,
        theme: knightcode_runtime::resources::ThemeFlags {
            paths: args.themes.clone(),
            no_themes: args.no_themes,
            use_theme: args.use_theme.clone(),
            ..Default::default()
        },
    };
    let code = knightcode_interactive::run(setup, options)?;
    Ok(ExitCode::from(code))
}
