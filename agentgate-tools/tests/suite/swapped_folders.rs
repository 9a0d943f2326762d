//! A process racing the file tools (one the model started in the
//! background): a folder of the project exchanged again and again with a
//! link to a folder outside it, one atomic `renameat2` each. Everything
//! inside the project is allowed and `external_directory` is rejected, so
//! no call may read, name or change anything outside (`SECRET` is in
//! every outside file and one outside name); a call that meets the link
//! may fail, and one that asked about the project must act on the
//! project.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recorder, temp_dir};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agentgate_core::{Tool, ToolContext};
use agentgate_permission::{PermissionConfig, PermissionGate, Ruleset, from_config_with_home};
use agentgate_tools::{
    ApplyPatchTool, EditTool, GlobTool, GrepTool, ListTool, ReadTool, WriteTool,
};
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
use serde_json::{Value, json};

const FILES: usize = 8;

fn context(dir: &Path) -> ToolContext {
    let config = json!({"*": "allow", "external_directory": {"*": "deny"}});
    let config = PermissionConfig::from_value(&config, "permission").unwrap();
    let rules: Ruleset = from_config_with_home(&config, "/home/u");
    let permissions = PermissionGate::new();
    let _ = recorder(false).install(&permissions);
    ToolContext::new("ses_test", "msg_test", "call_test", permissions)
        .with_directories(dir.to_path_buf(), dir.to_path_buf())
        .with_ruleset(std::sync::Arc::new(rules))
}

/// `project/sub` with inside files, `outside` with secrets of the same
/// names, and `project/swap`, a link to `outside`.
fn scene() -> (PathBuf, PathBuf) {
    let base = temp_dir("swapped", "folders");
    let (project, outside) = (base.join("project"), base.join("outside"));
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    for i in 0..FILES {
        std::fs::write(project.join(format!("sub/f{i}")), "inside\n").unwrap();
        std::fs::write(outside.join(format!("f{i}")), "SECRET\n").unwrap();
    }
    std::fs::write(outside.join("SECRET_NAME"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("swap")).unwrap();
    (project, outside)
}

/// What `outside` holds: every name and content.
fn snapshot(outside: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(outside)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            (entry.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    files
}

/// Runs `calls` while the racer exchanges `sub` and `swap`; what each
/// call answered (its output or its error), and how many exchanges
/// happened.
async fn racing(
    project: &Path,
    calls: Vec<(Box<dyn Tool>, Value)>,
    rounds: usize,
) -> (Vec<String>, usize) {
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let swaps = std::sync::Arc::new(AtomicUsize::new(0));
    let racer = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (a, b) = (project.join("sub"), project.join("swap"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat2(AT_FDCWD, &a, AT_FDCWD, &b, RenameFlags::RENAME_EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let ctx = context(project);
    let mut outputs = Vec::new();
    for _ in 0..rounds {
        for (tool, input) in &calls {
            // What the model reads: the output, or the error.
            match tool.execute(input.clone(), &ctx).await {
                Ok(out) => outputs.push(out.output),
                Err(error) => outputs.push(error.to_string()),
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    (outputs, swaps.load(Ordering::Relaxed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tool_reads_names_or_changes_outside_through_a_swapped_folder() {
    let (project, outside) = scene();
    let before = snapshot(&outside);
    let mut calls: Vec<(Box<dyn Tool>, Value)> = Vec::new();
    for i in 0..FILES {
        calls.push((
            Box::new(ReadTool::default()),
            json!({"filePath": format!("sub/f{i}")}),
        ));
    }
    calls.push((
        Box::new(WriteTool),
        json!({"filePath": "sub/f1", "content": "written\n"}),
    ));
    calls.push((
        Box::new(WriteTool),
        json!({"filePath": "sub/new", "content": "planted\n"}),
    ));
    calls.push((
        Box::new(EditTool),
        json!({"filePath": "sub/f2", "oldString": "\n", "newString": " edited\n"}),
    ));
    calls.push((
        Box::new(ApplyPatchTool),
        json!({"patchText": "*** Begin Patch\n*** Add File: sub/patched\n+patched\n*** Delete File: sub/f3\n*** End Patch"}),
    ));
    calls.push((
        Box::new(GrepTool::default()),
        json!({"pattern": "SECRET|inside"}),
    ));
    calls.push((Box::new(GlobTool::default()), json!({"pattern": "**/*"})));
    calls.push((Box::new(ListTool::default()), json!({})));
    // The swapped folder as the call's own path: a search root, a listing.
    calls.push((Box::new(ReadTool::default()), json!({"filePath": "sub"})));
    // A missing file: the names "not found" suggests.
    calls.push((
        Box::new(ReadTool::default()),
        json!({"filePath": "sub/name"}),
    ));
    for path in ["sub", "sub/f0"] {
        let input = json!({"pattern": "SECRET|inside", "path": path});
        calls.push((Box::new(GrepTool::default()), input));
    }
    calls.push((
        Box::new(GlobTool::default()),
        json!({"pattern": "*", "path": "sub"}),
    ));
    calls.push((Box::new(ListTool::default()), json!({"path": "sub"})));
    let (outputs, swaps) = racing(&project, calls, 60).await;
    let leaked: Vec<&String> = outputs
        .iter()
        .filter(|out| out.contains("SECRET"))
        .collect();
    let after = snapshot(&outside);
    assert!(
        leaked.is_empty() && after == before,
        "{} outputs hold outside content (first: {:?}); outside before {before:?}, after {after:?}",
        leaked.len(),
        leaked.first(),
    );
    assert!(swaps > 1000, "the race ran: {swaps} exchanges");
    // The calls that met the project worked.
    assert!(
        outputs.iter().any(|out| out.contains("inside")),
        "{outputs:?}"
    );
}
