//! Parameter schemas have the reference agent's shape and key order, so that the `tools` of a
//! model request match pi's byte for byte apart from our own description wording.

use knightcode_tools::ToolsConfig;
use knightcode_tools::builtin_tools;
use serde_json::Value;

/// The schema with every description text replaced, keys in their written order.
fn shape(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| match (key.as_str(), value) {
                    ("description", Value::String(_)) => {
                        (key.clone(), Value::String("<description>".to_owned()))
                    }
                    _ => (key.clone(), shape(value)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        other => other.clone(),
    }
}

fn ours() -> Vec<(String, Value)> {
    builtin_tools(ToolsConfig::default())
        .iter()
        .map(|tool| {
            let definition = tool.definition();
            (definition.name.clone(), definition.parameters.clone())
        })
        .collect()
}

/// The `parameters` of every tool pi 0.73.1 sent in its first recorded request.
fn reference() -> Vec<(String, Value)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/pi/tools/requests.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let function = &tool["function"];
            (
                function["name"].as_str().unwrap().to_owned(),
                function["parameters"].clone(),
            )
        })
        .collect()
}

#[test]
fn schemas_match_the_reference_apart_from_descriptions() {
    let ours = ours();
    let reference = reference();
    assert!(reference.len() >= 5, "pi sent {} tools", reference.len());
    for (name, theirs) in &reference {
        let (_, mine) = ours
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no built-in tool {name}"));
        // Compared as text: serde_json keeps insertion order, so this checks key order too.
        assert_eq!(
            shape(mine).to_string(),
            shape(theirs).to_string(),
            "tool {name}"
        );
    }
}

/// Walks every object schema: TypeBox writes `type`, then `required` (when any), then
/// `properties`, then options such as `additionalProperties` and `description`.
fn check_key_order(tool: &str, at: &str, schema: &Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get("type") == Some(&Value::String("object".to_owned())) {
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        let expected: &[&str] = if map.contains_key("required") {
            &["type", "required", "properties"]
        } else {
            &["type", "properties"]
        };
        assert_eq!(&keys[..expected.len()], expected, "{tool} {at}");
        for (name, property) in map["properties"].as_object().unwrap() {
            check_key_order(tool, &format!("{at}.{name}"), property);
        }
    }
    if let Some(items) = map.get("items") {
        check_key_order(tool, &format!("{at}[]"), items);
    }
}

#[test]
fn every_schema_writes_required_before_properties() {
    let ours = ours();
    let names: Vec<&str> = ours.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, knightcode_tools::BUILTIN_TOOL_NAMES);
    for (name, parameters) in &ours {
        check_key_order(name, "parameters", parameters);
    }
}

/// Only `edit` closes its objects, as the reference does; extra keys then fail validation
/// before the tool runs (crates/cli tests/e2e_oneshot.rs drives that through the binary).
#[test]
fn only_edit_refuses_additional_properties() {
    for (name, parameters) in ours() {
        let closed = parameters.get("additionalProperties") == Some(&Value::Bool(false));
        assert_eq!(closed, name == "edit", "{name}");
    }
    let edit = ours().into_iter().find(|(n, _)| n == "edit").unwrap().1;
    assert_eq!(
        edit["properties"]["edits"]["items"]["additionalProperties"],
        Value::Bool(false)
    );
}
