//! The bash tool's `KNIGHTCODE_*` variables describe the session as it is when the command
//! runs: after a model switch and after a new session, not as it was at start-up.

use crate::common;

use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::Running;
use common::TestSession;

const PRINT_ENV: &str =
    r#"{"command": "echo \"model=$KNIGHTCODE_MODEL id=$KNIGHTCODE_SESSION_ID\""}"#;

/// The text of the last bash tool result the model was sent in request `index`.
fn echoed(run: &Running, index: usize) -> String {
    run.request_texts_at(index)
        .into_iter()
        .rfind(|t| t.starts_with("model="))
        .unwrap()
        .trim_end()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_variables_follow_model_and_session_changes() {
    let test = TestSession::new(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("c1", "bash", PRINT_ENV),
            ScriptedReply::text("one"),
            ScriptedReply::tool_call("c2", "bash", PRINT_ENV),
            ScriptedReply::text("two"),
            ScriptedReply::tool_call("c3", "bash", PRINT_ENV),
            ScriptedReply::text("three"),
        ],
    )
    .await;
    let mut run = Running::spawn(test).await;
    run.prompt("first").await;
    let Reply::State(first) = run.handle.request(Command::GetState).await else {
        panic!()
    };
    assert_eq!(
        echoed(&run, 1),
        format!("model=mock-model id={}", first.session_id)
    );

    let tag = run.send(Command::SetModel {
        provider: "mock".into(),
        model_id: "mock-other".into(),
    });
    assert!(matches!(run.reply(tag).await, Reply::ModelSet(_)));
    run.prompt("second").await;
    assert!(
        echoed(&run, 3).starts_with("model=mock-other "),
        "{}",
        echoed(&run, 3)
    );

    let tag = run.send(Command::NewSession {
        parent_session: None,
    });
    run.reply(tag).await;
    run.prompt("third").await;
    let Reply::State(third) = run.handle.request(Command::GetState).await else {
        panic!()
    };
    assert_ne!(third.session_id, first.session_id);
    // Whatever model the new session runs with, the variables say it.
    let model = third.model.as_ref().unwrap().id.clone();
    assert_eq!(
        echoed(&run, 5),
        format!("model={model} id={}", third.session_id)
    );
}
