//! The built-in catalog, generated from the reference's model list: a key in a provider's
//! environment variable finds that provider's models, `models.json` still changes them, and
//! the providers this build cannot reach yet say so when used.

use std::collections::HashMap;

use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::MapEnv;
use knightcode_ai::ModelRegistry;
use knightcode_ai::auth::provider_env_vars;

fn available(dir: &std::path::Path, env: &[(&str, &str)]) -> Vec<(String, String)> {
    let registry = ModelRegistry::load(dir);
    let storage = AuthStorage::empty(dir);
    let env = MapEnv::new(env.iter().copied());
    let keys = HashMap::new();
    let auth = AuthContext {
        storage: &storage,
        env: &env,
        runtime_keys: &keys,
    };
    registry
        .available(&auth)
        .into_iter()
        .map(|m| (m.provider, m.id))
        .collect()
}

#[test]
fn every_provider_of_the_reference_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let registry = ModelRegistry::load(dir.path());
    let mut providers: Vec<&str> = registry
        .models()
        .iter()
        .map(|m| m.provider.as_str())
        .collect();
    providers.dedup();
    assert_eq!(providers.len(), 31, "{providers:?}");
    for wanted in [
        "amazon-bedrock",
        "google-vertex",
        "azure-openai-responses",
        "github-copilot",
        "openai-codex",
        "mistral",
        "cerebras",
        "fireworks",
        "huggingface",
        "zai",
        "kimi-coding",
        "minimax",
        "moonshotai",
        "opencode",
        "vercel-ai-gateway",
        "cloudflare-workers-ai",
        "xiaomi",
    ] {
        assert!(providers.contains(&wanted), "{wanted} missing");
    }
    assert!(registry.models().len() > 900);
}

#[test]
fn a_key_in_the_environment_finds_its_providers_models() {
    let dir = tempfile::tempdir().unwrap();
    assert!(available(dir.path(), &[]).is_empty());
    let deepseek = available(dir.path(), &[("DEEPSEEK_API_KEY", "sk-x")]);
    assert_eq!(
        deepseek,
        [
            ("deepseek".to_owned(), "deepseek-v4-flash".to_owned()),
            ("deepseek".to_owned(), "deepseek-v4-pro".to_owned()),
        ]
    );
    // One variable can serve two providers (the reference's mainland China endpoints).
    let moonshot = available(dir.path(), &[("MOONSHOT_API_KEY", "sk-x")]);
    assert!(moonshot.iter().any(|(p, _)| p == "moonshotai"));
    assert!(moonshot.iter().any(|(p, _)| p == "moonshotai-cn"));
    for (provider, variable) in [
        ("cerebras", "CEREBRAS_API_KEY"),
        ("fireworks", "FIREWORKS_API_KEY"),
        ("huggingface", "HF_TOKEN"),
        ("zai", "ZAI_API_KEY"),
        ("kimi-coding", "KIMI_API_KEY"),
        ("opencode", "OPENCODE_API_KEY"),
        ("vercel-ai-gateway", "AI_GATEWAY_API_KEY"),
        ("xiaomi", "XIAOMI_API_KEY"),
        ("mistral", "MISTRAL_API_KEY"),
    ] {
        assert!(provider_env_vars(provider).contains(&variable));
        let found = available(dir.path(), &[(variable, "k")]);
        assert!(
            found.iter().any(|(p, _)| p == provider),
            "{variable} finds no {provider} model"
        );
    }
    assert_eq!(
        provider_env_vars("github-copilot"),
        ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]
    );
    // Bedrock signs in with the AWS credential chain, not one key.
    let bedrock = available(dir.path(), &[("AWS_PROFILE", "work")]);
    assert!(!bedrock.is_empty());
    assert!(bedrock.iter().all(|(p, _)| p == "amazon-bedrock"));
}

#[test]
fn models_json_still_changes_catalog_providers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.json"),
        r#"{"providers": {"groq": {"baseUrl": "http://127.0.0.1:9/v1",
            "modelOverrides": {"openai/gpt-oss-120b": {"name": "Mine", "contextWindow": 1000}}}}}"#,
    )
    .unwrap();
    let registry = ModelRegistry::load(dir.path());
    assert_eq!(registry.error(), None);
    let model = registry.find("groq", "openai/gpt-oss-120b").unwrap();
    assert_eq!(model.base_url, "http://127.0.0.1:9/v1");
    assert_eq!((model.name.as_str(), model.context_window), ("Mine", 1000));
    // Untouched providers keep their catalog entries, found without listing everything.
    let sonnet = registry.find("anthropic", "claude-sonnet-4-5").unwrap();
    assert_eq!(sonnet.base_url, "https://api.anthropic.com");
    // Every model is listed once, the changed provider's after the catalog's.
    let groq: Vec<_> = registry
        .models()
        .iter()
        .filter(|m| m.provider == "groq")
        .collect();
    assert!(groq.iter().all(|m| m.base_url == "http://127.0.0.1:9/v1"));
    assert_eq!(registry.models().last().unwrap().provider, "groq");
}

#[test]
fn every_provider_of_the_catalog_can_be_reached() {
    let dir = tempfile::tempdir().unwrap();
    let registry = ModelRegistry::load(dir.path());
    let unreachable: Vec<String> = registry
        .models()
        .iter()
        .filter(|m| !knightcode_ai::is_supported(m))
        .map(|m| format!("{}/{} ({})", m.provider, m.id, m.api))
        .collect();
    assert!(unreachable.is_empty(), "{unreachable:?}");
}
