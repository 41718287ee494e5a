//! `knightcode --list-models [search]`: the table the TypeScript CLI prints.

use std::cmp::Ordering;
use std::path::Path;

use crate::model::Model;

/// `200000` → `200K`, `1000000` → `1M`, `1048576` → `1.0M`, `131072` → `131.1K`.
pub fn format_token_count(count: u64) -> String {
    if count >= 1_000_000 {
        let millions = count as f64 / 1_000_000.0;
        return if count.is_multiple_of(1_000_000) {
            format!("{}M", count / 1_000_000)
        } else {
            format!("{millions:.1}M")
        };
    }
    if count >= 1_000 {
        let thousands = count as f64 / 1_000.0;
        return if count.is_multiple_of(1_000) {
            format!("{}K", count / 1_000)
        } else {
            format!("{thousands:.1}K")
        };
    }
    count.to_string()
}

/// Subsequence match of one query token (lowercase) against lowercase text; also tries the
/// token with its letter and digit runs swapped (`gpt5` ↔ `5gpt`).
fn fuzzy_matches(token: &str, text: &str) -> bool {
    let subsequence = |query: &str| {
        let mut chars = text.chars();
        query.chars().all(|q| chars.any(|t| t == q))
    };
    if subsequence(token) {
        return true;
    }
    let split = token
        .char_indices()
        .find(|(i, c)| {
            *i > 0 && c.is_ascii_digit() != token.starts_with(|f: char| f.is_ascii_digit())
        })
        .map(|(i, _)| i);
    let Some(split) = split else {
        return false;
    };
    let (head, tail) = token.split_at(split);
    let homogeneous = |s: &str, digits: bool| {
        !s.is_empty()
            && s.chars().all(|c| {
                if digits {
                    c.is_ascii_digit()
                } else {
                    c.is_ascii_lowercase()
                }
            })
    };
    let head_digits = head.starts_with(|c: char| c.is_ascii_digit());
    if homogeneous(head, head_digits) && homogeneous(tail, !head_digits) {
        return subsequence(&format!("{tail}{head}"));
    }
    false
}

/// Keeps models whose `provider id` matches every whitespace-separated token of `query`.
pub fn fuzzy_filter<'m>(models: &'m [Model], query: &str) -> Vec<&'m Model> {
    let tokens: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    models
        .iter()
        .filter(|m| {
            let text = format!("{} {}", m.provider, m.id).to_lowercase();
            tokens.iter().all(|t| fuzzy_matches(t, &text))
        })
        .collect()
}

/// Sort key approximating `localeCompare` (ICU root collation) for ids: punctuation before
/// digits before letters, letters case-insensitive first, lowercase before uppercase on ties.
fn collation_key(text: &str) -> (Vec<(u8, u32)>, Vec<bool>) {
    const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    let primary = text
        .chars()
        .map(|c| {
            if c.is_whitespace() {
                (0, 0)
            } else if let Some(pos) = PUNCTUATION.find(c) {
                (1, pos as u32)
            } else if c.is_ascii_digit() {
                (2, c as u32)
            } else if c.is_alphabetic() {
                (3, c.to_lowercase().next().map_or(c as u32, |l| l as u32))
            } else {
                (1, 100 + c as u32)
            }
        })
        .collect();
    let tertiary = text.chars().map(char::is_uppercase).collect();
    (primary, tertiary)
}

fn locale_compare(a: &str, b: &str) -> Ordering {
    collation_key(a).cmp(&collation_key(b))
}

/// What to tell someone with no usable model: every way to get one, each a thing they can
/// do now. `models_json` is the file a provider can be added to; `docs_dir` is pointed at
/// only when `providers.md` is there. `interactive`: said in the terminal interface, where
/// `/login` is the first way.
pub fn no_models_advice(models_json: &Path, docs_dir: &Path, interactive: bool) -> String {
    let login = if interactive {
        "type /login"
    } else {
        "log in with `knightcode auth login`"
    };
    let mut advice = format!(
        "To use a model, do one of these:\n  \
         - {login} (a Claude Pro/Max, ChatGPT Plus/Pro or GitHub Copilot subscription, \
         or any provider's API key);\n  \
         - set a provider's API key in the environment, e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, \
         GEMINI_API_KEY, OPENROUTER_API_KEY or DEEPSEEK_API_KEY (`knightcode --list-models` \
         then lists its models);\n  \
         - add a provider to {};\n  \
         - start a local model server (Ollama, LM Studio, llama.cpp or vLLM) on its usual \
         port: it is found without setup.\n\
         Logins made with pi's /login (its auth.json) work here too.",
        models_json.display()
    );
    let providers = docs_dir.join("providers.md");
    if providers.is_file() {
        advice.push_str(&format!(
            "\nEvery provider and its variables: {}",
            providers.display()
        ));
    }
    advice
}

/// The message when no model has usable auth.
pub fn no_models_message(models_json: &Path, docs_dir: &Path) -> String {
    format!(
        "No models available. {}",
        no_models_advice(models_json, docs_dir, false)
    )
}

/// Renders what `--list-models [search]` prints on stdout, for the available models. Each
/// line ends with `\n`. A models.json load error is the caller's to print on stderr first.
pub fn render_model_list(
    available: &[Model],
    search: Option<&str>,
    (models_json, docs_dir): (&Path, &Path),
) -> String {
    if available.is_empty() {
        return format!("{}\n", no_models_message(models_json, docs_dir));
    }
    let mut models: Vec<&Model> = match search.filter(|s| !s.trim().is_empty()) {
        Some(query) => fuzzy_filter(available, query),
        None => available.iter().collect(),
    };
    if models.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    models.sort_by(|a, b| {
        locale_compare(&a.provider, &b.provider).then_with(|| locale_compare(&a.id, &b.id))
    });
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ];
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                if m.reasoning { "yes" } else { "no" }.to_owned(),
                if m.supports_images() { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([header[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..6).map(width).collect();
    let line = |cells: [&str; 6]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        format!("{}\n", padded.join("  "))
    };
    let mut out = line(header);
    for row in &rows {
        out.push_str(&line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
        ]));
    }
    out
}

/// What `--list-models [search]` prints: `stderr` holds the models.json warning, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListModelsOutput {
    pub stdout: String,
    pub stderr: Option<String>,
}

/// The whole `--list-models` command: models with resolvable auth from the registry,
/// filtered and rendered like the TypeScript CLI.
pub fn list_models(
    registry: &crate::models::ModelRegistry,
    auth: &crate::auth::AuthContext<'_>,
    search: Option<&str>,
    paths: (&Path, &Path),
) -> ListModelsOutput {
    let stderr = registry
        .error()
        .map(|error| format!("Warning: errors loading models.json:\n{error}\n"));
    let available = registry.available(auth);
    ListModelsOutput {
        stdout: render_model_list(&available, search, paths),
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;

    fn model(provider: &str, id: &str, ctx: u64, max: u64, reasoning: bool, image: bool) -> Model {
        let mut m = Model::new(provider, id, Api::OpenAiCompletions, "http://x");
        m.context_window = ctx;
        m.max_tokens = max;
        m.reasoning = reasoning;
        if image {
            m.input.push("image".into());
        }
        m
    }

    #[test]
    fn token_counts() {
        let cases = [
            (200_000, "200K"),
            (1_000_000, "1M"),
            (1_048_576, "1.0M"),
            (131_072, "131.1K"),
            (999, "999"),
            (8192, "8.2K"),
            (64_000, "64K"),
            (1_047_576, "1.0M"),
        ];
        for (n, text) in cases {
            assert_eq!(format_token_count(n), text);
        }
    }

    #[test]
    fn table() {
        let models = vec![
            model("openai", "gpt-5", 400_000, 128_000, true, true),
            model(
                "anthropic",
                "claude-sonnet-4-5",
                1_000_000,
                64_000,
                true,
                true,
            ),
            model("anthropic", "claude-3-5-haiku", 200_000, 8192, false, false),
        ];
        let out = render_model_list(
            &models,
            None,
            (Path::new("/a/models.json"), Path::new("/docs")),
        );
        assert_eq!(
            out,
            "provider   model              context  max-out  thinking  images\n\
             anthropic  claude-3-5-haiku   200K     8.2K     no        no    \n\
             anthropic  claude-sonnet-4-5  1M       64K      yes       yes   \n\
             openai     gpt-5              400K     128K     yes       yes   \n"
        );
        let filtered = render_model_list(
            &models,
            Some("son45"),
            (Path::new("/a/models.json"), Path::new("/docs")),
        );
        assert!(filtered.contains("claude-sonnet-4-5") && !filtered.contains("gpt-5"));
        let swapped = render_model_list(
            &models,
            Some("5gpt"),
            (Path::new("/a/models.json"), Path::new("/docs")),
        );
        assert!(swapped.contains("gpt-5"), "{swapped}");
        assert_eq!(
            render_model_list(
                &models,
                Some("zzz"),
                (Path::new("/a/models.json"), Path::new("/docs"))
            ),
            "No models matching \"zzz\"\n"
        );
        let none = render_model_list(&[], None, (Path::new("/a/models.json"), Path::new("/docs")));
        assert!(
            none.starts_with("No models available. To use a model"),
            "{none}"
        );
        assert!(none.contains("ANTHROPIC_API_KEY") && none.contains("/a/models.json"));
        // No pointer at documentation that is not there.
        assert!(!none.contains("/docs"), "{none}");
    }

    #[test]
    fn collation() {
        let mut ids = vec!["gpt-5.1", "gpt-5", "gpt-5-mini", "GPT-4o", "gpt-4.1"];
        ids.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(
            ids,
            vec!["gpt-4.1", "GPT-4o", "gpt-5", "gpt-5-mini", "gpt-5.1"]
        );
    }
}
