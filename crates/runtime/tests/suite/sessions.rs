//! The session library: renaming and deleting session files through the one store, with
//! the open session and sessions owned elsewhere protected.

use crate::common;

use std::sync::Arc;

use knightcode_runtime::hooks::NoSessionHooks;
use knightcode_runtime::sessions::DELETE_CURRENT;
use knightcode_session::NewSession;
use knightcode_session::SessionStore;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::TestSession;

/// A saved session file of its own (one user message and reply) in `dir`.
fn saved_session(dir: &std::path::Path, cwd: &std::path::Path) -> std::path::PathBuf {
    let store = SessionStore::default();
    let mut other = store.create(dir, cwd, NewSession::default()).unwrap();
    other
        .append_message(knightcode_protocol::AgentMessage::user(
            "other",
            knightcode_protocol::Millis(1),
        ))
        .unwrap();
    other
        .append_message(knightcode_protocol::AgentMessage::Assistant(Box::default()))
        .unwrap();
    let path = other.session_file().unwrap().to_path_buf();
    other.close();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_refuses_the_open_session_and_removes_another() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let mut session = test.start(Arc::new(NoSessionHooks)).await;
    session.prompt("hello", Vec::new()).await.unwrap();
    let library = session.library();
    let current = library.current_file().unwrap();
    let error = library.delete(&current).unwrap_err();
    assert_eq!(error.to_string(), DELETE_CURRENT);
    assert!(current.exists());

    let other = saved_session(current.parent().unwrap(), &test.project);
    library.rename(&other, "renamed elsewhere").unwrap();
    let listed = library.list(current.parent().unwrap(), None);
    assert!(
        listed
            .iter()
            .any(|s| s.path == other && s.name.as_deref() == Some("renamed elsewhere"))
    );
    library.delete(&other).unwrap();
    assert!(!other.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_another_owner_holds_is_refused() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let mut session = test.start(Arc::new(NoSessionHooks)).await;
    session.prompt("hello", Vec::new()).await.unwrap();
    let library = session.library();
    let dir = library
        .current_file()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let other = saved_session(&dir, &test.project);
    // Another owner (its own store and ownership registry) has the file open.
    let elsewhere = SessionStore::default();
    let held = elsewhere.open(&other, &test.project).unwrap();
    let error = library.delete(&other).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("in use by another knightcode process"),
        "{error}"
    );
    assert!(other.exists());
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renaming_the_open_session_names_it() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("hi")],
    )
    .await;
    let mut session = test.start(Arc::new(NoSessionHooks)).await;
    session.prompt("hello", Vec::new()).await.unwrap();
    let library = session.library();
    let current = library.current_file().unwrap();
    library.rename(&current, "my work").unwrap();
    assert_eq!(library.session_name().as_deref(), Some("my work"));
    assert!(library.with_tree(|tree| tree.len()).unwrap() > 0);
}
