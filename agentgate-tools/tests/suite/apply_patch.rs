//! apply_patch: the envelope parser, hunk application (matching levels,
//! ambiguity, end of file), the requests it asks (opencode's shape: one
//! `edit` with every touched file) and all-or-nothing application against
//! real temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::support::{recording_context, temp_dir};
use std::sync::{Arc, Mutex};

use agentgate_core::permission::{Action, PermissionRequest, Rule, Ruleset};
use agentgate_core::{Tool, ToolError};
use agentgate_tools::{
    ApplyError, ApplyPatchArgs, ApplyPatchTool, Chunk, PatchOp, apply_chunks, parse_patch,
};
use proptest::prelude::*;
use serde_json::json;

fn asked(seen: &Arc<Mutex<Vec<PermissionRequest>>>) -> Vec<(String, Vec<String>, Vec<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|r| (r.permission.clone(), r.patterns.clone(), r.always.clone()))
        .collect()
}

/// A recording context whose read rules allow every file, so the tool may
/// read and match before asking (as under the agents' default rules).
fn readable_context(
    dir: &std::path::Path,
    allow: bool,
) -> (
    agentgate_core::ToolContext,
    Arc<Mutex<Vec<PermissionRequest>>>,
) {
    let (ctx, seen) = recording_context(dir, allow);
    let read = Ruleset(vec![Rule::new("read", "*", Action::Allow)]);
    (ctx.with_ruleset(Arc::new(read)), seen)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

fn chunk(old: &[&str], new: &[&str]) -> Chunk {
    Chunk {
        old: strings(old),
        new: strings(new),
        ..Chunk::default()
    }
}

// Parsing.

#[test]
fn parses_every_operation() {
    let text = patch(
        "*** Add File: new.txt\n+one\n+two\n*** Delete File: old.txt\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@ fn main() {\n     let x = 1;\n-    let y = 2;\n+    let y = 3;\n@@\n-tail\n+TAIL\n*** End of File\n",
    );
    let ops = parse_patch(&text).unwrap();
    assert_eq!(
        ops,
        vec![
            PatchOp::Add {
                path: "new.txt".into(),
                contents: "one\ntwo\n".into()
            },
            PatchOp::Delete {
                path: "old.txt".into()
            },
            PatchOp::Update {
                path: "src/a.rs".into(),
                move_to: Some("src/b.rs".into()),
                chunks: vec![
                    Chunk {
                        context: Some("fn main() {".into()),
                        old: strings(&["    let x = 1;", "    let y = 2;"]),
                        new: strings(&["    let x = 1;", "    let y = 3;"]),
                        end_of_file: false,
                    },
                    Chunk {
                        context: None,
                        old: strings(&["tail"]),
                        new: strings(&["TAIL"]),
                        end_of_file: true,
                    },
                ],
            },
        ]
    );
}

#[test]
fn parse_errors_name_the_line_and_what_was_expected() {
    let cases = [
        ("", 1, "Begin Patch"),
        ("*** Begin Patch\n*** Update File: a\n-x\n", 3, "End Patch"),
        ("*** Begin Patch\n*** End Patch", 2, "no file operation"),
        (
            "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
            2,
            "expected",
        ),
        (
            "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
            3,
            "must start with `+`",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch",
            4,
            "must start with ` ` (context)",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            2,
            "no hunks",
        ),
        (
            "*** Begin Patch\n*** Delete File:   \n*** End Patch",
            2,
            "needs a path",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch",
            3,
            "must close a hunk",
        ),
    ];
    for (text, line, message) in cases {
        let error = parse_patch(text).unwrap_err();
        assert_eq!(error.line, line, "{text:?}: {error}");
        assert!(error.to_string().contains(message), "{text:?}: {error}");
    }
}

// Applying hunks.

#[test]
fn context_matches_exactly_then_without_trailing_then_without_any_whitespace() {
    let file = "a\n  b  \nc\n";
    assert_eq!(
        apply_chunks(file, &[chunk(&["a", "  b  "], &["a", "B"])], "f").unwrap(),
        "a\nB\nc\n"
    );
    assert_eq!(
        apply_chunks(file, &[chunk(&["a", "  b"], &["a", "B"])], "f").unwrap(),
        "a\nB\nc\n"
    );
    assert_eq!(
        apply_chunks(file, &[chunk(&["a", "b"], &["a", "B"])], "f").unwrap(),
        "a\nB\nc\n"
    );
    // An exact match wins over a looser one elsewhere.
    assert_eq!(
        apply_chunks("x \nx\n", &[chunk(&["x"], &["y"])], "f").unwrap(),
        "x \ny\n"
    );
}

#[test]
fn missing_or_ambiguous_context_is_rejected() {
    let missing = apply_chunks("a\nb\n", &[chunk(&["z"], &["y"])], "f").unwrap_err();
    assert!(
        matches!(missing, ApplyError::LinesNotFound { .. }),
        "{missing}"
    );
    let twice = apply_chunks("x\na\nx\n", &[chunk(&["x"], &["y"])], "f").unwrap_err();
    assert!(
        matches!(twice, ApplyError::Ambiguous { count: 2, .. }),
        "{twice}"
    );
    // An `@@` line narrows the search to after it.
    let anchored = Chunk {
        context: Some("fn two() {".into()),
        ..chunk(&["x"], &["y"])
    };
    assert_eq!(
        apply_chunks("fn one() {\nx\nfn two() {\nx\n", &[anchored], "f").unwrap(),
        "fn one() {\nx\nfn two() {\ny\n"
    );
    let unknown = Chunk {
        context: Some("fn three() {".into()),
        ..chunk(&["x"], &["y"])
    };
    assert!(matches!(
        apply_chunks("x\n", &[unknown], "f").unwrap_err(),
        ApplyError::ContextNotFound { .. }
    ));
}

#[test]
fn end_of_file_hunks_match_only_the_end() {
    let last = Chunk {
        end_of_file: true,
        ..chunk(&["x"], &["y"])
    };
    assert_eq!(
        apply_chunks("x\na\nx\n", std::slice::from_ref(&last), "f").unwrap(),
        "x\na\ny\n"
    );
    assert!(apply_chunks("x\na\n", &[last], "f").is_err());
    // A pure addition without `@@` appends.
    assert_eq!(
        apply_chunks("a", &[chunk(&[], &["b"])], "f").unwrap(),
        "a\nb\n"
    );
}

// The tool.

#[tokio::test]
async fn adding_two_files_asks_one_edit_with_both_paths() {
    let dir = temp_dir("patch", "add-two");
    let (ctx, seen) = readable_context(&dir, true);
    let text = patch("*** Add File: a.txt\n+alpha\n*** Add File: sub/b.txt\n+beta\n");
    let args = ApplyPatchArgs {
        patch_text: text.clone(),
    };
    let expected = vec![(
        "edit".to_string(),
        strings(&["a.txt", "sub/b.txt"]),
        strings(&["*"]),
    )];
    let planned: Vec<_> = ApplyPatchTool
        .requests(&args, &dir, &dir)
        .unwrap()
        .into_iter()
        .map(|r| (r.permission, r.patterns, r.always))
        .collect();
    assert_eq!(planned, expected);
    let out = ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap();
    assert_eq!(asked(&seen), expected);
    let request = seen.lock().unwrap()[0].clone();
    let diff = request.metadata["diff"].as_str().unwrap();
    assert!(diff.contains("+alpha") && diff.contains("+beta"), "{diff}");
    assert_eq!(request.metadata["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("sub/b.txt")).unwrap(),
        "beta\n"
    );
    assert!(out.output.contains("A a.txt") && out.output.contains("A sub/b.txt"));
}

#[tokio::test]
async fn an_outside_path_asks_external_directory_first() {
    let dir = temp_dir("patch", "ext-in");
    let outside = temp_dir("patch", "ext-out");
    let (ctx, seen) = recording_context(&dir, true);
    let target = outside.join("x.txt");
    let text = patch(&format!(
        "*** Add File: in.txt\n+in\n*** Add File: {}\n+out\n",
        target.display()
    ));
    ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap();
    let asked = asked(&seen);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "external_directory");
    assert_eq!(asked[1].0, "edit");
    assert_eq!(asked[1].1[0], "in.txt");
    assert!(asked[1].1[1].starts_with(".."), "{asked:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "out\n");
}

#[tokio::test]
async fn a_protected_path_asks_protected_path() {
    let dir = temp_dir("patch", "protected");
    let (ctx, seen) = recording_context(&dir, true);
    let text = patch("*** Add File: opencode.json\n+{}\n*** Add File: .git/hooks/pre-commit\n+x\n");
    ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap();
    let names: Vec<String> = asked(&seen).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["protected_path", "protected_path", "edit"]);
}

#[tokio::test]
async fn a_rejected_patch_writes_nothing() {
    let dir = temp_dir("patch", "rejected");
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    let (ctx, seen) = recording_context(&dir, false);
    let text = patch("*** Update File: a.txt\n@@\n-one\n+two\n*** Add File: b.txt\n+b\n");
    let error = ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Permission(_)), "{error}");
    assert_eq!(asked(&seen).len(), 1);
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n");
    assert!(!dir.join("b.txt").exists());
}

#[tokio::test]
async fn a_failing_hunk_in_the_second_file_leaves_the_first_untouched() {
    let dir = temp_dir("patch", "second-fails");
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.txt"), "two\n").unwrap();
    let (ctx, seen) = readable_context(&dir, true);
    let text =
        patch("*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-missing\n+x\n");
    let error = ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("b.txt"), "{error}");
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "two\n");
    assert!(
        asked(&seen).is_empty(),
        "nothing to approve: {:?}",
        asked(&seen)
    );
}

#[tokio::test]
async fn update_with_move_and_delete() {
    let dir = temp_dir("patch", "move");
    std::fs::write(dir.join("old.rs"), "fn a() {}\nfn b() {}\n").unwrap();
    std::fs::write(dir.join("gone.txt"), "bye\n").unwrap();
    let (ctx, seen) = recording_context(&dir, true);
    let text = patch(
        "*** Update File: old.rs\n*** Move to: src/new.rs\n@@\n fn a() {}\n-fn b() {}\n+fn c() {}\n*** Delete File: gone.txt\n",
    );
    let out = ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap();
    // A move reads its source and its target, as the read tool would.
    assert_eq!(
        asked(&seen),
        vec![
            ("read".to_string(), strings(&["old.rs"]), strings(&["*"])),
            (
                "read".to_string(),
                strings(&["src/new.rs"]),
                strings(&["*"])
            ),
            (
                "edit".to_string(),
                strings(&["old.rs", "src/new.rs", "gone.txt"]),
                strings(&["*"])
            )
        ]
    );
    assert!(!dir.join("old.rs").exists());
    assert!(!dir.join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("src/new.rs")).unwrap(),
        "fn a() {}\nfn c() {}\n"
    );
    assert!(out.output.contains("D old.rs") && out.output.contains("A src/new.rs"));
}

#[tokio::test]
async fn deleting_a_missing_file_fails_before_asking() {
    let dir = temp_dir("patch", "delete-missing");
    let (ctx, seen) = readable_context(&dir, true);
    let text = patch("*** Delete File: nope.txt\n");
    let error = ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not found"), "{error}");
    assert!(asked(&seen).is_empty());
}

#[tokio::test]
async fn a_file_the_caller_may_not_read_is_asked_for_before_it_is_matched() {
    let dir = temp_dir("patch", "unreadable");
    std::fs::write(dir.join(".env"), "SECRET=hunter2\n").unwrap();
    // `.env` may not be read, and the edit is refused: a probe of its
    // content through context lines must get the refusal, whether or not
    // its guess matches.
    let rules = Ruleset(vec![
        Rule::new("read", "*", Action::Allow),
        Rule::new("read", "*.env", Action::Deny),
    ]);
    for guess in ["SECRET=hunter2", "SECRET=wrong"] {
        let (ctx, seen) = recording_context(&dir, false);
        let ctx = ctx.with_ruleset(Arc::new(rules.clone()));
        let text = patch(&format!("*** Update File: .env\n@@\n-{guess}\n+SECRET=x\n"));
        let error = ApplyPatchTool
            .execute(json!({"patchText": text}), &ctx)
            .await
            .unwrap_err();
        assert!(
            matches!(error, ToolError::Permission(_)),
            "{guess}: {error}"
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].permission, "edit");
        // The approver sees the patch, not the file.
        let diff = seen[0].metadata["diff"].as_str().unwrap();
        assert!(diff.contains(guess) && !diff.contains("hunter2") || guess == "SECRET=hunter2");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join(".env")).unwrap(),
        "SECRET=hunter2\n"
    );
}

// Round trip: a patch built from any two texts turns the first into the
// second.

/// An `*** Update File` patch from `old` to `new`, built from `similar`'s
/// grouped diff with three lines of context.
fn patch_between(old: &str, new: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(old, new);
    let mut body = String::from("*** Update File: f.txt\n");
    for group in diff.grouped_ops(3) {
        body.push_str("@@\n");
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                body.push(sign);
                body.push_str(change.value().trim_end_matches('\n'));
                body.push('\n');
            }
        }
    }
    patch(&body)
}

/// Texts of distinct lines (so every hunk matches one place).
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(0u16..60, 0..25).prop_map(|numbers| {
        let mut seen = std::collections::BTreeSet::new();
        numbers
            .into_iter()
            .filter(|n| seen.insert(*n))
            .map(|n| format!("line {n}\n"))
            .collect()
    })
}

proptest! {
    #[test]
    fn a_generated_patch_turns_the_first_text_into_the_second(old in text(), new in text()) {
        prop_assume!(old != new);
        let ops = parse_patch(&patch_between(&old, &new)).unwrap();
        let [PatchOp::Update { chunks, .. }] = &ops[..] else {
            panic!("{ops:?}");
        };
        prop_assert_eq!(apply_chunks(&old, chunks, "f.txt").unwrap(), new);
    }
}

#[tokio::test]
async fn a_multi_file_round_trip_through_the_tool() {
    let dir = temp_dir("patch", "round-trip");
    let (old_a, new_a) = ("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nB\nc\nd\ne\nf\ng\nH\ni\n");
    let (old_b, new_b) = ("one\ntwo\n", "zero\none\n");
    std::fs::write(dir.join("a.txt"), old_a).unwrap();
    std::fs::write(dir.join("b.txt"), old_b).unwrap();
    let (ctx, _) = recording_context(&dir, true);
    let text = format!(
        "{}{}",
        patch_between(old_a, new_a).replace("*** End Patch\n", ""),
        patch_between(old_b, new_b)
            .replace("*** Begin Patch\n", "")
            .replace("f.txt", "b.txt")
    )
    .replacen("f.txt", "a.txt", 1);
    ApplyPatchTool
        .execute(json!({"patchText": text}), &ctx)
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), new_a);
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), new_b);
}

// The model-family rule, through the engine: GPT models are declared
// apply_patch instead of edit and write, the others edit and write.

async fn declared_tools(model_id: &str) -> Vec<String> {
    use agentgate_core::testing::{Script, ScriptedModel};
    use agentgate_core::{AgentSpec, Engine, ModelInfo, Session};
    let dir = temp_dir("patch", "family");
    let model = Arc::new(
        ScriptedModel::new([Script::reply("ok")]).with_info(ModelInfo::new("openai", model_id)),
    );
    let engine = Engine::builder(model.clone())
        .agent(AgentSpec::new("build"))
        .worktree(dir.clone())
        .tool(agentgate_tools::EditTool)
        .tool(agentgate_tools::WriteTool)
        .tool(ApplyPatchTool)
        .tool(agentgate_tools::ReadTool::default())
        .build();
    let session = engine
        .create_session(Session::new("build", dir))
        .await
        .unwrap();
    engine.prompt(&session.id, "hi").await.unwrap();
    model.requests()[0]
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .collect()
}

#[tokio::test]
async fn gpt_models_are_offered_apply_patch_instead_of_edit_and_write() {
    for id in ["gpt-5", "gpt-5-codex"] {
        assert_eq!(declared_tools(id).await, ["apply_patch", "read"], "{id}");
    }
    for id in ["gpt-4.1", "gpt-oss-120b", "claude-sonnet-4-5"] {
        assert_eq!(declared_tools(id).await, ["edit", "write", "read"], "{id}");
    }
}
