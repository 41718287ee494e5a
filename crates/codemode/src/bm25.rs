//! BM25 ranking of tools for a query, shared by `tool_search` and codemode's
//! `searchTools()`. A tool's document is its name (split into words: `mcp__github__get_issue`
//! gives `mcp github get issue`), its description, and its namespace's name, aliases and
//! description, so a server's purpose finds its tools.

use std::collections::HashMap;

use knightcode_agent::ToolListing;

/// How many matches a search returns unless told otherwise.
pub const DEFAULT_LIMIT: usize = 8;

/// Term-frequency saturation and length normalisation: the usual Okapi values.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A tool's own name counts this many times: a word of the name says more than one of a
/// long description.
const NAME_WEIGHT: usize = 3;

/// Lower-case words of `text`: runs of letters and digits, split at camel-case humps too
/// (`getIssue` → `get`, `issue`).
pub fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The words a tool is found by.
fn document(tool: &ToolListing) -> Vec<String> {
    let mut terms = Vec::new();
    let name = words(&tool.definition.name);
    for _ in 0..NAME_WEIGHT {
        terms.extend(name.iter().cloned());
    }
    terms.extend(words(&tool.definition.description));
    if let Some(namespace) = &tool.namespace {
        terms.extend(words(&namespace.name));
        for alias in &namespace.aliases {
            terms.extend(words(alias));
        }
        if let Some(description) = &namespace.description {
            terms.extend(words(description));
        }
    }
    terms
}

/// The indices of `tools` that match `query`, best first (ties keep the tools' order), at
/// most `limit`. A query that is exactly a tool's name puts that tool first.
pub fn rank(tools: &[ToolListing], query: &str, limit: usize) -> Vec<usize> {
    let query_terms = words(query);
    if query_terms.is_empty() || tools.is_empty() {
        return Vec::new();
    }
    let documents: Vec<Vec<String>> = tools.iter().map(document).collect();
    let count = documents.len() as f64;
    let average = documents.iter().map(Vec::len).sum::<usize>() as f64 / count;
    let mut document_frequency: HashMap<&str, usize> = HashMap::new();
    for document in &documents {
        let mut seen: Vec<&str> = document.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for term in seen {
            *document_frequency.entry(term).or_default() += 1;
        }
    }
    let mut scored: Vec<(usize, f64)> = Vec::new();
    for (index, document) in documents.iter().enumerate() {
        let length = document.len() as f64;
        let mut score = 0.0;
        for term in &query_terms {
            let frequency = document.iter().filter(|t| *t == term).count() as f64;
            if frequency == 0.0 {
                continue;
            }
            let n = document_frequency.get(term.as_str()).copied().unwrap_or(0) as f64;
            let idf = ((count - n + 0.5) / (n + 0.5) + 1.0).ln();
            let norm = frequency + K1 * (1.0 - B + B * length / average.max(1.0));
            score += idf * frequency * (K1 + 1.0) / norm;
        }
        if tools[index].definition.name == query.trim() {
            score += 1_000.0;
        }
        if score > 0.0 {
            scored.push((index, score));
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().take(limit).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use knightcode_agent::ToolDefinition;
    use knightcode_agent::ToolExposure;

    fn tool(name: &str, description: &str) -> ToolListing {
        ToolListing {
            definition: ToolDefinition {
                name: name.to_owned(),
                label: name.to_owned(),
                description: description.to_owned(),
                parameters: serde_json::json!({"type": "object"}),
                prompt_snippet: None,
                prompt_guidelines: Vec::new(),
                execution: knightcode_agent::ExecutionMode::Parallel,
            },
            exposure: ToolExposure::Deferred,
            namespace: None,
            active: false,
            callable: true,
            output_schema: None,
        }
    }

    #[test]
    fn words_split_names_and_camel_case() {
        assert_eq!(
            words("mcp__github__getIssue v2"),
            ["mcp", "github", "get", "issue", "v2"]
        );
    }

    #[test]
    fn the_tool_whose_words_match_ranks_first() {
        let tools = vec![
            tool("mcp__jira__create_ticket", "Create a Jira ticket"),
            tool("mcp__github__get_issue", "Read one GitHub issue by number"),
            tool("mcp__github__list_issues", "List issues of a repository"),
        ];
        let ranked = rank(&tools, "github issue", 8);
        assert_eq!(ranked.len(), 2);
        assert!(ranked.contains(&1) && ranked.contains(&2));
        assert_eq!(rank(&tools, "jira ticket", 8), [0]);
        assert!(rank(&tools, "weather", 8).is_empty());
        assert_eq!(rank(&tools, "mcp__github__list_issues", 1), [2]);
    }
}
