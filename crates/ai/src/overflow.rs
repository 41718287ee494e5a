//! Context-overflow detection (providers.md §7): decides when a failed turn should be
//! compacted and retried instead of reported.

use std::sync::LazyLock;

use knightcode_protocol::AssistantMessage;
use knightcode_protocol::ErrorClass;
use knightcode_protocol::StopReason;
use regex::Regex;

/// Overflow wordings of the providers we know, and generic fallbacks.
const OVERFLOW_PATTERNS: &[&str] = &[
    r"prompt is too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
];

/// Throttling texts that share overflow wording but are not overflows.
const NON_OVERFLOW_PATTERNS: &[&str] = &[
    r"^(?:Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
];

static OVERFLOW: LazyLock<Option<Regex>> =
    LazyLock::new(|| crate::retry::alternation(OVERFLOW_PATTERNS));
static NON_OVERFLOW: LazyLock<Option<Regex>> =
    LazyLock::new(|| crate::retry::alternation(NON_OVERFLOW_PATTERNS));

/// Whether an error text says the prompt did not fit the context window.
pub fn matches_overflow_text(error_message: &str) -> bool {
    let is = |re: &LazyLock<Option<Regex>>| re.as_ref().is_some_and(|r| r.is_match(error_message));
    !is(&NON_OVERFLOW) && is(&OVERFLOW)
}

/// Whether an assistant message represents a context overflow.
///
/// Besides failures this catches servers that overflow silently: a successful reply whose
/// input exceeds the window, or a `length` stop with no output and a window ≥ 99 % full.
/// `context_window` is the model's window when known.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    let stop = message.stop_reason.known();
    // The class decided where the failure arose answers; without one (a message read from a
    // session file, a failure that exists only as text) the reference's text rule does.
    let said_overflow = match message.error_class.get() {
        Some(class) => *class == ErrorClass::ContextOverflow,
        None => message
            .error_message
            .as_deref()
            .is_some_and(matches_overflow_text),
    };
    if stop == Some(StopReason::Error) && said_overflow {
        return true;
    }
    let Some(window) = context_window.filter(|w| *w > 0) else {
        return false;
    };
    let input = message.usage.input.0 + message.usage.cache_read.0;
    match stop {
        Some(StopReason::Stop) => input > window,
        Some(StopReason::Length) => {
            message.usage.output.0 == 0 && u128::from(input) * 100 >= u128::from(window) * 99
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use knightcode_protocol::Tokens;

    fn failed(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error.into(),
            error_message: Some(text.to_owned()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn provider_texts() {
        for text in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            "Your input exceeds the context window of this model",
            "This model's maximum context length is 8192 tokens. However",
            "The input token count (1196265) exceeds the maximum number of tokens allowed",
            "the request exceeds the available context size, try increasing it",
            "context_length_exceeded: custom provider",
            "400 status code (no body)",
        ] {
            assert!(is_context_overflow(&failed(text), None), "{text}");
        }
        assert!(!is_context_overflow(
            &failed("rate limit: too many tokens"),
            None
        ));
        assert!(!is_context_overflow(&failed("overloaded"), Some(1000)));
    }

    #[test]
    fn silent_overflow() {
        let mut message = AssistantMessage::default();
        message.usage.input = Tokens(1200);
        assert!(is_context_overflow(&message, Some(1000)));
        assert!(!is_context_overflow(&message, Some(2000)));
        message.stop_reason = StopReason::Length.into();
        message.usage.input = Tokens(990);
        assert!(is_context_overflow(&message, Some(1000)));
        message.usage.output = Tokens(1);
        assert!(!is_context_overflow(&message, Some(1000)));
    }
}
