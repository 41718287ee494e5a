//! `models.json`: comments stripped, every problem of the schema collected with its dotted
//! path, and the providers kept as parsed JSON.

use std::path::Path;

use serde_json::Map;
use serde_json::Value;

use crate::error::AiError;

/// One provider entry of models.json, kept as parsed JSON so unknown keys survive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderConfig {
    pub raw: Map<String, Value>,
}

impl ProviderConfig {
    pub(super) fn str(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    pub fn api_key(&self) -> Option<&str> {
        self.str("apiKey")
    }

    pub fn auth_header(&self) -> bool {
        self.raw.get("authHeader").and_then(Value::as_bool) == Some(true)
    }

    pub(super) fn headers(&self) -> Option<&Map<String, Value>> {
        self.raw.get("headers").and_then(Value::as_object)
    }

    pub(super) fn compat(&self) -> Option<&Map<String, Value>> {
        self.raw.get("compat").and_then(Value::as_object)
    }

    pub(super) fn models(&self) -> &[Value] {
        self.raw
            .get("models")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    pub(super) fn overrides(&self) -> Option<&Map<String, Value>> {
        self.raw.get("modelOverrides").and_then(Value::as_object)
    }
}

/// Parsed `models.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    pub providers: Vec<(String, ProviderConfig)>,
}

/// Removes `//` and `/* */` comments and trailing commas outside strings.
pub fn strip_json_comments(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    let mut copy_from = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[copy_from..i]);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                copy_from = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[copy_from..i]);
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
                copy_from = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copy_from.min(text.len())..]);
    remove_trailing_commas(&out)
}

fn remove_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

fn schema_error(errors: &mut Vec<String>, path: &str, message: &str) {
    errors.push(format!("  - {path}: {message}"));
}

fn check_positive(errors: &mut Vec<String>, path: &str, value: Option<&Value>) {
    if let Some(v) = value
        && v.as_f64().is_none_or(|n| n <= 0.0)
    {
        schema_error(errors, path, "must be a number > 0");
    }
}

fn check_string(errors: &mut Vec<String>, path: &str, value: Option<&Value>, required: bool) {
    match value {
        Some(Value::String(s)) if !s.is_empty() => {}
        None if !required => {}
        None => schema_error(errors, path, "is required"),
        Some(_) => schema_error(errors, path, "must be a non-empty string"),
    }
}

fn check_model_fields(errors: &mut Vec<String>, path: &str, model: &Map<String, Value>) {
    if let Some(kind) = model.get("type")
        && !matches!(kind.as_str(), Some("chat" | "classifier"))
    {
        schema_error(
            errors,
            &format!("{path}.type"),
            "must be \"chat\" or \"classifier\"",
        );
    }
    for key in ["name", "api", "baseUrl"] {
        check_string(errors, &format!("{path}.{key}"), model.get(key), false);
    }
    check_positive(
        errors,
        &format!("{path}.contextWindow"),
        model.get("contextWindow"),
    );
    check_positive(errors, &format!("{path}.maxTokens"), model.get("maxTokens"));
    if let Some(v) = model.get("reasoning")
        && !v.is_boolean()
    {
        schema_error(errors, &format!("{path}.reasoning"), "must be a boolean");
    }
    if let Some(input) = model.get("input") {
        let ok = input.as_array().is_some_and(|items| {
            items
                .iter()
                .all(|i| matches!(i.as_str(), Some("text" | "image")))
        });
        if !ok {
            schema_error(
                errors,
                &format!("{path}.input"),
                "must be a list of \"text\" / \"image\"",
            );
        }
    }
    for key in [
        "headers",
        "compat",
        "cost",
        "thinkingLevelMap",
        "samplingParams",
    ] {
        if let Some(v) = model.get(key)
            && !v.is_object()
        {
            schema_error(errors, &format!("{path}.{key}"), "must be an object");
        }
    }
}

/// Parses and validates models.json text. Errors list every problem with a dotted path.
pub fn parse_models_json(text: &str, path: &Path) -> Result<ModelsConfig, AiError> {
    let value: Value =
        serde_json::from_str(&strip_json_comments(text)).map_err(|e| AiError::InvalidJson {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
    let mut errors = Vec::new();
    let Some(root) = value.as_object() else {
        return Err(AiError::InvalidModelsJson {
            path: path.display().to_string(),
            message: "the file must hold an object with \"providers\"".into(),
        });
    };
    let Some(providers) = root.get("providers").and_then(Value::as_object) else {
        return Err(AiError::InvalidModelsJson {
            path: path.display().to_string(),
            message: "\n  - providers: is required and must be an object".into(),
        });
    };
    let mut out = Vec::new();
    for (id, provider) in providers {
        let base = format!("providers.{id}");
        let Some(config) = provider.as_object() else {
            schema_error(&mut errors, &base, "must be an object");
            continue;
        };
        for key in ["name", "baseUrl", "apiKey", "api"] {
            check_string(
                &mut errors,
                &format!("{base}.{key}"),
                config.get(key),
                false,
            );
        }
        if let Some(v) = config.get("authHeader")
            && !v.is_boolean()
        {
            schema_error(
                &mut errors,
                &format!("{base}.authHeader"),
                "must be a boolean",
            );
        }
        for (index, model) in config
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let path = format!("{base}.models.{index}");
            match model.as_object() {
                Some(model) => {
                    check_string(&mut errors, &format!("{path}.id"), model.get("id"), true);
                    check_model_fields(&mut errors, &path, model);
                }
                None => schema_error(&mut errors, &path, "must be an object"),
            }
        }
        if let Some(overrides) = config.get("modelOverrides").and_then(Value::as_object) {
            for (model_id, patch) in overrides {
                let path = format!("{base}.modelOverrides.{model_id}");
                match patch.as_object() {
                    Some(patch) => check_model_fields(&mut errors, &path, patch),
                    None => schema_error(&mut errors, &path, "must be an object"),
                }
            }
        }
        out.push((
            id.clone(),
            ProviderConfig {
                raw: config.clone(),
            },
        ));
    }
    if !errors.is_empty() {
        return Err(AiError::InvalidModelsJson {
            path: path.display().to_string(),
            message: format!("\n{}", errors.join("\n")),
        });
    }
    Ok(ModelsConfig { providers: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas() {
        let text = "{\n // c\n \"a\": \"http://x//y\", /* b */ \"c\": [1, 2,],\n}";
        let value: Value = serde_json::from_str(&strip_json_comments(text)).unwrap();
        assert_eq!(value, serde_json::json!({"a": "http://x//y", "c": [1, 2]}));
    }

    #[test]
    fn schema_errors_have_paths() {
        let text = r#"{"providers": {"ollama": {"baseUrl": 5, "models": [{"name": "x", "maxTokens": 0}]}}}"#;
        let err = parse_models_json(text, Path::new("models.json")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("providers.ollama.baseUrl: must be a non-empty string"),
            "{text}"
        );
        assert!(
            text.contains("providers.ollama.models.0.id: is required"),
            "{text}"
        );
        assert!(
            text.contains("providers.ollama.models.0.maxTokens: must be a number > 0"),
            "{text}"
        );
    }
}
