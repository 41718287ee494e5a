//! The session actor with commands arriving mid-run: a mock stream stalls after its first
//! events, commands go in, the stall is released, and what the model was sent, what the
//! session stored and the order of the stream show what each command did.

use crate::common;
use knightcode_runtime::actor::CommandError;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::SessionEvent;
use knightcode_runtime::actor::Queueing;
use knightcode_runtime::hooks::InputSource;
use knightcode_testkit::Chunking;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::TestSession;
use common::request_texts;

/// A long answer that stalls after its first events until released.
fn stalling(text: &str) -> ScriptedReply {
    ScriptedReply::text(text)
        .with_chunking(Chunking::chars(4))
        .with_fault(Fault::StallAfterEvents(2))
}

fn prompt(text: &str, queueing: Option<Queueing>) -> Command {
    Command::Prompt {
        text: text.to_owned(),
        images: Vec::new(),
        queueing,
        source: InputSource::Rpc,
    }
}

/// The shared driver, with the stall helper these tests use.
struct Running(common::Running);

impl std::ops::Deref for Running {
    type Target = common::Running;
    fn deref(&self) -> &common::Running {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut common::Running {
        &mut self.0
    }
}

impl Running {
    async fn start(replies: Vec<ScriptedReply>) -> Self {
        let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
        Self(common::Running::spawn(test).await)
    }

    /// Starts a prompt whose stream stalls; returns once the stall is reached.
    async fn start_stalled(&mut self, text: &str) {
        let tag = self.send(prompt(text, None));
        assert_eq!(
            self.reply(tag).await,
            Reply::Prompt(PromptDisposition::Started)
        );
        self.test.server.wait_for_stalls(1).await;
    }
}

fn position(seen: &[SessionEvent], what: impl Fn(&SessionEvent) -> bool) -> usize {
    seen.iter().position(what).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_reply_precedes_its_agent_start() {
    let mut run = Running::start(vec![ScriptedReply::text("hello back")]).await;
    let tag = run.send(prompt("hello", None));
    let seen = run.until_settled().await;
    let reply = position(
        &seen,
        |e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == tag),
    );
    let start = position(&seen, |e| {
        matches!(e, SessionEvent::Agent(AgentEvent::AgentStart))
    });
    assert!(reply < start, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_mid_run_reaches_the_next_request_and_a_bare_prompt_is_refused() {
    let mut run = Running::start(vec![
        stalling("first answer, a long one"),
        ScriptedReply::text("after steering"),
    ])
    .await;
    run.start_stalled("start").await;
    let refused = run.send(prompt("another", None));
    assert_eq!(
        run.reply(refused).await,
        Reply::Failed(CommandError::AlreadyProcessing)
    );
    let steer = run.send(prompt("steer this way", Some(Queueing::Steer)));
    assert_eq!(
        run.reply(steer).await,
        Reply::Prompt(PromptDisposition::Queued)
    );
    run.test.server.release_stalls();
    run.until_settled().await;
    let requests = run.test.server.requests();
    assert_eq!(requests.len(), 2);
    assert!(request_texts(&requests[1].body).contains(&"steer this way".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_mid_run_runs_after_it() {
    let mut run = Running::start(vec![
        stalling("first answer, a long one"),
        ScriptedReply::text("the follow-up's answer"),
    ])
    .await;
    run.start_stalled("start").await;
    let tag = run.send(Command::FollowUp {
        text: "and then this".into(),
        images: Vec::new(),
    });
    assert_eq!(
        run.reply(tag).await,
        Reply::Prompt(PromptDisposition::Queued)
    );
    run.test.server.release_stalls();
    run.until_settled().await;
    let requests = run.test.server.requests();
    assert_eq!(requests.len(), 2);
    let second = request_texts(&requests[1].body);
    assert!(second.contains(&"first answer, a long one".to_owned()));
    assert!(second.contains(&"and then this".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_is_answered_after_the_runs_last_event() {
    let mut run = Running::start(vec![stalling("never finished")]).await;
    run.start_stalled("start").await;
    let tag = run.send(Command::Abort);
    let seen = run
        .read_until(|e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == tag))
        .await;
    let settled = position(&seen, |e| {
        matches!(
            e,
            SessionEvent::Agent(AgentEvent::AgentSettled { aborted: true })
        )
    });
    assert_eq!(settled, seen.len() - 2, "{seen:?}");
    assert!(matches!(
        seen.last(),
        Some(SessionEvent::Reply {
            reply: Reply::Done,
            ..
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_change_mid_run_applies_when_the_run_ends() {
    let mut run = Running::start(vec![
        stalling("on the first model"),
        ScriptedReply::text("on the second model"),
    ])
    .await;
    run.start_stalled("start").await;
    let tag = run.send(Command::SetModel {
        provider: "mock".into(),
        model_id: "mock-other".into(),
    });
    run.test.server.release_stalls();
    let seen = run
        .read_until(|e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == tag))
        .await;
    let settled = position(&seen, |e| {
        matches!(e, SessionEvent::Agent(AgentEvent::AgentSettled { .. }))
    });
    assert!(settled < seen.len() - 1, "answered after the run: {seen:?}");
    match seen.last() {
        Some(SessionEvent::Reply {
            reply: Reply::ModelSet(switch),
            ..
        }) => {
            assert_eq!(switch.model.id, "mock-other");
        }
        other => panic!("{other:?}"),
    }
    let next = run.send(prompt("again", None));
    assert_eq!(
        run.reply(next).await,
        Reply::Prompt(PromptDisposition::Started)
    );
    run.until_settled().await;
    let requests = run.test.server.requests();
    assert_eq!(requests[0].body["model"], "mock-model");
    assert_eq!(requests[1].body["model"], "mock-other");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigation_mid_run_aborts_it_then_moves_the_leaf() {
    let mut run = Running::start(vec![
        ScriptedReply::text("one"),
        stalling("two, never finished"),
        ScriptedReply::text("three"),
    ])
    .await;
    let first = run.send(prompt("first", None));
    assert_eq!(
        run.reply(first).await,
        Reply::Prompt(PromptDisposition::Started)
    );
    run.until_settled().await;
    run.start_stalled("second").await;
    let navigate = run.send(Command::NavigateTree {
        entry_id: None,
        summary: None,
        label: None,
        restore_files: false,
    });
    let seen = run
        .read_until(|e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == navigate))
        .await;
    assert!(seen.iter().any(|e| matches!(
        e,
        SessionEvent::Agent(AgentEvent::AgentSettled { aborted: true })
    )));
    assert_eq!(
        seen.last(),
        Some(&SessionEvent::Reply {
            tag: navigate,
            reply: Reply::Navigated {
                text: None,
                restored: None,
            }
        })
    );
    // Back before the first entry: the next prompt starts a new branch from nothing.
    let next = run.send(prompt("fresh start", None));
    assert_eq!(
        run.reply(next).await,
        Reply::Prompt(PromptDisposition::Started)
    );
    run.until_settled().await;
    let texts = request_texts(&run.test.server.requests()[2].body);
    assert!(
        !texts.iter().any(|t| t == "first" || t == "one"),
        "{texts:?}"
    );
    assert!(texts.contains(&"fresh start".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_shell_command_runs_alongside_a_run_and_is_stored_after_it() {
    let mut run = Running::start(vec![stalling("still thinking about it")]).await;
    run.start_stalled("start").await;
    let tag = run.send(Command::Bash {
        command: "echo from-the-shell".into(),
        exclude_from_context: false,
        id: Some("b1".into()),
    });
    // Answered while the run is still stalled.
    let seen = run
        .read_until(|e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == tag))
        .await;
    assert!(seen.iter().any(|e| matches!(
        e,
        SessionEvent::Agent(AgentEvent::BashExecutionUpdate { id: Some(id), delta }) if id == "b1" && delta.contains("from-the-shell")
    )));
    match seen.last() {
        Some(SessionEvent::Reply {
            reply: Reply::Bash(result),
            ..
        }) => {
            assert_eq!(result.exit_code, Some(0));
            assert_eq!(result.output.trim(), "from-the-shell");
        }
        other => panic!("{other:?}"),
    }
    assert!(run.handle.is_running());
    run.test.server.release_stalls();
    run.until_settled().await;
    let tag = run.send(Command::GetMessages);
    let Reply::Messages(messages) = run.reply(tag).await else {
        panic!("no messages");
    };
    let kinds: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(kinds, ["user", "assistant", "bashExecution"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_diagnostic_comes_in_order_with_the_stream() {
    let mut run = Running::start(vec![]).await;
    let diagnostic = knightcode_runtime::diagnostics::Diagnostic::warning(
        "mcp:files",
        "the server wrote to stderr: disk almost full",
    );
    let tag = run.send(Command::Report(diagnostic.clone()));
    let seen = run
        .read_until(|e| matches!(e, SessionEvent::Reply { tag: t, .. } if *t == tag))
        .await;
    assert_eq!(
        seen,
        [
            SessionEvent::Diagnostic(diagnostic),
            SessionEvent::Reply {
                tag,
                reply: Reply::Done
            }
        ]
    );
}
