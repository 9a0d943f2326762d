//! "Always" grants what it says: for every tool that asks, each "always"
//! answer a request offers is named by a label (the ACP option's name, the
//! approval page's button, `agent attach`'s line). The test drives each
//! tool with every request asking, answers every request with one kind of
//! "always", reads the rules back out of the labels shown, and compares
//! them with what the approval store holds afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use agentgate_core::permission::{
    Action, Approver, PermissionGate, PermissionRequest, Reply, ReplyKind, Rule, Ruleset,
};
use agentgate_core::{Tool, ToolContext};
use agentgate_tools::{
    ApplyPatchTool, BashTool, EditTool, GlobTool, GrepTool, ListTool, ReadTool, TodoWriteTool,
    WebFetchTool, WriteTool,
};
use serde_json::{Value, json};

use super::support::temp_dir;

/// Answers every request with the "always" choice of `kind` (or `once`
/// when the request offers none) and keeps the label it chose.
struct Chooser {
    kind: ReplyKind,
    shown: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Approver for Chooser {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        let choice = request
            .always_choices()
            .into_iter()
            .find(|choice| choice.kind == self.kind);
        match choice {
            Some(choice) => {
                self.shown.lock().unwrap().push(choice.label);
                match self.kind {
                    ReplyKind::AlwaysExact => Reply::AlwaysExact,
                    _ => Reply::Always,
                }
            }
            None => Reply::Once,
        }
    }
}

/// Reads one Rust-escaped, double-quoted string at the start of `text`;
/// the string and the rest.
fn unquote(text: &str) -> (String, &str) {
    let mut chars = text.char_indices();
    assert_eq!(chars.next().map(|(_, c)| c), Some('"'), "{text}");
    let mut out = String::new();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return (out, &text[at + 1..]),
            '\\' => match chars.next().unwrap().1 {
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                '0' => out.push('\0'),
                'u' => {
                    let rest = &text[at + 2..];
                    let close = rest.find('}').unwrap();
                    let code = u32::from_str_radix(&rest[2..close], 16).unwrap();
                    out.push(char::from_u32(code).unwrap());
                    for _ in 0..close {
                        chars.next();
                    }
                }
                other => out.push(other),
            },
            other => out.push(other),
        }
    }
    panic!("unterminated string in {text}")
}

/// The rules a label names: `Always allow <permission> [exactly ]"p1", "p2"`,
/// with an optional explanation in parentheses after the patterns.
fn rules_named_by(label: &str) -> Vec<Rule> {
    let rest = label.strip_prefix("Always allow ").unwrap();
    let (permission, mut rest) = rest.split_once(' ').unwrap();
    rest = rest.strip_prefix("exactly ").unwrap_or(rest);
    let mut rules = Vec::new();
    loop {
        let (pattern, after) = unquote(rest);
        rules.push(Rule::new(permission, pattern, Action::Allow));
        match after.strip_prefix(", ") {
            Some(more) => rest = more,
            None => {
                assert!(after.is_empty() || after.starts_with(" ("), "{label}");
                return rules;
            }
        }
    }
}

/// Runs `tool` with `input` in `dir`, every request asking, answering with
/// `kind`; the labels shown and the approvals stored.
async fn run(tool: &dyn Tool, input: Value, dir: &Path, kind: ReplyKind) -> (Vec<String>, Ruleset) {
    let permissions = PermissionGate::new();
    let chooser = Arc::new(Chooser {
        kind,
        shown: Mutex::default(),
    });
    permissions.set_approver(chooser.clone());
    let ctx = ToolContext::new(
        "ses_always",
        "msg_always",
        "call_always",
        permissions.clone(),
    )
    .with_directories(dir.to_path_buf(), dir.to_path_buf())
    .with_ruleset(Arc::new(Ruleset::new()));
    // The call may fail after its asks (no network, nothing to delete):
    // only what was shown and stored matters here.
    let _ = tool.execute(input, &ctx).await;
    let shown = chooser.shown.lock().unwrap().clone();
    (shown, permissions.approved())
}

#[tokio::test]
async fn every_tool_stores_exactly_the_rules_its_always_labels_name() {
    let dir = temp_dir("always", "shown-stored");
    let outside = temp_dir("always", "outside");
    std::fs::write(outside.join("f.txt"), "outside\n").unwrap();
    let outside_file = outside.join("f.txt").display().to_string();
    let reset = || {
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("a.txt"), "plain a\n").unwrap();
        std::fs::write(dir.join(".env"), "K=V\n").unwrap();
    };
    let calls: Vec<(&str, Box<dyn Tool>, Value)> = vec![
        (
            "edit",
            Box::new(EditTool),
            json!({"filePath": "a.txt", "oldString": "plain", "newString": "new"}),
        ),
        (
            "write",
            Box::new(WriteTool),
            json!({"filePath": "w.txt", "content": "x"}),
        ),
        (
            "apply_patch",
            Box::new(ApplyPatchTool),
            json!({"patchText": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch\n"}),
        ),
        (
            "read",
            Box::new(ReadTool::default()),
            json!({"filePath": ".env"}),
        ),
        (
            "read outside",
            Box::new(ReadTool::default()),
            json!({"filePath": outside_file}),
        ),
        (
            "bash",
            Box::new(BashTool::default()),
            json!({"command": "rm -f src/a.txt", "description": "remove"}),
        ),
        (
            "bash, two commands",
            Box::new(BashTool::default()),
            json!({"command": "git status && ls src", "description": "look"}),
        ),
        (
            "webfetch",
            Box::new(WebFetchTool::new().unwrap()),
            json!({"url": "http://127.0.0.1:9/page", "format": "text"}),
        ),
        (
            "grep",
            Box::new(GrepTool::default()),
            json!({"pattern": "plain"}),
        ),
        (
            "glob",
            Box::new(GlobTool::default()),
            json!({"pattern": "*.txt"}),
        ),
        ("list", Box::new(ListTool::default()), json!({})),
        (
            "todowrite",
            Box::new(TodoWriteTool::default()),
            json!({"todos": []}),
        ),
    ];
    for (name, tool, input) in &calls {
        for kind in [ReplyKind::Always, ReplyKind::AlwaysExact] {
            reset();
            let (shown, stored) = run(tool.as_ref(), input.clone(), &dir, kind).await;
            if kind == ReplyKind::Always {
                assert!(!shown.is_empty(), "{name}: no \"always\" was offered");
            }
            let mut named: Vec<Rule> = Vec::new();
            for label in &shown {
                for rule in rules_named_by(label) {
                    if !named.contains(&rule) {
                        named.push(rule);
                    }
                }
            }
            assert_eq!(
                stored.rules(),
                named.as_slice(),
                "{name} {kind:?}: {shown:?}"
            );
        }
    }
}

#[tokio::test]
async fn always_on_one_rm_names_rm_star_and_exactly_the_command() {
    let dir = temp_dir("always", "rm");
    let input = json!({"command": "rm -f src/a.txt", "description": "remove"});
    let (shown, stored) = run(&BashTool::default(), input.clone(), &dir, ReplyKind::Always).await;
    assert_eq!(shown, [r#"Always allow bash "rm *""#]);
    assert_eq!(stored.rules(), [Rule::new("bash", "rm *", Action::Allow)]);
    let (shown, stored) = run(&BashTool::default(), input, &dir, ReplyKind::AlwaysExact).await;
    assert_eq!(shown, [r#"Always allow bash exactly "rm -f src/a.txt""#]);
    assert_eq!(
        stored.rules(),
        [Rule::new("bash", "rm -f src/a.txt", Action::Allow)]
    );
}
