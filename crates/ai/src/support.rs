//! What this build cannot send yet. The catalog lists every provider of the reference so a
//! key for any of them finds its models; the few whose wire format or sign-in this build
//! lacks say so when chosen, rather than failing on the wire.

use crate::model::Model;

/// The reference's APIs this build does not speak yet, with what to call them.
const MISSING_APIS: [(&str, &str); 1] = [(
    "openai-codex-responses",
    "the ChatGPT-plan (Codex) Responses backend",
)];

/// Providers that speak an API this build has but need more than a key to be reached.
const MISSING_PROVIDERS: [(&str, &str); 1] = [(
    "github-copilot",
    "GitHub Copilot's token exchange and request headers",
)];

/// What this build lacks to use `model`, when it lacks something: the user-facing error.
pub fn unsupported_reason(model: &Model) -> Option<String> {
    let missing = MISSING_APIS
        .iter()
        .find(|(api, _)| *api == model.api)
        .or_else(|| {
            MISSING_PROVIDERS
                .iter()
                .find(|(provider, _)| *provider == model.provider)
        })?;
    Some(format!(
        "{}/{} needs {}, which this build of KnightCode does not support yet. Choose a model \
         of another provider (--list-models shows the ones you have keys for) or run a local \
         model server.",
        model.provider, model.id, missing.1
    ))
}

/// Whether this build can send requests for `model` (an API it speaks, nothing missing).
pub fn is_supported(model: &Model) -> bool {
    model.api_kind().is_some() && unsupported_reason(model).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;

    #[test]
    fn missing_formats_and_providers_say_so() {
        let mut codex = Model::new("openai-codex", "m", Api::OpenAiResponses, "http://x");
        codex.api = "openai-codex-responses".into();
        let reason = unsupported_reason(&codex).unwrap();
        assert!(reason.starts_with("openai-codex/m needs the ChatGPT-plan (Codex)"));
        assert!(!is_supported(&codex));
        let bedrock = Model::new(
            "amazon-bedrock",
            "m",
            Api::BedrockConverseStream,
            "http://x",
        );
        assert!(is_supported(&bedrock));
        let copilot = Model::new("github-copilot", "gpt", Api::OpenAiCompletions, "http://x");
        assert!(unsupported_reason(&copilot).is_some());
        let groq = Model::new("groq", "m", Api::OpenAiCompletions, "http://x");
        assert!(is_supported(&groq));
    }
}
