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

/// Plan mode fails closed on `/tree`: a target whose plan-mode state cannot be restored is
/// refused before the move, with and without the hooks' announcement, and the leaf stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_with_unrestorable_plan_state_is_refused_before_the_move() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let project = root.path().join("project");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    // A model is needed to start; nothing is sent to it.
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m", "name": "M", "contextWindow": 100000, "maxTokens": 1000}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let file = root.path().join("s.jsonl");
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd": project}),
        serde_json::json!({"type":"message","id":"u1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1733234401000u64}}),
        serde_json::json!({"type":"custom","id":"p1","parentId":"u1","timestamp":"2024-12-03T14:00:02.000Z","customType":"plan-mode","data":{"mode":"planning","approved":3}}),
        serde_json::json!({"type":"custom","id":"c2","parentId":"u1","timestamp":"2024-12-03T14:00:03.000Z","customType":"note","data":{}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let setup = SessionSetup::new(project, agent, SessionTarget::Open(file));
    let (mut session, _events) = AgentSession::start(setup).await.unwrap();
    let shared = session.session();
    let leaf = || shared.lock().unwrap().leaf_id().map(str::to_owned);
    // Opening may append the model selection after `c2`.
    let before = leaf();

    let refused = session.navigate_tree(Some("p1"), Some("mine")).unwrap_err();
    assert!(
        refused.to_string().contains("cannot be restored")
            && refused.to_string().contains("cancelled"),
        "{refused}"
    );
    let refused = session
        .navigate_tree_announced(Some("p1"), None, false)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("move was cancelled"),
        "{refused}"
    );
    assert_eq!(leaf(), before, "the leaf did not move");
    let labelled = shared.lock().unwrap().label("p1").map(str::to_owned);
    assert_eq!(labelled, None, "nothing was written");
    // A target without plan state still moves.
    session.navigate_tree(Some("u1"), None).unwrap();
}
