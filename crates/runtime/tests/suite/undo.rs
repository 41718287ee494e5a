//! File history through the session actor (`spec/sessions-extra.md` §10): `edit` and `write`
//! back files up once per file per turn, a move back with `restore_files` puts them back
//! byte for byte and deletes created files, and the rest of the rules.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::Running;
use common::TestSession;
use knightcode_ai::MapEnv;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::file_history::RestoreReport;
use knightcode_runtime::file_history::index;
use knightcode_runtime::file_history::undo;
use knightcode_runtime::hooks::NoSessionHooks;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

fn write_call(id: &str, path: &str, content: &str) -> ScriptedReply {
    let args = serde_json::json!({ "path": path, "content": content });
    ScriptedReply::tool_call(id, "write", args.to_string())
}

fn edit_call(id: &str, path: &str, old: &str, new: &str) -> ScriptedReply {
    let args = serde_json::json!({ "path": path, "edits": [{ "oldText": old, "newText": new }] });
    ScriptedReply::tool_call(id, "edit", args.to_string())
}

fn bash_call(id: &str, command: &str) -> ScriptedReply {
    let args = serde_json::json!({ "command": command });
    ScriptedReply::tool_call(id, "bash", args.to_string())
}

fn user_id(entries: &[SessionEntry], text: &str) -> String {
    entries
        .iter()
        .find_map(|e| match e.message() {
            Some(AgentMessage::User(u)) if u.content.text() == text => Some(e.id().to_owned()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no user message {text:?}"))
}

/// The id of the last entry of the file (the reply that ended a turn).
fn last_id(entries: &[SessionEntry]) -> String {
    entries.last().unwrap().id().to_owned()
}

async fn view(run: &Running) -> knightcode_runtime::agent_session::operations::SessionView {
    match run.handle.request(Command::Snapshot).await {
        Reply::Snapshot(snapshot) => snapshot.view,
        other => panic!("{other:?}"),
    }
}

async fn navigate(run: &mut Running, entry_id: &str, restore_files: bool) -> Reply {
    let tag = run.send(Command::NavigateTree {
        entry_id: Some(entry_id.to_owned()),
        summary: None,
        label: None,
        restore_files,
    });
    run.reply(tag).await
}

/// Original bytes that a text round trip would change: CRLF, no final newline, a BOM.
const ORIGINAL: &[u8] = b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma";

/// Turn one edits `a.txt` and writes it; turn two edits it again and creates `new/b.txt`.
fn two_turns() -> Vec<ScriptedReply> {
    vec![
        edit_call("e1", "a.txt", "beta", "BETA"),
        write_call("w1", "a.txt", "rewritten in turn one\n"),
        ScriptedReply::text("turn one done"),
        edit_call("e2", "a.txt", "turn one", "turn two"),
        write_call("w2", "new/b.txt", "created\n"),
        ScriptedReply::text("turn two done"),
    ]
}

async fn two_turns_run(test: TestSession) -> Running {
    std::fs::write(test.project.join("a.txt"), ORIGINAL).unwrap();
    let mut run = Running::spawn(test).await;
    run.prompt("first turn").await;
    run.prompt("second turn").await;
    assert_eq!(
        std::fs::read_to_string(run.test.project.join("a.txt")).unwrap(),
        "rewritten in turn two\n"
    );
    assert!(run.test.project.join("new/b.txt").exists());
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_to_the_first_turn_puts_files_back_byte_for_byte_and_deletes_created_ones() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, two_turns()).await;
    let mut run = two_turns_run(test).await;
    let entries = run.entries().await;
    let first = user_id(&entries, "first turn");
    let second = user_id(&entries, "second turn");

    // The index: one backup of a.txt per turn (not two in turn one), b.txt "did not exist".
    let view = view(&run).await;
    let session_id = view.state(false).session_id;
    let dir = index::history_root(&run.test.agent_dir).join(&session_id);
    let saved = index::load(&dir).unwrap();
    let a = run.test.project.join("a.txt");
    let a_key = index::file_key(&a);
    assert_eq!(saved.checkpoints.len(), 2);
    let turn_one = &saved.checkpoints[&first];
    assert_eq!(turn_one.files.len(), 1);
    let backup = turn_one.files[&a_key].backup.clone().unwrap();
    assert_eq!(backup, index::backup_name(&a_key, &first));
    assert_eq!(std::fs::read(dir.join(&backup)).unwrap(), ORIGINAL);
    let turn_two = &saved.checkpoints[&second];
    let b_key = index::file_key(&run.test.project.join("new/b.txt"));
    assert_eq!(turn_two.files[&b_key].backup, None);
    assert!(!dir.join("index.json.tmp").exists());

    // What /undo lists: newest at the bottom, with the files an undo to each restores.
    let points = view.undo_points();
    let listed: Vec<(&str, usize)> = points.iter().map(|p| (p.text.as_str(), p.files)).collect();
    assert_eq!(listed, [("first turn", 2), ("second turn", 2)]);

    let plan = view.restore_plan(Some(&first));
    assert_eq!(plan.files.len(), 2);
    assert_eq!(undo::restore_option(&plan), "Conversation and 2 files");

    let reply = navigate(&mut run, &first, true).await;
    assert_eq!(
        reply,
        Reply::Navigated {
            text: Some("first turn".to_owned()),
            restored: Some(RestoreReport {
                restored: 2,
                failed: Vec::new()
            }),
        }
    );
    assert_eq!(std::fs::read(&a).unwrap(), ORIGINAL);
    assert!(!run.test.project.join("new/b.txt").exists());
    assert_eq!(
        undo::restored_notice(&RestoreReport {
            restored: 2,
            failed: Vec::new()
        }),
        "Restored 2 files"
    );
}

/// A restore writes beside the file and renames over it (a crash leaves the old bytes or the
/// restored ones); through a link it restores the file the link points at and keeps the link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_through_a_link_keeps_the_link_and_leaves_nothing_beside_the_file() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, two_turns()).await;
    let real = test.project.join("real.txt");
    std::fs::write(&real, ORIGINAL).unwrap();
    std::os::unix::fs::symlink("real.txt", test.project.join("a.txt")).unwrap();
    let mut run = Running::spawn(test).await;
    run.prompt("first turn").await;
    run.prompt("second turn").await;
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "rewritten in turn two\n"
    );
    let first = user_id(&run.entries().await, "first turn");
    navigate(&mut run, &first, true).await;
    let link = run.test.project.join("a.txt");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), ORIGINAL);
    let mut names: Vec<_> = std::fs::read_dir(&run.test.project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // `new/` held the deleted `b.txt`; no restore's copy is left beside the files.
    assert_eq!(names, ["a.txt", "new", "real.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversation_only_leaves_files_as_they_are() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, two_turns()).await;
    let mut run = two_turns_run(test).await;
    let second = user_id(&run.entries().await, "second turn");
    let reply = navigate(&mut run, &second, false).await;
    assert_eq!(
        reply,
        Reply::Navigated {
            text: Some("second turn".to_owned()),
            restored: None,
        }
    );
    assert_eq!(
        std::fs::read_to_string(run.test.project.join("a.txt")).unwrap(),
        "rewritten in turn two\n"
    );
    assert!(run.test.project.join("new/b.txt").exists());
    // Going back further later restores only what the branch we are on did: turn one.
    let first = user_id(&run.entries().await, "first turn");
    let plan = view(&run).await.restore_plan(Some(&first));
    assert_eq!(plan.files.len(), 1, "{plan:?}");
    navigate(&mut run, &first, true).await;
    assert_eq!(
        std::fs::read(run.test.project.join("a.txt")).unwrap(),
        ORIGINAL
    );
    // b.txt was made on the abandoned branch: not tracked from here.
    assert!(run.test.project.join("new/b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sideways_tree_jump_restores_to_the_fork_point_without_replaying_the_target() {
    let replies = vec![
        ScriptedReply::text("base done"),
        write_call("w1", "a.txt", "branch one\n"),
        ScriptedReply::text("branch one done"),
        write_call("w2", "a.txt", "branch two\n"),
        write_call("w3", "b.txt", "made on branch two\n"),
        ScriptedReply::text("branch two done"),
    ];
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
    std::fs::write(test.project.join("a.txt"), "fork point\n").unwrap();
    let mut run = Running::spawn(test).await;
    run.prompt("base").await;
    let base_reply = last_id(&run.entries().await);
    run.prompt("branch one").await;
    let branch_one_end = last_id(&run.entries().await);
    // Back to after "base", files too: a.txt is at the fork point again.
    let reply = navigate(&mut run, &base_reply, true).await;
    assert!(
        matches!(
            reply,
            Reply::Navigated {
                restored: Some(_),
                ..
            }
        ),
        "{reply:?}"
    );
    run.prompt("branch two").await;
    let a = run.test.project.join("a.txt");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "branch two\n");

    // Sideways to the end of branch one: branch two's changes go, branch one's do not come back.
    let plan = view(&run).await.restore_plan(Some(&branch_one_end));
    assert_eq!(plan.files.len(), 2, "{plan:?}");
    let reply = navigate(&mut run, &branch_one_end, true).await;
    assert_eq!(
        reply,
        Reply::Navigated {
            text: None,
            restored: Some(RestoreReport {
                restored: 2,
                failed: Vec::new()
            }),
        }
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "fork point\n");
    assert!(!run.test.project.join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_commands_and_failed_calls() {
    let replies = vec![
        bash_call("b1", "true"),
        // Fails (no such file): its "did not exist" record is forgotten.
        edit_call("e1", "missing.txt", "x", "y"),
        write_call("w1", "made.txt", "made\n"),
        ScriptedReply::text("done"),
    ];
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
    let mut run = Running::spawn(test).await;
    run.prompt("shell turn").await;
    let turn = user_id(&run.entries().await, "shell turn");
    let plan = view(&run).await.restore_plan(Some(&turn));
    assert!(plan.shell_ran);
    let paths: Vec<&Path> = plan.files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(paths, [run.test.project.join("made.txt").as_path()]);
    assert_eq!(
        undo::restore_option(&plan),
        "Conversation and 1 file (shell commands ran; their changes are not tracked)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_shell_command_marks_the_turn() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .await;
    let mut run = Running::spawn(test).await;
    run.prompt("talk").await;
    let tag = run.send(Command::Bash {
        command: "true".to_owned(),
        exclude_from_context: false,
        id: None,
    });
    run.reply(tag).await;
    let turn = user_id(&run.entries().await, "talk");
    let plan = view(&run).await.restore_plan(Some(&turn));
    assert!(plan.shell_ran && plan.files.is_empty(), "{plan:?}");
    assert_eq!(
        undo::untracked_warning(&plan).as_deref(),
        Some("No files to restore: shell commands ran; their changes are not tracked.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_backup_is_reported() {
    let replies = vec![
        write_call("w1", "a.txt", "changed\n"),
        write_call("w2", "c.txt", "created\n"),
        ScriptedReply::text("done"),
    ];
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
    std::fs::write(test.project.join("a.txt"), "original\n").unwrap();
    // The session's history folder cannot be made: a file is in its place.
    let root = index::history_root(&test.agent_dir);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("fixed-session"), "in the way").unwrap();
    let mut setup = test.setup();
    setup.target = knightcode_runtime::SessionTarget::New {
        dir: test.agent_dir.join("sessions"),
        session_id: Some("fixed-session".to_owned()),
    };
    let services = test.services(Arc::new(NoSessionHooks));
    let (session, events) = knightcode_runtime::AgentSession::start_with(setup, services)
        .await
        .unwrap();
    let (handle, stream) = session.spawn(events);
    let mut run = Running::from_parts(test, handle, stream);
    run.prompt("turn").await;
    let turn = user_id(&run.entries().await, "turn");
    let plan = view(&run).await.restore_plan(Some(&turn));
    assert!(plan.failed);
    assert_eq!(plan.files.len(), 1, "only the created file: {plan:?}");
    assert_eq!(
        undo::restore_option(&plan),
        "Conversation and 1 file (some files could not be backed up)"
    );
    let reply = navigate(&mut run, &turn, true).await;
    assert!(
        matches!(&reply, Reply::Navigated { restored: Some(r), .. } if r.restored == 1),
        "{reply:?}"
    );
    assert!(!run.test.project.join("c.txt").exists());
    assert_eq!(
        std::fs::read_to_string(run.test.project.join("a.txt")).unwrap(),
        "changed\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_checkpoints_record_and_restore_nothing() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, two_turns()).await;
    std::fs::write(test.project.join("a.txt"), ORIGINAL).unwrap();
    let env = MapEnv::new([(
        knightcode_runtime::file_history::DISABLE_VAR.to_owned(),
        "true".to_owned(),
    )]);
    let services = test
        .services(Arc::new(NoSessionHooks))
        .with_env(Arc::new(env));
    let mut run = Running::spawn_with(test, services).await;
    run.prompt("first turn").await;
    run.prompt("second turn").await;
    assert!(!index::history_root(&run.test.agent_dir).exists());
    let first = user_id(&run.entries().await, "first turn");
    let view = view(&run).await;
    assert!(view.restore_plan(Some(&first)).is_empty());
    assert!(view.undo_points().iter().all(|p| p.files == 0));
    let reply = navigate(&mut run, &first, true).await;
    assert_eq!(
        reply,
        Reply::Navigated {
            text: Some("first turn".to_owned()),
            restored: None,
        }
    );
    assert!(run.test.project.join("new/b.txt").exists());
}

#[test]
fn folders_older_than_thirty_days_are_pruned() {
    let root = tempfile::tempdir().unwrap();
    let old = root.path().join("old-session");
    let recent = root.path().join("recent-session");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&recent).unwrap();
    std::fs::write(old.join("index.json"), "{}").unwrap();
    let now = std::time::SystemTime::now();
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    std::fs::File::open(&old)
        .unwrap()
        .set_modified(now - 31 * day)
        .unwrap();
    std::fs::File::open(&recent)
        .unwrap()
        .set_modified(now - 29 * day)
        .unwrap();
    let pruned = index::prune_in_background(root.path().to_path_buf(), now)
        .join()
        .unwrap();
    assert_eq!(pruned, 1);
    assert!(!old.exists());
    assert!(recent.exists());
    // Nothing to prune, or no folder at all, is not an error.
    assert_eq!(index::prune(&root.path().join("absent"), now), 0);
}

#[test]
fn a_damaged_index_is_refused_on_read_and_history_starts_afresh() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let dir = index::history_root(&agent).join("s1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.json"), b"{\"version\":1,\"checkp").unwrap();
    assert!(index::load(&dir).is_err());
    let file = root.path().join("f.txt");
    std::fs::write(&file, "before").unwrap();
    let history = knightcode_runtime::file_history::FileHistory::new(&agent, "s1", true);
    history.record("u1", &file, "c1");
    let saved = index::load(&dir).unwrap();
    assert_eq!(saved.checkpoints["u1"].files.len(), 1);
    std::fs::write(&file, "after").unwrap();
    let report = history.restore(&history.plan(&["u1".to_owned()]));
    assert_eq!(report.restored, 1);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "before");
    // A backup gone from disk is reported, not fatal.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&file, "after").unwrap();
    let report = history.restore(&history.plan(&["u1".to_owned()]));
    assert_eq!(report.restored, 0);
    assert_eq!(report.failed.len(), 1);
    assert!(undo::restored_notice(&report).starts_with("Restored 0 files; failed: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_takes_the_history_with_it() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, two_turns()).await;
    let mut run = two_turns_run(test).await;
    let entries = run.entries().await;
    let first = user_id(&entries, "first turn");
    let second = user_id(&entries, "second turn");
    let old_id = view(&run).await.state(false).session_id;
    let tag = run.send(Command::Fork(second.clone()));
    assert!(matches!(run.reply(tag).await, Reply::Forked { .. }));
    let view = view(&run).await;
    let new_id = view.state(false).session_id;
    assert_ne!(new_id, old_id);
    let root = index::history_root(&run.test.agent_dir);
    assert_eq!(
        std::fs::read(root.join(&new_id).join("index.json")).unwrap(),
        std::fs::read(root.join(&old_id).join("index.json")).unwrap()
    );
    // The fork holds the first turn; going back over it restores what it changed.
    let plan = view.restore_plan(Some(&first));
    assert_eq!(plan.files.len(), 1, "{plan:?}");
    navigate(&mut run, &first, true).await;
    assert_eq!(
        std::fs::read(run.test.project.join("a.txt")).unwrap(),
        ORIGINAL
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_survives_a_restart_of_the_session() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, two_turns()).await;
    std::fs::write(test.project.join("a.txt"), ORIGINAL).unwrap();
    // One store for both starts, as one process has.
    let services = test.services(Arc::new(NoSessionHooks));
    let mut run = Running::spawn_with(test, services.clone()).await;
    run.prompt("first turn").await;
    run.prompt("second turn").await;
    let first = user_id(&run.entries().await, "first turn");
    let file = view(&run).await.state(false).session_file.expect("written");
    let Running {
        test,
        handle,
        mut events,
        ..
    } = run;
    handle.send(Command::EndOfInput, knightcode_runtime::Responder::Nobody);
    drop(handle);
    while events.recv().await.is_some() {}
    // Opened again (as --session does): the index is read from disk.
    let mut setup = test.setup();
    setup.target = knightcode_runtime::SessionTarget::Open(file.into());
    let (session, events) = knightcode_runtime::AgentSession::start_with(setup, services)
        .await
        .unwrap();
    let (handle, stream) = session.spawn(events);
    let mut run = Running::from_parts(test, handle, stream);
    assert_eq!(view(&run).await.restore_plan(Some(&first)).files.len(), 2);
    navigate(&mut run, &first, true).await;
    assert_eq!(
        std::fs::read(run.test.project.join("a.txt")).unwrap(),
        ORIGINAL
    );
    assert!(!run.test.project.join("new/b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summarised_move_restores_files_once_the_summary_is_written() {
    let mut replies = two_turns();
    replies.push(ScriptedReply::text("## Goal\nthe branch left behind"));
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
    let mut run = two_turns_run(test).await;
    let first = user_id(&run.entries().await, "first turn");
    let tag = run.send(Command::NavigateTree {
        entry_id: Some(first),
        summary: Some(knightcode_runtime::actor::SummaryRequest::default()),
        label: None,
        restore_files: true,
    });
    let reply = run.reply(tag).await;
    assert_eq!(
        reply,
        Reply::Navigated {
            text: Some("first turn".to_owned()),
            restored: Some(RestoreReport {
                restored: 2,
                failed: Vec::new()
            }),
        }
    );
    assert!(
        run.entries()
            .await
            .iter()
            .any(|e| matches!(e, SessionEntry::BranchSummary(_)))
    );
    assert_eq!(
        std::fs::read(run.test.project.join("a.txt")).unwrap(),
        ORIGINAL
    );
    assert!(!run.test.project.join("new/b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_a_session_prunes_old_history_in_the_background() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, Vec::new()).await;
    let root = index::history_root(&test.agent_dir);
    let old = root.join("old-session");
    let recent = root.join("recent-session");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&recent).unwrap();
    let month = std::time::Duration::from_secs(31 * 24 * 60 * 60);
    std::fs::File::open(&old)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - month)
        .unwrap();
    let session = test.start(Arc::new(NoSessionHooks)).await;
    assert_eq!(session.file_history().wait_for_pruning(), Some(1));
    assert!(!old.exists());
    assert!(recent.exists());
}
