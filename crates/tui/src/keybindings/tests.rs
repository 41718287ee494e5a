use super::key_binding::SYMBOLS;
use super::*;
use crate::keys::{InputEvent, InputParser, KeyCode, Modifiers};

fn kb(text: &str) -> KeyBinding {
    KeyBinding::parse(text).unwrap()
}

/// The key a terminal sends for `bytes`.
fn key(bytes: &[u8]) -> Key {
    let mut parser = InputParser::new();
    let mut events = parser.feed(bytes);
    events.extend(parser.flush_pending());
    match events.as_slice() {
        [InputEvent::Key(key)] => key.clone(),
        other => panic!("expected one key for {bytes:?}, got {other:?}"),
    }
}

#[test]
fn parses_modifiers_and_keys_case_insensitively() {
    let b = kb("Ctrl+Shift+P");
    assert_eq!(b.code(), KeyCode::Char('p'));
    assert_eq!(b.modifiers(), Modifiers::CTRL | Modifiers::SHIFT);
    assert_eq!(kb("alt+enter").code(), KeyCode::Enter);
    assert_eq!(kb("return"), kb("enter"));
    assert_eq!(kb("esc"), kb("escape"));
    assert_eq!(kb("pageUp").code(), KeyCode::PageUp);
    assert_eq!(kb("PAGEDOWN").code(), KeyCode::PageDown);
    assert_eq!(kb("f5").code(), KeyCode::F(5));
    assert_eq!(kb("f12").code(), KeyCode::F(12));
    assert_eq!(kb("ctrl+-").code(), KeyCode::Char('-'));
    assert_eq!(kb("ctrl+]").code(), KeyCode::Char(']'));
    assert_eq!(kb("space").code(), KeyCode::Char(' '));
    assert_eq!(kb("super+k").modifiers(), Modifiers::SUPER);
    assert_eq!(kb("shift+ctrl+p"), kb("ctrl+shift+p"));
    assert_eq!(kb(" ctrl+a "), kb("ctrl+a"));
}

#[test]
fn plus_is_a_key_too() {
    assert_eq!(kb("+").code(), KeyCode::Char('+'));
    let b = kb("ctrl++");
    assert_eq!(
        (b.code(), b.modifiers()),
        (KeyCode::Char('+'), Modifiers::CTRL)
    );
    assert_eq!(
        kb("ctrl+shift++").modifiers(),
        Modifiers::CTRL | Modifiers::SHIFT
    );
}

#[test]
fn every_symbol_parses() {
    for c in SYMBOLS.chars() {
        assert_eq!(kb(&c.to_string()).code(), KeyCode::Char(c), "{c}");
        assert_eq!(
            kb(&format!("ctrl+{c}")).code(),
            KeyCode::Char(c),
            "ctrl+{c}"
        );
    }
}

#[test]
fn rejects_what_is_not_a_key() {
    for bad in [
        "",
        "ctrl+",
        "ctrl+foo",
        "hyper+a",
        "ctrl++a",
        "f0",
        "f99",
        "é",
        "ctrl+shift",
    ] {
        assert!(KeyBinding::parse(bad).is_err(), "{bad:?}");
    }
    let err = KeyBinding::parse("cmd+k").unwrap_err();
    assert!(err.contains("cmd"), "{err}");
}

#[test]
fn displays_back_as_written() {
    for text in [
        "ctrl+shift+p",
        "shift+ctrl+p",
        "alt+enter",
        "escape",
        "pageUp",
        "f5",
        "ctrl+-",
        "ctrl++",
        "space",
        "super+alt+k",
    ] {
        assert_eq!(kb(text).to_string(), text);
    }
    assert_eq!(kb("ESC").to_string(), "escape");
    assert_eq!(kb("Ctrl+PageDown").to_string(), "ctrl+pageDown");
    assert_eq!(
        KeyBinding::new(KeyCode::Char('p'), Modifiers::CTRL | Modifiers::SHIFT).to_string(),
        "shift+ctrl+p"
    );
}

#[test]
fn matches_keys_from_the_terminal() {
    let cases: &[(&str, &[u8])] = &[
        ("ctrl+p", b"\x10"),
        ("ctrl+p", b"\x1b[112;5u"),
        ("shift+ctrl+p", b"\x1b[112;6u"),
        ("shift+ctrl+p", b"\x1b[27;6;80~"),
        ("escape", b"\x1b"),
        ("escape", b"\x1b[27u"),
        ("enter", b"\r"),
        ("shift+enter", b"\x1b[13;2u"),
        ("shift+enter", b"\x1b[27;2;13~"),
        ("alt+enter", b"\x1b\r"),
        ("alt+enter", b"\x1b[13;3u"),
        ("ctrl+j", b"\n"),
        ("tab", b"\t"),
        ("shift+tab", b"\x1b[Z"),
        ("backspace", b"\x7f"),
        ("alt+backspace", b"\x1b\x7f"),
        ("ctrl+backspace", b"\x1b[127;5u"),
        ("delete", b"\x1b[3~"),
        ("alt+delete", b"\x1b[3;3~"),
        ("ctrl+left", b"\x1b[1;5D"),
        ("alt+left", b"\x1b[1;3D"),
        ("ctrl+shift+up", b"\x1b[1;6A"),
        ("home", b"\x1bOH"),
        ("end", b"\x1b[4~"),
        ("pageUp", b"\x1b[5~"),
        ("f1", b"\x1bOP"),
        ("f5", b"\x1b[15~"),
        ("ctrl+]", b"\x1d"),
        ("ctrl+alt+]", b"\x1b\x1d"),
        ("ctrl+-", b"\x1f"),
        ("ctrl+-", b"\x1b[45;5u"),
        ("ctrl+space", b"\x00"),
        ("space", b" "),
        ("alt+y", b"\x1by"),
        ("alt+up", b"\x1b[1;3A"),
        ("a", b"a"),
        ("/", b"/"),
        ("shift+l", b"L"),
        ("shift+l", b"\x1b[108:76;2u"),
        ("alt+shift+a", b"\x1bA"),
        ("super+k", b"\x1b[107;9u"),
        ("ctrl+c", b"\x1b[1089::99;5u"),
    ];
    for (binding, bytes) in cases {
        assert!(
            kb(binding).matches(&key(bytes)),
            "{binding} should match {bytes:?}"
        );
    }
}

#[test]
fn does_not_match_other_keys() {
    let cases: &[(&str, &[u8])] = &[
        ("ctrl+p", b"p"),
        ("ctrl+p", b"\x1b[112;6u"),
        ("shift+ctrl+p", b"\x10"),
        ("enter", b"\x1b[13;2u"),
        ("shift+enter", b"\r"),
        ("a", b"A"),
        ("shift+l", b"l"),
        ("tab", b"\x1b[Z"),
        ("left", b"\x1b[1;5D"),
        ("ctrl+left", b"\x1b[D"),
        ("escape", b"\x1b\x1b[A"),
        ("alt+d", b"\x1b[3;3~"),
    ];
    for (binding, bytes) in cases {
        assert!(
            !kb(binding).matches(&key(bytes)),
            "{binding} should not match {bytes:?}"
        );
    }
}

#[test]
fn legacy_aliases_match_like_the_reference() {
    // macOS terminals send ESC b / ESC f for Option+Left / Option+Right.
    assert!(kb("alt+left").matches(&key(b"\x1bb")));
    assert!(kb("alt+b").matches(&key(b"\x1bb")));
    assert!(kb("alt+right").matches(&key(b"\x1bf")));
    assert!(kb("alt+left").matches(&key(b"\x1bB")));
    assert!(kb("alt+up").matches(&key(b"\x1bp")));
    assert!(kb("alt+down").matches(&key(b"\x1bn")));
    // BS is both Backspace and Ctrl+H.
    assert!(kb("backspace").matches(&key(b"\x08")));
    assert!(kb("ctrl+h").matches(&key(b"\x08")));
    assert!(kb("ctrl+_").matches(&key(b"\x1f")));
}

#[test]
fn releases_never_match_but_repeats_do() {
    assert!(!kb("ctrl+c").matches(&key(b"\x1b[99;5:3u")));
    assert!(kb("ctrl+c").matches(&key(b"\x1b[99;5:2u")));
    assert!(!kb("up").matches(&key(b"\x1b[1;1:3A")));
}

#[test]
fn defaults_cover_the_spec() {
    let b = Keybindings::defaults();
    let shown = |action: &str| {
        b.keys_for(action)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(shown("app.interrupt"), "escape");
    assert_eq!(shown("app.clear"), "ctrl+c");
    assert_eq!(shown("app.exit"), "ctrl+d");
    assert_eq!(shown("app.suspend"), "ctrl+z");
    assert_eq!(shown("app.model.cycleBackward"), "shift+ctrl+p");
    assert_eq!(shown("app.message.followUp"), "alt+enter");
    assert_eq!(shown("app.message.copy"), "ctrl+x");
    assert_eq!(shown("app.session.new"), "");
    assert_eq!(shown("tui.input.newLine"), "shift+enter ctrl+j");
    assert_eq!(
        shown("tui.editor.cursorWordLeft"),
        "alt+left ctrl+left alt+b"
    );
    assert_eq!(shown("tui.editor.undo"), "ctrl+-");
    assert_eq!(shown("tui.editor.historyPrevious"), "");
    assert_eq!(shown("tui.select.cancel"), "escape ctrl+c");
    assert_eq!(
        shown("tui.altScreen.searchPrevious"),
        "shift+enter ctrl+shift+g"
    );
    assert_eq!(shown("app.tree.filter.cycleBackward"), "shift+ctrl+o");
    assert_eq!(shown("no.such.action"), "");
    // Every default parses (a typo in the table would silently drop a key).
    for definition in DEFINITIONS {
        assert_eq!(
            b.keys_for(definition.id).len(),
            definition.keys.len(),
            "{}",
            definition.id
        );
        assert!(Keybindings::description(definition.id).is_some());
    }
    assert_eq!(b.actions().count(), DEFINITIONS.len());
    assert!(b.matches("app.interrupt", &key(b"\x1b")));
    assert!(b.matches("tui.editor.cursorWordLeft", &key(b"\x1bb")));
    assert!(!b.matches("no.such.action", &key(b"\x1b")));
}

#[test]
fn platform_defaults() {
    let windows = Keybindings::defaults_for(Platform::Windows);
    let wsl = Keybindings::defaults_for(Platform::Wsl);
    let shown = |b: &Keybindings, action: &str| {
        b.keys_for(action)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(shown(&windows, "tui.editor.undo"), "ctrl+z");
    assert_eq!(shown(&wsl, "tui.editor.undo"), "alt+z");
    assert_eq!(shown(&windows, "app.suspend"), "");
    assert_eq!(shown(&wsl, "app.suspend"), "ctrl+z");
    assert_eq!(shown(&wsl, "app.clipboard.pasteImage"), "alt+v");
    assert_eq!(shown(&windows, "app.message.followUp"), "ctrl+q");
    assert_eq!(shown(&windows, "app.message.dequeue"), "alt+q");
    assert_eq!(shown(&windows, "app.model.cycleBackward"), "alt+p");
    assert_eq!(shown(&wsl, "tui.altScreen.search"), "ctrl+f");
    assert_eq!(
        shown(&wsl, "tui.altScreen.previousPrompt"),
        "ctrl+shift+up ctrl+up"
    );
}

struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "knightcode-tui-keybindings-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self, text: &str) -> std::path::PathBuf {
        let path = self.0.join("keybindings.json");
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn load_missing_file_is_the_defaults() {
    let dir = TempDir::new("missing");
    let (b, warnings) = Keybindings::load(&dir.0.join("keybindings.json")).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(
        b.keys_for("app.exit"),
        Keybindings::defaults().keys_for("app.exit")
    );
}

#[test]
fn load_replaces_and_disables() {
    let dir = TempDir::new("replace");
    let path = dir.file(
        r#"{
            "app.exit": "ctrl+q",
            "tui.editor.cursorLeft": ["left", "ctrl+h", "left"],
            "app.clear": [],
            "tui.editor.undo": "CTRL+Z"
        }"#,
    );
    let (b, warnings) = Keybindings::load(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(b.matches("app.exit", &key(b"\x11")));
    assert!(!b.matches("app.exit", &key(b"\x04")));
    assert_eq!(b.keys_for("tui.editor.cursorLeft").len(), 2);
    assert!(b.keys_for("app.clear").is_empty());
    assert!(!b.matches("app.clear", &key(b"\x03")));
    assert!(b.matches("tui.editor.undo", &key(b"\x1a")));
    // Untouched actions keep their defaults.
    assert!(b.matches("app.interrupt", &key(b"\x1b")));
}

#[test]
fn load_warns_about_unknown_actions_and_bad_keys() {
    let dir = TempDir::new("warn");
    let path = dir.file(
        r#"{
            "app.nope": "ctrl+q",
            "app.exit": ["ctrl+q", "ctrl+banana"],
            "app.clear": 5,
            "app.suspend": ["ctrl+z", 3]
        }"#,
    );
    let (b, warnings) = Keybindings::load(&path).unwrap();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings[0].contains("app.nope"));
    assert!(warnings[1].contains("ctrl+banana") && warnings[1].contains("app.exit"));
    assert!(warnings[2].contains("app.clear"));
    assert!(warnings[3].contains("app.suspend"));
    // The good key of app.exit is kept; ignored entries keep their defaults.
    assert_eq!(b.keys_for("app.exit").len(), 1);
    assert!(b.matches("app.exit", &key(b"\x11")));
    assert!(b.matches("app.clear", &key(b"\x03")));
    assert!(b.matches("app.suspend", &key(b"\x1a")));
}

#[test]
fn load_reports_keys_claimed_twice() {
    let dir = TempDir::new("conflict");
    let path = dir.file(r#"{ "app.exit": "ctrl+q", "app.clear": "ctrl+q" }"#);
    let (_, warnings) = Keybindings::load(&path).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("ctrl+q"));
    assert!(warnings[0].contains("app.exit") && warnings[0].contains("app.clear"));
}

#[test]
fn load_migrates_legacy_names() {
    let dir = TempDir::new("legacy");
    let path = dir.file(r#"{ "cursorLeft": "ctrl+h", "interrupt": "ctrl+g", "submit": "ctrl+s", "tui.input.submit": "ctrl+m" }"#);
    let (b, warnings) = Keybindings::load(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(b.matches("tui.editor.cursorLeft", &key(b"\x08")));
    assert!(b.matches("app.interrupt", &key(b"\x07")));
    // The new id wins over the old name.
    assert_eq!(b.keys_for("tui.input.submit")[0].to_string(), "ctrl+m");
}

#[test]
fn load_rejects_malformed_json() {
    let dir = TempDir::new("malformed");
    for text in ["{ \"app.exit\": ", "[\"ctrl+q\"]", "\"ctrl+q\""] {
        let path = dir.file(text);
        let err = Keybindings::load(&path).unwrap_err();
        assert!(matches!(err, TuiError::Keybindings { .. }), "{text}");
        let message = err.to_string();
        assert!(message.contains("keybindings.json"), "{message}");
    }
}

#[test]
fn load_uses_the_platform_defaults() {
    let dir = TempDir::new("platform");
    let path = dir.file("{}");
    let (b, _) = Keybindings::load_for(&path, Platform::Windows).unwrap();
    assert!(b.keys_for("app.suspend").is_empty());
}

#[test]
fn extension_actions_can_be_added() {
    let mut b = Keybindings::defaults();
    b.set("ext.myShortcut", vec![kb("ctrl+shift+k")]);
    assert!(b.matches("ext.myShortcut", &key(b"\x1b[107;6u")));
    assert!(!Keybindings::is_builtin("ext.myShortcut"));
    assert!(Keybindings::is_builtin("app.exit"));
    assert_eq!(b.actions().last().map(|(id, _)| id), Some("ext.myShortcut"));
}
