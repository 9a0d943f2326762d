//! The read tool and images: returned as an image attachment when the
//! model accepts images, refused as binary otherwise, and never opened
//! before the same permission requests as any read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recording_context, temp_dir};

use agentgate_core::{MAX_IMAGE_BYTES, Tool};
use agentgate_tools::ReadTool;
use serde_json::json;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

#[tokio::test]
async fn a_vision_model_gets_the_image_as_an_attachment() {
    let dir = temp_dir("file", "read-image");
    std::fs::write(dir.join("shot.png"), PNG).unwrap();
    let (ctx, seen) = recording_context(&dir, true);
    let ctx = ctx.with_images(true);
    let out = ReadTool::default()
        .execute(json!({"filePath": "shot.png"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.output, "Image read successfully");
    assert_eq!(out.title, "shot.png");
    assert_eq!(out.attachments.len(), 1);
    let image = &out.attachments[0];
    assert_eq!(image.mime, "image/png");
    assert_eq!(
        image.url,
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA="
    );
    let asked: Vec<(String, Vec<String>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.permission.clone(), r.patterns.clone()))
        .collect();
    assert_eq!(asked, [("read".to_string(), vec!["shot.png".to_string()])]);
}

#[tokio::test]
async fn a_model_without_image_input_is_refused_as_before() {
    let dir = temp_dir("file", "read-image-text-model");
    std::fs::write(dir.join("shot.png"), PNG).unwrap();
    let (ctx, _) = recording_context(&dir, true);
    let error = ReadTool::default()
        .execute(json!({"filePath": "shot.png"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        error.to_string().starts_with("Cannot read binary file:"),
        "{error}"
    );
}

#[tokio::test]
async fn a_rejected_read_or_outside_path_asks_before_the_image_is_read() {
    let dir = temp_dir("file", "read-image-in");
    let outside = temp_dir("file", "read-image-out");
    std::fs::write(outside.join("secret.png"), PNG).unwrap();
    let (ctx, seen) = recording_context(&dir, false);
    let ctx = ctx.with_images(true);
    let path = outside.join("secret.png");
    let error = ReadTool::default()
        .execute(json!({"filePath": path}), &ctx)
        .await
        .unwrap_err();
    assert!(error.stops_loop(), "{error}");
    let asked: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.permission.clone())
        .collect();
    assert_eq!(asked, ["external_directory"], "rejected at the first ask");
}

#[tokio::test]
async fn an_image_over_the_limit_is_refused() {
    let dir = temp_dir("file", "read-image-big");
    let mut big = PNG.to_vec();
    big.resize(MAX_IMAGE_BYTES as usize + 1, 0);
    std::fs::write(dir.join("big.png"), big).unwrap();
    let (ctx, _) = recording_context(&dir, true);
    let ctx = ctx.with_images(true);
    let error = ReadTool::default()
        .execute(json!({"filePath": "big.png"}), &ctx)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("big.png"), "{error}");
    assert!(
        error.to_string().contains(&MAX_IMAGE_BYTES.to_string()),
        "{error}"
    );
}
