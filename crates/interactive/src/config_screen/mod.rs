//! `knightcode config`: every resource the packages and the settings files bring (extensions,
//! skills, prompt templates, themes), grouped by where it comes from, each with a checkbox.
//! Type to filter; Space or Enter switches the resource under the cursor, written to the
//! settings file at once (`knightcode_packages::toggle`); Tab switches between the user's
//! settings (global mode) and the project's (project mode, where what the user's settings
//! bring is shown dimmed as inherited); Esc closes. Like the reference's config selector.

mod run;

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;

use knightcode_packages::Layout;
use knightcode_packages::Scope;
use knightcode_packages::resolve::Origin;
use knightcode_packages::resolve::Resource;
use knightcode_tui::Key;
use knightcode_tui::KeyCode;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

use crate::pickers::common::border;
use crate::pickers::common::cursor_style;
use crate::pickers::common::fit;
use crate::pickers::common::is_release;
use crate::pickers::common::left_right;
use crate::pickers::line_input::LineInput;

pub use run::ConfigOptions;
pub use run::run;

const KIND_LABELS: [(&str, &str); 4] = [
    ("extensions", "Extensions"),
    ("skills", "Skills"),
    ("prompts", "Prompts"),
    ("themes", "Themes"),
];

fn kind_order(kind: &str) -> usize {
    KIND_LABELS
        .iter()
        .position(|(k, _)| *k == kind)
        .unwrap_or(4)
}

/// One listed resource and its state as the screen knows it.
#[derive(Debug, Clone)]
struct Item {
    resource: Resource,
    name: String,
    /// The group it is shown under.
    group: usize,
    /// In project mode, for a resource of the user's scope: its state in the user's scope.
    inherited: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    label: String,
    scope: Scope,
    package: bool,
    source: String,
}

/// The resources of one mode.
#[derive(Debug, Clone, Default)]
struct Listing {
    groups: Vec<Group>,
    /// In display order: by group, then kind, then name.
    items: Vec<Item>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    Group(usize),
    Kind(usize, &'static str),
    Item(usize),
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigOutcome {
    Pending,
    /// Esc (or Ctrl+C): close the screen.
    Close,
}

fn tilde(path: &Path, home: Option<&Path>) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let shown = match home.map(|h| h.to_string_lossy().into_owned()) {
        Some(home) if text == home => "~".to_owned(),
        Some(home) if text.starts_with(&format!("{home}/")) => format!("~{}", &text[home.len()..]),
        _ => text,
    };
    if shown.ends_with('/') {
        shown
    } else {
        format!("{shown}/")
    }
}

fn group_of(resource: &Resource, layout: &Layout) -> Group {
    let (label, package, source) = match (&resource.origin, resource.scope) {
        (Origin::Package { source, .. }, scope) => (
            format!("{source} ({})", scope.as_str()),
            true,
            source.clone(),
        ),
        (Origin::Auto, Scope::User) => (
            format!(
                "User ({})",
                tilde(&layout.agent_dir, layout.home.as_deref())
            ),
            false,
            "auto".to_owned(),
        ),
        (Origin::Auto, Scope::Project) => (
            "Project (.knightcode/)".to_owned(),
            false,
            "auto".to_owned(),
        ),
        (Origin::Settings, Scope::User) => ("User settings".to_owned(), false, "local".to_owned()),
        (Origin::Settings, Scope::Project) => {
            ("Project settings".to_owned(), false, "local".to_owned())
        }
    };
    Group {
        label,
        scope: resource.scope,
        package,
        source,
    }
}

fn key_of(resource: &Resource) -> (&'static str, PathBuf) {
    let real = std::fs::canonicalize(&resource.path).unwrap_or_else(|_| resource.path.clone());
    (resource.kind, real)
}

impl Listing {
    fn build(
        resources: Vec<Resource>,
        layout: &Layout,
        inherited: Option<&HashMap<(&'static str, PathBuf), Resource>>,
    ) -> Self {
        let mut groups: Vec<Group> = Vec::new();
        let mut items: Vec<Item> = Vec::new();
        for mut resource in resources {
            // A user's file the project's list names (a project override written here)
            // is still the user's, shown as inherited.
            if let Some(user) = inherited.and_then(|map| map.get(&key_of(&resource)))
                && resource.scope == Scope::Project
                && resource.origin == Origin::Settings
            {
                resource.scope = Scope::User;
                resource.origin = user.origin.clone();
            }
            let group = group_of(&resource, layout);
            let index = match groups.iter().position(|g| *g == group) {
                Some(index) => index,
                None => {
                    groups.push(group);
                    groups.len() - 1
                }
            };
            let inherited = match inherited {
                Some(map) if resource.scope == Scope::User => Some(
                    map.get(&key_of(&resource))
                        .map_or(resource.enabled, |user| user.enabled),
                ),
                _ => None,
            };
            items.push(Item {
                name: resource.display_name(),
                resource,
                group: index,
                inherited,
            });
        }
        // Packages first, then the top level; the user's before the project's.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&groups[a], &groups[b]);
            (
                !a.package,
                a.scope == Scope::Project,
                a.source.to_lowercase(),
            )
                .cmp(&(
                    !b.package,
                    b.scope == Scope::Project,
                    b.source.to_lowercase(),
                ))
        });
        let rank: Vec<usize> = (0..groups.len())
            .map(|g| order.iter().position(|&o| o == g).unwrap_or(0))
            .collect();
        items.sort_by(|a, b| {
            (
                rank[a.group],
                kind_order(a.resource.kind),
                a.name.to_lowercase(),
            )
                .cmp(&(
                    rank[b.group],
                    kind_order(b.resource.kind),
                    b.name.to_lowercase(),
                ))
        });
        Self { groups, items }
    }
}

pub struct ConfigScreen {
    layout: Layout,
    theme: Theme,
    trusted: bool,
    mode: Scope,
    global: Listing,
    project: Listing,
    search: LineInput,
    rows: Vec<Row>,
    selected: usize,
    max_rows: usize,
    /// A settings file that could not be written.
    error: Option<String>,
}

impl ConfigScreen {
    /// Reads what the user's scope brings, and the project's when `trusted` (an untrusted
    /// project's files are not read); starts in project mode with `project`.
    pub fn new(layout: Layout, trusted: bool, project: bool, theme: Theme) -> Self {
        let global_resources = knightcode_packages::resolve::resolve(&layout, false);
        let inherited: HashMap<(&'static str, PathBuf), Resource> = global_resources
            .iter()
            .map(|r| (key_of(r), r.clone()))
            .collect();
        let global = Listing::build(global_resources, &layout, None);
        let project_listing = if trusted {
            let resources = knightcode_packages::resolve::resolve(&layout, true);
            Listing::build(resources, &layout, Some(&inherited))
        } else {
            Listing::default()
        };
        let mut screen = Self {
            layout,
            theme,
            trusted,
            mode: if project { Scope::Project } else { Scope::User },
            global,
            project: project_listing,
            search: LineInput::new(),
            rows: Vec::new(),
            selected: 0,
            max_rows: 15,
            error: None,
        };
        screen.refilter();
        screen
    }

    /// How many list rows fit (the terminal's height less the header and borders).
    pub fn set_height(&mut self, height: u16) {
        self.max_rows = usize::from(height).saturating_sub(9).max(5);
    }

    fn listing(&self) -> &Listing {
        match self.mode {
            Scope::User => &self.global,
            Scope::Project => &self.project,
        }
    }

    fn refilter(&mut self) {
        let query = self.search.text().trim().to_lowercase();
        let listing = self.listing();
        let matches = |item: &Item| {
            query.is_empty()
                || item.name.to_lowercase().contains(&query)
                || item.resource.kind.contains(&query)
                || item
                    .resource
                    .path
                    .to_string_lossy()
                    .to_lowercase()
                    .contains(&query)
        };
        let mut rows = Vec::new();
        let mut last: Option<(usize, &str)> = None;
        for (index, item) in listing.items.iter().enumerate() {
            if !matches(item) {
                continue;
            }
            if last.map(|(g, _)| g) != Some(item.group) {
                rows.push(Row::Group(item.group));
                last = None;
            }
            if last.map(|(_, k)| k) != Some(item.resource.kind) {
                rows.push(Row::Kind(item.group, item.resource.kind));
            }
            last = Some((item.group, item.resource.kind));
            rows.push(Row::Item(index));
        }
        self.rows = rows;
        self.selected = self.first_item(0, true).unwrap_or(0);
    }

    /// The first item row from `from` on (`down`) or back.
    fn first_item(&self, from: usize, down: bool) -> Option<usize> {
        let is_item = |i: &usize| matches!(self.rows.get(*i), Some(Row::Item(_)));
        if down {
            (from..self.rows.len()).find(is_item)
        } else {
            (0..=from.min(self.rows.len().saturating_sub(1)))
                .rev()
                .find(is_item)
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        self.search.insert(text);
        self.refilter();
    }

    pub fn handle_key(&mut self, key: &Key, bindings: &Keybindings) -> ConfigOutcome {
        if is_release(key) {
            return ConfigOutcome::Pending;
        }
        let space = key.code == KeyCode::Char(' ') && key.modifiers.is_empty();
        if bindings.matches("tui.select.up", key) {
            if let Some(at) = self
                .selected
                .checked_sub(1)
                .and_then(|f| self.first_item(f, false))
            {
                self.selected = at;
            }
        } else if bindings.matches("tui.select.down", key) {
            if let Some(at) = self.first_item(self.selected + 1, true) {
                self.selected = at;
            }
        } else if bindings.matches("tui.select.pageUp", key) {
            let target = self.selected.saturating_sub(self.max_rows);
            if let Some(at) = self.first_item(target, true) {
                self.selected = at.min(self.selected);
            }
        } else if bindings.matches("tui.select.pageDown", key) {
            let target = (self.selected + self.max_rows).min(self.rows.len().saturating_sub(1));
            if let Some(at) = self.first_item(target, false) {
                self.selected = at.max(self.selected);
            }
        } else if bindings.matches("tui.select.cancel", key) {
            // Escape, and Ctrl+C by default: the reference closes on either.
            return ConfigOutcome::Close;
        } else if bindings.matches("tui.input.tab", key) {
            self.mode = match self.mode {
                Scope::User => Scope::Project,
                Scope::Project => Scope::User,
            };
            self.error = None;
            self.refilter();
        } else if bindings.matches("tui.select.confirm", key) || space {
            self.toggle();
        } else if self.search.handle_key(key, bindings) {
            self.refilter();
        }
        ConfigOutcome::Pending
    }

    fn toggle(&mut self) {
        let Some(Row::Item(index)) = self.rows.get(self.selected).copied() else {
            return;
        };
        let mode = self.mode;
        let layout = self.layout.clone();
        let listing = match mode {
            Scope::User => &mut self.global,
            Scope::Project => &mut self.project,
        };
        let item = &mut listing.items[index];
        let enabled = !item.resource.enabled;
        match knightcode_packages::toggle::toggle(
            &layout,
            &item.resource,
            mode,
            enabled,
            item.inherited,
        ) {
            Ok(()) => {
                item.resource.enabled = enabled;
                self.error = None;
                // The other mode shows the same file: keep it in step.
                let key = key_of(&item.resource);
                let other = match mode {
                    Scope::User => &mut self.project,
                    Scope::Project => &mut self.global,
                };
                for other in other
                    .items
                    .iter_mut()
                    .filter(|i| key_of(&i.resource) == key)
                {
                    if mode == Scope::User && other.resource.scope == Scope::User {
                        let follows = other.inherited == Some(other.resource.enabled);
                        other.inherited = Some(enabled);
                        if follows {
                            other.resource.enabled = enabled;
                        }
                    }
                }
            }
            Err(error) => self.error = Some(error.to_string()),
        }
    }

    /// The mode the screen writes (tests).
    pub fn mode(&self) -> Scope {
        self.mode
    }

    pub fn render(&self, width: u16) -> Vec<String> {
        let theme = &self.theme;
        let project = self.mode == Scope::Project;
        let title = theme.md_bold.paint(if project {
            "Project Local Resources"
        } else {
            "Global Resources"
        });
        let action = if project {
            "space toggle (project override)"
        } else {
            "space toggle"
        };
        let hint = theme
            .muted
            .paint(&format!("tab switch mode · {action} · esc close"));
        let settings = if project {
            ".knightcode/settings.json · inherited global resources are dimmed".to_owned()
        } else {
            format!(
                "{}settings.json",
                tilde(&self.layout.agent_dir, self.layout.home.as_deref())
            )
        };
        let mut lines = vec![
            String::new(),
            border(theme, width),
            String::new(),
            left_right(&title, &hint, width),
            fit(&theme.muted.paint(&settings), width),
            String::new(),
        ];
        if project && !self.trusted {
            lines.push(fit(
                &theme
                    .warning
                    .paint("  This project is not trusted: its settings and folders are not read."),
                width,
            ));
            lines.push(fit(
                &theme.muted.paint(
                    "  Trust it first (start knightcode here and choose Trust, or /trust), or run knightcode config -l --approve.",
                ),
                width,
            ));
            lines.push(String::new());
            lines.push(border(theme, width));
            return lines;
        }
        lines.push(fit(
            &format!(
                "{}{}",
                theme.accent.paint("> "),
                self.search
                    .render(usize::from(width).saturating_sub(2), cursor_style(theme))
            ),
            width,
        ));
        lines.push(String::new());
        if self.rows.is_empty() {
            lines.push(fit(&theme.muted.paint("  No resources found"), width));
        }
        let window =
            crate::pickers::common::scroll_window(self.selected, self.rows.len(), self.max_rows);
        let scrolled = window.start > 0 || window.end < self.rows.len();
        let listing = self.listing();
        for at in window {
            let line = match self.rows[at] {
                Row::Group(g) => {
                    let group = &listing.groups[g];
                    let inherited = project && group.scope == Scope::User;
                    let label = if inherited {
                        format!("{} · inherited global", group.label)
                    } else {
                        group.label.clone()
                    };
                    let style = if inherited { theme.dim } else { theme.accent };
                    format!("  {}", style.paint(&theme.md_bold.paint(&label)))
                }
                Row::Kind(g, kind) => {
                    let inherited = project && listing.groups[g].scope == Scope::User;
                    let label = KIND_LABELS
                        .iter()
                        .find(|(k, _)| *k == kind)
                        .map_or(kind, |(_, l)| l);
                    let style = if inherited { theme.dim } else { theme.muted };
                    format!("    {}", style.paint(label))
                }
                Row::Item(i) => self.item_line(&listing.items[i], at == self.selected),
            };
            lines.push(fit(&line, width));
        }
        if scrolled {
            let items = self
                .rows
                .iter()
                .filter(|r| matches!(r, Row::Item(_)))
                .count();
            let current = self.rows[..self.selected]
                .iter()
                .filter(|r| matches!(r, Row::Item(_)))
                .count()
                + 1;
            lines.push(theme.dim.paint(&format!("  ({current}/{items})")));
        }
        if let Some(error) = &self.error {
            lines.push(String::new());
            lines.push(fit(&theme.error.paint(&format!("  {error}")), width));
        }
        lines.push(String::new());
        lines.push(border(theme, width));
        lines
    }

    fn item_line(&self, item: &Item, selected: bool) -> String {
        let theme = &self.theme;
        let cursor = if selected { "> " } else { "  " };
        let enabled = item.resource.enabled;
        let (dimmed, suffix) = match item.inherited {
            Some(inherited) if inherited == enabled => (true, "  inherited global"),
            Some(_) => (false, "  project override"),
            None => (false, ""),
        };
        let checkbox = match (enabled, dimmed) {
            (true, false) => theme.success.paint("[x]"),
            (true, true) => theme.dim.paint("[x]"),
            (false, _) => theme.dim.paint("[ ]"),
        };
        let name = if dimmed {
            theme.dim.paint(&item.name)
        } else if selected {
            theme.md_bold.paint(&item.name)
        } else {
            item.name.clone()
        };
        let suffix = if dimmed {
            theme.dim.paint(suffix)
        } else {
            theme.muted.paint(suffix)
        };
        format!("{cursor}    {checkbox} {name}{suffix}")
    }
}

#[cfg(test)]
mod tests;
