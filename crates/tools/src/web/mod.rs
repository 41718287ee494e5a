//! The web tools, off by default: `webfetch` (a page as markdown, paged or searched) and
//! `websearch` (DuckDuckGo or Brave). Both answer offline with an error that says so, and
//! `webfetch` refuses addresses on this machine or its private networks, so a model cannot
//! use it to reach services a web page could not.

mod address;
mod fetch;
mod page;
mod search;

use std::sync::Arc;
use std::time::Duration;

pub use address::is_public_address;
pub use fetch::WebFetchTool;
pub use search::{SearchProvider, SearchSettings, WebSearchTool};

/// Most bytes of a page read; the rest is dropped with a note.
pub const MAX_PAGE_BYTES: usize = 5 * 1024 * 1024;

/// How long a fetch or a search may take, redirects and body included.
pub const WEB_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a fetched page is served from memory before it is fetched again.
pub const PAGE_CACHE_TTL: Duration = Duration::from_secs(15 * 60);

/// Asked at every search, so `/tools` changes (provider, key) apply at once.
pub type SearchSettingsSource = Arc<dyn Fn() -> SearchSettings + Send + Sync>;

/// What the web tools run with.
#[derive(Clone)]
pub struct WebConfig {
    /// Let `webfetch` reach loopback, private and link-local addresses. Off for models;
    /// tests turn it on to fetch from a local server.
    pub allow_private_addresses: bool,
    pub timeout: Duration,
    pub max_page_bytes: usize,
    pub cache_ttl: Duration,
    pub search: Option<SearchSettingsSource>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            allow_private_addresses: false,
            timeout: WEB_TIMEOUT,
            max_page_bytes: MAX_PAGE_BYTES,
            cache_ttl: PAGE_CACHE_TTL,
            search: None,
        }
    }
}

impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field("allow_private_addresses", &self.allow_private_addresses)
            .field("timeout", &self.timeout)
            .field("max_page_bytes", &self.max_page_bytes)
            .field("cache_ttl", &self.cache_ttl)
            .finish_non_exhaustive()
    }
}

/// A request error in words a user can act on.
fn describe_request_error(error: &reqwest::Error, what: &str, timeout: Duration) -> String {
    if error.is_timeout() {
        return format!(
            "{what} timed out after {} seconds",
            timeout.as_secs_f64().round()
        );
    }
    if error.is_connect() {
        return format!(
            "{what} failed: could not connect ({}). Check your network connection.",
            root_cause(error)
        );
    }
    format!("{what} failed: {}", root_cause(error))
}

/// The innermost error's text: reqwest's own message is only "error sending request".
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}
