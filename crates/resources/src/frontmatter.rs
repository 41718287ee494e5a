//! `---` YAML frontmatter at the top of a markdown file, read the way the reference does:
//! line endings normalised to `\n`, the block ends at the first `\n---`, and the body after
//! it is trimmed (a file without a block keeps its body as it is).

use yaml_rust2::Yaml;
use yaml_rust2::YamlLoader;

/// The frontmatter's fields (empty when there is no block or it is not a mapping) and the
/// body after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    fields: Option<Yaml>,
    pub body: String,
}

impl Frontmatter {
    /// A string field; a field of another type reads as absent, as the reference's
    /// `typeof value === "string"` checks do.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.field(key).and_then(Yaml::as_str)
    }

    /// A field that is exactly `true`.
    pub fn is_true(&self, key: &str) -> bool {
        self.field(key).and_then(Yaml::as_bool) == Some(true)
    }

    fn field(&self, key: &str) -> Option<&Yaml> {
        match &self.fields {
            Some(Yaml::Hash(map)) => map.get(&Yaml::String(key.to_owned())),
            _ => None,
        }
    }
}

/// Why a frontmatter block could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid frontmatter: {0}")]
pub struct FrontmatterError(pub String);

/// Splits `content` into frontmatter and body.
pub fn parse(content: &str) -> Result<Frontmatter, FrontmatterError> {
    let normalized = if content.contains('\r') {
        content.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        content.to_owned()
    };
    let Some(rest) = normalized.strip_prefix("---") else {
        return Ok(Frontmatter {
            fields: None,
            body: normalized,
        });
    };
    // `indexOf("\n---", 3)`: the search starts right after the opening dashes.
    let Some(end) = rest.find("\n---").map(|at| at + 3) else {
        return Ok(Frontmatter {
            fields: None,
            body: normalized,
        });
    };
    // The YAML starts after the opening line's newline; an empty block counts as none.
    let yaml = normalized.get(4..end).unwrap_or("");
    if yaml.is_empty() {
        return Ok(Frontmatter {
            fields: None,
            body: normalized,
        });
    }
    let body = normalized
        .get(end + 4..)
        .unwrap_or("")
        .trim_matches(is_js_whitespace)
        .to_owned();
    if let Some(fields) = plain_mapping(yaml) {
        return Ok(Frontmatter {
            fields: Some(fields),
            body,
        });
    }
    let documents = YamlLoader::load_from_str(yaml).map_err(|e| FrontmatterError(e.to_string()))?;
    Ok(Frontmatter {
        fields: documents.into_iter().next(),
        body,
    })
}

/// The common frontmatter, read without the YAML parser: only `key: value` lines whose
/// values are plain text the parser would read as the same string (no quotes, flow or block
/// syntax, comments, numbers, booleans or nulls). Anything else is `None` and goes to the
/// parser. Start-up reads hundreds of these.
fn plain_mapping(yaml: &str) -> Option<Yaml> {
    let mut map = yaml_rust2::yaml::Hash::new();
    for line in yaml.split('\n') {
        if line.trim().is_empty() {
            continue;
        }
        let (key, value) = line.split_once(": ")?;
        let value = value.trim_end_matches(' ');
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            || !plain_scalar(value)
        {
            return None;
        }
        let key = Yaml::String(key.to_owned());
        if map.contains_key(&key) {
            return None;
        }
        map.insert(key, Yaml::String(value.to_owned()));
    }
    Some(Yaml::Hash(map))
}

/// A value the YAML parser reads as exactly this string.
fn plain_scalar(value: &str) -> bool {
    let Some(first) = value.chars().next() else {
        return false;
    };
    let special_start = first.is_ascii_digit()
        || first.is_whitespace()
        || "-?:,[]{}#&*!|>'\"%@`+.~".contains(first);
    let reserved = matches!(
        value,
        "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    );
    !special_start
        && !reserved
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.contains('\t')
        && !value.ends_with(':')
        && !value.chars().any(|c| c.is_control())
}

/// The body without its frontmatter block.
pub fn strip(content: &str) -> Result<String, FrontmatterError> {
    parse(content).map(|f| f.body)
}

/// JavaScript's `String.prototype.trim` set (Unicode white space and line terminators,
/// including U+FEFF), which Rust's `trim` lacks only the BOM of.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn fields_and_trimmed_body() {
        let parsed =
            parse("---\r\nname: a\r\ndescription: \"x: y\"\r\nflag: true\r\n---\r\n\r\nBody\r\n")
                .unwrap();
        assert_eq!(parsed.string("name"), Some("a"));
        assert_eq!(parsed.string("description"), Some("x: y"));
        assert!(parsed.is_true("flag"));
        assert_eq!(parsed.body, "Body");
    }

    #[test]
    fn no_block_keeps_the_body_untrimmed() {
        let parsed = parse("\nHello\n").unwrap();
        assert_eq!(parsed.string("name"), None);
        assert_eq!(parsed.body, "\nHello\n");
        let unclosed = parse("---\nname: a\nbody").unwrap();
        assert_eq!(unclosed.string("name"), None);
        assert_eq!(unclosed.body, "---\nname: a\nbody");
    }

    #[test]
    fn non_string_values_read_as_absent() {
        let parsed =
            parse("---\ndescription: 12\ndisable-model-invocation: \"true\"\n---\nx").unwrap();
        assert_eq!(parsed.string("description"), None);
        assert!(!parsed.is_true("disable-model-invocation"));
        let list = parse("---\n- a\n- b\n---\nx").unwrap();
        assert_eq!(list.string("description"), None);
    }

    #[test]
    fn the_plain_fast_path_reads_what_the_parser_reads() {
        let cases = [
            "name: a\ndescription: Reviews code, then writes a summary. Use it often.",
            "description: Uses <tags> & \"quotes\" 'too' (and more)",
            "description: 12",
            "description: true",
            "description: -leading",
            "description: \"quoted: yes\"",
            "description: a # comment",
            "description: x\ndescription: y",
            "description: |\n  block\n  text",
            "metadata:\n  k: v\ndescription: nested",
            "description: ends with colon:",
            "name: ~",
            "description: unicode — ok ✓",
        ];
        for case in cases {
            let fast = plain_mapping(case);
            let parsed = YamlLoader::load_from_str(case)
                .ok()
                .and_then(|docs| docs.into_iter().next());
            if let Some(fast) = fast {
                assert_eq!(Some(fast), parsed, "{case}");
            }
        }
        assert!(plain_mapping("name: a\ndescription: plain words").is_some());
        assert!(plain_mapping("description: 12").is_none());
    }

    #[test]
    fn invalid_yaml_is_an_error() {
        assert!(parse("---\ndescription: [unclosed\n---\nx").is_err());
    }
}
