//! Horizontal rules and boxes around other components.

use super::frame_lines;
use crate::component::Component;
use crate::style::Style;

/// A full-width line of `─` (selector and dialog edges).
#[derive(Debug, Clone, Copy, Default)]
pub struct DynamicBorder {
    pub style: Style,
}

impl DynamicBorder {
    pub fn new(style: Style) -> Self {
        Self { style }
    }
}

impl Component for DynamicBorder {
    fn render(&mut self, width: u16) -> Vec<String> {
        vec![self.style.paint(&"─".repeat(usize::from(width).max(1)))]
    }
}

/// Children between two [`DynamicBorder`]s.
pub struct BorderedBox {
    border: DynamicBorder,
    children: Vec<Box<dyn Component + Send>>,
}

impl BorderedBox {
    pub fn new(border: Style) -> Self {
        Self {
            border: DynamicBorder::new(border),
            children: Vec::new(),
        }
    }

    pub fn push(&mut self, child: Box<dyn Component + Send>) {
        self.children.push(child);
    }

    pub fn children_mut(&mut self) -> &mut Vec<Box<dyn Component + Send>> {
        &mut self.children
    }
}

impl Component for BorderedBox {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut lines = self.border.render(width);
        for child in &mut self.children {
            lines.extend(child.render(width));
        }
        lines.extend(self.border.render(width));
        lines
    }

    fn handle_input(&mut self, event: &crate::keys::InputEvent) -> bool {
        self.children
            .iter_mut()
            .any(|child| child.handle_input(event))
    }

    fn invalidate(&mut self) {
        for child in &mut self.children {
            child.invalidate();
        }
    }
}

/// Children rendered narrower by the horizontal padding, with blank lines above and below
/// and an optional background over the full width (the reference's `Box`: user message and
/// tool cards).
pub struct Panel {
    padding_x: usize,
    padding_y: usize,
    background: Option<Style>,
    children: Vec<Box<dyn Component + Send>>,
}

impl Panel {
    pub fn new(padding_x: usize, padding_y: usize, background: Option<Style>) -> Self {
        Self {
            padding_x,
            padding_y,
            background,
            children: Vec::new(),
        }
    }

    pub fn push(&mut self, child: Box<dyn Component + Send>) {
        self.children.push(child);
    }

    pub fn clear(&mut self) {
        self.children.clear();
    }

    pub fn set_background(&mut self, background: Option<Style>) {
        self.background = background;
    }

    pub fn children_mut(&mut self) -> &mut Vec<Box<dyn Component + Send>> {
        &mut self.children
    }
}

impl Component for Panel {
    fn render(&mut self, width: u16) -> Vec<String> {
        let full = usize::from(width);
        let inner = u16::try_from(full.saturating_sub(2 * self.padding_x).max(1)).unwrap_or(width);
        let mut body = Vec::new();
        for child in &mut self.children {
            body.extend(child.render(inner));
        }
        if body.is_empty() {
            return body;
        }
        frame_lines(body, full, self.padding_x, self.padding_y, self.background)
    }

    fn handle_input(&mut self, event: &crate::keys::InputEvent) -> bool {
        self.children
            .iter_mut()
            .any(|child| child.handle_input(event))
    }

    fn invalidate(&mut self) {
        for child in &mut self.children {
            child.invalidate();
        }
    }
}
