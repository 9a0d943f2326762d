//! Parallel tool calls report their progress to the step, which alone
//! writes the assistant message: every call's live metadata and result
//! land on its own part, in the order the call reported them, while the
//! calls overlap in time.

use std::time::Duration;

use super::common::*;
use agentgate_core::testing::Script;
use agentgate_core::{
    Event, FinishReason, Part, ToolContext, ToolError, ToolOutput, ToolState, TypedTool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

#[derive(Deserialize, JsonSchema)]
struct ProgressArgs {
    label: String,
    /// Seconds between reports.
    pause: u64,
}

/// Reports `{"label", "n": 1}` then `n: 2` as it runs, `pause` seconds
/// apart, then answers with its label.
#[derive(Clone)]
struct Progress;

#[async_trait::async_trait]
impl TypedTool for Progress {
    type Args = ProgressArgs;
    fn id(&self) -> &str {
        "progress"
    }
    fn description(&self) -> &str {
        "Reports progress."
    }
    async fn run(&self, args: ProgressArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        for n in 1..=2 {
            ctx.metadata(Some(&args.label), json!({"label": args.label, "n": n}));
            tokio::time::sleep(Duration::from_secs(args.pause)).await;
        }
        Ok(ToolOutput::text(format!("{} done", args.label)))
    }
}

#[tokio::test(start_paused = true)]
async fn overlapping_calls_each_write_their_own_part_in_order() {
    let model = model([
        Script::new()
            .tool_call("fast", "progress", json!({"label": "fast", "pause": 1}))
            .tool_call("slow", "progress", json!({"label": "slow", "pause": 3}))
            .finish(FinishReason::ToolCalls),
        Script::reply("Both reported."),
    ]);
    let (engine, session) = setup(model, |b| b.tool(Progress)).await;
    let mut events = engine.subscribe();

    let start = Instant::now();
    let result = engine.prompt(&session.id, "go").await.unwrap();
    // The calls overlapped: 2 × 1 s and 2 × 3 s took 6 s, not 8 s.
    assert_eq!(start.elapsed(), Duration::from_secs(6));
    assert_eq!(result.text(), "Both reported.");

    // Each call's updates, in the order the step announced them.
    let mut updates: Vec<(String, String)> = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::PartUpdated {
            part: Part::Tool(tool),
            ..
        } = event
        {
            let what = match &tool.state {
                ToolState::Running { metadata, .. } if metadata.get("n").is_none() => {
                    "started".to_string()
                }
                ToolState::Running {
                    metadata, title, ..
                } => {
                    assert_eq!(title.as_deref(), Some(tool.call_id.as_str()));
                    assert_eq!(metadata["label"], Value::from(tool.call_id.clone()));
                    format!("n={}", metadata["n"])
                }
                ToolState::Completed { output, .. } => output.clone(),
                other => format!("{other:?}"),
            };
            updates.push((tool.call_id.clone(), what));
        }
    }
    let of = |call: &str| -> Vec<String> {
        updates
            .iter()
            .filter(|(id, _)| id == call)
            .map(|(_, what)| what.clone())
            .collect()
    };
    // The stream's own update (the call complete) comes first; then the
    // tool's two reports and its result.
    assert_eq!(of("fast"), ["started", "n=1", "n=2", "fast done"]);
    assert_eq!(of("slow"), ["started", "n=1", "n=2", "slow done"]);
    // The fast call finished while the slow one was still running.
    let position = |call: &str, what: &str| {
        updates
            .iter()
            .position(|(id, w)| id == call && w == what)
            .unwrap()
    };
    assert!(position("fast", "fast done") < position("slow", "n=2"));

    // The stored message holds each result on its own part.
    let history = engine.messages(&session.id).await.unwrap();
    assert_every_call_has_result(&history);
    let outputs: Vec<(String, String)> = history[1]
        .tool_parts()
        .map(|tool| match &tool.state {
            ToolState::Completed { output, .. } => (tool.call_id.clone(), output.clone()),
            other => panic!("{} not completed: {other:?}", tool.call_id),
        })
        .collect();
    assert_eq!(
        outputs,
        [
            ("fast".to_string(), "fast done".to_string()),
            ("slow".to_string(), "slow done".to_string())
        ]
    );
}
