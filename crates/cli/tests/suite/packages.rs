//! `knightcode install|remove|list|update` with the real binary and local stand-ins only: a
//! package folder, a stand-in `npm` on PATH that records its arguments, and a bare git
//! repository that `https://example.com/` is redirected to.

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use std::path::Path;
use std::process::Command;

use crate::oneshot_common;
use crate::package_fixtures;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use oneshot_common::Sandbox;
use oneshot_common::command;
use oneshot_common::knightcode;
use oneshot_common::offered_tools;
use oneshot_common::sandbox;
use package_fixtures::bare_repo;
use package_fixtures::tool_extension;
use package_fixtures::write_skill_package;

fn server() -> MockServer {
    MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap()
}

fn settings(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn local_folder_install_list_remove_in_user_and_project_settings() {
    let server = server();
    let sb = sandbox(&server);
    write_skill_package(&sb.project.join("pkg"), "hello");

    let run = knightcode(&sb, &["list"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "No packages installed.\n")
    );

    let run = knightcode(&sb, &["install", "./pkg"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Installing ./pkg...\nInstalled ./pkg\n");
    // Stored relative to the settings file's folder, as the reference does.
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!(["../project/pkg"])
    );
    let run = knightcode(&sb, &["install", "./pkg", "-l"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        settings(&sb.project.join(".knightcode/settings.json"))["packages"],
        serde_json::json!(["../pkg"])
    );

    let pkg = sb.project.join("pkg");
    let run = knightcode(&sb, &["list"]);
    assert_eq!(
        run.stdout,
        format!(
            "User packages:\n  ../project/pkg\n    {0}\n\nProject packages:\n  ../pkg\n    {0}\n",
            pkg.display()
        )
    );

    let run = knightcode(&sb, &["remove", "./other"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "No matching package found for ./other\n");
    let run = knightcode(&sb, &["uninstall", "./pkg", "--local"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Removing ./pkg...\nRemoved ./pkg\n");
    assert_eq!(
        settings(&sb.project.join(".knightcode/settings.json"))["packages"],
        serde_json::json!([])
    );
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!(["../project/pkg"])
    );
}

#[test]
fn a_failed_install_leaves_settings_untouched() {
    let server = server();
    let sb = sandbox(&server);
    let path = sb.agent.join("settings.json");
    std::fs::write(&path, "{\"theme\": \"dark\"}").unwrap();
    let run = knightcode(&sb, &["install", "./missing"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "Error: Path does not exist: {}\n",
            sb.project.join("missing").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"theme\": \"dark\"}"
    );

    let run = knightcode(&sb, &["install"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Missing install source.\nUsage: knightcode install <source> [-l]\n"
    );
}

/// A stand-in `npm` that appends its arguments to `npm-args` and fails on `fail@*` specs.
fn fake_npm(sb: &Sandbox) -> std::path::PathBuf {
    let bin = sb.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("npm");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> {log}\ncase \"$2\" in fail*) exit 3;; esac\n\
             if [ \"$1\" = install ]; then mkdir -p \"$4/node_modules/${{2%@*}}/skills/npm-skill\"; fi\n",
            log = sb.home.join("npm-args").display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    bin
}

fn with_path(sb: &Sandbox, bin: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd: Command = command(sb, args);
    cmd.env(
        "PATH",
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    );
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The git program on PATH, which the stand-in below hands its other commands to.
fn real_git() -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("git"))
        .find(|path| path.is_file())
        .expect("git on PATH")
}

#[test]
fn a_git_install_killed_before_its_checkout_is_made_whole_by_the_next_install() {
    let server = server();
    let sb = sandbox(&server);
    let redirect = bare_repo(&sb.home);
    // A git that clones for real and then, at the checkout, kills knightcode (its parent)
    // with SIGKILL: what a kill -9 between the clone and the checkout leaves behind.
    let bin = sb.home.join("killing-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ \"$1\" = checkout ]; then kill -9 $PPID; exit 1; fi\nexec {} \"$@\"\n",
            real_git().display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let source = "git:example.com/user/repo.git@v1";

    let mut cmd = command(&sb, &["install", source]);
    redirect.apply(&mut cmd);
    cmd.env(
        "PATH",
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    );
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(9),
        "the stand-in git killed the install"
    );
    let target = sb.agent.join("git/example.com/user/repo");
    assert!(
        !target.exists(),
        "a half-made clone is not at the package's place"
    );

    let mut cmd = command(&sb, &["install", source]);
    redirect.apply(&mut cmd);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(target.join("skills/first/SKILL.md").is_file());
    assert!(!target.join("later.txt").exists(), "v1 is checked out");
    let left: Vec<_> = std::fs::read_dir(sb.agent.join("git/example.com/user"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        ["repo"],
        "the killed install's staging folder is gone"
    );
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!([source])
    );
}

#[test]
fn npm_sources_run_npm_with_the_install_prefix_and_honour_npm_command() {
    let server = server();
    let sb = sandbox(&server);
    let bin = fake_npm(&sb);
    let root = sb.agent.join("npm");

    let (code, stdout, stderr) = with_path(&sb, &bin, &["install", "npm:pkg@1.2.3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "Installing npm:pkg@1.2.3...\nInstalled npm:pkg@1.2.3\n"
    );
    assert!(root.join("package.json").is_file());
    assert!(root.join(".gitignore").is_file());
    let (_, list, _) = with_path(&sb, &bin, &["list"]);
    assert_eq!(
        list,
        format!(
            "User packages:\n  npm:pkg@1.2.3\n    {}\n",
            root.join("node_modules/pkg").display()
        )
    );

    // A failing npm: the error names the command, the settings keep what they had.
    let (code, _, stderr) = with_path(&sb, &bin, &["install", "npm:fail@1"]);
    assert_eq!(code, 1);
    assert!(
        stderr.ends_with(&format!(
            "Error: npm install fail@1 --prefix {} failed with code 3\n",
            root.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!(["npm:pkg@1.2.3"])
    );

    // `npmCommand` wraps npm: its argv comes first.
    let mut s = settings(&sb.agent.join("settings.json"));
    s["npmCommand"] = serde_json::json!(["sh", bin.join("npm").to_str().unwrap()]);
    std::fs::write(sb.agent.join("settings.json"), s.to_string()).unwrap();
    let (code, _, stderr) = with_path(&sb, &bin, &["remove", "npm:pkg"]);
    assert_eq!(code, 0, "{stderr}");
    let log = std::fs::read_to_string(sb.home.join("npm-args")).unwrap();
    let prefix = root.display();
    assert_eq!(
        log,
        format!(
            "install pkg@1.2.3 --prefix {prefix}\ninstall fail@1 --prefix {prefix}\nuninstall pkg --prefix {prefix}\n"
        )
    );
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!([])
    );
}

#[test]
fn git_sources_clone_check_out_the_ref_and_remove_cleanly() {
    let server = server();
    let sb = sandbox(&server);
    let redirect = bare_repo(&sb.home);
    let mut cmd = command(&sb, &["install", "git:example.com/user/repo.git@v1"]);
    redirect.apply(&mut cmd);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout,
        "Installing git:example.com/user/repo.git@v1...\nInstalled git:example.com/user/repo.git@v1\n"
    );
    let target = sb.agent.join("git/example.com/user/repo");
    assert!(target.join("skills/first/SKILL.md").is_file());
    assert!(!target.join("later.txt").exists(), "v1 is checked out");
    assert!(sb.agent.join("git/.gitignore").is_file());

    let mut cmd = command(&sb, &["remove", "git:git@example.com:user/repo"]);
    redirect.apply(&mut cmd);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!sb.agent.join("git/example.com").exists());
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!([])
    );
}

#[test]
fn an_installed_packages_skill_reaches_the_system_prompt() {
    let server = server();
    let sb = sandbox(&server);
    write_skill_package(&sb.home.join("pkg"), "from-package");
    let pkg = sb.home.join("pkg");
    let run = knightcode(&sb, &["install", pkg.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let run = knightcode(&sb, &["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("<name>from-package</name>"), "{body}");
    assert!(
        body.contains(
            &pkg.join("skills/from-package/SKILL.md")
                .display()
                .to_string()
        ),
        "{body}"
    );
}

#[test]
fn update_self_says_how_a_cargo_build_is_updated() {
    let server = server();
    let sb = sandbox(&server);
    let run = knightcode(&sb, &["update", "--self"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with(
            "error: knightcode cannot self-update this installation.\nThis build is installed with cargo."
        ),
        "{}",
        run.stderr
    );
    let run = knightcode(&sb, &["update", "--extensions"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, "Updated packages\n"));
    let run = knightcode(&sb, &["update", "npm:nothing"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Error: No matching package found for npm:nothing\n"
    );
}

#[test]
fn a_projects_package_loads_only_in_a_trusted_project() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok"); 2],
    )
    .unwrap();
    let sb = sandbox(&server);
    write_skill_package(&sb.project.join("vendor/pkg"), "project-pkg");
    let run = knightcode(&sb, &["install", "./vendor/pkg", "-l"]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let run = knightcode(&sb, &["--no-approve", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = knightcode(&sb, &["--approve", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert!(!requests[0].body.to_string().contains("project-pkg"));
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("<name>project-pkg</name>")
    );
}

/// Real npm, offline: a tarball made with `npm pack`, installed through the `npm:` form with
/// a `file:` spec, then removed with `npm uninstall`.
/// npm as these tests run it: offline (the packages are local tarballs), quiet, with the
/// sandbox's own cache.
fn npm_env<'a>(cmd: &'a mut Command, sb: &Sandbox) -> &'a mut Command {
    cmd.env("npm_config_offline", "true")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false")
        .env("npm_config_cache", sb.home.join("npm-cache"))
}

/// A skill package `name@1.0.0` (with `manifest` merged into its `package.json`) written to
/// `src` and packed with `npm pack`; returns the tarball.
fn packed_skill_package(
    sb: &Sandbox,
    src: &Path,
    name: &str,
    skill: &str,
    manifest: serde_json::Value,
) -> std::path::PathBuf {
    write_skill_package(src, skill);
    let mut package = serde_json::json!({"name": name, "version": "1.0.0"});
    if let (Some(package), Some(extra)) = (package.as_object_mut(), manifest.as_object()) {
        package.extend(extra.clone());
    }
    std::fs::write(src.join("package.json"), package.to_string()).unwrap();
    let mut pack = Command::new("npm");
    pack.args(["pack", "--silent"]).current_dir(src);
    let packed = npm_env(&mut pack, sb)
        .output_within(PROCESS_LIMIT, "npm pack of the stand-in package")
        .expect("npm is needed for this test: install Node.js 20 with npm");
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let tarball = src.join(format!("{name}-1.0.0.tgz"));
    assert!(tarball.is_file());
    tarball
}

#[test]
fn real_npm_installs_a_packed_tarball_and_removes_it() {
    let server = server();
    let sb = sandbox(&server);
    let tarball = packed_skill_package(
        &sb,
        &sb.home.join("tgz-src"),
        "tgz-pkg",
        "tgz-skill",
        serde_json::json!({}),
    );

    let source = format!("npm:tgz-pkg@file:{}", tarball.display());
    let mut cmd = command(&sb, &["install", &source]);
    npm_env(&mut cmd, &sb);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = sb.agent.join("npm/node_modules/tgz-pkg");
    assert!(installed.join("skills/tgz-skill/SKILL.md").is_file());
    let run = knightcode(&sb, &["list"]);
    assert_eq!(
        run.stdout,
        format!("User packages:\n  {source}\n    {}\n", installed.display())
    );

    let mut cmd = command(&sb, &["remove", "npm:tgz-pkg"]);
    npm_env(&mut cmd, &sb);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!installed.exists());
    assert_eq!(
        settings(&sb.agent.join("settings.json"))["packages"],
        serde_json::json!([])
    );
}

#[test]
fn a_package_extension_registers_a_tool_the_model_is_offered_and_calls() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![
            ScriptedReply::tool_call("call_1", "pkg_hello", "{}"),
            ScriptedReply::text("done"),
        ],
    )
    .unwrap();
    let sb = sandbox(&server);
    // The convention folder: no `knightcode`/`pi` key in package.json.
    let pkg = sb.project.join("pkg");
    std::fs::create_dir_all(pkg.join("extensions")).unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"pkg"}"#).unwrap();
    std::fs::write(pkg.join("extensions/hello.ts"), tool_extension("pkg_hello")).unwrap();
    let run = knightcode(&sb, &["install", "./pkg"]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let run = knightcode(&sb, &["-p", "greet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(offered_tools(&requests[0].body).contains(&"pkg_hello".to_owned()));
    assert!(
        requests[1].body.to_string().contains("pkg_hello ran"),
        "{}",
        requests[1].body
    );
}

#[test]
fn settings_filters_and_manifest_globs_narrow_package_extensions_and_trust_gates_projects() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok"); 3],
    )
    .unwrap();
    let sb = sandbox(&server);
    // The legacy `pi` key with a glob and an exclusion.
    let pkg = sb.project.join("vendor/multi");
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"multi","pi":{"extensions":["./src/*.ts","!src/broken.ts"]}}"#,
    )
    .unwrap();
    for name in ["alpha", "beta"] {
        std::fs::write(pkg.join(format!("src/{name}.ts")), tool_extension(name)).unwrap();
    }
    std::fs::write(pkg.join("src/broken.ts"), "this is not typescript {{{").unwrap();
    // A project entry in the object form: every extension but beta.
    std::fs::create_dir_all(sb.project.join(".knightcode")).unwrap();
    std::fs::write(
        sb.project.join(".knightcode/settings.json"),
        r#"{"packages": [{"source": "../vendor/multi", "extensions": ["!beta.ts"]}]}"#,
    )
    .unwrap();

    let run = knightcode(&sb, &["--no-approve", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = knightcode(&sb, &["--approve", "-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = server.requests();
    let untrusted = offered_tools(&requests[0].body);
    assert!(!untrusted.contains(&"alpha".to_owned()), "{untrusted:?}");
    let trusted = offered_tools(&requests[1].body);
    assert!(trusted.contains(&"alpha".to_owned()), "{trusted:?}");
    assert!(!trusted.contains(&"beta".to_owned()), "{trusted:?}");
}

#[test]
fn the_extensions_setting_loads_a_script_relative_to_the_agent_folder() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sb = sandbox(&server);
    std::fs::create_dir_all(sb.agent.join("mine")).unwrap();
    std::fs::write(
        sb.agent.join("mine/tool.ts"),
        tool_extension("from_settings"),
    )
    .unwrap();
    std::fs::write(
        sb.agent.join("settings.json"),
        r#"{"extensions": ["mine/tool.ts", "!ignored"]}"#,
    )
    .unwrap();
    let run = knightcode(&sb, &["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = offered_tools(&server.requests()[0].body);
    assert!(tools.contains(&"from_settings".to_owned()), "{tools:?}");
}

#[test]
fn the_extensions_setting_excludes_a_discovered_extension() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok")],
    )
    .unwrap();
    let sb = sandbox(&server);
    let dir = sb.agent.join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.ts"), tool_extension("kept")).unwrap();
    std::fs::write(dir.join("drop.ts"), tool_extension("dropped")).unwrap();
    std::fs::write(
        sb.agent.join("settings.json"),
        r#"{"extensions": ["!drop.ts"]}"#,
    )
    .unwrap();
    let run = knightcode(&sb, &["-p", "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = offered_tools(&server.requests()[0].body);
    assert!(tools.contains(&"kept".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"dropped".to_owned()), "{tools:?}");
}

/// The project's settings with `packages`.
fn project_packages(sb: &Sandbox, packages: serde_json::Value) -> std::path::PathBuf {
    let path = sb.project.join(".knightcode/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        serde_json::json!({ "packages": packages }).to_string(),
    )
    .unwrap();
    path
}

#[test]
fn a_trusted_projects_missing_git_package_is_installed_at_start_up() {
    let server = MockServer::start_blocking(
        WireFormat::OpenAiCompletions,
        vec![ScriptedReply::text("ok"); 3],
    )
    .unwrap();
    let sb = sandbox(&server);
    let redirect = bare_repo(&sb.home);
    let settings_path =
        project_packages(&sb, serde_json::json!(["git:example.com/user/repo.git@v1"]));
    let before = std::fs::read_to_string(&settings_path).unwrap();
    let target = sb.project.join(".knightcode/git/example.com/user/repo");

    // Untrusted: nothing is installed and the project's settings are not acted on.
    let mut cmd = command(&sb, &["--no-approve", "-p", "hi"]);
    redirect.apply(&mut cmd);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(out.status.success());
    assert!(!target.exists());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Installing"));

    let mut cmd = command(&sb, &["--approve", "-p", "hi"]);
    redirect.apply(&mut cmd);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    assert!(
        stderr.contains("Installing git:example.com/user/repo.git@v1...\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Installed the project package git:example.com/user/repo.git@v1\n"),
        "{stderr}"
    );
    assert!(target.join("skills/first/SKILL.md").is_file());
    assert!(!target.join("later.txt").exists(), "v1 is checked out");
    let requests = server.requests();
    assert!(!requests[0].body.to_string().contains("<name>first</name>"));
    assert!(requests[1].body.to_string().contains("<name>first</name>"));
    assert_eq!(std::fs::read_to_string(&settings_path).unwrap(), before);

    // Installed now: the next start does not install again.
    let mut cmd = command(&sb, &["--approve", "-p", "hi"]);
    redirect.apply(&mut cmd);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Installing"));
}

#[test]
fn a_failed_start_up_install_warns_with_the_retry_command_and_the_run_goes_on() {
    let server = server();
    let sb = sandbox(&server);
    let bin = fake_npm(&sb);
    let settings_path = project_packages(&sb, serde_json::json!(["npm:fail@1"]));
    let before = std::fs::read_to_string(&settings_path).unwrap();
    let (code, stdout, stderr) = with_path(&sb, &bin, &["--approve", "-p", "hi"]);
    assert_eq!((code, stdout.as_str()), (0, "ok\n"), "{stderr}");
    let prefix = sb.project.join(".knightcode/npm");
    assert!(
        stderr.contains(&format!(
            "Warning: Could not install the project package npm:fail@1: npm install fail@1 --prefix {} failed with code 3. The session starts without it; retry with: knightcode install npm:fail@1 -l\n",
            prefix.display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&settings_path).unwrap(), before);
}

/// Real npm, offline: a packed tarball as a project package, installed at start-up into the
/// project's `.knightcode/npm`.
#[test]
fn real_npm_installs_a_projects_packed_tarball_at_start_up() {
    let server = server();
    let sb = sandbox(&server);
    let tarball = packed_skill_package(
        &sb,
        &sb.home.join("tgz-src"),
        "tgz-pkg",
        "tgz-skill",
        serde_json::json!({}),
    );
    project_packages(
        &sb,
        serde_json::json!([format!("npm:tgz-pkg@file:{}", tarball.display())]),
    );
    let mut cmd = command(&sb, &["--approve", "-p", "hi"]);
    npm_env(&mut cmd, &sb);
    let out = cmd.output_within(PROCESS_LIMIT, "knightcode").unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = sb.project.join(".knightcode/npm/node_modules/tgz-pkg");
    assert!(installed.join("skills/tgz-skill/SKILL.md").is_file());
    assert!(
        server.requests()[0]
            .body
            .to_string()
            .contains("<name>tgz-skill</name>")
    );
}

/// pi 0.73.1 installs a user's npm package with `npm install -g` and stores `npm:<name>`;
/// such a package is used from npm's global folder when ours does not have it.
#[test]
fn a_user_package_pi_installed_globally_is_used_from_there() {
    let server = server();
    let sb = sandbox(&server);
    let tarball = packed_skill_package(
        &sb,
        &sb.home.join("global-src"),
        "pi-global-pkg",
        "global-skill",
        serde_json::json!({"pi": {"skills": ["skills"]}}),
    );
    let prefix = sb.home.join("npm-global");
    let npm_env = |cmd: &mut Command| {
        npm_env(cmd, &sb).env("npm_config_prefix", &prefix);
    };
    // What `pi install npm:pi-global-pkg` does: a global install, then the settings entry.
    let mut global = Command::new("npm");
    global.args(["install", "-g", "--silent"]).arg(&tarball);
    npm_env(&mut global);
    let installed = global
        .output_within(PROCESS_LIMIT, "npm install -g of the stand-in package")
        .unwrap();
    assert!(installed.status.success(), "{installed:?}");
    let location = prefix.join("lib/node_modules/pi-global-pkg");
    assert!(location.join("skills/global-skill/SKILL.md").is_file());
    std::fs::write(
        sb.agent.join("settings.json"),
        r#"{"packages":["npm:pi-global-pkg"]}"#,
    )
    .unwrap();

    let mut list = command(&sb, &["list"]);
    npm_env(&mut list);
    let out = list
        .output_within(PROCESS_LIMIT, "knightcode list")
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "User packages:\n  npm:pi-global-pkg\n    {}\n",
            location.display()
        )
    );
    let mut run = command(&sb, &["-p", "hi"]);
    npm_env(&mut run);
    let out = run.output_within(PROCESS_LIMIT, "knightcode -p").unwrap();
    assert!(out.status.success(), "{out:?}");
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("<name>global-skill</name>"), "{body}");
}
