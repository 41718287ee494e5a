//! Skills and prompt templates over RPC: `get_commands` in the reference's order and shape,
//! and `prompt` expanding `/skill:name` and `/template` before the model sees the text.

use crate::rpc_common;

use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::read_jsonl;
use rpc_common::user_texts;
use rpc_common::watchdog;

fn write(path: &std::path::Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_commands_lists_templates_then_skills_and_prompts_expand() {
    watchdog(async {
        let cli = tempfile::tempdir().unwrap();
        let cli_skill = cli.path().join("flagged").join("SKILL.md");
        write(&cli_skill, "---\ndescription: From --skill.\n---\nFlagged body.\n");
        let flag = cli.path().to_string_lossy().into_owned();
        let mut rpc = Rpc::start_prepared(
            vec![ScriptedReply::text("ok"), ScriptedReply::text("ok")],
            &["--skill", &flag],
            |sandbox| {
                write(
                    &sandbox.agent.join("skills").join("lint").join("SKILL.md"),
                    "---\nname: lint\ndescription: Lints code.\n---\nRun the linter.\n",
                );
                write(
                    &sandbox.agent.join("prompts").join("pr.md"),
                    "---\ndescription: Open a pull request\nargument-hint: <title>\n---\nOpen a PR titled \"$@\".\n",
                );
            },
        )
        .await;
        let commands = rpc.client.get_commands().await.unwrap();
        let json = serde_json::to_value(&commands).unwrap();
        let agent = rpc.sandbox.agent.to_string_lossy().into_owned();
        let lint = rpc.sandbox.agent.join("skills").join("lint").join("SKILL.md");
        assert_eq!(
            json,
            serde_json::json!([
                {"name": "pr", "description": "Open a pull request", "source": "prompt",
                 "sourceInfo": {"path": rpc.sandbox.agent.join("prompts").join("pr.md"),
                                "source": "auto", "scope": "user", "origin": "top-level",
                                "baseDir": agent}},
                {"name": "skill:lint", "description": "Lints code.", "source": "skill",
                 "sourceInfo": {"path": lint, "source": "auto", "scope": "user",
                                "origin": "top-level", "baseDir": agent}},
                {"name": "skill:flagged", "description": "From --skill.", "source": "skill",
                 "sourceInfo": {"path": cli_skill, "source": "local", "scope": "temporary",
                                "origin": "top-level", "baseDir": cli_skill.parent().unwrap()}},
            ])
        );

        rpc.client.prompt("/skill:flagged go").await.unwrap();
        rpc.settled().await;
        rpc.client.prompt("/pr Fix \"the parser\"").await.unwrap();
        rpc.settled().await;
        let requests = rpc.server.requests();
        let first = user_texts(&requests[0].body);
        assert_eq!(
            first.last().unwrap(),
            &format!(
                "<skill name=\"flagged\" location=\"{}\">\nReferences are relative to {}.\n\nFlagged body.\n</skill>\n\ngo",
                cli_skill.display(),
                cli_skill.parent().unwrap().display()
            )
        );
        let second = user_texts(&requests[1].body);
        assert_eq!(second.last().unwrap(), "Open a PR titled \"Fix the parser\".");
        // The session stores the expanded text, as the model saw it.
        let files = rpc.sandbox.session_files();
        let entries = read_jsonl(&files[0]);
        assert!(
            entries
                .iter()
                .any(|e| e["message"]["content"][0]["text"] == "Open a PR titled \"Fix the parser\"."),
            "{entries:?}"
        );
        rpc.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_commands_come_first_in_get_commands() {
    watchdog(async {
        let source = r#"
export default function (pi) {
  pi.registerCommand("mark", { description: "write a marker", handler: async () => {} });
}
"#;
        let extensions = tempfile::tempdir().unwrap();
        let file = extensions.path().join("cmd.ts");
        write(&file, source);
        let flag = file.to_string_lossy().into_owned();
        let rpc = Rpc::start_prepared(Vec::new(), &["-e", &flag], |sandbox| {
            write(&sandbox.agent.join("prompts").join("pr.md"), "Open a PR.\n");
            write(
                &sandbox.agent.join("extensions").join("found.ts"),
                "export default function (pi) { pi.registerCommand(\"found\", { handler: async () => {} }); }\n",
            );
        })
        .await;
        let commands = rpc.client.get_commands().await.unwrap();
        let json = serde_json::to_value(&commands).unwrap();
        let agent = rpc.sandbox.agent.to_string_lossy().into_owned();
        let found = rpc.sandbox.agent.join("extensions").join("found.ts");
        assert_eq!(
            json,
            serde_json::json!([
                {"name": "mark", "description": "write a marker", "source": "extension",
                 "sourceInfo": {"path": file, "source": "cli", "scope": "temporary",
                                "origin": "top-level"}},
                {"name": "found", "source": "extension",
                 "sourceInfo": {"path": found, "source": "auto", "scope": "user",
                                "origin": "top-level", "baseDir": agent}},
                {"name": "pr", "description": "Open a PR.", "source": "prompt",
                 "sourceInfo": {"path": rpc.sandbox.agent.join("prompts").join("pr.md"),
                                "source": "auto", "scope": "user", "origin": "top-level",
                                "baseDir": agent}},
            ])
        );
        rpc.shutdown().await;
    })
    .await;
}

/// Names a skill folder and a template by the reason it was asked with, relative to the
/// working directory; `/again` reloads.
const DISCOVERING: &str = r#"
export default function (pi) {
  pi.on("resources_discover", (event) => {
    const mark = event.reason === "reload" ? "reloaded" : "started";
    return { promptPaths: [`res/${mark}.md`], skillPaths: ["res/skills"] };
  });
  pi.registerCommand("again", { handler: async (_args, ctx) => { await ctx.reload(); } });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_extensions_discover_load_like_others_and_again_after_reload() {
    watchdog(async {
        let extensions = tempfile::tempdir().unwrap();
        let file = extensions.path().join("found.ts");
        write(&file, DISCOVERING);
        let flag = file.to_string_lossy().into_owned();
        let mut rpc = Rpc::start_prepared(
            vec![ScriptedReply::text("ok"), ScriptedReply::text("ok")],
            &["-e", &flag],
            |sandbox| {
                let res = sandbox.project.join("res");
                write(
                    &res.join("started.md"),
                    "---\ndescription: S\n---\nSTARTED-BODY\n",
                );
                write(&res.join("reloaded.md"), "RELOADED-BODY\n");
                write(
                    &res.join("skills/probe/SKILL.md"),
                    "---\nname: probe\ndescription: Probe skill from an extension.\n---\nBody.\n",
                );
            },
        )
        .await;
        let res = rpc.sandbox.project.join("res");
        let source = |path: std::path::PathBuf| {
            serde_json::json!({"path": path, "source": "extension:found", "scope": "temporary",
                               "origin": "top-level", "baseDir": extensions.path()})
        };
        let commands = serde_json::to_value(rpc.client.get_commands().await.unwrap()).unwrap();
        assert_eq!(
            commands,
            serde_json::json!([
                {"name": "again", "source": "extension",
                 "sourceInfo": {"path": file, "source": "cli", "scope": "temporary",
                                "origin": "top-level"}},
                {"name": "started", "description": "S", "source": "prompt",
                 "sourceInfo": source(res.join("started.md"))},
                {"name": "skill:probe", "description": "Probe skill from an extension.",
                 "source": "skill", "sourceInfo": source(res.join("skills/probe/SKILL.md"))},
            ])
        );
        rpc.client.prompt("/started").await.unwrap();
        rpc.settled().await;
        let request = &rpc.server.requests()[0].body;
        assert_eq!(user_texts(request).last().unwrap(), "STARTED-BODY");
        assert!(
            request
                .to_string()
                .contains("Probe skill from an extension."),
            "the skill is in the system prompt"
        );

        // After a reload the extension names other paths: they replace the first ones.
        rpc.client.prompt("/again").await.unwrap();
        let names: Vec<String> = rpc
            .client
            .get_commands()
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["again", "reloaded", "skill:probe"]);
        rpc.client.prompt("/reloaded").await.unwrap();
        rpc.settled().await;
        let request = &rpc.server.requests()[1].body;
        assert_eq!(user_texts(request).last().unwrap(), "RELOADED-BODY\n");
        rpc.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_folder_with_convention_folders_loads_as_a_package() {
    watchdog(async {
        let root = tempfile::tempdir().unwrap();
        let package = root.path().join("pack");
        // An `index.ts` beside the convention folders is not loaded (as in the reference).
        write(
            &package.join("index.ts"),
            "export default function (pi) { pi.registerCommand(\"not-loaded\", { handler: async () => {} }); }\n",
        );
        write(&package.join("prompts/x.md"), "---\ndescription: X\n---\nX-BODY\n");
        write(
            &package.join("skills/sk/SKILL.md"),
            "---\nname: sk\ndescription: Packaged skill.\n---\nBody.\n",
        );
        write(
            &package.join("extensions/tool.ts"),
            "export default function (pi) { pi.registerCommand(\"packaged\", { handler: async () => {} }); }\n",
        );
        let flag = package.to_string_lossy().into_owned();
        let rpc = Rpc::start_with(Vec::new(), &["-e", &flag]).await;
        let commands = serde_json::to_value(rpc.client.get_commands().await.unwrap()).unwrap();
        let extension = package.join("extensions/tool.ts");
        assert_eq!(
            commands,
            serde_json::json!([
                {"name": "packaged", "source": "extension",
                 "sourceInfo": {"path": extension, "source": "cli", "scope": "temporary",
                                "origin": "top-level"}},
                {"name": "x", "description": "X", "source": "prompt",
                 "sourceInfo": {"path": package.join("prompts/x.md"), "source": package,
                                "scope": "temporary", "origin": "package", "baseDir": package}},
                {"name": "skill:sk", "description": "Packaged skill.", "source": "skill",
                 "sourceInfo": {"path": package.join("skills/sk/SKILL.md"), "source": "cli",
                                "scope": "temporary", "origin": "top-level"}},
            ])
        );
        rpc.shutdown().await;
    })
    .await;
}
