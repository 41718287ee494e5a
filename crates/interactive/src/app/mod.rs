//! The interactive app: one loop that reads keys, agent events, resizes and timers, updates
//! the [`Screen`] and draws it with the differential renderer.
//!
//! Like RPC mode, the app is a front end of the session actor: the [`AgentSession`] runs in
//! its own task, the loop sends it commands and reads one stream of events and replies.
//! Keys are served the whole time; the session decides what waits for a running prompt.

mod actions;
mod attachments;
mod changelog;
mod clipboard;
mod clipboard_image;
mod completion;
pub mod ext_ui;
pub mod fullscreen;
mod input;
mod jobs;
mod login;
mod ops;
pub mod overlay;
mod places;
pub mod screen;
mod search;
mod select;
mod session_link;
mod session_mirror;
mod settings;
mod sharing;
mod startup;
mod terminal_io;
pub(crate) mod theme;
mod theme_watch;
mod ui;
mod undo;
mod web_tools;

use std::time::Duration;

use knightcode_protocol::ContentBlock;
use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::shutdown;

use crate::error::InteractiveError;

pub use self::screen::Screen;
use self::ui::Ui;

/// How often the working indicator turns.
const SPINNER_INTERVAL: Duration = Duration::from_millis(80);
/// The shortest gap between two frames while output streams in (30 frames/s: text
/// appearing reads as smooth, and a fast stream does not spend the CPU on frames nobody can
/// tell apart). Keystrokes are drawn at once.
const FRAME_INTERVAL: Duration = Duration::from_millis(33);
/// How long a streaming response waits between small reads: a third of a frame, so deltas
/// that arrive within it are decoded and handed on together (at 1,000 tokens/s the process
/// wakes ~100 times a second instead of ~1,000) and the frame still shows all of them.
const STREAM_READ_PACING: Duration = Duration::from_millis(10);
/// How long a lone ESC waits for the rest of an escape sequence.
const ESCAPE_TIMEOUT: Duration = Duration::from_millis(20);

/// What the command line hands the interactive mode besides the session setup.
#[derive(Debug, Clone, Default)]
pub struct InteractiveOptions {
    /// Text to send first (positional messages and `@file` contents).
    pub initial_message: Option<String>,
    pub initial_images: Vec<ContentBlock>,
    /// The first prompt instead when an extension that replaces plan mode took the word
    /// after `--plan` as its string flag's value, which the command line read as a message
    /// (`AgentSession::plan_argument_taken`).
    pub without_plan_argument: Option<Option<(String, Vec<ContentBlock>)>>,
    /// `--resume`: open the session picker before anything else.
    pub resume_picker: bool,
    /// `--verbose`: keep the full start-up header.
    pub verbose: bool,
    /// Where this project's sessions live, and whether listings filter by folder (a shared
    /// custom session directory).
    pub sessions_dir: std::path::PathBuf,
    pub sessions_filter_by_cwd: bool,
    /// Warnings about the command line (options this build cannot act on), shown with the
    /// session's notices.
    pub warnings: Vec<String>,
    /// `--theme`, `--no-themes`, `--use-theme`.
    pub theme: knightcode_runtime::resources::ThemeFlags,
    /// The fullscreen mode (`--tui-mode`, `tuiMode`), or `None` for the regular one.
    pub fullscreen: Option<fullscreen::FullscreenOptions>,
}

/// Runs the interactive mode until the user quits; returns the exit code.
pub fn run(mut setup: SessionSetup, options: InteractiveOptions) -> Result<u8, InteractiveError> {
    setup.stream_read_pacing = STREAM_READ_PACING;
    // One thread runs the network, the agent and the screen: a streamed delta is read,
    // decoded and drawn without waking a second thread (a multi-thread runtime cost two
    // context switches per delta). Blocking work (files, processes) has tokio's own pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let code = runtime.block_on(async move {
        let mut ui = Ui::enter(&setup, &options)?;
        let result = main_loop(&mut ui, setup, options).await;
        ui.leave();
        result
    });
    runtime.shutdown_background();
    code
}

/// Quitting: the session aborts its run and kills running `!` commands; wait (up to the
/// grace period) until it has stopped, so no command outlives the app and the aborted
/// messages are saved.
async fn stop_session(ui: &mut Ui) {
    let Some((handle, mut events)) = ui.link.disconnect() else {
        return;
    };
    shutdown::stop(handle, &mut events, shutdown::EXIT_GRACE, drop).await;
}

async fn main_loop(
    ui: &mut Ui,
    setup: SessionSetup,
    options: InteractiveOptions,
) -> Result<u8, InteractiveError> {
    let Some(setup) = startup::resolve_trust(ui, setup).await? else {
        return Ok(0);
    };
    let Some((setup, ownership_notice)) = startup::resolve_owned_session(ui, setup).await? else {
        return Ok(0);
    };
    let (mut session, events) = AgentSession::start(setup).await?;
    session.set_dialogs(std::sync::Arc::new(ui.extension_dialogs()));
    ui.attach(&session);
    if let Some(notice) = ownership_notice {
        ui.info(&notice);
    }
    for warning in &options.warnings {
        ui.warn(warning);
    }
    for notice in session.notices().to_vec() {
        ui.warn(&notice);
    }
    let changelog = changelog::at_start(session.settings(), !session.view().messages().is_empty());
    if options.resume_picker && !startup::pick_session_at_start(ui, &mut session).await? {
        return Ok(0);
    }
    let session_took_plan_argument = session.plan_argument_taken();
    let (handle, stream) = session.spawn(events);
    let shown = handle.clone();
    ui.connect(handle, stream);
    ui.show_changelog_at_start(changelog);
    ui.draw();
    // The MCP servers' processes start after the first frame, not beside it.
    shown.front_end_ready();
    let initial = match &options.without_plan_argument {
        Some(instead) if session_took_plan_argument => instead.clone(),
        _ => options
            .initial_message
            .clone()
            .map(|text| (text, options.initial_images.clone())),
    };
    if let Some((text, images)) = initial {
        actions::submit(ui, text, images);
    }
    while !ui.quitting() {
        let wake = ui.wait().await;
        let action = ui.on_wake(wake);
        actions::perform(ui, action);
        ui.show_queued_dialog();
        ui.share_editor_text();
        ui.draw_if_due();
    }
    stop_session(ui).await;
    ui.set_resume_hint();
    Ok(ui.exit_code())
}
