//! [`Ui`]: the interactive app's state, in parts that each keep their own rules: the
//! terminal and its frames ([`TerminalIo`]), everything on screen ([`Screen`]), what the
//! app knows of the session ([`SessionMirror`]) and its line to the session's task
//! ([`SessionLink`]), work running off the loop ([`BackgroundJobs`]), extensions' UI
//! ([`ExtensionUi`]), the interface's settings ([`Preferences`]), themes ([`ThemeState`]),
//! the folders it runs in ([`Places`]), keys waiting to be handled ([`KeyState`]) and images
//! for the next prompt ([`Attachments`]). The session itself runs in its own task.

use std::collections::VecDeque;
use std::time::Instant;

use knightcode_runtime::AgentSession;
use knightcode_runtime::Command;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::SessionEvents;
use knightcode_runtime::SessionHandle;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::actor::SessionSnapshot;
use knightcode_tui::InputEvent;
use knightcode_tui::Theme;
use knightcode_tui::editor::Editor;
use knightcode_tui::keybindings::Keybindings;

use super::actions::Pending;
use super::attachments::Attachments;
use super::completion::ResourceCommands;
use super::ext_ui::ExtensionUi;
use super::input::KeyState;
use super::jobs::BackgroundJobs;
use super::places::Places;
use super::screen::Screen;
use super::screen::Status;
use super::session_link::SessionLink;
use super::session_mirror::SessionMirror;
use super::settings::Preferences;
use super::terminal_io::TerminalIo;
use super::theme::ThemeState;
use crate::error::InteractiveError;
use crate::footer;
use crate::footer::FooterData;
use crate::transcript::Look;
use crate::transcript::NoticeKind;
use crate::transcript::Transcript;

/// What woke the loop.
pub enum Wake {
    Input(Vec<u8>),
    /// Input events parsed earlier wait behind an action that had to run first.
    Queued,
    /// stdin closed or failed: nothing more can be typed.
    InputClosed,
    Event(SessionEvent),
    /// The session's task ended without being asked to (a bug).
    SessionEnded,
    /// A clipboard image read (Ctrl+V) finished.
    Clipboard(super::clipboard_image::ClipboardRead),
    /// Work done off the loop (`/share`, `/bug`) has something to say.
    Job(super::sharing::JobDone),
    /// The active theme's file changed.
    ThemeFile,
    Resize,
    Timer,
    /// SIGTERM (143) or SIGHUP (129).
    Signal(u8),
    /// An extension's `ctx.ui` request.
    ExtensionUi(super::ext_ui::ExtUiMessage),
}

pub struct Ui {
    pub(super) terminal: TerminalIo,
    pub(super) screen: Screen,
    pub(super) session: SessionMirror,
    pub(super) link: SessionLink,
    pub(super) jobs: BackgroundJobs,
    pub(super) ext_ui: ExtensionUi,
    pub(super) prefs: Preferences,
    pub(super) themes: ThemeState,
    pub(super) places: Places,
    pub(super) keys: KeyState,
    pub(super) attachments: Attachments,
    /// The `/login` or `/logout` under way (dropping it stops its task).
    pub(super) login: Option<super::login::LoginRun>,
    /// Prompt templates and skill commands for `/` completion (refreshed by `/reload`).
    resource_commands: ResourceCommands,
    /// The last errors and warnings shown, oldest first (`/bug` reports them).
    recent_diagnostics: VecDeque<String>,
    quitting: bool,
    exit_code: u8,
    /// Printed under the transcript on exit.
    resume_hint: Option<String>,
    /// The title the app would set (the session's name or folder).
    app_title: String,
    /// `--verbose`: the full header even with `quietStartup`.
    verbose: bool,
    /// The fullscreen mode's options (used only when `screen.viewport` is set).
    pub(super) fullscreen_options: super::fullscreen::FullscreenOptions,
    /// The mouse's part in selecting transcript text (fullscreen).
    pub(super) pointer: super::select::Pointer,
    /// The run submitted a plan (`submit_plan`): its review opens when the run settles.
    pub(super) plan_review_due: bool,
}

impl Ui {
    /// Takes over the terminal: raw mode, bracketed paste, hidden cursor, input thread.
    pub fn enter(
        setup: &SessionSetup,
        options: &super::InteractiveOptions,
    ) -> Result<Self, InteractiveError> {
        let (bindings, warnings) = Keybindings::load(&setup.agent_dir.join("keybindings.json"))
            .unwrap_or_else(|error| (Keybindings::defaults(), vec![error.to_string()]));
        let theme = if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            Theme::plain()
        } else {
            Theme::dark()
        };
        let terminal = TerminalIo::enter(options.fullscreen.is_some())?;
        let places = Places::new(setup, options);
        let cwd_string = places.cwd().to_string_lossy().into_owned();
        let look = Look {
            theme: theme.clone(),
            cwd: cwd_string.clone(),
            home: places.home_string(),
            tools_expanded: false,
            thinking_hidden: false,
            hidden_thinking_label: None,
            // The fullscreen selection copies a wrapped line whole.
            mark_wraps: options.fullscreen.is_some(),
        };
        let mut editor = Editor::new(&theme);
        let resource_commands = ResourceCommands::default();
        editor.set_completion_provider(Box::new(super::completion::Completer::new(
            places.cwd().to_path_buf(),
            resource_commands.clone(),
        )));
        let footer = FooterData {
            cwd: footer::tilde(&cwd_string, places.home_string().as_deref()),
            git_branch: footer::git_head(places.cwd()).map(|head| head.shown().to_owned()),
            ..FooterData::default()
        };
        let height = terminal.height();
        let mut screen = Screen::new(theme, Transcript::new(look), editor, footer, height);
        if let Some(fullscreen) = &options.fullscreen {
            screen.viewport = Some(knightcode_tui::viewport::Viewport::new());
            screen.scrollbar.policy = fullscreen.scrollbar;
        }
        let mut ui = Self {
            terminal,
            screen,
            session: SessionMirror::default(),
            link: SessionLink::default(),
            jobs: BackgroundJobs::new(),
            ext_ui: ExtensionUi::default(),
            prefs: Preferences::new(bindings),
            themes: ThemeState::new(options.theme.clone()),
            places,
            keys: KeyState::default(),
            attachments: Attachments::default(),
            login: None,
            plan_review_due: false,
            resource_commands,
            recent_diagnostics: VecDeque::new(),
            quitting: false,
            exit_code: 0,
            resume_hint: None,
            app_title: String::new(),
            verbose: options.verbose,
            fullscreen_options: options.fullscreen.unwrap_or_default(),
            pointer: super::select::Pointer::default(),
        };
        if let Some(key) = ui.prefs.bindings().keys_for("app.interrupt").first() {
            let key = key.to_string();
            ui.screen.interrupt_key = if key == "escape" {
                "esc".to_owned()
            } else {
                key
            };
        }
        for warning in warnings {
            ui.warn(&warning);
        }
        Ok(ui)
    }

    /// Shows a started session (before it moves into its task): header, library, history.
    pub fn attach(&mut self, session: &AgentSession) {
        self.ext_ui.connect(session.component_channel());
        if let (Some(channel), Some((width, height))) =
            (self.ext_ui.channel(), self.terminal.size())
        {
            channel.resize(width, height);
        }
        self.session.attach(session);
        self.themes.adopt_sources(session.resources());
        let theme_warnings = self.load_theme(session.settings(), self.session.trusted());
        self.apply_display_settings(session.settings());
        self.screen.header = super::startup::header(&self.screen.theme, session, self.verbose);
        self.prefs
            .set_skill_commands(session.settings().enable_skill_commands());
        self.refresh_resource_commands();
        self.apply_snapshot(session.snapshot());
        self.reload_transcript();
        self.refresh_shortcuts();
        for warning in theme_warnings {
            self.warn(&warning);
        }
    }

    /// The session now runs in its task: commands go through `handle`, news comes on
    /// `events`.
    pub fn connect(&mut self, handle: SessionHandle, events: SessionEvents) {
        self.link.connect(handle, events);
    }

    /// Sends a command; its reply comes back as `Wake::Event` and is handled as `pending`
    /// says. False when the session is gone.
    pub fn send(&mut self, command: Command, pending: Pending) -> bool {
        self.link.send(command, pending)
    }

    /// Asks for a fresh snapshot (after anything that may have changed the session).
    pub fn request_snapshot(&mut self) {
        self.send(
            Command::Snapshot,
            Pending::Snapshot {
                reload: false,
                then: super::actions::AfterReload::default(),
            },
        );
    }

    /// Takes up a snapshot of the session (model, thinking level, another file).
    pub fn apply_snapshot(&mut self, snapshot: SessionSnapshot) {
        let thinking = self.session.apply(snapshot);
        let reasoning = self.session.current_model().is_some_and(|m| m.reasoning);
        let border = border_index(thinking.as_str(), reasoning);
        self.screen.border = self.screen.theme.thinking_borders[border];
        self.update_footer();
        self.mark_dirty();
    }

    /// Rebuilds the transcript from the session's current branch.
    pub fn reload_transcript(&mut self) {
        if let Some(view) = self.session.view() {
            let items = view.transcript();
            self.screen.transcript.load_items(&items);
            // Up recalls this conversation's prompts, as if they had been typed here.
            for item in &items {
                if let knightcode_runtime::TranscriptItem::Message(
                    knightcode_protocol::AgentMessage::User(user),
                ) = item
                {
                    let text = user.content.text();
                    if !text.trim().is_empty() {
                        self.screen.editor.add_to_history(&text);
                    }
                }
            }
        }
        self.terminal.request_full_redraw();
        self.request_tool_renders(None);
        self.mark_dirty();
    }

    /// The terminal's width as the last frame was laid out for.
    pub fn screen_width(&self) -> u16 {
        self.terminal.width()
    }

    pub fn update_footer(&mut self) {
        let Some(view) = self.session.view() else {
            return;
        };
        let stats = view.stats();
        let model = view.model();
        let data = &mut self.screen.footer;
        data.input_tokens = stats.tokens.input;
        data.output_tokens = stats.tokens.output;
        data.cache_read = stats.tokens.cache_read;
        data.cache_write = stats.tokens.cache_write;
        data.cost = stats.cost.0;
        data.reset_context(
            stats
                .context_usage
                .as_ref()
                .and_then(|usage| usage.tokens.as_ref().copied()),
        );
        let routed = view.routed_model();
        data.context_window = routed.unwrap_or(model).context_window;
        data.virtual_selection = model.api == knightcode_ai::VIRTUAL_API;
        // The level a response used is in the message; the live update brings it.
        if !data.virtual_selection {
            data.routed = None;
        } else if let Some(routed) = routed
            && data
                .routed
                .as_deref()
                .is_none_or(|label| label.split(" • ").next() != Some(routed.id.as_str()))
        {
            data.routed = Some(crate::footer::routed_label(&routed.id, None));
        }
        data.auto_compaction = view.state(false).auto_compaction_enabled;
        data.provider = model.provider.clone();
        self.screen.transcript.provider.clone_from(&model.provider);
        data.model = if model.is_unselected() {
            "no model".to_owned()
        } else {
            model.id.clone()
        };
        data.thinking = model
            .reasoning
            .then(|| view.thinking_level().as_str().to_owned());
        let mut providers: Vec<&str> = self
            .session
            .models()
            .iter()
            .map(|m| m.provider.as_str())
            .collect();
        providers.sort_unstable();
        providers.dedup();
        data.show_provider = providers.len() > 1;
        // Read again after every run: the agent's shell (or the user's) may have switched
        // branches. One small file, no git process.
        let head = footer::git_head(self.places.cwd());
        data.git_branch = head.as_ref().map(|head| head.shown().to_owned());
        self.ext_ui.footer_data(
            head.as_ref().map(|head| head.for_extensions().to_owned()),
            providers.len(),
        );
        data.session_name = self
            .session
            .library()
            .and_then(knightcode_runtime::sessions::SessionLibrary::session_name);
        // The window title names the session (or the folder), so a terminal full of tabs
        // tells them apart.
        let place = data.session_name.clone().unwrap_or_else(|| {
            let cwd = self.places.cwd();
            cwd.file_name().map_or_else(
                || cwd.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            )
        });
        self.app_title = format!("knightcode · {place}");
        self.refresh_title();
    }

    /// The session's dialogs for extensions (`ctx.ui`), answered by this loop.
    pub fn extension_dialogs(&self) -> super::ext_ui::TuiDialogs {
        self.ext_ui.dialogs()
    }

    /// Keeps the text extensions read (`getEditorText`) in step with the editor.
    pub fn share_editor_text(&mut self) {
        self.ext_ui.share_editor_text(self.screen.editor.text());
    }

    /// Sets the window title: an extension's (`setTitle`) over the app's own.
    pub fn refresh_title(&mut self) {
        let title = self
            .ext_ui
            .title()
            .map_or_else(|| self.app_title.clone(), str::to_owned);
        self.terminal.set_title(title);
    }

    pub fn mark_dirty(&mut self) {
        self.terminal.mark_dirty();
    }

    /// Draw at the next opportunity without waiting for the frame slot.
    pub fn mark_urgent(&mut self) {
        self.terminal.mark_urgent();
    }

    /// Completion's prompt templates and skill commands from the resources last loaded.
    pub fn refresh_resource_commands(&mut self) {
        // Extensions' commands first, then prompt templates and skills (the order of
        // the reference's `get_commands`).
        let mut commands = self
            .ext_ui
            .channel()
            .map(knightcode_runtime::dialogs::ComponentChannel::commands)
            .unwrap_or_default();
        // The built-in plan mode is an extension of ours: listed with them, unless one of
        // the user's replaced it.
        if self.session.builtin_plan_mode() && !commands.iter().any(|c| c.name == "plan") {
            commands.insert(
                0,
                knightcode_runtime::resources::CompletionCommand {
                    name: "plan".to_owned(),
                    hint: Some("[task | off | approve [N [note]]]".to_owned()),
                    description:
                        "Plan first: the model only reads and asks until you approve its plan"
                            .to_owned(),
                },
            );
        }
        if let Some(resources) = self.session.resources() {
            commands.extend(knightcode_runtime::resources::completion_commands(
                resources,
                self.prefs.skill_commands(),
            ));
        }
        self.resource_commands.set(commands);
    }

    /// `showHardwareCursor`: the terminal's cursor stays visible at the editor's cursor.
    pub fn set_hardware_cursor(&mut self, show: bool) {
        self.terminal.set_show_hardware_cursor(show);
        self.request_full_redraw();
    }

    pub fn request_full_redraw(&mut self) {
        self.terminal.request_full_redraw();
        self.mark_urgent();
    }

    pub fn info(&mut self, text: &str) {
        self.screen.transcript.notice(NoticeKind::Info, text);
        self.mark_urgent();
    }

    /// A status line in the transcript (see `Transcript::status`).
    pub fn status(&mut self, text: &str) {
        self.screen.transcript.status(text);
        self.mark_urgent();
    }

    pub fn warn(&mut self, text: &str) {
        self.remember_diagnostic("warning", text);
        self.screen.transcript.notice(NoticeKind::Warning, text);
        self.mark_urgent();
    }

    pub fn error(&mut self, text: &str) {
        self.remember_diagnostic("error", text);
        self.screen.transcript.notice(NoticeKind::Error, text);
        self.mark_urgent();
    }

    fn remember_diagnostic(&mut self, level: &str, text: &str) {
        const KEPT: usize = 50;
        if self.recent_diagnostics.len() == KEPT {
            self.recent_diagnostics.pop_front();
        }
        self.recent_diagnostics
            .push_back(format!("{level}: {text}"));
    }

    /// The last errors and warnings shown, oldest first.
    pub fn recent_diagnostics(&self) -> impl Iterator<Item = &String> {
        self.recent_diagnostics.iter()
    }

    pub fn set_working(&mut self, message: Option<&str>) {
        match message {
            Some(message) => {
                // An extension's working message stands in for the agent's own.
                let message = match self.ext_ui.working_message() {
                    Some(custom) if message == "Working…" => custom,
                    _ => message,
                };
                let (frame, since) = match &self.screen.status {
                    Status::Working { frame, since, .. } => (*frame, *since),
                    Status::Idle => (0, Instant::now()),
                };
                // With the agent idle, the key only cancels shell commands.
                self.screen.interrupt_verb = if self.session.running() {
                    "interrupt"
                } else {
                    "cancel"
                };
                self.screen.status = Status::Working {
                    message: message.to_owned(),
                    frame,
                    since,
                };
                self.terminal.start_spinner();
                self.terminal
                    .keep_progress(self.prefs.display().terminal_progress);
            }
            None => {
                self.screen.status = Status::Idle;
                self.terminal.stop_spinner();
                self.terminal.clear_progress();
            }
        }
        self.mark_dirty();
    }

    /// Ends the tab's busy indicator, if one was sent.
    pub(super) fn clear_progress(&mut self) {
        self.terminal.clear_progress();
    }

    /// Waits for the next thing to react to. Cancel-safe (used inside `select!`).
    pub async fn wait(&mut self) -> Wake {
        if self.keys.has_queued() {
            return Wake::Queued;
        }
        // While a reply streams, events are collected once per frame; they wait in the
        // agent's bounded channel meanwhile.
        let batch_events = self.terminal.batches_events(self.session.running());
        let deadline = [
            self.terminal.deadline(batch_events),
            self.keys.ctrl_c_expiry(),
            self.screen.scrollbar.deadline(),
        ]
        .into_iter()
        .flatten()
        .min();
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            wake = self.terminal.next() => wake,
            event = self.link.recv(), if !batch_events => match event {
                Some(event) => Wake::Event(event),
                None => Wake::SessionEnded,
            },
            wake = self.jobs.next() => wake,
            () = self.themes.changed() => Wake::ThemeFile,
            Some(message) = self.ext_ui.recv() => Wake::ExtensionUi(message),
            () = sleep => Wake::Timer,
        }
    }

    /// Turns raw input into events, handling the escape timeout.
    pub fn parse_input(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        self.terminal.parse_input(bytes)
    }

    /// Timers that came due: a lone escape, the spinner, the Ctrl+C window, the
    /// scrollbar's moment.
    pub fn on_timer(&mut self) -> Vec<InputEvent> {
        let now = Instant::now();
        self.expire_ctrl_c(now);
        if self.screen.scrollbar.expire(now) {
            self.mark_dirty();
        }
        if self.terminal.spinner_due(now) {
            self.screen.advance_spinner();
            self.screen.transcript.tick();
            self.terminal
                .keep_progress(self.prefs.display().terminal_progress);
            self.mark_dirty();
        }
        self.terminal.flush_escape(now)
    }

    pub fn on_resize(&mut self) {
        let Some(resized) = self.terminal.resize() else {
            return;
        };
        self.screen.height = resized.height;
        if let Some(channel) = self.ext_ui.channel() {
            channel.resize(resized.width, resized.height);
        }
        if resized.width_changed {
            // The lines are laid out again: the selection's cells would be other text.
            self.clear_selection();
            self.request_tool_renders(None);
        }
    }

    /// An extension lends the terminal to a program (`tui.stop()`) or takes it back
    /// (`tui.start()`). While it is lent nothing is drawn; taken back, everything is drawn
    /// afresh (the program wrote over the screen).
    pub fn lend_terminal(&mut self, lend: bool) {
        if self.terminal.lend(lend) && !lend {
            self.on_resize();
            self.request_full_redraw();
        }
    }

    /// Draws now if anything changed.
    pub fn draw(&mut self) {
        self.terminal.draw(&mut self.screen);
    }

    /// Draws if a keystroke asked for it or the frame slot has come.
    pub fn draw_if_due(&mut self) {
        self.terminal.draw_if_due(&mut self.screen);
    }

    /// Writes raw bytes between frames (OSC 52 clipboard).
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.terminal.write_raw(bytes);
    }

    /// Hands the terminal to a child process and takes it back. Full-screen editors use
    /// the alternate screen, so our screen comes back as it was (`back_to_shell` false);
    /// after Ctrl+Z the shell has printed below it, so everything is drawn afresh.
    pub fn with_terminal_released<T>(&mut self, back_to_shell: bool, f: impl FnOnce() -> T) -> T {
        let result = self.terminal.released(back_to_shell, f);
        self.on_resize();
        result
    }

    /// Restores the terminal; the transcript stays in the scrollback, followed by how to
    /// come back to this conversation.
    pub fn leave(&mut self) {
        self.screen.hint = None;
        let farewell = self
            .resume_hint
            .take()
            .map(|hint| self.screen.theme.muted.paint(&hint));
        let transcript =
            self.fullscreen_options.exit_output == super::fullscreen::ExitOutput::Transcript;
        self.terminal.leave(&mut self.screen, farewell, transcript);
    }

    /// Remembers how to resume the session, if it was saved.
    pub fn set_resume_hint(&mut self) {
        let Some(view) = self.session.view() else {
            return;
        };
        let stats = view.stats();
        if stats.session_file.is_some() && stats.user_messages > 0 {
            self.resume_hint = Some(format!(
                "Resume this session with: knightcode --session {}",
                stats.session_id
            ));
        }
    }

    /// The loop ends after this wake-up (the user quit, the terminal went away).
    pub fn quit(&mut self) {
        self.quitting = true;
    }

    /// A signal ends the app with the exit code it means.
    pub fn quit_with(&mut self, exit_code: u8) {
        self.exit_code = exit_code;
        self.quitting = true;
    }

    pub fn quitting(&self) -> bool {
        self.quitting
    }

    pub fn exit_code(&self) -> u8 {
        self.exit_code
    }
}

/// Index into the theme's thinking-level border colours.
fn border_index(level: &str, reasoning: bool) -> usize {
    if !reasoning {
        return 0;
    }
    match level {
        "minimal" => 1,
        "low" => 2,
        "medium" => 3,
        "high" => 4,
        "xhigh" => 5,
        _ => 0,
    }
}
