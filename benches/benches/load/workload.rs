//! The load workload, shared by the `load` bench and the
//! CI-fast `load` test: N sessions of one engine prompted concurrently, each
//! driven by its own `ScriptedModel` (through a `ModelResolver`, so the
//! sessions' scripts never mix) through S steps: S − 1 steps calling a fast
//! tool, then a text answer.
//!
//! The tool stamps the time of each call per session, so a *step time* is
//! the gap between two consecutive calls of one session (one whole loop
//! iteration: storing the previous step, the next model call, consuming its
//! stream, running the call), plus prompt start → first call and last call
//! → prompt end. Waiting behind other sessions is included: that is what a
//! session experiences under load.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentgate_core::testing::{Script, ScriptedModel};
use agentgate_core::{
    AgentSpec, Engine, LanguageModel, ModelRef, ModelResolver, Session, StopReason, Tool,
    ToolContext, ToolError, ToolOutput,
};
use serde_json::{Value, json};

/// How much load.
#[derive(Debug, Clone, Copy)]
pub struct LoadConfig {
    /// Concurrent sessions.
    pub sessions: usize,
    /// Steps per session's prompt (≥ 2).
    pub steps: usize,
    /// Whether the tool yields to the scheduler once (as any tool doing
    /// real I/O does). Without it nothing in a step ever waits: the
    /// scripted stream, the in-memory store and the tool are all ready at
    /// once, so a prompt runs all its steps in a single poll.
    pub tool_yields: bool,
}

/// What one run measured.
#[derive(Debug)]
pub struct LoadReport {
    /// The configuration.
    pub config: LoadConfig,
    /// From the first prompt spawned to the last prompt done.
    pub wall: Duration,
    /// Every step's time, sorted.
    pub step_times: Vec<Duration>,
    /// Per session: when (since the start) its first step's call ran.
    pub first_call: Vec<Duration>,
    /// Per session: when (since the start) its prompt returned.
    pub done: Vec<Duration>,
    /// Per session: steps its prompt reported.
    pub steps_run: Vec<u32>,
    /// Per session: whether its prompt finished normally.
    pub finished: Vec<bool>,
}

impl LoadReport {
    /// Steps per second over the whole run.
    pub fn throughput(&self) -> f64 {
        self.step_times.len() as f64 / self.wall.as_secs_f64()
    }

    /// The `q`-quantile (0..=1) of the step times.
    pub fn quantile(&self, q: f64) -> Duration {
        let n = self.step_times.len();
        if n == 0 {
            return Duration::ZERO;
        }
        let at = ((n - 1) as f64 * q).round() as usize;
        self.step_times[at.min(n - 1)]
    }

    /// When the last session to get going ran its first call, as a
    /// fraction of the whole run (0: all started at once; 1: one session
    /// waited for all the others to finish).
    pub fn latest_start(&self) -> f64 {
        let latest_first = self.first_call.iter().max().copied().unwrap_or_default();
        latest_first.as_secs_f64() / self.wall.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// No session starved: every session ran its first call within the
    /// first half of the run (a session held back until the others are
    /// done would start near the end).
    pub fn no_starvation(&self) -> bool {
        self.latest_start() <= 0.5
    }

    /// The slowest session's completion time over the fastest one's.
    pub fn completion_spread(&self) -> f64 {
        let min = self.done.iter().min().copied().unwrap_or_default();
        let max = self.done.iter().max().copied().unwrap_or_default();
        max.as_secs_f64() / min.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// Stamps each call's time under its session's index (argument `s`).
struct Fast {
    stamps: Arc<Vec<Mutex<Vec<Instant>>>>,
    yields: bool,
}

#[async_trait::async_trait]
impl Tool for Fast {
    fn id(&self) -> &str {
        "fast"
    }
    fn description(&self) -> &str {
        "Returns at once."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"s": {"type": "integer"}}})
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let s = input.get("s").and_then(Value::as_u64).unwrap_or(0) as usize;
        if let Some(stamps) = self.stamps.get(s) {
            stamps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Instant::now());
        }
        if self.yields {
            tokio::task::yield_now().await;
        }
        Ok(ToolOutput::text("ok"))
    }
}

/// One `ScriptedModel` per session, found by the session's model id.
struct PerSession(HashMap<String, Arc<ScriptedModel>>);

impl ModelResolver for PerSession {
    fn resolve(&self, model: &ModelRef) -> Option<Arc<dyn LanguageModel>> {
        self.0
            .get(&model.model_id)
            .map(|m| Arc::clone(m) as Arc<dyn LanguageModel>)
    }
}

fn scripts(session: usize, steps: usize) -> Vec<Script> {
    let mut scripts: Vec<Script> = (0..steps - 1)
        .map(|i| {
            let id = format!("call_{i}");
            Script::calls([(id.as_str(), "fast", json!({ "s": session, "i": i }))])
        })
        .collect();
    scripts.push(Script::reply("done"));
    scripts
}

/// Runs the workload on the current (multi-thread) tokio runtime.
pub async fn run(config: LoadConfig) -> LoadReport {
    let LoadConfig {
        sessions,
        steps,
        tool_yields,
    } = config;
    let stamps: Arc<Vec<Mutex<Vec<Instant>>>> = Arc::new(
        (0..sessions)
            .map(|_| Mutex::new(Vec::with_capacity(steps)))
            .collect(),
    );
    let models: HashMap<String, Arc<ScriptedModel>> = (0..sessions)
        .map(|s| {
            let model = ScriptedModel::new(scripts(s, steps)).without_recording();
            (format!("s{s}"), Arc::new(model))
        })
        .collect();
    let default = Arc::new(ScriptedModel::new([]).without_recording());
    let rules = serde_json::from_value(json!([
        {"permission": "*", "pattern": "*", "action": "allow"}
    ]))
    .unwrap_or_default();
    let engine = Engine::builder(default)
        .agent(AgentSpec::new("build").with_permission(rules))
        .tool(Fast {
            stamps: Arc::clone(&stamps),
            yields: tool_yields,
        })
        .model_resolver(Arc::new(PerSession(models)))
        .build();
    let mut ids = Vec::with_capacity(sessions);
    for s in 0..sessions {
        let mut session = Session::new("build", std::env::temp_dir());
        session.model = Some(ModelRef {
            provider_id: "load".into(),
            model_id: format!("s{s}"),
        });
        let session = engine
            .create_session(session)
            .await
            .unwrap_or_else(|e| panic!("session: {e}"));
        ids.push(session.id);
    }

    // Every prompt task waits at a gate, so all of them are spawned before
    // any starts (otherwise the first ones finish while the rest are still
    // being spawned).
    let gate = Arc::new(tokio::sync::RwLock::new(()));
    let closed = Arc::clone(&gate).write_owned().await;
    let tasks: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let engine = engine.clone();
            let gate = Arc::clone(&gate);
            tokio::spawn(async move {
                drop(gate.read().await);
                let began = Instant::now();
                let turn = engine.prompt(&id, "go").await;
                (began, Instant::now(), turn)
            })
        })
        .collect();
    let start = Instant::now();
    drop(closed);
    let mut outcomes = Vec::with_capacity(sessions);
    for task in tasks {
        outcomes.push(task.await.unwrap_or_else(|e| panic!("prompt task: {e}")));
    }
    let wall = start.elapsed();

    let mut step_times = Vec::with_capacity(sessions * steps);
    let mut first_call = Vec::with_capacity(sessions);
    let mut done = Vec::with_capacity(sessions);
    let mut steps_run = Vec::with_capacity(sessions);
    let mut finished = Vec::with_capacity(sessions);
    for (s, (began, ended, turn)) in outcomes.into_iter().enumerate() {
        let calls = stamps[s].lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut previous = began;
        for &call in &calls {
            step_times.push(call.duration_since(previous));
            previous = call;
        }
        step_times.push(ended.duration_since(previous));
        first_call.push(
            calls
                .first()
                .map_or(Duration::MAX, |c| c.duration_since(start)),
        );
        done.push(ended.duration_since(start));
        match turn {
            Ok(turn) => {
                steps_run.push(turn.steps);
                finished.push(matches!(turn.stop, StopReason::Done { .. }));
            }
            Err(_) => {
                steps_run.push(0);
                finished.push(false);
            }
        }
    }
    step_times.sort();
    LoadReport {
        config,
        wall,
        step_times,
        first_call,
        done,
        steps_run,
        finished,
    }
}
