//! Model selection from `--model`, `--provider` and defaults.

use knightcode_ai::Api;
use knightcode_ai::Model;
use knightcode_ai::ThinkingLevel;
use knightcode_runtime::model_select::default_model;
use knightcode_runtime::model_select::find_exact_reference;
use knightcode_runtime::model_select::parse_model_pattern;
use knightcode_runtime::model_select::resolve_cli_model;

fn model(provider: &str, id: &str, name: &str) -> Model {
    let mut m = Model::new(provider, id, Api::AnthropicMessages, "http://x");
    m.name = name.into();
    m
}

fn catalog() -> Vec<Model> {
    vec![
        model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5"),
        model(
            "anthropic",
            "claude-sonnet-4-5-20250929",
            "Claude Sonnet 4.5 (dated)",
        ),
        model("anthropic", "claude-opus-4-7", "Claude Opus 4.7"),
        model("openai", "gpt-5.5", "GPT-5.5"),
        model("openrouter", "openai/gpt-4o:extended", "GPT-4o extended"),
        model("openrouter", "gpt-5.5", "GPT-5.5 via OpenRouter"),
    ]
}

#[test]
fn exact_then_fuzzy_with_aliases_preferred() {
    let models = catalog();
    assert_eq!(
        find_exact_reference("anthropic/claude-opus-4-7", &models)
            .unwrap()
            .id,
        "claude-opus-4-7"
    );
    assert!(
        find_exact_reference("gpt-5.5", &models).is_none(),
        "ambiguous bare id"
    );
    let sonnet = parse_model_pattern("sonnet", &models, true);
    assert_eq!(
        sonnet.model.unwrap().id,
        "claude-sonnet-4-5",
        "alias beats dated version"
    );
    let with_level = parse_model_pattern("opus:high", &models, false);
    assert_eq!(with_level.model.unwrap().id, "claude-opus-4-7");
    assert_eq!(with_level.thinking, Some(ThinkingLevel::High));
    assert!(
        parse_model_pattern("opus:loud", &models, false)
            .model
            .is_none(),
        "strict CLI parsing"
    );
    let lenient = parse_model_pattern("opus:loud", &models, true);
    assert!(lenient.model.is_some());
    assert!(
        lenient
            .warning
            .unwrap()
            .contains("Invalid thinking level \"loud\"")
    );
}

#[test]
fn cli_resolution_rules() {
    let models = catalog();
    let none = |_: &str| false;
    let only_openai = |p: &str| p == "openai";
    let r = resolve_cli_model(None, "anthropic/sonnet", None, &models, &none).unwrap();
    assert_eq!(r.model.id, "claude-sonnet-4-5");
    let err = resolve_cli_model(None, "gpt-5.5", None, &models, &none).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Model \"gpt-5.5\" is ambiguous across providers: openai/gpt-5.5, openrouter/gpt-5.5. \
         No matching provider is authenticated. Use --provider or provider/model."
    );
    let r = resolve_cli_model(None, "gpt-5.5", None, &models, &only_openai).unwrap();
    assert_eq!(r.model.provider, "openai");
    let r = resolve_cli_model(None, "openai/gpt-4o:extended", None, &models, &none).unwrap();
    assert_eq!(
        r.model.provider, "openrouter",
        "a full OpenRouter id beats provider inference"
    );
    let r = resolve_cli_model(Some("Anthropic"), "anthropic/opus", None, &models, &none).unwrap();
    assert_eq!(r.model.id, "claude-opus-4-7");
    let r = resolve_cli_model(Some("anthropic"), "claude-next:high", None, &models, &none).unwrap();
    assert_eq!(r.model.id, "claude-next");
    assert!(r.model.reasoning);
    assert_eq!(r.thinking, Some(ThinkingLevel::High));
    assert!(r.warning.unwrap().contains("Using custom model id"));
    let err = resolve_cli_model(Some("nope"), "x", None, &models, &none).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unknown provider \"nope\". Use --list-models to see available providers/models."
    );
    let err = resolve_cli_model(None, "zzz", None, &models, &none).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Model \"zzz\" not found. Use --list-models to see available models."
    );
}

#[test]
fn default_model_order() {
    let models = catalog();
    assert_eq!(
        default_model(&models, Some(("openai", "gpt-5.5")))
            .unwrap()
            .provider,
        "openai"
    );
    let available: Vec<Model> = models
        .iter()
        .filter(|m| m.provider != "openrouter")
        .cloned()
        .collect();
    assert_eq!(
        default_model(&available, None).unwrap().id,
        "claude-opus-4-7"
    );
    assert!(default_model(&[], None).is_none());
}

#[test]
fn scopes_resolve_globs_fuzzy_patterns_and_levels_in_order() {
    use knightcode_runtime::model_select::resolve_model_scope;
    let models = catalog();
    let patterns: Vec<String> = [
        "opus:high",
        "anthropic/*sonnet*",
        "gpt-5.5:bogus",
        "*gpt-4o*",
        "openrouter/*",
        "nothing-like-this",
        "claude-opus-4-7",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let (scope, warnings) = resolve_model_scope(&patterns, &models);
    let ids: Vec<(String, Option<ThinkingLevel>)> = scope
        .iter()
        .map(|s| (format!("{}/{}", s.model.provider, s.model.id), s.thinking))
        .collect();
    assert_eq!(
        ids,
        [
            (
                "anthropic/claude-opus-4-7".to_owned(),
                Some(ThinkingLevel::High)
            ),
            ("anthropic/claude-sonnet-4-5".to_owned(), None),
            ("anthropic/claude-sonnet-4-5-20250929".to_owned(), None),
            // A bad level is dropped with a warning; the ambiguous id falls back to the
            // partial match, as `--model` does.
            ("openai/gpt-5.5".to_owned(), None),
            // `openrouter/*` does not reach `openrouter/openai/gpt-4o:extended` either.
            ("openrouter/gpt-5.5".to_owned(), None),
        ],
        "duplicates dropped, pattern order kept"
    );
    assert_eq!(
        warnings,
        [
            "Invalid thinking level \"bogus\" in pattern \"gpt-5.5:bogus\". Using default instead."
                .to_owned(),
            // `*` does not cross `/`, in `provider/id` or in an id with a slash.
            "No models match pattern \"*gpt-4o*\"".to_owned(),
            "No models match pattern \"nothing-like-this\"".to_owned(),
        ]
    );
    // Case-insensitive, over `provider/id` and over the bare id (OpenRouter's has a slash).
    let (scope, _) = resolve_model_scope(&["OPENAI/GPT-*:low".to_owned()], &models);
    let ids: Vec<(&str, &str)> = scope
        .iter()
        .map(|s| (s.model.provider.as_str(), s.model.id.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            ("openai", "gpt-5.5"),
            ("openrouter", "openai/gpt-4o:extended")
        ]
    );
    assert!(scope.iter().all(|s| s.thinking == Some(ThinkingLevel::Low)));
}
