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

/// `code` split into lines (like `split('\n')`, so a trailing newline gives a last empty
/// line) with syntax colours from the default dark theme. An unknown or missing language
/// gives the lines in the theme's plain code colour.
pub fn highlight_code(code: &str, lang: Option<&str>) -> Vec<String> {
    highlight_code_with(code, lang, &Theme::dark())
}

/// [`highlight_code`] with the colours of `theme`.
pub fn highlight_code_with(code: &str, lang: Option<&str>, theme: &Theme) -> Vec<String> {
    let plain = || -> Vec<String> {
        code.split('\n')
            .map(|line| theme.md_code_block.paint(line.trim_end_matches('\r')))
            .collect()
    };
    // No language means no grammar is needed; don't pay for loading them.
    let Some(lang) = lang.filter(|l| !l.trim().is_empty()) else {
        return plain();
    };
    let highlighter = highlighter();
    let Some(syntax) = highlighter.find_syntax(lang) else {
        return plain();
    };
    let palette = &theme.syntax;
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut lines = Vec::new();
    let mut failed = false;
    for line in LinesWithEndings::from(code) {
        if failed {
            lines.push(line.trim_end_matches(['\n', '\r']).to_owned());
            continue;
        }
        let Ok(ops) = state.parse_line(line, &highlighter.syntaxes) else {
            // A grammar that trips over its own regexes leaves the rest uncoloured rather
            // than losing text.
            failed = true;
            lines.push(line.trim_end_matches(['\n', '\r']).to_owned());
            continue;
        };
        let mut builder = LineBuilder::new();
        let mut pos = 0;
        for (at, op) in ops {
            let at = at.min(line.len());
            if at > pos {
                let style = style_for(highlighter.kind_of_stack(&stack), palette);
                builder.push(&line[pos..at], style);
                pos = at;
            }
            if stack.apply(&op).is_err() {
                failed = true;
            }
        }
        if pos < line.len() {
            let style = style_for(highlighter.kind_of_stack(&stack), palette);
            builder.push(&line[pos..], style);
        }
        lines.push(builder.finish());
    }
    if code.is_empty() || code.ends_with('\n') {
        lines.push(String::new());
    }
    lines
}

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
