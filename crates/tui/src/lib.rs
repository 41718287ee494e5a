//! KnightCode's terminal UI toolkit.
//!
//! The model is line-based, like the reference's `pi-tui` and the extension API built on it:
//! a [`Component`] turns a width into styled lines (strings with ANSI SGR sequences), may
//! take input, and can be told to drop cached lines. The [`renderer::Renderer`] diffs each
//! frame against the previous one and rewrites only changed lines, inside synchronized-output
//! brackets, without the alternate screen: lines that scroll off the top become the
//! terminal's own scrollback. In the fullscreen mode the frame is one screen high, on the
//! alternate screen, and [`viewport::Viewport`] scrolls the content inside it.
//!
//! This crate knows nothing about agents or sessions; the interactive app builds on it.

pub mod component;
pub mod components;
pub mod composite;
pub mod diff;
pub mod editor;
pub mod error;
pub mod fuzzy;
pub mod highlight;
pub mod keybindings;
pub mod keys;
pub mod markdown;
pub mod renderer;
pub mod search;
pub mod selection;
pub mod style;
pub mod terminal;
pub mod viewport;
pub mod width;

pub use component::Component;
pub use component::Container;
pub use editor::Editor;
pub use editor::EditorOutcome;
pub use error::TuiError;
pub use keybindings::KeyBinding;
pub use keybindings::Keybindings;
pub use keys::InputEvent;
pub use keys::InputParser;
pub use keys::Key;
pub use keys::KeyCode;
pub use keys::KeyKind;
pub use keys::Modifiers;
pub use markdown::Markdown;
pub use renderer::CURSOR_MARKER;
pub use renderer::FrameStats;
pub use renderer::Renderer;
pub use style::Style;
pub use style::SyntaxStyles;
pub use style::Theme;
pub use terminal::InputReaderHandle;
pub use terminal::Terminal;
