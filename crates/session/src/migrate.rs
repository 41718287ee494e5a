//! Format migrations v1 -> v2 -> v3, applied in memory. Only an owning open writes the result
//! back (to a new file renamed over the old one); read-only opens migrate in memory only.

use std::collections::HashMap;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::CURRENT_SESSION_VERSION;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;

use crate::ids::new_entry_id;

/// Brings `entries` to the current format. Returns true if anything changed.
pub fn migrate(header: &mut SessionHeader, entries: &mut [SessionEntry]) -> bool {
    let version = header.format_version();
    if version >= CURRENT_SESSION_VERSION {
        return false;
    }
    if version < 2 {
        migrate_v1_to_v2(entries);
    }
    migrate_v2_to_v3(entries);
    header.version = Some(CURRENT_SESSION_VERSION);
    true
}

/// v1 files are a linear list without ids: give each entry a fresh id and chain it to the
/// previous one; compaction `firstKeptEntryIndex` (a file index counting the header) becomes
/// `firstKeptEntryId`.
fn migrate_v1_to_v2(entries: &mut [SessionEntry]) {
    let mut taken: HashMap<String, ()> = HashMap::with_capacity(entries.len());
    let ids: Vec<String> = entries
        .iter()
        .map(|_| {
            let id = new_entry_id(&taken);
            taken.insert(id.clone(), ());
            id
        })
        .collect();
    let mut previous: Option<String> = None;
    for (entry, id) in entries.iter_mut().zip(&ids) {
        entry.set_id(id);
        entry.set_parent_id(previous.replace(id.clone()).as_deref());
        let index = compaction_kept_index(entry);
        match entry {
            SessionEntry::Compaction(compaction) => {
                compaction.extra.shift_remove("firstKeptEntryIndex");
                if let Some(kept) = index
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| ids.get(i))
                {
                    compaction.first_kept_entry_id = kept.clone();
                }
            }
            SessionEntry::Unknown(map) if index.is_some() => {
                map.shift_remove("firstKeptEntryIndex");
                if let Some(kept) = index
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| ids.get(i))
                {
                    map.insert(
                        "firstKeptEntryId".to_owned(),
                        serde_json::Value::String(kept.clone()),
                    );
                }
            }
            _ => {}
        }
    }
}

fn compaction_kept_index(entry: &SessionEntry) -> Option<usize> {
    let value = match entry {
        SessionEntry::Compaction(compaction) => compaction.extra.get("firstKeptEntryIndex"),
        SessionEntry::Unknown(map)
            if map.get("type").and_then(|t| t.as_str()) == Some("compaction") =>
        {
            map.get("firstKeptEntryIndex")
        }
        _ => None,
    }?;
    value.as_u64().and_then(|i| usize::try_from(i).ok())
}

/// v3 renamed the `hookMessage` role to `custom`.
fn migrate_v2_to_v3(entries: &mut [SessionEntry]) {
    for entry in entries {
        let SessionEntry::Message(message_entry) = entry else {
            continue;
        };
        let AgentMessage::Unknown(map) = &message_entry.message else {
            continue;
        };
        if map.get("role").and_then(|r| r.as_str()) != Some("hookMessage") {
            continue;
        }
        let mut renamed = (**map).clone();
        renamed.insert(
            "role".to_owned(),
            serde_json::Value::String("custom".to_owned()),
        );
        let value = serde_json::Value::Object(renamed);
        message_entry.message = serde_json::from_value(value.clone()).unwrap_or_else(|_| {
            AgentMessage::Unknown(Box::new(value.as_object().cloned().unwrap_or_default()))
        });
    }
}
