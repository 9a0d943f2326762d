//! The built-in tools report what they change to the checkpoints: a step
//! that writes one file, edits another, patches a third and runs a command
//! that modifies a fourth, deletes a fifth and creates a sixth is taken
//! back exactly and put back exactly.
#![cfg(unix)]

use std::fs;
use std::sync::Arc;

use agentgate_core::{Checkpoints, Direction, Tool, ToolEffects};
use agentgate_tools::{ApplyPatchTool, BashTool, EditTool, FsCheckpoints, ReadTool, WriteTool};
use serde_json::json;

use super::support::{recording_context, temp_dir};

#[tokio::test]
async fn every_tool_s_change_is_recorded_and_reverted() {
    let dir = temp_dir("checkpoint", "tools");
    let store = temp_dir("checkpoint", "tools-store");
    for (name, text) in [
        ("edit.txt", "one\n"),
        ("patch.txt", "a\n"),
        ("cmd.txt", "old\n"),
        ("gone.txt", "bye\n"),
    ] {
        fs::write(dir.join(name), text).unwrap();
    }
    let checkpoints = Arc::new(FsCheckpoints::new(&store));
    let (ctx, _) = recording_context(&dir, true);
    let ctx = ctx.with_checkpoints(checkpoints.clone());
    let write = json!({"filePath": "new/write.txt", "content": "written\n"});
    WriteTool.execute(write, &ctx).await.unwrap();
    let edit = json!({"filePath": "edit.txt", "oldString": "one", "newString": "two"});
    EditTool.execute(edit, &ctx).await.unwrap();
    let patch = "*** Begin Patch\n*** Update File: patch.txt\n@@\n-a\n+b\n*** End Patch";
    ApplyPatchTool
        .execute(json!({"patchText": patch}), &ctx)
        .await
        .unwrap();
    let command = "echo new > cmd.txt && rm gone.txt && echo made > made.txt";
    let bash = BashTool::new();
    bash.execute(json!({"command": command, "description": "change"}), &ctx)
        .await
        .unwrap();

    let changes = checkpoints.take(&dir, "ses_test").await.unwrap();
    let paths: Vec<&str> = changes.iter().map(|change| change.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "cmd.txt",
            "edit.txt",
            "gone.txt",
            "made.txt",
            "new",
            "new/write.txt",
            "patch.txt"
        ]
    );
    checkpoints
        .apply(&dir, &changes, Direction::Back, false)
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(dir.join("edit.txt")).unwrap(), "one\n");
    assert_eq!(fs::read_to_string(dir.join("patch.txt")).unwrap(), "a\n");
    assert_eq!(fs::read_to_string(dir.join("cmd.txt")).unwrap(), "old\n");
    assert_eq!(fs::read_to_string(dir.join("gone.txt")).unwrap(), "bye\n");
    assert!(!dir.join("made.txt").exists() && !dir.join("new").exists());
    checkpoints
        .apply(&dir, &changes, Direction::Forward, false)
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(dir.join("new/write.txt")).unwrap(),
        "written\n"
    );
    assert_eq!(fs::read_to_string(dir.join("made.txt")).unwrap(), "made\n");
    assert!(!dir.join("gone.txt").exists());
    let _ = fs::remove_dir_all(&dir);
    let _ = fs::remove_dir_all(&store);
}

#[test]
fn built_in_tools_declare_their_effects() {
    let tools: [&dyn Tool; 5] = [
        &WriteTool,
        &EditTool,
        &ApplyPatchTool,
        &ReadTool::default(),
        &BashTool::new(),
    ];
    for tool in tools {
        assert_eq!(tool.effects(), ToolEffects::Declared, "{}", tool.id());
    }
}
