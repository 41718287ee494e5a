use crate::common;

use std::path::Path;

use common::{call, failure, text, tool};
use serde_json::json;

/// A small project with ignored, hidden and binary files:
///
/// ```text
/// .gitignore        ignored/ and *.log
/// .hidden/h.txt     hello hidden
/// README.MD
/// debug.log         hello log        (ignored)
/// ignored/secret.rs hello secret     (ignored)
/// src/lib.rs        pub fn hello() {}
/// src/main.rs       fn main / println!("hello") / }
/// src/blob.bin      hello + NUL      (binary)
/// ```
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, content: &[u8]| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write(".gitignore", b"ignored/\n*.log\n");
    write(".hidden/h.txt", b"hello hidden\n");
    write("README.MD", b"# readme\n");
    write("debug.log", b"hello log\n");
    write("ignored/secret.rs", b"hello secret\n");
    write("src/lib.rs", b"pub fn hello() {}\n");
    write("src/main.rs", b"fn main() {\n    println!(\"hello\");\n}\n");
    write("src/blob.bin", b"hello\x00binary\n");
    dir
}

async fn grep(
    root: &Path,
    arguments: serde_json::Value,
) -> Result<knightcode_agent::tool::ToolOutput, knightcode_agent::tool::ToolError> {
    call(tool("grep").as_ref(), root, arguments).await
}

#[tokio::test]
async fn grep_honours_gitignore_and_skips_binary_files() {
    let dir = project();
    let out = grep(dir.path(), json!({"pattern": "hello"})).await.unwrap();
    assert_eq!(
        text(&out),
        ".hidden/h.txt:1: hello hidden\nsrc/lib.rs:1: pub fn hello() {}\nsrc/main.rs:2:     println!(\"hello\");"
    );
    assert_eq!(out.details, None);
}

#[tokio::test]
async fn grep_inside_a_git_repository_uses_gitignore_too() {
    let dir = project();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "hello from git internals\n").unwrap();
    let out = grep(dir.path(), json!({"pattern": "hello", "glob": "*.rs"}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "src/lib.rs:1: pub fn hello() {}\nsrc/main.rs:2:     println!(\"hello\");"
    );
}

#[tokio::test]
async fn grep_options_case_literal_and_context() {
    let dir = project();
    let out = grep(
        dir.path(),
        json!({"pattern": "HELLO", "ignoreCase": true, "path": "src"}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&out),
        "lib.rs:1: pub fn hello() {}\nmain.rs:2:     println!(\"hello\");"
    );

    let out = grep(dir.path(), json!({"pattern": "println!(", "literal": true}))
        .await
        .unwrap();
    assert_eq!(text(&out), "src/main.rs:2:     println!(\"hello\");");

    let message = failure(grep(dir.path(), json!({"pattern": "println!("})).await);
    assert!(message.contains("regex parse error"), "{message}");

    let out = grep(dir.path(), json!({"pattern": "println", "context": 1}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "src/main.rs-1- fn main() {\nsrc/main.rs:2:     println!(\"hello\");\nsrc/main.rs-3- }"
    );

    let out = grep(dir.path(), json!({"pattern": "fn", "path": "src/main.rs"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "main.rs:1: fn main() {");
}

#[tokio::test]
async fn grep_limits_and_notices() {
    let dir = project();
    let out = grep(dir.path(), json!({"pattern": "hello", "limit": 2}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        ".hidden/h.txt:1: hello hidden\nsrc/lib.rs:1: pub fn hello() {}\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(out.details, Some(json!({"matchLimitReached": 2})));

    std::fs::write(
        dir.path().join("long.txt"),
        format!("{}needle\n", "x".repeat(600)),
    )
    .unwrap();
    let out = grep(dir.path(), json!({"pattern": "needle"}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        format!(
            "long.txt:1: {}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]",
            "x".repeat(500)
        )
    );
    assert_eq!(out.details, Some(json!({"linesTruncated": true})));

    let many: String = (0..2000)
        .map(|i| format!("match {i} {}\n", "y".repeat(40)))
        .collect();
    std::fs::write(dir.path().join("many.txt"), many).unwrap();
    let out = grep(dir.path(), json!({"pattern": "match", "limit": 5000}))
        .await
        .unwrap();
    assert!(text(&out).ends_with("\n\n[50.0KB limit reached]"));
    let details = out.details.unwrap();
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["truncation"]["maxLines"], 9_007_199_254_740_991_u64);
}

#[tokio::test]
async fn grep_reports_no_matches_and_missing_paths() {
    let dir = project();
    let out = grep(dir.path(), json!({"pattern": "zebra"})).await.unwrap();
    assert_eq!(text(&out), "No matches found");
    assert_eq!(out.details, None);
    let message = failure(grep(dir.path(), json!({"pattern": "x", "path": "nowhere"})).await);
    assert_eq!(
        message,
        format!("Path not found: {}", dir.path().join("nowhere").display())
    );
}

async fn find(
    root: &Path,
    arguments: serde_json::Value,
) -> Result<knightcode_agent::tool::ToolOutput, knightcode_agent::tool::ToolError> {
    call(tool("find").as_ref(), root, arguments).await
}

#[tokio::test]
async fn find_honours_gitignore_and_marks_directories() {
    let dir = project();
    let out = find(dir.path(), json!({"pattern": "*.rs"})).await.unwrap();
    assert_eq!(text(&out), "src/lib.rs\nsrc/main.rs");

    let out = find(dir.path(), json!({"pattern": "*"})).await.unwrap();
    assert_eq!(
        text(&out),
        ".gitignore\n.hidden/\n.hidden/h.txt\nREADME.MD\nsrc/\nsrc/blob.bin\nsrc/lib.rs\nsrc/main.rs"
    );
    assert_eq!(out.details, None);
}

#[tokio::test]
async fn find_patterns_with_slashes_match_whole_paths() {
    let dir = project();
    std::fs::create_dir_all(dir.path().join("src/deep/er")).unwrap();
    std::fs::write(dir.path().join("src/deep/er/x.spec.rs"), "").unwrap();
    let out = find(dir.path(), json!({"pattern": "src/**/*.spec.rs"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "src/deep/er/x.spec.rs");
    let out = find(dir.path(), json!({"pattern": "src/*.rs"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "src/lib.rs\nsrc/main.rs");
    // Lowercase patterns ignore case, as fd's smart case does.
    let out = find(dir.path(), json!({"pattern": "*.md"})).await.unwrap();
    assert_eq!(text(&out), "README.MD");
    let out = find(dir.path(), json!({"pattern": "*.Md"})).await.unwrap();
    assert_eq!(text(&out), "No files found matching pattern");
}

#[tokio::test]
async fn find_limits_and_errors() {
    let dir = project();
    let out = find(dir.path(), json!({"pattern": "*", "limit": 2}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        ".gitignore\n.hidden/\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(out.details, Some(json!({"resultLimitReached": 2})));
    let message = failure(find(dir.path(), json!({"pattern": "*", "path": "nowhere"})).await);
    assert_eq!(
        message,
        format!("Path not found: {}", dir.path().join("nowhere").display())
    );
}

async fn ls(
    root: &Path,
    arguments: serde_json::Value,
) -> Result<knightcode_agent::tool::ToolOutput, knightcode_agent::tool::ToolError> {
    call(tool("ls").as_ref(), root, arguments).await
}

#[tokio::test]
async fn ls_lists_every_entry_sorted_with_directory_marks() {
    let dir = project();
    std::os::unix::fs::symlink("missing-target", dir.path().join("dangling")).unwrap();
    std::os::unix::fs::symlink("src", dir.path().join("link-to-src")).unwrap();
    let out = ls(dir.path(), json!({})).await.unwrap();
    // ls shows a directory as it is: ignored entries and dotfiles included, dangling links
    // left out, links to directories marked as directories.
    assert_eq!(
        text(&out),
        ".gitignore\n.hidden/\ndebug.log\nignored/\nlink-to-src/\nREADME.MD\nsrc/"
    );
    assert_eq!(out.details, Some(json!({"pathCount": 7})));
}

#[tokio::test]
async fn ls_limits_empty_directories_and_errors() {
    let dir = project();
    let out = ls(dir.path(), json!({"limit": 2})).await.unwrap();
    assert_eq!(
        text(&out),
        ".gitignore\n.hidden/\n\n[2 entries limit reached. Use limit=4 for more]"
    );
    assert_eq!(
        out.details,
        Some(json!({"pathCount": 2, "entryLimitReached": 2}))
    );

    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let out = ls(dir.path(), json!({"path": "empty"})).await.unwrap();
    assert_eq!(text(&out), "(empty directory)");
    assert_eq!(out.details, Some(json!({"pathCount": 0})));

    let message = failure(ls(dir.path(), json!({"path": "README.MD"})).await);
    assert_eq!(
        message,
        format!(
            "Not a directory: {}",
            dir.path().join("README.MD").display()
        )
    );
    let message = failure(ls(dir.path(), json!({"path": "nowhere"})).await);
    assert_eq!(
        message,
        format!("Path not found: {}", dir.path().join("nowhere").display())
    );
}

#[test]
fn builtin_set_and_defaults() {
    let names: Vec<String> =
        knightcode_tools::builtin_tools(knightcode_tools::ToolsConfig::default())
            .iter()
            .map(|tool| tool.definition().name.clone())
            .collect();
    assert_eq!(names, knightcode_tools::BUILTIN_TOOL_NAMES);
    assert_eq!(
        knightcode_tools::DEFAULT_ACTIVE_TOOLS,
        ["read", "bash", "edit", "write"]
    );
    assert!(knightcode_tools::is_default_active("bash"));
    assert!(!knightcode_tools::is_default_active("grep"));
}

#[tokio::test]
async fn grep_anchors_match_at_line_boundaries() {
    let dir = project();
    let out = grep(dir.path(), json!({"pattern": "^fn", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "main.rs:1: fn main() {");
    let out = grep(dir.path(), json!({"pattern": "\\)$", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "No matches found");
    let out = grep(dir.path(), json!({"pattern": "^\\}$", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "main.rs:3: }");
}
