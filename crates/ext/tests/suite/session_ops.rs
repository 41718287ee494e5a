//! The session operations are named once, in `SessionOp`: every name the JS side calls
//! (`session("…")`, `sessionAsync("…")`, `kc.session("…")`) is one of them, and every one of
//! them is called.

use std::collections::BTreeSet;

use knightcode_ext::SessionOp;

/// The names called as `<callee>("name"` in `text`.
fn called(text: &str, callee: &str) -> Vec<String> {
    let needle = format!("{callee}(\"");
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&needle) {
        // `session(` must not be the tail of a longer name (`hasSession(`).
        let before = rest[..at].chars().next_back();
        let after = &rest[at + needle.len()..];
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && let Some(end) = after.find('"')
        {
            names.push(after[..end].to_owned());
        }
        rest = after;
    }
    names
}

#[test]
fn the_js_side_calls_exactly_the_session_operations_rust_defines() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("js");
    let mut used = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "js") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for callee in ["session", "sessionAsync", "kc.session"] {
            for name in called(&text, callee) {
                assert!(
                    SessionOp::parse(&name).is_some(),
                    "{} calls the session operation {name:?}, which SessionOp does not define",
                    path.display()
                );
                used.insert(name);
            }
        }
    }
    let unused: Vec<&str> = SessionOp::all()
        .map(SessionOp::name)
        .filter(|name| !used.contains(*name))
        .collect();
    assert!(
        unused.is_empty(),
        "defined but never called from JS: {unused:?}"
    );
    // Names are unique and round-trip.
    for op in SessionOp::all() {
        assert_eq!(SessionOp::parse(op.name()), Some(op));
    }
}
