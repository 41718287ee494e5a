//! The session operations are named once on each side: `SessionOp` in Rust, and the frozen
//! `SessionOp` table of `js/session.js` in JavaScript. The table holds exactly the enum's
//! names, every entry is used, and every other file names an operation through the table
//! (`session(SessionOp.getEntries)`), never by a string.

use std::collections::BTreeSet;
use std::path::PathBuf;

use knightcode_ext::SessionOp;

/// The file that holds the table and the two call helpers.
const TABLE_FILE: &str = "session.js";
const TABLE_START: &str = "const SessionOp = Object.freeze({";

/// Every bootstrap script, by file name, with its text.
fn scripts() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js");
    let mut scripts: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "js"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    scripts.sort();
    scripts
}

/// The table's entries, `name: "name",` a line between `TABLE_START` and `});`.
fn table(text: &str) -> Vec<String> {
    let start = text
        .find(TABLE_START)
        .unwrap_or_else(|| panic!("js/{TABLE_FILE} has no `{TABLE_START}`"));
    let body = &text[start + TABLE_START.len()..];
    let body = &body[..body.find("});").expect("the table ends with `});`")];
    let mut names = Vec::new();
    for line in body.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let (key, value) = line
            .trim_end_matches(',')
            .split_once(':')
            .unwrap_or_else(|| panic!("not a `name: \"name\",` entry: {line:?}"));
        let value = value.trim();
        assert_eq!(
            value,
            format!("\"{key}\""),
            "a table entry's value is its own name: {line:?}"
        );
        names.push(key.to_owned());
    }
    names
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// What follows each `callee(` in `text` (not the tail of a longer name), up to the first
/// argument's end, trimmed.
fn first_arguments<'t>(text: &'t str, callee: &str) -> Vec<&'t str> {
    let needle = format!("{callee}(");
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&needle) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + needle.len()..];
        if before.is_none_or(|c| !is_ident(c)) {
            let end = after.find([',', ')']).unwrap_or(after.len());
            found.push(after[..end].trim());
        }
        rest = after;
    }
    found
}

/// The names after each `SessionOp.` in `text`.
fn table_references(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("SessionOp.") {
        let after = &rest[at + "SessionOp.".len()..];
        let end = after.find(|c| !is_ident(c)).unwrap_or(after.len());
        names.push(&after[..end]);
        rest = after;
    }
    names
}

#[test]
fn the_js_table_names_exactly_the_session_operations_rust_defines() {
    let scripts = scripts();
    let (_, text) = scripts
        .iter()
        .find(|(name, _)| name == TABLE_FILE)
        .unwrap_or_else(|| panic!("js/{TABLE_FILE} is missing"));
    let entries = table(text);
    let names: BTreeSet<&str> = entries.iter().map(String::as_str).collect();
    assert_eq!(names.len(), entries.len(), "a name is in the table twice");
    let rust: BTreeSet<&str> = SessionOp::all().map(SessionOp::name).collect();
    let missing: Vec<&&str> = rust.difference(&names).collect();
    assert!(
        missing.is_empty(),
        "SessionOp defines operations js/{TABLE_FILE}'s table lacks: {missing:?}"
    );
    let unknown: Vec<&&str> = names.difference(&rust).collect();
    assert!(
        unknown.is_empty(),
        "js/{TABLE_FILE}'s table names operations SessionOp does not define: {unknown:?}"
    );
    // Names are unique and round-trip on the Rust side too.
    for op in SessionOp::all() {
        assert_eq!(SessionOp::parse(op.name()), Some(op));
    }
}

#[test]
fn every_js_file_calls_session_operations_through_the_table() {
    let scripts = scripts();
    let (_, text) = scripts.iter().find(|(name, _)| name == TABLE_FILE).unwrap();
    let table: BTreeSet<String> = table(text).into_iter().collect();
    let mut used = BTreeSet::new();
    for (file, text) in &scripts {
        if file == TABLE_FILE {
            continue;
        }
        // Only the table's file reaches the host's ops itself.
        for raw in ["kc.session(", "kc.sessionAsync(", "__kc.session"] {
            assert!(
                !text.contains(raw),
                "js/{file} calls `{raw}` itself; use internal.session / internal.sessionAsync \
                 with a SessionOp name (js/{TABLE_FILE})"
            );
        }
        for callee in ["session", "sessionAsync"] {
            for argument in first_arguments(text, callee) {
                assert!(
                    argument
                        .strip_prefix("SessionOp.")
                        .is_some_and(|name| name.chars().all(is_ident)),
                    "js/{file} calls {callee}({argument}, …): name the operation as \
                     SessionOp.<name> from js/{TABLE_FILE}'s table"
                );
            }
        }
        for name in table_references(text) {
            assert!(
                table.contains(name),
                "js/{file} uses SessionOp.{name}, which js/{TABLE_FILE}'s table does not have"
            );
            used.insert(name.to_owned());
        }
    }
    let unused: Vec<&String> = table.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "in js/{TABLE_FILE}'s table but never called: {unused:?}"
    );
}
