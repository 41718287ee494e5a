//! Markdown rendering: layout snapshots in the plain theme (readable), escapes in the dark
//! theme where colours are the point (highlighted code), and the width contract at every
//! width from very narrow up.

use knightcode_tui::style::{Color, Style};
use knightcode_tui::width::visible_width;
use knightcode_tui::{Component, Markdown, Theme};

/// Renders and checks every line fits.
fn render(md: &mut Markdown, width: u16) -> Vec<String> {
    let lines = md.render(width);
    for line in &lines {
        assert!(
            visible_width(line) <= usize::from(width),
            "line wider than {width}: {line:?}"
        );
        assert!(!line.contains('\n'), "line with a newline: {line:?}");
    }
    lines
}

fn plain(text: &str, width: u16) -> String {
    render(&mut Markdown::new(text, Theme::plain()), width).join("\n")
}

/// Escapes made visible for snapshots.
fn visible_escapes(lines: &[String]) -> String {
    lines.join("\n").replace('\x1b', "␛")
}

const SAMPLE: &str = "# Title here

Some **bold** and *italic* and ~~struck~~ text with `code`, a [link](https://example.com) and <https://auto.link>. From ~5 min to ~10 min.
A soft break keeps its line.

## Section two

Intro:
- one
- two with a rather long line that needs wrapping at narrow widths
  - nested a
  - nested b
- [ ] task open
- [x] task done

3. third
4. fourth

> quoted **text** that is long enough to wrap around
> - list in quote

---

### Code

```rust
fn main() {}
```
";

#[test]
fn document_at_sixty_columns() {
    insta::assert_snapshot!(plain(SAMPLE, 60));
}

#[test]
fn document_at_twenty_columns() {
    insta::assert_snapshot!(plain(SAMPLE, 20));
}

#[test]
fn every_width_keeps_the_contract() {
    let text = format!(
        "{SAMPLE}\n| a | b |\n|---|---|\n| 日本語のテキスト | 👍 emoji 👨‍👩‍👧 |\n\n中文段落，很长很长很长很长的句子。 And `very_long_identifier_without_spaces_anywhere`."
    );
    for theme in [Theme::plain(), Theme::dark()] {
        let mut md = Markdown::new(text.clone(), theme).with_padding(1, 0);
        for width in (1..=24).chain([30, 40, 60, 80]) {
            render(&mut md, width);
        }
    }
}

#[test]
fn headings_by_level() {
    insta::assert_snapshot!(plain("# One\n## Two\n### Three\n#### Four\ntext", 40));
}

#[test]
fn tables_fit_wrap_or_fall_back() {
    let table = "| Name | Description | N |\n|------|-------------|---|\n| alpha | the first letter of the Greek alphabet | 1 |\n| beta | second | 22 |";
    insta::assert_snapshot!("table_wide", plain(table, 60));
    insta::assert_snapshot!("table_narrow", plain(table, 30));
    // Too narrow for three columns: the source is shown instead.
    insta::assert_snapshot!("table_fallback", plain(table, 11));
}

#[test]
fn cjk_and_emoji_wrap_by_columns() {
    let text = "日本語のテキストはとても長いです。👍👍👍 emoji 👨‍👩‍👧 family";
    insta::assert_snapshot!(plain(text, 10));
}

#[test]
fn long_code_lines_wrap_inside_the_block() {
    let text = "```\nlet value = some_function(argument_one, argument_two, argument_three);\n```";
    insta::assert_snapshot!(plain(text, 30));
}

#[test]
fn links_show_differing_urls() {
    insta::assert_snapshot!(plain(
        "[same](same) [docs](https://docs.rs) <mail@example.com> [x](mailto:x)",
        80
    ));
}

#[test]
fn padding_and_background_fill_the_width() {
    let bg = Style::new().bg(Color::Rgb(52, 53, 65));
    let mut md = Markdown::new("hello **world**", Theme::plain())
        .with_padding(2, 1)
        .with_background(bg);
    let lines = render(&mut md, 20);
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert_eq!(visible_width(line), 20);
    }
    insta::assert_snapshot!(visible_escapes(&lines));
    let mut md = Markdown::new("text", Theme::plain()).with_horizontal_padding(3, 1);
    assert_eq!(render(&mut md, 10), vec!["   text"]);
}

#[test]
fn empty_text_has_no_lines() {
    assert!(render(&mut Markdown::new("", Theme::dark()), 40).is_empty());
    assert!(render(&mut Markdown::new(" \n\t\n", Theme::dark()), 40).is_empty());
}

#[test]
fn streaming_partial_markdown() {
    let full =
        "Here is **bold** text.\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nDone.";
    let mut md = Markdown::new("", Theme::plain());
    let mut frames = Vec::new();
    // Feed in uneven chunks, as a provider stream would, and keep the interesting frames.
    let mut fed = 0;
    for chunk in [3, 8, 9, 8, 15, 10, 7, 4, 3, 5] {
        let end = (fed + chunk).min(full.len());
        md.append_text(&full[fed..end]);
        fed = end;
        let lines = render(&mut md, 40).join("\n");
        frames.push(format!("--- {:?}\n{lines}", md.text()));
    }
    md.append_text(&full[fed..]);
    frames.push(format!("--- final\n{}", render(&mut md, 40).join("\n")));
    insta::assert_snapshot!(frames.join("\n"));
    // Streaming ends where rendering the whole text at once would.
    assert_eq!(
        render(&mut md, 40),
        render(&mut Markdown::new(full, Theme::plain()), 40)
    );
}

#[test]
fn unclosed_fence_is_code_so_far() {
    insta::assert_snapshot!(plain("Look:\n\n```python\ndef f():\n    return 1", 40));
}

#[test]
fn cache_follows_width_and_text() {
    let mut md = Markdown::new("alpha beta gamma", Theme::plain());
    assert_eq!(render(&mut md, 40), vec!["alpha beta gamma"]);
    assert_eq!(render(&mut md, 40), vec!["alpha beta gamma"]);
    assert_eq!(render(&mut md, 10), vec!["alpha beta", "gamma"]);
    md.append_text(" delta");
    assert_eq!(render(&mut md, 10), vec!["alpha beta", "gamma", "delta"]);
    md.set_text("new");
    assert_eq!(render(&mut md, 10), vec!["new"]);
    md.set_theme(Theme::dark());
    md.set_text("**b**");
    assert_eq!(render(&mut md, 10), vec!["\x1b[1mb\x1b[0m"]);
}

#[test]
fn highlighted_rust_in_the_dark_theme() {
    let text = "```rust\n/// Docs.\nfn main() -> Result<(), String> {\n    let n: u32 = 42;\n    println!(\"{n} items\");\n    Ok(())\n}\n```";
    let lines = render(&mut Markdown::new(text, Theme::dark()), 60);
    insta::assert_snapshot!(visible_escapes(&lines));
}

#[test]
fn highlighted_typescript_in_the_dark_theme() {
    let text = "```ts\ninterface User { name: string; age?: number }\nexport const greet = (u: User): string => `hi ${u.name}`; // note\n```";
    let lines = render(&mut Markdown::new(text, Theme::dark()), 100);
    insta::assert_snapshot!(visible_escapes(&lines));
}

#[test]
fn inline_styles_in_the_dark_theme() {
    let text = "A **bold `code`** and [link](https://x.dev).\n\n> *quoted*";
    let lines = render(&mut Markdown::new(text, Theme::dark()), 60);
    insta::assert_snapshot!(visible_escapes(&lines));
}

#[test]
fn thinking_style_colours_body_text() {
    let style = Style::new().fg(Color::Indexed(244)).italic();
    let lines = render(
        &mut Markdown::new("thinking **hard**", Theme::dark()).with_text_style(style),
        40,
    );
    assert_eq!(
        lines,
        vec!["\x1b[3;38;5;244mthinking \x1b[0m\x1b[1;3;38;5;244mhard\x1b[0m"]
    );
}

#[test]
fn plain_code_has_the_code_colour_and_no_grammar_colours() {
    let text = "```rust\nfn main() {}\n```";
    let theme = Theme::dark();
    let plain = render(
        &mut Markdown::new(text, theme.clone()).with_plain_code(true),
        40,
    );
    assert_eq!(
        plain[1],
        format!("  {}", theme.md_code_block.paint("fn main() {}"))
    );
    let coloured = render(&mut Markdown::new(text, theme), 40);
    assert_ne!(plain[1], coloured[1], "the grammar colours keywords");
    assert_eq!(plain.len(), coloured.len());
}

#[test]
fn a_remembering_renderer_gives_the_same_lines_for_texts_in_turn() {
    // One renderer given several texts in turn (the parts of a long reply) and then the
    // first again at another width renders each like a renderer of its own.
    let parts = [
        "```rust\nfn a() {}\n```",
        "```python\ndef b():\n    pass\n```",
        "Text with `code`.",
    ];
    let theme = Theme::dark();
    let mut shared = Markdown::new("", theme.clone()).remembering_code();
    for width in [40u16, 12, 40] {
        for part in parts {
            shared.set_text(part);
            assert_eq!(
                render(&mut shared, width),
                render(&mut Markdown::new(part, theme.clone()), width),
                "{part:?} at {width}"
            );
        }
    }
}
