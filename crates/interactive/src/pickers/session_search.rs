//! Which sessions the picker lists and in what order: the search syntax (fuzzy words,
//! `"exact phrases"`, `re:<regex>`), the sort modes and the thread view that nests forks
//! under the session they came from.

use std::collections::HashMap;

use knightcode_runtime::sessions::SessionInfo;
use knightcode_tui::fuzzy::fuzzy_match;
use regex::Regex;

/// How the list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortMode {
    /// Forks nested under their parent session, newest first at each level (flat while
    /// searching).
    Threaded,
    /// Newest first.
    Recent,
    /// Best search match first, newest first among equals.
    Relevance,
}

impl SortMode {
    /// The order Ctrl+S steps through.
    pub(crate) fn next(self) -> Self {
        match self {
            Self::Threaded => Self::Recent,
            Self::Recent => Self::Relevance,
            Self::Relevance => Self::Threaded,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Threaded => "Threaded",
            Self::Recent => "Recent",
            Self::Relevance => "Fuzzy",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Fuzzy(String),
    Phrase(String),
}

#[derive(Debug, Clone)]
pub(crate) enum Query {
    Tokens(Vec<Token>),
    Regex(Regex),
    /// `re:` with an empty or invalid pattern: nothing matches, and the picker says why.
    Invalid(String),
}

impl Query {
    pub(crate) fn parse(text: &str) -> Self {
        let trimmed = text.trim();
        if let Some(pattern) = trimmed.strip_prefix("re:") {
            let pattern = pattern.trim();
            if pattern.is_empty() {
                return Self::Invalid("Empty regex".to_owned());
            }
            return match regex::RegexBuilder::new(pattern)
                .case_insensitive(true)
                .build()
            {
                Ok(regex) => Self::Regex(regex),
                Err(error) => Self::Invalid(first_line(&error.to_string())),
            };
        }
        Self::Tokens(tokens(trimmed))
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Self::Tokens(tokens) if tokens.is_empty())
    }

    pub(crate) fn error(&self) -> Option<&str> {
        match self {
            Self::Invalid(message) => Some(message),
            _ => None,
        }
    }

    /// The match score (lower is better), or `None` when the session does not match.
    fn score(&self, session: &SessionInfo) -> Option<i64> {
        let text = search_text(session);
        match self {
            Self::Invalid(_) => None,
            Self::Regex(regex) => regex.find(&text).map(|m| char_offset(&text, m.start())),
            Self::Tokens(tokens) => {
                let mut normalized: Option<String> = None;
                let mut total = 0;
                for token in tokens {
                    match token {
                        Token::Phrase(phrase) => {
                            let haystack =
                                normalized.get_or_insert_with(|| normalize_whitespace(&text));
                            let index = haystack.find(&normalize_whitespace(phrase))?;
                            total += char_offset(haystack, index);
                        }
                        Token::Fuzzy(word) => total += fuzzy_match(word, &text)?,
                    }
                }
                Some(total)
            }
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or(text)
        .to_owned()
}

/// Words, with `"quoted phrases"` kept whole; unbalanced quotes fall back to plain words.
fn tokens(text: &str) -> Vec<Token> {
    if text.is_empty() {
        return Vec::new();
    }
    if text.matches('"').count() % 2 == 1 {
        return text
            .split_whitespace()
            .map(|word| Token::Fuzzy(word.to_owned()))
            .collect();
    }
    let mut tokens = Vec::new();
    let mut buffer = String::new();
    let mut in_quote = false;
    let mut flush = |buffer: &mut String, phrase: bool| {
        let value = buffer.trim();
        if !value.is_empty() {
            tokens.push(if phrase {
                Token::Phrase(value.to_owned())
            } else {
                Token::Fuzzy(value.to_owned())
            });
        }
        buffer.clear();
    };
    for c in text.chars() {
        if c == '"' {
            flush(&mut buffer, in_quote);
            in_quote = !in_quote;
        } else if !in_quote && c.is_whitespace() {
            flush(&mut buffer, false);
        } else {
            buffer.push(c);
        }
    }
    flush(&mut buffer, in_quote);
    tokens
}

/// What a search looks through: id, name, every message's text and the folder.
fn search_text(session: &SessionInfo) -> String {
    format!(
        "{} {} {} {}",
        session.id,
        session.name.as_deref().unwrap_or(""),
        session.all_messages_text,
        session.cwd
    )
}

fn normalize_whitespace(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Positions count in characters so that scores do not depend on the encoding; scaled
/// like the fuzzy scores (tenths), where a later position ranks a little lower.
fn char_offset(text: &str, byte: usize) -> i64 {
    text[..byte].chars().count() as i64
}

pub(crate) fn has_name(session: &SessionInfo) -> bool {
    session
        .name
        .as_deref()
        .is_some_and(|n| !n.trim().is_empty())
}

/// One listed session and where it sits in the thread view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// Index into the picker's session list.
    pub(crate) index: usize,
    pub(crate) depth: usize,
    pub(crate) is_last: bool,
    /// For each ancestor level below the root: whether its line continues below this row.
    pub(crate) ancestor_continues: Vec<bool>,
}

impl Row {
    fn flat(index: usize) -> Self {
        Self {
            index,
            depth: 0,
            is_last: true,
            ancestor_continues: Vec::new(),
        }
    }

    /// `│  ├─ ` in front of a forked session.
    pub(crate) fn tree_prefix(&self) -> String {
        if self.depth == 0 {
            return String::new();
        }
        let mut prefix: String = self
            .ancestor_continues
            .iter()
            .map(|continues| if *continues { "│  " } else { "   " })
            .collect();
        prefix.push_str(if self.is_last { "└─ " } else { "├─ " });
        prefix
    }
}

/// The rows for the current query, sort mode and name filter.
pub(crate) fn list_rows(
    sessions: &[SessionInfo],
    query: &Query,
    sort: SortMode,
    named_only: bool,
) -> Vec<Row> {
    let candidates: Vec<usize> = (0..sessions.len())
        .filter(|&i| !named_only || has_name(&sessions[i]))
        .collect();
    if query.is_empty() {
        return match sort {
            SortMode::Threaded => threaded(sessions, &candidates),
            // The app lists sessions newest first already; relevance without a query is
            // the same order.
            SortMode::Recent | SortMode::Relevance => {
                let mut rows = candidates;
                rows.sort_by_key(|&i| std::cmp::Reverse(sessions[i].modified));
                rows.into_iter().map(Row::flat).collect()
            }
        };
    }
    let mut scored: Vec<(i64, usize)> = candidates
        .into_iter()
        .filter_map(|i| query.score(&sessions[i]).map(|score| (score, i)))
        .collect();
    match sort {
        SortMode::Relevance => scored.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(sessions[b.1].modified.cmp(&sessions[a.1].modified))
        }),
        SortMode::Threaded | SortMode::Recent => {
            scored.sort_by_key(|&(_, i)| std::cmp::Reverse(sessions[i].modified));
        }
    }
    scored.into_iter().map(|(_, i)| Row::flat(i)).collect()
}

/// Forks under their parent (by `parentSession` path), newest first at every level.
fn threaded(sessions: &[SessionInfo], candidates: &[usize]) -> Vec<Row> {
    let by_path: HashMap<&std::path::Path, usize> = candidates
        .iter()
        .map(|&i| (sessions[i].path.as_path(), i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for &i in candidates {
        let parent = sessions[i]
            .parent_session_path
            .as_deref()
            .and_then(|p| by_path.get(std::path::Path::new(p)))
            .copied()
            .filter(|&p| p != i);
        match parent {
            Some(parent) => children.entry(parent).or_default().push(i),
            None => roots.push(i),
        }
    }
    let newest_first = |list: &mut Vec<usize>| {
        list.sort_by_key(|&i| std::cmp::Reverse(sessions[i].modified));
    };
    newest_first(&mut roots);
    for list in children.values_mut() {
        newest_first(list);
    }
    let mut rows = Vec::with_capacity(candidates.len());
    // Explicit stack: fork chains can be long. Parent cycles cannot occur here because a
    // session in a cycle has a parent and so is never a root; such sessions are appended
    // flat at the end so none goes missing.
    let mut stack: Vec<(usize, usize, bool, Vec<bool>)> = roots
        .iter()
        .rev()
        .map(|&i| (i, 0, true, Vec::new()))
        .collect();
    let mut seen = vec![false; sessions.len()];
    while let Some((index, depth, is_last, ancestors)) = stack.pop() {
        if std::mem::replace(&mut seen[index], true) {
            continue;
        }
        rows.push(Row {
            index,
            depth,
            is_last,
            ancestor_continues: ancestors.clone(),
        });
        if let Some(kids) = children.get(&index) {
            let mut child_ancestors = ancestors;
            if depth > 0 {
                child_ancestors.push(!is_last);
            }
            for (position, &child) in kids.iter().enumerate().rev() {
                stack.push((
                    child,
                    depth + 1,
                    position + 1 == kids.len(),
                    child_ancestors.clone(),
                ));
            }
        }
    }
    for &i in candidates {
        if !seen[i] {
            rows.push(Row::flat(i));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_make_phrases_and_unbalanced_quotes_fall_back() {
        assert_eq!(
            tokens(r#"foo "node cve" bar"#),
            vec![
                Token::Fuzzy("foo".into()),
                Token::Phrase("node cve".into()),
                Token::Fuzzy("bar".into())
            ]
        );
        assert_eq!(
            tokens(r#"foo "bar"#),
            vec![Token::Fuzzy("foo".into()), Token::Fuzzy("\"bar".into())]
        );
    }

    #[test]
    fn bad_regex_is_reported() {
        assert!(Query::parse("re:").error().is_some());
        assert!(Query::parse("re:(").error().is_some());
        assert!(Query::parse("re:a+").error().is_none());
        assert!(Query::parse("  ").is_empty());
    }
}
