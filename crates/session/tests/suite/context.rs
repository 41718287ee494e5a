#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! Context building rules of session-format.md, on trees built through the public API.

use crate::common;

use common::*;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;
use knightcode_session::NewCompaction;
use std::path::Path;

#[test]
fn linear_context_is_the_whole_path() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(user("hi")).unwrap();
    s.append_message(assistant("hello")).unwrap();
    s.append_custom_entry("ext", None).unwrap();
    s.append_message(user("more")).unwrap();
    assert_eq!(context_of(&s), ["user:hi", "assistant:hello", "user:more"]);
}

#[test]
fn branching_selects_only_the_active_path() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    let u1 = s.append_message(user("q1")).unwrap();
    s.append_message(assistant("a1")).unwrap();
    s.append_message(user("q2")).unwrap();
    let a2 = s.append_message(assistant("a2")).unwrap();
    s.navigate(&u1).unwrap();
    s.append_message(assistant("alt")).unwrap();
    assert_eq!(context_of(&s), ["user:q1", "assistant:alt"]);
    assert_eq!(s.children(&u1).len(), 2);
    s.navigate(&a2).unwrap();
    assert_eq!(
        context_of(&s),
        ["user:q1", "assistant:a1", "user:q2", "assistant:a2"]
    );
    let forest = s.forest();
    assert_eq!(forest.roots.len(), 1);
}

#[test]
fn reset_leaf_starts_a_new_root() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(user("old")).unwrap();
    s.reset_leaf();
    s.append_message(user("new")).unwrap();
    assert_eq!(context_of(&s), ["user:new"]);
    assert_eq!(s.forest().roots.len(), 2);
}

#[test]
fn latest_compaction_wins_and_keeps_from_first_kept_entry() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(system(&[("preamble", Some("P1"))], &["read"], &[]))
        .unwrap();
    s.append_message(user("q1")).unwrap();
    s.append_message(assistant("a1")).unwrap();
    let q2 = s.append_message(user("q2")).unwrap();
    s.append_message(system(&[("skills", Some("S"))], &[], &[]))
        .unwrap();
    s.append_message(assistant("a2")).unwrap();
    s.append_compaction(NewCompaction {
        summary: "first".into(),
        first_kept_entry_id: Some(q2),
        tokens_before: 100,
        ..NewCompaction::default()
    })
    .unwrap();
    s.append_message(user("q3")).unwrap();
    assert_eq!(
        context_of(&s),
        [
            "system[preamble,skills]",
            "compaction:first",
            "user:q2",
            "assistant:a2",
            "user:q3"
        ],
        "the checkpoint leads; system messages in the kept range are dropped in its favour"
    );
    let a3 = s.append_message(assistant("a3")).unwrap();
    let checkpoint = match system(&[("preamble", Some("P2"))], &["bash"], &[]) {
        knightcode_protocol::AgentMessage::System(m) => *m,
        _ => unreachable!(),
    };
    s.append_compaction(NewCompaction {
        summary: "second".into(),
        first_kept_entry_id: Some(a3),
        tokens_before: 200,
        system_message: Some(checkpoint),
        ..NewCompaction::default()
    })
    .unwrap();
    s.append_message(user("q4")).unwrap();
    assert_eq!(
        context_of(&s),
        [
            "system[preamble]",
            "compaction:second",
            "assistant:a3",
            "user:q4"
        ]
    );
    let context = s.build_context();
    assert_eq!(
        context.system.sections,
        vec![("preamble".to_owned(), "P2".to_owned())]
    );
    assert_eq!(
        context
            .system
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["bash"],
        "the checkpoint replaces earlier prompt state"
    );
}

#[test]
fn retain_none_compaction_keeps_nothing_before_it() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(user("q1")).unwrap();
    s.append_message(assistant("a1")).unwrap();
    s.append_compaction(NewCompaction {
        summary: "all".into(),
        first_kept_entry_id: None,
        ..NewCompaction::default()
    })
    .unwrap();
    let compaction = s.leaf_entry().unwrap().clone();
    let knightcode_protocol::SessionEntry::Compaction(c) = &compaction else {
        panic!()
    };
    assert_eq!(c.first_kept_entry_id, c.id, "retain-none stores its own id");
    s.append_message(user("q2")).unwrap();
    assert_eq!(context_of(&s), ["system[]", "compaction:all", "user:q2"]);
}

#[test]
fn context_edits_omit_replace_and_are_branch_relative() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    let q1 = s.append_message(user("q1")).unwrap();
    let a1 = s.append_message(assistant("a1")).unwrap();
    let t1 = s.append_message(tool_result("c1", "big output")).unwrap();
    let before_edits = s.leaf_id().unwrap().to_owned();
    s.append_context_edit(&t1, Some(Content::Text("[trimmed]".into())))
        .unwrap();
    s.append_context_edit(&a1, Some(Content::Text("A1'".into())))
        .unwrap();
    s.append_context_edit(&q1, None).unwrap();
    assert_eq!(context_of(&s), ["assistant:A1'", "tool:[trimmed]"]);
    // String replacements for assistant/toolResult become one text block.
    let context = s.build_context();
    let knightcode_protocol::AgentMessage::ToolResult(result) =
        context.messages[1].message.as_ref()
    else {
        panic!()
    };
    assert!(matches!(&result.content[..], [ContentBlock::Text(t)] if t.text == "[trimmed]"));
    // The raw entry is unchanged.
    assert_eq!(
        common::describe(s.entry(&t1).unwrap().message().unwrap()),
        "tool:big output"
    );
    // Latest edit on the branch wins.
    s.append_context_edit(&t1, Some(Content::Text("v2".into())))
        .unwrap();
    assert_eq!(context_of(&s), ["assistant:A1'", "tool:v2"]);
    // Navigating before the edits restores the original contribution.
    s.navigate(&before_edits).unwrap();
    assert_eq!(
        context_of(&s),
        ["user:q1", "assistant:a1", "tool:big output"]
    );
}

#[test]
fn branch_summaries_and_custom_messages_enter_context() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    let q1 = s.append_message(user("q1")).unwrap();
    s.append_message(assistant("a1")).unwrap();
    s.append_message(user("abandoned")).unwrap();
    s.branch_with_summary(Some(&q1), "explored A", None, None, None)
        .unwrap();
    s.append_custom_message("ext", Content::Text("injected".into()), true, None)
        .unwrap();
    s.append_custom_entry("state", Some(serde_json::json!({"n":1})))
        .unwrap();
    assert_eq!(
        context_of(&s),
        ["user:q1", "branch:explored A", "custom:injected"]
    );
}

#[test]
fn model_and_thinking_level_come_from_the_path() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    assert_eq!(s.build_context().thinking_level, "off");
    assert_eq!(s.build_context().model, None);
    s.append_thinking_level_change("high").unwrap();
    s.append_model_change("openai", "gpt-4o").unwrap();
    let branch_point = s.leaf_id().unwrap().to_owned();
    s.append_message(user("q")).unwrap();
    s.append_message(assistant_with("anthropic", "claude", "a"))
        .unwrap();
    let context = s.build_context();
    assert_eq!(context.thinking_level, "high");
    assert_eq!(
        context.model.unwrap().model_id,
        "claude",
        "the later assistant message wins"
    );
    s.navigate(&branch_point).unwrap();
    assert_eq!(s.build_context().model.unwrap().model_id, "gpt-4o");
}

#[test]
fn system_messages_replay_sections_and_tools() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    s.append_message(system(
        &[
            ("preamble", Some("You help.")),
            ("tools", Some("<tools>\n- read\n</tools>")),
            ("cwd", Some("<cwd>\n/w\n</cwd>")),
        ],
        &["read", "write"],
        &[],
    ))
    .unwrap();
    s.append_message(user("q")).unwrap();
    s.append_message(system(
        &[("tools", None), ("skills", Some("<skills>\nS\n</skills>"))],
        &["bash"],
        &["write"],
    ))
    .unwrap();
    let context = s.build_context();
    let names: Vec<&str> = context
        .system
        .sections
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["preamble", "cwd", "skills"]);
    let tools: Vec<&str> = context
        .system
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(tools, ["read", "bash"]);
    assert_eq!(
        context.system.prompt_text(),
        "You help.\n\n<cwd>\n/w\n</cwd>\n\n<skills>\nS\n</skills>"
    );
}

#[test]
fn labels_and_names_follow_latest_entry() {
    let store = store();
    let mut s = store.in_memory(Path::new("/w"));
    let q = s.append_message(user("q")).unwrap();
    s.set_label(&q, Some("checkpoint")).unwrap();
    assert_eq!(s.label(&q), Some("checkpoint"));
    s.set_label(&q, None).unwrap();
    assert_eq!(s.label(&q), None);
    assert!(s.set_label("nope", Some("x")).is_err());
    s.set_session_name("  Refactor\r\n\nauth ").unwrap();
    assert_eq!(s.session_name(), Some("Refactor auth"));
    s.set_session_name("").unwrap();
    assert_eq!(s.session_name(), None);
    assert!(s.navigate("missing").is_err());
}
