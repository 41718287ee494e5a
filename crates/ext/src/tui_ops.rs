//! The Rust side of the `@knightcode/tui` host package (`__kc.tui.*`): text measurement,
//! key parsing, keybindings, fuzzy matching and markdown, taken from `knightcode-tui` so
//! extension components measure, wrap and match keys exactly as our own views do.
//!
//! Everything here runs synchronously on the JS thread (a render loop calls these per
//! line), so nothing crosses threads and nothing is serialised beyond plain strings.

use std::cell::OnceCell;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use knightcode_tui::Editor;
use knightcode_tui::EditorOutcome;
use knightcode_tui::InputEvent;
use knightcode_tui::InputParser;
use knightcode_tui::Key;
use knightcode_tui::KeyBinding;
use knightcode_tui::KeyCode;
use knightcode_tui::KeyKind;
use knightcode_tui::Keybindings;
use knightcode_tui::Modifiers;
use knightcode_tui::component::Component as _;
use knightcode_tui::style::style_of_sgr;
use knightcode_tui::width;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use serde_json::Value;
use serde_json::json;

/// The first key in `data`, as the terminal sent it (a lone ESC is Escape).
fn first_key(data: &str) -> Option<Key> {
    let mut parser = InputParser::new();
    // Extensions receive raw sequences; CSI-u keys parse whether or not the terminal
    // has the kitty protocol on, so the two legacy Shift+Enter forms stay legacy.
    let mut events = parser.feed(data.as_bytes());
    events.extend(parser.flush_pending());
    events.into_iter().find_map(|event| match event {
        InputEvent::Key(key) => Some(key),
        _ => None,
    })
}

/// `matchesKey(data, "ctrl+c")`. Unknown key ids match nothing.
fn matches_key(data: &str, id: &str) -> bool {
    let (Some(mut key), Ok(binding)) = (first_key(data), KeyBinding::parse(id)) else {
        return false;
    };
    // The reference matches releases too; components that care ask `isKeyRelease`.
    key.kind = KeyKind::Press;
    binding.matches(&key)
}

/// `parseKey(data)`: the key id (`shift+ctrl+p`, `escape`, `a`; a shifted letter typed
/// plainly stays the upper-case letter, as in the reference), or undefined.
fn parse_key(data: &str) -> Option<String> {
    // Legacy sequences that name another key than the one they parse to, as the
    // reference reports them (macOS Option+arrows, Ctrl+- in most terminals).
    let alias = match data {
        "\x08" => Some("backspace"),
        "\x1f" => Some("ctrl+-"),
        "\x1b\x1f" => Some("ctrl+alt+-"),
        "\x1bb" | "\x1bB" => Some("alt+left"),
        "\x1bf" | "\x1bF" => Some("alt+right"),
        "\x1bp" => Some("alt+up"),
        "\x1bn" => Some("alt+down"),
        _ => None,
    };
    if let Some(alias) = alias {
        return Some(alias.to_owned());
    }
    let key = first_key(data)?;
    Some(KeyBinding::new(key.code, key.modifiers).to_string())
}

fn key_kind(data: &str) -> &'static str {
    match first_key(data).map(|key| key.kind) {
        Some(KeyKind::Release) => "release",
        Some(KeyKind::Repeat) => "repeat",
        Some(KeyKind::Press) => "press",
        None => "",
    }
}

/// `decodeKittyPrintable(data)`: the character a kitty `CSI … u` sequence types, when it
/// is plain or shifted text.
fn kitty_printable(data: &str) -> Option<String> {
    if !(data.starts_with("\x1b[") && data.ends_with('u')) {
        return None;
    }
    let key = first_key(data)?;
    match key.code {
        KeyCode::Char(c)
            if !c.is_control() && key.modifiers.without(Modifiers::SHIFT).is_empty() =>
        {
            Some(c.to_string())
        }
        _ => None,
    }
}

/// Where the user's `keybindings.json` lives (the agent directory).
fn keybindings_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KNIGHTCODE_CODING_AGENT_DIR") {
        return Some(PathBuf::from(dir).join("keybindings.json"));
    }
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".knightcode/agent/keybindings.json"))
}

/// The keybindings extensions see through `getKeybindings()`: the defaults with the
/// user's file applied, read once per runtime on first use.
fn load_keybindings() -> Keybindings {
    keybindings_path()
        .filter(|path| path.is_file())
        .and_then(|path| Keybindings::load(&path).ok())
        .map_or_else(Keybindings::defaults, |(bindings, _warnings)| bindings)
}

/// A slice of `text` by columns: the graphemes starting at column `start` that fit in
/// `len` columns. A wide character cut by either edge is left out.
fn slice_columns(text: &str, start: usize, len: usize) -> String {
    let mut out = String::new();
    let mut column = 0;
    for segment in width::segments(text) {
        match segment {
            width::Segment::Escape(e) => out.push_str(e),
            width::Segment::Grapheme(g) => {
                let w = width::grapheme_width(g);
                if column >= start && column + w <= start + len {
                    out.push_str(g);
                }
                column += w;
            }
        }
    }
    out
}

/// Markdown rendered with the styles an extension's `MarkdownTheme` functions produce;
/// `styles` maps a role (`heading`, `code`, …) to the SGR run that function puts before
/// its text.
fn markdown(
    text: &str,
    width: u16,
    styles: &Value,
    padding_x: usize,
    padding_y: usize,
) -> Vec<String> {
    let mut theme = knightcode_tui::Theme::default();
    let role = |name: &str| styles.get(name).and_then(Value::as_str).map(style_of_sgr);
    let slots = [
        ("heading", &mut theme.md_heading),
        ("link", &mut theme.md_link),
        ("linkUrl", &mut theme.md_link_url),
        ("code", &mut theme.md_code),
        ("codeBlock", &mut theme.md_code_block),
        ("codeBlockBorder", &mut theme.md_code_block_border),
        ("quote", &mut theme.md_quote),
        ("quoteBorder", &mut theme.md_quote_border),
        ("hr", &mut theme.md_hr),
        ("listBullet", &mut theme.md_list_bullet),
        ("bold", &mut theme.md_bold),
        ("italic", &mut theme.md_italic),
        ("strikethrough", &mut theme.md_strikethrough),
        ("underline", &mut theme.md_underline),
    ];
    for (name, slot) in slots {
        if let Some(style) = role(name) {
            *slot = style;
        }
    }
    let text_style = role("text").unwrap_or_default();
    let mut view = knightcode_tui::Markdown::new(text, theme)
        .with_padding(padding_x, padding_y)
        .with_text_style(text_style);
    if let Some(background) = role("background").filter(|s| s.bg.is_some()) {
        view = view.with_background(background);
    }
    view.render(width)
}

fn columns(value: f64) -> usize {
    if value.is_finite() && value > 0.0 {
        value as usize
    } else {
        0
    }
}

/// The editors JS `Editor` objects stand for, by handle. They live on the JS thread with
/// the objects; a `FinalizationRegistry` in `tui.js` drops an editor with its object.
#[derive(Default)]
struct Editors {
    next: u32,
    editors: HashMap<u32, Editor>,
}

/// One call on an editor: `op` names it, `arg` carries its text or number.
fn editor_op(
    editors: &RefCell<Editors>,
    bindings: &Keybindings,
    id: u32,
    op: &str,
    arg: &str,
) -> Value {
    let mut editors = editors.borrow_mut();
    let Some(editor) = editors.editors.get_mut(&id) else {
        return Value::Null;
    };
    match op {
        "input" => {
            let mut parser = InputParser::new();
            let mut events = parser.feed(arg.as_bytes());
            events.extend(parser.flush_pending());
            let mut submitted = Value::Null;
            let mut handled = false;
            for event in events {
                match event {
                    InputEvent::Key(key) => match editor.handle_key(&key, bindings) {
                        EditorOutcome::Submit(text) => {
                            submitted = Value::String(text);
                            handled = true;
                        }
                        EditorOutcome::Handled => handled = true,
                        EditorOutcome::Ignored => {}
                    },
                    InputEvent::Paste(text) => {
                        editor.handle_paste(&text);
                        handled = true;
                    }
                    InputEvent::Other(_) => {}
                }
            }
            json!({ "handled": handled, "submitted": submitted })
        }
        "render" => {
            let width = arg.parse::<u16>().unwrap_or(80);
            Value::from(editor.render(width))
        }
        "text" => Value::String(editor.text()),
        "expandedText" => Value::String(editor.expanded_text()),
        "lines" => Value::from(editor.lines().to_vec()),
        "cursor" => {
            let (line, col) = editor.cursor();
            json!({ "line": line, "col": col })
        }
        "setText" => {
            editor.set_text(arg);
            Value::Null
        }
        "insert" => {
            editor.insert_text(arg);
            Value::Null
        }
        "history" => {
            editor.add_to_history(arg);
            Value::Null
        }
        "border" => {
            editor.set_border_style(style_of_sgr(arg));
            Value::Null
        }
        "paddingX" => {
            editor.set_padding_x(arg.parse().unwrap_or(0));
            Value::Null
        }
        "rows" => {
            editor.set_terminal_rows(arg.parse().unwrap_or(24));
            Value::Null
        }
        "focused" => {
            editor.set_focused(arg == "true");
            Value::Null
        }
        "submit" => {
            editor.set_submit_enabled(arg == "true");
            Value::Null
        }
        "showingCompletions" => Value::Bool(editor.is_showing_completions()),
        "drop" => {
            editors.editors.remove(&id);
            Value::Null
        }
        _ => Value::Null,
    }
}

/// Puts the functions on `__kc.tui`.
pub fn install<'js>(ctx: &Ctx<'js>, kc: &Object<'js>) -> rquickjs::Result<()> {
    let tui = Object::new(ctx.clone())?;
    tui.set(
        "width",
        Function::new(ctx.clone(), |text: String| {
            width::visible_width(&text) as f64
        })?,
    )?;
    tui.set(
        "truncate",
        Function::new(
            ctx.clone(),
            |text: String, max: f64, ellipsis: String, pad: bool| {
                let max = columns(max);
                if pad {
                    let cut = width::truncate_to_width(&text, max, &ellipsis);
                    let used = width::visible_width(&cut);
                    format!("{cut}{}", " ".repeat(max.saturating_sub(used)))
                } else {
                    width::truncate_to_width(&text, max, &ellipsis)
                }
            },
        )?,
    )?;
    tui.set(
        "wrap",
        Function::new(ctx.clone(), |text: String, max: f64| {
            width::wrap_text_with_ansi(&text, columns(max).max(1))
        })?,
    )?;
    tui.set(
        "graphemes",
        Function::new(ctx.clone(), |text: String| {
            width::segments(&text)
                .into_iter()
                .map(|segment| match segment {
                    width::Segment::Escape(e) | width::Segment::Grapheme(e) => e.to_owned(),
                })
                .collect::<Vec<_>>()
        })?,
    )?;
    tui.set(
        "slice",
        Function::new(ctx.clone(), |text: String, start: f64, len: f64| {
            slice_columns(&text, columns(start), columns(len))
        })?,
    )?;
    tui.set(
        "matchesKey",
        Function::new(ctx.clone(), |data: String, id: String| {
            matches_key(&data, &id)
        })?,
    )?;
    tui.set(
        "parseKey",
        Function::new(ctx.clone(), |data: String| parse_key(&data))?,
    )?;
    tui.set(
        "keyKind",
        Function::new(ctx.clone(), |data: String| key_kind(&data))?,
    )?;
    tui.set(
        "kittyPrintable",
        Function::new(ctx.clone(), |data: String| kitty_printable(&data))?,
    )?;
    let bindings: Rc<OnceCell<Keybindings>> = Rc::new(OnceCell::new());
    let matching = Rc::clone(&bindings);
    tui.set(
        "bindingMatches",
        Function::new(ctx.clone(), move |data: String, action: String| {
            let Some(key) = first_key(&data) else {
                return false;
            };
            matching
                .get_or_init(load_keybindings)
                .matches(&action, &key)
        })?,
    )?;
    let listing = Rc::clone(&bindings);
    tui.set(
        "bindingKeys",
        Function::new(ctx.clone(), move |action: String| {
            listing
                .get_or_init(load_keybindings)
                .keys_for(&action)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        })?,
    )?;
    let editors: Rc<RefCell<Editors>> = Rc::default();
    let created = Rc::clone(&editors);
    tui.set(
        "editorNew",
        Function::new(ctx.clone(), move || {
            let mut all = created.borrow_mut();
            all.next += 1;
            let id = all.next;
            all.editors
                .insert(id, Editor::new(&knightcode_tui::Theme::default()));
            f64::from(id)
        })?,
    )?;
    let editor_bindings = Rc::clone(&bindings);
    tui.set(
        "editor",
        Function::new(ctx.clone(), move |id: f64, op: String, arg: String| {
            let bindings = editor_bindings.get_or_init(load_keybindings);
            editor_op(&editors, bindings, id as u32, &op, &arg).to_string()
        })?,
    )?;
    tui.set(
        "fuzzy",
        Function::new(ctx.clone(), |query: String, text: String| {
            knightcode_tui::fuzzy::fuzzy_match(&query, &text).map(|score| score as f64)
        })?,
    )?;
    tui.set(
        "markdown",
        Function::new(
            ctx.clone(),
            |text: String, width: f64, styles: String, padding_x: f64, padding_y: f64| {
                let styles: Value = serde_json::from_str(&styles).unwrap_or(Value::Null);
                let width = u16::try_from(columns(width)).unwrap_or(u16::MAX);
                markdown(
                    &text,
                    width,
                    &styles,
                    columns(padding_x),
                    columns(padding_y),
                )
            },
        )?,
    )?;
    kc.set("tui", tui)?;
    Ok(())
}
