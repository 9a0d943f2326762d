//! How the engine's parts read as ACP `session/update`s: tool calls with
//! their kind, title, status, locations and content (diffs for edits, the
//! output for commands), the todo list as a plan, and a stored transcript
//! replayed message by message.

use crate::{Message, Part, Role, ToolPart, ToolState};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

/// The kind an editor shows a tool as (an icon, a grouping).
pub(crate) fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read" => ToolKind::Read,
        "edit" | "write" | "patch" | "multiedit" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        "grep" | "glob" | "list" | "codesearch" | "websearch" => ToolKind::Search,
        "webfetch" => ToolKind::Fetch,
        "todowrite" | "todoread" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

fn status_of(state: &ToolState) -> ToolCallStatus {
    match state {
        ToolState::Pending { .. } => ToolCallStatus::Pending,
        ToolState::Running { .. } => ToolCallStatus::InProgress,
        ToolState::Completed { .. } => ToolCallStatus::Completed,
        ToolState::Error { .. } => ToolCallStatus::Failed,
        _ => ToolCallStatus::Pending,
    }
}

fn text_field<'a>(input: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| input.get(*key).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

/// The path a call works on, as the model wrote it.
fn path_of(input: &Value) -> Option<&str> {
    text_field(input, &["filePath", "file_path", "path"])
}

/// The tool's own title once it has one, else the tool and what it works
/// on (`bash: cargo test`, `edit: src/lib.rs`).
fn title_of(part: &ToolPart) -> String {
    let own = match &part.state {
        ToolState::Running { title, .. } => title.clone(),
        ToolState::Completed { title, .. } => Some(title.clone()),
        _ => None,
    };
    if let Some(title) = own.filter(|t| !t.is_empty()) {
        return title;
    }
    let input = part.state.input();
    match text_field(input, &["command", "description"])
        .or_else(|| path_of(input))
        .or_else(|| text_field(input, &["pattern", "url", "query"]))
    {
        Some(subject) => format!("{}: {subject}", part.tool),
        None => part.tool.clone(),
    }
}

/// Where the call reads or writes: its path, and the first line for a
/// read that starts at an offset.
fn locations_of(part: &ToolPart) -> Vec<ToolCallLocation> {
    let input = part.state.input();
    let Some(path) = path_of(input) else {
        return Vec::new();
    };
    let line = input
        .get("offset")
        .and_then(Value::as_u64)
        .and_then(|line| u32::try_from(line).ok());
    vec![ToolCallLocation::new(path).line(line)]
}

/// The diff an edit or write makes, from its input (the strings the
/// model asked to replace, or the whole new content).
fn diff_of(part: &ToolPart) -> Option<Diff> {
    let input = part.state.input();
    let path = path_of(input)?;
    match part.tool.as_str() {
        "edit" => {
            let new = text_field(input, &["newString", "new_string"]).unwrap_or_default();
            let old = text_field(input, &["oldString", "old_string"]);
            Some(Diff::new(path, new).old_text(old.map(str::to_string)))
        }
        "write" => Some(Diff::new(
            path,
            text_field(input, &["content"]).unwrap_or_default(),
        )),
        _ => None,
    }
}

/// What the call produced so far: the diff of an edit, then the output
/// (a command's output as a console block) or the error.
fn content_of(part: &ToolPart) -> Vec<ToolCallContent> {
    let mut content: Vec<ToolCallContent> = Vec::new();
    if let Some(diff) = diff_of(part) {
        content.push(diff.into());
    }
    match &part.state {
        ToolState::Completed { output, .. } if !output.is_empty() => {
            let text = if part.tool == "bash" {
                format!("```console\n{}\n```", output.trim_end())
            } else if content.is_empty() {
                output.clone()
            } else {
                // The diff says what an edit did; its "applied" line adds nothing.
                return content;
            };
            content.push(ContentBlock::from(text).into());
        }
        ToolState::Error { error, .. } => content.push(ContentBlock::from(error.clone()).into()),
        _ => {}
    }
    content
}

fn raw_output_of(state: &ToolState) -> Option<Value> {
    match state {
        ToolState::Completed { output, .. } => Some(Value::String(output.clone())),
        ToolState::Error { error, .. } => Some(Value::String(error.clone())),
        _ => None,
    }
}

/// The first report of a call (`tool_call`).
pub(crate) fn tool_call(part: &ToolPart) -> ToolCall {
    ToolCall::new(part.call_id.clone(), title_of(part))
        .kind(kind_of(&part.tool))
        .status(status_of(&part.state))
        .locations(locations_of(part))
        .content(content_of(part))
        .raw_input(Some(part.state.input().clone()))
        .raw_output(raw_output_of(&part.state))
}

/// A later report of the call (`tool_call_update`), with every field as
/// it stands now.
pub(crate) fn tool_call_update(part: &ToolPart) -> ToolCallUpdate {
    let fields = ToolCallUpdateFields::new()
        .kind(kind_of(&part.tool))
        .status(status_of(&part.state))
        .title(title_of(part))
        .locations(locations_of(part))
        .content(content_of(part))
        .raw_input(Some(part.state.input().clone()))
        .raw_output(raw_output_of(&part.state));
    ToolCallUpdate::new(part.call_id.clone(), fields)
}

/// The todo list a finished `todowrite` call set, as a plan (the whole
/// list: a plan update replaces the client's).
pub(crate) fn plan_of(part: &ToolPart) -> Option<Plan> {
    if part.tool != "todowrite" || !matches!(part.state, ToolState::Completed { .. }) {
        return None;
    }
    let todos = part.state.input().get("todos")?.as_array()?;
    let entries = todos
        .iter()
        .filter_map(|todo| {
            let content = todo.get("content")?.as_str()?;
            let status = match todo.get("status").and_then(Value::as_str) {
                Some("in_progress") => PlanEntryStatus::InProgress,
                Some("completed") | Some("cancelled") => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            let priority = match todo.get("priority").and_then(Value::as_str) {
                Some("high") => PlanEntryPriority::High,
                Some("low") => PlanEntryPriority::Low,
                _ => PlanEntryPriority::Medium,
            };
            Some(PlanEntry::new(content, priority, status))
        })
        .collect();
    Some(Plan::new(entries))
}

/// A stored message as the updates that show it again: its text as user
/// or agent chunks, its reasoning as thought chunks, each tool call in its
/// final state (and the plan a todo call set).
pub(crate) fn replay(message: &Message) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text {
                text, synthetic, ..
            } if !synthetic && !text.is_empty() => {
                let chunk = ContentChunk::new(ContentBlock::from(text.clone()));
                updates.push(match message.role {
                    Role::User => SessionUpdate::UserMessageChunk(chunk),
                    _ => SessionUpdate::AgentMessageChunk(chunk),
                });
            }
            Part::Reasoning { text, .. } if !text.is_empty() => {
                updates.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                    ContentBlock::from(text.clone()),
                )));
            }
            Part::Tool(tool) => {
                updates.push(SessionUpdate::ToolCall(tool_call(tool)));
                if let Some(plan) = plan_of(tool) {
                    updates.push(SessionUpdate::Plan(plan));
                }
            }
            _ => {}
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timing;
    use serde_json::json;

    fn part(tool: &str, state: ToolState) -> ToolPart {
        ToolPart {
            id: "prt_1".into(),
            call_id: "call_1".into(),
            tool: tool.into(),
            state,
            provider_metadata: None,
        }
    }

    fn completed(input: Value, output: &str) -> ToolState {
        ToolState::Completed {
            input,
            output: output.into(),
            title: String::new(),
            metadata: json!({}),
            time: Timing::default(),
            compacted: false,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn an_edit_carries_its_diff_and_location() {
        let edit = part(
            "edit",
            completed(
                json!({"filePath": "src/a.rs", "oldString": "x", "newString": "y"}),
                "Edit applied successfully.",
            ),
        );
        let call = serde_json::to_value(tool_call(&edit)).unwrap();
        assert_eq!(call["kind"], "edit");
        assert_eq!(call["status"], "completed");
        assert_eq!(call["title"], "edit: src/a.rs");
        assert_eq!(call["locations"][0]["path"], "src/a.rs");
        assert_eq!(call["content"].as_array().unwrap().len(), 1);
        assert_eq!(call["content"][0]["type"], "diff");
        assert_eq!(call["content"][0]["oldText"], "x");
        assert_eq!(call["content"][0]["newText"], "y");
    }

    #[test]
    fn a_command_shows_its_output() {
        let bash = part("bash", completed(json!({"command": "ls"}), "a\nb\n"));
        let update = serde_json::to_value(tool_call_update(&bash)).unwrap();
        assert_eq!(update["kind"], "execute");
        assert_eq!(update["title"], "bash: ls");
        assert_eq!(
            update["content"][0]["content"]["text"],
            "```console\na\nb\n```"
        );
    }

    #[test]
    fn todos_become_a_plan() {
        let todo = part(
            "todowrite",
            completed(
                json!({"todos": [
                    {"content": "one", "status": "in_progress", "priority": "high"},
                    {"content": "two", "status": "pending", "priority": "low"},
                ]}),
                "[]",
            ),
        );
        let plan = serde_json::to_value(plan_of(&todo).unwrap()).unwrap();
        assert_eq!(plan["entries"][0]["content"], "one");
        assert_eq!(plan["entries"][0]["status"], "in_progress");
        assert_eq!(plan["entries"][0]["priority"], "high");
        assert_eq!(plan["entries"][1]["status"], "pending");
    }
}
