#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Random operations, then reopen: the same tree, leaf and context.

use crate::common;

use std::path::Path;

use common::*;
use knightcode_protocol::Content;
use knightcode_session::NewCompaction;
use knightcode_session::NewSession;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    User(String),
    Assistant(String),
    /// Navigate to the entry at this (wrapped) index in file order.
    Branch(usize),
    Label(usize, Option<String>),
    /// Compact, keeping from the path entry at this index (or none).
    Compact(Option<usize>),
    /// Edit the path entry at this index: omit or replace.
    ContextEdit(usize, Option<String>),
    ResetLeaf,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => "[a-z ]{0,12}".prop_map(Op::User),
        4 => "[a-z ]{0,12}".prop_map(Op::Assistant),
        2 => any::<usize>().prop_map(Op::Branch),
        1 => (any::<usize>(), proptest::option::of("[a-z]{1,5}")).prop_map(|(i, l)| Op::Label(i, l)),
        1 => proptest::option::of(any::<usize>()).prop_map(Op::Compact),
        1 => (any::<usize>(), proptest::option::of("[A-Z]{1,5}")).prop_map(|(i, r)| Op::ContextEdit(i, r)),
        1 => Just(Op::ResetLeaf),
    ]
}

fn apply(session: &mut knightcode_session::SessionManager, op: &Op) {
    let ids: Vec<String> = session
        .entries()
        .iter()
        .map(|e| e.id().to_owned())
        .collect();
    let path: Vec<String> = session
        .branch(None)
        .unwrap()
        .iter()
        .map(|e| e.id().to_owned())
        .collect();
    match op {
        Op::User(text) => {
            session.append_message(user(text)).unwrap();
        }
        Op::Assistant(text) => {
            session.append_message(assistant(text)).unwrap();
        }
        Op::Branch(i) if !ids.is_empty() => session.navigate(&ids[i % ids.len()]).unwrap(),
        Op::Label(i, label) if !ids.is_empty() => {
            session
                .set_label(&ids[i % ids.len()], label.as_deref())
                .unwrap();
        }
        Op::Compact(keep) => {
            let first_kept_entry_id = keep
                .filter(|_| !path.is_empty())
                .map(|i| path[i % path.len()].clone());
            session
                .append_compaction(NewCompaction {
                    summary: "summary".into(),
                    first_kept_entry_id,
                    tokens_before: 10,
                    ..NewCompaction::default()
                })
                .unwrap();
        }
        Op::ContextEdit(i, replacement) if !path.is_empty() => {
            let target = &path[i % path.len()];
            // Only message entries are editable; others are refused with an error.
            let _ = session.append_context_edit(target, replacement.clone().map(Content::Text));
        }
        Op::ResetLeaf => session.reset_leaf(),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn reopen_gives_the_same_tree_leaf_and_context(ops in proptest::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let store = store();
        let mut session = store.create(dir.path(), Path::new("/p"), NewSession::default()).unwrap();
        // Make sure the file exists: the first assistant message triggers the write.
        session.append_message(user("start")).unwrap();
        session.append_message(assistant("ok")).unwrap();
        for op in &ops {
            apply(&mut session, op);
        }
        let path = session.session_file().unwrap().to_owned();
        // After a reopen the leaf is the last entry in file order.
        let last = session.entries().last().unwrap().id().to_owned();
        session.navigate(&last).unwrap();
        let expected_entries = session.entries().to_vec();
        let expected_context: Vec<String> = context_of(&session);
        let expected_labels: Vec<Option<String>> = expected_entries
            .iter()
            .map(|e| session.label(e.id()).map(str::to_owned))
            .collect();
        let expected_forest = session.forest();
        drop(session);

        let reopened = store.open(&path, Path::new("/p")).unwrap();
        prop_assert!(reopened.warnings().is_empty(), "{:?}", reopened.warnings());
        prop_assert_eq!(reopened.entries(), &expected_entries[..]);
        prop_assert_eq!(reopened.leaf_id(), Some(last.as_str()));
        prop_assert_eq!(context_of(&reopened), expected_context);
        let labels: Vec<Option<String>> = expected_entries
            .iter()
            .map(|e| reopened.label(e.id()).map(str::to_owned))
            .collect();
        prop_assert_eq!(labels, expected_labels);
        prop_assert_eq!(reopened.forest(), expected_forest);
    }
}
