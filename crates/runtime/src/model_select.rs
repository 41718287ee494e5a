//! Choosing the model: `--model`/`--provider` patterns, `--models` scopes, and the start-up
//! default (`spec/cli.md` §4; the reference's model resolver for the fine print).

use knightcode_ai::Model;
use knightcode_ai::ThinkingLevel;

use crate::error::RuntimeError;

/// Preferred model per known provider, in fallback priority order: with no `--model` and no
/// saved default, the first of these that has auth is used.
pub const DEFAULT_MODEL_PER_PROVIDER: &[(&str, &str)] = &[
    ("openrouter", "moonshotai/kimi-k2.6"),
    ("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1"),
    ("anthropic", "claude-opus-4-7"),
    ("openai", "gpt-5.5"),
    ("azure-openai-responses", "gpt-5.4"),
    ("openai-codex", "gpt-5.5"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-3.1-pro-preview"),
    ("google-vertex", "gemini-3.1-pro-preview"),
    ("github-copilot", "gpt-5.4"),
    ("vercel-ai-gateway", "zai/glm-5.1"),
    ("xai", "grok-4.20-0309-reasoning"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "gpt-oss-120b"),
    ("zai", "glm-5.1"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M2.7"),
    ("minimax-cn", "MiniMax-M2.7"),
    ("moonshotai", "kimi-k2.6"),
    ("moonshotai-cn", "kimi-k2.6"),
    ("huggingface", "moonshotai/Kimi-K2.6"),
    ("fireworks", "accounts/fireworks/models/kimi-k2p6"),
    ("opencode", "kimi-k2.6"),
    ("opencode-go", "kimi-k2.6"),
    ("kimi-coding", "kimi-for-coding"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6"),
    (
        "cloudflare-ai-gateway",
        "workers-ai/@cf/moonshotai/kimi-k2.6",
    ),
    ("xiaomi", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.5-pro"),
    ("together", "moonshotai/Kimi-K2.6"),
];

/// `true` for ids without a `-YYYYMMDD` date suffix (or ending in `-latest`).
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    let dated = bytes.len() >= 9
        && bytes[bytes.len() - 9] == b'-'
        && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

fn canonical(model: &Model) -> String {
    format!("{}/{}", model.provider, model.id)
}

/// An exact `provider/id` or bare id match; ambiguous bare ids match nothing.
pub fn find_exact_reference<'a>(reference: &str, models: &'a [Model]) -> Option<&'a Model> {
    let reference = reference.trim();
    if reference.is_empty() {
        return None;
    }
    let lower = reference.to_lowercase();
    let canonical_matches: Vec<&Model> = models
        .iter()
        .filter(|m| canonical(m).to_lowercase() == lower)
        .collect();
    match canonical_matches.len() {
        1 => return Some(canonical_matches[0]),
        0 => {}
        _ => return None,
    }
    if let Some((provider, id)) = reference.split_once('/') {
        let (provider, id) = (provider.trim().to_lowercase(), id.trim().to_lowercase());
        if !provider.is_empty() && !id.is_empty() {
            let matches: Vec<&Model> = models
                .iter()
                .filter(|m| m.provider.to_lowercase() == provider && m.id.to_lowercase() == id)
                .collect();
            match matches.len() {
                1 => return Some(matches[0]),
                0 => {}
                _ => return None,
            }
        }
    }
    let id_matches: Vec<&Model> = models
        .iter()
        .filter(|m| m.id.to_lowercase() == lower)
        .collect();
    (id_matches.len() == 1).then(|| id_matches[0])
}

/// Exact reference, else the best partial id/name match: aliases before dated versions,
/// then the id that sorts highest (the newest).
fn match_model<'a>(pattern: &str, models: &'a [Model]) -> Option<&'a Model> {
    if let Some(exact) = find_exact_reference(pattern, models) {
        return Some(exact);
    }
    let lower = pattern.to_lowercase();
    let mut matches: Vec<&Model> = models
        .iter()
        .filter(|m| m.id.to_lowercase().contains(&lower) || m.name.to_lowercase().contains(&lower))
        .collect();
    if matches.is_empty() {
        return None;
    }
    let has_alias = matches.iter().any(|m| is_alias(&m.id));
    matches.retain(|m| is_alias(&m.id) == has_alias);
    matches.sort_by(|a, b| b.id.cmp(&a.id));
    matches.first().copied()
}

/// A pattern resolved to a model, with a `:<level>` suffix if it had one.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternMatch<'a> {
    pub model: Option<&'a Model>,
    pub thinking: Option<ThinkingLevel>,
    pub warning: Option<String>,
}

/// Matches the whole pattern first (ids may contain colons), then peels `:suffix` parts.
/// `lenient`: an invalid suffix is dropped with a warning (scopes) instead of failing (CLI).
pub fn parse_model_pattern<'a>(
    pattern: &str,
    models: &'a [Model],
    lenient: bool,
) -> PatternMatch<'a> {
    if let Some(model) = match_model(pattern, models) {
        return PatternMatch {
            model: Some(model),
            thinking: None,
            warning: None,
        };
    }
    let Some((prefix, suffix)) = pattern.rsplit_once(':') else {
        return PatternMatch {
            model: None,
            thinking: None,
            warning: None,
        };
    };
    match ThinkingLevel::parse(suffix) {
        Some(level) => {
            let inner = parse_model_pattern(prefix, models, lenient);
            if inner.model.is_some() && inner.warning.is_none() {
                PatternMatch {
                    thinking: Some(level),
                    ..inner
                }
            } else {
                inner
            }
        }
        None if lenient => {
            let inner = parse_model_pattern(prefix, models, lenient);
            if inner.model.is_some() {
                PatternMatch {
                    model: inner.model,
                    thinking: None,
                    warning: Some(format!(
                        "Invalid thinking level \"{suffix}\" in pattern \"{pattern}\". Using default instead."
                    )),
                }
            } else {
                inner
            }
        }
        None => PatternMatch {
            model: None,
            thinking: None,
            warning: None,
        },
    }
}

/// The result of `--provider`/`--model`.
#[derive(Debug, Clone, PartialEq)]
pub struct CliModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
    pub warning: Option<String>,
}

/// Resolves `--model` (with an optional `--provider`) against all known models, so that
/// `--api-key` works for a provider with no stored credentials. `has_auth` tells whether a
/// provider has credentials (to settle bare ids that several providers serve).
pub fn resolve_cli_model(
    cli_provider: Option<&str>,
    cli_model: &str,
    cli_thinking: Option<ThinkingLevel>,
    models: &[Model],
    has_auth: &dyn Fn(&str) -> bool,
) -> Result<CliModel, RuntimeError> {
    if models.is_empty() {
        return Err(RuntimeError::NoModels);
    }
    let find_provider = |name: &str| {
        models
            .iter()
            .find(|m| m.provider.eq_ignore_ascii_case(name))
            .map(|m| m.provider.clone())
    };
    let mut provider = match cli_provider {
        Some(name) => Some(
            find_provider(name).ok_or_else(|| RuntimeError::UnknownProvider {
                name: name.to_owned(),
            })?,
        ),
        None => None,
    };
    let mut pattern = cli_model.to_owned();
    let mut inferred = false;
    if provider.is_none()
        && let Some((prefix, rest)) = cli_model.split_once('/')
        && let Some(found) = find_provider(prefix)
    {
        provider = Some(found);
        pattern = rest.to_owned();
        inferred = true;
    }
    if provider.is_none() {
        let lower = cli_model.to_lowercase();
        let exact: Vec<&Model> = models
            .iter()
            .filter(|m| m.id.to_lowercase() == lower || canonical(m).to_lowercase() == lower)
            .collect();
        if exact.len() == 1 {
            return Ok(CliModel {
                model: exact[0].clone(),
                thinking: None,
                warning: None,
            });
        }
        if exact.len() > 1 {
            let authed: Vec<&&Model> = exact.iter().filter(|m| has_auth(&m.provider)).collect();
            if authed.len() == 1 {
                return Ok(CliModel {
                    model: (*authed[0]).clone(),
                    thinking: None,
                    warning: None,
                });
            }
            let mut candidates: Vec<String> = exact.iter().map(|m| canonical(m)).collect();
            candidates.sort();
            return Err(RuntimeError::AmbiguousModel {
                pattern: cli_model.to_owned(),
                candidates,
                several_authenticated: !authed.is_empty(),
            });
        }
    }
    if let (Some(_), Some(provider)) = (cli_provider, provider.as_deref()) {
        let prefix = format!("{provider}/").to_lowercase();
        if cli_model.to_lowercase().starts_with(&prefix) {
            pattern = cli_model[prefix.len()..].to_owned();
        }
    }
    let candidates: Vec<Model> = match &provider {
        Some(provider) => models
            .iter()
            .filter(|m| &m.provider == provider)
            .cloned()
            .collect(),
        None => models.to_vec(),
    };
    let parsed = parse_model_pattern(&pattern, &candidates, false);
    if let Some(model) = parsed.model {
        return Ok(CliModel {
            model: model.clone(),
            thinking: parsed.thinking,
            warning: parsed.warning,
        });
    }
    if inferred {
        // "openai/gpt-4o:extended" may be one OpenRouter id rather than provider + model.
        let fallback = parse_model_pattern(cli_model, models, false);
        if let Some(model) = fallback.model {
            return Ok(CliModel {
                model: model.clone(),
                thinking: fallback.thinking,
                warning: fallback.warning,
            });
        }
    }
    if let Some(provider) = provider {
        // An id the catalog does not know yet: use the provider's settings with that id.
        let (model_id, suffix_level) = match pattern.rsplit_once(':') {
            Some((id, suffix)) if cli_thinking.is_none() => match ThinkingLevel::parse(suffix) {
                Some(level) => (id.to_owned(), Some(level)),
                None => (pattern.clone(), None),
            },
            _ => (pattern.clone(), None),
        };
        let base = DEFAULT_MODEL_PER_PROVIDER
            .iter()
            .find(|(p, _)| *p == provider)
            .and_then(|(_, id)| candidates.iter().find(|m| m.id == *id))
            .or_else(|| candidates.first());
        if let Some(base) = base {
            let mut model = base.clone();
            model.id = model_id.clone();
            model.name = model_id.clone();
            let requested = cli_thinking.or(suffix_level);
            if requested.is_some_and(|level| level != ThinkingLevel::Off) {
                model.reasoning = true;
            }
            return Ok(CliModel {
                model,
                thinking: suffix_level,
                warning: Some(format!(
                    "Model \"{model_id}\" not found for provider \"{provider}\". Using custom model id."
                )),
            });
        }
        return Err(RuntimeError::ModelNotFound {
            model: format!("{provider}/{pattern}"),
        });
    }
    Err(RuntimeError::ModelNotFound {
        model: cli_model.to_owned(),
    })
}

/// The sentence of [`RuntimeError::AmbiguousModel`] that says which providers matched.
pub(crate) fn ambiguity_hint(several_authenticated: bool) -> &'static str {
    if several_authenticated {
        "More than one matching provider is authenticated."
    } else {
        "No matching provider is authenticated."
    }
}

/// A model of the `--models` / `enabledModels` scope, with the thinking level its pattern
/// named (`pattern:high`).
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
}

/// Resolves scope patterns against the available models, in pattern order without
/// duplicates. A pattern with `*`, `?` or `[` is a case-insensitive glob over `provider/id`
/// or the bare id (`*` does not cross `/`), with an optional `:level`; any other pattern
/// resolves like `--model` (exact, then partial, aliases before dated ids; `:level` peeled
/// off). Returns the warnings for patterns that matched nothing or had a bad level.
pub fn resolve_model_scope(
    patterns: &[String],
    available: &[Model],
) -> (Vec<ScopedModel>, Vec<String>) {
    let mut scope: Vec<ScopedModel> = Vec::new();
    let mut warnings = Vec::new();
    let add = |scope: &mut Vec<ScopedModel>, model: &Model, thinking| {
        if !scope.iter().any(|s| same_model(&s.model, model)) {
            scope.push(ScopedModel {
                model: model.clone(),
                thinking,
            });
        }
    };
    for pattern in patterns {
        if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = match pattern.rsplit_once(':') {
                Some((glob, suffix)) => match ThinkingLevel::parse(suffix) {
                    Some(level) => (glob, Some(level)),
                    None => (pattern.as_str(), None),
                },
                None => (pattern.as_str(), None),
            };
            if let Some(model) = find_exact_reference(glob, available) {
                add(&mut scope, model, thinking);
                continue;
            }
            let matcher = globset::GlobBuilder::new(glob)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher());
            let matching: Vec<&Model> = match &matcher {
                Ok(matcher) => available
                    .iter()
                    .filter(|m| matcher.is_match(canonical(m)) || matcher.is_match(&m.id))
                    .collect(),
                Err(_) => Vec::new(),
            };
            if matching.is_empty() {
                warnings.push(format!("No models match pattern \"{pattern}\""));
            }
            for model in matching {
                add(&mut scope, model, thinking);
            }
            continue;
        }
        let parsed = parse_model_pattern(pattern, available, true);
        warnings.extend(parsed.warning);
        match parsed.model {
            Some(model) => add(&mut scope, model, parsed.thinking),
            None => warnings.push(format!("No models match pattern \"{pattern}\"")),
        }
    }
    (scope, warnings)
}

fn same_model(a: &Model, b: &Model) -> bool {
    a.provider == b.provider && a.id == b.id
}

/// The first usable model when nothing was asked for: the saved default if it has auth, then
/// the preferred model of the first provider that has auth, then any model with auth; only
/// models this build can use ([`knightcode_ai::is_supported`]).
pub fn default_model<'a>(available: &'a [Model], saved: Option<(&str, &str)>) -> Option<&'a Model> {
    if let Some((provider, id)) = saved
        && let Some(model) = available
            .iter()
            .find(|m| m.provider == provider && m.id == id)
    {
        return Some(model);
    }
    // A model this build cannot send requests for yet is never chosen unasked.
    let usable = |m: &&Model| knightcode_ai::is_supported(m);
    DEFAULT_MODEL_PER_PROVIDER
        .iter()
        .find_map(|(provider, id)| {
            available
                .iter()
                .filter(usable)
                .find(|m| m.provider == *provider && m.id == *id)
        })
        .or_else(|| available.iter().find(usable))
}
