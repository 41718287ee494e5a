//! The two-line footer: where you are (folder, git branch, session name) and what the
//! session costs (tokens, cost, context use) beside the model and thinking level.

use knightcode_ai::ContextMeter;
use knightcode_protocol::AgentMessage;
use knightcode_protocol::Usage;
use knightcode_tui::Theme;
use knightcode_tui::width::truncate_to_width;
use knightcode_tui::width::visible_width;

/// Everything the footer shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FooterData {
    pub cwd: String,
    pub git_branch: Option<String>,
    pub session_name: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    /// Tokens in the current context, when known.
    pub context_tokens: Option<u64>,
    pub context_window: u64,
    pub auto_compaction: bool,
    pub provider: String,
    pub model: String,
    /// `None` for models without reasoning.
    pub thinking: Option<String>,
    /// Show the provider before the model (more than one provider available).
    pub show_provider: bool,
    /// The selected model is virtual: responses name the physical model that answered.
    pub virtual_selection: bool,
    /// For a virtual selection, the physical model (and level) that answered last.
    pub routed: Option<String>,
    /// Keeps `context_tokens` current message by message (see [`FooterData::record_message`]).
    pub meter: ContextMeter,
    /// Extensions' statuses (`ctx.ui.setStatus`) by key.
    pub extension_statuses: std::collections::BTreeMap<String, String>,
}

/// The physical side of `selection → physical`: the model id and its level when not off.
pub fn routed_label(model: &str, level: Option<&str>) -> String {
    match level {
        Some(level) if level != "off" => format!("{model} • {level}"),
        _ => model.to_owned(),
    }
}

impl FooterData {
    /// Totals and context size as computed over the whole session (a snapshot).
    pub fn reset_context(&mut self, context_tokens: Option<u64>) {
        self.context_tokens = context_tokens;
        self.meter = ContextMeter::starting_at(context_tokens);
    }

    /// A message joined the conversation: totals and context size follow without a rescan
    /// of the session, so a long session costs the same per message as a short one.
    pub fn record_message(&mut self, message: &AgentMessage) {
        if let AgentMessage::Assistant(assistant) = message {
            self.add_usage(&assistant.usage);
            if self.virtual_selection && assistant.api != knightcode_ai::VIRTUAL_API {
                self.routed = Some(routed_label(
                    &assistant.model,
                    assistant.thinking_level.as_deref(),
                ));
            }
        }
        self.meter.push(message);
        self.context_tokens = self.meter.tokens();
    }

    /// A compaction replaced the history: its summary's cost counts, and the context size
    /// is unknown until the next response.
    pub fn record_compaction(&mut self, usage: Option<&Usage>) {
        if let Some(usage) = usage {
            self.add_usage(usage);
        }
        self.meter.compacted();
        self.context_tokens = None;
    }

    fn add_usage(&mut self, usage: &Usage) {
        self.input_tokens += usage.input.0;
        self.output_tokens += usage.output.0;
        self.cache_read += usage.cache_read.0;
        self.cache_write += usage.cache_write.0;
        self.cost += usage.cost.total.0;
    }
}

/// Token counts the way the reference prints them: 999, 1.2k, 12k, 1.2M, 12M.
pub fn format_tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else if n < 1_000_000 {
        format!("{}k", (n as f64 / 1000.0).round() as u64)
    } else if n < 10_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else {
        format!("{}M", (n as f64 / 1_000_000.0).round() as u64)
    }
}

/// `~` for the home directory: the footer, pickers and tool cards all shorten paths this way.
/// Only a whole path component matches (`/home/ab` is not under `/home/a`).
pub fn tilde(path: &str, home: Option<&str>) -> String {
    if let Some(home) = home
        && !home.is_empty()
        && let Some(rest) = path.strip_prefix(home)
        && (rest.is_empty() || rest.starts_with(std::path::is_separator))
    {
        return format!("~{rest}");
    }
    path.to_owned()
}

/// What is checked out in a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitHead {
    Branch(String),
    /// A detached HEAD: the commit's short hash.
    Detached(String),
}

impl GitHead {
    /// What our footer shows: the branch, or the commit's short hash.
    pub fn shown(&self) -> &str {
        match self {
            Self::Branch(name) | Self::Detached(name) => name,
        }
    }

    /// What extensions' `footerData.getGitBranch()` returns, as in the reference.
    pub fn for_extensions(&self) -> &str {
        match self {
            Self::Branch(name) => name,
            Self::Detached(_) => "detached",
        }
    }
}

/// What is checked out in `cwd` or a parent, read from `.git/HEAD` (no git process).
pub fn git_head(cwd: &std::path::Path) -> Option<GitHead> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        let git = d.join(".git");
        let head_path = if git.is_dir() {
            git.join("HEAD")
        } else if git.is_file() {
            // A worktree: `.git` holds `gitdir: <path>`.
            let text = std::fs::read_to_string(&git).ok()?;
            let gitdir = text.trim().strip_prefix("gitdir:")?.trim().to_owned();
            d.join(gitdir).join("HEAD")
        } else {
            dir = d.parent();
            continue;
        };
        let head = std::fs::read_to_string(head_path).ok()?;
        let head = head.trim();
        return Some(match head.strip_prefix("ref: refs/heads/") {
            Some(branch) => GitHead::Branch(branch.to_owned()),
            None => GitHead::Detached(head.chars().take(7).collect()),
        });
    }
    None
}

pub fn render(data: &FooterData, width: u16, theme: &Theme) -> Vec<String> {
    let width = usize::from(width);
    let dim = theme.dim;
    let mut first = data.cwd.clone();
    if let Some(branch) = &data.git_branch {
        first.push_str(&format!(" ({branch})"));
    }
    if let Some(name) = &data.session_name {
        first.push_str(&format!(" • {name}"));
    }
    let first = dim.paint(&truncate_to_width(&first, width, "..."));

    let mut stats: Vec<String> = Vec::new();
    if data.input_tokens > 0 {
        stats.push(format!("↑{}", format_tokens(data.input_tokens)));
    }
    if data.output_tokens > 0 {
        stats.push(format!("↓{}", format_tokens(data.output_tokens)));
    }
    if data.cache_read > 0 {
        stats.push(format!("R{}", format_tokens(data.cache_read)));
    }
    if data.cache_write > 0 {
        stats.push(format!("W{}", format_tokens(data.cache_write)));
    }
    if data.cost > 0.0 {
        stats.push(format!("${:.3}", data.cost));
    }
    let left_plain = stats.join(" ");
    let mut left = dim.paint(&left_plain);
    let auto = if data.auto_compaction { " (auto)" } else { "" };
    let context = match data.context_tokens {
        Some(tokens) if data.context_window > 0 => {
            let percent = tokens as f64 * 100.0 / data.context_window as f64;
            let text = format!("{percent:.1}%/{}{auto}", format_tokens(data.context_window));
            let style = if percent > 90.0 {
                theme.error
            } else if percent > 70.0 {
                theme.warning
            } else {
                dim
            };
            Some((text.clone(), style.paint(&text)))
        }
        _ if data.context_window > 0 => {
            let text = format!("?/{}{auto}", format_tokens(data.context_window));
            Some((text.clone(), dim.paint(&text)))
        }
        _ => None,
    };
    let mut left_width = visible_width(&left_plain);
    if let Some((plain, styled)) = context {
        if left_width > 0 {
            left.push_str(&dim.paint(" "));
            left_width += 1;
        }
        left.push_str(&styled);
        left_width += visible_width(&plain);
    }

    let mut right = data.model.clone();
    if let Some(level) = &data.thinking {
        if level == "off" {
            right.push_str(" • thinking off");
        } else {
            right.push_str(&format!(" • {level}"));
        }
    }
    if let Some(routed) = &data.routed {
        right.push_str(&format!(" → {routed}"));
    }
    if data.show_provider {
        let with_provider = format!("({}) {right}", data.provider);
        if left_width + 2 + visible_width(&with_provider) <= width {
            right = with_provider;
        }
    }
    let right_width = visible_width(&right);
    let second = if left_width + 2 + right_width <= width {
        let gap = width - left_width - right_width;
        format!(
            "{left}{}",
            dim.paint(&format!("{}{right}", " ".repeat(gap)))
        )
    } else if left_width <= width {
        // The model name gives way to the numbers, which change as you work.
        let room = width.saturating_sub(left_width + 2);
        if room > 4 {
            format!(
                "{left}  {}",
                dim.paint(&truncate_to_width(&right, room, "…"))
            )
        } else {
            left
        }
    } else {
        truncate_to_width(&left, width, "…")
    };
    let mut lines = vec![first, second];
    if !data.extension_statuses.is_empty() {
        // Extensions' statuses (`ctx.ui.setStatus`), by key, on one line.
        let statuses: Vec<&str> = data
            .extension_statuses
            .values()
            .map(String::as_str)
            .collect();
        let line = statuses.join(" ");
        lines.push(if visible_width(&line) <= width {
            line
        } else {
            truncate_to_width(&line, width.saturating_sub(3), "") + &dim.paint("...")
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_shortened_only_at_a_path_boundary() {
        assert_eq!(tilde("/home/a/x", Some("/home/a")), "~/x");
        assert_eq!(tilde("/home/a", Some("/home/a")), "~");
        assert_eq!(tilde("/home/ab/x", Some("/home/a")), "/home/ab/x");
        assert_eq!(tilde("/srv/x", None), "/srv/x");
        assert_eq!(tilde("/srv/x", Some("")), "/srv/x");
    }

    #[test]
    fn tokens_format_like_the_reference() {
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(1234), "1.2k");
        assert_eq!(format_tokens(12_345), "12k");
        assert_eq!(format_tokens(1_234_567), "1.2M");
        assert_eq!(format_tokens(12_345_678), "12M");
    }

    #[test]
    fn a_virtual_selection_shows_the_model_that_answered() {
        let mut data = FooterData {
            model: "auto".into(),
            thinking: Some("high".into()),
            virtual_selection: true,
            ..FooterData::default()
        };
        let answer = knightcode_protocol::AssistantMessage {
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: "mock-model".into(),
            thinking_level: Some("medium".into()),
            ..Default::default()
        };
        data.record_message(&AgentMessage::Assistant(Box::new(answer)));
        let lines = render(&data, 60, &Theme::plain());
        assert!(
            lines[1].ends_with("auto • high → mock-model • medium"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn footer_fits_and_aligns_the_model_right() {
        let data = FooterData {
            cwd: "~/work/project".into(),
            git_branch: Some("main".into()),
            session_name: Some("refactor".into()),
            input_tokens: 1234,
            output_tokens: 56,
            cost: 0.0123,
            context_tokens: Some(12_000),
            context_window: 200_000,
            auto_compaction: true,
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            thinking: Some("medium".into()),
            show_provider: false,
            ..FooterData::default()
        };
        let lines = render(&data, 80, &Theme::plain());
        assert_eq!(lines[0], "~/work/project (main) • refactor");
        assert_eq!(
            lines[1],
            "↑1.2k ↓56 $0.012 6.0%/200k (auto)                     claude-sonnet-4-5 • medium"
        );
        assert_eq!(visible_width(&lines[1]), 80);
        for width in [10u16, 20, 30, 40] {
            for line in render(&data, width, &Theme::plain()) {
                assert!(
                    visible_width(&line) <= usize::from(width),
                    "{width}: {line}"
                );
            }
        }
    }
}
