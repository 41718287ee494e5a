//! [`Ui`]: the terminal, the renderer, the input parser and the [`Screen`], plus what the app
//! knows of the session it shows: the last [`SessionSnapshot`], the handle it sends commands
//! through and the replies it waits for. The session itself runs in its own task.

use std::path::PathBuf;
use std::time::Instant;

use std::collections::HashMap;

use knightcode_ai::Model;
use knightcode_runtime::AgentSession;
use knightcode_runtime::Command;
use knightcode_runtime::Responder;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::SessionEvents;
use knightcode_runtime::SessionHandle;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::actor::SessionSnapshot;
use knightcode_runtime::agent_session::operations::SessionView;
use knightcode_runtime::sessions::SessionLibrary;
use knightcode_runtime::shutdown::TerminationSignals;
use knightcode_tui::InputEvent;
use knightcode_tui::Theme;
use knightcode_tui::editor::Editor;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::keys::InputParser;
use knightcode_tui::renderer::Renderer;
use knightcode_tui::terminal::InputReaderHandle;
use knightcode_tui::terminal::Terminal;
use tokio::signal::unix::Signal;
use tokio::signal::unix::SignalKind;
use tokio::sync::mpsc;

use super::ESCAPE_TIMEOUT;
use super::FRAME_INTERVAL;
use super::SPINNER_INTERVAL;
use super::actions::Pending;
use super::screen::Screen;
use super::screen::Status;
use crate::error::InteractiveError;
use crate::footer;
use crate::footer::FooterData;
use crate::transcript::Look;
use crate::transcript::NoticeKind;
use crate::transcript::Transcript;

/// OSC 9;4 indeterminate progress, and its end (the reference's sequences).
const PROGRESS_ACTIVE: &[u8] = b"\x1b]9;4;3\x07";
const PROGRESS_CLEAR: &[u8] = b"\x1b]9;4;0;\x07";

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
    term: Terminal,
    reader: Option<InputReaderHandle>,
    input: mpsc::UnboundedReceiver<Vec<u8>>,
    parser: InputParser,
    renderer: Renderer,
    pub screen: Screen,
    pub bindings: Keybindings,
    /// Prompt templates and skill commands for `/` completion (refreshed by `/reload`).
    pub resource_commands: super::completion::ResourceCommands,
    pub events: Option<SessionEvents>,
    pub handle: Option<SessionHandle>,
    pub view: Option<SessionView>,
    /// Commands sent whose replies have not come back, by tag.
    pub pending: HashMap<u64, Pending>,
    next_tag: u64,
    /// `!` commands running, by the id their output events carry: the card they fill.
    pub bash_cards: HashMap<String, usize>,
    /// Session files and the open session's tree, labels and name, through the runtime
    /// (valid across /new, /resume, /fork: the open session is swapped inside it).
    pub library: Option<SessionLibrary>,
    pub clipboard_env: super::clipboard_image::ClipboardEnv,
    pub clipboard_tx: mpsc::UnboundedSender<super::clipboard_image::ClipboardRead>,
    clipboard_rx: mpsc::UnboundedReceiver<super::clipboard_image::ClipboardRead>,
    pub jobs_tx: mpsc::UnboundedSender<super::sharing::JobDone>,
    jobs_rx: mpsc::UnboundedReceiver<super::sharing::JobDone>,
    /// The last errors and warnings shown, oldest first (`/bug` reports them).
    pub recent_diagnostics: std::collections::VecDeque<String>,
    /// The `--models` scope as (provider, id): the model picker starts on these.
    pub scoped_models: Vec<(String, String)>,
    /// Images pasted from the clipboard so far (they are named by number).
    pub clipboard_images: usize,
    winch: Signal,
    /// SIGTERM / SIGHUP, as the exit code they mean.
    termination: TerminationSignals,
    /// Something changed since the last frame.
    dirty: bool,
    /// Draw at once (a keystroke), not at the next frame slot.
    urgent: bool,
    last_frame: Instant,
    next_spinner: Option<Instant>,
    escape_deadline: Option<Instant>,
    pub running: bool,
    /// `enableSkillCommands`: skills are offered as `/skill:name` in completion.
    pub skill_commands: bool,
    /// A compaction's or a left branch's summary is being written (esc cancels it).
    pub compacting: bool,
    /// `branchSummary.skipPrompt`, as of the last snapshot.
    pub skip_branch_summary_prompt: bool,
    pub quitting: bool,
    pub exit_code: u8,
    pub last_ctrl_c: Option<Instant>,
    /// Escape was pressed on an empty editor; the next Escape opens the tree.
    pub escape_armed: bool,
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub home: Option<PathBuf>,
    /// Models with credentials (the model picker and Ctrl+P), refreshed when idle.
    pub models: Vec<Model>,
    pub current_model: Option<Model>,
    pub thinking_levels: Vec<knightcode_ai::ThinkingLevel>,
    /// Images attached by pasting their paths, sent with the next prompt.
    pub pending_images: Vec<knightcode_protocol::ContentBlock>,
    /// This project's session folder and whether listings filter by folder.
    pub sessions_location: (PathBuf, bool),
    /// Whether this session loaded the project's protected resources.
    pub session_trusted: bool,
    /// Printed under the transcript on exit.
    resume_hint: Option<String>,
    /// Input events not handled yet: keys typed after Enter wait until the submitted line
    /// has been acted on (a command may open a picker they belong to).
    pub queued_input: std::collections::VecDeque<InputEvent>,
    frames_drawn: u64,
    /// The window title last set.
    title: String,
    /// The title the app would set (the session's name or folder).
    app_title: String,
    /// The theme file's export `pageBg`, `cardBg` and `infoBg` (HTML export).
    pub export_backgrounds: [Option<String>; 3],
    /// `--theme`, `--no-themes`, `--use-theme`.
    pub(super) theme_flags: knightcode_runtime::resources::ThemeFlags,
    /// The themes found, and the name of the one drawn with.
    pub(super) themes: knightcode_runtime::resources::themes::Themes,
    pub theme_name: String,
    /// Settings this process changed (`/settings`, ctrl+t), on top of the file's until
    /// the session has written them.
    pub settings_changes: serde_json::Map<String, serde_json::Value>,
    /// The interface's settings (`doubleEscapeAction`, `editorPaddingX`, ...).
    pub display: super::settings::DisplaySettings,
    /// The session's resources as last loaded (completion is rebuilt from them).
    pub resources: Option<std::sync::Arc<knightcode_runtime::resources::Resources>>,
    /// `--verbose`: the full header even with `quietStartup`.
    pub verbose: bool,
    pub(super) theme_watch: super::theme_watch::ThemeWatch,
    /// The terminal shows 24-bit colour (else themes use the 256-colour palette).
    pub(super) truecolor: bool,
    /// When the OSC 9;4 progress was last sent (`terminal.showTerminalProgress`), while
    /// the working indicator shows.
    progress_sent: Option<Instant>,
    theme_rx: mpsc::UnboundedReceiver<()>,
    /// What extensions show (dialogs waiting, the title they set), and where their
    /// requests arrive.
    pub ext_ui: super::ext_ui::ExtensionUi,
    ext_ui_tx: mpsc::UnboundedSender<super::ext_ui::ExtUiMessage>,
    /// Keys, size and theme for extensions' components (when extensions are loaded).
    pub components: Option<knightcode_runtime::dialogs::ComponentChannel>,
    /// Extensions' shortcuts that apply, by key.
    pub ext_shortcuts: Vec<(knightcode_tui::KeyBinding, String)>,
    /// The editor's text for extensions (`ctx.ui.getEditorText()`).
    shared_editor_text: std::sync::Arc<std::sync::Mutex<String>>,
    /// The git branch and provider count extensions' footers were last told (their
    /// `footerData`), so a change is sent once.
    footer_data_sent: Option<(Option<String>, usize)>,
    /// An extension has handed the terminal to a program (`tui.stop()`).
    terminal_lent: bool,
}

fn home_string(home: Option<&PathBuf>) -> Option<String> {
    home.map(|h| h.to_string_lossy().into_owned())
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
        let mut term = Terminal::enter()?;
        term.restore_on_panic();
        let (width, height) = term.size()?;
        let (tx, input) = mpsc::unbounded_channel();
        // An empty chunk means the terminal went away; it reaches the loop as a closed input.
        let reader = term.spawn_input_reader(move |bytes: Vec<u8>| {
            if bytes.is_empty() {
                return false;
            }
            tx.send(bytes).is_ok()
        })?;
        let mut renderer = Renderer::new(width, height);
        // Unknown start row: assume the last, which is never wrong, only cautious.
        renderer.set_start_row(term.start_row().unwrap_or(height.saturating_sub(1)));
        let mut parser = InputParser::new();
        parser.set_kitty_active(term.kitty_active());
        let cwd_string = setup.cwd.to_string_lossy().into_owned();
        let home = setup.home.clone();
        let look = Look {
            theme: theme.clone(),
            cwd: cwd_string.clone(),
            home: home_string(home.as_ref()),
            tools_expanded: false,
            thinking_hidden: false,
            hidden_thinking_label: None,
        };
        let mut editor = Editor::new(&theme);
        let resource_commands = super::completion::ResourceCommands::default();
        editor.set_completion_provider(Box::new(super::completion::Completer::new(
            setup.cwd.clone(),
            resource_commands.clone(),
        )));
        let footer = FooterData {
            cwd: footer::tilde(&cwd_string, home_string(home.as_ref()).as_deref()),
            git_branch: footer::git_head(&setup.cwd).map(|head| head.shown().to_owned()),
            ..FooterData::default()
        };
        let screen = Screen::new(theme, Transcript::new(look), editor, footer, height);
        let (clipboard_tx, clipboard_rx) = mpsc::unbounded_channel();
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let (theme_tx, theme_rx) = mpsc::unbounded_channel();
        let (ext_ui_tx, ext_ui_rx) = mpsc::unbounded_channel();
        let mut ui = Self {
            term,
            reader: Some(reader),
            input,
            parser,
            renderer,
            screen,
            bindings,
            resource_commands,
            events: None,
            handle: None,
            view: None,
            pending: HashMap::new(),
            next_tag: 0,
            bash_cards: HashMap::new(),
            library: None,
            clipboard_env: super::clipboard_image::ClipboardEnv::from_process(),
            clipboard_tx,
            clipboard_rx,
            jobs_tx,
            jobs_rx,
            recent_diagnostics: std::collections::VecDeque::new(),
            clipboard_images: 0,
            scoped_models: Vec::new(),
            winch: tokio::signal::unix::signal(SignalKind::window_change())?,
            termination: TerminationSignals::install()?,
            dirty: true,
            urgent: true,
            last_frame: Instant::now(),
            next_spinner: None,
            escape_deadline: None,
            running: false,
            skill_commands: true,
            compacting: false,
            skip_branch_summary_prompt: false,
            quitting: false,
            exit_code: 0,
            last_ctrl_c: None,
            escape_armed: false,
            cwd: setup.cwd.clone(),
            agent_dir: setup.agent_dir.clone(),
            home,
            models: Vec::new(),
            current_model: None,
            thinking_levels: Vec::new(),
            pending_images: Vec::new(),
            sessions_location: (options.sessions_dir.clone(), options.sessions_filter_by_cwd),
            session_trusted: false,
            resume_hint: None,
            queued_input: std::collections::VecDeque::new(),
            frames_drawn: 0,
            export_backgrounds: [None, None, None],
            theme_flags: options.theme.clone(),
            title: String::new(),
            app_title: String::new(),
            themes: knightcode_runtime::resources::themes::Themes::default(),
            theme_name: "dark".to_owned(),
            settings_changes: serde_json::Map::new(),
            display: super::settings::DisplaySettings::default(),
            resources: None,
            verbose: options.verbose,
            theme_watch: super::theme_watch::ThemeWatch::start(theme_tx),
            truecolor: true,
            progress_sent: None,
            theme_rx,
            footer_data_sent: None,
            terminal_lent: false,
            ext_ui: super::ext_ui::ExtensionUi::new(ext_ui_rx),
            ext_ui_tx,
            components: None,
            ext_shortcuts: Vec::new(),
            shared_editor_text: std::sync::Arc::default(),
        };
        if let Some(key) = ui.bindings.keys_for("app.interrupt").first() {
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
        self.components = session.component_channel();
        self.footer_data_sent = None;
        if let (Some(channel), Ok((width, height))) = (&self.components, self.term.size()) {
            channel.resize(width, height);
        }
        self.library = Some(session.library());
        self.session_trusted = session.trust().trusted;
        self.theme_flags
            .packages
            .clone_from(&session.resources().package_themes);
        self.theme_flags
            .extensions
            .clone_from(&session.resources().extension_themes);
        let theme_warnings = self.load_theme(session.settings(), self.session_trusted);
        self.apply_display_settings(session.settings());
        self.screen.header = super::startup::header(&self.screen.theme, session, self.verbose);
        self.skill_commands = session.settings().enable_skill_commands();
        self.resources = Some(std::sync::Arc::clone(session.resources()));
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
        self.handle = Some(handle);
        self.events = Some(events);
    }

    /// Sends a command; its reply comes back as `Wake::Event` and is handled as `pending`
    /// says. False when the session is gone.
    pub fn send(&mut self, command: Command, pending: Pending) -> bool {
        let Some(handle) = &self.handle else {
            return false;
        };
        let tag = self.next_tag;
        self.next_tag += 1;
        self.pending.insert(tag, pending);
        handle.send(command, Responder::Stream(tag));
        true
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
        let SessionSnapshot {
            view,
            models,
            scoped_models,
            model,
            thinking,
            thinking_levels,
            skip_branch_summary_prompt,
        } = snapshot;
        self.skip_branch_summary_prompt = skip_branch_summary_prompt;
        self.models = models;
        self.scoped_models = scoped_models;
        let border = border_index(thinking.as_str(), model.reasoning);
        self.current_model = Some(model);
        self.thinking_levels = thinking_levels;
        self.screen.border = self.screen.theme.thinking_borders[border];
        self.view = Some(view);
        self.update_footer();
        self.mark_dirty();
    }

    /// Rebuilds the transcript from the session's current branch.
    pub fn reload_transcript(&mut self) {
        if let Some(view) = &self.view {
            let messages = view.messages();
            self.screen.transcript.load(&messages);
            // Up recalls this conversation's prompts, as if they had been typed here.
            for message in &messages {
                if let knightcode_protocol::AgentMessage::User(user) = message {
                    let text = user.content.text();
                    if !text.trim().is_empty() {
                        self.screen.editor.add_to_history(&text);
                    }
                }
            }
        }
        self.renderer.request_full_redraw();
        self.request_tool_renders(None);
        self.mark_dirty();
    }

    /// The terminal's width as the last frame was laid out for.
    pub fn screen_width(&self) -> u16 {
        self.renderer.width()
    }

    pub fn update_footer(&mut self) {
        let Some(view) = &self.view else {
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
        data.context_window = model.context_window;
        data.auto_compaction = view.state(false).auto_compaction_enabled;
        data.provider = model.provider.clone();
        self.screen.transcript.provider.clone_from(&model.provider);
        data.model = model.id.clone();
        data.thinking = model
            .reasoning
            .then(|| view.thinking_level().as_str().to_owned());
        let mut providers: Vec<&str> = self.models.iter().map(|m| m.provider.as_str()).collect();
        providers.sort_unstable();
        providers.dedup();
        data.show_provider = providers.len() > 1;
        // Read again after every run: the agent's shell (or the user's) may have switched
        // branches. One small file, no git process.
        let head = footer::git_head(&self.cwd);
        data.git_branch = head.as_ref().map(|head| head.shown().to_owned());
        let footer_data = (
            head.as_ref().map(|head| head.for_extensions().to_owned()),
            providers.len(),
        );
        if self.footer_data_sent.as_ref() != Some(&footer_data) {
            if let Some(channel) = &self.components {
                channel.footer_data(footer_data.0.as_deref(), footer_data.1);
            }
            self.footer_data_sent = Some(footer_data);
        }
        data.session_name = self.library.as_ref().and_then(SessionLibrary::session_name);
        // The window title names the session (or the folder), so a terminal full of tabs
        // tells them apart.
        let place = data.session_name.clone().unwrap_or_else(|| {
            self.cwd.file_name().map_or_else(
                || self.cwd.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            )
        });
        self.app_title = format!("knightcode · {place}");
        self.refresh_title();
    }

    /// The session's dialogs for extensions (`ctx.ui`), answered by this loop.
    pub fn extension_dialogs(&self) -> super::ext_ui::TuiDialogs {
        super::ext_ui::TuiDialogs::new(
            self.ext_ui_tx.clone(),
            std::sync::Arc::clone(&self.shared_editor_text),
        )
    }

    /// Keeps the text extensions read (`getEditorText`) in step with the editor.
    pub fn share_editor_text(&mut self) {
        let text = self.screen.editor.text();
        let mut shared = self
            .shared_editor_text
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *shared != text {
            *shared = text;
        }
    }

    /// Sets the window title: an extension's (`setTitle`) over the app's own.
    pub fn refresh_title(&mut self) {
        let title = self
            .ext_ui
            .title
            .clone()
            .unwrap_or_else(|| self.app_title.clone());
        if title != self.title {
            let _ = self.term.set_title(&title);
            self.title = title;
        }
    }

    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Draw at the next opportunity without waiting for the frame slot.
    pub fn mark_urgent(&mut self) {
        self.dirty = true;
        self.urgent = true;
    }

    /// Completion's prompt templates and skill commands from the resources last loaded.
    pub fn refresh_resource_commands(&mut self) {
        // Extensions' commands first, then prompt templates and skills (the order of
        // the reference's `get_commands`).
        let mut commands = self
            .components
            .as_ref()
            .map(knightcode_runtime::dialogs::ComponentChannel::commands)
            .unwrap_or_default();
        if let Some(resources) = &self.resources {
            commands.extend(knightcode_runtime::resources::completion_commands(
                resources,
                self.skill_commands,
            ));
        }
        self.resource_commands.set(commands);
    }

    /// Takes up the extensions' shortcuts (start, `/reload`), warning about conflicts.
    pub fn refresh_shortcuts(&mut self) {
        let Some(channel) = &self.components else {
            return;
        };
        let (active, warnings) =
            super::ext_ui::resolve_shortcuts(&self.bindings, &channel.shortcuts());
        self.ext_shortcuts = active;
        for warning in warnings {
            self.warn(&warning);
        }
    }

    /// Whether `text` runs an extension's command (no working row: the command shows
    /// what it does itself, and a turn it starts brings the row back).
    pub fn is_extension_command(&self, text: &str) -> bool {
        let Some(name) = command_name(text) else {
            return false;
        };
        self.components
            .as_ref()
            .is_some_and(|channel| channel.commands().iter().any(|c| c.name == name))
    }

    /// Whether an extension's command of this name runs instead of ours: for the commands
    /// only KnightCode has (`/tools`, `/undo`, `/trust`, …), so an extension written for the
    /// reference keeps the name it chose; the reference's own built-ins stay ours, as there.
    pub fn extension_takes_command(&self, text: &str) -> bool {
        command_name(text).is_some_and(|name| !REFERENCE_BUILTINS.contains(&name))
            && self.is_extension_command(text)
    }

    /// `showHardwareCursor`: the terminal's cursor stays visible at the editor's cursor.
    pub fn set_hardware_cursor(&mut self, show: bool) {
        self.renderer.set_show_hardware_cursor(show);
        self.request_full_redraw();
    }

    pub fn request_full_redraw(&mut self) {
        self.renderer.request_full_redraw();
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

    pub fn set_working(&mut self, message: Option<&str>) {
        match message {
            Some(message) => {
                // An extension's working message stands in for the agent's own.
                let message = match &self.ext_ui.working_message {
                    Some(custom) if message == "Working…" => custom.as_str(),
                    _ => message,
                };
                let (frame, since) = match &self.screen.status {
                    Status::Working { frame, since, .. } => (*frame, *since),
                    Status::Idle => (0, Instant::now()),
                };
                // With the agent idle, the key only cancels shell commands.
                self.screen.interrupt_verb = if self.running { "interrupt" } else { "cancel" };
                self.screen.status = Status::Working {
                    message: message.to_owned(),
                    frame,
                    since,
                };
                if self.next_spinner.is_none() {
                    self.next_spinner = Some(Instant::now() + SPINNER_INTERVAL);
                }
                self.keep_progress();
            }
            None => {
                self.screen.status = Status::Idle;
                self.next_spinner = None;
                self.clear_progress();
            }
        }
        self.mark_dirty();
    }

    /// `terminal.showTerminalProgress`: the tab's busy indicator (OSC 9;4;3), sent again
    /// every second as the reference does (terminals drop it after a while).
    fn keep_progress(&mut self) {
        const KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(1);
        if !self.display.terminal_progress
            || self
                .progress_sent
                .is_some_and(|at| at.elapsed() < KEEPALIVE)
        {
            return;
        }
        self.progress_sent = Some(Instant::now());
        self.write_raw(PROGRESS_ACTIVE);
    }

    /// Ends the busy indicator, if one was sent.
    pub(super) fn clear_progress(&mut self) {
        if self.progress_sent.take().is_some() {
            self.write_raw(PROGRESS_CLEAR);
        }
    }

    /// The earliest timer: a pending escape, a frame slot, the spinner.
    fn next_deadline(&self) -> Option<Instant> {
        let frame = (self.dirty && !self.urgent).then(|| self.last_frame + FRAME_INTERVAL);
        [self.escape_deadline, frame, self.next_spinner]
            .into_iter()
            .flatten()
            .min()
    }

    /// Waits for the next thing to react to. Cancel-safe (used inside `select!`).
    pub async fn wait(&mut self) -> Wake {
        if !self.queued_input.is_empty() {
            return Wake::Queued;
        }
        // While a reply streams, events are collected once per frame rather than one wake-up
        // each (a fast stream sends a thousand a second); they wait in the agent's bounded
        // channel meanwhile. Keys still wake the loop at once.
        let batch_events = self.running && self.last_frame.elapsed() < FRAME_INTERVAL;
        let deadline = if batch_events {
            let frame_due = self.last_frame + FRAME_INTERVAL;
            Some(
                self.next_deadline()
                    .map_or(frame_due, |at| at.min(frame_due)),
            )
        } else {
            self.next_deadline()
        };
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        let events = async {
            match &mut self.events {
                Some(events) => events.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            code = self.termination.recv() => Wake::Signal(code),
            bytes = self.input.recv() => match bytes {
                Some(bytes) => Wake::Input(bytes),
                None => Wake::InputClosed,
            },
            _ = self.winch.recv() => Wake::Resize,
            event = events, if !batch_events => match event {
                Some(event) => Wake::Event(event),
                None => Wake::SessionEnded,
            },
            Some(read) = self.clipboard_rx.recv() => Wake::Clipboard(read),
            Some(done) = self.jobs_rx.recv() => Wake::Job(done),
            Some(()) = self.theme_rx.recv() => Wake::ThemeFile,
            Some(message) = self.ext_ui.rx.recv() => Wake::ExtensionUi(message),
            () = sleep => Wake::Timer,
        }
    }

    /// Turns raw input into events, handling the escape timeout.
    pub fn parse_input(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        let events = self.parser.feed(bytes);
        self.escape_deadline = self
            .parser
            .has_pending()
            .then(|| Instant::now() + ESCAPE_TIMEOUT);
        events
    }

    /// Timers that came due: a lone escape, the spinner.
    pub fn on_timer(&mut self) -> Vec<InputEvent> {
        let now = Instant::now();
        if let Some(at) = self.next_spinner
            && at <= now
        {
            self.screen.advance_spinner();
            self.screen.transcript.tick();
            self.keep_progress();
            self.next_spinner = Some(now + SPINNER_INTERVAL);
            self.mark_dirty();
        }
        match self.escape_deadline {
            Some(at) if at <= now => {
                self.escape_deadline = None;
                self.parser.flush_pending()
            }
            _ => Vec::new(),
        }
    }

    pub fn on_resize(&mut self) {
        let Ok((width, height)) = self.term.size() else {
            return;
        };
        self.screen.height = height;
        let old_width = self.renderer.width();
        self.renderer.resize(width, height);
        if let Some(channel) = &self.components {
            channel.resize(width, height);
        }
        if width != old_width {
            self.request_tool_renders(None);
        }
        // A drag-resize sends many signals; redraw at the frame rate, not per signal (a
        // width change reprints the whole transcript).
        self.mark_dirty();
    }

    /// An extension lends the terminal to a program (`tui.stop()`) or takes it back
    /// (`tui.start()`). While it is lent nothing is drawn and no input is read; taken back,
    /// everything is drawn afresh (the program wrote over the screen).
    pub fn lend_terminal(&mut self, lend: bool) {
        if lend == self.terminal_lent {
            return;
        }
        self.terminal_lent = lend;
        if lend {
            let _ = self.term.suspend();
        } else {
            let _ = self.term.resume();
            self.on_resize();
            self.renderer.request_full_redraw();
            self.mark_urgent();
        }
    }

    /// Draws now if anything changed.
    pub fn draw(&mut self) {
        if !self.dirty || self.terminal_lent {
            return;
        }
        let width = self.renderer.width();
        let lines = self.screen.render(width);
        let mut out = Vec::with_capacity(4096);
        self.renderer.render(lines, &mut out);
        if !out.is_empty() {
            // A terminal that cannot be written to leaves nothing to show; the loop ends
            // when its input closes.
            let _ = self.term.write_frame(&out);
        }
        self.dirty = false;
        self.urgent = false;
        self.last_frame = Instant::now();
        self.frames_drawn += 1;
    }

    /// Draws if a keystroke asked for it or the frame slot has come.
    pub fn draw_if_due(&mut self) {
        if self.dirty && (self.urgent || self.last_frame.elapsed() >= FRAME_INTERVAL) {
            self.draw();
        }
    }

    /// Writes raw bytes between frames (OSC 52 clipboard).
    pub fn write_raw(&mut self, bytes: &[u8]) {
        let _ = self.term.write_frame(bytes);
    }

    /// Hands the terminal to a child process and takes it back. Full-screen editors use
    /// the alternate screen, so our screen comes back as it was (`back_to_shell` false);
    /// after Ctrl+Z the shell has printed below it, so everything is drawn afresh.
    pub fn with_terminal_released<T>(&mut self, back_to_shell: bool, f: impl FnOnce() -> T) -> T {
        if back_to_shell {
            let mut out = Vec::new();
            self.renderer.finish(&mut out);
            let _ = self.term.write_frame(&out);
        }
        let _ = self.term.suspend();
        let result = f();
        let _ = self.term.resume();
        self.on_resize();
        if back_to_shell {
            self.renderer.request_full_redraw();
        } else {
            // The program may have written on the screen (an editor that failed to start
            // prints its error there; some run without the alternate screen).
            self.renderer.request_screen_repaint();
        }
        self.mark_urgent();
        result
    }

    /// Restores the terminal; the transcript stays in the scrollback, followed by how to
    /// come back to this conversation.
    pub fn leave(&mut self) {
        self.screen.hint = None;
        self.clear_progress();
        // Nothing was shown (the session could not start): leave the screen as it was, so
        // the error printed next stands alone.
        if self.frames_drawn == 0 {
            if let Some(reader) = self.reader.take() {
                reader.stop();
            }
            return;
        }
        self.dirty = true;
        self.draw();
        let mut out = Vec::new();
        self.renderer.finish(&mut out);
        if let Some(hint) = self.resume_hint.take() {
            out.extend_from_slice(self.screen.theme.muted.paint(&hint).as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        let _ = self.term.write_frame(&out);
        if let Some(reader) = self.reader.take() {
            reader.stop();
        }
    }

    /// Remembers how to resume the session, if it was saved.
    pub fn set_resume_hint(&mut self) {
        let Some(view) = &self.view else {
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

/// `name` of a `/name args` line.
fn command_name(text: &str) -> Option<&str> {
    text.strip_prefix('/')?.split_whitespace().next()
}

/// The reference's built-in slash commands (pi 0.73's `BUILTIN_SLASH_COMMANDS`): these win
/// over an extension's command of the same name, as they do there.
const REFERENCE_BUILTINS: &[&str] = &[
    "settings",
    "model",
    "scoped-models",
    "export",
    "import",
    "share",
    "copy",
    "name",
    "session",
    "changelog",
    "hotkeys",
    "fork",
    "clone",
    "tree",
    "login",
    "logout",
    "new",
    "compact",
    "resume",
    "reload",
    "quit",
];
