//! `AgentSession::navigate_tree` (what `/tree` does): going back to an earlier prompt
//! returns its text, and the next prompt branches from before it without the later turns.

use knightcode_protocol::AgentMessage;
use knightcode_protocol::SessionEntry;
use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::SessionTarget;
use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigating_to_a_prompt_branches_before_it() {
    let server = MockServer::start(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::text("reply-one"),
            ScriptedReply::text("reply-two"),
            ScriptedReply::text("reply-three"),
        ],
    )
    .await
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let project = root.path().join("project");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": server.base_url(), "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m", "name": "M", "contextWindow": 100000, "maxTokens": 1000}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let setup = SessionSetup::new(
        project.clone(),
        agent.clone(),
        SessionTarget::New {
            dir: agent.join("sessions"),
            session_id: None,
        },
    );
    let (mut session, _events) = AgentSession::start(setup).await.unwrap();
    session.prompt("first", Vec::new()).await.unwrap();
    session.prompt("second", Vec::new()).await.unwrap();

    let second_id = {
        let shared = session.session();
        let manager = shared.lock().unwrap();
        manager
            .entries()
            .iter()
            .find_map(|entry| match entry {
                SessionEntry::Message(m)
                    if matches!(&m.message, AgentMessage::User(u) if u.content.text() == "second") =>
                {
                    Some(m.id.to_string())
                }
                _ => None,
            })
            .unwrap()
    };
    let text = session.navigate_tree(Some(&second_id), None).unwrap();
    assert_eq!(text.as_deref(), Some("second"));
    let texts: Vec<String> = session
        .view()
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::User(u) => Some(u.content.text()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        ["first"],
        "the context ends before the chosen prompt"
    );

    session.prompt("second, edited", Vec::new()).await.unwrap();
    let third = server.requests()[2].body.to_string();
    assert!(
        third.contains("second, edited") && !third.contains("\"second\""),
        "{third}"
    );
    assert!(
        !third.contains("reply-two"),
        "the abandoned reply is not sent: {third}"
    );

    // The abandoned branch is still in the file: both prompts' turns (each prompt follows
    // its turn marker) start from the same entry.
    let shared = session.session();
    let manager = shared.lock().unwrap();
    let parent_of = |id: &str| {
        manager
            .entry(id)
            .and_then(|entry| entry.parent_id())
            .map(ToString::to_string)
    };
    let parents: Vec<Option<String>> = manager
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            SessionEntry::Message(m) if matches!(&m.message, AgentMessage::User(u) if u.content.text().starts_with("second")) => {
                let marker = m.parent_id.as_deref()?;
                assert!(knightcode_session::turns::is_turn_marker(manager.entry(marker)?));
                Some(parent_of(marker))
            }
            _ => None,
        })
        .collect();
    assert_eq!(parents.len(), 2);
    assert_eq!(parents[0], parents[1]);
}
