//! Skill and prompt-template files: frontmatter, then the loaders that read them from disk
//! (names, descriptions, limits), then argument splitting and substitution on the body.

use std::path::Path;
use std::path::PathBuf;

use knightcode_resources::SourceInfo;
use knightcode_resources::frontmatter;
use knightcode_resources::skills;
use knightcode_resources::templates;

pub(crate) fn frontmatter(scratch: &Path, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = frontmatter::parse(&text);
    let _ = frontmatter::strip(&text);
    if let Ok(parsed) = &parsed {
        let _ = parsed.string("description");
        let _ = parsed.is_true("disable-model-invocation");
    }

    let skill = scratch.join("skills").join("fuzz-skill").join("SKILL.md");
    if write(&skill, data) {
        let _ = skills::load_file(&skill, source(&skill));
    }
    let template = scratch.join("prompts").join("fuzz.md");
    if write(&template, data)
        && let Some(template) = templates::load_file(&template, source(&template))
    {
        let first_line = template.content.lines().next().unwrap_or_default();
        let args = templates::parse_args(first_line);
        let _ = templates::substitute(&template.content, &args);
    }
    let _ = skills::parse_command(&text);
}

fn write(path: &Path, data: &[u8]) -> bool {
    path.parent()
        .is_some_and(|dir| std::fs::create_dir_all(dir).is_ok())
        && std::fs::write(path, data).is_ok()
}

fn source(path: &Path) -> SourceInfo {
    SourceInfo {
        path: path.to_path_buf(),
        source: "local".to_owned(),
        scope: "user".to_owned(),
        origin: "top-level".to_owned(),
        base_dir: path.parent().map(PathBuf::from),
    }
}
