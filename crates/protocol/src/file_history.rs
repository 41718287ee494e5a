//! `<agentDir>/file-history/<session id>/index.json`, the index of the backups `/undo`
//! restores from (`spec/sessions-extra.md` §10).

use indexmap::IndexMap;

use crate::wire_struct;

wire_struct! {
    /// One tracked file of a checkpoint: its absolute path and the backup's file name, or
    /// `None` when the file did not exist (it is deleted on restore).
    pub struct FileRecord {
        req "path" path: String,
        req "backup" backup: Option<String>,
    }
}

wire_struct! {
    /// What one user turn changed: files by key, and whether a shell command ran or a
    /// backup could not be made (neither can be undone).
    pub struct Checkpoint {
        req "files" files: IndexMap<String, FileRecord>,
        opt "shellRan" shell_ran: Option<bool>,
        opt "failed" failed: Option<bool>,
    }
}

wire_struct! {
    /// `index.json`: checkpoints by the id of the user message that started the turn.
    pub struct Index {
        req "version" version: u32,
        req "checkpoints" checkpoints: IndexMap<String, Checkpoint>,
    }
}

impl Index {
    pub fn new() -> Self {
        Self {
            version: 1,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_in_insertion_order_with_unknown_keys() {
        let json = r#"{"version":1,"checkpoints":{"b":{"files":{"/z":{"path":"/z","backup":null},"/a":{"path":"/a","backup":"x@b"}},"shellRan":true,"later":1},"a":{"files":{},"failed":true}}}"#;
        let index: Index = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&index).unwrap(), json);
    }
}
