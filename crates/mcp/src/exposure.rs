//! How the model reaches a server's tools (`exposure`, `toolExposure`).

/// A server's or a tool's exposure. `codemode` is the default of the file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Exposure {
    #[default]
    Codemode,
    Deferred,
    Direct,
    Hidden,
}

impl Exposure {
    /// The file's spelling; `codemode-deferred` is the older name of `codemode`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "codemode" | "codemode-deferred" => Self::Codemode,
            "deferred" => Self::Deferred,
            "direct" => Self::Direct,
            "hidden" => Self::Hidden,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Codemode => "codemode",
            Self::Deferred => "deferred",
            Self::Direct => "direct",
            Self::Hidden => "hidden",
        }
    }
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool's exposure: an exact `toolExposure` key beats patterns, the first matching
/// pattern (in file order) beats the server's exposure.
pub(crate) fn for_tool(server: Exposure, rules: &[(String, Exposure)], tool: &str) -> Exposure {
    if let Some((_, exposure)) = rules.iter().find(|(key, _)| key == tool) {
        return *exposure;
    }
    rules
        .iter()
        .find(|(key, _)| key.contains('*') && glob_matches(key, tool))
        .map_or(server, |(_, exposure)| *exposure)
}

/// `*` matches any run of characters (none included); everything else matches itself.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let Some((first, rest)) = parts.split_first() else {
        return text.is_empty();
    };
    let Some(mut remaining) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_matches("get_*", "get_issue"));
        assert!(glob_matches("*_issue", "get_issue"));
        assert!(glob_matches("g*t*e", "get_issue"));
        assert!(!glob_matches("get_*", "list_issues"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("a*a", "a"));
    }

    #[test]
    fn exact_beats_patterns_and_first_pattern_wins() {
        let rules = vec![
            ("get_*".to_owned(), Exposure::Direct),
            ("*".to_owned(), Exposure::Hidden),
            ("get_secret".to_owned(), Exposure::Deferred),
        ];
        assert_eq!(
            for_tool(Exposure::Codemode, &rules, "get_secret"),
            Exposure::Deferred
        );
        assert_eq!(
            for_tool(Exposure::Codemode, &rules, "get_issue"),
            Exposure::Direct
        );
        assert_eq!(
            for_tool(Exposure::Codemode, &rules, "other"),
            Exposure::Hidden
        );
        assert_eq!(for_tool(Exposure::Direct, &[], "x"), Exposure::Direct);
    }
}
