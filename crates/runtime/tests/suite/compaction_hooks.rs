//! The compaction and tree hooks the extension host builds on: `before_compact` cancelling
//! or supplying the summary, `compacted` / `compaction_failed` hearing how it ended, and
//! `before_tree` supplying a branch summary.

use crate::common;
use knightcode_runtime::actor::CommandError;

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::AgentHooks;
use knightcode_agent::HookFuture;
use knightcode_protocol::CompactionReason;
use knightcode_protocol::SessionEntry;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::SessionHooks;
use knightcode_runtime::actor::SummaryRequest;
use knightcode_runtime::hooks::CompactionDecision;
use knightcode_runtime::hooks::CompactionEnded;
use knightcode_runtime::hooks::CompactionStarting;
use knightcode_runtime::hooks::SuppliedCompaction;
use knightcode_runtime::hooks::TreeChanged;
use knightcode_runtime::hooks::TreeDecision;
use knightcode_runtime::hooks::TreeNavigation;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use tokio_util::sync::CancellationToken;

use common::KEEP_5_TOKENS;
use common::Running;
use common::TestSession;

#[derive(Default)]
struct Recording {
    decision: Mutex<CompactionDecision>,
    tree: Mutex<TreeDecision>,
    log: Mutex<Vec<String>>,
}

impl Recording {
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl AgentHooks for Recording {}

impl SessionHooks for Recording {
    fn before_compact<'a>(
        &'a self,
        starting: CompactionStarting<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, CompactionDecision> {
        self.log.lock().unwrap().push(format!(
            "before_compact {:?} kept={}",
            starting.reason, starting.preparation.first_kept_entry_id
        ));
        let decision = self.decision.lock().unwrap().clone();
        Box::pin(std::future::ready(decision))
    }

    fn compacted<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("compacted from_hook={}", ended.from_hook));
        Box::pin(std::future::ready(()))
    }

    fn compaction_failed<'a>(&'a self, ended: CompactionEnded<'a>) -> HookFuture<'a, ()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("failed aborted={}", ended.aborted));
        Box::pin(std::future::ready(()))
    }

    fn before_tree<'a>(
        &'a self,
        navigation: TreeNavigation<'a>,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, TreeDecision> {
        self.log.lock().unwrap().push(format!(
            "before_tree wants={} entries={}",
            navigation.user_wants_summary,
            navigation.entries_to_summarize.len()
        ));
        let decision = self.tree.lock().unwrap().clone();
        Box::pin(std::future::ready(decision))
    }

    fn tree_changed<'a>(&'a self, changed: TreeChanged<'a>) -> HookFuture<'a, ()> {
        self.log.lock().unwrap().push(format!(
            "tree_changed summary={}",
            changed.summary_entry_id.is_some()
        ));
        Box::pin(std::future::ready(()))
    }
}

async fn start(hooks: Arc<Recording>, replies: Vec<ScriptedReply>) -> Running {
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies)
        .await
        .with_settings(KEEP_5_TOKENS);
    let services = test.services(hooks);
    let mut run = Running::spawn_with(test, services).await;
    run.prompt("first question").await;
    run.prompt("second question").await;
    run
}

/// The id of the entry `back` places before the end of the file.
async fn entry_from_end(run: &Running, back: usize) -> String {
    let entries: Vec<SessionEntry> = run
        .entries()
        .await
        .into_iter()
        .filter(|entry| !knightcode_session::turns::is_turn_boundary(entry))
        .collect();
    entries[entries.len() - back].id().to_string()
}

/// The id of the reply to the first question.
async fn first_answer(run: &Running) -> String {
    entry_from_end(run, 3).await
}

fn two_answers() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::text("second answer"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_supplies_the_summary_and_no_model_is_asked() {
    let hooks = Arc::new(Recording::default());
    let mut run = start(Arc::clone(&hooks), two_answers()).await;
    // The second question: the kept tail.
    let kept = entry_from_end(&run, 2).await;
    *hooks.decision.lock().unwrap() = CompactionDecision::Supply(SuppliedCompaction {
        summary: "FROM-THE-HOOK".to_owned(),
        first_kept_entry_id: kept.clone(),
        tokens_before: 42,
        usage: None,
        details: None,
    });
    let (_, reply) = run.compact(None).await;
    let Reply::Compacted(result) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(result.summary, "FROM-THE-HOOK");
    assert_eq!(result.tokens_before, 42);
    assert_eq!(run.test.server.requests().len(), 2, "no summary request");
    let compactions = run.compactions().await;
    let [SessionEntry::Compaction(entry)] = compactions.as_slice() else {
        panic!()
    };
    assert_eq!(entry.from_hook, Some(true));
    assert_eq!(entry.first_kept_entry_id, kept);
    let log = hooks.log();
    assert!(log[0].starts_with(&format!("before_compact {:?}", CompactionReason::Manual)));
    assert_eq!(log[1], "compacted from_hook=true");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_cancels_and_the_failure_is_reported_to_it() {
    let hooks = Arc::new(Recording::default());
    *hooks.decision.lock().unwrap() = CompactionDecision::Cancel;
    let mut run = start(Arc::clone(&hooks), two_answers()).await;
    let (_, reply) = run.compact(None).await;
    assert_eq!(reply, Reply::Failed(CommandError::CompactionCancelled));
    assert!(run.compactions().await.is_empty());
    assert_eq!(hooks.log()[1], "failed aborted=true");
}

/// One question and its answer: everything fits in the default kept tail.
async fn start_small(hooks: Arc<Recording>) -> Running {
    start_small_then(hooks, Vec::new()).await
}

/// One question answered; `more` are the replies scripted after that answer.
async fn start_small_then(hooks: Arc<Recording>, more: Vec<ScriptedReply>) -> Running {
    let mut replies = vec![ScriptedReply::text("only answer")];
    replies.extend(more);
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
    let services = test.services(hooks);
    let mut run = Running::spawn_with(test, services).await;
    run.prompt("only question").await;
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_too_small_to_compact_is_still_offered_to_the_hook() {
    let hooks = Arc::new(Recording::default());
    let mut run = start_small(Arc::clone(&hooks)).await;
    // The question: all of it is kept, nothing is summarised.
    let question = entry_from_end(&run, 2).await;
    *hooks.decision.lock().unwrap() = CompactionDecision::Supply(SuppliedCompaction {
        summary: "SMALL-FROM-THE-HOOK".to_owned(),
        first_kept_entry_id: question.clone(),
        tokens_before: 7,
        usage: None,
        details: None,
    });
    let (_, reply) = run.compact(None).await;
    let Reply::Compacted(result) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(result.summary, "SMALL-FROM-THE-HOOK");
    assert_eq!(run.test.server.requests().len(), 1, "no summary request");
    assert_eq!(
        hooks.log(),
        [
            format!("before_compact Manual kept={question}"),
            "compacted from_hook=true".to_owned()
        ]
    );
}

/// As in the reference, a session whose messages are all kept is still compacted: the
/// summary request carries an empty conversation, and only a branch that already ends in a
/// compaction is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_session_the_hook_lets_through_is_summarised_as_the_reference_does() {
    let hooks = Arc::new(Recording::default());
    let mut run = start_small_then(
        Arc::clone(&hooks),
        vec![ScriptedReply::text("SUMMARY-OF-LITTLE")],
    )
    .await;
    *hooks.decision.lock().unwrap() = CompactionDecision::Cancel;
    let (_, reply) = run.compact(None).await;
    assert_eq!(reply, Reply::Failed(CommandError::CompactionCancelled));
    assert_eq!(run.test.server.requests().len(), 1, "no summary request");

    *hooks.decision.lock().unwrap() = CompactionDecision::Proceed;
    let question = entry_from_end(&run, 2).await;
    let (_, reply) = run.compact(None).await;
    let Reply::Compacted(result) = reply else {
        panic!("{reply:?}")
    };
    assert!(
        result.summary.starts_with("SUMMARY-OF-LITTLE"),
        "{result:?}"
    );
    assert_eq!(result.first_kept_entry_id, question, "everything is kept");
    let requests = run.test.server.requests();
    assert_eq!(requests.len(), 2, "one summary request");
    let summary_request = requests[1].body.to_string();
    assert!(
        summary_request.contains("<conversation>\\n\\n</conversation>"),
        "{summary_request}"
    );
    assert_eq!(run.compactions().await.len(), 1);

    let (_, reply) = run.compact(None).await;
    assert_eq!(
        reply,
        Reply::Failed(CommandError::Failed("Already compacted".to_owned()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_supplies_the_branch_summary() {
    let hooks = Arc::new(Recording::default());
    *hooks.tree.lock().unwrap() = TreeDecision::Supply {
        summary: "BRANCH-FROM-HOOK".to_owned(),
        details: None,
    };
    let mut run = start(Arc::clone(&hooks), two_answers()).await;
    let first_answer = first_answer(&run).await;
    let tag = run.send(Command::NavigateTree {
        entry_id: Some(first_answer),
        summary: Some(SummaryRequest::default()),
        label: None,
        restore_files: false,
    });
    assert_eq!(
        run.reply(tag).await,
        Reply::Navigated {
            text: None,
            restored: None,
        }
    );
    assert_eq!(run.test.server.requests().len(), 2, "no summary request");
    assert_eq!(
        hooks.log(),
        [
            "before_tree wants=true entries=2",
            "tree_changed summary=true"
        ]
    );
    let entries = run.entries().await;
    let summary = entries
        .iter()
        .find_map(|e| match e {
            SessionEntry::BranchSummary(s) => Some(s),
            _ => None,
        })
        .unwrap();
    assert_eq!(summary.summary, "BRANCH-FROM-HOOK");
    assert_eq!(summary.from_hook, Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_without_a_summary_is_announced_too() {
    let hooks = Arc::new(Recording::default());
    let mut run = start(Arc::clone(&hooks), two_answers()).await;
    let first_answer = first_answer(&run).await;
    let tag = run.send(Command::NavigateTree {
        entry_id: Some(first_answer),
        summary: None,
        label: None,
        restore_files: false,
    });
    assert_eq!(
        run.reply(tag).await,
        Reply::Navigated {
            text: None,
            restored: None,
        }
    );
    // As in the reference, `session_before_tree` comes for a move without a summary too.
    assert_eq!(
        hooks.log(),
        [
            "before_tree wants=false entries=2",
            "tree_changed summary=false"
        ]
    );
}
