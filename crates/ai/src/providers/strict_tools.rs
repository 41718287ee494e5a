//! Strict JSON-schema tools: a tool whose declaration asks for JSON-schema constrained
//! sampling (`constrainedSampling: {type: "json_schema", strict: "prefer" | "require"}`) is
//! sent with `strict: true` and its schema rewritten to the subset strict mode accepts, where
//! the provider supports strict tools (the model's compat says so), as the reference does.
//! A schema strict mode cannot express leaves a `prefer` tool as it was and fails the
//! request of a `require` one; so does a provider without strict tools.

use knightcode_protocol::ConstrainedSampling;
use knightcode_protocol::SamplingConfig;
use knightcode_protocol::ToolDeclaration;
use serde_json::Value;
use serde_json::json;

use crate::error::StreamFailure;

/// Keywords strict mode rejects wherever they appear.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
];

/// Why a schema has no strict form (the reference's wording, which a `require` tool's
/// failure quotes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotStrict {
    RootNotObject,
    BooleanSchema,
    Keyword(&'static str),
    EmptyAnyOf,
    StructuredUnion,
    Tuple,
    PropertiesWithoutObject,
    OpenObject,
    PropertiesNotMap,
    RequiredNotStrings,
    UnknownRequired,
}

impl std::fmt::Display for NotStrict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::RootNotObject => f.write_str("root schema must have type object"),
            Self::BooleanSchema => f.write_str("boolean schemas are unsupported"),
            Self::Keyword(key) => write!(f, "{key} schemas are unsupported"),
            Self::EmptyAnyOf => f.write_str("anyOf must contain at least one schema"),
            Self::StructuredUnion => f.write_str("object and array unions are unsupported"),
            Self::Tuple => f.write_str("tuple schemas are unsupported"),
            Self::PropertiesWithoutObject => f.write_str("properties require type object"),
            Self::OpenObject => {
                f.write_str("schema-valued or true additionalProperties is unsupported")
            }
            Self::PropertiesNotMap => f.write_str("object properties must be a schema map"),
            Self::RequiredNotStrings => f.write_str("object required must be a string array"),
            Self::UnknownRequired => f.write_str("required contains an unknown property"),
        }
    }
}

/// Whether `tool` is sent in strict mode: `Some(true)` when it asks for JSON-schema
/// sampling and gets it, `None` when it does not ask or a `prefer` cannot have it.
pub(crate) fn strict_sampling(
    tool: &ToolDeclaration,
    supported: bool,
) -> Result<Option<bool>, StreamFailure> {
    let Some(ConstrainedSampling::Config(SamplingConfig::JsonSchema(config))) =
        &tool.constrained_sampling
    else {
        return Ok(None);
    };
    let required = config.strict == "require";
    let refused = |why: &str| {
        StreamFailure::other(format!(
            "Tool \"{}\" requires JSON-schema constrained sampling, but {why}.",
            tool.name
        ))
    };
    if !supported {
        return if required {
            Err(refused("strict tools are unsupported"))
        } else {
            Ok(None)
        };
    }
    match strict_schema(&tool.parameters) {
        Ok(_) => Ok(Some(true)),
        Err(_) if !required => Ok(None),
        Err(why) => Err(refused(&why.to_string())),
    }
}

/// The schema a tool is sent with: the strict form when `strict`, else its own.
pub(crate) fn parameters(tool: &ToolDeclaration, strict: Option<bool>) -> Value {
    if strict == Some(true) {
        // `strict_sampling` already converted it once; it cannot fail now.
        if let Ok(schema) = strict_schema(&tool.parameters) {
            return schema;
        }
    }
    tool.parameters.clone()
}

/// `schema` in the subset strict mode accepts: every object closed (`additionalProperties:
/// false`) with all its properties required, an optional one made nullable instead; or why
/// it cannot be.
pub(crate) fn strict_schema(schema: &Value) -> Result<Value, NotStrict> {
    let mut out = schema.clone();
    if !out.is_object() {
        return Err(NotStrict::RootNotObject);
    }
    make_strict(&mut out)?;
    if out.get("type").and_then(Value::as_str) != Some("object") {
        return Err(NotStrict::RootNotObject);
    }
    Ok(out)
}

fn make_strict(schema: &mut Value) -> Result<(), NotStrict> {
    let Some(node) = schema.as_object_mut() else {
        return Err(NotStrict::BooleanSchema);
    };
    if let Some(key) = UNSUPPORTED_KEYWORDS
        .iter()
        .copied()
        .find(|k| node.contains_key(*k))
    {
        return Err(NotStrict::Keyword(key));
    }
    if let Some(any_of) = node.get_mut("anyOf") {
        let variants = any_of
            .as_array_mut()
            .filter(|v| !v.is_empty())
            .ok_or(NotStrict::EmptyAnyOf)?;
        for variant in variants {
            if is_structured(variant) {
                return Err(NotStrict::StructuredUnion);
            }
            make_strict(variant)?;
        }
    }
    if let Some(items) = node.get_mut("items") {
        if items.is_array() {
            return Err(NotStrict::Tuple);
        }
        make_strict(items)?;
    }
    let is_object = node.get("type").and_then(Value::as_str) == Some("object");
    if node.contains_key("properties") && !is_object {
        return Err(NotStrict::PropertiesWithoutObject);
    }
    if !is_object {
        return Ok(());
    }
    if node
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
    {
        return Err(NotStrict::OpenObject);
    }
    let required: Vec<String> = match node.get("required") {
        None => Vec::new(),
        Some(Value::Array(keys)) => keys
            .iter()
            .map(|k| k.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or(NotStrict::RequiredNotStrings)?,
        Some(_) => return Err(NotStrict::RequiredNotStrings),
    };
    let names: Vec<String> = match node.get("properties") {
        None => Vec::new(),
        Some(Value::Object(properties)) => properties.keys().cloned().collect(),
        Some(_) => return Err(NotStrict::PropertiesNotMap),
    };
    if required.iter().any(|k| !names.contains(k)) {
        return Err(NotStrict::UnknownRequired);
    }
    // In place, so the keys keep their order (the request body is compared byte for byte).
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for (key, property) in properties.iter_mut() {
            make_strict(property)?;
            if !required.contains(key) && !allows_null(property) {
                *property = json!({"anyOf": [property.take(), {"type": "null"}]});
            }
        }
    }
    node.insert(
        "required".into(),
        Value::Array(names.into_iter().map(Value::String).collect()),
    );
    node.insert("additionalProperties".into(), Value::Bool(false));
    Ok(())
}

fn is_structured(schema: &Value) -> bool {
    let Some(node) = schema.as_object() else {
        return false;
    };
    let has_type = |t: &str| match node.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(types)) => types.iter().any(|v| v == t),
        _ => false,
    };
    has_type("object")
        || has_type("array")
        || node.contains_key("properties")
        || node.contains_key("items")
}

fn allows_null(schema: &Value) -> bool {
    let Some(node) = schema.as_object() else {
        return false;
    };
    match node.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if node.get("const") == Some(&Value::Null)
        || node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
    {
        return true;
    }
    node.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|variants| variants.iter().any(allows_null))
}
