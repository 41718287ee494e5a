//! Turning a response into text for the model: HTML to markdown (scripts, styles and page
//! chrome left out), text as it is, anything else refused.

use std::rc::Rc;

use markup5ever_rcdom::{Handle, Node, NodeData};

/// What a fetched page reads as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PageText {
    pub title: Option<String>,
    pub text: String,
}

/// Tags whose content is never text a reader sees.
const SKIPPED_TAGS: [&str; 11] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "nav", "footer", "form",
    "head",
];

/// The lower-cased media type of a `content-type` header, without parameters.
pub(super) fn media_type(content_type: Option<&str>) -> String {
    content_type
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn is_html(media_type: &str, body: &[u8]) -> bool {
    if matches!(media_type, "text/html" | "application/xhtml+xml") {
        return true;
    }
    if !media_type.is_empty() {
        return false;
    }
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

fn is_text(media_type: &str) -> bool {
    media_type.starts_with("text/")
        || media_type.ends_with("+json")
        || media_type.ends_with("+xml")
        || matches!(
            media_type,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
        )
}

/// The page as text, or why it cannot be shown.
pub(super) fn page_text(media_type: &str, body: &[u8]) -> Result<PageText, String> {
    if is_html(media_type, body) {
        return Ok(html_to_markdown(&String::from_utf8_lossy(body)));
    }
    let unlabelled_text = media_type.is_empty() && std::str::from_utf8(body).is_ok();
    if is_text(media_type) || unlabelled_text {
        return Ok(PageText {
            title: None,
            text: String::from_utf8_lossy(body).into_owned(),
        });
    }
    Err(format!(
        "the response is {}, not a web page or text; webfetch reads HTML and text only",
        if media_type.is_empty() {
            "binary data"
        } else {
            media_type
        }
    ))
}

/// Markdown of the page's body and its `<title>`.
pub(super) fn html_to_markdown(html: &str) -> PageText {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .build();
    let Ok(tree) = converter.html_to_tree(html) else {
        return PageText {
            title: None,
            text: String::new(),
        };
    };
    let title = find_first(&tree, &|node| element_name(node) == Some("title"))
        .map(|node| collapse_whitespace(&text_of(&node)))
        .filter(|title| !title.is_empty());
    let markdown = converter.tree_to_markdown(&tree);
    PageText {
        title,
        text: tidy_markdown(&markdown),
    }
}

/// Runs of blank lines become one, trailing spaces go.
fn tidy_markdown(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    for line in markdown.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

pub(super) fn element_name(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(name.local.as_ref()),
        _ => None,
    }
}

pub(super) fn attribute(node: &Node, wanted: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|attr| attr.name.local.as_ref() == wanted)
            .map(|attr| attr.value.to_string()),
        _ => None,
    }
}

/// Whether the element's `class` attribute lists `class`.
pub(super) fn has_class(node: &Node, class: &str) -> bool {
    attribute(node, "class").is_some_and(|classes| classes.split_whitespace().any(|c| c == class))
}

/// All text below `node`.
pub(super) fn text_of(node: &Handle) -> String {
    let mut out = String::new();
    collect_text(node, &mut out);
    out
}

fn collect_text(node: &Handle, out: &mut String) {
    if let NodeData::Text { contents } = &node.data {
        out.push_str(&contents.borrow());
    }
    for child in node.children.borrow().iter() {
        collect_text(child, out);
    }
}

pub(super) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first node, depth first, that `matches`.
pub(super) fn find_first(node: &Handle, matches: &dyn Fn(&Node) -> bool) -> Option<Handle> {
    if matches(node) {
        return Some(Rc::clone(node));
    }
    node.children
        .borrow()
        .iter()
        .find_map(|child| find_first(child, matches))
}

/// Every node, depth first, that `matches` (not looking inside a match).
pub(super) fn find_all(node: &Handle, matches: &dyn Fn(&Node) -> bool, out: &mut Vec<Handle>) {
    if matches(node) {
        out.push(Rc::clone(node));
        return;
    }
    for child in node.children.borrow().iter() {
        find_all(child, matches, out);
    }
}

/// Parses HTML into a tree for searching.
pub(super) fn parse_html(html: &str) -> Option<Handle> {
    htmd::HtmlToMarkdown::new().html_to_tree(html).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_scripts_and_chrome() {
        let page = html_to_markdown(
            "<html><head><title> Rust \n Book </title><style>p{}</style></head><body>\
             <nav>Home | About</nav><h1>Ownership</h1><script>alert(1)</script>\
             <p>Each value has an <a href=\"/owner\">owner</a>.</p>\n\n\n<ul><li>one</li><li>two</li></ul>\
             <pre><code>let x = 5;</code></pre><footer>© 2026</footer></body></html>",
        );
        assert_eq!(page.title.as_deref(), Some("Rust Book"));
        assert!(page.text.starts_with("# Ownership"), "{}", page.text);
        assert!(page.text.contains("[owner](/owner)"), "{}", page.text);
        assert!(page.text.contains("let x = 5;"), "{}", page.text);
        for hidden in ["alert", "Home | About", "© 2026", "p{}"] {
            assert!(!page.text.contains(hidden), "{hidden} in {}", page.text);
        }
    }

    #[test]
    fn text_passes_and_binary_is_refused() {
        assert_eq!(
            page_text("application/json", br#"{"a":1}"#).map(|p| p.text),
            Ok(r#"{"a":1}"#.to_owned())
        );
        assert!(
            page_text("image/png", b"\x89PNG")
                .unwrap_err()
                .contains("image/png")
        );
        assert_eq!(
            page_text("", b"<!DOCTYPE html><p>hi</p>").map(|p| p.text),
            Ok("hi".to_owned())
        );
    }
}
