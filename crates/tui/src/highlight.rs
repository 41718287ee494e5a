//! Syntax highlighting for code blocks and file contents.
//!
//! Grammars are syntect's (with two-face's extra set, which adds TypeScript, TOML and
//! more). Colours come from the [`Theme`]'s [`SyntaxStyles`] rather than a TextMate colour
//! theme, so code uses the same palette as the reference (its `syntax*` colours) and the
//! plain theme yields no escapes at all. Each scope stack is reduced to one token kind.
//!
//! Loading the grammars takes milliseconds, so it happens on the first highlighted block
//! and is kept for the life of the process: a read-only cache, not mutable state.

use std::path::Path;
use std::sync::OnceLock;

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::style::{Style, SyntaxStyles, Theme};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Comment,
    Keyword,
    Function,
    Variable,
    String,
    Number,
    Type,
    Operator,
    Punctuation,
    /// An embedded region (string interpolation, another language): enclosing scopes no
    /// longer decide the colour.
    Boundary,
}

/// Scope prefixes and their kinds, most specific first.
const RULES: &[(&str, Kind)] = &[
    ("comment", Kind::Comment),
    ("string", Kind::String),
    ("constant.character.escape", Kind::String),
    ("constant.numeric", Kind::Number),
    ("constant.language", Kind::Number),
    ("keyword.operator", Kind::Operator),
    ("keyword", Kind::Keyword),
    ("storage", Kind::Keyword),
    ("variable.language", Kind::Keyword),
    ("entity.name.tag", Kind::Keyword),
    ("entity.name.function", Kind::Function),
    ("support.function", Kind::Function),
    ("variable.function", Kind::Function),
    ("entity.name", Kind::Type),
    ("entity.other.inherited-class", Kind::Type),
    ("support.type", Kind::Type),
    ("support.class", Kind::Type),
    ("entity.other.attribute-name", Kind::Variable),
    ("variable.parameter", Kind::Variable),
    ("punctuation", Kind::Punctuation),
    ("meta.interpolation", Kind::Boundary),
    ("meta.embedded", Kind::Boundary),
    ("meta.template.expression", Kind::Boundary),
    ("source", Kind::Boundary),
];

struct Highlighter {
    syntaxes: SyntaxSet,
    rules: Vec<(Scope, Kind)>,
}

static HIGHLIGHTER: OnceLock<Highlighter> = OnceLock::new();

fn highlighter() -> &'static Highlighter {
    HIGHLIGHTER.get_or_init(|| Highlighter {
        syntaxes: two_face::syntax::extra_newlines(),
        rules: RULES
            .iter()
            .filter_map(|&(prefix, kind)| Scope::new(prefix).ok().map(|scope| (scope, kind)))
            .collect(),
    })
}

impl Highlighter {
    fn kind_of_scope(&self, scope: Scope) -> Option<Kind> {
        self.rules
            .iter()
            .find(|(prefix, _)| prefix.is_prefix_of(scope))
            .map(|&(_, kind)| kind)
    }

    /// The kind of the text under `stack`: the innermost scope with a kind decides, but
    /// punctuation inside a string or comment (quotes, `//`) takes the enclosing colour.
    fn kind_of_stack(&self, stack: &ScopeStack) -> Option<Kind> {
        let mut punctuation = false;
        for &scope in stack.as_slice().iter().rev() {
            match self.kind_of_scope(scope) {
                None => {}
                Some(Kind::Boundary) => break,
                Some(Kind::Punctuation) => punctuation = true,
                Some(kind @ (Kind::String | Kind::Comment)) => return Some(kind),
                Some(_) if punctuation => return Some(Kind::Punctuation),
                Some(kind) => return Some(kind),
            }
        }
        punctuation.then_some(Kind::Punctuation)
    }

    fn find_syntax(&self, lang: &str) -> Option<&SyntaxReference> {
        // Info strings may carry attributes: `rust,ignore`, `python title="x"`, `{.js}`.
        let token = lang
            .trim()
            .trim_start_matches(['{', '.'])
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let token = match token.as_str() {
            "" | "text" | "txt" | "plain" | "plaintext" => return None,
            "shell" | "sh" | "zsh" | "console" | "shellscript" | "shell-session" => "bash",
            "c++" => "cpp",
            "c#" | "csharp" => "cs",
            "golang" => "go",
            "jsonc" | "json5" => "json",
            "py" | "python3" => "python",
            "rs" => "rust",
            "protobuf" => "proto",
            "hcl" | "terraform" => "tf",
            "objective-c" | "objc" => "m",
            other => other,
        };
        self.syntaxes
            .find_syntax_by_token(token)
            .filter(|syntax| syntax.name != "Plain Text")
    }
}

fn style_for(kind: Option<Kind>, palette: &SyntaxStyles) -> Style {
    match kind {
        Some(Kind::Comment) => palette.comment,
        Some(Kind::Keyword) => palette.keyword,
        Some(Kind::Function) => palette.function,
        Some(Kind::Variable) => palette.variable,
        Some(Kind::String) => palette.string,
        Some(Kind::Number) => palette.number,
        Some(Kind::Type) => palette.r#type,
        Some(Kind::Operator) => palette.operator,
        Some(Kind::Punctuation) => palette.punctuation,
        Some(Kind::Boundary) | None => Style::new(),
    }
}

/// Appends `text` in `style`, joining runs of one style so lines carry few escapes.
struct LineBuilder {
    out: String,
    run: String,
    run_style: Style,
}

impl LineBuilder {
    fn new() -> Self {
        Self {
            out: String::new(),
            run: String::new(),
            run_style: Style::new(),
        }
    }

    fn push(&mut self, text: &str, style: Style) {
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            return;
        }
        if style != self.run_style && !self.run.is_empty() {
            self.out.push_str(&self.run_style.paint(&self.run));
            self.run.clear();
        }
        self.run_style = style;
        self.run.push_str(text);
    }

    fn finish(mut self) -> String {
        self.out.push_str(&self.run_style.paint(&self.run));
        self.out
    }
}

/// Parsing state between lines: where a grammar is (inside a comment, a string, ...).
#[derive(Clone)]
struct LineParser {
    state: ParseState,
    stack: ScopeStack,
    /// Set when the grammar failed; the remaining lines are left uncoloured rather than
    /// losing any text.
    failed: bool,
}

impl LineParser {
    fn new(syntax: &SyntaxReference) -> Self {
        Self {
            state: ParseState::new(syntax),
            stack: ScopeStack::new(),
            failed: false,
        }
    }

    /// One line (with or without its line ending), highlighted.
    fn line(&mut self, line: &str, palette: &SyntaxStyles) -> String {
        let text = line.trim_end_matches(['\n', '\r']);
        if self.failed {
            return text.to_owned();
        }
        let highlighter = highlighter();
        // The grammars are built for lines that end in a newline.
        let owned;
        let line = if line.ends_with('\n') {
            line
        } else {
            owned = format!("{line}\n");
            &owned
        };
        let Ok(ops) = self.state.parse_line(line, &highlighter.syntaxes) else {
            self.failed = true;
            return text.to_owned();
        };
        let mut builder = LineBuilder::new();
        let mut pos = 0;
        for (at, op) in ops {
            let at = at.min(line.len());
            if at > pos {
                let style = style_for(highlighter.kind_of_stack(&self.stack), palette);
                builder.push(&line[pos..at], style);
                pos = at;
            }
            if self.stack.apply(&op).is_err() {
                self.failed = true;
            }
        }
        if pos < line.len() {
            let style = style_for(highlighter.kind_of_stack(&self.stack), palette);
            builder.push(&line[pos..], style);
        }
        builder.finish()
    }
}

fn plain_lines(code: &str, theme: &Theme) -> Vec<String> {
    code.split('\n')
        .map(|line| theme.md_code_block.paint(line.trim_end_matches('\r')))
        .collect()
}

/// The grammar for `lang`; `None` (and nothing loaded) for no language.
fn syntax_for(lang: Option<&str>) -> Option<&'static SyntaxReference> {
    let lang = lang.filter(|l| !l.trim().is_empty())?;
    highlighter().find_syntax(lang)
}

/// `code` split into lines (like `split('\n')`, so a trailing newline gives a last empty
/// line) with syntax colours from the default dark theme. An unknown or missing language
/// gives the lines in the theme's plain code colour.
pub fn highlight_code(code: &str, lang: Option<&str>) -> Vec<String> {
    highlight_code_with(code, lang, &Theme::dark())
}

/// [`highlight_code`] with the colours of `theme`.
pub fn highlight_code_with(code: &str, lang: Option<&str>, theme: &Theme) -> Vec<String> {
    let Some(syntax) = syntax_for(lang) else {
        return plain_lines(code, theme);
    };
    let mut parser = LineParser::new(syntax);
    code.split('\n')
        .map(|line| parser.line(line, &theme.syntax))
        .collect()
}

/// Highlighting for code that grows at its end, like a code block streaming in: complete
/// lines are highlighted once and parsing resumes after them, so each update costs the new
/// lines only (highlighting with pure-Rust regexes takes up to a millisecond per line).
pub struct IncrementalHighlighter {
    syntax: Option<&'static SyntaxReference>,
    /// The complete lines (with their newlines) already highlighted.
    done: String,
    lines: Vec<String>,
    parser: Option<LineParser>,
    theme: Theme,
}

impl IncrementalHighlighter {
    pub fn new(lang: Option<&str>, theme: &Theme) -> Self {
        let syntax = syntax_for(lang);
        Self {
            syntax,
            done: String::new(),
            lines: Vec::new(),
            parser: syntax.map(LineParser::new),
            theme: theme.clone(),
        }
    }

    /// Whether `code` extends what was highlighted so far (or nothing was yet).
    pub fn continues(&self, code: &str) -> bool {
        code.starts_with(&self.done)
    }

    /// The same lines as [`highlight_code_with`] gives for `code`.
    pub fn highlight(&mut self, code: &str) -> Vec<String> {
        let Some(syntax) = self.syntax else {
            return plain_lines(code, &self.theme);
        };
        if !self.continues(code) {
            self.done.clear();
            self.lines.clear();
            self.parser = Some(LineParser::new(syntax));
        }
        let parser = self.parser.get_or_insert_with(|| LineParser::new(syntax));
        let rest = &code[self.done.len()..];
        let complete = rest.rfind('\n').map_or(0, |at| at + 1);
        for line in LinesWithEndings::from(&rest[..complete]) {
            self.lines.push(parser.line(line, &self.theme.syntax));
        }
        self.done.push_str(&rest[..complete]);
        // The unfinished last line is parsed from a copy: it will be parsed again once
        // more of it has arrived.
        let last = parser.clone().line(&rest[complete..], &self.theme.syntax);
        let mut lines = self.lines.clone();
        lines.push(last);
        lines
    }
}

/// Loads the grammars and compiles those of `langs` (the first block of a language pays
/// for compiling its patterns: a second for TypeScript). An app may call this on a
/// background thread at startup so that the first code block shows without a pause.
pub fn preload(langs: &[&str]) {
    let palette = SyntaxStyles::plain();
    for lang in langs {
        if let Some(syntax) = syntax_for(Some(lang)) {
            // Typical tokens so that the commonly used patterns get compiled.
            let mut parser = LineParser::new(syntax);
            for line in PRELOAD_SAMPLE.lines() {
                parser.line(line, &palette);
            }
        }
    }
}

const PRELOAD_SAMPLE: &str = "import x from \"y\"; // c
const a: number = 1 + f(b, 'c', `d ${e}`);
function g(h) { return [1.5, true, null]; } /* k */
let m = n.o?.p ?? q;";

/// Whether `lang` (a fence tag or a name from [`language_for_path`]) has a grammar. Loads
/// the grammars on first use.
pub fn is_supported_language(lang: &str) -> bool {
    highlighter().find_syntax(lang).is_some()
}

/// The language of a file, from its extension or well-known name, for [`highlight_code`].
pub fn language_for_path(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let by_name = match name.as_str() {
        "dockerfile" | "containerfile" => Some("dockerfile"),
        "makefile" | "gnumakefile" => Some("makefile"),
        "cmakelists.txt" => Some("cmake"),
        ".bashrc" | ".bash_profile" | ".zshrc" | ".profile" => Some("bash"),
        "cargo.lock" => Some("toml"),
        _ => None,
    };
    if by_name.is_some() {
        return by_name;
    }
    let ext = name.rsplit_once('.')?.1;
    Some(match ext {
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "py" | "pyi" => "python",
        "rb" => "ruby",
        "rs" => "rust",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "c" | "h" => "c",
        "cpp" | "cc" | "cxx" | "hpp" | "hh" => "cpp",
        "cs" => "cs",
        "php" => "php",
        "sh" | "bash" | "zsh" => "bash",
        "fish" => "fish",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "sass" => "sass",
        "less" => "less",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" => "xml",
        "md" | "markdown" => "markdown",
        "lua" => "lua",
        "pl" | "pm" => "perl",
        "r" => "r",
        "scala" => "scala",
        "clj" => "clojure",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "hs" => "haskell",
        "ml" => "ocaml",
        "vim" => "vim",
        "graphql" | "gql" => "graphql",
        "proto" => "proto",
        "tf" | "hcl" => "tf",
        "zig" => "zig",
        "nix" => "nix",
        "dart" => "dart",
        "diff" | "patch" => "diff",
        "ini" | "cfg" => "ini",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::width::visible_width;

    #[test]
    fn no_language_is_plain_and_loads_nothing() {
        let lines = highlight_code_with("a\n\tb\n", None, &Theme::plain());
        assert_eq!(lines, vec!["a", "\tb", ""]);
    }

    #[test]
    fn highlighting_keeps_the_text() {
        let code = "fn main() {\n    let s = \"hi\"; // note\n}";
        let lines = highlight_code(code, Some("rust"));
        assert_eq!(lines.len(), 3);
        assert!(lines[0].contains("\x1b["), "{:?}", lines[0]);
        let plain = highlight_code_with(code, Some("rust"), &Theme::plain());
        assert_eq!(plain, code.split('\n').collect::<Vec<_>>());
        for (styled, text) in lines.iter().zip(code.split('\n')) {
            assert_eq!(visible_width(styled), visible_width(text));
        }
    }

    #[test]
    fn incremental_matches_whole_highlighting_at_every_step() {
        let theme = Theme::dark();
        let code = "/* a\n b */ let x = \"s\nt\";\r\nfn f() {}\n\n// end";
        let mut incremental = IncrementalHighlighter::new(Some("rust"), &theme);
        for end in (0..=code.len()).filter(|&i| code.is_char_boundary(i)) {
            let prefix = &code[..end];
            assert!(incremental.continues(prefix));
            assert_eq!(
                incremental.highlight(prefix),
                highlight_code_with(prefix, Some("rust"), &theme),
                "{prefix:?}"
            );
        }
        // Code that does not continue the old text starts over.
        assert!(!incremental.continues("fn other() {}"));
        assert_eq!(
            incremental.highlight("fn other() {}"),
            highlight_code_with("fn other() {}", Some("rust"), &theme)
        );
        let mut plain = IncrementalHighlighter::new(None, &Theme::plain());
        assert_eq!(plain.highlight("a\nb"), vec!["a", "b"]);
        preload(&["rust", "no-such-language"]);
    }

    #[test]
    fn languages_resolve_from_tags_and_paths() {
        for lang in [
            "rust",
            "ts",
            "typescript",
            "toml",
            "sh",
            "python",
            "json",
            "tsx",
        ] {
            assert!(is_supported_language(lang), "{lang}");
        }
        assert!(!is_supported_language("text"));
        assert!(!is_supported_language("no-such-language"));
        assert_eq!(language_for_path(Path::new("src/a.ts")), Some("typescript"));
        assert_eq!(
            language_for_path(Path::new("Dockerfile")),
            Some("dockerfile")
        );
        assert_eq!(language_for_path(Path::new("README")), None);
        assert!(is_supported_language("rust,ignore"));
    }
}
