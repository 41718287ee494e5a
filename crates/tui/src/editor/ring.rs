//! Emacs-style kill ring and the undo stack.

use std::collections::VecDeque;

use super::buffer::State;

/// Killed text, most recent last. Consecutive kills grow one entry.
#[derive(Debug, Default, Clone)]
pub(super) struct KillRing {
    ring: Vec<String>,
}

impl KillRing {
    /// Adds killed text; with `accumulate` it joins the latest entry (in front of it for
    /// backward kills).
    pub fn push(&mut self, text: &str, prepend: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        match self.ring.last_mut() {
            Some(last) if accumulate => {
                if prepend {
                    last.insert_str(0, text);
                } else {
                    last.push_str(text);
                }
            }
            _ => self.ring.push(text.to_owned()),
        }
    }

    pub fn peek(&self) -> Option<&str> {
        self.ring.last().map(String::as_str)
    }

    /// Moves the latest entry to the front, so the one before it becomes the latest.
    pub fn rotate(&mut self) {
        if self.ring.len() > 1
            && let Some(last) = self.ring.pop()
        {
            self.ring.insert(0, last);
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }
}

/// Snapshots to undo to. Bounded so a long session of edits does not grow without end.
#[derive(Debug, Default, Clone)]
pub(super) struct UndoStack {
    stack: VecDeque<State>,
}

const MAX_UNDO: usize = 500;

impl UndoStack {
    pub fn push(&mut self, state: &State) {
        if self.stack.len() >= MAX_UNDO {
            self.stack.pop_front();
        }
        self.stack.push_back(state.clone());
    }

    pub fn pop(&mut self) -> Option<State> {
        self.stack.pop_back()
    }

    pub fn clear(&mut self) {
        self.stack.clear();
    }
}
