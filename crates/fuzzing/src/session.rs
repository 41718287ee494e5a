//! The session loader: read-only load, then opening as the owner (torn-tail repair, a
//! missing final newline, format migration and its rewrite), context building, and a
//! second load of the repaired file.

use std::path::Path;
use std::sync::Arc;

use knightcode_session::LockOptions;
use knightcode_session::SessionStore;
use knightcode_session::SystemClock;

pub(crate) fn run(scratch: &Path, data: &[u8]) {
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
