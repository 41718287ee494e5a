//! Carrying out [`Action`]s with the session: prompts (and the loop that serves the screen
//! while one runs), slash commands, picker results, model and thinking changes.

use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_runtime::AgentSession;
use knightcode_runtime::agent_session::operations::PromptStart;
use knightcode_runtime::agent_session::operations::user_message;
use knightcode_runtime::hooks::InputSource;
use knightcode_runtime::hooks::PromptInput;

use super::input::Action;
use super::overlay::OverlayResult;
use super::ui::Ui;
use super::ui::Wake;
use crate::commands;
use crate::commands::SlashCommand;

/// Handles one wake-up while idle and returns the actions it produced.
impl Ui {
    pub fn on_wake(&mut self, wake: Wake) -> Vec<Action> {
        match wake {
            Wake::Input(bytes) => {
                let events = self.parse_input(&bytes);
                self.queued_input.extend(events);
                self.next_queued_input()
            }
            Wake::Queued => self.next_queued_input(),
            Wake::InputClosed => {
                // The terminal is gone: nothing more can be typed or shown.
                self.quitting = true;
                vec![Action::Abort]
            }
            Wake::Event(event) => {
                self.on_agent_event(&event);
                // Whatever else has arrived is handled in the same wake-up.
                self.drain_events();
                Vec::new()
            }
            Wake::Bash(update) => {
                self.on_bash(update);
                Vec::new()
            }
            Wake::Clipboard(read) => {
                self.on_clipboard_image(read);
                Vec::new()
            }
            Wake::Resize => {
                self.on_resize();
                Vec::new()
            }
            Wake::Timer => {
                self.drain_events();
                let events = self.on_timer();
                self.queued_input.extend(events);
                self.next_queued_input()
            }
            Wake::Signal(code) => {
                self.exit_code = code;
                self.quitting = true;
                vec![Action::Abort]
            }
        }
    }
}

impl Ui {
    /// Handles queued input events up to the first that asks for an action; the rest wait
    /// until that action has run, so they reach whatever it opened.
    fn next_queued_input(&mut self) -> Vec<Action> {
        while let Some(event) = self.queued_input.pop_front() {
            let actions = self.on_input(event);
            if !actions.is_empty() {
                return actions;
            }
        }
        Vec::new()
    }
}

/// Carries out actions while idle.
pub async fn perform(ui: &mut Ui, session: &mut AgentSession, actions: Vec<Action>) {
    for action in actions {
        perform_one(ui, session, action).await;
    }
    // What the actions saved is in settings.json before the screen says so; waiting does
    // not hold up the thread.
    session.settings_saved().await;
    for warning in session.take_warnings() {
        ui.warn(&warning);
    }
}

async fn perform_one(ui: &mut Ui, session: &mut AgentSession, action: Action) {
    match action {
        Action::Submit(text) | Action::FollowUp(text) => {
            let images = ui.take_images();
            submit(ui, session, text, images).await;
        }
        Action::Abort => {
            ui.bash.cancel_running();
        }
        Action::CycleModel { forward } => cycle_model(ui, session, forward).await,
        Action::CycleThinking => match session.cycle_thinking_level() {
            Ok(Some(change)) => {
                ui.refresh(session);
                ui.screen.hint = Some(format!("Thinking level: {}", change.level.as_str()));
            }
            Ok(None) => ui.info("This model does not support thinking levels."),
            Err(error) => ui.error(&error.to_string()),
        },
        Action::Picked(result) => picked(ui, session, result).await,
        Action::OpenTree => ui.open_tree(),
        Action::ExternalEditor => ui.external_editor(),
        Action::Suspend => ui.suspend(),
        Action::Quit => ui.quitting = true,
    }
}

/// A submitted line while idle: a slash command, a shell command or a prompt.
pub async fn submit(
    ui: &mut Ui,
    session: &mut AgentSession,
    text: String,
    images: Vec<ContentBlock>,
) {
    ui.screen.hint = None;
    ui.screen.editor.clear();
    if let Some(command) = commands::parse(text.trim_start())
        && !matches!(command, SlashCommand::Unknown(_))
    {
        command_idle(ui, session, command).await;
        return;
    }
    if let Some(command) = text.strip_prefix('!') {
        let (command, excluded) = match command.strip_prefix('!') {
            Some(rest) => (rest, true),
            None => (command, false),
        };
        let command = command.trim();
        if command.is_empty() {
            return;
        }
        let card = ui
            .screen
            .transcript
            .start_bash(command.to_owned(), excluded);
        ui.bash.spawn(card, session.user_bash(command, excluded));
        ui.mark_urgent();
        return;
    }
    let input = PromptInput {
        text,
        images,
        source: InputSource::Interactive,
    };
    match session.begin_prompt(input).await {
        Ok(PromptStart::Handled) => {}
        Ok(PromptStart::Run(messages)) => run_prompt(ui, session, messages).await,
        Err(error) => ui.error(&error.to_string()),
    }
}

/// Runs a prompt to its end while serving the screen: keys, events, resizes, shell output.
pub async fn run_prompt(ui: &mut Ui, session: &mut AgentSession, user: Vec<AgentMessage>) {
    ui.running = true;
    ui.set_working(Some("Working…"));
    ui.draw();
    let outcome = {
        let run = session.run_prompt(user);
        tokio::pin!(run);
        loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                wake = ui.wait() => {
                    let actions = ui.on_wake(wake);
                    for action in actions {
                        ui.busy_action(action);
                    }
                    ui.draw_if_due();
                }
            }
        }
    };
    ui.drain_events();
    ui.running = false;
    ui.set_working(None);
    if let Err(error) = outcome {
        ui.error(&format!("The run failed: {error}"));
    }
    ui.record_finished_bash(session);
    ui.refresh(session);
    for warning in session.take_warnings() {
        ui.warn(&warning);
    }
    let deferred = std::mem::take(&mut ui.deferred);
    ui.draw();
    for action in deferred {
        Box::pin(perform_one(ui, session, action)).await;
    }
}

impl Ui {
    /// An action while a prompt runs: queue, abort, or wait for the end.
    fn busy_action(&mut self, action: Action) {
        let Some(handle) = self.handle.clone() else {
            return;
        };
        match action {
            Action::Submit(text) => {
                let trimmed = text.trim_start();
                if let Some(command) = commands::parse(trimmed)
                    && !matches!(command, SlashCommand::Unknown(_))
                {
                    self.command_busy(command);
                    return;
                }
                if trimmed.starts_with('!') {
                    self.deferred.push(Action::Submit(text));
                    self.info("The shell command runs when the current response ends.");
                    return;
                }
                let images = self.take_images();
                self.screen.editor.clear();
                handle.steer(user_message(&text, images));
                self.sync_queue();
            }
            Action::FollowUp(text) => {
                let images = self.take_images();
                handle.follow_up(user_message(&text, images));
                self.sync_queue();
            }
            Action::Abort => {
                handle.abort();
                self.bash.cancel_running();
                self.set_working(Some("Interrupting…"));
            }
            Action::Quit => {
                handle.abort();
                self.quitting = true;
            }
            Action::OpenTree => self.open_tree(),
            Action::ExternalEditor => self.external_editor(),
            Action::Suspend => self.suspend(),
            Action::Picked(result) if result.replaces_conversation() => {
                handle.abort();
                self.deferred.push(Action::Picked(result));
            }
            Action::Picked(OverlayResult::Request(request)) => self.overlay_request(request),
            other => {
                self.deferred.push(other);
                self.screen.hint =
                    Some("The change applies when the current response ends.".to_owned());
            }
        }
    }

    fn sync_queue(&mut self) {
        if let Some(handle) = &self.handle {
            let (steering, follow_ups) = handle.queued();
            self.screen.steering = steering;
            self.screen.follow_ups = follow_ups;
        }
        self.mark_urgent();
    }

    /// A slash command typed while a prompt runs.
    fn command_busy(&mut self, command: SlashCommand) {
        self.screen.editor.clear();
        match command {
            SlashCommand::Hotkeys => self.show_hotkeys(),
            SlashCommand::Session => self.show_session_info(),
            SlashCommand::Copy => self.copy_last(),
            SlashCommand::Name(name) => self.name_session(name.as_deref()),
            SlashCommand::NotAvailable(name) => self.info(&commands::not_available_message(name)),
            SlashCommand::Resume => self.open_session_picker(),
            SlashCommand::Tree => self.open_tree(),
            SlashCommand::Fork => self.open_fork_picker(),
            SlashCommand::Model(None) => self.open_model_picker(),
            SlashCommand::ScopedModels => self.open_scope_picker(),
            SlashCommand::Thinking(None) => self.open_thinking_picker(),
            SlashCommand::Trust => self.open_trust_picker(),
            SlashCommand::Quit => {
                if let Some(handle) = &self.handle {
                    handle.abort();
                }
                self.quitting = true;
            }
            SlashCommand::New | SlashCommand::Clone => {
                if let Some(handle) = &self.handle {
                    handle.abort();
                }
                self.deferred
                    .push(Action::Submit(format!("/{}", command_name(&command))));
            }
            other => {
                self.deferred
                    .push(Action::Submit(format!("/{}", command_text(&other))));
                self.screen.hint =
                    Some("The change applies when the current response ends.".to_owned());
            }
        }
    }
}

fn command_name(command: &SlashCommand) -> &'static str {
    match command {
        SlashCommand::New => "new",
        SlashCommand::Clone => "clone",
        _ => "",
    }
}

fn command_text(command: &SlashCommand) -> String {
    match command {
        SlashCommand::Model(Some(arg)) => format!("model {arg}"),
        SlashCommand::Thinking(Some(arg)) => format!("thinking {arg}"),
        _ => String::new(),
    }
}

/// A slash command while idle.
async fn command_idle(ui: &mut Ui, session: &mut AgentSession, command: SlashCommand) {
    match command {
        SlashCommand::New => match session.new_session(None).await {
            Ok(_) => {
                ui.refresh(session);
                ui.reload_transcript();
                ui.info("Started a new session.");
            }
            Err(error) => ui.error(&error.to_string()),
        },
        SlashCommand::Clone => match session.clone_session().await {
            Ok(_) => {
                ui.refresh(session);
                ui.reload_transcript();
                ui.info("Cloned the current branch into a new session.");
            }
            Err(error) => ui.error(&error.to_string()),
        },
        SlashCommand::Model(Some(spec)) => {
            let found = ui
                .models
                .iter()
                .find(|m| format!("{}/{}", m.provider, m.id) == spec || m.id == spec)
                .map(|m| (m.provider.clone(), m.id.clone()));
            match found {
                Some((provider, id)) => set_model(ui, session, &provider, &id).await,
                None => ui.error(&format!("Model not found: {spec}. Use /model to pick one.")),
            }
        }
        SlashCommand::Thinking(Some(level)) => set_thinking(ui, session, &level),
        other => ui.command_busy(other),
    }
}

async fn set_model(ui: &mut Ui, session: &mut AgentSession, provider: &str, id: &str) {
    match session.set_model(provider, id).await {
        Ok(switch) => {
            ui.refresh(session);
            ui.screen.hint = Some(format!(
                "Model: {}/{}",
                switch.model.provider, switch.model.id
            ));
        }
        Err(error) => ui.error(&error.to_string()),
    }
}

fn set_thinking(ui: &mut Ui, session: &mut AgentSession, level: &str) {
    let Some(parsed) = knightcode_ai::ThinkingLevel::parse(level) else {
        ui.error(&format!(
            "Unknown thinking level '{level}'. Levels: {}",
            ui.thinking_levels
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return;
    };
    match session.set_thinking_level(parsed) {
        Ok(change) => {
            ui.refresh(session);
            ui.screen.hint = Some(format!("Thinking level: {}", change.level.as_str()));
        }
        Err(error) => ui.error(&error.to_string()),
    }
}

/// Ctrl+P / Shift+Ctrl+P: the next or previous model of the `--models` scope, or of every
/// available model when there is no scope.
async fn cycle_model(ui: &mut Ui, session: &mut AgentSession, forward: bool) {
    match session.cycle_model_towards(forward).await {
        Ok(Some(switch)) => {
            ui.refresh(session);
            let scope = if switch.scoped { " (scoped)" } else { "" };
            ui.screen.hint = Some(format!(
                "Model: {}/{}{scope} · thinking {}",
                switch.model.provider,
                switch.model.id,
                switch.thinking.as_str()
            ));
        }
        Ok(None) if session.scoped_models().is_empty() => {
            ui.info(super::overlay::ONLY_ONE_MODEL);
        }
        Ok(None) => ui.info("Only one model is in the scope; change it with /scoped-models."),
        Err(error) => ui.error(&error.to_string()),
    }
}

async fn picked(ui: &mut Ui, session: &mut AgentSession, result: OverlayResult) {
    match result {
        OverlayResult::Session(path) => match session.switch_session(&path).await {
            Ok(_) => {
                ui.refresh(session);
                ui.reload_transcript();
                ui.info(&format!("Resumed {}", path.display()));
            }
            Err(error) => ui.error(&error.to_string()),
        },
        OverlayResult::Model { provider, id } => set_model(ui, session, &provider, &id).await,
        OverlayResult::Thinking(level) => set_thinking(ui, session, level.as_str()),
        OverlayResult::Scope(choice) => {
            match session.set_scoped_models(&choice.models, choice.save) {
                Ok(()) => {
                    ui.refresh(session);
                    let what = match choice.models.len() {
                        0 => "ctrl+p cycles every model".to_owned(),
                        1 => "ctrl+p has 1 model to cycle through".to_owned(),
                        n => format!("ctrl+p cycles through {n} models"),
                    };
                    let saved = if choice.save {
                        " (saved to settings)"
                    } else {
                        ""
                    };
                    ui.info(&format!("Scoped models: {what}{saved}."));
                }
                Err(error) => ui.error(&error.to_string()),
            }
        }
        OverlayResult::TreeEntry { entry_id } => match session.navigate_tree(entry_id.as_deref()) {
            Ok(text) => {
                ui.refresh(session);
                ui.reload_transcript();
                if let Some(text) = text {
                    ui.screen.editor.set_text(&text);
                    ui.screen.hint =
                        Some("Edit the message and press enter to branch from here.".to_owned());
                }
            }
            Err(error) => ui.error(&error.to_string()),
        },
        OverlayResult::Fork(entry_id) => match session.fork(&entry_id).await {
            Ok((text, _)) => {
                ui.refresh(session);
                ui.reload_transcript();
                ui.screen.editor.set_text(&text);
                ui.info("Forked into a new session; edit the message and press enter.");
            }
            Err(error) => ui.error(&error.to_string()),
        },
        OverlayResult::Trust(choice) => ui.save_trust(choice),
        OverlayResult::Request(request) => ui.overlay_request(request),
    }
}
