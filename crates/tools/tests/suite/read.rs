use crate::common;

use common::{call, context, failure, text, tool};
use knightcode_agent::tool::ToolError;
use knightcode_protocol::ContentBlock;
use serde_json::json;

fn numbered(count: usize) -> String {
    (1..=count)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn reads_a_small_file_as_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let out = call(tool("read").as_ref(), dir.path(), json!({"path": "a.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "one\ntwo\n");
    assert_eq!(out.details, Some(json!({"lineCount": 2})));
}

#[tokio::test]
async fn offset_and_limit_page_with_a_continuation_notice() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), numbered(10)).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "n.txt", "offset": 3, "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&out),
        "3\n4\n\n[6 more lines in file. Use offset=5 to continue.]"
    );
    assert_eq!(out.details, Some(json!({"lineCount": 2})));

    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "n.txt", "offset": 9}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "9\n10");
}

#[tokio::test]
async fn long_files_stop_at_the_line_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), numbered(2500)).unwrap();
    let out = call(tool("read").as_ref(), dir.path(), json!({"path": "n.txt"}))
        .await
        .unwrap();
    let body = text(&out);
    assert!(body.starts_with("1\n2\n"));
    assert!(
        body.ends_with("\n2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    );
    let details = out.details.unwrap();
    assert_eq!(details["lineCount"], 2000);
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["totalLines"], 2500);
    assert_eq!(details["truncation"]["maxBytes"], 51200);
}

#[tokio::test]
async fn wide_files_stop_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let line = "x".repeat(1000);
    let content = vec![line; 100].join("\n");
    std::fs::write(dir.path().join("w.txt"), content).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "w.txt", "offset": 2}),
    )
    .await
    .unwrap();
    assert!(
        text(&out).ends_with(
            "\n\n[Showing lines 2-52 of 100 (50.0KB limit). Use offset=53 to continue.]"
        )
    );
    assert_eq!(out.details.unwrap()["truncation"]["truncatedBy"], "bytes");
}

#[tokio::test]
async fn an_oversized_first_line_points_to_bash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "y".repeat(60_000)).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "big.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&out),
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' big.txt | head -c 51200]"
    );
    let details = out.details.unwrap();
    assert_eq!(details["lineCount"], 0);
    assert_eq!(details["truncation"]["firstLineExceedsLimit"], true);
}

#[tokio::test]
async fn offset_beyond_the_end_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.txt"), "a\nb\nc").unwrap();
    let message = failure(
        call(
            tool("read").as_ref(),
            dir.path(),
            json!({"path": "s.txt", "offset": 10}),
        )
        .await,
    );
    assert_eq!(message, "Offset 10 is beyond end of file (3 lines total)");
    // The offset is echoed as JavaScript prints numbers, exponent and all.
    let message = failure(
        call(
            tool("read").as_ref(),
            dir.path(),
            json!({"path": "s.txt", "offset": 1e21}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Offset 1e+21 is beyond end of file (3 lines total)"
    );
}

#[tokio::test]
async fn a_missing_file_reports_the_os_error() {
    let dir = tempfile::tempdir().unwrap();
    let message = failure(
        call(
            tool("read").as_ref(),
            dir.path(),
            json!({"path": "nope.txt"}),
        )
        .await,
    );
    assert_eq!(
        message,
        format!(
            "ENOENT: no such file or directory, access '{}'",
            dir.path().join("nope.txt").display()
        )
    );
}

#[tokio::test]
async fn a_directory_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let message = failure(call(tool("read").as_ref(), dir.path(), json!({"path": "sub"})).await);
    assert_eq!(message, "EISDIR: illegal operation on a directory, read");
}

#[tokio::test]
async fn a_binary_file_is_named_as_one_instead_of_dumped() {
    // The reference decodes it lossily and returns up to 50 KB of noise; a NUL byte in the
    // first bytes (git's test) makes it a notice with the size and how to look inside.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.bin"), b"ab\x00\xff\xfecd").unwrap();
    let out = call(tool("read").as_ref(), dir.path(), json!({"path": "b.bin"}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "[b.bin is a binary file (7B); read shows text files and images only. Use bash to inspect it (for example: xxd b.bin | head).]"
    );
    assert_eq!(out.details, Some(json!({"binary": true, "size": 7})));
}

#[tokio::test]
async fn a_huge_sparse_file_is_not_loaded() {
    // 2 GiB of holes: reading it whole took 43 s and 6 GB of memory, and aborted the
    // process under a memory limit.
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("sparse.img")).unwrap();
    file.set_len(2 << 30).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "sparse.img"}),
    )
    .await
    .unwrap();
    assert!(
        text(&out).starts_with("[sparse.img is a binary file (2048.0MB)"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn a_large_text_file_is_paged_from_one_pass_over_it() {
    // 300,000 lines (about 2 MB): the window near the end and the total both come from
    // one streaming pass, with only the window kept.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.log"), numbered(300_000)).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "big.log", "offset": 299_998, "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&out),
        "299998\n299999\n\n[1 more lines in file. Use offset=300000 to continue.]"
    );
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "big.log", "offset": 100_001}),
    )
    .await
    .unwrap();
    assert!(
        text(&out)
            .ends_with("[Showing lines 100001-102000 of 300000. Use offset=102001 to continue.]"),
        "{}",
        &text(&out)[text(&out).len() - 200..]
    );
}

/// The read tool asking `policy` about images.
fn read_with(
    policy: knightcode_tools::ImagePolicy,
) -> std::sync::Arc<dyn knightcode_agent::tool::Tool> {
    let config = knightcode_tools::ToolsConfig {
        images: Some(std::sync::Arc::new(move || policy.clone())),
        ..knightcode_tools::ToolsConfig::default()
    };
    common::tool_with("read", config)
}

/// A PNG of `width` x `height` with varied pixels (so it does not compress to nothing).
fn png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

fn image_block(
    output: &knightcode_agent::tool::ToolOutput,
) -> &knightcode_protocol::content::ImageContent {
    match output.content.get(1) {
        Some(ContentBlock::Image(image)) => image,
        other => panic!("expected an image block, got {other:?}"),
    }
}

fn decoded_size(image: &knightcode_protocol::content::ImageContent) -> (u32, u32) {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    let decoded = image::load_from_memory(&bytes).unwrap();
    (decoded.width(), decoded.height())
}

#[tokio::test]
async fn images_are_recognised_by_content_and_attached() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = png(64, 48);
    // The name says text; the bytes say PNG.
    std::fs::write(dir.path().join("picture.txt"), &bytes).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "picture.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(out.content.len(), 2);
    assert_eq!(
        out.content[0].as_text(),
        Some("Read image file [image/png]")
    );
    let image = image_block(&out);
    assert_eq!(image.mime_type, "image/png");
    // Small enough: sent byte for byte.
    use base64::Engine;
    assert_eq!(
        image.data,
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    assert_eq!(out.details, None);

    // A text file starting with "BM" is not a bitmap.
    std::fs::write(dir.path().join("bm.txt"), "BMW and Mini\n").unwrap();
    let out = call(tool("read").as_ref(), dir.path(), json!({"path": "bm.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "BMW and Mini\n");
}

#[tokio::test]
async fn model_written_paths_are_forgiven() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "n").unwrap();
    std::fs::write(
        dir.path().join("Shot 2024-01-01 at 10.00.00\u{202F}AM.png"),
        "not really a png",
    )
    .unwrap();
    let read = tool("read");
    let out = call(read.as_ref(), dir.path(), json!({"path": "@notes.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "n");
    let url = format!("file://{}", dir.path().join("notes.txt").display());
    let out = call(read.as_ref(), dir.path(), json!({"path": url}))
        .await
        .unwrap();
    assert_eq!(text(&out), "n");
    let out = call(
        read.as_ref(),
        dir.path(),
        json!({"path": "Shot 2024-01-01 at 10.00.00 AM.png"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "not really a png");
}

#[tokio::test]
async fn an_aborted_call_reports_operation_aborted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let ctx = context(dir.path());
    ctx.cancel.cancel();
    let result = tool("read").execute(json!({"path": "a.txt"}), ctx).await;
    assert_eq!(
        result,
        Err(ToolError::Aborted("Operation aborted".to_owned()))
    );
}

#[test]
fn definition_matches_the_reference_schema() {
    let read = tool("read");
    let definition = read.definition();
    assert_eq!(definition.name, "read");
    assert_eq!(
        definition.prompt_snippet.as_deref(),
        Some("Read file contents")
    );
    assert_eq!(
        definition.parameters["properties"]["offset"]["type"],
        json!("number")
    );
    assert_eq!(definition.parameters["required"], json!(["path"]));
}

#[tokio::test]
async fn large_images_are_scaled_to_fit_with_a_coordinate_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wide.png"), png(3000, 120)).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "wide.png"}),
    )
    .await
    .unwrap();
    let image = image_block(&out);
    assert_eq!(decoded_size(image), (2000, 80));
    assert_eq!(
        out.content[0].as_text().unwrap(),
        format!(
            "Read image file [{}]\n[Image: original 3000x120, displayed at 2000x80. Multiply coordinates by 1.50 to map to original image.]",
            image.mime_type
        )
    );
}

#[tokio::test]
async fn the_models_limits_and_vision_come_from_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("photo.png"), png(400, 300)).unwrap();
    let policy = knightcode_tools::ImagePolicy {
        auto_resize: true,
        limits: knightcode_tools::ResizeLimits {
            max_width: 200,
            ..knightcode_tools::ResizeLimits::default()
        },
        model_accepts_images: Some(false),
    };
    let out = call(
        read_with(policy).as_ref(),
        dir.path(),
        json!({"path": "photo.png"}),
    )
    .await
    .unwrap();
    assert_eq!(decoded_size(image_block(&out)), (200, 150));
    let note = out.content[0].as_text().unwrap();
    assert!(
        note.ends_with(
            "Multiply coordinates by 2.00 to map to original image.]\n[Current model does not support images. The image will be omitted from this request.]"
        ),
        "{note}"
    );
}

#[tokio::test]
async fn auto_resize_off_sends_the_file_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    // Not even a valid PNG past its signature: nothing is decoded when resizing is off.
    let bytes: Vec<u8> = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3].to_vec();
    std::fs::write(dir.path().join("raw.png"), &bytes).unwrap();
    let policy = knightcode_tools::ImagePolicy {
        auto_resize: false,
        ..knightcode_tools::ImagePolicy::default()
    };
    let out = call(
        read_with(policy).as_ref(),
        dir.path(),
        json!({"path": "raw.png"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.content[0].as_text(),
        Some("Read image file [image/png]")
    );
    assert_eq!(image_block(&out).data, "iVBORw0KGgoBAgM=");
}

#[tokio::test]
async fn an_image_that_cannot_be_decoded_is_omitted_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = png(50, 50);
    bytes.truncate(60);
    std::fs::write(dir.path().join("broken.png"), &bytes).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "broken.png"}),
    )
    .await
    .unwrap();
    assert_eq!(out.content.len(), 1);
    assert_eq!(
        text(&out),
        "Read image file [image/png]\n[Image omitted: could not be resized below the inline image size limit.]"
    );
}

#[tokio::test]
async fn bitmaps_are_sent_as_png_which_every_provider_takes() {
    let dir = tempfile::tempdir().unwrap();
    let pixels = image::RgbImage::from_pixel(30, 20, image::Rgb([10, 200, 30]));
    let mut bmp = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut bmp, image::ImageFormat::Bmp)
        .unwrap();
    std::fs::write(dir.path().join("icon.bmp"), bmp.into_inner()).unwrap();
    let out = call(
        tool("read").as_ref(),
        dir.path(),
        json!({"path": "icon.bmp"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.content[0].as_text(),
        Some("Read image file [image/png]")
    );
    let image = image_block(&out);
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(decoded_size(image), (30, 20));
}
