//! KnightCode's interactive mode (`knightcode` with no `-p`/`--mode`): the transcript, the
//! editor, the footer, slash commands and pickers, on the `knightcode-tui` toolkit.

pub mod app;
pub mod config_screen;
pub mod error;
pub mod pickers;

pub use error::InteractiveError;
pub mod commands;
pub mod footer;
pub mod transcript;

pub use app::InteractiveOptions;
pub use app::run;
