//! `/tree` (and double Escape): the whole session as a tree, to jump to any entry.
//!
//! The cursor starts on the current leaf; the path to it is marked. Filters, type to
//! search, folding at forks and inline label editing work as in the reference. Only the
//! rows on screen are drawn, so long sessions stay fast.

use chrono::DateTime;
use chrono::Datelike;
use chrono::FixedOffset;
use chrono::Timelike;
use knightcode_runtime::sessions::SessionTree;
use knightcode_tui::Component;
use knightcode_tui::Key;
use knightcode_tui::Style;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;

use super::PickerOutcome;
use super::common::DEFAULT_MAX_ROWS;
use super::common::Hints;
use super::common::border;
use super::common::cursor_style;
use super::common::fit;
use super::common::is_release;
use super::common::keys_text;
use super::common::left_right;
use super::common::strong;
use super::line_input::LineInput;
use super::line_input::typed_char;
use super::tree_model::Gutter;
use super::tree_model::Row;
pub use super::tree_model::TreeFilter;
use super::tree_model::TreeModel;
use super::tree_rows::Kind;

/// The entry picked with Enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSelection {
    pub entry_id: String,
    /// A user message: the app puts `text` back into the editor and navigates to the
    /// message's parent; any other entry: the app navigates to it.
    pub is_user_message: bool,
    /// The user message's full text.
    pub text: Option<String>,
}

/// Work the app does while the tree stays open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRequest {
    /// Append a label entry for `id` (`None` clears its label). The row already shows it;
    /// should the write fail, call [`TreeView::set_label`] with the old label.
    Label { id: String, label: Option<String> },
    /// Copy the selected entry's text to the clipboard (Ctrl+X).
    Copy { text: String },
}

/// How the view opens.
#[derive(Debug, Clone, Default)]
pub struct TreeViewOptions {
    /// The `treeFilterMode` setting.
    pub filter: TreeFilter,
    /// Where the cursor starts instead of the leaf.
    pub initial_selected: Option<String>,
    /// "Now" in Unix milliseconds and the local UTC offset, for label times.
    pub now_ms: i64,
    pub utc_offset_seconds: i32,
    /// The home folder, shown as `~` in tool paths.
    pub home: Option<String>,
}

enum Mode {
    Browse,
    EditLabel { node: u32, input: LineInput },
}

/// The `/tree` view.
pub struct TreeView {
    theme: Theme,
    bindings: Keybindings,
    options: TreeViewOptions,
    cursor_style: Style,
    model: TreeModel,
    filter: TreeFilter,
    search: String,
    selected: usize,
    /// The node the cursor is on, so that it survives filter changes.
    last_selected: Option<u32>,
    max_rows: usize,
    show_label_times: bool,
    /// Set by Ctrl+X until the next key: the status line says the entry was copied.
    copied: bool,
    mode: Mode,
}

impl TreeView {
    pub fn new(
        tree: &SessionTree,
        theme: Theme,
        bindings: &Keybindings,
        options: TreeViewOptions,
    ) -> Self {
        let model = TreeModel::new(tree, options.home.as_deref());
        let start = options
            .initial_selected
            .as_deref()
            .and_then(|id| model.index_of(id))
            .or(model.leaf);
        let mut view = Self {
            cursor_style: cursor_style(&theme),
            theme,
            bindings: bindings.clone(),
            filter: options.filter,
            options,
            model,
            search: String::new(),
            selected: 0,
            last_selected: start,
            max_rows: DEFAULT_MAX_ROWS,
            show_label_times: false,
            copied: false,
            mode: Mode::Browse,
        };
        view.refresh();
        view
    }

    /// How many tree rows to show at most (the reference uses half the terminal height).
    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// True when the session has no entries (the app should not open the view).
    pub fn is_empty(&self) -> bool {
        self.model.nodes.is_empty()
    }

    pub fn filter(&self) -> TreeFilter {
        self.filter
    }

    pub fn search_text(&self) -> &str {
        &self.search
    }

    /// The entry under the cursor.
    pub fn selected_id(&self) -> Option<&str> {
        let row = self.model.rows.get(self.selected)?;
        Some(self.model.nodes[row.node as usize].id.as_str())
    }

    /// The ids of the visible rows, top to bottom.
    pub fn visible_ids(&self) -> Vec<&str> {
        self.model
            .rows
            .iter()
            .map(|row| self.model.nodes[row.node as usize].id.as_str())
            .collect()
    }

    /// True while the label field is open.
    pub fn is_editing_label(&self) -> bool {
        matches!(self.mode, Mode::EditLabel { .. })
    }

    /// Shows `label` on an entry (after a failed write, to restore the old one).
    pub fn set_label(&mut self, id: &str, label: Option<String>) {
        if let Some(node) = self.model.index_of(id) {
            let time = self.now_iso();
            self.model.set_label(node, label, Some(time));
            self.refresh();
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        match &mut self.mode {
            Mode::EditLabel { input, .. } => input.insert(text),
            Mode::Browse => {
                self.search
                    .extend(text.chars().map(|c| if c.is_control() { ' ' } else { c }));
                self.model.folded.clear();
                self.refresh();
            }
        }
    }

    pub fn handle_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<TreeSelection, TreeRequest> {
        if is_release(key) {
            return PickerOutcome::Pending;
        }
        self.copied = false;
        match std::mem::replace(&mut self.mode, Mode::Browse) {
            Mode::EditLabel { node, mut input } => {
                if bindings.matches("tui.select.cancel", key) {
                    return PickerOutcome::Pending;
                }
                if bindings.matches("tui.select.confirm", key) {
                    let text = input.text().trim();
                    let label = (!text.is_empty()).then(|| text.to_owned());
                    let time = self.now_iso();
                    self.model.set_label(node, label.clone(), Some(time));
                    self.refresh();
                    let id = self.model.nodes[node as usize].id.to_string();
                    return PickerOutcome::Request(TreeRequest::Label { id, label });
                }
                input.handle_key(key, bindings);
                self.mode = Mode::EditLabel { node, input };
                PickerOutcome::Pending
            }
            Mode::Browse => self.handle_browse_key(key, bindings),
        }
    }

    fn handle_browse_key(
        &mut self,
        key: &Key,
        bindings: &Keybindings,
    ) -> PickerOutcome<TreeSelection, TreeRequest> {
        let rows = self.model.rows.len();
        let current = self.model.rows.get(self.selected).map(|row| row.node);
        if bindings.matches("tui.select.up", key) {
            self.select(if self.selected == 0 {
                rows.saturating_sub(1)
            } else {
                self.selected - 1
            });
        } else if bindings.matches("tui.select.down", key) {
            self.select(if self.selected + 1 >= rows {
                0
            } else {
                self.selected + 1
            });
        } else if bindings.matches("app.tree.foldOrUp", key) {
            match current {
                Some(node)
                    if self.model.is_foldable(node) && !self.model.folded.contains(&node) =>
                {
                    self.model.folded.insert(node);
                    self.refresh();
                }
                _ => self.select(self.model.segment_start(self.selected, false)),
            }
        } else if bindings.matches("app.tree.unfoldOrDown", key) {
            match current {
                Some(node) if self.model.folded.contains(&node) => {
                    self.model.folded.remove(&node);
                    self.refresh();
                }
                _ => self.select(self.model.segment_start(self.selected, true)),
            }
        } else if bindings.matches("tui.select.pageUp", key)
            || bindings.matches("tui.editor.cursorLeft", key)
        {
            self.select(self.selected.saturating_sub(self.max_rows));
        } else if bindings.matches("tui.select.pageDown", key)
            || bindings.matches("tui.editor.cursorRight", key)
        {
            self.select((self.selected + self.max_rows).min(rows.saturating_sub(1)));
        } else if bindings.matches("tui.select.confirm", key) {
            if let Some(selection) = self.selection() {
                return PickerOutcome::Done(selection);
            }
        } else if bindings.matches("tui.select.cancel", key) {
            // The hint says "escape cancel": one press closes with a search typed too, as
            // in every other picker (pi's tree clears its search first; its hint says
            // cancel as well).
            return PickerOutcome::Cancel;
        } else if let Some(filter) = self.filter_key(key, bindings) {
            self.filter = filter;
            self.model.folded.clear();
            self.refresh();
        } else if bindings.matches("tui.editor.deleteCharBackward", key) {
            if self.search.pop().is_some() {
                self.model.folded.clear();
                self.refresh();
            }
        } else if bindings.matches("app.tree.editLabel", key) {
            if let Some(node) = current {
                let label = self.model.nodes[node as usize].label.as_deref();
                self.mode = Mode::EditLabel {
                    node,
                    input: LineInput::with_text(label.unwrap_or("")),
                };
            }
        } else if bindings.matches("app.tree.toggleLabelTimestamp", key) {
            self.show_label_times = !self.show_label_times;
        } else if bindings.matches("app.message.copy", key) {
            if let Some(text) = current.and_then(|n| self.model.nodes[n as usize].copy_text.clone())
            {
                self.copied = true;
                return PickerOutcome::Request(TreeRequest::Copy { text });
            }
        } else if let Some(c) = typed_char(key) {
            self.search.push(c);
            self.model.folded.clear();
            self.refresh();
        }
        PickerOutcome::Pending
    }

    /// The filter a filter key selects: the direct keys toggle between their filter and the
    /// default, the cycle keys step through all of them.
    fn filter_key(&self, key: &Key, bindings: &Keybindings) -> Option<TreeFilter> {
        let toggle = |filter: TreeFilter| {
            if self.filter == filter {
                TreeFilter::Default
            } else {
                filter
            }
        };
        if bindings.matches("app.tree.filter.default", key) {
            Some(TreeFilter::Default)
        } else if bindings.matches("app.tree.filter.noTools", key) {
            Some(toggle(TreeFilter::NoTools))
        } else if bindings.matches("app.tree.filter.userOnly", key) {
            Some(toggle(TreeFilter::UserOnly))
        } else if bindings.matches("app.tree.filter.labeledOnly", key) {
            Some(toggle(TreeFilter::LabeledOnly))
        } else if bindings.matches("app.tree.filter.all", key) {
            Some(toggle(TreeFilter::All))
        } else if bindings.matches("app.tree.filter.cycleBackward", key) {
            Some(self.filter.step(false))
        } else if bindings.matches("app.tree.filter.cycleForward", key) {
            Some(self.filter.step(true))
        } else {
            None
        }
    }

    fn select(&mut self, row: usize) {
        self.selected = row;
        self.last_selected = self.model.rows.get(row).map(|r| r.node);
    }

    /// Re-filters and puts the cursor back on the same entry, or its nearest visible
    /// ancestor (the reference's rule).
    fn refresh(&mut self) {
        let words: Vec<String> = self
            .search
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        self.model.apply(self.filter, &words);
        if self.model.rows.is_empty() {
            // Keep `last_selected`: an empty filter result must not lose the place.
            self.selected = 0;
            return;
        }
        self.selected = match self.last_selected {
            Some(node) => self.model.nearest_visible_row(node),
            None => self.model.rows.len() - 1,
        };
        self.last_selected = Some(self.model.rows[self.selected].node);
    }

    fn selection(&self) -> Option<TreeSelection> {
        let row = self.model.rows.get(self.selected)?;
        let node = &self.model.nodes[row.node as usize];
        let is_user_message = node.kind == Kind::User;
        Some(TreeSelection {
            entry_id: node.id.to_string(),
            is_user_message,
            text: node.user_text.clone(),
        })
    }

    fn now_iso(&self) -> String {
        DateTime::from_timestamp_millis(self.options.now_ms)
            .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default()
    }

    /// `14:05` today, `3/9 14:05` this year, `24/3/9 14:05` before, in local time.
    fn label_time(&self, iso: &str) -> Option<String> {
        let offset = FixedOffset::east_opt(self.options.utc_offset_seconds)?;
        let when = DateTime::parse_from_rfc3339(iso)
            .ok()?
            .with_timezone(&offset);
        let now = DateTime::from_timestamp_millis(self.options.now_ms)?.with_timezone(&offset);
        let time = format!("{:02}:{:02}", when.hour(), when.minute());
        if when.date_naive() == now.date_naive() {
            Some(time)
        } else if when.year() == now.year() {
            Some(format!("{}/{} {time}", when.month(), when.day()))
        } else {
            Some(format!(
                "{:02}/{}/{} {time}",
                when.year() % 100,
                when.month(),
                when.day()
            ))
        }
    }

    fn status_labels(&self) -> String {
        let mut labels = String::new();
        if self.filter != TreeFilter::Default {
            labels.push_str(&format!(
                " [{}]",
                match self.filter {
                    TreeFilter::NoTools => "no-tools",
                    TreeFilter::UserOnly => "user",
                    TreeFilter::LabeledOnly => "labeled",
                    _ => "all",
                }
            ));
        }
        if self.show_label_times {
            labels.push_str(" [+label time]");
        }
        labels
    }

    fn display_indent(&self, row: &Row) -> usize {
        if self.model.multiple_roots {
            row.indent.saturating_sub(1)
        } else {
            row.indent
        }
    }

    /// The first indent level drawn for the rows in `window`: deep trees keep only the
    /// innermost levels that fit in half the width (behind a `…`), the same ones for every
    /// row on screen so the rows stay aligned with each other.
    fn first_level(&self, window: &std::ops::Range<usize>, width: u16) -> usize {
        let max_levels = (usize::from(width) / 2 / 3).max(2);
        let deepest = self.model.rows[window.clone()]
            .iter()
            .map(|row| self.display_indent(row))
            .max()
            .unwrap_or(0);
        if deepest > max_levels {
            deepest - max_levels + 1
        } else {
            0
        }
    }

    /// The connector column: gutters `│`, the branch connector `├─`/`└─` with its fold
    /// state (`⊟` foldable, `⊞` folded), from `first_level` on.
    fn prefix(&self, row: &Row, first_level: usize) -> String {
        let display_indent = self.display_indent(row);
        let connector = row.show_connector && !row.virtual_root_child;
        let connector_level = display_indent.checked_sub(1).filter(|_| connector);
        let mut prefix = if first_level > 0 {
            String::from("…  ")
        } else {
            String::new()
        };
        let first_level = first_level.min(display_indent);
        let gutters = Gutter::levels(row.gutters.as_ref(), first_level, display_indent);
        for (offset, gutter) in gutters.into_iter().enumerate() {
            let level = first_level + offset;
            if let Some(show) = gutter {
                prefix.push_str(if show { "│  " } else { "   " });
            } else if connector_level == Some(level) {
                prefix.push(if row.is_last { '└' } else { '├' });
                prefix.push(if self.model.folded.contains(&row.node) {
                    '⊞'
                } else if self.model.is_foldable(row.node) {
                    '⊟'
                } else {
                    '─'
                });
                prefix.push(' ');
            } else {
                prefix.push_str("   ");
            }
        }
        prefix
    }

    fn render_row(&self, index: usize, first_level: usize, width: u16) -> String {
        let theme = &self.theme;
        let row = &self.model.rows[index];
        let node = &self.model.nodes[row.node as usize];
        let is_selected = index == self.selected;
        let mut left = if is_selected {
            theme.accent.paint("› ")
        } else {
            "  ".to_owned()
        };
        left.push_str(&theme.dim.paint(&self.prefix(row, first_level)));
        let connector_shows_fold = row.show_connector && !row.virtual_root_child;
        if self.model.folded.contains(&row.node) && !connector_shows_fold {
            left.push_str(&theme.accent.paint("⊞ "));
        }
        if self.model.active[row.node as usize] {
            left.push_str(&theme.accent.paint("• "));
        }
        if is_selected && let Mode::EditLabel { input, .. } = &self.mode {
            left.push_str(&theme.warning.paint("label: "));
            let room = usize::from(width).saturating_sub(visible_width(&left));
            left.push_str(&input.render(room, self.cursor_style));
            return fit(&left, width);
        }
        if let Some(label) = &node.label {
            left.push_str(&theme.warning.paint(&format!("[{label}] ")));
        }
        if self.show_label_times
            && let Some(time) = node
                .label_time
                .as_deref()
                .filter(|_| node.label.is_some())
                .and_then(|iso| self.label_time(iso))
        {
            left.push_str(&theme.muted.paint(&format!("{time} ")));
        }
        let display = &node.display;
        if let Some((prefix, tone)) = display.prefix {
            left.push_str(&tone.style(theme).paint(prefix));
        }
        let is_leaf = self.model.leaf == Some(row.node);
        let suffix = if is_leaf {
            theme.accent.paint(" ← current")
        } else {
            String::new()
        };
        let room = usize::from(width).saturating_sub(visible_width(&left) + visible_width(&suffix));
        let body = truncate_to_width(&display.body, room, "…");
        let style = display.tone.style(theme);
        let style = if is_selected {
            strong(theme, style)
        } else {
            style
        };
        fit(&format!("{left}{}{suffix}", style.paint(&body)), width)
    }

    fn hints(&self, width: u16) -> [String; 2] {
        let theme = &self.theme;
        let bindings = &self.bindings;
        if self.is_editing_label() {
            let line = Hints::new(theme, bindings)
                .action("tui.select.confirm", "save (empty removes)")
                .action("tui.select.cancel", "cancel")
                .line(width);
            return [line, String::new()];
        }
        let fold = keys_text(bindings, &["app.tree.foldOrUp", "app.tree.unfoldOrDown"]);
        let filters = keys_text(
            bindings,
            &[
                "app.tree.filter.default",
                "app.tree.filter.noTools",
                "app.tree.filter.userOnly",
                "app.tree.filter.labeledOnly",
                "app.tree.filter.all",
            ],
        );
        let first = Hints::new(theme, bindings)
            .raw("↑/↓", "move")
            .raw("←/→", "page")
            .raw(&fold, "fold/branch")
            .action("app.tree.editLabel", "label")
            .action("app.tree.toggleLabelTimestamp", "time")
            .line(width);
        let second = Hints::new(theme, bindings)
            .raw(&filters, "filters")
            .action("app.tree.filter.cycleForward", "cycle")
            .action("tui.select.confirm", "select")
            .action("tui.select.cancel", "cancel")
            .action("app.message.copy", "copy")
            .line(width);
        [first, second]
    }
}

impl Component for TreeView {
    fn render(&mut self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let filter = format!(
            "{}{}",
            theme.muted.paint("Filter: "),
            theme.accent.paint(self.filter.as_str())
        );
        let mut lines = vec![
            border(theme, width),
            left_right(&theme.tool_title.paint("Session Tree"), &filter, width),
        ];
        let search = if self.search.is_empty() {
            theme.muted.paint("  Type to search:")
        } else {
            format!(
                "{} {}",
                theme.muted.paint("  Type to search:"),
                theme.accent.paint(&self.search)
            )
        };
        lines.push(fit(&search, width));
        let total = self.model.rows.len();
        if total == 0 {
            lines.push(theme.muted.paint("  No entries found"));
        } else {
            let window = super::common::scroll_window(self.selected, total, self.max_rows);
            let first_level = self.first_level(&window, width);
            for index in window {
                lines.push(self.render_row(index, first_level, width));
            }
        }
        let position = if total == 0 { 0 } else { self.selected + 1 };
        lines.push(fit(
            &theme.muted.paint(&format!(
                "  ({position}/{total}){}{}",
                self.status_labels(),
                if self.copied { " · copied" } else { "" }
            )),
            width,
        ));
        lines.push(border(theme, width));
        lines.extend(self.hints(width));
        lines
    }
}
