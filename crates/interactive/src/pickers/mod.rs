//! Full-width pickers that take the editor's place: sessions, the session tree, models,
//! thinking levels, the project-trust prompt and the fork point.
//!
//! Every picker renders through [`knightcode_tui::Component`] (a border, a title line, the
//! list, key hints at the bottom; the app sets the list height with `set_max_rows`) and
//! takes keys through `handle_key(&Key, &Keybindings) -> PickerOutcome<..>`. Pickers never
//! touch the terminal or the file system: anything that needs I/O (loading every project's
//! sessions, renaming, deleting, saving a label) comes back as a [`PickerOutcome::Request`]
//! for the app to carry out, after which the app reports back through the picker's setters.

pub mod branch_summary_prompt;
pub(crate) mod common;
pub mod confirm;
pub mod ext_dialog;
pub mod fork_picker;
pub(crate) mod line_input;
pub mod login_dialog;
pub mod model_picker;
pub mod provider_picker;
pub mod question;
pub mod scope_picker;
mod session_list;
pub mod session_picker;
mod session_search;
pub mod settings_menu;
pub mod thinking_picker;
mod tree_model;
mod tree_rows;
pub mod tree_view;
pub mod trust_prompt;

use std::convert::Infallible;

pub use branch_summary_prompt::BranchSummaryChoice;
pub use branch_summary_prompt::BranchSummaryPrompt;
pub use confirm::ConfirmPrompt;
pub use ext_dialog::ExtensionDialog;
pub use fork_picker::ForkCandidate;
pub use fork_picker::ForkPicker;
pub use login_dialog::LoginDialog;
pub use model_picker::ModelChoice;
pub use model_picker::ModelPicker;
pub use provider_picker::ProviderPicker;
pub use provider_picker::ProviderRow;
pub use provider_picker::ProviderStatus;
pub use question::QuestionPicker;
pub use scope_picker::ScopeChoice;
pub use scope_picker::ScopePicker;
pub use session_picker::SessionPicker;
pub use session_picker::SessionPickerOptions;
pub use session_picker::SessionRequest;
pub use settings_menu::SettingItem;
pub use settings_menu::SettingKind;
pub use settings_menu::SettingsMenu;
pub use settings_menu::SettingsRequest;
pub use thinking_picker::ThinkingChoice;
pub use thinking_picker::ThinkingPicker;
pub use tree_view::TreeFilter;
pub use tree_view::TreeRequest;
pub use tree_view::TreeSelection;
pub use tree_view::TreeView;
pub use tree_view::TreeViewOptions;
pub use trust_prompt::SavedTrust;
pub use trust_prompt::TrustChoice;
pub use trust_prompt::TrustPrompt;

/// What a key did to a picker.
///
/// `R` is what a picker asks the app to do while it stays open; pickers that never ask
/// use [`Infallible`], so `PickerOutcome::Request(never) => match never {}` is all the
/// app needs for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome<T, R = Infallible> {
    /// Still open (the key may or may not have changed anything); render again.
    Pending,
    /// Closed without a choice: restore the editor.
    Cancel,
    /// Closed with a choice.
    Done(T),
    /// Still open, and the app has to do something first (and may report back through the
    /// picker's setters).
    Request(R),
}

impl<T, R> PickerOutcome<T, R> {
    /// True when the picker should be closed (a choice or a cancel).
    pub fn is_closing(&self) -> bool {
        matches!(self, Self::Cancel | Self::Done(_))
    }
}
