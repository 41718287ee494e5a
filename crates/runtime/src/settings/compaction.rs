//! `compaction.*` token settings: unlike other keys (which read as their default with a
//! diagnostic), an invalid token value stops compaction with the reference's error, because
//! compacting with a budget the user did not ask for loses context they meant to keep.

use std::collections::BTreeMap;

use serde_json::Map;
use serde_json::Value;

use super::values::lookup;

/// JavaScript's `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `compaction.modelOverrides["provider/modelId"]`: values that win over the ordinary ones
/// for that model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompactionOverride {
    pub reserve_tokens: Option<u64>,
    pub keep_recent_tokens: Option<u64>,
}

/// What [`parse`] found: the overrides that are valid, and the error of the first value
/// that is not.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct ParsedCompaction {
    pub(super) overrides: BTreeMap<String, CompactionOverride>,
    pub(super) invalid: Option<String>,
}

const FIELDS: [&str; 2] = ["reserveTokens", "keepRecentTokens"];

/// Checks the token fields and reads the model overrides of the merged settings.
pub(super) fn parse(effective: &Map<String, Value>) -> ParsedCompaction {
    let mut parsed = ParsedCompaction::default();
    let fail = |message: String, parsed: &mut ParsedCompaction| {
        parsed.invalid.get_or_insert(message);
    };
    for field in FIELDS {
        if let Some(value) = lookup(effective, &format!("compaction.{field}"))
            && safe_count(value).is_none()
        {
            fail(invalid(&format!("compaction.{field}"), value), &mut parsed);
        }
    }
    let Some(overrides) = lookup(effective, "compaction.modelOverrides") else {
        return parsed;
    };
    let Some(overrides) = overrides.as_object() else {
        let message = format!(
            "Invalid compaction.modelOverrides setting: {overrides}. Expected an object keyed \
             by \"provider/modelId\"."
        );
        fail(message, &mut parsed);
        return parsed;
    };
    for (key, entry) in overrides {
        let name = format!("compaction.modelOverrides[{}]", Value::String(key.clone()));
        let Some(entry) = entry.as_object() else {
            let message = format!("Invalid {name} setting: {entry}. Expected an object.");
            fail(message, &mut parsed);
            continue;
        };
        let mut values = [None, None];
        for (slot, field) in values.iter_mut().zip(FIELDS) {
            match entry.get(field).filter(|v| !v.is_null()) {
                None => {}
                Some(value) => match safe_count(value) {
                    Some(count) => *slot = Some(count),
                    None => fail(invalid(&format!("{name}.{field}"), value), &mut parsed),
                },
            }
        }
        parsed.overrides.insert(
            key.clone(),
            CompactionOverride {
                reserve_tokens: values[0],
                keep_recent_tokens: values[1],
            },
        );
    }
    parsed
}

fn invalid(name: &str, value: &Value) -> String {
    format!("Invalid {name} setting: {value}. Expected a non-negative safe integer.")
}

/// A non-negative safe integer (`5` and `5.0` alike, as in JavaScript).
fn safe_count(value: &Value) -> Option<u64> {
    if let Some(count) = value.as_u64() {
        return (count as f64 <= MAX_SAFE_INTEGER).then_some(count);
    }
    let number = value.as_f64()?;
    (number >= 0.0 && number.fract() == 0.0 && number <= MAX_SAFE_INTEGER).then_some(number as u64)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn parsed(value: Value) -> ParsedCompaction {
        parse(value.as_object().unwrap())
    }

    #[test]
    fn overrides_are_read_per_model_key() {
        let result = parsed(json!({"compaction": {"modelOverrides": {
            "openrouter/anthropic/claude": {"reserveTokens": 1000},
            "p/m": {"keepRecentTokens": 5.0}
        }}}));
        assert_eq!(result.invalid, None);
        assert_eq!(
            result.overrides["openrouter/anthropic/claude"].reserve_tokens,
            Some(1000)
        );
        assert_eq!(result.overrides["p/m"].keep_recent_tokens, Some(5));
        assert_eq!(result.overrides["p/m"].reserve_tokens, None);
    }

    #[test]
    fn invalid_values_name_the_setting() {
        let result = parsed(json!({"compaction": {"reserveTokens": -1}}));
        assert_eq!(
            result.invalid.as_deref(),
            Some(
                "Invalid compaction.reserveTokens setting: -1. Expected a non-negative safe integer."
            )
        );
        let result =
            parsed(json!({"compaction": {"modelOverrides": {"p/m": {"keepRecentTokens": 1.5}}}}));
        assert_eq!(
            result.invalid.as_deref(),
            Some(
                "Invalid compaction.modelOverrides[\"p/m\"].keepRecentTokens setting: 1.5. \
                 Expected a non-negative safe integer."
            )
        );
        let result = parsed(json!({"compaction": {"modelOverrides": {"p/m": 3}}}));
        assert_eq!(
            result.invalid.as_deref(),
            Some("Invalid compaction.modelOverrides[\"p/m\"] setting: 3. Expected an object.")
        );
        let result = parsed(json!({"compaction": {"keepRecentTokens": 9007199254740992u64}}));
        assert!(result.invalid.is_some());
    }
}
