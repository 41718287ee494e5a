//! The `webfetch` tool.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::Instant;

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use reqwest::Url;
use serde::Deserialize;
use serde_json::{Value, json};

use super::page::{PageText, media_type, page_text};
use super::{WebConfig, describe_request_error, is_public_address};
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};
use crate::util::parse_args;

/// Lines of a page returned per call unless `limit` says otherwise.
pub const PAGE_LINES: usize = 400;

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 10;

/// Pages kept in the cache; the oldest goes first.
const CACHE_ENTRIES: usize = 32;

#[derive(Deserialize)]
struct FetchArgs {
    url: String,
    offset: Option<f64>,
    limit: Option<f64>,
    grep: Option<String>,
}

/// A page as text, kept for [`WebConfig::cache_ttl`].
#[derive(Debug, Clone)]
struct FetchedPage {
    fetched_at: Instant,
    /// Where it came from after redirects.
    url: String,
    page: PageText,
    /// The body was longer than the byte cap and was cut.
    cut: bool,
}

/// Fetches web pages as markdown, a page of lines at a time.
pub struct WebFetchTool {
    definition: ToolDefinition,
    config: WebConfig,
    cache: Mutex<HashMap<String, FetchedPage>>,
}

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "webfetch".to_owned(),
        label: "webfetch".to_owned(),
        description: format!(
            "Fetch a web page (http or https) and read it as markdown, {PAGE_LINES} lines at a \
             time: continue with offset, or pass grep (a regular expression, case-insensitive) \
             to get only the matching lines with their line numbers. Pages are cached for 15 \
             minutes and read up to 5 MB. Addresses on this machine or on private networks \
             are refused."
        ),
        parameters: json!({
            "type": "object",
            "required": ["url"],
            "properties": {
                "url": {"type": "string", "description": "The http or https URL to fetch"},
                "offset": {"type": "number", "description": "Line to start at (1-based)"},
                "limit": {"type": "number", "description": format!("Most lines to return (default {PAGE_LINES})")},
                "grep": {"type": "string", "description": "Return only lines matching this regular expression"}
            }
        }),
        prompt_snippet: Some("Fetch a web page as markdown".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Parallel,
    }
}

impl WebFetchTool {
    pub fn new(config: WebConfig) -> Self {
        Self {
            definition: definition(),
            config,
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn cached(&self, url: &str) -> Option<FetchedPage> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(url)
            .filter(|page| page.fetched_at.elapsed() < self.config.cache_ttl)
            .cloned()
    }

    fn remember(&self, url: &str, page: &FetchedPage) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|_, kept| kept.fetched_at.elapsed() < self.config.cache_ttl);
        if cache.len() >= CACHE_ENTRIES
            && let Some(oldest) = cache
                .iter()
                .min_by_key(|(_, kept)| kept.fetched_at)
                .map(|(key, _)| key.clone())
        {
            cache.remove(&oldest);
        }
        cache.insert(url.to_owned(), page.clone());
    }

    /// The addresses `url`'s host may be reached at, refusing non-public ones.
    async fn addresses(&self, url: &Url) -> Result<Vec<SocketAddr>, String> {
        let host = url.host_str().ok_or_else(|| format!("{url} has no host"))?;
        let port = url.port_or_known_default().unwrap_or(443);
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port))
                .await
                .map_err(|error| {
                    format!(
                        "could not resolve {host} ({error}); check the address and your network connection"
                    )
                })?
                .collect(),
        };
        if addresses.is_empty() {
            return Err(format!("{host} has no addresses"));
        }
        if !self.config.allow_private_addresses
            && let Some(private) = addresses.iter().find(|a| !is_public_address(a.ip()))
        {
            return Err(format!(
                "refusing to fetch {url}: {host} is at {}, an address on this machine or a \
                 private network; webfetch only reads public web pages",
                private.ip()
            ));
        }
        Ok(addresses)
    }

    /// Fetches `url`, following redirects (each hop checked again), as text.
    async fn fetch(&self, start: &str) -> Result<FetchedPage, String> {
        let mut url = Url::parse(start).map_err(|error| format!("invalid URL {start}: {error}"))?;
        for _ in 0..=MAX_REDIRECTS {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!(
                    "cannot fetch {url}: only http and https URLs are supported"
                ));
            }
            let addresses = self.addresses(&url).await?;
            let mut builder = knightcode_ai::http_client_builder()
                .map_err(|error| error.to_string())?
                .redirect(reqwest::redirect::Policy::none())
                .timeout(self.config.timeout);
            if let Some(host) = url.host_str()
                && !self.config.allow_private_addresses
            {
                // Connect to the addresses just checked, not to a second lookup's answer.
                builder = builder.resolve_to_addrs(host, &addresses);
            }
            let client = builder.build().map_err(|error| error.to_string())?;
            let what = format!("fetching {url}");
            let mut response = client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|error| describe_request_error(&error, &what, self.config.timeout))?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|value| value.to_str().ok())
                    .ok_or_else(|| format!("{url} redirected ({status}) without a location"))?;
                url = url
                    .join(location)
                    .map_err(|error| format!("{url} redirected to an invalid URL: {error}"))?;
                continue;
            }
            if !status.is_success() {
                return Err(format!("{url} answered HTTP {status}"));
            }
            let media = media_type(
                response
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|value| value.to_str().ok()),
            );
            let mut body = Vec::new();
            let mut cut = false;
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|error| describe_request_error(&error, &what, self.config.timeout))?
            {
                let room = self.config.max_page_bytes - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    cut = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            let page =
                page_text(&media, &body).map_err(|why| format!("cannot read {url}: {why}"))?;
            return Ok(FetchedPage {
                fetched_at: Instant::now(),
                url: url.to_string(),
                page,
                cut,
            });
        }
        Err(format!(
            "too many redirects (more than {MAX_REDIRECTS}) starting at {start}"
        ))
    }

    async fn run(&self, args: FetchArgs) -> Result<ToolOutput, ToolError> {
        let page = match self.cached(&args.url) {
            Some(page) => page,
            None => {
                let page = self
                    .fetch(&args.url)
                    .await
                    .map_err(|why| ToolError::failed(format!("webfetch: {why}")))?;
                self.remember(&args.url, &page);
                page
            }
        };
        let mut header = format!("URL: {}\n", page.url);
        if let Some(title) = &page.page.title {
            header.push_str(&format!("Title: {title}\n"));
        }
        if page.cut {
            header.push_str(&format!(
                "[The page is larger than {}; only its beginning was read.]\n",
                format_size(self.config.max_page_bytes as u64)
            ));
        }
        let body = match &args.grep {
            Some(pattern) => grep_lines(&page.page.text, pattern, &args)?,
            None => page_of_lines(&page.page.text, &args)?,
        };
        Ok(ToolOutput::text(format!("{header}\n{body}"))
            .with_details(json!({"url": page.url, "title": page.page.title})))
    }
}

fn whole(value: Option<f64>) -> Option<usize> {
    value
        .filter(|v| v.is_finite())
        .map(|v| v.max(0.0).trunc() as usize)
}

/// Lines `offset..offset+limit` with a notice saying how to go on.
fn page_of_lines(text: &str, args: &FetchArgs) -> Result<String, ToolError> {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return Ok("(the page has no text)".to_owned());
    }
    let start = whole(args.offset).map_or(0, |offset| offset.saturating_sub(1));
    if start >= total {
        return Err(ToolError::failed(format!(
            "Offset {} is beyond the end of the page ({total} lines total)",
            start + 1
        )));
    }
    let limit = whole(args.limit).filter(|l| *l > 0).unwrap_or(PAGE_LINES);
    let end = (start + limit).min(total);
    let selected = lines[start..end].join("\n");
    let truncation = truncate_head(
        &selected,
        TruncationOptions {
            max_lines: limit as u64,
            max_bytes: DEFAULT_MAX_BYTES,
        },
    );
    let shown_end = start + truncation.output_lines.max(1);
    let mut out = truncation.content;
    if truncation.first_line_exceeds_limit {
        out = lines[start].chars().take(DEFAULT_MAX_BYTES / 4).collect();
    }
    if shown_end < total {
        out.push_str(&format!(
            "\n\n[Showing lines {}-{shown_end} of {total}. Use offset={} to continue.]",
            start + 1,
            shown_end + 1
        ));
    }
    Ok(out)
}

/// The lines matching `pattern`, numbered, from `offset` on, at most `limit` of them.
fn grep_lines(text: &str, pattern: &str, args: &FetchArgs) -> Result<String, ToolError> {
    let regex = regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .map_err(|error| ToolError::failed(format!("Invalid grep pattern: {error}")))?;
    let start = whole(args.offset).map_or(0, |offset| offset.saturating_sub(1));
    let limit = whole(args.limit).filter(|l| *l > 0).unwrap_or(PAGE_LINES);
    let total = text.lines().count();
    let matches: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .skip(start)
        .filter(|(_, line)| regex.is_match(line))
        .collect();
    if matches.is_empty() {
        return Ok(format!(
            "No lines match {pattern:?} ({total} lines searched)."
        ));
    }
    let shown: Vec<String> = matches
        .iter()
        .take(limit)
        .map(|(index, line)| format!("{}: {line}", index + 1))
        .collect();
    let truncation = truncate_head(
        &shown.join("\n"),
        TruncationOptions {
            max_lines: limit as u64,
            max_bytes: DEFAULT_MAX_BYTES,
        },
    );
    let mut out = truncation.content;
    let kept = truncation.output_lines;
    if kept < matches.len() {
        let next = matches[kept].0 + 1;
        out.push_str(&format!(
            "\n\n[{kept} of {} matching lines shown. Use offset={next} with the same grep for more.]",
            matches.len()
        ));
    } else {
        out.push_str("\n\n[Use offset with a line number (without grep) to read around a match.]");
    }
    Ok(out)
}

impl Tool for WebFetchTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args: FetchArgs = parse_args(arguments)?;
            tokio::select! {
                () = context.cancel.cancelled() => Err(crate::error::ToolsError::Aborted.into()),
                output = self.run(args) => output,
            }
        })
    }
}
