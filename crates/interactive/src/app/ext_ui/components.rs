//! Extensions' components (`ctx.ui.custom`, widgets, editors, footers, headers, overlays):
//! they draw on the JS thread and send their lines here by id; the app puts the lines where
//! the component was shown, and asks extensions' renderers to draw tool calls and custom
//! messages at the screen's width.

use super::FloatingPanel;
use super::JsPanel;
use super::Placement;
use super::Widget;
use super::string_list;
use crate::app::input::Action;
use crate::app::overlay::Overlay;
use crate::app::ui::Ui;
use crate::transcript::CustomKind;

impl Ui {
    pub(super) fn on_component(&mut self, message: &serde_json::Value) -> Vec<Action> {
        use serde_json::Value;
        let id = message.get("id").and_then(Value::as_u64).unwrap_or(0);
        let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
        let lines = || string_list(message, "lines").unwrap_or_default();
        match text("op") {
            "show" => match text("kind") {
                "custom" if message.get("overlay").and_then(Value::as_bool) == Some(true) => {
                    // Overlays show at once, over whatever else is there; `layers` orders
                    // them and says which one takes the keys.
                    self.screen.floating.push(FloatingPanel {
                        id,
                        lines: Vec::new(),
                        at: None,
                    });
                }
                "custom" => {
                    self.ext_ui.panels.push_back(JsPanel {
                        id,
                        lines: Vec::new(),
                    });
                    self.show_queued_dialog();
                }
                "widget" => {
                    let key = text("key").to_owned();
                    let below = text("placement") == "belowEditor";
                    let widgets = &mut self.screen.widgets;
                    widgets.retain(|w| w.key != key);
                    widgets.push(Widget {
                        key,
                        lines: Vec::new(),
                        below,
                        component: Some(id),
                    });
                }
                "editor" => {
                    self.screen.custom_editor = Some((id, Vec::new()));
                    // What was typed before the extension's editor reached the screen (its
                    // `session_start` request waits for the terminal) moves into it.
                    let typed = self.screen.editor.text();
                    if !typed.is_empty()
                        && let Some(channel) = self.ext_ui.channel()
                    {
                        channel.set_editor_text(&typed);
                        self.screen.editor.clear();
                    }
                }
                "footer" => self.screen.custom_footer = Some((id, Vec::new())),
                "header" => self.screen.custom_header = Some((id, Vec::new())),
                _ => {}
            },
            "lines" => {
                let lines = lines();
                if let Some(panel) = self.screen.floating.iter_mut().find(|p| p.id == id) {
                    panel.lines = lines;
                    panel.at = Placement::from_message(message).or(panel.at);
                    self.mark_dirty();
                    return Vec::new();
                }
                match &mut self.screen.overlay {
                    Some(Overlay::Js(panel)) if panel.id == id => panel.lines = lines,
                    _ => {
                        if let Some(panel) = self.ext_ui.panels.iter_mut().find(|p| p.id == id) {
                            panel.lines = lines;
                        } else if let Some(widget) = self
                            .screen
                            .widgets
                            .iter_mut()
                            .find(|w| w.component == Some(id))
                        {
                            widget.lines = lines;
                        } else if let Some((_, shown)) =
                            self.screen.custom_footer.as_mut().filter(|(f, _)| *f == id)
                        {
                            *shown = lines;
                        } else if let Some((_, shown)) =
                            self.screen.custom_editor.as_mut().filter(|(e, _)| *e == id)
                        {
                            *shown = lines;
                        } else if let Some((_, shown)) =
                            self.screen.custom_header.as_mut().filter(|(h, _)| *h == id)
                        {
                            *shown = lines;
                        }
                    }
                }
            }
            "tool" => {
                let custom = crate::transcript::CustomLines {
                    call: string_list(message, "call"),
                    result: string_list(message, "result"),
                    result_renderer: message.get("resultRenderer").and_then(Value::as_bool)
                        == Some(true),
                    framed: text("shell") != "self",
                };
                if self
                    .screen
                    .transcript
                    .set_custom_tool_lines(text("toolCallId"), custom)
                {
                    self.mark_dirty();
                }
            }
            "working" => {
                self.ext_ui.working_message = message
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if self.session.running() && !self.session.compacting() {
                    self.set_working(Some("Working…"));
                }
            }
            "workingIndicator" => {
                self.screen.spinner = string_list(message, "frames");
                self.mark_dirty();
            }
            "autocomplete" => self.extension_completion_added(),
            "completions" => self.on_extension_completions(message),
            "terminalInput" => {
                self.ext_ui.input_listened =
                    message.get("listening").and_then(Value::as_bool) == Some(true);
            }
            "reinput" => {
                let mut parser = knightcode_tui::InputParser::new();
                let mut events = parser.feed(text("data").as_bytes());
                events.extend(parser.flush_pending());
                self.ext_ui.replaying = true;
                let mut actions = Vec::new();
                for event in events {
                    actions.extend(self.on_input(event));
                }
                self.ext_ui.replaying = false;
                return actions;
            }
            "thinkingLabel" => {
                let look = &mut self.screen.transcript.look;
                look.hidden_thinking_label = message
                    .get("label")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.screen.transcript.invalidate();
                self.request_full_redraw();
            }
            "workingVisible" => {
                self.screen.working_visible =
                    message.get("visible").and_then(Value::as_bool) != Some(false);
                self.mark_dirty();
            }
            "toolsExpanded" => {
                let expanded = message.get("expanded").and_then(Value::as_bool) == Some(true);
                if self.screen.transcript.look.tools_expanded != expanded {
                    self.screen.transcript.look.tools_expanded = expanded;
                    self.screen.transcript.invalidate();
                    self.request_tool_renders(None);
                    self.request_full_redraw();
                }
            }
            "setTheme" => {
                let name = text("name").to_owned();
                self.preview_theme(&name);
            }
            "message" => {
                let key = message
                    .get("key")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                let key = usize::try_from(key).unwrap_or(usize::MAX);
                if self
                    .screen
                    .transcript
                    .set_custom_message_lines(key, lines())
                {
                    self.mark_dirty();
                }
            }
            "markdown" => self.apply_markdown(message),
            "layers" => self.set_layers(message),
            "close" => {
                if matches!(&self.screen.overlay, Some(Overlay::Js(panel)) if panel.id == id) {
                    self.screen.overlay = None;
                }
                self.screen.floating.retain(|p| p.id != id);
                if self.screen.floating_focus == Some(id) {
                    self.screen.floating_focus = None;
                }
                if let Some(layers) = message.get("layers") {
                    self.set_layers(layers);
                }
                self.ext_ui.panels.retain(|p| p.id != id);
                self.screen.widgets.retain(|w| w.component != Some(id));
                if self
                    .screen
                    .custom_footer
                    .as_ref()
                    .is_some_and(|(f, _)| *f == id)
                {
                    self.screen.custom_footer = None;
                }
                if self
                    .screen
                    .custom_header
                    .as_ref()
                    .is_some_and(|(h, _)| *h == id)
                {
                    self.screen.custom_header = None;
                }
                if self
                    .screen
                    .custom_editor
                    .as_ref()
                    .is_some_and(|(e, _)| *e == id)
                {
                    self.screen.custom_editor = None;
                }
                self.show_queued_dialog();
            }
            "submit" => {
                let text = text("text").to_owned();
                if !text.trim().is_empty() {
                    self.screen.editor.add_to_history(&text);
                    return vec![Action::Submit(text)];
                }
            }
            "appAction" => return self.on_editor_action(text("action"), text("text")),
            _ => {}
        }
        Vec::new()
    }

    /// An app key an extension's editor handed back (its action handlers), with the
    /// editor's text at the time.
    fn on_editor_action(&mut self, action: &str, text: &str) -> Vec<Action> {
        let clear = |ui: &Ui| {
            if let Some(channel) = ui.ext_ui.channel() {
                channel.set_editor_text("");
            }
        };
        match action {
            "app.exit" => vec![Action::Quit],
            "app.clear" if !text.is_empty() => {
                clear(self);
                Vec::new()
            }
            "app.message.followUp" => {
                if text.trim().is_empty() {
                    return Vec::new();
                }
                clear(self);
                vec![Action::FollowUp(text.to_owned())]
            }
            _ => {
                // Everything else does what its key does with our own editor empty.
                let Some(binding) = self.prefs.bindings().keys_for(action).first() else {
                    return Vec::new();
                };
                let key = knightcode_tui::Key::new(binding.code(), binding.modifiers());
                self.on_app_key(&key)
            }
        }
    }

    /// Asks extensions to draw tool call `id` (or every tool card) with their renderers;
    /// for every card, also every custom message and entry with theirs and the markdown
    /// of every message with their markdown transformers.
    pub fn request_tool_renders(&mut self, id: Option<&str>) {
        let Some(channel) = self.ext_ui.channel() else {
            return;
        };
        let width = self.screen_width();
        let renderers = channel.renderers();
        let requests = self
            .screen
            .transcript
            .tool_render_requests(id, width, |name| renderers.draws_tool(name));
        for request in requests {
            channel.render_tool(&request);
        }
        if id.is_none() {
            self.request_message_renders();
            self.request_markdown(None);
        }
    }

    /// Asks extensions to draw the custom messages and entries with their message and
    /// entry renderers.
    pub fn request_message_renders(&mut self) {
        let Some(channel) = self.ext_ui.channel() else {
            return;
        };
        let width = self.screen_width();
        let expanded = self.screen.transcript.look.tools_expanded;
        let renderers = channel.renderers();
        let requests = self.screen.transcript.custom_render_requests(
            |custom_type| renderers.draws_message(custom_type),
            |custom_type| renderers.draws_entry(custom_type),
        );
        for (key, kind, value) in requests {
            match kind {
                CustomKind::Message => channel.render_message(key, &value, expanded, width),
                CustomKind::Entry => channel.render_entry(key, &value, expanded, width),
            }
        }
    }

    /// The overlays' order (`order`: ids, bottom first) and the one that takes the keys
    /// (`focus`), as `js/ui.js` keeps them.
    fn set_layers(&mut self, layers: &serde_json::Value) {
        use serde_json::Value;
        let order: Vec<u64> = layers
            .get("order")
            .and_then(Value::as_array)
            .map(|ids| ids.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        // A panel the order does not name stays below the rest.
        self.screen.floating.sort_by_key(|panel| {
            order
                .iter()
                .position(|&shown| shown == panel.id)
                .map_or(0, |at| at + 1)
        });
        self.screen.floating_focus = layers.get("focus").and_then(Value::as_u64);
        self.mark_dirty();
    }
}
