//! `fetch` request bodies beyond text, through the real binary: bytes, a `Blob`, `FormData`
//! (multipart, with a file part) and a stream are sent as the server should receive them,
//! with the content type the body implies unless the caller set one.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::WireFormat;
use oneshot_common::knightcode;
use oneshot_common::sandbox;

const UPLOADS: &str = r#"
export default function (pi) {
  pi.registerCommand("upload", {
    handler: async (root, ctx) => {
      const post = (path, body, headers) => fetch(`${root}${path}`, { method: "POST", body, headers }).then((r) => r.status);
      const form = new FormData();
      form.append("field", "plain value");
      form.append("upload", new File(["file body"], "notes.txt", { type: "text/plain" }));
      const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("streamed ")); c.enqueue("text"); c.close(); } });
      const statuses = [
        await post("/bytes", new TextEncoder().encode("raw bytes")),
        await post("/blob", new Blob(["{\"from\":\"blob\"}"], { type: "application/json" })),
        await post("/form", form),
        await post("/stream", stream),
        await post("/typed", new Uint8Array([104, 105]), { "content-type": "application/x-custom" }),
      ];
      ctx.ui.notify(`uploaded ${statuses.length}`, "info");
    },
  });
}
"#;

#[test]
fn fetch_sends_bytes_blobs_forms_and_streams() {
    let server = MockServer::start_blocking(WireFormat::OpenAiCompletions, Vec::new()).unwrap();
    let sb = sandbox(&server);
    std::fs::write(sb.project.join("uploads.ts"), UPLOADS).unwrap();
    let command = format!("/upload {}", server.root_url());
    let run = knightcode(&sb, &["-p", "-e", "uploads.ts", &command]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("Error"), "{}", run.stderr);

    let requests = server.requests();
    let find = |path: &str| {
        requests
            .iter()
            .find(|r| r.path == path)
            .unwrap_or_else(|| panic!("no request to {path}: {requests:?}"))
    };
    let text = |path: &str| match &find(path).body {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    assert_eq!(text("/bytes"), "raw bytes");
    assert_eq!(text("/blob"), r#"{"from":"blob"}"#);
    assert_eq!(
        find("/blob").header("content-type"),
        Some("application/json")
    );
    assert_eq!(text("/stream"), "streamed text");
    assert_eq!(text("/typed"), "hi");
    assert_eq!(
        find("/typed").header("content-type"),
        Some("application/x-custom")
    );

    let form = find("/form");
    let content_type = form.header("content-type").unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("{content_type}"));
    let body = text("/form");
    assert!(
        body.contains(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nplain value\r\n"
        )),
        "{body}"
    );
    assert!(
        body.contains("Content-Disposition: form-data; name=\"upload\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n"),
        "{body}"
    );
    assert!(body.ends_with(&format!("--{boundary}--\r\n")), "{body}");
}
