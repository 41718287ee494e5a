//! Local stand-ins for package sources (no network): a package folder with a skill, and a
//! bare git repository that `https://example.com/user/repo.git` is redirected to.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// A package at `root` with the skill `skill` in `skills/`.
pub fn write_skill_package(root: &Path, skill: &str) {
    let dir = root.join("skills").join(skill);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {skill}\ndescription: The {skill} skill.\n---\nDo it.\n"),
    )
    .unwrap();
}

pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// The environment that points git at the bare repositories instead of example.com.
pub struct GitRedirect(pub Vec<(String, String)>);

impl GitRedirect {
    pub fn apply(&self, cmd: &mut Command) {
        cmd.envs(self.0.iter().map(|(k, v)| (k, v)));
    }

    pub fn pairs(&self) -> Vec<(&str, &str)> {
        self.0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

/// A bare repository below `home` that `https://example.com/user/repo.git` stands for: a
/// package with the skill `first`, tagged `v1`, and a later commit.
pub fn bare_repo(home: &Path) -> GitRedirect {
    let remotes = home.join("remotes");
    let bare = remotes.join("user/repo.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    write_skill_package(&work, "first");
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "one"]);
    git(&work, &["tag", "v1"]);
    std::fs::write(work.join("later.txt"), "later").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "two"]);
    git(
        &work,
        &[
            "push",
            "-q",
            bare.to_str().unwrap(),
            "HEAD:refs/heads/main",
            "v1",
        ],
    );
    GitRedirect(vec![
        ("GIT_CONFIG_COUNT".to_owned(), "1".to_owned()),
        (
            "GIT_CONFIG_KEY_0".to_owned(),
            format!("url.file://{}/.insteadOf", remotes.display()),
        ),
        (
            "GIT_CONFIG_VALUE_0".to_owned(),
            "https://example.com".to_owned(),
        ),
    ])
}

/// A tool extension named `name`: it greets.
pub fn tool_extension(name: &str) -> String {
    format!(
        r#"
import {{ Type }} from "@mariozechner/pi-ai";
import type {{ ExtensionAPI }} from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {{
  pi.registerTool({{
    name: "{name}",
    label: "{name}",
    description: "The {name} tool",
    parameters: Type.Object({{}}),
    async execute() {{
      return {{ content: [{{ type: "text", text: "{name} ran" }}], details: {{}} }};
    }},
  }});
}}
"#
    )
}
