use crate::common;

use common::Dirs;
use common::write;
use knightcode_resources::DiagnosticKind;
use knightcode_resources::ExtraPath;
use knightcode_resources::Resources;
use knightcode_resources::SourceInfo;
use knightcode_resources::templates::expand;
use knightcode_resources::templates::parse_args;
use knightcode_resources::templates::substitute;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn names(resources: &Resources) -> Vec<&str> {
    resources
        .templates
        .iter()
        .map(|t| t.name.as_str())
        .collect()
}

#[test]
fn arguments_split_like_a_shell_with_quotes_and_no_escapes() {
    assert_eq!(
        parse_args("Button \"click handler\"  'it''s'\tlast"),
        ["Button", "click handler", "its", "last"]
    );
    assert_eq!(parse_args("  "), Vec::<String>::new());
    assert_eq!(parse_args("a\"b c\"d"), ["ab cd"]);
    assert_eq!(parse_args("\"unclosed quote"), ["unclosed quote"]);
    assert_eq!(parse_args("\"\""), Vec::<String>::new());
}

#[test]
fn every_substitution_form() {
    let a = args(&["one", "two", "three", "four"]);
    assert_eq!(substitute("$1-$2-$4-[$5]-[$0]", &a), "one-two-four-[]-[]");
    assert_eq!(substitute("$10", &args(&["x"; 10])), "x");
    assert_eq!(
        substitute("all: $@ | $ARGUMENTS", &a),
        "all: one two three four | one two three four"
    );
    assert_eq!(substitute("${@:2}", &a), "two three four");
    assert_eq!(substitute("${@:2:2}", &a), "two three");
    assert_eq!(
        substitute("${@:0}|${@:9}|${@:3:0}", &a),
        "one two three four||"
    );
    assert_eq!(substitute("${1:-none} ${6:-fallback}", &a), "one fallback");
    assert_eq!(
        substitute("${@:-nothing} ${ARGUMENTS:-nothing}", &[]),
        "nothing nothing"
    );
    assert_eq!(substitute("${@:-nothing}", &a), "one two three four");
    assert_eq!(substitute("${2:-x}", &args(&["a", ""])), "x");
    // Not placeholders: they stay as written.
    assert_eq!(
        substitute("$ cost $x ${name} ${@:a} $", &a),
        "$ cost $x ${name} ${@:a} $"
    );
    // Values are not substituted again.
    assert_eq!(substitute("$1 $2", &args(&["$2", "$@"])), "$2 $@");
}

#[test]
fn templates_come_from_their_folders_with_description_and_argument_hint() {
    let dirs = Dirs::new();
    let user = dirs.agent.join("prompts");
    write(
        &user.join("review.md"),
        "---\ndescription: Review staged changes\nargument-hint: <file> [focus]\n---\nReview $1.\n",
    );
    let long = "A first line that is much longer than sixty characters, so it is cut.";
    write(&user.join("plain.md"), &format!("\n\n{long}\nsecond\n"));
    write(
        &user.join("sub").join("nested.md"),
        "not found: discovery is one level\n",
    );
    write(&user.join(".hidden.md"), "skipped\n");
    write(&user.join("notes.txt"), "not markdown\n");
    let project = dirs.project.join(".knightcode").join("prompts");
    write(&project.join("review.md"), "Project review of $@\n");
    write(
        &project.join("fix.md"),
        "---\ndescription: Fix it\n---\nFix $ARGUMENTS\n",
    );
    let resources = Resources::load(&dirs.config(true));
    assert_eq!(names(&resources), ["fix", "review", "plain"]);
    let review = &resources.templates[1];
    assert_eq!(review.description, "Project review of $@");
    assert_eq!(review.source.scope, "project");
    let [collision] = resources.template_diagnostics.as_slice() else {
        panic!("{:?}", resources.template_diagnostics);
    };
    assert_eq!(collision.message, "name \"/review\" collision");
    assert!(matches!(
        &collision.kind,
        DiagnosticKind::Collision { resource_type: "prompt", name, .. } if name == "review"
    ));
    let plain = &resources.templates[2];
    assert_eq!(
        plain.description,
        "A first line that is much longer than sixty characters, so i..."
    );
    // Untrusted: the project's templates are not read.
    let untrusted = Resources::load(&dirs.config(false));
    assert_eq!(names(&untrusted), ["plain", "review"]);
    let review = &untrusted.templates[1];
    assert_eq!(review.description, "Review staged changes");
    assert_eq!(review.argument_hint.as_deref(), Some("<file> [focus]"));
    assert_eq!(review.content, "Review $1.");
}

#[test]
fn cli_templates_load_last_even_with_no_prompt_templates() {
    let dirs = Dirs::new();
    write(&dirs.agent.join("prompts").join("a.md"), "discovered\n");
    let cli = dirs.home.join("cli");
    write(&cli.join("a.md"), "from the flag\n");
    write(&cli.join("b.md"), "from the flag\n");
    write(&cli.join("deep").join("c.md"), "not read\n");
    let mut config = dirs.config(true);
    config.cli_prompts = vec!["~/cli".to_owned(), "~/gone.md".to_owned()];
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["a", "b"]);
    assert_eq!(resources.templates[0].content, "discovered\n");
    let messages: Vec<&str> = resources
        .template_diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "Prompt template path does not exist",
            "name \"/a\" collision"
        ]
    );
    config.no_prompt_templates = true;
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["a", "b"]);
    assert_eq!(resources.templates[0].content, "from the flag\n");
    assert_eq!(resources.templates[0].source.scope, "temporary");
}

fn extra(path: &std::path::Path, source: &str) -> ExtraPath {
    ExtraPath {
        path: path.to_path_buf(),
        source: SourceInfo {
            path: path.to_path_buf(),
            source: source.to_owned(),
            scope: "temporary".to_owned(),
            origin: "package".to_owned(),
            base_dir: None,
        },
    }
}

#[test]
fn package_templates_come_first_and_extension_templates_last() {
    let dirs = Dirs::new();
    write(&dirs.agent.join("prompts").join("a.md"), "discovered\n");
    let package = dirs.home.join("pkg/prompts");
    write(&package.join("a.md"), "from the package\n");
    write(&package.join("deep").join("d.md"), "deep in the package\n");
    let from_ext = dirs.home.join("ext");
    write(&from_ext.join("a.md"), "from the extension\n");
    write(&from_ext.join("e.md"), "from the extension\n");
    write(&from_ext.join("deep").join("f.md"), "not read\n");
    let mut config = dirs.config(true);
    config.packages.prompts = vec![extra(&package, "/pkg")];
    config.extensions.prompts = vec![extra(&from_ext, "extension:x")];
    config.no_prompt_templates = true;
    assert_eq!(names(&Resources::load(&config)), ["a", "d", "e"]);
    config.no_prompt_templates = false;
    let resources = Resources::load(&config);
    assert_eq!(names(&resources), ["a", "d", "e"]);
    assert_eq!(resources.templates[0].content, "from the package\n");
    assert_eq!(resources.templates[2].source.source, "extension:x");
    assert_eq!(resources.templates[2].source.path, from_ext.join("e.md"));
}

#[test]
fn settings_folders_are_read_recursively() {
    let dirs = Dirs::new();
    let shared = dirs.home.join("team-prompts");
    write(&shared.join("top.md"), "top\n");
    write(&shared.join("more").join("deep.md"), "deep\n");
    write(&shared.join("node_modules").join("dep.md"), "skipped\n");
    let mut config = dirs.config(true);
    config.user.prompts = vec!["~/team-prompts".to_owned()];
    assert_eq!(names(&Resources::load(&config)), ["deep", "top"]);
}

#[test]
fn expansion_needs_the_name_then_a_space() {
    let dirs = Dirs::new();
    write(
        &dirs.agent.join("prompts").join("component.md"),
        "Create $1 with ${@:2}.",
    );
    write(
        &dirs.agent.join("skills").join("s").join("SKILL.md"),
        "---\nname: s\ndescription: S.\n---\nUse /component.\n",
    );
    let resources = Resources::load(&dirs.config(true));
    assert_eq!(
        resources
            .expand("/component Button \"click handler\" now")
            .text,
        "Create Button with click handler now."
    );
    assert_eq!(resources.expand("/component").text, "Create  with .");
    assert_eq!(
        resources.expand("/component\nButton").text,
        "/component\nButton"
    );
    assert_eq!(resources.expand("/unknown x").text, "/unknown x");
    assert_eq!(resources.expand(" /component x").text, " /component x");
    assert_eq!(
        expand("/component a", &resources.templates).unwrap(),
        "Create a with ."
    );
    // A skill's block is not a template invocation.
    assert!(
        resources
            .expand("/skill:s")
            .text
            .starts_with("<skill name=\"s\"")
    );
}
