#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! A newer writer's data is never destroyed, and output matches `JSON.stringify`.

use knightcode_protocol::AgentMessage;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::JsNumber;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::wire::format_js_number;

fn round_trip(line: &str) -> String {
    let entry: SessionEntry = serde_json::from_str(line).unwrap();
    serde_json::to_string(&entry).unwrap()
}

#[test]
fn unknown_fields_survive_at_every_level() {
    let line = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2024-12-03T14:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi","future":1},{"type":"hologram","payload":[1,2]}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"currency":"USD"},"quantum":7},"stopReason":"stop","timestamp":1,"mood":"good"},"shard":3}"#;
    assert_eq!(round_trip(line), line);
    let entry: SessionEntry = serde_json::from_str(line).unwrap();
    let Some(AgentMessage::Assistant(message)) = entry.message() else {
        panic!("not an assistant message");
    };
    assert!(matches!(message.content[1], ContentBlock::Unknown(_)));
    assert_eq!(message.extra["mood"], "good");
}

#[test]
fn unknown_entry_types_and_roles_survive() {
    for line in [
        r#"{"type":"hologram","id":"b2","parentId":"a1","timestamp":"t","beam":{"x":1}}"#,
        r#"{"type":"message","id":"c3","parentId":"b2","timestamp":"t","message":{"role":"oracle","content":"?","timestamp":5}}"#,
        r#"{"type":"custom","customType":"ext","id":"d4","parentId":null,"timestamp":"t"}"#,
    ] {
        assert_eq!(round_trip(line), line);
    }
    let entry: SessionEntry =
        serde_json::from_str(r#"{"type":"hologram","id":"b2","parentId":"a1","timestamp":"t"}"#)
            .unwrap();
    assert_eq!(entry.id(), "b2");
    assert_eq!(entry.parent_id(), Some("a1"));
    assert_eq!(entry.tag(), "hologram");
}

#[test]
fn tag_need_not_come_first() {
    let entry: SessionEntry = serde_json::from_str(
        r#"{"id":"e5","parentId":null,"timestamp":"t","type":"label","targetId":"x","label":"keep"}"#,
    )
    .unwrap();
    let SessionEntry::Label(label) = &entry else {
        panic!("expected a label, got {entry:?}");
    };
    assert_eq!(label.label.as_deref(), Some("keep"));
    // Written back in the canonical order.
    assert_eq!(
        serde_json::to_string(&entry).unwrap(),
        r#"{"type":"label","id":"e5","parentId":null,"timestamp":"t","targetId":"x","label":"keep"}"#
    );
}

#[test]
fn null_parent_is_written_and_absent_options_are_not() {
    let line = r#"{"type":"label","id":"e5","parentId":null,"timestamp":"t","targetId":"x"}"#;
    assert_eq!(round_trip(line), line);
}

#[test]
fn numbers_format_like_javascript() {
    for (value, text) in [
        (0.0, "0"),
        (-0.0, "0"),
        (3.0, "3"),
        (5.0, "5"),
        (-3.0, "-3"),
        (0.5, "0.5"),
        (2147483.647, "2147483.647"),
        (0.000001, "0.000001"),
        (0.000003, "0.000003"),
        (0.0000001, "1e-7"),
        (1e21, "1e+21"),
        (0.1 + 0.2, "0.30000000000000004"),
        (123456.5, "123456.5"),
    ] {
        assert_eq!(format_js_number(value), text, "{value}");
        assert_eq!(
            serde_json::to_string(&JsNumber(value)).unwrap(),
            text,
            "{value}"
        );
    }
    assert_eq!(serde_json::to_string(&JsNumber(f64::NAN)).unwrap(), "null");
}

#[test]
fn numbers_in_json_trees_stay_integers_when_whole() {
    let whole = serde_json::Value::from(JsNumber(100.0));
    assert_eq!(whole.to_string(), "100");
    assert!(whole.is_i64());
    assert_eq!(serde_json::Value::from(JsNumber(2.5)).to_string(), "2.5");
    assert_eq!(serde_json::Value::from(JsNumber(-0.0)).to_string(), "0");
}

/// A line of the wrong shape is an error that says what was found and what was expected
/// where, so a reader can report the line instead of crashing on it.
#[test]
fn wrong_shapes_are_errors_not_panics() {
    for (line, message) in [
        (
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":7}"#,
            "invalid type: integer `7`, expected a AgentMessage object with a \"role\" key \
             at line 1 column 70",
        ),
        (
            r#"{"type":"model_change","id":5}"#,
            "invalid type: integer `5`, expected a string at line 1 column 29",
        ),
        (
            r#"[1,2]"#,
            "invalid type: sequence, expected a SessionEntry object with a \"type\" key \
             at line 1 column 0",
        ),
    ] {
        let error = serde_json::from_str::<SessionEntry>(line).unwrap_err();
        assert_eq!(error.to_string(), message, "{line}");
    }
}

#[test]
fn constrained_sampling_of_declared_tools_survives() {
    let line = r#"{"type":"message","id":"s1","parentId":null,"timestamp":"2024-12-03T14:00:00.000Z","message":{"role":"system","content":"p","toolsAdded":[{"name":"codemode","description":"d","parameters":{"type":"object"},"constrainedSampling":{"type":"grammar","variants":{"openai_lark":"start: /x/","future_dialect":"y"}}},{"name":"a","description":"d","parameters":{},"constrainedSampling":{"type":"json_schema","strict":"prefer"}},{"name":"b","description":"d","parameters":{},"constrainedSampling":false},{"name":"c","description":"d","parameters":{},"constrainedSampling":{"type":"automaton","states":3}}],"timestamp":1}}"#;
    assert_eq!(round_trip(line), line);
    let entry: SessionEntry = serde_json::from_str(line).unwrap();
    let Some(AgentMessage::System(message)) = entry.message() else {
        panic!("not a system message");
    };
    let tools = message.tools_added.as_ref().unwrap();
    let grammar = tools[0]
        .constrained_sampling
        .as_ref()
        .and_then(|c| c.grammar_variants())
        .unwrap();
    assert_eq!(grammar.openai_lark.as_deref(), Some("start: /x/"));
    assert!(tools[1..].iter().all(|t| {
        t.constrained_sampling
            .as_ref()
            .unwrap()
            .grammar_variants()
            .is_none()
    }));
}
