//! What `/undo` and the restore question say, shared by every front end, and the built-in
//! `/undo` for front ends without their own picker (RPC, print), asked through
//! [`Dialogs`].

use super::RestorePlan;
use super::RestoreReport;
use super::UndoPoint;
use crate::dialogs::Dialogs;
use crate::dialogs::NoticeKind;

/// The restore question's title.
pub const RESTORE_TITLE: &str = "Restore files?";
/// The answer that leaves files alone.
pub const CONVERSATION_ONLY: &str = "Conversation only";
/// `/undo` while a response streams.
pub const UNDO_BUSY: &str = "Wait for the current response to finish before undoing.";
/// `/undo` with nothing to go back to.
pub const NOTHING_TO_UNDO: &str = "No user messages to undo to on this branch.";
/// The `/undo` list's title.
pub const UNDO_TITLE: &str = "Undo to before which message?";

fn files(n: usize) -> String {
    if n == 1 {
        "1 file".to_owned()
    } else {
        format!("{n} files")
    }
}

fn notes(plan: &RestorePlan) -> Vec<&'static str> {
    let mut notes = Vec::new();
    if plan.shell_ran {
        notes.push("shell commands ran; their changes are not tracked");
    }
    if plan.failed {
        notes.push("some files could not be backed up");
    }
    notes
}

/// The answer that restores: "Conversation and N files", with the notes about what cannot
/// be put back.
pub fn restore_option(plan: &RestorePlan) -> String {
    let mut option = format!("Conversation and {}", files(plan.files.len()));
    let notes = notes(plan);
    if !notes.is_empty() {
        option.push_str(&format!(" ({})", notes.join("; ")));
    }
    option
}

/// Said when nothing can be restored but something was not tracked.
pub fn untracked_warning(plan: &RestorePlan) -> Option<String> {
    let notes = notes(plan);
    (plan.files.is_empty() && !notes.is_empty())
        .then(|| format!("No files to restore: {}.", notes.join("; ")))
}

/// "Restored N files", and which could not be.
pub fn restored_notice(report: &RestoreReport) -> String {
    let mut notice = format!("Restored {}", files(report.restored));
    if !report.failed.is_empty() {
        let failed: Vec<String> = report
            .failed
            .iter()
            .map(|(path, why)| format!("{} ({why})", path.display()))
            .collect();
        notice.push_str(&format!("; failed: {}", failed.join(", ")));
    }
    notice
}

/// One line of the `/undo` list without a terminal: "3. fix the tests · 12:04 · 2 files".
pub fn point_line(number: usize, point: &UndoPoint) -> String {
    let text: String = point.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    };
    let mut line = format!("{number}. {text} · {}", local_time(&point.timestamp));
    if point.files > 0 {
        line.push_str(&format!(" · {}", files(point.files)));
    }
    line
}

/// `HH:MM` in local time for today's messages, else the date too.
pub fn local_time(timestamp: &str) -> String {
    let Ok(at) = chrono::DateTime::parse_from_rfc3339(timestamp) else {
        return timestamp.to_owned();
    };
    let local = at.with_timezone(&chrono::Local);
    if local.date_naive() == chrono::Local::now().date_naive() {
        local.format("%H:%M").to_string()
    } else {
        local.format("%Y-%m-%d %H:%M").to_string()
    }
}

/// Asks whether to restore, when there is something to restore: `Some(restore)`, or
/// `None` when the user cancelled (the navigation is cancelled too).
pub async fn ask_restore(
    dialogs: &dyn Dialogs,
    plan: &RestorePlan,
    cancel: &tokio_util::sync::CancellationToken,
) -> Option<bool> {
    if plan.files.is_empty() {
        return Some(false);
    }
    let restore = restore_option(plan);
    let options = vec![CONVERSATION_ONLY.to_owned(), restore.clone()];
    let answer = dialogs.select(RESTORE_TITLE, options, cancel).await?;
    Some(answer == restore)
}

/// Tells the user what a navigation's restore did, or what could not be tracked.
pub async fn announce(dialogs: &dyn Dialogs, plan: &RestorePlan, report: Option<&RestoreReport>) {
    if let Some(report) = report {
        let kind = if report.failed.is_empty() {
            NoticeKind::Info
        } else {
            NoticeKind::Warning
        };
        dialogs.notify(&restored_notice(report), kind).await;
    } else if let Some(warning) = untracked_warning(plan) {
        dialogs.notify(&warning, NoticeKind::Warning).await;
    }
}
