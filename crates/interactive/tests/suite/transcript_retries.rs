//! Provider errors in the transcript, from the agent's events: a failed attempt gives way to
//! one retry line, which goes when the retry works; a last failure says so once.

use knightcode_interactive::transcript::Look;
use knightcode_interactive::transcript::Transcript;
use knightcode_protocol::AgentEvent;
use knightcode_protocol::AgentMessage;
use knightcode_tui::Theme;
use serde_json::json;

const RATE_LIMITED: &str =
    r#"429 {"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}"#;

fn transcript() -> Transcript {
    let mut transcript = Transcript::new(Look {
        theme: Theme::plain(),
        cwd: "/work/project".into(),
        home: None,
        tools_expanded: false,
        thinking_hidden: false,
        hidden_thinking_label: None,
        mark_wraps: false,
    });
    transcript.provider = "anthropic".to_owned();
    transcript
}

fn reply(text: &str, error: Option<&str>) -> AgentMessage {
    let mut value = json!({"role": "assistant", "content": [], "api": "anthropic-messages",
        "provider": "anthropic", "model": "m",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": if error.is_some() { "error" } else { "stop" }, "timestamp": 1});
    if !text.is_empty() {
        value["content"] = json!([{"type": "text", "text": text}]);
    }
    if let Some(error) = error {
        value["errorMessage"] = json!(error);
    }
    serde_json::from_value(value).unwrap()
}

fn attempt(transcript: &mut Transcript, message: AgentMessage) {
    transcript.apply(&AgentEvent::MessageStart {
        message: message.clone(),
    });
    transcript.apply(&AgentEvent::MessageEnd { message });
}

fn retry_start(transcript: &mut Transcript, attempt: u32) {
    transcript.apply(&AgentEvent::AutoRetryStart {
        attempt,
        max_attempts: 3,
        delay_ms: 2000 * u64::from(attempt),
        error_message: RATE_LIMITED.to_owned(),
    });
}

fn text(transcript: &mut Transcript) -> String {
    transcript.render(80).join("\n")
}

#[test]
fn retries_show_one_line_in_words_that_goes_when_one_works() {
    let mut transcript = transcript();
    attempt(&mut transcript, reply("", Some(RATE_LIMITED)));
    retry_start(&mut transcript, 1);
    let shown = text(&mut transcript);
    assert_eq!(
        shown.trim(),
        "Rate limited by anthropic — retrying in 2 s (1/3)\n Slow down"
    );
    attempt(&mut transcript, reply("", Some(RATE_LIMITED)));
    retry_start(&mut transcript, 2);
    let shown = text(&mut transcript);
    assert!(shown.contains("retrying in 4 s (2/3)"), "{shown}");
    assert!(!shown.contains("(1/3)"), "updated in place: {shown}");
    assert!(!shown.contains("Error"), "{shown}");
    attempt(&mut transcript, reply("Here you go.", None));
    transcript.apply(&AgentEvent::AutoRetryEnd {
        success: true,
        attempt: 2,
        final_error: None,
        cancelled: false,
    });
    assert_eq!(text(&mut transcript).trim(), "Here you go.");
}

#[test]
fn the_last_failure_is_said_once_with_what_to_do() {
    let mut transcript = transcript();
    attempt(&mut transcript, reply("", Some(RATE_LIMITED)));
    retry_start(&mut transcript, 1);
    attempt(&mut transcript, reply("", Some(RATE_LIMITED)));
    transcript.apply(&AgentEvent::AutoRetryEnd {
        success: false,
        attempt: 1,
        final_error: Some(RATE_LIMITED.to_owned()),
        cancelled: false,
    });
    assert_eq!(
        text(&mut transcript).trim(),
        "Error: Rate limited by anthropic (gave up after 1 retry): Slow down\n Wait a minute and send again, or switch models with /model."
    );
}

#[test]
fn a_cancelled_retry_shows_its_failure_again() {
    let mut transcript = transcript();
    attempt(&mut transcript, reply("", Some(RATE_LIMITED)));
    retry_start(&mut transcript, 1);
    // The agent's words for it; what decides is `cancelled`.
    transcript.apply(&AgentEvent::AutoRetryEnd {
        success: false,
        attempt: 1,
        final_error: Some("Retry cancelled".to_owned()),
        cancelled: true,
    });
    assert_eq!(
        text(&mut transcript).trim(),
        "Error: Rate limited by anthropic: Slow down\n Wait a minute and send again, or switch models with /model.\n\n Retry cancelled."
    );
}
