//! Session ids, entry ids, timestamps and the clock they come from.

use std::collections::HashMap;

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;

use crate::error::Result;
use crate::error::SessionError;

pub use knightcode_clock::Clock;
pub use knightcode_clock::SystemClock;

/// The clock's wall time as a UTC date (entry and header timestamps).
pub fn now(clock: &dyn Clock) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(clock.now_ms()).unwrap_or_default()
}

/// `Date.prototype.toISOString()` format: `2024-12-03T14:00:00.000Z`.
pub fn iso_timestamp(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A new session id (UUIDv7: sortable by creation time).
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Checks a caller-supplied session id: `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub fn validate_session_id(id: &str) -> Result<()> {
    let bytes = id.as_bytes();
    let inner_ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let valid = match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes.iter().all(inner_ok)
        }
        _ => false,
    };
    if valid {
        Ok(())
    } else {
        Err(SessionError::InvalidSessionId { id: id.to_owned() })
    }
}

/// How many random 8-hex ids to try before falling back to a full UUID.
const ENTRY_ID_ATTEMPTS: usize = 100;

/// A new entry id: the first 8 hex digits of a random UUID, unique within `existing`.
pub fn new_entry_id<K, V>(existing: &HashMap<K, V>) -> String
where
    K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
{
    for _ in 0..ENTRY_ID_ATTEMPTS {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        let short = &uuid[..8];
        if !existing.contains_key(short) {
            return short.to_owned();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// The file-name form of a timestamp: `:` and `.` replaced by `-`.
pub fn file_timestamp(iso: &str) -> String {
    iso.replace([':', '.'], "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_id_rules() {
        for ok in ["a", "abc", "a.b-c_d", "0192abcd-ef"] {
            assert!(validate_session_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a b", "a/b", "é"] {
            assert!(validate_session_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn entry_ids_are_short_hex_and_unique() {
        let mut seen: HashMap<String, ()> = HashMap::new();
        for _ in 0..1000 {
            let id = new_entry_id(&seen);
            assert_eq!(id.len(), 8);
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(seen.insert(id, ()).is_none());
        }
    }

    #[test]
    fn iso_matches_javascript() {
        let time = DateTime::parse_from_rfc3339("2024-12-03T14:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(iso_timestamp(time), "2024-12-03T14:00:00.000Z");
        assert_eq!(
            file_timestamp("2024-12-03T14:00:00.000Z"),
            "2024-12-03T14-00-00-000Z"
        );
    }
}
