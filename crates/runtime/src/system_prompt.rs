//! The sectioned system prompt (`spec/messages.md` §3) and the system messages that persist it:
//! a full baseline on a session's first request, then patches when sections or tools change.

use std::path::Path;

use knightcode_protocol::Millis;
use knightcode_protocol::SectionPatch;
use knightcode_protocol::SystemMessage;
use knightcode_protocol::ToolDeclaration;
use knightcode_protocol::ToolReference;
use knightcode_session::SystemState;

use crate::context_files::ContextFile;
use crate::context_files::PromptFiles;

/// Our identity text (the `preamble` section) unless a custom prompt replaces it.
const DEFAULT_PREAMBLE: &str = "You are KnightCode, a coding agent working in the user's terminal. You read and change \
files, run commands and explain what you did. Look before you change anything, keep changes as small as the task \
allows, and check your work when you can.";

/// What a tool contributes to the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPromptInfo {
    pub name: String,
    pub snippet: Option<String>,
    pub guidelines: Vec<String>,
}

/// Inputs of the prompt.
#[derive(Debug, Clone)]
pub struct PromptInputs<'a> {
    pub tools: &'a [ToolPromptInfo],
    pub prompt_files: &'a PromptFiles,
    pub context_files: &'a [ContextFile],
    /// Listed in the `skills` section when a tool that reads files is active.
    pub skills: &'a [knightcode_resources::Skill],
    pub cwd: &'a Path,
    /// Today's date (`YYYY-MM-DD`), so the model knows it.
    pub date: &'a str,
    /// Where the bundled documentation lives, if installed.
    pub docs_dir: Option<&'a Path>,
    /// The MCP servers whose tools the model reaches only through `codemode` or
    /// `tool_search` (`mcp_servers`, after the working directory).
    pub mcp_servers: Option<&'a str>,
}

fn tagged(name: &str, body: &str) -> String {
    format!("<{name}>\n{body}\n</{name}>")
}

/// Builds the sections in prompt order.
pub fn build_sections(inputs: &PromptInputs<'_>) -> Vec<(String, String)> {
    let mut sections: Vec<(String, String)> = Vec::new();
    let custom = inputs.prompt_files.custom_prompt.as_deref();
    sections.push((
        "preamble".to_owned(),
        custom.unwrap_or(DEFAULT_PREAMBLE).to_owned(),
    ));
    if custom.is_none() {
        let mut lines: Vec<String> = inputs
            .tools
            .iter()
            .filter_map(|tool| {
                tool.snippet
                    .as_ref()
                    .map(|snippet| format!("- {}: {snippet}", tool.name))
            })
            .collect();
        if lines.is_empty() {
            lines.push("(none)".to_owned());
        }
        lines.push(
            "Extensions may provide further tools; their descriptions come with them.".to_owned(),
        );
        sections.push((
            "tools".to_owned(),
            tagged("tools", &format!("Available tools:\n{}", lines.join("\n"))),
        ));

        let names: Vec<&str> = inputs.tools.iter().map(|t| t.name.as_str()).collect();
        let mut rules: Vec<String> = Vec::new();
        let has_shell = names.iter().any(|n| *n == "bash" || *n == "powershell");
        let has_file_tools = names.iter().any(|n| matches!(*n, "grep" | "find" | "ls"));
        if has_shell && !has_file_tools {
            rules.push("Use the shell for file operations such as ls, grep and find.".to_owned());
        }
        for tool in inputs.tools {
            rules.extend(tool.guidelines.iter().map(|g| g.trim().to_owned()));
        }
        rules.push("Be concise in your responses.".to_owned());
        rules.push("Show file paths clearly when you work with files.".to_owned());
        let mut unique: Vec<String> = Vec::new();
        for rule in rules.into_iter().filter(|r| !r.is_empty()) {
            if !unique.contains(&rule) {
                unique.push(rule);
            }
        }
        let body: Vec<String> = unique.iter().map(|r| format!("- {r}")).collect();
        sections.push(("rules".to_owned(), tagged("rules", &body.join("\n"))));

        if let Some(docs) = inputs.docs_dir {
            sections.push((
                "docs".to_owned(),
                tagged(
                    "docs",
                    &format!(
                        "KnightCode's own documentation is in {}. Read it only when the user asks about KnightCode itself.",
                        docs.display()
                    ),
                ),
            ));
        }
    }
    if !inputs.prompt_files.append.is_empty() {
        sections.push((
            "addendum".to_owned(),
            tagged("addendum", &inputs.prompt_files.append.join("\n\n")),
        ));
    }
    if !inputs.context_files.is_empty() {
        let blocks: Vec<String> = inputs
            .context_files
            .iter()
            .map(|file| {
                format!(
                    "<project_instructions path=\"{}\">\n{}\n</project_instructions>",
                    file.path.display(),
                    file.content.trim_end()
                )
            })
            .collect();
        sections.push((
            "project_context".to_owned(),
            tagged(
                "project_context",
                &format!("Instructions for this project:\n\n{}", blocks.join("\n\n")),
            ),
        ));
    }
    let names: Vec<&str> = inputs.tools.iter().map(|t| t.name.as_str()).collect();
    if let Some(body) = knightcode_resources::SkillReadTool::for_tools(&names)
        .and_then(|tool| knightcode_resources::skills::format_for_prompt(inputs.skills, tool))
    {
        sections.push(("skills".to_owned(), tagged("skills", &body)));
    }
    let cwd = inputs.cwd.to_string_lossy().replace('\\', "/");
    sections.push((
        "cwd".to_owned(),
        tagged(
            "cwd",
            &format!(
                "Current working directory: {cwd}\nCurrent date: {}",
                inputs.date
            ),
        ),
    ));
    if let Some(body) = inputs.mcp_servers {
        sections.push((
            knightcode_mcp::SECTION_NAME.to_owned(),
            tagged(knightcode_mcp::SECTION_NAME, body),
        ));
    }
    sections
}

/// The system message that brings the persisted prompt state (`previous`, replayed from the
/// session) to `sections` and `tools`: the whole baseline when there is no state yet, a patch
/// when something changed, `None` when nothing did.
pub fn system_message_for(
    previous: &SystemState,
    sections: &[(String, String)],
    tools: &[ToolDeclaration],
    timestamp: Millis,
) -> Option<SystemMessage> {
    let mut patch = SectionPatch::new();
    for (name, text) in sections {
        let unchanged = previous
            .sections
            .iter()
            .any(|(n, t)| n == name && t == text);
        if !unchanged {
            patch.set(name.clone(), text.clone());
        }
    }
    for (name, _) in &previous.sections {
        if !sections.iter().any(|(n, _)| n == name) {
            patch.remove(name.clone());
        }
    }
    let added: Vec<ToolDeclaration> = tools
        .iter()
        .filter(|tool| {
            !previous.tools.iter().any(|p| {
                p.name == tool.name
                    && p.description == tool.description
                    && p.parameters == tool.parameters
            })
        })
        .cloned()
        .collect();
    let removed: Vec<ToolReference> = previous
        .tools
        .iter()
        .filter(|p| !tools.iter().any(|t| t.name == p.name))
        .map(|p| ToolReference {
            name: p.name.clone(),
            extra: Default::default(),
        })
        .collect();
    if patch.is_empty() && added.is_empty() && removed.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: "".into(),
        sections: (!patch.is_empty()).then_some(patch),
        tools_added: (!added.is_empty()).then_some(added),
        tools_removed: (!removed.is_empty()).then_some(removed),
        timestamp,
        ..SystemMessage::default()
    })
}

/// What the prompt is built from, as the reference's `BuildSystemPromptOptions`
/// (`before_agent_start`'s `systemPromptOptions`): the selected tools with their snippets and
/// guidelines, the custom and appended prompt text, the context files and the skills.
pub(crate) fn prompt_options_json(
    tools: &[ToolPromptInfo],
    prompt_files: &crate::context_files::PromptFiles,
    context_files: &[crate::context_files::ContextFile],
    skills: &[knightcode_resources::skills::Skill],
    cwd: &std::path::Path,
) -> serde_json::Value {
    let snippets: serde_json::Map<String, serde_json::Value> = tools
        .iter()
        .filter_map(|t| {
            t.snippet
                .as_ref()
                .map(|s| (t.name.clone(), serde_json::Value::String(s.clone())))
        })
        .collect();
    let guidelines: Vec<&String> = tools.iter().flat_map(|t| &t.guidelines).collect();
    let mut options = serde_json::json!({
        "selectedTools": tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
        "toolSnippets": snippets,
        "promptGuidelines": guidelines,
        "cwd": cwd,
        "contextFiles": context_files
            .iter()
            .map(|f| serde_json::json!({ "path": f.path, "content": f.content }))
            .collect::<Vec<_>>(),
        "skills": skills
            .iter()
            .map(|s| serde_json::json!({
                "name": s.name,
                "description": s.description,
                "filePath": s.file_path,
                "baseDir": s.base_dir,
                "disableModelInvocation": s.disable_model_invocation,
            }))
            .collect::<Vec<_>>(),
    });
    if let Some(object) = options.as_object_mut() {
        if let Some(custom) = &prompt_files.custom_prompt {
            object.insert("customPrompt".to_owned(), serde_json::json!(custom));
        }
        if !prompt_files.append.is_empty() {
            object.insert(
                "appendSystemPrompt".to_owned(),
                serde_json::json!(prompt_files.append.join("\n\n")),
            );
        }
    }
    options
}
