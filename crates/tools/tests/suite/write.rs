use crate::common;

use common::{call, text, tool};
use serde_json::json;

#[tokio::test]
async fn creates_parent_directories_and_writes_exact_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let content = "\u{FEFF}first\r\nsecond\rthird";
    let out = call(
        tool("write").as_ref(),
        dir.path(),
        json!({"path": "a/b/c.txt", "content": content}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "Successfully wrote to a/b/c.txt");
    assert_eq!(out.details, None);
    let written = std::fs::read(dir.path().join("a/b/c.txt")).unwrap();
    assert_eq!(written, content.as_bytes());
}

#[tokio::test]
async fn overwriting_reports_a_display_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
    let out = call(
        tool("write").as_ref(),
        dir.path(),
        json!({"path": "f.txt", "content": "one\n2\nthree\n"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.details,
        Some(json!({"diff": " 1 one\n-2 two\n+2 2\n 3 three"}))
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n2\nthree\n");
}

#[tokio::test]
async fn rewriting_the_same_text_with_other_line_endings_has_no_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, "a\r\nb\r\n").unwrap();
    let out = call(
        tool("write").as_ref(),
        dir.path(),
        json!({"path": "f.txt", "content": "\u{FEFF}a\nb\n"}),
    )
    .await
    .unwrap();
    assert_eq!(out.details, None);
    assert_eq!(std::fs::read(&path).unwrap(), "\u{FEFF}a\nb\n".as_bytes());
}

#[tokio::test]
async fn writing_over_a_directory_fails_with_the_os_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let message = common::failure(
        call(
            tool("write").as_ref(),
            dir.path(),
            json!({"path": "d", "content": "x"}),
        )
        .await,
    );
    assert!(
        message.starts_with("EISDIR: illegal operation on a directory"),
        "{message}"
    );
}

#[tokio::test]
async fn a_file_where_a_folder_must_be_is_named() {
    // `file.py/x.txt`: mkdir -p meets a file. It used to say "EEXIST … mkdir".
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.py"), "print(1)\n").unwrap();
    let message = common::failure(
        call(
            tool("write").as_ref(),
            dir.path(),
            json!({"path": "file.py/x.txt", "content": "x"}),
        )
        .await,
    );
    let folder = dir.path().join("file.py");
    assert_eq!(
        message,
        format!(
            "ENOTDIR: not a directory, mkdir '{0}' ({0} is a file, not a folder)",
            folder.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&folder).unwrap(), "print(1)\n");
}

#[tokio::test]
async fn an_aborted_write_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::context(dir.path());
    ctx.cancel.cancel();
    let result = tool("write")
        .execute(json!({"path": "f.txt", "content": "x"}), ctx)
        .await;
    assert_eq!(
        result,
        Err(knightcode_agent::tool::ToolError::Aborted(
            "Operation aborted".to_owned()
        ))
    );
    assert!(!dir.path().join("f.txt").exists());
}
