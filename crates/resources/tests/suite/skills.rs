use crate::common;

use common::Dirs;
use common::skill;
use common::write;
use knightcode_resources::DiagnosticKind;
use knightcode_resources::ExtraPath;
use knightcode_resources::Resources;
use knightcode_resources::SkillReadTool;
use knightcode_resources::SourceInfo;
use knightcode_resources::skills;

fn names(resources: &Resources) -> Vec<&str> {
    resources.skills.iter().map(|s| s.name.as_str()).collect()
}

fn messages(resources: &Resources) -> Vec<String> {
    resources
        .skill_diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn a_folder_with_skill_md_is_one_skill_and_nothing_below_it_is_scanned() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    skill(&root, "outer", "description: Outer.");
    skill(&root.join("outer"), "inner", "description: Inner.");
    skill(
        &root.join("group"),
        "nested",
        "description: Nested two deep.",
    );
    let resources = Resources::load(&dirs.config(true));
    assert_eq!(names(&resources), ["nested", "outer"]);
    assert!(resources.skill_diagnostics.is_empty());
    let outer = resources.skill("outer").unwrap();
    assert_eq!(outer.base_dir, root.join("outer"));
    assert_eq!(outer.source.source, "auto");
    assert_eq!(outer.source.scope, "user");
    assert_eq!(outer.source.base_dir.as_deref(), Some(dirs.agent.as_path()));
}

#[test]
fn loose_markdown_counts_only_at_the_top_and_only_with_a_description() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    write(&root.join("loose.md"), "---\ndescription: Loose.\n---\nx");
    write(&root.join("notes.md"), "Just notes, no frontmatter.\n");
    write(&root.join("bad.md"), "---\ndescription: [unclosed\n---\nx");
    write(
        &root.join("group").join("deep.md"),
        "---\ndescription: Deep.\n---\nx",
    );
    let resources = Resources::load(&dirs.config(true));
    // A loose file is named after its folder, like a SKILL.md.
    assert_eq!(names(&resources), ["skills"]);
    assert_eq!(resources.skills[0].file_path, root.join("loose.md"));
    assert!(
        resources.skill_diagnostics.is_empty(),
        "{:?}",
        messages(&resources)
    );
}

#[test]
fn dot_entries_node_modules_and_ignore_files_are_skipped() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    skill(&root, ".hidden", "description: Hidden.");
    skill(&root, "node_modules", "description: Dependency.");
    skill(&root, "kept", "description: Kept.");
    skill(
        &root,
        "ignored",
        "description: Ignored by the root .gitignore.",
    );
    skill(&root, "build-x", "description: Ignored by a glob.");
    skill(&root, "build-keep", "description: Negated back in.");
    write(
        &root.join(".gitignore"),
        "# comment\nignored/\nbuild-*\n!build-keep\n",
    );
    skill(
        &root.join("group"),
        "local",
        "description: Ignored by group/.ignore.",
    );
    skill(&root.join("group"), "other", "description: Kept in group.");
    write(&root.join("group").join(".ignore"), "local\n");
    skill(&root, "fd", "description: Ignored by .fdignore.");
    write(&root.join(".fdignore"), "/fd\n");
    let resources = Resources::load(&dirs.config(true));
    // Sorted by name as scanned: `group/other` comes before `kept`.
    assert_eq!(names(&resources), ["build-keep", "other", "kept"]);
}

#[cfg(unix)]
#[test]
fn symlinks_are_followed_broken_ones_skipped_and_one_file_loads_once() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    let elsewhere = dirs.home.join("shared-skills");
    skill(&elsewhere, "linked", "description: Through a link.");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("linked"), root.join("linked")).unwrap();
    std::os::unix::fs::symlink(dirs.home.join("missing"), root.join("broken")).unwrap();
    // The same file a second time, through the settings list: silently once.
    let mut config = dirs.config(true);
    config.user.skills = vec!["~/shared-skills".to_owned()];
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["linked"]);
    assert!(
        resources.skill_diagnostics.is_empty(),
        "{:?}",
        messages(&resources)
    );
}

#[test]
fn the_first_skill_of_a_name_wins_and_the_other_is_a_collision() {
    let dirs = Dirs::new();
    let project = skill(
        &dirs.project.join(".knightcode").join("skills"),
        "dup",
        "description: Project.",
    );
    let user = skill(&dirs.agent.join("skills"), "dup", "description: User.");
    let resources = Resources::load(&dirs.config(true));
    assert_eq!(names(&resources), ["dup"]);
    assert_eq!(resources.skills[0].description, "Project.");
    assert_eq!(resources.skills[0].source.scope, "project");
    let [diagnostic] = resources.skill_diagnostics.as_slice() else {
        panic!("{:?}", resources.skill_diagnostics);
    };
    assert_eq!(diagnostic.message, "name \"dup\" collision");
    assert_eq!(
        diagnostic.kind,
        DiagnosticKind::Collision {
            resource_type: "skill",
            name: "dup".to_owned(),
            winner_path: project,
            loser_path: user.clone(),
        }
    );
    assert_eq!(diagnostic.path.as_ref(), Some(&user));
}

#[test]
fn project_skills_load_only_in_a_trusted_project() {
    let dirs = Dirs::new();
    skill(
        &dirs.project.join(".knightcode").join("skills"),
        "proj",
        "description: P.",
    );
    skill(
        &dirs.project.join(".agents").join("skills"),
        "agents",
        "description: A.",
    );
    skill(&dirs.agent.join("skills"), "user", "description: U.");
    skill(
        &dirs.home.join(".agents").join("skills"),
        "home-agents",
        "description: H.",
    );
    let mut untrusted = dirs.config(false);
    untrusted.project.skills = vec!["../../elsewhere".to_owned()];
    assert_eq!(names(&Resources::load(&untrusted)), ["user", "home-agents"]);
    assert_eq!(
        names(&Resources::load(&dirs.config(true))),
        ["proj", "agents", "user", "home-agents"]
    );
}

#[test]
fn agents_skills_are_found_in_every_parent_up_to_the_repository_root() {
    let dirs = Dirs::new();
    let repo = dirs.project.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let cwd = dirs.project.join("sub");
    std::fs::create_dir_all(&cwd).unwrap();
    skill(
        &cwd.join(".agents").join("skills"),
        "here",
        "description: cwd.",
    );
    skill(
        &repo.join(".agents").join("skills"),
        "root",
        "description: repo root.",
    );
    skill(
        &repo.parent().unwrap().join(".agents").join("skills"),
        "outside",
        "description: above the repository.",
    );
    // Loose files do not count in .agents/skills.
    write(
        &repo.join(".agents").join("skills").join("loose.md"),
        "---\ndescription: L.\n---\n",
    );
    let mut config = dirs.config(true);
    config.cwd = cwd;
    assert_eq!(names(&Resources::load(&config)), ["here", "root"]);
}

#[test]
fn settings_entries_resolve_against_their_folder_and_take_patterns() {
    let dirs = Dirs::new();
    // Claude Code's folder, named in the user settings.
    let claude = dirs.home.join(".claude").join("skills");
    skill(&claude, "pdf", "description: PDF tools.");
    skill(&claude, "xlsx", "description: Spreadsheets.");
    skill(&claude, "docx", "description: Documents.");
    let extra = dirs.agent.join("extra");
    skill(
        &extra,
        "relative",
        "description: Relative to the agent folder.",
    );
    skill(
        &dirs.agent.join("skills"),
        "auto",
        "description: Discovered.",
    );
    skill(
        &dirs.agent.join("skills"),
        "off",
        "description: Switched off.",
    );
    let mut config = dirs.config(true);
    config.user.skills = vec![
        "~/.claude/skills".to_owned(),
        "extra".to_owned(),
        "!xlsx".to_owned(),
        "-skills/off".to_owned(),
    ];
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["docx", "pdf", "relative", "auto"]);
    let pdf = resources.skill("pdf").unwrap();
    assert_eq!(pdf.source.source, "local");
    assert_eq!(pdf.source.scope, "user");
}

#[test]
fn cli_paths_load_last_and_survive_no_skills() {
    let dirs = Dirs::new();
    skill(
        &dirs.agent.join("skills"),
        "dup",
        "description: Discovered.",
    );
    let cli = dirs.home.join("cli-skills");
    skill(&cli, "dup", "description: From the flag.");
    skill(&cli, "only-cli", "description: From the flag.");
    let file = dirs.home.join("single.md");
    write(&file, "---\nname: single\ndescription: One file.\n---\nx");
    let mut config = dirs.config(true);
    config.cli_skills = vec![
        cli.to_string_lossy().into_owned(),
        "~/single.md".to_owned(),
        "~/missing".to_owned(),
        "~/.knightcode/agent/skills/dup/SKILL.md".to_owned(),
    ];
    write(&dirs.home.join("notes.txt"), "x");
    config.cli_skills.push("~/notes.txt".to_owned());
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["dup", "only-cli", "single"]);
    assert_eq!(resources.skill("dup").unwrap().description, "Discovered.");
    assert_eq!(resources.skill("single").unwrap().source.scope, "temporary");
    assert_eq!(
        messages(&resources),
        [
            "skill path does not exist",
            "skill path is not a markdown file",
            "name \"dup\" collision"
        ]
    );
    config.no_skills = true;
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["dup", "only-cli", "single"]);
    assert_eq!(
        resources.skill("dup").unwrap().description,
        "From the flag."
    );
}

fn extra(path: &std::path::Path, source: &str) -> ExtraPath {
    ExtraPath {
        path: path.to_path_buf(),
        source: SourceInfo {
            path: path.to_path_buf(),
            source: source.to_owned(),
            scope: "temporary".to_owned(),
            origin: "top-level".to_owned(),
            base_dir: None,
        },
    }
}

#[test]
fn package_paths_load_first_and_extension_paths_last_even_with_no_skills() {
    let dirs = Dirs::new();
    skill(
        &dirs.agent.join("skills"),
        "dup",
        "description: Discovered.",
    );
    let package = dirs.home.join("pkg/skills");
    skill(&package, "dup", "description: From the package.");
    let from_ext = dirs.home.join("ext");
    skill(&from_ext, "dup", "description: From the extension.");
    let file = skill(&from_ext, "mine", "description: Mine.");
    let mut config = dirs.config(true);
    config.packages.skills = vec![extra(&package, "/pkg")];
    config.extensions.skills = vec![
        extra(&file, "extension:mine"),
        extra(&from_ext, "extension:mine"),
        extra(&dirs.home.join("gone"), "extension:mine"),
    ];
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["dup", "mine"]);
    assert_eq!(
        resources.skill("dup").unwrap().description,
        "From the package."
    );
    let mine = resources.skill("mine").unwrap();
    assert_eq!(mine.source.source, "extension:mine");
    assert_eq!(mine.source.path, file);
    assert_eq!(
        messages(&resources),
        [
            "skill path does not exist",
            "name \"dup\" collision",
            "name \"dup\" collision"
        ]
    );
    config.no_skills = true;
    assert_eq!(names(&Resources::load(&config)), ["dup", "mine"]);
}

#[test]
fn frontmatter_rules_warn_but_load_and_a_missing_description_does_not_load() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    skill(&root, "Bad_Name", "description: Loads anyway.");
    skill(
        &root,
        "a",
        &format!("name: {}\ndescription: Long name.", "x".repeat(65)),
    );
    skill(&root, "b", "name: -edge-\ndescription: Hyphens.");
    skill(&root, "c", "name: two--hyphens\ndescription: Double.");
    skill(&root, "d", &format!("description: {}", "y".repeat(1025)));
    skill(
        &root,
        "e",
        "name: e\nlicense: MIT\ncompatibility: any\nmetadata:\n  k: v\nallowed-tools: read bash\nunknown: 1",
    );
    skill(&root, "f", "name: f\ndescription: ''");
    write(
        &root.join("g").join("SKILL.md"),
        "---\ndescription: [unclosed\n---\n",
    );
    write(&root.join("h").join("SKILL.md"), "no frontmatter\n");
    skill(
        &root,
        "i",
        "name: i\ndescription: Hidden.\ndisable-model-invocation: true",
    );
    let resources = Resources::load(&dirs.config(true));
    assert_eq!(
        names(&resources),
        [
            "Bad_Name",
            &"x".repeat(65),
            "-edge-",
            "two--hyphens",
            "d",
            "i"
        ]
    );
    assert!(resources.skill("i").unwrap().disable_model_invocation);
    let warnings: Vec<String> = resources
        .skill_diagnostics
        .iter()
        .map(|d| {
            let path = d.path.as_ref().unwrap();
            let folder = path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy();
            format!("{folder}: {}", d.message)
        })
        .collect();
    assert_eq!(
        warnings[..7],
        [
            "Bad_Name: name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
            "a: name exceeds 64 characters (65)",
            "b: name must not start or end with a hyphen",
            "c: name must not contain consecutive hyphens",
            "d: description exceeds 1024 characters (1025)",
            "e: description is required",
            "f: description is required",
        ]
    );
    assert!(
        warnings[7].starts_with("g: invalid frontmatter: while parsing a flow sequence"),
        "{}",
        warnings[7]
    );
    assert_eq!(warnings[8], "h: description is required");
    assert_eq!(warnings.len(), 9);
}

#[test]
fn the_skills_section_names_the_reading_tool_and_hides_what_models_may_not_invoke() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    skill(
        &root,
        "alpha",
        "description: Uses <tags> & \"quotes\" 'too'.",
    );
    skill(
        &root,
        "hidden",
        "description: Hidden.\ndisable-model-invocation: true",
    );
    let resources = Resources::load(&dirs.config(true));
    let text = skills::format_for_prompt(&resources.skills, SkillReadTool::Read).unwrap();
    let location = root.join("alpha").join("SKILL.md");
    assert_eq!(
        text,
        format!(
            "The following skills provide specialized instructions for specific tasks.\n\
             Use the read tool to load a skill's file when the task matches its description.\n\
             When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n\
             \n\
             <available_skills>\n  <skill>\n    <name>alpha</name>\n    \
             <description>Uses &lt;tags&gt; &amp; &quot;quotes&quot; &apos;too&apos;.</description>\n    \
             <location>{}</location>\n  </skill>\n</available_skills>",
            location.display()
        )
    );
    let bash = skills::format_for_prompt(&resources.skills, SkillReadTool::Bash).unwrap();
    assert!(bash.contains("\nUse bash to load a skill's file"));
    let ps = skills::format_for_prompt(&resources.skills, SkillReadTool::PowerShell).unwrap();
    assert!(ps.contains("\nUse PowerShell to load"));
    let indirect = skills::format_for_prompt(&resources.skills, SkillReadTool::Indirect).unwrap();
    assert!(indirect.contains("\nLoad a skill's file when"));
    assert_eq!(
        SkillReadTool::for_tools(&["edit", "bash", "read"]),
        Some(SkillReadTool::Read)
    );
    assert_eq!(
        SkillReadTool::for_tools(&["powershell", "bash"]),
        Some(SkillReadTool::Bash)
    );
    assert_eq!(SkillReadTool::for_tools(&["edit", "write"]), None);
    let only_hidden: Vec<_> = resources
        .skills
        .iter()
        .filter(|s| s.disable_model_invocation)
        .cloned()
        .collect();
    assert_eq!(
        skills::format_for_prompt(&only_hidden, SkillReadTool::Read),
        None
    );
}

#[test]
fn skill_commands_expand_to_the_body_and_unknown_ones_pass_through() {
    let dirs = Dirs::new();
    let root = dirs.agent.join("skills");
    let file = root.join("review").join("SKILL.md");
    write(
        &file,
        "---\r\nname: review\r\ndescription: Reviews.\r\n---\r\n\r\n# Review\r\n\r\nSteps.\r\n\r\n",
    );
    let resources = Resources::load(&dirs.config(true));
    let block = format!(
        "<skill name=\"review\" location=\"{}\">\nReferences are relative to {}.\n\n# Review\n\nSteps.\n</skill>",
        file.display(),
        root.join("review").display()
    );
    assert_eq!(resources.expand("/skill:review").text, block);
    assert_eq!(
        resources.expand("/skill:review   the parser  ").text,
        format!("{block}\n\nthe parser")
    );
    assert_eq!(resources.expand("/skill:nope x").text, "/skill:nope x");
    assert_eq!(
        resources.expand("please /skill:review").text,
        "please /skill:review"
    );
    // The file went away after loading: the text stays, with the reason.
    std::fs::remove_file(&file).unwrap();
    let gone = resources.expand("/skill:review x");
    assert_eq!(gone.text, "/skill:review x");
    assert!(gone.error.unwrap().contains("could not read skill"));
}
