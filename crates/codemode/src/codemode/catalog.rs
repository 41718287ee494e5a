//! What a script sees of the tools: the callable ones (every `codemode` and `deferred` tool,
//! the active `direct` ones) under script identifiers, searchable with the BM25 ranking
//! `tool_search` uses, each described with a TypeScript declaration of its call.

use knightcode_agent::ToolListing;
use serde_json::Value;
use serde_json::json;

use crate::bm25;

/// The shared type of MCP tools' results, listed once where a declaration uses it.
pub(crate) const CALL_TOOL_RESULT: &str = "type CallToolResult = {\n  content: Array<{ type: \"text\"; text: string } | { type: \"image\"; data: string; mimeType: string } | { type: string; [key: string]: unknown }>;\n  structuredContent?: Record<string, unknown>;\n  isError?: boolean;\n};";

/// How deep a schema is rendered before `unknown` stands for the rest.
const MAX_DEPTH: usize = 4;

/// `name` as a script identifier: every character outside `[A-Za-z0-9_$]` becomes `_`, and a
/// leading digit gets a `_` in front.
pub fn identifier(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.starts_with(|c: char| c.is_ascii_digit()) || id.is_empty() {
        id.insert(0, '_');
    }
    id
}

/// A JSON Schema as a TypeScript type.
pub fn ts_type(schema: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "unknown".to_owned();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let literals: Vec<String> = values.iter().map(Value::to_string).collect();
        if !literals.is_empty() {
            return literals.join(" | ");
        }
    }
    if let Some(constant) = schema.get("const") {
        return constant.to_string();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = schema.get(key).and_then(Value::as_array) {
            let types: Vec<String> = variants.iter().map(|v| ts_type(v, depth + 1)).collect();
            return types.join(" | ");
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => {
            let types: Vec<String> = kinds
                .iter()
                .map(|k| ts_type(&json!({"type": k}), depth + 1))
                .collect();
            return types.join(" | ");
        }
        Some(Value::String(kind)) => kind.as_str(),
        _ if schema.get("properties").is_some() => "object",
        _ => return "unknown".to_owned(),
    };
    match kind {
        "string" => "string".to_owned(),
        "number" | "integer" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "null".to_owned(),
        "array" => {
            let item = schema
                .get("items")
                .map_or_else(|| "unknown".to_owned(), |i| ts_type(i, depth + 1));
            if item.contains(' ') {
                format!("Array<{item}>")
            } else {
                format!("{item}[]")
            }
        }
        "object" => object_type(schema, depth),
        _ => "unknown".to_owned(),
    }
}

fn object_type(schema: &Value, depth: usize) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "Record<string, unknown>".to_owned();
    };
    if properties.is_empty() {
        return "{}".to_owned();
    }
    let required = required(schema);
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let key = if identifier(name) == *name {
                name.clone()
            } else {
                Value::String(name.clone()).to_string()
            };
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let comment = property
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!(" // {}", d.lines().next().unwrap_or("")))
                .unwrap_or_default();
            format!(
                "{key}{optional}: {};{comment}",
                ts_type(property, depth + 1)
            )
        })
        .collect();
    let indent = "  ".repeat(depth + 1);
    let close = "  ".repeat(depth);
    format!(
        "{{\n{indent}{}\n{close}}}",
        fields.join(&format!("\n{indent}"))
    )
}

/// The property names an object schema requires.
fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The tools one script can call.
pub(crate) struct Catalog {
    tools: Vec<ToolListing>,
}

impl Catalog {
    /// The callable tools of `listing`, except `own` (scripts cannot start codemode).
    pub fn new(listing: Vec<ToolListing>, own: &str) -> Self {
        Self {
            tools: listing
                .into_iter()
                .filter(|t| t.callable && t.definition.name != own)
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&ToolListing> {
        self.tools
            .iter()
            .find(|t| t.definition.name == name)
            .or_else(|| {
                self.tools
                    .iter()
                    .find(|t| identifier(&t.definition.name) == name)
            })
    }

    /// `[{name, id, description}]` for the prelude (`tools.<id>`, `ALL_TOOLS`).
    pub fn script_tools_json(&self) -> String {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.definition.name,
                    "id": identifier(&t.definition.name),
                    "description": t.definition.description,
                })
            })
            .collect();
        Value::Array(tools).to_string()
    }

    /// `searchTools(query, {limit, namespace})`: `[{name, description, namespace?}]`.
    pub fn search_json(&self, query: &str, limit: f64, namespace: &str) -> String {
        let limit = if limit.is_finite() && limit >= 1.0 {
            limit as usize
        } else {
            bm25::DEFAULT_LIMIT
        };
        let candidates: Vec<ToolListing> = self
            .tools
            .iter()
            .filter(|t| namespace.is_empty() || self.in_namespace(t, namespace))
            .cloned()
            .collect();
        let found: Vec<Value> = bm25::rank(&candidates, query, limit)
            .into_iter()
            .map(|i| {
                let t = &candidates[i];
                let mut entry = json!({
                    "name": t.definition.name,
                    "description": t.definition.description,
                });
                if let Some(ns) = &t.namespace {
                    entry["namespace"] = json!(ns.name);
                }
                entry
            })
            .collect();
        Value::Array(found).to_string()
    }

    fn in_namespace(&self, tool: &ToolListing, name: &str) -> bool {
        tool.namespace.as_ref().is_some_and(|ns| {
            let wanted = identifier(name);
            identifier(&ns.name) == wanted || ns.aliases.iter().any(|a| identifier(a) == wanted)
        })
    }

    /// `describeTool(name)`: the description, then the call's TypeScript declaration.
    pub fn describe(&self, name: &str) -> Option<String> {
        let tool = self.get(name)?;
        Some(declaration(tool))
    }

    /// `describeNamespace(name)`: `{name, description?, instructions?, tools}`.
    pub fn namespace_json(&self, name: &str) -> Option<String> {
        let members: Vec<&ToolListing> = self
            .tools
            .iter()
            .filter(|t| self.in_namespace(t, name))
            .collect();
        let namespace = members.first()?.namespace.as_ref()?;
        let mut value = json!({
            "name": namespace.name,
            "tools": members.iter().map(|t| &t.definition.name).collect::<Vec<_>>(),
        });
        if let Some(description) = &namespace.description {
            value["description"] = json!(description);
        }
        if let Some(instructions) = &namespace.instructions {
            value["instructions"] = json!(instructions);
        }
        Some(value.to_string())
    }
}

/// Whether `schema` is MCP's `CallToolResult` (an MCP tool's results), which declarations
/// name by the shared type rather than spell out.
pub(crate) fn is_call_tool_result(schema: &Value) -> bool {
    let property = |name: &str| schema.get("properties").and_then(|p| p.get(name));
    property("content").is_some() && property("structuredContent").is_some()
}

/// What a script's call of a tool with this output schema resolves to, as TypeScript.
fn returns(output_schema: Option<&Value>) -> String {
    match output_schema {
        Some(schema) if is_call_tool_result(schema) => "CallToolResult".to_owned(),
        Some(schema) => ts_type(schema, 0),
        None => "string".to_owned(),
    }
}

/// The same in a few words, for a declared tool's description: `a string`, the field names
/// of an object (`{ output, exit_code, full_output_path? }`), or the type on one line.
pub fn describe_output(output_schema: Option<&Value>) -> String {
    let properties = output_schema
        .filter(|schema| !is_call_tool_result(schema))
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    if let (Some(schema), Some(properties)) = (output_schema, properties) {
        let required = required(schema);
        let fields: Vec<String> = properties
            .keys()
            .map(|name| {
                if required.contains(&name.as_str()) {
                    name.clone()
                } else {
                    format!("{name}?")
                }
            })
            .collect();
        return format!("`{{ {} }}`", fields.join(", "));
    }
    match returns(output_schema).as_str() {
        "string" => "a string".to_owned(),
        other => format!(
            "`{}`",
            other.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    }
}

/// A tool's description and the TypeScript declaration of its call.
pub(crate) fn declaration(tool: &ToolListing) -> String {
    let returns = returns(tool.output_schema.as_ref());
    let id = identifier(&tool.definition.name);
    let heading = if id == tool.definition.name {
        String::new()
    } else {
        format!("(`{}`)\n", tool.definition.name)
    };
    format!(
        "{heading}{}\n```ts\ntools.{id}(args: {}): Promise<{returns}>\n```",
        tool.definition.description.trim(),
        ts_type(&tool.definition.parameters, 0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_become_typescript() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where"},
                "mode": {"enum": ["a", "b"]},
                "lines": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["path"]
        });
        assert_eq!(
            ts_type(&schema, 0),
            "{\n  path: string; // Where\n  mode?: \"a\" | \"b\";\n  lines?: number[];\n}"
        );
        assert_eq!(identifier("mcp__my-server__get.x"), "mcp__my_server__get_x");
        assert_eq!(identifier("9lives"), "_9lives");
    }
}
