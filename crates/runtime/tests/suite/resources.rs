//! Skills and prompt templates in a running session: the system prompt's skills section,
//! `/skill:` and template expansion of prompts and of queued messages, `get_commands`, and
//! `/reload` picking up files written after start-up.

use crate::common;

use knightcode_protocol::rpc::CommandSource;
use knightcode_protocol::rpc::PromptDisposition;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::actor::Queueing;
use knightcode_runtime::hooks::InputSource;
use knightcode_testkit::Chunking;
use knightcode_testkit::Fault;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;

use common::Running;
use common::TestSession;
use common::request_texts;

fn write(path: &std::path::Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn prompt(text: &str, queueing: Option<Queueing>) -> Command {
    Command::Prompt {
        text: text.to_owned(),
        images: Vec::new(),
        queueing,
        source: InputSource::Rpc,
    }
}

/// A session with a user skill `review`, a hidden skill and a template `fix`.
async fn with_resources(replies: Vec<ScriptedReply>) -> TestSession {
    let test = TestSession::new(WireFormat::OpenAiCompletions, replies).await;
    let skills = test.agent_dir.join("skills");
    write(
        &skills.join("review").join("SKILL.md"),
        "---\nname: review\ndescription: Reviews code.\n---\nReview carefully.\n",
    );
    write(
        &skills.join("secret").join("SKILL.md"),
        "---\ndescription: Only on request.\ndisable-model-invocation: true\n---\nSecret steps.\n",
    );
    write(
        &test.agent_dir.join("prompts").join("fix.md"),
        "---\ndescription: Fix an issue\nargument-hint: <issue>\n---\nFix issue $1 ($@).\n",
    );
    test
}

fn system_text(body: &serde_json::Value) -> String {
    request_texts(body)[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skills_section_lists_visible_skills_when_a_reading_tool_is_active() {
    let test = with_resources(vec![ScriptedReply::text("ok"); 2]).await;
    let mut run = Running::spawn(test).await;
    run.prompt("hello").await;
    let system = system_text(&run.test.server.requests()[0].body);
    let location = run
        .test
        .agent_dir
        .join("skills")
        .join("review")
        .join("SKILL.md");
    assert!(
        system.contains(
            "<skills>\nThe following skills provide specialized instructions for specific tasks.\n\
             Use the read tool to load a skill's file when the task matches its description.\n"
        ),
        "{system}"
    );
    assert!(
        system.contains(&format!(
            "  <skill>\n    <name>review</name>\n    <description>Reviews code.</description>\n    \
             <location>{}</location>\n  </skill>\n</available_skills>\n</skills>",
            location.display()
        )),
        "{system}"
    );
    assert!(!system.contains("secret"), "{system}");
    // The section comes before the working directory.
    assert!(system.find("<skills>").unwrap() < system.find("<cwd>").unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_skills_section_without_a_tool_that_reads_files() {
    let test = with_resources(vec![ScriptedReply::text("ok")]).await;
    let mut setup = test.setup();
    setup.tools.allow = Some(vec!["edit".to_owned(), "write".to_owned()]);
    let hooks = std::sync::Arc::new(knightcode_runtime::hooks::NoSessionHooks);
    let (mut session, mut events) =
        knightcode_runtime::AgentSession::start_with(setup, test.services(hooks))
            .await
            .unwrap();
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    session.prompt("hello", Vec::new()).await.unwrap();
    let system = system_text(&test.server.requests()[0].body);
    assert!(!system.contains("<skills>"), "{system}");
    // Typed skill commands still expand.
    assert_eq!(session.resources().skills.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skill_commands_and_templates_expand_before_the_user_message() {
    let test = with_resources(vec![ScriptedReply::text("ok"); 3]).await;
    let mut run = Running::spawn(test).await;
    run.prompt("/skill:secret now please").await;
    run.prompt("/fix 42 \"in the parser\"").await;
    run.prompt("/unknown stays").await;
    let requests = run.test.server.requests();
    let skill_file = run
        .test
        .agent_dir
        .join("skills")
        .join("secret")
        .join("SKILL.md");
    let first = request_texts(&requests[0].body);
    assert_eq!(
        first.last().unwrap(),
        &format!(
            "<skill name=\"secret\" location=\"{}\">\nReferences are relative to {}.\n\nSecret steps.\n</skill>\n\nnow please",
            skill_file.display(),
            skill_file.parent().unwrap().display()
        )
    );
    let second = request_texts(&requests[1].body);
    assert_eq!(second.last().unwrap(), "Fix issue 42 (42 in the parser).");
    let third = request_texts(&requests[2].body);
    assert_eq!(third.last().unwrap(), "/unknown stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_steering_and_follow_ups_are_expanded_too() {
    let test = with_resources(vec![
        ScriptedReply::text("first answer, a long one")
            .with_chunking(Chunking::chars(4))
            .with_fault(Fault::StallAfterEvents(2)),
        ScriptedReply::text("after steering"),
        ScriptedReply::text("after the follow-up"),
    ])
    .await;
    let mut run = Running::spawn(test).await;
    let tag = run.send(prompt("start", None));
    assert_eq!(
        run.reply(tag).await,
        Reply::Prompt(PromptDisposition::Started)
    );
    run.test.server.wait_for_stalls(1).await;
    let steer = run.send(prompt("/fix 1", Some(Queueing::Steer)));
    assert_eq!(
        run.reply(steer).await,
        Reply::Prompt(PromptDisposition::Queued)
    );
    let follow = run.send(Command::FollowUp {
        text: "/fix 2".into(),
        images: Vec::new(),
    });
    assert_eq!(
        run.reply(follow).await,
        Reply::Prompt(PromptDisposition::Queued)
    );
    run.test.server.release_stalls();
    run.until_settled().await;
    let requests = run.test.server.requests();
    assert_eq!(requests.len(), 3);
    assert!(request_texts(&requests[1].body).contains(&"Fix issue 1 (1).".to_owned()));
    assert!(request_texts(&requests[2].body).contains(&"Fix issue 2 (2).".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_commands_lists_templates_then_skills() {
    let test = with_resources(Vec::new()).await;
    let mut run = Running::spawn(test).await;
    let tag = run.send(Command::GetCommands);
    let Reply::Commands(commands) = run.reply(tag).await else {
        panic!("not a command list");
    };
    let names: Vec<(&str, CommandSource)> = commands
        .iter()
        .map(|c| (c.name.as_str(), c.source))
        .collect();
    assert_eq!(
        names,
        [
            ("fix", CommandSource::Prompt),
            ("skill:review", CommandSource::Skill),
            ("skill:secret", CommandSource::Skill),
        ]
    );
    assert_eq!(commands[0].description.as_deref(), Some("Fix an issue"));
    let info = &commands[1].source_info;
    assert_eq!(
        (
            info.source.as_str(),
            info.scope.as_str(),
            info.origin.as_str()
        ),
        ("auto", "user", "top-level")
    );
    assert_eq!(
        info.base_dir.as_deref(),
        Some(run.test.agent_dir.to_string_lossy().as_ref())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_picks_up_new_skills_templates_and_context_files() {
    let test = with_resources(vec![ScriptedReply::text("ok"); 2]).await;
    let mut run = Running::spawn(test).await;
    run.prompt("before").await;
    write(
        &run.test
            .agent_dir
            .join("skills")
            .join("late")
            .join("SKILL.md"),
        "---\ndescription: Written after start-up.\n---\nLate.\n",
    );
    write(
        &run.test.agent_dir.join("prompts").join("later.md"),
        "Later $1\n",
    );
    write(&run.test.project.join("AGENTS.md"), "Project rule.\n");
    let tag = run.send(Command::Reload);
    let Reply::Reloaded(resources) = run.reply(tag).await else {
        panic!("not reloaded");
    };
    assert_eq!(resources.skills.len(), 3);
    run.prompt("/later x").await;
    let requests = run.test.server.requests();
    let texts = request_texts(&requests[1].body);
    // Without frontmatter the body is kept as written, newline and all.
    assert_eq!(texts.last().unwrap(), "Later x\n");
    let all = texts.join("\n");
    assert!(all.contains("<name>late</name>"), "{all}");
    assert!(all.contains("Project rule."), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_loads_no_project_skills_or_templates() {
    let test = TestSession::new(WireFormat::OpenAiCompletions, Vec::new()).await;
    let local = test.project.join(".knightcode");
    write(
        &local.join("skills").join("proj").join("SKILL.md"),
        "---\ndescription: Project skill.\n---\nx\n",
    );
    write(&local.join("prompts").join("proj.md"), "Project template\n");
    let hooks = std::sync::Arc::new(knightcode_runtime::hooks::NoSessionHooks);
    for (approve, expected) in [(Some(false), 0), (Some(true), 1)] {
        let mut setup = test.setup();
        setup.approve = approve;
        let (session, _events) =
            knightcode_runtime::AgentSession::start_with(setup, test.services(hooks.clone()))
                .await
                .unwrap();
        assert_eq!(session.resources().skills.len(), expected, "{approve:?}");
        assert_eq!(session.resources().templates.len(), expected, "{approve:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_lists_templates_then_skills_unless_skill_commands_are_off() {
    use knightcode_runtime::resources::completion_commands;
    let test = with_resources(Vec::new()).await;
    write(
        &test.agent_dir.join("skills").join("again").join("SKILL.md"),
        "---\nname: review\ndescription: A second review.\n---\nx\n",
    );
    let hooks = std::sync::Arc::new(knightcode_runtime::hooks::NoSessionHooks);
    let (session, _events) =
        knightcode_runtime::AgentSession::start_with(test.setup(), test.services(hooks))
            .await
            .unwrap();
    let on: Vec<(String, Option<String>, String)> = completion_commands(session.resources(), true)
        .into_iter()
        .map(|c| (c.name, c.hint, c.description))
        .collect();
    assert_eq!(
        on,
        [
            (
                "fix".to_owned(),
                Some("<issue>".to_owned()),
                "[u] Fix an issue".to_owned()
            ),
            (
                "skill:review".to_owned(),
                None,
                "[u] A second review.".to_owned()
            ),
            (
                "skill:secret".to_owned(),
                None,
                "[u] Only on request.".to_owned()
            ),
        ]
    );
    let off = completion_commands(session.resources(), false);
    assert_eq!(off.len(), 1);
    // The collision is reported, grouped by name, winner first.
    let report = knightcode_runtime::resources::report(session.resources());
    let skills = test.agent_dir.join("skills");
    assert_eq!(
        report,
        [
            "[Skill conflicts]".to_owned(),
            "  \"review\" collision:".to_owned(),
            format!("    ✓ {}", skills.join("again").join("SKILL.md").display()),
            format!(
                "    ✗ {} (skipped)",
                skills.join("review").join("SKILL.md").display()
            ),
        ]
    );
    assert!(
        session
            .notices()
            .iter()
            .any(|n| n.starts_with("name \"review\" collision")),
        "{:?}",
        session.notices()
    );
}
