//! The screen on the terminal: its own small loop (no session runs behind it), drawn by
//! the same renderer as the interactive mode.

use std::sync::mpsc;
use std::time::Duration;

use knightcode_packages::Layout;
use knightcode_runtime::resources::themes::Appearance;
use knightcode_runtime::settings::Settings;
use knightcode_tui::InputEvent;
use knightcode_tui::InputParser;
use knightcode_tui::Renderer;
use knightcode_tui::Terminal;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use super::ConfigOutcome;
use super::ConfigScreen;
use crate::InteractiveError;

/// What `knightcode config` was asked for.
#[derive(Debug, Clone)]
pub struct ConfigOptions {
    pub layout: Layout,
    /// Whether the project's files may be read (its trust decision).
    pub trusted: bool,
    /// `-l`: start in project mode.
    pub project: bool,
}

/// The interface's colours: the `theme` setting's theme, as the interactive mode picks it.
fn theme(options: &ConfigOptions) -> Theme {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return Theme::plain();
    }
    let layout = &options.layout;
    let settings = Settings::load(&layout.agent_dir, &layout.cwd, options.trusted);
    let appearance = Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref());
    let (_, file, _) = knightcode_runtime::resources::load_themes(
        &knightcode_runtime::resources::ThemeFlags::default(),
        &settings,
        &layout.cwd,
        &layout.agent_dir,
        layout.home.as_deref(),
        options.trusted,
        appearance,
    );
    let truecolor = crate::app::theme::truecolor(&settings, &|name| std::env::var(name).ok());
    crate::app::theme::tui_theme(&file, truecolor)
}

/// How long a lone escape byte waits for the rest of a key sequence.
const ESCAPE_WAIT: Duration = Duration::from_millis(30);

/// Runs the screen until Esc or Ctrl+C; the exit status (0).
pub fn run(options: ConfigOptions) -> Result<u8, InteractiveError> {
    let (bindings, _) = Keybindings::load(&options.layout.agent_dir.join("keybindings.json"))
        .unwrap_or_else(|_| (Keybindings::defaults(), Vec::new()));
    let theme = theme(&options);
    let mut term = Terminal::enter()?;
    term.restore_on_panic();
    let (mut width, mut height) = term.size()?;
    let (tx, input) = mpsc::channel::<Vec<u8>>();
    let _reader = term.spawn_input_reader(move |bytes: Vec<u8>| {
        if bytes.is_empty() {
            let _ = tx.send(Vec::new());
            return false;
        }
        tx.send(bytes).is_ok()
    })?;
    let mut renderer = Renderer::new(width, height);
    renderer.set_start_row(term.start_row().unwrap_or(height.saturating_sub(1)));
    let mut parser = InputParser::new();
    parser.set_kitty_active(term.kitty_active());
    let mut screen = ConfigScreen::new(options.layout, options.trusted, options.project, theme);
    screen.set_height(height);
    let mut out = Vec::new();
    let mut draw = |screen: &ConfigScreen,
                    renderer: &mut Renderer,
                    term: &mut Terminal,
                    width: u16|
     -> Result<(), InteractiveError> {
        out.clear();
        renderer.render(&screen.render(width), &mut out);
        term.write_frame(&out)?;
        Ok(())
    };
    draw(&screen, &mut renderer, &mut term, width)?;
    loop {
        let events = if parser.has_pending() {
            match input.recv_timeout(ESCAPE_WAIT) {
                Ok(bytes) if bytes.is_empty() => break,
                Ok(bytes) => parser.feed(&bytes),
                Err(mpsc::RecvTimeoutError::Timeout) => parser.flush_pending(),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match input.recv() {
                Ok(bytes) if bytes.is_empty() => break,
                Ok(bytes) => parser.feed(&bytes),
                Err(_) => break,
            }
        };
        let mut outcome = ConfigOutcome::Pending;
        for event in events {
            match event {
                InputEvent::Key(key) => outcome = screen.handle_key(&key, &bindings),
                InputEvent::Paste(text) => screen.handle_paste(&text),
                _ => {}
            }
            if outcome != ConfigOutcome::Pending {
                break;
            }
        }
        if outcome != ConfigOutcome::Pending {
            break;
        }
        // No resize signal here: the size is checked with each key.
        let (w, h) = term.size()?;
        if (w, h) != (width, height) {
            (width, height) = (w, h);
            renderer.resize(w, h);
            screen.set_height(h);
        }
        draw(&screen, &mut renderer, &mut term, width)?;
    }
    let mut out = Vec::new();
    renderer.clear(&mut out);
    term.write_frame(&out)?;
    Ok(0)
}
