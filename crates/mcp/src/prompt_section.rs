//! The `mcp_servers` system-prompt section: the enabled servers whose tools are not declared
//! to the model (`codemode` or `deferred`), each with how its tools are reached and a line
//! about what it offers. Neither `codemode` nor `tool_search` lists servers, so without this
//! the model would not know they exist.

use crate::Exposure;
use crate::ServerStatus;

/// The section's name (its tag in the prompt).
pub const SECTION_NAME: &str = "mcp_servers";
/// At most this many characters of one server's summary.
const MAX_SUMMARY_CHARS: usize = 250;
/// At most this many characters in the whole section: summaries shrink first, then the last
/// servers are left out and counted.
pub const MAX_SECTION_CHARS: usize = 4096;

/// How the model reaches a listed server's tools.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reach {
    Codemode,
    ToolSearch,
}

impl Reach {
    fn as_str(self) -> &'static str {
        match self {
            Self::Codemode => "codemode",
            Self::ToolSearch => "tool_search",
        }
    }
}

/// The exposures a server's tools can have, known from its config before it connects (so the
/// section does not change while servers connect).
fn configured(status: &ServerStatus) -> Vec<Exposure> {
    let config = &status.config;
    std::iter::once(config.exposure)
        .chain(config.tool_exposure.iter().map(|(_, e)| *e))
        .collect()
}

/// The section's body, `None` when no enabled server has tools reached indirectly.
pub fn servers_section(statuses: &[ServerStatus]) -> Option<String> {
    let mut listed: Vec<(&ServerStatus, Reach)> = statuses
        .iter()
        .filter(|s| s.config.enabled)
        .filter_map(|s| {
            let exposures = configured(s);
            if exposures.contains(&Exposure::Codemode) {
                Some((s, Reach::Codemode))
            } else if exposures.contains(&Exposure::Deferred) {
                Some((s, Reach::ToolSearch))
            } else {
                None
            }
        })
        .collect();
    if listed.is_empty() {
        return None;
    }
    listed.sort_by(|a, b| a.0.config.name.cmp(&b.0.config.name));
    let mut intro = "MCP servers whose tools are not declared to you.".to_owned();
    if listed.iter().any(|(_, r)| *r == Reach::Codemode) {
        intro.push_str(" Call the tools of `codemode` servers from codemode scripts.");
    }
    if listed.iter().any(|(_, r)| *r == Reach::ToolSearch) {
        intro.push_str(" Load the tools of `tool_search` servers with `tool_search`.");
    }
    let heads: Vec<String> = listed
        .iter()
        .map(|(s, reach)| {
            let namespace = crate::namespace_name(&s.config.name);
            format!("- {namespace} ({})", reach.as_str())
        })
        .collect();
    let omitted = |kept: usize| -> Option<String> {
        let left = &listed[kept..];
        if left.is_empty() {
            return None;
        }
        let mut finders = Vec::new();
        if left.iter().any(|(_, r)| *r == Reach::Codemode) {
            finders.push("searchTools() in codemode");
        }
        if left.iter().any(|(_, r)| *r == Reach::ToolSearch) {
            finders.push("tool_search");
        }
        let plural = if left.len() == 1 { "" } else { "s" };
        Some(format!(
            "- … {} more server{plural}; find their tools with {}",
            left.len(),
            finders.join(" or ")
        ))
    };
    let size = |kept: usize| -> usize {
        let lines = heads[..kept].iter().map(|h| h.chars().count() + 1);
        intro.chars().count()
            + lines.sum::<usize>()
            + omitted(kept).map_or(0, |l| l.chars().count() + 1)
    };
    let mut kept = listed.len();
    while kept > 0 && size(kept) > MAX_SECTION_CHARS {
        kept -= 1;
    }
    // Each summary also takes a ": " separator.
    let per_server = MAX_SECTION_CHARS
        .saturating_sub(size(kept))
        .checked_div(kept)
        .unwrap_or(0)
        .saturating_sub(2)
        .min(MAX_SUMMARY_CHARS);
    let mut lines = vec![intro.clone()];
    for ((status, _), head) in listed.iter().zip(&heads).take(kept) {
        let summary = truncate(&summary(status), per_server);
        lines.push(if summary.is_empty() {
            head.clone()
        } else {
            format!("{head}: {summary}")
        });
    }
    lines.extend(omitted(kept));
    Some(lines.join("\n"))
}

/// The first line of the configured description, else of the instructions the server gave
/// when it connected.
fn summary(status: &ServerStatus) -> String {
    let text = status
        .config
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .or(status.instructions.as_deref())
        .unwrap_or("");
    text.lines().next().unwrap_or("").trim().to_owned()
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    if max <= 1 {
        return String::new();
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("{}…", cut.trim_end())
}
