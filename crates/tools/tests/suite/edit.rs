use crate::common;

use std::path::Path;

use common::{call, failure, text, tool};
use serde_json::{Value, json};

fn setup(content: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), content).unwrap();
    dir
}

fn read(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("f.txt")).unwrap()
}

async fn edit(
    dir: &Path,
    arguments: Value,
) -> Result<knightcode_agent::tool::ToolOutput, knightcode_agent::tool::ToolError> {
    call(tool("edit").as_ref(), dir, arguments).await
}

#[tokio::test]
async fn replaces_exact_text_and_reports_diff_and_patch() {
    let dir = setup("alpha\nbeta\ngamma\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(read(dir.path()), "alpha\nBETA\ngamma\n");
    assert_eq!(
        out.details,
        Some(json!({
            "diff": " 1 alpha\n-2 beta\n+2 BETA\n 3 gamma",
            "patch": "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
            "firstChangedLine": 2
        }))
    );
}

#[tokio::test]
async fn several_edits_match_against_the_original() {
    let dir = setup("a = 1\nb = 2\nc = 3\n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "c = 3", "newText": "c = 30"},
            {"oldText": "a = 1", "newText": "a = 10\nb = 2"},
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read(dir.path()), "a = 10\nb = 2\nb = 2\nc = 30\n");
}

#[tokio::test]
async fn text_that_is_not_there_is_reported() {
    let dir = setup("hello\n");
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [{"oldText": "bye", "newText": "x"}]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    );
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [
                {"oldText": "hello", "newText": "x"},
                {"oldText": "bye", "newText": "y"},
            ]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
    assert_eq!(read(dir.path()), "hello\n");
}

#[tokio::test]
async fn text_found_more_than_once_is_refused() {
    let dir = setup("x\nx\nx\ny\n");
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [{"oldText": "x", "newText": "z"}]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Found 3 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [
                {"oldText": "y", "newText": "w"},
                {"oldText": "x", "newText": "z"},
            ]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Found 3 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."
    );
}

#[tokio::test]
async fn fuzzy_matching_forgives_quotes_dashes_and_trailing_spaces() {
    // Curly quotes, an en dash and trailing spaces in the file; the model writes ASCII.
    let dir = setup("title = “Hello”   \nrange = 1–5\nkeep ‘this’  \n");
    let out = edit(
        dir.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "title = \"Hello\"\nrange = 1-5", "newText": "title = \"Bye\"\nrange = 1-9"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "Successfully replaced 1 block(s) in f.txt.");
    // Lines the edit did not touch keep their bytes, trailing spaces and curly quotes included.
    assert_eq!(
        read(dir.path()),
        "title = \"Bye\"\nrange = 1-9\nkeep ‘this’  \n"
    );
}

#[tokio::test]
async fn crlf_and_bom_survive_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, "\u{FEFF}one\r\ntwo\r\nthree\r\n").unwrap();
    edit(
        dir.path(),
        json!({"path": "f.txt", "edits": [{"oldText": "two\nthree", "newText": "2\n3"}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        "\u{FEFF}one\r\n2\r\n3\r\n".as_bytes()
    );
}

#[tokio::test]
async fn edits_that_change_nothing_are_reported() {
    let dir = setup("same\n");
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [{"oldText": "same", "newText": "same"}]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
}

#[tokio::test]
async fn invalid_edit_lists_are_refused() {
    let dir = setup("abcdef\n");
    let message = failure(edit(dir.path(), json!({"path": "f.txt", "edits": []})).await);
    assert_eq!(
        message,
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [
                {"oldText": "abc", "newText": "x"},
                {"oldText": "cde", "newText": "y"},
            ]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [{"oldText": "", "newText": "y"}]}),
        )
        .await,
    );
    assert_eq!(message, "oldText must not be empty in f.txt.");
}

#[tokio::test]
async fn legacy_argument_shapes_are_repaired() {
    let dir = setup("old\n");
    edit(
        dir.path(),
        json!({"path": "f.txt", "oldText": "old", "newText": "new"}),
    )
    .await
    .unwrap();
    assert_eq!(read(dir.path()), "new\n");
    edit(
        dir.path(),
        json!({"path": "f.txt", "edits": "[{\"oldText\":\"new\",\"newText\":\"newer\"}]"}),
    )
    .await
    .unwrap();
    assert_eq!(read(dir.path()), "newer\n");
}

#[tokio::test]
async fn a_missing_file_reports_its_error_code() {
    let dir = tempfile::tempdir().unwrap();
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Could not edit file: nope.txt. Error code: ENOENT."
    );
}

#[test]
fn definition_declares_the_argument_repair_and_schema() {
    let edit = tool("edit");
    let definition = edit.definition();
    assert_eq!(definition.parameters["required"], json!(["path", "edits"]));
    assert_eq!(
        definition.parameters["properties"]["edits"]["items"]["required"],
        json!(["oldText", "newText"])
    );
    assert_eq!(definition.prompt_guidelines.len(), 4);
}

#[tokio::test]
async fn an_aborted_edit_leaves_the_file_alone() {
    let dir = setup("keep\n");
    let ctx = common::context(dir.path());
    ctx.cancel.cancel();
    let result = tool("edit")
        .execute(
            json!({"path": "f.txt", "edits": [{"oldText": "keep", "newText": "lose"}]}),
            ctx,
        )
        .await;
    assert_eq!(
        result,
        Err(knightcode_agent::tool::ToolError::Aborted(
            "Operation aborted".to_owned()
        ))
    );
    assert_eq!(read(dir.path()), "keep\n");
}

#[tokio::test]
async fn several_edits_that_change_nothing_are_reported() {
    let dir = setup("a\nb\n");
    let message = failure(
        edit(
            dir.path(),
            json!({"path": "f.txt", "edits": [
                {"oldText": "a", "newText": "a"},
                {"oldText": "b", "newText": "b"},
            ]}),
        )
        .await,
    );
    assert_eq!(
        message,
        "No changes made to f.txt. The replacements produced identical content."
    );
}
