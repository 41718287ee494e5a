//! Fuzzy matching for selectors and autocomplete, scored like the reference's `fuzzy.js` so
//! lists come out in the same order: the query's characters must appear in order
//! (case-insensitively); matches at word starts and runs of consecutive matches score
//! better, gaps and late matches worse.
//!
//! Scores are "lower is better" and kept in tenths (the reference adds 0.1 per position).

/// Characters after which a match counts as the start of a word.
fn is_word_boundary(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '_' | '.' | '/' | ':')
}

fn match_lowered(query: &[char], text: &[char]) -> Option<i64> {
    if query.is_empty() {
        return Some(0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut query_index = 0;
    let mut score: i64 = 0;
    let mut last_match: Option<usize> = None;
    let mut consecutive: i64 = 0;
    for (i, &c) in text.iter().enumerate() {
        if query_index == query.len() {
            break;
        }
        if c != query[query_index] {
            continue;
        }
        let at_boundary = i == 0 || is_word_boundary(text[i - 1]);
        match last_match {
            Some(last) if last + 1 == i => {
                consecutive += 1;
                score -= consecutive * 50;
            }
            Some(last) => {
                consecutive = 0;
                score += (i - last - 1) as i64 * 20;
            }
            None => consecutive = 0,
        }
        if at_boundary {
            score -= 100;
        }
        score += i as i64;
        last_match = Some(i);
        query_index += 1;
    }
    if query_index < query.len() {
        return None;
    }
    if query == text {
        score -= 1000;
    }
    Some(score)
}

/// `abc12` → `12abc` and `12abc` → `abc12`: people type model names either way round.
fn swapped(query: &str) -> Option<String> {
    let split = query.find(|c: char| !c.is_ascii_lowercase())?;
    let (letters, digits) = query.split_at(split);
    if !letters.is_empty() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!("{digits}{letters}"));
    }
    let split = query.find(|c: char| !c.is_ascii_digit())?;
    let (digits, letters) = query.split_at(split);
    if !digits.is_empty() && !letters.is_empty() && letters.bytes().all(|b| b.is_ascii_lowercase())
    {
        return Some(format!("{letters}{digits}"));
    }
    None
}

/// The score of `query` against `text` (lower is better), or `None` when it does not match.
pub fn fuzzy_match(query: &str, text: &str) -> Option<i64> {
    let query = query.to_lowercase();
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let query_chars: Vec<char> = query.chars().collect();
    if let Some(score) = match_lowered(&query_chars, &text) {
        return Some(score);
    }
    let swapped: Vec<char> = swapped(&query)?.chars().collect();
    // A swapped match ranks a little below a direct one.
    match_lowered(&swapped, &text).map(|score| score + 50)
}

/// Positions of the items whose key matches every whitespace-separated word of `query`,
/// best first (ties keep their original order). An empty query keeps all items in order.
pub fn fuzzy_filter_indices<I, S>(keys: I, query: &str) -> Vec<usize>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut scored: Vec<(i64, usize)> = Vec::new();
    for (index, key) in keys.into_iter().enumerate() {
        if words.is_empty() {
            scored.push((0, index));
            continue;
        }
        let key = key.as_ref();
        let total = words
            .iter()
            .map(|word| fuzzy_match(word, key))
            .try_fold(0i64, |sum, score| score.map(|s| sum + s));
        if let Some(total) = total {
            scored.push((total, index));
        }
    }
    // Stable, so equal scores keep the caller's order (as the reference's sort does).
    scored.sort_by_key(|&(score, _)| score);
    scored.into_iter().map(|(_, index)| index).collect()
}

/// The items whose key matches `query`, best first; see [`fuzzy_filter_indices`].
pub fn fuzzy_filter<'a, T, S>(items: &'a [T], query: &str, key: impl Fn(&T) -> S) -> Vec<&'a T>
where
    S: AsRef<str>,
{
    fuzzy_filter_indices(items.iter().map(key), query)
        .into_iter()
        .filter_map(|index| items.get(index))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsequences_match_case_insensitively() {
        assert!(fuzzy_match("gpt", "GPT-4o").is_some());
        assert!(fuzzy_match("g4", "gpt-4o").is_some());
        assert!(fuzzy_match("x", "gpt-4o").is_none());
        assert!(fuzzy_match("og", "gpt-4o").is_none());
        assert_eq!(fuzzy_match("", "anything"), Some(0));
        assert!(fuzzy_match("toolong", "short").is_none());
    }

    #[test]
    fn swapped_letters_and_digits_still_match() {
        assert!(fuzzy_match("4gpt", "gpt4").is_some());
        assert!(fuzzy_match("gpt4", "4gpt").is_some());
        assert!(fuzzy_match("gpt4", "4gpt") > fuzzy_match("gpt4", "gpt4"));
    }

    #[test]
    fn exact_and_word_start_matches_rank_first() {
        assert!(fuzzy_match("model", "model") < fuzzy_match("model", "models"));
        assert!(fuzzy_match("se", "session") < fuzzy_match("se", "use"));
        assert!(fuzzy_match("ns", "new-session") < fuzzy_match("ns", "dangers"));
    }
}
