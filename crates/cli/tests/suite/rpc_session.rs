//! RPC commands that change or read the session: models and thinking levels, forks, clones
//! and session switches, the entry tree of a branched session.

use crate::rpc_common;

use std::path::Path;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::rpc::SessionTreeNode;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::Sandbox;
use rpc_common::message_ends;
use rpc_common::read_jsonl;
use rpc_common::usage;
use rpc_common::user_texts;
use rpc_common::watchdog;
use serde_json::Value;

/// The next `thinking_level_changed` level.
async fn thinking_changed(rpc: &mut Rpc) -> String {
    loop {
        if let AgentEvent::ThinkingLevelChanged { level } = rpc.next_agent().await {
            return level;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_model_and_cycle_model_switch_between_the_mock_models() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::text("From two."),
            ScriptedReply::text("From one."),
        ])
        .await;
        let models: Vec<String> = rpc
            .client
            .get_available_models()
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(models, ["mock-model", "mock-model-2"]);
        assert_eq!(
            rpc.client.get_available_thinking_levels().await.unwrap(),
            ["off", "minimal", "low", "medium", "high"]
        );

        rpc.client.set_thinking_level("high").await.unwrap();
        assert_eq!(thinking_changed(&mut rpc).await, "high");
        // Setting the same level again changes nothing and says nothing.
        rpc.client.set_thinking_level("high").await.unwrap();

        let model = rpc.client.set_model("mock", "mock-model-2").await.unwrap();
        assert_eq!(model.id, "mock-model-2");
        assert_eq!(model.context_window, 32000);
        // The model cannot think: the level is clamped to off.
        assert_eq!(thinking_changed(&mut rpc).await, "off");
        let state = rpc.client.get_state().await.unwrap();
        assert_eq!(state.model.unwrap().id, "mock-model-2");
        assert_eq!(state.thinking_level, "off");
        assert_eq!(
            rpc.client.get_available_thinking_levels().await.unwrap(),
            ["off"]
        );
        assert_eq!(rpc.client.cycle_thinking_level().await.unwrap(), None);

        rpc.client.prompt("Hello two").await.unwrap();
        rpc.settled().await;

        // Back to the reasoning model: the saved default level (high) comes back.
        let cycled = rpc.client.cycle_model().await.unwrap().unwrap();
        assert_eq!(cycled.model.id, "mock-model");
        assert_eq!(cycled.thinking_level, "high");
        assert!(!cycled.is_scoped);
        assert_eq!(thinking_changed(&mut rpc).await, "high");
        rpc.client.prompt("Hello one").await.unwrap();
        rpc.settled().await;

        let requests = rpc.server.requests();
        assert_eq!(requests[0].body["model"], "mock-model-2");
        assert_eq!(requests[0].body.get("reasoning_effort"), None);
        assert_eq!(requests[1].body["model"], "mock-model");
        assert_eq!(requests[1].body["reasoning_effort"], "high");

        // high -> off: the next level after the last supported one wraps around.
        assert_eq!(
            rpc.client.cycle_thinking_level().await.unwrap().as_deref(),
            Some("off")
        );
        let missing = rpc.client.set_model("mock", "nope").await.unwrap_err();
        assert_eq!(missing.to_string(), "Model not found: mock/nope");
        let bad_level = rpc.client.set_thinking_level("extreme").await.unwrap_err();
        assert!(
            bad_level
                .to_string()
                .starts_with("Invalid thinking level: extreme")
        );

        let settings: Value = serde_json::from_str(
            &std::fs::read_to_string(rpc.sandbox.agent.join("settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(settings["defaultProvider"], "mock");
        assert_eq!(settings["defaultModel"], "mock-model");
        assert_eq!(settings["defaultThinkingLevel"], "off");

        let file = rpc.sandbox.session_files().pop().unwrap();
        let changes: Vec<String> = read_jsonl(&file)
            .iter()
            .filter_map(|l| match l["type"].as_str() {
                Some("model_change") => Some(format!("model {}", l["modelId"].as_str().unwrap())),
                Some("thinking_level_change") => {
                    Some(format!("thinking {}", l["thinkingLevel"].as_str().unwrap()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            changes,
            [
                "model mock-model",
                "thinking medium",
                "thinking high",
                "model mock-model-2",
                "thinking off",
                "model mock-model",
                "thinking high",
                "thinking off",
            ]
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_clone_and_switch_session_move_between_files() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![
            ScriptedReply::text("Answer one.").with_usage(usage(100, 3)),
            ScriptedReply::text("Answer two.").with_usage(usage(110, 3)),
            ScriptedReply::text("Fork answer.").with_usage(usage(90, 3)),
        ])
        .await;
        for question in ["First question", "Second question"] {
            rpc.client.prompt(question).await.unwrap();
            rpc.settled().await;
        }
        let original = rpc.client.get_state().await.unwrap().session_file.unwrap();

        // Forking needs a user message.
        let bad = rpc.client.fork("ffffffff").await.unwrap_err();
        assert_eq!(bad.to_string(), "Invalid entry ID for forking");
        let forks = rpc.client.get_fork_messages().await.unwrap();
        let texts: Vec<&str> = forks.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["First question", "Second question"]);

        // A new session takes `--model` again (the reference rebuilds its runtime from the
        // command line), and the thinking level recorded on the copied path.
        rpc.client.set_model("mock", "mock-model-2").await.unwrap();
        let forked = rpc.client.fork(forks[1].entry_id.clone()).await.unwrap();
        assert_eq!(forked.text.as_deref(), Some("Second question"));
        assert!(!forked.cancelled);
        let state = rpc.client.get_state().await.unwrap();
        assert_eq!(state.model.unwrap().id, "mock-model");
        assert_eq!(state.thinking_level, "medium");
        let fork_file = state.session_file.unwrap();
        assert_ne!(fork_file, original);
        assert_eq!(state.message_count, 2);
        rpc.client.prompt("Hello from the fork").await.unwrap();
        let events = rpc.settled().await;
        assert_eq!(
            message_ends(&events),
            ["user: Hello from the fork", "assistant: Fork answer."]
        );
        assert_eq!(
            user_texts(&rpc.server.requests()[2].body),
            ["First question", "Hello from the fork"]
        );
        let fork_lines = read_jsonl(std::path::Path::new(&fork_file));
        assert_eq!(fork_lines[0]["parentSession"], original.as_str());
        let original_lines = read_jsonl(std::path::Path::new(&original));
        // The copied path keeps its ids.
        assert_eq!(fork_lines[1]["id"], original_lines[1]["id"]);

        assert!(!rpc.client.clone_session().await.unwrap());
        let clone_file = rpc.client.get_state().await.unwrap().session_file.unwrap();
        assert_ne!(clone_file, fork_file);
        let clone_lines = read_jsonl(std::path::Path::new(&clone_file));
        assert_eq!(clone_lines[0]["parentSession"], fork_file.as_str());
        assert_eq!(clone_lines.len(), fork_lines.len());
        assert_eq!(rpc.client.get_messages().await.unwrap().len(), 4);

        assert!(!rpc.client.switch_session(original.clone()).await.unwrap());
        let state = rpc.client.get_state().await.unwrap();
        assert_eq!(state.session_file.as_deref(), Some(original.as_str()));
        let texts: Vec<String> = rpc
            .client
            .get_messages()
            .await
            .unwrap()
            .iter()
            .filter_map(|m| m.display_text())
            .collect();
        assert_eq!(
            texts,
            ["First question", "Answer one.", "Second question", "Answer two."]
        );
        // A path without a file is a new session to be written there, as in the reference.
        let elsewhere = rpc.sandbox.root.path().join("named.jsonl");
        let elsewhere = elsewhere.to_string_lossy().into_owned();
        assert!(!rpc.client.switch_session(elsewhere.clone()).await.unwrap());
        let state = rpc.client.get_state().await.unwrap();
        assert_eq!(state.session_file.as_deref(), Some(elsewhere.as_str()));
        assert_eq!(state.message_count, 0);
        assert!(!rpc.client.switch_session(original.clone()).await.unwrap());

        assert!(!rpc.client.new_session(None).await.unwrap());
        let fresh = rpc.client.get_state().await.unwrap();
        assert_eq!(fresh.message_count, 0);
        assert!(![original, fork_file, clone_file].contains(fresh.session_file.as_ref().unwrap()));
        // Not written before the first reply; a fork of it is refused.
        let clone_fresh = rpc.client.clone_session().await.unwrap_err();
        assert_eq!(
            clone_fresh.to_string(),
            "This session has not been saved yet. Wait for the first assistant response before cloning or forking it."
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

/// A session file with two answers to one question and a label, written by hand.
fn branched_session(sandbox: &Sandbox) -> std::path::PathBuf {
    let assistant = |text: &str, ts: i64| {
        serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}],
            "api": "openai-completions", "provider": "mock", "model": "mock-model",
            "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": ts})
    };
    let project = sandbox.project.to_string_lossy();
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "01a22bc6-0000-7000-8000-000000000001",
            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": project}),
        serde_json::json!({"type": "model_change", "id": "0000000a", "parentId": null,
            "timestamp": "2026-01-01T00:00:00.001Z", "provider": "mock", "modelId": "mock-model"}),
        serde_json::json!({"type": "message", "id": "0000000b", "parentId": "0000000a",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "Question"}], "timestamp": 1}}),
        serde_json::json!({"type": "message", "id": "0000000c", "parentId": "0000000b",
            "timestamp": "2026-01-01T00:00:02.000Z", "message": assistant("Answer A", 2)}),
        serde_json::json!({"type": "message", "id": "0000000d", "parentId": "0000000b",
            "timestamp": "2026-01-01T00:00:03.000Z", "message": assistant("Answer B", 3)}),
        serde_json::json!({"type": "label", "id": "0000000e", "parentId": "0000000d",
            "timestamp": "2026-01-01T00:00:04.000Z", "targetId": "0000000c", "label": "first try"}),
    ];
    let path = sandbox.root.path().join("branched.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn node_summary(node: &SessionTreeNode, out: &mut Vec<String>, depth: usize) {
    let label = node
        .label
        .as_deref()
        .map(|l| format!(" [{l}]"))
        .unwrap_or_default();
    out.push(format!("{}{}{label}", "  ".repeat(depth), node.entry.id()));
    for child in &node.children {
        node_summary(child, out, depth + 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_and_entries_of_a_branched_session() {
    watchdog(async {
        let server = knightcode_testkit::MockServer::start(
            knightcode_testkit::WireFormat::OpenAiCompletions,
            vec![ScriptedReply::text("Third answer.")],
        )
        .await
        .unwrap();
        let sandbox = Sandbox::new(&server);
        let path = branched_session(&sandbox);
        let (client, events) = knightcode_headless::rpc::RpcClientBuilder::new()
            .spawn_command(
                sandbox.rpc_command(&["--session", &path.to_string_lossy()]),
                "knightcode",
            )
            .unwrap();
        let mut rpc = Rpc {
            server,
            sandbox,
            client,
            events,
        };

        let tree = rpc.client.get_tree().await.unwrap();
        let mut lines = Vec::new();
        for root in &tree.tree {
            node_summary(root, &mut lines, 0);
        }
        // Opening the file recorded the thinking level it lacked, on the current leaf.
        let leaf = tree.leaf_id.clone().unwrap();
        assert_eq!(
            lines,
            [
                "0000000a".to_owned(),
                "  0000000b".to_owned(),
                "    0000000c [first try]".to_owned(),
                "    0000000d".to_owned(),
                "      0000000e".to_owned(),
                format!("        {leaf}"),
            ]
        );
        let labelled = &tree.tree[0].children[0].children[0];
        assert_eq!(
            labelled.label_timestamp.as_deref(),
            Some("2026-01-01T00:00:04.000Z")
        );

        let all = rpc.client.get_entries(None).await.unwrap();
        assert_eq!(all.entries.len(), 6);
        assert_eq!(all.leaf_id.as_deref(), Some(leaf.as_str()));
        let after: Vec<String> = rpc
            .client
            .get_entries(Some("0000000b".to_owned()))
            .await
            .unwrap()
            .entries
            .iter()
            .map(|e| e.id().to_owned())
            .collect();
        assert_eq!(after, ["0000000c", "0000000d", "0000000e", leaf.as_str()]);
        let unknown = rpc
            .client
            .get_entries(Some("nope".to_owned()))
            .await
            .unwrap_err();
        assert_eq!(unknown.to_string(), "Entry not found: nope");

        // The active branch is the second answer; both answers count in the statistics.
        let texts: Vec<String> = rpc
            .client
            .get_messages()
            .await
            .unwrap()
            .iter()
            .filter_map(|m| m.display_text())
            .collect();
        assert_eq!(texts, ["Question", "Answer B"]);
        let stats = rpc.client.get_session_stats().await.unwrap();
        assert_eq!((stats.user_messages, stats.assistant_messages), (1, 2));
        assert_eq!(stats.context_usage.unwrap().tokens, Some(12));

        rpc.client.prompt("Third").await.unwrap();
        rpc.settled().await;
        let new: Vec<&'static str> = rpc
            .client
            .get_entries(Some(leaf.clone()))
            .await
            .unwrap()
            .entries
            .iter()
            .map(|e| match e {
                SessionEntry::Message(m) => match m.message.role() {
                    "system" => "system",
                    "user" => "user",
                    "assistant" => "assistant",
                    _ => "other",
                },
                SessionEntry::Custom(c) if c.custom_type == "knightcode.turn" => "turn",
                SessionEntry::Custom(c) if c.custom_type == "knightcode.turnEnd" => "turnEnd",
                _ => "entry",
            })
            .collect();
        assert_eq!(new, ["system", "turn", "user", "assistant", "turnEnd"]);
        assert_eq!(
            user_texts(&rpc.server.requests()[0].body),
            ["Question", "Third"]
        );
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycling_stays_inside_the_models_scope() {
    watchdog(async {
        // `--models` wins over `enabledModels`; one model in scope leaves nothing to cycle to.
        let rpc = Rpc::start_prepared(vec![], &["--models", "mock-model:low"], |sandbox| {
            std::fs::write(
                sandbox.agent.join("settings.json"),
                r#"{"enabledModels": ["mock-model-2", "mock-model"]}"#,
            )
            .unwrap();
        })
        .await;
        assert!(rpc.client.cycle_model().await.unwrap().is_none());

        let rpc = Rpc::start_prepared(vec![], &[], |sandbox| {
            std::fs::write(
                sandbox.agent.join("settings.json"),
                r#"{"enabledModels": ["mock-model-2", "mock-model:high", "no-such-model"]}"#,
            )
            .unwrap();
        })
        .await;
        // `--model` chose the start; cycling goes through the scope in its order.
        let state = rpc.client.get_state().await.unwrap();
        assert_eq!(state.model.unwrap().id, "mock-model");
        let cycled = rpc.client.cycle_model().await.unwrap().unwrap();
        assert_eq!(cycled.model.id, "mock-model-2");
        assert_eq!(cycled.thinking_level, "off", "clamped: it cannot think");
        assert!(cycled.is_scoped);
        let cycled = rpc.client.cycle_model().await.unwrap().unwrap();
        assert_eq!(cycled.model.id, "mock-model");
        assert_eq!(cycled.thinking_level, "high", "the pattern's level");
        assert!(cycled.is_scoped);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_html_writes_the_page_or_says_why_not() {
    watchdog(async {
        let mut rpc = Rpc::start(vec![ScriptedReply::text("The answer, exported.")]).await;
        // Before the first reply there is no file to export.
        let error = rpc.client.export_html(None).await.unwrap_err().to_string();
        assert!(
            error.contains("Nothing to export yet - start a conversation first"),
            "{error}"
        );
        rpc.client.prompt("Question to export").await.unwrap();
        rpc.settled().await;
        let out = rpc.sandbox.project.join("exports/page.html");
        let path = rpc
            .client
            .export_html(Some(out.to_string_lossy().into_owned()))
            .await
            .unwrap();
        assert_eq!(Path::new(&path), out);
        let page = std::fs::read_to_string(&out).unwrap();
        assert!(page.contains("Question to export"));
        assert!(page.contains("The answer, exported."));
        // The default name follows the session file, in the working directory.
        let path = rpc.client.export_html(None).await.unwrap();
        let file = rpc.sandbox.session_files().pop().unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(path, format!("knightcode-session-{stem}.html"));
        assert!(rpc.sandbox.project.join(&path).is_file());
        rpc.shutdown().await;

        let rpc = Rpc::start_with(vec![], &["--no-session"]).await;
        let error = rpc.client.export_html(None).await.unwrap_err().to_string();
        assert!(
            error.contains("Cannot export in-memory session to HTML"),
            "{error}"
        );
        rpc.shutdown().await;
    })
    .await;
}
