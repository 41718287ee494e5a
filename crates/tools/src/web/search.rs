//! The `websearch` tool: DuckDuckGo's HTML results (no key) or Brave's search API.

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use reqwest::Url;
use serde::Deserialize;
use serde_json::{Value, json};

use super::page::{
    attribute, collapse_whitespace, element_name, find_all, find_first, has_class, parse_html,
    text_of,
};
use super::{SearchSettingsSource, WebConfig, describe_request_error};
use crate::util::parse_args;

/// Results returned unless `limit` says otherwise.
pub const DEFAULT_RESULTS: usize = 5;

/// Most results one search returns.
pub const MAX_RESULTS: usize = 10;

/// Where searches go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchProvider {
    #[default]
    DuckDuckGo,
    Brave,
}

impl SearchProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DuckDuckGo => "duckduckgo",
            Self::Brave => "brave",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "duckduckgo" | "ddg" => Some(Self::DuckDuckGo),
            "brave" => Some(Self::Brave),
            _ => None,
        }
    }
}

/// The provider, its key and endpoints (tests point these at a local server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchSettings {
    pub provider: SearchProvider,
    /// From `tools.json` or `BRAVE_API_KEY`.
    pub brave_api_key: Option<String>,
    pub duckduckgo_url: String,
    pub brave_url: String,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            provider: SearchProvider::DuckDuckGo,
            brave_api_key: None,
            duckduckgo_url: "https://html.duckduckgo.com/html/".to_owned(),
            brave_url: "https://api.search.brave.com/res/v1/web/search".to_owned(),
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    limit: Option<f64>,
}

/// Searches the web.
pub struct WebSearchTool {
    definition: ToolDefinition,
    config: WebConfig,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "websearch".to_owned(),
        label: "websearch".to_owned(),
        description: format!(
            "Search the web and get back titles, URLs and snippets (default {DEFAULT_RESULTS} \
             results, at most {MAX_RESULTS}). Read a result with webfetch."
        ),
        parameters: json!({
            "type": "object",
            "required": ["query"],
            "properties": {
                "query": {"type": "string", "description": "What to search for"},
                "limit": {"type": "number", "description": format!("Number of results (1-{MAX_RESULTS}, default {DEFAULT_RESULTS})")}
            }
        }),
        prompt_snippet: Some("Search the web".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Parallel,
    }
}

impl WebSearchTool {
    pub fn new(config: WebConfig) -> Self {
        Self {
            definition: definition(),
            config,
        }
    }

    fn settings(&self) -> SearchSettings {
        let source: Option<&SearchSettingsSource> = self.config.search.as_ref();
        source.map(|source| source()).unwrap_or_default()
    }

    async fn get(&self, request: reqwest::RequestBuilder, what: &str) -> Result<String, String> {
        let response = request
            .send()
            .await
            .map_err(|error| describe_request_error(&error, what, self.config.timeout))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|error| describe_request_error(&error, what, self.config.timeout))?;
        if !status.is_success() {
            let detail = body.trim();
            let detail: String = detail.chars().take(300).collect();
            return Err(format!("{what} answered HTTP {status}: {detail}"));
        }
        Ok(body)
    }

    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, String> {
        let settings = self.settings();
        let client = knightcode_ai::http_client_builder()
            .map_err(|error| error.to_string())?
            .timeout(self.config.timeout)
            .build()
            .map_err(|error| error.to_string())?;
        match settings.provider {
            SearchProvider::DuckDuckGo => {
                let url = Url::parse_with_params(&settings.duckduckgo_url, [("q", query)])
                    .map_err(|error| format!("invalid DuckDuckGo URL: {error}"))?;
                let html = self.get(client.get(url), "DuckDuckGo search").await?;
                let hits = parse_duckduckgo(&html);
                if hits.is_empty() && !html.contains("result") {
                    return Err(
                        "DuckDuckGo sent no results page (it may be limiting requests); try \
                         again later, or switch to Brave with /tools websearch brave"
                            .to_owned(),
                    );
                }
                Ok(hits.into_iter().take(limit).collect())
            }
            SearchProvider::Brave => {
                let Some(key) = settings.brave_api_key.filter(|key| !key.is_empty()) else {
                    return Err(
                        "Brave search needs an API key: set BRAVE_API_KEY or add one with \
                         /tools websearch brave <key>"
                            .to_owned(),
                    );
                };
                let count = limit.to_string();
                let url = Url::parse_with_params(
                    &settings.brave_url,
                    [("q", query), ("count", count.as_str())],
                )
                .map_err(|error| format!("invalid Brave URL: {error}"))?;
                let request = client
                    .get(url)
                    .header(reqwest::header::ACCEPT, "application/json")
                    .header("X-Subscription-Token", key);
                let body = self.get(request, "Brave search").await?;
                parse_brave(&body).map(|hits| hits.into_iter().take(limit).collect())
            }
        }
    }

    async fn run(&self, args: SearchArgs) -> Result<ToolOutput, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::failed("websearch: the query is empty"));
        }
        let limit = args
            .limit
            .filter(|l| l.is_finite() && *l >= 1.0)
            .map_or(DEFAULT_RESULTS, |l| (l.trunc() as usize).min(MAX_RESULTS));
        let hits = self
            .search(query, limit)
            .await
            .map_err(|why| ToolError::failed(format!("websearch: {why}")))?;
        if hits.is_empty() {
            return Ok(ToolOutput::text(format!("No results found for {query:?}.")));
        }
        let text = hits
            .iter()
            .enumerate()
            .map(|(index, hit)| {
                let mut entry = format!("{}. {}\n   {}", index + 1, hit.title, hit.url);
                if !hit.snippet.is_empty() {
                    entry.push_str(&format!("\n   {}", hit.snippet));
                }
                entry
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        let results: Vec<Value> = hits
            .iter()
            .map(|hit| json!({"title": hit.title, "url": hit.url, "snippet": hit.snippet}))
            .collect();
        Ok(ToolOutput::text(text).with_details(json!({"results": results})))
    }
}

/// DuckDuckGo links go through its redirector (`//duckduckgo.com/l/?uddg=<target>`).
fn duckduckgo_target(href: &str) -> String {
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_owned()
    };
    Url::parse(&absolute)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == "uddg")
                .map(|(_, target)| target.into_owned())
        })
        .unwrap_or(absolute)
}

/// The organic results of DuckDuckGo's HTML page (ads left out).
pub(super) fn parse_duckduckgo(html: &str) -> Vec<SearchHit> {
    let Some(tree) = parse_html(html) else {
        return Vec::new();
    };
    let mut containers = Vec::new();
    find_all(
        &tree,
        &|node| element_name(node).is_some() && has_class(node, "result"),
        &mut containers,
    );
    containers
        .iter()
        .filter(|node| !has_class(node, "result--ad"))
        .filter_map(|node| {
            let link = find_first(node, &|n| has_class(n, "result__a"))?;
            let href = attribute(&link, "href")?;
            let snippet = find_first(node, &|n| has_class(n, "result__snippet"))
                .map(|n| collapse_whitespace(&text_of(&n)))
                .unwrap_or_default();
            Some(SearchHit {
                title: collapse_whitespace(&text_of(&link)),
                url: duckduckgo_target(&href),
                snippet,
            })
        })
        .collect()
}

/// Brave's `web.results` (titles and descriptions carry `<strong>` highlights).
pub(super) fn parse_brave(body: &str) -> Result<Vec<SearchHit>, String> {
    let value: Value = serde_json::from_str(body)
        .map_err(|error| format!("Brave search sent something that is not JSON: {error}"))?;
    let strip = |text: &str| {
        parse_html(text)
            .map(|tree| collapse_whitespace(&text_of(&tree)))
            .unwrap_or_else(|| text.to_owned())
    };
    Ok(value
        .pointer("/web/results")
        .and_then(Value::as_array)
        .map(|results| {
            results
                .iter()
                .filter_map(|result| {
                    Some(SearchHit {
                        title: strip(result.get("title")?.as_str()?),
                        url: result.get("url")?.as_str()?.to_owned(),
                        snippet: strip(
                            result
                                .get("description")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        ),
                    })
                })
                .collect()
        })
        .unwrap_or_default())
}

impl Tool for WebSearchTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: SearchArgs = parse_args(arguments)?;
            tokio::select! {
                () = context.cancel.cancelled() => Err(crate::error::ToolsError::Aborted.into()),
                output = self.run(args) => output,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duckduckgo_results_without_ads() {
        let html = r#"<div class="results">
          <div class="result results_links result--ad"><a class="result__a" href="https://ads.example/">Ad</a></div>
          <div class="result results_links web-result"><h2 class="result__title">
            <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdoc.rust-lang.org%2Fbook%2F&amp;rut=x">The <b>Rust</b> Book</a></h2>
            <a class="result__snippet" href="x">Learn <b>Rust</b>   from the start.</a></div>
          <div class="result results_links web-result"><a class="result__a" href="https://example.org/">Example</a></div>
        </div>"#;
        assert_eq!(
            parse_duckduckgo(html),
            [
                SearchHit {
                    title: "The Rust Book".into(),
                    url: "https://doc.rust-lang.org/book/".into(),
                    snippet: "Learn Rust from the start.".into(),
                },
                SearchHit {
                    title: "Example".into(),
                    url: "https://example.org/".into(),
                    snippet: String::new(),
                },
            ]
        );
    }

    #[test]
    fn brave_results_lose_their_highlights() {
        let body = r#"{"web":{"results":[{"title":"<strong>Rust</strong> Lang","url":"https://rust-lang.org/","description":"A <strong>fast</strong> language"}]}}"#;
        assert_eq!(
            parse_brave(body),
            Ok(vec![SearchHit {
                title: "Rust Lang".into(),
                url: "https://rust-lang.org/".into(),
                snippet: "A fast language".into(),
            }])
        );
        assert!(parse_brave("<html>").unwrap_err().contains("not JSON"));
    }
}
