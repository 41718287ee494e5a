//! The session loader: bytes through the reader (torn tail, damaged lines, a missing final
//! newline), format migration, the tree (orphans re-attached) and context building; and,
//! for one input in eight (the first byte, a control byte, is a multiple of 8), the whole
//! owning open from a file: repair on disk, migration's rewrite, then a second load of the
//! repaired file. The file path costs a hundred times the in-memory one.

use std::path::Path;
use std::sync::Arc;

use knightcode_session::LockOptions;
use knightcode_session::SessionStore;
use knightcode_session::SystemClock;
use knightcode_session::load::load_bytes;
use knightcode_session::migrate::migrate;
use knightcode_session::tree::SessionTree;

pub(crate) fn run(scratch: &Path, data: &[u8]) {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    in_memory(body);
    if control % 8 == 0 {
        on_disk(scratch, body);
    }
}

fn in_memory(data: &[u8]) {
    let Ok(Some(loaded)) = load_bytes(Path::new("session.jsonl"), data.to_vec()) else {
        return;
    };
    let (mut header, mut entries, mut warnings) = (loaded.header, loaded.entries, loaded.warnings);
    migrate(&mut header, &mut entries);
    let tree = SessionTree::from_entries(entries, &mut warnings);
    let context = knightcode_session::context::build_session_context(&tree, tree.leaf());
    let _ = context.system.prompt_text();
    let _ = knightcode_session::context::build_projection(&tree, tree.leaf());
}

fn on_disk(scratch: &Path, data: &[u8]) {
    let dir = scratch.join("session");
    // A fresh folder per input: repair leaves `.torn` files and locks beside the session.
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let path = dir.join("session.jsonl");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let store = SessionStore::new(Arc::new(SystemClock::new()), LockOptions::default());
    if let Ok(manager) = store.open_read_only(&path) {
        exercise(&manager);
    }
    let opened = match store.open(&path, &dir) {
        Ok(mut manager) => {
            exercise(&manager);
            manager.close();
            true
        }
        Err(_) => false,
    };
    if opened {
        // What the owner repaired and rewrote must load again: that is what `--continue`
        // reads next.
        let again = store.open_read_only(&path);
        assert!(
            again.is_ok(),
            "a session that opened does not load after its repair: {:?}",
            again.err()
        );
    }
}

fn exercise(manager: &knightcode_session::SessionManager) {
    let context = manager.build_context();
    let _ = context.system.prompt_text();
    let _ = manager.projection();
    let _ = manager.forest();
    let _ = manager.session_name();
    for entry in manager.entries() {
        let _ = knightcode_session::context::entry_message(entry);
    }
}
