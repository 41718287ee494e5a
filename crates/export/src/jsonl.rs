//! `/export file.jsonl`: the header and the current branch, re-chained into a line.

use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;

use crate::error::Result;

/// `session-<ISO time with : and . as ->.jsonl`, the reference's default name.
pub fn default_jsonl_name(iso_time: &str) -> String {
    format!("session-{}.jsonl", iso_time.replace([':', '.'], "-"))
}

/// The JSONL text of one branch: `header` (the caller gives it the export's timestamp),
/// then `branch` (root to leaf) with every `parentId` pointing at the entry before it, so
/// the file is a single line of conversation.
pub fn branch_jsonl(header: &SessionHeader, branch: &[&SessionEntry]) -> Result<String> {
    let mut out = serde_json::to_string(header)?;
    out.push('\n');
    let mut previous: Option<String> = None;
    for entry in branch {
        let mut value = serde_json::to_value(entry)?;
        if let Some(object) = value.as_object_mut()
            && object.contains_key("parentId")
        {
            object.insert(
                "parentId".to_owned(),
                previous.clone().map_or(serde_json::Value::Null, Into::into),
            );
        }
        out.push_str(&serde_json::to_string(&value)?);
        out.push('\n');
        previous = Some(entry.id().to_owned());
    }
    Ok(out)
}
