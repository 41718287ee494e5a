//! Skills (the Agent Skills format, read leniently): a `SKILL.md` in a folder, or a loose
//! `.md` file with a `description` at the top of a skills folder.

use std::path::Path;
use std::path::PathBuf;

use crate::ResourceDiagnostic;
use crate::SourceInfo;
use crate::frontmatter;
use crate::ignore_rules::IgnoreRules;
use crate::paths;
use crate::paths::Scanned;

const MAX_NAME_LENGTH: usize = 64;
const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// One loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub file_path: PathBuf,
    /// The folder of the file: relative references in it resolve here.
    pub base_dir: PathBuf,
    pub source: SourceInfo,
    /// `disable-model-invocation: true`: left out of the system prompt, only `/skill:name`
    /// loads it.
    pub disable_model_invocation: bool,
}

/// How the model is told to load a skill file: by the first of `read`, `bash`,
/// `powershell` among the active tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillReadTool {
    Read,
    Bash,
    PowerShell,
    /// A reader reachable only through another tool: the sentence names none.
    Indirect,
}

impl SkillReadTool {
    /// The tool the skills section names for `active` tools; `None` when none can read a
    /// file (then the section is left out).
    pub fn for_tools<S: AsRef<str>>(active: &[S]) -> Option<Self> {
        let has = |name: &str| active.iter().any(|t| t.as_ref() == name);
        if has("read") {
            Some(Self::Read)
        } else if has("bash") {
            Some(Self::Bash)
        } else if has("powershell") {
            Some(Self::PowerShell)
        } else {
            None
        }
    }

    fn instruction(self) -> &'static str {
        match self {
            Self::Read => {
                "Use the read tool to load a skill's file when the task matches its description."
            }
            Self::Bash => "Use bash to load a skill's file when the task matches its description.",
            Self::PowerShell => {
                "Use PowerShell to load a skill's file when the task matches its description."
            }
            Self::Indirect => "Load a skill's file when the task matches its description.",
        }
    }
}

/// The candidate skill files under `dir`: a folder with a `SKILL.md` is one skill (nothing
/// below it is scanned); otherwise subfolders are scanned and, when `root_md`, the `.md`
/// files at the top of `dir` are candidates too. Dot entries and `node_modules` are skipped,
/// ignore files honoured, symlinks followed.
pub fn scan(dir: &Path, root_md: bool) -> Vec<Scanned> {
    let mut rules = IgnoreRules::new(dir);
    let mut out = Vec::new();
    scan_into(
        dir,
        &paths::canonical(dir),
        dir,
        root_md,
        &mut rules,
        &mut out,
    );
    out
}

fn scan_into(
    dir: &Path,
    real_dir: &Path,
    root: &Path,
    root_md: bool,
    rules: &mut IgnoreRules,
    out: &mut Vec<Scanned>,
) {
    let entries = paths::entries(dir);
    rules.add_dir(dir, entries.iter().map(|e| e.name.as_str()));
    if let Some(skill) = entries.iter().find(|e| e.name == "SKILL.md")
        && skill.is_file
        && !rules.ignores(&skill.path, false)
    {
        out.push(Scanned {
            path: skill.path.clone(),
            real: paths::real_of(skill, real_dir),
        });
        return;
    }
    for entry in &entries {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        if rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_dir {
            let real = paths::real_of(entry, real_dir);
            scan_into(&entry.path, &real, root, false, rules, out);
        } else if entry.is_file && root_md && dir == root && entry.name.ends_with(".md") {
            out.push(Scanned {
                path: entry.path.clone(),
                real: paths::real_of(entry, real_dir),
            });
        }
    }
}

/// Reads one skill file. A `SKILL.md` without a usable description is reported; any other
/// `.md` without one is not a skill and is passed over in silence. Name and length problems
/// are warnings: the skill still loads.
pub fn load_file(path: &Path, source: SourceInfo) -> (Option<Skill>, Vec<ResourceDiagnostic>) {
    let mut diagnostics = Vec::new();
    let declared = path.file_name().is_some_and(|n| n == "SKILL.md");
    let content = match paths::read_text(path) {
        Ok(content) => content,
        Err(error) => {
            diagnostics.push(ResourceDiagnostic::warning(
                error.to_string(),
                path.to_path_buf(),
            ));
            return (None, diagnostics);
        }
    };
    let parsed = match frontmatter::parse(&content) {
        Ok(parsed) => parsed,
        Err(error) => {
            if declared {
                diagnostics.push(ResourceDiagnostic::warning(
                    error.to_string(),
                    path.to_path_buf(),
                ));
            }
            return (None, diagnostics);
        }
    };
    let description = parsed
        .string("description")
        .filter(|d| !d.trim().is_empty());
    if !declared && description.is_none() {
        return (None, diagnostics);
    }
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent_name = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match description {
        None => diagnostics.push(ResourceDiagnostic::warning(
            "description is required",
            path.to_path_buf(),
        )),
        Some(d) if d.encode_utf16().count() > MAX_DESCRIPTION_LENGTH => {
            diagnostics.push(ResourceDiagnostic::warning(
                format!(
                    "description exceeds {MAX_DESCRIPTION_LENGTH} characters ({})",
                    d.encode_utf16().count()
                ),
                path.to_path_buf(),
            ))
        }
        Some(_) => {}
    }
    let name = parsed
        .string("name")
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .unwrap_or(parent_name);
    for problem in name_problems(&name) {
        diagnostics.push(ResourceDiagnostic::warning(problem, path.to_path_buf()));
    }
    let Some(description) = description else {
        return (None, diagnostics);
    };
    let skill = Skill {
        name,
        description: description.to_owned(),
        file_path: path.to_path_buf(),
        base_dir,
        source,
        disable_model_invocation: parsed.is_true("disable-model-invocation"),
    };
    (Some(skill), diagnostics)
}

/// The Agent Skills naming rules, as warnings.
fn name_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let length = name.encode_utf16().count();
    if length > MAX_NAME_LENGTH {
        problems.push(format!(
            "name exceeds {MAX_NAME_LENGTH} characters ({length})"
        ));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        problems.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
                .to_owned(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("name must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        problems.push("name must not contain consecutive hyphens".to_owned());
    }
    problems
}

/// The body of the system prompt's `skills` section: the skills the model may load itself,
/// in load order. `None` when every skill is hidden (`disable-model-invocation`).
pub fn format_for_prompt(skills: &[Skill], tool: SkillReadTool) -> Option<String> {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return None;
    }
    let mut lines = vec![
        "The following skills provide specialized instructions for specific tasks.".to_owned(),
        tool.instruction().to_owned(),
        "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.".to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    Some(lines.join("\n"))
}

fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The skill a `/skill:name [args]` prompt names, with its arguments (trimmed).
pub fn parse_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("/skill:")?;
    Some(match rest.split_once(' ') {
        Some((name, args)) => (name, args.trim_matches(frontmatter::is_js_whitespace)),
        None => (rest, ""),
    })
}

/// The prompt a skill invocation becomes: the skill's body (frontmatter removed) in a
/// `<skill>` block that says where relative references resolve, then the arguments.
pub fn invocation_text(skill: &Skill, args: &str) -> std::io::Result<String> {
    let content = std::fs::read_to_string(&skill.file_path)?;
    let body = frontmatter::strip(&content)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let body = body.trim_matches(frontmatter::is_js_whitespace);
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{body}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display()
    );
    Ok(if args.is_empty() {
        block
    } else {
        format!("{block}\n\n{args}")
    })
}
