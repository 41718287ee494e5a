//! Context files, prompt files and the persisted system prompt.

use std::path::Path;

use knightcode_protocol::Millis;
use knightcode_protocol::ToolDeclaration;
use knightcode_runtime::context_files::PromptFiles;
use knightcode_runtime::context_files::discover_context_files;
use knightcode_runtime::context_files::resolve_prompt_files;
use knightcode_runtime::system_prompt::PromptInputs;
use knightcode_runtime::system_prompt::ToolPromptInfo;
use knightcode_runtime::system_prompt::build_sections;
use knightcode_runtime::system_prompt::system_message_for;
use knightcode_session::SystemState;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn context_files_global_first_then_root_to_cwd_with_overrides() {
    let agent = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("repo/app");
    write(&agent.path().join("AGENTS.md"), "global rules");
    write(&root.path().join("repo/AGENTS.md"), "\u{feff}repo rules");
    write(
        &root.path().join("repo/CLAUDE.md"),
        "ignored: AGENTS.md wins in this dir",
    );
    write(&project.join("CLAUDE.md"), "app claude");
    write(&project.join("AGENTS.override.md"), "app override");
    let files = discover_context_files(agent.path(), &project);
    let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(contents, ["global rules", "repo rules", "app override"]);
}

#[test]
fn prompt_files_respect_trust_and_cli() {
    let agent = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(&agent.path().join("SYSTEM.md"), "global system");
    write(
        &project.path().join(".knightcode/SYSTEM.md"),
        "project system",
    );
    write(
        &project.path().join(".knightcode/APPEND_SYSTEM.md"),
        "project append",
    );
    let untrusted = resolve_prompt_files(agent.path(), project.path(), false, None, &[]);
    assert_eq!(untrusted.custom_prompt.as_deref(), Some("global system"));
    assert!(untrusted.append.is_empty());
    let trusted = resolve_prompt_files(agent.path(), project.path(), true, None, &[]);
    assert_eq!(trusted.custom_prompt.as_deref(), Some("project system"));
    assert_eq!(trusted.append, ["project append"]);
    write(&project.path().join("extra.md"), "from a file");
    let cli = resolve_prompt_files(
        agent.path(),
        project.path(),
        true,
        Some("inline prompt"),
        &["extra.md".to_owned(), "more".to_owned()],
    );
    assert_eq!(cli.custom_prompt.as_deref(), Some("inline prompt"));
    assert_eq!(cli.append, ["from a file", "more"]);
}

fn tools() -> Vec<ToolPromptInfo> {
    vec![
        ToolPromptInfo {
            name: "read".into(),
            snippet: Some("Read file contents".into()),
            guidelines: vec!["Use read instead of cat.".into()],
        },
        ToolPromptInfo {
            name: "bash".into(),
            snippet: Some("Run shell commands".into()),
            guidelines: vec![],
        },
    ]
}

#[test]
fn sections_in_order_and_tagged() {
    let files = PromptFiles {
        custom_prompt: None,
        append: vec!["Extra.".into()],
    };
    let context = vec![knightcode_runtime::context_files::ContextFile {
        path: "/p/AGENTS.md".into(),
        content: "Use tabs.\n".into(),
    }];
    let tools = tools();
    let sections = build_sections(&PromptInputs {
        tools: &tools,
        prompt_files: &files,
        context_files: &context,
        skills: &[],
        cwd: Path::new("/p"),
        date: "2026-11-30",
        docs_dir: None,
        mcp_servers: None,
    });
    let names: Vec<&str> = sections.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "preamble",
            "tools",
            "rules",
            "addendum",
            "project_context",
            "cwd"
        ]
    );
    let text = |name: &str| sections.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert!(text("tools").starts_with("<tools>\n") && text("tools").ends_with("\n</tools>"));
    assert!(text("tools").contains("- read: Read file contents"));
    assert!(text("rules").contains("- Use the shell for file operations"));
    assert!(text("rules").contains("- Use read instead of cat."));
    assert!(text("project_context").contains(
        "<project_instructions path=\"/p/AGENTS.md\">\nUse tabs.\n</project_instructions>"
    ));
    assert!(text("cwd").contains("/p") && text("cwd").contains("2026-11-30"));

    let custom = PromptFiles {
        custom_prompt: Some("Be a pirate.".into()),
        append: vec![],
    };
    let sections = build_sections(&PromptInputs {
        tools: &tools,
        prompt_files: &custom,
        context_files: &[],
        skills: &[],
        cwd: Path::new("/p"),
        date: "2026-11-30",
        docs_dir: None,
        mcp_servers: None,
    });
    let names: Vec<&str> = sections.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["preamble", "cwd"],
        "a custom prompt drops tools/rules/docs"
    );
    assert_eq!(sections[0].1, "Be a pirate.");
}

fn declaration(name: &str) -> ToolDeclaration {
    ToolDeclaration {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: serde_json::json!({"type": "object"}),
        constrained_sampling: None,
        extra: Default::default(),
    }
}

#[test]
fn baseline_then_patches_then_nothing() {
    let sections = vec![
        ("preamble".to_owned(), "P".to_owned()),
        ("cwd".to_owned(), "<cwd>\n/a\n</cwd>".to_owned()),
    ];
    let tools = vec![declaration("read"), declaration("bash")];
    let mut state = SystemState::default();
    let baseline = system_message_for(&state, &sections, &tools, Millis(1)).unwrap();
    assert_eq!(baseline.sections.as_ref().unwrap().iter().count(), 2);
    assert_eq!(baseline.tools_added.as_ref().unwrap().len(), 2);
    state.apply(&baseline);
    assert_eq!(
        system_message_for(&state, &sections, &tools, Millis(2)),
        None,
        "no change, no message"
    );

    let moved = vec![
        ("preamble".to_owned(), "P".to_owned()),
        ("skills".to_owned(), "S".to_owned()),
    ];
    let patch = system_message_for(&state, &moved, &[declaration("read")], Millis(3)).unwrap();
    let entries: Vec<(String, Option<String>)> = patch
        .sections
        .as_ref()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.to_owned(), v.map(str::to_owned)))
        .collect();
    assert_eq!(
        entries,
        [
            ("skills".to_owned(), Some("S".to_owned())),
            ("cwd".to_owned(), None)
        ]
    );
    assert_eq!(patch.tools_removed.as_ref().unwrap()[0].name, "bash");
    assert!(patch.tools_added.is_none());
    state.apply(&patch);
    assert_eq!(state.prompt_text(), "P\n\nS");
}
