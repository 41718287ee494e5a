//! Smaller things the app does on its own: agent events into the transcript, attachments,
//! the external editor, suspending, and informational commands.

use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_runtime::Command;

use super::actions::Pending;
use super::clipboard;
use super::ui::Ui;
use crate::transcript::summary::thousands;

/// The working row while a compaction's summary is written.
pub const COMPACTING: &str = "Compacting conversation…";
/// Where keys apply, in the order `/hotkeys` lists them: each group takes the actions its
/// test accepts (the first group that does). The full-screen mode's keys are left out: it
/// is not built.
type ActionTest = fn(&str) -> bool;
const HOTKEY_GROUPS: &[(&str, ActionTest)] = &[
    ("Editor and conversation", |a| {
        a.starts_with("app.")
            && !a.starts_with("app.tree.")
            && !a.starts_with("app.models.")
            && !a.starts_with("app.session.toggle")
            && !matches!(
                a,
                "app.session.rename"
                    | "app.session.delete"
                    | "app.session.deleteNoninvasive"
                    | "app.thinking.save"
            )
    }),
    ("Editing", |a| {
        a.starts_with("tui.editor.") || (a.starts_with("tui.input.") && a != "tui.input.copy")
    }),
    ("Pickers", |a| a.starts_with("tui.select.")),
    ("Session picker (/resume)", |a| {
        a.starts_with("app.session.toggle")
            || matches!(
                a,
                "app.session.rename" | "app.session.delete" | "app.session.deleteNoninvasive"
            )
    }),
    ("Session tree (/tree)", |a| a.starts_with("app.tree.")),
    ("Scoped models (/scoped-models)", |a| {
        a.starts_with("app.models.")
    }),
    ("Thinking level (/thinking)", |a| a == "app.thinking.save"),
    (FULLSCREEN_GROUP, |a| a.starts_with("tui.altScreen.")),
];

/// The scrolling keys' group, listed only in the fullscreen mode.
const FULLSCREEN_GROUP: &str = "Fullscreen transcript";

/// The program of a shell command line: its first word, or the quoted first word
/// (`"/Applications/Sublime Text.app/…/subl" -w`).
fn first_word(command: &str) -> Option<String> {
    let command = command.trim_start();
    if let Some(quote) = command.chars().next().filter(|c| *c == '"' || *c == '\'')
        && let Some(end) = command[1..].find(quote)
    {
        return Some(command[1..=end].to_owned());
    }
    command.split_whitespace().next().map(str::to_owned)
}

/// Whether `program` names an executable: a path, or a name found on `PATH`.
fn program_exists(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |path: &std::path::Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return executable(std::path::Path::new(program));
    }
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| executable(&dir.join(program)))
    })
}

impl Ui {
    pub fn on_agent_event(&mut self, event: &AgentEvent) {
        let streaming = self.screen.transcript.streaming_index();
        if self.screen.transcript.apply(event) {
            self.mark_dirty();
        }
        match event {
            AgentEvent::MessageStart {
                message: AgentMessage::User(_),
            } => {
                let added = self.screen.transcript.len().checked_sub(1);
                self.request_markdown(added);
            }
            // Plan mode's own `submit_plan` (its result names the revision) ended the run.
            AgentEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error: false,
                parent_tool_call_id: None,
                ..
            } if tool_name == "submit_plan" && result.details.get("revision").is_some() => {
                self.plan_review_due = true;
            }
            AgentEvent::MessageUpdate { .. } => {
                if let Some(index) = self.screen.transcript.streaming_index() {
                    self.request_markdown(Some(index));
                }
            }
            AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(_),
            } => {
                if let Some(index) = streaming {
                    self.request_markdown(Some(index));
                }
            }
            _ => {}
        }
        match event {
            AgentEvent::ToolExecutionStart { tool_call_id, .. }
            | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
            | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                self.request_tool_renders(Some(tool_call_id));
            }
            AgentEvent::MessageEnd {
                message: AgentMessage::Custom(_),
            }
            | AgentEvent::EntryAppended {
                entry: knightcode_protocol::SessionEntry::Custom(_),
            } => {
                self.request_message_renders();
            }
            _ => {}
        }
        match event {
            AgentEvent::QueueUpdate {
                steering,
                follow_up,
            } => {
                self.screen.steering = steering.clone();
                self.screen.follow_ups = follow_up.clone();
                self.mark_dirty();
            }
            AgentEvent::MessageEnd { message } => {
                self.screen.footer.record_message(message);
                self.mark_dirty();
            }
            AgentEvent::CompactionStart { .. } => {
                self.session.set_compacting(true);
                self.set_working(Some(COMPACTING));
            }
            AgentEvent::CompactionEnd { result, .. } => {
                self.session_job_ended();
                if let Some(result) = result {
                    // The context is unknown until the next response: the footer says so.
                    let usage = result.get("usage").and_then(|u| {
                        serde_json::from_value::<knightcode_protocol::Usage>(u.clone()).ok()
                    });
                    self.screen.footer.record_compaction(usage.as_ref());
                }
                self.mark_dirty();
            }
            AgentEvent::AutoRetryStart { .. } => self.set_working(Some("Retrying…")),
            AgentEvent::AutoRetryEnd { .. } | AgentEvent::TurnStart if self.session.running() => {
                self.set_working(Some("Working…"));
            }
            AgentEvent::SessionInfoChanged { .. } | AgentEvent::ThinkingLevelChanged { .. } => {
                self.update_footer();
                self.mark_dirty();
            }
            _ => {}
        }
    }

    /// Takes every event queued so far.
    pub fn drain_events(&mut self) {
        for event in self.link.drain() {
            self.on_session_event(event);
        }
    }

    /// Ctrl+G: edits the prompt in the `externalEditor` setting's editor, else `$VISUAL`,
    /// `$EDITOR`, or nano.
    pub fn external_editor(&mut self) {
        let (editor, source) = self.editor_command();
        let Some(program) = first_word(&editor) else {
            return;
        };
        if !program_exists(&program) {
            self.warn(&format!(
                "Could not start the external editor: {program} (from {source}) is not installed or not on PATH. Set \"externalEditor\" in {}, or $VISUAL or $EDITOR, to the editor to use.",
                self.places.agent_dir().join("settings.json").display()
            ));
            return;
        }
        let path =
            std::env::temp_dir().join(format!("knightcode-prompt-{}.md", std::process::id()));
        let text = self.screen.editor.expanded_text();
        if let Err(error) = std::fs::write(&path, &text) {
            self.error(&format!("Could not write {}: {error}", path.display()));
            return;
        }
        let status = self.with_terminal_released(false, || {
            // The editor command may carry arguments (`code --wait`).
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{editor} \"$1\""))
                .arg("sh")
                .arg(&path)
                .status()
        });
        match status {
            Ok(status) if status.success() => match std::fs::read_to_string(&path) {
                Ok(edited) => {
                    let edited = edited.strip_suffix('\n').unwrap_or(&edited);
                    self.screen.editor.set_text(edited);
                }
                Err(error) => self.error(&format!("Could not read the edited prompt: {error}")),
            },
            Ok(status) => {
                let how = match status.code() {
                    Some(code) => format!("exited with code {code}"),
                    None => "was stopped by a signal".to_owned(),
                };
                self.warn(&format!(
                    "The external editor ({editor}, from {source}) {how}; the prompt is unchanged."
                ));
            }
            Err(error) => self.error(&format!(
                "Could not start {editor} (from {source}): {error}. Set \"externalEditor\" in settings.json, or $VISUAL or $EDITOR."
            )),
        }
        let _ = std::fs::remove_file(&path);
    }

    /// The editor to run and where that choice came from (named when it fails).
    fn editor_command(&self) -> (String, &'static str) {
        let settings = knightcode_runtime::Settings::load(
            self.places.agent_dir(),
            self.places.cwd(),
            self.session.trusted(),
        );
        let configured = settings
            .get("externalEditor")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let non_empty = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
        if let Some(editor) = non_empty(configured) {
            return (editor, "the externalEditor setting");
        }
        if let Some(editor) = non_empty(std::env::var("VISUAL").ok()) {
            return (editor, "$VISUAL");
        }
        if let Some(editor) = non_empty(std::env::var("EDITOR").ok()) {
            return (editor, "$EDITOR");
        }
        (
            "nano".to_owned(),
            "the default, as $VISUAL and $EDITOR are unset",
        )
    }

    /// Ctrl+Z: gives the terminal back to the shell until `fg`.
    pub fn suspend(&mut self) {
        self.with_terminal_released(true, || {
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGTSTP);
        });
        self.request_full_redraw();
    }

    /// `/hotkeys`: the keys in effect, grouped by where they apply.
    pub fn show_hotkeys(&mut self) {
        let mut groups: Vec<(&str, Vec<(String, String)>)> = HOTKEY_GROUPS
            .iter()
            .map(|(title, _)| (*title, Vec::new()))
            .collect();
        for (action, keys) in self.prefs.bindings().actions() {
            if keys.is_empty() {
                continue;
            }
            let Some(group) = HOTKEY_GROUPS
                .iter()
                .position(|(_, belongs)| belongs(action))
            else {
                continue;
            };
            let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
            let description =
                knightcode_tui::keybindings::Keybindings::description(action).unwrap_or(action);
            groups[group]
                .1
                .push((keys.join(", "), description.to_owned()));
        }
        if let Some((_, rows)) = groups.first_mut() {
            for (keys, what) in [
                ("/", "Commands"),
                (
                    "!command",
                    "Run a shell command (its output goes to the model)",
                ),
                ("!!command", "Run a shell command just for you"),
                ("@", "Complete a file or folder name"),
            ] {
                rows.push((keys.to_owned(), what.to_owned()));
            }
        }
        // One key column for every group, so the lists line up.
        let width = groups
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|(keys, _)| keys.chars().count()))
            .max()
            .unwrap_or(0);
        for (title, rows) in groups {
            if rows.is_empty() || (title == FULLSCREEN_GROUP && self.screen.viewport.is_none()) {
                continue;
            }
            let rows = rows
                .into_iter()
                .map(|(keys, what)| (format!("{keys:<width$}"), what))
                .collect();
            self.screen.transcript.push(crate::transcript::Card::Notice(
                crate::transcript::Notice::table(title, rows),
            ));
        }
        self.mark_urgent();
    }

    pub fn show_session_info(&mut self) {
        let Some(view) = self.session.view() else {
            return;
        };
        let stats = view.stats();
        let mut rows = Vec::new();
        let mut row = |label: &str, value: String| rows.push((label.to_owned(), value));
        if let Some(name) = self.session.library().and_then(|l| l.session_name()) {
            row("Name:", name);
        }
        row(
            "File:",
            stats
                .session_file
                .clone()
                .unwrap_or_else(|| "(not saved yet)".to_owned()),
        );
        row("ID:", stats.session_id.clone());
        row(
            "Messages:",
            format!(
                "{} user, {} assistant, {} tool calls",
                thousands(stats.user_messages),
                thousands(stats.assistant_messages),
                thousands(stats.tool_calls)
            ),
        );
        row(
            "Tokens:",
            format!(
                "{} in, {} out, {} cache read, {} cache write",
                thousands(stats.tokens.input),
                thousands(stats.tokens.output),
                thousands(stats.tokens.cache_read),
                thousands(stats.tokens.cache_write)
            ),
        );
        row("Cost:", format!("${:.4}", stats.cost.0));
        // A virtual model's responses come from several models: what each cost.
        if view.model().api == knightcode_ai::VIRTUAL_API {
            for (model, cost) in view.cost_by_model() {
                row(&format!("  {model}:"), format!("${cost:.4}"));
            }
        }
        if let Some((mode, status)) = view.cache_warming() {
            let line = knightcode_runtime::cache_warming::format_status(&status);
            row("Warming:", format!("{} · {line}", mode.as_str()));
            if let Some(decision) = status.decision.filter(|d| d.economics_available) {
                row(
                    "Refresh:",
                    format!(
                        "${:.3} a refresh, ${:.3} a cache miss",
                        decision.warm_cost, decision.miss_cost
                    ),
                );
            }
        }
        self.screen.transcript.push(crate::transcript::Card::Notice(
            crate::transcript::Notice::table("Session", rows),
        ));
        self.mark_urgent();
    }

    /// Puts `text` on the clipboard with OSC 52 (the terminal's, so it works over SSH and
    /// in tmux).
    pub fn copy_to_clipboard(&mut self, text: &str) {
        let bytes = clipboard::osc52(text);
        self.write_raw(&bytes);
    }

    pub fn copy_last(&mut self) {
        match self.screen.transcript.last_assistant_text() {
            Some(text) => {
                self.copy_to_clipboard(&text);
                self.status("Copied the last reply to the clipboard.");
            }
            None => self.info("There is no reply to copy yet."),
        }
    }

    pub fn name_session(&mut self, name: Option<&str>) {
        match name {
            None => {
                let current = self.screen.footer.session_name.clone();
                match current {
                    Some(name) => self.info(&format!("Session name: {name}")),
                    None => self.info("This session has no name; set one with /name <name>."),
                }
            }
            Some(name) => {
                self.send(
                    Command::SetSessionName(name.to_owned()),
                    Pending::Named(name.to_owned()),
                );
            }
        }
    }
}

impl Ui {
    /// `/reload`: keybindings and themes now; skills, prompt templates and context files in the
    /// session (after a running prompt), answered with what it loaded.
    pub fn reload(&mut self) {
        let path = self.places.agent_dir().join("keybindings.json");
        match knightcode_tui::keybindings::Keybindings::load(&path) {
            Ok((bindings, warnings)) => {
                self.prefs.set_bindings(bindings);
                for warning in warnings {
                    self.warn(&warning);
                }
            }
            Err(error) => self.warn(&format!("{error}; keeping the keybindings in use")),
        }
        // Themes are the interface's: read again here, with the settings as they are now.
        let settings = self.current_settings();
        for warning in self.load_theme(&settings, self.session.trusted()) {
            self.warn(&warning);
        }
        self.apply_display_settings(&settings);
        self.send(Command::Reload, Pending::Reloaded);
    }

    /// The session re-read its resources: completion offers the new commands, problems
    /// are listed, and a notice says what is loaded.
    pub fn reloaded(
        &mut self,
        resources: &std::sync::Arc<knightcode_runtime::resources::Resources>,
    ) {
        self.session.set_resources(resources);
        self.refresh_resource_commands();
        self.refresh_shortcuts();
        // Themes were read before the extensions reloaded: again if theirs changed.
        if self.themes.adopt_sources(resources) {
            let settings = self.current_settings();
            for warning in self.load_theme(&settings, self.session.trusted()) {
                self.warn(&warning);
            }
        }
        let report = knightcode_runtime::resources::report(resources);
        if !report.is_empty() {
            self.warn(&report.join("\n"));
        }
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        self.info(&format!(
            "Reloaded keybindings, skills, prompt templates and context files: {}, {}.",
            count(resources.skills.len(), "skill", "skills"),
            count(
                resources.templates.len(),
                "prompt template",
                "prompt templates"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn editor_programs_and_grouped_digits() {
        assert_eq!(super::first_word("code --wait").as_deref(), Some("code"));
        assert_eq!(
            super::first_word("\"/opt/My Editor/bin/ed\" -w").as_deref(),
            Some("/opt/My Editor/bin/ed")
        );
        assert_eq!(super::first_word("  "), None);
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_234_567), "1,234,567");
    }
}
