//! GitHub Copilot speaks three wire formats this crate has (Anthropic Messages, Chat
//! Completions, OpenAI Responses); what it adds is, as the reference does it:
//!
//! - where requests go: the API host the Copilot token names (`proxy-ep`), since accounts are
//!   served from different hosts (the catalog's address is the individual plan's);
//! - headers on every request: who started the turn (`X-Initiator`: `user` when the last
//!   message is the person's, `agent` after an answer or a tool result), `Openai-Intent`, and
//!   `Copilot-Vision-Request` when the conversation holds an image. The editor identity
//!   (`Editor-Version`, `Copilot-Integration-Id`, …) comes with the catalog's model headers.

use std::borrow::Cow;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::Content;
use knightcode_protocol::ContentBlock;

use crate::copilot::PROVIDER;
use crate::http::Headers;
use crate::model::Model;
use crate::options::Context;
use crate::options::StreamOptions;

/// Whether `model` is one of Copilot's.
pub(crate) fn is_copilot(model: &Model) -> bool {
    model.provider == PROVIDER
}

/// `model` sent where its key says: a Copilot token's own API host (or the address
/// [`crate::copilot::COPILOT_API_URL_ENV`] names instead). A GitHub token from the
/// environment carries no host and goes to the model's address.
pub(crate) fn resolve<'m>(model: &'m Model, options: &StreamOptions) -> Cow<'m, Model> {
    if !is_copilot(model) {
        return Cow::Borrowed(model);
    }
    let key = options.api_key.as_deref().unwrap_or_default();
    let base = crate::copilot::api_url_override(&crate::config_value::ProcessEnv).or_else(|| {
        crate::copilot::proxy_endpoint(key).map(|_| crate::copilot::base_url(key, None))
    });
    match base {
        Some(base) if base != model.base_url => {
            let mut moved = model.clone();
            moved.base_url = base;
            Cow::Owned(moved)
        }
        _ => Cow::Borrowed(model),
    }
}

/// Sets the per-request headers on `headers` (before the request's own headers, which may
/// replace them).
pub(crate) fn add_headers(model: &Model, context: &Context, headers: &mut Headers) {
    if !is_copilot(model) {
        return;
    }
    // What the reference's SDKs send; reqwest's default is `*/*`.
    headers.set("accept", "application/json");
    headers.set("X-Initiator", initiator(context));
    headers.set("Openai-Intent", "conversation-edits");
    if has_image(context) {
        headers.set("Copilot-Vision-Request", "true");
    }
}

/// `agent` when the conversation ends with the model's answer or a tool's result (a
/// follow-up the agent sends by itself), else `user`.
fn initiator(context: &Context) -> &'static str {
    let last = context
        .messages
        .iter()
        .rev()
        .find(|m| !matches!(m.as_ref(), AgentMessage::System(_)));
    match last.map(|m| m.as_ref()) {
        Some(AgentMessage::Assistant(_) | AgentMessage::ToolResult(_)) => "agent",
        _ => "user",
    }
}

fn has_image(context: &Context) -> bool {
    let image = |block: &ContentBlock| matches!(block, ContentBlock::Image(_));
    context.messages.iter().any(|m| match m.as_ref() {
        AgentMessage::User(user) => match &user.content {
            Content::Blocks(blocks) => blocks.iter().any(image),
            Content::Text(_) => false,
        },
        AgentMessage::ToolResult(result) => result.content.iter().any(image),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use knightcode_protocol::UserMessage;

    use super::*;
    use crate::model::Api;

    fn user(content: Content) -> Arc<AgentMessage> {
        Arc::new(AgentMessage::User(UserMessage {
            content,
            ..UserMessage::default()
        }))
    }

    #[test]
    fn headers_say_who_started_the_turn_and_whether_it_has_images() {
        let model = Model::new(PROVIDER, "gpt-4o", Api::OpenAiCompletions, "http://x");
        let mut context = Context {
            messages: vec![user(Content::Text("hi".into()))],
            ..Context::default()
        };
        let mut headers = Headers::default();
        add_headers(&model, &context, &mut headers);
        assert_eq!(headers.get("x-initiator"), Some("user"));
        assert_eq!(headers.get("openai-intent"), Some("conversation-edits"));
        assert_eq!(headers.get("copilot-vision-request"), None);

        context
            .messages
            .push(user(Content::Blocks(vec![ContentBlock::image(
                "AAAA",
                "image/png",
            )])));
        context
            .messages
            .push(Arc::new(AgentMessage::Assistant(Box::default())));
        let mut headers = Headers::default();
        add_headers(&model, &context, &mut headers);
        assert_eq!(headers.get("x-initiator"), Some("agent"));
        assert_eq!(headers.get("copilot-vision-request"), Some("true"));

        let other = Model::new("openai", "gpt-4o", Api::OpenAiCompletions, "http://x");
        let mut headers = Headers::default();
        add_headers(&other, &context, &mut headers);
        assert_eq!(headers.get("x-initiator"), None);
    }
}
