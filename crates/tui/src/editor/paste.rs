//! Large pastes: stored aside and shown as `[paste #N +M lines]` / `[paste #N C chars]`
//! markers, expanded back when the text is submitted.

use std::collections::BTreeMap;
use std::ops::Range;

/// A paste with more lines than this is collapsed (the reference's threshold).
pub(super) const MAX_LINES: usize = 10;
/// A paste with more characters than this is collapsed.
pub(super) const MAX_CHARS: usize = 1000;

#[derive(Debug, Default, Clone)]
pub(super) struct Pastes {
    texts: BTreeMap<u32, String>,
    counter: u32,
}

impl Pastes {
    /// Stores `text` and returns the marker that stands for it.
    pub fn add(&mut self, text: String) -> String {
        self.counter += 1;
        let id = self.counter;
        let lines = text.split('\n').count();
        let marker = if lines > MAX_LINES {
            format!("[paste #{id} +{lines} lines]")
        } else {
            format!("[paste #{id} {} chars]", text.chars().count())
        };
        self.texts.insert(id, text);
        marker
    }

    pub fn clear(&mut self) {
        self.texts.clear();
        self.counter = 0;
    }

    /// Byte ranges of the markers in `text` that stand for a stored paste.
    pub fn markers(&self, text: &str) -> Vec<Range<usize>> {
        if self.texts.is_empty() {
            return Vec::new();
        }
        find_markers(text)
            .into_iter()
            .filter(|(_, id)| self.texts.contains_key(id))
            .map(|(range, _)| range)
            .collect()
    }

    /// `text` with every marker of a stored paste replaced by the paste.
    pub fn expand(&self, text: &str) -> String {
        if self.texts.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (range, id) in find_markers(text) {
            let Some(paste) = self.texts.get(&id) else {
                continue;
            };
            out.push_str(&text[last..range.start]);
            out.push_str(paste);
            last = range.end;
        }
        out.push_str(&text[last..]);
        out
    }
}

/// Markers `[paste #N]`, `[paste #N +M lines]`, `[paste #N C chars]` with their ids.
fn find_markers(text: &str) -> Vec<(Range<usize>, u32)> {
    const OPEN: &str = "[paste #";
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(OPEN).map(|i| i + from) {
        let rest = &text[at + OPEN.len()..];
        match parse_marker_tail(rest) {
            Some((id, len)) => {
                let end = at + OPEN.len() + len;
                found.push((at..end, id));
                from = end;
            }
            None => from = at + OPEN.len(),
        }
    }
    found
}

/// After `[paste #`: digits, then `]`, ` +M lines]` or ` C chars]`. Returns the id and the
/// length of the tail.
fn parse_marker_tail(rest: &str) -> Option<(u32, usize)> {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let id: u32 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    if after.starts_with(']') {
        return Some((id, digits + 1));
    }
    let detail = after.strip_prefix(' ')?;
    let (plus, number) = match detail.strip_prefix('+') {
        Some(n) => (1, n),
        None => (0, detail),
    };
    let count = number.bytes().take_while(u8::is_ascii_digit).count();
    if count == 0 {
        return None;
    }
    let unit = if plus == 1 { " lines]" } else { " chars]" };
    number[count..]
        .starts_with(unit)
        .then_some((id, digits + 1 + plus + count + unit.len()))
}

/// Cleans pasted text the way the reference does: control keys some terminals re-encode
/// inside a paste (`ESC [ 106 ; 5 u` for Ctrl+J) become their byte again, line endings
/// become `\n`, tabs four spaces, and other control characters are dropped.
pub(super) fn clean(text: &str) -> String {
    let decoded = decode_csi_u_controls(text);
    let normalized = decoded
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ");
    normalized
        .chars()
        .filter(|&c| c == '\n' || !c.is_control())
        .collect()
}

fn decode_csi_u_controls(text: &str) -> String {
    const OPEN: &str = "\x1b[";
    if !text.contains(OPEN) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let tail = &rest[at + OPEN.len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let control = tail[digits..]
            .starts_with(";5u")
            .then(|| tail[..digits].parse::<u32>().ok())
            .flatten()
            .and_then(|cp| match cp {
                97..=122 => char::from_u32(cp - 96),
                65..=90 => char::from_u32(cp - 64),
                _ => None,
            });
        match control {
            Some(c) => {
                out.push(c);
                rest = &tail[digits + 3..];
            }
            None => {
                out.push_str(OPEN);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}
