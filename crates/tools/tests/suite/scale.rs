//! grep and find on trees that stress the walk: huge match lists, binary files, symbolic
//! link loops, unreadable and unreachable directories, cancellation. The trees are small
//! enough for debug builds; what matters is the shape.

use crate::common;

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{call, text, tool};
use knightcode_agent::tool::{ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn grep(root: &Path, arguments: Value) -> ToolOutput {
    call(tool("grep").as_ref(), root, arguments).await.unwrap()
}

async fn find(root: &Path, arguments: Value) -> ToolOutput {
    call(tool("find").as_ref(), root, arguments).await.unwrap()
}

fn write(root: &Path, path: &str, content: &[u8]) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// `dirs` directories of `files` files, each file `lines` lines of `match {file} {line}`.
fn matching_tree(dirs: usize, files: usize, lines: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..dirs {
        for f in 0..files {
            let content: String = (1..=lines).map(|l| format!("match {f} {l}\n")).collect();
            write(
                dir.path(),
                &format!("d{d:02}/f{f:02}.txt"),
                content.as_bytes(),
            );
        }
    }
    dir
}

#[tokio::test]
async fn a_100000_line_match_list_keeps_the_first_matches_and_cuts_at_50kb() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (1..=100_000).map(|l| format!("needle {l}\n")).collect();
    write(dir.path(), "big.txt", big.as_bytes());

    let out = grep(dir.path(), json!({"pattern": "needle"})).await;
    let shown = text(&out);
    let rows: Vec<&str> = shown.lines().take(100).collect();
    assert_eq!(rows.first(), Some(&"big.txt:1: needle 1"));
    assert_eq!(rows.last(), Some(&"big.txt:100: needle 100"));
    assert!(
        shown.ends_with(
            "big.txt:100: needle 100\n\n[100 matches limit reached. Use limit=200 for more, or refine pattern]"
        ),
        "{shown}"
    );
    assert_eq!(out.details, Some(json!({"matchLimitReached": 100})));

    // A limit above the match count: every match is kept, the text is cut at 50 KB.
    let out = grep(dir.path(), json!({"pattern": "needle", "limit": 200_000})).await;
    let shown = text(&out);
    assert!(shown.starts_with("big.txt:1: needle 1\nbig.txt:2: needle 2\n"));
    assert!(
        shown.ends_with("\n\n[50.0KB limit reached]"),
        "{}",
        &shown[shown.len() - 200..]
    );
    let details = out.details.unwrap();
    assert_eq!(details["truncation"]["totalLines"], 100_000);
    assert_eq!(details.get("matchLimitReached"), None);
}

#[tokio::test]
async fn matches_spread_over_many_files_come_back_in_path_order_every_time() {
    let dir = matching_tree(12, 12, 40);
    let expected: Vec<String> = (0..12)
        .flat_map(|f| (1..=40).map(move |l| format!("d00/f{f:02}.txt:{l}: match {f} {l}")))
        .take(300)
        .collect();
    for _ in 0..5 {
        let out = grep(dir.path(), json!({"pattern": "match", "limit": 300})).await;
        let shown = text(&out);
        let rows: Vec<&str> = shown.split("\n\n[").next().unwrap().lines().collect();
        assert_eq!(rows, expected);
        assert!(
            shown.ends_with(
                "[300 matches limit reached. Use limit=600 for more, or refine pattern]"
            )
        );
    }

    // Without a limit in reach, the whole tree in order.
    let out = grep(dir.path(), json!({"pattern": "match 3 17$", "limit": 1000})).await;
    let expected: Vec<String> = (0..12)
        .map(|d| format!("d{d:02}/f03.txt:17: match 3 17"))
        .collect();
    assert_eq!(text(&out), expected.join("\n"));

    let first = text(&find(dir.path(), json!({"pattern": "*.txt", "limit": 30})).await);
    for _ in 0..5 {
        assert_eq!(
            text(&find(dir.path(), json!({"pattern": "*.txt", "limit": 30})).await),
            first
        );
    }
    let expected: Vec<String> = (0..12)
        .map(|f| format!("d00/f{f:02}.txt"))
        .chain((0..12).map(|f| format!("d01/f{f:02}.txt")))
        .chain((0..6).map(|f| format!("d02/f{f:02}.txt")))
        .collect();
    assert_eq!(
        first,
        format!(
            "{}\n\n[30 results limit reached. Use limit=60 for more, or refine pattern]",
            expected.join("\n")
        )
    );
}

#[tokio::test]
async fn binary_files_are_skipped_however_large() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "text.txt", b"needle in text\n");
    write(dir.path(), "small.bin", b"needle\x00\x01\x02needle\n");
    // 4 MiB of matching lines with NULs from the first block on.
    let mut big = Vec::new();
    while big.len() < 4 << 20 {
        big.extend_from_slice(b"needle\x00 binary needle\n");
    }
    write(dir.path(), "big.bin", &big);
    let out = grep(dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(text(&out), "text.txt:1: needle in text");
    assert_eq!(out.details, None);
    // find lists them like any file.
    let out = find(dir.path(), json!({"pattern": "*"})).await;
    assert_eq!(text(&out), "big.bin\nsmall.bin\ntext.txt");
}

#[tokio::test]
async fn symbolic_link_loops_are_listed_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/b/c/d/file.txt", b"hello\n");
    symlink(".", root.join("loop")).unwrap();
    symlink("../../../..", root.join("a/b/c/d/up")).unwrap();
    symlink("self", root.join("self")).unwrap();
    symlink("l2", root.join("l1")).unwrap();
    symlink("l1", root.join("l2")).unwrap();
    // A long chain of links to directories, each pointing at the next.
    for i in 0..50 {
        symlink(format!("chain{}", i + 1), root.join(format!("chain{i}"))).unwrap();
    }
    symlink("a", root.join("chain50")).unwrap();

    let out = grep(root, json!({"pattern": "hello"})).await;
    assert_eq!(text(&out), "a/b/c/d/file.txt:1: hello");
    assert_eq!(out.details, None);

    let out = find(root, json!({"pattern": "*"})).await;
    let shown = text(&out);
    let rows: Vec<&str> = shown.lines().collect();
    assert_eq!(
        &rows[..6],
        [
            "a/",
            "a/b/",
            "a/b/c/",
            "a/b/c/d/",
            "a/b/c/d/file.txt",
            "a/b/c/d/up"
        ]
    );
    assert!(rows.contains(&"loop") && rows.contains(&"l1") && rows.contains(&"self"));
    assert!(rows.contains(&"chain0") && rows.contains(&"chain50"));
    assert_eq!(rows.len(), 6 + 1 + 3 + 51, "{shown}");
}

/// A directory below `root` whose absolute path is longer than `PATH_MAX`: it exists, but
/// nothing can open it by path (root or not), as in trees copied from other systems.
fn unreachable_dir(root: &Path) -> String {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::{Mode, mkdirat};
    let name = "n".repeat(250);
    let mut fd: std::os::fd::OwnedFd = File::open(root).unwrap().into();
    let mut relative = Vec::new();
    for _ in 0..20 {
        mkdirat(&fd, name.as_str(), Mode::from_bits_truncate(0o755)).unwrap();
        fd = openat(
            &fd,
            name.as_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        relative.push(name.clone());
    }
    let file = openat(
        &fd,
        "deep.txt",
        OFlag::O_CREAT | OFlag::O_WRONLY,
        Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    File::from(file).write_all(b"hello deep\n").unwrap();
    relative.join("/")
}

#[tokio::test]
async fn unreachable_directories_are_skipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "top.txt", b"hello top\n");
    let deep = unreachable_dir(dir.path());

    let out = grep(dir.path(), json!({"pattern": "hello"})).await;
    let shown = text(&out);
    assert!(
        shown.starts_with("top.txt:1: hello top\n\n[Skipped 1 unreadable path: "),
        "{shown}"
    );
    assert!(shown.ends_with("(os error 36)]"), "{shown}");
    assert!(shown.contains("nnn…: File name too long"), "{shown}");
    assert!(shown.len() < 400, "{shown}");
    // A note does not count as a result.
    assert_eq!(out.details, None);

    let out = grep(dir.path(), json!({"pattern": "zebra"})).await;
    assert!(text(&out).starts_with("No matches found\n\n[Skipped 1 unreadable path: "));

    let out = find(dir.path(), json!({"pattern": "*.txt"})).await;
    let shown = text(&out);
    assert!(
        shown.starts_with("top.txt\n\n[Skipped 1 unreadable path: "),
        "{shown}"
    );
    // The directories above the cut-off are listed as usual.
    let out = find(dir.path(), json!({"pattern": "n*", "limit": 2})).await;
    let first = deep.split('/').next().unwrap();
    assert!(text(&out).starts_with(&format!("{first}/\n{first}/{first}/\n\n[2 results limit")));
}

#[tokio::test]
async fn unreadable_directories_are_skipped_with_a_note() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", b"hello a\n");
    write(dir.path(), "locked/secret.txt", b"hello secret\n");
    write(dir.path(), "z.txt", b"hello z\n");
    let locked = dir.path().join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = std::fs::read_dir(&locked).is_ok();

    let out = grep(dir.path(), json!({"pattern": "hello"})).await;
    let shown = text(&out);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if readable_anyway {
        // Running as root: permissions do not stop the walk (the unreachable-directory
        // test covers the note).
        assert!(
            shown.contains("locked/secret.txt:1: hello secret"),
            "{shown}"
        );
        return;
    }
    assert_eq!(
        shown,
        "a.txt:1: hello a\nz.txt:1: hello z\n\n[Skipped 1 unreadable path: locked: Permission denied (os error 13)]"
    );
}

#[tokio::test]
async fn deep_trees_are_walked_without_recursion_limits() {
    let dir = tempfile::tempdir().unwrap();
    let deep = vec!["d"; 300].join("/");
    write(dir.path(), &format!("{deep}/bottom.txt"), b"hello bottom\n");
    let out = grep(dir.path(), json!({"pattern": "hello"})).await;
    assert_eq!(text(&out), format!("{deep}/bottom.txt:1: hello bottom"));
    let out = find(dir.path(), json!({"pattern": "bottom.txt"})).await;
    assert_eq!(text(&out), format!("{deep}/bottom.txt"));
}

#[tokio::test]
async fn an_aborted_search_returns_aborted() {
    let dir = matching_tree(20, 20, 50);
    for name in ["grep", "find"] {
        let tool = tool(name);
        let cancel = CancellationToken::new();
        let context = ToolContext::new("call-1", dir.path(), cancel.clone());
        let arguments = json!({"pattern": "no such text anywhere", "limit": 1_000_000});
        let call = tokio::spawn(async move { tool.execute(arguments, context).await });
        cancel.cancel();
        let result = call.await.unwrap();
        assert!(
            matches!(result, Err(ToolError::Aborted(ref message)) if message == "Operation aborted"),
            "{name}: {:?}",
            result.map(|out| text(&out))
        );
    }
}
