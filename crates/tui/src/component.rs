//! The component model every view (and, later, every extension component) implements.

use crate::keys::InputEvent;

/// A piece of the screen. Renders to whole lines; never writes to the terminal itself.
///
/// Contract (same as the reference `Component` extensions implement):
/// - `render(width)` returns lines whose visible width is at most `width` (ANSI sequences do
///   not count; wide characters count two). A line must not contain `\n`.
/// - Styles should be reset at the end of each line; the renderer appends a reset anyway.
/// - Components may cache lines per width; `invalidate` drops such caches (theme change,
///   toggles that affect rendering).
pub trait Component {
    /// The lines for this width.
    fn render(&mut self, width: u16) -> Vec<String>;

    /// Offers an input event; returns true when the component used it.
    fn handle_input(&mut self, _event: &InputEvent) -> bool {
        false
    }

    /// Drops cached rendering so the next `render` starts fresh.
    fn invalidate(&mut self) {}
}

/// Children rendered top to bottom.
#[derive(Default)]
pub struct Container {
    children: Vec<Box<dyn Component + Send>>,
}

impl Container {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, child: Box<dyn Component + Send>) {
        self.children.push(child);
    }

    pub fn clear(&mut self) {
        self.children.clear();
    }

    pub fn len(&self) -> usize {
        self.children.len()
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    pub fn children_mut(&mut self) -> &mut Vec<Box<dyn Component + Send>> {
        &mut self.children
    }
}

impl Component for Container {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut lines = Vec::new();
        for child in &mut self.children {
            lines.extend(child.render(width));
        }
        lines
    }

    fn invalidate(&mut self) {
        for child in &mut self.children {
            child.invalidate();
        }
    }
}

/// Plain lines, for tests and simple views.
impl Component for Vec<String> {
    fn render(&mut self, _width: u16) -> Vec<String> {
        self.clone()
    }
}
