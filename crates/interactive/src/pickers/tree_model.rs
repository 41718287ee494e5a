//! The `/tree` view's model: entries in display order (the branch holding the current leaf
//! first at every fork), the filters and folds that pick the visible rows, and the
//! indentation, connectors and gutters of those rows.
//!
//! Everything is indices into flat vectors and explicit stacks: sessions with tens of
//! thousands of entries, or very deep chains, must neither recurse nor clone per node.

use std::collections::HashSet;
use std::rc::Rc;

use knightcode_protocol::EntryId;
use knightcode_runtime::sessions::SessionTree;

use super::tree_rows;
use super::tree_rows::Display;
use super::tree_rows::Kind;

/// Which entries `/tree` shows (the reference's filter modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeFilter {
    /// Everything except bookkeeping (labels, model/thinking changes, titles, extension
    /// state, usage, context edits) and assistant steps that only call tools.
    #[default]
    Default,
    /// The default view without tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labelled entries only.
    LabeledOnly,
    /// Every entry.
    All,
}

impl TreeFilter {
    /// The cycle order of `app.tree.filter.cycleForward`.
    pub const CYCLE: [TreeFilter; 5] = [
        Self::Default,
        Self::NoTools,
        Self::UserOnly,
        Self::LabeledOnly,
        Self::All,
    ];

    /// The `treeFilterMode` setting's spelling.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Self::Default),
            "no-tools" => Some(Self::NoTools),
            "user-only" => Some(Self::UserOnly),
            "labeled-only" => Some(Self::LabeledOnly),
            "all" => Some(Self::All),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::NoTools => "no-tools",
            Self::UserOnly => "user-only",
            Self::LabeledOnly => "labeled-only",
            Self::All => "all",
        }
    }

    pub(crate) fn step(self, forward: bool) -> Self {
        let len = Self::CYCLE.len();
        let index = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        let next = if forward {
            (index + 1) % len
        } else {
            (index + len - 1) % len
        };
        Self::CYCLE[next]
    }
}

pub(crate) struct Node {
    pub(crate) id: EntryId,
    pub(crate) parent: Option<u32>,
    pub(crate) kind: Kind,
    pub(crate) display: Display,
    /// Lower case, without the label; see [`tree_rows::search_text`].
    pub(crate) search: String,
    pub(crate) label: Option<String>,
    pub(crate) label_time: Option<String>,
    /// A user message's full text (what Enter puts back into the editor).
    pub(crate) user_text: Option<String>,
    /// What Ctrl+X copies (see [`tree_rows::copy_text`]).
    pub(crate) copy_text: Option<String>,
}

/// The vertical lines that continue past a row, one per indent level where an ancestor
/// drew a connector: a list shared with the ancestors (deepest level first), so a fork
/// adds one link instead of copying every level above it.
#[derive(Debug)]
pub(crate) struct Gutter {
    pub(crate) level: usize,
    pub(crate) show: bool,
    pub(crate) up: Option<Rc<Gutter>>,
}

impl Gutter {
    /// Whether a line shows at each level from `from` up to (not including) `to`: `None`
    /// where no ancestor drew a connector. Levels only grow going down the tree, so the
    /// walk stops at the first level below `from`.
    pub(crate) fn levels(list: Option<&Rc<Gutter>>, from: usize, to: usize) -> Vec<Option<bool>> {
        let mut levels = vec![None; to.saturating_sub(from)];
        let mut current = list;
        while let Some(gutter) = current {
            if gutter.level < from {
                break;
            }
            if let Some(slot) = levels.get_mut(gutter.level - from) {
                slot.get_or_insert(gutter.show);
            }
            current = gutter.up.as_ref();
        }
        levels
    }
}

/// A visible row and how it hangs in the visible tree.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) node: u32,
    pub(crate) indent: usize,
    pub(crate) show_connector: bool,
    pub(crate) is_last: bool,
    /// Children of the invisible common root of several roots draw no connector.
    pub(crate) virtual_root_child: bool,
    pub(crate) gutters: Option<Rc<Gutter>>,
}

const NONE: u32 = u32::MAX;

pub(crate) struct TreeModel {
    pub(crate) nodes: Vec<Node>,
    /// Every node in display order (pre-order, the leaf's branch first).
    order: Vec<u32>,
    pub(crate) leaf: Option<u32>,
    /// On the path from the root to the leaf.
    pub(crate) active: Vec<bool>,
    pub(crate) rows: Vec<Row>,
    /// Row index of each node, `NONE` when hidden.
    row_of: Vec<u32>,
    visible_parent: Vec<u32>,
    visible_children: Vec<Vec<u32>>,
    pub(crate) multiple_roots: bool,
    pub(crate) folded: HashSet<u32>,
}

impl TreeModel {
    pub(crate) fn new(tree: &SessionTree, home: Option<&str>) -> Self {
        let entries = tree.entries();
        let calls = tree_rows::tool_calls(entries);
        let mut nodes = Vec::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let display = tree_rows::display(entry, &calls, home);
            let label = tree.label(entry.id()).map(str::to_owned);
            let search = tree_rows::search_text(entry, &display);
            nodes.push(Node {
                id: entry.id().into(),
                parent: tree.parent_of(index as u32),
                kind: tree_rows::kind(entry),
                display,
                search,
                label_time: tree.label_timestamp(entry.id()).map(str::to_owned),
                label,
                user_text: tree_rows::user_text(entry),
                copy_text: tree_rows::copy_text(entry),
            });
        }
        let leaf = tree.leaf();
        let mut active = vec![false; nodes.len()];
        for index in tree.path_to(leaf) {
            active[index as usize] = true;
        }
        let forest = tree.forest();
        let order = display_order(&forest.roots, &forest.children, &active);
        let len = nodes.len();
        Self {
            nodes,
            order,
            leaf,
            active,
            rows: Vec::new(),
            row_of: vec![NONE; len],
            visible_parent: vec![NONE; len],
            visible_children: Vec::new(),
            multiple_roots: false,
            folded: HashSet::new(),
        }
    }

    pub(crate) fn row_of(&self, node: u32) -> Option<usize> {
        match self.row_of.get(node as usize) {
            Some(&row) if row != NONE => Some(row as usize),
            _ => None,
        }
    }

    pub(crate) fn index_of(&self, id: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|node| node.id == id)
            .map(|i| i as u32)
    }

    fn passes(&self, node: u32, filter: TreeFilter, words: &[String]) -> bool {
        let n = &self.nodes[node as usize];
        let is_leaf = self.leaf == Some(node);
        if matches!(n.kind, Kind::Assistant { bare: true }) && !is_leaf && filter != TreeFilter::All
        {
            return false;
        }
        let shown = match filter {
            TreeFilter::Default => n.kind != Kind::Settings,
            TreeFilter::NoTools => !matches!(n.kind, Kind::Settings | Kind::ToolResult),
            TreeFilter::UserOnly => n.kind == Kind::User,
            TreeFilter::LabeledOnly => n.label.is_some(),
            TreeFilter::All => true,
        };
        if !shown {
            return false;
        }
        let label = n.label.as_deref().map(str::to_lowercase);
        words.iter().all(|word| {
            n.search.contains(word.as_str())
                || label.as_deref().is_some_and(|l| l.contains(word.as_str()))
        })
    }

    /// Recomputes the visible rows for a filter and lower-case search words.
    pub(crate) fn apply(&mut self, filter: TreeFilter, words: &[String]) {
        let len = self.nodes.len();
        let mut visible = vec![false; len];
        let mut hidden_by_fold = vec![false; len];
        // Display order is a pre-order, so parents are decided before their children.
        for &node in &self.order {
            let parent = self.nodes[node as usize].parent;
            hidden_by_fold[node as usize] =
                parent.is_some_and(|p| self.folded.contains(&p) || hidden_by_fold[p as usize]);
            visible[node as usize] =
                !hidden_by_fold[node as usize] && self.passes(node, filter, words);
        }
        // Nearest visible ancestor, also in one pre-order pass.
        let mut nearest = vec![NONE; len];
        self.visible_children = vec![Vec::new(); len];
        let mut roots = Vec::new();
        self.rows.clear();
        self.row_of = vec![NONE; len];
        for &node in &self.order {
            let parent = self.nodes[node as usize].parent;
            let ancestor = match parent {
                Some(p) if visible[p as usize] => p,
                Some(p) => nearest[p as usize],
                None => NONE,
            };
            nearest[node as usize] = ancestor;
            if !visible[node as usize] {
                continue;
            }
            self.visible_parent[node as usize] = ancestor;
            if ancestor == NONE {
                roots.push(node);
            } else {
                self.visible_children[ancestor as usize].push(node);
            }
            self.row_of[node as usize] = self.rows.len() as u32;
            self.rows.push(Row {
                node,
                indent: 0,
                show_connector: false,
                is_last: false,
                virtual_root_child: false,
                gutters: None,
            });
        }
        self.layout(&roots);
    }

    /// Indentation, connectors and gutters, following the reference: a fork indents its
    /// children by one, and so does the first generation after a fork; single-child chains
    /// stay flat.
    fn layout(&mut self, roots: &[u32]) {
        let multiple = roots.len() > 1;
        self.multiple_roots = multiple;
        struct Item {
            node: u32,
            indent: usize,
            just_branched: bool,
            show_connector: bool,
            is_last: bool,
            gutters: Option<Rc<Gutter>>,
            virtual_root_child: bool,
        }
        let mut stack: Vec<Item> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(i, &node)| Item {
                node,
                indent: usize::from(multiple),
                just_branched: multiple,
                show_connector: multiple,
                is_last: i + 1 == roots.len(),
                gutters: None,
                virtual_root_child: multiple,
            })
            .collect();
        while let Some(item) = stack.pop() {
            let Some(row_index) = self.row_of(item.node) else {
                continue;
            };
            let row = &mut self.rows[row_index];
            row.indent = item.indent;
            row.show_connector = item.show_connector;
            row.is_last = item.is_last;
            row.gutters.clone_from(&item.gutters);
            row.virtual_root_child = item.virtual_root_child;
            let children = &self.visible_children[item.node as usize];
            let branches = children.len() > 1;
            let child_indent = if branches || (item.just_branched && item.indent > 0) {
                item.indent + 1
            } else {
                item.indent
            };
            let child_gutters = if item.show_connector && !item.virtual_root_child {
                let display_indent = if multiple {
                    item.indent.saturating_sub(1)
                } else {
                    item.indent
                };
                Some(Rc::new(Gutter {
                    level: display_indent.saturating_sub(1),
                    show: !item.is_last,
                    up: item.gutters.clone(),
                }))
            } else {
                item.gutters.clone()
            };
            for (i, &child) in children.iter().enumerate().rev() {
                stack.push(Item {
                    node: child,
                    indent: child_indent,
                    just_branched: branches,
                    show_connector: branches,
                    is_last: i + 1 == children.len(),
                    gutters: child_gutters.clone(),
                    virtual_root_child: false,
                });
            }
        }
    }

    fn visible_parent(&self, node: u32) -> Option<u32> {
        match self.visible_parent.get(node as usize) {
            Some(&p) if p != NONE && self.row_of(node).is_some() => Some(p),
            _ => None,
        }
    }

    pub(crate) fn visible_children(&self, node: u32) -> &[u32] {
        self.visible_children
            .get(node as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// A node can fold when it has visible children and starts a segment: a root, or one
    /// of several children of its visible parent.
    pub(crate) fn is_foldable(&self, node: u32) -> bool {
        if self.visible_children(node).is_empty() {
            return false;
        }
        match self.visible_parent(node) {
            None => true,
            Some(parent) => self.visible_children(parent).len() > 1,
        }
    }

    /// The row of the nearest visible entry at or above `node` (the last row if none).
    pub(crate) fn nearest_visible_row(&self, node: u32) -> usize {
        let mut current = Some(node);
        while let Some(n) = current {
            if let Some(row) = self.row_of(n) {
                return row;
            }
            current = self.nodes[n as usize].parent;
        }
        self.rows.len().saturating_sub(1)
    }

    /// The next segment start (first child after a fork) below, following first children,
    /// or the nearest one above the selected row.
    pub(crate) fn segment_start(&self, selected: usize, down: bool) -> usize {
        let Some(row) = self.rows.get(selected) else {
            return selected;
        };
        let mut current = row.node;
        if down {
            loop {
                let children = self.visible_children(current);
                match children {
                    [] => return self.row_of(current).unwrap_or(selected),
                    [only] => current = *only,
                    [first, ..] => return self.row_of(*first).unwrap_or(selected),
                }
            }
        }
        loop {
            let Some(parent) = self.visible_parent(current) else {
                return self.row_of(current).unwrap_or(selected);
            };
            if self.visible_children(parent).len() > 1
                && let Some(start) = self.row_of(current).filter(|&start| start < selected)
            {
                return start;
            }
            current = parent;
        }
    }

    pub(crate) fn set_label(&mut self, node: u32, label: Option<String>, time: Option<String>) {
        let n = &mut self.nodes[node as usize];
        n.label_time = label.as_ref().and(time);
        n.label = label;
    }
}

/// Pre-order over the forest with the child that leads to the leaf first at every level
/// (the reference's order, so the current branch reads straight down).
fn display_order(roots: &[u32], children: &[Vec<u32>], active: &[bool]) -> Vec<u32> {
    let active_first = |list: &[u32]| -> Vec<u32> {
        let mut ordered: Vec<u32> = list
            .iter()
            .copied()
            .filter(|&n| active[n as usize])
            .collect();
        ordered.extend(list.iter().copied().filter(|&n| !active[n as usize]));
        ordered
    };
    let mut order = Vec::with_capacity(children.len());
    let mut stack: Vec<u32> = active_first(roots).into_iter().rev().collect();
    while let Some(node) = stack.pop() {
        order.push(node);
        let kids = &children[node as usize];
        if kids.len() == 1 {
            stack.push(kids[0]);
        } else {
            stack.extend(active_first(kids).into_iter().rev());
        }
    }
    order
}
