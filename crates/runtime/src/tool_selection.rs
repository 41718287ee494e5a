//! Which of the registered tools a session activates: `--tools` (else the `defaultTools`
//! setting), minus `--exclude-tools`, nothing with `--no-tools` / `--no-builtin-tools`.
//!
//! Entries are exact names or patterns in which `*` matches any run of characters and nothing
//! else is special, case-sensitive, as the reference's `createToolNameMatcher` reads them. An
//! entry that names no registered tool is dropped with a warning listing the tools there are,
//! so a typo never silently leaves the model without the tool the user meant.

use globset::GlobBuilder;
use globset::GlobMatcher;

use crate::agent_session::ToolSelection;

/// The outcome of [`select_tools`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolChoice {
    /// Names to activate, in the order their entries name them (a pattern's matches in
    /// registration order), each once.
    pub active: Vec<String>,
    /// One line per source with entries that matched nothing (no `Warning:` prefix: the modes
    /// add it when they print session notices).
    pub warnings: Vec<String>,
}

/// One `--tools` / `--exclude-tools` / `defaultTools` entry.
enum Entry<'a> {
    Exact(&'a str),
    Pattern(Option<GlobMatcher>),
}

impl<'a> Entry<'a> {
    fn parse(entry: &'a str) -> Self {
        if !entry.contains('*') {
            return Self::Exact(entry);
        }
        // Only `*` is a wildcard: everything between the stars is escaped, so `?`, `[` or `{`
        // in a name stay literal. Runs of stars mean the same as one.
        let escaped: Vec<String> = entry.split('*').map(globset::escape).collect();
        let mut glob = String::with_capacity(entry.len());
        for c in escaped.join("*").chars() {
            if !(c == '*' && glob.ends_with('*')) {
                glob.push(c);
            }
        }
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(false)
            .backslash_escape(false)
            .build()
            .ok()
            .map(|glob| glob.compile_matcher());
        Self::Pattern(matcher)
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Exact(exact) => *exact == name,
            Self::Pattern(matcher) => matcher.as_ref().is_some_and(|m| m.is_match(name)),
        }
    }
}

/// Expands `entries` against `registered`: every matched name in entry order, and the entries
/// that matched nothing.
fn expand<'a>(entries: &'a [String], registered: &[&str]) -> (Vec<String>, Vec<&'a str>) {
    let mut names: Vec<String> = Vec::new();
    let mut unmatched = Vec::new();
    for raw in entries {
        let entry = Entry::parse(raw);
        let mut any = false;
        for name in registered.iter().filter(|name| entry.matches(name)) {
            any = true;
            if !names.iter().any(|n| n == name) {
                names.push((*name).to_owned());
            }
        }
        if !any {
            unmatched.push(raw.as_str());
        }
    }
    (names, unmatched)
}

fn unmatched_warning(source: &str, unmatched: &[&str], registered: &[&str]) -> Option<String> {
    if unmatched.is_empty() {
        return None;
    }
    let quoted: Vec<String> = unmatched.iter().map(|e| format!("\"{e}\"")).collect();
    let (verb, pronoun) = if unmatched.len() == 1 {
        ("matches", "it")
    } else {
        ("match", "them")
    };
    let available = if registered.is_empty() {
        "none".to_owned()
    } else {
        registered.join(", ")
    };
    Some(format!(
        "{source}: {} {verb} no tool; ignoring {pronoun}. Available tools: {available}.",
        quoted.join(", ")
    ))
}

const MCP_PREFIX: &str = "mcp__";

/// Whether an MCP tool offered directly is active under `selection`: MCP tools are kept
/// unless a `--tools` entry starts with `mcp__` (then only those named are), `--exclude-tools`
/// applies to them too, and `--no-tools` turns them off.
pub(crate) fn mcp_tool_selected(selection: &ToolSelection, name: &str) -> bool {
    if selection.no_tools {
        return false;
    }
    if selection
        .exclude
        .iter()
        .any(|e| Entry::parse(e).matches(name))
    {
        return false;
    }
    match &selection.allow {
        Some(allow) if allow.iter().any(|e| e.starts_with(MCP_PREFIX)) => {
            allow.iter().any(|e| Entry::parse(e).matches(name))
        }
        _ => true,
    }
}

/// Whether a tool that reaches MCP tools (`tool_search`, `codemode`) may be activated
/// automatically: as MCP tools are, unless `--exclude-tools` names it or `--no-tools` is given.
pub(crate) fn builtin_tool_selected(selection: &ToolSelection, name: &str) -> bool {
    !selection.no_tools
        && !selection
            .exclude
            .iter()
            .any(|e| Entry::parse(e).matches(name))
}

/// Whether `selection` lets `name` be active at all: not `--no-tools`, named by `--tools`
/// when that is given, and not excluded (plan mode's entry check).
pub(crate) fn tool_permitted(selection: &ToolSelection, name: &str) -> bool {
    !selection.no_tools
        && selection
            .allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|e| Entry::parse(e).matches(name)))
        && !selection
            .exclude
            .iter()
            .any(|e| Entry::parse(e).matches(name))
}

/// The active tools for `selection`, given the resolved `defaultTools` list (names and
/// patterns) and the names of the registered tools in registration order.
pub fn select_tools(
    selection: &ToolSelection,
    default_tools: &[String],
    registered: &[&str],
) -> ToolChoice {
    let (source, entries) = match &selection.allow {
        Some(allow) => ("--tools", allow.as_slice()),
        None => ("defaultTools setting", default_tools),
    };
    let (mut active, mut unmatched) = expand(entries, registered);
    let (excluded, mut unmatched_excludes) = expand(&selection.exclude, registered);
    // MCP tools arrive after start-up, as their servers connect: `mcp__` entries are
    // applied to them then (`mcp_tool_selected`).
    unmatched.retain(|entry| !entry.starts_with(MCP_PREFIX));
    unmatched_excludes.retain(|entry| !entry.starts_with(MCP_PREFIX));
    active.retain(|name| !excluded.contains(name));
    if selection.no_tools || selection.no_builtin {
        active.clear();
    }
    let warnings = [
        unmatched_warning(source, &unmatched, registered),
        unmatched_warning("--exclude-tools", &unmatched_excludes, registered),
    ]
    .into_iter()
    .flatten()
    .collect();
    ToolChoice { active, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTERED: &[&str] = &["read", "bash", "edit", "write", "grep", "find", "ls"];

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn defaults() -> Vec<String> {
        strings(&["read", "bash", "edit", "write"])
    }

    fn allow(items: &[&str]) -> ToolSelection {
        ToolSelection {
            allow: Some(strings(items)),
            ..ToolSelection::default()
        }
    }

    #[test]
    fn without_flags_the_default_tools_are_active() {
        let choice = select_tools(&ToolSelection::default(), &defaults(), REGISTERED);
        assert_eq!(choice.active, defaults());
        assert!(choice.warnings.is_empty());
    }

    #[test]
    fn tools_replaces_the_defaults_in_the_order_given() {
        let choice = select_tools(&allow(&["ls", "read"]), &defaults(), REGISTERED);
        assert_eq!(choice.active, ["ls", "read"]);
        assert!(choice.warnings.is_empty());
    }

    #[test]
    fn a_star_matches_any_run_of_characters() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["r*"], &["read"]),
            (&["*e"], &["write"]),
            (&["*r*"], &["read", "write", "grep"]),
            (&["*"], REGISTERED),
            (&["**"], REGISTERED),
            (&["gr*p"], &["grep"]),
            (&["l*", "b*"], &["ls", "bash"]),
            // A name first keeps its place; the pattern does not add it twice.
            (&["ls", "*s*"], &["ls", "bash"]),
        ];
        for (entries, expected) in cases {
            let choice = select_tools(&allow(entries), &defaults(), REGISTERED);
            assert_eq!(choice.active, *expected, "{entries:?}");
            assert!(choice.warnings.is_empty(), "{entries:?}");
        }
    }

    #[test]
    fn only_the_star_is_a_wildcard_and_case_counts() {
        let registered = ["a?c", "abc", "a[b]", "ab", "Read"];
        let cases: &[(&str, &[&str])] = &[
            ("a?*", &["a?c"]),
            ("a[*", &["a[b]"]),
            ("{a,b}*", &[]),
            ("read*", &[]),
            ("R*", &["Read"]),
        ];
        for (entry, expected) in cases {
            let choice = select_tools(&allow(&[entry]), &[], &registered);
            assert_eq!(choice.active, *expected, "{entry}");
        }
        // Exact names are exact too.
        let choice = select_tools(&allow(&["READ"]), &[], &registered);
        assert!(choice.active.is_empty());
        assert_eq!(choice.warnings.len(), 1);
    }

    #[test]
    fn unknown_names_and_empty_patterns_warn_once_with_the_available_tools() {
        let choice = select_tools(&allow(&["read", "raed", "x*"]), &defaults(), REGISTERED);
        assert_eq!(choice.active, ["read"]);
        assert_eq!(
            choice.warnings,
            [
                "--tools: \"raed\", \"x*\" match no tool; ignoring them. Available tools: read, bash, edit, write, grep, find, ls."
            ]
        );
        let choice = select_tools(&allow(&["nope"]), &defaults(), &["read"]);
        assert!(choice.active.is_empty());
        assert_eq!(
            choice.warnings,
            ["--tools: \"nope\" matches no tool; ignoring it. Available tools: read."]
        );
    }

    #[test]
    fn the_default_tools_setting_takes_patterns_and_is_checked_too() {
        let settings = strings(&["read", "*s*", "codemode"]);
        let choice = select_tools(&ToolSelection::default(), &settings, REGISTERED);
        assert_eq!(choice.active, ["read", "bash", "ls"]);
        assert_eq!(
            choice.warnings,
            [
                "defaultTools setting: \"codemode\" matches no tool; ignoring it. Available tools: read, bash, edit, write, grep, find, ls."
            ]
        );
        // `--tools` replaces the setting, whose entries are then not looked at.
        let choice = select_tools(&allow(&["grep"]), &settings, REGISTERED);
        assert_eq!(choice.active, ["grep"]);
        assert!(choice.warnings.is_empty());
    }

    #[test]
    fn exclude_tools_takes_names_and_patterns_after_the_selection() {
        let selection = ToolSelection {
            allow: Some(strings(&["*"])),
            exclude: strings(&["bash", "*e*"]),
            ..ToolSelection::default()
        };
        let choice = select_tools(&selection, &defaults(), REGISTERED);
        assert_eq!(choice.active, ["find", "ls"]);
        assert!(choice.warnings.is_empty());

        // An exclusion of a registered tool that is not active is no mistake; one that
        // names no tool at all is.
        let selection = ToolSelection {
            exclude: strings(&["ls", "bsh"]),
            ..ToolSelection::default()
        };
        let choice = select_tools(&selection, &defaults(), REGISTERED);
        assert_eq!(choice.active, defaults());
        assert_eq!(
            choice.warnings,
            [
                "--exclude-tools: \"bsh\" matches no tool; ignoring it. Available tools: read, bash, edit, write, grep, find, ls."
            ]
        );
    }

    #[test]
    fn no_tools_and_no_builtin_tools_leave_nothing_active() {
        for selection in [
            ToolSelection {
                no_tools: true,
                allow: Some(strings(&["read"])),
                ..ToolSelection::default()
            },
            ToolSelection {
                no_builtin: true,
                ..ToolSelection::default()
            },
        ] {
            let choice = select_tools(&selection, &defaults(), REGISTERED);
            assert!(choice.active.is_empty(), "{selection:?}");
            assert!(choice.warnings.is_empty(), "{selection:?}");
        }
    }

    #[test]
    fn an_empty_list_selects_nothing_without_a_warning() {
        let choice = select_tools(&allow(&[]), &defaults(), REGISTERED);
        assert!(choice.active.is_empty());
        assert!(choice.warnings.is_empty());
        let choice = select_tools(&ToolSelection::default(), &[], REGISTERED);
        assert!(choice.active.is_empty());
        assert!(choice.warnings.is_empty());
    }
}
