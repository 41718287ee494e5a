//! When an OAuth login in `auth.json` counts as expired.

use serde_json::Map;
use serde_json::Value;

/// Whether an OAuth credential's `expires` (epoch milliseconds) has passed (one without it
/// never has, as in the reference).
pub(super) fn expired(credentials: &Map<String, Value>) -> bool {
    expires_within(credentials, 0.0)
}

/// Whether the credential lapses within `margin_ms` from now.
pub(super) fn expires_within(credentials: &Map<String, Value>, margin_ms: f64) -> bool {
    let now = crate::oauth::now_ms();
    // As the reference compares, `Date.now() >= creds.expires` with JavaScript's coercion:
    // a missing or non-numeric `expires` (undefined, NaN) never counts as expired, so the
    // stored access token is used as it is; `null` counts as 0, long past.
    let expires = match credentials.get("expires") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(text)) => text.trim().parse::<f64>().ok(),
        Some(Value::Null) => Some(0.0),
        _ => None,
    };
    expires.is_some_and(|expires| now + margin_ms >= expires)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_read_as_the_reference_compares_it() {
        let with = |expires: Option<Value>| {
            let mut map = Map::new();
            if let Some(value) = expires {
                map.insert("expires".to_owned(), value);
            }
            expired(&map)
        };
        assert!(!with(None), "no expires: never expired");
        assert!(!with(Some(Value::from("soon"))), "NaN: never expired");
        assert!(with(Some(Value::Null)), "null counts as 0");
        assert!(with(Some(Value::from(1))));
        assert!(
            with(Some(Value::from("1"))),
            "a number in a string is a number"
        );
        assert!(!with(Some(Value::from(crate::oauth::now_ms() + 60_000.0))));
    }
}
