//! webfetch and websearch against a local web server: markdown, paging, grep, cache,
//! redirects, limits and the errors a user sees offline or at a refused address.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{call, failure, text};
use knightcode_agent::tool::Tool;
use knightcode_testkit::{WebResponse, WebServer};
use knightcode_tools::{SearchProvider, SearchSettings, WebConfig, WebFetchTool, WebSearchTool};
use serde_json::json;

/// A config that may reach the test's local server.
fn local() -> WebConfig {
    WebConfig {
        allow_private_addresses: true,
        ..WebConfig::default()
    }
}

async fn fetch(tool: &WebFetchTool, arguments: serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    text(&call(tool, dir.path(), arguments).await.unwrap())
}

async fn fetch_error(tool: &WebFetchTool, arguments: serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    failure(call(tool, dir.path(), arguments).await)
}

const ARTICLE: &str = "<!doctype html><html><head><title>Borrowing</title>\
    <script>track()</script></head><body><nav>Menu</nav><h1>References</h1>\
    <p>A reference is <em>borrowed</em>.</p><footer>Footer</footer></body></html>";

#[tokio::test]
async fn pages_come_back_as_markdown_and_are_cached() {
    let server = WebServer::start(vec![(
        "/article",
        WebResponse::ok("text/html; charset=utf-8", ARTICLE),
    )])
    .await
    .unwrap();
    let tool = WebFetchTool::new(local());
    let url = format!("{}/article", server.url());
    let page = fetch(&tool, json!({"url": url})).await;
    assert_eq!(
        page,
        format!("URL: {url}\nTitle: Borrowing\n\n# References\n\nA reference is *borrowed*.")
    );
    assert_eq!(fetch(&tool, json!({"url": url})).await, page);
    assert_eq!(
        server.requests().len(),
        1,
        "the second call is served from the cache"
    );
}

#[tokio::test]
async fn long_pages_are_read_400_lines_at_a_time() {
    let body: String = (1..=1000).map(|n| format!("line {n}\n")).collect();
    let server = WebServer::start(vec![("/log", WebResponse::ok("text/plain", body))])
        .await
        .unwrap();
    let tool = WebFetchTool::new(local());
    let url = format!("{}/log", server.url());
    let first = fetch(&tool, json!({"url": url})).await;
    assert!(first.contains("\nline 1\n"), "{first}");
    assert!(first.contains("\nline 400\n"), "{first}");
    assert!(!first.contains("line 401"), "{first}");
    assert!(first.ends_with("[Showing lines 1-400 of 1000. Use offset=401 to continue.]"));
    let last = fetch(&tool, json!({"url": url, "offset": 901})).await;
    assert!(last.ends_with("line 999\nline 1000"), "{last}");
    let some = fetch(&tool, json!({"url": url, "offset": 10, "limit": 2})).await;
    assert!(
        some.ends_with(
            "line 10\nline 11\n\n[Showing lines 10-11 of 1000. Use offset=12 to continue.]"
        ),
        "{some}"
    );
    let beyond = fetch_error(&tool, json!({"url": url, "offset": 2000})).await;
    assert_eq!(
        beyond,
        "Offset 2000 is beyond the end of the page (1000 lines total)"
    );
}

#[tokio::test]
async fn grep_returns_matching_lines_with_their_numbers() {
    let body = "alpha\nBeta one\ngamma\nbeta two\n";
    let server = WebServer::start(vec![("/t", WebResponse::ok("text/plain", body))])
        .await
        .unwrap();
    let tool = WebFetchTool::new(local());
    let url = format!("{}/t", server.url());
    let found = fetch(&tool, json!({"url": url, "grep": "^beta"})).await;
    assert!(found.contains("\n2: Beta one\n4: beta two\n"), "{found}");
    let none = fetch(&tool, json!({"url": url, "grep": "delta"})).await;
    assert!(
        none.ends_with("No lines match \"delta\" (4 lines searched)."),
        "{none}"
    );
    let bad = fetch_error(&tool, json!({"url": url, "grep": "("})).await;
    assert!(bad.starts_with("Invalid grep pattern"), "{bad}");
}

#[tokio::test]
async fn redirects_are_followed_and_the_final_url_shown() {
    let server = WebServer::start(vec![
        ("/old", WebResponse::redirect(301, "/new")),
        ("/new", WebResponse::ok("text/plain", "moved here")),
    ])
    .await
    .unwrap();
    let tool = WebFetchTool::new(local());
    let page = fetch(&tool, json!({"url": format!("{}/old", server.url())})).await;
    assert_eq!(page, format!("URL: {}/new\n\nmoved here", server.url()));
}

#[tokio::test]
async fn this_machine_and_private_networks_are_refused() {
    let server = WebServer::start(vec![("/secret", WebResponse::ok("text/plain", "token"))])
        .await
        .unwrap();
    let tool = WebFetchTool::new(WebConfig::default());
    for url in [
        format!("{}/secret", server.url()),
        format!("http://localhost:{}/secret", server.addr().port()),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[::1]:9/".to_owned(),
    ] {
        let error = fetch_error(&tool, json!({"url": url})).await;
        assert!(error.starts_with("webfetch: refusing to fetch"), "{error}");
        assert!(error.contains("private network"), "{error}");
    }
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn other_schemes_binary_content_and_http_errors_say_what_happened() {
    let server = WebServer::start(vec![
        (
            "/logo.png",
            WebResponse::ok("image/png", b"\x89PNG\r\n".to_vec()),
        ),
        ("/gone", WebResponse::status(410, "gone")),
    ])
    .await
    .unwrap();
    let tool = WebFetchTool::new(local());
    let error = fetch_error(&tool, json!({"url": "file:///etc/passwd"})).await;
    assert_eq!(
        error,
        "webfetch: cannot fetch file:///etc/passwd: only http and https URLs are supported"
    );
    let error = fetch_error(&tool, json!({"url": "not a url"})).await;
    assert!(
        error.starts_with("webfetch: invalid URL not a url"),
        "{error}"
    );
    let error = fetch_error(&tool, json!({"url": format!("{}/logo.png", server.url())})).await;
    assert!(
        error.ends_with(
            "the response is image/png, not a web page or text; webfetch reads HTML and text only"
        ),
        "{error}"
    );
    let error = fetch_error(&tool, json!({"url": format!("{}/gone", server.url())})).await;
    assert!(error.ends_with("answered HTTP 410 Gone"), "{error}");
}

#[tokio::test]
async fn big_pages_are_cut_at_the_byte_cap_with_a_note() {
    let server = WebServer::start(vec![(
        "/big",
        WebResponse::ok("text/plain", "x".repeat(5000)),
    )])
    .await
    .unwrap();
    let tool = WebFetchTool::new(WebConfig {
        max_page_bytes: 1024,
        ..local()
    });
    let page = fetch(&tool, json!({"url": format!("{}/big", server.url())})).await;
    assert!(
        page.contains("[The page is larger than 1.0KB; only its beginning was read.]"),
        "{page}"
    );
    assert!(page.ends_with(&"x".repeat(1024)), "{page}");
}

#[tokio::test]
async fn a_silent_server_times_out_and_an_unknown_host_says_so() {
    let server = WebServer::start(vec![("/slow", WebResponse::stall())])
        .await
        .unwrap();
    let tool = WebFetchTool::new(WebConfig {
        timeout: Duration::from_millis(300),
        ..local()
    });
    let error = fetch_error(&tool, json!({"url": format!("{}/slow", server.url())})).await;
    assert!(error.contains("timed out"), "{error}");
    let error = fetch_error(&tool, json!({"url": "http://no-such-host.invalid/"})).await;
    assert!(
        error.starts_with("webfetch: could not resolve no-such-host.invalid"),
        "{error}"
    );
    assert!(
        error.ends_with("check the address and your network connection"),
        "{error}"
    );
}

#[tokio::test]
async fn an_aborted_fetch_returns_at_once() {
    let server = WebServer::start(vec![("/slow", WebResponse::stall())])
        .await
        .unwrap();
    let tool = WebFetchTool::new(local());
    let dir = tempfile::tempdir().unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let context = knightcode_agent::tool::ToolContext::new("c", dir.path(), cancel.clone());
    let running = tool.execute(json!({"url": format!("{}/slow", server.url())}), context);
    let waiter = async {
        server.wait_for_requests(1).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(running, waiter);
    assert!(matches!(
        result,
        Err(knightcode_agent::tool::ToolError::Aborted(_))
    ));
}

const DUCKDUCKGO_PAGE: &str = r##"<html><body><div class="results">
  <div class="result results_links web-result">
    <a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdoc.rust-lang.org%2Fbook%2F&amp;rut=1">The Rust Book</a>
    <a class="result__snippet" href="#">Learn Rust.</a></div>
  <div class="result results_links web-result">
    <a class="result__a" href="https://crates.io/">crates.io</a>
    <a class="result__snippet" href="#">The Rust package registry.</a></div>
</div></body></html>"##;

fn search_tool(settings: SearchSettings, timeout: Duration) -> WebSearchTool {
    WebSearchTool::new(WebConfig {
        timeout,
        search: Some(Arc::new(move || settings.clone())),
        ..WebConfig::default()
    })
}

#[tokio::test]
async fn duckduckgo_results_are_numbered_with_urls_and_snippets() {
    let server = WebServer::start(vec![(
        "/html/",
        WebResponse::ok("text/html", DUCKDUCKGO_PAGE),
    )])
    .await
    .unwrap();
    let tool = search_tool(
        SearchSettings {
            duckduckgo_url: format!("{}/html/", server.url()),
            ..SearchSettings::default()
        },
        Duration::from_secs(30),
    );
    let dir = tempfile::tempdir().unwrap();
    let out = call(&tool, dir.path(), json!({"query": "rust book", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "1. The Rust Book\n   https://doc.rust-lang.org/book/\n   Learn Rust."
    );
    assert_eq!(server.requests()[0].query, "q=rust+book");
    let out = call(&tool, dir.path(), json!({"query": "rust"}))
        .await
        .unwrap();
    assert!(
        text(&out)
            .contains("\n\n2. crates.io\n   https://crates.io/\n   The Rust package registry.")
    );
}

#[tokio::test]
async fn brave_sends_the_key_and_needs_one() {
    let body = r#"{"web":{"results":[{"title":"Rust","url":"https://www.rust-lang.org/","description":"A <strong>language</strong>"}]}}"#;
    let server = WebServer::start(vec![("/search", WebResponse::ok("application/json", body))])
        .await
        .unwrap();
    let settings = SearchSettings {
        provider: SearchProvider::Brave,
        brave_api_key: Some("brave-key".into()),
        brave_url: format!("{}/search", server.url()),
        ..SearchSettings::default()
    };
    let tool = search_tool(settings.clone(), Duration::from_secs(30));
    let dir = tempfile::tempdir().unwrap();
    let out = call(&tool, dir.path(), json!({"query": "rust", "limit": 50}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "1. Rust\n   https://www.rust-lang.org/\n   A language"
    );
    let request = &server.requests()[0];
    assert_eq!(request.header("x-subscription-token"), Some("brave-key"));
    assert_eq!(
        request.query, "q=rust&count=10",
        "the limit is capped at 10"
    );

    let keyless = search_tool(
        SearchSettings {
            brave_api_key: None,
            ..settings
        },
        Duration::from_secs(30),
    );
    let error = failure(call(&keyless, dir.path(), json!({"query": "rust"})).await);
    assert!(error.contains("set BRAVE_API_KEY"), "{error}");
}

#[tokio::test]
async fn searching_offline_says_the_network_is_unreachable() {
    // A port nothing listens on stands in for a machine without a network.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let tool = search_tool(
        SearchSettings {
            duckduckgo_url: format!("http://127.0.0.1:{port}/html/"),
            ..SearchSettings::default()
        },
        Duration::from_secs(30),
    );
    let dir = tempfile::tempdir().unwrap();
    let error = failure(call(&tool, dir.path(), json!({"query": "rust"})).await);
    assert!(
        error.starts_with("websearch: DuckDuckGo search failed: could not connect"),
        "{error}"
    );
    assert!(error.ends_with("Check your network connection."), "{error}");
}
