//! KnightCode's interactive mode (`knightcode` with no `-p`/`--mode`): the transcript, the
//! editor, the footer, slash commands and pickers, on the `knightcode-tui` toolkit.

pub mod error;
pub mod pickers;

pub use error::InteractiveError;
