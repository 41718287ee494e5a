//! The in-memory entry tree: ids, resolved parents, leaf, labels and session name.

use std::collections::HashMap;

use knightcode_protocol::EntryId;
use knightcode_protocol::SessionEntry;

use crate::load::LoadWarning;

/// Index of an entry in file order.
pub type EntryIndex = u32;

/// The tree shape as flat lists (a nested structure would overflow the stack when dropped
/// for long linear sessions). Children are sorted by entry timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Forest {
    pub roots: Vec<EntryIndex>,
    pub children: Vec<Vec<EntryIndex>>,
}

/// Entries in file order plus the derived structure. Every derived field is rebuilt from
/// the entries, never stored.
#[derive(Debug, Clone, Default)]
pub struct SessionTree {
    entries: Vec<SessionEntry>,
    by_id: HashMap<EntryId, EntryIndex>,
    /// Resolved parent of each entry; orphans and cycle breakers are roots (`None`).
    parents: Vec<Option<EntryIndex>>,
    leaf: Option<EntryIndex>,
    /// target id -> (label, label entry timestamp); cleared labels are removed.
    labels: HashMap<String, (String, String)>,
    name: Option<String>,
}

impl SessionTree {
    /// Builds the tree from entries in file order. The leaf is the last entry.
    pub fn from_entries(entries: Vec<SessionEntry>, warnings: &mut Vec<LoadWarning>) -> Self {
        let mut tree = Self {
            by_id: HashMap::with_capacity(entries.len()),
            parents: Vec::with_capacity(entries.len()),
            ..Self::default()
        };
        for (index, entry) in entries.iter().enumerate() {
            if tree
                .by_id
                .insert(entry.id().into(), index as EntryIndex)
                .is_some()
            {
                warnings.push(LoadWarning::DuplicateId {
                    id: entry.id().to_owned(),
                });
            }
        }
        for (index, entry) in entries.iter().enumerate() {
            let parent = match entry.parent_id() {
                None => None,
                Some(parent_id) if parent_id == entry.id() => None,
                Some(parent_id) => match tree.by_id.get(parent_id) {
                    Some(index) => Some(*index),
                    None => {
                        // The parent's line was lost or damaged. Sessions are appended in
                        // order, so the entry before this one is the nearest intact
                        // ancestor there is evidence for; as a root, it would cut every
                        // earlier message out of its context.
                        let previous = index.checked_sub(1);
                        warnings.push(LoadWarning::Orphan {
                            id: entry.id().to_owned(),
                            parent_id: parent_id.to_owned(),
                            attached_to: previous.map(|p| entries[p].id().to_owned()),
                        });
                        previous.map(|p| p as EntryIndex)
                    }
                },
            };
            tree.parents.push(parent);
        }
        tree.entries = entries;
        tree.break_cycles(warnings);
        for index in 0..tree.entries.len() {
            tree.note_metadata(index as EntryIndex);
        }
        tree.leaf = tree.entries.len().checked_sub(1).map(|i| i as EntryIndex);
        tree
    }

    /// Cuts parent loops so that every walk towards the root ends. O(n).
    fn break_cycles(&mut self, warnings: &mut Vec<LoadWarning>) {
        const UNVISITED: u8 = 0;
        const ON_STACK: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![UNVISITED; self.entries.len()];
        let mut stack = Vec::new();
        for start in 0..self.entries.len() {
            let mut current = start;
            while state[current] == UNVISITED {
                state[current] = ON_STACK;
                stack.push(current);
                match self.parents[current] {
                    Some(parent) if state[parent as usize] == ON_STACK => {
                        warnings.push(LoadWarning::Cycle {
                            id: self.entries[current].id().to_owned(),
                        });
                        self.parents[current] = None;
                        break;
                    }
                    Some(parent) => current = parent as usize,
                    None => break,
                }
            }
            for index in stack.drain(..) {
                state[index] = DONE;
            }
        }
    }

    fn note_metadata(&mut self, index: EntryIndex) {
        match &self.entries[index as usize] {
            SessionEntry::Label(label) => match label.label.as_deref().map(str::trim) {
                Some(text) if !text.is_empty() => {
                    self.labels.insert(
                        label.target_id.clone(),
                        (text.to_owned(), label.timestamp.to_string()),
                    );
                }
                _ => {
                    self.labels.remove(&label.target_id);
                }
            },
            SessionEntry::SessionInfo(info) => {
                self.name = info
                    .name
                    .as_deref()
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned);
            }
            _ => {}
        }
    }

    /// Adds an entry (its parent must already be set) and makes it the leaf.
    pub fn push(&mut self, entry: SessionEntry) -> EntryIndex {
        let index = self.entries.len() as EntryIndex;
        let parent = entry.parent_id().and_then(|id| self.by_id.get(id).copied());
        self.by_id.insert(entry.id().into(), index);
        self.parents.push(parent);
        self.entries.push(entry);
        self.note_metadata(index);
        self.leaf = Some(index);
        index
    }

    /// Removes the most recently pushed entry (a failed write is rolled back).
    pub fn pop(&mut self, previous_leaf: Option<EntryIndex>) -> Option<SessionEntry> {
        let entry = self.entries.pop()?;
        self.parents.pop();
        self.by_id.remove(entry.id());
        self.leaf = previous_leaf;
        // Labels and name are derived: recompute them from scratch.
        self.labels.clear();
        self.name = None;
        for index in 0..self.entries.len() {
            self.note_metadata(index as EntryIndex);
        }
        Some(entry)
    }

    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    pub fn into_entries(self) -> Vec<SessionEntry> {
        self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    pub fn index_of(&self, id: &str) -> Option<EntryIndex> {
        self.by_id.get(id).copied()
    }

    pub fn get(&self, id: &str) -> Option<&SessionEntry> {
        self.index_of(id).map(|index| &self.entries[index as usize])
    }

    pub fn entry(&self, index: EntryIndex) -> &SessionEntry {
        &self.entries[index as usize]
    }

    pub fn ids(&self) -> &HashMap<EntryId, EntryIndex> {
        &self.by_id
    }

    pub fn parent_of(&self, index: EntryIndex) -> Option<EntryIndex> {
        self.parents[index as usize]
    }

    pub fn leaf(&self) -> Option<EntryIndex> {
        self.leaf
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|index| self.entries[index as usize].id())
    }

    pub fn set_leaf(&mut self, leaf: Option<EntryIndex>) {
        self.leaf = leaf;
    }

    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|(label, _)| label.as_str())
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Entry indices from the root down to `from` (inclusive).
    pub fn path_to(&self, from: Option<EntryIndex>) -> Vec<EntryIndex> {
        let mut path = Vec::new();
        let mut current = from;
        while let Some(index) = current {
            path.push(index);
            current = self.parents[index as usize];
        }
        path.reverse();
        path
    }

    /// Entries from the root down to `from` (inclusive).
    pub fn branch(&self, from: Option<EntryIndex>) -> Vec<&SessionEntry> {
        self.path_to(from)
            .into_iter()
            .map(|i| self.entry(i))
            .collect()
    }

    /// Direct children of an entry, sorted by timestamp.
    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        let Some(parent) = self.index_of(id) else {
            return Vec::new();
        };
        let mut children: Vec<&SessionEntry> = self
            .parents
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == Some(parent))
            .map(|(i, _)| &self.entries[i])
            .collect();
        children.sort_by(|a, b| a.timestamp().cmp(b.timestamp()));
        children
    }

    /// The whole forest: roots are entries without a (resolvable) parent.
    pub fn forest(&self) -> Forest {
        let mut forest = Forest {
            roots: Vec::new(),
            children: vec![Vec::new(); self.entries.len()],
        };
        for (index, parent) in self.parents.iter().enumerate() {
            match parent {
                Some(parent) => forest.children[*parent as usize].push(index as EntryIndex),
                None => forest.roots.push(index as EntryIndex),
            }
        }
        let by_time = |a: &EntryIndex, b: &EntryIndex| {
            self.entries[*a as usize]
                .timestamp()
                .cmp(self.entries[*b as usize].timestamp())
        };
        forest.roots.sort_by(by_time);
        for kids in &mut forest.children {
            if kids.len() > 1 {
                kids.sort_by(by_time);
            }
        }
        forest
    }

    /// The label timestamp of an entry's current label.
    pub fn label_timestamp(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|(_, ts)| ts.as_str())
    }
}
