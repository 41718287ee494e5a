//! `compact` over RPC: the response's `CompactionResult`, the events before it, the refusal
//! for a session with nothing to summarise, and the summary in the next request.

use crate::rpc_common;

use knightcode_protocol::AgentEvent;
use knightcode_protocol::CompactionReason;
use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::read_jsonl;
use rpc_common::user_texts;
use rpc_common::watchdog;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_answers_with_the_result_after_its_events() {
    watchdog(async {
        let replies = vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
            ScriptedReply::text("THE SUMMARY"),
            ScriptedReply::text("third answer"),
        ];
        let mut rpc = Rpc::start_prepared(replies, &[], |sandbox| {
            std::fs::write(
                sandbox.agent.join("settings.json"),
                r#"{"compaction": {"keepRecentTokens": 5}}"#,
            )
            .unwrap();
        })
        .await;
        let error = rpc.client.compact(None).await.unwrap_err();
        assert!(
            error
                .to_string()
                .contains("Nothing to compact (session too small)"),
            "{error}"
        );
        rpc.agent_until(|e| matches!(e, AgentEvent::CompactionEnd { .. }))
            .await;
        for text in ["first question", "second question"] {
            rpc.client.prompt(text).await.unwrap();
            rpc.settled().await;
        }
        let result = rpc
            .client
            .compact(Some("keep it short".into()))
            .await
            .unwrap();
        assert_eq!(result.summary, "THE SUMMARY");
        assert!(result.tokens_before > 0);
        let details = result.details.clone().unwrap();
        assert_eq!(details["readFiles"], serde_json::json!([]));
        let events = rpc
            .agent_until(|e| matches!(e, AgentEvent::CompactionEnd { .. }))
            .await;
        assert!(events.contains(&AgentEvent::CompactionStart {
            reason: CompactionReason::Manual
        }));
        let files = rpc.sandbox.session_files();
        let compactions: Vec<serde_json::Value> = read_jsonl(&files[0])
            .into_iter()
            .filter(|line| line["type"] == "compaction")
            .collect();
        assert_eq!(compactions.len(), 1);
        assert_eq!(compactions[0]["summary"], "THE SUMMARY");
        assert_eq!(
            compactions[0]["firstKeptEntryId"].as_str(),
            Some(result.first_kept_entry_id.as_str())
        );
        let summary_request = user_texts(&rpc.server.requests()[2].body).join("\n");
        assert!(summary_request.contains("Additional focus: keep it short"));

        rpc.client.prompt("third question").await.unwrap();
        rpc.settled().await;
        let next = user_texts(&rpc.server.requests()[3].body);
        assert!(next.iter().any(|t| t.contains("THE SUMMARY")), "{next:?}");
        assert!(!next.iter().any(|t| t == "first question"), "{next:?}");
        assert_eq!(rpc.shutdown().await, Some(0));
    })
    .await;
}
