//! Tool-argument validation against each tool's JSON Schema.
//!
//! The model sees the failure as an error result, so the text names the tool, every failing
//! path and what was received: that is what lets a model fix its call on the next turn. The
//! wording follows the TypeScript agent (`Validation failed for tool "read":` …), which
//! extensions already parse.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::tool::ToolDefinition;

/// Compiled validators by tool name, kept for one run (schemas do not change mid-run, and
/// compiling is far slower than validating).
/// Public for the fuzzing harness, which checks arguments the way a run does.
#[derive(Default)]
pub struct SchemaCache {
    validators: HashMap<String, Result<Arc<jsonschema::Validator>, String>>,
}

impl SchemaCache {
    fn validator(
        &mut self,
        definition: &ToolDefinition,
    ) -> Result<Arc<jsonschema::Validator>, String> {
        self.validators
            .entry(definition.name.clone())
            .or_insert_with(|| {
                jsonschema::validator_for(&definition.parameters)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// `Ok` when `arguments` satisfy the tool's schema, else the text for the error result.
    pub fn validate(
        &mut self,
        definition: &ToolDefinition,
        arguments: &Value,
    ) -> Result<(), String> {
        let validator = self.validator(definition).map_err(|error| {
            format!(
                "Tool \"{}\" has an invalid parameter schema ({error}), so it cannot be called. This is a bug in the tool, not in your arguments.",
                definition.name
            )
        })?;
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .map(|error| {
                let path = error.instance_path().as_str().trim_start_matches('/');
                let path = if path.is_empty() { "root" } else { path };
                format!("  - {path}: {error}")
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        let received =
            serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
        Err(format!(
            "Validation failed for tool \"{}\":\n{}\n\nReceived arguments:\n{received}",
            definition.name,
            problems.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(parameters: Value) -> ToolDefinition {
        ToolDefinition {
            name: "read".into(),
            label: "Read".into(),
            description: "Reads".into(),
            parameters,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            execution: crate::ExecutionMode::Parallel,
        }
    }

    #[test]
    fn reports_paths_and_received_arguments() {
        let mut cache = SchemaCache::default();
        let tool = definition(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "number"}},
            "required": ["path"]
        }));
        assert_eq!(cache.validate(&tool, &json!({"path": "a"})), Ok(()));
        let error = cache.validate(&tool, &json!({"limit": "x"})).err();
        let error = error.as_deref().unwrap_or_default();
        assert!(
            error.starts_with("Validation failed for tool \"read\":\n"),
            "{error}"
        );
        assert!(
            error.contains("  - root: \"path\" is a required property"),
            "{error}"
        );
        assert!(
            error.contains("  - limit: \"x\" is not of type \"number\""),
            "{error}"
        );
        assert!(
            error.ends_with("Received arguments:\n{\n  \"limit\": \"x\"\n}"),
            "{error}"
        );
    }

    #[test]
    fn broken_schema_is_reported_as_a_tool_bug() {
        let mut cache = SchemaCache::default();
        let tool = definition(json!({"type": 12}));
        let error = cache.validate(&tool, &json!({})).err().unwrap_or_default();
        assert!(error.contains("invalid parameter schema"), "{error}");
    }
}
