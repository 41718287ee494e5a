//! The built-in keybindings: every action with its default keys and description in the
//! reference's order, the defaults that differ on Windows and WSL, and the action names
//! older versions wrote in `keybindings.json`.

/// Which defaults apply: a few differ on Windows and WSL, where terminals do not deliver
/// some keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Unix,
    Windows,
    Wsl,
}

impl Platform {
    /// The platform this process runs on (WSL is told by its environment variables).
    pub fn detect() -> Self {
        if cfg!(windows) {
            return Self::Windows;
        }
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if cfg!(target_os = "linux") && (set("WSL_DISTRO_NAME") || set("WSL_INTEROP")) {
            Self::Wsl
        } else {
            Self::Unix
        }
    }
}

pub(super) struct Definition {
    pub(super) id: &'static str,
    pub(super) keys: &'static [&'static str],
    pub(super) description: &'static str,
}

const fn def(
    id: &'static str,
    keys: &'static [&'static str],
    description: &'static str,
) -> Definition {
    Definition {
        id,
        keys,
        description,
    }
}

/// Every action with its default keys, in the reference's order (the order /hotkeys lists).
pub(super) const DEFINITIONS: &[Definition] = &[
    def("tui.editor.cursorUp", &["up"], "Move cursor up"),
    def("tui.editor.cursorDown", &["down"], "Move cursor down"),
    def(
        "tui.editor.historyPrevious",
        &[],
        "Select previous prompt history entry",
    ),
    def(
        "tui.editor.historyNext",
        &[],
        "Select next prompt history entry",
    ),
    def(
        "tui.editor.cursorLeft",
        &["left", "ctrl+b"],
        "Move cursor left",
    ),
    def(
        "tui.editor.cursorRight",
        &["right", "ctrl+f"],
        "Move cursor right",
    ),
    def(
        "tui.editor.cursorWordLeft",
        &["alt+left", "ctrl+left", "alt+b"],
        "Move cursor word left",
    ),
    def(
        "tui.editor.cursorWordRight",
        &["alt+right", "ctrl+right", "alt+f"],
        "Move cursor word right",
    ),
    def(
        "tui.editor.cursorLineStart",
        &["home", "ctrl+a"],
        "Move to line start",
    ),
    def(
        "tui.editor.cursorLineEnd",
        &["end", "ctrl+e"],
        "Move to line end",
    ),
    def(
        "tui.editor.jumpForward",
        &["ctrl+]"],
        "Jump forward to character",
    ),
    def(
        "tui.editor.jumpBackward",
        &["ctrl+alt+]"],
        "Jump backward to character",
    ),
    def("tui.editor.pageUp", &["pageUp"], "Page up"),
    def("tui.editor.pageDown", &["pageDown"], "Page down"),
    def(
        "tui.editor.deleteCharBackward",
        &["backspace"],
        "Delete character backward",
    ),
    def(
        "tui.editor.deleteCharForward",
        &["delete", "ctrl+d"],
        "Delete character forward",
    ),
    def(
        "tui.editor.deleteWordBackward",
        &["ctrl+w", "alt+backspace"],
        "Delete word backward",
    ),
    def(
        "tui.editor.deleteWordForward",
        &["alt+d", "alt+delete"],
        "Delete word forward",
    ),
    def(
        "tui.editor.deleteToLineStart",
        &["ctrl+u"],
        "Delete to line start",
    ),
    def(
        "tui.editor.deleteToLineEnd",
        &["ctrl+k"],
        "Delete to line end",
    ),
    def("tui.editor.yank", &["ctrl+y"], "Yank"),
    def("tui.editor.yankPop", &["alt+y"], "Yank pop"),
    def("tui.editor.undo", &["ctrl+-"], "Undo"),
    def(
        "tui.input.newLine",
        &["shift+enter", "ctrl+j"],
        "Insert newline",
    ),
    def("tui.input.submit", &["enter"], "Submit input"),
    def("tui.input.tab", &["tab"], "Tab / autocomplete"),
    def("tui.input.copy", &["ctrl+c"], "Copy selection"),
    def("tui.select.up", &["up"], "Move selection up"),
    def("tui.select.down", &["down"], "Move selection down"),
    def("tui.select.pageUp", &["pageUp"], "Selection page up"),
    def("tui.select.pageDown", &["pageDown"], "Selection page down"),
    def("tui.select.confirm", &["enter"], "Confirm selection"),
    def(
        "tui.select.cancel",
        &["escape", "ctrl+c"],
        "Cancel selection",
    ),
    def(
        "tui.altScreen.pageUp",
        &["pageUp"],
        "Scroll viewport up one page",
    ),
    def(
        "tui.altScreen.pageDown",
        &["pageDown"],
        "Scroll viewport down one page",
    ),
    def(
        "tui.altScreen.halfPageUp",
        &[],
        "Scroll viewport up half a page",
    ),
    def(
        "tui.altScreen.halfPageDown",
        &[],
        "Scroll viewport down half a page",
    ),
    def("tui.altScreen.lineUp", &[], "Scroll viewport up one line"),
    def(
        "tui.altScreen.lineDown",
        &[],
        "Scroll viewport down one line",
    ),
    def(
        "tui.altScreen.previousPrompt",
        &["ctrl+shift+up"],
        "Jump to previous prompt",
    ),
    def(
        "tui.altScreen.nextPrompt",
        &["ctrl+shift+down"],
        "Jump to next prompt",
    ),
    def(
        "tui.altScreen.search",
        &["ctrl+shift+f"],
        "Search the transcript",
    ),
    def(
        "tui.altScreen.searchNext",
        &["enter", "ctrl+g"],
        "Select the next search match",
    ),
    def(
        "tui.altScreen.searchPrevious",
        &["shift+enter", "ctrl+shift+g"],
        "Select the previous search match",
    ),
    def(
        "tui.altScreen.searchClose",
        &["escape"],
        "Close transcript search",
    ),
    def("tui.altScreen.top", &["home"], "Scroll viewport to top"),
    def(
        "tui.altScreen.bottom",
        &["end"],
        "Scroll viewport to bottom",
    ),
    def("app.interrupt", &["escape"], "Cancel or abort"),
    def("app.clear", &["ctrl+c"], "Clear editor"),
    def("app.exit", &["ctrl+d"], "Exit when editor is empty"),
    def("app.suspend", &["ctrl+z"], "Suspend to background"),
    def("app.thinking.cycle", &["shift+tab"], "Cycle thinking level"),
    def(
        "app.thinking.save",
        &["ctrl+d"],
        "Save thinking level as default",
    ),
    def("app.model.cycleForward", &["ctrl+p"], "Cycle to next model"),
    def(
        "app.model.cycleBackward",
        &["shift+ctrl+p"],
        "Cycle to previous model",
    ),
    def("app.model.select", &["ctrl+l"], "Open model selector"),
    def("app.tools.expand", &["ctrl+o"], "Toggle tool output"),
    def("app.thinking.toggle", &["ctrl+t"], "Toggle thinking blocks"),
    def(
        "app.session.toggleNamedFilter",
        &["ctrl+n"],
        "Toggle named session filter",
    ),
    def("app.editor.external", &["ctrl+g"], "Open external editor"),
    def(
        "app.message.copy",
        &["ctrl+x"],
        "Copy selection or last assistant message",
    ),
    def(
        "app.message.followUp",
        &["alt+enter"],
        "Queue follow-up message",
    ),
    def(
        "app.message.dequeue",
        &["alt+up"],
        "Restore queued messages",
    ),
    def(
        "app.clipboard.pasteImage",
        &["ctrl+v"],
        "Paste image or text from clipboard",
    ),
    def("app.session.new", &[], "Start a new session"),
    def("app.session.tree", &[], "Open session tree"),
    def("app.session.fork", &[], "Fork current session"),
    def("app.session.resume", &[], "Resume a session"),
    def(
        "app.tree.foldOrUp",
        &["ctrl+left", "alt+left"],
        "Fold tree branch or move up",
    ),
    def(
        "app.tree.unfoldOrDown",
        &["ctrl+right", "alt+right"],
        "Unfold tree branch or move down",
    ),
    def("app.tree.editLabel", &["shift+l"], "Edit tree label"),
    def(
        "app.tree.toggleLabelTimestamp",
        &["shift+t"],
        "Toggle tree label timestamps",
    ),
    def(
        "app.session.togglePath",
        &["ctrl+p"],
        "Toggle session path display",
    ),
    def(
        "app.session.toggleSort",
        &["ctrl+s"],
        "Toggle session sort mode",
    ),
    def("app.session.rename", &["ctrl+r"], "Rename session"),
    def("app.session.delete", &["ctrl+d"], "Delete session"),
    def(
        "app.session.deleteNoninvasive",
        &["ctrl+backspace"],
        "Delete session when query is empty",
    ),
    def("app.models.save", &["ctrl+s"], "Save model selection"),
    def("app.models.enableAll", &["ctrl+a"], "Enable all models"),
    def("app.models.clearAll", &["ctrl+x"], "Clear all models"),
    def(
        "app.models.toggleProvider",
        &["ctrl+p"],
        "Toggle all models for provider",
    ),
    def(
        "app.models.reorderUp",
        &["alt+up"],
        "Move model up in order",
    ),
    def(
        "app.models.reorderDown",
        &["alt+down"],
        "Move model down in order",
    ),
    def(
        "app.tree.filter.default",
        &["ctrl+d"],
        "Tree filter: default view",
    ),
    def(
        "app.tree.filter.noTools",
        &["ctrl+t"],
        "Tree filter: hide tool results",
    ),
    def(
        "app.tree.filter.userOnly",
        &["ctrl+u"],
        "Tree filter: user messages only",
    ),
    def(
        "app.tree.filter.labeledOnly",
        &["ctrl+l"],
        "Tree filter: labeled entries only",
    ),
    def(
        "app.tree.filter.all",
        &["ctrl+a"],
        "Tree filter: show all entries",
    ),
    def(
        "app.tree.filter.cycleForward",
        &["ctrl+o"],
        "Tree filter: cycle forward",
    ),
    def(
        "app.tree.filter.cycleBackward",
        &["shift+ctrl+o"],
        "Tree filter: cycle backward",
    ),
];

/// Defaults that differ on Windows and WSL.
pub(super) fn platform_keys(id: &str, platform: Platform) -> Option<&'static [&'static str]> {
    use Platform::{Unix, Windows, Wsl};
    Some(match (id, platform) {
        (_, Unix) => return None,
        ("tui.editor.undo", Windows) => &["ctrl+z"],
        ("tui.editor.undo", Wsl) => &["alt+z"],
        ("app.suspend", Windows) => &[],
        ("app.model.cycleBackward", _) => &["alt+p"],
        ("app.message.followUp", _) => &["ctrl+q"],
        ("app.message.dequeue", _) => &["alt+q"],
        ("app.clipboard.pasteImage", _) => &["alt+v"],
        ("tui.altScreen.search", _) => &["ctrl+f"],
        ("tui.altScreen.previousPrompt", _) => &["ctrl+shift+up", "ctrl+up"],
        ("tui.altScreen.nextPrompt", _) => &["ctrl+shift+down", "ctrl+down"],
        _ => return None,
    })
}

/// Names older versions wrote in keybindings.json, and the ids they became.
pub(super) const LEGACY_NAMES: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];
