//! Prompt templates: `name.md` files invoked as `/name args`, with shell-style arguments
//! substituted into the body.

use std::path::Path;
use std::path::PathBuf;

use crate::SourceInfo;
use crate::frontmatter;
use crate::ignore_rules::IgnoreRules;
use crate::paths;
use crate::paths::Scanned;

/// One loaded template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The file name without `.md`.
    pub name: String,
    /// `description`, else the body's first non-empty line (cut at 60 characters).
    pub description: String,
    /// `argument-hint`, shown before the description in autocomplete.
    pub argument_hint: Option<String>,
    /// The body, frontmatter removed.
    pub content: String,
    pub file_path: PathBuf,
    pub source: SourceInfo,
}

/// How a folder of templates is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirScan {
    /// Discovered folders (`prompts/`): top level only, dot entries skipped, ignore files
    /// honoured.
    Discovered,
    /// Folders named in settings: recursive, dot entries and `node_modules` skipped, ignore
    /// files honoured.
    Recursive,
    /// Folders given with `--prompt-template`: every `.md` file at the top level.
    Plain,
}

/// The `.md` files of `dir`.
pub fn scan(dir: &Path, how: DirScan) -> Vec<Scanned> {
    let mut out = Vec::new();
    let mut rules = IgnoreRules::new(dir);
    scan_into(dir, &paths::canonical(dir), how, &mut rules, &mut out);
    out
}

fn scan_into(
    dir: &Path,
    real_dir: &Path,
    how: DirScan,
    rules: &mut IgnoreRules,
    out: &mut Vec<Scanned>,
) {
    let entries = paths::entries(dir);
    if how != DirScan::Plain {
        rules.add_dir(dir, entries.iter().map(|e| e.name.as_str()));
    }
    for entry in entries {
        if how != DirScan::Plain {
            if entry.name.starts_with('.') || entry.name == "node_modules" {
                continue;
            }
            if rules.ignores(&entry.path, entry.is_dir) {
                continue;
            }
        }
        let real = paths::real_of(&entry, real_dir);
        if entry.is_file && entry.name.ends_with(".md") {
            out.push(Scanned {
                path: entry.path,
                real,
            });
        } else if entry.is_dir && how == DirScan::Recursive {
            scan_into(&entry.path, &real, how, rules, out);
        }
    }
}

/// Reads one template; a file that cannot be read or parsed is no template (the reference
/// skips it without a word).
pub fn load_file(path: &Path, source: SourceInfo) -> Option<PromptTemplate> {
    let content = paths::read_text(path).ok()?;
    let parsed = frontmatter::parse(&content).ok()?;
    let name = path.file_name()?.to_string_lossy();
    let name = name.strip_suffix(".md").unwrap_or(&name).to_owned();
    let description = match parsed.string("description").filter(|d| !d.is_empty()) {
        Some(description) => description.to_owned(),
        None => parsed
            .body
            .split('\n')
            .find(|line| !line.trim().is_empty())
            .map(first_line_summary)
            .unwrap_or_default(),
    };
    let argument_hint = parsed
        .string("argument-hint")
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    Some(PromptTemplate {
        name,
        description,
        argument_hint,
        content: parsed.body,
        file_path: path.to_path_buf(),
        source,
    })
}

/// The first 60 UTF-16 units of a line, with `...` when it was longer.
fn first_line_summary(line: &str) -> String {
    let units: Vec<u16> = line.encode_utf16().collect();
    if units.len() <= 60 {
        return line.to_owned();
    }
    format!("{}...", String::from_utf16_lossy(&units[..60]))
}

/// Splits arguments the way a shell would for plain words: spaces and tabs separate, single
/// or double quotes group (and are removed); there are no escapes.
pub fn parse_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// Substitutes the placeholders of `content` in one pass (an argument that itself looks
/// like a placeholder stays as typed):
/// `$1`…, `$@` / `$ARGUMENTS`, `${N:-default}`, `${@:-default}` / `${ARGUMENTS:-default}`,
/// `${@:N}` and `${@:N:L}`.
pub fn substitute(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match placeholder(after, args, &all) {
            Some((value, used)) => {
                out.push_str(&value);
                rest = &after[used..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of the placeholder at the start of `text` (just after a `$`) and how many
/// bytes it spans.
fn placeholder(text: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let positional = |digits: &str| -> String {
        digits
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| args.get(i))
            .cloned()
            .unwrap_or_default()
    };
    if let Some(braced) = text.strip_prefix('{') {
        let close = braced.find('}')?;
        let inner = &braced[..close];
        let used = close + 2;
        if let Some((target, default)) = inner.split_once(":-") {
            let value = if target == "@" || target == "ARGUMENTS" {
                all.to_owned()
            } else if !target.is_empty() && target.bytes().all(|b| b.is_ascii_digit()) {
                positional(target)
            } else {
                return None;
            };
            return Some((
                if value.is_empty() {
                    default.to_owned()
                } else {
                    value
                },
                used,
            ));
        }
        let slice = inner.strip_prefix("@:")?;
        let (start, length) = match slice.split_once(':') {
            Some((start, length)) => (start, Some(length)),
            None => (slice, None),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(start) || !length.is_none_or(digits) {
            return None;
        }
        // `${@:0}` counts from the first argument, as bash does.
        let start = start
            .parse::<usize>()
            .unwrap_or(usize::MAX)
            .saturating_sub(1)
            .min(args.len());
        let end = match length {
            Some(length) => start
                .saturating_add(length.parse::<usize>().unwrap_or(usize::MAX))
                .min(args.len()),
            None => args.len(),
        };
        return Some((args[start..end].join(" "), used));
    }
    if let Some(rest) = text.strip_prefix("ARGUMENTS") {
        let _ = rest;
        return Some((all.to_owned(), "ARGUMENTS".len()));
    }
    if text.starts_with('@') {
        return Some((all.to_owned(), 1));
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        return Some((positional(&text[..digits]), digits));
    }
    None
}

/// `/name args` with `name` a template: the expanded body. The name ends at the first
/// space; anything else is not a template invocation.
pub fn expand<'a>(
    text: &str,
    templates: impl IntoIterator<Item = &'a PromptTemplate>,
) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let template = templates.into_iter().find(|t| t.name == name)?;
    Some(substitute(&template.content, &parse_args(args)))
}
