//! Criterion benchmark of the agent loop's overhead per step.
//!
//! The agent loop's own overhead per step: a scripted model (no network, no
//! delays), a no-op tool, 50 steps per prompt (49 steps with one tool call
//! each, then a text answer). Everything the loop does per step is
//! measured: building the request from the history, consuming the stream
//! into parts, the doom-loop check, running the call with its context,
//! truncation check, storing the message, the exit decision.

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{AgentSpec, Engine, Session, Tool, ToolContext, ToolError, ToolOutput};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const STEPS: usize = 50;

struct NoOp;

#[async_trait::async_trait]
impl Tool for NoOp {
    fn id(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "Does nothing."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"i": {"type": "integer"}}})
    }
    async fn execute(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

fn scripts() -> Vec<Script> {
    let mut scripts: Vec<Script> = (0..STEPS - 1)
        .map(|i| {
            let id = format!("call_{i}");
            Script::calls([(id.as_str(), "noop", json!({ "i": i }))])
        })
        .collect();
    scripts.push(Script::reply("done"));
    scripts
}

fn engine(model: Arc<ScriptedModel>) -> Engine {
    let rules = serde_json::from_value(json!([
        {"permission": "*", "pattern": "*", "action": "allow"}
    ]))
    .unwrap_or_default();
    Engine::builder(model)
        .agent(AgentSpec::new("build").with_permission(rules))
        .tool(NoOp)
        .build()
}

fn loop_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let mut group = c.benchmark_group("agent_loop");
    group.sample_size(30);
    // One engine for the whole run (as a host would keep it); each prompt
    // gets a fresh session and its 50 scripted responses, outside the timing.
    let model = Arc::new(ScriptedModel::new([]).without_recording());
    let engine = engine(Arc::clone(&model));
    group.bench_function("50_steps_noop_tool", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                for script in scripts() {
                    model.push(script);
                }
                let session = runtime
                    .block_on(engine.create_session(Session::new("build", std::env::temp_dir())))
                    .unwrap_or_else(|e| panic!("session: {e}"));
                let start = Instant::now();
                let result = runtime
                    .block_on(engine.prompt(&session.id, "go"))
                    .unwrap_or_else(|e| panic!("prompt: {e}"));
                total += start.elapsed();
                assert_eq!(result.steps as usize, STEPS);
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, loop_overhead);
criterion_main!(benches);
