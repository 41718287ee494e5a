//! How the session picker looks: a header with the scope, name filter and sort, the search
//! field, one row per session (tree prefix, name or first message, path or folder,
//! message count, age) and two lines of key hints.

use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;

use super::common::Hints;
use super::common::border;
use super::common::fit;
use super::common::key_text;
use super::common::left_right;
use super::common::one_line;
use super::common::push_window;
use super::common::relative_age;
use super::common::strong;
use super::session_picker::Scope;
use super::session_picker::SessionPicker;
use super::session_search::has_name;
use crate::footer::tilde;

pub(crate) fn render(picker: &SessionPicker, width: u16) -> Vec<String> {
    let theme = &picker.theme;
    let mut lines = vec![border(theme, width), header(picker, width)];
    lines.push(fit(
        &format!(
            "{}{}",
            theme.accent.paint("> "),
            search_field(picker, usize::from(width).saturating_sub(2))
        ),
        width,
    ));
    list(picker, width, &mut lines);
    lines.push(border(theme, width));
    lines.extend(hints(picker, width));
    lines
}

fn header(picker: &SessionPicker, width: u16) -> String {
    let theme = &picker.theme;
    let scope = if picker.is_loading() {
        format!(
            "{}{}",
            theme.muted.paint("○ Current Folder | "),
            theme.accent.paint("Loading...")
        )
    } else if picker.scope == Scope::CurrentFolder {
        format!(
            "{}{}",
            theme.accent.paint("◉ Current Folder"),
            theme.muted.paint(" | ○ All")
        )
    } else {
        format!(
            "{}{}",
            theme.muted.paint("○ Current Folder | "),
            theme.accent.paint("◉ All")
        )
    };
    let name = if picker.named_only { "Named" } else { "All" };
    let right = format!(
        "{scope}  {}{}  {}{}",
        theme.muted.paint("Name: "),
        theme.accent.paint(name),
        theme.muted.paint("Sort: "),
        theme.accent.paint(picker.sort.label())
    );
    left_right(&theme.tool_title.paint("Resume Session"), &right, width)
}

fn search_field(picker: &SessionPicker, width: usize) -> String {
    let field = picker.search.render(width, picker.cursor_style);
    if !picker.search.is_empty() {
        return field;
    }
    // A hint in the empty field; the cursor cell stays first.
    let placeholder = picker.theme.dim.paint("type to search");
    truncate_to_width(&format!("{field}{placeholder}"), width, "")
}

fn list(picker: &SessionPicker, width: u16, lines: &mut Vec<String>) {
    let theme = &picker.theme;
    if picker.is_loading() {
        lines.push(theme.muted.paint("  Loading sessions of all projects..."));
        return;
    }
    if let Some(error) = picker.query.error() {
        lines.push(fit(
            &theme.error.paint(&format!("  Invalid regex: {error}")),
            width,
        ));
        return;
    }
    if picker.rows.is_empty() {
        let toggle = key_text(&picker.bindings, "app.session.toggleNamedFilter");
        let all_scope = picker.scope == Scope::All;
        let message = match (picker.named_only, all_scope, picker.search.is_empty()) {
            (_, _, false) => "  No sessions match the search".to_owned(),
            (true, true, true) => format!("  No named sessions found. Press {toggle} to show all."),
            (true, false, true) => format!(
                "  No named sessions in current folder. Press {toggle} to show all, or Tab to view all."
            ),
            (false, true, true) => "  No sessions found".to_owned(),
            (false, false, true) => {
                "  No sessions in current folder. Press Tab to view all.".to_owned()
            }
        };
        lines.push(
            theme
                .muted
                .paint(&truncate_to_width(&message, usize::from(width), "…")),
        );
        return;
    }
    push_window(
        lines,
        theme,
        (picker.selected, picker.rows.len(), picker.max_rows),
        width,
        |index, lines| lines.push(row(picker, index, width)),
    );
}

fn row(picker: &SessionPicker, index: usize, width: u16) -> String {
    let theme = &picker.theme;
    let row = &picker.rows[index];
    let session = &picker.sessions()[row.index];
    let is_selected = index == picker.selected;
    let is_current = picker.is_current(&session.path);
    let deleting = picker.confirming_delete() == Some(session.path.as_path());
    let cursor = if is_selected {
        theme.accent.paint("› ")
    } else {
        "  ".to_owned()
    };
    let prefix = row.tree_prefix();
    let marker = if is_current {
        theme.accent.paint("• ")
    } else {
        String::new()
    };
    let left_fixed = 2 + visible_width(&prefix) + visible_width(&marker);
    let left = format!("{cursor}{}{marker}", theme.dim.paint(&prefix));

    if is_selected && let Some(input) = picker.rename_input() {
        let label = theme.accent.paint("Rename: ");
        let room = usize::from(width).saturating_sub(left_fixed + 8);
        return fit(
            &format!("{left}{label}{}", input.render(room, picker.cursor_style)),
            width,
        );
    }

    let home = picker.options.home.as_deref();
    let mut right = format!(
        "{} {}",
        session.message_count,
        relative_age(picker.options.now_ms, session.modified)
    );
    if picker.scope == Scope::All && !session.cwd.is_empty() {
        right = format!("{} {right}", tilde(&session.cwd, home));
    }
    if picker.show_path {
        right = format!("{} {right}", tilde(&session.path.to_string_lossy(), home));
    }
    if picker.is_in_use(&session.path) {
        right = format!("in use · {right}");
    }
    let text = one_line(session.name.as_deref().unwrap_or(&session.first_message));
    let room = usize::from(width)
        .saturating_sub(left_fixed + visible_width(&right) + 2)
        .max(10);
    let text = truncate_to_width(&text, room, "…");
    let style = if deleting {
        theme.error
    } else if is_current {
        theme.accent
    } else if has_name(session) {
        theme.warning
    } else if is_selected {
        theme.selected
    } else {
        theme.text
    };
    let styled = if is_selected && !deleting {
        strong(theme, style).paint(&text)
    } else {
        style.paint(&text)
    };
    let used = visible_width(&left) + visible_width(&styled);
    let gap = usize::from(width)
        .saturating_sub(used + visible_width(&right))
        .max(1);
    let right_style = if deleting { theme.error } else { theme.dim };
    fit(
        &format!(
            "{left}{styled}{}{}",
            " ".repeat(gap),
            right_style.paint(&right)
        ),
        width,
    )
}

fn hints(picker: &SessionPicker, width: u16) -> [String; 2] {
    let theme = &picker.theme;
    let bindings = &picker.bindings;
    if let Some(path) = picker.confirming_delete() {
        let name = picker
            .sessions()
            .iter()
            .find(|s| s.path == path)
            .map(|s| one_line(s.name.as_deref().unwrap_or(&s.first_message)))
            .unwrap_or_default();
        let name = truncate_to_width(&name, 40, "…");
        let question = format!(
            "Delete \"{name}\"? y/{} delete · n/{} keep",
            key_text(bindings, "tui.select.confirm"),
            key_text(bindings, "tui.select.cancel")
        );
        return [theme.error.paint(&fit(&question, width)), String::new()];
    }
    if let Some(status) = &picker.status {
        let style = if status.error {
            theme.error
        } else {
            theme.accent
        };
        return [style.paint(&fit(&status.text, width)), String::new()];
    }
    if picker.rename_input().is_some() {
        let line = Hints::new(theme, bindings)
            .action("tui.select.confirm", "save name")
            .action("tui.select.cancel", "cancel")
            .line(width);
        return [line, String::new()];
    }
    let first = Hints::new(theme, bindings)
        .action("tui.select.confirm", "open")
        .action("tui.input.tab", "scope")
        .note("re:<pattern> regex")
        .note("\"phrase\" exact")
        .line(width);
    let path_state = if picker.show_path {
        "path (on)"
    } else {
        "path (off)"
    };
    let mut second = Hints::new(theme, bindings)
        .action("app.session.toggleSort", "sort")
        .action("app.session.toggleNamedFilter", "named")
        .action("app.session.delete", "delete")
        .action("app.session.togglePath", path_state);
    if picker.options.allow_rename {
        second = second.action("app.session.rename", "rename");
    }
    [first, second.line(width)]
}
