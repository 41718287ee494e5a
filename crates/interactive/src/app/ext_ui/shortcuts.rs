//! Extensions' keyboard shortcuts (`registerShortcut`): which apply, and which give way to
//! the app's own keys (the reference's rules and warnings).

use crate::app::ui::Ui;

impl Ui {
    /// Takes up the extensions' shortcuts (start, `/reload`), warning about conflicts.
    pub fn refresh_shortcuts(&mut self) {
        let Some(channel) = self.ext_ui.channel() else {
            return;
        };
        let (active, warnings) = resolve_shortcuts(self.prefs.bindings(), &channel.shortcuts());
        self.ext_ui.shortcuts = active;
        for warning in warnings {
            self.warn(&warning);
        }
    }
}

/// App keys extensions' shortcuts cannot take (the reference's list): a shortcut on one of
/// them is skipped with a warning; on any other app key it wins, with a warning.
const RESERVED_ACTIONS: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

/// The shortcuts that apply (key and the id to run it by), and what to warn about.
fn resolve_shortcuts(
    bindings: &knightcode_tui::Keybindings,
    shortcuts: &[(String, String)],
) -> (Vec<(knightcode_tui::KeyBinding, String)>, Vec<String>) {
    let mut active: Vec<(knightcode_tui::KeyBinding, String, String)> = Vec::new();
    let mut warnings = Vec::new();
    for (shortcut, path) in shortcuts {
        let Ok(binding) = knightcode_tui::KeyBinding::parse(shortcut) else {
            warnings.push(format!(
                "Extension shortcut '{shortcut}' from {path} is not a key this terminal knows. Skipping."
            ));
            continue;
        };
        let taken: Vec<&str> = bindings
            .actions()
            .filter(|(_, keys)| keys.contains(&binding))
            .map(|(action, _)| action)
            .collect();
        if taken.iter().any(|a| RESERVED_ACTIONS.contains(a)) {
            warnings.push(format!(
                "Extension shortcut '{shortcut}' from {path} conflicts with built-in shortcut. Skipping."
            ));
            continue;
        }
        if let Some(action) = taken.iter().find(|a| a.starts_with("app.")) {
            warnings.push(format!(
                "Extension shortcut conflict: '{shortcut}' is built-in shortcut for {action} and {path}. Using {path}."
            ));
        }
        if let Some(at) = active.iter().position(|(b, _, _)| *b == binding) {
            let (_, _, earlier) = active.remove(at);
            warnings.push(format!(
                "Extension shortcut conflict: '{shortcut}' registered by both {earlier} and {path}. Using {path}."
            ));
        }
        active.push((binding, shortcut.clone(), path.clone()));
    }
    (
        active.into_iter().map(|(b, s, _)| (b, s)).collect(),
        warnings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_on_reserved_keys_are_skipped_and_others_win() {
        let bindings = knightcode_tui::Keybindings::defaults();
        let shortcuts = vec![
            ("ctrl+c".to_owned(), "a.ts".to_owned()),
            ("ctrl+alt+x".to_owned(), "a.ts".to_owned()),
            ("ctrl+alt+x".to_owned(), "b.ts".to_owned()),
            ("alt+up".to_owned(), "c.ts".to_owned()),
        ];
        let (active, warnings) = resolve_shortcuts(&bindings, &shortcuts);
        let keys: Vec<&str> = active.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(keys, ["ctrl+alt+x", "alt+up"]);
        assert!(
            warnings[0].contains("'ctrl+c' from a.ts conflicts with built-in shortcut"),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("registered by both a.ts and b.ts")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("built-in shortcut for app.message.dequeue")),
            "{warnings:?}"
        );
    }
}
