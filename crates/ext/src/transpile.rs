//! TypeScript stripped at load time: oxc `Parser` → `SemanticBuilder` (enum evaluation on:
//! without it oxc panics on any `enum`) → `Transformer` → `ModuleRunnerTransform` (ES
//! modules only) → `Codegen`. Everything runs under `catch_unwind`: a panic here would
//! otherwise cross the JS engine's C frames and abort the process.
//!
//! ES modules come out in the module-runner form (`__vite_ssr_import__` and friends, see
//! `js/runner.js`), so imports of names a module does not export read `undefined` instead
//! of failing to link, as under jiti; CommonJS files come out as plain scripts.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::Codegen;
use oxc::codegen::CodegenOptions;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::TransformOptions;
use oxc::transformer::Transformer;
use oxc::transformer_plugins::ModuleRunnerTransform;

use crate::error::ExtError;

/// A stripped file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// JavaScript for the runner's wrapper.
    pub code: String,
    /// The file has module syntax (it is an ES module whatever its extension).
    pub module: bool,
    /// The module awaits at top level (its imports are awaited; otherwise the runner
    /// evaluates it synchronously, so `require()` of it works).
    pub top_level_await: bool,
    /// Where each piece of `code` came from in the source, for stacks and messages.
    pub positions: PositionMap,
}

/// Generated positions back to source positions, from the code generator's source map:
/// `(generated line, generated column, source line, source column)`, 0-based, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PositionMap {
    tokens: Vec<(u32, u32, u32, u32)>,
}

impl PositionMap {
    /// The map as bytes, for the load cache (four little-endian `u32`s per token).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.tokens.len() * 16);
        for (a, b, c, d) in &self.tokens {
            for n in [a, b, c, d] {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        out
    }

    /// [`PositionMap::to_bytes`] read back; `None` for bytes it never wrote.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if !bytes.len().is_multiple_of(16) {
            return None;
        }
        let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let tokens: Vec<(u32, u32, u32, u32)> = bytes
            .chunks_exact(16)
            .map(|t| (word(&t[0..]), word(&t[4..]), word(&t[8..]), word(&t[12..])))
            .collect();
        tokens.is_sorted().then_some(Self { tokens })
    }

    /// The source `line:column` (1-based, as in stacks) of a generated one: the nearest
    /// mapped position at or before it on the same line, else the line's first one.
    pub fn source_of(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let (line, column) = (line.checked_sub(1)?, column.saturating_sub(1));
        let start = self.tokens.partition_point(|t| t.0 < line);
        let end = self.tokens.partition_point(|t| t.0 <= line);
        let on_line = &self.tokens[start..end];
        let before = on_line.partition_point(|t| t.1 <= column);
        let token = if before > 0 {
            on_line[before - 1]
        } else {
            *on_line.first()?
        };
        Some((token.2 + 1, token.3 + 1))
    }
}

/// `line:column` (1-based) of a byte offset.
fn position(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// Strips `source` (the text of `path`).
pub fn strip(path: &Path, source: &str) -> Result<Stripped, ExtError> {
    let shown = path.display().to_string();
    std::panic::catch_unwind(|| strip_inner(path, source)).unwrap_or_else(|_| {
        Err(ExtError::Syntax {
            path: shown,
            line: 0,
            column: 0,
            message: "the TypeScript transform failed unexpectedly (a bug in KnightCode: please report it with this file)".to_owned(),
        })
    })
}

fn strip_inner(path: &Path, source: &str) -> Result<Stripped, ExtError> {
    let allocator = Allocator::default();
    let explicit_module = path.extension().is_some_and(|e| e == "mjs" || e == "mts");
    let source_type = SourceType::from_path(path)
        .unwrap_or_else(|_| SourceType::ts())
        .with_unambiguous(!explicit_module)
        .with_module(explicit_module);
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(error) = parsed.diagnostics.errors().next() {
        let offset = error.labels.first().map_or(0, |l| l.offset() as usize);
        let (line, column) = position(source, offset);
        return Err(ExtError::Syntax {
            path: path.display().to_string(),
            line,
            column,
            message: error.message.to_string(),
        });
    }
    let module = parsed.module_record.has_module_syntax || explicit_module;
    let mut program = parsed.program;
    let top_level_await = module && has_top_level_await(&program);
    let semantic = SemanticBuilder::new().with_enum_eval(true).build(&program);
    let scoping = semantic.semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed =
        Transformer::new(&allocator, path, &options).build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.diagnostics.errors().next() {
        let offset = error.labels.first().map_or(0, |l| l.offset() as usize);
        let (line, column) = position(source, offset);
        return Err(ExtError::Syntax {
            path: path.display().to_string(),
            line,
            column,
            message: error.message.to_string(),
        });
    }
    if module {
        let scoping = SemanticBuilder::new()
            .with_enum_eval(true)
            .build(&program)
            .semantic
            .into_scoping();
        ModuleRunnerTransform::new().transform(&allocator, &mut program, scoping);
    }
    let generated = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(path.to_path_buf()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let mut tokens: Vec<(u32, u32, u32, u32)> = generated
        .map
        .as_ref()
        .map(|map| {
            map.get_tokens()
                .map(|t| {
                    (
                        t.get_dst_line(),
                        t.get_dst_col(),
                        t.get_src_line(),
                        t.get_src_col(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    tokens.sort_unstable();
    let mut code = generated.code;
    if module && !top_level_await {
        // The runner serves imports synchronously; only a module that awaits at top level
        // keeps its awaits (the identifier is the transform's own, never user code's).
        code = code.replace("await __vite_ssr_import__(", "__vite_ssr_import__(");
    }
    Ok(Stripped {
        code,
        module,
        top_level_await,
        positions: PositionMap { tokens },
    })
}

/// Whether a statement at the top level (outside any function) awaits.
fn has_top_level_await(program: &oxc::ast::ast::Program<'_>) -> bool {
    use oxc::ast::ast;
    use oxc::ast_visit::Visit;
    use oxc::ast_visit::walk;
    use oxc::semantic::ScopeFlags;

    #[derive(Default)]
    struct Finder {
        found: bool,
    }
    impl<'a> Visit<'a> for Finder {
        fn visit_await_expression(&mut self, _: &ast::AwaitExpression<'a>) {
            self.found = true;
        }
        fn visit_for_of_statement(&mut self, stmt: &ast::ForOfStatement<'a>) {
            if stmt.r#await {
                self.found = true;
            }
            walk::walk_for_of_statement(self, stmt);
        }
        fn visit_function(&mut self, _: &ast::Function<'a>, _: ScopeFlags) {}
        fn visit_arrow_function_expression(&mut self, _: &ast::ArrowFunctionExpression<'a>) {}
        fn visit_class(&mut self, _: &ast::Class<'a>) {}
    }
    let mut finder = Finder::default();
    finder.visit_program(program);
    finder.found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn strips_types_and_enums_and_rewrites_imports() {
        let src = "import { Type } from \"typebox\";\nenum E { A = 1 }\nconst x: number = E.A;\nexport default function f(a: string): void { Type; }\n";
        let out = strip(Path::new("/x/a.ts"), src).unwrap();
        assert!(out.module);
        assert!(!out.top_level_await);
        assert!(
            out.code.contains("__vite_ssr_import__(\"typebox\""),
            "{}",
            out.code
        );
        assert!(!out.code.contains(": number"));
    }

    #[test]
    fn commonjs_stays_a_script_and_top_level_await_is_seen() {
        let cjs = strip(Path::new("/x/a.js"), "module.exports = { a: 1 };").unwrap();
        assert!(!cjs.module);
        let tla = strip(
            Path::new("/x/b.ts"),
            "import x from \"y\";\nawait Promise.resolve(x);\nexport {};",
        )
        .unwrap();
        assert!(tla.top_level_await);
        assert!(tla.code.contains("await __vite_ssr_import__"));
    }

    #[test]
    fn generated_positions_map_back_to_the_typescript_lines() {
        let src = "interface A {\n  a: number;\n}\n\ntype B = string;\n\nexport function f(x: A): B {\n  return String(x.a);\n}\n";
        let out = strip(Path::new("/x/a.ts"), src).unwrap();
        let (line, _) = out
            .code
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains("return String"))
            .unwrap();
        let column = out.code.lines().nth(line).unwrap().find("return").unwrap();
        let mapped = out
            .positions
            .source_of(line as u32 + 1, column as u32 + 1)
            .unwrap();
        assert_eq!(mapped, (8, 3), "{}", out.code);
    }

    #[test]
    fn syntax_errors_name_file_line_and_column() {
        let err = strip(Path::new("/x/bad.ts"), "const a = 1;\nconst = ;\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/x/bad.ts:2:"), "{text}");
    }
}
