//! What an MCP result becomes for the model: text in
//! [`ToolOutput::output`], images, audio and binary resources as
//! attachments in `metadata.attachments` (`{type: "file", mime, url:
//! "data:..."}`, opencode's file parts), `isError` as a failed call.

use agentgate_core::{ToolError, ToolOutput};
use serde_json::{Map, Value, json};

/// The parts of one MCP result (a `tools/call` result's `content`, or a
/// `resources/read` result's `contents`).
#[derive(Debug, Default)]
pub(crate) struct Mapped {
    /// Text blocks, in order.
    pub texts: Vec<String>,
    /// File attachments.
    pub attachments: Vec<Value>,
}

impl Mapped {
    /// The text the model sees: the text blocks joined by blank lines.
    pub fn output(&self) -> String {
        self.texts.join("\n\n")
    }
}

/// Maps a `tools/call` result (as JSON) to the call's output, or to a
/// failure when the server flagged it with `isError`.
pub(crate) fn tool_result(
    result: &Value,
    title: &str,
    base_metadata: Map<String, Value>,
) -> Result<ToolOutput, ToolError> {
    let mut mapped = Mapped::default();
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for block in blocks {
            content_block(block, &mut mapped);
        }
    }
    if mapped.texts.is_empty()
        && mapped.attachments.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        mapped.texts.push(structured.to_string());
    }
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if is_error {
        let text = mapped.output();
        return Err(ToolError::failed(if text.is_empty() {
            format!("{title} failed (the MCP server reported an error without a message)")
        } else {
            text
        }));
    }
    Ok(finish(mapped, title, base_metadata))
}

/// Maps a `resources/read` result (as JSON): every text content, and
/// blobs as attachments named after their URI.
pub(crate) fn resource_contents(
    result: &Value,
    title: &str,
    base_metadata: Map<String, Value>,
) -> ToolOutput {
    let mut mapped = Mapped::default();
    if let Some(contents) = result.get("contents").and_then(Value::as_array) {
        for contents in contents {
            resource(contents, &mut mapped);
        }
    }
    finish(mapped, title, base_metadata)
}

fn finish(mapped: Mapped, title: &str, mut metadata: Map<String, Value>) -> ToolOutput {
    let output = mapped.output();
    if !mapped.attachments.is_empty() {
        metadata.insert("attachments".into(), Value::Array(mapped.attachments));
    }
    ToolOutput::text(output)
        .with_title(title)
        .with_metadata(Value::Object(metadata))
}

fn content_block(block: &Value, mapped: &mut Mapped) {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => {
            if let Some(text) = block.get("text").and_then(Value::as_str) {
                mapped.texts.push(text.to_string());
            }
        }
        "image" | "audio" => {
            let mime = block
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream");
            let data = block.get("data").and_then(Value::as_str).unwrap_or("");
            mapped.texts.push(format!("[{kind} attachment: {mime}]"));
            mapped.attachments.push(file(mime, data, None));
        }
        "resource" => {
            if let Some(contents) = block.get("resource") {
                resource(contents, mapped);
            }
        }
        "resource_link" => {
            let uri = block.get("uri").and_then(Value::as_str).unwrap_or("");
            let name = block.get("name").and_then(Value::as_str).unwrap_or(uri);
            let mut line = format!("Resource link: {name} ({uri})");
            if let Some(description) = block.get("description").and_then(Value::as_str) {
                line.push_str(": ");
                line.push_str(description);
            }
            mapped.texts.push(line);
        }
        _ => mapped.texts.push(block.to_string()),
    }
}

fn resource(contents: &Value, mapped: &mut Mapped) {
    let uri = contents.get("uri").and_then(Value::as_str);
    if let Some(text) = contents.get("text").and_then(Value::as_str) {
        mapped.texts.push(text.to_string());
    }
    if let Some(blob) = contents.get("blob").and_then(Value::as_str) {
        let mime = contents
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream");
        mapped.texts.push(format!(
            "[resource attachment: {} ({mime})]",
            uri.unwrap_or("unnamed")
        ));
        mapped.attachments.push(file(mime, blob, uri));
    }
}

fn file(mime: &str, base64: &str, filename: Option<&str>) -> Value {
    let mut file = json!({
        "type": "file",
        "mime": mime,
        "url": format!("data:{mime};base64,{base64}"),
    });
    if let (Some(name), Value::Object(map)) = (filename, &mut file) {
        map.insert("filename".into(), Value::String(name.to_string()));
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_images_and_resources_map_to_output_and_attachments() {
        let result = json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC", "mimeType": "application/zip"}},
            {"type": "resource_link", "uri": "demo://x", "name": "x"}
        ]});
        let output = tool_result(&result, "srv_tool", Map::new()).unwrap();
        assert_eq!(
            output.output,
            "first\n\n[image attachment: image/png]\n\ninside\n\n[resource attachment: file:///b.bin (application/zip)]\n\nResource link: x (demo://x)"
        );
        assert_eq!(output.title, "srv_tool");
        assert_eq!(
            output.metadata["attachments"],
            json!([
                {"type": "file", "mime": "image/png", "url": "data:image/png;base64,iVBOR"},
                {"type": "file", "mime": "application/zip", "url": "data:application/zip;base64,AAEC", "filename": "file:///b.bin"}
            ])
        );
    }

    #[test]
    fn is_error_fails_the_call_with_the_servers_text() {
        let result =
            json!({"content": [{"type": "text", "text": "no such repo"}], "isError": true});
        let error = tool_result(&result, "gh_get", Map::new()).unwrap_err();
        assert_eq!(error, ToolError::failed("no such repo"));
        let bare = json!({"content": [], "isError": true});
        assert!(
            tool_result(&bare, "gh_get", Map::new())
                .unwrap_err()
                .to_string()
                .contains("gh_get failed")
        );
    }

    #[test]
    fn structured_content_is_shown_when_there_is_no_content() {
        let result = json!({"content": [], "structuredContent": {"sum": 3}});
        let output = tool_result(&result, "t", Map::new()).unwrap();
        assert_eq!(output.output, r#"{"sum":3}"#);
    }
}
