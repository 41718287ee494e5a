//! `knightcode` on a terminal with no `-p`/`--mode`: the interactive mode.

use std::process::ExitCode;

use knightcode_interactive::InteractiveOptions;

use knightcode_interactive::app::fullscreen::FullscreenOptions;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::settings::Settings;
use knightcode_runtime::trust::TrustStore;

use crate::args::Args;
use crate::args::TuiMode;
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
    let without_plan_argument = match args.messages_without_plan_argument() {
        Some(messages) => {
            let prompts = initial_prompts(None, &args.file_args, &messages, &setup.cwd)?;
            Some(prompts.first)
        }
        None => None,
    };
    let fullscreen = FullscreenOptions::choose(
        args.tui_mode.map(|mode| mode == TuiMode::Fullscreen),
        &interface_settings(args, &setup),
    );
    let options = InteractiveOptions {
        initial_message,
        initial_images,
        without_plan_argument,
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
        fullscreen,
    };
    let code = knightcode_interactive::run(setup, options)?;
    Ok(ExitCode::from(code))
}

/// The settings that shape the interface before the session starts (the screen is taken
/// first): the global file, and the project's when the project is trusted already (a
/// project that is still to be asked about counts as untrusted here).
fn interface_settings(args: &Args, setup: &SessionSetup) -> Settings {
    let global = Settings::load(&setup.agent_dir, &setup.cwd, false);
    let store = TrustStore::load(&setup.agent_dir).unwrap_or_default();
    let trusted = knightcode_runtime::trust::resolve(
        &setup.cwd,
        setup.home.as_deref(),
        args.project_trust,
        &store,
        global.values().default_project_trust,
    )
    .without_prompt()
    .trusted;
    if trusted {
        Settings::load(&setup.agent_dir, &setup.cwd, true)
    } else {
        global
    }
}
