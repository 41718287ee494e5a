//! Tolerant JSON parsing for tool-call arguments: repairs common model mistakes and completes
//! JSON that is still streaming (`{"path": "src/ma` reads as `{"path": "src/ma"}`).

use serde_json::Map;
use serde_json::Value;

/// Parses tool-call arguments. Always returns an object: incomplete JSON is completed, broken
/// JSON repaired where possible, and anything that is not an object becomes `{}`.
pub fn parse_streaming_json(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    if let Some(value) = parse_with_repair(text) {
        return as_object(value);
    }
    if let Some(value) = complete_partial(text) {
        return as_object(value);
    }
    let repaired = repair_json(text);
    complete_partial(&repaired).map_or_else(|| Value::Object(Map::new()), as_object)
}

/// `JSON.parse`, retried once on a repaired copy.
pub fn parse_with_repair(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    let repaired = repair_json(text);
    if repaired != text {
        return serde_json::from_str(&repaired).ok();
    }
    None
}

fn as_object(value: Value) -> Value {
    match value {
        Value::Object(_) => value,
        _ => Value::Object(Map::new()),
    }
}

/// Escapes raw control characters inside strings and doubles backslashes that start an
/// invalid escape (`"C:\path"`).
pub fn repair_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut in_string = false;
    let mut chars = text.char_indices().peekable();
    while let Some((index, ch)) = chars.next() {
        if !in_string {
            out.push(ch);
            in_string = ch == '"';
            continue;
        }
        match ch {
            '"' => {
                out.push(ch);
                in_string = false;
            }
            '\\' => match chars.peek().map(|(_, next)| *next) {
                None => out.push_str("\\\\"),
                Some('u') => {
                    let digits = text.get(index + 2..index + 6).unwrap_or("");
                    if digits.len() == 4 && digits.chars().all(|c| c.is_ascii_hexdigit()) {
                        out.push_str("\\u");
                        out.push_str(digits);
                        for _ in 0..5 {
                            chars.next();
                        }
                    } else {
                        out.push_str("\\\\");
                    }
                }
                Some(next @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                    out.push('\\');
                    out.push(next);
                    chars.next();
                }
                Some(_) => out.push_str("\\\\"),
            },
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    Object { expect_key: bool },
    Array,
}

/// The state of a scan over a JSON prefix.
struct Scan {
    stack: Vec<Frame>,
    in_string: bool,
    string_is_key: bool,
    /// A number or literal runs up to the end of the text.
    scalar_open: bool,
    /// Longest prefix that is a valid JSON text once the open containers are closed.
    safe: usize,
}

fn scan(text: &str) -> Scan {
    let mut s = Scan {
        stack: Vec::new(),
        in_string: false,
        string_is_key: false,
        scalar_open: false,
        safe: 0,
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if s.in_string {
            match b {
                b'\\' => i += 1,
                b'"' => {
                    s.in_string = false;
                    if !s.string_is_key {
                        s.safe = i + 1;
                    }
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let delimiter = matches!(b, b',' | b'}' | b']' | b':' | b' ' | b'\n' | b'\r' | b'\t');
        if s.scalar_open && delimiter {
            s.scalar_open = false;
            s.safe = i;
        }
        match b {
            b'{' => {
                s.stack.push(Frame::Object { expect_key: true });
                s.safe = i + 1;
            }
            b'[' => {
                s.stack.push(Frame::Array);
                s.safe = i + 1;
            }
            b'}' | b']' => {
                s.stack.pop();
                s.safe = i + 1;
            }
            b'"' => {
                s.in_string = true;
                s.string_is_key =
                    matches!(s.stack.last(), Some(Frame::Object { expect_key: true }));
            }
            b':' => {
                if let Some(Frame::Object { expect_key }) = s.stack.last_mut() {
                    *expect_key = false;
                }
            }
            b',' => {
                if let Some(Frame::Object { expect_key }) = s.stack.last_mut() {
                    *expect_key = true;
                }
            }
            _ if !delimiter => s.scalar_open = true,
            _ => {}
        }
        i += 1;
    }
    s
}

fn closers(stack: &[Frame]) -> String {
    stack
        .iter()
        .rev()
        .map(|frame| match frame {
            Frame::Object { .. } => '}',
            Frame::Array => ']',
        })
        .collect()
}

/// Completes a JSON prefix: keeps a partial string value, drops a partial key or dangling
/// separator, and closes every open container.
fn complete_partial(text: &str) -> Option<Value> {
    let s = scan(text);
    let try_parse = |candidate: String| serde_json::from_str::<Value>(&candidate).ok();
    if s.in_string && !s.string_is_key {
        let mut prefix = text.to_owned();
        trim_incomplete_escape(&mut prefix);
        prefix.push('"');
        prefix.push_str(&closers(&s.stack));
        if let Some(value) = try_parse(prefix) {
            return Some(value);
        }
    }
    if s.scalar_open
        && let Some(value) = try_parse(format!("{text}{}", closers(&s.stack)))
    {
        return Some(value);
    }
    let safe = &text[..s.safe];
    let at_safe = scan(safe);
    try_parse(format!("{safe}{}", closers(&at_safe.stack)))
}

/// Drops a trailing lone backslash or an incomplete `\uXXXX` escape of an open string.
fn trim_incomplete_escape(prefix: &mut String) {
    let bytes = prefix.as_bytes();
    let trailing_backslashes = bytes.iter().rev().take_while(|b| **b == b'\\').count();
    if trailing_backslashes % 2 == 1 {
        prefix.pop();
        return;
    }
    if let Some(pos) = prefix.rfind("\\u") {
        let preceding = prefix.as_bytes()[..pos]
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count();
        let tail = &prefix[pos + 2..];
        if preceding % 2 == 0 && tail.len() < 4 && tail.chars().all(|c| c.is_ascii_hexdigit()) {
            prefix.truncate(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn completes_prefixes() {
        let cases = [
            ("", json!({})),
            ("{", json!({})),
            (r#"{"pa"#, json!({})),
            (r#"{"path""#, json!({})),
            (r#"{"path":"#, json!({})),
            (r#"{"path": "src/ma"#, json!({"path": "src/ma"})),
            (r#"{"path": "a\"#, json!({"path": "a"})),
            (r#"{"path": "a\u00"#, json!({"path": "a"})),
            (r#"{"n": 12"#, json!({"n": 12})),
            (r#"{"n": 12,"#, json!({"n": 12})),
            (r#"{"n": -"#, json!({})),
            (r#"{"a": [1, 2, {"b": "c"#, json!({"a": [1, 2, {"b": "c"}]})),
            (r#"{"a": tr"#, json!({})),
            (r#"{"a": true}"#, json!({"a": true})),
            ("[1, 2]", json!({})),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_streaming_json(text), expected, "{text}");
        }
    }

    #[test]
    fn repairs() {
        assert_eq!(
            parse_streaming_json("{\"p\": \"C:\\dir\"}"),
            json!({"p": "C:\\dir"})
        );
        assert_eq!(
            parse_streaming_json("{\"s\": \"line\nbreak\"}"),
            json!({"s": "line\nbreak"})
        );
        assert_eq!(repair_json(r#""\u00e9""#), r#""\u00e9""#);
    }
}
