//! From input events to actions: app shortcuts first, then the picker in front (if any),
//! then the editor. Nothing here needs the session, so it runs the same while a prompt
//! streams; the resulting [`Action`]s are carried out by `actions`.

use std::collections::VecDeque;
use std::time::Duration;
use std::time::Instant;

use knightcode_tui::InputEvent;
use knightcode_tui::Key;
use knightcode_tui::editor::EditorOutcome;
use knightcode_tui::keys::KeyKind;

use super::overlay::OverlayResult;
use super::ui::Ui;

/// A second Ctrl+C on an empty editor within this span exits; the hint that says so stands
/// as long (pi's window is 500 ms with no hint; a hint needs time to be read).
const CTRL_C_WINDOW: Duration = Duration::from_millis(1200);

const CTRL_C_HINT: &str = "Press ctrl+c again to exit";

/// Something the loop does with the session (or the agent handle while a prompt runs).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Enter: a prompt, a slash command or `!cmd`; steering while a prompt runs.
    Submit(String),
    /// Alt+Enter: queue after all current work.
    FollowUp(String),
    Abort,
    CycleModel {
        forward: bool,
    },
    CycleThinking,
    /// A picker finished.
    Picked(OverlayResult),
    OpenTree,
    /// The fork picker (`doubleEscapeAction: fork`).
    OpenFork,
    ExternalEditor,
    Suspend,
    Quit,
}

/// Keys between their arrival and their handling, and what a key means after the one
/// before it (double presses).
#[derive(Default)]
pub struct KeyState {
    /// Input events not handled yet: keys typed after Enter wait until the submitted line
    /// has been acted on (a command may open a picker they belong to).
    queued: VecDeque<InputEvent>,
    last_ctrl_c: Option<Instant>,
    /// Escape was pressed on an empty editor; the next Escape opens the tree.
    escape_armed: bool,
}

impl KeyState {
    /// Events parsed from input, to handle in order.
    pub fn queue(&mut self, events: Vec<InputEvent>) {
        self.queued.extend(events);
    }

    pub fn has_queued(&self) -> bool {
        !self.queued.is_empty()
    }

    /// When the window for a second Ctrl+C closes, if one is open: its hint goes then.
    pub fn ctrl_c_expiry(&self) -> Option<Instant> {
        self.last_ctrl_c.map(|at| at + CTRL_C_WINDOW)
    }
}

/// A paste as the terminal sent it, for extensions that read raw input.
fn bracketed_paste(text: &str) -> String {
    format!("\x1b[200~{text}\x1b[201~")
}

impl Ui {
    /// Handles queued input events up to the first that asks for an action; the rest wait
    /// until that action has run, so they reach whatever it opened.
    pub(super) fn next_queued_input(&mut self) -> Vec<Action> {
        while let Some(event) = self.keys.queued.pop_front() {
            let actions = self.on_input(event);
            if !actions.is_empty() {
                return actions;
            }
        }
        Vec::new()
    }

    /// Handles one input event.
    pub fn on_input(&mut self, event: InputEvent) -> Vec<Action> {
        self.mark_urgent();
        self.ext_ui.input_arrived();
        // `onTerminalInput` listeners see raw input first; what they leave comes back.
        if let Some(channel) = self.ext_ui.raw_input_listener() {
            let raw = match &event {
                InputEvent::Key(key) => key.raw.clone(),
                InputEvent::Paste(text) => bracketed_paste(text),
                _ => String::new(),
            };
            if !raw.is_empty() {
                channel.terminal_input(&raw);
                return Vec::new();
            }
        }
        // Hints answer the previous key ("press again to exit", "model: …"); the next one
        // replaces them.
        // (Mouse reports and terminal replies are not an answer: the wheel leaves them.)
        let answers = match &event {
            InputEvent::Key(key) => key.kind != KeyKind::Release,
            InputEvent::Paste(_) => true,
            InputEvent::Other(_) => false,
        };
        if answers {
            self.screen.hint = None;
        }
        match event {
            InputEvent::Paste(text) => {
                if let (Some(id), Some(channel)) = (self.focused_floating(), self.ext_ui.channel())
                {
                    channel.input(id, &bracketed_paste(&text));
                } else if let (Some(super::overlay::Overlay::Js(panel)), Some(channel)) =
                    (&self.screen.overlay, self.ext_ui.channel())
                {
                    channel.input(panel.id, &bracketed_paste(&text));
                } else if let (None, Some((id, _)), Some(channel)) = (
                    &self.screen.overlay,
                    &self.screen.custom_editor,
                    self.ext_ui.channel(),
                ) {
                    channel.input(*id, &bracketed_paste(&text));
                } else if let Some(overlay) = &mut self.screen.overlay {
                    overlay.handle_paste(&text);
                } else if self.search_paste(&text) {
                } else if !self.attach_image_path(&text) {
                    self.screen.editor.handle_paste(&text);
                }
                Vec::new()
            }
            InputEvent::Key(key) => {
                // A component takes every key, releases too (it may want them): the
                // focused overlay first, then one in the editor's place.
                if let (Some(id), Some(channel)) = (self.focused_floating(), self.ext_ui.channel())
                {
                    channel.input(id, &key.raw);
                    return Vec::new();
                }
                if let (Some(super::overlay::Overlay::Js(panel)), Some(channel)) =
                    (&self.screen.overlay, self.ext_ui.channel())
                {
                    channel.input(panel.id, &key.raw);
                    return Vec::new();
                }
                // An extension's editor takes the keys our editor would have; the app keys
                // it does not use come back as actions (`appAction`).
                if let (None, Some((id, _)), Some(channel)) = (
                    &self.screen.overlay,
                    &self.screen.custom_editor,
                    self.ext_ui.channel(),
                ) {
                    channel.input(*id, &key.raw);
                    return Vec::new();
                }
                if key.kind == KeyKind::Release {
                    return Vec::new();
                }
                self.on_key(&key)
            }
            InputEvent::Other(_) => {
                self.on_mouse(&event);
                Vec::new()
            }
        }
    }

    /// A key with its app meaning, as an extension's editor hands it back.
    pub(super) fn on_app_key(&mut self, key: &Key) -> Vec<Action> {
        self.on_key(key)
    }

    /// The extension overlay that takes the keys now. A dialog of ours on screen (an
    /// extension's `select` asked while its overlay is open) takes them instead, as focus
    /// moves to a dialog in the reference.
    fn focused_floating(&self) -> Option<u64> {
        let id = self.screen.floating_focus?;
        let dialog =
            matches!(&self.screen.overlay, Some(o) if !matches!(o, super::overlay::Overlay::Js(_)));
        (!dialog && self.screen.floating.iter().any(|p| p.id == id)).then_some(id)
    }

    fn on_key(&mut self, key: &Key) -> Vec<Action> {
        let b = self.prefs.bindings();
        // Ctrl+C and Escape keep their app meaning over pickers only for exiting.
        if let Some(overlay) = &mut self.screen.overlay {
            return match overlay.handle_key(key, b) {
                super::overlay::OverlayStep::Pending => Vec::new(),
                super::overlay::OverlayStep::Closed => {
                    self.screen.overlay = None;
                    Vec::new()
                }
                super::overlay::OverlayStep::Done(result) => {
                    self.screen.overlay = None;
                    vec![Action::Picked(result)]
                }
                super::overlay::OverlayStep::Request(result) => vec![Action::Picked(result)],
            };
        }
        // The fullscreen search, while open, takes every key.
        if self.search_key(key) {
            return Vec::new();
        }
        let b = self.prefs.bindings();
        // The completion popup owns Escape, arrows and Enter while it is open.
        if self.screen.editor.is_showing_completions() {
            return self.editor_key(key);
        }
        if let (Some(shortcut), Some(channel)) =
            (self.ext_ui.shortcut_for(key), self.ext_ui.channel())
        {
            channel.run_shortcut(shortcut);
            return Vec::new();
        }
        if b.matches("app.interrupt", key) {
            if self.clear_selection() {
                return Vec::new();
            }
            return self.on_escape();
        }
        self.keys.escape_armed = false;
        if b.matches("app.clear", key) {
            return self.on_ctrl_c();
        }
        self.keys.last_ctrl_c = None;
        if b.matches("app.exit", key) && self.screen.editor.text().is_empty() {
            return vec![Action::Quit];
        }
        if b.matches("app.suspend", key) {
            return vec![Action::Suspend];
        }
        if b.matches("app.editor.external", key) {
            return vec![Action::ExternalEditor];
        }
        if b.matches("app.model.select", key) {
            self.open_model_picker();
            return Vec::new();
        }
        if b.matches("app.model.cycleForward", key) {
            return vec![Action::CycleModel { forward: true }];
        }
        if b.matches("app.model.cycleBackward", key) {
            return vec![Action::CycleModel { forward: false }];
        }
        if b.matches("app.thinking.cycle", key) {
            return vec![Action::CycleThinking];
        }
        if b.matches("app.thinking.toggle", key) {
            let hidden = !self.screen.transcript.look.thinking_hidden;
            self.set_thinking_hidden(hidden);
            // As pi: a status line says what the key did (the blocks may be off screen).
            self.status(&format!(
                "Thinking blocks: {}",
                if hidden { "hidden" } else { "visible" }
            ));
            return Vec::new();
        }
        if b.matches("app.tools.expand", key) {
            let look = &mut self.screen.transcript.look;
            look.tools_expanded = !look.tools_expanded;
            let expanded = look.tools_expanded;
            self.screen.transcript.invalidate();
            self.request_tool_renders(None);
            if let Some(channel) = self.ext_ui.channel() {
                channel.theme(serde_json::json!({ "toolsExpanded": expanded }));
            }
            self.request_full_redraw();
            return Vec::new();
        }
        if b.matches("app.message.followUp", key) {
            let text = self.screen.editor.text_for_submit();
            if text.trim().is_empty() {
                return Vec::new();
            }
            self.screen.editor.add_to_history(&text);
            self.screen.editor.take_for_submit();
            return vec![Action::FollowUp(text)];
        }
        if b.matches("app.message.copy", key) {
            if !self.copy_selection_by_key() {
                self.copy_last();
            }
            return Vec::new();
        }
        if b.matches("app.clipboard.pasteImage", key) {
            self.paste_clipboard_image();
            return Vec::new();
        }
        if b.matches("app.message.dequeue", key) {
            self.restore_queued();
            return Vec::new();
        }
        if self.fullscreen_key(key) {
            return Vec::new();
        }
        let b = self.prefs.bindings();
        for (action, command) in [
            ("app.session.new", "/new"),
            ("app.session.tree", "/tree"),
            ("app.session.fork", "/fork"),
            ("app.session.resume", "/resume"),
        ] {
            if b.matches(action, key) {
                return vec![Action::Submit(command.to_owned())];
            }
        }
        self.editor_key(key)
    }

    fn editor_key(&mut self, key: &Key) -> Vec<Action> {
        match self.screen.editor.handle_key(key, self.prefs.bindings()) {
            EditorOutcome::Submit(text) => {
                if text.trim().is_empty() && self.screen.attachments.is_empty() {
                    return Vec::new();
                }
                self.screen.editor.add_to_history(&text);
                self.follow_transcript();
                vec![Action::Submit(text)]
            }
            _ => {
                self.ask_extension_completions();
                Vec::new()
            }
        }
    }

    fn on_escape(&mut self) -> Vec<Action> {
        let armed = std::mem::take(&mut self.keys.escape_armed);
        if self.session.compacting() {
            return vec![Action::Abort];
        }
        if self.session.running() {
            self.restore_queued();
            return vec![Action::Abort];
        }
        if self.session.bash_running() {
            return vec![Action::Abort];
        }
        if !self.screen.editor.text().is_empty() {
            return Vec::new();
        }
        // The second press acts whenever it comes, as long as no other key came between:
        // the hint on screen says what it will do (`doubleEscapeAction`).
        let (action, what) = match self.prefs.display().double_escape {
            super::settings::DoubleEscape::None => return Vec::new(),
            super::settings::DoubleEscape::Tree => (Action::OpenTree, "open the session tree"),
            super::settings::DoubleEscape::Fork => {
                (Action::OpenFork, "fork from an earlier message")
            }
        };
        if armed {
            return vec![action];
        }
        self.keys.escape_armed = true;
        self.screen.hint = Some(format!("Press escape again to {what}"));
        Vec::new()
    }

    fn on_ctrl_c(&mut self) -> Vec<Action> {
        let now = Instant::now();
        if !self.screen.editor.text().is_empty() || !self.screen.attachments.is_empty() {
            self.screen.editor.clear();
            self.clear_attachments();
            self.keys.last_ctrl_c = None;
            return Vec::new();
        }
        if self
            .keys
            .last_ctrl_c
            .is_some_and(|at| now.duration_since(at) <= CTRL_C_WINDOW)
        {
            return vec![Action::Quit];
        }
        self.keys.last_ctrl_c = Some(now);
        self.screen.hint = Some(CTRL_C_HINT.to_owned());
        Vec::new()
    }

    /// Once the window for a second Ctrl+C has passed, its hint goes (it would promise an
    /// exit the next press no longer gives) and the next press is a first one again.
    pub(super) fn expire_ctrl_c(&mut self, now: Instant) {
        if self.keys.ctrl_c_expiry().is_none_or(|at| at > now) {
            return;
        }
        self.keys.last_ctrl_c = None;
        if self.screen.hint.as_deref() == Some(CTRL_C_HINT) {
            self.screen.hint = None;
            self.mark_dirty();
        }
    }

    /// Queued steering and follow-up messages go back into the editor (Escape, Alt+Up).
    pub fn restore_queued(&mut self) {
        let Some(cleared) = self.link.clear_queue_now() else {
            return;
        };
        let mut texts = cleared.steering_texts();
        texts.extend(cleared.follow_up_texts());
        if texts.is_empty() {
            return;
        }
        let current = self.screen.editor.text();
        if !current.is_empty() {
            texts.push(current);
        }
        self.screen.editor.set_text(&texts.join("\n\n"));
        self.screen.steering.clear();
        self.screen.follow_ups.clear();
    }
}
